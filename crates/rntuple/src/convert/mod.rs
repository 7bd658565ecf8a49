//! Conversion between RNTuple and the columnar file formats of the Arrow world: Parquet and the
//! Arrow IPC file format (Feather v2), both ways, streamed batch by batch in bounded memory.
//!
//! The format of each side is chosen by its file extension (case-insensitive): `.parquet` /
//! `.parq` / `.pq`, `.arrow` / `.feather` / `.ipc`, `.root`. One side is always a `.root` file
//! holding the RNTuple.
//!
//! * Parquet / Arrow IPC → RNTuple: every Parquet row group, every IPC record batch, becomes a
//!   cluster (or several, when it is larger than the writer's cluster size). Arrow types map to
//!   ROOT types as `arrow_types` says: integers to `std::(u)intN_t`, `float32`/`float64` to
//!   `float`/`double`, strings to `std::string`, lists to `std::vector`, fixed-size lists to
//!   `std::array`, maps to `std::map`, structs to untyped records. A level that holds nulls becomes
//!   `std::optional` (Arrow marks almost every field nullable, so the data decide: Parquet column
//!   statistics, or else a first pass over the columns that may hold nulls).
//! * RNTuple → Parquet / Arrow IPC: one row group, one record batch, per cluster; the Arrow types
//!   are those of [`crate::Reader::read_batch`] (large lists and strings, optionals as nullable
//!   arrays, untyped collections as lists of structs).
//!
//! ```no_run
//! use rntuple::convert::{convert, ConvertOptions};
//! let s = convert("events.parquet".as_ref(), "events.root".as_ref(), &ConvertOptions::default())?;
//! println!("{} entries in {} clusters", s.entries, s.clusters);
//! # Ok::<(), rntuple::Error>(())
//! ```

crate::unstable_mod! {
    arrow_types
}
mod format;
mod from_rntuple;
mod ipc;
mod output;
mod parquet;

use crate::error::{Error, Result};
use std::path::Path;

pub use output::ConvertSummary;

/// Which format a path names (the CLI's choice of converter; `unstable` feature).
#[cfg(feature = "unstable")]
pub use format::Format;
#[cfg(not(feature = "unstable"))]
use format::Format;

/// The RNTuple schema, (field name, type) pairs in order, of an Arrow schema: one top-level field
/// per Arrow field, the types as the conversions map them (`Int32` -> `std::int32_t`, `LargeList` ->
/// `std::vector`, `Struct` -> an untyped record, `Utf8` -> `std::string`, ...); a level the schema
/// marks nullable becomes `std::optional`. What a writer made from an Arrow schema (the C ABI's
/// `rntuple_writer_create_arrow`) writes.
///
/// ```
/// use rntuple::arrow::datatypes::{DataType, Field, Schema};
/// let s = Schema::new(vec![
///     Field::new("n", DataType::Int32, false),
///     Field::new("pt", DataType::LargeList(Field::new("item", DataType::Float32, false).into()), false),
///     Field::new("w", DataType::Float64, true),
/// ]);
/// let names: Vec<(String, String)> = rntuple::convert::schema_from_arrow(&s)?.iter().map(|(n, t)| (n.clone(), t.name())).collect();
/// assert_eq!(names[0], ("n".into(), "std::int32_t".into()));
/// assert_eq!(names[1], ("pt".into(), "std::vector<float>".into()));
/// assert_eq!(names[2], ("w".into(), "std::optional<double>".into()));
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn schema_from_arrow(schema: &arrow_schema::Schema) -> Result<Vec<(String, crate::logical::typename::TypeExpr)>> {
    let nulls: Vec<arrow_types::NullTree> = schema.fields().iter().map(|f| arrow_types::NullTree::nullable(f.data_type(), f.is_nullable())).collect();
    arrow_types::rntuple_schema(schema, &nulls)
}

/// What a conversion does besides its two paths.
///
/// ```
/// use rntuple::convert::{convert, ConvertOptions};
/// use rntuple::write::Compression;
/// # let dir = std::env::temp_dir();
/// # let root = dir.join(format!("rntuple-doc-ConvertOptions-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&root, "Events", &[("x", "float"), ("v", "std::vector<std::int32_t>")], Default::default())?;
/// # use rntuple::Value as V;
/// # for i in 0..3 {
/// #     w.fill(&V::Record(vec![("x".into(), V::F32(i as f32)), ("v".into(), V::List(vec![V::Int(i); i as usize]))]))?;
/// # }
/// # w.commit()?;
/// # let (arrow, back) = (root.with_extension("arrow"), dir.join(format!("rntuple-doc-ConvertOptions-back-{}.root", std::process::id())));
/// convert(&root, &arrow, &ConvertOptions::default())?;
/// let opts = ConvertOptions { ntuple: Some("Copy".into()), compression: Compression::lz4(4), ..ConvertOptions::default() };
/// convert(&arrow, &back, &opts)?;
/// let r = rntuple::RNTupleFile::open(&back)?.reader("Copy")?;
/// assert_eq!(r.num_entries(), 3);
/// assert_eq!(r.descriptor().clusters[0].columns[0].as_ref().map(|c| c.compression), Some(404));
/// # for p in [&root, &arrow, &back] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ConvertOptions {
    /// The RNTuple: which one to read from a `.root` input (may be omitted when it holds only
    /// one), the name to give it in a `.root` output (default `Events`).
    pub ntuple: Option<String>,
    /// Compression (ROOT's `100 * algorithm + level` through `Compression::from_settings`; zstd
    /// level 5, ROOT's default). For a Parquet or Arrow IPC output the same algorithm is used where the format
    /// has it (zlib → gzip, lz4 → LZ4, zstd and lzma → zstd; Arrow IPC: lz4 or zstd), 0 for none.
    pub compression: crate::format::compression::Compression,
    /// For a `.root` output: store a page equal to an earlier page of its cluster once (ROOT
    /// 6.40's default, on here too; see [`crate::write::WriteOptions::same_page_merging`]).
    pub same_page_merging: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions { ntuple: None, compression: Default::default(), same_page_merging: true }
    }
}

/// Converts `input` into `output`, formats by extension (see the module's documentation): Parquet or
/// Arrow IPC into an RNTuple in a new ROOT file, or an RNTuple into Parquet or Arrow IPC.
///
/// ```
/// use rntuple::convert::{convert, ConvertOptions};
/// # let dir = std::env::temp_dir();
/// # let root = dir.join(format!("rntuple-doc-convert-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&root, "Events", &[("x", "float"), ("v", "std::vector<std::int32_t>")], Default::default())?;
/// # use rntuple::Value as V;
/// # for i in 0..3 {
/// #     w.fill(&V::Record(vec![("x".into(), V::F32(i as f32)), ("v".into(), V::List(vec![V::Int(i); i as usize]))]))?;
/// # }
/// # w.commit()?;
/// # let (parquet, back) = (root.with_extension("parquet"), dir.join(format!("rntuple-doc-convert-back-{}.root", std::process::id())));
/// // An RNTuple to Parquet and back.
/// assert_eq!(convert(&root, &parquet, &ConvertOptions::default())?.entries, 3);
/// convert(&parquet, &back, &ConvertOptions::default())?;
/// let r = rntuple::RNTupleFile::open(&back)?.reader("Events")?; // the default name
/// let rows: Vec<String> = r.read_values(None, 0, 3)?.iter().map(|v| v.to_json().to_string()).collect();
/// assert_eq!(rows, [r#"{"x":0.0,"v":[]}"#, r#"{"x":1.0,"v":[1]}"#, r#"{"x":2.0,"v":[2,2]}"#]);
/// # for p in [&root, &parquet, &back] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<ConvertSummary> {
    convert_with_progress(input, output, opts, &mut |_, _| {})
}

/// [`convert`], calling `progress(entries done, entries in total)` after every batch.
///
/// ```
/// use rntuple::convert::{convert_with_progress, ConvertOptions};
/// # let dir = std::env::temp_dir();
/// # let root = dir.join(format!("rntuple-doc-convert_with_progress-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&root, "Events", &[("x", "float"), ("v", "std::vector<std::int32_t>")], Default::default())?;
/// # use rntuple::Value as V;
/// # for i in 0..10 {
/// #     if i == 4 { w.commit_cluster()?; }
/// #     w.fill(&V::Record(vec![("x".into(), V::F32(i as f32)), ("v".into(), V::List(vec![V::Int(i); i as usize]))]))?;
/// # }
/// # w.commit()?;
/// # let ipc = root.with_extension("arrow");
/// let mut calls = Vec::new();
/// convert_with_progress(&root, &ipc, &ConvertOptions::default(), &mut |done, all| calls.push((done, all)))?;
/// assert_eq!(calls, [(4, 10), (10, 10)]); // one record batch per cluster
/// # for p in [&root, &ipc] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn convert_with_progress(input: &Path, output: &Path, opts: &ConvertOptions, progress: &mut dyn FnMut(u64, u64)) -> Result<ConvertSummary> {
    let (from, to) = (Format::of_path(input)?, Format::of_path(output)?);
    let name = opts.ntuple.as_deref().unwrap_or("Events");
    if to != Format::Root && crate::storage::remote::remote_output::remote_destination(output)?.is_some() {
        return Err(Error::Unsupported(format!(
            "{}: a .parquet or .arrow output is written locally (only .root outputs go to s3://, root:// and http(s):// URLs)",
            output.display()
        )));
    }
    let r = match (from, to) {
        (Format::Parquet, Format::Root) => parquet::parquet_to_rntuple(input, output, name, (opts.compression, opts.same_page_merging), progress),
        (Format::ArrowIpc, Format::Root) => ipc::ipc_to_rntuple(input, output, name, (opts.compression, opts.same_page_merging), progress),
        (Format::Root, Format::Parquet) => parquet::rntuple_to_parquet(input, output, opts.ntuple.as_deref(), opts.compression, progress),
        (Format::Root, Format::ArrowIpc) => ipc::rntuple_to_ipc(input, output, opts.ntuple.as_deref(), opts.compression, progress),
        (Format::Root, Format::Root) => Err(Error::Invalid(
            "both files are .root: a TTree is converted by the Python package (`rntuple convert IN.root OUT.root --tree NAME`, \
             needs `pip install rntuple uproot`); an RNTuple is copied with `rntuple skim` or `rntuple merge`"
                .into(),
        )),
        (a, b) => Err(Error::Invalid(format!("converting {a:?} into {b:?}: one side of a conversion must be a .root file (the RNTuple)"))),
    };
    r.map_err(|e| Error::Context { context: format!("converting '{}' into '{}'", input.display(), output.display()), source: Box::new(e) })
}
