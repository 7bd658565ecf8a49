//! Remote storage: byte sources over HTTP(S) and S3 (`source`, through `object_store`, every
//! answer checked by `http_checks`) and XRootD (`xrootd`, through XrdCl), the head and tail of a
//! remote file read once (`edges`), how patient remote reads are (`remote_options`), grid
//! credentials (`credentials`, `http_credentials`), and outputs at a URL (`remote_output`):
//! staged in a local file and uploaded atomically to S3 (`s3_upload`, streaming with
//! `s3_stream`), XRootD (`xrootd_upload`, `xrootd_stream`) or a WebDAV server (`webdav_upload`
//! over `webdav_client`). HTTP and S3 need the `remote` feature, XRootD the `xrootd` feature;
//! without them, URLs are refused with a message.
//!
//! Uses `storage::local` (the `ReadAt` trait its sources implement, the output file a remote
//! output is staged in, the interrupt registry, the upload window); `local` and
//! `storage::container` never use it.

#[cfg(any(feature = "remote", feature = "xrootd"))]
pub(crate) mod edges;
#[cfg(feature = "remote")]
pub(crate) mod http_checks;
#[cfg(feature = "remote")]
pub(crate) mod http_credentials;
pub(crate) mod remote_output;
#[cfg(feature = "remote")]
pub(crate) mod s3_stream;
#[cfg(feature = "remote")]
pub(crate) mod s3_upload;
#[cfg(feature = "remote")]
pub(crate) mod webdav_client;
#[cfg(feature = "remote")]
pub(crate) mod webdav_upload;
#[cfg(feature = "xrootd")]
pub(crate) mod xrootd_stream;
#[cfg(feature = "xrootd")]
pub(crate) mod xrootd_upload;
crate::unstable_mod! {
    /// Grid credentials (WLCG bearer-token discovery, X.509 proxy, CA directory).
    credentials
}
crate::unstable_mod! {
    remote_options
}
#[cfg(feature = "remote")]
crate::unstable_mod! {
    source
}
#[cfg(feature = "xrootd")]
crate::unstable_mod! {
    /// XRootD sources (`root://`) through XrdCl.
    xrootd
}
