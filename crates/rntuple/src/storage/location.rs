//! Where a location leads: a path opens as a local file, an `http(s)://` or `s3://` URL as a
//! remote source (the `remote` feature), a `root://` URL as an XRootD source (the `xrootd`
//! feature). The one place that tells URLs from paths.

#[cfg(feature = "remote")]
use super::remote::RemoteSource;
use super::source::{FileSource, ReadAt};
#[cfg(any(not(feature = "remote"), not(feature = "xrootd")))]
use crate::error::Error;
use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// The URL schemes read remotely: HTTP(S) and S3 (`remote`), XRootD (`xrootd`).
pub const URL_SCHEMES: [&str; 7] = ["http://", "https://", "s3://", "root://", "roots://", "xroot://", "xroots://"];

/// The scheme of `location` (one of [`URL_SCHEMES`], lower case) when it is a URL read remotely
/// rather than a path.
fn scheme(location: &str) -> Option<&'static str> {
    URL_SCHEMES.iter().copied().find(|p| location.len() > p.len() && location.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// Whether `location` is a URL read remotely (`http://`, `https://`, `s3://`, `root://`) rather
/// than a path.
///
/// ```
/// use rntuple::storage::location::is_url;
/// assert!(is_url("https://host/f.root") && is_url("s3://bucket/f.root") && is_url("root://eos.cern.ch//eos/f.root"));
/// assert!(!is_url("/data/f.root") && !is_url("http://"));
/// ```
pub fn is_url(location: &str) -> bool {
    scheme(location).is_some()
}

/// Opens a path or a URL (`http://`, `https://`, `s3://bucket/key`, see
/// `storage::remote::RemoteSource`; `root://host//path`, see `storage::xrootd::XrootdSource`) as
/// a byte source.
pub fn open_location(location: impl AsRef<Path>) -> Result<Arc<dyn ReadAt>> {
    let p = location.as_ref();
    match p.to_str() {
        Some(s) if matches!(scheme(s), Some("root://" | "roots://" | "xroot://" | "xroots://")) => open_xrootd(s),
        Some(s) if is_url(s) => open_url(s),
        _ => Ok(Arc::new(FileSource::open(p)?)),
    }
}

#[cfg(feature = "remote")]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Ok(Arc::new(RemoteSource::open(url)?))
}

#[cfg(feature = "xrootd")]
fn open_xrootd(url: &str) -> Result<Arc<dyn ReadAt>> {
    Ok(Arc::new(super::xrootd::XrootdSource::open(url)?))
}

#[cfg(not(feature = "xrootd"))]
fn open_xrootd(url: &str) -> Result<Arc<dyn ReadAt>> {
    Err(Error::Unsupported(format!("{url}: this build of rntuple reads no root:// URLs (the `xrootd` feature is off)")))
}

#[cfg(not(feature = "remote"))]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Err(Error::Unsupported(format!("{url}: this build of rntuple reads local files only (the `remote` feature is off)")))
}
