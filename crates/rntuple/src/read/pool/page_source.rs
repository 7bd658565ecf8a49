//! The page source: owns the byte source of one RNTuple and the getting of its pages — the cluster
//! pool and the read-ahead settings, each read's plan (which byte ranges its columns occupy in
//! each cluster, coalesced into requests for the pool, and whether the read takes its pages from
//! the pool or page by page), the lookup of a page in the pool, checksum verification and the I/O
//! statistics. Loading and unpacking one page is in `pages`. ROOT's counterpart: `RPageSource`
//! (with `RClusterPool`, here `cluster_pool`).

use super::cluster_pool::{Chunk, ClusterPool, ReadAhead};
use super::read_plan::{ReadPlan, Span};
use crate::error::Result;
use crate::format::descriptor::{Descriptor, PageDescriptor};
use crate::storage::local::coalesce::coalesce;
use crate::storage::local::source::ReadAt;
use std::collections::{BTreeMap, HashMap};
use std::ops::Range;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// I/O and decoding statistics of a reader.
///
/// ```
/// use std::sync::atomic::Ordering;
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ReadStats-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.stats().pages.load(Ordering::Relaxed), 0);
/// r.read_batch(None, 0, 3)?;
/// let s = r.stats();
/// assert_eq!(s.pages.load(Ordering::Relaxed), 1);
/// assert_eq!(s.uncompressed_bytes.load(Ordering::Relaxed), 12); // three floats
/// assert!(s.stored_bytes.load(Ordering::Relaxed) > 0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ReadStats {
    /// Pages read.
    pub pages: AtomicU64,
    /// Stored (compressed) page bytes read.
    pub stored_bytes: AtomicU64,
    /// Uncompressed page bytes produced.
    pub uncompressed_bytes: AtomicU64,
}

/// See the module documentation.
pub(crate) struct PageSource {
    pub(crate) src: Arc<dyn ReadAt>,
    /// The anchor's largest key: blobs larger than this are split over several keys.
    pub(crate) max_key_size: u64,
    pub(crate) stats: ReadStats,
    pub(crate) verify_page_checksums: bool,
    read_ahead: ReadAhead,
    pool: ClusterPool,
    /// Set by [`PageSource::share_between_threads`]: several reads at once, so local files are
    /// read page by page (the pool holds the clusters of one read at a time).
    shared_reads: bool,
}

impl PageSource {
    pub(crate) fn new(src: Arc<dyn ReadAt>, max_key_size: u64) -> PageSource {
        let pool = ClusterPool::new(src.clone());
        PageSource { src, max_key_size, stats: ReadStats::default(), verify_page_checksums: true, read_ahead: ReadAhead::default(), pool, shared_reads: false }
    }

    /// See [`Reader::set_read_ahead`](crate::Reader::set_read_ahead).
    pub(crate) fn set_read_ahead(&mut self, read_ahead: ReadAhead) {
        self.read_ahead = read_ahead;
    }

    /// See [`Reader::share_between_threads`](crate::Reader::share_between_threads).
    pub(crate) fn share_between_threads(&mut self) {
        self.shared_reads = true;
    }

    /// The read-ahead settings.
    pub(crate) fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    /// Most bytes the read-ahead held at once so far.
    pub(crate) fn read_ahead_peak_bytes(&self) -> u64 {
        self.pool.peak_bytes()
    }

    /// The plan of a read of the top-level fields `ids` (of `desc`) over `spans`, by `threads`
    /// decoding threads; hands the cluster pool the clusters of `spans` (needed now) and the next
    /// `read_ahead.clusters` ones, for the read's columns, when the plan takes its pages from it.
    pub(crate) fn prefetch(&self, desc: &Descriptor, ids: &[u32], spans: &[Span], threads: usize) -> Result<ReadPlan> {
        let mut plan = ReadPlan::new(desc, ids, spans);
        let ra = self.read_ahead;
        if !ra.enabled || spans.is_empty() {
            // Sources with a latency per request look their pages up in the pool all the same.
            plan.pooled = ra.enabled && self.src.is_remote();
            return Ok(plan);
        }
        let next = plan.clusters.iter().max().map_or(0, |&c| c + 1);
        let ahead: Vec<usize> = (next..desc.clusters.len()).take(ra.clusters).collect();
        let local = !self.src.is_remote();
        // A cold read of a local file goes through the pool when it decodes all its fields at
        // once (no more fields than decoding threads): decoding then walks the clusters in the order the
        // pool loads them, and the pool's large reads on its own thread overlap the decoding
        // (synthetic file, all columns, cold: 0.13 s against 0.22 s page by page; warm equal).
        // With more fields, decoding goes field by field over all clusters and would wait for
        // the pool to load every cluster before its third field (NanoAOD-like file, cold: 0.41 s
        // against 0.24 s): those reads stay page by page, from the page cache. bench/RESULTS.md.
        // Only a cold read gains: from the page cache, pread of each page costs less than holding
        // the read's clusters in fresh memory (warm, io_bench run 5: 0.134 s through the pool
        // against 0.113 s page by page). A read is cold when the first wanted bytes of one of
        // (up to 16 of) its clusters are not in the page cache.
        //
        // With several streams (`ReadAhead::streams`) every cold local read goes through the
        // pool: its requests are column groups (the columns of as many consecutive fields as
        // decoding threads, in pieces of at most `GROUP_BYTES`), loaded on that many concurrent
        // preads, the groups decoded first first, so that field-by-field decoding finds its
        // pages loaded (bench/_io_streams.py, bench/RESULTS.md, issue 33). The pool holds a local
        // read's clusters until the read ends: on several streams only reads whose stored bytes
        // fit in the budget (`ReadAhead::bytes`) take their pages from it.
        //
        // Unless the read is dense (`ReadAhead::kernel_dense`): it wants at least half the
        // stored bytes of its clusters and the kernel reads ahead at least a stream's request at
        // a time. Page by page, the kernel's read-ahead then loads those clusters in large
        // requests in order, and the streams only add a copy of each byte into fresh memory
        // (NanoAOD-like file, all 87 fields, cold, on a disk reading ahead 8 MiB: page by page
        // 0.26-0.30 s, 4 streams 0.34-0.50 s; bench/RESULTS.md). A sparse read (10 fields) gains
        // from the streams there all the same (1.7-2.1x).
        let streams = ra.streams.max(1);
        let at_once = ids.len() <= threads.max(1);
        let fits = || streams == 1 || self.stored_bytes(desc, &plan.clusters, &plan.columns) <= ra.bytes;
        let to_kernel = || streams > 1 && !at_once && ra.kernel_dense && self.kernel_serves(desc, &plan.clusters, &plan.columns);
        plan.pooled = !local || (!self.shared_reads && (at_once || streams > 1) && fits() && !to_kernel() && self.cold(desc, &plan.clusters, &plan.columns));
        if !plan.pooled {
            self.pool.clear();
            if !ra.local {
                return Ok(plan);
            }
            // The kernel is asked to bring the clusters after the read's into the page cache
            // while the read decodes its own (advising those too made the kernel's read-ahead
            // race the read's own preads: cold reads got slower), from the pool's thread
            // (queuing the read-ahead of many clusters can take as long as reading them).
            self.pool.advise(ahead.iter().map(|&c| self.plan_cluster(desc, c, &plan.columns)).collect())?;
            return Ok(plan);
        }
        // From a local file the pool loads the read's own clusters only: a reader that stops
        // after this read (a Dask partition, one cluster of `iterate`) would otherwise have read
        // the next clusters for nothing, and the kernel reads ahead in the file anyway.
        let ahead: &[usize] = if local { &[] } else { &ahead };
        if !local || streams == 1 {
            self.pool
                .want(&plan.columns, &plan.clusters, ahead, ra.bytes, 1, |c, cols| self.plan_cluster(desc, c, cols).into_iter().map(|r| (r, 0)).collect())?;
            return Ok(plan);
        }
        let ranks = column_ranks(desc, ids, if at_once { ids.len().max(1) } else { threads.max(1) });
        let max_request = if self.max_key_size > 0 { self.max_key_size.min(GROUP_BYTES) } else { GROUP_BYTES };
        self.pool.want(&plan.columns, &plan.clusters, ahead, ra.bytes, streams, |c, cols| self.plan_groups(desc, c, cols, &ranks, max_request))?;
        Ok(plan)
    }

    /// Whether the first wanted bytes of one of the clusters `needed` (16 of them, evenly
    /// spread, for larger reads) are not in memory, as far as the source can tell.
    fn cold(&self, desc: &Descriptor, needed: &[usize], columns: &[u32]) -> bool {
        let step = needed.len().div_ceil(16).max(1);
        needed
            .iter()
            .step_by(step)
            .filter_map(|&c| self.plan_cluster(desc, c, columns).first().map(|r| r.start))
            .any(|at| self.src.is_cached(at) == Some(false))
    }

    /// Whether the kernel's read-ahead serves a read of `columns` over the clusters `needed`
    /// as well as several streams would: it reads ahead at least [`GROUP_BYTES`] at a time and
    /// the read wants at least half the stored bytes of those clusters.
    fn kernel_serves(&self, desc: &Descriptor, needed: &[usize], columns: &[u32]) -> bool {
        if self.src.kernel_read_ahead().is_none_or(|w| w < GROUP_BYTES) {
            return false;
        }
        let clusters = || needed.iter().filter_map(|&c| desc.clusters.get(c));
        let pages = clusters().flat_map(|cl| cl.columns.iter().flatten().flat_map(|r| &r.pages));
        let all = pages.filter_map(|p| self.pooled_range(p)).map(|r| r.end - r.start).fold(0u64, u64::saturating_add);
        self.stored_bytes(desc, needed, columns).saturating_mul(2) >= all
    }

    /// The coalesced requests for the pages of `columns` in cluster `c`. Pages split over several
    /// keys, and pages whose range does not lie inside the file, are left out: the page loader
    /// reads (or refuses) those itself.
    fn plan_cluster(&self, desc: &Descriptor, c: usize, columns: &[u32]) -> Vec<Range<u64>> {
        let Some(cluster) = desc.clusters.get(c) else { return Vec::new() };
        let mut ranges = Vec::new();
        for &col in columns {
            let Some(Some(range)) = cluster.columns.get(col as usize) else { continue };
            for p in &range.pages {
                if let Some(r) = self.pooled_range(p) {
                    ranges.push(r);
                }
            }
        }
        coalesce(ranges, self.read_ahead.overhead, self.max_key_size)
    }

    /// The bytes the pool would load for the pages of `columns` in the clusters `needed`.
    fn stored_bytes(&self, desc: &Descriptor, needed: &[usize], columns: &[u32]) -> u64 {
        let pages = needed
            .iter()
            .filter_map(|&c| desc.clusters.get(c))
            .flat_map(|cl| columns.iter().filter_map(|&col| cl.columns.get(col as usize).and_then(Option::as_ref)).flat_map(|r| &r.pages));
        pages.filter_map(|p| self.pooled_range(p)).map(|r| r.end - r.start).fold(0u64, u64::saturating_add)
    }

    /// The requests for the pages of `columns` in cluster `c` with their ranks: the columns of
    /// each rank (`ranks`, 0 when missing) coalesced apart, in requests of at most
    /// `max_request` bytes.
    fn plan_groups(&self, desc: &Descriptor, c: usize, columns: &[u32], ranks: &HashMap<u32, u32>, max_request: u64) -> Vec<(Range<u64>, u32)> {
        let Some(cluster) = desc.clusters.get(c) else { return Vec::new() };
        let mut groups: BTreeMap<u32, Vec<Range<u64>>> = BTreeMap::new();
        for &col in columns {
            let Some(Some(range)) = cluster.columns.get(col as usize) else { continue };
            let group = groups.entry(ranks.get(&col).copied().unwrap_or(0)).or_default();
            group.extend(range.pages.iter().filter_map(|p| self.pooled_range(p)));
        }
        let overhead = self.read_ahead.overhead;
        groups.into_iter().flat_map(|(rank, ranges)| coalesce(ranges, overhead, max_request).into_iter().map(move |r| (r, rank))).collect()
    }

    /// The byte range of a page as the pool holds it (its stored bytes and checksum), or `None`
    /// for pages the pool does not load.
    fn pooled_range(&self, p: &PageDescriptor) -> Option<Range<u64>> {
        let len = p.locator.size.checked_add(if p.has_checksum { 8 } else { 0 })?;
        let end = p.locator.offset.checked_add(len)?;
        let chunked = self.max_key_size > 0 && len > self.max_key_size;
        (len > 0 && !chunked && end <= self.src.len()).then_some(p.locator.offset..end)
    }

    /// The pool's bytes of a page of cluster `c` (waiting for them if they are on their way), and
    /// where the page starts in them; `None` when the pool does not hold the page or the read's
    /// `plan` does not take its pages from the pool.
    pub(crate) fn pooled_page(&self, plan: &ReadPlan, c: usize, p: &PageDescriptor) -> Result<Option<(Chunk, usize)>> {
        // Reads that do not use the pool take no lock per page.
        if !self.read_ahead.enabled || !plan.pooled {
            return Ok(None);
        }
        match self.pooled_range(p) {
            Some(r) => self.pool.page(c, r),
            None => Ok(None),
        }
    }
}

/// Largest request of a cold local read on several streams: a wide cluster is loaded in column
/// groups of at most this size, so that the streams share it.
const GROUP_BYTES: u64 = 1 << 20;

/// The rank of each physical column of the top-level fields `ids` (and their subfields): the
/// position of its field in `ids` divided by `group` (the fields decoded at once), the order in
/// which field-by-field decoding takes them.
fn column_ranks(desc: &Descriptor, ids: &[u32], group: usize) -> HashMap<u32, u32> {
    let mut ranks = HashMap::new();
    for (i, &id) in ids.iter().enumerate() {
        let rank = u32::try_from(i / group.max(1)).unwrap_or(u32::MAX);
        let mut stack = vec![id];
        while let Some(f) = stack.pop() {
            let Some(fd) = desc.fields.get(f as usize) else { continue };
            for &c in &fd.columns {
                let r = ranks.entry(c).or_insert(rank);
                *r = (*r).min(rank);
            }
            stack.extend_from_slice(&fd.children);
        }
    }
    ranks
}
