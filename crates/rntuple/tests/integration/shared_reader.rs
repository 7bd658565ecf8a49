//! One reader shared by many threads (issue 35, point 4): 16 threads each make 2,000 random reads
//! (random field subsets and entry ranges, as Arrow batches through `read_batch` and as values
//! through `read_values`) on ONE `Reader`, and readers made by 16 threads from ONE `RNTupleFile`;
//! every result equals the single-threaded read of the same request, computed beforehand. Also with
//! the pages coming through the reader's cluster pool (a source with a latency per request).

use crate::common::Rng;
use arrow_array::RecordBatch;
use rntuple::storage::local::source::{MemSource, ReadAt};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Reader, Value};
use std::sync::Arc;

// Compile-time: a reader and a file can be shared between threads.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Reader>();
    shared::<RNTupleFile>();
};

const THREADS: usize = 16;
const READS: usize = 2_000;
const FIELDS: &[(&str, &str)] = &[
    ("id", "std::uint64_t"),
    ("x", "float"),
    ("v", "std::vector<float>"),
    ("name", "std::string"),
    ("nested", "std::vector<std::vector<std::int32_t>>"),
    ("flag", "bool"),
];

/// A file of `n` entries in small clusters (dozens) and small pages.
fn write_file(n: u64) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("rntuple-shared-reader-{}.root", std::process::id()));
    let opts = WriteOptions { approx_zipped_cluster_size: 2_000, max_unzipped_page_size: 1_024, ..WriteOptions::default() };
    let mut w = Writer::create(&path, "Events", FIELDS, opts).unwrap();
    for i in 0..n {
        let v: Vec<Value> = (0..i % 6).map(|k| Value::F32((i * 10 + k) as f32 * 0.5)).collect();
        let nested: Vec<Value> = (0..i % 3).map(|k| Value::List((0..k).map(|j| Value::Int((i + j) as i64)).collect())).collect();
        w.fill(&Value::Record(vec![
            ("id".into(), Value::UInt(i)),
            ("x".into(), Value::F32(i as f32 * 0.25)),
            ("v".into(), Value::List(v)),
            ("name".into(), Value::String(format!("entry-{i}"))),
            ("nested".into(), Value::List(nested)),
            ("flag".into(), Value::Bool(i % 3 == 0)),
        ]))
        .unwrap();
    }
    w.commit().unwrap();
    path
}

/// One read: its fields (`None`: all), its entry range and whether it asks for values (else Arrow).
#[derive(Clone)]
struct Request {
    fields: Option<Vec<&'static str>>,
    start: u64,
    stop: u64,
    values: bool,
}

#[derive(Debug, PartialEq)]
enum Got {
    Batch(RecordBatch),
    Values(Vec<Value>),
}

fn requests(seed: u64, n: u64, count: usize) -> Vec<Request> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let fields = if rng.below(8) == 0 {
                None
            } else {
                let picked: Vec<&'static str> = FIELDS.iter().filter(|_| rng.below(3) == 0).map(|f| f.0).collect();
                Some(if picked.is_empty() { vec![FIELDS[rng.index(FIELDS.len())].0] } else { picked })
            };
            // Mostly a few entries (within or across a cluster boundary), sometimes many clusters.
            let len = if rng.below(10) == 0 { rng.below(1_500) } else { rng.below(40) };
            let start = rng.below(n + 1);
            let stop = (start + len).min(n);
            Request { fields, start, stop, values: rng.below(2) == 0 }
        })
        .collect()
}

/// The file's bytes behind a source with a latency per request (as HTTP, S3): every read takes its pages
/// from the reader's cluster pool, loaded ahead by its thread.
struct RemoteLike(MemSource);

impl ReadAt for RemoteLike {
    fn len(&self) -> u64 {
        self.0.len()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.0.read_exact_at(offset, buf)
    }
    fn is_remote(&self) -> bool {
        true
    }
}

/// Runs `work` on `reader` from one thread per list, each result compared with `expected`; returns the mismatches.
fn run_shared(reader: &Reader, work: &[Vec<Request>], expected: &[Vec<Got>], per_thread: usize) -> usize {
    let mismatches = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (t, (qs, want)) in work.iter().zip(expected).enumerate() {
            let mismatches = &mismatches;
            s.spawn(move || {
                for (k, (q, w)) in qs.iter().zip(want).enumerate().take(per_thread) {
                    if &read(reader, q) != w {
                        mismatches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        eprintln!("thread {t} read {k}: fields {:?} entries {}..{} differ from the single-threaded read", q.fields, q.start, q.stop);
                    }
                }
            });
        }
    });
    mismatches.into_inner()
}

fn read(r: &Reader, q: &Request) -> Got {
    let f = q.fields.as_deref();
    let what = || format!("fields {:?} entries {}..{}", q.fields, q.start, q.stop);
    if q.values {
        Got::Values(r.read_values(f, q.start, q.stop).unwrap_or_else(|e| panic!("{}: {e}", what())))
    } else {
        Got::Batch(r.read_batch(f, q.start, q.stop).unwrap_or_else(|e| panic!("{}: {e}", what())))
    }
}

#[test]
fn sixteen_threads_on_one_reader_read_what_one_thread_reads() {
    let n = 12_000;
    let path = write_file(n);
    let file = RNTupleFile::open(&path).unwrap();
    let reader = file.reader("Events").unwrap();
    assert_eq!(reader.num_entries(), n);
    assert!(reader.descriptor().clusters.len() >= 20, "the file should have many clusters, has {}", reader.descriptor().clusters.len());
    // The expected results: the same requests read one after the other by a reader of its own.
    let reference = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    let work: Vec<Vec<Request>> = (0..THREADS).map(|t| requests(0x5eed + t as u64, n, READS)).collect();
    let expected: Vec<Vec<Got>> = work.iter().map(|qs| qs.iter().map(|q| read(&reference, q)).collect()).collect();
    let (batches, values) = work.iter().flatten().fold((0, 0), |(b, v), q| if q.values { (b, v + 1) } else { (b + 1, v) });
    assert!(batches > 10_000 && values > 10_000, "both kinds of read: {batches} batches, {values} values");
    // Every spot check that the expectation is the data itself, not only self-consistent.
    let Got::Values(first) = read(&reference, &Request { fields: Some(vec!["id", "name"]), start: 4_321, stop: 4_322, values: true }) else { unreachable!() };
    assert_eq!(first[0].to_json().to_string(), r#"{"id":4321,"name":"entry-4321"}"#);

    assert_eq!(run_shared(&reader, &work, &expected, READS), 0, "reads through the shared reader differ from single-threaded reads");
    // The same through the cluster pool: a source with a latency per request, 16 threads on one reader.
    let remote = RNTupleFile::from_source(Arc::new(RemoteLike(MemSource(Arc::new(std::fs::read(&path).unwrap()))))).unwrap();
    let pooled = remote.reader("Events").unwrap();
    assert_eq!(run_shared(&pooled, &work, &expected, READS / 4), 0, "reads through a shared reader's cluster pool differ");
    assert!(pooled.read_ahead_peak_bytes() > 0, "the reads went through the cluster pool");

    // One RNTupleFile shared: each thread opens readers from it and reads through them.
    std::thread::scope(|s| {
        for (qs, want) in work.iter().zip(&expected) {
            let file = &file;
            s.spawn(move || {
                let mut r = file.reader("Events").unwrap();
                for (k, (q, w)) in qs.iter().zip(want).enumerate().take(400) {
                    if k % 100 == 0 {
                        r = file.reader("Events").unwrap();
                    }
                    assert!(&read(&r, q) == w, "a reader of the shared file: fields {:?} entries {}..{}", q.fields, q.start, q.stop);
                }
            });
        }
    });
    std::fs::remove_file(&path).unwrap();
}
