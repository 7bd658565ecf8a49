//! The crate's single error type. Every error says what is wrong and where.

use std::fmt;

/// Errors from reading or writing RNTuple data.
///
/// Each variant carries enough context (envelope, field, column, page, byte offset) to find the
/// offending bytes in the file. An error raised while working on one of several inputs (merge,
/// skim) is wrapped in [`Error::Context`], which keeps the original variant: use
/// [`Error::root`] to ask what kind of error it is.
///
/// ```
/// use rntuple::Error;
/// let e = Error::corrupt("page list", 1234).context("input 'a.root'");
/// assert!(matches!(e.root(), Error::Corrupt { .. }));
/// assert_eq!(e.to_string(), "input 'a.root': corrupt file: page list (at byte offset 1234)");
/// ```
#[allow(missing_docs)]
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O error, with what was being done.
    Io { context: String, source: std::io::Error },
    /// The bytes of the file do not follow the format; `what` names the structure, `offset` the
    /// absolute byte offset in the file (or in the decompressed envelope when `envelope` is set).
    Corrupt { what: String, offset: u64, envelope: Option<&'static str> },
    /// A checksum did not match.
    Checksum { what: String, offset: u64, stored: u64, computed: u64 },
    /// The file uses a format version or feature this implementation does not support.
    Unsupported(String),
    /// The caller asked for something that does not exist (an RNTuple, a field).
    NotFound(String),
    /// A value or an argument is invalid for the operation (a mistake of the caller).
    Invalid(String),
    /// An invariant of this library did not hold: a bug, or a thread that panicked while holding
    /// a lock. Never caused by the caller's input.
    Internal(String),
    /// Building Arrow arrays failed.
    Arrow(arrow_schema::ArrowError),
    /// Another error, with what was being done when it happened (which input, which file).
    Context { context: String, source: Box<Error> },
}

/// Convenience alias.
///
/// ```
/// fn entries(path: &str) -> rntuple::Result<u64> {
///     Ok(rntuple::RNTupleFile::open(path)?.reader("Events")?.num_entries())
/// }
/// let e = entries("/nonexistent/file.root").unwrap_err();
/// assert!(matches!(e.root(), rntuple::Error::Io { .. }));
/// ```
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A [`Error::Corrupt`] at an absolute file offset.
    pub fn corrupt(what: impl Into<String>, offset: u64) -> Self {
        Error::Corrupt { what: what.into(), offset, envelope: None }
    }
    pub(crate) fn in_envelope(what: impl Into<String>, offset: u64, envelope: &'static str) -> Self {
        Error::Corrupt { what: what.into(), offset, envelope: Some(envelope) }
    }
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
    }
    pub(crate) fn internal(what: impl Into<String>) -> Self {
        Error::Internal(what.into())
    }

    /// Wraps the error with what was being done; the variant stays visible through
    /// [`Error::root`].
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context { context: context.into(), source: Box::new(self) }
    }

    /// The error under every [`Error::Context`] wrapper.
    pub fn root(&self) -> &Error {
        match self {
            Error::Context { source, .. } => source.root(),
            e => e,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { context, source } => write!(f, "I/O error while {context}: {source}"),
            Error::Corrupt { what, offset, envelope: None } => {
                write!(f, "corrupt file: {what} (at byte offset {offset})")
            }
            Error::Corrupt { what, offset, envelope: Some(env) } => {
                write!(f, "corrupt {env} envelope: {what} (at byte {offset} of the decompressed envelope)")
            }
            Error::Checksum { what, offset, stored, computed } => {
                write!(f, "checksum mismatch in {what} at byte offset {offset}: stored {stored:#018x}, computed {computed:#018x}")
            }
            Error::Unsupported(s) => write!(f, "unsupported: {s}"),
            Error::NotFound(s) => write!(f, "not found: {s}"),
            Error::Invalid(s) => write!(f, "invalid: {s}"),
            Error::Internal(s) => write!(f, "internal error (a bug of rntuple, please report it): {s}"),
            Error::Arrow(e) => write!(f, "invalid: building Arrow arrays: {e}"),
            Error::Context { context, source } => write!(f, "{context}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Arrow(e) => Some(e),
            Error::Context { source, .. } => Some(source.as_ref()),
            _ => None,
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Arrow(e)
    }
}

impl<T> From<std::sync::PoisonError<T>> for Error {
    fn from(_: std::sync::PoisonError<T>) -> Self {
        Error::internal("a lock was poisoned by a thread that panicked while holding it")
    }
}
