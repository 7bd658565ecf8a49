//! An S3 output uploaded while it is being written: parts leave as soon as the staged file's
//! contiguous written prefix covers them, so that the commit waits only for the tail, and the
//! staging file holds only what is not uploaded yet.
//!
//! A thread of the output waits on its [`UploadWindow`]: once the prefix passes the end of part
//! `k + 1` (parts of [`MIN_PART`], part 1 being bytes `0..8 MiB`), parts 2.. up to it are read from
//! the staging file, `s3_upload::IN_FLIGHT` at once (each read as a slot frees), uploaded with their part
//! numbers (the multipart upload is created with the first of them), and their bytes punched out
//! of the staging file (`fallocate(PUNCH_HOLE)`), which stays sparse. Part 1, the TFile header and the first records
//! that the commit rewrites, and the parts after the last one streamed are uploaded at the commit
//! ([`S3Stream::finish`]), then the upload is completed: the object appears complete or not at
//! all, as with the staged upload of `storage::remote::s3_upload`. Disk (or tmpfs memory) use is thus
//! bounded by part 1, the parts in flight and the out-of-order tail: a few clusters.
//!
//! An output smaller than two parts streams nothing and is uploaded whole at the commit. A failed
//! part stops the streaming and fails the commit (the upload is aborted); a write into bytes
//! already uploaded fails the commit too (writers only append beyond part 1, so this is a guard).

use crate::storage::local::interrupt;
use super::s3_upload::{upload_file, S3Upload, MIN_PART};
use crate::storage::local::upload_window::{punch_hole, UploadWindow};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::thread::JoinHandle;

/// Parts streamed at most (the rest, if any, goes at the commit in larger parts): S3 takes 10,000.
const MAX_STREAMED_PARTS: usize = 9_000;
/// S3's most parts in one upload.
const MAX_PARTS: u64 = 10_000;

/// What the streaming thread did: the upload (when it started one) and the next part index.
struct Streamed {
    upload: Option<S3Upload>,
    next: usize,
}

/// The streaming upload of one staged output to `s3://bucket/key`.
pub(crate) struct S3Stream {
    url: String,
    window: Arc<UploadWindow>,
    thread: Option<JoinHandle<Result<Streamed>>>,
}

/// Reads part `index` (`size` bytes from `index * size`, fewer at `len`) of the staging file.
fn read_part(file: &File, url: &str, index: usize, start: u64, size: u64, len: u64) -> Result<(usize, Vec<u8>)> {
    let n = len.saturating_sub(start).min(size);
    let mut bytes = vec![0u8; n as usize];
    file.read_exact_at(&mut bytes, start).map_err(|e| Error::io(format!("reading part {} of the staged output of {url}", index + 1), e))?;
    Ok((index, bytes))
}

/// The streaming thread: uploads parts 2.. as the prefix covers them, until writing ends.
fn stream(file: File, url: String, window: Arc<UploadWindow>) -> Result<Streamed> {
    let mut out = Streamed { upload: None, next: 1 };
    while out.next < MAX_STREAMED_PARTS {
        // Part `next` is complete when the prefix reaches its end.
        let Some(prefix) = window.wait_for((out.next as u64 + 1) * MIN_PART) else { break };
        if interrupt::interrupted() {
            break;
        }
        let last = ((prefix / MIN_PART) as usize).min(MAX_STREAMED_PARTS);
        // Every part the prefix covers, `s3_upload::IN_FLIGHT` at once, each read when a slot frees (a
        // sliding window, not batches that wait for their slowest part).
        let batch = out.next..last;
        let end = batch.end as u64 * MIN_PART;
        window.claim(end);
        if out.upload.is_none() {
            out.upload = Some(S3Upload::start(&url)?);
        }
        let up = out.upload.as_mut().ok_or_else(|| Error::internal("no S3 upload"))?;
        let parts = batch.clone().map(|i| read_part(&file, &url, i, i as u64 * MIN_PART, MIN_PART, end));
        up.put_parts(parts)?;
        punch_hole(&file, out.next as u64 * MIN_PART, end);
        out.next = batch.end;
    }
    Ok(out)
}

impl std::fmt::Debug for S3Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S3Stream({})", self.url)
    }
}

impl S3Stream {
    /// Starts streaming the staging file `file` (a handle of its own) to `url`.
    pub(crate) fn start(file: File, url: &str) -> Result<S3Stream> {
        let window = Arc::new(UploadWindow::new(MIN_PART));
        let (w, u) = (window.clone(), url.to_string());
        let thread = std::thread::Builder::new()
            .name("rntuple-s3-stream".into())
            .spawn(move || stream(file, u, w))
            .map_err(|e| Error::io(format!("starting the upload thread of {url}"), e))?;
        Ok(S3Stream { url: url.to_string(), window, thread: Some(thread) })
    }

    /// The window the output's writes are recorded in.
    pub(crate) fn window(&self) -> Arc<UploadWindow> {
        self.window.clone()
    }

    /// Ends the streaming and joins its thread.
    fn stop(&mut self) -> Result<Option<Streamed>> {
        self.window.close();
        match self.thread.take() {
            Some(t) => t.join().map_err(|_| Error::internal(format!("the upload thread of {} panicked", self.url)))?.map(Some),
            None => Ok(None),
        }
    }

    /// At the commit: the file is complete (`len` bytes); uploads what was not streamed (the parts
    /// after the last streamed, then part 1) and completes the upload. Without streamed parts the
    /// file is uploaded whole (`storage::remote::s3_upload::upload_file`).
    pub(crate) fn finish(mut self, file: &File, len: u64) -> Result<()> {
        let streamed = self.stop()?;
        if let Some(why) = self.window.rewritten() {
            return Err(Error::internal(format!("{}: not uploaded: {why}", self.url)));
        }
        let Some(Streamed { upload: Some(mut up), next }) = streamed else { return upload_file(file, len, &self.url) };
        let from = next as u64 * MIN_PART;
        // The rest in parts of at least MIN_PART, at most the parts S3 has left.
        let left = MAX_PARTS - next as u64;
        let size = len.saturating_sub(from).div_ceil(left).next_multiple_of(1 << 20).max(MIN_PART);
        let count = len.saturating_sub(from).div_ceil(size) as usize;
        let url = self.url.clone();
        let rest = (0..count).map(move |k| (next + k, from + k as u64 * size));
        let parts =
            rest.map(|(i, start)| read_part(file, &url, i, start, size, len)).chain(std::iter::once_with(|| read_part(file, &url, 0, 0, MIN_PART, len)));
        up.put_parts(parts)?;
        up.complete()
    }
}

impl Drop for S3Stream {
    /// An output dropped uncommitted: the thread ends, and its upload is aborted with it.
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
