//! What a descriptor says about where an RNTuple's bytes go, and the binning of histograms: pure
//! functions, a descriptor (and anchor) in, numbers out, for `rntuple info`, `rntuple report`,
//! `rntuple hist` and the Python package (ROOT's `RNTupleDescriptor::PrintInfo` and
//! `RNTupleInspector`).
//!
//! * `storage`: stored and uncompressed bytes and pages per column, per field (its own columns
//!   and all its sub-fields'), per cluster, and of the header, footer and page lists; the
//!   distribution of stored page sizes;
//! * `histogram`: a one-dimensional histogram with regular bins, under- and overflow and the
//!   statistics of ROOT's `TH1`.
//!
//! Every count comes from an untrusted file: sums saturate instead of overflowing, and every
//! loop is linear in the descriptor's size (fields, columns, clusters, pages), never over pairs.

pub mod histogram;
pub mod page_sizes;
pub mod storage;
