//! Outputs at a URL: `s3://bucket/key`, `root://host//path` and `http(s)://host/path` (a server
//! taking WebDAV `PUT` and `MOVE`) wherever an output path goes (every writer, merge, skim, convert
//! to `.root`, the CLI and Python).
//!
//! A remote output is staged: written exactly as a local output is (positioned writes of reserved
//! ranges, the TFile header and directory records at the commit) into a temporary file in the
//! local temporary directory (`TMPDIR`, else `/tmp`), and uploaded atomically (see `s3_upload`,
//! `xrootd_upload` and `webdav_upload`): the object appears complete after the commit, or not at
//! all. [`create_output`] makes the staging file and hands it to `storage::local::output` as an
//! `OutputFile` holding its upload (a `StagedUpload`), so that the local output knows no URL. S3
//! and XRootD uploads stream: the bytes are sent while the file is written, as soon as its
//! contiguous written prefix covers them, and punched out of the staging file (`s3_stream`,
//! `xrootd_stream`; `RNTUPLE_UPLOAD_STREAMING=0` uploads everything at the commit instead). A
//! WebDAV output is sent whole at the commit (one `PUT` of the complete file, streamed from the
//! staging file). The staged file is removed after the upload, on failure, when the output is
//! dropped uncommitted, and by an interrupt's clean-up (`storage::local::interrupt`). Checkpoints
//! (a file that is complete every K clusters, in place) and update mode need a local file and are
//! refused for a URL.

// Without the remote and xrootd features no remote output exists: its machinery is unused.
#![cfg_attr(not(any(feature = "remote", feature = "xrootd")), allow(dead_code))]

use crate::error::{Error, Result};
use crate::storage::local::interrupt::{self, Cleanup};
use crate::storage::local::output::{OutputFile, StagedUpload};
use crate::storage::local::upload_window::UploadWindow;
use std::path::Path;
use std::sync::Arc;

/// Where a remote output goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RemoteDestination {
    /// An S3 object, `s3://bucket/key`.
    S3(String),
    /// A file on an XRootD server, `root://host//path` (or `roots://`, `xroot://`, `xroots://`).
    Xrootd(String),
    /// A file on an HTTP(S) server taking WebDAV `PUT` and `MOVE`, `http(s)://host/path`.
    Http(String),
}

impl RemoteDestination {
    /// The URL.
    pub(crate) fn url(&self) -> &str {
        match self {
            RemoteDestination::S3(u) | RemoteDestination::Xrootd(u) | RemoteDestination::Http(u) => u,
        }
    }
}

/// The remote destination `path` names, `None` for a local path; a URL of a scheme this build
/// lacks is an error naming it.
pub(crate) fn remote_destination(path: &Path) -> Result<Option<RemoteDestination>> {
    let Some(s) = path.to_str() else { return Ok(None) };
    let lower = s.get(..9).unwrap_or(s).to_ascii_lowercase();
    let is = |p: &str| lower.starts_with(p) && s.len() > p.len();
    if is("s3://") {
        if !cfg!(feature = "remote") {
            return Err(Error::Unsupported(format!("{s}: this build of rntuple writes no s3:// outputs (the `remote` feature is off)")));
        }
        return Ok(Some(RemoteDestination::S3(s.to_string())));
    }
    if ["root://", "roots://", "xroot://", "xroots://"].iter().any(|p| is(p)) {
        if !cfg!(feature = "xrootd") {
            return Err(Error::Unsupported(format!("{s}: this build of rntuple writes no root:// outputs (the `xrootd` feature is off)")));
        }
        return Ok(Some(RemoteDestination::Xrootd(s.to_string())));
    }
    if is("http://") || is("https://") {
        if !cfg!(feature = "remote") {
            return Err(Error::Unsupported(format!("{s}: this build of rntuple writes no http(s):// outputs (the `remote` feature is off)")));
        }
        return Ok(Some(RemoteDestination::Http(s.to_string())));
    }
    Ok(None)
}

/// A streaming upload.
#[derive(Debug)]
enum Stream {
    /// To S3, in parts.
    #[cfg(feature = "remote")]
    S3(super::s3_stream::S3Stream),
    /// To XRootD, in writes at offsets.
    #[cfg(feature = "xrootd")]
    Xrootd(super::xrootd_stream::XrdStream),
    /// A build without either: no stream exists.
    #[cfg(not(any(feature = "remote", feature = "xrootd")))]
    None(std::convert::Infallible),
}

impl Stream {
    /// Where the output's writes are recorded.
    fn window(&self) -> Arc<UploadWindow> {
        match self {
            #[cfg(feature = "remote")]
            Stream::S3(s) => s.window(),
            #[cfg(feature = "xrootd")]
            Stream::Xrootd(s) => s.window(),
            #[cfg(not(any(feature = "remote", feature = "xrootd")))]
            Stream::None(never) => match *never {},
        }
    }

    /// Uploads the rest and commits the upload.
    fn finish(self, file: &std::fs::File, len: u64) -> Result<()> {
        let _ = (file, len);
        match self {
            #[cfg(feature = "remote")]
            Stream::S3(s) => s.finish(file, len),
            #[cfg(feature = "xrootd")]
            Stream::Xrootd(s) => s.finish(file, len),
            #[cfg(not(any(feature = "remote", feature = "xrootd")))]
            Stream::None(never) => match never {},
        }
    }
}

/// The upload of a remote output's staging file: where it goes, and the upload that streams it
/// while it is written (if any).
#[derive(Debug)]
struct Staged {
    dest: RemoteDestination,
    stream: Option<Stream>,
}

impl StagedUpload for Staged {
    fn url(&self) -> &str {
        self.dest.url()
    }

    fn window(&self) -> Option<Arc<UploadWindow>> {
        self.stream.as_ref().map(Stream::window)
    }

    fn finish(self: Box<Self>, file: &std::fs::File, len: u64) -> Result<()> {
        let Staged { dest, stream } = *self;
        upload(file, len, &dest, stream)
    }
}

/// Creates the output `path` names, the remote destination `dest`: a staging file in the local
/// temporary directory (registered for an interrupt's clean-up), streamed to `dest` while it is
/// written where it can be, and uploaded atomically at the commit. A writer with checkpoints
/// (`checkpointed`) is refused: its file is complete in place at each checkpoint, an upload
/// happens once.
pub(crate) fn create_output(path: &Path, dest: RemoteDestination, checkpointed: bool) -> Result<OutputFile> {
    if checkpointed {
        return Err(Error::Unsupported(format!(
            "{}: a writer with checkpoints writes a local file (complete in place at each checkpoint); a remote (s3://, root://, http(s)://) output \
             is uploaded once, at the commit: write without checkpoints, or write locally",
            dest.url()
        )));
    }
    let (file, tmp) = staging_file(&dest)?;
    let registered = interrupt::register(Cleanup::File(tmp.clone()));
    let stream = start_stream(&dest, &file)?;
    Ok(OutputFile::staged(file, path, tmp, registered, Box::new(Staged { dest, stream })))
}

/// Starts streaming the staging file `file` to `dest` while it is written (unless
/// `RNTUPLE_UPLOAD_STREAMING=0`); a WebDAV output never streams (one `PUT` at the commit).
fn start_stream(dest: &RemoteDestination, file: &std::fs::File) -> Result<Option<Stream>> {
    if std::env::var("RNTUPLE_UPLOAD_STREAMING").is_ok_and(|v| v.trim() == "0") {
        return Ok(None);
    }
    let url = dest.url();
    let f = file.try_clone().map_err(|e| Error::io(format!("duplicating the handle of the staging file of {url}"), e))?;
    match dest {
        #[cfg(feature = "remote")]
        RemoteDestination::S3(url) => Ok(Some(Stream::S3(super::s3_stream::S3Stream::start(f, url)?))),
        #[cfg(feature = "xrootd")]
        RemoteDestination::Xrootd(url) => Ok(Some(Stream::Xrootd(super::xrootd_stream::XrdStream::start(f, url)?))),
        #[allow(unreachable_patterns)]
        _ => {
            drop(f);
            Ok(None)
        }
    }
}

/// Uploads `len` bytes of the staged file `file` to `dest`, atomically (the rest of a streaming
/// upload `stream`).
fn upload(file: &std::fs::File, len: u64, dest: &RemoteDestination, stream: Option<Stream>) -> Result<()> {
    if let Some(s) = stream {
        return s.finish(file, len);
    }
    match dest {
        #[cfg(feature = "remote")]
        RemoteDestination::S3(url) => super::s3_upload::upload_file(file, len, url),
        #[cfg(feature = "xrootd")]
        RemoteDestination::Xrootd(url) => super::xrootd_upload::upload_file(file, len, url),
        #[cfg(feature = "remote")]
        RemoteDestination::Http(url) => super::webdav_upload::upload_file(file, len, url),
        #[allow(unreachable_patterns)]
        other => {
            let _ = (file, len);
            Err(Error::Unsupported(format!("{}: this build of rntuple writes no such output", other.url())))
        }
    }
}

/// A temporary file in the local temporary directory for staging `dest`:
/// `rntuple-upload-NAME-PID-RANDOM`, created new.
pub(crate) fn staging_file(dest: &RemoteDestination) -> Result<(std::fs::File, std::path::PathBuf)> {
    let url = dest.url();
    let name: String = url
        .split('?')
        .next()
        .and_then(|u| u.rsplit('/').next())
        .unwrap_or("output")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .take(100)
        .collect();
    let dir = std::env::temp_dir();
    let random = std::collections::hash_map::RandomState::new();
    for attempt in 0..16u32 {
        let r = std::hash::BuildHasher::hash_one(&random, (attempt, std::time::SystemTime::now())) as u32;
        let tmp = dir.join(format!("rntuple-upload-{name}-{}-{r:08x}", std::process::id()));
        match crate::storage::local::file_io::create_new(&tmp) {
            Ok(f) => return Ok((f, tmp)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(format!("creating the local staging file {} of the output {url} (TMPDIR)", tmp.display()), e)),
        }
    }
    Err(Error::Invalid(format!("{url}: no free name for a staging file in {}", dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        assert_eq!(remote_destination(Path::new("out.root")).unwrap(), None);
        assert_eq!(remote_destination(Path::new("/data/s3://x")).unwrap(), None);
        assert_eq!(remote_destination(Path::new("S3://b/k.root")).unwrap(), Some(RemoteDestination::S3("S3://b/k.root".into())));
        assert!(matches!(remote_destination(Path::new("root://h//d/f.root")).unwrap(), Some(RemoteDestination::Xrootd(_))));
        let http = remote_destination(Path::new("https://h/f.root"));
        if cfg!(feature = "remote") {
            assert_eq!(http.unwrap(), Some(RemoteDestination::Http("https://h/f.root".into())));
            assert_eq!(remote_destination(Path::new("HTTP://h/d/f.root")).unwrap().map(|d| d.url().to_string()).as_deref(), Some("HTTP://h/d/f.root"));
        } else {
            let e = http.unwrap_err().to_string();
            assert!(e.contains("https://h/f.root") && e.contains("feature"), "{e}");
        }
    }

    #[test]
    fn staging_files_go_to_the_temporary_directory() {
        let (_f, p) = staging_file(&RemoteDestination::S3("s3://b/dir/a b.root".into())).unwrap();
        assert!(p.starts_with(std::env::temp_dir()) && p.file_name().unwrap().to_string_lossy().starts_with("rntuple-upload-a_b.root-"), "{}", p.display());
        std::fs::remove_file(p).unwrap();
    }
}
