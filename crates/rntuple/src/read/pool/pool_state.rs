//! The cluster pool's shared state: the requests of each cluster and what became of them, the
//! queue of clusters to load, the budget; under one mutex, with a condition variable that both
//! the loading threads (`pool_streams`) and decoding (`cluster_pool`) wait on.

use crate::storage::local::source::ReadAt;
use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Bytes of one request, shared by the pages inside it.
pub(crate) type Chunk = Arc<Vec<u8>>;

pub(crate) enum ChunkState {
    /// Waiting for the loading thread.
    Queued,
    /// Requested from the source.
    InFlight,
    Ready(Chunk),
    Failed(Arc<str>),
}

pub(crate) struct Entry {
    /// Sorted, de-duplicated physical column ids whose pages are held or on their way.
    pub(crate) columns: Vec<u32>,
    /// The requests, in the order planned (a later plan adds the pages of more columns), and
    /// what became of them.
    pub(crate) chunks: Vec<(Range<u64>, ChunkState)>,
    /// Each request's rank: several streams load lower ranks (column groups decoded earlier)
    /// of every cluster first.
    pub(crate) ranks: Vec<u32>,
    /// Needed by a read now (loaded regardless of the budget).
    pub(crate) needed: bool,
    /// Tells a reloaded cluster's entry from an earlier one of the same cluster.
    pub(crate) serial: u64,
}

impl Entry {
    /// Bytes of the requests handed to the source (in flight or arrived).
    pub(crate) fn held(&self) -> u64 {
        self.chunks.iter().filter(|(_, s)| !matches!(s, ChunkState::Queued)).map(|(r, _)| r.end - r.start).sum()
    }
    pub(crate) fn queued(&self) -> u64 {
        self.chunks.iter().filter(|(_, s)| matches!(s, ChunkState::Queued)).map(|(r, _)| r.end - r.start).sum()
    }
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) entries: HashMap<usize, Entry>,
    /// Clusters with requests waiting to be loaded, in the order wanted.
    pub(crate) queue: VecDeque<usize>,
    /// Ranges to announce to the source (`ReadAt::advise`), a cluster's at a time, in order.
    pub(crate) advice: VecDeque<Vec<Range<u64>>>,
    pub(crate) budget: u64,
    pub(crate) serial: u64,
    pub(crate) shutdown: bool,
    /// Peak bytes held at once (for tests and benchmarks).
    pub(crate) peak: u64,
    /// Loading threads at work: 1 takes a few clusters' requests at a time (a remote source
    /// keeps them in flight itself); more take one request each, as concurrent streams.
    pub(crate) streams: usize,
}

impl State {
    pub(crate) fn held(&self) -> u64 {
        self.entries.values().map(Entry::held).sum()
    }
}

pub(crate) struct Shared {
    pub(crate) state: Mutex<State>,
    pub(crate) changed: Condvar,
    pub(crate) src: Arc<dyn ReadAt>,
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}
