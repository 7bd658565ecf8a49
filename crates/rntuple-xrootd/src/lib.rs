//! XRootD (`root://`, `roots://`) reads through XRootD's own client library, XrdCl: open a file,
//! its size, positioned reads and vector reads (`kXR_readv`: many chunks in one request). XrdCl
//! does the protocol's work that a hand-written client would have to redo: redirections (EOS,
//! dCache, federations), authentication (WLCG tokens from `BEARER_TOKEN`, `BEARER_TOKEN_FILE`,
//! `$XDG_RUNTIME_DIR/bt_u<uid>`, `/tmp/bt_u<uid>`; X.509 proxies; Kerberos), retries and its
//! `XRD_*` settings.
//!
//! Timeouts: XrdCl's own defaults suit a batch job more than a user at a terminal (an unreachable
//! host is retried for 10 minutes, a request may take 30). Unless the environment sets them, this
//! crate uses a connection window of [`CONNECTION_WINDOW_S`] s, [`CONNECTION_RETRY`] attempts and a
//! request timeout of [`REQUEST_TIMEOUT_S`] s (`XRD_CONNECTIONWINDOW`, `XRD_CONNECTIONRETRY`,
//! `XRD_REQUESTTIMEOUT` override them, as for every XrdCl program).
//!
//! The client is compiled in when XrdCl's headers were found at build time (see `build.rs`);
//! otherwise [`available`] is false and [`File::open`] says so.
//!
//! ```
//! use rntuple_xrootd::{File, MAX_CHUNK};
//! assert!(MAX_CHUNK > 2_000_000);
//! // A URL with a NUL byte is refused before anything is sent.
//! let e = File::open("root://host//a\0b.root", 1).err().map(|e| e.to_string()).unwrap_or_default();
//! assert!(e.contains("NUL"));
//! ```

use std::ffi::CString;
use std::fmt;

/// Most bytes of one chunk of a vector read (XrdCl's and the server's default limit).
pub const MAX_CHUNK: u32 = 2_097_136;
/// Most chunks of one vector read (XrdCl's and the server's default limit).
pub const MAX_CHUNKS: usize = 1024;

/// Seconds within which a connection must be made before a retry (XrdCl's `ConnectionWindow`).
pub const CONNECTION_WINDOW_S: i32 = 15;
/// Connection attempts (XrdCl's `ConnectionRetry`).
pub const CONNECTION_RETRY: i32 = 2;
/// Seconds a request may take (XrdCl's `RequestTimeout`).
pub const REQUEST_TIMEOUT_S: i32 = 300;

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

/// Whether this build has the XRootD client.
pub fn available() -> bool {
    cfg!(xrdcl)
}

/// A file opened for reading on an XRootD server.
pub struct File {
    inner: imp::Handle,
    size: u64,
    timeout: u16,
}

impl File {
    /// Opens `url` for reading and asks for its size; `timeout_s` bounds each request (0: XrdCl's
    /// default, `XRD_REQUESTTIMEOUT`, 1800 s unless set).
    pub fn open(url: &str, timeout_s: u16) -> Result<File, XrdError> {
        let c = CString::new(url).map_err(|_| XrdError { code: -1, message: "the URL holds a NUL byte".into() })?;
        let (inner, size) = imp::open(&c, timeout_s)?;
        Ok(File { inner, size, timeout: timeout_s })
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
            let got = imp::read(&self.inner, offset + done as u64, &mut buf[done..done + want], self.timeout)?;
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
        let got = imp::readv(&self.inner, chunks, self.timeout)?;
        if got != want {
            return Err(XrdError { code: -1, message: format!("a vector read of {} chunks returned {got} bytes, not the {want} asked for", chunks.len()) });
        }
        Ok(())
    }
}

#[cfg(xrdcl)]
mod imp {
    //! The one unsafe layer: calls into src/shim.cpp. Invariants: a `Handle` holds a pointer the
    //! shim returned from `rxrd_open` and frees it once, in `Drop`; every buffer handed over is a
    //! live `&mut [u8]` of the length passed with it; XrdCl::File serializes its own state, so
    //! concurrent reads through one handle from several threads are allowed (what `Sync` claims).
    use super::XrdError;
    use std::ffi::{c_char, c_int, c_void, CStr};

    #[repr(C)]
    struct RxrdFile {
        _private: [u8; 0],
    }

    unsafe extern "C" {
        fn rxrd_defaults(connection_window: c_int, connection_retry: c_int, request_timeout: c_int);
        fn rxrd_open(url: *const c_char, timeout: u16, out: *mut *mut RxrdFile, size: *mut u64, err: *mut c_char, errlen: usize) -> c_int;
        fn rxrd_read(f: *mut RxrdFile, offset: u64, len: u32, buf: *mut c_void, got: *mut u32, timeout: u16, err: *mut c_char, errlen: usize) -> c_int;
        fn rxrd_readv(
            f: *mut RxrdFile,
            n: u32,
            offsets: *const u64,
            lengths: *const u32,
            buffers: *const *mut c_void,
            timeout: u16,
            got: *mut u64,
            err: *mut c_char,
            errlen: usize,
        ) -> c_int;
        fn rxrd_close(f: *mut RxrdFile);
    }

    pub struct Handle(*mut RxrdFile);

    // SAFETY: see the module's invariants (XrdCl::File is thread-safe).
    unsafe impl Send for Handle {}
    unsafe impl Sync for Handle {}

    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: the pointer came from rxrd_open and is freed only here.
            unsafe { rxrd_close(self.0) }
        }
    }

    fn error(rc: c_int, err: &[u8]) -> XrdError {
        let message = CStr::from_bytes_until_nul(err).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        XrdError { code: rc, message: if message.is_empty() { format!("XrdCl failed (code {rc})") } else { message } }
    }

    pub fn open(url: &CStr, timeout: u16) -> Result<(Handle, u64), XrdError> {
        static DEFAULTS: std::sync::Once = std::sync::Once::new();
        // SAFETY: plain integers; XrdCl's environment is created on first use and lives on.
        DEFAULTS.call_once(|| unsafe { rxrd_defaults(super::CONNECTION_WINDOW_S, super::CONNECTION_RETRY, super::REQUEST_TIMEOUT_S) });
        let (mut f, mut size, mut err) = (std::ptr::null_mut(), 0u64, [0u8; 1024]);
        // SAFETY: valid C string, out-pointers to locals, an error buffer of the length given.
        let rc = unsafe { rxrd_open(url.as_ptr(), timeout, &mut f, &mut size, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 || f.is_null() {
            return Err(error(rc, &err));
        }
        Ok((Handle(f), size))
    }

    pub fn read(h: &Handle, offset: u64, buf: &mut [u8], timeout: u16) -> Result<usize, XrdError> {
        let len = u32::try_from(buf.len()).map_err(|_| XrdError { code: -1, message: "one read of more than 4 GiB".into() })?;
        let (mut got, mut err) = (0u32, [0u8; 1024]);
        // SAFETY: `buf` is a live buffer of `len` bytes; the handle is open.
        let rc = unsafe { rxrd_read(h.0, offset, len, buf.as_mut_ptr().cast(), &mut got, timeout, err.as_mut_ptr().cast(), err.len()) };
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
            rxrd_readv(h.0, chunks.len() as u32, offsets.as_ptr(), lengths.as_ptr(), buffers.as_ptr(), timeout, &mut got, err.as_mut_ptr().cast(), err.len())
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
    use super::XrdError;
    use std::ffi::CStr;

    pub struct Handle;

    fn absent() -> XrdError {
        XrdError {
            code: -1,
            message: "this build has no XRootD client (XrdCl's headers were not found when it was built: install libxrootd-client-dev and rebuild)".into(),
        }
    }

    pub fn open(_: &CStr, _: u16) -> Result<(Handle, u64), XrdError> {
        Err(absent())
    }

    pub fn read(_: &Handle, _: u64, _: &mut [u8], _: u16) -> Result<usize, XrdError> {
        Err(absent())
    }

    pub fn readv(_: &Handle, _: &mut [(u64, &mut [u8])], _: u16) -> Result<u64, XrdError> {
        Err(absent())
    }
}
