//! Filling one cluster at a time: the field plans of a schema, the per-column page buffers, page
//! sealing (encoding, compression, checksum) and the three fill paths (dynamic values, Arrow
//! batches). A [`ClusterBuilder`] knows nothing about files: a full cluster leaves it as a
//! [`SealedCluster`] whose page offsets are relative to the cluster's own blob, so that it can be
//! placed anywhere in the file. Where it goes is the business of its [`ClusterOut`]: the sequential
//! writer's dataset sink, or a fill context of the parallel writer.

use crate::error::{Error, Result};
use crate::format::compression;
use crate::format::descriptor::*;
use crate::logical::kind::Scalar;
use crate::logical::typename::{parse, TypeExpr};
use crate::primitives::column_type::ColumnType;
use crate::primitives::encode::{encode_page, PageValues};
use crate::value::Value;
use crate::write::writer::WriteOptions;
use std::time::Instant;

/// Values buffered for the current page of one column.
#[derive(Debug, Clone)]
enum Buf {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    U16(Vec<u16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Switch(Vec<(u64, u32)>),
}

impl Buf {
    fn len(&self) -> usize {
        match self {
            Buf::Bool(v) => v.len(),
            Buf::U8(v) => v.len(),
            Buf::I8(v) => v.len(),
            Buf::I16(v) => v.len(),
            Buf::U16(v) => v.len(),
            Buf::I32(v) => v.len(),
            Buf::U32(v) => v.len(),
            Buf::I64(v) => v.len(),
            Buf::U64(v) => v.len(),
            Buf::F32(v) => v.len(),
            Buf::F64(v) => v.len(),
            Buf::Switch(v) => v.len(),
        }
    }
    fn values(&self) -> PageValues<'_> {
        match self {
            Buf::Bool(v) => PageValues::Bool(v),
            Buf::U8(v) => PageValues::U8(v),
            Buf::I8(v) => PageValues::I8(v),
            Buf::I16(v) => PageValues::I16(v),
            Buf::U16(v) => PageValues::U16(v),
            Buf::I32(v) => PageValues::I32(v),
            Buf::U32(v) => PageValues::U32(v),
            Buf::I64(v) => PageValues::I64(v),
            Buf::U64(v) => PageValues::U64(v),
            Buf::F32(v) => PageValues::F32(v),
            Buf::F64(v) => PageValues::F64(v),
            Buf::Switch(v) => PageValues::Switch(v),
        }
    }
    fn empty_like(&self) -> Buf {
        let mut b = self.clone();
        b.clear();
        b.shrink();
        b
    }
    fn shrink(&mut self) {
        match self {
            Buf::Bool(v) => *v = Vec::new(),
            Buf::U8(v) => *v = Vec::new(),
            Buf::I8(v) => *v = Vec::new(),
            Buf::I16(v) => *v = Vec::new(),
            Buf::U16(v) => *v = Vec::new(),
            Buf::I32(v) => *v = Vec::new(),
            Buf::U32(v) => *v = Vec::new(),
            Buf::I64(v) => *v = Vec::new(),
            Buf::U64(v) => *v = Vec::new(),
            Buf::F32(v) => *v = Vec::new(),
            Buf::F64(v) => *v = Vec::new(),
            Buf::Switch(v) => *v = Vec::new(),
        }
    }
    /// Room for `n` more values without reallocating.
    fn reserve(&mut self, n: usize) {
        match self {
            Buf::Bool(v) => v.reserve(n),
            Buf::U8(v) => v.reserve(n),
            Buf::I8(v) => v.reserve(n),
            Buf::I16(v) => v.reserve(n),
            Buf::U16(v) => v.reserve(n),
            Buf::I32(v) => v.reserve(n),
            Buf::U32(v) => v.reserve(n),
            Buf::I64(v) => v.reserve(n),
            Buf::U64(v) => v.reserve(n),
            Buf::F32(v) => v.reserve(n),
            Buf::F64(v) => v.reserve(n),
            Buf::Switch(v) => v.reserve(n),
        }
    }
    fn clear(&mut self) {
        match self {
            Buf::Bool(v) => v.clear(),
            Buf::U8(v) => v.clear(),
            Buf::I8(v) => v.clear(),
            Buf::I16(v) => v.clear(),
            Buf::U16(v) => v.clear(),
            Buf::I32(v) => v.clear(),
            Buf::U32(v) => v.clear(),
            Buf::I64(v) => v.clear(),
            Buf::U64(v) => v.clear(),
            Buf::F32(v) => v.clear(),
            Buf::F64(v) => v.clear(),
            Buf::Switch(v) => v.clear(),
        }
    }
}

/// One page of the current cluster.
struct Page {
    /// Encoded page awaiting compression (`sealed == false`), or the sealed page (compressed,
    /// with its checksum); empty once written (unbuffered mode).
    bytes: Vec<u8>,
    n_elements: u32,
    /// Stored size without the checksum (known once sealed).
    stored: u64,
    sealed: bool,
    /// Absolute file offset when the page was written on its own (unbuffered mode).
    written_at: Option<u64>,
}

struct Column {
    ty: ColumnType,
    buf: Buf,
    pages: Vec<Page>,
    /// Elements of this column in the current cluster.
    in_cluster: u64,
}

/// How a field is filled. Every node counts its elements in the current cluster
/// (`counter`), which gives collections their end offsets and variants their indices.
#[derive(Clone)]
pub(crate) enum Plan {
    Scalar { col: usize, s: Scalar, counter: usize },
    String { idx: usize, chars: usize, counter: usize },
    /// Vectors, RVecs, sets (`Seq`), maps (`Map`: items are pairs), optional/unique_ptr.
    Collection { idx: usize, child: Box<Plan>, kind: CollKind, counter: usize },
    /// Pairs and tuples (members `_0`, `_1`, ...) and untyped records (named members).
    Record { children: Vec<Plan>, names: Vec<String>, counter: usize },
    Array { n: u64, child: Box<Plan>, counter: usize },
    Bitset { n: u64, col: usize, counter: usize },
    Variant { sw: usize, children: Vec<Plan>, counter: usize },
    Wrapper { child: Box<Plan>, counter: usize },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CollKind {
    Seq,
    Map,
    Optional,
}

impl Plan {
    /// What the field holds, for error messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Plan::Scalar { s, .. } => crate::logical::typename::scalar_type_name(*s),
            Plan::String { .. } => "a string",
            Plan::Collection { .. } => "a collection",
            Plan::Record { .. } => "a record",
            Plan::Array { .. } => "an array",
            Plan::Bitset { .. } => "a bitset",
            Plan::Variant { .. } => "a variant",
            Plan::Wrapper { .. } => "an atomic",
        }
    }

    pub fn counter(&self) -> usize {
        match self {
            Plan::Scalar { counter, .. }
            | Plan::String { counter, .. }
            | Plan::Collection { counter, .. }
            | Plan::Record { counter, .. }
            | Plan::Array { counter, .. }
            | Plan::Bitset { counter, .. }
            | Plan::Variant { counter, .. }
            | Plan::Wrapper { counter, .. } => *counter,
        }
    }
}

/// A page ready to be placed: its position is the index of its chunk in its cluster (buffered
/// mode) or its absolute file offset (the page was written on its own, unbuffered mode).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SealedPage {
    pub n_elements: u32,
    pub stored: u64,
    pub position: u64,
}

/// The pages of one column in a sealed cluster.
#[derive(Debug, Clone)]
pub(crate) struct SealedColumn {
    pub n_elements: u64,
    pub pages: Vec<SealedPage>,
}

/// A complete, compressed cluster that can be placed anywhere in the file (its page positions
/// are relative to its blob's payload and its collection offsets are cluster-local).
#[derive(Debug, Default)]
pub(crate) struct SealedCluster {
    pub n_entries: u64,
    /// The sealed pages in file order (column by column), written back to back after the key
    /// header in one vectored write; empty when the pages were written already (unbuffered).
    pub chunks: Vec<Vec<u8>>,
    /// Whether page positions are relative to the blob's payload.
    pub relative: bool,
    pub columns: Vec<SealedColumn>,
    pub compression: u32,
    pub checksums: bool,
}

impl SealedCluster {
    /// Bytes of each chunk (sealed page), in file order.
    pub fn chunk_lens(&self) -> Vec<u64> {
        self.chunks.iter().map(|c| c.len() as u64).collect()
    }

    /// The cluster's descriptor once placed: its first entry and the first element of each
    /// column in the whole dataset, and the file offset of each chunk (for relative pages, whose
    /// position is their chunk's index).
    pub fn describe(&self, id: usize, first_entry: u64, first_elements: &[u64], chunk_offsets: &[u64]) -> Result<ClusterDescriptor> {
        let mut columns = Vec::with_capacity(self.columns.len());
        for (c, &first) in self.columns.iter().zip(first_elements) {
            let mut in_cluster = 0u64;
            let mut pages = Vec::with_capacity(c.pages.len());
            for p in &c.pages {
                let offset = if self.relative {
                    let at = usize::try_from(p.position).ok().and_then(|i| chunk_offsets.get(i));
                    *at.ok_or_else(|| Error::Internal(format!("page in chunk {} of a cluster placed as {} chunks", p.position, chunk_offsets.len())))?
                } else {
                    p.position
                };
                pages.push(PageDescriptor {
                    n_elements: p.n_elements,
                    has_checksum: self.checksums,
                    locator: crate::format::cursor::Locator { size: p.stored, offset },
                    first_in_cluster: in_cluster,
                });
                in_cluster += p.n_elements as u64;
            }
            columns.push(Some(ColumnRange { first_element: first, n_elements: c.n_elements, compression: self.compression, suppressed: false, pages }));
        }
        Ok(ClusterDescriptor { id, first_entry, n_entries: self.n_entries, columns })
    }
}

/// Where a builder's output goes.
pub(crate) trait ClusterOut {
    /// Takes a full cluster: writes it, or keeps it (`std::mem::take`); the page buffers left
    /// in `c.chunks` are reused by the builder.
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()>;
    /// Unbuffered mode: writes one sealed page now and returns its absolute file offset.
    fn page(&mut self, bytes: &[u8]) -> Result<u64>;
    /// Whether this output may take uncompressed pages as they fill in buffered mode
    /// (`WriteOptions::stream_uncompressed_pages`): the sequential writer's.
    fn pages_as_they_fill(&self) -> bool {
        false
    }
}

/// An output that takes nothing: the template builder of the parallel writer.
impl ClusterOut for () {
    fn cluster(&mut self, _: &mut SealedCluster) -> Result<()> {
        Err(Error::internal("the template builder cannot write"))
    }
    fn page(&mut self, _: &[u8]) -> Result<u64> {
        Err(Error::internal("the template builder cannot write"))
    }
}

/// Fills the columns of one cluster at a time and hands full clusters to its output.
pub(crate) struct ClusterBuilder<O: ClusterOut> {
    opts: WriteOptions,
    plans: Vec<(String, Plan)>,
    /// Elements per plan node in the current cluster.
    counts: Vec<u64>,
    cols: Vec<Column>,
    /// Entries in the current cluster.
    entries: u64,
    /// Entries filled since creation.
    pub filled: u64,
    /// Uncompressed bits buffered in the current cluster.
    unzipped_in_cluster: u64,
    /// Encoded pages waiting for compression (implicit MT), in bytes.
    pending_raw: u64,
    zipped_total: u64,
    unzipped_total: u64,
    /// Page buffers for reuse (allocating fresh memory for every page costs page faults).
    pool: Vec<Vec<u8>>,
    /// Capacity of the pooled buffers.
    pool_bytes: u64,
    /// Seconds spent compressing (and checksumming) pages.
    pub compress_seconds: f64,
    /// Clusters handed to the output.
    pub clusters: u64,
    /// The schema as types, for checking typed entries.
    exprs: Vec<(String, TypeExpr)>,
    /// The plans of the top-level fields (for typed entries).
    top_plans: Vec<Plan>,
    /// The Rust entry type last checked against the schema.
    typed_ok: Option<std::any::TypeId>,
    pub out: O,
}

/// Parses a schema of (field name, C++ type name).
pub(crate) fn parse_schema(schema: &[(&str, &str)]) -> Result<Vec<(String, TypeExpr)>> {
    schema.iter().map(|(f, t)| Ok((f.to_string(), parse(t).map_err(|e| Error::Invalid(format!("field '{f}': {e}")))?))).collect()
}

/// What [`build_schema`] makes: the top-level fields' plans, the columns, the number of counters.
type Schema = (Vec<(String, Plan)>, Vec<Column>, usize);

/// Turns a schema into field descriptors (appended to `desc`), plans and columns.
fn build_schema(desc: &mut Descriptor, schema: &[(String, TypeExpr)], compressed: bool) -> Result<Schema> {
    let mut cols = Vec::new();
    let mut plans: Vec<(String, Plan)> = Vec::new();
    let mut n_counters = 0usize;
    for (fname, te) in schema {
        check_field_name(fname)?;
        if plans.iter().any(|(n, _)| n == fname) {
            return Err(Error::Invalid(format!("field '{fname}' appears twice in the schema")));
        }
        let plan = add_field(desc, &mut cols, &mut n_counters, None, fname, te, compressed, Origin { ext: None, mult: Some(1) })?;
        plans.push((fname.to_string(), plan));
    }
    Ok((plans, cols, n_counters))
}

fn check_field_name(name: &str) -> Result<()> {
    if name.is_empty() || name.contains(['.', '/', '\\', ' ']) {
        return Err(Error::Invalid(format!("field name '{name}' is empty or contains '.', '/', '\\' or a space")));
    }
    Ok(())
}

impl<O: ClusterOut> ClusterBuilder<O> {
    /// A builder for `schema`, whose fields and columns are appended to `desc`.
    pub fn new(desc: &mut Descriptor, schema: &[(String, TypeExpr)], opts: WriteOptions, out: O) -> Result<Self> {
        compression::Algorithm::from_settings(opts.compression)?;
        let compressed = !opts.compression.is_multiple_of(100);
        let (plans, cols, n_counters) = build_schema(desc, schema, compressed)?;
        Ok(Self::assemble(opts, plans, cols, n_counters, schema.to_vec(), out))
    }

    fn assemble(opts: WriteOptions, plans: Vec<(String, Plan)>, mut cols: Vec<Column>, n_counters: usize, exprs: Vec<(String, TypeExpr)>, out: O) -> Self {
        // Adaptive pages, as ROOT's: a column's buffer starts with room for the initial page
        // size and doubles as values come, up to the maximum page size (where the page is sealed
        // and the buffer reused), so sparse columns stay small.
        for c in &mut cols {
            let bits = c.ty.fixed_bits().unwrap_or(32) as u64;
            let n = (opts.initial_unzipped_page_size.min(opts.max_unzipped_page_size) * 8 / bits).max(1);
            c.buf.reserve(n as usize);
        }
        ClusterBuilder {
            opts,
            plans: plans.clone(),
            counts: vec![0; n_counters],
            cols,
            entries: 0,
            filled: 0,
            unzipped_in_cluster: 0,
            pending_raw: 0,
            zipped_total: 0,
            unzipped_total: 0,
            pool: Vec::new(),
            pool_bytes: 0,
            compress_seconds: 0.0,
            clusters: 0,
            top_plans: plans.iter().map(|(_, p)| p.clone()).collect(),
            exprs,
            typed_ok: None,
            out,
        }
    }

    /// An empty builder for the same schema with another output and options (fill contexts).
    pub fn blank<P: ClusterOut>(&self, opts: WriteOptions, out: P) -> ClusterBuilder<P> {
        let cols = self.cols.iter().map(|c| Column { ty: c.ty, buf: c.buf.empty_like(), pages: Vec::new(), in_cluster: 0 }).collect();
        ClusterBuilder::assemble(opts, self.plans.clone(), cols, self.counts.len(), self.exprs.clone(), out)
    }

    /// Late model extension: adds a top-level field (see `Writer::add_field`); `entries_before`
    /// is the number of entries of the dataset before the current cluster's first.
    pub fn add_field(&mut self, desc: &mut Descriptor, name: &str, type_name: &str, entries_before: u64) -> Result<()> {
        check_field_name(name)?;
        if self.plans.iter().any(|(n, _)| n == name) {
            return Err(Error::Invalid(format!("field '{name}' exists already")));
        }
        let te = parse(type_name).map_err(|e| Error::Invalid(format!("field '{name}': {e}")))?;
        let compressed = !self.opts.compression.is_multiple_of(100);
        let mut n_counters = self.counts.len();
        // Elements already in the current cluster are implicit too: the new columns' pages in this
        // cluster start after them.
        let origin = Origin { ext: Some(entries_before + self.entries), mult: Some(1) };
        let plan = add_field(desc, &mut self.cols, &mut n_counters, None, name, &te, compressed, origin)?;
        self.counts.resize(n_counters, 0);
        self.plans.push((name.to_string(), plan));
        self.exprs.push((name.to_string(), te));
        self.top_plans = self.plans.iter().map(|(_, p)| p.clone()).collect();
        self.typed_ok = None;
        Ok(())
    }

    /// Fills one typed entry (see [`crate::write::typed`]).
    pub fn fill_typed<E: crate::write::typed::Entry>(&mut self, e: &E) -> Result<()> {
        let id = std::any::TypeId::of::<E>();
        if self.typed_ok != Some(id) {
            let want = E::fields();
            if want != self.exprs {
                let show = |f: &[(String, TypeExpr)]| f.iter().map(|(n, t)| format!("{n}: {}", if t.name().is_empty() { "record".to_string() } else { t.name() })).collect::<Vec<_>>().join(", ");
                return Err(Error::Invalid(format!("the Rust type {} has the fields ({}) but the RNTuple has ({})", std::any::type_name::<E>(), show(&want), show(&self.exprs))));
            }
            self.typed_ok = Some(id);
        }
        let children = std::mem::take(&mut self.top_plans);
        let r = {
            let mut w = crate::write::typed::RecordWriter::top(self, &children);
            e.put_fields(&mut w).and_then(|_| w.finish())
        };
        self.top_plans = children;
        r?;
        self.entries += 1;
        self.filled += 1;
        self.maybe_flush()
    }

    /// The page buffer budget in bytes: encoded pages awaiting compression beyond it are
    /// compressed at once, largest first (0 = auto: twice the target cluster size when
    /// compressing, once when not, as ROOT).
    fn page_budget(&self) -> u64 {
        match self.opts.page_buffer_budget {
            0 if self.opts.compression.is_multiple_of(100) => self.opts.approx_zipped_cluster_size,
            0 => 2 * self.opts.approx_zipped_cluster_size,
            b => b,
        }
    }

    /// Fills one entry: a [`Value::Record`] with one member per top-level field, in any order.
    pub fn fill(&mut self, entry: &Value) -> Result<()> {
        let Value::Record(members) = entry else {
            return Err(Error::Invalid("an entry must be a record of top-level fields".into()));
        };
        // Validate the whole entry first, so a bad value leaves no partial entry behind.
        let mut ordered = Vec::with_capacity(self.plans.len());
        for (name, plan) in &self.plans {
            let v = members.iter().find(|(k, _)| k == name).map(|(_, v)| v).ok_or_else(|| Error::Invalid(format!("entry lacks field '{name}'")))?;
            check(plan, v, name)?;
            ordered.push(v);
        }
        if members.len() != self.plans.len() {
            let unknown: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).filter(|k| !self.plans.iter().any(|(n, _)| n == k)).collect();
            return Err(Error::Invalid(format!("entry has fields that are not in the schema: {}", unknown.join(", "))));
        }
        let plans = std::mem::take(&mut self.plans);
        let mut r = Ok(());
        for ((_, plan), v) in plans.iter().zip(ordered) {
            r = self.put(plan, v);
            if r.is_err() {
                break;
            }
        }
        self.plans = plans;
        r?;
        self.entries += 1;
        self.filled += 1;
        self.maybe_flush()?;
        Ok(())
    }

    /// ROOT's cluster flush rule: the uncompressed cluster reaches the maximum, or the target
    /// compressed size divided by the compression ratio seen so far (0.5 before any page).
    fn maybe_flush(&mut self) -> Result<()> {
        // Uncompressed data has a ratio of 1 (as in ROOT, whose first uncompressed cluster closes at
        // the target size); otherwise 0.5 until pages were compressed, then the average so far.
        let ratio = if self.opts.compression.is_multiple_of(100) {
            1.0
        } else if self.unzipped_total > 0 {
            self.zipped_total as f64 / self.unzipped_total as f64
        } else {
            0.5
        };
        let est = (self.opts.approx_zipped_cluster_size as f64 / ratio.max(1e-6)) as u64;
        let bytes = self.unzipped_in_cluster / 8;
        if bytes >= self.opts.max_unzipped_cluster_size || bytes >= est {
            self.flush_cluster()?;
        }
        Ok(())
    }

    fn push(&mut self, col: usize, f: impl FnOnce(&mut Buf)) -> Result<()> {
        let c = &mut self.cols[col];
        f(&mut c.buf);
        c.in_cluster += 1;
        let bits = c.ty.fixed_bits().unwrap_or(32) as u64;
        self.unzipped_in_cluster += bits;
        if (c.buf.len() as u64 * bits).div_ceil(8) >= self.opts.max_unzipped_page_size {
            self.seal_page(col)?;
        }
        Ok(())
    }

    fn put(&mut self, plan: &Plan, v: &Value) -> Result<()> {
        self.counts[plan.counter()] += 1;
        match plan {
            Plan::Scalar { col, s, .. } => {
                let s = *s;
                self.push(*col, |b| put_scalar(b, s, v))
            }
            Plan::String { idx, chars, .. } => {
                let Value::String(st) = v else { return Err(Error::Invalid("expected a string".into())) };
                for &byte in st.as_bytes() {
                    self.push(*chars, |b| {
                        if let Buf::U8(x) = b {
                            x.push(byte)
                        }
                    })?;
                }
                let end = self.cols[*chars].in_cluster;
                self.push_index(*idx, end)
            }
            Plan::Collection { idx, child, kind, .. } => {
                match (kind, v) {
                    (CollKind::Optional, Value::Null) => {}
                    (CollKind::Optional, v) => self.put(child, v)?,
                    // An untyped collection of records also takes an optional record (0 or 1 item).
                    (CollKind::Seq, Value::Null) if matches!(**child, Plan::Record { .. }) => {}
                    (CollKind::Seq, Value::Record(_)) if matches!(**child, Plan::Record { .. }) => self.put(child, v)?,
                    (_, Value::List(items)) => {
                        for it in items {
                            self.put(child, it)?;
                        }
                    }
                    _ => return Err(Error::Invalid("expected a list".into())),
                }
                let end = self.counts[child.counter()];
                self.push_index(*idx, end)
            }
            Plan::Record { children, names, .. } => {
                let items = record_items(names, v).map_err(Error::Invalid)?;
                for (c, it) in children.iter().zip(items) {
                    self.put(c, it)?;
                }
                Ok(())
            }
            Plan::Array { child, .. } => {
                let Value::List(items) = v else { return Err(Error::Invalid("expected a list".into())) };
                for it in items {
                    self.put(child, it)?;
                }
                Ok(())
            }
            Plan::Bitset { col, .. } => {
                let Value::List(items) = v else { return Err(Error::Invalid("expected a list of booleans".into())) };
                for it in items {
                    let bit = matches!(it, Value::Bool(true)) || matches!(it, Value::Int(x) if *x != 0) || matches!(it, Value::UInt(x) if *x != 0);
                    self.push(*col, |b| {
                        if let Buf::Bool(x) = b {
                            x.push(bit)
                        }
                    })?;
                }
                Ok(())
            }
            Plan::Variant { sw, children, .. } => {
                let (index, tag) = match choose_alternative(children, v) {
                    None => (0u64, 0u32),
                    Some(k) => {
                        let index = self.counts[children[k].counter()];
                        self.put(&children[k], v)?;
                        (index, k as u32 + 1)
                    }
                };
                self.push(*sw, |b| {
                    if let Buf::Switch(x) = b {
                        x.push((index, tag))
                    }
                })
            }
            Plan::Wrapper { child, .. } => self.put(child, v),
        }
    }

    fn push_index(&mut self, col: usize, end: u64) -> Result<()> {
        self.push(col, |b| {
            if let Buf::U64(x) = b {
                x.push(end)
            }
        })
    }

    /// Whether full pages stay in memory until their cluster is written (`WriteOptions::buffered`),
    /// except for the pages the sequential writer streams (`WriteOptions::stream_uncompressed_pages`:
    /// uncompressed pages, and with implicit MT off every page, compressed on the filling thread
    /// as it fills; not with direct I/O, whose aligned writes want whole clusters).
    fn buffered(&self) -> bool {
        let sealed_as_filled = self.opts.compression.is_multiple_of(100) || !self.opts.use_implicit_mt;
        let stream = self.opts.stream_uncompressed_pages && sealed_as_filled && !self.opts.use_direct_io && self.out.pages_as_they_fill();
        self.opts.buffered && !stream
    }

    fn seal_page(&mut self, col: usize) -> Result<()> {
        if self.cols[col].buf.len() == 0 {
            return Ok(());
        }
        let buffered = self.buffered();
        let mut raw = self.take_buf();
        let c = &mut self.cols[col];
        let n = c.buf.len();
        raw.clear();
        raw.reserve(c.ty.fixed_bits().unwrap_or(8) as usize * n / 8 + 16);
        encode_page(c.ty, c.buf.values(), &mut raw)?;
        if self.opts.use_implicit_mt && buffered {
            self.pending_raw += raw.len() as u64;
            c.pages.push(Page { bytes: raw, n_elements: n as u32, stored: 0, sealed: false, written_at: None });
            c.buf.clear();
            if self.pending_raw > self.page_budget() {
                self.compress_pending()?;
            }
            return Ok(());
        }
        c.buf.clear();
        let t = Instant::now();
        let unzipped = raw.len() as u64;
        let spare = self.take_buf();
        let (z, spare) = seal(raw, spare, self.opts.compression, self.opts.enable_page_checksums)?;
        self.recycle(spare);
        self.compress_seconds += t.elapsed().as_secs_f64();
        let stored = (z.len() - 8 * self.opts.enable_page_checksums as usize) as u64;
        self.zipped_total += stored;
        self.unzipped_total += unzipped;
        let page = if buffered {
            Page { bytes: z, n_elements: n as u32, stored, sealed: true, written_at: None }
        } else {
            let at = self.out.page(&z)?;
            self.recycle(z);
            Page { bytes: Vec::new(), n_elements: n as u32, stored, sealed: true, written_at: Some(at) }
        };
        self.cols[col].pages.push(page);
        Ok(())
    }

    /// Compresses the encoded pages waiting in the cluster on several threads (implicit MT),
    /// largest first.
    fn compress_pending(&mut self) -> Result<()> {
        let n_jobs = self.cols.iter().flat_map(|c| c.pages.iter()).filter(|p| !p.sealed).count();
        if n_jobs == 0 {
            return Ok(());
        }
        let spares: Vec<Vec<u8>> = (0..n_jobs).map(|_| self.take_buf()).collect();
        let mut jobs: Vec<(&mut Page, Vec<u8>)> = self.cols.iter_mut().flat_map(|c| c.pages.iter_mut()).filter(|p| !p.sealed).zip(spares).collect();
        let t = Instant::now();
        let threads = if self.opts.imt_threads > 0 {
            self.opts.imt_threads
        } else {
            std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
        }
        .min(jobs.len());
        let (settings, checksums) = (self.opts.compression, self.opts.enable_page_checksums);
        let unzipped: u64 = jobs.iter().map(|j| j.0.bytes.len() as u64).sum();
        // Largest pages first, handed out one at a time, so that the threads finish together.
        jobs.sort_by_key(|j| std::cmp::Reverse(j.0.bytes.len()));
        let seal_job = |job: &mut (&mut Page, Vec<u8>)| -> Result<()> {
            let raw = std::mem::take(&mut job.0.bytes);
            let (z, spare) = seal(raw, std::mem::take(&mut job.1), settings, checksums)?;
            job.0.stored = (z.len() - 8 * checksums as usize) as u64;
            job.0.bytes = z;
            job.0.sealed = true;
            job.1 = spare;
            Ok(())
        };
        if threads <= 1 {
            for job in jobs.iter_mut() {
                seal_job(job)?;
            }
        } else {
            let queue = std::sync::Mutex::new(jobs.iter_mut());
            let results: Vec<Result<()>> = std::thread::scope(|sc| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        sc.spawn(|| loop {
                            let next = match queue.lock() {
                                Ok(mut q) => q.next(),
                                Err(_) => return Err(Error::internal("compression queue poisoned")),
                            };
                            match next {
                                Some(job) => seal_job(job)?,
                                None => return Ok(()),
                            }
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::internal("a compression thread panicked")))).collect()
            });
            for r in results {
                r?;
            }
        }
        let zipped: u64 = jobs.iter().map(|p| p.0.stored).sum();
        let spares: Vec<Vec<u8>> = jobs.into_iter().map(|j| j.1).collect();
        for b in spares {
            self.recycle(b);
        }
        self.zipped_total += zipped;
        self.unzipped_total += unzipped;
        self.pending_raw = 0;
        self.compress_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Seals the current cluster and hands it to the output; a cluster without entries is
    /// skipped.
    pub fn flush_cluster(&mut self) -> Result<()> {
        if self.entries == 0 {
            return Ok(());
        }
        for i in 0..self.cols.len() {
            self.seal_page(i)?;
        }
        self.compress_pending()?;
        let mut chunks = Vec::with_capacity(self.cols.iter().map(|c| c.pages.len()).sum());
        let relative = self.buffered();
        let mut columns = Vec::with_capacity(self.cols.len());
        for c in &mut self.cols {
            let mut pages = Vec::with_capacity(c.pages.len());
            for p in c.pages.drain(..) {
                let position = match p.written_at {
                    Some(at) => at,
                    None => {
                        chunks.push(p.bytes);
                        chunks.len() as u64 - 1
                    }
                };
                pages.push(SealedPage { n_elements: p.n_elements, stored: p.stored, position });
            }
            columns.push(SealedColumn { n_elements: c.in_cluster, pages });
            c.in_cluster = 0;
        }
        let mut sealed = SealedCluster {
            n_entries: self.entries,
            chunks,
            relative,
            columns,
            compression: self.opts.compression,
            checksums: self.opts.enable_page_checksums,
        };
        self.entries = 0;
        self.unzipped_in_cluster = 0;
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.clusters += 1;
        let r = self.out.cluster(&mut sealed);
        for b in sealed.chunks {
            self.recycle(b);
        }
        r
    }

    /// Keeps a page buffer for reuse, up to a cluster's worth of memory.
    fn recycle(&mut self, mut b: Vec<u8>) {
        if b.capacity() > 0 && self.pool.len() < 4096 && self.pool_bytes < self.opts.approx_zipped_cluster_size {
            b.clear();
            self.pool_bytes += b.capacity() as u64;
            self.pool.push(b);
        }
    }

    /// A page buffer from the pool (or a new one).
    fn take_buf(&mut self) -> Vec<u8> {
        match self.pool.pop() {
            Some(b) => {
                self.pool_bytes -= b.capacity() as u64;
                b
            }
            None => Vec::new(),
        }
    }
}

fn scalar_column(s: Scalar, compressed: bool) -> (ColumnType, Buf) {
    use ColumnType as C;
    let (split, plain, buf) = match s {
        Scalar::Bool => (C::Bit, C::Bit, Buf::Bool(Vec::new())),
        Scalar::Char => (C::Char, C::Char, Buf::U8(Vec::new())),
        Scalar::Byte => (C::Byte, C::Byte, Buf::U8(Vec::new())),
        Scalar::I8 => (C::Int8, C::Int8, Buf::I8(Vec::new())),
        Scalar::U8 => (C::UInt8, C::UInt8, Buf::U8(Vec::new())),
        Scalar::I16 => (C::SplitInt16, C::Int16, Buf::I16(Vec::new())),
        Scalar::U16 => (C::SplitUInt16, C::UInt16, Buf::U16(Vec::new())),
        Scalar::I32 => (C::SplitInt32, C::Int32, Buf::I32(Vec::new())),
        Scalar::U32 => (C::SplitUInt32, C::UInt32, Buf::U32(Vec::new())),
        Scalar::I64 => (C::SplitInt64, C::Int64, Buf::I64(Vec::new())),
        Scalar::U64 => (C::SplitUInt64, C::UInt64, Buf::U64(Vec::new())),
        Scalar::F32 => (C::SplitReal32, C::Real32, Buf::F32(Vec::new())),
        Scalar::F64 => (C::SplitReal64, C::Real64, Buf::F64(Vec::new())),
    };
    (if compressed { split } else { plain }, buf)
}

/// Which alternative of a variant holds `v`: the first one whose type accepts it; `None` for
/// `Value::Null` (valueless).
fn choose_alternative(children: &[Plan], v: &Value) -> Option<usize> {
    if matches!(v, Value::Null) {
        return None;
    }
    // Prefer an exact kind match (integers to integer alternatives, floats to floating ones).
    let exact = children.iter().position(|c| match (c, v) {
        (Plan::Scalar { s: Scalar::F32 | Scalar::F64, .. }, Value::F32(_) | Value::F64(_)) => true,
        (Plan::Scalar { s: Scalar::Bool, .. }, Value::Bool(_)) => true,
        (Plan::Scalar { s, .. }, Value::Int(_) | Value::UInt(_)) => !matches!(s, Scalar::F32 | Scalar::F64 | Scalar::Bool),
        _ => false,
    });
    exact.or_else(|| children.iter().position(|c| check(c, v, "").is_ok()))
}

fn check(plan: &Plan, v: &Value, path: &str) -> Result<()> {
    let bad = |want: &str| Err(Error::Invalid(format!("field '{path}': expected {want}, got {}", v.to_json())));
    match plan {
        Plan::Scalar { s, .. } => match (s, v) {
            (Scalar::Bool, Value::Bool(_)) => Ok(()),
            (Scalar::F32 | Scalar::F64, v) if v.as_f64().is_some() => Ok(()),
            (Scalar::Bool, _) => bad("a boolean"),
            (Scalar::F32 | Scalar::F64, _) => bad("a number"),
            (s, Value::Int(i)) => match int_range(*s) {
                (lo, hi) if (*i as i128) >= lo && (*i as i128) <= hi => Ok(()),
                _ => bad(&format!("an integer in the range of {s:?}")),
            },
            (s, Value::UInt(u)) => match int_range(*s) {
                (_, hi) if (*u as i128) <= hi => Ok(()),
                _ => bad(&format!("an integer in the range of {s:?}")),
            },
            _ => bad("an integer"),
        },
        Plan::String { .. } => match v {
            Value::String(_) => Ok(()),
            _ => bad("a string"),
        },
        Plan::Collection { child, kind, .. } => match (kind, v) {
            (CollKind::Optional, Value::Null) => Ok(()),
            (CollKind::Optional, v) => check(child, v, &format!("{path}._0")),
            (CollKind::Seq, Value::Null) if matches!(**child, Plan::Record { .. }) => Ok(()),
            (CollKind::Seq, Value::Record(_)) if matches!(**child, Plan::Record { .. }) => check(child, v, &format!("{path}._0")),
            (_, Value::List(items)) => items.iter().try_for_each(|it| check(child, it, &format!("{path}._0"))),
            _ => bad("a list"),
        },
        Plan::Record { children, names, .. } => {
            let items = match record_items(names, v) {
                Ok(items) => items,
                Err(e) => return Err(Error::Invalid(format!("field '{path}': {e}"))),
            };
            if items.len() != children.len() {
                return bad(&format!("{} members", children.len()));
            }
            children.iter().zip(items).zip(names).try_for_each(|((c, it), name)| check(c, it, &format!("{path}.{name}")))
        }
        Plan::Array { n, child, .. } => match v {
            Value::List(items) if items.len() as u64 == *n => items.iter().try_for_each(|it| check(child, it, &format!("{path}._0"))),
            _ => bad(&format!("a list of {n} values")),
        },
        Plan::Bitset { n, .. } => match v {
            Value::List(items) if items.len() as u64 == *n && items.iter().all(|b| matches!(b, Value::Bool(_) | Value::Int(0 | 1) | Value::UInt(0 | 1))) => Ok(()),
            _ => bad(&format!("a list of {n} booleans")),
        },
        Plan::Variant { children, .. } => match v {
            Value::Null => Ok(()),
            _ if choose_alternative(children, v).is_some() => Ok(()),
            _ => bad("a value of one of the variant's alternatives"),
        },
        Plan::Wrapper { child, .. } => check(child, v, path),
    }
}

fn int_range(s: Scalar) -> (i128, i128) {
    match s {
        Scalar::Char | Scalar::I8 => (i8::MIN as i128, i8::MAX as i128),
        Scalar::Byte | Scalar::U8 => (0, u8::MAX as i128),
        Scalar::I16 => (i16::MIN as i128, i16::MAX as i128),
        Scalar::U16 => (0, u16::MAX as i128),
        Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
        Scalar::U32 => (0, u32::MAX as i128),
        Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
        Scalar::U64 => (0, u64::MAX as i128),
        _ => (i128::MIN, i128::MAX),
    }
}

fn put_scalar(b: &mut Buf, s: Scalar, v: &Value) {
    let (i, u, f) = match *v {
        Value::Int(i) => (i, i as u64, i as f64),
        Value::UInt(u) => (u as i64, u, u as f64),
        Value::Bool(b) => (b as i64, b as u64, b as u8 as f64),
        Value::F32(x) => (x as i64, x as u64, x as f64),
        Value::F64(x) => (x as i64, x as u64, x),
        _ => (0, 0, 0.0),
    };
    match (b, s) {
        (Buf::Bool(x), _) => x.push(u != 0),
        (Buf::U8(x), _) => x.push(u as u8),
        (Buf::I8(x), _) => x.push(i as i8),
        (Buf::I16(x), _) => x.push(i as i16),
        (Buf::U16(x), _) => x.push(u as u16),
        (Buf::I32(x), _) => x.push(i as i32),
        (Buf::U32(x), _) => x.push(u as u32),
        (Buf::I64(x), _) => x.push(i),
        (Buf::U64(x), _) => x.push(u),
        (Buf::F32(x), _) => x.push(match *v {
            Value::F32(y) => y,
            _ => v.as_f64().unwrap_or(f) as f32,
        }),
        (Buf::F64(x), _) => x.push(v.as_f64().unwrap_or(f)),
        (Buf::Switch(_), _) => {}
    }
}

#[allow(clippy::too_many_arguments)]
/// Where a new field's columns start: `ext` is `Some(entries written so far)` for a field added
/// by late model extension, `mult` the number of column elements per entry for columns without a
/// collection or variant ancestor (`None` below one). Such columns of a late field are deferred:
/// the entries before it read as default values.
#[derive(Clone, Copy)]
struct Origin {
    ext: Option<u64>,
    mult: Option<u64>,
}

impl Origin {
    fn times(self, n: u64) -> Origin {
        Origin { ext: self.ext, mult: self.mult.map(|m| m * n) }
    }
    fn nested(self) -> Origin {
        Origin { ext: self.ext, mult: None }
    }
    fn first_element(self) -> u64 {
        match (self.ext, self.mult) {
            (Some(n), Some(m)) => n * m,
            _ => 0,
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn add_field(desc: &mut Descriptor, cols: &mut Vec<Column>, counters: &mut usize, parent: Option<u32>, name: &str, te: &TypeExpr, compressed: bool, origin: Origin) -> Result<Plan> {
    if let Some(bad) = misplaced_record(te) {
        return Err(Error::Unsupported(format!("field '{name}': an untyped record (derived struct) inside {bad}; records go in fields, vectors and optionals")));
    }
    let id = desc.fields.len() as u32;
    let (role, repetition, alias) = match te {
        TypeExpr::Collection(..) | TypeExpr::Map(..) | TypeExpr::Optional(..) => (Role::Collection, None, String::new()),
        TypeExpr::Tuple(..) | TypeExpr::Record(..) => (Role::Record, None, String::new()),
        TypeExpr::Variant(..) => (Role::Variant, None, String::new()),
        TypeExpr::Array(_, n) | TypeExpr::Bitset(n) => (Role::Leaf, Some(*n), String::new()),
        TypeExpr::Scalar(_, Some(a)) => (Role::Leaf, None, a.clone()),
        _ => (Role::Leaf, None, String::new()),
    };
    desc.fields.push(FieldDescriptor {
        id,
        field_version: 0,
        type_version: 0,
        parent,
        role,
        flags: 0,
        name: name.into(),
        type_name: te.name(),
        type_alias: alias,
        description: String::new(),
        repetition,
        projection_source: None,
        type_checksum: None,
        children: vec![],
        columns: vec![],
        from_extension: origin.ext.is_some(),
    });
    if let Some(p) = parent {
        desc.fields[p as usize].children.push(id);
    }
    let counter = *counters;
    *counters += 1;
    let add_col = |desc: &mut Descriptor, cols: &mut Vec<Column>, ty: ColumnType, buf: Buf, o: Origin| -> usize {
        let cid = desc.columns.len() as u32;
        let first = o.first_element();
        desc.columns.push(ColumnDescriptor {
            id: cid,
            column_type: ty.to_u16(),
            bits_on_storage: ty.fixed_bits().unwrap_or(0),
            field_id: id,
            flags: if first > 0 { 1 } else { 0 },
            representation: 0,
            first_element: first,
            suppressed_deferred: false,
            value_range: None,
            from_extension: o.ext.is_some(),
        });
        desc.fields[id as usize].columns.push(cid);
        cols.push(Column { ty, buf, pages: Vec::new(), in_cluster: 0 });
        cols.len() - 1
    };
    let index_type = if compressed { ColumnType::SplitIndex64 } else { ColumnType::Index64 };
    Ok(match te {
        TypeExpr::Scalar(s, alias) => {
            // Double32_t is stored as SplitReal32/Real32, as ROOT does.
            let (ct, buf) = if alias.is_some() {
                (if compressed { ColumnType::SplitReal32 } else { ColumnType::Real32 }, Buf::F32(Vec::new()))
            } else {
                scalar_column(*s, compressed)
            };
            let col = add_col(desc, cols, ct, buf, origin);
            Plan::Scalar { col, s: if alias.is_some() { Scalar::F32 } else { *s }, counter }
        }
        TypeExpr::String => {
            let idx = add_col(desc, cols, index_type, Buf::U64(Vec::new()), origin);
            let chars = add_col(desc, cols, ColumnType::Char, Buf::U8(Vec::new()), origin.nested());
            Plan::String { idx, chars, counter }
        }
        TypeExpr::Record(members) => {
            let mut children = Vec::new();
            for (i, (m, t)) in members.iter().enumerate() {
                check_field_name(m).map_err(|e| Error::Invalid(format!("field '{name}': {e}")))?;
                if members[..i].iter().any(|(o, _)| o == m) {
                    return Err(Error::Invalid(format!("field '{name}': member '{m}' appears twice")));
                }
                children.push(add_field(desc, cols, counters, Some(id), m, t, compressed, origin)?);
            }
            Plan::Record { children, names: members.iter().map(|(m, _)| m.clone()).collect(), counter }
        }
        TypeExpr::Collection(_, item) | TypeExpr::Optional(_, item) => {
            let idx = add_col(desc, cols, index_type, Buf::U64(Vec::new()), origin);
            let child = add_field(desc, cols, counters, Some(id), "_0", item, compressed, origin.nested())?;
            let kind = if matches!(te, TypeExpr::Optional(..)) { CollKind::Optional } else { CollKind::Seq };
            Plan::Collection { idx, child: Box::new(child), kind, counter }
        }
        TypeExpr::Map(_, k, v) => {
            let idx = add_col(desc, cols, index_type, Buf::U64(Vec::new()), origin);
            let pair = TypeExpr::Tuple("std::pair".into(), vec![(**k).clone(), (**v).clone()]);
            let child = add_field(desc, cols, counters, Some(id), "_0", &pair, compressed, origin.nested())?;
            Plan::Collection { idx, child: Box::new(child), kind: CollKind::Map, counter }
        }
        TypeExpr::Tuple(_, items) => {
            let mut children = Vec::new();
            for (i, it) in items.iter().enumerate() {
                children.push(add_field(desc, cols, counters, Some(id), &format!("_{i}"), it, compressed, origin)?);
            }
            Plan::Record { children, names: (0..items.len()).map(|i| format!("_{i}")).collect(), counter }
        }
        TypeExpr::Array(item, n) => {
            let child = add_field(desc, cols, counters, Some(id), "_0", item, compressed, origin.times(*n))?;
            Plan::Array { n: *n, child: Box::new(child), counter }
        }
        TypeExpr::Bitset(n) => {
            let col = add_col(desc, cols, ColumnType::Bit, Buf::Bool(Vec::new()), origin.times(*n));
            Plan::Bitset { n: *n, col, counter }
        }
        TypeExpr::Variant(items) => {
            let sw = add_col(desc, cols, ColumnType::Switch, Buf::Switch(Vec::new()), origin);
            let mut children = Vec::new();
            for (i, it) in items.iter().enumerate() {
                children.push(add_field(desc, cols, counters, Some(id), &format!("_{i}"), it, compressed, origin.nested())?);
            }
            Plan::Variant { sw, children, counter }
        }
        TypeExpr::Atomic(item) => {
            let child = add_field(desc, cols, counters, Some(id), "_0", item, compressed, origin)?;
            Plan::Wrapper { child: Box::new(child), counter }
        }
    })
}

/// Column access for typed filling.
pub(crate) trait TypedCols {
    fn extend_scalars(&mut self, col: usize, v: crate::write::typed::ScalarSlice<'_>) -> Result<()>;
    fn col_len(&self, col: usize) -> u64;
    fn push_index(&mut self, col: usize, end: u64) -> Result<()>;
    fn counts(&mut self) -> &mut [u64];
}

impl<O: ClusterOut> TypedCols for ClusterBuilder<O> {
    fn extend_scalars(&mut self, col: usize, v: crate::write::typed::ScalarSlice<'_>) -> Result<()> {
        use crate::write::typed::ScalarSlice as S;
        let kind_ok = matches!(
            (&v, &self.cols[col].buf),
            (S::Bool(_), Buf::Bool(_))
                | (S::I8(_), Buf::I8(_))
                | (S::U8(_), Buf::U8(_))
                | (S::I16(_), Buf::I16(_))
                | (S::U16(_), Buf::U16(_))
                | (S::I32(_), Buf::I32(_))
                | (S::U32(_), Buf::U32(_))
                | (S::I64(_), Buf::I64(_))
                | (S::U64(_), Buf::U64(_))
                | (S::F32(_), Buf::F32(_))
                | (S::F64(_), Buf::F64(_))
        );
        if !kind_ok {
            return Err(Error::Internal(format!("values {v:?} for a column of another type")));
        }
        match v {
            S::Bool(x) => self.extend_col(col, x, buf_bool),
            S::I8(x) => self.extend_col(col, x, buf_i8),
            S::U8(x) => self.extend_col(col, x, buf_u8),
            S::I16(x) => self.extend_col(col, x, buf_i16),
            S::U16(x) => self.extend_col(col, x, buf_u16),
            S::I32(x) => self.extend_col(col, x, buf_i32),
            S::U32(x) => self.extend_col(col, x, buf_u32),
            S::I64(x) => self.extend_col(col, x, buf_i64),
            S::U64(x) => self.extend_col(col, x, buf_u64),
            S::F32(x) => self.extend_col(col, x, buf_f32),
            S::F64(x) => self.extend_col(col, x, buf_f64),
        }
    }
    fn col_len(&self, col: usize) -> u64 {
        self.cols[col].in_cluster
    }
    fn push_index(&mut self, col: usize, end: u64) -> Result<()> {
        ClusterBuilder::push_index(self, col, end)
    }
    fn counts(&mut self) -> &mut [u64] {
        &mut self.counts
    }
}

/// Where an untyped record sits inside a type that needs a C++ name for it (anything but a
/// collection, an optional or another record), the name of that type.
/// The members of a record value in the order of the record's `names`: a list is taken by
/// position; a record by member name (any order), or by position when its names are not the
/// record's but as many (`first`/`second` for a pair's `_0`/`_1`).
fn record_items<'v>(names: &[String], v: &'v Value) -> std::result::Result<Vec<&'v Value>, String> {
    match v {
        Value::List(l) => Ok(l.iter().collect()),
        Value::Record(m) => {
            let by_name: Option<Vec<&Value>> = names.iter().map(|n| m.iter().find(|(k, _)| k == n).map(|(_, v)| v)).collect();
            match by_name {
                Some(items) if m.len() == names.len() => Ok(items),
                _ if m.len() == names.len() && !m.iter().any(|(k, _)| names.contains(k)) => Ok(m.iter().map(|(_, v)| v).collect()),
                _ => {
                    let missing: Vec<&str> = names.iter().filter(|n| !m.iter().any(|(k, _)| k == *n)).map(|s| s.as_str()).collect();
                    let unknown: Vec<&str> = m.iter().filter(|(k, _)| !names.contains(k)).map(|(k, _)| k.as_str()).collect();
                    Err(format!("expected a record with members {} (missing: {}; unknown: {})", names.join(", "), or_none(&missing), or_none(&unknown)))
                }
            }
        }
        _ => Err(format!("expected a record with members {} or a list of them", names.join(", "))),
    }
}

fn or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn misplaced_record(te: &TypeExpr) -> Option<String> {
    let inner: Vec<&TypeExpr> = match te {
        // Untyped collections (empty type name) hold any item, named or not.
        TypeExpr::Collection(_, i) | TypeExpr::Optional(_, i) if i.name().is_empty() => return None,
        TypeExpr::Record(_) | TypeExpr::Scalar(..) | TypeExpr::String | TypeExpr::Bitset(_) => return None,
        TypeExpr::Collection(_, i) | TypeExpr::Optional(_, i) | TypeExpr::Array(i, _) | TypeExpr::Atomic(i) => vec![i],
        TypeExpr::Map(_, k, v) => vec![k, v],
        TypeExpr::Tuple(_, items) | TypeExpr::Variant(items) => items.iter().collect(),
    };
    inner.iter().any(|i| i.name().is_empty()).then(|| te.name())
}

/// Compresses an encoded page (into `spare`) and appends its XXH3 checksum when asked; returns
/// the sealed page and the buffer left over. Uncompressed pages are sealed in place.
fn seal(raw: Vec<u8>, spare: Vec<u8>, settings: u32, checksum: bool) -> Result<(Vec<u8>, Vec<u8>)> {
    let (mut z, left) = if settings.is_multiple_of(100) {
        (raw, spare)
    } else {
        let mut z = spare;
        z.clear();
        compression::compress(&raw, settings, &mut z)?;
        (z, raw)
    };
    if checksum {
        let sum = xxhash_rust::xxh3::xxh3_64(&z);
        z.extend_from_slice(&sum.to_le_bytes());
    }
    Ok((z, left))
}

// ----- columnar fill from Apache Arrow ----------------------------------------------------------

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;

/// Entries per slice of a batch between two checks of the cluster flush rule.
const BATCH_SLICE: usize = 8192;

macro_rules! buf_vec {
    ($name:ident, $variant:ident, $t:ty) => {
        fn $name(b: &mut Buf) -> Option<&mut Vec<$t>> {
            match b {
                Buf::$variant(v) => Some(v),
                _ => None,
            }
        }
    };
}
buf_vec!(buf_bool, Bool, bool);
buf_vec!(buf_u8, U8, u8);
buf_vec!(buf_i8, I8, i8);
buf_vec!(buf_i16, I16, i16);
buf_vec!(buf_u16, U16, u16);
buf_vec!(buf_i32, I32, i32);
buf_vec!(buf_u32, U32, u32);
buf_vec!(buf_i64, I64, i64);
buf_vec!(buf_u64, U64, u64);
buf_vec!(buf_f32, F32, f32);
buf_vec!(buf_f64, F64, f64);
buf_vec!(buf_switch, Switch, (u64, u32));

/// How the members of an Arrow union map to a variant's alternatives: the members that are not
/// of the Null type are the alternatives in order (`type_ids[k]` is alternative k's type id); a
/// Null-typed member holds valueless entries (what the reader makes of them, `_valueless`).
struct UnionAlternatives {
    type_ids: Vec<i8>,
    /// Per type id (as u8): `Some(Some(k))` alternative k, `Some(None)` valueless, `None` unknown.
    by_id: [Option<Option<usize>>; 128],
}

impl UnionAlternatives {
    fn of(&self, type_id: i8) -> Option<Option<usize>> {
        usize::try_from(type_id).ok().and_then(|i| self.by_id.get(i).copied().flatten())
    }
}

fn union_alternatives(fields: &arrow_schema::UnionFields, n_alt: usize, path: &str) -> Result<UnionAlternatives> {
    let mut out = UnionAlternatives { type_ids: Vec::with_capacity(n_alt), by_id: [None; 128] };
    for (tid, f) in fields.iter() {
        let slot = usize::try_from(tid).ok().and_then(|i| out.by_id.get_mut(i)).ok_or_else(|| Error::Invalid(format!("field '{path}': negative union type id {tid}")))?;
        if f.data_type() == &DataType::Null {
            *slot = Some(None);
        } else {
            *slot = Some(Some(out.type_ids.len()));
            out.type_ids.push(tid);
        }
    }
    if out.type_ids.len() != n_alt {
        return Err(Error::Invalid(format!("field '{path}': a union of {} members (besides Null ones) for a variant of {n_alt} alternatives", out.type_ids.len())));
    }
    Ok(out)
}

impl<O: ClusterOut> ClusterBuilder<O> {
    /// Appends the rows of an Arrow record batch (columnar fill): one column per top-level
    /// field, matched by name. Supported Arrow types: booleans, integers, floats (float64 into
    /// `Double32_t` too), strings, lists (vectors, RVecs, sets), fixed-size lists (`std::array`,
    /// `std::bitset`), structs (pairs, tuples), maps, nullable arrays for `std::optional` /
    /// `std::unique_ptr`, and unions (dense or sparse) for `std::variant`: the members not of the
    /// Null type are the alternatives in order; entries in a Null member, or null in their
    /// member, are valueless.
    pub fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.plans.len());
        for (name, _) in &self.plans {
            let c = batch.column_by_name(name).ok_or_else(|| Error::Invalid(format!("batch lacks field '{name}'")))?;
            cols.push(c.clone());
        }
        let plans = std::mem::take(&mut self.plans);
        let r = (|| {
            // Check everything first: a bad batch writes nothing.
            for ((name, plan), c) in plans.iter().zip(&cols) {
                check_array(plan, c.as_ref(), name)?;
            }
            let n = batch.num_rows();
            let mut start = 0;
            while start < n {
                let len = BATCH_SLICE.min(n - start);
                for ((_, plan), c) in plans.iter().zip(&cols) {
                    self.put_array(plan, &c.slice(start, len))?;
                }
                self.entries += len as u64;
                self.filled += len as u64;
                start += len;
                self.maybe_flush()?;
            }
            Ok(())
        })();
        self.plans = plans;
        r
    }

    /// Appends `vals` to column `col`, sealing pages at the maximum page size.
    fn extend_col<T: Copy>(&mut self, col: usize, vals: &[T], get: fn(&mut Buf) -> Option<&mut Vec<T>>) -> Result<()> {
        let bits = self.cols[col].ty.fixed_bits().unwrap_or(32) as u64;
        let per_page = ((self.opts.max_unzipped_page_size * 8) / bits).max(1) as usize;
        let mut rest = vals;
        while !rest.is_empty() {
            let c = &mut self.cols[col];
            let v = get(&mut c.buf).ok_or_else(|| Error::internal("column buffer of another type"))?;
            let room = per_page.saturating_sub(v.len()).max(1);
            let k = room.min(rest.len());
            v.extend_from_slice(&rest[..k]);
            let full = v.len() >= per_page;
            c.in_cluster += k as u64;
            self.unzipped_in_cluster += k as u64 * bits;
            rest = &rest[k..];
            if full {
                self.seal_page(col)?;
            }
        }
        Ok(())
    }

    /// Appends index values: `base + (offsets[i+1] - offsets[0])`.
    fn extend_index(&mut self, col: usize, base: u64, offsets: &[i64]) -> Result<()> {
        let o0 = offsets.first().copied().unwrap_or(0);
        let ends: Vec<u64> = offsets[1..].iter().map(|&o| base + (o - o0) as u64).collect();
        self.extend_col(col, &ends, buf_u64)
    }

    fn put_array(&mut self, plan: &Plan, a: &ArrayRef) -> Result<()> {
        let n = a.len() as u64;
        match plan {
            Plan::Scalar { col, s, .. } => {
                let col = *col;
                match (s, a.data_type()) {
                    (Scalar::Bool, DataType::Boolean) => {
                        let v: Vec<bool> = a.as_boolean().iter().map(|x| x.unwrap_or(false)).collect();
                        self.extend_col(col, &v, buf_bool)?
                    }
                    (Scalar::Char | Scalar::I8, DataType::Int8) => {
                        if matches!(self.cols[col].buf, Buf::U8(_)) {
                            let v: Vec<u8> = a.as_primitive::<Int8Type>().values().iter().map(|&x| x as u8).collect();
                            self.extend_col(col, &v, buf_u8)?
                        } else {
                            self.extend_col(col, a.as_primitive::<Int8Type>().values(), buf_i8)?
                        }
                    }
                    (Scalar::Byte | Scalar::U8, DataType::UInt8) => self.extend_col(col, a.as_primitive::<UInt8Type>().values(), buf_u8)?,
                    (Scalar::I16, DataType::Int16) => self.extend_col(col, a.as_primitive::<Int16Type>().values(), buf_i16)?,
                    (Scalar::U16, DataType::UInt16) => self.extend_col(col, a.as_primitive::<UInt16Type>().values(), buf_u16)?,
                    (Scalar::I32, DataType::Int32) => self.extend_col(col, a.as_primitive::<Int32Type>().values(), buf_i32)?,
                    (Scalar::U32, DataType::UInt32) => self.extend_col(col, a.as_primitive::<UInt32Type>().values(), buf_u32)?,
                    (Scalar::I64, DataType::Int64) => self.extend_col(col, a.as_primitive::<Int64Type>().values(), buf_i64)?,
                    (Scalar::U64, DataType::UInt64) => self.extend_col(col, a.as_primitive::<UInt64Type>().values(), buf_u64)?,
                    (Scalar::F32, DataType::Float32) => self.extend_col(col, a.as_primitive::<Float32Type>().values(), buf_f32)?,
                    (Scalar::F32, DataType::Float64) => {
                        let v: Vec<f32> = a.as_primitive::<Float64Type>().values().iter().map(|&x| x as f32).collect();
                        self.extend_col(col, &v, buf_f32)?
                    }
                    (Scalar::F64, DataType::Float64) => self.extend_col(col, a.as_primitive::<Float64Type>().values(), buf_f64)?,
                    (s, t) => return Err(Error::Internal(format!("unchecked Arrow type {t} for {s:?}"))),
                }
            }
            Plan::String { idx, chars, .. } => {
                let (idx, chars) = (*idx, *chars);
                let base = self.cols[chars].in_cluster;
                let (offsets, bytes): (Vec<i64>, &[u8]) = match a.data_type() {
                    DataType::Utf8 => {
                        let s = a.as_string::<i32>();
                        (s.value_offsets().iter().map(|&o| o as i64).collect(), s.values().as_slice())
                    }
                    _ => {
                        let s = a.as_string::<i64>();
                        (s.value_offsets().to_vec(), s.values().as_slice())
                    }
                };
                let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                self.extend_col(chars, &bytes[o0..on], buf_u8)?;
                self.extend_index(idx, base, &offsets)?;
            }
            Plan::Collection { idx, child, kind, .. } => {
                let idx = *idx;
                let base = self.counts[child.counter()];
                match (kind, a.data_type()) {
                    (CollKind::Optional, _) | (CollKind::Seq, DataType::Struct(_)) => {
                        // Logical nulls: a union has no validity bitmap, its absent entries are
                        // those in its Null member.
                        let nulls = a.logical_nulls();
                        let mut offsets = Vec::with_capacity(a.len() + 1);
                        offsets.push(0i64);
                        let mut k = 0i64;
                        for i in 0..a.len() {
                            k += nulls.as_ref().is_none_or(|n| n.is_valid(i)) as i64;
                            offsets.push(k);
                        }
                        let values = match nulls {
                            Some(nulls) => arrow_select::filter::filter(a.as_ref(), &arrow_array::BooleanArray::new(nulls.into_inner(), None))?,
                            None => a.clone(),
                        };
                        self.put_array(child, &values)?;
                        self.extend_index(idx, base, &offsets)?;
                    }
                    (_, DataType::Map(_, _)) => {
                        let m = a.as_map();
                        let offsets: Vec<i64> = m.value_offsets().iter().map(|&o| o as i64).collect();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        let entries: ArrayRef = std::sync::Arc::new(m.entries().slice(o0, on - o0));
                        self.put_array(child, &entries)?;
                        self.extend_index(idx, base, &offsets)?;
                    }
                    (_, DataType::List(_)) => {
                        let l = a.as_list::<i32>();
                        let offsets: Vec<i64> = l.value_offsets().iter().map(|&o| o as i64).collect();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        self.put_array(child, &l.values().slice(o0, on - o0))?;
                        self.extend_index(idx, base, &offsets)?;
                    }
                    _ => {
                        let l = a.as_list::<i64>();
                        let offsets = l.value_offsets().to_vec();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        self.put_array(child, &l.values().slice(o0, on - o0))?;
                        self.extend_index(idx, base, &offsets)?;
                    }
                }
            }
            Plan::Record { children, names, .. } => {
                let st = a.as_struct();
                for (c, arr) in children.iter().zip(struct_members(names, st)) {
                    self.put_array(c, arr)?;
                }
            }
            Plan::Array { n: len, child, .. } => {
                let l = a.as_fixed_size_list();
                let values = l.values().slice(l.offset() * *len as usize, a.len() * *len as usize);
                self.put_array(child, &values)?;
            }
            Plan::Bitset { n: len, col, .. } => {
                let l = a.as_fixed_size_list();
                let values = l.values().slice(l.offset() * *len as usize, a.len() * *len as usize);
                let v: Vec<bool> = values.as_boolean().iter().map(|x| x.unwrap_or(false)).collect();
                self.extend_col(*col, &v, buf_bool)?;
            }
            Plan::Variant { sw, children, .. } => {
                let u = a.as_any().downcast_ref::<arrow_array::UnionArray>().ok_or_else(|| Error::internal("unchecked Arrow type for a variant"))?;
                let DataType::Union(fields, _) = a.data_type() else { return Err(Error::internal("a union without union type")) };
                let alts = union_alternatives(fields, children.len(), "variant")?;
                // Per alternative: the rows of its child array, in entry order; per entry: the
                // switch (index among the alternative's values in this cluster, tag = k + 1).
                let mut rows: Vec<Vec<u64>> = vec![Vec::new(); children.len()];
                let mut switch: Vec<(u64, u32)> = Vec::with_capacity(u.len());
                // A null inside an alternative's array is valueless too (awkward's unions of
                // options).
                let child_nulls: Vec<Option<arrow_buffer::NullBuffer>> = alts.type_ids.iter().map(|&t| u.child(t).logical_nulls()).collect();
                for i in 0..u.len() {
                    match alts.of(u.type_id(i)) {
                        Some(Some(k)) if child_nulls[k].as_ref().is_some_and(|n| n.is_null(u.value_offset(i))) => switch.push((0, 0)),
                        Some(Some(k)) => {
                            switch.push((self.counts[children[k].counter()] + rows[k].len() as u64, k as u32 + 1));
                            rows[k].push(u.value_offset(i) as u64);
                        }
                        Some(None) => switch.push((0, 0)),
                        None => return Err(Error::Internal(format!("union type id {} not checked", u.type_id(i)))),
                    }
                }
                for (k, rows) in rows.iter().enumerate() {
                    if rows.is_empty() {
                        continue;
                    }
                    let child = u.child(alts.type_ids[k]);
                    let consecutive = rows.windows(2).all(|w| w[1] == w[0] + 1);
                    let values = if consecutive {
                        child.slice(rows[0] as usize, rows.len())
                    } else {
                        arrow_select::take::take(child.as_ref(), &arrow_array::UInt64Array::from(rows.clone()), None)?
                    };
                    self.put_array(&children[k], &values)?;
                }
                self.extend_col(*sw, &switch, buf_switch)?;
            }
            Plan::Wrapper { child, .. } => self.put_array(child, a)?,
        }
        self.counts[plan.counter()] += n;
        Ok(())
    }
}

/// Whether an Arrow array of type `t` for this field is an optional value (nulls allowed): for
/// optional fields, and for untyped collections of records given structs (an awkward option of a
/// record: 0 or 1 items per entry, as uproot writes it).
fn takes_nulls(plan: &Plan, t: &DataType) -> bool {
    match plan {
        // A union's nulls are the entries in its Null-typed member: valueless variants.
        Plan::Variant { .. } => matches!(t, DataType::Union(..)),
        Plan::Collection { kind: CollKind::Optional, .. } => true,
        Plan::Collection { kind: CollKind::Seq, child, .. } => matches!(**child, Plan::Record { .. }) && matches!(t, DataType::Struct(_)),
        _ => false,
    }
}

/// The children of an Arrow struct in the order of a record's member `names`: by name when the
/// struct has every one of them, else by position (tuples arrive with any member names).
fn struct_members<'a>(names: &[String], st: &'a arrow_array::StructArray) -> Vec<&'a ArrayRef> {
    let by_name: Option<Vec<&ArrayRef>> = names.iter().map(|n| st.column_by_name(n)).collect();
    by_name.unwrap_or_else(|| st.columns().iter().collect())
}

/// Checks that an Arrow array fits a field: types and nulls (only optional fields take nulls).
fn check_array(plan: &Plan, a: &dyn Array, path: &str) -> Result<()> {
    let t = a.data_type();
    let bad = |want: &str| Err(Error::Invalid(format!("field '{path}': expected Arrow {want}, got {t}")));
    if !takes_nulls(plan, t) && a.logical_null_count() > 0 {
        return Err(Error::Invalid(format!("field '{path}': {} null values, but the field is not optional", a.logical_null_count())));
    }
    match plan {
        Plan::Scalar { s, .. } => {
            let ok = match s {
                Scalar::Bool => t == &DataType::Boolean,
                Scalar::Char | Scalar::I8 => t == &DataType::Int8,
                Scalar::Byte | Scalar::U8 => t == &DataType::UInt8,
                Scalar::I16 => t == &DataType::Int16,
                Scalar::U16 => t == &DataType::UInt16,
                Scalar::I32 => t == &DataType::Int32,
                Scalar::U32 => t == &DataType::UInt32,
                Scalar::I64 => t == &DataType::Int64,
                Scalar::U64 => t == &DataType::UInt64,
                Scalar::F32 => matches!(t, DataType::Float32 | DataType::Float64),
                Scalar::F64 => t == &DataType::Float64,
            };
            if ok {
                Ok(())
            } else {
                bad(&format!("{s:?}"))
            }
        }
        Plan::String { .. } => match t {
            DataType::Utf8 | DataType::LargeUtf8 => Ok(()),
            _ => bad("utf8"),
        },
        Plan::Collection { child, .. } if takes_nulls(plan, t) => check_array_nonnull(child, a, &format!("{path}._0")),
        Plan::Collection { child, .. } => match t {
            DataType::List(_) => check_array(child, a.as_list::<i32>().values().as_ref(), &format!("{path}._0")),
            DataType::LargeList(_) => check_array(child, a.as_list::<i64>().values().as_ref(), &format!("{path}._0")),
            DataType::Map(_, _) => check_array(child, a.as_map().entries(), &format!("{path}._0")),
            _ => bad("list or map"),
        },
        Plan::Record { children, names, .. } => match t {
            DataType::Struct(f) if f.len() == children.len() => children
                .iter()
                .zip(struct_members(names, a.as_struct()))
                .zip(names)
                .try_for_each(|((c, arr), name)| check_array(c, arr.as_ref(), &format!("{path}.{name}"))),
            _ => bad(&format!("struct of {} members ({})", children.len(), names.join(", "))),
        },
        Plan::Array { n, child, .. } => match t {
            DataType::FixedSizeList(_, k) if *k as u64 == *n => check_array(child, a.as_fixed_size_list().values().as_ref(), &format!("{path}._0")),
            _ => bad(&format!("fixed-size list of {n}")),
        },
        Plan::Bitset { n, .. } => match t {
            DataType::FixedSizeList(f, k) if *k as u64 == *n && f.data_type() == &DataType::Boolean => Ok(()),
            _ => bad(&format!("fixed-size list of {n} booleans")),
        },
        Plan::Variant { children, .. } => match t {
            DataType::Union(fields, _) => {
                let alts = union_alternatives(fields, children.len(), path)?;
                let u = a.as_any().downcast_ref::<arrow_array::UnionArray>().ok_or_else(|| Error::Invalid(format!("field '{path}': a union type without a union array")))?;
                for (k, &tid) in alts.type_ids.iter().enumerate() {
                    check_array_nonnull(&children[k], u.child(tid).as_ref(), &format!("{path}._{k}"))?;
                }
                let lens: Vec<usize> = alts.type_ids.iter().map(|&tid| u.child(tid).len()).collect();
                for i in 0..u.len() {
                    let tid = u.type_id(i);
                    match alts.of(tid) {
                        None => return Err(Error::Invalid(format!("field '{path}': entry {i} has union type id {tid}, which the union's type does not list"))),
                        Some(Some(k)) if u.value_offset(i) >= lens[k] => {
                            return Err(Error::Invalid(format!("field '{path}': entry {i} points beyond the {} values of its alternative", lens[k])));
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            _ => bad(&format!("union of {} alternatives", children.len())),
        },
        Plan::Wrapper { child, .. } => check_array(child, a, path),
    }
}

/// Checks the values of an optional field, ignoring its nulls.
fn check_array_nonnull(child: &Plan, a: &dyn Array, path: &str) -> Result<()> {
    match a.logical_nulls() {
        Some(n) => {
            let mask = arrow_array::BooleanArray::new(n.into_inner(), None);
            let v = arrow_select::filter::filter(a, &mask)?;
            check_array(child, v.as_ref(), path)
        }
        None => check_array(child, a, path),
    }
}
