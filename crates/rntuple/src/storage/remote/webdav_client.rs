//! The HTTP side of the WebDAV uploads of `storage::remote::webdav_upload`: a reqwest client presenting
//! the grid credentials of `storage::remote::http_credentials` (the bearer token as `Authorization:
//! Bearer` on `https://` requests only, the X.509 proxy as the TLS client identity, the CA
//! directory trusted), requests bounded and retried as remote reads are
//! ([`RemoteOptions`]: the connect timeout, the request's deadline (connect and idle timeouts plus
//! 1 s per MiB sent), retries of connection failures and 5xx answers with exponential back-off), a request body streamed from a local file
//! in chunks (never the whole file in memory), and answers turned into errors naming the URL, the
//! request and, for a 401 or 403, the credential tried (never its value). Redirects are not
//! followed: a streamed body cannot be sent again by the client, and a credential must not follow
//! a redirect to another host.

use super::http_checks::chain;
use super::http_credentials::HttpCredentials;
use crate::storage::local::interrupt;
use super::remote_options::RemoteOptions;
use crate::error::{Error, Result};
use bytes::Bytes;
use http::header::AUTHORIZATION;
use http::{HeaderValue, StatusCode};
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::time::Duration;

/// Bytes read from the staged file into one piece of a request body.
const CHUNK: u64 = 1 << 20;

/// A client for the requests of one upload (see the module).
#[derive(Debug, Clone)]
pub(crate) struct DavClient {
    client: reqwest::Client,
    /// `Authorization: Bearer <token>` for `https://` requests (marked sensitive).
    bearer: Option<HeaderValue>,
    credentials: Arc<HttpCredentials>,
    /// Timeouts and retries.
    pub(crate) options: RemoteOptions,
    /// Whether an interrupt stops its requests (not a clean-up's, which runs after it).
    cancellable: bool,
}

/// The error of a request `what` (`"PUT of the temporary file ..."`) made for the output `url`.
pub(crate) fn request_error(url: &str, what: &str, detail: String) -> Error {
    Error::io(format!("uploading {url}: {what}"), std::io::Error::other(detail))
}

/// The error of an output whose upload was cancelled by an interrupt's clean-up.
pub(crate) fn cancelled(url: &str) -> Error {
    Error::Invalid(format!("{url}: the upload was cancelled (the process is interrupted)"))
}

impl DavClient {
    /// The client for uploads to `url` (`http://` or `https://`), with this process's
    /// credentials for its scheme and `options`.
    pub(crate) fn for_url(url: &str, options: RemoteOptions) -> Result<DavClient> {
        let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase()).unwrap_or_default();
        if scheme != "http" && scheme != "https" {
            return Err(Error::Invalid(format!("{url}: not an http:// or https:// URL")));
        }
        let credentials = Arc::new(HttpCredentials::for_scheme(&scheme).map_err(|e| e.context(format!("the credentials for {url}")))?);
        let bearer = match (&credentials.bearer, scheme.as_str()) {
            (Some(t), "https") => {
                let mut v = HeaderValue::from_str(&format!("Bearer {}", t.token))
                    .map_err(|_| Error::Invalid(format!("{url}: the bearer token from {} holds characters a header cannot carry", t.origin)))?;
                v.set_sensitive(true);
                Some(v)
            }
            _ => None,
        };
        let client = credentials
            .reqwest_builder()
            .user_agent(concat!("rntuple/", env!("CARGO_PKG_VERSION")))
            // No read timeout: reqwest's runs from the start of the request, which would cut an
            // upload longer than it; `send` bounds the whole request by its deadline instead.
            .connect_timeout(options.connect_timeout)
            .http1_only()
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .https_only(scheme == "https")
            .redirect(reqwest::redirect::Policy::none())
            // Each request on a connection of its own: an interrupt's clean-up sends its DELETE
            // from another thread and runtime than the upload's.
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| Error::Invalid(format!("{url}: building the HTTP client with {}: {}", credentials.tried, chain(&e))))?;
        Ok(DavClient { client, bearer, credentials, options, cancellable: true })
    }

    /// This client for a clean-up: at most one retry, and not stopped by an interrupt (whose
    /// clean-up it may be).
    pub(crate) fn for_clean_up(&self) -> DavClient {
        DavClient { options: RemoteOptions { retries: self.options.retries.min(1), ..self.options }, cancellable: false, ..self.clone() }
    }

    /// A request `method` to `url` with the bearer token (on `https://`).
    pub(crate) fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let b = self.client.request(method, url);
        match &self.bearer {
            Some(v) if url.get(..8).is_some_and(|s| s.eq_ignore_ascii_case("https://")) => b.header(AUTHORIZATION, v.clone()),
            _ => b,
        }
    }

    /// Sends the request `make` builds (built again for each retry) within `deadline`, retries
    /// included: connection failures and 5xx answers are retried up to the options' retries
    /// (100 ms back-off, doubling, at most 10 s), unless the process is interrupted (which, for a
    /// cancellable client, also stops the request before it is sent). Returns the
    /// answer (the last 5xx one when every retry failed); a transport failure is an error naming
    /// `url` and `what`.
    pub(crate) async fn send(
        &self,
        url: &str,
        what: &str,
        deadline: Duration,
        make: impl Fn() -> Result<reqwest::RequestBuilder>,
    ) -> Result<reqwest::Response> {
        let attempts = async {
            let mut backoff = Duration::from_millis(100);
            let mut attempt = 0;
            loop {
                let stopped = self.cancellable && interrupt::interrupted();
                if stopped {
                    return Err(cancelled(url));
                }
                match make()?.send().await {
                    Ok(r) if !r.status().is_server_error() || attempt >= self.options.retries => return Ok(r),
                    Err(e) if attempt >= self.options.retries || (self.cancellable && interrupt::interrupted()) => {
                        return Err(request_error(url, what, self.transport(&e)));
                    }
                    // A 5xx answer or a transport failure: tried again.
                    _ => {}
                }
                attempt += 1;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        };
        match tokio::time::timeout(deadline, attempts).await {
            Ok(r) => r,
            Err(_) => Err(request_error(url, what, format!("no complete answer within {deadline:?} (retries included)"))),
        }
    }

    /// A transport failure's message: its causes, and for a TLS failure what was trusted and
    /// presented.
    fn transport(&self, e: &reqwest::Error) -> String {
        let text = chain(e);
        let tls = ["certificate", "CertificateRequired", "HandshakeFailure", "handshake"].iter().any(|w| text.contains(w));
        if tls && !self.credentials.trusted().is_empty() {
            return format!("{text} (trusted {}; presented {})", self.credentials.trusted(), self.credentials.tried);
        }
        text
    }

    /// The message of an answer `status` that is a failure: a refusal (401, 403) names the
    /// credential tried; a redirect where it pointed (it is not followed).
    pub(crate) fn answer(&self, r: &reqwest::Response) -> String {
        let status = r.status();
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!("the server answered {status}; tried {}", self.credentials.tried),
            s if s.is_redirection() => {
                let to = r.headers().get(http::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("nowhere");
                format!("the server answered {status}, redirecting to {to} (redirects of uploads are not followed: name the final URL)")
            }
            _ => format!("the server answered {status}"),
        }
    }
}

/// A request body streaming `len` bytes of the local file `file` in chunks of 1 MiB (read as
/// the connection takes them); it fails (and the request with it) once the process is
/// interrupted.
pub(crate) fn file_body(file: &std::fs::File, len: u64, url: &str) -> Result<reqwest::Body> {
    let f = file.try_clone().map_err(|e| Error::io(format!("duplicating the handle of the staged output of {url}"), e))?;
    let chunks = (0..len.div_ceil(CHUNK)).map(move |i| {
        if interrupt::interrupted() {
            return Err(std::io::Error::other("the upload was cancelled (the process is interrupted)"));
        }
        let at = i * CHUNK;
        let mut buf = vec![0u8; CHUNK.min(len - at) as usize];
        f.read_exact_at(&mut buf, at)?;
        Ok::<_, std::io::Error>(Bytes::from(buf))
    });
    Ok(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
}
