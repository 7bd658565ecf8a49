//! Remote byte sources: HTTP(S) servers answering range requests, and S3-compatible object
//! stores, through arrow-rs's `object_store` (retries, timeouts, credentials from the
//! environment). Several requests are kept in flight by [`ReadAt::read_ranges`]; the first and
//! last bytes of the file (ROOT's header, and usually the RNTuple's anchor, footer and page
//! lists) are read once when the file is opened, so that opening takes few round trips.

#[cfg(test)]
use super::location::is_url;
use super::source::{RangeSink, ReadAt, SourceCounters};
use crate::error::{Error, Result};
use futures::StreamExt;
use object_store::path::Path as StorePath;
use object_store::{ClientOptions, ObjectStore, RetryConfig};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// Bytes read at the start of a remote file when it is opened (the TFile header, the RNTuple
/// header envelope of small files).
const HEAD_BYTES: u64 = 64 << 10;
/// Bytes read at the end of a remote file when it is opened (keys list, anchor, footer, page
/// lists, streamer info of files written by ROOT and by this project).
const TAIL_BYTES: u64 = 256 << 10;
/// Requests in flight at once.
const IN_FLIGHT: usize = 16;
/// A request fails when it has not completed within this time plus one second per MiB asked
/// for (at least 1 MiB/s): a stalled server fails the read in seconds, a slow link with large
/// requests still gets the time it needs.
const REQUEST_BASE_TIMEOUT: Duration = Duration::from_secs(15);

fn request_timeout(bytes: u64) -> Duration {
    REQUEST_BASE_TIMEOUT + Duration::from_secs(bytes >> 20)
}

/// A file on an HTTP(S) server or in an S3-compatible object store.
///
/// S3 takes its credentials, region and endpoint from the usual environment variables
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_DEFAULT_REGION` or
/// `AWS_REGION`, `AWS_ENDPOINT_URL` for a server other than AWS; an `http://` endpoint is
/// allowed). Requests that fail are retried twice with back-off; a request must complete within
/// 15 s plus 1 s per MiB.
pub struct RemoteSource {
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    url: String,
    len: u64,
    head: Vec<u8>,
    tail: Vec<u8>,
    counters: SourceCounters,
    runtime: tokio::runtime::Runtime,
}

fn remote_error(url: &str, what: String, e: impl std::fmt::Display) -> Error {
    Error::io(format!("{what} of {url}"), std::io::Error::other(e.to_string()))
}

impl RemoteSource {
    /// Opens `url` (`http://`, `https://` or `s3://bucket/key`): learns its size and reads its
    /// first and last bytes.
    pub fn open(url: &str) -> Result<Self> {
        let (store, path) = store_for(url)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rntuple-remote")
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the HTTP client's runtime", e))?;
        let meta = runtime
            .block_on(async { tokio::time::timeout(request_timeout(0), store.head(&path)).await })
            .map_err(|_| remote_error(url, "asking for the size".into(), format!("no answer within {:?}", request_timeout(0))))?
            .map_err(|e| remote_error(url, "asking for the size".into(), e))?;
        let len = meta.size;
        let mut src = RemoteSource { store, path, url: url.to_string(), len, head: Vec::new(), tail: Vec::new(), counters: SourceCounters::default(), runtime };
        src.counters.add(0);
        let head = 0..len.min(HEAD_BYTES);
        let tail = len.saturating_sub(TAIL_BYTES).max(head.end)..len;
        let mut parts = vec![Vec::new(), Vec::new()];
        src.read_ranges(&[head, tail], &mut |i, v| {
            parts[i] = v;
            Ok(())
        })?;
        src.tail = parts.pop().unwrap_or_default();
        src.head = parts.pop().unwrap_or_default();
        Ok(src)
    }

    /// The bytes `[offset, offset + len)` when the head or tail read at opening holds them.
    fn cached(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end <= self.head.len() as u64 {
            return self.head.get(offset as usize..end as usize);
        }
        let tail_start = self.len - self.tail.len() as u64;
        if offset >= tail_start && end <= self.len {
            return self.tail.get((offset - tail_start) as usize..(end - tail_start) as usize);
        }
        None
    }
}

/// The object store and the object's path for a URL.
fn store_for(url: &str) -> Result<(Arc<dyn ObjectStore>, StorePath)> {
    let bad = |why: &str| Error::Invalid(format!("{url}: {why}"));
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not a URL"))?;
    let (authority, key) = rest.split_once('/').ok_or_else(|| bad("no path after the host"))?;
    if authority.is_empty() || key.is_empty() {
        return Err(bad("expected scheme://host/path"));
    }
    let path = StorePath::from_url_path(key).map_err(|e| bad(&e.to_string()))?;
    let retry = RetryConfig { max_retries: 2, retry_timeout: Duration::from_secs(20), ..RetryConfig::default() };
    // The total time of a request is bounded per request by its size (`request_timeout`).
    let client = ClientOptions::new().with_timeout(Duration::from_secs(3600)).with_connect_timeout(Duration::from_secs(10));
    let store: Arc<dyn ObjectStore> = match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" => {
            let client = if scheme.eq_ignore_ascii_case("http") { client.with_allow_http(true) } else { client };
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(format!("{scheme}://{authority}"))
                    .with_client_options(client)
                    .with_retry(retry)
                    .build()
                    .map_err(|e| bad(&e.to_string()))?,
            )
        }
        "s3" => {
            let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(authority).with_retry(retry);
            let endpoint = std::env::var("AWS_ENDPOINT_URL").or_else(|_| std::env::var("AWS_ENDPOINT")).ok();
            let mut client = client;
            if let Some(ep) = endpoint {
                if ep.starts_with("http://") {
                    client = client.with_allow_http(true);
                }
                b = b.with_endpoint(ep);
            }
            if std::env::var("AWS_REGION").is_ok() || std::env::var("AWS_DEFAULT_REGION").is_ok() {
                let region = std::env::var("AWS_REGION").or_else(|_| std::env::var("AWS_DEFAULT_REGION")).unwrap_or_default();
                b = b.with_region(region);
            }
            Arc::new(b.with_client_options(client).build().map_err(|e| bad(&e.to_string()))?)
        }
        other => return Err(bad(&format!("unsupported scheme '{other}' (http, https and s3 are read)"))),
    };
    Ok((store, path))
}

impl ReadAt for RemoteSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn view(&self, offset: u64, len: u64) -> Option<&[u8]> {
        self.cached(offset, len)
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        if let Some(b) = self.cached(offset, buf.len() as u64) {
            buf.copy_from_slice(b);
            return Ok(());
        }
        let r = offset..offset + buf.len() as u64;
        self.read_ranges(std::slice::from_ref(&r), &mut |_, v| {
            buf.copy_from_slice(&v);
            Ok(())
        })
    }

    fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> Result<()> {
        for r in ranges {
            if r.end < r.start || r.end > self.len {
                return Err(Error::corrupt(format!("range {}..{} outside {} ({} bytes)", r.start, r.end, self.url, self.len), r.start));
            }
        }
        for (i, _) in ranges.iter().enumerate().filter(|(_, r)| r.is_empty()) {
            sink(i, Vec::new())?;
        }
        self.runtime.block_on(async {
            let requests = ranges.iter().enumerate().filter(|(_, r)| !r.is_empty()).map(|(i, r)| {
                let (store, path) = (self.store.clone(), self.path.clone());
                let r = r.clone();
                let limit = request_timeout(r.end - r.start);
                async move {
                    let reply = match tokio::time::timeout(limit, store.get_range(&path, r)).await {
                        Ok(reply) => reply.map_err(|e| e.to_string()),
                        Err(_) => Err(format!("no complete answer within {limit:?}")),
                    };
                    (i, reply)
                }
            });
            let mut replies = futures::stream::iter(requests).buffer_unordered(IN_FLIGHT);
            while let Some((i, reply)) = replies.next().await {
                let r = &ranges[i];
                let what = || format!("reading bytes {}..{}", r.start, r.end);
                let bytes = reply.map_err(|e| remote_error(&self.url, what(), e))?;
                self.counters.add(bytes.len() as u64);
                if bytes.len() as u64 != r.end - r.start {
                    return Err(remote_error(&self.url, what(), format!("the server returned {} bytes", bytes.len())));
                }
                sink(i, Vec::from(bytes))?;
            }
            Ok(())
        })
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths_and_bad_ones_refused_with_the_url() {
        assert!(is_url("https://host/f.root") && is_url("HTTP://h/f") && is_url("s3://bucket/key"));
        assert!(!is_url("/data/f.root") && !is_url("http://") && !is_url("file.root"));
        for (url, why) in [("http://host", "no path"), ("s3:///key", "expected scheme://host/path"), ("ftp://h/f", "unsupported scheme 'ftp'")] {
            let e = store_for(url).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(url) && e.contains(why), "{e}");
        }
    }
}
