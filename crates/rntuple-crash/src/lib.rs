//! The crash explorer. A workload (a writer run on small data) is recorded by the library's
//! `storage::local::io_record` (every write, size change, sync, rename and directory sync of its
//! outputs, with the bytes, and the points where the writer reported a checkpoint or commit
//! durable); the explorer replays the record through a model of what a POSIX file system keeps
//! after a power loss ([`model`]), builds the crash states of every prefix of the record
//! ([`states`]: the synced state plus subsets of the writes not yet synced, writes torn at 512-
//! and 4096-byte boundaries with old bytes, zeros or garbage in the torn sectors, renames not yet
//! durable), and judges each ([`judge`]): the file at the final path must open with exactly the
//! entries of the last durable checkpoint or commit before the crash point, or of a later one
//! (values compared), never with other values, never by panicking; a file that is not an
//! RNTuple (Parquet) must be byte for byte one of its durable versions or absent.
//!
//! [`workloads`] holds the recorded writers; `explore` runs them and sums up.

pub mod explore;
pub mod judge;
pub mod log;
pub mod model;
pub mod states;
pub mod workloads;
