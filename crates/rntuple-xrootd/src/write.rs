//! Writing through XrdCl: a new file written at offsets and closed (synced) with its status
//! checked, and the file system's `mv` and `rm`: what an atomic upload needs (write under a
//! temporary name beside the destination, `mv` it over the destination at the commit, `rm` it
//! on failure). Every request is given XrdCl's timeout of [`Patience::deadline_s`] of its size.
//!
//! ```
//! use rntuple_xrootd::{write::NewFile, Patience};
//! // A URL with a NUL byte is refused before anything is sent.
//! let e = NewFile::create("root://host//a\0b.root", Patience::default()).err().map(|e| e.to_string()).unwrap_or_default();
//! assert!(e.contains("NUL"));
//! ```

use crate::{Patience, XrdError};
use std::ffi::CString;

fn c_url(url: &str) -> Result<CString, XrdError> {
    CString::new(url).map_err(|_| XrdError { code: -1, message: "the URL holds a NUL byte".into() })
}

/// A file created on an XRootD server and being written.
pub struct NewFile {
    handle: Option<imp::WHandle>,
    patience: Patience,
}

impl NewFile {
    /// Creates `url`, which must not exist yet (XrdCl's `OpenFlags::New`), for writing.
    pub fn create(url: &str, patience: Patience) -> Result<NewFile, XrdError> {
        let c = c_url(url)?;
        let handle = imp::create(&c, &patience, patience.deadline_s(0))?;
        Ok(NewFile { handle: Some(handle), patience })
    }

    /// Writes `buf` at `offset` (in requests of at most 64 MiB).
    pub fn write_at(&mut self, offset: u64, buf: &[u8]) -> Result<(), XrdError> {
        let h = self.handle.as_ref().ok_or_else(|| XrdError { code: -1, message: "the file is closed".into() })?;
        for (k, chunk) in buf.chunks(64 << 20).enumerate() {
            imp::write(h, offset + (k as u64) * (64 << 20), chunk, self.patience.deadline_s(chunk.len() as u64))?;
        }
        Ok(())
    }

    /// Syncs and closes the file; its bytes are on the server when this returns `Ok`.
    pub fn close(mut self) -> Result<(), XrdError> {
        match self.handle.take() {
            Some(h) => imp::close(h, self.patience.deadline_s(0)),
            None => Ok(()),
        }
    }
}

impl Drop for NewFile {
    /// A file dropped unclosed is closed, its status ignored (the caller removes it).
    fn drop(&mut self) {
        if let Some(h) = self.handle.take() {
            let _ = imp::close(h, self.patience.deadline_s(0));
        }
    }
}

/// Renames `from` to `to` on the server of `from` (both `root://` URLs of one server).
pub fn mv(from: &str, to: &str, patience: Patience) -> Result<(), XrdError> {
    imp::mv(&c_url(from)?, &c_url(to)?, patience.deadline_s(0))
}

/// Removes the file `url`.
pub fn rm(url: &str, patience: Patience) -> Result<(), XrdError> {
    imp::rm(&c_url(url)?, patience.deadline_s(0))
}

#[cfg(xrdcl)]
mod imp {
    //! Calls into src/shim_write.cpp through the loaded shim ([`crate::loader`]). Invariants: a
    //! `WHandle` holds a pointer the shim returned from `rxrd_create`, freed once by `rxrd_wclose`
    //! (which `close` consumes the handle for); buffers are live slices of the length passed.
    use crate::client;
    use crate::loader::{Api, RxrdWFile};
    use crate::{Patience, XrdError};
    use std::ffi::{c_int, CStr};

    pub struct WHandle(*mut RxrdWFile, &'static Api);

    // SAFETY: XrdCl::File serializes its own state; the handle is used by one owner at a time.
    unsafe impl Send for WHandle {}

    fn error(rc: c_int, err: &[u8]) -> XrdError {
        let message = CStr::from_bytes_until_nul(err).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        XrdError { code: rc, message: if message.is_empty() { format!("XrdCl failed (code {rc})") } else { message } }
    }

    pub fn create(url: &CStr, p: &Patience, timeout: u16) -> Result<WHandle, XrdError> {
        let a = client()?;
        let (connect, idle) = (c_int::from(p.connect_s.max(1)), c_int::from(p.idle_s.max(1)));
        // SAFETY: plain integers.
        unsafe { (a.settings)(connect, 1 + c_int::from(p.retries), idle, connect, 1) };
        let (mut f, mut err) = (std::ptr::null_mut(), [0u8; 1024]);
        // SAFETY: a valid C string, an out-pointer to a local, an error buffer of the length given.
        let rc = unsafe { (a.create)(url.as_ptr(), timeout, &mut f, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 || f.is_null() {
            return Err(error(rc, &err));
        }
        Ok(WHandle(f, a))
    }

    pub fn write(h: &WHandle, offset: u64, buf: &[u8], timeout: u16) -> Result<(), XrdError> {
        let len = u32::try_from(buf.len()).map_err(|_| XrdError { code: -1, message: "one write of more than 4 GiB".into() })?;
        let mut err = [0u8; 1024];
        // SAFETY: `buf` is live for `len` bytes; the handle is open.
        let rc = unsafe { (h.1.write)(h.0, offset, len, buf.as_ptr().cast(), timeout, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok(())
    }

    pub fn close(h: WHandle, timeout: u16) -> Result<(), XrdError> {
        let mut err = [0u8; 1024];
        // SAFETY: the pointer came from rxrd_create; the handle is consumed, so it is freed once.
        let rc = unsafe { (h.1.wclose)(h.0, timeout, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok(())
    }

    pub fn mv(from: &CStr, to: &CStr, timeout: u16) -> Result<(), XrdError> {
        let a = client()?;
        let mut err = [0u8; 1024];
        // SAFETY: valid C strings and an error buffer of the length given.
        let rc = unsafe { (a.mv)(from.as_ptr(), to.as_ptr(), timeout, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok(())
    }

    pub fn rm(url: &CStr, timeout: u16) -> Result<(), XrdError> {
        let a = client()?;
        let mut err = [0u8; 1024];
        // SAFETY: a valid C string and an error buffer of the length given.
        let rc = unsafe { (a.rm)(url.as_ptr(), timeout, err.as_mut_ptr().cast(), err.len()) };
        if rc != 0 {
            return Err(error(rc, &err));
        }
        Ok(())
    }
}

#[cfg(not(xrdcl))]
mod imp {
    //! Without XrdCl: every call says so.
    use crate::{Patience, XrdError};
    use std::ffi::CStr;

    pub struct WHandle;

    fn absent() -> XrdError {
        XrdError {
            code: -1,
            message: "this build has no XRootD client (XrdCl's headers were not found when it was built: install libxrootd-client-dev and rebuild)".into(),
        }
    }

    pub fn create(_: &CStr, _: &Patience, _: u16) -> Result<WHandle, XrdError> {
        Err(absent())
    }

    pub fn write(_: &WHandle, _: u64, _: &[u8], _: u16) -> Result<(), XrdError> {
        Err(absent())
    }

    pub fn close(_: WHandle, _: u16) -> Result<(), XrdError> {
        Err(absent())
    }

    pub fn mv(_: &CStr, _: &CStr, _: u16) -> Result<(), XrdError> {
        Err(absent())
    }

    pub fn rm(_: &CStr, _: u16) -> Result<(), XrdError> {
        Err(absent())
    }
}
