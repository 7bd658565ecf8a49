//! Remote byte sources: HTTP(S) servers answering range requests, and S3-compatible object
//! stores, through arrow-rs's `object_store` (retries, credentials from the environment), every
//! answer checked by `storage::remote::http_checks` (range, length, encoding, idle timeout). Several
//! requests are kept in flight by [`ReadAt::read_ranges`]; the first and last bytes of the file
//! (ROOT's header, and usually the RNTuple's anchor, footer and page lists) are read once when
//! the file is opened, so that opening takes few round trips.

use super::edges::Edges;
use super::http_checks::CheckedConnector;
use super::http_credentials::HttpCredentials;
#[cfg(test)]
use crate::storage::location::is_url;
use super::remote_options::RemoteOptions;
use crate::storage::local::source::{RangeSink, ReadAt, SourceCounters};
use crate::error::{Error, Result};
use futures::StreamExt;
use object_store::path::Path as StorePath;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

/// Requests in flight at once.
const IN_FLIGHT: usize = 16;

/// A file on an HTTP(S) server or in an S3-compatible object store.
///
/// S3 takes its credentials, region and endpoint from the usual environment variables
/// (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION` or
/// `AWS_DEFAULT_REGION`, `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL` for a server other than
/// AWS; an `http://` endpoint is allowed). `https://` presents the grid's credentials: the WLCG
/// bearer token and the X.509 proxy, trusting the CA directory too (`storage::remote::credentials`,
/// `storage::remote::http_credentials`); a 401 or 403 is an error naming the URL, the status and the
/// credential tried. Timeouts and retries are [`RemoteOptions::current`]: a request must
/// complete within [`RemoteOptions::request_deadline`], retries included.
pub struct RemoteSource {
    store: Arc<dyn ObjectStore>,
    path: StorePath,
    url: String,
    len: u64,
    edges: Edges,
    counters: SourceCounters,
    options: RemoteOptions,
    runtime: tokio::runtime::Runtime,
    /// What the requests present and trust, for the message of a refusal or a TLS failure.
    credentials: Arc<HttpCredentials>,
}

fn remote_error(url: &str, what: String, e: impl std::fmt::Display) -> Error {
    Error::io(format!("{what} of {url}"), std::io::Error::other(e.to_string()))
}

/// A failed request's error: a refusal (401, 403) as one line naming the status and the
/// credential tried, a TLS certificate failure with what was presented and trusted (see
/// [`HttpCredentials::explain`]), anything else as `object_store` says it.
fn store_error(url: &str, what: String, e: &object_store::Error, credentials: &HttpCredentials) -> Error {
    match credentials.explain(e) {
        Some(msg) => Error::io(format!("{what} of {url}"), std::io::Error::new(std::io::ErrorKind::PermissionDenied, msg)),
        None => remote_error(url, what, e),
    }
}

impl RemoteSource {
    /// Opens `url` (`http://`, `https://` or `s3://bucket/key`): learns its size and reads its
    /// first and last bytes.
    pub fn open(url: &str) -> Result<Self> {
        let options = RemoteOptions::current()?;
        let (store, path, credentials) = store_for(url, &options)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("rntuple-remote")
            .enable_all()
            .build()
            .map_err(|e| Error::io("starting the HTTP client's runtime", e))?;
        let limit = options.request_deadline(0);
        let meta = runtime
            .block_on(async { tokio::time::timeout(limit, store.head(&path)).await })
            .map_err(|_| remote_error(url, "asking for the size".into(), format!("no answer within {limit:?}")))?
            .map_err(|e| store_error(url, "asking for the size".into(), &e, &credentials))?;
        let len = meta.size;
        let mut src = RemoteSource {
            store,
            path,
            url: url.to_string(),
            len,
            edges: Edges::default(),
            counters: SourceCounters::default(),
            options,
            runtime,
            credentials,
        };
        src.counters.add(0);
        src.edges = Edges::load(&src)?;
        Ok(src)
    }

    /// The bytes `[offset, offset + len)` when the head or tail read at opening holds them.
    fn cached(&self, offset: u64, len: u64) -> Option<&[u8]> {
        self.edges.get(offset, len)
    }
}

/// The object store, the object's path and the credentials presented (for messages) for a URL.
fn store_for(url: &str, options: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, StorePath, Arc<HttpCredentials>)> {
    let t = parse_target(url, options)?;
    let store: Arc<dyn ObjectStore> = match t.scheme_lower.as_str() {
        "http" | "https" => {
            let client = if t.scheme_lower == "http" { t.client.clone().with_allow_http(true) } else { t.client.clone() };
            Arc::new(
                object_store::http::HttpBuilder::new()
                    .with_url(format!("{}://{}", t.scheme, t.authority))
                    .with_client_options(client)
                    .with_retry(t.retry.clone())
                    .with_http_connector(t.connector())
                    .build()
                    .map_err(|e| t.bad(&e.to_string()))?,
            )
        }
        _ => Arc::new(s3_store(&t)?),
    };
    Ok((store, t.path, t.credentials))
}

/// The S3 store (a concrete `AmazonS3`, for its multipart uploads), the object's path and the
/// credentials presented (for messages) for an `s3://bucket/key` URL.
pub(crate) fn s3_store_for(url: &str, options: &RemoteOptions) -> Result<(Arc<object_store::aws::AmazonS3>, StorePath, Arc<HttpCredentials>)> {
    let t = parse_target(url, options)?;
    if t.scheme_lower != "s3" {
        return Err(t.bad("not an s3:// URL"));
    }
    let store = Arc::new(s3_store(&t)?);
    Ok((store, t.path, t.credentials))
}

/// A URL taken apart, with the client settings its requests use.
struct Target<'a> {
    url: &'a str,
    scheme: &'a str,
    scheme_lower: String,
    authority: &'a str,
    path: StorePath,
    client: ClientOptions,
    retry: RetryConfig,
    credentials: Arc<HttpCredentials>,
    options: RemoteOptions,
    timeout: Duration,
}

impl Target<'_> {
    fn bad(&self, why: &str) -> Error {
        Error::Invalid(format!("{}: {why}", self.url))
    }

    /// The connector checking every answer (`storage::remote::http_checks`).
    fn connector(&self) -> CheckedConnector {
        let o = &self.options;
        CheckedConnector { connect: o.connect_timeout, idle: o.idle_timeout, timeout: self.timeout, credentials: self.credentials.clone() }
    }
}

fn parse_target<'a>(url: &'a str, options: &RemoteOptions) -> Result<Target<'a>> {
    let bad = |why: &str| Error::Invalid(format!("{url}: {why}"));
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not a URL"))?;
    let (authority, key) = rest.split_once('/').ok_or_else(|| bad("no path after the host"))?;
    if authority.is_empty() || key.is_empty() {
        return Err(bad("expected scheme://host/path"));
    }
    let path = StorePath::from_url_path(key).map_err(|e| bad(&e.to_string()))?;
    // Retries stop at the request's deadline (`RemoteOptions::request_deadline`, enforced in
    // `read_ranges`) if not before.
    let backoff = BackoffConfig { init_backoff: Duration::from_millis(100), max_backoff: Duration::from_secs(10), base: 2.0 };
    let retry = RetryConfig { max_retries: options.retries, retry_timeout: options.request_deadline(0), backoff };
    // The total time of a request is bounded by its size (`RemoteOptions::request_deadline`).
    let timeout = Duration::from_secs(3600);
    let client = ClientOptions::new().with_timeout(timeout).with_connect_timeout(options.connect_timeout);
    let scheme_lower = scheme.to_ascii_lowercase();
    if !matches!(scheme_lower.as_str(), "http" | "https" | "s3") {
        return Err(bad(&format!("unsupported scheme '{scheme}' (http, https and s3 are read)")));
    }
    let credentials = Arc::new(HttpCredentials::for_scheme(&scheme_lower).map_err(|e| e.context(format!("the credentials for {url}")))?);
    Ok(Target { url, scheme, scheme_lower, authority, path, client, retry, credentials, options: *options, timeout })
}

/// The S3 store of the bucket `t.authority`: keys, region and endpoint from the environment.
fn s3_store(t: &Target<'_>) -> Result<object_store::aws::AmazonS3> {
    let mut b = object_store::aws::AmazonS3Builder::from_env().with_bucket_name(t.authority).with_retry(t.retry.clone());
    // The service-specific variable first, as the AWS SDKs read it.
    let endpoint = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"].iter().find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
    let mut client = t.client.clone();
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
    b.with_client_options(client).with_http_connector(t.connector()).build().map_err(|e| t.bad(&e.to_string()))
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
                let limit = self.options.request_deadline(r.end - r.start);
                async move {
                    let reply = match tokio::time::timeout(limit, store.get_range(&path, r)).await {
                        Ok(reply) => reply.map_err(|e| match self.credentials.explain(&e) {
                            Some(msg) => msg,
                            None => e.to_string(),
                        }),
                        Err(_) => Err(format!("no complete answer within {limit:?} (the connect and idle timeouts plus 1 s per MiB)")),
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
            let e = store_for(url, &RemoteOptions::default()).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(url) && e.contains(why), "{e}");
        }
    }
}
