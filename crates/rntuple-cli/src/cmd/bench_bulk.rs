//! `rntuple bench read --bulk`: every column of the chosen fields (their subfields' too) read
//! cluster by cluster through the bulk API (`BulkReader`) into one buffer per column, reused
//! across clusters; one untimed pass grows the buffers and the scratch, then the best of the timed
//! passes is reported with zstd's time to decompress the same pages alone, as one JSON object.

use super::{pick_ntuple, Res};
use rntuple::logical::Scalar;
use rntuple::read::{BulkColumn, BulkElement, BulkReader};
use rntuple::{RNTupleFile, Reader};
use std::error::Error;
use std::time::Instant;

/// Timed passes over all clusters (after one untimed pass).
const PASSES: usize = 3;

/// A column's reused buffer, in its element type.
enum Buf {
    Bool(Vec<bool>),
    I8(Vec<i8>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Buf {
    fn new(s: Scalar) -> Buf {
        match s {
            Scalar::Bool => Buf::Bool(Vec::new()),
            Scalar::Char | Scalar::I8 => Buf::I8(Vec::new()),
            Scalar::Byte | Scalar::U8 => Buf::U8(Vec::new()),
            Scalar::I16 => Buf::I16(Vec::new()),
            Scalar::U16 => Buf::U16(Vec::new()),
            Scalar::I32 => Buf::I32(Vec::new()),
            Scalar::U32 => Buf::U32(Vec::new()),
            Scalar::I64 => Buf::I64(Vec::new()),
            Scalar::U64 => Buf::U64(Vec::new()),
            Scalar::F32 => Buf::F32(Vec::new()),
            Scalar::F64 => Buf::F64(Vec::new()),
        }
    }

    /// Reads cluster `c` of `col` into the buffer (grown when too small); the elements read.
    fn read(&mut self, bulk: &mut BulkReader, r: &Reader, col: &BulkColumn, c: usize) -> Result<usize, Box<dyn Error>> {
        fn go<T: BulkElement + Default>(v: &mut Vec<T>, bulk: &mut BulkReader, r: &Reader, col: &BulkColumn, c: usize) -> Result<usize, Box<dyn Error>> {
            let n = r.bulk_len(col, c..c + 1)? as usize;
            if v.len() < n {
                v.resize(n, T::default());
            }
            Ok(bulk.read(r, col, c..c + 1, v)?)
        }
        match self {
            Buf::Bool(v) => go(v, bulk, r, col, c),
            Buf::I8(v) => go(v, bulk, r, col, c),
            Buf::U8(v) => go(v, bulk, r, col, c),
            Buf::I16(v) => go(v, bulk, r, col, c),
            Buf::U16(v) => go(v, bulk, r, col, c),
            Buf::I32(v) => go(v, bulk, r, col, c),
            Buf::U32(v) => go(v, bulk, r, col, c),
            Buf::I64(v) => go(v, bulk, r, col, c),
            Buf::U64(v) => go(v, bulk, r, col, c),
            Buf::F32(v) => go(v, bulk, r, col, c),
            Buf::F64(v) => go(v, bulk, r, col, c),
        }
    }
}

/// Every column of the top-level fields `fields` (all when `None`) and their subfields, by path.
fn columns(r: &Reader, fields: Option<&[&str]>) -> Result<(Vec<BulkColumn>, Vec<String>), Box<dyn Error>> {
    let d = r.descriptor();
    let mut stack: Vec<u32> = match fields {
        None => r.fields().iter().map(|f| f.id).collect(),
        Some(names) => names.iter().map(|n| d.field_by_path(n).ok_or_else(|| format!("no field '{n}'"))).collect::<Result<_, _>>()?,
    };
    stack.reverse();
    let (mut cols, mut skipped) = (Vec::new(), Vec::new());
    while let Some(id) = stack.pop() {
        let f = &d.fields[id as usize];
        let path = d.field_path(id);
        let first_rep = f.columns.iter().map(|&c| d.columns[c as usize].representation).min();
        let n = f.columns.iter().filter(|&&c| Some(d.columns[c as usize].representation) == first_rep).count();
        for k in 0..n {
            match r.bulk_column(&path, k) {
                Ok(c) => cols.push(c),
                Err(e) => skipped.push(format!("{path} column {k}: {e}")),
            }
        }
        stack.extend(f.children.iter().rev().copied());
    }
    Ok((cols, skipped))
}

/// The bulk read benchmark (see the module documentation).
pub(crate) fn bench_bulk(path: &str, ntuple: Option<&str>, fields: Option<&[&str]>) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let (cols, skipped) = columns(&r, fields)?;
    let k = r.descriptor().clusters.len();
    let mut bufs: Vec<Buf> = cols.iter().map(|c| Buf::new(c.element_type())).collect();
    let mut bulk = BulkReader::new();
    let (mut best, mut times) = (f64::INFINITY, Vec::new());
    let (mut ids, mut psum, mut items, mut elements) = (0u64, 0f64, 0u64, 0u64);
    for pass in 0..=PASSES {
        let mut secs = 0.0;
        for c in 0..k {
            for (col, buf) in cols.iter().zip(bufs.iter_mut()) {
                let t = Instant::now();
                let n = buf.read(&mut bulk, &r, col, c)?;
                secs += t.elapsed().as_secs_f64();
                // Checksums of the synthetic model, outside the timing, from the untimed pass.
                if pass == 0 {
                    elements += n as u64;
                    match (col.path(), &*buf) {
                        ("eventId", Buf::U64(v)) => ids = v[..n].iter().fold(ids, |a, &x| a.wrapping_add(x)),
                        ("particles._0", Buf::F32(v)) => {
                            psum += v[..n].iter().map(|&x| f64::from(x)).sum::<f64>();
                            items += n as u64;
                        }
                        _ => {}
                    }
                }
            }
        }
        if pass > 0 {
            best = best.min(secs);
            times.push(secs);
        }
    }
    // zstd alone on the same pages, best of as many runs.
    let (mut stored, mut unz, mut dsecs) = (0, 0, f64::INFINITY);
    for _ in 0..PASSES {
        let d = r.decompress_only(fields)?;
        (stored, unz, dsecs) = (d.0, d.1, dsecs.min(d.2));
    }
    let mut obj = serde_json::Map::new();
    obj.insert("mode".into(), "bulk".into());
    obj.insert("entries".into(), r.num_entries().into());
    obj.insert("seconds".into(), best.into());
    obj.insert("bulk_pass_seconds".into(), times.into());
    obj.insert("columns".into(), (cols.len() as u64).into());
    obj.insert("elements".into(), elements.into());
    obj.insert("clusters".into(), (k as u64).into());
    obj.insert("checksum".into(), ids.into());
    if items > 0 {
        obj.insert("particles_sum".into(), psum.into());
        obj.insert("particles_items".into(), items.into());
    }
    obj.insert("scratch_bytes".into(), (bulk.scratch_bytes() as u64).into());
    obj.insert("stored_bytes".into(), stored.into());
    obj.insert("uncompressed_bytes".into(), unz.into());
    obj.insert("decompress_seconds".into(), dsecs.into());
    obj.insert("bulk_vs_decompress".into(), (if dsecs > 0.0 { best / dsecs } else { 0.0 }).into());
    obj.insert("skipped_columns".into(), skipped.into());
    println!("{}", serde_json::Value::Object(obj));
    Ok(())
}
