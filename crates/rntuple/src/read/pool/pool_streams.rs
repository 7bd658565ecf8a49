//! The cluster pool's loading threads. With one stream (remote sources, which keep several
//! requests in flight themselves, and the single-stream setting) a thread takes the queued
//! requests of a few clusters at a time and hands them to the source in one batch. With several
//! streams (a cold local file, [`ReadAhead::streams`](crate::read::ReadAhead::streams)) each thread
//! takes one request at a time, the lowest rank first (the column groups decoding takes first),
//! over the clusters in the order wanted, and reads it with `pread`: the streams keep that many
//! reads in flight, which the disk serves at once. Memory is bounded as with one stream: a
//! request of a cluster not needed now is taken only while the bytes held (loaded and in
//! flight) stay within the budget.

use super::pool_state::{ChunkState, Shared, State};
use crate::error::Error;
use std::ops::Range;
use std::sync::Arc;

/// Most clusters handed to the source in one batch of requests (one stream).
const BATCH_CLUSTERS: usize = 4;

/// What a thread took: `(cluster, entry serial, request index)` and the range of each request.
type Taken = (Vec<(usize, u64, usize)>, Vec<Range<u64>>);

/// Queued requests of up to [`BATCH_CLUSTERS`] clusters in the order wanted, within the budget
/// (needed clusters regardless), marked in flight.
fn take_batch(st: &mut State) -> Taken {
    let (mut batch, mut ranges) = (Vec::new(), Vec::new());
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
    (batch, ranges)
}

/// One queued request: the lowest rank over the queued clusters, the earliest cluster (in the
/// order wanted) among equal ranks; a cluster not needed now only while the bytes held with it
/// stay within the budget. Marked in flight.
fn take_one(st: &mut State) -> Taken {
    let held = st.held();
    let mut best: Option<(u32, usize, usize)> = None; // rank, cluster, request
    for &c in &st.queue {
        let Some(e) = st.entries.get(&c) else { continue };
        for (k, (r, s)) in e.chunks.iter().enumerate() {
            if !matches!(s, ChunkState::Queued) {
                continue;
            }
            let rank = e.ranks.get(k).copied().unwrap_or(0);
            if best.is_some_and(|(b, _, _)| b <= rank) {
                continue;
            }
            if !e.needed && held > 0 && held + (r.end - r.start) > st.budget {
                continue;
            }
            best = Some((rank, c, k));
        }
    }
    let Some((_, c, k)) = best else { return (Vec::new(), Vec::new()) };
    let Some(e) = st.entries.get_mut(&c) else { return (Vec::new(), Vec::new()) };
    e.chunks[k].1 = ChunkState::InFlight;
    let range = e.chunks[k].0.clone();
    let taken = (vec![(c, e.serial, k)], vec![range.clone()]);
    if e.queued() == 0 {
        st.queue.retain(|&q| q != c);
    }
    st.peak = st.peak.max(held + (range.end - range.start));
    taken
}

/// Loading thread `id`: takes queued requests (needed clusters' always, others within the
/// budget) while it is one of the state's streams, and reads them through the source; the first
/// thread also makes the announcements (`ReadAt::advise`) when nothing is queued.
pub(crate) fn load_loop(shared: &Arc<Shared>, id: usize) {
    loop {
        let (batch, ranges) = {
            let mut st = shared.lock();
            loop {
                if st.shutdown {
                    return;
                }
                if id < st.streams.max(1) {
                    let taken = if st.streams > 1 { take_one(&mut st) } else { take_batch(&mut st) };
                    if !taken.0.is_empty() {
                        break taken;
                    }
                }
                if id == 0
                    && let Some(ranges) = st.advice.pop_front()
                {
                    drop(st);
                    shared.src.advise(&ranges);
                    st = shared.lock();
                    continue;
                }
                st = shared.changed.wait(st).unwrap_or_else(|p| p.into_inner());
            }
        };
        read(shared, &batch, &ranges);
    }
}

/// Reads `ranges` (the requests `batch` names) through the source, storing each as it arrives;
/// those the source did not deliver fail with its error, so that nobody waits for them forever.
fn read(shared: &Shared, batch: &[(usize, u64, usize)], ranges: &[Range<u64>]) {
    // A panicking source must not leave readers waiting for requests that never arrive.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        shared.src.read_ranges(ranges, &mut |i, data| {
            let Some(&(c, serial, k)) = batch.get(i) else {
                return Err(Error::internal(format!("the byte source delivered request {i} of {}", batch.len())));
            };
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
    let why: Arc<str> = match result {
        Ok(()) => "the byte source did not deliver this range".into(),
        Err(e) => e.to_string().into(),
    };
    let mut st = shared.lock();
    for &(c, serial, k) in batch {
        if let Some(e) = st.entries.get_mut(&c).filter(|e| e.serial == serial)
            && matches!(e.chunks[k].1, ChunkState::InFlight)
        {
            e.chunks[k].1 = ChunkState::Failed(why.clone());
        }
    }
    drop(st);
    shared.changed.notify_all();
}
