//! What a conversion produces: its [`ConvertSummary`], and the helpers the Parquet and Arrow IPC
//! converters share to finish an output (commit or abort a `.root` file, publish or remove a
//! temporary Parquet or Arrow IPC file) and to name a failed file operation.

use crate::error::{Error, Result};
use crate::storage::local::{file_io, io_record};
use std::path::Path;

/// What a conversion wrote.
///
/// ```
/// use rntuple::convert::{convert, ConvertOptions, ConvertSummary};
/// # let dir = std::env::temp_dir();
/// # let root = dir.join(format!("rntuple-doc-ConvertSummary-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&root, "Events", &[("x", "float"), ("v", "std::vector<std::int32_t>")], Default::default())?;
/// # use rntuple::Value as V;
/// # for i in 0..10 {
/// #     if i == 4 { w.commit_cluster()?; }
/// #     w.fill(&V::Record(vec![("x".into(), V::F32(i as f32)), ("v".into(), V::List(vec![V::Int(i); i as usize]))]))?;
/// # }
/// # w.commit()?;
/// # let parquet = root.with_extension("parquet");
/// // Ten entries in two clusters: two Parquet row groups.
/// let s = convert(&root, &parquet, &ConvertOptions::default())?;
/// assert_eq!(s, ConvertSummary { entries: 10, clusters: 2 });
/// # for p in [&root, &parquet] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvertSummary {
    /// Entries (rows) converted.
    pub entries: u64,
    /// Clusters, Parquet row groups or IPC record batches written.
    pub clusters: u64,
}

/// Commits `w` when filling it went well (`r`), else aborts it (a new file is removed).
pub(crate) fn commit_or_abort(w: crate::write::Writer, r: Result<()>, summary: ConvertSummary) -> Result<ConvertSummary> {
    match r {
        Ok(()) => {
            w.commit()?;
            Ok(summary)
        }
        Err(e) => {
            w.abort();
            Err(e)
        }
    }
}

/// Syncs the finished temporary file `tmp` (written through `out`), renames it to `output` and
/// syncs the directory, when writing it went well (`r`), else removes it: an output is never left
/// half-written, and a crash after this returns keeps it.
pub(crate) fn publish_or_remove(tmp: &Path, output: &Path, out: &std::fs::File, r: Result<ConvertSummary>) -> Result<ConvertSummary> {
    match r {
        Ok(s) => {
            file_io::sync_all(out).map_err(|e| io_err("syncing", tmp, e))?;
            file_io::rename(tmp, output).map_err(|e| io_err("renaming the finished file into", output, e))?;
            file_io::sync_dir(file_io::parent_dir(output));
            io_record::durable(output);
            Ok(s)
        }
        Err(e) => {
            let _ = file_io::remove(tmp);
            Err(e)
        }
    }
}

/// Creates the temporary file `tmp` of a Parquet or Arrow IPC output.
pub(crate) fn create_temporary(tmp: &Path) -> Result<std::fs::File> {
    file_io::create_truncate(tmp).map_err(|e| io_err("creating", tmp, e))
}

/// An I/O error naming what was done with which file.
pub(crate) fn io_err(what: &str, path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("{what} '{}'", path.display()), e)
}
