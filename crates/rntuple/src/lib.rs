//! # rntuple
//!
//! A standalone implementation of ROOT's RNTuple columnar format (format 1.0.x.x, as written
//! by ROOT 6.34 to 6.40), organised in the layers of the RNTuple design:
//!
//! * [`storage`]: byte sources and the ROOT file container (keys, directories, anchors, blobs);
//! * [`format`]: envelopes, frames, locators, descriptors and ROOT's compression framing, as
//!   pure functions over bytes;
//! * [`primitives`]: column types and their page encodings;
//! * [`logical`]: the field tree and how C++ types map to columns;
//! * [`read`]: the reader, producing Apache Arrow arrays and dynamic values;
//! * [`write`]: the sequential and the parallel writer.
//!
//! ```no_run
//! let f = rntuple::RNTupleFile::open("data.root")?;
//! let r = f.reader("Events")?;
//! let batch = r.read_batch(Some(&["nMuon", "Muon_pt"]), 0, r.num_entries())?;
//! assert_eq!(batch.num_rows() as u64, r.num_entries());
//! # Ok::<(), rntuple::Error>(())
//! ```
#![warn(missing_docs)]

pub mod error;
/// Storage layer: byte sources and the ROOT file container.
pub mod storage {
    pub mod key_plan;
    pub mod source;
    pub mod streamer_info;
    pub mod tfile;
    pub mod tfile_write;
}
/// Format layer: pure (de)serialization.
pub mod format {
    pub mod anchor;
    pub mod checksum;
    pub mod compression;
    pub mod cursor;
    pub mod descriptor;
    pub mod envelope;
    pub mod serialize;
}
/// Primitives: column types and encodings.
pub mod primitives {
    pub mod alloc;
    pub mod column_type;
    pub mod decode;
    pub mod encode;
}
/// Logical layer: fields and types.
pub mod logical {
    pub mod kind;
    pub mod typename;
}
/// Event iteration: reading.
pub mod read {
    pub mod check;
    pub mod file;
    pub mod reader;
    pub mod typed;
    pub mod value;
    pub use typed::{FromEntry, FromValue};
}

/// Event iteration: writing. [`write::Writer`] writes sequentially; [`write::ParallelWriter`]
/// lets many threads write one RNTuple into one file, each through its own
/// [`write::FillContext`].
pub mod write {
    pub(crate) mod fill;
    pub mod merge;
    pub mod skim;
    pub mod parallel;
    pub(crate) mod sink;
    pub mod typed;
    pub mod writer;
    pub use parallel::{ContextMetrics, FillContext, ParallelWriter};
    pub use typed::{Entry, FieldValue, FieldWriter, RecordWriter, ScalarSlice};
    pub use writer::{WriteOptions, Writer};
}

pub use error::{Error, Result};
pub use read::file::RNTupleFile;
pub use read::reader::Reader;
pub use read::value::Value;
/// `#[derive(Record)]` on a struct with named fields implements [`write::Entry`] (its members are
/// an entry's top-level fields) and [`write::FieldValue`] (an untyped record with those members)
/// for writing, and [`read::FromEntry`] and [`read::FromValue`] (members matched by name) for
/// reading.
pub use rntuple_derive::Record;

/// Re-exports of the Arrow crates used in the public API.
pub mod arrow {
    pub use arrow_array as array;
    pub use arrow_buffer as buffer;
    pub use arrow_schema as datatypes_schema;
    /// Arrow data types and primitive type markers.
    pub mod datatypes {
        pub use arrow_array::types::*;
        pub use arrow_schema::{DataType, Field, Schema};
    }
}
