//! The native part of the Python package `rntuple` (module `rntuple._rntuple`).
//!
//! Reading returns `pyarrow.RecordBatch`es that cross through the Arrow C Data Interface (no
//! per-element copies); the pure-Python part turns them into awkward arrays laid out as uproot
//! does. Writing takes `pyarrow.RecordBatch`es (the columnar fast path) or Python rows in the
//! JSON form of `rntuple dump` (lists of dicts). The GIL is released while reading,
//! decompressing, compressing and writing.
//!
//! - `errors`: `RNTupleError`, its subclasses by kind, and the mapping of library errors to them;
//! - `arrow_ffi`: record batches to and from pyarrow; `capsule`: the Arrow PyCapsule interface (RNTuples
//!   as Arrow C streams, streams and arrays of other libraries into the writers);
//! - `convert`: Python rows and field types to library values and types;
//! - `options`: write options as keyword arguments;
//! - `budget`: `set_memory_limit`, `memory_limit` (the read budget);
//! - `remote`: `set_remote_options`, `remote_options` (timeouts and retries of remote reads);
//! - `read`: `NativeFile` and `NativeReader`; `source`: Python file objects as byte sources;
//!   `descriptors`: the anchor, header, footer and page list records as Python values (uproot's objects);
//! - `write`: `NativeWriter`; `parallel`: `NativeParallelWriter` and `NativeFillContext`;
//!   `file_writer`: `NativeFileWriter` (several RNTuples into one file); `mpi` (feature `mpi`):
//!   `NativeMpiWriter`, the distributed writer on mpi4py's communicators; `distributed`:
//!   `NativeCoordinator` and `NativeRankWriter`, the distributed writer over TCP (Dask, Spark);
//! - `ops`: `merge`, `skim` and the report of `check`; `select`: skims with selections;
//! - `processor`: `NativeProcessor`, chains and joins of several RNTuples (`rntuple.chain`, `rntuple.join`).

use pyo3::prelude::*;

/// The Rust allocations of the extension (decoded columns handed to Python through the Arrow C
/// Data Interface are freed by Rust's release callbacks, so by this allocator too).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod arrow_ffi;
mod budget;
mod capsule;
mod convert;
mod convert_files;
mod descriptors;
mod distributed;
mod errors;
mod file_writer;
#[cfg(feature = "mpi")]
mod mpi;
mod ops;
mod options;
mod parallel;
mod processor;
mod read;
mod remote;
mod select;
mod source;
mod write;

#[pymodule]
fn _rntuple(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The workspace's version (the core crate's), not this binding crate's own.
    m.add("__version__", rntuple::VERSION)?;
    errors::register(m)?;
    options::register(m)?;
    read::register(m)?;
    remote::register(m)?;
    budget::register(m)?;
    capsule::register(m)?;
    write::register(m)?;
    parallel::register(m)?;
    file_writer::register(m)?;
    distributed::register(m)?;
    ops::register(m)?;
    select::register(m)?;
    processor::register(m)?;
    convert_files::register(m)?;
    #[cfg(feature = "mpi")]
    mpi::register(m)?;
    m.add_function(wrap_pyfunction!(convert::normalize_type, m)?)?;
    m.add_function(wrap_pyfunction!(is_url, m)?)?;
    Ok(())
}

/// Whether `path` is a URL the native reader opens (`http(s)://`, `s3://`, `root://`): the core's
/// one list of schemes.
#[pyfunction]
fn is_url(path: &str) -> bool {
    rntuple::RNTupleFile::is_url(path)
}
