//! The aggregator of the `metadata` and `send-data` strategies: a thread on rank 0 that answers
//! the other ranks' requests on a communicator of its own — a byte range for a cluster of a given
//! size (`metadata`), or a whole cluster to place and write (`send-data`) — until every other rank
//! said it is done. Rank 0's own fill contexts take their ranges from the same counter directly.

use crate::raw::SendComm;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use rntuple::write::distributed::{ClusterShipper, OffsetService, RankWriter};
use rntuple::{Error, Result};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const REQUEST: i32 = 11;
const REPLY: i32 = 12;
const SHIP: i32 = 13;
const DONE: i32 = 14;

/// Rank 0's counter of the next free offset.
pub struct LocalCounter(Mutex<u64>);

impl LocalCounter {
    /// A counter starting at `start`.
    pub fn new(start: u64) -> LocalCounter {
        LocalCounter(Mutex::new(start))
    }
}

impl OffsetService for LocalCounter {
    fn reserve(&self, len: u64) -> Result<u64> {
        let mut c = self.0.lock().map_err(|_| Error::Invalid("the aggregator's counter is poisoned".into()))?;
        let at = *c;
        *c = at.checked_add(len).ok_or_else(|| Error::Invalid("the file offset overflows".into()))?;
        Ok(at)
    }
}

/// A rank's way to the aggregator: requests for byte ranges or shipped clusters, one at a time
/// per rank (the threads of a rank share it).
pub(crate) struct ToAggregator {
    comm: Mutex<SendComm>,
}

impl ToAggregator {
    pub(crate) fn new(comm: SimpleCommunicator) -> ToAggregator {
        ToAggregator { comm: Mutex::new(SendComm(comm)) }
    }

    fn comm(&self) -> Result<std::sync::MutexGuard<'_, SendComm>> {
        self.comm.lock().map_err(|_| Error::Invalid("the rank's channel to the aggregator is poisoned".into()))
    }

    /// Tells the aggregator this rank is done (after its last request).
    pub(crate) fn done(&self) -> Result<()> {
        let c = self.comm()?;
        c.0.process_at_rank(0).send_with_tag(&0u64, DONE);
        Ok(())
    }
}

impl OffsetService for ToAggregator {
    fn reserve(&self, len: u64) -> Result<u64> {
        let c = self.comm()?;
        let root = c.0.process_at_rank(0);
        root.send_with_tag(&len, REQUEST);
        let (at, _) = root.receive_with_tag::<u64>(REPLY);
        if at == u64::MAX {
            return Err(Error::Invalid(format!("the aggregator on rank 0 could not reserve {len} bytes")));
        }
        Ok(at)
    }
}

impl ClusterShipper for ToAggregator {
    fn ship(&self, blob: Vec<u8>) -> Result<()> {
        let c = self.comm()?;
        c.0.process_at_rank(0).send_with_tag(&blob[..], SHIP);
        Ok(())
    }
}

/// What the aggregator did.
#[derive(Debug, Clone, Default)]
pub struct AggregatorStats {
    /// Messages handled (requests and shipped clusters).
    pub messages: u64,
    /// Seconds spent handling them (reserving and replying; placing and writing shipped clusters).
    pub busy_seconds: f64,
}

/// The aggregator thread's loop: serves `senders` other ranks until each said it is done.
/// Returns the communicator, its statistics and the first error of a shipped cluster (the loop
/// goes on after one, so that no rank waits forever; the commit then fails).
pub(crate) fn serve(comm: SendComm, senders: usize, counter: Arc<LocalCounter>, rank0: RankWriter) -> (SendComm, AggregatorStats, Option<Error>) {
    let mut stats = AggregatorStats::default();
    let mut first_error = None;
    let mut done = 0;
    let mut idle = 0u32;
    while done < senders {
        // Polled with a short back-off rather than a blocking probe, which would spin a core
        // that rank 0's own fill contexts need.
        let Some(probed) = comm.0.any_process().immediate_matched_probe() else {
            idle = idle.saturating_add(1);
            if idle < 64 {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(if idle < 1000 { 20 } else { 100 }));
            }
            continue;
        };
        idle = 0;
        let (from, tag) = (probed.1.source_rank(), probed.1.tag());
        let t = Instant::now();
        match tag {
            REQUEST => {
                let mut len = 0u64;
                probed.0.matched_receive_into(&mut len);
                let at = match counter.reserve(len) {
                    Ok(at) => at,
                    Err(e) => {
                        first_error.get_or_insert(e);
                        u64::MAX
                    }
                };
                comm.0.process_at_rank(from).send_with_tag(&at, REPLY);
                stats.messages += 1;
            }
            SHIP => {
                let (blob, _) = probed.matched_receive_vec::<u8>();
                if let Err(e) = rank0.accept_shipped(&blob, &format!("the cluster shipped by rank {from}")) {
                    first_error.get_or_insert(e);
                }
                stats.messages += 1;
            }
            DONE => {
                let mut z = 0u64;
                probed.0.matched_receive_into(&mut z);
                done += 1;
            }
            tag => {
                let (_, _) = probed.matched_receive_vec::<u8>();
                first_error.get_or_insert(Error::Invalid(format!("the aggregator got a message with tag {tag} from rank {from}")));
            }
        }
        stats.busy_seconds += t.elapsed().as_secs_f64();
    }
    (comm, stats, first_error)
}
