//! `rntuple.ParallelWriter`: one file, several fill contexts filled from several Python threads
//! at once. Each context builds and compresses its own clusters with the GIL released; only
//! reserving space in the file and appending cluster metadata is serialized (in the library).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use rntuple::write::{FillContext, ParallelWriter};
use rntuple::Error;
use std::sync::Mutex;

use crate::capsule::batch_from_pyarrow;
use crate::convert::{py_schema, rows_to_values};
use crate::errors::{poisoned, to_py_err, unblocked, OrRaise};
use crate::options::write_options;

/// Native part of `rntuple.ParallelWriter`.
#[pyclass(module = "rntuple._rntuple", frozen)]
pub struct NativeParallelWriter {
    inner: ParallelWriter,
}

/// What a fill context does, whichever writer it fills: the parallel writer's, or a rank's of
/// the distributed writer.
pub(crate) trait Fill: Send {
    fn fill(&mut self, v: &rntuple::Value) -> rntuple::Result<()>;
    fn append_batch(&mut self, b: &arrow_array::RecordBatch) -> rntuple::Result<()>;
    fn flush_cluster(&mut self) -> rntuple::Result<()>;
    fn finish(self: Box<Self>) -> rntuple::Result<()>;
}

impl Fill for FillContext {
    fn fill(&mut self, v: &rntuple::Value) -> rntuple::Result<()> {
        FillContext::fill(self, v)
    }
    fn append_batch(&mut self, b: &arrow_array::RecordBatch) -> rntuple::Result<()> {
        FillContext::append_batch(self, b)
    }
    fn flush_cluster(&mut self) -> rntuple::Result<()> {
        FillContext::flush_cluster(self)
    }
    fn finish(self: Box<Self>) -> rntuple::Result<()> {
        FillContext::finish(*self).map(|_| ())
    }
}

/// Native part of `rntuple.FillContext` (of a parallel or a distributed writer).
#[pyclass(module = "rntuple._rntuple", frozen)]
pub struct NativeFillContext {
    inner: Mutex<Option<Box<dyn Fill>>>,
    entries: std::sync::atomic::AtomicU64,
}

impl NativeFillContext {
    /// Wraps a context of any writer.
    pub(crate) fn wrap(ctx: Box<dyn Fill>) -> Self {
        NativeFillContext { inner: Mutex::new(Some(ctx)), entries: 0.into() }
    }
}

impl NativeParallelWriter {
    /// Wraps a parallel writer (one of a `FileWriter`'s).
    pub(crate) fn wrap(inner: ParallelWriter) -> Self {
        NativeParallelWriter { inner }
    }
}

#[pymethods]
impl NativeParallelWriter {
    #[new]
    #[pyo3(signature = (path, name, schema, options=None))]
    fn new(py: Python<'_>, path: std::path::PathBuf, name: &str, schema: &Bound<'_, PyAny>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let w = unblocked(py, || ParallelWriter::create_with_types(&path, name, &schema, opts)).or_raise(py)?;
        Ok(NativeParallelWriter { inner: w })
    }

    /// A new fill context (one per thread).
    fn fill_context(&self, py: Python<'_>) -> PyResult<NativeFillContext> {
        let ctx = unblocked(py, || self.inner.fill_context()).or_raise(py)?;
        Ok(NativeFillContext::wrap(Box::new(ctx)))
    }

    /// Entries committed so far (by finished clusters).
    fn num_entries(&self) -> u64 {
        self.inner.num_entries()
    }

    /// Makes the file on disk a complete ROOT file holding every cluster committed so far.
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        unblocked(py, || self.inner.checkpoint()).or_raise(py)
    }

    /// Writes the footer and the file directory; every fill context must be finished.
    fn commit(&self, py: Python<'_>) -> PyResult<u64> {
        unblocked(py, || self.inner.commit()).or_raise(py)
    }

    /// Gives the file up without committing it (a new file is removed), saying why.
    fn abort(&self, why: &str) {
        self.inner.abort(why)
    }
}

impl NativeFillContext {
    /// Runs `f` on the context with the GIL released.
    fn with<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut dyn Fill) -> rntuple::Result<R> + Send) -> PyResult<R> {
        unblocked(py, || {
            let mut g = self.inner.lock().map_err(|_| poisoned())?;
            let c = g.as_mut().ok_or_else(|| Error::Invalid("this fill context was finished already".into()))?;
            f(c.as_mut())
        })
        .or_raise(py)
    }
}

#[pymethods]
impl NativeFillContext {
    /// Appends the rows of a `pyarrow.RecordBatch` (or of an object whose `__arrow_c_array__` gives a struct
    /// array); compresses full clusters with the GIL released.
    fn append_arrow(&self, py: Python<'_>, batch: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = batch_from_pyarrow(batch)?;
        let n = b.num_rows() as u64;
        self.with(py, move |c| c.append_batch(&b))?;
        self.entries.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Appends rows given as dicts in the JSON form of `rntuple dump`.
    fn fill_rows(&self, py: Python<'_>, rows: &Bound<'_, PyAny>) -> PyResult<()> {
        let first = self.entries.load(std::sync::atomic::Ordering::Relaxed);
        let values = rows_to_values(rows, first)?;
        let n = values.len() as u64;
        self.with(py, move |c| {
            for (i, v) in values.iter().enumerate() {
                c.fill(v).map_err(|e| e.context(format!("entry {} of this fill context", first + i as u64)))?;
            }
            Ok(())
        })?;
        self.entries.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Writes the entries filled so far as a cluster.
    fn flush_cluster(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |c| c.flush_cluster())
    }

    /// Entries filled through this context.
    fn num_entries(&self) -> u64 {
        self.entries.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether the context was finished.
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.inner.lock().map_err(|_| to_py_err(py, poisoned()))?.is_none())
    }

    /// Flushes the last cluster and releases the context (idempotent).
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        unblocked(py, || {
            let c = self.inner.lock().map_err(|_| poisoned())?.take();
            match c {
                Some(c) => c.finish(),
                None => Ok(()),
            }
        })
        .or_raise(py)
    }
}

/// Adds the parallel writer and its fill contexts to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeParallelWriter>()?;
    m.add_class::<NativeFillContext>()?;
    Ok(())
}
