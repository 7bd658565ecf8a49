//! Logical layer: the field tree and how C++ types map to fields and columns.

pub mod kind;
pub mod typename;
