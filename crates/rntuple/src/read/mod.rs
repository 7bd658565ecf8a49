//! Event iteration: reading.

pub mod check;
pub mod file;
pub mod reader;
pub mod typed;
mod values;
pub use typed::{FromEntry, FromValue};
