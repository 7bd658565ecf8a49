//! Bulk reads into caller-owned buffers: one column of a field over a range of clusters, decoded
//! page by page straight into a slice the caller provides (and reuses from cluster to cluster),
//! with the pages' stored and decompressed bytes in scratch buffers the caller's [`BulkReader`]
//! owns. Nothing is allocated per read once the scratch has grown to the largest page.
//!
//! What a column reads as: a leaf field's values in its in-memory type ([`Scalar`]; split, zigzag,
//! delta and reduced-precision encodings undone); a collection's or string's offsets column as
//! `u64` end offsets made global over the cluster range (see [`Reader::bulk_column`]).

use super::bulk_element::{BulkElement, Scratch};
use super::columns::origin;
use super::pages::relocate;
use crate::error::{Error, Result};
use crate::format::descriptor::{ClusterDescriptor, ColumnDescriptor, FieldDescriptor, PageDescriptor, Role, COLUMN_FLAG_DEFERRED};
use crate::logical::kind::{Kind, Scalar};
use crate::primitives::column_type::ColumnType;
use crate::primitives::decode::{decode_index64_rebased, decode_uninit, ColumnCodec};
use crate::read::open::Reader;
use crate::read::pool::read_plan::ReadPlan;
use std::mem::MaybeUninit;
use std::ops::Range;

/// One column of one field, resolved for bulk reads by [`Reader::bulk_column`].
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkColumn-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("v", "std::vector<float>")], WriteOptions::default())?;
/// # w.fill(&Value::Record(vec![("v".into(), Value::List(vec![Value::F32(1.0)]))]))?;
/// # w.commit()?;
/// use rntuple::logical::Scalar;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let offsets = r.bulk_column("v", 0)?;
/// assert!(offsets.is_offsets());
/// assert_eq!(offsets.element_type(), Scalar::U64);
/// let items = r.bulk_column("v._0", 0)?;
/// assert_eq!((items.path(), items.element_type()), ("v._0", Scalar::F32));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct BulkColumn {
    field: u32,
    pub(crate) top: u32,
    column: usize,
    path: String,
    element: Scalar,
    offsets: bool,
    /// Elements per entry when no ancestor is a collection (fixed-size arrays multiply it).
    pub(crate) mult: Option<u64>,
}

impl BulkColumn {
    /// The in-memory type of the elements (`U64` for offsets).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkColumn-et-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "std::int16_t")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.bulk_column("x", 0)?.element_type(), rntuple::logical::Scalar::I16);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn element_type(&self) -> Scalar {
        self.element
    }

    /// Whether the column is a collection's or string's offsets (end offsets, global over the
    /// range read).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkColumn-off-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("s", "std::string")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert!(r.bulk_column("s", 0)?.is_offsets()); // a string: offsets, then chars
    /// assert!(!r.bulk_column("s", 1)?.is_offsets());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_offsets(&self) -> bool {
        self.offsets
    }

    /// The field's dotted path, as given to [`Reader::bulk_column`].
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkColumn-path-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.bulk_column("x", 0)?.path(), "x");
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The column's index among the field's columns (0: the first, or only, one).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkColumn-col-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("s", "std::string")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.bulk_column("s", 1)?.column(), 1);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn column(&self) -> usize {
        self.column
    }

    /// An error unless `T` is the column's element type.
    pub(crate) fn check_type<T: BulkElement>(&self) -> Result<()> {
        if T::accepts(self.element) {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "{}: holds {} elements, not {}",
            self.what(),
            if self.offsets { "offset (std::uint64_t)".to_string() } else { self.element.type_name().to_string() },
            std::any::type_name::<T>()
        )))
    }

    pub(crate) fn what(&self) -> String {
        format!("field '{}' column {}", self.path, self.column)
    }
}

/// The reusable state of bulk reads: scratch buffers for a page's stored and decompressed bytes,
/// grown to the largest page read and kept. Hold one per thread and pass it to every read: a loop
/// over clusters then allocates nothing.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkReader-{}.root", std::process::id()));
/// # let opts = WriteOptions { approx_zipped_cluster_size: 1000, ..Default::default() };
/// # let mut w = Writer::create(&path, "Events", &[("v", "std::vector<float>")], opts)?;
/// # for i in 0..1000 {
/// #     let items = (0..i % 3).map(|k| Value::F32(k as f32)).collect();
/// #     w.fill(&Value::Record(vec![("v".into(), Value::List(items))]))?;
/// # }
/// # w.commit()?;
/// use rntuple::read::BulkReader;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let (offsets, items) = (r.bulk_column("v", 0)?, r.bulk_column("v._0", 0)?);
/// let mut bulk = BulkReader::new();
/// let (mut offs, mut vals): (Vec<u64>, Vec<f32>) = (Vec::new(), Vec::new());
/// let mut total = 0.0;
/// for c in 0..r.descriptor().clusters.len() {
///     // Buffers sized for the largest cluster are reused from cluster to cluster.
///     offs.resize(offs.len().max(r.bulk_len(&offsets, c..c + 1)? as usize), 0);
///     vals.resize(vals.len().max(r.bulk_len(&items, c..c + 1)? as usize), 0.0);
///     let n = bulk.read(&r, &offsets, c..c + 1, &mut offs)?;
///     let m = bulk.read(&r, &items, c..c + 1, &mut vals)?;
///     assert_eq!(offs[..n].last().copied().unwrap_or(0), m as u64); // end offsets into `vals`
///     total += vals[..m].iter().sum::<f32>();
/// }
/// assert_eq!(total, 333.0); // entries 2, 5, 8, ... hold [0.0, 1.0]
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct BulkReader {
    pub(crate) scratch: Scratch,
}

impl BulkReader {
    /// A reader with empty scratch buffers.
    ///
    /// ```
    /// let bulk = rntuple::read::BulkReader::new();
    /// assert_eq!(bulk.scratch_bytes(), 0);
    /// ```
    pub fn new() -> BulkReader {
        BulkReader::default()
    }

    /// The bytes the scratch buffers hold on to (their capacity).
    ///
    /// ```
    /// assert_eq!(rntuple::read::BulkReader::default().scratch_bytes(), 0);
    /// ```
    pub fn scratch_bytes(&self) -> usize {
        self.scratch.bytes()
    }

    /// Reads column `col` of clusters `clusters` into the start of `out` and returns the number of
    /// elements written ([`Reader::bulk_len`]). `T` must be the column's element type. Errors: a
    /// cluster range outside the RNTuple, `out` shorter than the range's elements, a wrong `T`, a
    /// damaged page; `out` may then be partly written.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkReader-read-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("x", "double")], WriteOptions::default())?;
    /// # for i in 0..5 { w.fill(&Value::Record(vec![("x".into(), Value::F64(i as f64))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let x = r.bulk_column("x", 0)?;
    /// let mut buf = [0.0f64; 8];
    /// let n = rntuple::read::BulkReader::new().read(&r, &x, 0..1, &mut buf)?;
    /// assert_eq!(&buf[..n], &[0.0, 1.0, 2.0, 3.0, 4.0]);
    /// assert!(rntuple::read::BulkReader::new().read(&r, &x, 0..1, &mut [0.0f32; 8]).is_err()); // not f64
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read<T: BulkElement>(&mut self, r: &Reader, col: &BulkColumn, clusters: Range<usize>, out: &mut [T]) -> Result<usize> {
        // SAFETY: `MaybeUninit<T>` has `T`'s layout, and `read_uninit` writes only valid `T`s
        // (decoded values or `T::default()`), so `out` holds valid values whatever it returns.
        let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
        self.read_uninit(r, col, clusters, out)
    }

    /// [`BulkReader::read`] into uninitialized memory: on `Ok(n)`, `out[..n]` is initialized.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-BulkReader-uninit-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("n", "std::int32_t")], WriteOptions::default())?;
    /// # for i in 0..3 { w.fill(&Value::Record(vec![("n".into(), Value::Int(-i))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let col = r.bulk_column("n", 0)?;
    /// let mut v: Vec<i32> = Vec::with_capacity(r.bulk_len(&col, 0..1)? as usize);
    /// let n = rntuple::read::BulkReader::new().read_uninit(&r, &col, 0..1, v.spare_capacity_mut())?;
    /// unsafe { v.set_len(n) };
    /// assert_eq!(v, [0, -1, -2]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_uninit<T: BulkElement>(&mut self, r: &Reader, col: &BulkColumn, clusters: Range<usize>, out: &mut [MaybeUninit<T>]) -> Result<usize> {
        col.check_type::<T>()?;
        let total = r.bulk_len(col, clusters.clone())?;
        if total > out.len() as u64 {
            return Err(Error::Invalid(format!(
                "{}: clusters {}..{} hold {total} elements, the buffer {}",
                col.what(),
                clusters.start,
                clusters.end,
                out.len()
            )));
        }
        let plan = r.bulk_plan(col, clusters.clone())?;
        let mut at = 0usize;
        let mut base = 0u64;
        for k in clusters {
            let n = usize::try_from(r.cluster_len(col, k)?).map_err(|_| Error::internal("cluster length beyond the address space"))?;
            let dst = out.get_mut(at..at + n).ok_or_else(|| Error::internal(format!("{}: cluster {k} past the counted elements", col.what())))?;
            base = r.bulk_cluster(&plan, col, k, 0..n as u64, dst, base, &mut self.scratch)?;
            at += n;
        }
        Ok(at)
    }
}

/// Makes cluster-local end offsets (just decoded into `d`, in cache) global by adding `base`,
/// the items before the cluster; `prev` is the cluster's last offset before `d` and becomes the
/// last of `d`. The offsets must not decrease, nor overflow with `base` added.
fn rebase<T: BulkElement>(d: &mut [MaybeUninit<T>], base: u64, prev: &mut u64) -> std::result::Result<(), &'static str> {
    let v = T::as_u64(d).ok_or("offsets read into a type other than u64")?;
    // SAFETY: the caller decoded (or zero-filled) every element of `d` before calling.
    let v = unsafe { &mut *(v as *mut [MaybeUninit<u64>] as *mut [u64]) };
    let mut last = *prev;
    let mut decreased = false;
    for x in v.iter_mut() {
        decreased |= *x < last;
        last = *x;
        *x = x.wrapping_add(base);
    }
    *prev = last;
    if decreased {
        return Err("offsets decrease");
    }
    if base.checked_add(last).is_none() {
        return Err("offsets overflow");
    }
    Ok(())
}

impl Reader {
    /// Resolves column `column` (0 for a leaf; a string's or collection's offsets are column 0, a
    /// string's chars column 1) of the field at dotted path `path` (`"muons._0.pt"`) for
    /// [`BulkReader::read`].
    ///
    /// A leaf reads as its in-memory type ([`BulkColumn::element_type`]): its values, whatever
    /// encoding the file uses. An offsets column reads as `u64` **end offsets, global over the
    /// cluster range read**: entry `i` of the range (item `i` of the parent collection) holds the
    /// items `[end[i-1], end[i])` (`[0, end[0])` for the first) of the item column read over the
    /// same clusters; within one cluster these are the stored cluster-local values.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-bulk_column-{}.root", std::process::id()));
    /// # Writer::create(&path, "Events", &[("v", "std::vector<float>")], WriteOptions::default())?.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert!(r.bulk_column("v._0", 0).is_ok());
    /// assert!(r.bulk_column("v", 1).is_err()); // a vector has one column
    /// assert!(r.bulk_column("w", 0).is_err());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bulk_column(&self, path: &str, column: usize) -> Result<BulkColumn> {
        let id = self.desc.field_by_path(path).ok_or_else(|| {
            let all: Vec<&str> = self.fields().iter().map(|f| f.name.as_str()).collect();
            Error::NotFound(format!("no field '{path}' in RNTuple '{}' (top-level fields: {}; subfields as 'a.b')", self.desc.name, all.join(", ")))
        })?;
        let f = &self.desc.fields[id as usize];
        let kind = self.kinds[id as usize].as_ref().map_err(|why| Error::Unsupported(format!("field '{path}' cannot be read: {why}")))?;
        let first_rep = f.columns.iter().map(|&c| self.desc.columns[c as usize].representation).min();
        let cols: Vec<&ColumnDescriptor> = f.columns.iter().map(|&c| &self.desc.columns[c as usize]).filter(|c| Some(c.representation) == first_rep).collect();
        let Some(cd) = cols.get(column) else {
            let children: Vec<String> = f.children.iter().map(|&c| format!("'{path}.{}'", self.desc.fields[c as usize].name)).collect();
            let sub = if children.is_empty() { String::new() } else { format!("; its subfields: {}", children.join(", ")) };
            return Err(Error::NotFound(format!("field '{path}' has {} column(s), no column {column}{sub}", cols.len())));
        };
        let ct = ColumnType::from_u16(cd.column_type)
            .ok_or_else(|| Error::Unsupported(format!("field '{path}' column {column}: column type {:#x}", cd.column_type)))?;
        let (element, offsets) = if ct.is_index() {
            (Scalar::U64, true)
        } else if ct == ColumnType::Switch {
            return Err(Error::Unsupported(format!("field '{path}' column {column} is a variant's Switch column: not readable in bulk")));
        } else if let Kind::Scalar(s) = kind {
            (*s, false)
        } else {
            let s = Scalar::from_column(ct).ok_or_else(|| Error::Unsupported(format!("field '{path}' column {column}: {} columns", ct.name())))?;
            (s, false)
        };
        // Elements per entry: the product of the repetitions (fixed-size arrays, bitsets) of the
        // field and its ancestors, unless one of the ancestors is a collection or a variant, or the
        // column is not the field's first (a string's chars are as many as its offsets say).
        let mut mult = f.repetition.unwrap_or(1);
        let mut entry_aligned = true;
        let mut top = id;
        let mut cur = f.parent;
        let mut depth = 0;
        while let Some(p) = cur.filter(|&p| p != top) {
            let pf = &self.desc.fields[p as usize];
            entry_aligned &= !matches!(pf.role, Role::Collection | Role::Variant);
            mult = mult.checked_mul(pf.repetition.unwrap_or(1)).ok_or_else(|| Error::corrupt(format!("field '{path}': array sizes overflow"), 0))?;
            top = p;
            cur = pf.parent;
            depth += 1;
            if depth > self.desc.fields.len() {
                return Err(Error::corrupt(format!("field '{path}': its parents loop"), 0));
            }
        }
        Ok(BulkColumn { field: id, top, column, path: path.to_string(), element, offsets, mult: (entry_aligned && column == 0).then_some(mult) })
    }

    /// The number of elements column `col` holds in clusters `clusters` (what
    /// [`BulkReader::read`] writes): entries times fixed array sizes for fields outside any
    /// collection, else the page lists' counts. An error for a range outside the RNTuple.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-bulk_len-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("a", "std::array<float,3>")], WriteOptions::default())?;
    /// # for _ in 0..4 { w.fill(&Value::Record(vec![("a".into(), Value::List(vec![Value::F32(1.0); 3]))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.bulk_len(&r.bulk_column("a._0", 0)?, 0..1)?, 12);
    /// assert!(r.bulk_len(&r.bulk_column("a._0", 0)?, 0..2).is_err()); // one cluster only
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bulk_len(&self, col: &BulkColumn, clusters: Range<usize>) -> Result<u64> {
        let n = self.desc.clusters.len();
        if clusters.start > clusters.end || clusters.end > n {
            return Err(Error::Invalid(format!("{}: cluster range {}..{} outside the RNTuple's {n} clusters", col.what(), clusters.start, clusters.end)));
        }
        let mut total = 0u64;
        for k in clusters {
            total = total.checked_add(self.cluster_len(col, k)?).ok_or_else(|| Error::corrupt(format!("{}: element counts overflow", col.what()), 0))?;
        }
        Ok(total)
    }

    /// The elements of `col` in cluster `k` (in range).
    fn cluster_len(&self, col: &BulkColumn, k: usize) -> Result<u64> {
        let cl = &self.desc.clusters[k];
        if let Some(m) = col.mult {
            return cl.n_entries.checked_mul(m).ok_or_else(|| Error::corrupt(format!("{}: element count overflows in cluster {k}", col.what()), 0));
        }
        let f = &self.desc.fields[col.field as usize];
        match self.active_column(f, cl, col.column)? {
            Some((_, n)) => Ok(n),
            None => {
                // Under a collection, a field without data must be a late-added one (then its
                // parent has no items here either).
                self.check_may_be_absent(f, cl, 1)?;
                Ok(0)
            }
        }
    }

    /// Column `k` of the representation of `f` that holds data in cluster `cl` (the first whose
    /// first column is present and not suppressed), with its element count there; without
    /// allocating.
    fn active_column<'a>(&'a self, f: &FieldDescriptor, cl: &'a ClusterDescriptor, k: usize) -> Result<Option<(&'a ColumnDescriptor, u64)>> {
        let mut rep = None::<u16>;
        loop {
            // The next representation above `rep`.
            let next = f.columns.iter().map(|&c| self.desc.columns[c as usize].representation).filter(|&r| rep.is_none_or(|p| r > p)).min();
            let Some(r) = next else { return Ok(None) };
            rep = Some(r);
            let mut of_rep = f.columns.iter().map(|&c| &self.desc.columns[c as usize]).filter(|c| c.representation == r);
            let Some(first) = of_rep.clone().next() else { continue };
            match cl.columns.get(first.id as usize) {
                Some(Some(range)) if !range.suppressed => {}
                _ => continue,
            }
            let col = of_rep.nth(k).ok_or_else(|| Error::corrupt(format!("field '{}': representation {r} lacks column {k}", f.name), 0))?;
            let n = cl.columns.get(col.id as usize).and_then(|r| r.as_ref()).map_or(0, |r| r.n_elements);
            return Ok(Some((col, n)));
        }
    }

    /// The pages of `col` in cluster `k` with the zeros a deferred column starts with (`None`
    /// when the column holds no data there).
    pub(crate) fn bulk_pages(&self, col: &BulkColumn, k: usize) -> Result<Option<(u64, &[PageDescriptor])>> {
        let cl = self.desc.clusters.get(k).ok_or_else(|| Error::Invalid(format!("{}: no cluster {k}", col.what())))?;
        let f = &self.desc.fields[col.field as usize];
        let Some((cd, range)) =
            self.active_column(f, cl, col.column)?.and_then(|(cd, _)| cl.columns.get(cd.id as usize).and_then(|r| r.as_ref()).map(|r| (cd, r)))
        else {
            return Ok(None);
        };
        let lead = match origin(col.mult, cl) {
            Some(o) if cd.flags & COLUMN_FLAG_DEFERRED != 0 => range.first_element.saturating_sub(o).min(self.cluster_len(col, k)?),
            _ => 0,
        };
        Ok(Some((lead, &range.pages)))
    }

    /// Decodes elements `span` of `col` in cluster `k` into `dst` (`span`'s length; within the
    /// cluster's elements): pages wholly inside the span straight into `dst`, the one or two it
    /// cuts through into `scratch.page` first. Offsets are made global with `base` (the items of
    /// the clusters before), page by page while each is in cache. Returns the items up to the end
    /// of the span (`base` for other columns).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bulk_cluster<T: BulkElement>(
        &self,
        plan: &ReadPlan,
        col: &BulkColumn,
        k: usize,
        span: Range<u64>,
        dst: &mut [MaybeUninit<T>],
        base: u64,
        scratch: &mut Scratch,
    ) -> Result<u64> {
        let cl = &self.desc.clusters[k];
        let f = &self.desc.fields[col.field as usize];
        let n = self.cluster_len(col, k)?;
        if span.start > span.end || span.end > n || dst.len() as u64 != span.end - span.start {
            return Err(Error::internal(format!("{}: elements {}..{} of {n} in cluster {k} into {}", col.what(), span.start, span.end, dst.len())));
        }
        let active = self.active_column(f, cl, col.column)?;
        let Some((cd, range)) = active.and_then(|(cd, _)| cl.columns.get(cd.id as usize).and_then(|r| r.as_ref()).map(|r| (cd, r))) else {
            // No data in this cluster: a late-added field reads as zeros.
            self.check_may_be_absent(f, cl, n)?;
            dst.iter_mut().for_each(|d| {
                d.write(T::default());
            });
            // Offsets of entries without items all end where the items before them did.
            if col.offsets {
                rebase(dst, base, &mut 0).map_err(|why| Error::internal(format!("{}: {why}", col.what())))?;
            }
            return Ok(base);
        };
        let what = || format!("{} (column {}) in cluster {k}", col.what(), cd.id);
        let ct = ColumnType::from_u16(cd.column_type).ok_or_else(|| Error::Unsupported(format!("{}: column type {:#x}", what(), cd.column_type)))?;
        if ct.is_index() != col.offsets || ct == ColumnType::Switch || (!col.offsets && !col.element.accepts(ct)) {
            return Err(Error::Unsupported(format!("{}: a {} column cannot be read as {}", what(), ct.name(), col.element.type_name())));
        }
        let codec = ColumnCodec { ty: ct, bits: cd.bits_on_storage, range: cd.value_range };
        codec.validate()?;
        // A deferred column outside collections starts with zeros up to its first element.
        let lead = match origin(col.mult, cl) {
            Some(o) if cd.flags & COLUMN_FLAG_DEFERRED != 0 => range.first_element.saturating_sub(o).min(n),
            _ => 0,
        };
        let need = n - lead;
        if need > range.n_elements {
            return Err(Error::corrupt(format!("{}: needs {need} elements, the column holds {}", what(), range.n_elements), 0));
        }
        let zeros = span.end.min(lead).saturating_sub(span.start) as usize;
        let (head, _) = dst.split_at_mut(zeros);
        head.iter_mut().for_each(|d| {
            d.write(T::default());
        });
        let mut prev = 0u64;
        let bad = |why: &str| Error::corrupt(format!("{}: {why}", what()), 0);
        if col.offsets {
            rebase(head, base, &mut prev).map_err(bad)?;
        }
        let Scratch { stored, unz, pages } = scratch;
        // `at`: elements of the column (after the lead) the pages so far hold; `done`: of the span.
        let (mut at, mut done) = (0u64, zeros as u64);
        for page in &range.pages {
            let p0 = page.first_in_cluster;
            if p0 >= need || lead + p0 >= span.end {
                break;
            }
            let p1 = p0 + u64::from(page.n_elements);
            if p0 != at || p1 > need {
                return Err(Error::corrupt(format!("{}: page of elements {p0}..{p1} does not follow elements 0..{at} of {need}", what()), page.locator.offset));
            }
            at = p1;
            let (e0, e1) = (lead + p0, lead + p1);
            if e1 <= span.start {
                continue;
            }
            let (a, b) = (e0.max(span.start), e1.min(span.end));
            let d = &mut dst[(a - span.start) as usize..(b - span.start) as usize];
            // Whether the page's offsets were made global while decoded (split offsets read whole).
            let mut rebased = false;
            if (a, b) == (e0, e1) {
                match T::as_u64(d) {
                    Some(v) if col.offsets && ct == ColumnType::SplitIndex64 => {
                        let bad_page = |why: &str| Error::corrupt(format!("{}: {why}", what()), page.locator.offset);
                        rebased = self.page_source.with_page_in(plan, cd, &codec, page, k, (&mut *stored, &mut *unz), |raw| {
                            if decode_index64_rebased(raw, v, base, &mut prev).map_err(bad_page)? {
                                return Ok(true);
                            }
                            decode_uninit(&codec, raw, v).map_err(|e| relocate(e, page))?;
                            Ok(false)
                        })?;
                    }
                    _ => self.page_source.with_page_in(plan, cd, &codec, page, k, (&mut *stored, &mut *unz), |raw| {
                        decode_uninit(&codec, raw, d).map_err(|e| relocate(e, page))
                    })?,
                }
            } else {
                // A page the span cuts through: decoded whole, the span's part copied out.
                let whole = pages.get::<T>(page.n_elements as usize);
                self.page_source.with_page_in(plan, cd, &codec, page, k, (&mut *stored, &mut *unz), |raw| {
                    decode_uninit(&codec, raw, whole).map_err(|e| relocate(e, page))
                })?;
                d.copy_from_slice(&whole[(a - e0) as usize..(b - e0) as usize]);
            }
            if col.offsets && !rebased {
                rebase(d, base, &mut prev).map_err(|why| Error::corrupt(format!("{}: {why}", what()), page.locator.offset))?;
            }
            done += b - a;
        }
        if done != span.end - span.start {
            return Err(bad(&format!("pages hold {at} elements, elements {}..{} of {n} needed", span.start, span.end)));
        }
        Ok(if col.offsets { base + prev } else { base })
    }
}

/// Bulk reads against the Arrow read of the same file: every column of a file of many small
/// clusters, cluster by cluster into one reused buffer and over the whole range at once; misuse.
#[cfg(test)]
pub(crate) mod tests {
    use super::{BulkElement, BulkReader};
    use crate::error::Error;
    use crate::logical::kind::Scalar;
    use crate::write::{WriteOptions, Writer};
    use crate::{RNTupleFile, Reader, Value};
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type, Int16Type, Int32Type, UInt64Type};
    use arrow_array::{Array, ArrowPrimitiveType};
    use std::sync::atomic::{AtomicU64, Ordering};

    const N: u64 = 3000;

    /// A file of `N` entries in many small clusters and pages: scalars, a vector, a string, a
    /// fixed-size array, a vector of vectors and a bool.
    pub(crate) fn reader() -> Reader {
        static FILES: AtomicU64 = AtomicU64::new(0);
        let k = FILES.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rntuple-bulk-{}-{k}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 8_000, max_unzipped_page_size: 2048, ..Default::default() };
        let schema = [
            ("id", "std::uint64_t"),
            ("x", "double"),
            ("v", "std::vector<float>"),
            ("s", "std::string"),
            ("a", "std::array<std::int16_t,3>"),
            ("vv", "std::vector<std::vector<std::int32_t>>"),
            ("b", "bool"),
        ];
        let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
        for i in 0..N {
            let v: Vec<Value> = (0..i % 5).map(|j| Value::F32((i * 10 + j) as f32 * 0.5)).collect();
            let a: Vec<Value> = (0..3).map(|j| Value::Int(i as i64 * 3 - j)).collect();
            let vv: Vec<Value> = (0..i % 3).map(|j| Value::List((0..j + i % 2).map(|q| Value::Int((i + q) as i64 - 7)).collect())).collect();
            w.fill(&Value::Record(vec![
                ("id".into(), Value::UInt(i * 7)),
                ("x".into(), Value::F64(i as f64 / 3.0)),
                ("v".into(), Value::List(v)),
                ("s".into(), Value::String("ab".repeat((i % 4) as usize))),
                ("a".into(), Value::List(a)),
                ("vv".into(), Value::List(vv)),
                ("b".into(), Value::Bool(i % 3 == 0)),
            ]))
            .unwrap();
        }
        w.commit().unwrap();
        let r = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
        std::fs::remove_file(&path).unwrap();
        r
    }

    /// Reads a column cluster by cluster into one buffer reused across clusters (grown to the
    /// largest), concatenating what each cluster gave; offsets are made global by hand.
    pub(crate) fn by_cluster<T: BulkElement>(r: &Reader, bulk: &mut BulkReader, path: &str, column: usize) -> Vec<T> {
        let col = r.bulk_column(path, column).unwrap();
        let mut buf: Vec<T> = Vec::new();
        let mut out: Vec<T> = Vec::new();
        for c in 0..r.descriptor().clusters.len() {
            let n = r.bulk_len(&col, c..c + 1).unwrap() as usize;
            if buf.len() < n {
                buf.resize(n, T::default());
            }
            let got = bulk.read(r, &col, c..c + 1, &mut buf).unwrap();
            assert_eq!(got, n);
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    /// The whole range in one call, into a buffer of exactly its size.
    fn whole<T: BulkElement>(r: &Reader, path: &str, column: usize) -> Vec<T> {
        let col = r.bulk_column(path, column).unwrap();
        let k = r.descriptor().clusters.len();
        let mut buf = vec![T::default(); r.bulk_len(&col, 0..k).unwrap() as usize];
        assert_eq!(BulkReader::new().read(r, &col, 0..k, &mut buf).unwrap(), buf.len());
        buf
    }

    fn arrow_values<P: ArrowPrimitiveType>(a: &dyn Array) -> Vec<P::Native> {
        a.as_primitive::<P>().values().to_vec()
    }

    /// Arrow's offsets (n+1, from 0) as bulk end offsets (n).
    fn ends(offsets: &[i64]) -> Vec<u64> {
        offsets[1..].iter().map(|&o| o as u64).collect()
    }

    /// Offsets read cluster by cluster restart in each cluster: made global as a range read makes them.
    fn globalize(per_cluster: &[Vec<u64>]) -> Vec<u64> {
        let mut base = 0;
        let mut out = Vec::new();
        for c in per_cluster {
            out.extend(c.iter().map(|o| o + base));
            base += c.last().copied().unwrap_or(0);
        }
        out
    }

    #[test]
    fn every_column_equals_the_arrow_read() {
        let r = reader();
        assert!(r.descriptor().clusters.len() > 3, "the test wants several clusters");
        let b = r.read_batch(None, 0, N).unwrap();
        let col = |name: &str| b.column_by_name(name).unwrap().clone();
        let mut bulk = BulkReader::new();

        let id = arrow_values::<UInt64Type>(col("id").as_ref());
        assert_eq!(by_cluster::<u64>(&r, &mut bulk, "id", 0), id);
        assert_eq!(whole::<u64>(&r, "id", 0), id);
        let x = arrow_values::<Float64Type>(col("x").as_ref());
        assert_eq!(by_cluster::<f64>(&r, &mut bulk, "x", 0), x);

        let v = col("v");
        let v = v.as_list::<i64>();
        assert_eq!(whole::<u64>(&r, "v", 0), ends(v.value_offsets()));
        assert_eq!(by_cluster::<f32>(&r, &mut bulk, "v._0", 0), arrow_values::<Float32Type>(v.values().as_ref()));

        let s = col("s");
        let s = s.as_string::<i64>();
        assert_eq!(whole::<u64>(&r, "s", 0), ends(s.value_offsets()));
        let chars: Vec<u8> = by_cluster::<i8>(&r, &mut bulk, "s", 1).iter().map(|&c| c as u8).collect();
        assert_eq!(chars, s.value_data());

        let a = col("a");
        let a = a.as_fixed_size_list();
        assert_eq!(by_cluster::<i16>(&r, &mut bulk, "a._0", 0), arrow_values::<Int16Type>(a.values().as_ref()));

        let vv = col("vv");
        let vv = vv.as_list::<i64>();
        let inner = vv.values().as_list::<i64>();
        assert_eq!(whole::<u64>(&r, "vv", 0), ends(vv.value_offsets()));
        assert_eq!(whole::<u64>(&r, "vv._0", 0), ends(inner.value_offsets()));
        assert_eq!(by_cluster::<i32>(&r, &mut bulk, "vv._0._0", 0), arrow_values::<Int32Type>(inner.values().as_ref()));

        let bools = col("b");
        let bools: Vec<bool> = bools.as_boolean().iter().map(|x| x.unwrap_or(false)).collect();
        assert_eq!(by_cluster::<bool>(&r, &mut bulk, "b", 0), bools);

        // Offsets read cluster by cluster are the stored cluster-local ones: made global, the same.
        let col_v = r.bulk_column("v", 0).unwrap();
        let per: Vec<Vec<u64>> = (0..r.descriptor().clusters.len())
            .map(|c| {
                let mut buf = vec![0u64; r.bulk_len(&col_v, c..c + 1).unwrap() as usize];
                bulk.read(&r, &col_v, c..c + 1, &mut buf).unwrap();
                buf
            })
            .collect();
        assert_eq!(globalize(&per), ends(v.value_offsets()));
    }

    #[test]
    fn a_middle_range_and_no_growth_of_the_scratch() {
        let r = reader();
        let k = r.descriptor().clusters.len();
        let col = r.bulk_column("v._0", 0).unwrap();
        let offs = r.bulk_column("v", 0).unwrap();
        let (c0, c1) = (1, k - 1);
        let first = r.descriptor().clusters[c0].first_entry;
        let stop = r.descriptor().clusters[c1].first_entry;
        let b = r.read_batch(Some(&["v"]), first, stop).unwrap();
        let v = b.column(0).as_list::<i64>();
        let mut bulk = BulkReader::new();
        let mut o = vec![0u64; r.bulk_len(&offs, c0..c1).unwrap() as usize + 5];
        let n = bulk.read(&r, &offs, c0..c1, &mut o).unwrap();
        assert_eq!(&o[..n], ends(v.value_offsets()).as_slice(), "offsets global over the range, from 0");
        let mut vals = vec![0f32; r.bulk_len(&col, c0..c1).unwrap() as usize];
        bulk.read(&r, &col, c0..c1, &mut vals).unwrap();
        assert_eq!(vals, arrow_values::<Float32Type>(v.values().as_ref()));
        // A second pass over every cluster leaves the scratch as the first left it.
        let mut buf = vec![0f32; 4096];
        for c in 0..k {
            bulk.read(&r, &col, c..c + 1, &mut buf).unwrap();
        }
        let held = bulk.scratch_bytes();
        assert!(held > 0);
        for c in 0..k {
            bulk.read(&r, &col, c..c + 1, &mut buf).unwrap();
        }
        assert_eq!(bulk.scratch_bytes(), held);
        // An empty range reads nothing.
        assert_eq!(bulk.read::<f32>(&r, &col, 2..2, &mut []).unwrap(), 0);
    }

    #[test]
    fn misuse_is_an_error_naming_field_and_numbers() {
        let r = reader();
        let k = r.descriptor().clusters.len();
        let msg = |e: Error| e.to_string();
        let e = r.bulk_column("nope", 0).unwrap_err();
        assert!(matches!(e, Error::NotFound(_)) && msg(e).contains("no field 'nope'"));
        let e = r.bulk_column("v", 1).unwrap_err();
        assert!(msg(e).contains("field 'v' has 1 column(s), no column 1; its subfields: 'v._0'"));
        let e = r.bulk_column("a", 0).unwrap_err();
        assert!(msg(e).contains("field 'a' has 0 column(s)"));
        let col = r.bulk_column("x", 0).unwrap();
        assert_eq!(col.element_type(), Scalar::F64);
        let e = r.bulk_len(&col, 0..k + 1).unwrap_err();
        assert!(msg(e).contains(&format!("field 'x' column 0: cluster range 0..{} outside the RNTuple's {k} clusters", k + 1)));
        let mut bulk = BulkReader::new();
        let m = msg(bulk.read(&r, &col, 0..1, &mut [0f64; 1]).unwrap_err());
        assert!(m.contains("field 'x' column 0: clusters 0..1 hold") && m.ends_with("elements, the buffer 1"), "{m}");
        let e = bulk.read(&r, &col, 0..1, &mut [0f32; 10000]).unwrap_err();
        assert!(msg(e).contains("field 'x' column 0: holds double elements, not f32"));
        let e = bulk.read(&r, &r.bulk_column("v", 0).unwrap(), 0..1, &mut [0i64; 10000]).unwrap_err();
        assert!(msg(e).contains("holds offset (std::uint64_t) elements, not i64"));
        #[allow(clippy::reversed_empty_ranges)]
        let e = r.bulk_len(&col, 2..1).unwrap_err();
        assert!(msg(e).contains("cluster range 2..1"));
    }
}
