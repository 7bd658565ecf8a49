//! XRootD (`root://`, `roots://`) reads through XRootD's own client library, XrdCl: open a file,
//! its size, positioned reads and vector reads (`kXR_readv`: many chunks in one request); and,
//! in [`write`], the writes of an atomic upload (a new file, `mv`, `rm`). XrdCl
//! does the protocol's work that a hand-written client would have to redo: redirections (EOS,
//! dCache, federations), authentication (WLCG tokens from `BEARER_TOKEN`, `BEARER_TOKEN_FILE`,
//! `$XDG_RUNTIME_DIR/bt_u<uid>`, `/tmp/bt_u<uid>`; X.509 proxies; Kerberos), retries and its
//! `XRD_*` settings.
//!
//! Timeouts: XrdCl's own defaults suit a batch job more than a user at a terminal (an unreachable
//! host is retried for 10 minutes, a request may take 30). Each [`File::open`] takes a
//! [`Patience`] (the caller's connect and idle timeouts and retries) and sets XrdCl's
//! `ConnectionWindow` (the connect timeout), `ConnectionRetry` (1 + retries), `StreamTimeout` (the
//! idle timeout: a connection with a request outstanding and no byte for that long is broken),
//! `StreamErrorWindow` (the connect timeout: how long a host that failed is not tried again) and
//! `TimeoutResolution` (1 s, the granularity of those checks); every request is given
//! [`Patience::deadline_s`] (both timeouts plus one second per MiB, recoveries included). The
//! `XRD_*` variables the user set (`XRD_CONNECTIONWINDOW`, `XRD_CONNECTIONRETRY`,
//! `XRD_STREAMTIMEOUT`, `XRD_STREAMERRORWINDOW`, `XRD_TIMEOUTRESOLUTION`) still win, as for every
//! XrdCl program. XrdCl reads some of them when it first connects to a host: in one process, the
//! settings of the first open of a host hold for that host.
//!
//! The client is built in when XrdCl's headers were found at build time (see `build.rs`): a
//! shim over XrdCl, loaded with XrdCl at the first request, so that a program built with it runs
//! where XrdCl is not installed and says so at a `root://` request; without the headers
//! [`available`] is false and [`File::open`] says so.
//!
//! ```
//! use rntuple_xrootd::{File, Patience, MAX_CHUNK};
//! assert!(MAX_CHUNK > 2_000_000);
//! // A URL with a NUL byte is refused before anything is sent.
//! let e = File::open("root://host//a\0b.root", Patience::default()).err().map(|e| e.to_string()).unwrap_or_default();
//! assert!(e.contains("NUL"));
//! ```

#[cfg(xrdcl)]
mod loader;

/// The loaded shim's functions ([`loader::api`]), its failure as this crate's error.
#[cfg(xrdcl)]
fn client() -> Result<&'static loader::Api, XrdError> {
    loader::api().map_err(|message| XrdError { code: -1, message })
}
pub mod write;

use std::ffi::CString;
use std::fmt;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{mpsc, Arc, RwLock};
use std::time::{Duration, Instant};

/// Most bytes of one chunk of a vector read (XrdCl's and the server's default limit).
pub const MAX_CHUNK: u32 = 2_097_136;
/// Most chunks of one vector read (XrdCl's and the server's default limit).
pub const MAX_CHUNKS: usize = 1024;

/// How patient XrdCl is with a server (see the crate's documentation for the XrdCl settings each
/// value becomes).
///
/// ```
/// use rntuple_xrootd::Patience;
/// let p = Patience { connect_s: 2, idle_s: 3, retries: 1 };
/// assert_eq!((p.deadline_s(100), p.deadline_s(5 << 20)), (5, 10));
/// assert_eq!(Patience { connect_s: u16::MAX, ..p }.deadline_s(0), u16::MAX);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Patience {
    /// Seconds to establish a connection and its handshake (XrdCl's `ConnectionWindow`).
    pub connect_s: u16,
    /// Seconds without a byte while a request is outstanding before the connection is declared
    /// broken (XrdCl's `StreamTimeout`).
    pub idle_s: u16,
    /// Connection attempts after the first (XrdCl's `ConnectionRetry` is one more).
    pub retries: u16,
}

impl Default for Patience {
    /// 30 s to connect, 60 s idle (XrdCl's stream timeout), 3 retries.
    fn default() -> Self {
        Patience { connect_s: 30, idle_s: 60, retries: 3 }
    }
}

impl Patience {
    /// The seconds a request for `bytes` bytes may take, XrdCl's recoveries (reconnecting and
    /// sending it again) included: both timeouts plus one second per MiB, at most `u16::MAX`.
    pub fn deadline_s(&self, bytes: u64) -> u16 {
        let s = u64::from(self.connect_s) + u64::from(self.idle_s) + (bytes >> 20);
        u16::try_from(s).unwrap_or(u16::MAX).max(1)
    }
}

/// XRootD's error number for "not authorized" (`kXR_NotAuthorized`).
const NOT_AUTHORIZED: i32 = 3010;
/// XRootD's error number for "no such file" (`kXR_NotFound`).
const NOT_FOUND: i32 = 3011;

/// What XrdCl reported: its status text and the XRootD error number (`-1` when there is none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XrdError {
    /// The XRootD error number (kXR_*), or -1.
    pub code: i32,
    /// XrdCl's description of the status.
    pub message: String,
}

impl XrdError {
    /// Whether the server refused the credentials (or their absence).
    pub fn is_not_authorized(&self) -> bool {
        self.code == NOT_AUTHORIZED
    }

    /// Whether the server has no such file.
    pub fn is_not_found(&self) -> bool {
        self.code == NOT_FOUND
    }
}

impl fmt::Display for XrdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for XrdError {}

/// Whether this build has the XRootD client (its shim over XrdCl; XrdCl itself is loaded at
/// the first request).
pub fn available() -> bool {
    cfg!(xrdcl)
}

/// Whether XrdCl's status (negated by the shim) is a broken connection: a socket error, timeout
/// or disconnection, a stream disconnected, a failed connection, an invalid session.
fn is_connection_failure(e: &XrdError) -> bool {
    (-110..=-101).contains(&e.code)
}

/// The code of a request that had no complete answer within its deadline (XrdCl's
/// `errOperationExpired`, negated as the shim does).
const EXPIRED: i32 = -206;

/// XrdCl's socket timeout (`errSocketTimeout`, negated): the idle timeout.
const SOCKET_TIMEOUT: i32 = -103;

/// XrdCl's failed connection (`errConnectionError`, negated): every attempt refused or timed out.
const CONNECTION_ERROR: i32 = -108;

/// XrdCl's message, with what it means in this crate's terms for a timeout or a failed connection.
fn explained(mut e: XrdError, p: &Patience) -> XrdError {
    if e.code == SOCKET_TIMEOUT {
        e.message = format!("{} (no byte for {} s: the idle timeout)", e.message, p.idle_s);
    } else if e.code == CONNECTION_ERROR {
        e.message = format!("{} (no connection in {} attempts, {} s connect timeout each)", e.message, 1 + u32::from(p.retries), p.connect_s);
    }
    e
}

/// Whole seconds of `d`, at least 1.
fn secs(d: Duration) -> u16 {
    u16::try_from(d.as_secs()).unwrap_or(u16::MAX).max(1)
}

/// Runs `f` on a thread of its own and waits for it at most `wait`. XrdCl bounds neither a
/// request whose answer trickles in nor its reconnections; past `wait` the thread is left to end
/// alone (it owns everything it touches: a handle, its own buffer) and the answer is an error
/// naming `deadline_s`.
fn bounded<T: Send + 'static>(wait: Duration, deadline_s: u16, f: impl FnOnce() -> Result<T, XrdError> + Send + 'static) -> Result<T, XrdError> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("rntuple-xrootd".into())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| XrdError { code: -1, message: format!("cannot start a thread for an XRootD request: {e}") })?;
    match rx.recv_timeout(wait) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Err(XrdError { code: EXPIRED, message: format!("no complete answer within {deadline_s} s (the connect and idle timeouts plus 1 s per MiB)") })
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(XrdError { code: -1, message: "an XRootD request's thread ended without an answer".into() }),
    }
}

/// A file opened for reading on an XRootD server.
///
/// Every request (the opening too) has a deadline, [`Patience::deadline_s`] of its size, however
/// the server behaves (silent, trickling, resetting). A request that fails on a broken connection
/// (a reset, or a server silent for [`Patience::idle_s`]) is sent again on a new connection, the
/// file opened anew, up to [`Patience::retries`] times within that deadline; XrdCl's own read
/// recovery, unbounded in time, is off. Answers land in a buffer of the request's own and are
/// copied out, so that a request given up on can end later without touching the caller's memory.
pub struct File {
    url: CString,
    handle: RwLock<Arc<imp::Handle>>,
    size: u64,
    patience: Patience,
    /// The deadline (s) a request missed, 0 while none has: XrdCl sends every request to a server
    /// on one connection, so the later ones would wait behind it; they fail at once instead.
    expired: AtomicU16,
}

impl File {
    /// Opens `url` for reading and asks for its size, with XrdCl's settings from `patience`
    /// (unless the environment sets them), within [`Patience::deadline_s`]`(0)`; each later
    /// request is bounded by [`Patience::deadline_s`] of its size.
    pub fn open(url: &str, patience: Patience) -> Result<File, XrdError> {
        let c = CString::new(url).map_err(|_| XrdError { code: -1, message: "the URL holds a NUL byte".into() })?;
        let deadline = patience.deadline_s(0);
        let (inner, size) = Self::open_bounded(&c, patience, Duration::from_secs(u64::from(deadline)), deadline)?;
        Ok(File { url: c, handle: RwLock::new(Arc::new(inner)), size, patience, expired: AtomicU16::new(0) })
    }

    fn open_bounded(url: &CString, patience: Patience, wait: Duration, deadline_s: u16) -> Result<(imp::Handle, u64), XrdError> {
        let url = url.clone();
        let timeout = secs(wait).saturating_add(1);
        bounded(wait, deadline_s, move || imp::open(&url, &patience, timeout)).map_err(|e| explained(e, &patience))
    }

    fn current(&self) -> Arc<imp::Handle> {
        match self.handle.read() {
            Ok(g) => Arc::clone(&g),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// Opens the file again after `failed` broke (unless another thread did already), within
    /// `wait`; the size must not have changed.
    fn reopen(&self, failed: &Arc<imp::Handle>, wait: Duration, deadline_s: u16) -> Result<(), XrdError> {
        let mut g = self.handle.write().unwrap_or_else(|poisoned| poisoned.into_inner());
        if !Arc::ptr_eq(&g, failed) {
            return Ok(());
        }
        let (h, size) = Self::open_bounded(&self.url, self.patience, wait, deadline_s)?;
        if size != self.size {
            return Err(XrdError {
                code: -1,
                message: format!("the file's size changed from {} to {size} bytes (reopened after a broken connection)", self.size),
            });
        }
        *g = Arc::new(h);
        Ok(())
    }

    /// Runs `op` (given the handle, XrdCl's timeout in seconds, how long to wait and the deadline)
    /// until it succeeds, fails otherwise than on a broken connection, or the retries or the
    /// deadline of a request of `bytes` bytes run out.
    fn with_retries<T>(&self, bytes: u64, mut op: impl FnMut(Arc<imp::Handle>, u16, Duration, u16) -> Result<T, XrdError>) -> Result<T, XrdError> {
        let deadline = self.patience.deadline_s(bytes);
        let budget = Duration::from_secs(u64::from(deadline));
        let start = Instant::now();
        let mut retries = 0u16;
        loop {
            let missed = self.expired.load(Ordering::Relaxed);
            if missed > 0 {
                return Err(XrdError {
                    code: EXPIRED,
                    message: format!("an earlier request had no complete answer within {missed} s: the connection is given up"),
                });
            }
            let h = self.current();
            let left = budget.saturating_sub(start.elapsed());
            let mut e = match op(Arc::clone(&h), secs(left).saturating_add(1), left, deadline) {
                Ok(v) => return Ok(v),
                Err(e) => e,
            };
            e = explained(e, &self.patience);
            if is_connection_failure(&e) || e.code == EXPIRED {
                h.mark_broken();
            }
            if e.code == EXPIRED {
                self.expired.store(deadline, Ordering::Relaxed);
            }
            let left = budget.saturating_sub(start.elapsed());
            if !is_connection_failure(&e) || retries >= self.patience.retries || left < Duration::from_millis(500) {
                let tried = if retries > 0 { format!(" (after {retries} retries on new connections)") } else { String::new() };
                return Err(XrdError { code: e.code, message: format!("{}{tried}", e.message) });
            }
            retries += 1;
            self.reopen(&h, left, deadline)
                .map_err(|r| XrdError { code: r.code, message: format!("{}; reopening the file after it: {}", e.message, r.message) })?;
        }
    }

    /// The file's size in bytes, as the server stated it at open.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Reads `buf.len()` bytes at `offset` (several requests when the buffer is larger than one
    /// request carries); a server that returns fewer bytes than asked before the end is an error.
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), XrdError> {
        let mut done = 0usize;
        while done < buf.len() {
            let want = (buf.len() - done).min(1 << 30);
            let at = offset + done as u64;
            let part = &mut buf[done..done + want];
            let got = self.with_retries(want as u64, |h, timeout, wait, deadline| {
                let (n, data) = bounded(wait, deadline, move || {
                    let mut data = vec![0u8; want];
                    let n = imp::read(&h, at, &mut data, timeout)?;
                    Ok((n, data))
                })?;
                part[..n].copy_from_slice(&data[..n]);
                Ok(n)
            })?;
            if got == 0 {
                return Err(XrdError {
                    code: -1,
                    message: format!("the server returned no bytes at offset {} ({} of {} read)", offset + done as u64, done, buf.len()),
                });
            }
            done += got;
        }
        Ok(())
    }

    /// One vector read: each `(offset, buffer)` chunk filled from the file in a single request. At
    /// most [`MAX_CHUNKS`] chunks of at most [`MAX_CHUNK`] bytes each; the server must return every
    /// byte asked for.
    pub fn read_chunks(&self, chunks: &mut [(u64, &mut [u8])]) -> Result<(), XrdError> {
        if chunks.len() > MAX_CHUNKS || chunks.iter().any(|(_, b)| b.len() > MAX_CHUNK as usize) {
            return Err(XrdError {
                code: -1,
                message: format!("a vector read of {} chunks beyond XRootD's limits ({MAX_CHUNKS} chunks of {MAX_CHUNK} bytes)", chunks.len()),
            });
        }
        if chunks.is_empty() {
            return Ok(());
        }
        let want: u64 = chunks.iter().map(|(_, b)| b.len() as u64).sum();
        let plan: Arc<Vec<(u64, usize)>> = Arc::new(chunks.iter().map(|(o, b)| (*o, b.len())).collect());
        let (got, data) = self.with_retries(want, |h, timeout, wait, deadline| {
            let plan = Arc::clone(&plan);
            bounded(wait, deadline, move || {
                // `want` is the sum of the caller's buffers' lengths: memory the caller holds already.
                let mut data = vec![0u8; want as usize];
                let mut rest = data.as_mut_slice();
                let mut parts = Vec::with_capacity(plan.len());
                for &(offset, n) in plan.iter() {
                    let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
                    rest = tail;
                    parts.push((offset, head));
                }
                let got = imp::readv(&h, &mut parts, timeout)?;
                Ok((got, data))
            })
        })?;
        if got != want {
            return Err(XrdError { code: -1, message: format!("a vector read of {} chunks returned {got} bytes, not the {want} asked for", chunks.len()) });
        }
        let mut at = 0usize;
        for (_, b) in chunks.iter_mut() {
            b.copy_from_slice(&data[at..at + b.len()]);
            at += b.len();
        }
        Ok(())
    }
}

#[cfg(xrdcl)]
mod imp {
    //! Calls into src/shim.cpp through the loaded shim ([`crate::loader`]). Invariants: a `Handle`
    //! holds a pointer the shim returned from `rxrd_open` and frees it once, in `Drop` (a handle
    //! exists only once the shim is loaded, which it stays); every buffer handed over is a live
    //! `&mut [u8]` of the length passed with it; XrdCl::File serializes its own state, so
    //! concurrent reads through one handle from several threads are allowed (what `Sync` claims).
    use super::{Patience, XrdError};
    use crate::client;
    use crate::loader::{Api, RxrdFile};
    use std::ffi::{c_int, c_void, CStr};
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The shim's file, the timeout of its close, and whether a request on it found the
    /// connection broken (its close then gets 1 s: nothing waits on a read-only file's close).
    pub struct Handle(*mut RxrdFile, u16, AtomicBool, &'static Api);

    impl Handle {
        pub fn mark_broken(&self) {
            self.2.store(true, Ordering::Relaxed);
        }
    }

    // SAFETY: see the module's invariants (XrdCl::File is thread-safe).
    unsafe impl Send for Handle {}
    unsafe impl Sync for Handle {}

    impl Drop for Handle {
        fn drop(&mut self) {
            let timeout = if self.2.load(Ordering::Relaxed) { 1 } else { self.1 };
            // SAFETY: the pointer came from rxrd_open and is freed only here.
            unsafe { (self.3.close)(self.0, timeout) }
        }
    }

    fn error(rc: c_int, err: &[u8]) -> XrdError {
        let message = CStr::from_bytes_until_nul(err).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        XrdError { code: rc, message: if message.is_empty() { format!("XrdCl failed (code {rc})") } else { message } }
    }

    pub fn open(url: &CStr, p: &Patience, timeout: u16) -> Result<(Handle, u64), XrdError> {
        let a = client()?;
        let (connect, idle) = (c_int::from(p.connect_s.max(1)), c_int::from(p.idle_s.max(1)));
        // SAFETY: plain integers; XrdCl's environment is created on first use and lives on.
        unsafe { (a.settings)(connect, 1 + c_int::from(p.retries), idle, connect, 1) };
        let (mut f, mut size, mut err) = (std::ptr::null_mut(), 0u64, [0u8; 1024]);
        // SAFETY: valid C string, out-pointers to locals, an error buffer of the length given.
        let rc = unsafe { (a.open)(url.as_ptr(), timeout, &mut f, &mut size, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 || f.is_null() {
            return Err(error(rc, &err));
        }
        Ok((Handle(f, p.deadline_s(0), AtomicBool::new(false), a), size))
    }

    pub fn read(h: &Handle, offset: u64, buf: &mut [u8], timeout: u16) -> Result<usize, XrdError> {
        let len = u32::try_from(buf.len()).map_err(|_| XrdError { code: -1, message: "one read of more than 4 GiB".into() })?;
        let (mut got, mut err) = (0u32, [0u8; 1024]);
        // SAFETY: `buf` is a live buffer of `len` bytes; the handle is open.
        let rc = unsafe { (h.3.read)(h.0, offset, len, buf.as_mut_ptr().cast(), &mut got, timeout, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok((got as usize).min(buf.len()))
    }

    pub fn readv(h: &Handle, chunks: &mut [(u64, &mut [u8])], timeout: u16) -> Result<u64, XrdError> {
        let offsets: Vec<u64> = chunks.iter().map(|(o, _)| *o).collect();
        let lengths: Vec<u32> = chunks.iter().map(|(_, b)| b.len() as u32).collect();
        let buffers: Vec<*mut c_void> = chunks.iter_mut().map(|(_, b)| b.as_mut_ptr().cast()).collect();
        let (mut got, mut err) = (0u64, [0u8; 1024]);
        // SAFETY: three arrays of `n` entries; each buffer is a live `&mut [u8]` of its length
        // (checked <= MAX_CHUNK by the caller, so the u32 lengths are exact).
        let rc = unsafe {
            (h.3.readv)(h.0, chunks.len() as u32, offsets.as_ptr(), lengths.as_ptr(), buffers.as_ptr(), timeout, &mut got, err.as_mut_ptr().cast(), err.len())
        };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok(got)
    }
}

#[cfg(not(xrdcl))]
mod imp {
    //! Without XrdCl: every open says so.
    use super::{Patience, XrdError};
    use std::ffi::CStr;

    pub struct Handle;

    impl Handle {
        pub fn mark_broken(&self) {}
    }

    fn absent() -> XrdError {
        XrdError {
            code: -1,
            message: "this build has no XRootD client (XrdCl's headers were not found when it was built: install libxrootd-client-dev and rebuild)".into(),
        }
    }

    pub fn open(_: &CStr, _: &Patience, _: u16) -> Result<(Handle, u64), XrdError> {
        Err(absent())
    }

    pub fn read(_: &Handle, _: u64, _: &mut [u8], _: u16) -> Result<usize, XrdError> {
        Err(absent())
    }

    pub fn readv(_: &Handle, _: &mut [(u64, &mut [u8])], _: u16) -> Result<u64, XrdError> {
        Err(absent())
    }
}
