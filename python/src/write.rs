//! Sequential writing: `NativeWriter` (native part of `rntuple.Writer`). Batches come as
//! `pyarrow.RecordBatch`es (the columnar fast path) or as rows in the JSON form of `rntuple dump`; the GIL
//! is released while compressing and writing.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rntuple::write::AttributeSetWriter;
use rntuple::write::Writer;
use rntuple::Error;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::capsule::batch_from_pyarrow;
use crate::convert::{py_schema, rows_to_values};
use crate::errors::{poisoned, to_py_err, unblocked, OrRaise};
use crate::options::write_options;

/// Sequential writer (native part of `rntuple.Writer`).
#[pyclass(module = "rntuple._rntuple", frozen)]
pub(crate) struct NativeWriter {
    inner: Mutex<Option<Writer>>,
    path: String,
}

impl NativeWriter {
    /// Wraps a writer (one of a `FileWriter`'s); `path` names it in messages.
    pub(crate) fn wrap(w: Writer, path: String) -> Self {
        NativeWriter { inner: Mutex::new(Some(w)), path }
    }

    fn committed_already(&self) -> Error {
        Error::Invalid(format!("the writer of '{}' was committed already", self.path))
    }

    /// Runs `f` on the writer with the GIL released.
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut Writer) -> rntuple::Result<R> + Send) -> PyResult<R> {
        unblocked(py, || {
            let mut g = self.inner.lock().map_err(|_| poisoned())?;
            let w = g.as_mut().ok_or_else(|| self.committed_already())?;
            f(w)
        })
        .or_raise(py)
    }
}

#[pymethods]
impl NativeWriter {
    #[new]
    #[pyo3(signature = (path, name, schema, options=None))]
    fn new(py: Python<'_>, path: PathBuf, name: &str, schema: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = write_options(options)?;
        let shown = path.display().to_string();
        let schema = py_schema(schema)?;
        let w = unblocked(py, || Writer::create_with_types(&path, name, &schema, opts)).or_raise(py)?;
        Ok(NativeWriter { inner: Mutex::new(Some(w)), path: shown })
    }

    /// Appends the rows of a `pyarrow.RecordBatch`, or of any object whose `__arrow_c_array__` gives a struct
    /// array (one column per top-level field).
    fn append_arrow(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = batch_from_pyarrow(batch)?;
        self.with(py, move |w| w.append_batch(&b))
    }

    /// Appends rows given as dicts in the JSON form of `rntuple dump`.
    fn fill_rows(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let first = self.num_entries(py)?;
        let values = rows_to_values(rows, first)?;
        self.with(py, move |w| {
            for (i, v) in values.iter().enumerate() {
                w.fill(v).map_err(|e| e.context(format!("entry {}", first + i as u64)))?;
            }
            Ok(())
        })
    }

    /// Adds a top-level field after entries were written (late model extension).
    fn add_field(&self, py: Python<'_>, name: String, type_name: String) -> PyResult<()> {
        self.with(py, move |w| w.add_field(&name, &type_name))
    }

    /// Creates the attribute set `name` of this RNTuple (`Writer::attributes`).
    fn attributes(&self, py: Python<'_>, name: String, schema: &Bound<'_, PyAny>) -> PyResult<NativeAttributeSetWriter> {
        let schema = py_schema(schema)?;
        let inner = self.with(py, move |w| w.attributes_with_types(&name, &schema))?;
        Ok(NativeAttributeSetWriter { inner })
    }

    /// Entries written so far.
    fn num_entries(&self, py: Python<'_>) -> PyResult<u64> {
        let g = self.inner.lock().map_err(|_| to_py_err(py, poisoned()))?;
        Ok(g.as_ref().map(|w| w.num_entries()).unwrap_or(0))
    }

    /// Whether the writer was committed.
    fn committed(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.inner.lock().map_err(|_| to_py_err(py, poisoned()))?.is_none())
    }

    /// Makes the file on disk a complete ROOT file holding every entry so far (`Writer::checkpoint`).
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |w| w.checkpoint())
    }

    /// Discards the writer without committing (`Writer::abort`): a new file's temporary file is
    /// removed, an existing file of that name stays as it was. Idempotent.
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        unblocked(py, || {
            let w = self.inner.lock().map_err(|_| poisoned())?.take();
            if let Some(w) = w {
                w.abort();
            }
            Ok(())
        })
        .or_raise(py)
    }

    /// Writes the last cluster, the page list, footer and file directory; returns the file size.
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        unblocked(py, || {
            let w = self.inner.lock().map_err(|_| poisoned())?.take();
            w.ok_or_else(|| self.committed_already())?.commit()
        })
        .or_raise(py)
    }
}

/// An attribute set of a sequential writer (native part of `rntuple.AttributeSetWriter`).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeAttributeSetWriter {
    inner: AttributeSetWriter,
}

#[pymethods]
impl NativeAttributeSetWriter {
    /// Associates `values` (a dict of the set's fields, JSON form) with the main entries
    /// `[start, stop)`.
    fn commit_range(&self, py: Python<'_>, start: u64, stop: u64, values: &Bound<'_, PyAny>) -> PyResult<()> {
        let rows = pyo3::types::PyList::new(py, [values])?;
        let mut v = rows_to_values(rows.as_any(), 0)?;
        let v = v.pop().ok_or_else(|| pyo3::exceptions::PyValueError::new_err("no attribute values"))?;
        unblocked(py, || self.inner.commit_range(start, stop, &v)).or_raise(py)
    }

    /// Attribute entries written so far.
    fn num_entries(&self) -> u64 {
        self.inner.num_entries()
    }
}

/// Adds the sequential writer to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeWriter>()?;
    m.add_class::<NativeAttributeSetWriter>()?;
    Ok(())
}
