//! Logical layer: the field tree and how C++ types map to fields and columns.

crate::unstable_mod! {
    /// Building descriptors by hand, for tests and forged files (internal).
    build
}
pub(crate) mod class_streamers;
pub(crate) mod descriptor_types;
crate::unstable_mod! {
    kind
}
pub mod typename;

pub use kind::Scalar;
