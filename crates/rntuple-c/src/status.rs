//! Status codes, the per-thread last error message, and the guard that every exported function
//! runs its body in (errors become codes and messages; a panic becomes `RNTUPLE_ERR_INTERNAL`).

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
pub const RNTUPLE_OK: i32 = 0;
/// An argument has a wrong value (a malformed schema or option, an empty name, a bad range).
pub const RNTUPLE_ERR_INVALID_ARGUMENT: i32 = 1;
/// A pointer argument that must not be null was null.
pub const RNTUPLE_ERR_NULL_POINTER: i32 = 2;
/// A handle that was freed, never issued, or 0.
pub const RNTUPLE_ERR_BAD_HANDLE: i32 = 3;
/// A handle of another kind than the function takes (a reader where a writer is expected).
pub const RNTUPLE_ERR_WRONG_HANDLE: i32 = 4;
/// The object cannot do this any more: a writer after commit or abort, a finished fill context.
pub const RNTUPLE_ERR_STATE: i32 = 5;
/// Data do not fit the writer's schema (field names, count or types), or a setter of the wrong
/// type for its field.
pub const RNTUPLE_ERR_SCHEMA_MISMATCH: i32 = 6;
/// Something asked for does not exist: a file, an RNTuple, a field.
pub const RNTUPLE_ERR_NOT_FOUND: i32 = 7;
/// An operating-system or network I/O error.
pub const RNTUPLE_ERR_IO: i32 = 8;
/// The file's bytes do not follow the format, or a checksum did not match.
pub const RNTUPLE_ERR_CORRUPT: i32 = 9;
/// A format version or feature this library does not support.
pub const RNTUPLE_ERR_UNSUPPORTED: i32 = 10;
/// An output buffer was too small; the length needed was reported.
pub const RNTUPLE_ERR_BUFFER: i32 = 11;
/// A bug of this library (a panic caught at the boundary, a broken invariant).
pub const RNTUPLE_ERR_INTERNAL: i32 = 12;

/// An error on its way to the caller: a status code and a message.
#[derive(Debug)]
pub struct CError {
    /// One of the `RNTUPLE_ERR_*` codes.
    pub code: i32,
    /// What went wrong, and where.
    pub message: String,
}

impl CError {
    /// An error with a code and a message.
    pub fn new(code: i32, message: impl Into<String>) -> CError {
        CError { code, message: message.into() }
    }

    /// `RNTUPLE_ERR_INVALID_ARGUMENT`.
    pub fn invalid(message: impl Into<String>) -> CError {
        CError::new(RNTUPLE_ERR_INVALID_ARGUMENT, message)
    }

    /// `RNTUPLE_ERR_NULL_POINTER` naming the argument.
    pub fn null(arg: &str) -> CError {
        CError::new(RNTUPLE_ERR_NULL_POINTER, format!("'{arg}' is a null pointer"))
    }

    /// `RNTUPLE_ERR_SCHEMA_MISMATCH`.
    pub fn schema(message: impl Into<String>) -> CError {
        CError::new(RNTUPLE_ERR_SCHEMA_MISMATCH, message)
    }

    /// `RNTUPLE_ERR_STATE`.
    pub fn state(message: impl Into<String>) -> CError {
        CError::new(RNTUPLE_ERR_STATE, message)
    }

    /// The library's error with invalid arguments counted as schema mismatches (what an append
    /// of data that do not fit the schema returns).
    pub fn from_append(e: rntuple::Error) -> CError {
        let c = CError::from(e);
        if c.code == RNTUPLE_ERR_INVALID_ARGUMENT {
            CError::schema(c.message)
        } else {
            c
        }
    }
}

/// The code of an error of the library, by its kind (under any context wrappers).
pub fn code_of(e: &rntuple::Error) -> i32 {
    use rntuple::Error as E;
    match e.root() {
        E::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => RNTUPLE_ERR_NOT_FOUND,
        E::Io { .. } => RNTUPLE_ERR_IO,
        E::Corrupt { .. } | E::Checksum { .. } => RNTUPLE_ERR_CORRUPT,
        E::Unsupported(_) => RNTUPLE_ERR_UNSUPPORTED,
        E::NotFound(_) => RNTUPLE_ERR_NOT_FOUND,
        E::Invalid(_) | E::Arrow(_) => RNTUPLE_ERR_INVALID_ARGUMENT,
        _ => RNTUPLE_ERR_INTERNAL,
    }
}

impl From<rntuple::Error> for CError {
    fn from(e: rntuple::Error) -> CError {
        CError { code: code_of(&e), message: e.to_string() }
    }
}

impl From<arrow_schema::ArrowError> for CError {
    fn from(e: arrow_schema::ArrowError) -> CError {
        CError::invalid(format!("Arrow: {e}"))
    }
}

/// What a function body returns.
pub type CResult<T> = Result<T, CError>;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    // An interior NUL (from a name the caller gave) would cut the C string: shown as U+FFFD.
    let c = CString::new(message.replace('\0', "\u{FFFD}")).unwrap_or_default();
    LAST_ERROR.with(|l| *l.borrow_mut() = c);
}

/// Runs an exported function's body: `RNTUPLE_OK`, or the error's code with its message (prefixed
/// with the function's name) left for [`rntuple_last_error`]; a panic is caught and reported as
/// `RNTUPLE_ERR_INTERNAL`.
pub fn guard(function: &str, body: impl FnOnce() -> CResult<()>) -> i32 {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => RNTUPLE_OK,
        Ok(Err(e)) => {
            set_last_error(format!("{function}: {}", e.message));
            e.code
        }
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
            set_last_error(format!("{function}: internal error (a panic, please report it): {what}"));
            RNTUPLE_ERR_INTERNAL
        }
    }
}

/// The message of the last failed call on this thread (an empty string when none failed). The
/// pointer stays valid until the next failing call on this thread; never null.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_last_error() -> *const c_char {
    LAST_ERROR.with(|l| l.borrow().as_ptr())
}

/// The name of a status code (`"RNTUPLE_ERR_IO"`), or `"RNTUPLE_UNKNOWN_STATUS"`; a static string.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_status_name(status: i32) -> *const c_char {
    let s: &'static [u8] = match status {
        RNTUPLE_OK => b"RNTUPLE_OK\0",
        RNTUPLE_ERR_INVALID_ARGUMENT => b"RNTUPLE_ERR_INVALID_ARGUMENT\0",
        RNTUPLE_ERR_NULL_POINTER => b"RNTUPLE_ERR_NULL_POINTER\0",
        RNTUPLE_ERR_BAD_HANDLE => b"RNTUPLE_ERR_BAD_HANDLE\0",
        RNTUPLE_ERR_WRONG_HANDLE => b"RNTUPLE_ERR_WRONG_HANDLE\0",
        RNTUPLE_ERR_STATE => b"RNTUPLE_ERR_STATE\0",
        RNTUPLE_ERR_SCHEMA_MISMATCH => b"RNTUPLE_ERR_SCHEMA_MISMATCH\0",
        RNTUPLE_ERR_NOT_FOUND => b"RNTUPLE_ERR_NOT_FOUND\0",
        RNTUPLE_ERR_IO => b"RNTUPLE_ERR_IO\0",
        RNTUPLE_ERR_CORRUPT => b"RNTUPLE_ERR_CORRUPT\0",
        RNTUPLE_ERR_UNSUPPORTED => b"RNTUPLE_ERR_UNSUPPORTED\0",
        RNTUPLE_ERR_BUFFER => b"RNTUPLE_ERR_BUFFER\0",
        RNTUPLE_ERR_INTERNAL => b"RNTUPLE_ERR_INTERNAL\0",
        _ => b"RNTUPLE_UNKNOWN_STATUS\0",
    };
    s.as_ptr().cast()
}

/// The library's version, `"MAJOR.MINOR.PATCH"`; a static string.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        unsafe { CStr::from_ptr(rntuple_last_error()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn errors_become_codes_and_messages() {
        assert_eq!(guard("f", || Ok(())), RNTUPLE_OK);
        assert_eq!(guard("f", || Err(CError::invalid("bad x"))), RNTUPLE_ERR_INVALID_ARGUMENT);
        assert_eq!(last(), "f: bad x");
        let e = rntuple::Error::corrupt("page list", 12).context("input 'a'");
        assert_eq!(guard("g", || Err(e.into())), RNTUPLE_ERR_CORRUPT);
        assert!(last().starts_with("g: input 'a': corrupt file: page list"), "{}", last());
    }

    #[test]
    fn a_panic_stops_at_the_guard() {
        let code = guard("h", || panic!("boom {}", 7));
        assert_eq!(code, RNTUPLE_ERR_INTERNAL);
        assert!(last().contains("boom 7"), "{}", last());
    }

    #[test]
    fn status_names() {
        let name = |s| unsafe { CStr::from_ptr(rntuple_status_name(s)) }.to_str().map(str::to_owned);
        assert_eq!(name(RNTUPLE_ERR_BUFFER).ok().as_deref(), Some("RNTUPLE_ERR_BUFFER"));
        assert_eq!(name(99).ok().as_deref(), Some("RNTUPLE_UNKNOWN_STATUS"));
    }
}
