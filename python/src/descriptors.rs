//! The records of an RNTuple's anchor, header, footer and page lists as plain Python values (dicts, tuples,
//! bytes), from the reader's descriptor and its envelopes read again: what `rntuple._descriptors` turns into
//! uproot's descriptor objects (`RNTuple.member`, `.header`, `.footer`, `.page_link_list`...), and one
//! column of one cluster decoded for `RNTuple.read_cluster_pages`. Called by `NativeReader`'s methods of
//! the same names (`read`). Every value comes from the file; bytes are sliced with checks, never indexed.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyTuple};
use pyo3::IntoPyObjectExt;
use rntuple::format::descriptor::{ColumnRange, Descriptor};
use rntuple::logical::Scalar;
use rntuple::read::{BulkElement, BulkReader, Envelope};
use rntuple::{Error, Reader};

use crate::errors::{unblocked, OrRaise};

/// The anchor's members under their names in ROOT's class `ROOT::RNTuple` (as uproot's `member`).
pub(crate) fn anchor<'py>(py: Python<'py>, r: &Reader) -> PyResult<Bound<'py, PyDict>> {
    let a = r.anchor();
    let d = PyDict::new(py);
    for (name, v) in [("fVersionEpoch", a.epoch), ("fVersionMajor", a.major), ("fVersionMinor", a.minor), ("fVersionPatch", a.patch)] {
        d.set_item(name, v)?;
    }
    for (name, v) in [
        ("fSeekHeader", a.seek_header),
        ("fNBytesHeader", a.nbytes_header),
        ("fLenHeader", a.len_header),
        ("fSeekFooter", a.seek_footer),
        ("fNBytesFooter", a.nbytes_footer),
        ("fLenFooter", a.len_footer),
        ("fMaxKeySize", a.max_key_size),
    ] {
        d.set_item(name, v)?;
    }
    Ok(d)
}

/// The little-endian u64 at `at`, if the bytes reach that far.
fn le_u64(b: &[u8], at: usize) -> Option<u64> {
    b.get(at..at.checked_add(8)?)?.try_into().ok().map(u64::from_le_bytes)
}

/// One envelope, decompressed ("header", "footer" or "page_list" of cluster group `group`): its bytes
/// and the words at fixed places: type and length (the preamble), the checksum (the last 8 bytes), the
/// first feature-flag word (header and footer; this reader refuses envelopes with a flag set, so the one
/// word is all of them), the header checksum a footer or page list repeats, and the size of the footer's
/// schema extension record frame.
pub(crate) fn envelope<'py>(py: Python<'py>, r: &Reader, which: &str, group: usize) -> PyResult<Bound<'py, PyDict>> {
    let kind = match which {
        "header" => Envelope::Header,
        "footer" => Envelope::Footer,
        "page_list" => Envelope::PageList(group),
        other => return Err(Error::Invalid(format!("no envelope '{other}' (header, footer, page_list)"))).or_raise(py),
    };
    let b = unblocked(py, || r.envelope(kind)).or_raise(py)?;
    let short = || Error::corrupt(format!("{which} envelope of {} bytes", b.len()), 0);
    let preamble = le_u64(&b, 0).ok_or_else(short).or_raise(py)?;
    let d = PyDict::new(py);
    d.set_item("env_type_id", preamble & 0xFFFF)?;
    d.set_item("env_length", preamble >> 16)?;
    d.set_item("checksum", b.len().checked_sub(8).and_then(|at| le_u64(&b, at)).ok_or_else(short).or_raise(py)?)?;
    let word = |at: usize| le_u64(&b, at).ok_or_else(short).or_raise(py);
    match kind {
        Envelope::Header => d.set_item("feature_flag", word(8)?)?,
        Envelope::Footer => {
            d.set_item("feature_flag", word(8)?)?;
            d.set_item("header_checksum", word(16)?)?;
            d.set_item("extension_size", word(24)? as i64)?;
        }
        Envelope::PageList(_) => d.set_item("header_checksum", word(8)?)?,
    }
    d.set_item("bytes", PyBytes::new(py, &b))?;
    Ok(d)
}

/// The schema records the header holds (`extension` false) or the footer's schema extension adds (true), as
/// a dict of lists of tuples: "fields" (field version, type version, parent id (its own id at the top),
/// structural role, flags, name, type name, type alias, description, repetition (0 when not repetitive),
/// projection source or None, type checksum or None), "columns" (column type, bits on storage, field id,
/// flags, representation index, first element index (negative: deferred and suppressed until there), value
/// range min and max or None, column id), "aliases" (physical column id, field id) and "extra_type_info"
/// (content id, type version, type name, content).
pub(crate) fn schema_records<'py>(py: Python<'py>, r: &Reader, extension: bool) -> PyResult<Bound<'py, PyDict>> {
    let header = unblocked(py, || r.header_descriptor()).or_raise(py)?;
    let full = r.descriptor();
    // The header's records come first in the full descriptor's lists; the extension's follow.
    let d: &Descriptor = if extension { full } else { &header };
    let fields = d.fields.get(if extension { header.fields.len() } else { 0 }..).unwrap_or_default();
    let columns = d.columns.get(if extension { header.columns.len() } else { 0 }..).unwrap_or_default();
    let aliases = d.aliases.get(if extension { header.aliases.len() } else { 0 }..).unwrap_or_default();
    let extra = d.extra_type_info.get(if extension { header.extra_type_info.len() } else { 0 }..).unwrap_or_default();
    let out = PyDict::new(py);
    let rows = PyList::empty(py);
    for f in fields {
        let row = (
            f.field_version,
            f.type_version,
            f.parent.unwrap_or(f.id),
            f.role.to_u16(),
            f.flags,
            &f.name,
            &f.type_name,
            f.type_alias(),
            f.description(),
            f.repetition.unwrap_or(0),
            f.projection_source,
            f.type_checksum,
        );
        rows.append(row.into_pyobject(py)?)?;
    }
    out.set_item("fields", rows)?;
    let rows = PyList::empty(py);
    for c in columns {
        let first = i64::try_from(c.first_element).unwrap_or(i64::MAX);
        let first = if c.suppressed_deferred { -first } else { first };
        let (min, max) = c.value_range.map_or((None, None), |(a, b)| (Some(a), Some(b)));
        rows.append((c.column_type, c.bits_on_storage, c.field_id, c.flags, c.representation, first, min, max, c.id).into_pyobject(py)?)?;
    }
    out.set_item("columns", rows)?;
    out.set_item("aliases", aliases.iter().map(|a| (a.physical, a.field_id)).collect::<Vec<_>>())?;
    let rows = PyList::empty(py);
    for e in extra {
        rows.append((e.content_id, e.type_version, &e.type_name, PyBytes::new(py, &e.content)).into_pyobject(py)?)?;
    }
    out.set_item("extra_type_info", rows)?;
    Ok(out)
}

/// The footer's cluster group records: (first entry, entry span, clusters, page list length, page list
/// locator's stored size and offset).
pub(crate) fn cluster_groups(r: &Reader) -> Vec<(u64, u64, u32, u64, u64, u64)> {
    r.descriptor()
        .cluster_groups
        .iter()
        .map(|g| (g.min_entry, g.entry_span, g.n_clusters, g.page_list.length, g.page_list.locator.size, g.page_list.locator.offset))
        .collect()
}

/// The footer's linked attribute sets: (schema major and minor version, anchor length, anchor locator's
/// stored size and offset, name).
pub(crate) fn attribute_links(r: &Reader) -> Vec<(u16, u16, u32, u64, u64, String)> {
    r.descriptor().attribute_sets.iter().map(|a| (a.schema_major, a.schema_minor, a.anchor_length, a.anchor.size, a.anchor.offset, a.name.clone())).collect()
}

/// The ids of the clusters of cluster group `group`: page lists number their clusters on from the previous
/// groups'.
fn group_cluster_ids(d: &Descriptor, group: usize) -> std::ops::Range<usize> {
    let before = d.cluster_groups.iter().take(group).fold(0usize, |n, g| n.saturating_add(g.n_clusters as usize));
    let n = d.cluster_groups.get(group).map_or(0, |g| g.n_clusters as usize);
    before..before.saturating_add(n)
}

/// A column's range in one cluster: (suppressed, element offset or None when suppressed (the stored
/// marker is not kept), compression settings or None when suppressed, pages as (elements, has checksum,
/// locator's stored size, offset)); None for a column the cluster lists without a range.
fn column_pages<'py>(py: Python<'py>, range: Option<&ColumnRange>) -> PyResult<Bound<'py, PyAny>> {
    let Some(c) = range else { return Ok(py.None().into_bound(py)) };
    let pages = PyList::empty(py);
    for p in &c.pages {
        pages.append((p.n_elements, p.has_checksum, p.locator.size, p.locator.offset).into_pyobject(py)?)?;
    }
    let (offset, compression) = if c.suppressed { (None, None) } else { (Some(c.first_element), Some(c.compression)) };
    Ok((c.suppressed, offset, compression, pages).into_pyobject(py)?.into_any())
}

/// The page list of cluster group `group` as the envelope orders it: (cluster summaries as (first entry,
/// entries), per cluster the list of its columns' ranges (see `column_pages`), as many as the cluster lists).
pub(crate) fn page_locations<'py>(py: Python<'py>, r: &Reader, group: usize) -> PyResult<Bound<'py, PyTuple>> {
    let d = r.descriptor();
    if group >= d.cluster_groups.len() {
        return Err(Error::NotFound(format!("cluster group {group}: RNTuple '{}' has {}", d.name, d.cluster_groups.len()))).or_raise(py);
    }
    // The descriptor sorts its clusters by first entry; the page list's order is that of their ids.
    let ids = group_cluster_ids(d, group);
    let mut by_id: Vec<_> = d.clusters.iter().filter(|c| ids.contains(&c.id)).collect();
    by_id.sort_by_key(|c| c.id);
    let summaries = by_id.iter().map(|c| (c.first_entry, c.n_entries)).collect::<Vec<_>>();
    let clusters = PyList::empty(py);
    for c in by_id {
        let cols = PyList::empty(py);
        for range in &c.columns {
            cols.append(column_pages(py, range.as_ref())?)?;
        }
        clusters.append(cols)?;
    }
    PyTuple::new(py, [summaries.into_bound_py_any(py)?, clusters.into_any()])
}

/// Column `column` of the cluster with id `cluster` decoded (split, zigzag, delta and bit packing undone;
/// offsets cluster-local), as (bytes in native order, numpy dtype name): the elements its pages hold there,
/// or, where it is suppressed, those of the same column of the representation that holds the data; empty
/// where the cluster lists no range for it (a column added later).
pub(crate) fn cluster_column<'py>(py: Python<'py>, r: &Reader, cluster: usize, column: u32) -> PyResult<(Bound<'py, PyByteArray>, &'static str)> {
    let (bytes, dtype) = unblocked(py, || decode_cluster_column(r, cluster, column)).or_raise(py)?;
    Ok((PyByteArray::new(py, &bytes), dtype))
}

fn decode_cluster_column(r: &Reader, cluster: usize, column: u32) -> rntuple::Result<(Vec<u8>, &'static str)> {
    let d = r.descriptor();
    let col = d.columns.get(column as usize).ok_or_else(|| Error::NotFound(format!("no column {column} (the RNTuple has {})", d.columns.len())))?;
    let position = d
        .clusters
        .iter()
        .position(|c| c.id == cluster)
        .ok_or_else(|| Error::NotFound(format!("no cluster {cluster} (the RNTuple has {})", d.clusters.len())))?;
    let cl = &d.clusters[position];
    let field = d.fields.get(col.field_id as usize).ok_or_else(|| Error::corrupt(format!("column {column} belongs to no field"), 0))?;
    // The column's place among its representation's columns: the bulk reader picks the representation
    // that holds data in the cluster and reads its column at that place.
    let of_rep = |c: &&u32| d.columns.get(**c as usize).is_some_and(|x| x.representation == col.representation && x.field_id == col.field_id);
    let k = field
        .columns
        .iter()
        .filter(of_rep)
        .position(|&c| c == column)
        .ok_or_else(|| Error::Internal(format!("column {column} not among its field's columns")))?;
    // The elements the pages hold: those of the column, or of the active representation's where suppressed.
    let stored = match cl.columns.get(column as usize) {
        Some(Some(range)) if !range.suppressed => range.n_elements,
        Some(Some(_)) => active_elements(d, cl, field, k),
        _ => 0,
    };
    let path = d.field_path(field.id);
    if d.field_by_path(&path) != Some(field.id) {
        return Err(Error::Unsupported(format!("column {column}: its field's path '{path}' names another field as well")));
    }
    let bulk = r.bulk_column(&path, k)?;
    match bulk.element_type() {
        Scalar::Bool => read_tail::<bool>(r, &bulk, position, stored, |v| v.iter().map(|&b| b as u8).collect(), "bool"),
        Scalar::Char | Scalar::I8 => read_tail::<i8>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "int8"),
        Scalar::Byte | Scalar::U8 => read_tail::<u8>(r, &bulk, position, stored, |v| v.to_vec(), "uint8"),
        Scalar::I16 => read_tail::<i16>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "int16"),
        Scalar::U16 => read_tail::<u16>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "uint16"),
        Scalar::I32 => read_tail::<i32>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "int32"),
        Scalar::U32 => read_tail::<u32>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "uint32"),
        Scalar::I64 => read_tail::<i64>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "int64"),
        Scalar::U64 => read_tail::<u64>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "uint64"),
        Scalar::F32 => read_tail::<f32>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "float32"),
        Scalar::F64 => read_tail::<f64>(r, &bulk, position, stored, |v| v.iter().flat_map(|x| x.to_ne_bytes()).collect(), "float64"),
    }
}

/// The elements column `k` of the first representation of `field` that holds data in cluster `cl` has there.
fn active_elements(d: &Descriptor, cl: &rntuple::format::descriptor::ClusterDescriptor, field: &rntuple::format::descriptor::FieldDescriptor, k: usize) -> u64 {
    let mut reps: Vec<u16> = field.columns.iter().filter_map(|&c| d.columns.get(c as usize)).map(|c| c.representation).collect();
    reps.sort_unstable();
    reps.dedup();
    for rep in reps {
        let nth = field.columns.iter().filter(|&&c| d.columns.get(c as usize).is_some_and(|x| x.representation == rep)).nth(k);
        if let Some(Some(range)) = nth.and_then(|&c| cl.columns.get(c as usize)) {
            if !range.suppressed {
                return range.n_elements;
            }
        }
    }
    0
}

/// Reads `col` in cluster `position` (of the descriptor's list) and keeps its last `stored` elements (the
/// bulk reader puts the zeros a deferred column starts with before them), as bytes.
fn read_tail<T: BulkElement + Default + Clone>(
    r: &Reader,
    col: &rntuple::read::BulkColumn,
    position: usize,
    stored: u64,
    to_bytes: impl Fn(&[T]) -> Vec<u8>,
    dtype: &'static str,
) -> rntuple::Result<(Vec<u8>, &'static str)> {
    let n = usize::try_from(r.bulk_len(col, position..position + 1)?).map_err(|_| Error::Invalid("the column's elements exceed the address space".into()))?;
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Invalid(format!("{n} elements do not fit in memory")))?;
    v.resize(n, T::default());
    let got = BulkReader::new().read(r, col, position..position + 1, &mut v)?;
    let read = v.get(..got).ok_or_else(|| Error::Internal(format!("a bulk read wrote {got} elements into {n}")))?;
    let keep = usize::try_from(stored).unwrap_or(usize::MAX).min(got);
    Ok((to_bytes(read.get(got - keep..).unwrap_or_default()), dtype))
}
