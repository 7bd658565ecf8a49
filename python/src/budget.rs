//! `set_memory_limit` and `memory_limit`: the process-wide read budget of the core
//! (`rntuple::set_memory_limit`), the most bytes one allocation of reading may take.

use pyo3::prelude::*;

/// Sets the read budget in bytes (`None`: no limit, the default). A read that needs more for one
/// allocation (a page, a decompressed envelope, a column's values) raises `RNTupleError` naming
/// what and how much, before allocating.
#[pyfunction]
#[pyo3(signature = (nbytes))]
fn set_memory_limit(nbytes: Option<u64>) {
    rntuple::set_memory_limit(nbytes);
}

/// The read budget in bytes, `None` when there is none.
#[pyfunction]
fn memory_limit() -> Option<u64> {
    rntuple::memory_limit()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(set_memory_limit, m)?)?;
    m.add_function(wrap_pyfunction!(memory_limit, m)?)?;
    Ok(())
}
