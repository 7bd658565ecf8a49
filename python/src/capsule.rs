//! The Arrow PyCapsule interface (`__arrow_c_stream__`, `__arrow_c_schema__`, `__arrow_c_array__`).
//!
//! Out: an RNTuple (some of its top-level fields, a range of its entries) as a capsule "arrow_array_stream"
//! holding an Arrow C stream that reads lazily, one record batch per cluster, with the GIL released while
//! reading; polars, DuckDB, pyarrow and the like consume it without a copy. In: the writers take streams
//! and struct arrays of any producer of the interface.
//!
//! Capsule contents move as the interface says: a consumer moves a capsule's struct out and leaves it marked
//! released; a capsule whose struct was not taken releases it when the capsule is destroyed (the drop of
//! arrow-rs's structs calls their release callback when one is set). A requested schema (`requested_schema`)
//! is only read: its capsule keeps it.

use std::collections::VecDeque;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Arc, Mutex};

use arrow_array::ffi::{from_ffi, from_ffi_and_data_type, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{make_array, ArrayRef, RecordBatch, RecordBatchOptions, RecordBatchReader};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Schema, SchemaRef};
use pyo3::exceptions::{PyMemoryError, PyNotImplementedError, PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use rntuple::{Error, Reader};

use crate::arrow_ffi::{batch_from_export_to_c, batch_to_pyarrow, from_pyarrow, schema_to_pyarrow, struct_to_batch};
use crate::errors::{caught, poisoned, to_py_err, unblocked, OrRaise};

/// Capsule names of the interface.
const STREAM: &CStr = c"arrow_array_stream";
const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";

// ----- out: an RNTuple as an Arrow C stream -------------------------------------------------------------

/// Whether the calling thread holds the GIL. The callbacks of an exported stream run on whichever thread
/// the consumer calls them from, holding the GIL or not; `PyGILState_Check` tells which (CPython's, callable
/// without the GIL; not in the limited API's headers, but exported by every CPython since 3.4, so declared
/// here). Windows' `python3.dll` of the stable ABI does not export it: there the GIL is left as it is.
#[cfg(not(windows))]
fn holds_gil() -> bool {
    extern "C" {
        fn PyGILState_Check() -> std::os::raw::c_int;
    }
    // SAFETY: PyGILState_Check only reads the calling thread's state and may be called from any thread.
    unsafe { PyGILState_Check() == 1 }
}

#[cfg(windows)]
fn holds_gil() -> bool {
    false
}

/// Runs `f` with the GIL released when the calling thread holds it (a consumer reading the stream from
/// Python), as is when it does not (a consumer's own thread).
fn without_gil<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    if holds_gil() {
        // SAFETY: the calling thread holds the GIL (checked just above), which is what the token stands for.
        let py = unsafe { Python::assume_gil_acquired() };
        py.allow_threads(f)
    } else {
        f()
    }
}

/// Entries of an RNTuple as record batches, one per cluster (the part of the cluster in the entry range), in
/// the schema announced to the consumer.
struct ClusterBatches {
    reader: Arc<Reader>,
    fields: Option<Vec<String>>,
    ranges: VecDeque<(u64, u64)>,
    schema: SchemaRef,
}

impl Iterator for ClusterBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let (start, stop) = self.ranges.pop_front()?;
        let (reader, fields, schema) = (&self.reader, &self.fields, &self.schema);
        let read = without_gil(|| {
            caught(|| {
                let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(String::as_str).collect());
                let batch = reader.read_batch(names.as_deref(), start, stop)?;
                in_schema(batch, schema)
            })
        });
        Some(read.map_err(|e| {
            // A failed stream is not read further (the interface: only its release may follow).
            self.ranges.clear();
            let e = e.context(format!("reading entries {start}..{stop} of RNTuple '{}'", reader.descriptor().name));
            ArrowError::ExternalError(Box::new(e))
        }))
    }
}

impl RecordBatchReader for ClusterBatches {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// `batch` in `schema`: the same columns, whose types may differ in what does not change their layout
/// (field names of lists, nullability, metadata; a column's nullability can follow its data, as that of a
/// variant holding no value).
fn in_schema(batch: RecordBatch, schema: &SchemaRef) -> rntuple::Result<RecordBatch> {
    if batch.num_columns() != schema.fields().len() {
        return Err(Error::Internal(format!("read {} columns for a schema of {} fields", batch.num_columns(), schema.fields().len())));
    }
    let n = batch.num_rows();
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| if c.data_type() == f.data_type() { Ok(c.clone()) } else { retype(c, f.data_type()) })
        .collect::<rntuple::Result<Vec<ArrayRef>>>()?;
    let opts = RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(schema.clone(), columns, &opts)?)
}

/// Whether data of type `a` can be presented as type `b` without touching a buffer: the same types but for
/// the field names of lists and maps, nullability and metadata (struct members keep their names).
fn same_layout(a: &DataType, b: &DataType) -> bool {
    use DataType::*;
    match (a, b) {
        (List(x), List(y)) | (LargeList(x), LargeList(y)) | (ListView(x), ListView(y)) | (LargeListView(x), LargeListView(y)) => {
            same_layout(x.data_type(), y.data_type())
        }
        (FixedSizeList(x, n), FixedSizeList(y, m)) => n == m && same_layout(x.data_type(), y.data_type()),
        (Map(x, s), Map(y, t)) => s == t && same_layout(x.data_type(), y.data_type()),
        (Struct(x), Struct(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| p.name() == q.name() && same_layout(p.data_type(), q.data_type())),
        (Union(x, m), Union(y, n)) => {
            m == n && x.len() == y.len() && x.iter().zip(y.iter()).all(|((i, p), (j, q))| i == j && same_layout(p.data_type(), q.data_type()))
        }
        (Dictionary(k, v), Dictionary(l, w)) => k == l && same_layout(v, w),
        (RunEndEncoded(r, v), RunEndEncoded(s, w)) => r.data_type() == s.data_type() && same_layout(v.data_type(), w.data_type()),
        _ => a == b,
    }
}

/// `array` presented as the type `to` of the same layout ([`same_layout`]); its buffers are shared, the
/// result checked (a child declared non-nullable must hold no nulls).
fn retype(array: &ArrayRef, to: &DataType) -> rntuple::Result<ArrayRef> {
    if !same_layout(array.data_type(), to) {
        return Err(Error::Internal(format!("Arrow data of type {} cannot be presented as {to}", array.data_type())));
    }
    Ok(make_array(retype_data(array.to_data(), to)?))
}

fn retype_data(data: ArrayData, to: &DataType) -> rntuple::Result<ArrayData> {
    if data.data_type() == to {
        return Ok(data);
    }
    let targets: Vec<&DataType> = match to {
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f)
        | DataType::FixedSizeList(f, _)
        | DataType::Map(f, _) => {
            vec![f.data_type()]
        }
        DataType::Struct(fs) => fs.iter().map(|f| f.data_type()).collect(),
        DataType::Union(fs, _) => fs.iter().map(|(_, f)| f.data_type()).collect(),
        DataType::Dictionary(_, v) => vec![v.as_ref()],
        DataType::RunEndEncoded(r, v) => vec![r.data_type(), v.data_type()],
        _ => Vec::new(),
    };
    if targets.len() != data.child_data().len() {
        return Err(Error::Internal(format!("Arrow data of type {} with {} children cannot be presented as {to}", data.data_type(), data.child_data().len())));
    }
    let children = data.child_data().iter().zip(targets).map(|(c, t)| retype_data(c.clone(), t)).collect::<rntuple::Result<Vec<_>>>()?;
    Ok(data.into_builder().data_type(to.clone()).child_data(children).build()?)
}

/// The C Data Interface's `struct ArrowSchema`, only to see whether one a capsule holds is set (its format
/// and release callback) before arrow-rs reads it.
#[repr(C)]
struct RawSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut c_void,
    dictionary: *mut c_void,
    release: Option<unsafe extern "C" fn(*mut RawSchema)>,
    private_data: *mut c_void,
}

/// The pointer a capsule of the interface holds, after checking the capsule's name; `what` names the
/// capsule's origin in messages.
fn capsule_pointer(obj: &Bound<'_, PyAny>, name: &CStr, what: &str) -> PyResult<*mut c_void> {
    let want = name.to_string_lossy();
    let cap =
        obj.downcast::<PyCapsule>().map_err(|_| PyTypeError::new_err(format!("{what}: expected a PyCapsule named \"{want}\", got a {}", type_name(obj))))?;
    match cap.name()? {
        Some(got) if got == name => {}
        Some(got) => return Err(PyTypeError::new_err(format!("{what}: expected a PyCapsule named \"{want}\", got one named \"{}\"", got.to_string_lossy()))),
        None => return Err(PyTypeError::new_err(format!("{what}: expected a PyCapsule named \"{want}\", got an unnamed one"))),
    }
    let p = cap.pointer();
    if p.is_null() {
        return Err(PyValueError::new_err(format!("{what}: the PyCapsule holds no pointer")));
    }
    Ok(p)
}

/// Reads (without taking it) the schema a capsule "arrow_schema" holds; `what` names it in messages.
fn schema_of_capsule(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<DataType> {
    let p = capsule_pointer(obj, SCHEMA, what)?;
    // SAFETY: a capsule named "arrow_schema" holds a `struct ArrowSchema` (the interface), alive with the capsule.
    let raw = unsafe { &*(p as *const RawSchema) };
    if raw.release.is_none() || raw.format.is_null() {
        return Err(PyValueError::new_err(format!("{what} holds a released Arrow schema")));
    }
    // SAFETY: as above; `FFI_ArrowSchema` is that struct (arrow-rs), only read here.
    let ffi = unsafe { &*(p as *const FFI_ArrowSchema) };
    caught(|| DataType::try_from(ffi).map_err(|e| Error::Invalid(format!("{what}: not a valid Arrow schema: {e}")))).or_raise(obj.py())
}

/// What of `requested` the stream can follow: when it asks for fields of `own` only (by name, each once, in
/// any order, a subset: only those are read), the names and the schema to announce, a field in the requested
/// type when that has the layout of its own ([`same_layout`]: names of list items, nested nullability and
/// metadata may differ; nullable where its own is), else in its own type (the consumer may cast it). `None`
/// when it names a field `own` does not have (the stream then keeps its own schema).
fn fit_requested(own: &Schema, requested: &DataType) -> Option<(Vec<String>, SchemaRef)> {
    let DataType::Struct(fields) = requested else { return None };
    let mut names: Vec<String> = Vec::with_capacity(fields.len());
    let mut out = Vec::with_capacity(fields.len());
    for f in fields {
        let (_, mine) = own.column_with_name(f.name())?;
        if names.contains(f.name()) {
            return None;
        }
        names.push(f.name().clone());
        let fits = same_layout(mine.data_type(), f.data_type()) && (f.is_nullable() || !mine.is_nullable());
        out.push(if fits { f.clone() } else { Arc::new(mine.clone()) });
    }
    Some((names, Arc::new(Schema::new(out))))
}

/// The schema of the chosen top-level fields (all readable fields when `None`) of `reader`, as the reads of
/// `start..` give it (a read of no entries).
fn read_schema(py: Python<'_>, reader: &Arc<Reader>, fields: &Option<Vec<String>>, start: u64) -> PyResult<SchemaRef> {
    let r = reader.clone();
    let fields = fields.clone();
    unblocked(py, move || {
        let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(String::as_str).collect());
        r.read_batch(names.as_deref(), start, start).map(|b| b.schema())
    })
    .or_raise(py)
}

/// The chosen top-level fields (all readable fields when `None`) of entries `start..stop` of `reader` as a
/// capsule "arrow_array_stream": one record batch per cluster, read when the consumer asks for it.
/// `requested_schema` (a capsule "arrow_schema" or None) is followed as far as [`fit_requested`] finds it
/// fits; the rest stays as it is, as the interface allows (the consumer may cast it).
pub(crate) fn rntuple_stream<'py>(
    py: Python<'py>,
    reader: &Arc<Reader>,
    fields: Option<Vec<String>>,
    start: u64,
    stop: u64,
    requested_schema: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let n = reader.num_entries();
    if start > stop || stop > n {
        return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{n}"))).or_raise(py);
    }
    let requested = match requested_schema {
        Some(obj) if !obj.is_none() => Some(schema_of_capsule(obj, "requested_schema")?),
        _ => None,
    };
    let own = read_schema(py, reader, &fields, start)?;
    let (fields, schema) = match requested.as_ref().and_then(|r| fit_requested(&own, r)) {
        Some((names, schema)) => (Some(names), schema),
        None => (fields, own),
    };
    let mut ranges = VecDeque::new();
    for c in &reader.descriptor().clusters {
        let (lo, hi) = (c.first_entry.max(start), (c.first_entry + c.n_entries).min(stop));
        if lo < hi {
            ranges.push_back((lo, hi));
        }
    }
    let batches = ClusterBatches { reader: reader.clone(), fields, ranges, schema };
    let stream = FFI_ArrowArrayStream::new(Box::new(batches));
    PyCapsule::new(py, stream, Some(STREAM.to_owned()))
}

/// The schema of the chosen top-level fields (all readable fields when `None`) of `reader` as a capsule
/// "arrow_schema" (a struct type, one child per field), as [`rntuple_stream`] announces it.
pub(crate) fn rntuple_schema<'py>(py: Python<'py>, reader: &Arc<Reader>, fields: Option<Vec<String>>) -> PyResult<Bound<'py, PyCapsule>> {
    let schema = read_schema(py, reader, &fields, 0)?;
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(|e| Error::Internal(format!("exporting an Arrow schema: {e}"))).or_raise(py)?;
    PyCapsule::new(py, ffi, Some(SCHEMA.to_owned()))
}

// ----- in: arrays and streams of other libraries --------------------------------------------------------

/// The name of an object's type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into())
}

/// Takes a `pyarrow.RecordBatch`, or any object whose `__arrow_c_array__` (the Arrow PyCapsule interface)
/// gives a struct array (one row per entry, one child per field), without copying its buffers. pyarrow's
/// older `_export_to_c` is used when `__arrow_c_array__` is missing (`arrow_ffi::batch_from_export_to_c`).
pub(crate) fn batch_from_pyarrow(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    if obj.hasattr("__arrow_c_array__")? {
        return batch_from_c_array(obj, !from_pyarrow(obj));
    }
    batch_from_export_to_c(obj)
}

/// The record batch an object's `__arrow_c_array__` gives (a struct array: one row per entry, one child per
/// field), its array moved out of its capsule without copying buffers; `full`: every value checked (see
/// `struct_to_batch`).
fn batch_from_c_array(obj: &Bound<'_, PyAny>, full: bool) -> PyResult<RecordBatch> {
    let py = obj.py();
    let what = format!("{}.__arrow_c_array__()", type_name(obj));
    let pair = obj.call_method0("__arrow_c_array__")?;
    let (schema_cap, array_cap): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
        pair.extract().map_err(|_| PyTypeError::new_err(format!("{what}: expected a pair (schema capsule, array capsule), got a {}", type_name(&pair))))?;
    let data_type = schema_of_capsule(&schema_cap, &format!("the schema of {what}"))?;
    if !matches!(data_type, DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!("{what} gives an array of Arrow type {data_type}, not a record batch (a struct array, one child per field)")));
    }
    let p = capsule_pointer(&array_cap, ARRAY, &format!("the array of {what}"))? as *mut FFI_ArrowArray;
    // SAFETY: a capsule named "arrow_array" holds a `struct ArrowArray`; `from_raw` moves it out and leaves the
    // capsule's marked released (the interface's move), so the array is released once, by us.
    let array = unsafe { FFI_ArrowArray::from_raw(p) };
    if array.is_released() {
        return Err(PyValueError::new_err(format!("the array of {what} was released (taken) already")));
    }
    let sp = capsule_pointer(&schema_cap, SCHEMA, &format!("the schema of {what}"))? as *const FFI_ArrowSchema;
    // SAFETY: the schema capsule (checked set above) is alive while `schema_cap` is; `from_ffi` only reads it.
    let data = caught(|| unsafe { from_ffi(array, &*sp) }.map_err(|e| Error::Invalid(format!("importing the Arrow data of {what}: {e}")))).or_raise(py)?;
    struct_to_batch(data, full).map_err(|e| e.context(format!("the Arrow data of {what}"))).or_raise(py)
}

/// Why reading an imported stream stopped.
enum StreamError {
    /// The producer's `get_next` failed: its error code (an errno) and message.
    Producer(i32, String),
    /// The data do not make a record batch.
    Data(Error),
}

/// An Arrow C stream moved out of a capsule, read as record batches; dropping it releases the stream.
struct ImportedStream {
    stream: FFI_ArrowArrayStream,
    schema: SchemaRef,
    /// Every value of a batch checked (see `struct_to_batch`).
    full: bool,
}

impl ImportedStream {
    /// The producer's message about its last error.
    fn last_error(&mut self) -> String {
        let Some(f) = self.stream.get_last_error else { return "(no message)".into() };
        // SAFETY: the stream is set (not released); the callback returns NULL or a string valid until the
        // next call on the stream.
        let p = unsafe { f(&mut self.stream) };
        if p.is_null() {
            return "(no message)".into();
        }
        // SAFETY: a non-NULL result is a NUL-terminated string (the interface).
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// The next record batch, `None` at the end of the stream.
    fn next_batch(&mut self) -> Result<Option<RecordBatch>, StreamError> {
        let Some(get_next) = self.stream.get_next else {
            return Err(StreamError::Producer(0, "the Arrow stream has no get_next callback".into()));
        };
        let mut array = FFI_ArrowArray::empty();
        // SAFETY: the stream is set (not released), `array` is an empty struct for the producer to fill.
        let rc = unsafe { get_next(&mut self.stream, &mut array) };
        if rc != 0 {
            return Err(StreamError::Producer(rc, self.last_error()));
        }
        if array.is_released() {
            return Ok(None);
        }
        let data_type = DataType::Struct(self.schema.fields().clone());
        // SAFETY: the producer filled `array` following the C Data Interface, with the stream's type;
        // `struct_to_batch` validates its buffers before anything reads them.
        let data = caught(|| unsafe { from_ffi_and_data_type(array, data_type) }.map_err(|e| Error::Invalid(format!("importing Arrow data: {e}"))))
            .map_err(StreamError::Data)?;
        struct_to_batch(data, self.full).map(Some).map_err(StreamError::Data)
    }
}

/// A stream of record batches taken from an object's `__arrow_c_stream__` (the Arrow PyCapsule interface),
/// as the writers read it: iterating gives `pyarrow.RecordBatch`es (the buffers are not copied), each one
/// fetched from the producer with the GIL released. The stream is released at its end, on an error, by
/// `close()` or when this object goes.
#[pyclass(module = "rntuple._rntuple", frozen)]
pub(crate) struct NativeArrowStream {
    inner: Mutex<Option<ImportedStream>>,
    schema: SchemaRef,
    source: String,
}

impl NativeArrowStream {
    /// Takes the stream of `obj.__arrow_c_stream__()`.
    fn take(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = obj.py();
        let source = format!("{}.__arrow_c_stream__()", type_name(obj));
        let cap = obj.call_method0("__arrow_c_stream__")?;
        let p = capsule_pointer(&cap, STREAM, &source)? as *mut FFI_ArrowArrayStream;
        // SAFETY: a capsule named "arrow_array_stream" holds a `struct ArrowArrayStream`; `from_raw` moves it
        // out and leaves the capsule's marked released (the interface's move): we release it, once.
        let mut stream = unsafe { FFI_ArrowArrayStream::from_raw(p) };
        if stream.release.is_none() {
            return Err(PyValueError::new_err(format!("the stream of {source} was released (taken) already")));
        }
        let Some(get_schema) = stream.get_schema else {
            return Err(PyValueError::new_err(format!("the stream of {source} has no get_schema callback")));
        };
        let mut schema = FFI_ArrowSchema::empty();
        // SAFETY: the stream is set; `schema` is an empty struct for the producer to fill. The GIL is released:
        // a producer may wait for threads of its own that take it.
        let rc = py.allow_threads(|| unsafe { get_schema(&mut stream, &mut schema) });
        let mut imported = ImportedStream { stream, schema: Arc::new(Schema::empty()), full: !from_pyarrow(obj) };
        if rc != 0 {
            let msg = imported.last_error();
            return Err(producer_error(&source, rc, msg));
        }
        // SAFETY: the producer filled `schema`; the check reads the two members the interface requires to be set.
        let raw = unsafe { &*(&schema as *const FFI_ArrowSchema as *const RawSchema) };
        if raw.release.is_none() || raw.format.is_null() {
            return Err(PyValueError::new_err(format!("the stream of {source} gave no schema")));
        }
        let data_type = caught(|| DataType::try_from(&schema).map_err(|e| Error::Invalid(format!("the schema of {source} is not a valid Arrow schema: {e}"))))
            .or_raise(py)?;
        let DataType::Struct(fields) = data_type else {
            return Err(PyTypeError::new_err(format!(
                "{source} gives a stream of Arrow type {data_type}, not of record batches (struct arrays, one child per field)"
            )));
        };
        let metadata = schema.metadata().unwrap_or_default();
        imported.schema = Arc::new(Schema::new(fields).with_metadata(metadata));
        Ok(NativeArrowStream { schema: imported.schema.clone(), inner: Mutex::new(Some(imported)), source })
    }
}

/// A failure the producer of a stream reported, as the exception its error code (an errno) stands for.
fn producer_error(source: &str, code: i32, msg: String) -> PyErr {
    let msg = format!("the Arrow stream of {source} failed: {msg}");
    match code {
        12 => PyMemoryError::new_err(msg),              // ENOMEM
        38 | 78 => PyNotImplementedError::new_err(msg), // ENOSYS (Linux, macOS)
        5 => PyOSError::new_err(msg),                   // EIO
        _ => PyValueError::new_err(msg),
    }
}

#[pymethods]
impl NativeArrowStream {
    /// The stream's schema, a `pyarrow.Schema`.
    #[getter]
    fn schema(&self, py: Python<'_>) -> PyResult<PyObject> {
        schema_to_pyarrow(py, &self.schema)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next record batch (a `pyarrow.RecordBatch`); `StopIteration` at the end of the stream.
    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let got = py.allow_threads(|| {
            let mut g = self.inner.lock().map_err(|_| StreamError::Data(poisoned()))?;
            let Some(s) = g.as_mut() else { return Ok(None) };
            let r = s.next_batch();
            if !matches!(r, Ok(Some(_))) {
                // The end or an error: the stream is released now.
                *g = None;
            }
            r
        });
        match got {
            Ok(Some(batch)) => Ok(Some(batch_to_pyarrow(py, batch)?)),
            Ok(None) => Ok(None),
            Err(StreamError::Producer(code, msg)) => Err(producer_error(&self.source, code, msg)),
            Err(StreamError::Data(e)) => Err(to_py_err(py, e.context(format!("the Arrow stream of {}", self.source)))),
        }
    }

    /// Releases the stream (idempotent); iterating then gives nothing more.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let s = self.inner.lock().map_err(|_| to_py_err(py, poisoned()))?.take();
        py.allow_threads(move || drop(s));
        Ok(())
    }
}

/// What the writers read of an object of the Arrow PyCapsule interface: a `NativeArrowStream` when it has
/// `__arrow_c_stream__`, else a `pyarrow.RecordBatch` of its `__arrow_c_array__` (a struct array); a
/// `TypeError` for anything else.
#[pyfunction]
fn import_arrow(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<PyObject> {
    if obj.hasattr("__arrow_c_stream__")? {
        return Ok(Bound::new(py, NativeArrowStream::take(obj)?)?.into_any().unbind());
    }
    if obj.hasattr("__arrow_c_array__")? {
        return batch_to_pyarrow(py, batch_from_c_array(obj, !from_pyarrow(obj))?);
    }
    Err(PyTypeError::new_err(format!("a {} has neither __arrow_c_stream__ nor __arrow_c_array__ (the Arrow PyCapsule interface)", type_name(obj))))
}

/// Adds the imported streams' class and `import_arrow` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeArrowStream>()?;
    m.add_function(wrap_pyfunction!(import_arrow, m)?)?;
    Ok(())
}
