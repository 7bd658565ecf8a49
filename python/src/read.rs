//! Reading: `NativeFile` (an open ROOT file; native part of `rntuple.File`) and `NativeReader` (one
//! RNTuple; native part of `rntuple.RNTuple`). Data leave as `pyarrow.RecordBatch`es, as Arrow C streams of
//! the Arrow PyCapsule interface (`__arrow_c_stream__`, see `capsule`) or as rows in the JSON form of
//! `rntuple dump`; the GIL is released while reading and decompressing.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyCapsule, PyDict, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use rntuple::format::descriptor::{Descriptor, Role};
use rntuple::{Error, RNTupleFile, Reader};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::arrow_ffi::batch_to_pyarrow;
use crate::errors::{unblocked, OrRaise};
use crate::{capsule, descriptors, ops, source};

/// An open ROOT file (native part of `rntuple.File`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeFile {
    file: Arc<RNTupleFile>,
}

#[pymethods]
impl NativeFile {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let file = unblocked(py, || RNTupleFile::open(&path)).or_raise(py)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// A ROOT file's whole content, held in memory.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let file = unblocked(py, || RNTupleFile::from_bytes(data)).or_raise(py)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// A ROOT file read through a seekable binary Python file object, range by range.
    #[staticmethod]
    fn from_file_object(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let src: Arc<dyn rntuple::storage::local::source::ReadAt> = Arc::new(source::PyFileSource::new(obj)?);
        let file = unblocked(py, || RNTupleFile::from_source(src)).or_raise(py)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// `(requests, bytes)` the file's byte source served so far (zeros when it does not count).
    fn io_counts(&self) -> (u64, u64) {
        self.file.io_counts().unwrap_or_default()
    }

    /// Paths of the RNTuples in the file, in key order.
    fn names(&self) -> Vec<String> {
        self.file.names()
    }

    /// Every key of the file, subdirectories included, every cycle: `(path, class name, cycle)`.
    fn keys(&self) -> Vec<(String, String, u16)> {
        self.file.keys()
    }

    /// The file's bytes `start..stop` (uproot's `source.chunk`), read with the GIL released; a range past the
    /// end of the file is an error.
    fn read_range<'py>(&self, py: Python<'py>, start: u64, stop: u64) -> PyResult<Bound<'py, PyBytes>> {
        let f = self.file.clone();
        let what = format!("bytes {start}..{stop}");
        let b = unblocked(py, || f.root_file().source().read_vec(start, stop.saturating_sub(start), &what)).or_raise(py)?;
        Ok(PyBytes::new(py, &b))
    }

    /// The file's length in bytes.
    fn num_bytes(&self) -> u64 {
        self.file.root_file().source().len()
    }

    /// Opens the RNTuple `name` (streamer fields as objects or as raw bytes; read-ahead: clusters
    /// loaded ahead, their byte budget, concurrent streams of a cold local file; `None` keeps the
    /// default, clusters 0 turns the pool off).
    #[pyo3(signature = (name, streamer_objects=true, read_ahead=(None, None, None)))]
    fn reader(&self, py: Python<'_>, name: &str, streamer_objects: bool, read_ahead: (Option<usize>, Option<u64>, Option<usize>)) -> PyResult<NativeReader> {
        let f = self.file.clone();
        let mut r = unblocked(py, || f.reader(name)).or_raise(py)?;
        r.set_streamer_objects(streamer_objects);
        let (clusters, bytes, streams) = read_ahead;
        if clusters.is_some() || bytes.is_some() || streams.is_some() {
            let mut ra = r.read_ahead();
            if let Some(n) = clusters {
                ra = if n == 0 { rntuple::read::ReadAhead::off() } else { rntuple::read::ReadAhead { clusters: n, ..ra } };
            }
            if let Some(b) = bytes {
                ra.bytes = b;
            }
            if let Some(s) = streams {
                ra.streams = s.max(1);
            }
            r.set_read_ahead(ra);
        }
        Ok(NativeReader { reader: Arc::new(r) })
    }
}

/// Reads one RNTuple (native part of `rntuple.RNTuple`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeReader {
    reader: Arc<Reader>,
}

/// (column type id, bits on storage) of a field's columns of its first representation.
fn rep0_columns(d: &Descriptor, columns: &[u32]) -> Vec<(u16, u16)> {
    let mut cols = Vec::new();
    let mut rep0: Option<u16> = None;
    for &c in columns {
        if let Some(col) = d.columns.get(c as usize) {
            let r = *rep0.get_or_insert(col.representation);
            if col.representation == r {
                cols.push((col.column_type, col.bits_on_storage));
            }
        }
    }
    cols
}

fn role_name(r: Role) -> &'static str {
    match r {
        Role::Leaf => "leaf",
        Role::Collection => "collection",
        Role::Record => "record",
        Role::Variant => "variant",
        Role::Streamer => "streamer",
        Role::Unknown(_) => "unknown",
    }
}

impl NativeReader {
    /// Which fields (by id) the chosen top-level fields (all when None) bring: themselves, their subfields
    /// and the sources of projected fields.
    fn wanted_fields(&self, py: Python<'_>, fields: &Option<Vec<String>>) -> PyResult<Vec<bool>> {
        let d = self.reader.descriptor();
        let tops: Vec<u32> = match fields {
            None => self.reader.fields().iter().map(|f| f.id).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    d.fields
                        .iter()
                        .find(|f| f.parent.is_none() && &f.name == n)
                        .map(|f| f.id)
                        .ok_or_else(|| Error::NotFound(format!("no top-level field '{n}' in RNTuple '{}'", d.name)))
                })
                .collect::<rntuple::Result<_>>()
                .or_raise(py)?,
        };
        // A projected field brings the columns of its source field, not the source's other subfields
        // (`Muon_pt` projected from `_collection0` needs its offsets, not every muon member).
        let mut want = vec![false; d.fields.len()];
        let mut expanded = vec![false; d.fields.len()];
        let mut stack: Vec<(u32, bool)> = tops.into_iter().map(|f| (f, true)).collect();
        while let Some((f, expand)) = stack.pop() {
            let Some(field) = d.fields.get(f as usize) else { continue };
            want[f as usize] = true;
            if expand && !expanded[f as usize] {
                expanded[f as usize] = true;
                stack.extend(field.children.iter().map(|&c| (c, true)));
                if let Some(s) = field.projection_source {
                    stack.push((s, false));
                }
            }
        }
        Ok(want)
    }
}

#[pymethods]
impl NativeReader {
    #[getter]
    fn num_entries(&self) -> u64 {
        self.reader.num_entries()
    }

    #[getter]
    fn name(&self) -> String {
        self.reader.descriptor().name.clone()
    }

    #[getter]
    fn writer(&self) -> String {
        self.reader.descriptor().writer.clone()
    }

    #[getter]
    fn description(&self) -> String {
        self.reader.descriptor().description.clone()
    }

    /// Names of the attribute sets linked from this RNTuple's footer.
    fn attribute_set_names(&self) -> Vec<String> {
        self.reader.attribute_set_names()
    }

    /// The RNTuple of the attribute set `name` (fields `_rangeStart`, `_rangeLen`, `_userData`).
    fn attribute_set(&self, py: Python<'_>, name: &str) -> PyResult<NativeReader> {
        let r = unblocked(py, || self.reader.attribute_set(name)).or_raise(py)?;
        Ok(NativeReader { reader: Arc::new(r.into_reader()) })
    }

    /// Readable top-level fields in schema order: list of (name, type for display, field id).
    fn top_fields(&self) -> Vec<(String, String, u32)> {
        self.reader.fields().iter().map(|f| (f.name.clone(), self.reader.display_type(f.id), f.id)).collect()
    }

    /// Top-level fields that cannot be read, with the reason.
    fn skipped_fields(&self) -> Vec<(String, String)> {
        self.reader.skipped_fields()
    }

    /// Reads every page of every readable field, cluster by cluster (`Reader::check`), with the
    /// GIL released; returns the report as a dict.
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.reader.clone();
        let rep = unblocked(py, || Ok(r.check(|_, _| {}))).or_raise(py)?;
        ops::check_report(py, rep)
    }

    /// Every field record as a dict (id, name, type, alias, role, parent, children, repetition,
    /// projection source, flags, type version, type checksum, kind, readable, columns of representation 0 as
    /// (column type id, bits on storage)).
    fn field_records<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let d = self.reader.descriptor();
        let mut out = Vec::with_capacity(d.fields.len());
        for f in &d.fields {
            let x = PyDict::new(py);
            x.set_item("id", f.id)?;
            x.set_item("name", &f.name)?;
            x.set_item("type", &f.type_name)?;
            x.set_item("alias", f.type_alias())?;
            x.set_item("description", f.description())?;
            x.set_item("role", role_name(f.role))?;
            x.set_item("parent", f.parent)?;
            x.set_item("children", &f.children)?;
            x.set_item("repetition", f.repetition)?;
            x.set_item("source", f.projection_source)?;
            x.set_item("flags", f.flags)?;
            x.set_item("type_version", f.type_version)?;
            x.set_item("type_checksum", f.type_checksum)?;
            x.set_item("readable", self.reader.is_readable(f.id))?;
            x.set_item("kind", self.reader.kind(f.id).ok().map(|k| format!("{k:?}")))?;
            x.set_item("columns", rep0_columns(d, &f.columns))?;
            out.push(x);
        }
        Ok(out)
    }

    /// Every field record as a tuple, in the order of `rntuple._fields.FIELD_ROW` (id, name, type, alias,
    /// description, role, parent, children, repetition, source, flags, readable, kind, columns): the compact
    /// form the field tree is built from. Repeated strings (types, kinds, roles, the empty string) are one
    /// Python object each, so a schema of tens of thousands of fields costs a few hundred bytes per field. The
    /// records from `start` to `stop` (all by default): the field tree reads them in slices, so that their
    /// tuples are not all alive at once.
    #[pyo3(signature = (start=0, stop=None))]
    fn field_rows<'py>(&self, py: Python<'py>, start: usize, stop: Option<usize>) -> PyResult<Vec<Bound<'py, PyTuple>>> {
        let d = self.reader.descriptor();
        let range = slice_range(d.fields.len(), start, stop);
        let mut shared: HashMap<String, Bound<'py, PyString>> = HashMap::new();
        let mut intern = |s: &str| shared.entry(s.to_owned()).or_insert_with(|| PyString::new(py, s)).clone();
        let mut out = Vec::with_capacity(range.len());
        for f in &d.fields[range] {
            let kind = self.reader.kind(f.id).ok().map(|k| intern(&format!("{k:?}")));
            let cols = PyList::new(py, rep0_columns(d, &f.columns))?;
            let row = [
                f.id.into_bound_py_any(py)?,
                PyString::new(py, &f.name).into_any(),
                intern(&f.type_name).into_any(),
                intern(f.type_alias()).into_any(),
                intern(f.description()).into_any(),
                intern(role_name(f.role)).into_any(),
                f.parent.into_bound_py_any(py)?,
                PyTuple::new(py, &f.children)?.into_any(),
                f.repetition.into_bound_py_any(py)?,
                f.projection_source.into_bound_py_any(py)?,
                f.flags.into_bound_py_any(py)?,
                self.reader.is_readable(f.id).into_bound_py_any(py)?,
                kind.into_bound_py_any(py)?,
                cols.into_any(),
            ];
            out.push(PyTuple::new(py, row)?);
        }
        Ok(out)
    }

    /// Entry boundaries of the clusters: [0, end of cluster 0, end of cluster 1, ...].
    fn cluster_boundaries(&self) -> Vec<u64> {
        let d = self.reader.descriptor();
        let mut v = vec![0];
        for c in &d.clusters {
            v.push(c.first_entry + c.n_entries);
        }
        v
    }

    /// (stored bytes, uncompressed bytes, pages) of every field, indexed by field id: its own
    /// columns' and all its sub-fields' together (`rntuple::inspect::storage`, as `rntuple info`
    /// and `rntuple report` count them; a projected field stores nothing of its own).
    fn field_sizes(&self) -> Vec<(u64, u64, u64)> {
        let s = rntuple::inspect::storage::StorageStats::of(self.reader.descriptor(), None);
        s.fields.iter().map(|f| (f.total.stored, f.total.uncompressed, f.total.pages)).collect()
    }

    /// (clusters, pages, stored bytes, uncompressed bytes) of the chosen top-level fields'
    /// columns (all fields when None).
    #[pyo3(signature = (fields=None))]
    fn storage_stats(&self, py: Python<'_>, fields: Option<Vec<String>>) -> PyResult<(u64, u64, u64, u64)> {
        let want = self.wanted_fields(py, &fields)?;
        let d = self.reader.descriptor();
        let (mut pages, mut stored, mut unzipped) = (0u64, 0u64, 0u64);
        for c in &d.clusters {
            for (cid, range) in c.columns.iter().enumerate() {
                let (Some(range), Some(col)) = (range, d.columns.get(cid)) else { continue };
                if range.suppressed || !want.get(col.field_id as usize).copied().unwrap_or(false) {
                    continue;
                }
                for p in &range.pages {
                    pages += 1;
                    stored += p.locator.size;
                    unzipped += (p.n_elements as u64 * col.bits_on_storage as u64).div_ceil(8);
                }
            }
        }
        Ok((d.clusters.len() as u64, pages, stored, unzipped))
    }

    /// (column type, elements) of every column of the chosen top-level fields (all when None) in the
    /// clusters that hold entries `start..stop` (a suppressed column's elements count for the column of
    /// the representation that holds them), and once more for every cardinality field: what a read of
    /// that range decodes.
    #[pyo3(signature = (fields, start, stop))]
    fn column_elements(&self, py: Python<'_>, fields: Option<Vec<String>>, start: u64, stop: u64) -> PyResult<Vec<(u16, u64)>> {
        let want = self.wanted_fields(py, &fields)?;
        let d = self.reader.descriptor();
        let mut out: Vec<(u16, u64)> = Vec::new();
        let mut slot: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for c in d.clusters.iter().filter(|c| c.first_entry < stop.max(start + 1) && c.first_entry + c.n_entries > start) {
            for (cid, range) in c.columns.iter().enumerate() {
                let (Some(range), Some(col)) = (range, d.columns.get(cid)) else { continue };
                if range.suppressed || !want.get(col.field_id as usize).copied().unwrap_or(false) {
                    continue;
                }
                let n: u64 = range.pages.iter().map(|p| p.n_elements as u64).sum();
                let i = *slot.entry(cid).or_insert_with(|| {
                    out.push((col.column_type, 0));
                    out.len() - 1
                });
                out[i].1 += n;
            }
        }
        // A cardinality field reads its collection's offsets once more, into its own array (as uproot
        // counts it).
        for f in d.fields.iter().filter(|f| want.get(f.id as usize).copied().unwrap_or(false)) {
            if !f.type_name.starts_with("ROOT::RNTupleCardinality") {
                continue;
            }
            let source = f.projection_source.and_then(|s| d.fields.get(s as usize)).unwrap_or(f);
            if let Some(i) = source.columns.iter().find_map(|c| slot.get(&(*c as usize))) {
                out.push(out[*i]);
            }
        }
        Ok(out)
    }

    /// Reads the chosen top-level fields (all readable fields when None) of entries
    /// `start..stop` into a `pyarrow.RecordBatch`; the GIL is released while reading. `types`:
    /// (field name, type) pairs, those fields read into the requested types (schema evolution,
    /// `Reader::read_batch_with_types`).
    #[pyo3(signature = (fields, start, stop, types=None))]
    fn read(&self, py: Python<'_>, fields: Option<Vec<String>>, start: u64, stop: u64, types: Option<&Bound<'_, PyAny>>) -> PyResult<PyObject> {
        let r = self.reader.clone();
        let types = match types {
            Some(t) => crate::convert::py_schema(t)?,
            None => Vec::new(),
        };
        let batch = unblocked(py, move || {
            let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
            let types: Vec<(&str, rntuple::logical::typename::TypeExpr)> = types.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            r.read_batch_with_types(names.as_deref(), &types, start, stop)
        })
        .or_raise(py)?;
        batch_to_pyarrow(py, batch)
    }

    /// Reads the chosen top-level fields (all readable fields when None) of the entries `start..stop` that the
    /// selection `where_` (the core's syntax) and the element `filters` ((collection, expression) pairs) keep,
    /// cluster by cluster: the selection's fields first, the clusters where no entry passes skipped (their
    /// other pages not read), only the kept entries returned (`rntuple::ops::read_selected`); the GIL is
    /// released meanwhile. `types` as for `read` (pairs of fields not read are left alone). Returns
    /// (pyarrow.RecordBatch, {"entries_read", "entries_kept", "clusters", "clusters_skipped"}, entry numbers
    /// of the rows as bytes of little-endian uint64 when `entry_numbers`, else None).
    #[pyo3(signature = (fields, start, stop, where_=None, types=None, filters=Vec::new(), entry_numbers=false))]
    #[allow(clippy::too_many_arguments)]
    fn read_selected<'py>(
        &self,
        py: Python<'py>,
        fields: Option<Vec<String>>,
        start: u64,
        stop: u64,
        where_: Option<String>,
        types: Option<&Bound<'py, PyAny>>,
        filters: Vec<(String, String)>,
        entry_numbers: bool,
    ) -> PyResult<(PyObject, Bound<'py, PyDict>, Option<Bound<'py, PyBytes>>)> {
        let r = self.reader.clone();
        let types = match types {
            Some(t) => crate::convert::py_schema(t)?,
            None => Vec::new(),
        };
        let sel = rntuple::expr::Selection::new(where_.as_deref(), &filters).or_raise(py)?;
        let (got, numbers) = unblocked(py, move || {
            let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
            let types: Vec<(&str, rntuple::logical::typename::TypeExpr)> = types.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            let got = rntuple::ops::read_selected::read_selected(&r, names.as_deref(), &types, start, stop, &sel)?;
            let numbers = entry_numbers.then(|| got.entry_numbers().iter().flat_map(|e| e.to_le_bytes()).collect::<Vec<u8>>());
            Ok((got, numbers))
        })
        .or_raise(py)?;
        let stats = PyDict::new(py);
        stats.set_item("entries_read", got.stats.entries_read)?;
        stats.set_item("entries_kept", got.stats.entries_kept)?;
        stats.set_item("clusters", got.stats.clusters)?;
        stats.set_item("clusters_skipped", got.stats.clusters_skipped)?;
        let numbers = numbers.map(|b| PyBytes::new(py, &b));
        Ok((batch_to_pyarrow(py, got.batch)?, stats, numbers))
    }

    /// `__arrow_c_stream__` of the Arrow PyCapsule interface: every readable top-level field of every entry
    /// as a capsule "arrow_array_stream", one record batch per cluster (see `arrow_stream`).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(&self, py: Python<'py>, requested_schema: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyCapsule>> {
        capsule::rntuple_stream(py, &self.reader, None, 0, self.reader.num_entries(), requested_schema)
    }

    /// The chosen top-level fields (all readable fields when None) of entries `start..stop` as a capsule
    /// "arrow_array_stream" (the Arrow PyCapsule interface): one record batch per cluster, each read when the
    /// consumer asks for it, with the GIL released. `requested_schema` (a capsule "arrow_schema") naming some
    /// of these fields selects them, in its order and in its types where those have the same layout; a field
    /// it names that is not among them leaves the stream in its own schema (the interface's best effort).
    #[pyo3(signature = (fields, start, stop, requested_schema=None))]
    fn arrow_stream<'py>(
        &self,
        py: Python<'py>,
        fields: Option<Vec<String>>,
        start: u64,
        stop: u64,
        requested_schema: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        capsule::rntuple_stream(py, &self.reader, fields, start, stop, requested_schema)
    }

    /// `__arrow_c_schema__` of the Arrow PyCapsule interface: the schema of `__arrow_c_stream__`'s batches as
    /// a capsule "arrow_schema".
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        capsule::rntuple_schema(py, &self.reader, None)
    }

    /// The schema of the chosen top-level fields' batches (all readable fields when None) as a capsule
    /// "arrow_schema".
    #[pyo3(signature = (fields=None))]
    fn arrow_schema<'py>(&self, py: Python<'py>, fields: Option<Vec<String>>) -> PyResult<Bound<'py, PyCapsule>> {
        capsule::rntuple_schema(py, &self.reader, fields)
    }

    /// The anchor's members by ROOT's names (`fSeekHeader`...): see `descriptors::anchor`.
    fn anchor<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        descriptors::anchor(py, &self.reader)
    }

    /// An envelope read again, with its words at fixed places: see `descriptors::envelope`.
    #[pyo3(signature = (which, group=0))]
    fn envelope<'py>(&self, py: Python<'py>, which: &str, group: usize) -> PyResult<Bound<'py, PyDict>> {
        descriptors::envelope(py, &self.reader, which, group)
    }

    /// The header's or the schema extension's records: see `descriptors::schema_records`.
    fn schema_records<'py>(&self, py: Python<'py>, extension: bool) -> PyResult<Bound<'py, PyDict>> {
        descriptors::schema_records(py, &self.reader, extension)
    }

    /// The footer's cluster group records: see `descriptors::cluster_groups`.
    fn cluster_groups(&self) -> Vec<(u64, u64, u32, u64, u64, u64)> {
        descriptors::cluster_groups(&self.reader)
    }

    /// The footer's linked attribute sets: see `descriptors::attribute_links`.
    fn attribute_links(&self) -> Vec<(u16, u16, u32, u64, u64, String)> {
        descriptors::attribute_links(&self.reader)
    }

    /// One cluster group's page list: see `descriptors::page_locations`.
    fn page_locations<'py>(&self, py: Python<'py>, group: usize) -> PyResult<Bound<'py, PyTuple>> {
        descriptors::page_locations(py, &self.reader, group)
    }

    /// One column of one cluster, decoded: see `descriptors::cluster_column`.
    fn cluster_column<'py>(&self, py: Python<'py>, cluster: usize, column: u32) -> PyResult<(Bound<'py, PyByteArray>, &'static str)> {
        descriptors::cluster_column(py, &self.reader, cluster, column)
    }

    /// Reads entries `start..stop` as Python values in the JSON form of `rntuple dump` (one dict
    /// per entry).
    #[pyo3(signature = (fields, start, stop))]
    fn read_rows<'py>(&self, py: Python<'py>, fields: Option<Vec<String>>, start: u64, stop: u64) -> PyResult<Bound<'py, PyAny>> {
        let r = self.reader.clone();
        let text = unblocked(py, move || {
            let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
            r.read_values(names.as_deref(), start, stop).map(|rows| serde_json::Value::Array(rows.iter().map(|v| v.to_json()).collect()).to_string())
        })
        .or_raise(py)?;
        py.import("json")?.call_method1("loads", (text,))
    }
}

/// Adds the reading classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFile>()?;
    m.add_class::<NativeReader>()?;
    Ok(())
}

/// The indices `start..stop` of a list of `len` items, clamped to it (`stop` None: to its end).
fn slice_range(len: usize, start: usize, stop: Option<usize>) -> std::ops::Range<usize> {
    let stop = stop.unwrap_or(len).min(len);
    start.min(stop)..stop
}
