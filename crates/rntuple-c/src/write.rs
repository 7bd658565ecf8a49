//! The sequential writer (the parallel writer is in [`crate::parallel`], the file of several
//! RNTuples in [`crate::file_writer`], the distributed one in [`crate::mpi`]). A writer's schema comes as JSON (`{"pt": "float", "jets":
//! "std::vector<float>"}`, the CLI's `import-json --schema`) or as an Arrow schema; data come as
//! Arrow batches (`rntuple_writer_append`, moved in) or entry by entry through the typed setters
//! ([`crate::entry`], `rntuple_entry_*`).
//!
//! A writer handle outlives its commit or abort (calls then return `RNTUPLE_ERR_STATE`) until it
//! is freed; freeing a writer that was not committed aborts it (a new file is not left behind).

use crate::ffi_types::{ArrowArray, ArrowSchema};
use crate::filling::{gone, lock, Filling, Target};
use crate::handles::{self, Object};
use crate::options::options_of;
use crate::parallel::{with_context, FillContextObj};
use crate::schema::{import_batch, schema_from_arrow, schema_from_json, FieldTypes};
use crate::status::{guard, CError, CResult, RNTUPLE_ERR_WRONG_HANDLE};
use crate::strings::{need, put, str_arg};
use rntuple::write::Writer;
use std::ffi::c_char;
use std::sync::Mutex;

/// A sequential writer.
pub struct WriterObj {
    state: Mutex<Option<Filling<Writer>>>,
    what: String,
}

impl Object for WriterObj {
    const KIND: &'static str = "writer";
    const TAG: u8 = 5;
}

/// Registers a sequential writer; `what` names it in messages.
pub(crate) fn register_writer(w: Writer, schema: &FieldTypes, what: String) -> CResult<u64> {
    handles::register(WriterObj { state: Mutex::new(Some(Filling::new(w, schema))), what })
}

fn new_writer(path: &str, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let w = Writer::create_with_types(path, ntuple, &schema, options_of(options)?)?;
    register_writer(w, &schema, format!("the writer of '{ntuple}' in '{path}'"))
}

/// A sequential writer of a new RNTuple `ntuple` in a new file `path`, with a schema in JSON
/// (`{"pt": "float", "jets": "std::vector<float>"}`) and write options (0: the defaults). `*out`
/// receives the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_writer_create(path: *const c_char, ntuple: *const c_char, schema_json: *const c_char, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_writer_create", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let schema = schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?;
        let h = new_writer(path, ntuple, schema, options)?;
        unsafe { put(out, h, "out") }
    })
}

/// As `rntuple_writer_create`, with the schema of an Arrow schema (borrowed, not released).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_writer_create_arrow(
    path: *const c_char,
    ntuple: *const c_char,
    schema: *const ArrowSchema,
    options: u64,
    out: *mut u64,
) -> i32 {
    guard("rntuple_writer_create_arrow", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let h = new_writer(path, ntuple, unsafe { schema_from_arrow(schema) }?, options)?;
        unsafe { put(out, h, "out") }
    })
}

fn with_writer<R>(writer: u64, f: impl FnOnce(&mut Filling<Writer>) -> CResult<R>) -> CResult<R> {
    let w = handles::get::<WriterObj>(writer)?;
    let mut g = lock(&w.value.state)?;
    let st = g.as_mut().ok_or_else(|| gone(&w.value.what, "committed or aborted"))?;
    f(st)
}

/// Appends a record batch: `array` (a struct array, one member per field in schema order) is
/// moved in, whether the call succeeds or not; `schema` describes it and stays the caller's.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_writer_append(writer: u64, array: *mut ArrowArray, schema: *const ArrowSchema) -> i32 {
    guard("rntuple_writer_append", || {
        let b = unsafe { import_batch(array, schema) }?;
        with_writer(writer, |w| w.append(&b))
    })
}

/// The entries written so far (the typed setters' filled entries included).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_writer_entries(writer: u64, out: *mut u64) -> i32 {
    guard("rntuple_writer_entries", || {
        need(out, "out")?;
        let n = with_writer(writer, |w| Ok(w.sink.num_entries() + w.entry.pending()))?;
        unsafe { put(out, n, "out") }
    })
}

/// Ends the current cluster and writes a checkpoint (with the `checkpoint_clusters` option the
/// file is complete to here).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_writer_checkpoint(writer: u64) -> i32 {
    guard("rntuple_writer_checkpoint", || {
        with_writer(writer, |w| {
            w.flush_entries()?;
            Ok(w.sink.checkpoint()?)
        })
    })
}

/// Commits: last cluster, footer, anchor. `*bytes` (may be null) receives the file's size. The
/// handle stays valid (later calls: `RNTUPLE_ERR_STATE`) until freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_writer_commit(writer: u64, bytes: *mut u64) -> i32 {
    guard("rntuple_writer_commit", || {
        let w = handles::get::<WriterObj>(writer)?;
        let mut st = lock(&w.value.state)?.take().ok_or_else(|| gone(&w.value.what, "committed or aborted"))?;
        if let Err(e) = st.flush_entries() {
            st.sink.abort();
            return Err(e);
        }
        let size = st.sink.commit()?;
        if !bytes.is_null() {
            unsafe { bytes.write(size) };
        }
        Ok(())
    })
}

/// Discards the writer without committing (a new file is removed; with checkpoints the file
/// keeps its last one).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_writer_abort(writer: u64) -> i32 {
    guard("rntuple_writer_abort", || {
        let w = handles::get::<WriterObj>(writer)?;
        let st = lock(&w.value.state)?.take().ok_or_else(|| gone(&w.value.what, "committed or aborted"))?;
        st.sink.abort();
        Ok(())
    })
}

/// Frees a writer handle (0 is ignored); a writer not committed is aborted.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_writer_free(writer: u64) -> i32 {
    guard("rntuple_writer_free", || {
        if let Some(w) = handles::free::<WriterObj>(writer)?
            && let Some(st) = lock(&w.value.state)?.take()
        {
            st.sink.abort();
        }
        Ok(())
    })
}

/// Runs `f` on the entries of a writer or fill context handle.
pub fn with_target<R>(h: u64, f: impl FnOnce(&mut dyn Target) -> CResult<R>) -> CResult<R> {
    match (h >> 56) as u8 {
        WriterObj::TAG => with_writer(h, |w| f(w)),
        FillContextObj::TAG => with_context(h, |c| f(c)),
        _ if h == 0 => Err(CError::new(crate::status::RNTUPLE_ERR_BAD_HANDLE, "handle 0 is no object (expected a writer or a fill context)")),
        _ => Err(CError::new(RNTUPLE_ERR_WRONG_HANDLE, format!("handle {h:#x} is not a writer or a fill context"))),
    }
}
