//! Storage layer: where bytes come from and go to. Byte sources (a local file, memory; HTTP and S3
//! in `remote`) behind [`source::ReadAt`]; the ROOT file container (keys, directories, anchors,
//! blobs, StreamerInfo) and its writer; the file sink and positioned writes of reserved ranges.
//! Uses the format layer's pure codecs (anchor, compression framing); knows no fields or types.
//!
//! Public: [`source`] (implement [`source::ReadAt`] to read from anywhere) and
//! [`refuse_same_file`]; the rest is internal (public with the `unstable` feature).

pub(crate) mod file_sink;
pub(crate) mod positioned;
#[cfg(feature = "remote")]
crate::unstable_mod! {
    remote
}
pub mod source;
crate::unstable_mod! {
    coalesce
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
    tfile
}
crate::unstable_mod! {
    tfile_write
}

pub use output::refuse_same_file;
