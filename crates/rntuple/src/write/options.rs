//! The write options, each declared once (name, type, default, documentation) in
//! `write_options!`: the struct, its `Default`, the table of [`WriteOptions::OPTIONS`] and the
//! by-name access ([`WriteOptions::set`], [`WriteOptions::get`]) that the Python keyword parser and
//! its defaults dict use are all generated from that one list.

use crate::error::{Error, Result};
use crate::format::budget::MAX_PAGE_BYTES;
use crate::format::compression::Compression;
pub use crate::primitives::reduced_float::FloatRepr;
use crate::storage::container::file_sink::FileOptions;

/// Per-field column options: which `float`/`double` fields are stored with reduced precision
/// (ROOT's `SetHalfPrecision`, `SetTruncated`, `SetQuantized`), keyed by field path.
///
/// A path names a field as ROOT's qualified field names do: a top-level field (`"pt"`), a record
/// member (`"muon.pt"`), a collection's item (`"jets._0"`, or `"jets._0.pt"` for a member of a
/// vector of records). A path naming a collection, an array or an optional of floats
/// (`"Muon_pt"` for a `std::vector<float>`) applies to its items. Every path must name a float
/// or double field of the schema, else creating the writer fails naming it.
///
/// A path may also be marked streamed ([`ColumnOptions::streamer`]): a field of a class type is
/// then written as ROOT's `RStreamerField` writes it (each entry's object as `TBufferFile` streams
/// it, with the class's StreamerInfo records in the footer and in the file), not split into
/// subfields. Every such path must name a class field.
///
/// ```
/// use rntuple::write::{ColumnOptions, FloatRepr};
/// use rntuple::write::WriteOptions;
/// let mut opts = WriteOptions::default();
/// opts.columns = ColumnOptions::new()
///     .with("pt", FloatRepr::Truncated { bits: 16 })
///     .with("jets.eta", FloatRepr::Quantized { min: -5.0, max: 5.0, bits: 12 })
///     .with("weight", FloatRepr::Half);
/// assert_eq!(opts.columns.get("pt"), Some(&FloatRepr::Truncated { bits: 16 }));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnOptions {
    fields: Vec<(String, FloatRepr)>,
    streamed: Vec<String>,
}

impl ColumnOptions {
    /// No options.
    pub fn new() -> ColumnOptions {
        ColumnOptions::default()
    }

    /// These options and `repr` for the field at `path` (replacing an earlier one for it).
    pub fn with(mut self, path: &str, repr: FloatRepr) -> ColumnOptions {
        self.set(path, repr);
        self
    }

    /// Sets the representation of the field at `path` (replacing an earlier one for it).
    pub fn set(&mut self, path: &str, repr: FloatRepr) {
        match self.fields.iter_mut().find(|(p, _)| p == path) {
            Some(f) => f.1 = repr,
            None => self.fields.push((path.to_string(), repr)),
        }
    }

    /// The representation set for `path`.
    pub fn get(&self, path: &str) -> Option<&FloatRepr> {
        self.fields.iter().find(|(p, _)| p == path).map(|(_, r)| r)
    }

    /// The (path, representation) pairs, in the order they were set.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &FloatRepr)> {
        self.fields.iter().map(|(p, r)| (p.as_str(), r))
    }

    /// Whether no field has options.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.streamed.is_empty()
    }

    /// These options and the field at `path` written as a streamer field (ROOT's
    /// `RStreamerField`): its class's objects streamed whole, one blob of bytes per entry.
    ///
    /// ```
    /// use rntuple::logical::typename::{parse, ClassDef, TypeExpr};
    /// use rntuple::write::{ColumnOptions, Writer, WriteOptions};
    /// use rntuple::Value;
    /// let hit = ClassDef::new("Hit").member("x", parse("float")?).member("tags", parse("std::vector<std::int32_t>")?);
    /// let opts = WriteOptions { columns: ColumnOptions::new().streamer("hit"), ..WriteOptions::default() };
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-streamer-{}.root", std::process::id()));
    /// let mut w = Writer::create_with_types(&path, "Events", &[("hit".into(), TypeExpr::Class(Box::new(hit)))], opts)?;
    /// let entry = Value::from_json(&serde_json::json!({"hit": {"x": 1.5, "tags": [3, 4]}}));
    /// w.fill(&entry)?;
    /// w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.descriptor().fields[0].role, rntuple::format::descriptor::Role::Streamer);
    /// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"hit":{"x":1.5,"tags":[3,4]}}"#);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn streamer(mut self, path: &str) -> ColumnOptions {
        self.set_streamer(path);
        self
    }

    /// Marks the field at `path` to be written as a streamer field (see [`ColumnOptions::streamer`]).
    pub fn set_streamer(&mut self, path: &str) {
        if !self.is_streamer(path) {
            self.streamed.push(path.to_string());
        }
    }

    /// Whether the field at `path` is written as a streamer field.
    pub fn is_streamer(&self, path: &str) -> bool {
        self.streamed.iter().any(|p| p == path)
    }

    /// The paths of the fields written as streamer fields, in the order they were marked.
    pub fn streamer_fields(&self) -> &[String] {
        &self.streamed
    }
}

/// The value of one option, for by-name access.
///
/// ```
/// use rntuple::write::{OptionValue, WriteOptions};
/// let mut o = WriteOptions::default();
/// assert_eq!(o.get("enable_page_checksums"), Some(OptionValue::Bool(true)));
/// o.set("max_unzipped_page_size", OptionValue::UInt(64 << 10))?;
/// assert_eq!(o.max_unzipped_page_size, 64 << 10);
/// assert!(o.set("buffered", OptionValue::UInt(1)).is_err()); // a switch takes a Bool
/// # Ok::<(), rntuple::Error>(())
/// ```
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue {
    /// A switch.
    Bool(bool),
    /// A count, a size in bytes or the compression settings.
    UInt(u64),
}

/// The kind of value an option takes.
///
/// ```
/// use rntuple::write::{OptionKind, WriteOptions};
/// let kind = |name| WriteOptions::OPTIONS.iter().find(|o| o.name == name).map(|o| o.kind);
/// assert_eq!(kind("use_direct_io"), Some(OptionKind::Bool));
/// assert_eq!(kind("compression"), Some(OptionKind::UInt)); // ROOT's settings integer
/// assert_eq!(kind("columns"), None); // not a by-name option
/// ```
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` or `false`.
    Bool,
    /// A non-negative integer.
    UInt,
}

/// One entry of [`WriteOptions::OPTIONS`].
///
/// ```
/// use rntuple::write::{OptionKind, WriteOptions};
/// let info = WriteOptions::OPTIONS.iter().find(|o| o.name == "max_unzipped_page_size").unwrap();
/// assert_eq!(info.kind, OptionKind::UInt);
/// assert!(info.doc.contains("Largest uncompressed page"));
/// // Every option can be read by name.
/// assert!(WriteOptions::OPTIONS.iter().all(|o| WriteOptions::default().get(o.name).is_some()));
/// ```
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub struct OptionInfo {
    /// The option's name (the struct field, the Python keyword).
    pub name: &'static str,
    /// What values it takes.
    pub kind: OptionKind,
    /// Its documentation.
    pub doc: &'static str,
}

/// A Rust type an option can have.
#[cfg_attr(not(feature = "unstable"), allow(dead_code))]
trait OptionType: Sized {
    const KIND: OptionKind;
    fn to_value(&self) -> OptionValue;
    fn from_value(name: &str, v: OptionValue) -> Result<Self>;
}

impl OptionType for bool {
    const KIND: OptionKind = OptionKind::Bool;
    fn to_value(&self) -> OptionValue {
        OptionValue::Bool(*self)
    }
    fn from_value(name: &str, v: OptionValue) -> Result<Self> {
        match v {
            OptionValue::Bool(b) => Ok(b),
            OptionValue::UInt(u) => Err(Error::Invalid(format!("write option '{name}' takes true or false, not {u}"))),
        }
    }
}

macro_rules! uint_option {
    ($($t:ty),*) => {$(
        impl OptionType for $t {
            const KIND: OptionKind = OptionKind::UInt;
            fn to_value(&self) -> OptionValue {
                OptionValue::UInt(*self as u64)
            }
            fn from_value(name: &str, v: OptionValue) -> Result<Self> {
                match v {
                    OptionValue::UInt(u) => <$t>::try_from(u).map_err(|_| Error::Invalid(format!("write option '{name}': {u} is too large (at most {})", <$t>::MAX))),
                    OptionValue::Bool(b) => Err(Error::Invalid(format!("write option '{name}' takes a non-negative integer, not {b}"))),
                }
            }
        }
    )*};
}
uint_option!(u32, u64, usize);

impl OptionType for Compression {
    const KIND: OptionKind = OptionKind::UInt;
    fn to_value(&self) -> OptionValue {
        OptionValue::UInt(u64::from(self.settings()))
    }
    fn from_value(name: &str, v: OptionValue) -> Result<Self> {
        Compression::from_settings(u32::from_value(name, v)?)
    }
}

macro_rules! write_options {
    ($($(#[doc = $doc:literal])* $name:ident : $ty:ty = $default:expr;)*) => {
    /// Write options, named and defaulted like ROOT's `RNTupleWriteOptions`.
    ///
    /// ```
    /// use rntuple::write::{Compression, WriteOptions, Writer};
    /// # use rntuple::Value;
    /// assert_eq!(WriteOptions::default().compression, Compression::zstd(5));
    /// assert!(WriteOptions::default().same_page_merging); // equal pages of a cluster stored once, as ROOT 6.40
    /// let opts = WriteOptions { compression: Compression::lz4(4), enable_page_checksums: false, ..WriteOptions::default() };
    /// opts.validate()?;
    /// let path = std::env::temp_dir().join(format!("rntuple-doc-WriteOptions-{}.root", std::process::id()));
    /// let mut w = Writer::create(&path, "Events", &[("x", "float")], opts)?;
    /// w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
    /// w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let range = r.descriptor().clusters[0].columns[0].clone().unwrap();
    /// assert_eq!((range.compression, range.pages[0].has_checksum), (404, false));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
        #[derive(Debug, Clone)]
        pub struct WriteOptions {
            $($(#[doc = $doc])* pub $name: $ty,)*
            /// Per-field column options: reduced-precision floats (half, truncated, quantized),
            /// keyed by field path (none by default). Not a by-name option.
            pub columns: ColumnOptions,
            /// Projected fields to add to the schema (as ROOT's `RNTupleImporter` adds `Muon_pt` and
            /// `nMuon` over its collections; none by default). Not a by-name option.
            pub projections: Vec<crate::write::projections::Projection>,
        }

        impl Default for WriteOptions {
            fn default() -> Self {
                WriteOptions { $($name: $default,)* columns: ColumnOptions::default(), projections: Vec::new() }
            }
        }

        impl WriteOptions {
            /// Every option, in declaration order (`unstable` feature: the front ends' by-name access).
            #[cfg(feature = "unstable")]
            pub const OPTIONS: &'static [OptionInfo] = &[
                $(OptionInfo { name: stringify!($name), kind: <$ty as OptionType>::KIND, doc: concat!($($doc, "\n"),*) },)*
            ];

            /// Sets an option by name (the Python keyword arguments); an unknown name or a value of
            /// the wrong kind is an error naming the option.
            ///
            /// ```
            /// use rntuple::write::{OptionValue, WriteOptions};
            /// let mut o = WriteOptions::default();
            /// o.set("compression", OptionValue::UInt(0))?;
            /// assert!(o.compression.is_none());
            /// assert!(o.set("compresion", OptionValue::UInt(0)).is_err());
            /// # Ok::<(), rntuple::Error>(())
            /// ```
            #[cfg(feature = "unstable")]
            pub fn set(&mut self, name: &str, value: OptionValue) -> Result<()> {
                match name {
                    $(stringify!($name) => self.$name = <$ty as OptionType>::from_value(name, value)?,)*
                    _ => return Err(Error::NotFound(format!("unknown write option '{name}' (known: {})", Self::OPTIONS.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")))),
                }
                Ok(())
            }

            /// An option's value by name.
            #[cfg(feature = "unstable")]
            pub fn get(&self, name: &str) -> Option<OptionValue> {
                match name {
                    $(stringify!($name) => Some(OptionType::to_value(&self.$name)),)*
                    _ => None,
                }
            }
        }
    };
}

write_options! {
    /// Compression (ROOT's settings `algorithm * 100 + level` by name: `Compression::from_settings`);
    /// ROOT's default zstd 5 (505).
    compression: Compression = Compression::zstd(5);
    /// Target compressed cluster size (128 MiB).
    approx_zipped_cluster_size: u64 = 128 << 20;
    /// Hard limit of a cluster's uncompressed size (1280 MiB).
    max_unzipped_cluster_size: u64 = 1280 << 20;
    /// Uncompressed size a column's page buffer starts with (256 bytes); it doubles as values
    /// come, up to `max_unzipped_page_size` (ROOT's adaptive pages). Unlike ROOT, which refuses
    /// an initial size above the maximum, the initial size is capped at the maximum, so that
    /// setting a small maximum alone works.
    initial_unzipped_page_size: u64 = 256;
    /// Largest uncompressed page (1 MiB).
    max_unzipped_page_size: u64 = 1 << 20;
    /// XXH3 checksum after each page (on).
    enable_page_checksums: bool = true;
    /// Same-page merging (on, ROOT 6.40's `EnableSamePageMerging`): within a cluster, a sealed
    /// page whose stored bytes equal an earlier page's (of any column: the offset columns of a
    /// collection's many `std::vector` members) is stored once, the duplicates' locators pointing
    /// at the first copy. Needs `enable_page_checksums` (the checksum is the hash; without
    /// checksums nothing is merged, as ROOT turns merging off with checksums). Pages written one by
    /// one as they fill (`buffered` off, `stream_uncompressed_pages`) are compared with the
    /// cluster's earlier written pages (the first 16 MiB of them).
    same_page_merging: bool = true;
    /// Compress the pages of a cluster on several threads when the cluster is committed
    /// (ROOT's implicit multithreading, on by default for the sequential writer). Off:
    /// each page is compressed as soon as it is full.
    use_implicit_mt: bool = true;
    /// Threads for implicit multithreading (0 = one per available core).
    imt_threads: usize = 0;
    /// Encoded pages waiting for compression beyond this many bytes are compressed at once,
    /// largest first (0 = auto: twice the target cluster size when compressing, once when not).
    page_buffer_budget: u64 = 0;
    /// Buffered writing (on, ROOT's `UseBufferedWrite`): a cluster's pages are kept until the
    /// cluster is complete and written as one blob. Off: each page is written as soon as it is
    /// compressed (the parallel writer then takes its lock once per page).
    buffered: bool = true;
    /// Sequential writer, pages sealed as they fill — uncompressed pages (compression 0), and every
    /// page when implicit MT is off (compressed on the filling thread): write each page as soon
    /// as it is sealed even in buffered mode (on; pages of a cluster are then interleaved by
    /// column, as in ROOT's unbuffered mode, one key per page). Keeping a cluster's pages serves
    /// parallel compression and fewer writes under a shared lock, neither of which such a
    /// sequential write has, while a cluster of fresh buffer memory costs page faults (measured 4x
    /// slower into `/dev/null` at 5 M entries uncompressed; at 505 without implicit MT 0.936-0.948 s
    /// -> 0.885-0.914 s into `/dev/null`, 1.10-1.17 s -> 0.94-0.99 s into a file). Off: buffered as
    /// `buffered` says (what the parallel writer's contexts do). (The name predates the
    /// compressed case.)
    stream_uncompressed_pages: bool = true;
    /// Direct I/O (`O_DIRECT`): clusters are written from page-aligned buffers at aligned
    /// offsets, each key padded to 4096 bytes.
    use_direct_io: bool = false;
    /// Allocate each cluster's byte range with `fallocate` before writing it.
    preallocate: bool = false;
    /// Add the RNTuple to an existing ROOT file (ROOT's UPDATE mode, as `RNTupleWriter::Append`)
    /// instead of creating the file (off): its keys (histograms, TTrees, directories, other
    /// RNTuples) stay; an RNTuple of the same name in its top directory is refused.
    update_existing_file: bool = false;
    /// Parallel writer: write a cluster after releasing the lock, so that only the reservation
    /// of its range and the metadata happen under the lock (on by default: the lock is then held
    /// for microseconds per cluster, which is what lets many threads scale). Off: the write
    /// happens under the lock, as in ROOT's `RNTupleParallelWriter`. Either way the commit waits
    /// for every context, so no metadata is committed for bytes not yet written.
    write_outside_lock: bool = true;
    /// Largest payload of one RBlob key (1 GiB, recorded in the anchor): a cluster's pages go
    /// into as few keys as fit; a page or envelope above it is split into chunks, as ROOT does.
    max_key_size: u64 = 1 << 30;
    /// Writes that survive a crash (0 = off): every this many committed clusters the file on
    /// disk becomes a complete ROOT file holding every entry committed so far (a checkpoint: a
    /// cluster group's page list, footer, anchor, keys list and file header), while later
    /// clusters are appended after it. The switch from one checkpoint to the next is one small
    /// overwrite at the start of the file, made after the new records are synced, so a killed
    /// writer leaves the last checkpoint readable by ROOT, uproot and this reader. A checkpoint
    /// with no entries is made at the file's creation, which puts the file at its final path
    /// (until then it has a temporary name); it is written in place from then on.
    checkpoint_clusters: u64 = 0;
}

impl WriteOptions {
    /// The file-level options: how the file is created (for update, checkpointed or atomic),
    /// the compression of its own records, direct I/O and preallocation.
    pub(crate) fn file_options(&self) -> FileOptions {
        FileOptions {
            update_existing_file: self.update_existing_file,
            checkpointed: self.checkpoint_clusters > 0,
            compression: self.compression,
            use_direct_io: self.use_direct_io,
            preallocate: self.preallocate,
        }
    }

    /// Checks the options as ROOT's `RNTupleWriteOptions` does; the error names the option.
    ///
    /// ```
    /// use rntuple::write::WriteOptions;
    /// let o = WriteOptions { max_unzipped_page_size: 4 << 30, ..WriteOptions::default() };
    /// assert!(o.validate().unwrap_err().to_string().contains("max_unzipped_page_size"));
    /// ```
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(format!("invalid write options: {m}")));
        if self.initial_unzipped_page_size == 0 {
            return bad("initial_unzipped_page_size must be at least 1 byte".into());
        }
        if self.max_unzipped_page_size > self.max_unzipped_cluster_size {
            return bad(format!(
                "max_unzipped_page_size ({}) must not be larger than max_unzipped_cluster_size ({})",
                self.max_unzipped_page_size, self.max_unzipped_cluster_size
            ));
        }
        if self.approx_zipped_cluster_size == 0 || self.approx_zipped_cluster_size > self.max_unzipped_cluster_size {
            return bad(format!(
                "approx_zipped_cluster_size ({}) must be between 1 and max_unzipped_cluster_size ({})",
                self.approx_zipped_cluster_size, self.max_unzipped_cluster_size
            ));
        }
        if self.max_unzipped_page_size == 0 || self.max_unzipped_page_size > MAX_PAGE_BYTES {
            return bad(format!(
                "max_unzipped_page_size ({}) must be between 1 byte and {} MiB (the largest page read)",
                self.max_unzipped_page_size,
                MAX_PAGE_BYTES >> 20
            ));
        }
        if self.max_key_size < 64 {
            return bad(format!("max_key_size ({}) must be at least 64 bytes", self.max_key_size));
        }
        Ok(())
    }
}
