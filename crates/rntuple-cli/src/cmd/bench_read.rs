//! `rntuple bench read`: reads fields of all entries into Arrow arrays and prints timings and
//! checksums as one JSON object.

use super::select::field_list;
use super::{pick_ntuple, Res};
use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{Array, RecordBatch};
use rntuple::arrow::datatypes::{DataType, Float32Type, UInt64Type};
use rntuple::read::ReadAhead;
use rntuple::RNTupleFile;
use std::time::Instant;

/// The read-ahead options of `rntuple bench read`, each `None` for the default.
pub(crate) struct ReadAheadArgs {
    /// Clusters loaded ahead (0: off).
    pub(crate) clusters: Option<usize>,
    /// The bytes they may hold.
    pub(crate) bytes: Option<u64>,
    /// Concurrent pread streams for a cold local file.
    pub(crate) streams: Option<usize>,
    /// Read the file through a memory map.
    pub(crate) mmap: bool,
}

/// Reads `fields` (all when `None`) of every entry, `step` entries at a time (0: all at once).
pub(crate) fn bench_read(path: &str, ntuple: Option<&str>, fields: Option<&str>, read_ahead: ReadAheadArgs, step: u64) -> Res {
    let f = if read_ahead.mmap { RNTupleFile::open_mapped(path)? } else { RNTupleFile::open(path)? };
    let name = pick_ntuple(&f, ntuple)?;
    let mut r = f.reader(&name)?;
    let mut ra = r.read_ahead();
    if let Some(n) = read_ahead.clusters {
        ra = if n == 0 { ReadAhead::off() } else { ReadAhead { clusters: n, local: true, ..ra } };
    }
    if let Some(b) = read_ahead.bytes {
        ra.bytes = b;
    }
    if let Some(n) = read_ahead.streams {
        // The streams themselves, also where the kernel's read-ahead would serve the read.
        ra.streams = n;
        ra.kernel_dense = false;
    }
    r.set_read_ahead(ra);
    let names: Option<Vec<&str>> = fields.map(field_list);
    let n = r.num_entries();
    let (req0, bytes0) = r.io_counts().unwrap_or_default();
    let mut obj = serde_json::Map::new();
    let step = if step == 0 { n.max(1) } else { step };
    let mut start = 0;
    // Reading only: the checksums of each batch are taken outside the timing.
    let mut secs = 0.0;
    while start < n {
        let stop = n.min(start + step);
        let t = Instant::now();
        let batch = r.read_batch(names.as_deref(), start, stop)?;
        secs += t.elapsed().as_secs_f64();
        sums(&batch, &mut obj);
        start = stop;
    }
    let (req1, bytes1) = r.io_counts().unwrap_or_default();
    let stored = r.stats().stored_bytes.load(std::sync::atomic::Ordering::Relaxed);
    let unz = r.stats().uncompressed_bytes.load(std::sync::atomic::Ordering::Relaxed);
    obj.insert("entries".into(), n.into());
    obj.insert("seconds".into(), secs.into());
    obj.insert("stored_bytes".into(), stored.into());
    obj.insert("uncompressed_bytes".into(), unz.into());
    obj.insert("clusters".into(), (r.descriptor().clusters.len() as u64).into());
    obj.insert("requests".into(), (req1 - req0).into());
    obj.insert("bytes_read".into(), (bytes1 - bytes0).into());
    obj.insert("read_ahead_clusters".into(), (if r.read_ahead().enabled { r.read_ahead().clusters } else { 0 } as u64).into());
    obj.insert("read_ahead_peak_bytes".into(), r.read_ahead_peak_bytes().into());
    obj.insert("read_ahead_streams".into(), (r.read_ahead().streams as u64).into());
    // The physical limit (pages read and decompressed without decoding) reads every page again
    // one request at a time: measured for local files only.
    if !RNTupleFile::is_url(path) {
        let (_, _, dsecs) = r.decompress_only(names.as_deref())?;
        let fresh = r.decompress_fresh(names.as_deref())?;
        obj.insert("decompress_seconds".into(), dsecs.into());
        obj.insert("decompress_fresh_seconds".into(), fresh.into());
    }
    obj.insert("threads".into(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).into());
    println!("{}", serde_json::Value::Object(obj));
    Ok(())
}

/// Adds `v` to the number under `key` (wrapping for integers), inserting it when new.
fn accumulate(obj: &mut serde_json::Map<String, serde_json::Value>, key: String, v: serde_json::Value) {
    let sum = match (obj.get(&key), &v) {
        (Some(a), _) if a.is_u64() && v.is_u64() => a.as_u64().unwrap_or(0).wrapping_add(v.as_u64().unwrap_or(0)).into(),
        (Some(a), _) => (a.as_f64().unwrap_or(0.0) + v.as_f64().unwrap_or(0.0)).into(),
        (None, _) => v,
    };
    obj.insert(key, sum);
}

/// Checksums over a batch so that benchmarks can verify they read the same data.
fn sums(b: &RecordBatch, obj: &mut serde_json::Map<String, serde_json::Value>) {
    for (i, f) in b.schema().fields().iter().enumerate() {
        let col = b.column(i);
        match f.data_type() {
            DataType::UInt64 => {
                let s: u64 = col.as_primitive::<UInt64Type>().values().iter().fold(0u64, |a, &x| a.wrapping_add(x));
                accumulate(obj, if f.name() == "eventId" { "checksum".into() } else { format!("{}_sum", f.name()) }, s.into());
            }
            DataType::LargeList(_) => {
                let l = col.as_list::<i64>();
                let v = l.values();
                if let Some(p) = v.as_primitive_opt::<Float32Type>() {
                    let s: f64 = p.values().iter().map(|&x| x as f64).sum();
                    accumulate(obj, format!("{}_sum", f.name()), s.into());
                }
                accumulate(obj, format!("{}_items", f.name()), (v.len() as u64).into());
            }
            _ => {}
        }
    }
}
