//! Distributed writing of one RNTuple file by the ranks of an MPI job (Hahnfeld, Blomer,
//! Kollegger, "Aggregating Columnar Data on Cluster File Systems"). Every rank fills and
//! compresses its own clusters, as a fill context of the parallel writer does; a cluster is
//! relocatable, so the only coordination is where in the shared file it goes — the
//! [`Strategy`] — and, at the commit, one gather of every rank's cluster list to rank 0, which
//! writes page list, footer and file records. The result is an ordinary RNTuple file.
//!
//! ```no_run
//! use rntuple_mpi::{MpiOptions, MpiWriter, Strategy};
//! use rntuple::Value;
//! let universe = rntuple_mpi::initialize()?;
//! let world = universe.world();
//! let w = MpiWriter::create(&world, "out.root", "Events", &[("eventId", "std::uint64_t")], Default::default(), MpiOptions::default())?;
//! let mut ctx = w.fill_context()?;
//! for i in 0..1000u64 {
//!     ctx.fill(&Value::Record(vec![("eventId".into(), Value::UInt(w.rank() as u64 * 1000 + i))]))?;
//! }
//! ctx.finish()?;
//! let report = w.commit()?;
//! # Ok::<(), rntuple::Error>(())
//! ```
//!
//! The transport-free half (ranks, placement, assembly) is `rntuple::write::distributed`; this
//! crate adds the MPI transports: the aggregator thread (`aggregator`), the one-sided counter
//! (`raw`, the crate's only unsafe code), the file-lock counter ([`file_lock`]) and the
//! collective steps.

mod aggregator;
mod checkpointer;
mod collective;
pub mod file_lock;
mod raw;
mod strategy;
mod writer;

pub use aggregator::AggregatorStats;
pub use mpi;
pub use raw::communicator_from_fortran;
pub use strategy::Strategy;
pub use writer::{CommitReport, MpiFillContext, MpiOptions, MpiWriter, RankReport};

/// Initializes MPI with `MPI_THREAD_MULTIPLE` (what the aggregator strategies need; the
/// others work with less). Keep the universe alive until the end of the program.
pub fn initialize() -> rntuple::Result<mpi::environment::Universe> {
    let (u, _provided) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or_else(|| rntuple::Error::Invalid("MPI was initialized already (or could not be)".into()))?;
    Ok(u)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_writer_and_its_contexts_can_move_to_other_threads() {
        fn send<T: Send>() {}
        send::<crate::MpiWriter>();
        send::<crate::MpiFillContext>();
    }
}
