//! The parallel writer: one RNTuple that many threads fill at once, each through its own fill
//! context (it builds and compresses its own clusters; only reserving their place in the file is
//! serialized). Fill contexts take Arrow batches or entries from the typed setters.

use crate::ffi_types::{ArrowArray, ArrowSchema};
use crate::filling::{gone, lock, ContextSink, Filling};
use crate::handles::{self, Object};
use crate::options::options_of;
use crate::schema::{import_batch, schema_from_arrow, schema_from_json, FieldTypes};
use crate::status::{guard, CResult};
use crate::strings::{need, put, str_arg};
use rntuple::write::ParallelWriter;
use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// A parallel writer.
pub struct ParallelWriterObj {
    pub(crate) writer: ParallelWriter,
    pub(crate) schema: FieldTypes,
    pub(crate) done: AtomicBool,
    pub(crate) what: String,
}

impl Object for ParallelWriterObj {
    const KIND: &'static str = "parallel writer";
    const TAG: u8 = 6;
}

/// One thread's fill context of a parallel writer (or of a distributed writer, [`crate::mpi`]).
pub struct FillContextObj {
    state: Mutex<Option<Filling<Box<dyn ContextSink>>>>,
}

impl Object for FillContextObj {
    const KIND: &'static str = "fill context";
    const TAG: u8 = 7;
}

/// Registers a fill context (of a parallel or a distributed writer) filling `schema`.
pub(crate) fn register_context(ctx: Box<dyn ContextSink>, schema: &FieldTypes) -> CResult<u64> {
    handles::register(FillContextObj { state: Mutex::new(Some(Filling::new(ctx, schema))) })
}

/// Registers a parallel writer; `what` names it in messages.
pub(crate) fn register_parallel(writer: ParallelWriter, schema: FieldTypes, what: String) -> CResult<u64> {
    handles::register(ParallelWriterObj { writer, schema, done: AtomicBool::new(false), what })
}

fn new_parallel(path: &str, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let writer = ParallelWriter::create_with_types(path, ntuple, &schema, options_of(options)?)?;
    register_parallel(writer, schema, format!("the parallel writer of '{ntuple}' in '{path}'"))
}

/// A parallel writer of a new RNTuple `ntuple` in a new file `path` (schema in JSON, options: 0
/// for the defaults). Each thread takes its own fill context. `*out` receives the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_parallel_writer_create(
    path: *const c_char,
    ntuple: *const c_char,
    schema_json: *const c_char,
    options: u64,
    out: *mut u64,
) -> i32 {
    guard("rntuple_parallel_writer_create", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let schema = schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?;
        let h = new_parallel(path, ntuple, schema, options)?;
        unsafe { put(out, h, "out") }
    })
}

/// As `rntuple_parallel_writer_create`, with the schema of an Arrow schema (borrowed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_parallel_writer_create_arrow(
    path: *const c_char,
    ntuple: *const c_char,
    schema: *const ArrowSchema,
    options: u64,
    out: *mut u64,
) -> i32 {
    guard("rntuple_parallel_writer_create_arrow", || {
        need(out, "out")?;
        let (path, ntuple) = unsafe { (str_arg(path, "path")?, str_arg(ntuple, "ntuple")?) };
        let h = new_parallel(path, ntuple, unsafe { schema_from_arrow(schema) }?, options)?;
        unsafe { put(out, h, "out") }
    })
}

fn parallel(h: u64) -> CResult<std::sync::Arc<handles::Registered<ParallelWriterObj>>> {
    let p = handles::get::<ParallelWriterObj>(h)?;
    if p.value.done.load(Ordering::Acquire) {
        return Err(gone(&p.value.what, "committed or aborted"));
    }
    Ok(p)
}

/// A new fill context of a parallel writer, for one thread: it builds and compresses its own
/// clusters; only reserving space in the file is serialized. `*out` receives the handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_parallel_writer_fill_context(writer: u64, out: *mut u64) -> i32 {
    guard("rntuple_parallel_writer_fill_context", || {
        need(out, "out")?;
        let p = parallel(writer)?;
        let ctx = p.value.writer.fill_context()?;
        let h = register_context(Box::new(ctx), &p.value.schema)?;
        unsafe { put(out, h, "out") }
    })
}

/// The entries the parallel writer's contexts flushed so far.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_parallel_writer_entries(writer: u64, out: *mut u64) -> i32 {
    guard("rntuple_parallel_writer_entries", || {
        let p = handles::get::<ParallelWriterObj>(writer)?;
        unsafe { put(out, p.value.writer.num_entries(), "out") }
    })
}

/// Writes a checkpoint of the clusters flushed so far (with `checkpoint_clusters`).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_parallel_writer_checkpoint(writer: u64) -> i32 {
    guard("rntuple_parallel_writer_checkpoint", || Ok(parallel(writer)?.value.writer.checkpoint()?))
}

/// Commits the RNTuple; every fill context must be finished first. `*bytes` (may be null)
/// receives the file's size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_parallel_writer_commit(writer: u64, bytes: *mut u64) -> i32 {
    guard("rntuple_parallel_writer_commit", || {
        let p = parallel(writer)?;
        let size = p.value.writer.commit()?;
        p.value.done.store(true, Ordering::Release);
        if !bytes.is_null() {
            unsafe { bytes.write(size) };
        }
        Ok(())
    })
}

/// Discards the parallel writer without committing.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_parallel_writer_abort(writer: u64) -> i32 {
    guard("rntuple_parallel_writer_abort", || {
        let p = parallel(writer)?;
        p.value.done.store(true, Ordering::Release);
        p.value.writer.abort("aborted through the C API");
        Ok(())
    })
}

/// Frees a parallel writer handle (0 is ignored); one not committed is aborted.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_parallel_writer_free(writer: u64) -> i32 {
    guard("rntuple_parallel_writer_free", || {
        if let Some(p) = handles::free::<ParallelWriterObj>(writer)?
            && !p.value.done.swap(true, Ordering::AcqRel)
        {
            p.value.writer.abort("freed through the C API without a commit");
        }
        Ok(())
    })
}

pub(crate) fn with_context<R>(ctx: u64, f: impl FnOnce(&mut Filling<Box<dyn ContextSink>>) -> CResult<R>) -> CResult<R> {
    let c = handles::get::<FillContextObj>(ctx)?;
    let mut g = lock(&c.value.state)?;
    let st = g.as_mut().ok_or_else(|| gone("the fill context", "finished"))?;
    f(st)
}

/// Appends a record batch to a fill context (`array` moved in, `schema` borrowed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_fill_context_append(ctx: u64, array: *mut ArrowArray, schema: *const ArrowSchema) -> i32 {
    guard("rntuple_fill_context_append", || {
        let b = unsafe { import_batch(array, schema) }?;
        with_context(ctx, |c| c.append(&b))
    })
}

/// Ends the fill context's current cluster and hands it to the writer.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_fill_context_flush_cluster(ctx: u64) -> i32 {
    guard("rntuple_fill_context_flush_cluster", || {
        with_context(ctx, |c| {
            c.flush_entries()?;
            Ok(c.sink.flush_cluster()?)
        })
    })
}

fn finish(st: Option<Filling<Box<dyn ContextSink>>>) -> CResult<()> {
    let Some(mut st) = st else { return Err(gone("the fill context", "finished")) };
    st.flush_entries()?;
    st.sink.finish()?;
    Ok(())
}

/// Finishes a fill context: its last cluster goes to the writer. The handle stays valid (later
/// calls: `RNTUPLE_ERR_STATE`) until freed.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_fill_context_finish(ctx: u64) -> i32 {
    guard("rntuple_fill_context_finish", || {
        let c = handles::get::<FillContextObj>(ctx)?;
        let st = lock(&c.value.state)?.take();
        finish(st)
    })
}

/// Frees a fill context handle (0 is ignored), finishing it first if it was not.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_fill_context_free(ctx: u64) -> i32 {
    guard("rntuple_fill_context_free", || {
        let Some(c) = handles::free::<FillContextObj>(ctx)? else { return Ok(()) };
        let st = lock(&c.value.state)?.take();
        if st.is_some() {
            finish(st)?;
        }
        Ok(())
    })
}
