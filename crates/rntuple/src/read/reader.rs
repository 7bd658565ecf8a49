//! The RNTuple reader: opens an anchor, loads header, footer and page lists, and reads fields
//! over entry ranges into Apache Arrow arrays, touching only the needed columns and clusters.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::compression;
use crate::format::descriptor::{ClusterDescriptor, ColumnDescriptor, ColumnRange, Descriptor, FieldDescriptor, PageDescriptor};
use crate::format::envelope;
use crate::logical::kind::{classify, Kind, Scalar};
use crate::primitives::column_type::ColumnType;
use crate::primitives::alloc::vec_with_capacity;
use crate::primitives::decode::{decode_append, decode_switch, decode_uninit, ColumnCodec, Native};
use crate::storage::source::ReadAt;
use crate::storage::tfile::read_blob;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, UnionFields};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::time::Instant;

thread_local! {
    /// Per-thread scratch buffers for stored and decompressed page bytes.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Largest envelope accepted (as ROOT's `MaxEnvelopeSize` for untrusted anchors).
pub const MAX_ENVELOPE: u64 = 1 << 30;
/// A part of a page to decode: the page, and the first and end element wanted within it.
type Piece<'a> = (&'a PageDescriptor, usize, usize);

/// Columns with at least this many elements in one cluster are decoded on several threads.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 20;
/// Deepest field nesting accepted.
pub const MAX_FIELD_DEPTH: usize = 128;

/// Where a column's data for a span lie in a cluster (see `Reader::column_slice`).
struct ColumnSlice<'a> {
    col: &'a ColumnDescriptor,
    range: &'a ColumnRange,
    /// Leading elements before the column's first element (deferred column): zeros.
    lead: u64,
    /// Elements `ps..pe` of the column range follow.
    ps: u64,
    pe: u64,
}

/// A range of elements of one field within one cluster (cluster-local indices).
#[derive(Debug, Clone, Copy)]
struct Span {
    cluster: usize,
    start: u64,
    end: u64,
}

/// I/O and decoding statistics of a reader.
#[derive(Debug, Default)]
pub struct ReadStats {
    /// Pages read.
    pub pages: AtomicU64,
    /// Stored (compressed) page bytes read.
    pub stored_bytes: AtomicU64,
    /// Uncompressed page bytes produced.
    pub uncompressed_bytes: AtomicU64,
}

/// Reads one RNTuple.
pub struct Reader {
    src: Arc<dyn ReadAt>,
    anchor: Anchor,
    desc: Descriptor,
    kinds: Vec<std::result::Result<Kind, String>>,
    /// Per field: whether it and its whole subtree can be read.
    readable: Vec<bool>,
    stats: ReadStats,
    verify_page_checksums: bool,
    threads: usize,
}

impl Reader {
    /// Loads the descriptor of the RNTuple behind `anchor`.
    pub fn open(src: Arc<dyn ReadAt>, anchor: Anchor) -> Result<Reader> {
        let env = |seek: u64, nbytes: u64, len: u64, what: &'static str| -> Result<Vec<u8>> {
            if !(16..=MAX_ENVELOPE).contains(&len) {
                return Err(Error::corrupt(format!("{what} envelope length {len} is out of bounds (16 B .. 1 GiB)"), seek));
            }
            if nbytes > len {
                return Err(Error::corrupt(format!("{what} envelope stored size {nbytes} exceeds its length {len}"), seek));
            }
            let stored = read_blob(&*src, seek, nbytes, anchor.max_key_size, what)?;
            compression::decompress(&stored, len as usize, what, seek)
        };
        let hb = env(anchor.seek_header, anchor.nbytes_header, anchor.len_header, "header")?;
        let mut desc = envelope::parse_header(&hb)?;
        let fb = env(anchor.seek_footer, anchor.nbytes_footer, anchor.len_footer, "footer")?;
        envelope::parse_footer(&fb, &mut desc)?;
        for g in 0..desc.cluster_groups.len() {
            let link = desc.cluster_groups[g].page_list;
            let pb = env(link.locator.offset, link.locator.size, link.length, "page list")?;
            envelope::parse_page_list(&pb, &mut desc, g)?;
        }
        desc.clusters.sort_by_key(|c| c.first_entry);
        let mut next = 0u64;
        for c in &desc.clusters {
            if c.first_entry != next {
                return Err(Error::corrupt(
                    format!("cluster {} starts at entry {}, expected {next} (clusters must tile the entry range)", c.id, c.first_entry),
                    anchor.seek_footer,
                ));
            }
            next = c.first_entry.checked_add(c.n_entries).ok_or_else(|| Error::corrupt("cluster entry count overflows", anchor.seek_footer))?;
        }
        if next != desc.num_entries() {
            return Err(Error::corrupt(
                format!("clusters cover {next} entries, cluster groups say {}", desc.num_entries()),
                anchor.seek_footer,
            ));
        }
        // Parents precede children, so depth is one pass; bound it so that recursive assembly
        // cannot exhaust the stack on a hostile file.
        let mut depth = vec![0usize; desc.fields.len()];
        for i in 0..desc.fields.len() {
            if let Some(p) = desc.fields[i].parent {
                depth[i] = depth[p as usize] + 1;
                if depth[i] > MAX_FIELD_DEPTH {
                    return Err(Error::Unsupported(format!(
                        "field '{}' is nested {} levels deep (at most {MAX_FIELD_DEPTH} supported)",
                        desc.fields[i].name, depth[i]
                    )));
                }
            }
        }
        let kinds: Vec<_> = desc.fields.iter().map(|f| classify(&desc, f)).collect();
        let mut readable = vec![true; desc.fields.len()];
        for i in (0..desc.fields.len()).rev() {
            let ok = kinds[i].is_ok() && desc.fields[i].children.iter().all(|&c| readable[c as usize]);
            readable[i] = ok;
        }
        for (i, col) in desc.columns.iter().enumerate() {
            if let Some(ct) = ColumnType::from_u16(col.column_type) {
                let codec = ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range };
                if codec.validate().is_err() {
                    readable[col.field_id as usize] = false;
                }
            }
            let _ = i;
        }
        // A field is readable only if all ancestors' subtrees are; propagate upward again.
        for i in (0..desc.fields.len()).rev() {
            if !readable[i] {
                let mut p = desc.fields[i].parent;
                while let Some(pp) = p {
                    readable[pp as usize] = false;
                    p = desc.fields[pp as usize].parent;
                }
            }
        }
        Ok(Reader { src, anchor, desc, kinds, readable, stats: ReadStats::default(), verify_page_checksums: true, threads: default_threads() })
    }

    /// Sets the number of threads used for decoding (1 = single-threaded).
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    /// The bytes of the file (for copying stored pages, as the merge does).
    pub(crate) fn source(&self) -> &Arc<dyn ReadAt> {
        &self.src
    }

    /// The anchor.
    pub fn anchor(&self) -> &Anchor {
        &self.anchor
    }
    /// The descriptor (schema, clusters, pages).
    pub fn descriptor(&self) -> &Descriptor {
        &self.desc
    }
    /// Number of entries.
    pub fn num_entries(&self) -> u64 {
        self.desc.num_entries()
    }
    /// I/O statistics since opening.
    pub fn stats(&self) -> &ReadStats {
        &self.stats
    }
    /// Turns page checksum verification on or off (on by default).
    pub fn set_verify_page_checksums(&mut self, on: bool) {
        self.verify_page_checksums = on;
    }
    /// The kind of a field, or why it cannot be read.
    pub fn kind(&self, field: u32) -> std::result::Result<&Kind, &str> {
        match &self.kinds[field as usize] {
            Ok(k) => Ok(k),
            Err(e) => Err(e),
        }
    }
    /// Whether the field and all its subfields can be read.
    pub fn is_readable(&self, field: u32) -> bool {
        self.readable[field as usize]
    }

    /// Top-level fields that can be read, in schema order (ROOT ignores top-level fields with
    /// unknown column types or roles; so do we).
    pub fn fields(&self) -> Vec<&FieldDescriptor> {
        self.desc.top_level_fields().into_iter().filter(|&f| self.readable[f as usize]).map(|f| &self.desc.fields[f as usize]).collect()
    }

    /// Top-level fields that are skipped, with the reason.
    pub fn skipped_fields(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for f in self.desc.top_level_fields() {
            if !self.readable[f as usize] {
                out.push((self.desc.fields[f as usize].name.clone(), self.first_problem(f)));
            }
        }
        out
    }

    fn first_problem(&self, f: u32) -> String {
        if let Err(e) = &self.kinds[f as usize] {
            return e.clone();
        }
        for &c in &self.desc.fields[f as usize].children {
            if !self.readable[c as usize] {
                return self.first_problem(c);
            }
        }
        for &c in &self.desc.fields[f as usize].columns {
            let col = &self.desc.columns[c as usize];
            if let Some(ct) = ColumnType::from_u16(col.column_type) {
                if let Err(e) = (ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range }).validate() {
                    return e.to_string();
                }
            }
        }
        "unreadable".into()
    }

    /// Full type name of a field for display: the type name, or a description for untyped fields.
    pub fn display_type(&self, field: u32) -> String {
        let f = &self.desc.fields[field as usize];
        if !f.type_name.is_empty() {
            return f.type_name.clone();
        }
        match f.role {
            crate::format::descriptor::Role::Record => "(untyped record)".into(),
            crate::format::descriptor::Role::Collection => "(untyped collection)".into(),
            _ => String::new(),
        }
    }

    fn resolve_fields(&self, fields: Option<&[&str]>) -> Result<Vec<u32>> {
        match fields {
            None => Ok(self.fields().iter().map(|f| f.id).collect()),
            Some(names) => names
                .iter()
                .map(|n| {
                    let id = self
                        .desc
                        .fields
                        .iter()
                        .find(|f| f.parent.is_none() && f.name == *n)
                        .map(|f| f.id)
                        .ok_or_else(|| {
                            let all: Vec<&str> = self.fields().iter().map(|f| f.name.as_str()).collect();
                            Error::NotFound(format!("no top-level field '{n}' in RNTuple '{}' (fields: {})", self.desc.name, all.join(", ")))
                        })?;
                    if !self.readable[id as usize] {
                        return Err(Error::Unsupported(format!("field '{n}' cannot be read: {}", self.first_problem(id))));
                    }
                    Ok(id)
                })
                .collect(),
        }
    }

    fn spans(&self, start: u64, stop: u64) -> Result<Vec<Span>> {
        let n = self.num_entries();
        if start > stop || stop > n {
            return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{n}")));
        }
        let mut out = Vec::new();
        let first = self.desc.clusters.partition_point(|c| c.first_entry + c.n_entries <= start);
        for (i, c) in self.desc.clusters.iter().enumerate().skip(first) {
            if c.first_entry >= stop {
                break;
            }
            let s = start.max(c.first_entry) - c.first_entry;
            let e = stop.min(c.first_entry + c.n_entries) - c.first_entry;
            if e > s {
                out.push(Span { cluster: i, start: s, end: e });
            }
        }
        Ok(out)
    }

    /// Reads the chosen top-level fields (all readable fields when `None`) of entries
    /// `start..stop` into an Arrow record batch, one column per field.
    pub fn read_batch(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        let ids = self.resolve_fields(fields)?;
        let spans = self.spans(start, stop)?;
        let arrays: Vec<ArrayRef> = self.read_fields_parallel(&ids, &spans)?;
        let schema_fields: Vec<Field> =
            ids.iter().zip(&arrays).map(|(&id, a)| Field::new(self.desc.fields[id as usize].name.clone(), a.data_type().clone(), a.logical_null_count() > 0 || a.data_type() == &DataType::Null || self.nullable(id))).collect();
        let schema = Arc::new(Schema::new(schema_fields));
        let opts = RecordBatchOptions::new().with_row_count(Some((stop - start) as usize));
        Ok(RecordBatch::try_new_with_options(schema, arrays, &opts)?)
    }

    fn read_fields_parallel(&self, ids: &[u32], spans: &[Span]) -> Result<Vec<ArrayRef>> {
        if ids.len() <= 1 {
            return ids.iter().map(|&id| self.read_node(id, spans, Some(1))).collect();
        }
        let threads = self.threads.min(ids.len());
        if threads <= 1 {
            return ids.iter().map(|&id| self.read_node(id, spans, Some(1))).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut results: Vec<Option<Result<ArrayRef>>> = (0..ids.len()).map(|_| None).collect();
        let slots: Vec<std::sync::Mutex<Option<Result<ArrayRef>>>> = (0..ids.len()).map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= ids.len() {
                        break;
                    }
                    let r = self.read_node(ids[i], spans, Some(1));
                    if let Ok(mut g) = slots[i].lock() {
                        *g = Some(r);
                    }
                });
            }
        });
        for (i, m) in slots.into_iter().enumerate() {
            results[i] = m.into_inner().ok().flatten();
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::internal("a reading thread panicked"))))
            .collect()
    }

    fn nullable(&self, id: u32) -> bool {
        matches!(self.kinds[id as usize], Ok(Kind::Optional))
    }

    /// Arrow data type of a field.
    pub fn arrow_type(&self, id: u32) -> Result<DataType> {
        let f = &self.desc.fields[id as usize];
        let kind = self.kinds[id as usize].as_ref().map_err(|e| Error::Unsupported(e.clone()))?;
        let child = |i: usize| -> Result<Field> {
            let c = f.children[i];
            Ok(Field::new(self.desc.fields[c as usize].name.clone(), self.arrow_type(c)?, self.nullable(c) || self.arrow_type(c)? == DataType::Null))
        };
        Ok(match kind {
            Kind::Scalar(s) => scalar_type(*s),
            Kind::String => DataType::LargeUtf8,
            Kind::Streamer => DataType::LargeBinary,
            Kind::List => DataType::LargeList(Arc::new(child(0)?)),
            Kind::RecordList => {
                let st = DataType::Struct((0..f.children.len()).map(child).collect::<Result<Vec<_>>>()?.into());
                DataType::LargeList(Arc::new(Field::new("_0", st, false)))
            }
            Kind::Map => {
                let DataType::Struct(kv) = self.arrow_type(f.children[0])? else {
                    return Err(Error::Unsupported(format!("map field '{}' whose item is not a pair", f.name)));
                };
                DataType::Map(Arc::new(Field::new("entries", DataType::Struct(kv), false)), false)
            }
            Kind::Optional => self.arrow_type(f.children[0])?,
            Kind::Array(n) => DataType::FixedSizeList(Arc::new(child(0)?), *n as i32),
            Kind::Bitset(n) => DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Boolean, false)), *n as i32),
            Kind::Record | Kind::Tuple => {
                DataType::Struct((0..f.children.len()).map(child).collect::<Result<Vec<_>>>()?.into())
            }
            Kind::Variant => DataType::Union(self.union_fields(id)?, arrow_schema::UnionMode::Dense),
            Kind::Wrapper => self.arrow_type(f.children[0])?,
            Kind::Cardinality(true) => DataType::UInt64,
            Kind::Cardinality(false) => DataType::UInt32,
        })
    }

    fn union_fields(&self, id: u32) -> Result<UnionFields> {
        let f = &self.desc.fields[id as usize];
        let mut fs = Vec::new();
        for &c in &f.children {
            fs.push(Field::new(self.desc.fields[c as usize].name.clone(), self.arrow_type(c)?, true));
        }
        fs.push(Field::new("_valueless", DataType::Null, true));
        let n = fs.len();
        if n > 127 {
            return Err(Error::Unsupported(format!("variant '{}' with {} alternatives", f.name, n - 1)));
        }
        Ok(UnionFields::new(0..n as i8, fs))
    }

    // ----- column access -------------------------------------------------------------------

    /// The representation's physical columns active in a cluster, or `None` if the field has no
    /// data there (deferred columns before they existed).
    fn active_columns<'a>(&'a self, f: &FieldDescriptor, cluster: &'a ClusterDescriptor) -> Result<Option<Vec<&'a ColumnDescriptor>>> {
        if f.columns.is_empty() {
            return Ok(None);
        }
        let cols: Vec<&ColumnDescriptor> = f.columns.iter().map(|&c| &self.desc.columns[c as usize]).collect();
        let mut reps: Vec<u16> = cols.iter().map(|c| c.representation).collect();
        reps.sort_unstable();
        reps.dedup();
        let per_rep = cols.len() / reps.len().max(1);
        for r in &reps {
            let rc: Vec<&ColumnDescriptor> = cols.iter().copied().filter(|c| c.representation == *r).collect();
            if rc.len() != per_rep {
                return Err(Error::corrupt(format!("field '{}': representation {r} has {} columns, others {per_rep}", f.name, rc.len()), 0));
            }
            if let Some(Some(range)) = cluster.columns.get(rc[0].id as usize) {
                if !range.suppressed {
                    return Ok(Some(rc));
                }
            }
        }
        Ok(None)
    }

    /// A field may lack data in a cluster only if its columns are deferred or come from the
    /// schema extension (late model extension); otherwise the page list is incomplete.
    fn check_may_be_absent(&self, f: &FieldDescriptor, cluster: &ClusterDescriptor, n_req: u64) -> Result<()> {
        if n_req == 0 {
            return Ok(());
        }
        let late = f.columns.iter().any(|&c| {
            let col = &self.desc.columns[c as usize];
            col.flags & 1 != 0 || col.from_extension
        });
        if late {
            Ok(())
        } else {
            Err(Error::corrupt(
                format!("field '{}' has no pages in cluster {} although its columns are neither deferred nor late-added", f.name, cluster.id),
                0,
            ))
        }
    }

    /// Loads a page (read, checksum, decompress) into thread-local scratch buffers and hands
    /// the uncompressed bytes to `f`. Buffers are reused across pages.
    fn with_page<R>(&self, col: &ColumnDescriptor, codec: &ColumnCodec, page: &PageDescriptor, cluster: usize, f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        let what = || format!("page of column {} ({}) in cluster {cluster} at offset {}", col.id, codec.ty.name(), page.locator.offset);
        let len = codec.page_bytes(page.n_elements as u64);
        let size = page.locator.size;
        if size > len {
            return Err(Error::corrupt(format!("{}: {size} stored bytes for {len} uncompressed bytes", what()), page.locator.offset));
        }
        // A compressed page expands by a bounded factor; refuse lying element counts before
        // allocating.
        if size < len && len > size.saturating_mul(1 << 17) + (1 << 20) {
            return Err(Error::corrupt(format!("{}: claims {len} uncompressed bytes from {size} stored bytes", what()), page.locator.offset));
        }
        let stored_len = size + if page.has_checksum { 8 } else { 0 };
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (stored, unz) = &mut *guard;
            let chunked = self.anchor.max_key_size > 0 && stored_len > self.anchor.max_key_size;
            // A source holding the bytes in memory lends them; others copy into scratch.
            if let Some(v) = if chunked { None } else { self.src.view(page.locator.offset, stored_len) } {
                return self.unpack_page(v, size, len, page, &what, unz, f);
            }
            if chunked {
                *stored = read_blob(&*self.src, page.locator.offset, stored_len, self.anchor.max_key_size, &what())?;
            } else {
                if stored_len > self.src.len() {
                    return Err(Error::corrupt(format!("{}: larger than the file", what()), page.locator.offset));
                }
                stored.resize(stored_len as usize, 0);
                let end = page.locator.offset.checked_add(stored_len).filter(|&e| e <= self.src.len());
                if end.is_none() {
                    return Err(Error::corrupt(format!("{}: extends beyond the end of the file", what()), page.locator.offset));
                }
                self.src.read_exact_at(page.locator.offset, stored)?;
            }
            self.unpack_page(stored, size, len, page, &what, unz, f)
        })
    }

    /// Checks a stored page's checksum (`stored` = the page's `size` bytes, then its checksum if
    /// it has one), decompresses it into `unz` when compressed and hands the `len` uncompressed
    /// bytes to `f`.
    #[allow(clippy::too_many_arguments)]
    fn unpack_page<R>(&self, stored: &[u8], size: u64, len: u64, page: &PageDescriptor, what: &dyn Fn() -> String, unz: &mut Vec<u8>, f: impl FnOnce(&[u8]) -> Result<R>) -> Result<R> {
        let data = stored.get(..size as usize).ok_or_else(|| Error::corrupt(format!("{}: truncated", what()), page.locator.offset))?;
        if page.has_checksum && self.verify_page_checksums {
            let a: [u8; 8] = stored
                .get(size as usize..size as usize + 8)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| Error::corrupt(format!("{}: checksum missing", what()), page.locator.offset))?;
            let st = u64::from_le_bytes(a);
            let comp = xxhash_rust::xxh3::xxh3_64(data);
            if st != comp {
                return Err(Error::Checksum { what: what(), offset: page.locator.offset, stored: st, computed: comp });
            }
        }
        self.stats.pages.fetch_add(1, Ordering::Relaxed);
        self.stats.stored_bytes.fetch_add(size, Ordering::Relaxed);
        self.stats.uncompressed_bytes.fetch_add(len, Ordering::Relaxed);
        if size == len {
            return f(data);
        }
        unz.resize(len as usize, 0);
        compression::decompress_into(data, unz, &what(), page.locator.offset)?;
        f(unz)
    }

    /// Where the data of column `k` of field `f` for a span lie in its cluster: `lead` elements
    /// before the column's first element (a deferred column) read as zeros, then elements
    /// `ps..pe` of the column's range. `None`: the field has no data in this cluster, which is
    /// checked to be allowed (late model extension). `origin` as for [`Reader::read_column`].
    fn column_slice<'a>(&'a self, f: &FieldDescriptor, k: usize, span: Span, origin: Option<u64>) -> Result<Option<ColumnSlice<'a>>> {
        let cluster = &self.desc.clusters[span.cluster];
        let col_and_range = match self.active_columns(f, cluster)? {
            Some(cols) => {
                let col = cols.get(k).copied().ok_or_else(|| Error::corrupt(format!("field '{}' lacks column {k}", f.name), 0))?;
                cluster.columns.get(col.id as usize).and_then(|r| r.as_ref()).map(|r| (col, r))
            }
            None => None,
        };
        let Some((col, range)) = col_and_range else {
            self.check_may_be_absent(f, cluster, span.end - span.start)?;
            return Ok(None);
        };
        // Where the pages start, in cluster-local element indices.
        let page_origin = match origin {
            Some(o) if col.flags & 1 != 0 => range.first_element.saturating_sub(o),
            _ => 0,
        };
        let (s, e) = (span.start, span.end);
        let lead = if s < page_origin { page_origin.min(e) - s } else { 0 };
        let ps = s.max(page_origin) - page_origin;
        let pe = e.max(page_origin) - page_origin;
        if pe > range.n_elements {
            return Err(Error::corrupt(
                format!("field '{}': needs elements up to {pe} of column {} in cluster {}, which holds {}", f.name, col.id, cluster.id, range.n_elements),
                0,
            ));
        }
        Ok(Some(ColumnSlice { col, range, lead, ps, pe }))
    }

    /// Reads elements [s, e) (cluster-local) of column `k` of field `f` in a cluster, appending to `out`.
    /// `origin` is `Some(global index of local element 0)` for columns without a collection ancestor
    /// (needed for deferred columns), `None` otherwise.
    fn read_column<T: Native>(&self, f: &FieldDescriptor, k: usize, span: Span, origin: Option<u64>, out: &mut Vec<T>) -> Result<()> {
        let cluster = &self.desc.clusters[span.cluster];
        let Some(sl) = self.column_slice(f, k, span, origin)? else {
            // No data in this cluster: a deferred (late-added) field reads as zero.
            return push_zeros(out, span.end - span.start, origin.is_some(), f, cluster);
        };
        let ct = ColumnType::from_u16(sl.col.column_type).ok_or_else(|| Error::Unsupported(format!("column type {:#x}", sl.col.column_type)))?;
        let codec = ColumnCodec { ty: ct, bits: sl.col.bits_on_storage, range: sl.col.value_range };
        push_zeros(out, sl.lead, true, f, cluster)?;
        if sl.pe > sl.ps {
            self.decode_range(sl.col, &codec, sl.range, span.cluster, sl.ps, sl.pe, out)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn decode_range<T: Native>(&self, col: &ColumnDescriptor, codec: &ColumnCodec, range: &ColumnRange, cluster: usize, s: u64, e: u64, out: &mut Vec<T>) -> Result<()> {
        // The pieces: (page, first element wanted within the page, end within the page).
        let first = range.pages.partition_point(|p| p.first_in_cluster + p.n_elements as u64 <= s);
        let mut pieces: Vec<Piece> = Vec::new();
        for page in &range.pages[first..] {
            let p0 = page.first_in_cluster;
            let p1 = p0 + page.n_elements as u64;
            if p0 >= e {
                break;
            }
            pieces.push((page, (s.max(p0) - p0) as usize, (e.min(p1) - p0) as usize));
        }
        let total: usize = pieces.iter().map(|p| p.2 - p.1).sum();
        let threads = if total >= PARALLEL_MIN_ELEMENTS && pieces.len() >= 4 { self.threads.min(pieces.len()) } else { 1 };
        out.reserve(total);
        let base = out.len();
        {
            let spare = &mut out.spare_capacity_mut()[..total];
            // Contiguous groups of pieces of about equal element counts, one per thread; each
            // group decodes into its own disjoint part of the output.
            let mut groups: Vec<(&[Piece], &mut [MaybeUninit<T>])> = Vec::new();
            let mut rest = spare;
            let mut remaining = &pieces[..];
            let per = total.div_ceil(threads.max(1));
            while !remaining.is_empty() {
                let mut n = 0;
                let mut k = 0;
                while k < remaining.len() && (n < per || k == 0) {
                    n += remaining[k].2 - remaining[k].1;
                    k += 1;
                }
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
                groups.push((&remaining[..k], head));
                rest = tail;
                remaining = &remaining[k..];
            }
            let work = |pieces: &[Piece], dst: &mut [MaybeUninit<T>]| -> Result<()> {
                let mut at = 0;
                let mut tmp: Vec<T> = Vec::new();
                for &(page, a, b) in pieces {
                    let n = page.n_elements as usize;
                    let d = &mut dst[at..at + (b - a)];
                    if a == 0 && b == n {
                        self.with_page(col, codec, page, cluster, |raw| decode_uninit(codec, raw, d).map_err(|err| relocate(err, page)))?;
                    } else {
                        tmp.clear();
                        self.with_page(col, codec, page, cluster, |raw| decode_append(codec, raw, n, &mut tmp).map_err(|err| relocate(err, page)))?;
                        for (x, v) in d.iter_mut().zip(&tmp[a..b]) {
                            x.write(*v);
                        }
                    }
                    at += b - a;
                }
                Ok(())
            };
            if groups.len() <= 1 {
                for (p, d) in groups {
                    work(p, d)?;
                }
            } else {
                let results: Vec<Result<()>> = std::thread::scope(|sc| {
                    let handles: Vec<_> = groups.into_iter().map(|(p, d)| sc.spawn(move || work(p, d))).collect();
                    handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::internal("a decoding thread panicked")))).collect()
                });
                for r in results {
                    r?;
                }
            }
        }
        // SAFETY: the groups partition the first `total` spare slots, and every group returned
        // Ok, which means each of its pieces wrote all of its `b - a` elements (decode_uninit
        // writes its whole slice; the partial-page path writes each slot from `tmp[a..b]`).
        unsafe { out.set_len(base + total) };
        Ok(())
    }

    fn read_switch(&self, f: &FieldDescriptor, span: Span, origin: Option<u64>, out: &mut Vec<(u64, u32)>) -> Result<()> {
        let n_req = span.end - span.start;
        let Some(sl) = self.column_slice(f, 0, span, origin)? else {
            if origin.is_none() && n_req > 0 {
                let cluster = &self.desc.clusters[span.cluster];
                return Err(Error::corrupt(format!("variant '{}' has no switch data in cluster {}", f.name, cluster.id), 0));
            }
            out.extend(std::iter::repeat_n((0u64, 0u32), n_req as usize));
            return Ok(());
        };
        out.extend(std::iter::repeat_n((0u64, 0u32), sl.lead as usize));
        let codec = ColumnCodec { ty: ColumnType::Switch, bits: 96, range: None };
        let first = sl.range.pages.partition_point(|p| p.first_in_cluster + p.n_elements as u64 <= sl.ps);
        let mut tmp = Vec::new();
        for page in &sl.range.pages[first..] {
            let p0 = page.first_in_cluster;
            let p1 = p0 + page.n_elements as u64;
            if p0 >= sl.pe {
                break;
            }
            tmp.clear();
            self.with_page(sl.col, &codec, page, span.cluster, |raw| decode_switch(raw, page.n_elements as usize, &mut tmp).map_err(|err| relocate(err, page)))?;
            out.extend_from_slice(&tmp[(sl.ps.max(p0) - p0) as usize..(sl.pe.min(p1) - p0) as usize]);
        }
        Ok(())
    }

    /// Reads end offsets of a collection (column 0) over spans. Returns the global offsets
    /// (n+1 values starting at 0) and the child spans.
    fn offsets(&self, f: &FieldDescriptor, spans: &[Span], mult: Option<u64>) -> Result<(Vec<i64>, Vec<Span>)> {
        let total: u64 = spans.iter().map(|s| s.end - s.start).sum();
        let mut offs: Vec<i64> = vec_with_capacity(total as usize + 1);
        offs.push(0i64);
        let mut child = Vec::with_capacity(spans.len());
        for sp in spans {
            // The cluster-local end offsets are decoded straight into the output, then rebased
            // in place; a span starting inside a cluster also reads the preceding end offset.
            let lead = sp.start > 0;
            let rs = Span { start: sp.start - lead as u64, ..*sp };
            let at = offs.len();
            self.read_column(f, 0, rs, origin(mult, &self.desc.clusters[sp.cluster]), &mut offs)?;
            let base = offs[at - 1];
            let start = if lead { offs[at] } else { 0 };
            let skip = lead as usize;
            // One branch-free pass rebases and notes any decrease. With `start >= 0` and no
            // decrease every value is >= `start`, so `v - start` cannot overflow, and the largest
            // rebased value is the last one.
            let mut prev = start;
            let mut decreased = start < 0;
            for i in at + skip..offs.len() {
                let v = offs[i];
                decreased |= v < prev;
                prev = v;
                offs[i - skip] = base.wrapping_add(v.wrapping_sub(start));
            }
            if decreased {
                let cluster = self.desc.clusters[sp.cluster].id;
                return Err(Error::corrupt(format!("collection '{}': offsets decrease or overflow in cluster {cluster} (cluster-local elements {}..{})", f.name, sp.start, sp.end), 0));
            }
            if base.checked_add(prev - start).is_none() {
                return Err(Error::corrupt(format!("collection '{}': offsets overflow", f.name), 0));
            }
            if lead {
                offs.pop();
            }
            if prev > start {
                child.push(Span { cluster: sp.cluster, start: start as u64, end: prev as u64 });
            }
        }
        Ok((offs, child))
    }

    // ----- assembly into Arrow arrays ---------------------------------------------------------

    fn read_node(&self, id: u32, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef> {
        let f = &self.desc.fields[id as usize];
        let kind = self.kinds[id as usize].as_ref().map_err(|e| Error::Unsupported(e.clone()))?;
        let len: u64 = spans.iter().map(|s| s.end - s.start).sum();
        Ok(match kind {
            Kind::Scalar(s) => self.read_scalar(f, *s, spans, mult)?,
            Kind::String | Kind::Streamer => {
                let (offs, chars) = self.offsets(f, spans, mult)?;
                let mut data: Vec<u8> = Vec::new();
                for sp in &chars {
                    self.read_column(f, 1, *sp, None, &mut data)?;
                }
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offs));
                if *kind == Kind::String {
                    Arc::new(LargeStringArray::try_new(offsets, data.into(), None).map_err(|e| {
                        Error::corrupt(format!("string field '{}' holds invalid UTF-8: {e}", f.name), 0)
                    })?)
                } else {
                    Arc::new(LargeBinaryArray::try_new(offsets, data.into(), None)?)
                }
            }
            Kind::List => {
                let (offs, cs) = self.offsets(f, spans, mult)?;
                let c = f.children[0];
                let child = self.read_node(c, &cs, None)?;
                let field = Arc::new(Field::new(self.desc.fields[c as usize].name.clone(), child.data_type().clone(), self.child_nullable(c, &child)));
                Arc::new(LargeListArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offs)), child, None)?)
            }
            Kind::RecordList => {
                let (offs, cs) = self.offsets(f, spans, mult)?;
                let n_items = offs.last().copied().unwrap_or(0) as usize;
                let items: ArrayRef = if f.children.is_empty() {
                    Arc::new(StructArray::new_empty_fields(n_items, None))
                } else {
                    let mut fields = Vec::new();
                    let mut arrays = Vec::new();
                    for &c in &f.children {
                        let a = self.read_node(c, &cs, None)?;
                        fields.push(Field::new(self.desc.fields[c as usize].name.clone(), a.data_type().clone(), self.child_nullable(c, &a)));
                        arrays.push(a);
                    }
                    Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?)
                };
                let field = Arc::new(Field::new("_0", items.data_type().clone(), false));
                Arc::new(LargeListArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offs)), items, None)?)
            }
            Kind::Map => {
                let (offs, cs) = self.offsets(f, spans, mult)?;
                let child = self.read_node(f.children[0], &cs, None)?;
                let Some(entries) = child.as_any().downcast_ref::<StructArray>() else {
                    return Err(Error::Unsupported(format!("map field '{}' whose item is not a pair", f.name)));
                };
                let offs32: Vec<i32> = offs
                    .iter()
                    .map(|&o| i32::try_from(o).map_err(|_| Error::Unsupported(format!("map '{}' with more than 2^31 items in one read", f.name))))
                    .collect::<Result<_>>()?;
                let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
                Arc::new(MapArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offs32)), entries.clone(), None, false)?)
            }
            Kind::Optional => {
                let (offs, cs) = self.offsets(f, spans, mult)?;
                let child = self.read_node(f.children[0], &cs, None)?;
                let mut idx: Vec<Option<u64>> = Vec::with_capacity(len as usize);
                for w in offs.windows(2) {
                    match w[1] - w[0] {
                        0 => idx.push(None),
                        1 => idx.push(Some(w[0] as u64)),
                        n => return Err(Error::corrupt(format!("optional field '{}' has an entry with {n} values", f.name), 0)),
                    }
                }
                if let Some(u) = child.as_any().downcast_ref::<UnionArray>() {
                    // Unions carry no validity bitmap: an absent value points into the union's
                    // `_valueless` (Null) child instead.
                    optional_union(u, &idx)?
                } else {
                    arrow_select::take::take(&child, &UInt64Array::from(idx), None)?
                }
            }
            Kind::Array(n) => {
                let n = *n;
                let cs: Vec<Span> = spans
                    .iter()
                    .map(|s| mul_span(s, n))
                    .collect::<Result<_>>()?;
                let c = f.children[0];
                let child = self.read_node(c, &cs, mult.and_then(|m| m.checked_mul(n)))?;
                let field = Arc::new(Field::new(self.desc.fields[c as usize].name.clone(), child.data_type().clone(), self.child_nullable(c, &child)));
                Arc::new(FixedSizeListArray::try_new(field, i32::try_from(n).map_err(|_| Error::Unsupported("array too long".into()))?, child, None)?)
            }
            Kind::Bitset(n) => {
                let n = *n;
                let mut bits: Vec<bool> = Vec::new();
                let m = mult.and_then(|m| m.checked_mul(n));
                for s in spans {
                    let sp = mul_span(s, n)?;
                    self.read_column(f, 0, sp, origin(m, &self.desc.clusters[s.cluster]), &mut bits)?;
                }
                let child: ArrayRef = Arc::new(BooleanArray::from(bits));
                let field = Arc::new(Field::new("item", DataType::Boolean, false));
                Arc::new(FixedSizeListArray::try_new(field, i32::try_from(n).map_err(|_| Error::Unsupported("bitset too long".into()))?, child, None)?)
            }
            Kind::Record | Kind::Tuple => {
                if f.children.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len as usize, None))
                } else {
                    let mut fields = Vec::new();
                    let mut arrays = Vec::new();
                    for &c in &f.children {
                        let a = self.read_node(c, spans, mult)?;
                        fields.push(Field::new(self.desc.fields[c as usize].name.clone(), a.data_type().clone(), self.child_nullable(c, &a)));
                        arrays.push(a);
                    }
                    Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?)
                }
            }
            Kind::Wrapper => self.read_node(f.children[0], spans, mult)?,
            Kind::Cardinality(is64) => {
                let (offs, _) = self.offsets(f, spans, mult)?;
                let sizes = offs.windows(2).map(|w| (w[1] - w[0]) as u64);
                if *is64 {
                    Arc::new(UInt64Array::from_iter_values(sizes))
                } else {
                    let v: Vec<u32> = sizes
                        .map(|x| u32::try_from(x).map_err(|_| Error::Invalid(format!("cardinality {x} of '{}' does not fit in 32 bits", f.name))))
                        .collect::<Result<_>>()?;
                    Arc::new(UInt32Array::from(v))
                }
            }
            Kind::Variant => self.read_variant(id, f, spans, mult)?,
        })
    }

    fn child_nullable(&self, c: u32, a: &ArrayRef) -> bool {
        self.nullable(c) || a.logical_null_count() > 0 || a.data_type() == &DataType::Null
    }

    /// How many elements to reserve for reading `spans` of field `f`: the requested count,
    /// bounded by what the page lists say the clusters hold (so that a lying offset cannot
    /// drive the allocation).
    fn reservation(&self, f: &FieldDescriptor, spans: &[Span]) -> usize {
        let mut total = 0u64;
        for sp in spans {
            let c = &self.desc.clusters[sp.cluster];
            let avail = f
                .columns
                .iter()
                .filter_map(|&id| c.columns.get(id as usize).and_then(|r| r.as_ref()).map(|r| r.n_elements))
                .max()
                .unwrap_or(0);
            total = total.saturating_add((sp.end - sp.start).min(avail));
        }
        total.min(1 << 31) as usize
    }

    fn read_scalar(&self, f: &FieldDescriptor, s: Scalar, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef> {
        fn prim<P: ArrowPrimitiveType>(r: &Reader, f: &FieldDescriptor, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef>
        where
            P::Native: Native,
        {
            let mut v: Vec<P::Native> = vec_with_capacity(r.reservation(f, spans));
            for sp in spans {
                r.read_column(f, 0, *sp, origin(mult, &r.desc.clusters[sp.cluster]), &mut v)?;
            }
            Ok(Arc::new(PrimitiveArray::<P>::new(ScalarBuffer::from(v), None)))
        }
        match s {
            Scalar::Bool => {
                let mut v: Vec<bool> = Vec::new();
                for sp in spans {
                    self.read_column(f, 0, *sp, origin(mult, &self.desc.clusters[sp.cluster]), &mut v)?;
                }
                Ok(Arc::new(BooleanArray::from(v)))
            }
            Scalar::Char | Scalar::I8 => prim::<Int8Type>(self, f, spans, mult),
            Scalar::Byte | Scalar::U8 => prim::<UInt8Type>(self, f, spans, mult),
            Scalar::I16 => prim::<Int16Type>(self, f, spans, mult),
            Scalar::U16 => prim::<UInt16Type>(self, f, spans, mult),
            Scalar::I32 => prim::<Int32Type>(self, f, spans, mult),
            Scalar::U32 => prim::<UInt32Type>(self, f, spans, mult),
            Scalar::I64 => prim::<Int64Type>(self, f, spans, mult),
            Scalar::U64 => prim::<UInt64Type>(self, f, spans, mult),
            Scalar::F32 => prim::<Float32Type>(self, f, spans, mult),
            Scalar::F64 => prim::<Float64Type>(self, f, spans, mult),
        }
    }

    fn read_variant(&self, id: u32, f: &FieldDescriptor, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef> {
        let n_alt = f.children.len();
        let mut type_ids: Vec<i8> = Vec::new();
        let mut offsets: Vec<i32> = Vec::new();
        let mut child_spans: Vec<Vec<Span>> = vec![Vec::new(); n_alt];
        let mut child_len = vec![0u64; n_alt];
        let mut n_null = 0i32;
        let mut sw = Vec::new();
        for sp in spans {
            sw.clear();
            self.read_switch(f, *sp, origin(mult, &self.desc.clusters[sp.cluster]), &mut sw)?;
            // Per alternative: the smallest index used in this span.
            let mut lo = vec![u64::MAX; n_alt];
            let mut hi = vec![0u64; n_alt];
            for &(idx, tag) in &sw {
                if tag as usize > n_alt {
                    return Err(Error::corrupt(format!("variant '{}': tag {tag} but only {n_alt} alternatives", f.name), 0));
                }
                if tag > 0 {
                    let k = tag as usize - 1;
                    lo[k] = lo[k].min(idx);
                    hi[k] = hi[k].max(idx + 1);
                }
            }
            for &(idx, tag) in &sw {
                if tag == 0 {
                    type_ids.push(n_alt as i8);
                    offsets.push(n_null);
                    n_null += 1;
                } else {
                    let k = tag as usize - 1;
                    type_ids.push(k as i8);
                    let o = child_len[k] + (idx - lo[k]);
                    offsets.push(i32::try_from(o).map_err(|_| Error::Unsupported("variant with more than 2^31 values in one read".into()))?);
                }
            }
            for k in 0..n_alt {
                if lo[k] != u64::MAX {
                    child_spans[k].push(Span { cluster: sp.cluster, start: lo[k], end: hi[k] });
                    child_len[k] += hi[k] - lo[k];
                }
            }
        }
        let mut children: Vec<ArrayRef> = Vec::new();
        for (k, &c) in f.children.iter().enumerate() {
            children.push(self.read_node(c, &child_spans[k], None)?);
        }
        children.push(Arc::new(NullArray::new(n_null as usize)));
        let fields = self.union_fields(id)?;
        Ok(Arc::new(UnionArray::try_new(fields, ScalarBuffer::from(type_ids), Some(ScalarBuffer::from(offsets)), children)?))
    }

    /// The stored bytes of every page of the given top-level fields (all when `None`), with
    /// their uncompressed lengths, read before any timing starts.
    fn stored_pages(&self, fields: Option<&[&str]>) -> Result<Vec<(Vec<u8>, usize)>> {
        let ids = self.resolve_fields(fields)?;
        let mut cols = Vec::new();
        let mut stack = ids;
        while let Some(id) = stack.pop() {
            let f = &self.desc.fields[id as usize];
            cols.extend(f.columns.iter().copied());
            stack.extend(f.children.iter().copied());
        }
        cols.sort_unstable();
        cols.dedup();
        let mut pages = Vec::new();
        for cl in &self.desc.clusters {
            for &c in &cols {
                let col = &self.desc.columns[c as usize];
                let Some(ct) = ColumnType::from_u16(col.column_type) else { continue };
                let codec = ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range };
                if let Some(Some(r)) = cl.columns.get(c as usize) {
                    for p in &r.pages {
                        let b = read_blob(&*self.src, p.locator.offset, p.locator.size, self.anchor.max_key_size, "page")?;
                        pages.push((b, codec.page_bytes(p.n_elements as u64) as usize));
                    }
                }
            }
        }
        Ok(pages)
    }

    /// Reads every page of the given top-level fields (all when `None`) and decompresses it
    /// without decoding; returns (stored bytes, uncompressed bytes, seconds). The physical
    /// limit of reading those fields.
    pub fn decompress_only(&self, fields: Option<&[&str]>) -> Result<(u64, u64, f64)> {
        let pages = self.stored_pages(fields)?;
        let stored: u64 = pages.iter().map(|p| p.0.len() as u64).sum();
        let unz: u64 = pages.iter().map(|p| p.1 as u64).sum();
        let t = Instant::now();
        let mut buf = Vec::new();
        for (b, n) in &pages {
            buf.resize(*n, 0);
            compression::decompress_into(b, &mut buf, "page", 0)?;
        }
        Ok((stored, unz, t.elapsed().as_secs_f64()))
    }

    /// Like [`Reader::decompress_only`], but decompresses every page into one freshly allocated
    /// buffer of the total uncompressed size (as a read must produce its output in fresh
    /// memory); returns the seconds. The difference to `decompress_only` is the cost of fresh
    /// memory (the kernel's page faults and zeroing).
    pub fn decompress_fresh(&self, fields: Option<&[&str]>) -> Result<f64> {
        let pages = self.stored_pages(fields)?;
        let total: usize = pages.iter().map(|p| p.1).sum();
        let t = Instant::now();
        let mut out: Vec<u8> = vec_with_capacity(total);
        for (b, n) in &pages {
            let at = out.len();
            out.resize(at + n, 0);
            compression::decompress_into(b, &mut out[at..], "page", 0)?;
        }
        let secs = t.elapsed().as_secs_f64();
        drop(out);
        Ok(secs)
    }
}

/// An optional around a dense union: entry i is `idx[i]` of the union, or valueless.
fn optional_union(u: &UnionArray, idx: &[Option<u64>]) -> Result<ArrayRef> {
    let DataType::Union(fields, _) = u.data_type() else {
        return Err(Error::Invalid("not a union".into()));
    };
    let null_id = fields.iter().map(|(id, _)| id).max().unwrap_or(0);
    let mut type_ids = Vec::with_capacity(idx.len());
    let mut offsets = Vec::with_capacity(idx.len());
    let mut extra = 0i32;
    let base_nulls = u.child(null_id).len() as i32;
    for i in idx {
        match i {
            Some(k) => {
                let k = *k as usize;
                if k >= u.len() {
                    return Err(Error::corrupt("optional variant index beyond its values", 0));
                }
                type_ids.push(u.type_id(k));
                offsets.push(u.value_offset(k) as i32);
            }
            None => {
                type_ids.push(null_id);
                offsets.push(base_nulls + extra);
                extra += 1;
            }
        }
    }
    let children: Vec<ArrayRef> = fields
        .iter()
        .map(|(id, _)| if id == null_id { Arc::new(NullArray::new((base_nulls + extra) as usize)) as ArrayRef } else { u.child(id).clone() })
        .collect();
    Ok(Arc::new(UnionArray::try_new(fields.clone(), ScalarBuffer::from(type_ids), Some(ScalarBuffer::from(offsets)), children)?))
}

fn default_threads() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

fn scalar_type(s: Scalar) -> DataType {
    match s {
        Scalar::Bool => DataType::Boolean,
        Scalar::Char | Scalar::I8 => DataType::Int8,
        Scalar::Byte | Scalar::U8 => DataType::UInt8,
        Scalar::I16 => DataType::Int16,
        Scalar::U16 => DataType::UInt16,
        Scalar::I32 => DataType::Int32,
        Scalar::U32 => DataType::UInt32,
        Scalar::I64 => DataType::Int64,
        Scalar::U64 => DataType::UInt64,
        Scalar::F32 => DataType::Float32,
        Scalar::F64 => DataType::Float64,
    }
}

fn origin(mult: Option<u64>, c: &ClusterDescriptor) -> Option<u64> {
    mult.and_then(|m| c.first_entry.checked_mul(m))
}

fn mul_span(s: &Span, n: u64) -> Result<Span> {
    let start = s.start.checked_mul(n).ok_or_else(|| Error::corrupt("array size overflows", 0))?;
    let end = s.end.checked_mul(n).ok_or_else(|| Error::corrupt("array size overflows", 0))?;
    Ok(Span { cluster: s.cluster, start, end })
}

fn push_zeros<T: Native>(out: &mut Vec<T>, n: u64, entry_aligned: bool, f: &FieldDescriptor, c: &ClusterDescriptor) -> Result<()> {
    // Zero-filled data exists only for deferred columns of fields without a collection ancestor;
    // its size is then bounded by the entry range the caller asked for (times fixed array sizes),
    // never by a count read from the file.
    if n > 0 && !entry_aligned {
        return Err(Error::corrupt(
            format!("field '{}' needs {n} elements in cluster {}, which has no data for it", f.name, c.id),
            0,
        ));
    }
    out.extend(std::iter::repeat_n(T::default(), n as usize));
    Ok(())
}

fn relocate(e: Error, page: &PageDescriptor) -> Error {
    match e {
        Error::Corrupt { what, envelope: None, .. } => Error::corrupt(what, page.locator.offset),
        other => other,
    }
}
