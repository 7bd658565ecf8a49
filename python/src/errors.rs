//! The exceptions: `RNTupleError` and one subclass per kind of library error, and [`to_py_err`], the one
//! place where a library error becomes a Python exception.
//!
//! The subclasses have a second, built-in base where one fits (`NotFoundError` is a `KeyError`,
//! `InvalidArgumentError` a `ValueError`, `RNTupleIOError` an `OSError`), so they are made at run time with
//! `type(name, bases, namespace)`, which needs the GIL: [`to_py_err`] takes the `Python` token. Map errors
//! after `allow_threads` returns, never inside it (taking the GIL there while holding a writer's lock could
//! deadlock with a Python thread waiting for that lock).

use pyo3::create_exception;
use pyo3::exceptions::{PyBaseException, PyException, PyKeyError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};
use rntuple::Error;

create_exception!(
    _rntuple,
    RNTupleError,
    PyException,
    "An error from the rntuple library: a damaged or unsupported file, a missing RNTuple or field, a value that does not fit its field, or an I/O error. The message says what is wrong and where. Subclasses tell the kinds apart: NotFoundError, CorruptFileError, UnsupportedError, InvalidArgumentError, InternalError, RNTupleIOError."
);

/// The kinds of library error that have their own subclass of `RNTupleError`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    NotFound,
    Corrupt,
    Unsupported,
    Invalid,
    Internal,
    Io,
}

/// One subclass: its kind, name, built-in second base (if any) and documentation.
struct Class {
    kind: Kind,
    name: &'static str,
    extra_base: Option<fn(Python<'_>) -> Bound<'_, PyType>>,
    doc: &'static str,
}

/// Every subclass, in the order of [`Kind`].
const CLASSES: [Class; 6] = [
    Class {
        kind: Kind::NotFound,
        name: "NotFoundError",
        extra_base: Some(|py| py.get_type::<PyKeyError>()),
        doc: "Something asked for does not exist: an RNTuple in a file, a field of an RNTuple. A KeyError (as uproot's KeyInFileError), printed without KeyError's quotes.",
    },
    Class {
        kind: Kind::Corrupt,
        name: "CorruptFileError",
        extra_base: None,
        doc: "The file's bytes do not follow the format, or a checksum does not match; the message names the structure and the byte offset.",
    },
    Class {
        kind: Kind::Unsupported,
        name: "UnsupportedError",
        extra_base: None,
        doc: "The file or the request uses a format version, type or feature this implementation does not support.",
    },
    Class {
        kind: Kind::Invalid,
        name: "InvalidArgumentError",
        extra_base: Some(|py| py.get_type::<PyValueError>()),
        doc: "An argument or a value is invalid for the operation (a value that does not fit its field, bad write options); also a ValueError.",
    },
    Class {
        kind: Kind::Internal,
        name: "InternalError",
        extra_base: None,
        doc: "An invariant of the library did not hold: a bug of rntuple (please report it), or a thread that panicked while holding a lock.",
    },
    Class {
        kind: Kind::Io,
        name: "RNTupleIOError",
        extra_base: Some(|py| py.get_type::<PyOSError>()),
        doc: "An operating-system I/O error (or an error of a Python file object being read), with what was being done; also an OSError.",
    },
];

static TYPES: GILOnceCell<Vec<Py<PyType>>> = GILOnceCell::new();

/// The subclasses, made on first use in the order of [`CLASSES`].
fn types(py: Python<'_>) -> PyResult<&Vec<Py<PyType>>> {
    TYPES.get_or_try_init(py, || {
        let base = py.get_type::<RNTupleError>();
        let make_type = py.get_type::<PyType>();
        CLASSES
            .iter()
            .map(|c| {
                let namespace = PyDict::new(py);
                namespace.set_item("__doc__", c.doc)?;
                namespace.set_item("__module__", "rntuple")?;
                let bases = match c.extra_base {
                    Some(extra) => {
                        // KeyError's str() quotes its message (a key's repr); print it as the others do.
                        namespace.set_item("__str__", py.get_type::<PyBaseException>().getattr("__str__")?)?;
                        PyTuple::new(py, [base.clone(), extra(py)])?
                    }
                    None => PyTuple::new(py, [base.clone()])?,
                };
                Ok(make_type.call1((c.name, bases, namespace))?.downcast_into::<PyType>()?.unbind())
            })
            .collect()
    })
}

/// The subclass of `RNTupleError` for a kind of error.
pub(crate) fn class(py: Python<'_>, kind: Kind) -> PyResult<Bound<'_, PyType>> {
    let i = CLASSES.iter().position(|c| c.kind == kind).expect("every kind has a class");
    Ok(types(py)?[i].bind(py).clone())
}

/// The kind of a library error, looked up under its context wrappers; `None` for a kind without a
/// subclass of its own (raised as `RNTupleError`).
pub(crate) fn kind_of(e: &Error) -> Option<Kind> {
    match e.root() {
        Error::Io { .. } => Some(Kind::Io),
        Error::Corrupt { .. } | Error::Checksum { .. } => Some(Kind::Corrupt),
        Error::Unsupported(_) => Some(Kind::Unsupported),
        Error::NotFound(_) => Some(Kind::NotFound),
        // Building Arrow arrays from the caller's data failed; the library reports it as "invalid".
        Error::Invalid(_) | Error::Arrow(_) => Some(Kind::Invalid),
        Error::Internal(_) => Some(Kind::Internal),
        _ => None,
    }
}

/// A library error as a Python exception: the subclass of `RNTupleError` for its kind, carrying its message.
pub(crate) fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    let message = e.to_string();
    match kind_of(&e).map(|k| class(py, k)) {
        Some(Ok(t)) => PyErr::from_type(t, message),
        Some(Err(failed)) => failed,
        None => RNTupleError::new_err(message),
    }
}

/// [`to_py_err`] on results: `py.allow_threads(|| ...).or_raise(py)?`.
pub(crate) trait OrRaise<T> {
    /// The value, or the error as a Python exception.
    fn or_raise(self, py: Python<'_>) -> PyResult<T>;
}

impl<T> OrRaise<T> for rntuple::Result<T> {
    fn or_raise(self, py: Python<'_>) -> PyResult<T> {
        self.map_err(|e| to_py_err(py, e))
    }
}

/// Runs library work `f` with the GIL released, catching a Rust panic: it becomes an
/// [`Error::Internal`] (raised as `InternalError`, an `RNTupleError`) instead of pyo3's
/// `PanicException`, which derives from `BaseException` and escapes `except Exception`.
/// Every call into the library from Python that does real work goes through here (reading,
/// writing, merging, skimming, type parsing).
pub(crate) fn unblocked<T: Send>(py: Python<'_>, f: impl FnOnce() -> rntuple::Result<T> + Send) -> rntuple::Result<T> {
    py.allow_threads(|| caught(f))
}

/// Runs `f`, turning a Rust panic into an [`Error::Internal`] (what [`unblocked`] does, for code that runs
/// where the GIL may or may not be held, such as the callbacks of an exported Arrow stream).
pub(crate) fn caught<T>(f: impl FnOnce() -> rntuple::Result<T>) -> rntuple::Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        Err(Error::Internal(format!("the rntuple library panicked: {what} (a bug: please report it with the file)")))
    })
}

/// A writer's mutex poisoned by a panic in another thread.
pub(crate) fn poisoned() -> Error {
    Error::Internal("a writer lock was poisoned by a panic in another thread".into())
}

/// Adds `RNTupleError` and its subclasses to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("RNTupleError", py.get_type::<RNTupleError>())?;
    for (c, t) in CLASSES.iter().zip(types(py)?) {
        m.add(c.name, t.bind(py))?;
    }
    Ok(())
}
