//! The aggregator of the `metadata` and `send-data` strategies: a thread on rank 0 that answers
//! the other ranks' requests on a communicator of its own — a byte range for a cluster of a given
//! size (`metadata`), or a whole cluster to place and write (`send-data`) — until every other rank
//! said it is done. Rank 0's own fill contexts take their ranges from the same counter directly.

use crate::raw::SendComm;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use rntuple::write::distributed::{ClusterShipper, OffsetService, RankWriter, Ticket};
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

/// A rank's way to the aggregator: requests for byte ranges or shipped clusters (the threads of
/// a rank share it, one MPI call at a time). Requests are answered in the order they were sent
/// (one aggregator, MPI's non-overtaking order), so answers are matched to requests by number.
pub(crate) struct ToAggregator {
    state: Mutex<Channel>,
}

struct Channel {
    comm: SendComm,
    /// Requests sent so far (the next request's number).
    sent: u64,
    /// Answers received so far (the next answer's request number).
    received: u64,
    /// Answers received for requests nobody waited for yet.
    early: std::collections::BTreeMap<u64, u64>,
}

impl ToAggregator {
    pub(crate) fn new(comm: SimpleCommunicator) -> ToAggregator {
        ToAggregator { state: Mutex::new(Channel { comm: SendComm(comm), sent: 0, received: 0, early: Default::default() }) }
    }

    fn channel(&self) -> Result<std::sync::MutexGuard<'_, Channel>> {
        self.state.lock().map_err(|_| Error::Invalid("the rank's channel to the aggregator is poisoned".into()))
    }

    /// Tells the aggregator this rank is done (after its last request).
    pub(crate) fn done(&self) -> Result<()> {
        let c = self.channel()?;
        c.comm.process_at_rank(0).send_with_tag(&0u64, DONE);
        Ok(())
    }
}

impl OffsetService for ToAggregator {
    fn reserve(&self, len: u64) -> Result<u64> {
        let t = self.request(len)?;
        self.complete(t)
    }

    fn request(&self, len: u64) -> Result<Ticket> {
        let mut c = self.channel()?;
        c.comm.process_at_rank(0).send_with_tag(&len, REQUEST);
        c.sent += 1;
        Ok(Ticket::Pending(c.sent - 1))
    }

    fn complete(&self, t: Ticket) -> Result<u64> {
        let n = match t {
            Ticket::Ready(at) => return Ok(at),
            Ticket::Pending(n) => n,
        };
        let mut c = self.channel()?;
        if n >= c.sent {
            return Err(Error::Invalid(format!("waiting for the answer to request {n}, of {} sent", c.sent)));
        }
        while !c.early.contains_key(&n) {
            let (at, _) = c.comm.process_at_rank(0).receive_with_tag::<u64>(REPLY);
            let k = c.received;
            c.early.insert(k, at);
            c.received += 1;
        }
        let at = c.early.remove(&n).unwrap_or(u64::MAX);
        if at == u64::MAX {
            return Err(Error::Invalid(format!("the aggregator on rank 0 could not reserve the range of request {n}")));
        }
        Ok(at)
    }
}

impl ClusterShipper for ToAggregator {
    fn ship(&self, blob: Vec<u8>) -> Result<()> {
        let c = self.channel()?;
        c.comm.process_at_rank(0).send_with_tag(&blob[..], SHIP);
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
