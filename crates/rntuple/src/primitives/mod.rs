//! Primitives: column types and their page encodings.

pub mod column_type;
pub mod element;
pub mod reduced_float;
crate::unstable_mod! {
    /// Fallible allocation bounded by what a file can back (internal).
    alloc
}
crate::unstable_mod! {
    /// Page decoding (internal).
    decode
}
crate::unstable_mod! {
    /// Page encoding (internal).
    encode
}
/// Running sums of delta-encoded offset pages, AVX-512 where present (internal).
pub(crate) mod offsets_scan;
/// Byte-split pages to elements by explicit AVX2 / AVX-512 shuffles (internal).
pub(crate) mod transpose;
