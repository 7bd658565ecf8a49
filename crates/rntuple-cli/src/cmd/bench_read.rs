//! `rntuple bench read`: reads fields of all entries into Arrow arrays and prints timings and
//! checksums as one JSON object.

use super::select::field_list;
use super::{pick_ntuple, Res};
use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{Array, RecordBatch};
use rntuple::arrow::datatypes::{DataType, Float32Type, UInt64Type};
use rntuple::RNTupleFile;
use std::time::Instant;

pub(crate) fn bench_read(path: &str, ntuple: Option<&str>, fields: Option<&str>) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let names: Option<Vec<&str>> = fields.map(field_list);
    let n = r.num_entries();
    let t = Instant::now();
    let batch = r.read_batch(names.as_deref(), 0, n)?;
    let secs = t.elapsed().as_secs_f64();
    let stored = r.stats().stored_bytes.load(std::sync::atomic::Ordering::Relaxed);
    let unz = r.stats().uncompressed_bytes.load(std::sync::atomic::Ordering::Relaxed);
    let (_, _, dsecs) = r.decompress_only(names.as_deref())?;
    let fresh = r.decompress_fresh(names.as_deref())?;
    let mut obj = serde_json::Map::new();
    obj.insert("entries".into(), n.into());
    obj.insert("seconds".into(), secs.into());
    obj.insert("stored_bytes".into(), stored.into());
    obj.insert("uncompressed_bytes".into(), unz.into());
    obj.insert("decompress_seconds".into(), dsecs.into());
    obj.insert("decompress_fresh_seconds".into(), fresh.into());
    obj.insert("threads".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).into());
    sums(&batch, &mut obj);
    println!("{}", serde_json::Value::Object(obj));
    Ok(())
}

/// Checksums over a batch so that benchmarks can verify they read the same data.
fn sums(b: &RecordBatch, obj: &mut serde_json::Map<String, serde_json::Value>) {
    for (i, f) in b.schema().fields().iter().enumerate() {
        let col = b.column(i);
        match f.data_type() {
            DataType::UInt64 => {
                let s: u64 = col.as_primitive::<UInt64Type>().values().iter().fold(0u64, |a, &x| a.wrapping_add(x));
                obj.insert(if f.name() == "eventId" { "checksum".into() } else { format!("{}_sum", f.name()) }, s.into());
            }
            DataType::LargeList(_) => {
                let l = col.as_list::<i64>();
                let v = l.values();
                if let Some(p) = v.as_primitive_opt::<Float32Type>() {
                    let s: f64 = p.values().iter().map(|&x| x as f64).sum();
                    obj.insert(format!("{}_sum", f.name()), s.into());
                }
                obj.insert(format!("{}_items", f.name()), (v.len() as u64).into());
            }
            _ => {}
        }
    }
}
