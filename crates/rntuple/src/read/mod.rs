//! Event iteration: reading.
//!
//! Five rooms, each using only those before it, and the files that tie them to the API:
//!
//! - `pool`: where pages come from: the page source (`PageSource`: the byte source, the
//!   read-ahead settings, the statistics; ROOT's `RPageSource`), each read's plan
//!   (`read_plan`: its columns and clusters, whether it takes its pages from the pool; and
//!   `Span`) and the cluster pool loading ahead (`cluster_pool`; ROOT's `RClusterPool`). Knows no
//!   fields and no `Reader`.
//! - `decode`: loading and unpacking one page (`pages`), column decoding (`columns`), bulk reads
//!   into caller-owned buffers (`bulk`, `bulk_range`, `bulk_element`).
//! - `arrow`: Arrow assembly (`assemble`), and the dynamic (`values`) and typed (`typed`) values
//!   converted from it.
//! - `streamer`: streamer fields read as objects by the file's StreamerInfo records (`fields`; the
//!   deserializer `streamed_object`, collections `streamed_stl`, Arrow structs `streamed_arrow`).
//! - `view`: entry-wise reading, one field at a time (`Reader::view`), over pages decoded once
//!   into a per-view cache (`pages`); one value per entry (`scalar`), collections and strings
//!   (`items`).
//!
//! In `read` itself: `open` (the `Reader` struct, holding its page source and the descriptor;
//! descriptor loading: the one file of `read` the rooms build on, with `evolution`, schema
//! evolution on read) < `reader` (accessors, read-ahead settings and public entry points, which
//! make a read's plan and pass it down the decoding calls to the page source) < `check`, `file`
//! (opening files; `live`: a file a writer is still extending), `envelopes` (the metadata
//! envelopes read again, as stored), `bench` (benchmark helpers, `unstable` feature only) <
//! `attributes` (linked attribute sets, read as RNTuples of their own). From `open` up, files
//! add `impl Reader` blocks (`decode`, `arrow` and `streamer` too); `decode::pages` adds an
//! `impl PageSource` block.
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

pub(crate) mod arrow;
mod attribute_budget;
pub(crate) mod attributes;
#[cfg(feature = "unstable")]
mod bench;
pub(crate) mod check;
mod decode;
mod defaults;
mod envelopes;
/// Schema evolution on read: fields read into requested types, by ROOT 6.40's rules.
pub mod evolution;
pub(crate) mod file;
mod live;
mod open;
mod pool;
pub(crate) mod reader;
pub mod view;
crate::unstable_room! {
    streamer
}
pub use arrow::typed::{FromEntry, FromValue, TypedEntries};
pub use attributes::{AttributeEntry, AttributeSetReader};
pub use check::{CheckReport, Problem};
pub use decode::bulk::{BulkColumn, BulkReader};
pub use decode::bulk_element::BulkElement;
pub use envelopes::Envelope;
pub use pool::cluster_pool::{ReadAhead, DEFAULT_STREAMS};
pub use pool::page_source::ReadStats;
