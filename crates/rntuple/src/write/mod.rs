//! Event iteration: writing. [`Writer`] writes sequentially; [`ParallelWriter`] lets many threads
//! write one RNTuple into one file, each through its own [`FillContext`].

pub(crate) mod fill;
pub mod options;
pub mod parallel;
pub(crate) mod sink;
pub mod typed;
pub mod writer;
pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
pub use typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
pub use writer::{WriteOptions, Writer};
