//! Strings and pointers across the boundary: NUL-terminated UTF-8 in (checked), strings out into
//! the caller's buffer (snprintf-like), and out-pointers written only when not null.

use crate::status::{CError, CResult, RNTUPLE_ERR_BUFFER};
use std::ffi::{c_char, CStr};

/// A borrowed C string argument as `&str`; null or invalid UTF-8 is an error naming the argument.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that outlives the returned borrow.
pub unsafe fn str_arg<'a>(p: *const c_char, arg: &str) -> CResult<&'a str> {
    if p.is_null() {
        return Err(CError::null(arg));
    }
    // SAFETY: non-null, NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().map_err(|_| CError::invalid(format!("'{arg}' is not valid UTF-8")))
}

/// An optional C string argument: null is `None`.
///
/// # Safety
/// As [`str_arg`].
pub unsafe fn opt_str_arg<'a>(p: *const c_char, arg: &str) -> CResult<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: as the caller's contract.
        unsafe { str_arg(p, arg) }.map(Some)
    }
}

/// An array of `n` C strings (`names[0..n]`); `names` may be null only when `n` is 0.
///
/// # Safety
/// `names` is null or points to `n` pointers, each as [`str_arg`] takes.
pub unsafe fn str_list_arg<'a>(names: *const *const c_char, n: usize, arg: &str) -> CResult<Vec<&'a str>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    if names.is_null() {
        return Err(CError::null(arg));
    }
    // SAFETY: `names` points to `n` pointers (the caller's contract).
    let ptrs = unsafe { std::slice::from_raw_parts(names, n) };
    ptrs.iter().enumerate().map(|(i, &p)| unsafe { str_arg(p, &format!("{arg}[{i}]")) }).collect()
}

/// Writes `s` into `buf` (capacity `cap` bytes, NUL included) and its length (without the NUL)
/// into `*len` when `len` is not null. When it does not fit, `buf` holds as much as fits (cut at
/// a character boundary, NUL-terminated when `cap > 0`) and the result is `RNTUPLE_ERR_BUFFER`.
///
/// # Safety
/// `buf` is null (then `cap` must be 0) or valid for `cap` bytes; `len` is null or valid.
pub unsafe fn write_str(s: &str, buf: *mut c_char, cap: usize, len: *mut usize) -> CResult<()> {
    if !len.is_null() {
        // SAFETY: valid when not null (the caller's contract).
        unsafe { *len = s.len() };
    }
    if cap > 0 && buf.is_null() {
        return Err(CError::null("buf"));
    }
    let mut n = s.len().min(cap.saturating_sub(1));
    while !s.is_char_boundary(n) {
        n -= 1;
    }
    if cap > 0 {
        // SAFETY: `buf` is valid for `cap > n` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n);
            *buf.add(n) = 0;
        }
    }
    if s.len() >= cap {
        return Err(CError::new(RNTUPLE_ERR_BUFFER, format!("a buffer of {cap} bytes is too small for {} bytes and the NUL", s.len())));
    }
    Ok(())
}

/// Writes `v` through `out`, which must not be null.
///
/// # Safety
/// `out` is null or valid for a write of `T`.
pub unsafe fn put<T>(out: *mut T, v: T, arg: &str) -> CResult<()> {
    if out.is_null() {
        return Err(CError::null(arg));
    }
    // SAFETY: not null, valid (the caller's contract).
    unsafe { out.write(v) };
    Ok(())
}

/// Checks that an out-pointer is not null before any work is done.
pub fn need<T>(out: *mut T, arg: &str) -> CResult<()> {
    if out.is_null() {
        Err(CError::null(arg))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_out_fit_or_report_their_length() {
        let mut buf = [0x55 as c_char; 8];
        let mut len = 0usize;
        unsafe { write_str("muons", buf.as_mut_ptr(), buf.len(), &mut len) }.unwrap();
        assert_eq!(len, 5);
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), "muons");
        let e = unsafe { write_str("électron", buf.as_mut_ptr(), 3, &mut len) }.unwrap_err();
        assert_eq!((e.code, len), (RNTUPLE_ERR_BUFFER, 9));
        // 'é' is two bytes: only it fits in 3 with the NUL.
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap(), "é");
        assert_eq!(unsafe { write_str("x", std::ptr::null_mut(), 0, &mut len) }.unwrap_err().code, RNTUPLE_ERR_BUFFER);
        assert_eq!(len, 1);
    }

    #[test]
    fn strings_in_are_checked() {
        assert_eq!(unsafe { str_arg(std::ptr::null(), "path") }.unwrap_err().code, crate::status::RNTUPLE_ERR_NULL_POINTER);
        let bad = [0xffu8 as c_char, 0];
        assert!(unsafe { str_arg(bad.as_ptr(), "path") }.unwrap_err().message.contains("UTF-8"));
        assert!(unsafe { str_list_arg(std::ptr::null(), 2, "fields") }.is_err());
        assert!(unsafe { str_list_arg(std::ptr::null(), 0, "fields") }.unwrap().is_empty());
    }
}
