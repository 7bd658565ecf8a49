//! The plan of one read: the physical columns of its fields, the clusters it needs, and whether
//! it takes its pages from the cluster pool or reads each page from the source when it is decoded
//! (decided by `PageSource::prefetch`). Each read makes its own plan and hands it down the
//! decoding calls, so reads through one shared reader at once each follow their own decision;
//! also what a read covers in a cluster, [`Span`]. ROOT's counterpart: the cluster pool's request
//! key `RCluster::RKey` (a cluster and its physical column set).

use crate::format::descriptor::Descriptor;

/// A range of elements of one field within one cluster (cluster-local indices).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) cluster: usize,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

/// See the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadPlan {
    /// The sorted, de-duplicated physical columns of the read's top-level fields and their
    /// subfields.
    pub(crate) columns: Vec<u32>,
    /// The clusters the read needs, in reading order.
    pub(crate) clusters: Vec<usize>,
    /// Whether the read's pages are looked up in the cluster pool (else each page is read from the
    /// source when it is decoded).
    pub(crate) pooled: bool,
}

impl ReadPlan {
    /// The plan of a read of the top-level fields `ids` over `spans`, page by page until the page
    /// source decides otherwise.
    pub(crate) fn new(desc: &Descriptor, ids: &[u32], spans: &[Span]) -> ReadPlan {
        let mut columns = Vec::new();
        let mut stack: Vec<u32> = ids.to_vec();
        while let Some(f) = stack.pop() {
            let fd = &desc.fields[f as usize];
            columns.extend_from_slice(&fd.columns);
            stack.extend_from_slice(&fd.children);
        }
        columns.sort_unstable();
        columns.dedup();
        ReadPlan { columns, clusters: spans.iter().map(|s| s.cluster).collect(), pooled: false }
    }
}

/// Each read's plan is its own: reads through one shared reader at once, one taking its pages from
/// the cluster pool and one reading page by page, return what single-threaded reads return.
#[cfg(test)]
mod tests {
    use super::Span;
    use crate::read::ReadAhead;
    use crate::storage::local::source::{MemSource, RangeSink, ReadAt};
    use crate::write::{WriteOptions, Writer};
    use crate::{RNTupleFile, Reader, Result, Value};
    use arrow_array::RecordBatch;
    use std::ops::Range;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// A file of `n` entries (an id and a variable-length vector) in many small clusters.
    fn file(n: u64) -> Vec<u8> {
        static FILES: AtomicU64 = AtomicU64::new(0);
        let k = FILES.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rntuple-read-plan-{}-{k}.root", std::process::id()));
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

    /// A local file out of the page cache (a cold read), counting the pool's batched reads.
    struct Cold {
        mem: MemSource,
        ranges_calls: AtomicU64,
    }

    impl ReadAt for Cold {
        fn len(&self) -> u64 {
            self.mem.len()
        }
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.mem.read_exact_at(offset, buf)
        }
        fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> Result<()> {
            self.ranges_calls.fetch_add(1, Ordering::Relaxed);
            for (i, r) in ranges.iter().enumerate() {
                sink(i, self.read_vec(r.start, r.end - r.start, "read-ahead")?)?;
            }
            Ok(())
        }
        fn is_cached(&self, _offset: u64) -> Option<bool> {
            Some(false)
        }
    }

    /// The reader under test (one decoding thread and one loading stream, so that a read of both
    /// fields goes page by page and a read of one goes through the pool), its source, and a
    /// reference reader without read-ahead.
    fn readers() -> (Reader, Arc<Cold>, Reader) {
        let bytes = file(30_000);
        let cold = Arc::new(Cold { mem: MemSource(Arc::new(bytes.clone())), ranges_calls: AtomicU64::new(0) });
        let mut r = RNTupleFile::from_source(cold.clone()).unwrap().reader("Events").unwrap();
        r.set_threads(1);
        r.set_read_ahead(ReadAhead { streams: 1, ..ReadAhead::default() });
        let mut reference = RNTupleFile::from_bytes(bytes).unwrap().reader("Events").unwrap();
        reference.set_read_ahead(ReadAhead::off());
        reference.set_threads(1);
        assert!(r.descriptor().clusters.len() > 4, "the file should have several clusters");
        (r, cold, reference)
    }

    fn all_spans(r: &Reader) -> Vec<Span> {
        r.descriptor().clusters.iter().enumerate().map(|(i, c)| Span { cluster: i, start: 0, end: c.n_entries }).collect()
    }

    #[test]
    fn the_plan_decides_pooled_or_page_by_page_per_read() {
        let (r, _, _) = readers();
        let (id, v) = (r.top_field_id("id").unwrap(), r.top_field_id("v").unwrap());
        let spans = all_spans(&r);
        let one = r.prefetch(&[id], &spans).unwrap();
        assert!(one.pooled, "a cold read decoding all its fields at once goes through the pool");
        assert_eq!(one.clusters, (0..spans.len()).collect::<Vec<_>>());
        let both = r.prefetch(&[id, v], &spans).unwrap();
        assert!(!both.pooled, "a read of more fields than decoding threads goes page by page");
        assert!(both.columns.len() > one.columns.len());
        assert!(one.columns.iter().all(|c| both.columns.contains(c)));
        // On several streams every cold read goes through the pool, in column groups.
        let mut r = r;
        r.set_read_ahead(ReadAhead { streams: 4, ..ReadAhead::default() });
        assert!(r.prefetch(&[id, v], &spans).unwrap().pooled, "several streams: through the pool");
    }

    #[test]
    fn plans_made_up_front_decode_at_once_from_two_threads() {
        let (r, cold, reference) = readers();
        let (id, v) = (r.top_field_id("id").unwrap(), r.top_field_id("v").unwrap());
        let spans = all_spans(&r);
        let n = r.num_entries();
        let expected = reference.read_batch(None, 0, n).unwrap();
        // The page-by-page plan first: it empties the pool, which then loads the pooled plan's pages.
        let by_page = r.prefetch(&[id, v], &spans).unwrap();
        let pooled = r.prefetch(&[id], &spans).unwrap();
        assert!(pooled.pooled && !by_page.pooled);
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(|| r.read_fields_parallel(&pooled, &[id], &spans).unwrap());
            let b = s.spawn(|| r.read_fields_parallel(&by_page, &[id, v], &spans).unwrap());
            (a.join().unwrap(), b.join().unwrap())
        });
        assert_eq!(a[0].as_ref(), expected.column(0).as_ref());
        assert_eq!(b[0].as_ref(), expected.column(0).as_ref());
        assert_eq!(b[1].as_ref(), expected.column(1).as_ref());
        assert!(cold.ranges_calls.load(Ordering::Relaxed) > 0, "the pooled plan's pages came through the pool");
    }

    #[test]
    fn reads_with_different_plans_at_once_through_one_shared_reader() {
        let (r, cold, reference) = readers();
        let n = r.num_entries();
        // Entry ranges crossing clusters, each read once through the pool (one field) and once page
        // by page (both fields), the two kinds of read at once from two threads.
        let ranges: Vec<(u64, u64)> = (0..12).map(|k| (k * n / 12, (k * n / 12 + n / 5).min(n))).collect();
        let expect = |fields: Option<&[&str]>| -> Vec<RecordBatch> { ranges.iter().map(|&(a, b)| reference.read_batch(fields, a, b).unwrap()).collect() };
        let (want_one, want_both) = (expect(Some(&["id"])), expect(None));
        std::thread::scope(|s| {
            let one = s.spawn(|| ranges.iter().map(|&(a, b)| r.read_batch(Some(&["id"]), a, b).unwrap()).collect::<Vec<_>>());
            let both = s.spawn(|| ranges.iter().map(|&(a, b)| r.read_batch(None, a, b).unwrap()).collect::<Vec<_>>());
            assert_eq!(one.join().unwrap(), want_one);
            assert_eq!(both.join().unwrap(), want_both);
        });
        assert!(cold.ranges_calls.load(Ordering::Relaxed) > 0, "the one-field reads went through the pool");
        assert!(r.read_ahead_peak_bytes() > 0);
    }

    /// A cold local file whose kernel reads ahead `window` bytes at a time.
    struct Windowed {
        mem: MemSource,
        window: Option<u64>,
    }

    impl ReadAt for Windowed {
        fn len(&self) -> u64 {
            self.mem.len()
        }
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
            self.mem.read_exact_at(offset, buf)
        }
        fn is_cached(&self, _offset: u64) -> Option<bool> {
            Some(false)
        }
        fn kernel_read_ahead(&self) -> Option<u64> {
            self.window
        }
    }

    #[test]
    fn dense_cold_reads_are_left_to_a_large_kernel_read_ahead() {
        // `big` holds most of the bytes: a read of `id` and `v` is sparse, one with `big` dense.
        let path = std::env::temp_dir().join(format!("rntuple-read-plan-dense-{}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 50_000, ..Default::default() };
        let schema = [("id", "std::uint64_t"), ("v", "std::vector<float>"), ("big", "std::vector<double>")];
        let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
        for i in 0..20_000u64 {
            let v = Value::List((0..i % 3).map(|k| Value::F32(k as f32)).collect());
            let big = Value::List((0..40).map(|k| Value::F64(((i * 7919 + k * 104_729) % 1_000_003) as f64)).collect());
            w.fill(&Value::Record(vec![("id".into(), Value::UInt(i)), ("v".into(), v), ("big".into(), big)])).unwrap();
        }
        w.commit().unwrap();
        let bytes = Arc::new(std::fs::read(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        let reference = RNTupleFile::from_bytes(bytes.to_vec()).unwrap().reader("Events").unwrap();
        let expected = reference.read_batch(None, 0, reference.num_entries()).unwrap();
        // (window, ReadAhead::kernel_dense, whether the dense read goes through the streams)
        for (window, kernel_dense, dense_pooled) in
            [(Some(8 << 20), true, false), (Some(1 << 20), true, false), (Some(128 << 10), true, true), (None, true, true), (Some(8 << 20), false, true)]
        {
            let src = Arc::new(Windowed { mem: MemSource(bytes.clone()), window });
            let mut r = RNTupleFile::from_source(src).unwrap().reader("Events").unwrap();
            r.set_threads(1);
            r.set_read_ahead(ReadAhead { streams: 4, kernel_dense, ..ReadAhead::default() });
            assert!(r.descriptor().clusters.len() > 2, "the file should have several clusters");
            let ids: Vec<u32> = schema.iter().map(|(n, _)| r.top_field_id(n).unwrap()).collect();
            let spans = all_spans(&r);
            let case = format!("window {window:?}, kernel_dense {kernel_dense}");
            assert_eq!(r.prefetch(&ids, &spans).unwrap().pooled, dense_pooled, "all fields: {case}");
            assert!(r.prefetch(&ids[..2], &spans).unwrap().pooled, "a sparse read goes through the streams: {case}");
            // The values do not depend on the way.
            assert_eq!(r.read_batch(None, 0, r.num_entries()).unwrap(), expected, "{case}");
        }
    }
}
