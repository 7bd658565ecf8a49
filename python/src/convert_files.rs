//! `convert_files`: Parquet and Arrow IPC files to and from RNTuple, through `rntuple::convert`
//! (the format of each side by its extension). The GIL is released while converting; it is
//! taken back only to call the progress callback.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

use crate::errors::{unblocked, OrRaise};

/// Converts `input` into `output` (see `rntuple::convert::convert`); `progress`, when given, is
/// called with (entries done, entries in total) after every batch. Returns a dict: entries,
/// clusters (clusters, row groups or record batches written).
#[pyfunction]
#[pyo3(signature = (input, output, ntuple = None, compression = 505, progress = None, same_page_merging = true))]
fn convert_files<'py>(
    py: Python<'py>,
    input: PathBuf,
    output: PathBuf,
    ntuple: Option<String>,
    compression: u32,
    progress: Option<Py<PyAny>>,
    same_page_merging: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let compression = rntuple::write::Compression::from_settings(compression).or_raise(py)?;
    let opts = rntuple::convert::ConvertOptions { ntuple, compression, same_page_merging };
    let s = unblocked(py, || {
        rntuple::convert::convert_with_progress(&input, &output, &opts, &mut |done, total| {
            if let Some(cb) = &progress {
                // A failing callback (a closed progress bar, say) does not stop the conversion.
                Python::with_gil(|py| {
                    if let Err(e) = cb.call1(py, (done, total)) {
                        e.print(py);
                    }
                });
            }
        })
    })
    .or_raise(py)?;
    let d = PyDict::new(py);
    d.set_item("entries", s.entries)?;
    d.set_item("clusters", s.clusters)?;
    Ok(d)
}

/// Registers `convert_files` in the extension module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(convert_files, m)?)
}
