//! Checkpoints of the shared file (`checkpoint_clusters` K > 0): a thread on rank 0 owns the
//! [`Assembler`] while the ranks write. Every rank syncs each cluster it wrote and reports it
//! (its placed metadata) — the others in a message on a communicator of their own, rank 0's
//! contexts and aggregator through a channel — and the thread appends what it is told; every K
//! clusters reported it makes a checkpoint, whose records go into a range reserved through the
//! ranks' own allocator. Nobody waits for the checkpoint: a rank's cost is one `fdatasync` and
//! one small message per cluster; rank 0's thread pays the checkpoint's writes and its two syncs.
//! At the commit every rank says it is done (after its last report) and the thread hands the
//! assembler back.

use crate::raw::SendComm;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use rntuple::write::distributed::{Assembler, DurableReporter, OffsetService};
use rntuple::{Error, Result};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const REPORT: i32 = 21;
const DONE: i32 = 22;

/// A rank's reports to rank 0's checkpointing thread (the rank's threads share it).
pub(crate) struct ToCheckpointer {
    comm: Mutex<SendComm>,
}

impl ToCheckpointer {
    pub(crate) fn new(comm: SimpleCommunicator) -> ToCheckpointer {
        ToCheckpointer { comm: Mutex::new(SendComm(comm)) }
    }

    fn comm(&self) -> Result<std::sync::MutexGuard<'_, SendComm>> {
        self.comm.lock().map_err(|_| Error::Invalid("the rank's channel to the checkpointing rank is poisoned".into()))
    }

    /// Tells rank 0 this rank reports no more clusters.
    pub(crate) fn done(&self) -> Result<()> {
        self.comm()?.process_at_rank(0).send_with_tag(&[0u8][..], DONE);
        Ok(())
    }
}

impl DurableReporter for ToCheckpointer {
    fn report(&self, list: Vec<u8>) -> Result<()> {
        self.comm()?.process_at_rank(0).send_with_tag(&list[..], REPORT);
        Ok(())
    }
}

/// What rank 0's own contexts (and its aggregator) report, through a channel.
pub(crate) enum Local {
    Report(Vec<u8>),
    Done,
}

/// Rank 0's reports to its own checkpointing thread.
pub(crate) struct LocalReports(pub(crate) Mutex<Sender<Local>>);

impl LocalReports {
    pub(crate) fn send(&self, m: Local) -> Result<()> {
        let tx = self.0.lock().map_err(|_| Error::Invalid("rank 0's report channel is poisoned".into()))?;
        tx.send(m).map_err(|_| Error::Invalid("rank 0's checkpointing thread has ended".into()))
    }
}

impl DurableReporter for LocalReports {
    fn report(&self, list: Vec<u8>) -> Result<()> {
        self.send(Local::Report(list))
    }
}

/// What the checkpointing thread hands back: the communicator, the assembler, and its first
/// error (it goes on receiving after one, so that no rank waits forever; the commit then fails).
pub(crate) type Served = (SendComm, Box<Assembler>, Option<Error>);

/// The checkpointing thread's settings.
pub(crate) struct Plan {
    /// Other ranks (each says DONE once).
    pub senders: usize,
    /// A checkpoint every this many clusters reported.
    pub every: u64,
    /// The ranks' allocator, and the alignment of every range.
    pub svc: Arc<dyn OffsetService>,
    pub align: u64,
}

/// The thread's loop: appends reports and checkpoints until every rank, rank 0 included, is done.
pub(crate) fn serve(comm: SendComm, local: Receiver<Local>, mut asm: Box<Assembler>, plan: Plan) -> Served {
    let mut first_error: Option<Error> = None;
    let (mut done, mut local_done, mut idle) = (0usize, false, 0u32);
    let add = |asm: &mut Assembler, list: &[u8], from: &str, first_error: &mut Option<Error>| {
        if first_error.is_some() {
            return;
        }
        let r =
            asm.add_durable(list, from).and_then(|_| if asm.pending() as u64 >= plan.every { asm.checkpoint(plan.svc.as_ref(), plan.align) } else { Ok(()) });
        if let Err(e) = r {
            *first_error = Some(e);
        }
    };
    while done < plan.senders || !local_done {
        let mut busy = false;
        while let Ok(m) = local.try_recv() {
            busy = true;
            match m {
                Local::Report(list) => add(&mut asm, &list, "a cluster of rank 0", &mut first_error),
                Local::Done => local_done = true,
            }
        }
        let probed = if done < plan.senders { comm.0.any_process().immediate_matched_probe() } else { None };
        if let Some(probed) = probed {
            busy = true;
            let (from, tag) = (probed.1.source_rank(), probed.1.tag());
            let (msg, _) = probed.matched_receive_vec::<u8>();
            match tag {
                REPORT => add(&mut asm, &msg, &format!("the clusters reported by rank {from}"), &mut first_error),
                DONE => done += 1,
                tag => {
                    first_error.get_or_insert(Error::Invalid(format!("the checkpointing thread got a message with tag {tag} from rank {from}")));
                }
            }
        }
        if busy {
            idle = 0;
            continue;
        }
        // Polled with a short back-off (as the aggregator), not a blocking probe that would spin
        // a core rank 0's contexts need.
        idle = idle.saturating_add(1);
        if idle < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(if idle < 1000 { 50 } else { 200 }));
        }
    }
    (comm, asm, first_error)
}
