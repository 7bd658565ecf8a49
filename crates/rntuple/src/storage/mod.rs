//! Storage layer: where bytes come from and go to. Byte sources (a local file, memory; HTTP and S3
//! in `remote`) behind [`ReadAt`]; the ROOT file container (keys, directories, anchors,
//! blobs, StreamerInfo) and its writer; the file sink and positioned writes of reserved ranges.
//! Uses the format layer's pure codecs (anchor, compression framing); knows no fields or types.
//!
//! Public: the byte sources ([`ReadAt`]: implement it to read from anywhere; [`FileSource`],
//! [`MemSource`]), the remote-read settings ([`RemoteOptions`]) and the clean-up of outputs in
//! the making for an interrupted program ([`clean_up_pending_outputs`]); the rest is internal
//! (public, module by module, with the `unstable` feature). Outputs go to local paths or, staged
//! and uploaded atomically at the commit, to `s3://`, `root://` and (WebDAV) `http(s)://` URLs.
//!
//! ```
//! use std::sync::Arc;
//! use rntuple::storage::FileSource;
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-storage-{}.root", std::process::id()));
//! # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
//! # w.commit()?;
//! let f = rntuple::RNTupleFile::from_source(Arc::new(FileSource::open(&path)?))?;
//! assert_eq!(f.names(), ["Events"]);
//! let (requests, bytes) = f.io_counts().unwrap(); // a local file counts its reads
//! assert!(requests > 0 && bytes > 0);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod file_sink;
#[cfg(feature = "remote")]
pub(crate) mod http_checks;
#[cfg(feature = "remote")]
pub(crate) mod http_credentials;
pub(crate) mod interrupt;
pub(crate) mod kernel_read_ahead;
pub(crate) mod remote_output;
#[cfg(feature = "remote")]
pub(crate) mod s3_stream;
#[cfg(feature = "remote")]
pub(crate) mod s3_upload;
pub(crate) mod upload_window;
#[cfg(feature = "remote")]
pub(crate) mod webdav_client;
#[cfg(feature = "remote")]
pub(crate) mod webdav_upload;
#[cfg(feature = "xrootd")]
pub(crate) mod xrootd_stream;
#[cfg(feature = "xrootd")]
pub(crate) mod xrootd_upload;
crate::unstable_mod! {
    mapped
}
pub(crate) mod positioned;
#[cfg(feature = "remote")]
crate::unstable_mod! {
    remote
}
crate::unstable_mod! {
    remote_options
}
crate::unstable_mod! {
    source
}
crate::unstable_mod! {
    coalesce
}
crate::unstable_mod! {
    /// Grid credentials (WLCG bearer-token discovery, X.509 proxy, CA directory).
    credentials
}
#[cfg(any(feature = "remote", feature = "xrootd"))]
pub(crate) mod edges;
#[cfg(feature = "xrootd")]
crate::unstable_mod! {
    /// XRootD sources (`root://`) through XrdCl.
    xrootd
}
crate::unstable_mod! {
    key_plan
}
crate::unstable_mod! {
    location
}
crate::unstable_mod! {
    output
}
crate::unstable_mod! {
    streamer_info
}
crate::unstable_mod! {
    /// Reading the StreamerInfo record (internal).
    streamer_info_read
}
crate::unstable_mod! {
    /// Reading `TBufferFile`'s streamed bytes (internal).
    tbuffer
}
crate::unstable_mod! {
    tfile
}
crate::unstable_mod! {
    tfile_dirs
}
crate::unstable_mod! {
    tfile_write
}

pub use interrupt::clean_up_pending_outputs;
pub use remote_options::RemoteOptions;
pub use source::{FileSource, MemSource, RangeSink, ReadAt, SourceCounters};
