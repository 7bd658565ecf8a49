//! Distributed writing of one RNTuple into one file by many processes (Hahnfeld, Blomer,
//! Kollegger, "Aggregating Columnar Data on Cluster File Systems"): the transport-free part.
//! Every rank fills and compresses its own clusters ([`RankWriter`], the parallel writer's fill
//! contexts with another output); a full cluster learns where it goes through the rank's
//! [`Route`] — an [`OffsetService`] handing out byte ranges (an aggregator, a one-sided counter,
//! a file lock) or a [`ClusterShipper`] sending it to an aggregator that writes it; rank 0's
//! [`Assembler`] writes the header and, from the gathered lists of placed clusters, the page list,
//! footer and TFile records. The protocol knows no transport: the MPI transports live in the
//! `rntuple-mpi` crate; [`Coordinator`] and [`CoordinatorClient`] carry the offsets over TCP for
//! Dask workers and Spark executors (the lists of placed clusters travel as those engines' task
//! results, and the committing process orders them with [`ClusterOrder`]).
//!
//! Three "ranks" as threads of one process, handing out offsets from one counter:
//!
//! ```
//! use rntuple::write::distributed::{Assembler, OffsetService, RankLayout, RankWriter, Route};
//! use rntuple::write::WriteOptions;
//! use rntuple::Value;
//! use std::sync::{Arc, Mutex};
//! struct Counter(Mutex<u64>);
//! impl OffsetService for Counter {
//!     fn reserve(&self, len: u64) -> rntuple::Result<u64> {
//!         let mut c = self.0.lock().unwrap();
//!         let at = *c;
//!         *c += len;
//!         Ok(at)
//!     }
//! }
//! let path = std::env::temp_dir().join("rntuple-doc-distributed.root");
//! let schema = rntuple::write::distributed::parse_schema(&[("id", "std::uint64_t")])?;
//! let layout = RankLayout { align: 4096, direct_io: false, max_write: 0 };
//! let opts = WriteOptions { compression: rntuple::write::Compression::NONE, ..Default::default() };
//! // Rank 0 creates the file with the header; the ranks learn its path and first offset.
//! let desc = RankWriter::descriptor("Events", &schema, &opts)?;
//! let asm = Assembler::create(&path, desc, opts.clone(), layout.align)?;
//! let counter = Arc::new(Counter(Mutex::new(asm.first_offset())));
//! let mut lists = Vec::new();
//! for rank in 0..3u64 {
//!     let w = RankWriter::new("Events", &schema, opts.clone(), layout.clone(), Route::Offsets(counter.clone()), Some(asm.writing_path()))?;
//!     let mut ctx = w.fill_context();
//!     for i in 0..10 {
//!         ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(rank * 10 + i))]))?;
//!     }
//!     ctx.finish()?;
//!     lists.push(w.finish()?.0);
//! }
//! asm.commit(&lists)?;
//! assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("Events")?.num_entries(), 30);
//! # Ok::<(), rntuple::Error>(())
//! ```

//!
//! # Checkpoints (`checkpoint_clusters` = K > 0)
//!
//! The file is a complete ROOT file from its creation on (rank 0 publishes it with a checkpoint
//! of no entries, renaming it from its temporary name as the sequential writer does), and after
//! every K clusters of the whole job, so that a job killed at any moment — one rank or all —
//! leaves a file that reads to the last checkpoint. A checkpoint is agreed without stopping
//! anyone:
//!
//! 1. a rank writes a cluster, `fdatasync`s it and reports it (its placed metadata) to rank 0
//!    ([`DurableReporter`]: in MPI a message to a thread on rank 0 that owns the
//!    [`Assembler`]); each fill context reports its clusters in order;
//! 2. rank 0 appends what it is told ([`Assembler::add_durable`]); every K clusters reported it
//!    makes a checkpoint ([`Assembler::checkpoint`]): the reported clusters become a cluster
//!    group, and its page list, the footer, the anchor, the keys list, the StreamerInfo and the
//!    free-segments record are written into a range reserved through the ranks' own allocator
//!    (an upper bound of their size, the unused tail a free gap), so no later cluster of any rank
//!    lands on them; then rank 0 syncs, rewrites the file header in one write and syncs again:
//!    the sequential writer's checkpoint (`RootFileWriter::checkpoint`), only into a reserved
//!    range.
//!
//! A checkpoint so holds only clusters every rank declared durable, each context's a prefix of
//! its clusters (entries of later groups come after, so each context keeps its order). Ranks
//! never wait for one another: a rank's cost is one `fdatasync` and one small message per
//! cluster; rank 0's thread pays the checkpoint's records (a few KiB plus the page list) and two
//! syncs per K clusters. A rank that finishes early says so and goes on to the commit, whose
//! collective steps wait for the others as without checkpoints; the commit appends the
//! clusters not checkpointed yet (ordered by offset) and writes the last checkpoint in place.
//!
//! Clusters written after the last checkpoint are lost in a crash: their metadata (which column
//! each page is, its element count, the cluster's entries) lived only in the ranks' memory, and
//! the file holds nothing but their compressed pages in RBlob keys, which cannot be told apart
//! from one another safely. So there is no `recover`: the last checkpoint is what a crash leaves.
//!
//! ```
//! use rntuple::write::distributed::{Assembler, DurableReporter, OffsetService, RankLayout, RankWriter, Route};
//! use rntuple::write::WriteOptions;
//! use rntuple::Value;
//! use std::sync::{Arc, Mutex};
//! struct Counter(Mutex<u64>);
//! impl OffsetService for Counter {
//!     fn reserve(&self, len: u64) -> rntuple::Result<u64> {
//!         let mut c = self.0.lock().unwrap();
//!         let at = *c;
//!         *c += len;
//!         Ok(at)
//!     }
//! }
//! // What the ranks report (in MPI, messages to rank 0's checkpointing thread).
//! struct Inbox(Mutex<Vec<Vec<u8>>>);
//! impl DurableReporter for Inbox {
//!     fn report(&self, list: Vec<u8>) -> rntuple::Result<()> {
//!         self.0.lock().unwrap().push(list);
//!         Ok(())
//!     }
//! }
//! let path = std::env::temp_dir().join("rntuple-doc-distributed-checkpoints.root");
//! let schema = rntuple::write::distributed::parse_schema(&[("id", "std::uint64_t")])?;
//! let layout = RankLayout { align: 4096, direct_io: false, max_write: 0 };
//! let opts = WriteOptions { checkpoint_clusters: 2, ..Default::default() };
//! let desc = RankWriter::descriptor("Events", &schema, &opts)?;
//! let mut asm = Assembler::create(&path, desc, opts.clone(), layout.align)?;
//! // Published at once, with no entries.
//! assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("Events")?.num_entries(), 0);
//! let counter = Arc::new(Counter(Mutex::new(asm.first_offset())));
//! let inbox = Arc::new(Inbox(Mutex::new(Vec::new())));
//! let mut lists = Vec::new();
//! for rank in 0..2u64 {
//!     let w = RankWriter::new("Events", &schema, opts.clone(), layout.clone(), Route::Offsets(counter.clone()), Some(asm.writing_path()))?;
//!     w.report_durable_to(inbox.clone())?;
//!     let mut ctx = w.fill_context();
//!     for i in 0..30 {
//!         ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(rank * 100 + i))]))?;
//!         if i % 10 == 9 {
//!             ctx.flush_cluster()?; // clusters of 10 entries
//!         }
//!     }
//!     ctx.finish()?;
//!     lists.push(w.finish()?.0);
//! }
//! // Rank 0 appends the 6 clusters reported and checkpoints every 2.
//! for (i, list) in inbox.0.lock().unwrap().drain(..).enumerate() {
//!     asm.add_durable(&list, &format!("report {i}"))?;
//!     if asm.pending() >= 2 {
//!         asm.checkpoint(counter.as_ref(), layout.align)?;
//!     }
//! }
//! assert_eq!(asm.checkpoints(), (4, 60)); // the one at creation and three of 20 entries
//! assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("Events")?.num_entries(), 60);
//! asm.commit(&lists)?; // nothing left to append: the last checkpoint in place
//! assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("Events")?.num_entries(), 60);
//! # Ok::<(), rntuple::Error>(())
//! ```

mod assembler;
mod rank;
mod tcp;
crate::unstable_mod! {
    wire
}

pub use assembler::{Assembler, ClusterOrder};
pub use tcp::{Coordinator, CoordinatorClient, MAX_REQUEST};
/// Parses a schema of (field name, C++ type name) pairs, as the writers do.
pub fn parse_schema(schema: &[(&str, &str)]) -> crate::Result<Vec<(String, crate::logical::typename::TypeExpr)>> {
    crate::write::cluster::plan::parse_field_types(schema)
}

pub use rank::{ClusterShipper, DurableReporter, OffsetService, RankFillContext, RankLayout, RankMetrics, RankWriter, Route, Ticket};
