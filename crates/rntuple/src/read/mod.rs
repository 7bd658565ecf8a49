//! Event iteration: reading.
//!
//! The reader is split by stage, each file using only the files below it: `cluster_pool`
//! (loading ahead, knows no descriptors; ROOT's `RClusterPool`) and `read_plan` (one read's
//! plan: its columns, clusters and whether it takes its pages from the pool; and `Span`) <
//! `page_source` (the `PageSource`: owns the byte source, the pool, the read-ahead settings and
//! the statistics, and makes each read's plan; ROOT's `RPageSource`) < `pages` (loading and
//! unpacking one page for the page source) < `open` (the `Reader` struct, holding its page
//! source and the descriptor; descriptor loading) < `columns` (column decoding) < `arrow` (Arrow
//! assembly) < `reader` (accessors, read-ahead settings and public entry points, which make a
//! read's plan and pass it down the decoding calls to the page source) < `values`, `typed`,
//! `check`, `file`, `bulk` (one column over clusters into caller-owned buffers, reusing the
//! caller's scratch), `envelopes` (the metadata envelopes read again, as stored), and `bench`
//! (benchmark helpers, `unstable` feature only) < `attributes` (linked attribute sets, read as
//! RNTuples of their own). From `open` up, files add
//! `impl Reader` blocks; `pages` adds an `impl PageSource` block.
//!
//! ```
//! use rntuple::read::ReadAhead;
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-read-{}.root", std::process::id()));
//! # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
//! # w.commit()?;
//! let mut r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! r.set_read_ahead(ReadAhead::off()); // each page read when it is decoded
//! let batch = r.read_batch(None, 0, r.num_entries())?;
//! assert_eq!((batch.num_rows(), batch.num_columns()), (3, 1));
//! assert_eq!(r.read_values(Some(&["x"]), 2, 3)?[0].to_json().to_string(), r#"{"x":2.0}"#);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arrow;
pub(crate) mod attributes;
#[cfg(feature = "unstable")]
mod bench;
mod bulk;
mod bulk_element;
mod bulk_range;
pub(crate) mod check;
mod cluster_pool;
mod columns;
mod envelopes;
pub(crate) mod file;
mod live;
mod open;
mod page_source;
mod pages;
mod pool_state;
mod pool_streams;
mod read_plan;
pub(crate) mod reader;
mod streamer;
crate::unstable_mod! {
    /// Objects streamed by ROOT's `TBufferFile`, read by their StreamerInfo records (internal).
    streamed_object
}
crate::unstable_mod! {
    /// The collections of streamed objects (internal).
    streamed_stl
}
crate::unstable_mod! {
    /// Streamed objects as Arrow structs (internal).
    streamed_arrow
}
/// Schema evolution on read: fields read into requested types, by ROOT 6.40's rules.
pub mod evolution;
pub(crate) mod typed;
mod values;
pub use attributes::{AttributeEntry, AttributeSetReader};
pub use bulk::{BulkColumn, BulkReader};
pub use bulk_element::BulkElement;
pub use check::{CheckReport, Problem};
pub use cluster_pool::{ReadAhead, DEFAULT_STREAMS};
pub use envelopes::Envelope;
pub use page_source::ReadStats;
pub use typed::{FromEntry, FromValue, TypedEntries};
