//! The cluster pool: background threads load the pages of the clusters a read needs, and of
//! the clusters after them, into memory ahead of decoding, as planned coalesced requests
//! (several in flight where the source can; from a local file on [`ReadAhead::streams`]
//! concurrent `pread` streams, see `pool_streams`); decoding takes each page as soon as the
//! request holding it has arrived. Memory is bounded: clusters a read does not need are loaded only
//! while the bytes held stay within the read-ahead budget, and clusters outside the current
//! window are dropped. Knows nothing of descriptors: plans come from the caller
//! (`PageSource::prefetch`). ROOT's counterpart: `RClusterPool`.

pub(crate) use super::pool_state::Chunk;
use super::pool_state::{ChunkState, Entry, Shared, State};
use crate::error::{Error, Result};
use crate::storage::local::source::ReadAt;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// How far a reader reads ahead of decoding.
///
/// ```
/// use rntuple::read::ReadAhead;
/// let ra = ReadAhead { clusters: 4, ..ReadAhead::default() };
/// assert_eq!(ra.bytes, 256 << 20);
/// assert!(ReadAhead::off().clusters == 0 && !ReadAhead::off().enabled);
/// let wide = ReadAhead { streams: 8, ..ReadAhead::default() }; // eight concurrent preads
/// assert_eq!(wide.streams, 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadAhead {
    /// Whether the pool is used at all (otherwise every page is one read of the source).
    pub enabled: bool,
    /// Clusters loaded beyond the ones a read needs (ROOT's cluster pool holds one ahead).
    pub clusters: usize,
    /// Most bytes held for clusters loaded ahead; a read's own clusters are always loaded.
    pub bytes: u64,
    /// Fraction of unwanted bytes a request may read over to save requests (see
    /// `storage::local::coalesce::coalesce`); ROOT's 0.25 by default.
    pub overhead: f64,
    /// For reads of local files that do not go through the pool (see
    /// [`Reader::set_read_ahead`](crate::Reader::set_read_ahead)): announce the clusters ahead
    /// to the kernel (`posix_fadvise(WILLNEED)`) so that it reads them while the current ones
    /// are decoded. Off by default: on the machine this was measured on (a VM whose disk is
    /// served from the host's memory) it cost more CPU than it saved (bench/RESULTS.md); on a
    /// spinning disk or a network file system it overlaps reading with decoding.
    pub local: bool,
    /// Concurrent `pread` streams loading a cold local file's pages into the pool (0 counts as
    /// 1). With one stream a cold local read goes through the pool only when it decodes all its
    /// fields at once; with several, every cold local read does, in column groups loaded in the
    /// order decoding takes them. Remote sources keep their own requests in flight instead.
    pub streams: usize,
    /// Leave a dense cold read of a local file to the kernel's read-ahead (default on): a read
    /// that wants at least half the stored bytes of its clusters goes page by page when the
    /// kernel reads ahead at least a stream's request (1 MiB) at a time, since that read-ahead
    /// then loads its clusters in large requests in order, and the streams would add a copy of
    /// every byte. Off, several streams load every cold local read (`rntuple bench read
    /// --streams N` turns it off to measure the streams themselves).
    pub kernel_dense: bool,
}

impl Default for ReadAhead {
    fn default() -> Self {
        ReadAhead {
            enabled: true,
            clusters: 2,
            bytes: 256 << 20,
            overhead: crate::storage::local::coalesce::DEFAULT_OVERHEAD,
            local: false,
            streams: DEFAULT_STREAMS,
            kernel_dense: true,
        }
    }
}

impl ReadAhead {
    /// No pool: each page is read from the source when it is decoded.
    pub fn off() -> Self {
        ReadAhead { enabled: false, clusters: 0, ..ReadAhead::default() }
    }
}

/// [`ReadAhead::streams`] by default (bench/_io_streams.py's sweep, bench/RESULTS.md).
///
/// ```
/// use rntuple::read::{ReadAhead, DEFAULT_STREAMS};
/// assert_eq!(ReadAhead::default().streams, DEFAULT_STREAMS);
/// ```
pub const DEFAULT_STREAMS: usize = 4;

/// See the module documentation.
pub(crate) struct ClusterPool {
    shared: Arc<Shared>,
    workers: Mutex<Vec<JoinHandle<()>>>,
}

impl ClusterPool {
    pub(crate) fn new(src: Arc<dyn ReadAt>) -> Self {
        ClusterPool { shared: Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new(), src }), workers: Mutex::new(Vec::new()) }
    }

    /// Makes `needed` (in reading order) and `ahead` the clusters held, for the sorted physical
    /// `columns`: others are dropped; the pages of columns a cluster does not hold yet are
    /// planned with `plan(cluster, columns)` (requests and their ranks) and queued. Clusters
    /// ahead are loaded while at most `budget` bytes are held; `streams` threads load them.
    pub(crate) fn want(
        &self,
        columns: &[u32],
        needed: &[usize],
        ahead: &[usize],
        budget: u64,
        streams: usize,
        plan: impl Fn(usize, &[u32]) -> Vec<(Range<u64>, u32)>,
    ) -> Result<()> {
        let mut st = self.shared.lock();
        st.budget = budget;
        st.streams = streams.max(1);
        st.entries.retain(|c, _| needed.contains(c) || ahead.contains(c));
        let mut queue = VecDeque::new();
        for (&c, is_needed) in needed.iter().map(|c| (c, true)).chain(ahead.iter().map(|c| (c, false))) {
            if !st.entries.contains_key(&c) {
                st.serial += 1;
                let serial = st.serial;
                st.entries.insert(c, Entry { columns: Vec::new(), chunks: Vec::new(), ranks: Vec::new(), needed: false, serial });
            }
            let Some(e) = st.entries.get_mut(&c) else { continue };
            let missing: Vec<u32> = columns.iter().copied().filter(|k| e.columns.binary_search(k).is_err()).collect();
            if !missing.is_empty() {
                for (r, rank) in plan(c, &missing) {
                    e.chunks.push((r, ChunkState::Queued));
                    e.ranks.push(rank);
                }
                e.columns.extend_from_slice(&missing);
                e.columns.sort_unstable();
            }
            e.needed = is_needed;
            if e.queued() > 0 && !queue.contains(&c) {
                queue.push_back(c);
            }
        }
        st.queue = queue;
        drop(st);
        self.shared.changed.notify_all();
        self.start_worker()
    }

    /// Drops every cluster held or queued (a read that does not use the pool). Readers waiting for
    /// a dropped request (another read's, through a shared reader) are woken to read it themselves.
    pub(crate) fn clear(&self) {
        let mut st = self.shared.lock();
        st.entries.clear();
        st.queue.clear();
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Has the loading thread announce each cluster's ranges to the source
    /// ([`ReadAt::advise`]), in order, replacing announcements not yet made: the caller does not
    /// wait for a local file's kernel to queue its read-ahead.
    pub(crate) fn advise(&self, per_cluster: Vec<Vec<Range<u64>>>) -> Result<()> {
        self.shared.lock().advice = per_cluster.into();
        self.shared.changed.notify_all();
        self.start_worker()
    }

    /// The request holding `range` of cluster `cluster` and where the range starts in it,
    /// waiting for the request to arrive; `None` when the pool does not hold that range (the
    /// caller reads it from the source).
    pub(crate) fn page(&self, cluster: usize, range: Range<u64>) -> Result<Option<(Chunk, usize)>> {
        let mut st = self.shared.lock();
        if st.entries.is_empty() {
            return Ok(None);
        }
        loop {
            let Some(e) = st.entries.get_mut(&cluster) else { return Ok(None) };
            // A ready request holding the range wins; else one on its way is waited for.
            let holding = |(r, _): &&(Range<u64>, ChunkState)| r.start <= range.start && range.end <= r.end;
            let found = e.chunks.iter().filter(holding).max_by_key(|(_, s)| match s {
                ChunkState::Ready(_) => 3,
                ChunkState::InFlight => 2,
                ChunkState::Queued => 1,
                ChunkState::Failed(_) => 0,
            });
            let Some((r, state)) = found else { return Ok(None) };
            let at = (range.start - r.start) as usize;
            match state {
                ChunkState::Ready(c) => return Ok(Some((c.clone(), at))),
                ChunkState::Failed(why) => {
                    return Err(Error::io(
                        format!("reading bytes {}..{} (cluster {cluster}) ahead of decoding", r.start, r.end),
                        std::io::Error::other(why.to_string()),
                    ))
                }
                ChunkState::Queued | ChunkState::InFlight => {
                    // Someone waits for it: it is needed, whatever the budget says.
                    if !e.needed {
                        e.needed = true;
                        self.shared.changed.notify_all();
                    }
                    st = self.shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
    }

    /// Most bytes held at once so far.
    pub(crate) fn peak_bytes(&self) -> u64 {
        self.shared.lock().peak
    }

    /// Starts the loading threads the state asks for (at least one), keeping those running.
    fn start_worker(&self) -> Result<()> {
        let want = self.shared.lock().streams.max(1);
        let mut w = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        while w.len() < want {
            let (shared, id) = (self.shared.clone(), w.len());
            let h = std::thread::Builder::new()
                .name(format!("rntuple-read-ahead-{id}"))
                .spawn(move || super::pool_streams::load_loop(&shared, id))
                .map_err(|e| Error::io("starting a read-ahead thread", e))?;
            w.push(h);
        }
        Ok(())
    }
}

impl Drop for ClusterPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
        for h in self.workers.lock().unwrap_or_else(|p| p.into_inner()).drain(..) {
            let _ = h.join();
        }
    }
}
