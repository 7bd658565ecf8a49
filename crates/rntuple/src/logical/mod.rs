//! Logical layer: the field tree and how C++ types map to fields and columns.

pub(crate) mod class_streamers;
pub(crate) mod descriptor_types;
pub mod kind;
pub mod typename;
