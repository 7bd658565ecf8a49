//! Streamer fields on the write side: an object of a class serialized as ROOT's `TBufferFile`
//! streams it (`streamed_encode`, the mirror of `read::streamer::streamed_object`), and the
//! fields around it (`streamed_fields`: the marked paths checked, the classes' StreamerInfo
//! records kept in the descriptor and listed in the file's StreamerInfo key, Arrow structs and
//! dynamic values turned into objects' bytes).
//!
//! Uses no other room or file of `write`: the classes to record come from the plans' owner
//! (`write::cluster::plan::streamed_classes`).

pub(crate) mod streamed_encode;
pub(crate) mod streamed_fields;
