//! The page pool, the lowest room of reading: where a reader's pages come from. The page source
//! (`page_source`: the byte source of one RNTuple, the read-ahead settings, the lookup of a page,
//! checksums, the I/O statistics; ROOT's `RPageSource`), each read's plan (`read_plan`: its
//! columns, clusters, whether it takes its pages from the pool; and `Span`), and the cluster pool
//! that loads clusters ahead of decoding (`cluster_pool`, its shared state `pool_state` and its
//! loading threads `pool_streams`; ROOT's `RClusterPool`).
//!
//! Uses no other file of `read`: it knows byte sources and descriptors, not fields or the
//! `Reader`.

pub(super) mod cluster_pool;
pub(super) mod page_source;
pub(super) mod pool_state;
pub(super) mod pool_streams;
pub(super) mod read_plan;
