//! The ROOT file container: what a `.root` file is around the RNTuples in it. Reading it (`tfile`:
//! the file header, keys, directories, anchors, blobs over several keys; `tfile_dirs`: the
//! directory records), writing it (`tfile_write`: ROOT's mini-writer, checkpoints, update mode),
//! the StreamerInfo record (`streamer_info` writes it, `streamer_info_read` reads it, over the
//! `TBufferFile` cursor of `tbuffer`), the layout of payloads in RBlob keys (`key_plan`),
//! positioned writes of reserved ranges (`positioned`, `O_DIRECT`) and the file side of writing
//! (`file_sink`: the output, reserved ranges, the RNTuples of the file).
//!
//! Uses `storage::local` (the byte sources it reads from, the output file it writes into and its
//! upload window); never `storage::remote`: a remote output reaches it as a `local` output file.

pub(crate) mod file_sink;
pub(crate) mod positioned;
crate::unstable_mod! {
    key_plan
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
