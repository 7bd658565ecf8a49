//! Decoding: from stored pages to column values. One page loaded, checksummed and decompressed
//! for the page source (`pages`), a field's columns decoded over a span of entries (`columns`:
//! representations, deferred columns, switch columns, collection offsets rebased), and bulk reads
//! of one column into caller-owned buffers (`bulk`, over clusters; `bulk_range`, a range within
//! one cluster; `bulk_element`, their element types and scratch). ROOT's counterpart: `RColumn`
//! and `RColumnElement`, `RBulkValues`.
//!
//! Uses `read::pool` (the page source and each read's plan) and `read::open` (the `Reader`
//! struct these files add `impl Reader` blocks to); no other room of `read`.

pub(super) mod bulk;
pub(super) mod bulk_element;
pub(super) mod bulk_range;
pub(super) mod columns;
pub(super) mod pages;
