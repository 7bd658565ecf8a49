//! Skims with selections (`rntuple.skim` with `where=`/`filters=`): the whole skim in the core when
//! the selections are expressions, and the two halves of it (masks of expressions, applying masks)
//! for skims whose selections are partly Python callables.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rntuple::expr::{apply_masks, Masks, Selection};
use rntuple::ops::skim::output_schema;
use rntuple::ops::skim::{run, SkimRequest};
use rntuple::write::Compression;
use rntuple::write::ParallelWriter;
use rntuple::write::WriteOptions;
use std::path::PathBuf;

use crate::arrow_ffi::batch_to_pyarrow;
use crate::capsule::batch_from_pyarrow;
use crate::errors::{unblocked, OrRaise};
use crate::ops::report_dict;
use crate::parallel::NativeParallelWriter;

/// The keys of the report of a skim with selections that `skim_selected` returns (the CLI's report
/// without `output`, `where`, `filters` and `seconds`), in the order they always came in.
const SELECTED_KEYS: &[&str] =
    &["method", "clusters_copied", "inputs", "ntuple", "fields", "entries_read", "entries", "parts", "clusters", "threads", "file_bytes"];

/// Skims `inputs` (paths, globs, URLs) into `output` with the expression `where_` and the
/// `(collection, expression)` `filters` on `threads` threads (see `rntuple::ops::select`), kept
/// fields some inputs lack filled with defaults when `fill_missing`; returns the report as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (inputs, output, ntuple = None, fields = None, where_ = None, filters = Vec::new(), threads = 1, compression = None, fill_missing = false))]
#[allow(clippy::too_many_arguments)]
fn skim_selected<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    output: PathBuf,
    ntuple: Option<String>,
    fields: Option<Vec<String>>,
    where_: Option<String>,
    filters: Vec<(String, String)>,
    threads: usize,
    compression: Option<u32>,
    fill_missing: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = write_options(py, compression)?;
    let req = SkimRequest { inputs, ntuple, fields, where_, filters, threads: Some(threads), fill_missing, ..Default::default() };
    let report = unblocked(py, || run(&req, &output, opts, &|_, _| {})).or_raise(py)?;
    report_dict(py, &report.to_json(), SELECTED_KEYS)
}

/// Skims the join of `inputs` (the primary's paths, globs, URLs) with `friends` (`FILE[:NTUPLE]`)
/// on the index fields `on` into `output`, entries kept where `where_` holds (see
/// `rntuple::dataset::skim_join`); returns the report as a dict. The GIL is released meanwhile.
#[pyfunction]
#[pyo3(signature = (inputs, output, friends, on, ntuple = None, fields = None, where_ = None, threads = 0, compression = None))]
#[allow(clippy::too_many_arguments)]
fn skim_join<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    output: PathBuf,
    friends: Vec<String>,
    on: Vec<String>,
    ntuple: Option<String>,
    fields: Option<Vec<String>>,
    where_: Option<String>,
    threads: usize,
    compression: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = write_options(py, compression)?;
    let what = rntuple::dataset::JoinSkim { inputs, ntuple, friends, on, fields, where_, threads };
    let stats = unblocked(py, || rntuple::dataset::skim_join(&what, &output, opts, &|_, _| {})).or_raise(py)?;
    let report = stats.to_json(&what);
    let keys: Vec<&str> = report.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
    report_dict(py, &report, &keys)
}

/// The write options of a skim: the defaults with `compression` (ROOT's algorithm*100+level) when
/// given.
fn write_options(py: Python<'_>, compression: Option<u32>) -> PyResult<WriteOptions> {
    let mut opts = WriteOptions::default();
    if let Some(c) = compression {
        opts.compression = Compression::from_settings(c).or_raise(py)?;
    }
    Ok(opts)
}

/// The masks of expressions over a pyarrow record batch: `(entries, [(collection, elements)])`,
/// each mask as bytes of 0/1 (`None` for no entry condition).
#[pyfunction]
#[pyo3(signature = (batch, where_ = None, filters = Vec::new()))]
fn selection_masks<'py>(py: Python<'py>, batch: &Bound<'py, PyAny>, where_: Option<String>, filters: Vec<(String, String)>) -> PyResult<Bound<'py, PyAny>> {
    let b = batch_from_pyarrow(batch)?;
    let sel = Selection::new(where_.as_deref(), &filters).or_raise(py)?;
    let m = unblocked(py, || sel.masks(&b)).or_raise(py)?;
    let bytes = |v: &[bool]| PyBytes::new(py, &v.iter().map(|&x| x as u8).collect::<Vec<u8>>());
    let entries = m.entries.as_deref().map(bytes);
    let elements = PyList::empty(py);
    for (c, v) in &m.elements {
        elements.append((c.as_str(), bytes(v)))?;
    }
    Ok((entries, elements).into_pyobject(py)?.into_any())
}

/// A pyarrow record batch with masks applied (see `rntuple::expr::apply_masks`): `entries`
/// bytes of 0/1 per entry (or `None`), `elements` `[(collection, bytes of 0/1 per element)]`.
#[pyfunction]
#[pyo3(signature = (batch, entries = None, elements = Vec::new()))]
fn apply_selection_masks(py: Python<'_>, batch: &Bound<'_, PyAny>, entries: Option<Vec<u8>>, elements: Vec<(String, Vec<u8>)>) -> PyResult<PyObject> {
    let b = batch_from_pyarrow(batch)?;
    let masks = Masks {
        entries: entries.map(|e| e.into_iter().map(|x| x != 0).collect()),
        elements: elements.into_iter().map(|(c, v)| (c, v.into_iter().map(|x| x != 0).collect())).collect(),
    };
    let out = unblocked(py, || apply_masks(&b, &masks)).or_raise(py)?;
    batch_to_pyarrow(py, out)
}

/// The parallel writer of a skim's output `output`: the kept `fields` of the RNTuple `ntuple` of
/// `input` (all when `None`) with their types as the core's skim writes them; and the field names.
#[pyfunction]
#[pyo3(signature = (input, ntuple, fields, output, compression = None))]
fn skim_writer(
    py: Python<'_>,
    input: String,
    ntuple: String,
    fields: Option<Vec<String>>,
    output: PathBuf,
    compression: Option<u32>,
) -> PyResult<(NativeParallelWriter, Vec<String>)> {
    let opts = write_options(py, compression)?;
    let (w, names) = unblocked(py, || -> rntuple::Result<_> {
        if !rntuple::RNTupleFile::is_url(&input) {
            rntuple::storage::local::output::refuse_same_file(&output, &[std::path::Path::new(&input)], "skim")?;
        }
        let r = rntuple::RNTupleFile::open(&input)?.reader(&ntuple)?;
        let (schema, names) = output_schema(&r, fields.as_deref())?;
        Ok((ParallelWriter::create_with_types(&output, &ntuple, &schema, opts)?, names))
    })
    .or_raise(py)?;
    Ok((NativeParallelWriter::wrap(w), names))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(skim_writer, m)?)?;
    m.add_function(wrap_pyfunction!(skim_selected, m)?)?;
    m.add_function(wrap_pyfunction!(skim_join, m)?)?;
    m.add_function(wrap_pyfunction!(selection_masks, m)?)?;
    m.add_function(wrap_pyfunction!(apply_selection_masks, m)?)?;
    Ok(())
}
