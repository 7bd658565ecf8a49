//! Cold local reads on several streams (issue 33): the values read with 1 to 16 concurrent
//! `pread` streams equal page-by-page reads; the byte budget bounds what the pool holds (a read
//! larger than it stays page by page); a failing stream's error names the file and the offset,
//! without a hang.

use rntuple::read::ReadAhead;
use rntuple::storage::local::source::{FileSource, ReadAt, SourceCounters};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A file of `n` entries with six fields (scalars, vectors, a string) in many small clusters.
fn write_file(name: &str, n: u64) -> PathBuf {
    let path = std::env::temp_dir().join(format!("rntuple-read-streams-{name}-{}.root", std::process::id()));
    let opts = WriteOptions { approx_zipped_cluster_size: 20_000, max_unzipped_page_size: 4096, ..Default::default() };
    let schema =
        [("id", "std::uint64_t"), ("x", "float"), ("v", "std::vector<float>"), ("k", "std::int32_t"), ("s", "std::string"), ("w", "std::vector<std::int16_t>")];
    let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
    for i in 0..n {
        let v: Vec<Value> = (0..i % 7).map(|k| Value::F32((i * 10 + k) as f32)).collect();
        let ws: Vec<Value> = (0..i % 3).map(|k| Value::Int((i as i64 + k as i64) % 300)).collect();
        w.fill(&Value::Record(vec![
            ("id".into(), Value::UInt(i)),
            ("x".into(), Value::F32(i as f32 * 0.5)),
            ("v".into(), Value::List(v)),
            ("k".into(), Value::Int(-(i as i64) % 1000)),
            ("s".into(), Value::String(format!("entry {i}"))),
            ("w".into(), Value::List(ws)),
        ]))
        .unwrap();
    }
    w.commit().unwrap();
    path
}

/// A local file read with `pread` that says its bytes are out of the page cache (a cold read),
/// optionally failing every read that touches `fail_at`.
struct Cold {
    file: FileSource,
    path: String,
    fail_at: Option<u64>,
    preads: AtomicU64,
}

impl Cold {
    fn open(path: &Path, fail_at: Option<u64>) -> Arc<Cold> {
        Arc::new(Cold { file: FileSource::open(path).unwrap(), path: path.display().to_string(), fail_at, preads: AtomicU64::new(0) })
    }
}

impl ReadAt for Cold {
    fn len(&self) -> u64 {
        self.file.len()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.preads.fetch_add(1, Ordering::Relaxed);
        if let Some(at) = self.fail_at
            && (offset..offset + buf.len() as u64).contains(&at)
        {
            let e = std::io::Error::from_raw_os_error(libc_eio());
            return Err(rntuple::Error::Io { context: format!("reading {} bytes at offset {offset} of {}", buf.len(), self.path), source: e });
        }
        self.file.read_exact_at(offset, buf)
    }
    fn counters(&self) -> Option<&SourceCounters> {
        self.file.counters()
    }
    fn is_cached(&self, _offset: u64) -> Option<bool> {
        Some(false)
    }
    fn advise(&self, ranges: &[Range<u64>]) {
        self.file.advise(ranges)
    }
}

/// EIO, the error of a failing disk.
fn libc_eio() -> i32 {
    5
}

fn text(b: &rntuple::arrow::array::RecordBatch) -> String {
    format!("{b:?}")
}

fn page_by_page(path: &Path, fields: Option<&[&str]>, a: u64, b: u64) -> String {
    let mut r = RNTupleFile::open(path).unwrap().reader("Events").unwrap();
    r.set_read_ahead(ReadAhead::off());
    text(&r.read_batch(fields, a, b).unwrap())
}

#[test]
fn one_to_sixteen_streams_read_what_page_by_page_reads() {
    let path = write_file("values", 30_000);
    let n = RNTupleFile::open(&path).unwrap().reader("Events").unwrap().num_entries();
    let all = page_by_page(&path, None, 0, n);
    let some = page_by_page(&path, Some(&["v", "s", "k"]), 1234, n - 777);
    for streams in [1, 2, 3, 4, 8, 16] {
        for threads in [1, 2, 4] {
            let src = Cold::open(&path, None);
            let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
            r.set_threads(threads);
            r.set_read_ahead(ReadAhead { streams, ..ReadAhead::default() });
            let (req0, _) = r.io_counts().unwrap();
            assert_eq!(text(&r.read_batch(None, 0, n).unwrap()), all, "{streams} streams, {threads} threads, all fields");
            let (req1, _) = r.io_counts().unwrap();
            assert_eq!(text(&r.read_batch(Some(&["v", "s", "k"]), 1234, n - 777).unwrap()), some, "{streams} streams, {threads} threads, 3 fields");
            if streams > 1 {
                // Through the pool, in column groups: far fewer reads than pages.
                let clusters = r.descriptor().clusters.len() as u64;
                assert!(r.read_ahead_peak_bytes() > 0, "{streams} streams: through the pool");
                assert!(req1 - req0 <= 6 * clusters, "{streams} streams: {} reads for {clusters} clusters", req1 - req0);
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn the_budget_bounds_the_bytes_held_on_several_streams() {
    let path = write_file("budget", 30_000);
    let r0 = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    let d = r0.descriptor().clone();
    let sizes: Vec<u64> = d.clusters.iter().map(|c| c.columns.iter().flatten().flat_map(|cr| &cr.pages).map(|p| p.locator.size + 8).sum()).collect();
    let (largest, total) = (*sizes.iter().max().unwrap(), sizes.iter().sum::<u64>());
    // Cluster by cluster with a budget of two clusters: each read through the pool, within it.
    let src = Cold::open(&path, None);
    let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
    r.set_read_ahead(ReadAhead { streams: 8, clusters: 4, bytes: 2 * largest, ..ReadAhead::default() });
    for c in &d.clusters {
        let b = r.read_batch(None, c.first_entry, c.first_entry + c.n_entries).unwrap();
        assert_eq!(text(&b), page_by_page(&path, None, c.first_entry, c.first_entry + c.n_entries));
    }
    let peak = r.read_ahead_peak_bytes();
    assert!(peak > 0 && peak <= 2 * largest, "peak {peak} bytes held, budget {}", 2 * largest);
    // All entries at once, more than the budget: page by page, nothing held.
    let src = Cold::open(&path, None);
    let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
    r.set_read_ahead(ReadAhead { streams: 8, bytes: total / 2, ..ReadAhead::default() });
    let b = r.read_batch(None, 0, r.num_entries()).unwrap();
    assert_eq!(r.read_ahead_peak_bytes(), 0, "a read larger than the budget is not held");
    assert_eq!(text(&b), page_by_page(&path, None, 0, r.num_entries()));
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_failing_stream_names_the_file_and_offset_and_does_not_hang() {
    let path = write_file("failing", 30_000);
    let d = RNTupleFile::open(&path).unwrap().reader("Events").unwrap().descriptor().clone();
    // A page in the middle of the file: the read of every request holding it fails.
    let c = &d.clusters[d.clusters.len() / 2];
    let p = c.columns.iter().flatten().flat_map(|cr| &cr.pages).next().unwrap();
    let bad = p.locator.offset + 1;
    for streams in [2, 16] {
        let src = Cold::open(&path, Some(bad));
        let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
        r.set_threads(2);
        r.set_read_ahead(ReadAhead { streams, ..ReadAhead::default() });
        let e = r.read_batch(None, 0, r.num_entries()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("ahead of decoding") && e.contains(&path.display().to_string()) && e.contains("at offset"), "{streams} streams: {e}");
        // The reader stays usable: a read that does not touch the bad bytes succeeds.
        let first = &d.clusters[0];
        let ok = r.read_batch(None, first.first_entry, first.first_entry + first.n_entries).unwrap();
        assert_eq!(text(&ok), page_by_page(&path, None, first.first_entry, first.first_entry + first.n_entries));
    }
    std::fs::remove_file(&path).unwrap();
}
