//! Event iteration: writing. [`Writer`] writes sequentially; [`ParallelWriter`] lets many threads
//! write one RNTuple into one file, each through its own [`FillContext`]; [`FileWriter`] writes
//! several RNTuples (each through such a writer) into one file at once.

pub mod attributes;
pub(crate) mod builder;
pub(crate) mod columns;
pub mod distributed;
mod file_sink;
pub mod file_writer;
mod fill_arrow;
mod fill_typed;
mod fill_value;
pub mod options;
pub mod parallel;
pub(crate) mod plan;
mod positioned;
pub mod projections;
mod reduced;
pub(crate) mod sealed;
pub(crate) mod sink;
pub mod typed;
pub mod writer;
pub use attributes::AttributeSetWriter;
pub use file_writer::FileWriter;
pub use options::WriteOptions;
pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
pub use typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
pub use writer::Writer;
