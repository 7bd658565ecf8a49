//! Column decoding: where a field's column data for a span of entries lie in a cluster
//! (active representation, deferred and suppressed columns, late model extension), decoding
//! element ranges over pages (on several threads for large ranges), switch columns, and
//! collection offsets rebased to one global sequence; pages come from the page source, as the
//! read's plan says. ROOT's counterpart: `RColumn` and `RColumnElement` (reading and unpacking a
//! column's elements).

use super::pages::relocate;
use crate::error::{Error, Result};
use crate::format::descriptor::{ClusterDescriptor, ColumnDescriptor, ColumnRange, FieldDescriptor, PageDescriptor};
use crate::primitives::alloc::vec_with_capacity;
use crate::primitives::column_type::ColumnType;
use crate::primitives::decode::{decode_append, decode_switch, decode_uninit, ColumnCodec, Native};
use crate::read::open::Reader;
use crate::read::pool::read_plan::{ReadPlan, Span};
use std::mem::MaybeUninit;

/// A part of a page to decode: the page, and the first and end element wanted within it.
type Piece<'a> = (&'a PageDescriptor, usize, usize);

/// Columns with at least this many elements in one cluster are decoded on several threads.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 20;

/// Most elements reserved before the pages of a read are probed (see [`Reader::reservation`]).
const MAX_RESERVATION: u64 = 1 << 24;
/// Most elements reserved up front at all (2^31: an Arrow array's reach).
const MAX_WHOLE_RESERVATION: u64 = 1 << 31;

/// Most items one read of a collection whose items have no columns (an empty record: zero
/// bytes per item) may hold: its count is an offset no stored byte backs, and every item still
/// costs a consumer (a JSON `{}`, a Python object).
pub const MAX_ZERO_SIZE_ITEMS: u64 = 1 << 20;

/// Outputs of at least this many bytes are reserved only after their pages are probed.
const PROBE_MIN_BYTES: usize = 16 << 20;

/// Most bytes of zeros one read may produce for columns without data (deferred columns, fields
/// added later): they are backed by no stored bytes, so they are bounded explicitly.
pub const MAX_ZERO_FILL_BYTES: u64 = 1 << 30;

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

impl Reader {
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
            if let Some(Some(range)) = cluster.columns.get(rc[0].id as usize)
                && !range.suppressed
            {
                return Ok(Some(rc));
            }
        }
        Ok(None)
    }

    /// A field may lack data in a cluster only if its columns are deferred or come from the
    /// schema extension (late model extension); otherwise the page list is incomplete.
    pub(crate) fn check_may_be_absent(&self, f: &FieldDescriptor, cluster: &ClusterDescriptor, n_req: u64) -> Result<()> {
        if n_req == 0 {
            return Ok(());
        }
        let late = f.columns.iter().any(|&c| {
            let col = &self.desc.columns[c as usize];
            col.flags & crate::format::descriptor::COLUMN_FLAG_DEFERRED != 0 || col.from_extension
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
            Some(o) if col.flags & crate::format::descriptor::COLUMN_FLAG_DEFERRED != 0 => range.first_element.saturating_sub(o),
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
    pub(crate) fn read_column<T: Native>(
        &self,
        plan: &ReadPlan,
        f: &FieldDescriptor,
        k: usize,
        span: Span,
        origin: Option<u64>,
        out: &mut Vec<T>,
    ) -> Result<()> {
        let cluster = &self.desc.clusters[span.cluster];
        let Some(sl) = self.column_slice(f, k, span, origin)? else {
            // No data in this cluster: a deferred (late-added) field reads as zero.
            return push_zeros(out, span.end - span.start, origin.is_some(), f, cluster);
        };
        let ct = ColumnType::from_u16(sl.col.column_type).ok_or_else(|| Error::Unsupported(format!("column type {:#x}", sl.col.column_type)))?;
        let codec = ColumnCodec { ty: ct, bits: sl.col.bits_on_storage, range: sl.col.value_range };
        push_zeros(out, sl.lead, true, f, cluster)?;
        if sl.pe > sl.ps {
            self.decode_range(plan, sl.col, &codec, sl.range, span.cluster, sl.ps, sl.pe, out)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn decode_range<T: Native>(
        &self,
        plan: &ReadPlan,
        col: &ColumnDescriptor,
        codec: &ColumnCodec,
        range: &ColumnRange,
        cluster: usize,
        s: u64,
        e: u64,
        out: &mut Vec<T>,
    ) -> Result<()> {
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
        // A large output is reserved only once the pages' stored bytes are seen to back it.
        if total.saturating_mul(std::mem::size_of::<T>()) >= PROBE_MIN_BYTES {
            for (page, _, _) in &pieces {
                self.page_source.probe_page(plan, col, codec, page, cluster)?;
            }
        }
        let need = (out.len() as u64).saturating_add(total as u64).saturating_mul(std::mem::size_of::<T>() as u64);
        crate::format::budget::check(need, || {
            let field = self.desc.fields.get(col.field_id as usize).map_or("?", |f| f.name.as_str());
            format!("reading cluster {} of field '{field}' (column {})", self.desc.clusters[cluster].id, col.id)
        })?;
        out.try_reserve(total).map_err(|_| {
            Error::Unsupported(format!("column {}: cannot allocate {total} elements of {} bytes in cluster {cluster}", col.id, std::mem::size_of::<T>()))
        })?;
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
                        self.page_source.with_page(plan, col, codec, page, cluster, |raw| decode_uninit(codec, raw, d).map_err(|err| relocate(err, page)))?;
                    } else {
                        tmp.clear();
                        self.page_source
                            .with_page(plan, col, codec, page, cluster, |raw| decode_append(codec, raw, n, &mut tmp).map_err(|err| relocate(err, page)))?;
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

    pub(crate) fn read_switch(&self, plan: &ReadPlan, f: &FieldDescriptor, span: Span, origin: Option<u64>, out: &mut Vec<(u64, u32)>) -> Result<()> {
        let n_req = span.end - span.start;
        let Some(sl) = self.column_slice(f, 0, span, origin)? else {
            if origin.is_none() && n_req > 0 {
                let cluster = &self.desc.clusters[span.cluster];
                return Err(Error::corrupt(format!("variant '{}' has no switch data in cluster {}", f.name, cluster.id), 0));
            }
            let cluster = &self.desc.clusters[span.cluster];
            reserve_zeros(out, n_req, f, cluster)?;
            out.extend(std::iter::repeat_n((0u64, 0u32), n_req as usize));
            return Ok(());
        };
        reserve_zeros(out, sl.lead, f, &self.desc.clusters[span.cluster])?;
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
            self.page_source.with_page(plan, sl.col, &codec, page, span.cluster, |raw| {
                decode_switch(raw, page.n_elements as usize, &mut tmp).map_err(|err| relocate(err, page))
            })?;
            out.extend_from_slice(&tmp[(sl.ps.max(p0) - p0) as usize..(sl.pe.min(p1) - p0) as usize]);
        }
        Ok(())
    }

    /// Reads end offsets of a collection (column 0) over spans. Returns the global offsets
    /// (n+1 values starting at 0) and the child spans.
    pub(crate) fn offsets(&self, plan: &ReadPlan, f: &FieldDescriptor, spans: &[Span], mult: Option<u64>) -> Result<(Vec<i64>, Vec<Span>)> {
        // Reserved as far as the page lists back the spans (a lying offset cannot drive it).
        let mut offs: Vec<i64> = vec_with_capacity(self.reservation(plan, f, spans).saturating_add(1));
        offs.push(0i64);
        let mut child = Vec::with_capacity(spans.len());
        for sp in spans {
            // The cluster-local end offsets are decoded straight into the output, then rebased
            // in place; a span starting inside a cluster also reads the preceding end offset.
            let lead = sp.start > 0;
            let rs = Span { start: sp.start - lead as u64, ..*sp };
            let at = offs.len();
            self.read_column(plan, f, 0, rs, origin(mult, &self.desc.clusters[sp.cluster]), &mut offs)?;
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
                return Err(Error::corrupt(
                    format!("collection '{}': offsets decrease or overflow in cluster {cluster} (cluster-local elements {}..{})", f.name, sp.start, sp.end),
                    0,
                ));
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
        let items = offs.last().map_or(0, |&v| v as u64);
        if items > MAX_ZERO_SIZE_ITEMS && f.columns.len() <= 1 && !self.items_have_columns(f) {
            return Err(Error::Unsupported(format!(
                "collection '{}' of items without data (no columns: zero bytes each) claims {items} items in one read, more than the {MAX_ZERO_SIZE_ITEMS} this reader accepts (nothing in the file backs the count)",
                f.name
            )));
        }
        Ok((offs, child))
    }

    /// Whether any field below `f` has a column (the items of a collection then take bytes).
    fn items_have_columns(&self, f: &FieldDescriptor) -> bool {
        let mut stack: Vec<u32> = f.children.clone();
        while let Some(id) = stack.pop() {
            let Some(c) = self.desc.fields.get(id as usize) else { continue };
            if !c.columns.is_empty() {
                return true;
            }
            stack.extend_from_slice(&c.children);
        }
        false
    }

    /// How many elements to reserve up front for reading `spans` of field `f`: the requested
    /// count, bounded by what the page lists say the clusters hold (so that a lying offset cannot
    /// drive the allocation). Above [`MAX_RESERVATION`] the pages of those clusters are probed
    /// first (`PageSource::probe_page`); if one does not back its count, only `MAX_RESERVATION` is
    /// reserved (a hint: the read then fails on that page, or grows its output fallibly).
    pub(crate) fn reservation(&self, plan: &ReadPlan, f: &FieldDescriptor, spans: &[Span]) -> usize {
        let mut total = 0u64;
        for sp in spans {
            let c = &self.desc.clusters[sp.cluster];
            let avail = f.columns.iter().filter_map(|&id| c.columns.get(id as usize).and_then(|r| r.as_ref()).map(|r| r.n_elements)).max().unwrap_or(0);
            total = total.saturating_add((sp.end - sp.start).min(avail));
        }
        if total > MAX_RESERVATION && !self.pages_back(plan, f, spans) {
            return MAX_RESERVATION as usize;
        }
        total.min(MAX_WHOLE_RESERVATION) as usize
    }

    /// Whether every page of `f`'s columns in the clusters of `spans` passes `PageSource::probe_page`.
    fn pages_back(&self, plan: &ReadPlan, f: &FieldDescriptor, spans: &[Span]) -> bool {
        let mut clusters: Vec<usize> = spans.iter().map(|s| s.cluster).collect();
        clusters.dedup();
        clusters.iter().all(|&k| {
            f.columns.iter().all(|&id| {
                let col = &self.desc.columns[id as usize];
                let Some(range) = self.desc.clusters[k].columns.get(id as usize).and_then(Option::as_ref) else { return true };
                let Some(ty) = ColumnType::from_u16(col.column_type) else { return false };
                let codec = ColumnCodec { ty, bits: col.bits_on_storage, range: col.value_range };
                range.pages.iter().all(|p| self.page_source.probe_page(plan, col, &codec, p, k).is_ok())
            })
        })
    }
}

pub(crate) fn origin(mult: Option<u64>, c: &ClusterDescriptor) -> Option<u64> {
    mult.and_then(|m| c.first_entry.checked_mul(m))
}

pub(crate) fn mul_span(s: &Span, n: u64) -> Result<Span> {
    let start = s.start.checked_mul(n).ok_or_else(|| Error::corrupt("array size overflows", 0))?;
    let end = s.end.checked_mul(n).ok_or_else(|| Error::corrupt("array size overflows", 0))?;
    Ok(Span { cluster: s.cluster, start, end })
}

fn push_zeros<T: Native>(out: &mut Vec<T>, n: u64, entry_aligned: bool, f: &FieldDescriptor, c: &ClusterDescriptor) -> Result<()> {
    // Zero-filled data exists only for deferred columns of fields without a collection ancestor;
    // its size is then bounded by the entry range the caller asked for (times fixed array sizes),
    // never by a count read from the file.
    if n > 0 && !entry_aligned {
        return Err(Error::corrupt(format!("field '{}' needs {n} elements in cluster {}, which has no data for it", f.name, c.id), 0));
    }
    reserve_zeros(out, n, f, c)?;
    out.extend(std::iter::repeat_n(T::default(), n as usize));
    Ok(())
}

/// Room for `n` zero elements (of a column without data in cluster `c`), within
/// [`MAX_ZERO_FILL_BYTES`] and without aborting when memory cannot be had.
fn reserve_zeros<T>(out: &mut Vec<T>, n: u64, f: &FieldDescriptor, c: &ClusterDescriptor) -> Result<()> {
    let bytes = n.saturating_mul(std::mem::size_of::<T>().max(1) as u64);
    if bytes > MAX_ZERO_FILL_BYTES {
        return Err(Error::Unsupported(format!(
            "field '{}': {n} elements in cluster {} have no stored data (a deferred column) and would fill {bytes} bytes with zeros, \
             more than the {} MiB one read may fill; read fewer entries",
            f.name,
            c.id,
            MAX_ZERO_FILL_BYTES >> 20
        )));
    }
    out.try_reserve(n as usize).map_err(|_| Error::Unsupported(format!("field '{}': cannot allocate {n} elements", f.name)))
}
