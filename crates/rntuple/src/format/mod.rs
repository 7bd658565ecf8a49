//! Format layer: pure (de)serialization of the RNTuple envelopes, frames and locators, and ROOT's
//! compression framing. Bytes in, descriptors out, and back; no I/O.
//!
//! Public: [`descriptor`], what a [`crate::Reader`] describes an RNTuple with; the rest is
//! internal (public with the `unstable` feature).
//!
//! ```
//! use rntuple::format::descriptor::Role;
//! # use rntuple::write::{Writer, WriteOptions};
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-format-{}.root", std::process::id()));
//! # Writer::create(&path, "Events", &[("nMuon", "std::uint32_t"), ("Muon_pt", "std::vector<float>")], WriteOptions::default())?.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let d = r.descriptor();
//! let top: Vec<(&str, Role)> = d.top_level_fields().iter().map(|&id| (d.fields[id as usize].name.as_str(), d.fields[id as usize].role)).collect();
//! assert_eq!(top, [("nMuon", Role::Leaf), ("Muon_pt", Role::Collection)]);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

crate::unstable_mod! {
    /// The process-wide read budget and the largest page (internal; `rntuple::set_memory_limit`).
    budget
}
pub mod descriptor;
crate::unstable_mod! {
    /// The `ROOT::RNTuple` anchor object (internal).
    anchor
}
crate::unstable_mod! {
    /// Field and type name rules (internal).
    names
}
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
