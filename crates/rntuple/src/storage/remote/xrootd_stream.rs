//! An XRootD output uploaded while it is being written, as an S3 one is (`storage::remote::s3_stream`):
//! once the staged file's contiguous written prefix passes [`STEP`] bytes beyond what was sent,
//! the bytes from 8 MiB on are written into the temporary file beside the destination (created
//! with the first of them, `storage::remote::xrootd_upload`) and punched out of the staging file. At the
//! commit the rest and the first 8 MiB (the TFile header and first records, rewritten at the
//! commit) are written, the file closed (synced) and moved over the destination. An output below
//! 16 MiB is uploaded whole at the commit.

use crate::storage::local::interrupt;
use crate::storage::local::upload_window::{punch_hole, UploadWindow};
use super::xrootd_upload::{upload_file, XrdUpload};
use crate::error::{Error, Result};
use std::fs::File;
use std::sync::Arc;
use std::thread::JoinHandle;

/// The first bytes, written at the commit; and the step of the writes while streaming.
pub(crate) const STEP: u64 = 8 << 20;

/// What the streaming thread did: the upload (when it started one) and the next offset to send.
struct Streamed {
    upload: Option<XrdUpload>,
    next: u64,
}

/// The streaming upload of one staged output to `root://host//path`.
pub(crate) struct XrdStream {
    url: String,
    window: Arc<UploadWindow>,
    thread: Option<JoinHandle<Result<Streamed>>>,
}

impl std::fmt::Debug for XrdStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XrdStream({})", self.url)
    }
}

/// The streaming thread: sends whole steps of the prefix beyond the first, until writing ends.
fn stream(file: File, url: String, window: Arc<UploadWindow>) -> Result<Streamed> {
    let mut out = Streamed { upload: None, next: STEP };
    while let Some(prefix) = window.wait_for(out.next + STEP) {
        if interrupt::interrupted() {
            break;
        }
        let end = prefix / STEP * STEP;
        window.claim(end);
        if out.upload.is_none() {
            out.upload = Some(XrdUpload::start(&url)?);
        }
        let up = out.upload.as_mut().ok_or_else(|| Error::internal("no XRootD upload"))?;
        up.write_from(&file, out.next, end)?;
        punch_hole(&file, out.next, end);
        out.next = end;
    }
    Ok(out)
}

impl XrdStream {
    /// Starts streaming the staging file `file` (a handle of its own) to `url`.
    pub(crate) fn start(file: File, url: &str) -> Result<XrdStream> {
        let window = Arc::new(UploadWindow::new(STEP));
        let (w, u) = (window.clone(), url.to_string());
        let thread = std::thread::Builder::new()
            .name("rntuple-xrd-stream".into())
            .spawn(move || stream(file, u, w))
            .map_err(|e| Error::io(format!("starting the upload thread of {url}"), e))?;
        Ok(XrdStream { url: url.to_string(), window, thread: Some(thread) })
    }

    /// The window the output's writes are recorded in.
    pub(crate) fn window(&self) -> Arc<UploadWindow> {
        self.window.clone()
    }

    fn stop(&mut self) -> Result<Option<Streamed>> {
        self.window.close();
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| Error::internal(format!("the upload thread of {} panicked", self.url)))?.map(Some),
            None => Ok(None),
        }
    }

    /// At the commit (the file complete, `len` bytes): writes the rest and the first bytes, then
    /// closes and moves the temporary file over the destination. Without streamed bytes the file
    /// is uploaded whole (`storage::remote::xrootd_upload::upload_file`).
    pub(crate) fn finish(mut self, file: &File, len: u64) -> Result<()> {
        let streamed = self.stop()?;
        if let Some(why) = self.window.rewritten() {
            return Err(Error::internal(format!("{}: not uploaded: {why}", self.url)));
        }
        let Some(Streamed { upload: Some(mut up), next }) = streamed else { return upload_file(file, len, &self.url) };
        up.write_from(file, next, len)?;
        up.write_from(file, 0, STEP.min(len))?;
        up.finish()
    }
}

impl Drop for XrdStream {
    /// An output dropped uncommitted: the thread ends; its upload's temporary file is removed.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
