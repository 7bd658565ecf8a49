//! The integration tests in one binary: each file is a module (run one with
//! `cargo test --release -p rntuple --test integration skim_run::`). One binary instead of one per
//! file because every test binary links the library and Arrow with thin LTO (80-200 s each here);
//! the tests that measure the process's allocations (`corruption_sweep`, `page_buffer_budget`) run
//! alone in a child process of this binary (`isolated`, counted by `alloc_probe`). Tests of
//! different modules run concurrently in one process: temporary files carry their module's name. `make tsan` runs `parallel_stress::` of this binary.

#[path = "../common/mod.rs"]
mod common;

mod alloc_probe;
mod attributes;
mod check;
mod class_derive;
mod cluster_limits;
mod convert;
mod corruption_sweep;
mod distributed_write;
mod envelope_checksums;
mod evolution;
mod expected_values;
mod isolated;
mod key_split;
mod memory_limit;
mod merge;
mod metadata_bounds;
mod multi_cluster_reading;
mod multi_ntuple;
mod page_buffer_budget;
mod parallel_stress;
mod processor;
mod read_ahead;
mod read_streams;
mod same_page_merging;
mod shared_reader;
mod skim;
mod skim_missing;
mod skim_run;
mod skim_select;
mod testkit_forge;
mod typed_fill;
mod typed_read;
mod update;
mod writer_roundtrip;
mod xrootd_native;
