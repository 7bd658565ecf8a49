//! Storage layer: where bytes come from and go to. Uses the format layer's pure codecs (anchor,
//! compression framing); knows no fields or types. Three rooms, lowest first, each using only
//! the rooms before it:
//!
//! - `local`: local I/O: the byte sources behind [`ReadAt`] (a local file, memory, a memory
//!   map), request coalescing, and outputs that are never half-written (atomic replacement,
//!   checkpoints, the registry of outputs in the making for an interrupt); an output staged for
//!   an upload holds the upload as a trait object that `remote` makes. Uses no other room.
//! - `container`: the ROOT file format: the TFile reader and writer (keys, directories,
//!   anchors, blobs, the free list), StreamerInfo records and `TBufferFile`'s streamed bytes, key
//!   plans, positioned writes of reserved ranges and the file sink. Uses `local` (byte sources,
//!   the output file it writes into).
//! - `remote`: HTTP(S), S3, WebDAV and XRootD sources and uploads, grid credentials, the
//!   remote-read settings, and remote outputs (a staging file of `local`'s, uploaded at the
//!   commit). Uses `local`; `local` and `container` do not know it.
//!
//! Above the three, `location` tells URLs from paths, the one place that sees them all: a
//! location opens as a byte source, an output path or URL becomes an output file, and a ROOT file
//! to write becomes a file sink.
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

crate::unstable_room! {
    local
}
crate::unstable_room! {
    container
}
crate::unstable_room! {
    remote
}
crate::unstable_mod! {
    location
}

pub use local::interrupt::clean_up_pending_outputs;
pub use local::source::{FileSource, MemSource, RangeSink, ReadAt, SourceCounters};
pub use remote::remote_options::RemoteOptions;
