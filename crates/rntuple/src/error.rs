//! The crate's single error type. Every error says what is wrong and where.

use std::fmt;

/// Errors from reading or writing RNTuple data.
///
/// Each variant carries enough context (envelope, field, column, page, byte offset) to find the
/// offending bytes in the file.
#[allow(missing_docs)]
#[derive(Debug)]
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
    /// A value or an argument is invalid for the operation.
    Invalid(String),
}

/// Convenience alias.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn corrupt(what: impl Into<String>, offset: u64) -> Self {
        Error::Corrupt { what: what.into(), offset, envelope: None }
    }
    pub(crate) fn in_envelope(what: impl Into<String>, offset: u64, envelope: &'static str) -> Self {
        Error::Corrupt { what: what.into(), offset, envelope: Some(envelope) }
    }
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io { context: context.into(), source }
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
            Error::Checksum { what, offset, stored, computed } => write!(
                f,
                "checksum mismatch in {what} at byte offset {offset}: stored {stored:#018x}, computed {computed:#018x}"
            ),
            Error::Unsupported(s) => write!(f, "unsupported: {s}"),
            Error::NotFound(s) => write!(f, "not found: {s}"),
            Error::Invalid(s) => write!(f, "invalid: {s}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<arrow_schema::ArrowError> for Error {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Error::Invalid(format!("building Arrow arrays: {e}"))
    }
}
