//! `rntuple bench read --bulk`: every column of the chosen fields (their subfields' too) read
//! through the bulk API (`BulkReader`) into buffers reused across clusters, three ways: whole
//! clusters into one buffer per column (`BulkReader::read`), chunks of about 64 Ki elements ending
//! at page ends into one buffer per column (`read_range`: the buffers stay in the processor's
//! cache), and the same chunks from a memory-mapped file (`MappedSource`: no copy out of the page
//! cache). One untimed pass of each way grows its buffers and scratch; then `ROUNDS` rounds each
//! time one pass of every way, zstd decompressing the same pages alone (read into memory
//! beforehand) and the floor of a bulk read by its parts (checksum, zstd, one copy). Reported as
//! one JSON object: each way's best pass, and the median over rounds of its ratio to that round's
//! zstd pass (a slow phase of a shared machine hits a round's passes alike).

use super::{pick_ntuple, Res};
use rntuple::logical::Scalar;
use rntuple::read::{BulkColumn, BulkElement, BulkReader};
use rntuple::storage::local::mapped::MappedSource;
use rntuple::{RNTupleFile, Reader};
use std::error::Error;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

/// Timed rounds (after one untimed pass of each way).
const ROUNDS: usize = 7;

/// Elements per chunk of the chunked ways (whole pages; at least one page): ROOT's `RBulkValues`
/// benchmark reads chunks of 65,536 entries.
const CHUNK: u64 = 65_536;

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

    /// Reads cluster `c` of `col` into the buffer (grown when too small): all of it, or the
    /// elements `chunk`; the elements read.
    fn read(&mut self, bulk: &mut BulkReader, r: &Reader, col: &BulkColumn, c: usize, chunk: Option<Range<u64>>) -> Result<usize, Box<dyn Error>> {
        fn go<T: BulkElement + Default>(
            v: &mut Vec<T>,
            bulk: &mut BulkReader,
            r: &Reader,
            col: &BulkColumn,
            c: usize,
            chunk: Option<Range<u64>>,
        ) -> Result<usize, Box<dyn Error>> {
            let n = match &chunk {
                Some(e) => e.end - e.start,
                None => r.bulk_len(col, c..c + 1)?,
            } as usize;
            if v.len() < n {
                v.resize(n, T::default());
            }
            Ok(match chunk {
                Some(e) => bulk.read_range(r, col, c, e, v)?,
                None => bulk.read(r, col, c..c + 1, v)?,
            })
        }
        match self {
            Buf::Bool(v) => go(v, bulk, r, col, c, chunk),
            Buf::I8(v) => go(v, bulk, r, col, c, chunk),
            Buf::U8(v) => go(v, bulk, r, col, c, chunk),
            Buf::I16(v) => go(v, bulk, r, col, c, chunk),
            Buf::U16(v) => go(v, bulk, r, col, c, chunk),
            Buf::I32(v) => go(v, bulk, r, col, c, chunk),
            Buf::U32(v) => go(v, bulk, r, col, c, chunk),
            Buf::I64(v) => go(v, bulk, r, col, c, chunk),
            Buf::U64(v) => go(v, bulk, r, col, c, chunk),
            Buf::F32(v) => go(v, bulk, r, col, c, chunk),
            Buf::F64(v) => go(v, bulk, r, col, c, chunk),
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

/// Chunks of about [`CHUNK`] elements of `col` in cluster `c`, each ending where a page ends.
fn chunks(r: &Reader, col: &BulkColumn, c: usize) -> Result<Vec<Range<u64>>, Box<dyn Error>> {
    let (mut out, mut start) = (Vec::new(), 0u64);
    let ends = r.bulk_page_ends(col, c)?;
    for (i, &end) in ends.iter().enumerate() {
        let next = ends.get(i + 1).copied();
        if end - start >= CHUNK || next.is_none_or(|n| n - start > CHUNK) {
            if end > start {
                out.push(start..end);
            }
            start = end;
        }
    }
    Ok(out)
}

/// One way of reading every column of every cluster: its reader, what it reads per cluster and
/// column (whole clusters, or chunks), its reused buffers and bulk reader.
struct Way<'a> {
    r: &'a Reader,
    cols: &'a [BulkColumn],
    plan: Vec<Vec<Option<Vec<Range<u64>>>>>,
    bufs: Vec<Buf>,
    bulk: BulkReader,
}

/// The untimed pass's sums of the synthetic model: (eventId sum, particle sum, particles,
/// elements).
type Sums = (u64, f64, u64, u64);

impl<'a> Way<'a> {
    fn new(r: &'a Reader, cols: &'a [BulkColumn], chunked: bool) -> Result<Way<'a>, Box<dyn Error>> {
        let k = r.descriptor().clusters.len();
        let plan = (0..k).map(|c| cols.iter().map(|col| if chunked { chunks(r, col, c).map(Some) } else { Ok(None) }).collect()).collect::<Result<_, _>>()?;
        Ok(Way { r, cols, plan, bufs: cols.iter().map(|c| Buf::new(c.element_type())).collect(), bulk: BulkReader::new() })
    }

    /// One pass over everything; its seconds (without the summing when `sums` is given).
    fn pass(&mut self, mut sums: Option<&mut Sums>) -> Result<f64, Box<dyn Error>> {
        let t = Instant::now();
        let mut untimed = 0.0;
        let (r, bulk) = (self.r, &mut self.bulk);
        for (c, per_col) in self.plan.iter().enumerate() {
            for ((col, buf), parts) in self.cols.iter().zip(self.bufs.iter_mut()).zip(per_col) {
                let mut one = |part: Option<Range<u64>>| -> Result<(), Box<dyn Error>> {
                    let n = buf.read(bulk, r, col, c, part)?;
                    if let Some((ids, psum, items, elements)) = sums.as_deref_mut() {
                        let u = Instant::now();
                        *elements += n as u64;
                        match (col.path(), &*buf) {
                            ("eventId", Buf::U64(v)) => *ids = v[..n].iter().fold(*ids, |a, &x| a.wrapping_add(x)),
                            ("particles._0", Buf::F32(v)) => {
                                *psum = v[..n].iter().fold(*psum, |a, &x| a + f64::from(x)); // one order whatever the chunks
                                *items += n as u64;
                            }
                            _ => {}
                        }
                        untimed += u.elapsed().as_secs_f64();
                    }
                    Ok(())
                };
                match parts {
                    Some(p) => p.iter().try_for_each(|e| one(Some(e.clone())))?,
                    None => one(None)?,
                }
            }
        }
        Ok(t.elapsed().as_secs_f64() - untimed)
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

/// The bulk read benchmark (see the module documentation).
pub(crate) fn bench_bulk(path: &str, ntuple: Option<&str>, fields: Option<&[&str]>) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let (cols, skipped) = columns(&r, fields)?;
    let k = r.descriptor().clusters.len();
    let mapped_file = RNTupleFile::from_source(Arc::new(MappedSource::open(path)?))?;
    let mr = mapped_file.reader(&name)?;
    let names = ["cluster_buffers", "chunk", "mapped_chunk"];
    let mut ways = [Way::new(&r, &cols, false)?, Way::new(&r, &cols, true)?, Way::new(&mr, &cols, true)?];
    // The untimed pass: buffers grown, values summed, every way the same values.
    let mut sums: Vec<Sums> = Vec::new();
    for w in ways.iter_mut() {
        let mut s: Sums = (0, 0.0, 0, 0);
        w.pass(Some(&mut s))?;
        sums.push(s);
    }
    for (name, s) in names.iter().zip(&sums).skip(1) {
        if (s.0, s.1.to_bits(), s.2, s.3) != (sums[0].0, sums[0].1.to_bits(), sums[0].2, sums[0].3) {
            return Err(format!("bulk reads by {name} gave other values than by whole clusters").into());
        }
    }
    let pages = r.pages_in_memory(fields)?;
    let (stored, unz) = (pages.iter().map(|p| p.0.len() as u64).sum::<u64>(), pages.iter().map(|p| p.1 as u64).sum::<u64>());
    let mut secs: [Vec<f64>; 3] = Default::default();
    let (mut zstd, mut floor_parts) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for (w, s) in ways.iter_mut().zip(secs.iter_mut()) {
            s.push(w.pass(None)?);
        }
        let t = Instant::now();
        Reader::decompress_pages(&pages)?;
        zstd.push(t.elapsed().as_secs_f64());
        floor_parts.push(Reader::bulk_floor(&pages)?);
    }
    let floors: Vec<f64> = floor_parts.iter().map(|(z, c, x)| z + c + x).collect();
    let ratios = |v: &[f64]| median(v.iter().zip(&zstd).map(|(s, z)| s / z).collect());
    let mut obj = serde_json::Map::new();
    obj.insert("mode".into(), "bulk".into());
    obj.insert("entries".into(), r.num_entries().into());
    let best_way = (0..3).min_by(|&a, &b| ratios(&secs[a]).total_cmp(&ratios(&secs[b]))).unwrap_or(0);
    obj.insert("way".into(), names[best_way].into());
    obj.insert("seconds".into(), min(&secs[best_way]).into());
    obj.insert("bulk_vs_decompress".into(), ratios(&secs[best_way]).into());
    for (name, s) in names.iter().zip(&secs) {
        obj.insert(format!("{name}_seconds"), min(s).into());
        obj.insert(format!("{name}_pass_seconds"), s.clone().into());
        obj.insert(format!("{name}_vs_decompress"), ratios(s).into());
        obj.insert(format!("{name}_vs_floor"), median(s.iter().zip(&floors).map(|(s, f)| s / f).collect()).into());
    }
    obj.insert("chunk_elements".into(), CHUNK.into());
    obj.insert("rounds".into(), (ROUNDS as u64).into());
    obj.insert("columns".into(), (cols.len() as u64).into());
    let (ids, psum, items, elements) = sums[0];
    obj.insert("elements".into(), elements.into());
    obj.insert("clusters".into(), (k as u64).into());
    obj.insert("checksum".into(), ids.into());
    if items > 0 {
        obj.insert("particles_sum".into(), psum.into());
        obj.insert("particles_items".into(), items.into());
    }
    obj.insert("scratch_bytes".into(), (ways[1].bulk.scratch_bytes() as u64).into());
    obj.insert("stored_bytes".into(), stored.into());
    obj.insert("uncompressed_bytes".into(), unz.into());
    obj.insert("decompress_seconds".into(), min(&zstd).into());
    obj.insert("decompress_pass_seconds".into(), zstd.clone().into());
    obj.insert("floor_decompress_seconds".into(), min(&floor_parts.iter().map(|p| p.0).collect::<Vec<_>>()).into());
    obj.insert("floor_copy_seconds".into(), min(&floor_parts.iter().map(|p| p.1).collect::<Vec<_>>()).into());
    obj.insert("floor_checksum_seconds".into(), min(&floor_parts.iter().map(|p| p.2).collect::<Vec<_>>()).into());
    obj.insert("floor_seconds".into(), min(&floors).into());
    obj.insert("floor_vs_decompress".into(), ratios(&floors).into());
    obj.insert("skipped_columns".into(), skipped.into());
    println!("{}", serde_json::Value::Object(obj));
    Ok(())
}
