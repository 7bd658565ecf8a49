//! `rntuple.FileWriter`: one file, several RNTuples written at once, each through a sequential
//! or a parallel writer of its own (`NativeWriter`, `NativeParallelWriter`).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rntuple::write::FileWriter;
use rntuple::Error;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::convert::py_schema;
use crate::errors::{poisoned, unblocked, OrRaise};
use crate::options::write_options;
use crate::parallel::NativeParallelWriter;
use crate::write::NativeWriter;

/// Native part of `rntuple.FileWriter`.
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeFileWriter {
    inner: Mutex<Option<FileWriter>>,
    path: String,
}

impl NativeFileWriter {
    /// Runs `f` on the open file writer with the GIL released.
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&FileWriter) -> rntuple::Result<R> + Send) -> PyResult<R> {
        unblocked(py, || {
            let g = self.inner.lock().map_err(|_| poisoned())?;
            let fw = g.as_ref().ok_or_else(|| Error::Invalid(format!("the file writer of '{}' was committed or aborted already", self.path)))?;
            f(fw)
        })
        .or_raise(py)
    }
}

#[pymethods]
impl NativeFileWriter {
    #[new]
    #[pyo3(signature = (path, options=None))]
    fn new(py: Python<'_>, path: PathBuf, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = write_options(options)?;
        let shown = path.display().to_string();
        let fw = unblocked(py, || FileWriter::create(&path, opts)).or_raise(py)?;
        Ok(NativeFileWriter { inner: Mutex::new(Some(fw)), path: shown })
    }

    /// A sequential writer of a new RNTuple of the file (`options`: all of its write options).
    #[pyo3(signature = (name, schema, options=None))]
    fn writer(&self, py: Python<'_>, name: &str, schema: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<NativeWriter> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let w = self.with(py, |fw| fw.writer_with_types(name, &schema, &opts))?;
        Ok(NativeWriter::wrap(w, format!("{}:{name}", self.path)))
    }

    /// A parallel writer of a new RNTuple of the file.
    #[pyo3(signature = (name, schema, options=None))]
    fn parallel_writer(&self, py: Python<'_>, name: &str, schema: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<NativeParallelWriter> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let w = self.with(py, |fw| fw.parallel_writer_with_types(name, &schema, &opts))?;
        Ok(NativeParallelWriter::wrap(w))
    }

    /// The names of the RNTuples started in the file.
    fn ntuple_names(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.with(py, |fw| Ok(fw.ntuple_names()))
    }

    /// Writes the file's directory (every writer must be committed); returns the file size.
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        unblocked(py, || {
            let fw = self.inner.lock().map_err(|_| poisoned())?.take();
            fw.ok_or_else(|| Error::Invalid(format!("the file writer of '{}' was committed or aborted already", self.path)))?.commit()
        })
        .or_raise(py)
    }

    /// Discards the file (idempotent).
    fn abort(&self, py: Python<'_>) -> PyResult<()> {
        unblocked(py, || {
            if let Some(fw) = self.inner.lock().map_err(|_| poisoned())?.take() {
                fw.abort();
            }
            Ok(())
        })
        .or_raise(py)
    }
}

/// Adds the file writer to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeFileWriter>()?;
    Ok(())
}
