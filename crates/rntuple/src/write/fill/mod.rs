//! The fill paths: how values enter a cluster builder's column buffers, each an `impl
//! ClusterBuilder` block of its own: dynamic values (`fill_value`: one entry at a time, checked
//! whole before any of it is written), Apache Arrow record batches (`fill_arrow`: column by
//! column) and typed Rust values (`fill_typed`, through the traits of `typed`: `FieldValue`,
//! `Entry`, what `#[derive(Record)]` implements).
//!
//! Uses `write::cluster` (the builder, plans, column buffers, range checks of reduced floats)
//! and `write::streamer` (a streamer field's values serialized); nothing else of `write`.

mod fill_arrow;
mod fill_typed;
mod fill_value;
pub(super) mod typed;
