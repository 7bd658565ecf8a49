//! Format layer: pure (de)serialization of the RNTuple envelopes, frames and locators, and ROOT's
//! compression framing. Bytes in, descriptors out, and back; no I/O.

pub mod anchor;
pub mod descriptor;
pub mod names;
crate::unstable_mod! {
    /// XXH3 checksums of envelopes and pages (internal).
    checksum
}
crate::unstable_mod! {
    /// ROOT's compression block framing (internal).
    compression
}
crate::unstable_mod! {
    /// Little-endian reading, frames and locators (internal).
    cursor
}
crate::unstable_mod! {
    /// Header, footer and page-list envelopes (internal).
    envelope
}
crate::unstable_mod! {
    /// Serialization of descriptors into envelopes (internal).
    serialize
}
