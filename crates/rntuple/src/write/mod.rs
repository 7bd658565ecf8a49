//! Event iteration: writing. [`Writer`] writes sequentially; [`ParallelWriter`] lets many threads
//! write one RNTuple into one file, each through its own [`FillContext`]; [`FileWriter`] writes
//! several RNTuples (each through such a writer) into one file at once.
//!
//! Three rooms, each using only those before it:
//!
//! - `streamer`: streamer fields' objects serialized as `TBufferFile` streams them, and their
//!   StreamerInfo records (`streamed_encode`, `streamed_fields`).
//! - `cluster`: from a schema to sealed clusters, knowing no files: field plans (`plan`), column
//!   buffers and page sealing (`columns`), reduced-precision floats (`reduced`), the cluster
//!   builder (`builder`), the sealed cluster (`sealed`), same-page merging (`same_pages`).
//! - `fill`: the fill paths into a builder: dynamic values (`fill_value`), Arrow batches
//!   (`fill_arrow`) and typed Rust values (`fill_typed`, over the traits of `typed`).
//!
//! In `write` itself: `options` (every write option, declared once) and `projections`
//! (projected fields), which the rooms use; and above the rooms, the dataset sink (`sink`: sealed
//! clusters into a file's bytes and metadata), the writers (`writer`, `parallel`, `file_writer`),
//! attribute sets (`attributes`) and distributed writing (`distributed`: a rank's contexts, the
//! wire format, rank 0's assembler).
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
pub(crate) mod cluster;
crate::unstable_mod! {
    distributed
}
mod file_writer;
mod fill;
mod options;
mod parallel;
mod projections;
pub(crate) mod sink;
pub(crate) mod streamer;
mod writer;
pub use crate::format::compression::{Algorithm, Compression};
pub use attributes::AttributeSetWriter;
pub use file_writer::FileWriter;
pub use fill::typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
pub use options::{ColumnOptions, FloatRepr, WriteOptions};
/// By-name access to the write options (the CLI's, Python's and the C ABI's keyword options).
#[cfg(feature = "unstable")]
pub use options::{OptionInfo, OptionKind, OptionValue};
pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
pub use projections::Projection;
pub use writer::Writer;
