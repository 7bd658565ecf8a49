//! The three file formats of a conversion, told apart by the file's extension.

use crate::error::{Error, Result};
use std::path::Path;

/// A file format of a conversion, chosen by the file's extension.
///
/// ```
/// use rntuple::convert::Format;
/// use std::path::Path;
/// assert_eq!(Format::of_path(Path::new("run1.PARQUET"))?, Format::Parquet);
/// assert_eq!(Format::of_path(Path::new("run1.feather"))?, Format::ArrowIpc);
/// assert_eq!(Format::of_path(Path::new("run1.root"))?, Format::Root);
/// assert!(Format::of_path(Path::new("run1.csv")).is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Apache Parquet (`.parquet`, `.parq`, `.pq`).
    Parquet,
    /// The Arrow IPC file format, also known as Feather v2 (`.arrow`, `.feather`, `.ipc`).
    ArrowIpc,
    /// A ROOT file (`.root`) holding the RNTuple.
    Root,
}

impl Format {
    /// The format of a file from its extension (case-insensitive); an error names the path when
    /// the extension is none of the known ones.
    pub fn of_path(path: &Path) -> Result<Format> {
        let ext = path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()).unwrap_or_default();
        match ext.as_str() {
            "parquet" | "parq" | "pq" => Ok(Format::Parquet),
            "arrow" | "feather" | "ipc" => Ok(Format::ArrowIpc),
            "root" => Ok(Format::Root),
            _ => Err(Error::Invalid(format!(
                "'{}': unknown file format (extension '{ext}'); conversion knows .parquet, .arrow/.feather (Arrow IPC) and .root",
                path.display()
            ))),
        }
    }
}
