//! # rntuple-c
//!
//! The C ABI of `rntuple` (header `include/rntuple.h`, generated from this crate by cbindgen and
//! checked by `make lint`). For C, C++ (`include/rntuple.hpp`) and every language with a C
//! foreign-function interface: data cross as the Arrow C data interface (`ArrowSchema`,
//! `ArrowArray`) and stream interface (`ArrowArrayStream`).
//!
//! Rules of every function:
//! * it returns a status ([`status`]): `RNTUPLE_OK` (0) or an error code, and on error leaves a
//!   message for this thread, read with [`rntuple_last_error`];
//! * objects are handles (`uint64_t`, never 0), looked up in a registry: a null pointer, a freed or
//!   never-issued handle, a handle of the wrong kind or a call after `commit` is an error code,
//!   never undefined behaviour; handles may be used from any thread;
//! * no Rust panic crosses the boundary (it becomes `RNTUPLE_ERR_INTERNAL`);
//! * strings in are NUL-terminated UTF-8; strings out go into the caller's buffer (snprintf-like:
//!   the full length is always reported, `RNTUPLE_ERR_BUFFER` when it did not fit).
//!
//! Modules, one per kind of object: [`status`] (codes, last error, the panic guard), [`handles`]
//! (the registry), [`read`] (files and readers), [`stream`] (Arrow streams out), [`options`]
//! (write options), [`schema`] (JSON and Arrow schemas, batches in), [`filling`] (what a writer
//! handle holds), [`write`] (sequential writers), [`parallel`] (parallel writers and fill contexts),
//! [`file_writer`] (several RNTuples in one file), [`mpi`] (distributed writers), [`entry`]
//! (typed setters filling entry by entry), [`ops`] (merge, skim, check), [`bulk`] and
//! [`bulk_range`] (column reads into the caller's memory: over clusters, and element ranges within one),
//! [`view`] (entry-wise reading: views of one field, and entry objects loading bound fields),
//! [`chain_map`] (a callback over every cluster of many files on several threads).
#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

pub mod bulk;
pub mod bulk_range;
pub mod chain_map;
pub mod entry;
pub mod ffi_types;
pub mod file_writer;
pub mod filling;
pub mod handles;
pub mod mpi;
pub mod ops;
pub mod options;
pub mod parallel;
pub mod read;
pub mod schema;
pub mod setters;
pub mod status;
pub mod stream;
pub mod strings;
pub mod view;
pub mod write;
