//! The cluster pool (read-ahead): same results as page-by-page reads, few coalesced requests,
//! memory bounded by the budget while streaming a file larger than it, and failing or panicking
//! sources give errors instead of hangs or wrong data.

use rntuple::read::ReadAhead;
use rntuple::storage::local::source::{MemSource, RangeSink, ReadAt, SourceCounters};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// A file of `n` entries (an id and a variable-length vector) in many small clusters.
fn file(n: u64) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!("rntuple-read-ahead-{}-{n}.root", std::process::id()));
    let opts = WriteOptions { approx_zipped_cluster_size: 20_000, max_unzipped_page_size: 4096, ..Default::default() };
    let mut w = Writer::create(&path, "Events", &[("id", "std::uint64_t"), ("v", "std::vector<float>")], opts).unwrap();
    for i in 0..n {
        let v: Vec<Value> = (0..i % 7).map(|k| Value::F32((i * 10 + k) as f32)).collect();
        w.fill(&Value::Record(vec![("id".into(), Value::UInt(i)), ("v".into(), Value::List(v))])).unwrap();
    }
    w.commit().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

/// Memory with counted requests and a switch that makes batched reads fail or panic.
struct Counted {
    mem: MemSource,
    counters: SourceCounters,
    ranges_calls: AtomicU64,
    fail: AtomicBool,
    panic: AtomicBool,
    /// Behaves as a network source (pages loaded into memory) rather than a local file (ranges advised).
    remote: AtomicBool,
    /// As a local file: whether its bytes are out of the page cache (a cold read).
    cold: AtomicBool,
    advised: AtomicU64,
}

impl Counted {
    fn new(bytes: Vec<u8>) -> Arc<Self> {
        Arc::new(Counted {
            mem: MemSource(Arc::new(bytes)),
            counters: SourceCounters::default(),
            ranges_calls: AtomicU64::new(0),
            fail: AtomicBool::new(false),
            panic: AtomicBool::new(false),
            remote: AtomicBool::new(true),
            cold: AtomicBool::new(false),
            advised: AtomicU64::new(0),
        })
    }
}

impl ReadAt for Counted {
    fn len(&self) -> u64 {
        self.mem.len()
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        self.counters.add(buf.len() as u64);
        self.mem.read_exact_at(offset, buf)
    }
    fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> rntuple::Result<()> {
        self.ranges_calls.fetch_add(1, Ordering::Relaxed);
        if self.panic.load(Ordering::Relaxed) {
            panic!("source panics on purpose");
        }
        if self.fail.load(Ordering::Relaxed) {
            return Err(rntuple::Error::Io { context: "the test source".into(), source: std::io::Error::other("connection reset") });
        }
        // Delivered out of order, as concurrent requests arrive.
        for (i, r) in ranges.iter().enumerate().rev() {
            let mut v = vec![0u8; (r.end - r.start) as usize];
            self.read_exact_at(r.start, &mut v)?;
            sink(i, v)?;
        }
        Ok(())
    }
    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
    fn is_remote(&self) -> bool {
        self.remote.load(Ordering::Relaxed)
    }
    fn is_cached(&self, _offset: u64) -> Option<bool> {
        Some(!self.cold.load(Ordering::Relaxed))
    }
    fn advise(&self, ranges: &[Range<u64>]) {
        self.advised.fetch_add(ranges.iter().map(|r| r.end - r.start).sum(), Ordering::Relaxed);
    }
}

fn batch_text(b: &rntuple::arrow::array::RecordBatch) -> String {
    format!("{b:?}")
}

#[test]
fn read_ahead_reads_the_same_values_in_one_request_per_cluster() {
    let bytes = file(50_000);
    let src = Counted::new(bytes.clone());
    let f = RNTupleFile::from_source(src.clone()).unwrap();
    let mut r = f.reader("Events").unwrap();
    let clusters = r.descriptor().clusters.len() as u64;
    assert!(clusters >= 8, "{clusters} clusters");
    let n = r.num_entries();
    let (req0, _) = r.io_counts().unwrap();
    let with = r.read_batch(None, 0, n).unwrap();
    let (req1, _) = r.io_counts().unwrap();
    // Both columns' pages of a cluster lie together: one request per cluster.
    assert_eq!(req1 - req0, clusters, "requests for {clusters} clusters");
    r.set_read_ahead(ReadAhead::off());
    let without = r.read_batch(None, 0, n).unwrap();
    let (req2, _) = r.io_counts().unwrap();
    assert!(req2 - req1 > 3 * clusters, "page by page: {} requests", req2 - req1);
    assert_eq!(batch_text(&with), batch_text(&without));
    // Entry ranges that cut clusters, and one field only.
    r.set_read_ahead(ReadAhead::default());
    for (a, b) in [(0, 1), (1234, 9876), (n - 5, n)] {
        let x = r.read_batch(Some(&["v"]), a, b).unwrap();
        let reference = RNTupleFile::from_bytes(bytes.clone()).unwrap().reader("Events").unwrap();
        let mut reference = reference;
        reference.set_read_ahead(ReadAhead::off());
        assert_eq!(batch_text(&x), batch_text(&reference.read_batch(Some(&["v"]), a, b).unwrap()), "{a}..{b}");
    }
}

#[test]
fn streaming_a_file_larger_than_the_budget_keeps_memory_within_it() {
    let bytes = file(60_000);
    let total = bytes.len() as u64;
    let src = Counted::new(bytes);
    let f = RNTupleFile::from_source(src.clone()).unwrap();
    let mut r = f.reader("Events").unwrap();
    let sizes: Vec<u64> =
        r.descriptor().clusters.iter().map(|c| c.columns.iter().flatten().flat_map(|cr| &cr.pages).map(|p| p.locator.size + 8).sum()).collect();
    let largest = *sizes.iter().max().unwrap();
    let budget = 3 * largest;
    assert!(budget * 3 < total, "the file ({total} bytes) must be larger than the budget ({budget})");
    r.set_read_ahead(ReadAhead { clusters: 8, bytes: budget, ..ReadAhead::default() });
    let mut ids = 0u64;
    for c in r.descriptor().clusters.clone() {
        let b = r.read_batch(Some(&["id"]), c.first_entry, c.first_entry + c.n_entries).unwrap();
        ids += b.num_rows() as u64;
    }
    assert_eq!(ids, r.num_entries());
    let peak = r.read_ahead_peak_bytes();
    // The batch's own cluster plus what the budget allows ahead.
    assert!(peak > 0 && peak <= budget + largest, "peak {peak} bytes, budget {budget}, largest cluster {largest}");
}

#[test]
fn a_failing_source_gives_an_error_not_a_hang_or_wrong_data() {
    let bytes = file(10_000);
    for mode in ["fail", "panic"] {
        let src = Counted::new(bytes.clone());
        let f = RNTupleFile::from_source(src.clone()).unwrap();
        let r = f.reader("Events").unwrap();
        if mode == "fail" {
            src.fail.store(true, Ordering::Relaxed);
        } else {
            src.panic.store(true, Ordering::Relaxed);
        }
        let e = r.read_batch(None, 0, r.num_entries()).err().map(|e| e.to_string()).unwrap_or_default();
        let want = if mode == "fail" { "connection reset" } else { "panicked" };
        assert!(e.contains(want) && e.contains("ahead of decoding"), "{mode}: {e}");
        assert!(src.ranges_calls.load(Ordering::Relaxed) >= 1);
    }
}

#[test]
fn a_cold_local_source_is_pooled_when_all_fields_decode_at_once_and_page_by_page_otherwise() {
    let bytes = file(50_000);
    let reference = |a: u64, b: u64| {
        let mut r = RNTupleFile::from_bytes(bytes.clone()).unwrap().reader("Events").unwrap();
        r.set_read_ahead(ReadAhead::off());
        batch_text(&r.read_batch(None, a, b).unwrap())
    };
    // Two fields on two decoding threads, cold: through the pool, one request per cluster.
    let src = Counted::new(bytes.clone());
    src.remote.store(false, Ordering::Relaxed);
    src.cold.store(true, Ordering::Relaxed);
    let f = RNTupleFile::from_source(src.clone()).unwrap();
    let mut r = f.reader("Events").unwrap();
    r.set_threads(2);
    let (n, clusters) = (r.num_entries(), r.descriptor().clusters.len() as u64);
    let (req0, _) = r.io_counts().unwrap();
    let pooled = r.read_batch(None, 0, n).unwrap();
    let (req1, _) = r.io_counts().unwrap();
    assert_eq!(req1 - req0, clusters, "pooled local read: one request per cluster");
    assert!(src.ranges_calls.load(Ordering::Relaxed) >= 1);
    assert_eq!(batch_text(&pooled), reference(0, n));
    // One cluster, by a fresh reader: only its own pages are loaded (no clusters ahead from a
    // local file).
    {
        let src = Counted::new(bytes.clone());
        src.remote.store(false, Ordering::Relaxed);
        src.cold.store(true, Ordering::Relaxed);
        let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
        r.set_threads(2);
        let c1 = r.descriptor().clusters[1].clone();
        let own: u64 = c1.columns.iter().flatten().flat_map(|cr| &cr.pages).map(|p| p.locator.size + 8).sum();
        let (_, b0) = r.io_counts().unwrap();
        let one = r.read_batch(None, c1.first_entry, c1.first_entry + c1.n_entries).unwrap();
        let (_, b1) = r.io_counts().unwrap();
        assert!(b1 - b0 >= own && b1 - b0 <= own + own / 4, "read {} bytes for a cluster of {own}", b1 - b0);
        assert!(src.ranges_calls.load(Ordering::Relaxed) >= 1, "through the pool");
        assert_eq!(batch_text(&one), reference(c1.first_entry, c1.first_entry + c1.n_entries));
    }
    // The same reader shared by threads (a skim's parts): page by page, same values.
    r.share_between_threads();
    let calls = src.ranges_calls.load(Ordering::Relaxed);
    let shared = r.read_batch(None, 1000, n - 1000).unwrap();
    let (req2, _) = r.io_counts().unwrap();
    assert!(req2 - req1 > 3 * clusters, "page by page: {} requests", req2 - req1);
    assert_eq!(src.ranges_calls.load(Ordering::Relaxed), calls, "nothing loaded into memory");
    assert_eq!(batch_text(&shared), reference(1000, n - 1000));
    // Warm (the bytes in the page cache): page by page, as from the cache pread costs less.
    let src = Counted::new(bytes.clone());
    src.remote.store(false, Ordering::Relaxed);
    let mut r = RNTupleFile::from_source(src.clone()).unwrap().reader("Events").unwrap();
    r.set_threads(2);
    let (q0, _) = r.io_counts().unwrap();
    let warm = r.read_batch(None, 0, n).unwrap();
    let (q1, _) = r.io_counts().unwrap();
    assert!(q1 - q0 > 3 * clusters && src.ranges_calls.load(Ordering::Relaxed) == 0, "warm: {} requests", q1 - q0);
    assert_eq!(batch_text(&warm), reference(0, n));
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn a_local_file_just_read_is_in_the_page_cache() {
    let path = std::env::temp_dir().join(format!("rntuple-cached-{}.bin", std::process::id()));
    std::fs::write(&path, vec![7u8; 1 << 16]).unwrap();
    assert_eq!(std::fs::read(&path).unwrap().len(), 1 << 16);
    let src = rntuple::storage::local::source::FileSource::open(&path).unwrap();
    // Written and read a moment ago: in the page cache (the probe does not wait for a disk).
    assert_eq!(src.is_cached(4096), Some(true));
    assert_eq!(src.is_cached(u64::MAX), None, "an offset beyond off_t is not probed");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_local_source_is_advised_of_the_clusters_ahead_and_read_page_by_page() {
    let bytes = file(50_000);
    let src = Counted::new(bytes.clone());
    src.remote.store(false, Ordering::Relaxed);
    let f = RNTupleFile::from_source(src.clone()).unwrap();
    let mut r = f.reader("Events").unwrap();
    // More fields (two) than decoding threads (one): decoding goes field by field over the
    // clusters, so the pages are read when decoded, not loaded by the pool.
    r.set_threads(1);
    r.set_read_ahead(ReadAhead { local: true, ..ReadAhead::default() });
    let d = r.descriptor().clone();
    fn pages_of(c: &rntuple::format::descriptor::ClusterDescriptor) -> Vec<&rntuple::format::descriptor::PageDescriptor> {
        c.columns.iter().flatten().flat_map(|cr| &cr.pages).collect()
    }
    // The first cluster: its pages are read one by one, the next two clusters' announced.
    let (req0, _) = r.io_counts().unwrap();
    let b = r.read_batch(None, 0, d.clusters[0].n_entries).unwrap();
    let (req1, _) = r.io_counts().unwrap();
    assert_eq!(req1 - req0, pages_of(&d.clusters[0]).len() as u64, "one read per page");
    assert_eq!(src.ranges_calls.load(Ordering::Relaxed), 0, "nothing loaded into memory");
    let ahead: u64 = d.clusters[1..3].iter().flat_map(pages_of).map(|p| p.locator.size + 8).sum();
    // Announced from the pool's thread: wait for it (at most 10 s).
    let t = std::time::Instant::now();
    while src.advised.load(Ordering::Relaxed) < ahead && t.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let advised = src.advised.load(Ordering::Relaxed);
    assert!(advised >= ahead && advised as f64 <= 1.25 * ahead as f64 + 1.0, "advised {advised} bytes for {ahead} bytes of pages ahead");
    let mut reference = RNTupleFile::from_bytes(bytes).unwrap().reader("Events").unwrap();
    reference.set_read_ahead(ReadAhead::off());
    assert_eq!(batch_text(&b), batch_text(&reference.read_batch(None, 0, d.clusters[0].n_entries).unwrap()));
}
