//! The distributed writer over TCP, for engines whose workers are processes that share a file
//! system but no MPI communicator (Dask, Spark): `NativeCoordinator` in the committing process
//! (the header, a [`Coordinator`] handing out byte ranges, the commit) and `NativeRankWriter` in
//! every task (its clusters written straight into the shared file at the ranges it is given; the
//! list of placed clusters it returns is all that goes back). The fill contexts are
//! `NativeFillContext`s.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use rntuple::write::distributed::{
    Assembler, ClusterOrder, Coordinator, CoordinatorClient, DurableReporter, OffsetService, RankLayout, RankMetrics, RankWriter, Route,
};
use rntuple::Error;
use std::sync::{Arc, Mutex};

use crate::convert::py_schema;
use crate::errors::{poisoned, unblocked, OrRaise};
use crate::options::write_options;
use crate::parallel::{Fill, NativeFillContext};

impl Fill for rntuple::write::distributed::RankFillContext {
    fn fill(&mut self, v: &rntuple::Value) -> rntuple::Result<()> {
        rntuple::write::distributed::RankFillContext::fill(self, v)
    }
    fn append_batch(&mut self, b: &arrow_array::RecordBatch) -> rntuple::Result<()> {
        rntuple::write::distributed::RankFillContext::append_batch(self, b)
    }
    fn flush_cluster(&mut self) -> rntuple::Result<()> {
        rntuple::write::distributed::RankFillContext::flush_cluster(self)
    }
    fn finish(self: Box<Self>) -> rntuple::Result<()> {
        rntuple::write::distributed::RankFillContext::finish(*self)
    }
}

fn committed() -> Error {
    Error::Invalid("the distributed write was committed or aborted already".into())
}

/// The committing side: creates the file (under a temporary name) with the header, hands out
/// byte ranges to the ranks, checkpoints and commits.
#[pyclass(module = "rntuple._rntuple", frozen)]
pub struct NativeCoordinator {
    asm: Mutex<Option<Assembler>>,
    coordinator: Coordinator,
    writing_path: String,
    first: u64,
    align: u64,
    /// Bytes of the ranges the checkpoints' records took.
    checkpoint_bytes: std::sync::atomic::AtomicU64,
}

#[pymethods]
impl NativeCoordinator {
    #[new]
    #[pyo3(signature = (path, name, schema, alignment=4096, bind="0.0.0.0:0", options=None))]
    fn new(
        py: Python<'_>,
        path: String,
        name: &str,
        schema: &Bound<'_, PyAny>,
        alignment: u64,
        bind: &str,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let layout = RankLayout { align: alignment, direct_io: false, max_write: 0 };
        layout.validate().or_raise(py)?;
        let (asm, coordinator) = unblocked(py, || {
            let desc = RankWriter::descriptor(name, &schema, &opts)?;
            let asm = Assembler::create(&path, desc, opts.clone(), alignment)?;
            let c = Coordinator::start(bind, asm.first_offset(), alignment)?;
            Ok((asm, c))
        })
        .or_raise(py)?;
        let writing_path = asm.writing_path().to_string_lossy().into_owned();
        let first = asm.first_offset();
        Ok(NativeCoordinator { asm: Mutex::new(Some(asm)), coordinator, writing_path, first, align: alignment, checkpoint_bytes: 0.into() })
    }

    /// The port the coordinator listens on.
    #[getter]
    fn port(&self) -> u16 {
        self.coordinator.port()
    }

    /// The token the ranks present.
    #[getter]
    fn token(&self) -> String {
        self.coordinator.token_hex()
    }

    /// The file the ranks write into until the commit.
    #[getter]
    fn writing_path(&self) -> String {
        self.writing_path.clone()
    }

    /// Where the first cluster may go.
    #[getter]
    fn first_offset(&self) -> u64 {
        self.first
    }

    /// Bytes handed out so far, requests answered, and the end of the furthest range.
    fn counters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("reserved_bytes", self.coordinator.reserved_bytes())?;
        d.set_item("requests", self.coordinator.requests())?;
        d.set_item("end", self.coordinator.end())?;
        Ok(d)
    }

    /// Checkpoints: appends a rank's list of clusters made durable (synced); `source` names it
    /// in errors. Returns the clusters appended and not yet checkpointed.
    fn add_durable(&self, py: Python<'_>, list: &[u8], source: &str) -> PyResult<usize> {
        let mut g = self.asm.lock().map_err(|_| poisoned()).or_raise(py)?;
        let asm = g.as_mut().ok_or_else(committed).or_raise(py)?;
        unblocked(py, || {
            asm.add_durable(list, source)?;
            Ok(asm.pending())
        })
        .or_raise(py)
    }

    /// Makes a checkpoint of the clusters appended so far (the file then reads as their
    /// entries); returns (checkpoints made, entries of the last).
    fn checkpoint(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        let mut g = self.asm.lock().map_err(|_| poisoned()).or_raise(py)?;
        let asm = g.as_mut().ok_or_else(committed).or_raise(py)?;
        let (c, align) = (&self.coordinator, self.align);
        let counted = Counted(c, &self.checkpoint_bytes);
        unblocked(py, || {
            asm.checkpoint(&counted, align)?;
            Ok(asm.checkpoints())
        })
        .or_raise(py)
    }

    /// Commits from the ranks' lists (`ordered`: entries list by list in the order given, else
    /// by file offset). Later requests of any rank are refused. Returns the file size, the bytes
    /// handed out (to ranks and checkpoints), the requests and the checkpoints' bytes.
    #[pyo3(signature = (lists, ordered=true))]
    fn commit<'py>(&self, py: Python<'py>, lists: Vec<Vec<u8>>, ordered: bool) -> PyResult<Bound<'py, PyDict>> {
        let asm = self.asm.lock().map_err(|_| poisoned()).or_raise(py)?.take().ok_or_else(committed).or_raise(py)?;
        self.coordinator.close();
        let end = self.coordinator.end();
        let order = if ordered { ClusterOrder::ByList } else { ClusterOrder::ByOffset };
        let size = unblocked(py, move || asm.commit_with(&lists, order, end)).or_raise(py)?;
        let d = PyDict::new(py);
        d.set_item("file_bytes", size)?;
        d.set_item("reserved_bytes", self.coordinator.reserved_bytes())?;
        d.set_item("requests", self.coordinator.requests())?;
        d.set_item("checkpoint_bytes", self.checkpoint_bytes.load(std::sync::atomic::Ordering::SeqCst))?;
        Ok(d)
    }

    /// Gives up: later requests are refused, nothing is left at the path (with checkpoints, the
    /// file stays as its last checkpoint left it).
    fn abort(&self, why: &str) {
        self.coordinator.close();
        if let Some(asm) = self.asm.lock().ok().and_then(|mut g| g.take()) {
            asm.abort(why);
        }
    }
}

/// The coordinator's ranges, those taken through it counted apart (the checkpoints' records).
struct Counted<'a>(&'a Coordinator, &'a std::sync::atomic::AtomicU64);

impl OffsetService for Counted<'_> {
    fn reserve(&self, len: u64) -> rntuple::Result<u64> {
        let at = self.0.reserve(len)?;
        self.1.fetch_add(len, std::sync::atomic::Ordering::SeqCst);
        Ok(at)
    }
}

/// Nothing to send: the rank's clusters are reported by its returned list. Setting a reporter
/// makes the rank sync each cluster before it is listed (checkpoints).
struct SyncOnly;

impl DurableReporter for SyncOnly {
    fn report(&self, _: Vec<u8>) -> rntuple::Result<()> {
        Ok(())
    }
}

/// One task's writer: clusters compressed here and written into the shared file at ranges from
/// the coordinator.
#[pyclass(module = "rntuple._rntuple", frozen)]
pub struct NativeRankWriter {
    inner: Mutex<Option<RankWriter>>,
}

#[pymethods]
impl NativeRankWriter {
    #[new]
    #[pyo3(signature = (writing_path, name, schema, address, token, alignment=4096, options=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        writing_path: String,
        name: &str,
        schema: &Bound<'_, PyAny>,
        address: &str,
        token: &str,
        alignment: u64,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let opts = write_options(options)?;
        let schema = py_schema(schema)?;
        let layout = RankLayout { align: alignment, direct_io: false, max_write: 0 };
        let checkpoints = opts.checkpoint_clusters > 0;
        let w = unblocked(py, || {
            let client = CoordinatorClient::connect(address, token)?;
            let w = RankWriter::new(name, &schema, opts, layout, Route::Offsets(Arc::new(client)), Some(std::path::Path::new(&writing_path)))?;
            if checkpoints {
                w.report_durable_to(Arc::new(SyncOnly))?;
            }
            Ok(w)
        })
        .or_raise(py)?;
        Ok(NativeRankWriter { inner: Mutex::new(Some(w)) })
    }

    /// A new fill context (one per thread).
    fn fill_context(&self, py: Python<'_>) -> PyResult<NativeFillContext> {
        let g = self.inner.lock().map_err(|_| poisoned()).or_raise(py)?;
        let w = g.as_ref().ok_or_else(committed).or_raise(py)?;
        Ok(NativeFillContext::wrap(Box::new(w.fill_context())))
    }

    /// Ends this rank (every fill context finished): its encoded list of placed clusters (for
    /// the coordinator's commit) and its figures.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Bound<'py, PyDict>)> {
        let w = self.inner.lock().map_err(|_| poisoned()).or_raise(py)?.take().ok_or_else(committed).or_raise(py)?;
        let (list, m) = unblocked(py, move || w.finish()).or_raise(py)?;
        Ok((PyBytes::new(py, &list), metrics(py, &m)?))
    }
}

fn metrics<'py>(py: Python<'py>, m: &RankMetrics) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("entries", m.entries)?;
    d.set_item("clusters", m.clusters)?;
    d.set_item("bytes_written", m.bytes_written)?;
    d.set_item("requests", m.requests)?;
    d.set_item("compress_seconds", m.compress_seconds)?;
    d.set_item("wait_seconds", m.wait_seconds)?;
    d.set_item("write_seconds", m.write_seconds)?;
    Ok(d)
}

/// Adds the coordinator and the rank writer to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeCoordinator>()?;
    m.add_class::<NativeRankWriter>()?;
    Ok(())
}
