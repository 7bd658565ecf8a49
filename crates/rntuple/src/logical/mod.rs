//! Logical layer: the field tree and how C++ types map to fields and columns.
//!
//! ```
//! use rntuple::logical::typename::{parse, TypeExpr};
//! use rntuple::logical::Scalar;
//! let t = parse("ROOT::RVec<Float_t>")?;
//! assert_eq!(t, TypeExpr::Collection("ROOT::VecOps::RVec".into(), Box::new(TypeExpr::Scalar(Scalar::F32, None))));
//! assert_eq!(t.name(), "ROOT::VecOps::RVec<float>");
//! # Ok::<(), rntuple::Error>(())
//! ```

crate::unstable_mod! {
    /// Building descriptors by hand, for tests and forged files (internal).
    build
}
pub(crate) mod class_streamers;
pub(crate) mod descriptor_types;
crate::unstable_mod! {
    kind
}
pub(crate) mod record_classes;
crate::unstable_mod! {
    /// The type names of objects streamed by ROOT's `TBufferFile` (internal).
    streamed_types
}
pub mod typename;

pub use kind::Scalar;
