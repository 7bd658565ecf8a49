//! The cluster pool: a background thread loads the pages of the clusters a read needs, and of
//! the clusters after them, into memory ahead of decoding, as planned coalesced requests
//! (several in flight where the source can); decoding takes each page as soon as the request
//! holding it has arrived. Memory is bounded: clusters a read does not need are loaded only
//! while the bytes held stay within the read-ahead budget, and clusters outside the current
//! window are dropped. Knows nothing of descriptors: plans come from the caller
//! (`PageSource::prefetch`). ROOT's counterpart: `RClusterPool`.

use crate::error::{Error, Result};
use crate::storage::source::ReadAt;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// How far a reader reads ahead of decoding.
///
/// ```
/// use rntuple::read::ReadAhead;
/// let ra = ReadAhead { clusters: 4, ..ReadAhead::default() };
/// assert_eq!(ra.bytes, 256 << 20);
/// assert!(ReadAhead::off().clusters == 0 && !ReadAhead::off().enabled);
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
    /// `storage::coalesce::coalesce`); ROOT's 0.25 by default.
    pub overhead: f64,
    /// For reads of local files that do not go through the pool (see
    /// [`Reader::set_read_ahead`](crate::Reader::set_read_ahead)): announce the clusters ahead
    /// to the kernel (`posix_fadvise(WILLNEED)`) so that it reads them while the current ones
    /// are decoded. Off by default: on the machine this was measured on (a VM whose disk is
    /// served from the host's memory) it cost more CPU than it saved (bench/RESULTS.md); on a
    /// spinning disk or a network file system it overlaps reading with decoding.
    pub local: bool,
}

impl Default for ReadAhead {
    fn default() -> Self {
        ReadAhead { enabled: true, clusters: 2, bytes: 256 << 20, overhead: crate::storage::coalesce::DEFAULT_OVERHEAD, local: false }
    }
}

impl ReadAhead {
    /// No pool: each page is read from the source when it is decoded.
    pub fn off() -> Self {
        ReadAhead { enabled: false, clusters: 0, ..ReadAhead::default() }
    }
}

/// Bytes of one request, shared by the pages inside it.
pub(super) type Chunk = Arc<Vec<u8>>;

enum ChunkState {
    /// Waiting for the loading thread.
    Queued,
    /// Requested from the source.
    InFlight,
    Ready(Chunk),
    Failed(Arc<str>),
}

struct Entry {
    /// Sorted, de-duplicated physical column ids whose pages are held or on their way.
    columns: Vec<u32>,
    /// The requests, in the order planned (a later plan adds the pages of more columns), and
    /// what became of them.
    chunks: Vec<(Range<u64>, ChunkState)>,
    /// Needed by a read now (loaded regardless of the budget).
    needed: bool,
    /// Tells a reloaded cluster's entry from an earlier one of the same cluster.
    serial: u64,
}

impl Entry {
    /// Bytes of the requests handed to the source (in flight or arrived).
    fn held(&self) -> u64 {
        self.chunks.iter().filter(|(_, s)| !matches!(s, ChunkState::Queued)).map(|(r, _)| r.end - r.start).sum()
    }
    fn queued(&self) -> u64 {
        self.chunks.iter().filter(|(_, s)| matches!(s, ChunkState::Queued)).map(|(r, _)| r.end - r.start).sum()
    }
}

#[derive(Default)]
struct State {
    entries: HashMap<usize, Entry>,
    /// Clusters with requests waiting to be loaded, in the order wanted.
    queue: VecDeque<usize>,
    /// Ranges to announce to the source (`ReadAt::advise`), a cluster's at a time, in order.
    advice: VecDeque<Vec<Range<u64>>>,
    budget: u64,
    serial: u64,
    shutdown: bool,
    /// Peak bytes held at once (for tests and benchmarks).
    peak: u64,
}

impl State {
    fn held(&self) -> u64 {
        self.entries.values().map(Entry::held).sum()
    }
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    src: Arc<dyn ReadAt>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Most clusters handed to the source in one batch of requests.
const BATCH_CLUSTERS: usize = 4;

/// See the module documentation.
pub(super) struct ClusterPool {
    shared: Arc<Shared>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl ClusterPool {
    pub(super) fn new(src: Arc<dyn ReadAt>) -> Self {
        ClusterPool { shared: Arc::new(Shared { state: Mutex::new(State::default()), changed: Condvar::new(), src }), worker: Mutex::new(None) }
    }

    /// Makes `needed` (in reading order) and `ahead` the clusters held, for the sorted physical
    /// `columns`: others are dropped; the pages of columns a cluster does not hold yet are
    /// planned with `plan(cluster, columns)` and queued. Clusters ahead are loaded while at most
    /// `budget` bytes are held.
    pub(super) fn want(&self, columns: &[u32], needed: &[usize], ahead: &[usize], budget: u64, plan: impl Fn(usize, &[u32]) -> Vec<Range<u64>>) -> Result<()> {
        let mut st = self.shared.lock();
        st.budget = budget;
        st.entries.retain(|c, _| needed.contains(c) || ahead.contains(c));
        let mut queue = VecDeque::new();
        for (&c, is_needed) in needed.iter().map(|c| (c, true)).chain(ahead.iter().map(|c| (c, false))) {
            if !st.entries.contains_key(&c) {
                st.serial += 1;
                let serial = st.serial;
                st.entries.insert(c, Entry { columns: Vec::new(), chunks: Vec::new(), needed: false, serial });
            }
            let Some(e) = st.entries.get_mut(&c) else { continue };
            let missing: Vec<u32> = columns.iter().copied().filter(|k| e.columns.binary_search(k).is_err()).collect();
            if !missing.is_empty() {
                e.chunks.extend(plan(c, &missing).into_iter().map(|r| (r, ChunkState::Queued)));
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
    pub(super) fn clear(&self) {
        let mut st = self.shared.lock();
        st.entries.clear();
        st.queue.clear();
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Has the loading thread announce each cluster's ranges to the source
    /// ([`ReadAt::advise`]), in order, replacing announcements not yet made: the caller does not
    /// wait for a local file's kernel to queue its read-ahead.
    pub(super) fn advise(&self, per_cluster: Vec<Vec<Range<u64>>>) -> Result<()> {
        self.shared.lock().advice = per_cluster.into();
        self.shared.changed.notify_all();
        self.start_worker()
    }

    /// The request holding `range` of cluster `cluster` and where the range starts in it,
    /// waiting for the request to arrive; `None` when the pool does not hold that range (the
    /// caller reads it from the source).
    pub(super) fn page(&self, cluster: usize, range: Range<u64>) -> Result<Option<(Chunk, usize)>> {
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
    pub(super) fn peak_bytes(&self) -> u64 {
        self.shared.lock().peak
    }

    fn start_worker(&self) -> Result<()> {
        let mut w = self.worker.lock().unwrap_or_else(|p| p.into_inner());
        if w.is_none() {
            let shared = self.shared.clone();
            let h = std::thread::Builder::new()
                .name("rntuple-read-ahead".into())
                .spawn(move || load_loop(&shared))
                .map_err(|e| Error::io("starting the read-ahead thread", e))?;
            *w = Some(h);
        }
        Ok(())
    }
}

impl Drop for ClusterPool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.changed.notify_all();
        if let Some(h) = self.worker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
    }
}

/// The loading thread: takes queued clusters (needed ones always, others within the budget),
/// a few at a time, and reads their requests through the source.
fn load_loop(shared: &Shared) {
    loop {
        let mut batch: Vec<(usize, u64, usize)> = Vec::new();
        let mut ranges: Vec<Range<u64>> = Vec::new();
        {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                let mut held = st.held();
                let mut taken = 0;
                let queue: Vec<usize> = st.queue.iter().copied().collect();
                for c in queue {
                    if taken == BATCH_CLUSTERS {
                        break;
                    }
                    let budget = st.budget;
                    let Some(e) = st.entries.get_mut(&c) else { continue };
                    let bytes = e.queued();
                    if !e.needed && held > 0 && held + bytes > budget {
                        break;
                    }
                    held += bytes;
                    taken += 1;
                    for (k, (r, s)) in e.chunks.iter_mut().enumerate() {
                        if matches!(s, ChunkState::Queued) {
                            *s = ChunkState::InFlight;
                            batch.push((c, e.serial, k));
                            ranges.push(r.clone());
                        }
                    }
                    st.queue.retain(|&q| q != c);
                }
                st.peak = st.peak.max(held);
                if taken > 0 {
                    break;
                }
                if let Some(ranges) = st.advice.pop_front() {
                    drop(st);
                    shared.src.advise(&ranges);
                    st = shared.lock();
                    continue;
                }
                st = shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        }
        // A panicking source must not leave readers waiting for requests that never arrive.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shared.src.read_ranges(&ranges, &mut |i, data| {
                let (c, serial, k) = batch[i];
                let mut st = shared.lock();
                if let Some(e) = st.entries.get_mut(&c).filter(|e| e.serial == serial) {
                    let want = e.chunks[k].0.end - e.chunks[k].0.start;
                    e.chunks[k].1 = if data.len() as u64 == want {
                        ChunkState::Ready(Arc::new(data))
                    } else {
                        ChunkState::Failed(format!("the source returned {} bytes for a request of {want}", data.len()).into())
                    };
                }
                drop(st);
                shared.changed.notify_all();
                Ok(())
            })
        }))
        .unwrap_or_else(|_| Err(Error::internal("the byte source panicked while reading ahead")));
        // Requests the source did not deliver fail (with its error, if it gave one): nobody may
        // wait for them forever.
        let why: Arc<str> = match result {
            Ok(()) => "the byte source did not deliver this range".into(),
            Err(e) => e.to_string().into(),
        };
        let mut st = shared.lock();
        for &(c, serial, k) in &batch {
            if let Some(e) = st.entries.get_mut(&c).filter(|e| e.serial == serial)
                && matches!(e.chunks[k].1, ChunkState::InFlight)
            {
                e.chunks[k].1 = ChunkState::Failed(why.clone());
            }
        }
        drop(st);
        shared.changed.notify_all();
    }
}
