//! Read-ahead planning: which byte ranges the pages of a read's fields occupy in each cluster,
//! coalesced into requests, handed to the cluster pool for the read's clusters and the next
//! ones; and the pool's page bytes for the page loader.

use super::cluster_pool::{Chunk, ReadAhead};
use super::columns::Span;
use super::open::Reader;
use crate::error::Result;
use crate::format::descriptor::PageDescriptor;
use crate::storage::coalesce::coalesce;
use std::ops::Range;
use std::sync::atomic::Ordering;

impl Reader {
    /// Sets how far reads load pages ahead of decoding (see [`ReadAhead`]). From sources with a
    /// latency per request (HTTP, S3, file objects) the pages are loaded into memory by a
    /// background thread. So are the pages of a local file when a read is cold (its first
    /// wanted bytes are not in the page cache) and decodes all its fields at once (no more
    /// top-level fields than decoding threads): the read's own clusters, held until the next
    /// read. Other reads of local files read each page when it is decoded, and with
    /// [`ReadAhead::local`] the kernel is asked to read the clusters after a read's own into its
    /// page cache (`posix_fadvise(WILLNEED)`).
    pub fn set_read_ahead(&mut self, read_ahead: ReadAhead) {
        self.read_ahead = read_ahead;
    }

    /// Declares that several threads will read different entries through this reader at once
    /// (a skim's parts): the cluster pool holds the clusters of one read at a time, so reads of
    /// a local file then go page by page instead of through the pool.
    pub fn share_between_threads(&mut self) {
        self.shared_reads = true;
    }

    /// The read-ahead settings.
    pub fn read_ahead(&self) -> ReadAhead {
        self.read_ahead
    }

    /// Most bytes the read-ahead held at once so far.
    pub fn read_ahead_peak_bytes(&self) -> u64 {
        self.pool.peak_bytes()
    }

    /// Hands the cluster pool the clusters of `spans` (needed now) and the next
    /// `read_ahead.clusters` ones, for the columns of the top-level fields `ids`.
    pub(super) fn prefetch(&self, ids: &[u32], spans: &[Span]) -> Result<()> {
        let ra = self.read_ahead;
        if !ra.enabled || spans.is_empty() {
            return Ok(());
        }
        let mut columns = Vec::new();
        let mut stack: Vec<u32> = ids.to_vec();
        while let Some(f) = stack.pop() {
            let fd = &self.desc.fields[f as usize];
            columns.extend_from_slice(&fd.columns);
            stack.extend_from_slice(&fd.children);
        }
        columns.sort_unstable();
        columns.dedup();
        let needed: Vec<usize> = spans.iter().map(|s| s.cluster).collect();
        let next = needed.iter().max().map_or(0, |&c| c + 1);
        let ahead: Vec<usize> = (next..self.desc.clusters.len()).take(ra.clusters).collect();
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
        let pooled = !local || (!self.shared_reads && ids.len() <= self.threads.max(1) && self.cold(&needed, &columns));
        self.local_pooled.store(local && pooled, Ordering::Relaxed);
        if !pooled {
            self.pool.clear();
            if !ra.local {
                return Ok(());
            }
            // The kernel is asked to bring the clusters after the read's into the page cache
            // while the read decodes its own (advising those too made the kernel's read-ahead
            // race the read's own preads: cold reads got slower), from the pool's thread
            // (queuing the read-ahead of many clusters can take as long as reading them).
            return self.pool.advise(ahead.iter().map(|&c| self.plan_cluster(c, &columns)).collect());
        }
        // From a local file the pool loads the read's own clusters only: a reader that stops
        // after this read (a Dask partition, one cluster of `iterate`) would otherwise have read
        // the next clusters for nothing, and the kernel reads ahead in the file anyway.
        let ahead: &[usize] = if local { &[] } else { &ahead };
        self.pool.want(&columns, &needed, ahead, ra.bytes, |c, cols| self.plan_cluster(c, cols))
    }

    /// Whether the first wanted bytes of one of the clusters `needed` (16 of them, evenly
    /// spread, for larger reads) are not in memory, as far as the source can tell.
    fn cold(&self, needed: &[usize], columns: &[u32]) -> bool {
        let step = needed.len().div_ceil(16).max(1);
        needed.iter().step_by(step).filter_map(|&c| self.plan_cluster(c, columns).first().map(|r| r.start)).any(|at| self.src.is_cached(at) == Some(false))
    }

    /// The coalesced requests for the pages of `columns` in cluster `c`. Pages split over several
    /// keys, and pages whose range does not lie inside the file, are left out: the page loader
    /// reads (or refuses) those itself.
    fn plan_cluster(&self, c: usize, columns: &[u32]) -> Vec<Range<u64>> {
        let Some(cluster) = self.desc.clusters.get(c) else { return Vec::new() };
        let mut ranges = Vec::new();
        for &col in columns {
            let Some(Some(range)) = cluster.columns.get(col as usize) else { continue };
            for p in &range.pages {
                if let Some(r) = self.pooled_range(p) {
                    ranges.push(r);
                }
            }
        }
        coalesce(ranges, self.read_ahead.overhead, self.anchor.max_key_size)
    }

    /// The byte range of a page as the pool holds it (its stored bytes and checksum), or `None`
    /// for pages the pool does not load.
    fn pooled_range(&self, p: &PageDescriptor) -> Option<Range<u64>> {
        let len = p.locator.size.checked_add(if p.has_checksum { 8 } else { 0 })?;
        let end = p.locator.offset.checked_add(len)?;
        let chunked = self.anchor.max_key_size > 0 && len > self.anchor.max_key_size;
        (len > 0 && !chunked && end <= self.src.len()).then_some(p.locator.offset..end)
    }

    /// The pool's bytes of a page of cluster `c` (waiting for them if they are on their way), and
    /// where the page starts in them; `None` when the pool does not hold the page.
    pub(super) fn pooled_page(&self, c: usize, p: &PageDescriptor) -> Result<Option<(Chunk, usize)>> {
        // Reads of local files that do not use the pool take no lock per page.
        if !self.read_ahead.enabled || !(self.src.is_remote() || self.local_pooled.load(Ordering::Relaxed)) {
            return Ok(None);
        }
        match self.pooled_range(p) {
            Some(r) => self.pool.page(c, r),
            None => Ok(None),
        }
    }
}
