//! Uploads to S3 that are atomic: the object appears complete at the end, or not at all.
//!
//! An output up to one part's size goes up as one `PutObject` (S3 stores it whole or not). A larger
//! one is a multipart upload: parts of [`part_size`] (8 MiB, more for a file above 80 GB: S3 takes
//! at most 10,000 parts), [`IN_FLIGHT`] at once, with explicit part numbers (a writer that streams
//! may send them in any order), and `CompleteMultipartUpload` only at the commit. An upload that
//! fails, is dropped, or is cancelled by an interrupt (`storage::local::interrupt`) is aborted
//! (`AbortMultipartUpload`): S3 then discards its parts. A process killed outright (SIGKILL) leaves
//! an unfinished multipart upload behind, which is no object (a `GET` or `LIST` of the key does not
//! see it) and which a bucket's lifecycle rule (`AbortIncompleteMultipartUpload`) removes.
//!
//! Keys, region and endpoint come from the usual variables, as for reading
//! (`storage::remote::source::RemoteSource`); an error names the URL, the request (and part number) and
//! which credential was tried, never a secret.

use super::http_credentials::HttpCredentials;
use crate::storage::local::interrupt::{self, Cleanup, Pending};
use super::source::s3_store_for;
use super::remote_options::RemoteOptions;
use crate::error::{Error, Result};
use futures::StreamExt;
use object_store::aws::AmazonS3;
use object_store::multipart::{MultipartStore, PartId};
use object_store::path::Path as StorePath;
use object_store::{MultipartId, ObjectStore, PutPayload};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

/// Parts uploaded at once (boto3's `upload_file` keeps 10 in flight; 8 parts of 8 MiB bound the
/// memory of an upload to 64 MiB).
pub(crate) const IN_FLIGHT: usize = 8;
/// The smallest part this writer sends (S3's minimum is 5 MiB for every part but the last).
pub(crate) const MIN_PART: u64 = 8 << 20;
/// S3's most parts in one upload.
const MAX_PARTS: u64 = 10_000;
/// How long an abort may take (on an error, a drop or an interrupt).
const ABORT_WAIT: Duration = Duration::from_secs(5);

/// The part size for an object of `len` bytes: [`MIN_PART`], or more (whole MiB) so that it takes
/// at most 10,000 parts.
pub(crate) fn part_size(len: u64) -> u64 {
    len.div_ceil(MAX_PARTS).next_multiple_of(1 << 20).max(MIN_PART)
}

/// A multipart upload in progress to `s3://bucket/key`.
pub(crate) struct S3Upload {
    store: Arc<AmazonS3>,
    path: StorePath,
    url: String,
    credentials: Arc<HttpCredentials>,
    options: RemoteOptions,
    runtime: tokio::runtime::Runtime,
    /// The upload's id, until it is completed or aborted.
    id: Option<MultipartId>,
    /// Each uploaded part's id, by index (part number - 1).
    parts: Vec<Option<PartId>>,
    /// Its registration for an interrupt's clean-up (an abort).
    pending: Option<Pending>,
}

/// A failed request's error: the URL, the request, and what the server said; a refusal as one
/// line naming the status and the credential tried (`HttpCredentials::explain`), any other error
/// with the credential tried appended.
fn s3_error(url: &str, what: &str, e: &object_store::Error, credentials: &HttpCredentials) -> Error {
    let msg = match credentials.explain(e) {
        Some(msg) => msg,
        None => format!("{} (tried {})", condensed(&e.to_string()), credentials.tried),
    };
    Error::io(format!("{what} of {url}"), std::io::Error::other(msg))
}

/// An error's text without the S3 error page it quotes, its `<Code>` kept ("NoSuchBucket").
fn condensed(text: &str) -> String {
    let Some(at) = text.find("<?xml").or_else(|| text.find("<Error>")) else { return text.to_string() };
    let code = text[at..]
        .split_once("<Code>")
        .and_then(|(_, r)| r.split_once("</Code>"))
        .map(|(c, _)| c.trim())
        .filter(|c| !c.is_empty() && c.len() < 64 && c.chars().all(|ch| ch.is_ascii_alphanumeric()));
    let head = text[..at].trim_end().trim_end_matches(':');
    match code {
        Some(c) => format!("{head}: S3 error {c}"),
        None => head.to_string(),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("rntuple-upload")
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting the S3 client's runtime", e))
}

/// Runs `f` within `limit`, the error naming `what`.
async fn bounded<T>(url: &str, what: &str, limit: Duration, f: impl std::future::Future<Output = object_store::Result<T>>, c: &HttpCredentials) -> Result<T> {
    match tokio::time::timeout(limit, f).await {
        Ok(r) => r.map_err(|e| s3_error(url, what, &e, c)),
        Err(_) => Err(Error::io(format!("{what} of {url}"), std::io::Error::other(format!("no complete answer within {limit:?}")))),
    }
}

impl S3Upload {
    /// Starts a multipart upload to `url` (`CreateMultipartUpload`), registered for an interrupt's
    /// clean-up.
    pub(crate) fn start(url: &str) -> Result<S3Upload> {
        let options = RemoteOptions::current()?;
        let (store, path, credentials) = s3_store_for(url, &options)?;
        let runtime = runtime()?;
        let what = "starting the multipart upload (CreateMultipartUpload)";
        let id = runtime.block_on(bounded(url, what, options.request_deadline(0), store.create_multipart(&path), &credentials))?;
        let (s, p, i) = (store.clone(), path.clone(), id.clone());
        let pending = interrupt::register(Cleanup::Remote(Box::new(move || abort_now(&s, &p, &i))));
        Ok(S3Upload { store, path, url: url.to_string(), credentials, options, runtime, id: Some(id), parts: Vec::new(), pending: Some(pending) })
    }

    /// Uploads parts `(index, bytes)` (index 0 is part number 1), [`IN_FLIGHT`] at once; every part
    /// but the one of the highest index must be at least 5 MiB. A part sent again replaces it.
    pub(crate) fn put_parts(&mut self, parts: impl Iterator<Item = Result<(usize, Vec<u8>)>>) -> Result<()> {
        let id = self.id.clone().ok_or_else(|| Error::internal("a part sent to a finished S3 upload"))?;
        let (store, path, url, creds, options) = (&self.store, &self.path, self.url.as_str(), &self.credentials, &self.options);
        let done: Vec<(usize, PartId)> = self.runtime.block_on(async {
            let requests = parts.map(|p| {
                let id = &id;
                async move {
                    let (i, bytes) = p?;
                    if interrupt::interrupted() {
                        return Err(Error::Invalid(format!("{url}: the upload was cancelled (the process is interrupted)")));
                    }
                    let what = format!("uploading part {} ({} bytes, UploadPart)", i + 1, bytes.len());
                    let limit = options.request_deadline(bytes.len() as u64);
                    let part = bounded(url, &what, limit, store.put_part(path, id, i, PutPayload::from(bytes)), creds).await?;
                    Ok((i, part))
                }
            });
            let mut replies = futures::stream::iter(requests).buffer_unordered(IN_FLIGHT);
            let mut done = Vec::new();
            while let Some(r) = replies.next().await {
                done.push(r?);
            }
            Ok::<_, Error>(done)
        })?;
        for (i, part) in done {
            if self.parts.len() <= i {
                self.parts.resize(i + 1, None);
            }
            self.parts[i] = Some(part);
        }
        Ok(())
    }

    /// Completes the upload (`CompleteMultipartUpload`): the object appears. Every part from 1 to
    /// the highest sent must have been uploaded. Refused after an interrupt's clean-up.
    pub(crate) fn complete(mut self) -> Result<()> {
        let parts = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| p.clone().ok_or_else(|| Error::internal(format!("{}: part {} of the upload was never sent", self.url, i + 1))))
            .collect::<Result<Vec<_>>>()?;
        let pending = self.pending.take().ok_or_else(|| Error::internal("an S3 upload completed twice"))?;
        if pending.release_for_commit().is_err() {
            // The interrupt's clean-up aborted it already.
            self.id = None;
            return Err(Error::Invalid(format!("{}: the upload was cancelled (the process is interrupted)", self.url)));
        }
        let id = self.id.clone().ok_or_else(|| Error::internal("an S3 upload completed twice"))?;
        let what = format!("completing the multipart upload of {} parts (CompleteMultipartUpload)", parts.len());
        let limit = self.options.request_deadline(0);
        let r = self.runtime.block_on(bounded(&self.url, &what, limit, self.store.complete_multipart(&self.path, &id, parts), &self.credentials));
        // On failure the drop aborts the upload.
        r.map(|_| self.id = None)
    }

    /// Aborts the upload (`AbortMultipartUpload`), best effort, within a few seconds.
    fn abort(&mut self) {
        if let Some(id) = self.id.take() {
            let (store, path) = (&self.store, &self.path);
            let _ = self.runtime.block_on(async { tokio::time::timeout(ABORT_WAIT, store.abort_multipart(path, &id)).await });
        }
        self.pending = None;
    }
}

impl Drop for S3Upload {
    /// An upload dropped before its completion (an error, a panic) is aborted.
    fn drop(&mut self) {
        self.abort();
    }
}

/// Aborts the upload `id` from any thread, on a runtime of its own (an interrupt's clean-up).
fn abort_now(store: &AmazonS3, path: &StorePath, id: &MultipartId) {
    if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
        let _ = rt.block_on(async { tokio::time::timeout(ABORT_WAIT, store.abort_multipart(path, id)).await });
    }
}

/// Uploads `len` bytes of the local file `file` to `url` (`s3://bucket/key`) atomically: one
/// `PutObject` up to one part's size, else a multipart upload completed after its last part (and
/// aborted on any error).
pub(crate) fn upload_file(file: &std::fs::File, len: u64, url: &str) -> Result<()> {
    let size = part_size(len);
    if len <= size {
        let options = RemoteOptions::current()?;
        let (store, path, credentials) = s3_store_for(url, &options)?;
        let mut bytes = vec![0u8; len as usize];
        file.read_exact_at(&mut bytes, 0).map_err(|e| Error::io(format!("reading the staged output of {url}"), e))?;
        if interrupt::interrupted() {
            return Err(Error::Invalid(format!("{url}: the upload was cancelled (the process is interrupted)")));
        }
        let what = format!("uploading {len} bytes (PutObject)");
        return runtime()?.block_on(bounded(url, &what, options.request_deadline(len), store.put(&path, PutPayload::from(bytes)), &credentials)).map(|_| ());
    }
    let mut up = S3Upload::start(url)?;
    let n = len.div_ceil(size);
    let parts = (0..n).map(|i| {
        let start = i * size;
        let mut bytes = vec![0u8; (len - start).min(size) as usize];
        file.read_exact_at(&mut bytes, start).map_err(|e| Error::io(format!("reading part {} of the staged output of {url}", i + 1), e))?;
        Ok((i as usize, bytes))
    });
    up.put_parts(parts)?;
    up.complete()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_pages_are_cut_to_their_code() {
        let t = "Error performing POST http://h/b/k?uploads= - 404 Not Found: <?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><RequestId>x</RequestId></Error>";
        assert_eq!(condensed(t), "Error performing POST http://h/b/k?uploads= - 404 Not Found: S3 error NoSuchBucket");
        assert_eq!(condensed("timeout"), "timeout");
    }

    #[test]
    fn parts_are_8_mib_or_enough_for_10000() {
        assert_eq!(part_size(0), MIN_PART);
        assert_eq!(part_size(1 << 30), MIN_PART);
        let big = 200u64 << 30;
        assert!(part_size(big) * MAX_PARTS >= big && part_size(big).is_multiple_of(1 << 20));
    }
}
