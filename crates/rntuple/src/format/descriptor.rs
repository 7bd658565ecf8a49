//! Descriptors: the in-memory form of the header, footer and page lists.
//!
//! A [`Reader`](crate::Reader) describes its RNTuple with a [`Descriptor`]: the field tree, the
//! columns, the clusters and their pages.
//!
//! ```
//! use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! let path = std::env::temp_dir().join(format!("rntuple-doc-descriptor-mod-{}.root", std::process::id()));
//! let mut w = Writer::create(&path, "Events", &[("x", "float"), ("v", "std::vector<float>")], WriteOptions::default())?;
//! # w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0)), ("v".into(), Value::List(vec![]))]))?;
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let d = r.descriptor();
//! let fields: Vec<String> = d.fields.iter().map(|f| format!("{}: {}", d.field_path(f.id), f.type_name)).collect();
//! assert_eq!(fields, ["x: float", "v: std::vector<float>", "v._0: float"]);
//! assert_eq!((d.num_entries(), d.clusters.len()), (1, 1));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::cursor::Locator;

/// Structural role of a field (header field record).
///
/// ```
/// use rntuple::format::descriptor::Role;
/// assert_eq!(Role::from_u16(1), Role::Collection);
/// assert_eq!(Role::Record.to_u16(), 2);
/// // A role of a later format version is kept, and written back as it was.
/// assert_eq!(Role::from_u16(7), Role::Unknown(7));
/// assert_eq!(Role::Unknown(7).to_u16(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A leaf or a wrapper (enum, atomic, string, array, bitset).
    Leaf,
    /// A collection parent (vector, set, map, optional, ...).
    Collection,
    /// A record parent (class, pair, tuple, untyped record).
    Record,
    /// A variant parent.
    Variant,
    /// A ROOT streamer object.
    Streamer,
    /// A role this implementation does not know.
    Unknown(u16),
}

impl Role {
    /// From the on-disk u16.
    pub fn from_u16(v: u16) -> Role {
        match v {
            0 => Role::Leaf,
            1 => Role::Collection,
            2 => Role::Record,
            3 => Role::Variant,
            4 => Role::Streamer,
            x => Role::Unknown(x),
        }
    }
    /// The on-disk u16.
    pub fn to_u16(self) -> u16 {
        match self {
            Role::Leaf => 0,
            Role::Collection => 1,
            Role::Record => 2,
            Role::Variant => 3,
            Role::Streamer => 4,
            Role::Unknown(x) => x,
        }
    }
}

/// Field flag: the field is a fixed-size array; its record holds the repetition count.
pub(crate) const FIELD_FLAG_REPETITIVE: u16 = 0x01;
/// Field flag: the field is a projection; its record holds the source field's id.
pub(crate) const FIELD_FLAG_PROJECTED: u16 = 0x02;
/// Field flag: the field's record holds a type checksum.
pub(crate) const FIELD_FLAG_TYPE_CHECKSUM: u16 = 0x04;
/// Column flag: the column is deferred (it starts at a first element index other than 0; a
/// negative index marks it suppressed until there).
pub(crate) const COLUMN_FLAG_DEFERRED: u16 = 0x01;
/// Column flag: the column's record holds a value range (min, max).
pub(crate) const COLUMN_FLAG_VALUE_RANGE: u16 = 0x02;
/// Cluster flag (in the top byte of a cluster summary's entry count): the cluster is sharded, a
/// feature the format reserves.
pub(crate) const CLUSTER_FLAG_SHARDED: u64 = 0x01;

/// A field record.
///
/// ```
/// use rntuple::format::descriptor::Role;
/// # use rntuple::write::{Writer, WriteOptions};
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-FieldDescriptor-{}.root", std::process::id()));
/// # Writer::create(&path, "Events", &[("v", "std::vector<float>")], WriteOptions::default())?.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let v = &d.fields[d.field_by_path("v").unwrap() as usize];
/// assert_eq!((v.name.as_str(), v.type_name.as_str(), v.role, v.parent), ("v", "std::vector<float>", Role::Collection, None));
/// let item = &d.fields[v.children[0] as usize];
/// assert_eq!((item.name.as_str(), item.type_name.as_str(), item.parent), ("_0", "float", Some(v.id)));
/// // The vector owns the offsets column, its item the column of the floats.
/// assert_eq!((v.columns.len(), item.columns.len()), (1, 1));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct FieldDescriptor {
    /// Field id (position in the header + extension lists).
    pub id: u32,
    /// Field version (ROOT writes 0).
    pub field_version: u32,
    /// Type version (class version for user classes).
    pub type_version: u32,
    /// Parent field id; `None` for top-level fields.
    pub parent: Option<u32>,
    /// Structural role.
    pub role: Role,
    /// Field flags (0x01 repetitive, 0x02 projected, 0x04 type checksum).
    pub flags: u16,
    /// Field name.
    pub name: String,
    /// Normalized C++ type name.
    pub type_name: String,
    /// The strings few fields have (type alias, description), `None` when both are empty: a field
    /// without them holds a null pointer instead of two empty strings. Read them with
    /// [`FieldDescriptor::type_alias`] and [`FieldDescriptor::description`].
    pub extras: Option<Box<FieldExtras>>,
    /// Repetition count of fixed-size arrays and bitsets.
    pub repetition: Option<u64>,
    /// Source field of a projected field.
    pub projection_source: Option<u32>,
    /// ROOT type checksum.
    pub type_checksum: Option<u32>,
    /// Child field ids, in order.
    pub children: Vec<u32>,
    /// Physical column ids of this field (alias columns resolved), in representation order.
    pub columns: Vec<u32>,
    /// Whether the field came from the schema extension.
    pub from_extension: bool,
}

impl FieldDescriptor {
    /// Type alias (e.g. `Double32_t`), empty when the field has none.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-type_alias-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("d", "Double32_t"), ("x", "double")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let d = r.descriptor();
    /// let field = |name| &d.fields[d.field_by_path(name).unwrap() as usize];
    /// assert_eq!((field("d").type_name.as_str(), field("d").type_alias()), ("double", "Double32_t"));
    /// assert_eq!(field("x").type_alias(), "");
    /// assert!(field("x").extras.is_none()); // nothing stored for a field without them
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn type_alias(&self) -> &str {
        self.extras.as_ref().map_or("", |e| &e.type_alias)
    }

    /// Description, empty when the field has none.
    ///
    /// ```
    /// use rntuple::format::descriptor::FieldExtras;
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-description-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let mut x = r.descriptor().fields[0].clone();
    /// assert_eq!(x.description(), "");
    /// x.extras = FieldExtras::of(String::new(), "transverse momentum".into());
    /// assert_eq!((x.description(), x.type_alias()), ("transverse momentum", ""));
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn description(&self) -> &str {
        self.extras.as_ref().map_or("", |e| &e.description)
    }

    /// Sets the type alias, keeping the description (nothing stored when both are empty).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-set_type_alias-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "double")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let mut x = r.descriptor().fields[0].clone();
    /// x.set_type_alias("Double32_t".into());
    /// assert_eq!(x.type_alias(), "Double32_t");
    /// x.set_type_alias(String::new());
    /// assert!(x.extras.is_none());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_type_alias(&mut self, type_alias: String) {
        let description = self.extras.take().map(|e| e.description).unwrap_or_default();
        self.extras = FieldExtras::of(type_alias, description);
    }
}

/// The strings of a field record that few fields have: its type alias and its description,
/// boxed apart from the field ([`FieldDescriptor::extras`]).
///
/// ```
/// use rntuple::format::descriptor::FieldExtras;
/// assert!(FieldExtras::of(String::new(), String::new()).is_none());
/// let e = FieldExtras::of("Double32_t".into(), String::new()).unwrap();
/// assert_eq!((e.type_alias.as_str(), e.description.as_str()), ("Double32_t", ""));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldExtras {
    /// Type alias (e.g. `Double32_t`).
    pub type_alias: String,
    /// Description.
    pub description: String,
}

impl FieldExtras {
    /// The extras of a field with the type alias `type_alias` and the description `description`:
    /// `None` when both are empty.
    ///
    /// ```
    /// use rntuple::format::descriptor::FieldExtras;
    /// assert_eq!(FieldExtras::of(String::new(), "calibrated".into()).map(|e| e.description), Some("calibrated".to_string()));
    /// assert_eq!(FieldExtras::of(String::new(), String::new()), None);
    /// ```
    pub fn of(type_alias: String, description: String) -> Option<Box<FieldExtras>> {
        (!type_alias.is_empty() || !description.is_empty()).then(|| Box::new(FieldExtras { type_alias, description }))
    }
}

/// A physical column record.
///
/// ```
/// use rntuple::write::{ColumnOptions, FloatRepr, Writer, WriteOptions};
/// let path = std::env::temp_dir().join(format!("rntuple-doc-ColumnDescriptor-{}.root", std::process::id()));
/// let columns = ColumnOptions::new().with("eta", FloatRepr::Quantized { min: -5.0, max: 5.0, bits: 12 });
/// let w = Writer::create(&path, "Events", &[("pt", "float"), ("eta", "float")], WriteOptions { columns, ..Default::default() })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let col = |name| &d.columns[d.fields[d.field_by_path(name).unwrap() as usize].columns[0] as usize];
/// // ROOT's default for a float, SplitReal32 (0x18); the quantized float, Real32Quant (0x1D).
/// assert_eq!((col("pt").column_type, col("pt").bits_on_storage, col("pt").value_range), (0x18, 32, None));
/// assert_eq!((col("eta").column_type, col("eta").bits_on_storage, col("eta").value_range), (0x1D, 12, Some((-5.0, 5.0))));
/// assert_eq!(col("eta").field_id, d.field_by_path("eta").unwrap());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ColumnDescriptor {
    /// Physical column id.
    pub id: u32,
    /// On-disk column type id.
    pub column_type: u16,
    /// Bits per element on storage.
    pub bits_on_storage: u16,
    /// Owning field.
    pub field_id: u32,
    /// Column flags (0x01 deferred, 0x02 value range).
    pub flags: u16,
    /// Representation index.
    pub representation: u16,
    /// First element index of a deferred column (0 otherwise).
    pub first_element: u64,
    /// Deferred and suppressed (negative first element index on disk).
    pub suppressed_deferred: bool,
    /// Value range for Real32Quant.
    pub value_range: Option<(f64, f64)>,
    /// Whether the column came from the schema extension.
    pub from_extension: bool,
}

/// An alias column record (projected fields).
///
/// ```
/// use rntuple::write::{Projection, Writer, WriteOptions};
/// let path = std::env::temp_dir().join(format!("rntuple-doc-AliasColumn-{}.root", std::process::id()));
/// let projections = vec![Projection::Cardinality { name: "nv".into(), collection: "v".into() }];
/// let w = Writer::create(&path, "Events", &[("v", "std::vector<float>")], WriteOptions { projections, ..Default::default() })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let (v, nv) = (d.field_by_path("v").unwrap(), d.field_by_path("nv").unwrap());
/// // `nv` owns no column: an alias points it to the offsets column of `v`.
/// assert_eq!(d.aliases.len(), 1);
/// assert_eq!((d.aliases[0].field_id, d.aliases[0].physical), (nv, d.fields[v as usize].columns[0]));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AliasColumn {
    /// The physical column it points to.
    pub physical: u32,
    /// The projected field it belongs to.
    pub field_id: u32,
}

/// Extra type information (ROOT streamer info).
///
/// ROOT writes the streamer info of the classes of its class fields here; this crate's writer
/// writes none (a merge or skim copies its input's).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ExtraTypeInfo-{}.root", std::process::id()));
/// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let streamer_infos: Vec<&str> =
///     r.descriptor().extra_type_info.iter().filter(|e| e.content_id == 0).map(|e| e.type_name.as_str()).collect();
/// assert!(streamer_infos.is_empty());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ExtraTypeInfo {
    /// Content id (0 = streamer info).
    pub content_id: u32,
    /// Type version.
    pub type_version: u32,
    /// Type name.
    pub type_name: String,
    /// Raw content.
    pub content: Vec<u8>,
}

/// A link to another envelope: its uncompressed length and where it is.
///
/// ```
/// use rntuple::format::descriptor::EnvelopeLink;
/// # use rntuple::write::{Writer, WriteOptions};
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-EnvelopeLink-{}.root", std::process::id()));
/// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// // The footer links the page list of each cluster group.
/// let link: EnvelopeLink = r.descriptor().cluster_groups[0].page_list;
/// assert!(link.length > EnvelopeLink::default().length);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvelopeLink {
    /// Uncompressed envelope length.
    pub length: u64,
    /// Where the stored envelope is.
    pub locator: Locator,
}

/// A cluster group record of the footer.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ClusterGroupDescriptor-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// // Ten entries in two clusters: 0..4 and 4..10.
/// for i in 0..10 {
///     if i == 4 {
///         w.commit_cluster()?;
///     }
///     w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
/// }
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let g = &d.cluster_groups[0];
/// assert_eq!((d.cluster_groups.len(), g.min_entry, g.entry_span, g.n_clusters), (1, 0, 10, 2));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClusterGroupDescriptor {
    /// First entry of the group.
    pub min_entry: u64,
    /// Entries covered.
    pub entry_span: u64,
    /// Number of clusters.
    pub n_clusters: u32,
    /// The page list envelope.
    pub page_list: EnvelopeLink,
}

/// A page of a column in a cluster.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-PageDescriptor-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// // Ten entries in two clusters: 0..4 and 4..10.
/// for i in 0..10 {
///     if i == 4 {
///         w.commit_cluster()?;
///     }
///     w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
/// }
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let x = d.fields[d.field_by_path("x").unwrap() as usize].columns[0];
/// let pages = &d.clusters[1].columns[x as usize].as_ref().unwrap().pages;
/// assert_eq!(pages.len(), 1);
/// assert_eq!((pages[0].n_elements, pages[0].first_in_cluster, pages[0].has_checksum), (6, 0, true));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PageDescriptor {
    /// Number of elements.
    pub n_elements: u32,
    /// Whether an XXH3 checksum follows the page bytes.
    pub has_checksum: bool,
    /// Where the stored page is.
    pub locator: Locator,
    /// Cluster-local index of the page's first element.
    pub first_in_cluster: u64,
}

/// A column's data in one cluster.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ColumnRange-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// // Ten entries in two clusters: 0..4 and 4..10.
/// for i in 0..10 {
///     if i == 4 {
///         w.commit_cluster()?;
///     }
///     w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
/// }
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let x = d.fields[d.field_by_path("x").unwrap() as usize].columns[0];
/// let range = d.clusters[1].columns[x as usize].as_ref().unwrap();
/// assert_eq!((range.first_element, range.n_elements, range.suppressed), (4, 6, false));
/// assert_eq!((range.compression, range.pages.len()), (505, 1)); // zstd 5, the default
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ColumnRange {
    /// Global index of the column's first element in this cluster.
    pub first_element: u64,
    /// Number of elements in this cluster.
    pub n_elements: u64,
    /// Compression settings of the pages.
    pub compression: u32,
    /// Suppressed in this cluster (another representation holds the data).
    pub suppressed: bool,
    /// Pages in order.
    pub pages: Vec<PageDescriptor>,
}

/// A cluster: entry range and, per physical column, its pages.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ClusterDescriptor-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// // Ten entries in two clusters: 0..4 and 4..10.
/// for i in 0..10 {
///     if i == 4 {
///         w.commit_cluster()?;
///     }
///     w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
/// }
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// let spans: Vec<(usize, u64, u64)> = d.clusters.iter().map(|c| (c.id, c.first_entry, c.n_entries)).collect();
/// assert_eq!(spans, [(0, 0, 4), (1, 4, 6)]);
/// assert_eq!(d.clusters[1].columns.len(), d.columns.len());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ClusterDescriptor {
    /// Global cluster id.
    pub id: usize,
    /// First entry.
    pub first_entry: u64,
    /// Number of entries.
    pub n_entries: u64,
    /// Per physical column id, as far as the cluster lists columns (ids past the end were not
    /// listed: columns that did not exist yet); `None` likewise.
    pub columns: Vec<Option<ColumnRange>>,
}

/// A linked attribute set (format 1.0.1.0+, ROOT 6.38+, experimental): a separate RNTuple in the
/// same file whose entries annotate ranges of this RNTuple's entries, found through its anchor.
///
/// ```
/// use rntuple::write::{Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-AttributeSetLink-{}.root", std::process::id()));
/// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// let runs = w.attributes("runs", &[("run", "std::int32_t")])?;
/// w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
/// runs.commit_range(0, 1, &Value::Record(vec![("run".into(), Value::Int(7))]))?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let link = &r.descriptor().attribute_sets[0];
/// assert_eq!((link.name.as_str(), link.schema_major, link.schema_minor), ("runs", 1, 0));
/// assert!(link.anchor_length > 0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeSetLink {
    /// Major version of the attribute schema (1: fields `_rangeStart`, `_rangeLen`, `_userData`).
    pub schema_major: u16,
    /// Minor version of the attribute schema.
    pub schema_minor: u16,
    /// Uncompressed length of the attribute RNTuple's anchor, its checksum included.
    pub anchor_length: u32,
    /// Where the attribute RNTuple's anchor is: the payload of a `ROOT::RNTuple` key that the
    /// directory does not list.
    pub anchor: Locator,
    /// The attribute set's name (unique among the RNTuple's sets).
    pub name: String,
}

/// Everything known about one RNTuple.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-Descriptor-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float"), ("muons", "std::vector<std::pair<float,float>>")], WriteOptions::default())?;
/// # for _ in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0)), ("muons".into(), Value::List(vec![]))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let d = r.descriptor();
/// assert_eq!((d.name.as_str(), d.num_entries(), d.top_level_fields().len()), ("Events", 3, 2));
/// assert!(d.writer.starts_with("rntuple v"));
/// let id = d.field_by_path("muons._0._1").unwrap();
/// assert_eq!((d.field_path(id), d.type_name(id)), ("muons._0._1".to_string(), "float"));
/// assert_eq!(d.field_by_path("muons.pt"), None);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Descriptor {
    /// RNTuple name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Writer identification.
    pub writer: String,
    /// All fields (header then extension).
    pub fields: Vec<FieldDescriptor>,
    /// All physical columns.
    pub columns: Vec<ColumnDescriptor>,
    /// Alias columns.
    pub aliases: Vec<AliasColumn>,
    /// Extra type information.
    pub extra_type_info: Vec<ExtraTypeInfo>,
    /// Cluster groups.
    pub cluster_groups: Vec<ClusterGroupDescriptor>,
    /// Clusters, ordered by id.
    pub clusters: Vec<ClusterDescriptor>,
    /// XXH3 of the header envelope.
    pub header_checksum: u64,
    /// Number of header fields (the rest are from the schema extension).
    pub n_header_fields: usize,
    /// Attribute sets linked from the footer (format 1.0.1.0+).
    pub attribute_sets: Vec<AttributeSetLink>,
}

impl Descriptor {
    /// Total number of entries.
    pub fn num_entries(&self) -> u64 {
        self.cluster_groups.iter().map(|g| g.min_entry.saturating_add(g.entry_span)).max().unwrap_or(0)
    }
    /// Top-level field ids in schema order.
    pub fn top_level_fields(&self) -> Vec<u32> {
        self.fields.iter().filter(|f| f.parent.is_none()).map(|f| f.id).collect()
    }
    /// Looks a field up by its dotted path (`muons.pt`).
    pub fn field_by_path(&self, path: &str) -> Option<u32> {
        let mut parts = path.split('.');
        let first = parts.next()?;
        let mut cur = self.fields.iter().find(|f| f.parent.is_none() && f.name == first)?.id;
        for p in parts {
            cur = *self.fields[cur as usize].children.iter().find(|&&c| self.fields[c as usize].name == p)?;
        }
        Some(cur)
    }
    /// The dotted path of a field (`muons._0.pt`), for messages and options; a parent chain that
    /// loops or leaves the field list ends the path where it goes wrong.
    pub fn field_path(&self, id: u32) -> String {
        let mut parts = Vec::new();
        let mut cur = Some(id);
        while let Some(i) = cur {
            let Some(f) = self.fields.get(i as usize) else { break };
            if parts.len() > self.fields.len() {
                break;
            }
            parts.push(f.name.as_str());
            cur = f.parent.filter(|&p| p != i);
        }
        parts.reverse();
        parts.join(".")
    }
    /// Full C++ type name of a field (empty for untyped records and collections).
    pub fn type_name(&self, id: u32) -> &str {
        &self.fields[id as usize].type_name
    }
}
