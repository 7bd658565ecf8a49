//! Distributed writing of one RNTuple into one file by many processes (Hahnfeld, Blomer,
//! Kollegger, "Aggregating Columnar Data on Cluster File Systems"): the transport-free part.
//! Every rank fills and compresses its own clusters ([`RankWriter`], the parallel writer's fill
//! contexts with another output); a full cluster learns where it goes through the rank's
//! [`Route`] — an [`OffsetService`] handing out byte ranges (an aggregator, a one-sided counter,
//! a file lock) or a [`ClusterShipper`] sending it to an aggregator that writes it; rank 0's
//! [`Assembler`] writes the header and, from the gathered lists of placed clusters, the page list,
//! footer and TFile records. The MPI transports live in the `rntuple-mpi` crate.
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

mod assembler;
mod rank;
crate::unstable_mod! {
    wire
}

pub use assembler::Assembler;
/// Parses a schema of (field name, C++ type name) pairs, as the writers do.
pub fn parse_schema(schema: &[(&str, &str)]) -> crate::Result<Vec<(String, crate::logical::typename::TypeExpr)>> {
    crate::write::plan::parse_field_types(schema)
}

pub use rank::{ClusterShipper, OffsetService, RankFillContext, RankLayout, RankMetrics, RankWriter, Route, Ticket};
