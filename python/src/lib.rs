//! The native part of the Python package `rntuple` (module `rntuple._rntuple`).
//!
//! Reading returns `pyarrow.RecordBatch`es that cross through the Arrow C Data Interface (no
//! per-element copies); the pure-Python part turns them into awkward arrays laid out as uproot
//! does. Writing takes `pyarrow.RecordBatch`es (the columnar fast path) or Python rows in the
//! JSON form of `rntuple dump` (lists of dicts). The GIL is released while reading,
//! decompressing, compressing and writing.

use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rntuple::format::descriptor::Role;
use rntuple::logical::typename::{self, TypeExpr};
use rntuple::write::writer::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Reader, Value};
use std::sync::{Arc, Mutex};

mod parallel;
mod source;

create_exception!(
    _rntuple,
    RNTupleError,
    PyException,
    "An error from the rntuple library: a damaged or unsupported file, a missing RNTuple or field, a value that does not fit its field, or an I/O error. The message says what is wrong and where."
);

/// Converts a library error into `RNTupleError` carrying its message.
pub(crate) fn err(e: rntuple::Error) -> PyErr {
    RNTupleError::new_err(e.to_string())
}

/// A mutex poisoned by a panic in another thread.
pub(crate) fn poisoned() -> PyErr {
    RNTupleError::new_err("internal error: a writer lock was poisoned by a panic in another thread")
}

// ----- Arrow C Data Interface ------------------------------------------------------------------

/// Moves a record batch into a `pyarrow.RecordBatch` without copying its buffers.
pub(crate) fn batch_to_pyarrow(py: Python<'_>, batch: RecordBatch) -> PyResult<PyObject> {
    let n = batch.num_rows();
    let sa = StructArray::from(batch);
    if sa.len() != n {
        return Err(RNTupleError::new_err(format!("internal error: record batch of {n} rows became a struct array of {}", sa.len())));
    }
    let (array, schema) = to_ffi(&sa.into_data()).map_err(|e| RNTupleError::new_err(format!("exporting Arrow data: {e}")))?;
    let array = Box::new(array);
    let schema = Box::new(schema);
    let pa = py.import("pyarrow")?;
    let out = pa.getattr("RecordBatch")?.call_method1(
        "_import_from_c",
        (&*array as *const FFI_ArrowArray as usize, &*schema as *const FFI_ArrowSchema as usize),
    )?;
    // pyarrow moved the release callbacks out; dropping the emptied structs frees only them.
    drop(array);
    drop(schema);
    Ok(out.unbind())
}

/// Takes a `pyarrow.RecordBatch` (or anything with `_export_to_c` exporting a struct array)
/// without copying its buffers.
pub(crate) fn batch_from_pyarrow(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    if !obj.hasattr("_export_to_c")? {
        return Err(PyTypeError::new_err(format!("expected a pyarrow.RecordBatch, got {}", obj.get_type().name()?)));
    }
    let mut array = Box::new(FFI_ArrowArray::empty());
    let mut schema = Box::new(FFI_ArrowSchema::empty());
    obj.call_method1("_export_to_c", (&mut *array as *mut FFI_ArrowArray as usize, &mut *schema as *mut FFI_ArrowSchema as usize))?;
    // SAFETY: pyarrow filled both structs following the C Data Interface; `from_ffi` takes the
    // array (and its release callback) and validates the layout against the schema.
    let data = unsafe { from_ffi(*array, &schema) }.map_err(|e| RNTupleError::new_err(format!("importing Arrow data: {e}")))?;
    let n = data.len();
    if !matches!(data.data_type(), arrow_schema::DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!("expected a record batch (an Arrow struct array), got Arrow type {}", data.data_type())));
    }
    let sa = StructArray::from(data);
    if sa.null_count() > 0 {
        return Err(PyValueError::new_err("a record batch with null rows cannot be written"));
    }
    let (fields, columns, _) = sa.into_parts();
    let schema = Arc::new(arrow_schema::Schema::new(fields));
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
    RecordBatch::try_new_with_options(schema, columns, &opts).map_err(|e| RNTupleError::new_err(format!("importing Arrow data: {e}")))
}

// ----- Python objects -> dynamic values --------------------------------------------------------

const MAX_VALUE_DEPTH: usize = 256;

/// Converts a Python object in the JSON form of `rntuple dump` into a dynamic value.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_VALUE_DEPTH {
        return Err(PyValueError::new_err(format!("value nested more than {MAX_VALUE_DEPTH} levels deep")));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::UInt(u));
        }
        return Err(PyValueError::new_err(format!("integer {obj} does not fit 64 bits")));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Value::F64(f.value()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut m = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("record keys must be strings, got {k:?}")))?;
            m.push((k, to_value(&v, depth + 1)?));
        }
        return Ok(Value::Record(m));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        return Ok(Value::List(l.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>()?));
    }
    if let Ok(t) = obj.downcast::<PyTuple>() {
        return Ok(Value::List(t.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>()?));
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    // numpy scalars and arrays, awkward records and lists: their Python form.
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        if !plain.is(obj) {
            return to_value(&plain, depth + 1);
        }
    }
    if obj.hasattr("to_list")? {
        return to_value(&obj.call_method0("to_list")?, depth + 1);
    }
    if obj.hasattr("items")? && obj.hasattr("keys")? {
        let d = PyDict::new(obj.py());
        for item in obj.call_method0("items")?.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            d.set_item(k, v)?;
        }
        return to_value(d.as_any(), depth + 1);
    }
    if let Ok(it) = obj.try_iter() {
        let mut out = Vec::new();
        for x in it {
            out.push(to_value(&x?, depth + 1)?);
        }
        return Ok(Value::List(out));
    }
    Err(PyTypeError::new_err(format!("cannot write a Python {} ({obj:.100})", obj.get_type().name()?)))
}

// ----- options ---------------------------------------------------------------------------------

/// Names of the keyword options, for error messages and `write_option_names()`.
const OPTION_NAMES: &[&str] =
    &[
    "compression",
    "approx_zipped_cluster_size",
    "max_unzipped_cluster_size",
    "initial_unzipped_page_size",
    "max_unzipped_page_size",
    "max_key_size",
    "enable_page_checksums",
    "use_implicit_mt",
    "imt_threads",
    "page_buffer_budget",
    "buffered",
    "stream_uncompressed_pages",
    "use_direct_io",
    "preallocate",
    "update_existing_file",
    "write_outside_lock",
];

/// Builds `WriteOptions` from keyword arguments; unknown names are an error naming them.
pub(crate) fn write_options(opts: Option<&Bound<'_, PyDict>>) -> PyResult<WriteOptions> {
    let mut o = WriteOptions::default();
    let Some(d) = opts else { return Ok(o) };
    for (k, v) in d.iter() {
        let k: String = k.extract()?;
        let bad = |want: &str| PyTypeError::new_err(format!("write option '{k}' must be {want}, got {v:.60}"));
        match k.as_str() {
            "compression" => o.compression = v.extract().map_err(|_| bad("a non-negative integer (algorithm * 100 + level)"))?,
            "approx_zipped_cluster_size" => o.approx_zipped_cluster_size = v.extract().map_err(|_| bad("a number of bytes"))?,
            "max_unzipped_cluster_size" => o.max_unzipped_cluster_size = v.extract().map_err(|_| bad("a number of bytes"))?,
            "initial_unzipped_page_size" => o.initial_unzipped_page_size = v.extract().map_err(|_| bad("a number of bytes"))?,
            "max_unzipped_page_size" => o.max_unzipped_page_size = v.extract().map_err(|_| bad("a number of bytes"))?,
            "max_key_size" => o.max_key_size = v.extract().map_err(|_| bad("a number of bytes"))?,
            "enable_page_checksums" => o.enable_page_checksums = v.extract().map_err(|_| bad("a bool"))?,
            "use_implicit_mt" => o.use_implicit_mt = v.extract().map_err(|_| bad("a bool"))?,
            "imt_threads" => o.imt_threads = v.extract().map_err(|_| bad("a non-negative integer"))?,
            "page_buffer_budget" => o.page_buffer_budget = v.extract().map_err(|_| bad("a number of bytes"))?,
            "buffered" => o.buffered = v.extract().map_err(|_| bad("a bool"))?,
            "stream_uncompressed_pages" => o.stream_uncompressed_pages = v.extract().map_err(|_| bad("a bool"))?,
            "use_direct_io" => o.use_direct_io = v.extract().map_err(|_| bad("a bool"))?,
            "preallocate" => o.preallocate = v.extract().map_err(|_| bad("a bool"))?,
            "update_existing_file" => o.update_existing_file = v.extract().map_err(|_| bad("a bool"))?,
            "write_outside_lock" => o.write_outside_lock = v.extract().map_err(|_| bad("a bool"))?,
            _ => return Err(PyTypeError::new_err(format!("unknown write option '{k}' (known: {})", OPTION_NAMES.join(", ")))),
        }
    }
    if o.max_unzipped_page_size == 0 || o.approx_zipped_cluster_size == 0 || o.max_unzipped_cluster_size == 0 {
        return Err(PyValueError::new_err("page and cluster sizes must be positive"));
    }
    o.validate().map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(o)
}

/// The default write options as a dict (ROOT's `RNTupleWriteOptions` defaults).
#[pyfunction]
fn default_write_options(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let o = WriteOptions::default();
    let d = PyDict::new(py);
    d.set_item("compression", o.compression)?;
    d.set_item("approx_zipped_cluster_size", o.approx_zipped_cluster_size)?;
    d.set_item("max_unzipped_cluster_size", o.max_unzipped_cluster_size)?;
    d.set_item("initial_unzipped_page_size", o.initial_unzipped_page_size)?;
    d.set_item("max_unzipped_page_size", o.max_unzipped_page_size)?;
    d.set_item("max_key_size", o.max_key_size)?;
    d.set_item("enable_page_checksums", o.enable_page_checksums)?;
    d.set_item("use_implicit_mt", o.use_implicit_mt)?;
    d.set_item("imt_threads", o.imt_threads)?;
    d.set_item("page_buffer_budget", o.page_buffer_budget)?;
    d.set_item("buffered", o.buffered)?;
    d.set_item("stream_uncompressed_pages", o.stream_uncompressed_pages)?;
    d.set_item("use_direct_io", o.use_direct_io)?;
    d.set_item("preallocate", o.preallocate)?;
    d.set_item("update_existing_file", o.update_existing_file)?;
    d.set_item("write_outside_lock", o.write_outside_lock)?;
    Ok(d)
}

/// Merges the RNTuple `ntuple` of `inputs` (same schema) into a new file `output` by copying
/// their compressed pages; returns what was copied as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (output, inputs, ntuple, compression = 505, mode = "strict"))]
fn merge<'py>(py: Python<'py>, output: std::path::PathBuf, inputs: Vec<std::path::PathBuf>, ntuple: String, compression: u32, mode: &str) -> PyResult<Bound<'py, PyDict>> {
    let opts = WriteOptions { compression, ..WriteOptions::default() };
    let mode: rntuple::ops::merge::MergeMode = mode.parse().map_err(|e: rntuple::Error| PyValueError::new_err(e.to_string()))?;
    let stats = py.allow_threads(|| rntuple::ops::merge::merge_with_mode(&inputs, &ntuple, &output, mode, opts, |_, _| {})).map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("entries", stats.entries)?;
    d.set_item("clusters", stats.clusters)?;
    d.set_item("pages", stats.pages)?;
    d.set_item("page_bytes", stats.page_bytes)?;
    d.set_item("file_bytes", stats.file_bytes)?;
    Ok(d)
}

/// Skims the RNTuple `ntuple` of `input` into a new file `output` (see `rntuple::ops::skim`);
/// returns what was done as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (input, output, ntuple, fields = None, entry_start = None, entry_stop = None, compression = 505, reencode = false))]
#[allow(clippy::too_many_arguments)]
fn skim<'py>(
    py: Python<'py>,
    input: std::path::PathBuf,
    output: std::path::PathBuf,
    ntuple: String,
    fields: Option<Vec<String>>,
    entry_start: Option<u64>,
    entry_stop: Option<u64>,
    compression: u32,
    reencode: bool,
) -> PyResult<Bound<'py, PyDict>> {
    use rntuple::ops::skim::Skim;
    let opts = WriteOptions { compression, ..WriteOptions::default() };
    let entries = match (entry_start, entry_stop) {
        (None, None) => None,
        (a, b) => Some((a.unwrap_or(0), b.unwrap_or(u64::MAX))),
    };
    let what = Skim { fields, entries, reencode };
    let stats = py.allow_threads(|| rntuple::ops::skim::skim(&input, &ntuple, &output, &what, opts)).map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("method", stats.method.as_str())?;
    d.set_item("why_not_copied", stats.reason)?;
    d.set_item("fields", stats.fields)?;
    d.set_item("entry_start", stats.range.0)?;
    d.set_item("entry_stop", stats.range.1)?;
    d.set_item("entries", stats.entries)?;
    d.set_item("clusters", stats.clusters)?;
    d.set_item("pages_copied", stats.pages)?;
    d.set_item("page_bytes_copied", stats.page_bytes)?;
    d.set_item("file_bytes", stats.file_bytes)?;
    Ok(d)
}

/// Normalizes a ROOT type name as the writer stores it (`int` -> `std::int32_t`); raises if the
/// type cannot be written.
#[pyfunction]
fn normalize_type(type_name: &str) -> PyResult<String> {
    rntuple::logical::typename::parse(type_name).map(|t| t.name()).map_err(err)
}

// ----- reading ---------------------------------------------------------------------------------

/// An open ROOT file (native part of `rntuple.File`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeFile {
    file: Arc<RNTupleFile>,
}

#[pymethods]
impl NativeFile {
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let file = py.allow_threads(|| RNTupleFile::open(&path)).map_err(err)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// A ROOT file's whole content, held in memory.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Self> {
        let file = py.allow_threads(|| RNTupleFile::from_bytes(data)).map_err(err)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// A ROOT file read through a seekable binary Python file object, range by range.
    #[staticmethod]
    fn from_file_object(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let src: Arc<dyn rntuple::storage::source::ReadAt> = Arc::new(source::PyFileSource::new(obj)?);
        let file = py.allow_threads(|| RNTupleFile::from_source(src)).map_err(err)?;
        Ok(NativeFile { file: Arc::new(file) })
    }

    /// Paths of the RNTuples in the file, in key order.
    fn names(&self) -> Vec<String> {
        self.file.names()
    }

    /// Opens the RNTuple `name`.
    fn reader(&self, py: Python<'_>, name: &str) -> PyResult<NativeReader> {
        let f = self.file.clone();
        let r = py.allow_threads(|| f.reader(name)).map_err(err)?;
        Ok(NativeReader { reader: Arc::new(r) })
    }
}

/// Reads one RNTuple (native part of `rntuple.RNTuple`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeReader {
    reader: Arc<Reader>,
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
        let rep = py.allow_threads(|| r.check(|_, _| {}));
        let d = PyDict::new(py);
        d.set_item("entries", rep.entries)?;
        d.set_item("clusters", rep.clusters)?;
        d.set_item("fields", rep.fields)?;
        d.set_item("pages", rep.pages)?;
        d.set_item("stored_bytes", rep.stored_bytes)?;
        d.set_item("uncompressed_bytes", rep.uncompressed_bytes)?;
        d.set_item("skipped_fields", rep.skipped_fields.into_iter().collect::<std::collections::HashMap<_, _>>())?;
        let problems = PyList::empty(py);
        for p in rep.problems {
            let e = PyDict::new(py);
            e.set_item("field", p.field)?;
            e.set_item("cluster", p.cluster)?;
            e.set_item("first_entry", p.entries.0)?;
            e.set_item("end_entry", p.entries.1)?;
            e.set_item("error", p.error)?;
            problems.append(e)?;
        }
        d.set_item("ok", problems.is_empty())?;
        d.set_item("problems", problems)?;
        Ok(d)
    }

    /// Every field record as a dict (id, name, type, alias, role, parent, children, repetition,
    /// projection source, flags, kind, readable, columns of representation 0 as
    /// (column type id, bits on storage)).
    fn field_records<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let d = self.reader.descriptor();
        let mut out = Vec::with_capacity(d.fields.len());
        for f in &d.fields {
            let x = PyDict::new(py);
            x.set_item("id", f.id)?;
            x.set_item("name", &f.name)?;
            x.set_item("type", &f.type_name)?;
            x.set_item("alias", &f.type_alias)?;
            x.set_item("description", &f.description)?;
            x.set_item("role", role_name(f.role))?;
            x.set_item("parent", f.parent)?;
            x.set_item("children", &f.children)?;
            x.set_item("repetition", f.repetition)?;
            x.set_item("source", f.projection_source)?;
            x.set_item("flags", f.flags)?;
            x.set_item("readable", self.reader.is_readable(f.id))?;
            x.set_item("kind", self.reader.kind(f.id).ok().map(|k| format!("{k:?}")))?;
            let mut cols = Vec::new();
            let mut rep0: Option<u16> = None;
            for &c in &f.columns {
                if let Some(col) = d.columns.get(c as usize) {
                    let r = *rep0.get_or_insert(col.representation);
                    if col.representation == r {
                        cols.push((col.column_type, col.bits_on_storage));
                    }
                }
            }
            x.set_item("columns", cols)?;
            out.push(x);
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

    /// (clusters, pages, stored bytes, uncompressed bytes) of the chosen top-level fields'
    /// columns (all fields when None).
    #[pyo3(signature = (fields=None))]
    fn storage_stats(&self, fields: Option<Vec<String>>) -> PyResult<(u64, u64, u64, u64)> {
        let d = self.reader.descriptor();
        let tops: Vec<u32> = match &fields {
            None => self.reader.fields().iter().map(|f| f.id).collect(),
            Some(names) => names
                .iter()
                .map(|n| {
                    d.fields
                        .iter()
                        .find(|f| f.parent.is_none() && &f.name == n)
                        .map(|f| f.id)
                        .ok_or_else(|| RNTupleError::new_err(format!("not found: no top-level field '{n}' in RNTuple '{}'", d.name)))
                })
                .collect::<PyResult<_>>()?,
        };
        let mut want = vec![false; d.fields.len()];
        let mut stack = tops;
        while let Some(f) = stack.pop() {
            if let Some(w) = want.get_mut(f as usize) {
                if !*w {
                    *w = true;
                    stack.extend(d.fields[f as usize].children.iter().copied());
                    if let Some(s) = d.fields[f as usize].projection_source {
                        stack.push(s);
                    }
                }
            }
        }
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

    /// Reads the chosen top-level fields (all readable fields when None) of entries
    /// `start..stop` into a `pyarrow.RecordBatch`; the GIL is released while reading.
    #[pyo3(signature = (fields, start, stop))]
    fn read(&self, py: Python<'_>, fields: Option<Vec<String>>, start: u64, stop: u64) -> PyResult<PyObject> {
        let r = self.reader.clone();
        let batch = py
            .allow_threads(move || {
                let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
                r.read_batch(names.as_deref(), start, stop)
            })
            .map_err(err)?;
        batch_to_pyarrow(py, batch)
    }

    /// Reads entries `start..stop` as Python values in the JSON form of `rntuple dump` (one dict
    /// per entry).
    #[pyo3(signature = (fields, start, stop))]
    fn read_rows<'py>(&self, py: Python<'py>, fields: Option<Vec<String>>, start: u64, stop: u64) -> PyResult<Bound<'py, PyAny>> {
        let r = self.reader.clone();
        let text = py
            .allow_threads(move || {
                let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(|s| s.as_str()).collect());
                r.read_values(names.as_deref(), start, stop).map(|rows| serde_json::Value::Array(rows.iter().map(|v| v.to_json()).collect()).to_string())
            })
            .map_err(err)?;
        py.import("json")?.call_method1("loads", (text,))
    }
}

// ----- writing ---------------------------------------------------------------------------------

/// Sequential writer (native part of `rntuple.Writer`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeWriter {
    inner: Mutex<Option<Writer>>,
    path: String,
}

/// A field type from Python: a ROOT type name (`str`), an untyped record (`dict`: member name ->
/// type, in order) or an untyped collection (`[item]`; of a record it has an empty type name, of
/// anything else it is a `std::vector`).
fn py_type(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<TypeExpr> {
    if depth > 64 {
        return Err(PyValueError::new_err(format!("field '{path}': the type nests deeper than 64 levels")));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        let name: String = s.extract()?;
        return typename::parse(&name).map_err(|e| RNTupleError::new_err(format!("field '{path}': {e}")));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut members = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("field '{path}': record member names must be strings, got {k:.60}")))?;
            let t = py_type(&v, &format!("{path}.{k}"), depth + 1)?;
            members.push((k, t));
        }
        if members.is_empty() {
            return Err(PyValueError::new_err(format!("field '{path}': an untyped record needs at least one member")));
        }
        return Ok(TypeExpr::Record(members));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        if l.len() != 1 {
            return Err(PyValueError::new_err(format!("field '{path}': a collection type is a list of one item type, got {} items", l.len())));
        }
        let item = py_type(&l.get_item(0)?, &format!("{path}._0"), depth + 1)?;
        return Ok(TypeExpr::Collection("std::vector".into(), Box::new(item)));
    }
    Err(PyTypeError::new_err(format!(
        "field '{path}': a type is a ROOT type name (str), an untyped record ({{member: type}}) or an untyped collection ([item type]); got {:.60}",
        obj.get_type().name()?
    )))
}

/// A schema from Python: (field name, type) pairs, the types as [`py_type`] takes them.
pub(crate) fn py_schema(schema: &Bound<'_, PyAny>) -> PyResult<Vec<(String, TypeExpr)>> {
    let mut out = Vec::new();
    for item in schema.try_iter()? {
        let item = item?;
        let (name, t): (String, Bound<'_, PyAny>) = item.extract().map_err(|_| PyTypeError::new_err(format!("a schema entry must be a (field name, type) pair, got {item:.100}")))?;
        let te = py_type(&t, &name, 0)?;
        out.push((name, te));
    }
    Ok(out)
}

/// Converts a sequence of rows (dicts) into values, naming the entry that cannot be converted.
pub(crate) fn rows_to_values(rows: &Bound<'_, PyAny>, first_entry: u64) -> PyResult<Vec<Value>> {
    let mut out = Vec::new();
    for (i, row) in rows.try_iter()?.enumerate() {
        let row = row?;
        let v = to_value(&row, 0).map_err(|e| PyValueError::new_err(format!("entry {}: {}", first_entry + i as u64, e)))?;
        if !matches!(v, Value::Record(_)) {
            return Err(PyTypeError::new_err(format!("entry {}: a row must be a dict of top-level fields, got {:.100}", first_entry + i as u64, row)));
        }
        out.push(v);
    }
    Ok(out)
}

impl NativeWriter {
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Writer) -> rntuple::Result<R> + Send) -> PyResult<R> {
        py.allow_threads(|| {
            let mut g = self.inner.lock().map_err(|_| poisoned())?;
            let w = g.as_mut().ok_or_else(|| RNTupleError::new_err(format!("the writer of '{}' was committed already", self.path)))?;
            f(w).map_err(err)
        })
    }
}

#[pymethods]
impl NativeWriter {
    #[new]
    #[pyo3(signature = (path, name, schema, options=None))]
    fn new(py: Python<'_>, path: std::path::PathBuf, name: &str, schema: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = write_options(options)?;
        let shown = path.display().to_string();
        let schema = py_schema(schema)?;
        let w = py.allow_threads(|| Writer::create_with_types(&path, name, &schema, opts)).map_err(err)?;
        Ok(NativeWriter { inner: Mutex::new(Some(w)), path: shown })
    }

    /// Appends the rows of a `pyarrow.RecordBatch` (one column per top-level field).
    fn append_arrow(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = batch_from_pyarrow(batch)?;
        self.with(py, move |w| w.append_batch(&b))
    }

    /// Appends rows given as dicts in the JSON form of `rntuple dump`.
    fn fill_rows(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let first = self.num_entries()?;
        let values = rows_to_values(rows, first)?;
        self.with(py, move |w| {
            for (i, v) in values.iter().enumerate() {
                w.fill(v).map_err(|e| rntuple::Error::Invalid(format!("entry {}: {e}", first + i as u64)))?;
            }
            Ok(())
        })
    }

    /// Adds a top-level field after entries were written (late model extension).
    fn add_field(&self, py: Python<'_>, name: String, type_name: String) -> PyResult<()> {
        self.with(py, move |w| w.add_field(&name, &type_name))
    }

    /// Entries written so far.
    fn num_entries(&self) -> PyResult<u64> {
        let g = self.inner.lock().map_err(|_| poisoned())?;
        Ok(g.as_ref().map(|w| w.num_entries()).unwrap_or(0))
    }

    /// Whether the writer was committed.
    fn committed(&self) -> PyResult<bool> {
        Ok(self.inner.lock().map_err(|_| poisoned())?.is_none())
    }

    /// Writes the last cluster, the page list, footer and file directory; returns the file size.
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        py.allow_threads(|| {
            let w = self.inner.lock().map_err(|_| poisoned())?.take();
            match w {
                Some(w) => w.commit().map_err(err),
                None => Err(RNTupleError::new_err(format!("the writer of '{}' was committed already", self.path))),
            }
        })
    }
}

#[pymodule]
fn _rntuple(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("RNTupleError", m.py().get_type::<RNTupleError>())?;
    m.add_class::<NativeFile>()?;
    m.add_class::<NativeReader>()?;
    m.add_class::<NativeWriter>()?;
    m.add_function(wrap_pyfunction!(default_write_options, m)?)?;
    m.add_function(wrap_pyfunction!(normalize_type, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(skim, m)?)?;
    m.add("WRITE_OPTION_NAMES", OPTION_NAMES.to_vec())?;
    parallel::register(m)?;
    Ok(())
}
