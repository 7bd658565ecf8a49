//! The sequential RNTuple writer and the write options: every field type from ROOT type names,
//! filled with dynamic [`Value`]s or Arrow record batches; pages cut at the maximum unzipped page
//! size, clusters flushed by an estimated compression ratio as ROOT does, one RBlob key per
//! cluster holding all its pages, page checksums, ROOT's default column representations.

use crate::error::{Error, Result};
use crate::format::descriptor::Descriptor;
use crate::logical::typename::TypeExpr;
use crate::value::Value;
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::cluster::plan::parse_field_types;
use crate::write::options::WriteOptions;
use crate::write::sink::Dataset;
use arrow_array::RecordBatch;
use std::path::Path;

/// The sequential writer.
///
/// ```
/// use rntuple::write::{Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join("rntuple-doc-writer.root");
/// let mut w = Writer::create(&path, "Events", &[("x", "float"), ("v", "std::vector<std::int32_t>")], WriteOptions::default())?;
/// for i in 0..10 {
///     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), Value::List(vec![Value::Int(i); i as usize]))]))?;
/// }
/// w.commit()?;
/// let f = rntuple::RNTupleFile::open(&path)?;
/// assert_eq!(f.reader("Events")?.num_entries(), 10);
/// # Ok::<(), rntuple::Error>(())
/// ```
///
/// A new file is written under a temporary name beside `path` and renamed over it at the commit
/// (an existing file is replaced only then); a writer dropped without a commit commits (as ROOT's
/// `RNTupleWriter`), except while a panic unwinds, and [`Writer::abort`] discards it. With the
/// option `checkpoint_clusters` the file is written at `path` and stays readable after a crash
/// (see [`Writer::checkpoint`]).
pub struct Writer {
    b: ClusterBuilder<Dataset>,
    /// Attribute sets of this RNTuple, committed with it.
    attrs: Vec<Box<dyn LinkedSet>>,
}

/// An attribute set linked from a writer's RNTuple (see [`crate::write::attributes`]), committed
/// before it (its footer links the set's anchor) or aborted with it.
pub(crate) trait LinkedSet: Send {
    /// The set's name.
    fn name(&self) -> String;
    /// Commits the set; returns the link for the main footer.
    fn commit(&self) -> Result<crate::format::descriptor::AttributeSetLink>;
    /// Discards the set.
    fn abort(&self);
}

impl Writer {
    /// Creates a file holding one RNTuple with the given (field name, C++ type name) schema.
    pub fn create(path: impl AsRef<Path>, name: &str, schema: &[(&str, &str)], opts: WriteOptions) -> Result<Writer> {
        Self::create_with_types(path, name, &parse_field_types(schema)?, opts)
    }

    /// Creates a file whose schema is the members of the Rust type `E` (see
    /// [`Entry`](crate::write::Entry)); fill it with [`Writer::fill_typed`].
    pub fn create_typed<E: crate::write::Entry>(path: impl AsRef<Path>, name: &str, mut opts: WriteOptions) -> Result<Writer> {
        for f in E::streamer_fields() {
            opts.columns.set_streamer(&f);
        }
        Self::create_with_types(path, name, &E::fields(), opts)
    }

    /// Creates a file from a schema of parsed type expressions: what [`Writer::create`] builds from
    /// type names, plus what no type name can say, untyped records ([`TypeExpr::Record`]) and
    /// untyped collections of them.
    ///
    /// ```
    /// use rntuple::logical::typename::{parse, TypeExpr};
    /// use rntuple::write::{Writer, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join("rntuple-doc-untyped.root");
    /// let muon = TypeExpr::Record(vec![("pt".into(), parse("float")?), ("q".into(), parse("std::int8_t")?)]);
    /// let mut w = Writer::create_with_types(&path, "T", &[("muon".into(), muon)], WriteOptions::default())?;
    /// w.fill(&Value::Record(vec![("muon".into(), Value::Record(vec![("pt".into(), Value::F32(1.5)), ("q".into(), Value::Int(-1))]))]))?;
    /// w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("T")?;
    /// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"muon":{"pt":1.5,"q":-1}}"#);
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    pub fn create_with_types(path: impl AsRef<Path>, name: &str, schema: &[(String, TypeExpr)], opts: WriteOptions) -> Result<Writer> {
        Self::build(name, schema, opts, |desc, opts| Dataset::create(path, desc, opts))
    }

    /// A writer of the dataset that `start` creates for the descriptor of `schema` (the schema is
    /// checked before anything is written).
    pub(crate) fn build(
        name: &str,
        schema: &[(String, TypeExpr)],
        opts: WriteOptions,
        start: impl FnOnce(Descriptor, WriteOptions) -> Result<Dataset>,
    ) -> Result<Writer> {
        let mut desc = Descriptor { name: name.into(), writer: format!("rntuple v{}", env!("CARGO_PKG_VERSION")), ..Default::default() };
        let template = ClusterBuilder::new(&mut desc, schema, opts.clone(), ())?;
        let ds = start(desc, opts.clone())?;
        Ok(Writer { b: template.blank(opts, ds), attrs: Vec::new() })
    }

    /// Fills one entry from a typed Rust value, written straight into the column buffers. The
    /// type's fields must be the RNTuple's (checked once per type).
    pub fn fill_typed<E: crate::write::Entry>(&mut self, entry: &E) -> Result<()> {
        self.b.fill_typed(entry)
    }

    /// Late model extension: adds a top-level field after entries were written, as ROOT's
    /// `RNTupleModelUpdater` does. The field goes to the footer's schema extension; its columns are
    /// deferred, so the entries written before read as default values (0, empty, absent).
    ///
    /// ```
    /// use rntuple::write::{Writer, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join("rntuple-doc-extension.root");
    /// let mut w = Writer::create(&path, "T", &[("a", "std::int32_t")], WriteOptions::default())?;
    /// w.fill(&Value::Record(vec![("a".into(), Value::Int(1))]))?;
    /// w.add_field("b", "float")?;
    /// w.fill(&Value::Record(vec![("a".into(), Value::Int(2)), ("b".into(), Value::F32(2.5))]))?;
    /// w.commit()?;
    /// let f = rntuple::RNTupleFile::open(&path)?;
    /// let r = f.reader("T")?;
    /// let v: Vec<String> = r.read_values(None, 0, 2)?.iter().map(|v| v.to_json().to_string()).collect();
    /// assert_eq!(v, [r#"{"a":1,"b":0.0}"#, r#"{"a":2,"b":2.5}"#]);
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    pub fn add_field(&mut self, name: &str, type_name: &str) -> Result<()> {
        if self.b.out.is_committed() {
            return Err(Error::Invalid("the RNTuple was committed already".into()));
        }
        let before = self.b.out.n_entries;
        let mut desc = std::mem::take(&mut self.b.out.desc);
        let r = self.b.add_field(&mut desc, name, type_name, before);
        self.b.out.desc = desc;
        r?;
        self.b.out.columns_added();
        Ok(())
    }

    /// The dataset, the options and the attribute sets, for [`crate::write::attributes`].
    pub(crate) fn parts(&mut self) -> (&mut Dataset, &WriteOptions, &mut Vec<Box<dyn LinkedSet>>) {
        (&mut self.b.out, &self.b.opts, &mut self.attrs)
    }

    /// Commits this writer as an attribute set's RNTuple; returns where its anchor is.
    pub(crate) fn commit_attribute_set(mut self) -> Result<crate::format::cursor::Locator> {
        self.commit_inner()?;
        self.b.out.anchor_at().ok_or_else(|| Error::internal("an attribute set committed without its anchor"))
    }

    /// Number of entries filled so far.
    pub fn num_entries(&self) -> u64 {
        self.b.filled
    }

    /// Clusters written so far.
    pub fn num_clusters(&self) -> u64 {
        self.b.clusters
    }

    /// Fills one entry: a [`Value::Record`] with one member per top-level field, in any order.
    pub fn fill(&mut self, entry: &Value) -> Result<()> {
        self.b.fill(entry)
    }

    /// Appends the rows of an Arrow record batch (columnar fill): one column per top-level
    /// field, matched by name. Supported Arrow types: booleans, integers, floats (float64 into
    /// `Double32_t` too), strings, lists (vectors, RVecs, sets), fixed-size lists (`std::array`,
    /// `std::bitset`), structs (pairs, tuples), maps, and nullable arrays for `std::optional` /
    /// `std::unique_ptr`. Variants go through [`Writer::fill`].
    pub fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        self.b.append_batch(batch)
    }

    /// Writes the current cluster (all its pages in one key) and starts a new one.
    pub fn commit_cluster(&mut self) -> Result<()> {
        self.b.flush_cluster()
    }

    /// Makes the file on disk a complete ROOT file holding every entry filled so far (the current
    /// cluster is written first), while the writer goes on: a crash after this leaves those
    /// entries readable. What the option `checkpoint_clusters` does every K clusters, on demand.
    /// In a file written under a temporary name (no `checkpoint_clusters`) the checkpoint is made
    /// in the temporary file, which a crash leaves behind under its temporary name.
    ///
    /// ```
    /// use rntuple::write::{Writer, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join("rntuple-doc-checkpoint.root");
    /// let opts = WriteOptions { checkpoint_clusters: 1000, ..WriteOptions::default() };
    /// let mut w = Writer::create(&path, "T", &[("x", "std::int32_t")], opts)?;
    /// w.fill(&Value::Record(vec![("x".into(), Value::Int(1))]))?;
    /// w.checkpoint()?;
    /// // The file on disk holds the entry already, while the writer is still open.
    /// assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("T")?.num_entries(), 1);
    /// w.fill(&Value::Record(vec![("x".into(), Value::Int(2))]))?;
    /// w.commit()?;
    /// assert_eq!(rntuple::RNTupleFile::open(&path)?.reader("T")?.num_entries(), 2);
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    pub fn checkpoint(&mut self) -> Result<()> {
        if self.b.out.is_committed() {
            return Err(Error::Invalid("the RNTuple was committed already".into()));
        }
        self.b.flush_cluster()?;
        self.b.out.checkpoint()
    }

    /// Checkpoints made so far (with `checkpoint_clusters`, the one at creation included).
    pub fn num_checkpoints(&self) -> u64 {
        self.b.out.checkpoints()
    }

    /// Discards the writer without committing: a new file's temporary file is removed, so an
    /// existing file of that name stays as it was; with checkpoints the file keeps its last
    /// checkpoint; a file opened for update keeps its former content.
    pub fn abort(mut self) {
        for a in self.attrs.drain(..) {
            a.abort();
        }
        self.b.out.abort();
    }

    /// Commits the dataset: last cluster, page list, footer, anchor, file records. Returns the
    /// size of the file written.
    pub fn commit(mut self) -> Result<u64> {
        self.commit_inner()
    }

    fn commit_inner(&mut self) -> Result<u64> {
        if self.b.out.is_committed() {
            return Err(Error::Invalid("the RNTuple was committed already".into()));
        }
        self.b.flush_cluster()?;
        self.b.release_buffers();
        // The attribute sets first: the footer links their anchors.
        for a in std::mem::take(&mut self.attrs) {
            match a.commit() {
                Ok(link) => self.b.out.desc.attribute_sets.push(link),
                Err(e) => {
                    self.b.out.fail(&e.to_string());
                    return Err(e);
                }
            }
        }
        self.b.out.commit()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // While a panic unwinds, the entries may be half-filled: nothing is committed (a new
        // file's temporary file is removed).
        if !self.b.out.is_committed()
            && !std::thread::panicking()
            && let Err(e) = self.commit_inner()
        {
            eprintln!("rntuple: committing RNTuple '{}' on drop failed: {e}", self.b.out.name());
        }
    }
}
