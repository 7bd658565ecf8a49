//! Uploads to HTTP(S) servers that take WebDAV writes (`http://host/dir/name`,
//! `https://host/dir/name`), atomic: the staged file (complete: its TFile header is rewritten at
//! the commit, so nothing is sent while it is written) is sent with one `PUT`, its body streamed
//! from the staging file in chunks with its `Content-Length`, to a temporary name beside the
//! destination (`/dir/.name.tmp-PID-RANDOM`, on the same server), then moved over the destination
//! with WebDAV's `MOVE` (`Destination:` the destination, `Overwrite: T`), which the server does
//! as a rename (a destination that is a directory is refused first: `MOVE` would replace it). On
//! any failure, when the output is dropped uncommitted, and on an interrupt's clean-up
//! (`storage::local::interrupt`: the `PUT` in flight is cut, then the temporary file deleted) the
//! temporary file is removed (`DELETE`). A server that refuses `MOVE` (405, 501) fails the upload
//! with a message saying so: the file is never written to the destination directly (a partial
//! file could appear there). A process killed outright may leave the temporary file, never a
//! partial destination.
//!
//! Credentials, timeouts and retries are those of remote reads (`storage::remote::webdav_client`).

use crate::storage::local::interrupt::{self, Cleanup, Pending};
use super::remote_options::RemoteOptions;
use super::webdav_client::{cancelled, file_body, request_error, DavClient};
use crate::error::{Error, Result};
use futures::future::{AbortHandle, Abortable};
use http::StatusCode;
use reqwest::Method;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How long a clean-up `DELETE` may take (on an error, a drop or an interrupt).
const DELETE_WAIT: Duration = Duration::from_secs(5);

/// The temporary URL beside `url`: the same server and directory, the name
/// `.NAME.tmp-PID-RANDOM`, the query (if any) kept; and the destination without its query, its
/// scheme and host in lower case (for `MOVE`'s `Destination:`).
pub(crate) fn temporary_url(url: &str) -> Result<(String, String)> {
    let (bare, query) = match url.split_once('?') {
        Some((u, q)) => (u, format!("?{q}")),
        None => (url, String::new()),
    };
    let bad = || Error::Invalid(format!("{url}: an http(s):// output is scheme://host/path/name"));
    let after_scheme = bare.split_once("://").map(|(_, r)| r).ok_or_else(bad)?;
    let (host, path) = after_scheme.split_once('/').ok_or_else(bad)?;
    let (_, name) = bare.rsplit_once('/').ok_or_else(bad)?;
    if host.is_empty() || path.is_empty() || name.is_empty() || name == "." || name == ".." {
        return Err(bad());
    }
    let dir = &bare[..bare.len() - name.len()];
    let random = std::collections::hash_map::RandomState::new();
    let r = std::hash::BuildHasher::hash_one(&random, std::time::SystemTime::now()) as u32;
    // The scheme and host in lower case, as a server compares them with its own (nginx does).
    let destination = format!("{}/{path}", bare[..bare.len() - path.len() - 1].to_ascii_lowercase());
    Ok((format!("{dir}.{name}.tmp-{}-{r:08x}{query}", std::process::id()), destination))
}

/// The `PUT` in flight, for an interrupt's clean-up to cut before it deletes the temporary file.
#[derive(Default)]
struct InFlight {
    /// The abort handle of the `PUT` while it runs.
    put: Mutex<Option<AbortHandle>>,
    ended: Condvar,
}

impl InFlight {
    /// Cuts the `PUT` in flight, if any, and waits (at most `limit`) for it to end.
    fn cut(&self, limit: Duration) {
        let g = self.put.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = g.as_ref() {
            h.abort();
        }
        let _ = self.ended.wait_timeout_while(g, limit, |h| h.is_some());
    }

    fn set(&self, h: Option<AbortHandle>) {
        *self.put.lock().unwrap_or_else(|p| p.into_inner()) = h;
        self.ended.notify_all();
    }
}

/// An upload in progress to `url` through its temporary file (see the module). Dropped before
/// the move, it deletes the temporary file.
pub(crate) struct DavUpload {
    client: Arc<DavClient>,
    runtime: tokio::runtime::Runtime,
    url: String,
    /// The temporary file's URL; empty once moved (or deleted).
    tmp: String,
    /// The destination without its query.
    destination: String,
    in_flight: Arc<InFlight>,
    /// Its registration for an interrupt's clean-up.
    pending: Option<Pending>,
}

/// Deletes `tmp` within [`DELETE_WAIT`] (a missing file is fine); the failure's message otherwise.
async fn delete(client: &DavClient, url: &str, tmp: &str) -> std::result::Result<(), String> {
    let what = format!("deleting the temporary file {tmp} (DELETE)");
    let limited = client.for_clean_up();
    match limited.send(url, &what, DELETE_WAIT, || Ok(limited.request(Method::DELETE, tmp))).await {
        Ok(r) if r.status().is_success() || r.status() == StatusCode::NOT_FOUND => Ok(()),
        Ok(r) => Err(limited.answer(&r)),
        Err(e) => Err(e.to_string()),
    }
}

impl DavUpload {
    /// Prepares the upload of `url` (no request yet), registered for an interrupt's clean-up.
    pub(crate) fn start(url: &str) -> Result<DavUpload> {
        let client = Arc::new(DavClient::for_url(url, RemoteOptions::current()?)?);
        let (tmp, destination) = temporary_url(url)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(format!("starting the HTTP client's runtime for {url}"), e))?;
        let in_flight = Arc::new(InFlight::default());
        let pending = {
            let (client, url, tmp, in_flight) = (client.clone(), url.to_string(), tmp.clone(), in_flight.clone());
            interrupt::register(Cleanup::Remote(Box::new(move || {
                in_flight.cut(DELETE_WAIT);
                if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    let _ = rt.block_on(delete(&client, &url, &tmp));
                }
            })))
        };
        Ok(DavUpload { client, runtime, url: url.to_string(), tmp, destination, in_flight, pending: Some(pending) })
    }

    /// Refuses a destination that is a directory (a collection), which a `MOVE` with `Overwrite:
    /// T` could replace, contents and all. Asked with `HEAD`: a server redirecting `NAME` to
    /// `NAME/` (nginx, Apache) names a directory; any other answer lets the upload go on (a refusal
    /// is the `PUT`'s to report).
    pub(crate) fn check_destination(&self) -> Result<()> {
        let (client, url) = (&self.client, self.url.as_str());
        let what = "asking what the destination is (HEAD)";
        let r = self.runtime.block_on(client.send(url, what, client.options.request_deadline(0), || Ok(client.request(Method::HEAD, url))))?;
        let path = self.destination.split_once("://").and_then(|(_, r)| r.find('/').map(|at| &r[at..])).unwrap_or("/");
        let to = r.headers().get(http::header::LOCATION).and_then(|v| v.to_str().ok()).unwrap_or("");
        if r.status().is_redirection() && to.strip_suffix('/').is_some_and(|t| t.ends_with(path)) {
            return Err(Error::Invalid(format!("{url}: the output is a directory on the server (it redirects to {to})")));
        }
        Ok(())
    }

    /// Sends `len` bytes of the staged file `file` to the temporary file (`PUT`).
    pub(crate) fn put(&mut self, file: &std::fs::File, len: u64) -> Result<()> {
        let (client, url, tmp) = (&self.client, self.url.as_str(), self.tmp.as_str());
        let what = format!("sending {len} bytes to the temporary file {tmp} (PUT)");
        let (handle, registration) = AbortHandle::new_pair();
        self.in_flight.set(Some(handle));
        if interrupt::interrupted() {
            self.in_flight.set(None);
            return Err(cancelled(url));
        }
        let put = client.send(url, &what, client.options.request_deadline(len), || {
            Ok(client.request(Method::PUT, tmp).header(http::header::CONTENT_LENGTH, len).body(file_body(file, len, url)?))
        });
        let r = self.runtime.block_on(Abortable::new(put, registration));
        self.in_flight.set(None);
        let answer = match r {
            Err(_aborted) => return Err(cancelled(url)),
            Ok(r) => r?,
        };
        match answer.status() {
            s if s.is_success() => Ok(()),
            StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED => {
                Err(request_error(url, &what, format!("the server answered {}: it takes no uploads there (no WebDAV PUT)", answer.status())))
            }
            StatusCode::CONFLICT => Err(request_error(url, &what, format!("the server answered {}: does the directory exist?", answer.status()))),
            _ => Err(request_error(url, &what, client.answer(&answer))),
        }
    }

    /// Moves the temporary file over the destination (`MOVE`, `Overwrite: T`): the file appears
    /// complete. Refused after an interrupt's clean-up; on failure the temporary file is deleted
    /// (the message says when that failed too).
    pub(crate) fn commit(mut self) -> Result<()> {
        let pending = self.pending.take().ok_or_else(|| Error::internal("a WebDAV upload committed twice"))?;
        if pending.release_for_commit().is_err() {
            // The clean-up deleted the temporary file.
            self.tmp.clear();
            return Err(cancelled(&self.url));
        }
        let (client, url, tmp, dest) = (&self.client, self.url.as_str(), self.tmp.as_str(), self.destination.as_str());
        let what = format!("moving the uploaded temporary file {tmp} over it (WebDAV MOVE)");
        let moved = self.runtime.block_on(client.send(url, &what, client.options.request_deadline(0), || {
            Ok(client
                .request(Method::from_bytes(b"MOVE").map_err(|e| Error::internal(e.to_string()))?, tmp)
                .header("Destination", dest)
                .header("Overwrite", "T"))
        }));
        let failure = match moved {
            Ok(r) if r.status().is_success() => {
                self.tmp.clear();
                return Ok(());
            }
            Ok(r) if matches!(r.status(), StatusCode::METHOD_NOT_ALLOWED | StatusCode::NOT_IMPLEMENTED) => request_error(
                url,
                &what,
                format!(
                    "the server answered {}: it does not move files, and an http(s):// output is uploaded under a temporary name and \
                     moved over the destination so that it appears complete or not at all (never written there directly); write it \
                     locally and copy it, or to a server that takes WebDAV MOVE",
                    r.status()
                ),
            ),
            Ok(r) => request_error(url, &what, client.answer(&r)),
            Err(e) => e,
        };
        let r = match self.runtime.block_on(delete(client, url, tmp)) {
            Ok(()) => Err(failure),
            Err(why) => Err(failure.context(format!("{url}: the temporary file {tmp} was left on the server (deleting it failed: {why})"))),
        };
        // Deleted, or reported: the drop does not try again.
        self.tmp.clear();
        r
    }
}

impl Drop for DavUpload {
    /// Not moved (an error, a drop): the temporary file is deleted, best effort.
    fn drop(&mut self) {
        if !self.tmp.is_empty() {
            let _ = self.runtime.block_on(delete(&self.client, &self.url, &self.tmp));
        }
        self.pending = None;
    }
}

/// Uploads `len` bytes of the local file `file` to `url` atomically (see the module).
pub(crate) fn upload_file(file: &std::fs::File, len: u64, url: &str) -> Result<()> {
    if interrupt::interrupted() {
        return Err(cancelled(url));
    }
    let mut up = DavUpload::start(url)?;
    up.check_destination()?;
    up.put(file, len)?;
    up.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_file_is_beside_the_destination() {
        let (t, d) = temporary_url("https://h:8443/data/skims/out.root?authz=x").unwrap();
        assert!(t.starts_with("https://h:8443/data/skims/.out.root.tmp-") && t.ends_with("?authz=x"), "{t}");
        assert_eq!(d, "https://h:8443/data/skims/out.root");
        let (_, d) = temporary_url("HTTPS://Host.Example/Data/Out.root").unwrap();
        assert_eq!(d, "https://host.example/Data/Out.root");
        let (t, _) = temporary_url("http://h/out.root").unwrap();
        assert!(t.starts_with("http://h/.out.root.tmp-"), "{t}");
        for bad in ["http://h/", "http://h", "http:///x.root", "https://h/dir/"] {
            assert!(temporary_url(bad).is_err(), "{bad}");
        }
    }
}
