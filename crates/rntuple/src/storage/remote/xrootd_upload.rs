//! Uploads to XRootD (`root://host//dir/name`) that are atomic: the bytes are written under a
//! temporary name beside the destination (`/dir/.name.tmp-PID-RANDOM`, on the same server, so that
//! the rename is the server's own `mv`), synced and closed, then moved over the destination (XrdCl's
//! `FileSystem::Mv`); on any failure, and on an interrupt's clean-up, the temporary file is removed
//! (`rm`). A process killed outright leaves the temporary file, never a partial destination.

use super::credentials;
use crate::storage::local::interrupt::{self, Cleanup, Pending};
use super::remote_options::RemoteOptions;
use super::xrootd::patience;
use crate::error::{Error, Result};
use rntuple_xrootd::write::{mv, rm, NewFile};
use rntuple_xrootd::{Patience, XrdError};
use std::os::unix::fs::FileExt;

/// Bytes read from the staged file and written in one request.
const CHUNK: usize = 8 << 20;

fn xrd_error(url: &str, what: &str, e: &XrdError) -> Error {
    let detail = if e.is_not_authorized() { format!("{e} (tried {})", credentials::tried()) } else { e.to_string() };
    Error::io(format!("{what} {url}"), std::io::Error::other(detail))
}

/// The temporary URL beside `url`: the same server and directory, the name `.NAME.tmp-PID-RANDOM`
/// (any `?` parameters dropped).
pub(crate) fn temporary_url(url: &str) -> Result<String> {
    let bare = url.split_once('?').map_or(url, |(u, _)| u);
    let (dir, name) = bare.rsplit_once('/').filter(|(_, n)| !n.is_empty()).ok_or_else(|| Error::Invalid(format!("{url}: the output does not name a file")))?;
    let after_host = dir.split_once("://").map(|(_, r)| r).unwrap_or("");
    if !after_host.contains('/') {
        return Err(Error::Invalid(format!("{url}: expected root://host//path/name")));
    }
    let random = std::collections::hash_map::RandomState::new();
    let r = std::hash::BuildHasher::hash_one(&random, std::time::SystemTime::now()) as u32;
    Ok(format!("{dir}/.{name}.tmp-{}-{r:08x}", std::process::id()))
}

/// Removes `tmp`, best effort, within 10 s (also on an interrupt, which waits for it).
fn remove(tmp: &str, p: Patience) {
    let _ = rm(tmp, Patience { connect_s: p.connect_s.min(5), idle_s: p.idle_s.min(5), retries: 0 });
}

/// An upload in progress: the temporary file beside the destination, being written. Dropped
/// unfinished, it removes the temporary file.
pub(crate) struct XrdUpload {
    out: Option<NewFile>,
    tmp: String,
    url: String,
    patience: Patience,
    /// Its registration for an interrupt's clean-up (removing the temporary file).
    pending: Option<Pending>,
}

impl XrdUpload {
    /// Creates the temporary file beside `url`.
    pub(crate) fn start(url: &str) -> Result<XrdUpload> {
        let p = patience(&RemoteOptions::current()?);
        let tmp = temporary_url(url)?;
        let out = NewFile::create(&tmp, p).map_err(|e| xrd_error(&tmp, &format!("uploading {url}: creating the temporary file"), &e))?;
        let pending = {
            let (tmp, p) = (tmp.clone(), p);
            interrupt::register(Cleanup::Remote(Box::new(move || remove(&tmp, p))))
        };
        Ok(XrdUpload { out: Some(out), tmp, url: url.to_string(), patience: p, pending: Some(pending) })
    }

    /// Writes the bytes `start..end` of the local file `file` at the same offsets.
    pub(crate) fn write_from(&mut self, file: &std::fs::File, start: u64, end: u64) -> Result<()> {
        let out = self.out.as_mut().ok_or_else(|| Error::internal("a write to a finished XRootD upload"))?;
        let mut buf = vec![0u8; CHUNK.min(end.saturating_sub(start) as usize)];
        let mut at = start;
        while at < end {
            if interrupt::interrupted() {
                return Err(Error::Invalid(format!("{}: the upload was cancelled (the process is interrupted)", self.url)));
            }
            let n = (end - at).min(CHUNK as u64) as usize;
            file.read_exact_at(&mut buf[..n], at).map_err(|e| Error::io(format!("reading the staged output of {}", self.url), e))?;
            out.write_at(at, &buf[..n]).map_err(|e| xrd_error(&self.tmp, &format!("writing bytes {at}..{} of", at + n as u64), &e))?;
            at += n as u64;
        }
        Ok(())
    }

    /// Closes (syncs) the temporary file and moves it over the destination.
    pub(crate) fn finish(mut self) -> Result<()> {
        let out = self.out.take().ok_or_else(|| Error::internal("an XRootD upload finished twice"))?;
        out.close().map_err(|e| xrd_error(&self.tmp, "closing (syncing)", &e).context(format!("uploading {}", self.url)))?;
        let pending = self.pending.take().ok_or_else(|| Error::internal("an XRootD upload finished twice"))?;
        if pending.release_for_commit().is_err() {
            return Err(Error::Invalid(format!("{}: the upload was cancelled (the process is interrupted)", self.url)));
        }
        mv(&self.tmp, &self.url, self.patience).map_err(|e| xrd_error(&self.url, &format!("moving the uploaded temporary file {} over", self.tmp), &e))?;
        // Moved: nothing to remove any more.
        self.tmp.clear();
        Ok(())
    }
}

impl Drop for XrdUpload {
    /// Unfinished (an error, a drop) or failed to move: the temporary file is removed.
    fn drop(&mut self) {
        drop(self.out.take());
        if !self.tmp.is_empty() {
            remove(&self.tmp, self.patience);
        }
        self.pending = None;
    }
}

/// Uploads `len` bytes of the local file `file` to `url` atomically (see the module).
pub(crate) fn upload_file(file: &std::fs::File, len: u64, url: &str) -> Result<()> {
    let mut up = XrdUpload::start(url)?;
    up.write_from(file, 0, len).map_err(|e| e.context(format!("uploading {url}")))?;
    up.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_file_is_beside_the_destination() {
        let t = temporary_url("root://h:1094//data/skims/out.root?x=1").unwrap();
        assert!(t.starts_with("root://h:1094//data/skims/.out.root.tmp-"), "{t}");
        assert!(temporary_url("root://h//").is_err() && temporary_url("root://h").is_err());
    }
}
