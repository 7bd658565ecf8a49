//! Streamer fields: objects ROOT's `TBufferFile` streamed, read by the StreamerInfo records of
//! their file. The field side (`fields`: the records loaded once, each entry deserialized, or kept
//! as bytes), the deserializer of streamed objects (`streamed_object`), their collections
//! (`streamed_stl`) and their Arrow structs (`streamed_arrow`).
//!
//! Uses `read::open` (the `Reader` struct `fields` adds an `impl Reader` block to) and
//! `read::arrow` (the Arrow type of a fundamental type, `assemble::scalar_type`, which
//! `streamed_arrow` shares); the deserializers otherwise use only the StreamerInfo records of
//! `storage::container` and the type names of `logical::streamed_types`.

pub(super) mod fields;
crate::unstable_mod! {
    /// Objects streamed by ROOT's `TBufferFile`, read by their StreamerInfo records (internal).
    streamed_object
}
crate::unstable_mod! {
    /// The collections of streamed objects (internal).
    streamed_stl
}
crate::unstable_mod! {
    /// Streamed objects as Arrow structs (internal).
    streamed_arrow
}
