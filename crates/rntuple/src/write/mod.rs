//! Event iteration: writing. [`Writer`] writes sequentially; [`ParallelWriter`] lets many threads
//! write one RNTuple into one file, each through its own [`FillContext`]; [`FileWriter`] writes
//! several RNTuples (each through such a writer) into one file at once.
//!
//! ```
//! use rntuple::write::{Compression, Writer, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join(format!("rntuple-doc-write-{}.root", std::process::id()));
//! let opts = WriteOptions { compression: Compression::lz4(1), ..WriteOptions::default() };
//! let mut w = Writer::create(&path, "Events", &[("run", "std::uint32_t"), ("pt", "std::vector<float>")], opts)?;
//! w.fill(&Value::Record(vec![("run".into(), Value::UInt(1)), ("pt".into(), Value::List(vec![Value::F32(25.0)]))]))?;
//! assert_eq!(w.num_entries(), 1);
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"run":1,"pt":[25.0]}"#);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod attributes;
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
pub(crate) mod same_pages;
pub(crate) mod sealed;
pub(crate) mod sink;
pub(crate) mod streamed_encode;
mod streamed_fields;
mod typed;
mod writer;
pub use crate::format::compression::{Algorithm, Compression};
pub use attributes::AttributeSetWriter;
pub use file_writer::FileWriter;
pub use options::{ColumnOptions, FloatRepr, WriteOptions};
/// By-name access to the write options (the CLI's, Python's and the C ABI's keyword options).
#[cfg(feature = "unstable")]
pub use options::{OptionInfo, OptionKind, OptionValue};
pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
pub use projections::Projection;
pub use typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
pub use writer::Writer;
