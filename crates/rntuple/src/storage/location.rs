//! Where a location leads, read or written: the dispatch above the storage layer's three rooms
//! (`local`, `container`, `remote`), the one module that sees them all. A path opens as a local
//! file, an `http(s)://` or `s3://` URL as a remote source (the `remote` feature), a `root://` URL
//! as an XRootD source (the `xrootd` feature) ([`open_location`]); an output path becomes a local
//! output file, an output URL a staging file uploaded at the commit ([`create_output`]); and a
//! ROOT file to write, at either, becomes a file sink (`create_file_sink`). The rooms below
//! do not import this module (`remote`'s tests aside).

#[cfg(feature = "remote")]
use super::remote::source::RemoteSource;
use super::container::file_sink::{FileOptions, FileSink};
use super::container::tfile_write::RootFileWriter;
use super::local::output::{OutputFile, OutputMode};
use super::local::source::{FileSource, ReadAt};
use super::remote::remote_output::{self, remote_destination};
use crate::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// The URL schemes read remotely: HTTP(S) and S3 (`remote`), XRootD (`xrootd`).
pub const URL_SCHEMES: [&str; 7] = ["http://", "https://", "s3://", "root://", "roots://", "xroot://", "xroots://"];

/// The scheme of `location` (one of [`URL_SCHEMES`], lower case) when it is a URL read remotely
/// rather than a path.
fn scheme(location: &str) -> Option<&'static str> {
    URL_SCHEMES.iter().copied().find(|p| location.len() > p.len() && location.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// Whether `location` is a URL read remotely (`http://`, `https://`, `s3://`, `root://`) rather
/// than a path.
///
/// ```
/// use rntuple::storage::location::is_url;
/// assert!(is_url("https://host/f.root") && is_url("s3://bucket/f.root") && is_url("root://eos.cern.ch//eos/f.root"));
/// assert!(!is_url("/data/f.root") && !is_url("http://"));
/// ```
pub fn is_url(location: &str) -> bool {
    scheme(location).is_some()
}

/// Opens a path or a URL (`http://`, `https://`, `s3://bucket/key`, see
/// `storage::remote::source::RemoteSource`; `root://host//path`, see `storage::remote::xrootd::XrootdSource`) as
/// a byte source.
pub fn open_location(location: impl AsRef<Path>) -> Result<Arc<dyn ReadAt>> {
    let p = location.as_ref();
    match p.to_str() {
        Some(s) if matches!(scheme(s), Some("root://" | "roots://" | "xroot://" | "xroots://")) => open_xrootd(s),
        Some(s) if is_url(s) => open_url(s),
        _ => Ok(Arc::new(FileSource::open(p)?)),
    }
}

#[cfg(feature = "remote")]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Ok(Arc::new(RemoteSource::open(url)?))
}

#[cfg(feature = "xrootd")]
fn open_xrootd(url: &str) -> Result<Arc<dyn ReadAt>> {
    Ok(Arc::new(super::remote::xrootd::XrootdSource::open(url)?))
}

#[cfg(not(feature = "xrootd"))]
fn open_xrootd(url: &str) -> Result<Arc<dyn ReadAt>> {
    Err(Error::Unsupported(format!("{url}: this build of rntuple reads no root:// URLs (the `xrootd` feature is off)")))
}

#[cfg(not(feature = "remote"))]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Err(Error::Unsupported(format!("{url}: this build of rntuple reads local files only (the `remote` feature is off)")))
}

/// Creates the output `path` names: a local file written under a temporary name and renamed at
/// the commit (see [`OutputFile::create`] and [`OutputMode`]), or, for an `s3://`, `root://` or
/// (WebDAV) `http(s)://` URL, a staging file in the local temporary directory uploaded atomically
/// at the commit (`storage::remote::remote_output`; refused with checkpoints). A URL of a scheme
/// this build lacks is an error naming the missing feature.
///
/// ```
/// use rntuple::storage::local::output::OutputMode;
/// use rntuple::storage::location::create_output;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-create-output-{}.txt", std::process::id()));
/// let out = create_output(&path, OutputMode::Atomic)?;
/// assert!(out.temporary_path().is_some() && !path.exists()); // written beside it until the commit
/// out.commit()?;
/// assert!(path.exists());
/// // A URL is uploaded once, at the commit: no checkpoints (and no URL at all without the features).
/// let e = create_output(std::path::Path::new("s3://bucket/f.root"), OutputMode::Checkpointed).unwrap_err();
/// assert!(e.to_string().contains("s3://bucket/f.root"), "{e}");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn create_output(path: &Path, mode: OutputMode) -> Result<OutputFile> {
    match remote_destination(path)? {
        Some(dest) => remote_output::create_output(path, dest, mode == OutputMode::Checkpointed),
        None => OutputFile::create(path, mode),
    }
}

/// Creates the ROOT file `path` names (a path or an output URL, see [`create_output`]) with the
/// file-level options `opts`, or opens it for update (a local file only), as a file sink.
pub(crate) fn create_file_sink(path: &Path, opts: &FileOptions) -> Result<FileSink> {
    let file = if opts.update_existing_file {
        if let Some(dest) = remote_destination(path)? {
            return Err(Error::Unsupported(format!(
                "{}: a file is updated in place, locally; a remote (s3://, root://, http(s)://) output is written new",
                dest.url()
            )));
        }
        RootFileWriter::open_update(path, opts.compression)?
    } else {
        // A writer with checkpoints writes at the final path from its first checkpoint: its
        // checkpoints are what a crash leaves behind. Any other writes under a temporary
        // name, renamed at the commit.
        let mode = if opts.checkpointed { OutputMode::Checkpointed } else { OutputMode::Atomic };
        RootFileWriter::create(create_output(path, mode)?, opts.compression)?
    };
    FileSink::new(file, path, opts)
}
