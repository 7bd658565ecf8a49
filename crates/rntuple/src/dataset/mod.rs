//! Datasets of several RNTuples read as one (ROOT's `RNTupleProcessor`): a [`Chain`] of inputs with
//! the same fields one after the other, and a [`Join`] of a primary chain with auxiliary ones,
//! entry by entry or on index fields through a [`JoinIndex`]. Both read projections of their
//! fields into Arrow record batches, over ranges of global entry numbers, and give cluster-aligned
//! ranges for parallel iteration.
//!
//! Files: `chain` (inputs, schema checks, global entries) < `join_index` (the auxiliary keys'
//! hash map) and `gather` (chosen entries of a chain, cluster by cluster) < `join` < `skim` (a join's
//! fields, cut on both sides, into a new file); `scheduler` (a function over every cluster of a
//! chain on several threads, the clusters of all inputs taken largest first).
//!
//! ```
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let dir = std::env::temp_dir();
//! # let (p, a) = (dir.join(format!("rntuple-doc-dataset-p-{}.root", std::process::id())), dir.join(format!("rntuple-doc-dataset-a-{}.root", std::process::id())));
//! # let (p, a) = (p.display().to_string(), a.display().to_string());
//! # for (path, name, field) in [(&p, "Events", "x"), (&a, "Corr", "y")] {
//! #     let mut w = Writer::create(path, name, &[(field, "std::int32_t")], WriteOptions::default())?;
//! #     for i in 0..3 { w.fill(&Value::Record(vec![(field.into(), Value::Int(i))]))?; }
//! #     w.commit()?;
//! # }
//! use rntuple::dataset::{Chain, How, Join};
//! // two RNTuples of three entries each, aligned: entry i of one goes with entry i of the other
//! let join = Join::new(Chain::open(&[p.clone()], None)?, vec![("Corr".into(), Chain::open(&[a.clone()], None)?)], &[], How::Left)?;
//! let names: Vec<String> = join.fields().into_iter().map(|(n, _)| n).collect();
//! assert_eq!(names, ["x", "Corr.y"]);
//! assert_eq!(join.read_batch(None, 0, 3)?.num_rows(), 3);
//! # std::fs::remove_file(&p)?; std::fs::remove_file(&a)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod chain;
mod chain_missing;
mod gather;
mod join;
mod join_index;
mod scheduler;
mod skim;
mod typed;

pub use chain::Chain;
pub use join::{How, Join};
pub use join_index::JoinIndex;
pub use scheduler::ClusterTask;
pub use skim::{skim_join, JoinSkim, JoinSkimStats};
