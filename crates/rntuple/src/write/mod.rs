//! Event iteration: writing. [`Writer`] writes sequentially; [`ParallelWriter`] lets many threads
//! write one RNTuple into one file, each through its own [`FillContext`]; [`FileWriter`] writes
//! several RNTuples (each through such a writer) into one file at once.

mod attributes;
pub(crate) mod builder;
pub(crate) mod columns;
crate::unstable_mod! {
    distributed
}
mod file_writer;
mod fill_arrow;
mod fill_typed;
mod fill_value;
mod options;
mod parallel;
pub(crate) mod plan;
mod projections;
mod reduced;
pub(crate) mod sealed;
pub(crate) mod sink;
mod typed;
mod writer;
pub use crate::format::compression::{Algorithm, Compression};
pub use attributes::AttributeSetWriter;
pub use file_writer::FileWriter;
pub use options::{ColumnOptions, FloatRepr, OptionInfo, OptionKind, OptionValue, WriteOptions};
pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
pub use projections::Projection;
pub use typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
pub use writer::Writer;
