//! Whole-file operations: `merge` and `skim` (module functions) and the report of `RNTuple.check`, each
//! returned to Python as a dict. The GIL is released while they run.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rntuple::ops::merge::{MergeMode, MergeOptions};
use rntuple::ops::skim::{run, EntryRange, SkimRequest};
use rntuple::read::CheckReport;
use rntuple::write::WriteOptions;
use std::path::PathBuf;

use crate::errors::{unblocked, OrRaise};

/// The default options with the compression asked for (the library's default when `None`).
fn with_compression(py: Python<'_>, compression: Option<u32>) -> PyResult<WriteOptions> {
    let mut opts = WriteOptions::default();
    if let Some(c) = compression {
        opts.compression = rntuple::write::Compression::from_settings(c).or_raise(py)?;
    }
    Ok(opts)
}

/// Merges the RNTuple `ntuple` of `inputs` into a new file `output` by copying their compressed
/// pages (recompressed to `compression` when given, which is then also the metadata's; refilled
/// into clusters of `cluster_size` uncompressed bytes when given), on `threads` threads (0: one
/// per core); returns what was done as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (output, inputs, ntuple, compression = None, mode = "strict", cluster_size = None, threads = 0, ignore_other_objects = false))]
#[allow(clippy::too_many_arguments)]
fn merge<'py>(
    py: Python<'py>,
    output: PathBuf,
    inputs: Vec<PathBuf>,
    ntuple: String,
    compression: Option<u32>,
    mode: &str,
    cluster_size: Option<u64>,
    threads: usize,
    ignore_other_objects: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = with_compression(py, compression)?;
    let mode: MergeMode = mode.parse().or_raise(py)?;
    let recompress = compression.map(|_| opts.compression);
    let mopts = MergeOptions { mode, compression: recompress, cluster_size, threads, ignore_other_objects };
    let stats = unblocked(py, || rntuple::ops::merge::merge_with_options(&inputs, &ntuple, &output, &mopts, opts, |_, _| {})).or_raise(py)?;
    let d = PyDict::new(py);
    d.set_item("entries", stats.entries)?;
    d.set_item("clusters", stats.clusters)?;
    d.set_item("pages", stats.pages)?;
    d.set_item("page_bytes", stats.page_bytes)?;
    d.set_item("file_bytes", stats.file_bytes)?;
    d.set_item("zero_pages", stats.zero_pages)?;
    d.set_item("recompressed_pages", stats.recompressed_pages)?;
    d.set_item("attribute_sets", stats.attribute_sets)?;
    Ok(d)
}

/// The keys of the report of a skim of one input that `skim` returns (the CLI's report without
/// `input`, `output`, `ntuple` and `seconds`), in the order they always came in.
const ONE_INPUT_KEYS: &[&str] =
    &["method", "why_not_copied", "fields", "entry_start", "entry_stop", "entries", "clusters", "pages_copied", "page_bytes_copied", "file_bytes"];

/// Skims the RNTuple `ntuple` of `input` into a new file `output` (see `rntuple::ops::skim`);
/// returns what was done as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (input, output, ntuple, fields = None, entry_start = None, entry_stop = None, compression = None, reencode = false))]
#[allow(clippy::too_many_arguments)]
fn skim<'py>(
    py: Python<'py>,
    input: PathBuf,
    output: PathBuf,
    ntuple: String,
    fields: Option<Vec<String>>,
    entry_start: Option<u64>,
    entry_stop: Option<u64>,
    compression: Option<u32>,
    reencode: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = with_compression(py, compression)?;
    let entries = match (entry_start, entry_stop) {
        (None, None) => None,
        (a, b) => Some(EntryRange::Clamped(a.unwrap_or(0), b.unwrap_or(u64::MAX))),
    };
    let input = input.into_os_string().into_string().map_err(|p| PyValueError::new_err(format!("skim: the input path {p:?} is not valid UTF-8")))?;
    let req = SkimRequest { inputs: vec![input], ntuple: Some(ntuple), fields, entries, reencode, ..Default::default() };
    let report = unblocked(py, || run(&req, &output, opts, &|_, _| {})).or_raise(py)?;
    report_dict(py, &report.to_json(), ONE_INPUT_KEYS)
}

/// The entries `keys` of a skim's JSON report (`rntuple::ops::skim::SkimReport::to_json`) as a
/// dict, in that order.
pub(crate) fn report_dict<'py>(py: Python<'py>, report: &serde_json::Value, keys: &[&str]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for &k in keys {
        let v = report.get(k).ok_or_else(|| PyRuntimeError::new_err(format!("the skim's report has no '{k}'")))?;
        d.set_item(k, json_to_py(py, v)?)?;
    }
    Ok(d)
}

/// A JSON value as the Python value of the same shape.
fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => py.None().into_bound(py),
        J::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        J::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.into_pyobject(py)?.into_any(),
            (_, Some(i), _) => i.into_pyobject(py)?.into_any(),
            (_, _, Some(f)) => f.into_pyobject(py)?.into_any(),
            _ => return Err(PyRuntimeError::new_err(format!("the number {n} has no Python value"))),
        },
        J::String(s) => s.into_pyobject(py)?.into_any(),
        J::Array(a) => PyList::new(py, a.iter().map(|x| json_to_py(py, x)).collect::<PyResult<Vec<_>>>()?)?.into_any(),
        J::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The report of `Reader::check` as a dict (`RNTuple.check`).
pub(crate) fn check_report(py: Python<'_>, rep: CheckReport) -> PyResult<Bound<'_, PyDict>> {
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

/// Adds `merge` and `skim` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(skim, m)?)?;
    Ok(())
}
