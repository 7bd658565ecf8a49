//! `rntuple.mpi.Writer`'s native part: the distributed writer of the `rntuple-mpi` crate on a
//! communicator of mpi4py (passed by its Fortran handle, `comm.py2f()`). Creation and commit are
//! collective and run with the GIL released; the fill contexts are `NativeFillContext`s.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rntuple::Error;
use rntuple_mpi::{MpiFillContext, MpiOptions, MpiWriter, Strategy};
use std::sync::Mutex;

use crate::convert::py_schema;
use crate::errors::{poisoned, unblocked, OrRaise};
use crate::options::write_options;
use crate::parallel::{Fill, NativeFillContext};

impl Fill for MpiFillContext {
    fn fill(&mut self, v: &rntuple::Value) -> rntuple::Result<()> {
        MpiFillContext::fill(self, v)
    }
    fn append_batch(&mut self, b: &arrow_array::RecordBatch) -> rntuple::Result<()> {
        MpiFillContext::append_batch(self, b)
    }
    fn flush_cluster(&mut self) -> rntuple::Result<()> {
        MpiFillContext::flush_cluster(self)
    }
    fn finish(self: Box<Self>) -> rntuple::Result<()> {
        MpiFillContext::finish(*self)
    }
}

/// Native part of `rntuple.mpi.Writer`.
#[pyclass(module = "rntuple._rntuple", frozen)]
pub struct NativeMpiWriter {
    inner: Mutex<Option<MpiWriter>>,
    rank: usize,
    size: usize,
}

#[pymethods]
impl NativeMpiWriter {
    #[new]
    #[pyo3(signature = (comm, path, name, schema, strategy, alignment, direct_io, write_block, options=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        comm: i64,
        path: String,
        name: &str,
        schema: &Bound<'_, PyAny>,
        strategy: &str,
        alignment: u64,
        direct_io: bool,
        write_block: u64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let strategy: Strategy = strategy.parse().or_raise(py)?;
        let mpi = MpiOptions { strategy, align: alignment, direct_io, max_write: write_block };
        let w = unblocked(py, || {
            let c = rntuple_mpi::communicator_from_fortran(comm)?;
            MpiWriter::create_with_types(&c, &path, name, &schema, opts, mpi)
        })
        .or_raise(py)?;
        let (rank, size) = (w.rank(), w.size());
        Ok(NativeMpiWriter { inner: Mutex::new(Some(w)), rank, size })
    }

    /// This process's rank.
    #[getter]
    fn rank(&self) -> usize {
        self.rank
    }

    /// Ranks writing.
    #[getter]
    fn size(&self) -> usize {
        self.size
    }

    /// A new fill context of this rank.
    fn fill_context(&self, py: Python<'_>) -> PyResult<NativeFillContext> {
        let g = self.inner.lock().map_err(|_| poisoned()).or_raise(py)?;
        let w = g.as_ref().ok_or_else(|| Error::Invalid("the distributed writer was committed already".into())).or_raise(py)?;
        let ctx = w.fill_context().or_raise(py)?;
        Ok(NativeFillContext::wrap(Box::new(ctx)))
    }

    /// Commits (collective); every fill context must be finished. Returns the report: the file
    /// size, the files, and on rank 0 each rank's figures.
    fn commit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let w = self.inner.lock().map_err(|_| poisoned()).or_raise(py)?.take();
        let w = w.ok_or_else(|| Error::Invalid("the distributed writer was committed already".into())).or_raise(py)?;
        let r = unblocked(py, move || w.commit()).or_raise(py)?;
        let d = PyDict::new(py);
        d.set_item("file_size", r.file_size)?;
        d.set_item("files", PyList::new(py, &r.files)?)?;
        let ranks = PyList::empty(py);
        for rr in &r.ranks {
            let x = PyDict::new(py);
            let m = &rr.metrics;
            x.set_item("rank", rr.rank)?;
            x.set_item("entries", m.entries)?;
            x.set_item("clusters", m.clusters)?;
            x.set_item("compress_seconds", m.compress_seconds)?;
            x.set_item("wait_seconds", m.wait_seconds)?;
            x.set_item("write_seconds", m.write_seconds)?;
            x.set_item("bytes", m.bytes_written)?;
            x.set_item("requests", m.requests)?;
            x.set_item("wall_seconds", rr.wall_seconds)?;
            x.set_item("aggregator_messages", rr.aggregator_messages)?;
            x.set_item("aggregator_seconds", rr.aggregator_seconds)?;
            ranks.append(x)?;
        }
        d.set_item("ranks", ranks)?;
        Ok(d)
    }

    /// Aborts the whole job (`MPI_Abort`), saying which rank failed and why; nothing is left at
    /// the path. Does not return.
    fn abort(&self, why: &str) {
        let w = self.inner.lock().ok().and_then(|mut g| g.take());
        match w {
            Some(mut w) => w.abort(why),
            None => {
                eprintln!("rntuple-mpi: rank {} of {} failed: {why}; aborting the job", self.rank, self.size);
                std::process::abort()
            }
        }
    }
}

/// Adds the distributed writer and the strategy names to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeMpiWriter>()?;
    m.add("MPI_STRATEGIES", Strategy::ALL.iter().map(|(_, n)| *n).collect::<Vec<_>>())?;
    Ok(())
}
