//! Where a location leads: a path opens as a local file, an `http(s)://` or `s3://` URL as a
//! remote source (the `remote` feature). The one place that tells URLs from paths.

#[cfg(feature = "remote")]
use super::remote::RemoteSource;
use super::source::{FileSource, ReadAt};
#[cfg(not(feature = "remote"))]
use crate::error::Error;
use crate::error::Result;
use std::path::Path;
use std::sync::Arc;

/// Whether `location` is a URL read remotely (`http://`, `https://`, `s3://`) rather than a
/// path.
///
/// ```
/// use rntuple::storage::location::is_url;
/// assert!(is_url("https://host/f.root") && is_url("s3://bucket/f.root"));
/// assert!(!is_url("/data/f.root") && !is_url("http://"));
/// ```
pub fn is_url(location: &str) -> bool {
    ["http://", "https://", "s3://"].iter().any(|p| location.len() > p.len() && location.get(..p.len()).is_some_and(|s| s.eq_ignore_ascii_case(p)))
}

/// Opens a path or a URL (`http://`, `https://`, `s3://bucket/key`; see
/// `storage::remote::RemoteSource`) as a byte source.
pub fn open_location(location: impl AsRef<Path>) -> Result<Arc<dyn ReadAt>> {
    let p = location.as_ref();
    match p.to_str() {
        Some(s) if is_url(s) => open_url(s),
        _ => Ok(Arc::new(FileSource::open(p)?)),
    }
}

#[cfg(feature = "remote")]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Ok(Arc::new(RemoteSource::open(url)?))
}

#[cfg(not(feature = "remote"))]
fn open_url(url: &str) -> Result<Arc<dyn ReadAt>> {
    Err(Error::Unsupported(format!("{url}: this build of rntuple reads local files only (the `remote` feature is off)")))
}
