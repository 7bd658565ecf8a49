//! # rntuple
//!
//! A standalone implementation of ROOT's RNTuple columnar format (format 1.0.x.x, as written
//! by ROOT 6.34 to 6.40), organised in the layers of the RNTuple design, lowest first (a module
//! imports only from its own layer and those below it; `make lint` checks it):
//!
//! * [`format`](mod@format): envelopes, frames, locators, descriptors and ROOT's compression
//!   framing, as pure functions over bytes (public: [`format::descriptor`]);
//! * [`storage`]: where bytes come from and go to, in three rooms: `local` (byte sources over
//!   a local file or memory, outputs that are never half-written) < `container` (the ROOT file
//!   container: keys, directories, anchors, blobs, StreamerInfo; the file sink) < `remote`
//!   (HTTP(S), S3, WebDAV and XRootD sources and uploads), with `location` above them telling
//!   URLs from paths (public: the byte sources, such as [`storage::ReadAt`] to read from
//!   anywhere);
//! * `primitives` (internal): column types and their page encodings;
//! * [`logical`]: the field tree and how C++ types map to columns;
//! * [`read`]: the reader, producing Apache Arrow arrays, typed structs and dynamic values (rooms
//!   `pool` < `decode` < `arrow` < `streamer`); and [`write`](mod@write): the sequential,
//!   parallel and distributed writers (rooms `streamer` < `cluster` < `fill`; the two do not
//!   import each other);
//! * `inspect` (internal): where an RNTuple's bytes go (per column, field, cluster, envelope;
//!   page sizes) and histogram binning, pure functions over the format's descriptors;
//! * [`dataset`]: chains and joins of several RNTuples read as one (ROOT's `RNTupleProcessor`);
//! * [`ops`]: merge and skim, which read one file and write another, over the selection
//!   expressions of `expr` (internal); [`convert`] (feature `convert`, on by default): Parquet and Arrow
//!   IPC to and from RNTuple.
//!
//! Internals (envelope parsing, compression framing, page encodings, the ROOT file container, the
//! selection expressions, the option table) are public only with the `unstable` feature, for the
//! fuzz targets, benchmarks, tests and the in-tree front ends (CLI, Python, C ABI).
//!
//! ```no_run
//! let f = rntuple::RNTupleFile::open("data.root")?;
//! let r = f.reader("Events")?;
//! let batch = r.read_batch(Some(&["nMuon", "Muon_pt"]), 0, r.num_entries())?;
//! assert_eq!(batch.num_rows() as u64, r.num_entries());
//! # Ok::<(), rntuple::Error>(())
//! ```
#![warn(missing_docs)]

/// Declares a sub-room of a layer (a folder of modules, such as `storage::container`): public
/// with the `unstable` feature, which the fuzz targets, the benchmarks and the integration tests
/// enable; crate-private without. Each module in the room is declared with a visibility (and
/// lints) of its own.
macro_rules! unstable_room {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[cfg(feature = "unstable")]
        pub mod $name;
        $(#[$m])*
        #[cfg(not(feature = "unstable"))]
        pub(crate) mod $name;
    };
}
pub(crate) use unstable_room;

/// Declares an internal module: public (and documented as unstable) with the `unstable` feature,
/// crate-private without, where what only the `unstable` users call is not dead code.
macro_rules! unstable_mod {
    ($(#[$m:meta])* $name:ident) => {
        crate::unstable_room! {
            $(#[$m])*
            #[cfg_attr(not(feature = "unstable"), allow(dead_code, unused_imports, unreachable_pub))]
            $name
        }
    };
}
pub(crate) use unstable_mod;

#[cfg(feature = "convert")]
pub mod convert;
pub mod dataset;
mod error;
unstable_mod!(expr);
pub mod format;
unstable_mod!(inspect);
pub mod logical;
pub mod ops;
unstable_mod!(primitives);
pub mod read;
pub mod storage;
mod value;
pub mod write;

pub use error::{Error, Result};

/// This release's version, `"MAJOR.MINOR.PATCH"`: the workspace's, which the command
/// (`rntuple --version`), the Python package (`rntuple.__version__`, its metadata) and the C ABI
/// (`rntuple_version()`) report too.
///
/// ```
/// assert_eq!(rntuple::VERSION.split('.').count(), 3);
/// ```
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub use format::budget::{memory_limit, set_memory_limit};
pub use read::file::RNTupleFile;
pub use read::reader::Reader;
/// `#[derive(Record)]` on a struct with named fields implements [`write::Entry`] (its members are
/// an entry's top-level fields) and [`write::FieldValue`] (an untyped record with those members)
/// for writing, and [`read::FromEntry`] and [`read::FromValue`] (members matched by name) for
/// reading.
pub use rntuple_derive::Record;
pub use value::Value;

/// The README's Rust program, run as a doc test (it writes its files in the working directory,
/// `crates/rntuple` under `cargo test`).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeProgram;

/// What the code `#[derive(Record)]` generates calls; not an API.
#[doc(hidden)]
pub mod __private {
    pub use crate::read::arrow::typed::{member, member_opt, member_path};
}

/// Re-exports of the Arrow crates used in the public API.
///
/// ```
/// use rntuple::arrow::array::{Array, Float32Array};
/// use rntuple::arrow::datatypes::DataType;
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-arrow-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let batch = r.read_batch(Some(&["x"]), 0, 3)?;
/// assert_eq!(batch.schema().field(0).data_type(), &DataType::Float32);
/// let x = batch.column(0).as_any().downcast_ref::<Float32Array>().unwrap();
/// assert_eq!(x.values().to_vec(), [0.0, 1.0, 2.0]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod arrow {
    pub use arrow_array as array;
    pub use arrow_buffer as buffer;
    /// Arrow data types and primitive type markers.
    ///
    /// ```
    /// use rntuple::arrow::datatypes::DataType;
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-datatypes-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("n", "std::uint16_t"), ("v", "std::vector<float>")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let d = r.descriptor();
    /// assert_eq!(r.arrow_type(d.field_by_path("n").unwrap())?, DataType::UInt16);
    /// let DataType::LargeList(item) = r.arrow_type(d.field_by_path("v").unwrap())? else { panic!("not a list") };
    /// assert_eq!(item.data_type(), &DataType::Float32);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub mod datatypes {
        pub use arrow_array::types::*;
        pub use arrow_schema::{DataType, Field, Schema};
    }
}
