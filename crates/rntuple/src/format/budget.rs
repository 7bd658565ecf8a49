//! The process-wide read budget: the most bytes one allocation of reading may take (a page
//! buffer, a decompression target, a column or Arrow buffer sized from what a file declares).
//! A request above it is an error naming what and how much, raised before anything is
//! allocated. The default is no limit: every size a file declares is already checked against
//! what the file backs (stored bytes, compression block headers, element sizes), so the budget
//! is for a user who wants a bound on legitimate but large reads (a column of 10^9 doubles).
//!
//! ```
//! rntuple::set_memory_limit(Some(512 << 20));
//! assert_eq!(rntuple::memory_limit(), Some(512 << 20));
//! let e = rntuple::format::budget::check(3 << 30, || "reading cluster 3 of field 'x'".into()).unwrap_err();
//! assert_eq!(e.to_string(), "unsupported: reading cluster 3 of field 'x' needs 3.0 GiB, over the memory limit of 512.0 MiB");
//! rntuple::set_memory_limit(None);
//! ```

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest uncompressed page read (a page is decompressed whole) and written. ROOT writes pages of
/// at most 1 MiB by default (64 times below this bound); the format allows up to 2^31-1 elements
/// (16 GiB of doubles), which a small file of valid compression blocks of zeros can claim.
pub const MAX_PAGE_BYTES: u64 = 64 << 20;

/// The limit in bytes; `u64::MAX`: none.
static LIMIT: AtomicU64 = AtomicU64::new(u64::MAX);

/// Sets the process-wide read budget in bytes (`None`: no limit, the default).
///
/// ```
/// rntuple::set_memory_limit(Some(1 << 30));
/// assert_eq!(rntuple::memory_limit(), Some(1 << 30));
/// rntuple::set_memory_limit(None);
/// assert_eq!(rntuple::memory_limit(), None);
/// ```
pub fn set_memory_limit(bytes: Option<u64>) {
    LIMIT.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The process-wide read budget in bytes, `None` when there is none.
///
/// ```
/// let limit: Option<u64> = rntuple::memory_limit(); // None unless set
/// # let _ = limit;
/// ```
pub fn memory_limit() -> Option<u64> {
    match LIMIT.load(Ordering::Relaxed) {
        u64::MAX => None,
        n => Some(n),
    }
}

/// Checks an allocation of `bytes` against the budget; `what` names it ("reading cluster 3 of
/// field 'x'") in the error.
///
/// ```
/// rntuple::format::budget::check(1 << 10, || "a page".into())?;
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn check(bytes: u64, what: impl FnOnce() -> String) -> Result<()> {
    let limit = LIMIT.load(Ordering::Relaxed);
    if bytes > limit {
        return Err(Error::Unsupported(format!("{} needs {}, over the memory limit of {}", what(), human(bytes), human(limit))));
    }
    Ok(())
}

/// `n` bytes as "3.2 GiB", "512.0 MiB", "100 B".
///
/// ```
/// use rntuple::format::budget::human;
/// assert_eq!((human(100), human(512 << 20), human(3_435_973_837)), ("100 B".into(), "512.0 MiB".into(), "3.2 GiB".into()));
/// ```
pub fn human(n: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Parses a size as the command line gives it: a number of bytes with an optional suffix K, M,
/// G or T (powers of 1024; "KiB", "MB" and the like are read the same way).
///
/// ```
/// use rntuple::format::budget::parse_size;
/// assert_eq!(parse_size("512M")?, 512 << 20);
/// assert_eq!(parse_size("2G")?, 2 << 30);
/// assert_eq!(parse_size("1000")?, 1000);
/// assert!(parse_size("lots").is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(Error::Invalid(format!("size '{s}': unknown unit '{unit}' (use K, M, G or T)"))),
    };
    let v: f64 = num.parse().map_err(|_| Error::Invalid(format!("size '{s}' is not a number of bytes (e.g. 512M, 2G)")))?;
    let bytes = v * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(Error::Invalid(format!("size '{s}' is out of range")));
    }
    Ok(bytes as u64)
}
