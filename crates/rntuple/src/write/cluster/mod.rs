//! From a schema to sealed clusters, knowing no files: the plan of each field (`plan`: ROOT's
//! default column representations for each C++ type, how values are filled), column buffers
//! and page sealing (`columns`: encoding, compression, checksums; ROOT's `RPageSinkBuf`),
//! reduced-precision float columns and their range checks (`reduced`), the cluster builder and
//! its flush rule (`builder`; ROOT's `RNTupleFillContext`), the relocatable sealed cluster
//! (`sealed`) and same-page merging within a cluster (`same_pages`).
//!
//! Uses `write::streamer` (a streamer field's plan checks its class, the builder records the
//! classes' StreamerInfo) and, of `write`'s own files, `options` (the write options) and
//! `projections` (projected fields added to a planned schema); not `write::fill`, whose fill
//! paths add `impl ClusterBuilder` blocks the builder does not know.

pub(crate) mod builder;
pub(crate) mod columns;
pub(crate) mod plan;
pub(crate) mod reduced;
pub(crate) mod same_pages;
pub(crate) mod sealed;
