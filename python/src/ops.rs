//! Whole-file operations: `merge` and `skim` (module functions) and the report of `RNTuple.check`, each
//! returned to Python as a dict. The GIL is released while they run.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rntuple::ops::merge::MergeMode;
use rntuple::ops::skim::Skim;
use rntuple::read::check::CheckReport;
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

/// Merges the RNTuple `ntuple` of `inputs` (same schema) into a new file `output` by copying
/// their compressed pages; returns what was copied as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (output, inputs, ntuple, compression = None, mode = "strict"))]
fn merge<'py>(py: Python<'py>, output: PathBuf, inputs: Vec<PathBuf>, ntuple: String, compression: Option<u32>, mode: &str) -> PyResult<Bound<'py, PyDict>> {
    let opts = with_compression(py, compression)?;
    let mode: MergeMode = mode.parse().or_raise(py)?;
    let stats = unblocked(py, || rntuple::ops::merge::merge_with_mode(&inputs, &ntuple, &output, mode, opts, |_, _| {})).or_raise(py)?;
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
        (a, b) => Some((a.unwrap_or(0), b.unwrap_or(u64::MAX))),
    };
    let what = Skim { fields, entries, reencode };
    let stats = unblocked(py, || rntuple::ops::skim::skim(&input, &ntuple, &output, &what, opts)).or_raise(py)?;
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
