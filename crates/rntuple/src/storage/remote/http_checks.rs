//! Checks every HTTP answer a remote source gets is what was asked, under `object_store`'s
//! clients (HTTP(S) and S3 alike): an [`object_store::client::HttpService`] between
//! `object_store` and reqwest that
//!
//! * asks for the identity encoding, and refuses a body with another `Content-Encoding`;
//! * accepts a range request's answer only as a 206 whose `Content-Range` is exactly the range
//!   asked and whose `Content-Length` (if any) is its length, or as a 200 (the server ignored
//!   the Range header) from which only the bytes up to the range's end are read;
//! * streams every body through a counter: a 206 body must be exactly the length asked (more
//!   or fewer bytes fail as soon as seen); no buffer is ever sized by a declared length (other
//!   bodies, error pages, are cut at 1 MiB);
//! * fails when the answer's headers have not come within the connect and idle timeouts, or
//!   no part of its body for the idle timeout; names a redirect loop.
//!
//! Failures are not retried by `object_store` (they are the server's deliberate answers);
//! connection errors and 5xx answers are. The service also presents the store's grid credentials
//! (`storage::remote::http_credentials`): a bearer token on `https://` requests, the TLS client identity
//! and CA certificates in the client it wraps.

use super::http_credentials::HttpCredentials;
use bytes::Bytes;
use http::header::{ACCEPT_ENCODING, AUTHORIZATION, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_RANGE, RANGE};
use http::{HeaderValue, Method, StatusCode};
use http_body::{Body, Frame, SizeHint};
use object_store::client::{HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpResponseBody, HttpService};
use object_store::ClientOptions;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// Bodies that are not the data of a range request (error pages) are read up to this size.
const OTHER_BODY_LIMIT: u64 = 1 << 20;

/// A server's answer that is not what was asked (the message says what was wrong).
#[derive(Debug)]
struct Refused(String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

fn refused(msg: String) -> HttpError {
    HttpError::new(HttpErrorKind::Decode, Refused(msg))
}

/// Makes [`CheckedService`]s over reqwest clients built from the store's options.
#[derive(Debug)]
pub(crate) struct CheckedConnector {
    /// The connect timeout: with `idle`, the longest wait for an answer's headers.
    pub(crate) connect: Duration,
    /// The longest wait for the next part of a body.
    pub(crate) idle: Duration,
    /// The longest a request may take (the client's own timeout).
    pub(crate) timeout: Duration,
    /// What the requests present.
    pub(crate) credentials: Arc<HttpCredentials>,
}

impl HttpConnector for CheckedConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = self.credentials.client(options, self.connect, self.timeout)?;
        let bearer = match &self.credentials.bearer {
            None => None,
            Some(t) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {}", t.token)).map_err(|_| object_store::Error::Generic {
                    store: "HTTP",
                    source: format!("the bearer token from {} holds characters a header cannot carry", t.origin).into(),
                })?;
                v.set_sensitive(true);
                Some(v)
            }
        };
        Ok(HttpClient::new(CheckedService { inner, connect: self.connect, idle: self.idle, bearer }))
    }
}

/// See the module's documentation.
#[derive(Debug)]
struct CheckedService {
    inner: HttpClient,
    connect: Duration,
    idle: Duration,
    /// `Authorization: Bearer <token>`, added to `https://` requests that carry no other.
    bearer: Option<HeaderValue>,
}

/// `(first, last)` (inclusive) of a `Range: bytes=first-last` header.
fn asked_range(v: Option<&HeaderValue>) -> Option<(u64, u64)> {
    let (a, b) = v?.to_str().ok()?.strip_prefix("bytes=")?.split_once('-')?;
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

/// `(first, last)` of a `Content-Range: bytes first-last/size` header.
fn content_range(v: &HeaderValue) -> Option<(u64, u64)> {
    let (r, _size) = v.to_str().ok()?.strip_prefix("bytes ")?.split_once('/')?;
    let (a, b) = r.split_once('-')?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

fn header(r: &HttpResponse, name: http::header::HeaderName) -> Option<&str> {
    r.headers().get(name).map(|v| v.to_str().unwrap_or("(not text)"))
}

/// `e` and the causes it chains, on one line (every HTTP client of the crate words its errors so).
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut src = e.source();
    while let Some(s) = src {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        src = s.source();
    }
    text
}

/// A failed request with its causes in its message (a TLS failure says why: "invalid peer
/// certificate: UnknownIssuer"), retried or not by its kind as before; a redirect loop is named
/// as such.
fn describe(e: HttpError) -> HttpError {
    let text = chain(&e);
    if text.contains("too many redirects") {
        return refused("redirect loop: the server redirected more than 10 times".into());
    }
    let text = text.strip_prefix("HTTP error: ").unwrap_or(&text).to_string();
    HttpError::new(e.kind(), Refused(text))
}

impl CheckedService {
    async fn checked(&self, mut req: HttpRequest) -> Result<HttpResponse, HttpError> {
        req.headers_mut().insert(ACCEPT_ENCODING, HeaderValue::from_static("identity"));
        if let Some(b) = self.bearer.as_ref().filter(|_| req.uri().scheme_str() == Some("https")) {
            req.headers_mut().entry(AUTHORIZATION).or_insert_with(|| b.clone());
        }
        let asked = if req.method() == Method::GET { asked_range(req.headers().get(RANGE)) } else { None };
        let (idle, first) = (self.idle, self.connect + self.idle);
        let resp = match tokio::time::timeout(first, self.inner.execute(req)).await {
            Err(_) => return Err(refused(format!("no answer within {first:?} (the connect and idle timeouts)"))),
            Ok(r) => r.map_err(describe)?,
        };
        match asked {
            Some((a, b)) if resp.status().is_success() => range_answer(resp, a, b, idle),
            _ => {
                let (parts, body) = resp.into_parts();
                let body = CheckedBody::new(body, idle, 0, OTHER_BODY_LIMIT, Limit::AtMost);
                Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
            }
        }
    }
}

/// Checks a 2xx answer to a request for bytes `a..=b` and wraps its body (see the module).
fn range_answer(resp: HttpResponse, a: u64, b: u64, idle: Duration) -> Result<HttpResponse, HttpError> {
    let asked = b - a + 1;
    if let Some(enc) = header(&resp, CONTENT_ENCODING).filter(|e| !e.trim().eq_ignore_ascii_case("identity")) {
        return Err(refused(format!("the server sent bytes {a}-{b} with Content-Encoding {enc:?} (identity was asked)")));
    }
    let declared = match header(&resp, CONTENT_LENGTH) {
        None => None,
        Some(s) => Some(s.trim().parse::<u64>().map_err(|_| refused(format!("unreadable Content-Length {s:?} for bytes {a}-{b}")))?),
    };
    let status = resp.status();
    let (mut parts, body) = resp.into_parts();
    let body = match status {
        StatusCode::PARTIAL_CONTENT => {
            let got = parts.headers.get(CONTENT_RANGE);
            match got.and_then(content_range) {
                Some(r) if r == (a, b) => {}
                Some((x, y)) => return Err(refused(format!("the server answered 206 for bytes {x}-{y} when {a}-{b} were asked"))),
                None => {
                    let what = got.map(|v| format!("Content-Range {:?}", v.to_str().unwrap_or("(not text)"))).unwrap_or_else(|| "no Content-Range".into());
                    return Err(refused(format!("the server answered 206 with {what} when bytes {a}-{b} were asked")));
                }
            }
            if let Some(n) = declared.filter(|&n| n != asked) {
                return Err(refused(format!("the server declared Content-Length {n} for bytes {a}-{b} ({asked} bytes)")));
            }
            CheckedBody::new(body, idle, 0, asked, Limit::Exactly)
        }
        StatusCode::OK => {
            // The server ignored the Range header: the range is cut from the whole body, reading
            // no further than its end.
            if let Some(n) = declared.filter(|&n| n <= b) {
                return Err(refused(format!("the server answered 200 with {n} bytes (ignoring the Range header) when bytes {a}-{b} were asked")));
            }
            parts.status = StatusCode::PARTIAL_CONTENT;
            let total = declared.unwrap_or(b + 1);
            let cr = HeaderValue::from_str(&format!("bytes {a}-{b}/{total}")).map_err(|e| refused(e.to_string()))?;
            parts.headers.insert(CONTENT_RANGE, cr);
            CheckedBody::new(body, idle, a, asked, Limit::Prefix)
        }
        other => return Err(refused(format!("the server answered {other} to a request for bytes {a}-{b}"))),
    };
    parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(asked));
    Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
}

impl HttpService for CheckedService {
    fn call<'a, 'b>(&'a self, req: HttpRequest) -> Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(self.checked(req))
    }
}

/// How a wrapped body's length is held to `want`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Limit {
    /// Exactly `want` bytes (a 206 body): fewer or more fail.
    Exactly,
    /// The first `want` bytes after `skip`; the rest is never read (a 200 whole body).
    Prefix,
    /// At most `want` bytes (error pages); more fail.
    AtMost,
}

/// A response body read through a byte counter and an idle timer (see the module).
struct CheckedBody {
    inner: HttpResponseBody,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    skip: u64,
    want: u64,
    got: u64,
    limit: Limit,
    /// The last bytes of an exact body, handed on once the body is seen to end there (so that a
    /// body running on fails while part of the range is still to come, and a retry asks for it).
    held: Option<Bytes>,
    done: bool,
}

impl CheckedBody {
    fn new(inner: HttpResponseBody, idle: Duration, skip: u64, want: u64, limit: Limit) -> Self {
        CheckedBody { inner, idle, timer: Box::pin(tokio::time::sleep(idle)), skip, want, got: 0, limit, held: None, done: false }
    }
}

impl Body for CheckedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let this = self.get_mut();
        if this.done || (this.got == this.want && this.limit == Limit::Prefix) {
            return Poll::Ready(None);
        }
        loop {
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => {
                    if this.timer.as_mut().poll(cx).is_ready() {
                        let msg = format!("no byte for {:?} (idle timeout) after {} of {} bytes", this.idle, this.got, this.want);
                        return Poll::Ready(Some(Err(refused(msg))));
                    }
                    return Poll::Pending;
                }
                Poll::Ready(None) => {
                    this.done = true;
                    if let Some(last) = this.held.take() {
                        return Poll::Ready(Some(Ok(Frame::data(last))));
                    }
                    if this.got < this.want && this.limit != Limit::AtMost {
                        let msg = format!("the body ended after {} of the {} bytes asked", this.got, this.want);
                        return Poll::Ready(Some(Err(refused(msg))));
                    }
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Err(e))) => {
                    let msg = format!("the body broke off after {} of {} bytes: {}", this.got, this.want, chain(&e));
                    return Poll::Ready(Some(Err(HttpError::new(e.kind(), Refused(msg)))));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let deadline = tokio::time::Instant::now() + this.idle;
                    this.timer.as_mut().reset(deadline);
                    let Ok(mut data) = frame.into_data() else { continue };
                    if this.skip > 0 {
                        let n = this.skip.min(data.len() as u64);
                        this.skip -= n;
                        data = data.slice(n as usize..);
                    }
                    if data.is_empty() {
                        continue;
                    }
                    let room = this.want - this.got;
                    if data.len() as u64 > room || this.held.is_some() {
                        if this.limit != Limit::Prefix {
                            let msg = format!("the server sent more than the {} bytes asked", this.want);
                            return Poll::Ready(Some(Err(refused(msg))));
                        }
                        data.truncate(room as usize);
                    }
                    this.got += data.len() as u64;
                    if this.got == this.want && this.limit == Limit::Exactly {
                        this.held = Some(data);
                        continue;
                    }
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.done || (self.got == self.want && self.limit == Limit::Prefix)
    }

    fn size_hint(&self) -> SizeHint {
        // Never the declared Content-Length: a buffer sized by the hint holds what was asked.
        match self.limit {
            Limit::AtMost => SizeHint::default(),
            _ => SizeHint::with_exact(self.want - self.got + self.held.as_ref().map_or(0, |h| h.len() as u64)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_headers_are_parsed_strictly() {
        let v = |s: &'static str| HeaderValue::from_static(s);
        assert_eq!(asked_range(Some(&v("bytes=10-19"))), Some((10, 19)));
        assert_eq!(asked_range(Some(&v("bytes=-19"))), None);
        assert_eq!(asked_range(Some(&v("bytes=20-19"))), None);
        assert_eq!(content_range(&v("bytes 10-19/100")), Some((10, 19)));
        assert_eq!(content_range(&v("bytes 10-19/*")), Some((10, 19)));
        assert_eq!(content_range(&v("bytes */100")), None);
    }
}
