//! Storage layer: byte sources and the ROOT file container.

pub mod coalesce;
pub mod output;
#[cfg(feature = "remote")]
pub mod remote;
pub mod source;
pub mod tfile;
crate::unstable_mod! {
    /// How an RBlob payload is cut into keys (internal).
    key_plan
}
crate::unstable_mod! {
    /// The StreamerInfo record of `ROOT::RNTuple` (internal).
    streamer_info
}
crate::unstable_mod! {
    /// Writing the ROOT file records (internal).
    tfile_write
}
