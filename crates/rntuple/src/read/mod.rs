//! Event iteration: reading.
//!
//! The reader is split by stage, each file adding an `impl Reader` block and using only the
//! files below it: `cluster_pool` (loading ahead, knows no descriptors) < `open` (the `Reader`
//! struct, descriptor loading) < `prefetch` (read-ahead planning) < `pages` (page I/O and
//! unpacking) < `columns` (column decoding) < `arrow` (Arrow assembly) < `reader` (accessors and
//! public entry points) < `values`, `typed`, `check`, `file`, and `bench` (benchmark helpers,
//! `unstable` feature only) < `attributes` (linked attribute sets, read as RNTuples of their own).

mod arrow;
pub mod attributes;
#[cfg(feature = "unstable")]
mod bench;
pub mod check;
mod cluster_pool;
mod columns;
pub mod file;
mod open;
mod pages;
mod prefetch;
pub mod reader;
pub mod typed;
mod values;
pub use cluster_pool::ReadAhead;
pub use typed::{FromEntry, FromValue};
