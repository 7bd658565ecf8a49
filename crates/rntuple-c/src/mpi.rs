//! The distributed writer (crate `rntuple-mpi`): every rank of the caller's MPI communicator fills
//! its own clusters into one file, placed by a strategy (`send-data`, `metadata`, `one-sided`,
//! `file-lock`). The communicator crosses as its Fortran handle (`MPI_Comm_c2f(comm)`), an
//! integer in every MPI implementation, so this header does not depend on `mpi.h` (the C++
//! header's `rntuple::MpiWriter` takes an `MPI_Comm`). The writer duplicates it; the caller keeps
//! its own.
//!
//! Creation and commit are collective. A rank whose writing fails, or that frees its writer
//! without committing, aborts the whole job (`MPI_Abort`), naming itself: the file stays under a
//! temporary name, so nothing at the path claims to be complete. Fill contexts are ordinary
//! `rntuple_fill_context_*` handles (Arrow batches or the typed setters).
//!
//! Built with MPI when the library was (`make build` on a machine with `mpicc`); otherwise every
//! function here returns `RNTUPLE_ERR_UNSUPPORTED` and [`rntuple_has_mpi`] says false.

use crate::ffi_types::ArrowSchema;
use crate::schema::{schema_from_arrow, schema_from_json, FieldTypes};
use crate::status::{guard, CResult};
use crate::strings::{need, put, str_arg};
use std::ffi::c_char;

/// The distributed options. Fill it with [`rntuple_mpi_options_default`] first, then change what
/// you need.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rntuple_mpi_options {
    /// The strategy's name (NUL-terminated): `"send-data"`, `"metadata"` (the default),
    /// `"one-sided"` or `"file-lock"`; null: the default. The aggregator strategies (`send-data`,
    /// `metadata`) need MPI initialized with `MPI_THREAD_MULTIPLE`.
    pub strategy: *const c_char,
    /// Every cluster starts at a multiple of this and is padded to one (default 4096; e.g. a
    /// Lustre stripe of 1 MiB).
    pub align: u64,
    /// Write through `O_DIRECT` (alignment at least 4096).
    pub direct_io: bool,
    /// Largest single write in bytes (default 4 MiB; 0: unbounded).
    pub max_write: u64,
}

/// Whether this library was built with MPI (the `rntuple_mpi_*` writers work).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_has_mpi() -> bool {
    cfg!(feature = "mpi")
}

/// Fills `*out` with the default distributed options (strategy `metadata`, 4096-byte alignment,
/// no direct I/O, writes of at most 4 MiB).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_options_default(out: *mut rntuple_mpi_options) -> i32 {
    guard("rntuple_mpi_options_default", || {
        need(out, "out")?;
        let o = rntuple_mpi_options { strategy: std::ptr::null(), align: 4096, direct_io: false, max_write: 4 << 20 };
        unsafe { put(out, o, "out") }
    })
}

/// A distributed writer of a new RNTuple `ntuple` in the file `path` (collective: every rank of
/// `comm` calls it with the same arguments), with a schema in JSON, write options (0: the
/// defaults) and distributed options (null: the defaults). `comm` is the communicator's Fortran
/// handle, `MPI_Comm_c2f(comm)`. `*out` receives the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_create(
    comm: i64,
    path: *const c_char,
    ntuple: *const c_char,
    schema_json: *const c_char,
    options: u64,
    mpi: *const rntuple_mpi_options,
    out: *mut u64,
) -> i32 {
    guard("rntuple_mpi_writer_create", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let schema = schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?;
        let h = unsafe { imp::create(comm, path, ntuple, schema, options, mpi) }?;
        unsafe { put(out, h, "out") }
    })
}

/// As `rntuple_mpi_writer_create`, with the schema of an Arrow schema (borrowed, not released).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_create_arrow(
    comm: i64,
    path: *const c_char,
    ntuple: *const c_char,
    schema: *const ArrowSchema,
    options: u64,
    mpi: *const rntuple_mpi_options,
    out: *mut u64,
) -> i32 {
    guard("rntuple_mpi_writer_create_arrow", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let h = unsafe { imp::create(comm, path, ntuple, schema_from_arrow(schema)?, options, mpi) }?;
        unsafe { put(out, h, "out") }
    })
}

/// This process's rank and the number of ranks writing (either pointer may be null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_rank(writer: u64, rank: *mut u32, size: *mut u32) -> i32 {
    guard("rntuple_mpi_writer_rank", || {
        let (r, s) = imp::rank(writer)?;
        if !rank.is_null() {
            unsafe { rank.write(r) };
        }
        if !size.is_null() {
            unsafe { size.write(s) };
        }
        Ok(())
    })
}

/// A new fill context of this rank, for one thread (a `rntuple_fill_context_*` handle: Arrow
/// batches or the typed setters; finish it before the commit). `*out` receives the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_fill_context(writer: u64, out: *mut u64) -> i32 {
    guard("rntuple_mpi_writer_fill_context", || {
        need(out, "out")?;
        let h = imp::fill_context(writer)?;
        unsafe { put(out, h, "out") }
    })
}

/// Commits (collective: every rank, after finishing its fill contexts). `*bytes` (may be null)
/// receives the file's size; the report (JSON: `file_size`, `files`, and on rank 0 `ranks`, each
/// rank's entries, clusters, seconds compressing, waiting and writing, bytes and requests) goes
/// into `report` when given (null and 0: none). The handle stays valid until freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_commit(writer: u64, bytes: *mut u64, report: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_mpi_writer_commit", || {
        let (size, json) = imp::commit(writer)?;
        if !bytes.is_null() {
            unsafe { bytes.write(size) };
        }
        unsafe { crate::ops::report(json, report, cap, len) }
    })
}

/// Aborts the whole job (`MPI_Abort`), printing which rank failed and why (`why` may be null); the
/// temporary file is removed. Returns only when the handle is not a live distributed writer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_mpi_writer_abort(writer: u64, why: *const c_char) -> i32 {
    guard("rntuple_mpi_writer_abort", || {
        let why = if why.is_null() { "aborted through the C API" } else { unsafe { str_arg(why, "why") }? };
        imp::abort(writer, why)
    })
}

/// Frees a distributed writer handle (0 is ignored). A writer not committed aborts the job
/// (`MPI_Abort`), as a rank that failed.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_mpi_writer_free(writer: u64) -> i32 {
    guard("rntuple_mpi_writer_free", || imp::free(writer))
}

#[cfg(feature = "mpi")]
mod imp {
    use super::*;
    use crate::filling::{gone, lock, ContextSink, Sink};
    use crate::handles::{self, Object};
    use crate::options::options_of;
    use crate::parallel::register_context;
    use arrow_array::RecordBatch;
    use rntuple_mpi::{MpiFillContext, MpiOptions, MpiWriter, Strategy};
    use std::sync::Mutex;

    impl Sink for MpiFillContext {
        fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
            self.append_batch(b)
        }
    }

    impl ContextSink for MpiFillContext {
        fn flush_cluster(&mut self) -> rntuple::Result<()> {
            MpiFillContext::flush_cluster(self)
        }
        fn finish(self: Box<Self>) -> rntuple::Result<()> {
            MpiFillContext::finish(*self)
        }
    }

    /// A distributed writer.
    pub struct MpiWriterObj {
        state: Mutex<Option<MpiWriter>>,
        schema: FieldTypes,
        rank: u32,
        size: u32,
    }

    impl Object for MpiWriterObj {
        const KIND: &'static str = "distributed writer";
        const TAG: u8 = 9;
    }

    const WHAT: &str = "the distributed writer";

    fn mpi_options(o: *const rntuple_mpi_options) -> CResult<MpiOptions> {
        if o.is_null() {
            return Ok(MpiOptions::default());
        }
        // SAFETY: not null; a valid struct (the caller's contract).
        let o = unsafe { *o };
        let strategy = if o.strategy.is_null() { Strategy::Metadata } else { unsafe { str_arg(o.strategy, "mpi->strategy") }?.parse::<Strategy>()? };
        Ok(MpiOptions { strategy, align: o.align, direct_io: o.direct_io, max_write: o.max_write })
    }

    pub unsafe fn create(comm: i64, path: &str, ntuple: &str, schema: FieldTypes, options: u64, mpi: *const rntuple_mpi_options) -> CResult<u64> {
        let opts = options_of(options)?;
        let mpi = mpi_options(mpi)?;
        let c = rntuple_mpi::communicator_from_fortran(comm)?;
        let w = MpiWriter::create_with_types(&c, path, ntuple, &schema, opts, mpi)?;
        let (rank, size) = (u32::try_from(w.rank()).unwrap_or(u32::MAX), u32::try_from(w.size()).unwrap_or(u32::MAX));
        handles::register(MpiWriterObj { state: Mutex::new(Some(w)), schema, rank, size })
    }

    pub fn rank(h: u64) -> CResult<(u32, u32)> {
        let w = handles::get::<MpiWriterObj>(h)?;
        Ok((w.value.rank, w.value.size))
    }

    pub fn fill_context(h: u64) -> CResult<u64> {
        let w = handles::get::<MpiWriterObj>(h)?;
        let ctx = {
            let g = lock(&w.value.state)?;
            g.as_ref().ok_or_else(|| gone(WHAT, "committed"))?.fill_context()?
        };
        register_context(Box::new(ctx), &w.value.schema)
    }

    pub fn commit(h: u64) -> CResult<(u64, serde_json::Value)> {
        let o = handles::get::<MpiWriterObj>(h)?;
        let w = lock(&o.value.state)?.take().ok_or_else(|| gone(WHAT, "committed"))?;
        let r = w.commit()?;
        let ranks: Vec<serde_json::Value> = r
            .ranks
            .iter()
            .map(|rr| {
                let m = &rr.metrics;
                serde_json::json!({
                    "rank": rr.rank, "entries": m.entries, "clusters": m.clusters, "compress_seconds": m.compress_seconds,
                    "wait_seconds": m.wait_seconds, "write_seconds": m.write_seconds, "bytes": m.bytes_written,
                    "requests": m.requests, "wall_seconds": rr.wall_seconds,
                    "aggregator_messages": rr.aggregator_messages, "aggregator_seconds": rr.aggregator_seconds,
                })
            })
            .collect();
        Ok((r.file_size, serde_json::json!({"file_size": r.file_size, "files": r.files, "ranks": ranks})))
    }

    pub fn abort(h: u64, why: &str) -> CResult<()> {
        let o = handles::get::<MpiWriterObj>(h)?;
        let w = lock(&o.value.state)?.take();
        match w {
            Some(mut w) => w.abort(why),
            None => Err(gone(WHAT, "committed")),
        }
    }

    pub fn free(h: u64) -> CResult<()> {
        // Dropping a writer that was not committed aborts the job (rntuple-mpi's rule).
        handles::free::<MpiWriterObj>(h)?;
        Ok(())
    }
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use super::*;
    use crate::status::CError;

    fn unsupported() -> CError {
        CError::new(crate::status::RNTUPLE_ERR_UNSUPPORTED, "this library was built without MPI (build it where mpicc is installed)")
    }

    pub unsafe fn create(_: i64, _: &str, _: &str, _: FieldTypes, _: u64, _: *const rntuple_mpi_options) -> CResult<u64> {
        Err(unsupported())
    }
    pub fn rank(_: u64) -> CResult<(u32, u32)> {
        Err(unsupported())
    }
    pub fn fill_context(_: u64) -> CResult<u64> {
        Err(unsupported())
    }
    pub fn commit(_: u64) -> CResult<(u64, serde_json::Value)> {
        Err(unsupported())
    }
    pub fn abort(_: u64, _: &str) -> CResult<()> {
        Err(unsupported())
    }
    pub fn free(h: u64) -> CResult<()> {
        if h == 0 {
            Ok(())
        } else {
            Err(unsupported())
        }
    }
}
