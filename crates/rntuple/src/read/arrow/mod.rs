//! What a read yields: Apache Arrow arrays assembled from decoded columns (`assemble`: every
//! field kind's Arrow type and arrays, top-level fields read in parallel), and the forms converted
//! from them: dynamic values (`values`) and typed Rust values (`typed`: `FromValue`,
//! `FromEntry`, what `#[derive(Record)]` implements).
//!
//! Uses `read::decode` (column spans and offsets), `read::pool` (each read's plan), and of
//! `read`'s own files `open` (the `Reader` struct) and `evolution` (reading into requested
//! types); not `read::streamer`, which uses it (a streamer field's arrays are made there and
//! reach `assemble` through the `Reader`).

pub(super) mod assemble;
pub(crate) mod typed;
pub(super) mod values;
