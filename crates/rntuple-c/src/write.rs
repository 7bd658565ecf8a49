//! Writers: the sequential writer, the parallel writer with one fill context per thread, and the
//! file writer holding several RNTuples. A writer's schema comes as JSON (`{"pt": "float", "jets":
//! "std::vector<float>"}`, the CLI's `import-json --schema`) or as an Arrow schema; data come as
//! Arrow batches (`rntuple_writer_append`, moved in) or entry by entry through the typed setters
//! ([`crate::entry`], `rntuple_entry_*`).
//!
//! A writer handle outlives its commit or abort (calls then return `RNTUPLE_ERR_STATE`) until it
//! is freed; freeing a writer that was not committed aborts it (a new file is not left behind).

use crate::entry::EntryBuf;
use crate::ffi_types::{array_ptr, schema_ptr, ArrowArray, ArrowSchema};
use crate::handles::{self, Object};
use crate::options::options_of;
use crate::status::{guard, CError, CResult, RNTUPLE_ERR_WRONG_HANDLE};
use crate::strings::{need, put, str_arg};
use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Schema};
use rntuple::logical::typename::{parse, TypeExpr};
use rntuple::write::{FileWriter, FillContext, ParallelWriter, Writer};
use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A writer's schema: (field name, type) pairs in order.
pub type FieldTypes = Vec<(String, TypeExpr)>;

/// Where batches go: a sequential writer or a fill context.
pub trait Sink: Send {
    /// Appends a batch.
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()>;
}

impl Sink for Writer {
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
        self.append_batch(b)
    }
}

impl Sink for FillContext {
    fn append(&mut self, b: &RecordBatch) -> rntuple::Result<()> {
        self.append_batch(b)
    }
}

/// A sink with the entries its setters gathered.
pub struct Filling<S> {
    /// The writer or fill context.
    pub sink: S,
    /// Entries filled by the typed setters and not yet appended.
    pub entry: EntryBuf,
    /// Field names in order (the check of appended batches).
    names: Vec<String>,
}

impl<S: Sink> Filling<S> {
    fn new(sink: S, schema: &FieldTypes) -> Self {
        Filling { sink, entry: EntryBuf::new(schema), names: schema.iter().map(|(n, _)| n.clone()).collect() }
    }

    /// Appends the entries the setters gathered.
    pub fn flush_entries(&mut self) -> CResult<()> {
        if let Some(b) = self.entry.take_batch()? {
            self.sink.append(&b).map_err(CError::from_append)?;
        }
        Ok(())
    }

    /// Appends a batch after the gathered entries (order kept); its fields must be the schema's.
    fn append(&mut self, b: &RecordBatch) -> CResult<()> {
        let got: Vec<&str> = b.schema_ref().fields().iter().map(|f| f.name().as_str()).collect();
        if got != self.names {
            return Err(CError::schema(format!("the batch's fields ({}) are not the writer's ({})", got.join(", "), self.names.join(", "))));
        }
        self.flush_entries()?;
        self.sink.append(b).map_err(CError::from_append)
    }
}

/// What the typed setters reach through a handle: a writer's or a fill context's entries.
pub trait Target {
    /// The entry being filled.
    fn entry(&mut self) -> &mut EntryBuf;
    /// Appends the gathered entries to the writer.
    fn flush_entries(&mut self) -> CResult<()>;
}

impl<S: Sink> Target for Filling<S> {
    fn entry(&mut self) -> &mut EntryBuf {
        &mut self.entry
    }
    fn flush_entries(&mut self) -> CResult<()> {
        Filling::flush_entries(self)
    }
}

/// A sequential writer.
pub struct WriterObj {
    state: Mutex<Option<Filling<Writer>>>,
    what: String,
}

impl Object for WriterObj {
    const KIND: &'static str = "writer";
    const TAG: u8 = 5;
}

/// A parallel writer.
pub struct ParallelWriterObj {
    writer: ParallelWriter,
    schema: FieldTypes,
    done: AtomicBool,
    what: String,
}

impl Object for ParallelWriterObj {
    const KIND: &'static str = "parallel writer";
    const TAG: u8 = 6;
}

/// One thread's fill context of a parallel writer.
pub struct FillContextObj {
    state: Mutex<Option<Filling<FillContext>>>,
}

impl Object for FillContextObj {
    const KIND: &'static str = "fill context";
    const TAG: u8 = 7;
}

/// A file holding several RNTuples.
pub struct FileWriterObj {
    state: Mutex<Option<FileWriter>>,
    what: String,
}

impl Object for FileWriterObj {
    const KIND: &'static str = "file writer";
    const TAG: u8 = 8;
}

fn lock<T>(m: &Mutex<T>) -> CResult<MutexGuard<'_, T>> {
    m.lock().map_err(|_| CError::new(crate::status::RNTUPLE_ERR_INTERNAL, "a lock was poisoned by a panic"))
}

fn gone(what: &str, done: &str) -> CError {
    CError::state(format!("{what} was {done} already"))
}

/// A schema from JSON text: an object of field name -> C++ type name, in order.
pub fn schema_from_json(text: &str) -> CResult<FieldTypes> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| CError::invalid(format!("the schema is not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| CError::invalid("the schema must be a JSON object of field name -> C++ type name"))?;
    let mut pairs = Vec::with_capacity(obj.len());
    for (k, t) in obj {
        pairs.push((k.as_str(), t.as_str().ok_or_else(|| CError::invalid(format!("the schema's type of '{k}' must be a string")))?));
    }
    if pairs.is_empty() {
        return Err(CError::invalid("the schema has no field"));
    }
    pairs.into_iter().map(|(f, t)| Ok((f.to_string(), parse(t).map_err(|e| CError::invalid(format!("field '{f}': {e}")))?))).collect()
}

/// A schema from an Arrow schema (a struct, one member per field; nullable levels become
/// `std::optional`). The C schema is borrowed, not released.
pub unsafe fn schema_from_arrow(schema: *const ArrowSchema) -> CResult<FieldTypes> {
    if schema.is_null() {
        return Err(CError::null("schema"));
    }
    // SAFETY: not null; a valid ArrowSchema (the caller's contract).
    let ffi = unsafe { &*schema_ptr(schema) };
    let s = Schema::try_from(ffi)?;
    if s.fields().is_empty() {
        return Err(CError::invalid("the Arrow schema has no field"));
    }
    Ok(rntuple::convert::schema_from_arrow(&s)?)
}

/// Takes a C `ArrowArray` (a struct array: a record batch) described by `schema`: the array is
/// moved (its release callback is ours now, the caller's struct is marked released), the schema
/// borrowed.
pub unsafe fn import_batch(array: *mut ArrowArray, schema: *const ArrowSchema) -> CResult<RecordBatch> {
    if array.is_null() {
        return Err(CError::null("array"));
    }
    if schema.is_null() {
        return Err(CError::null("schema"));
    }
    // SAFETY: both are valid C data interface structs (the caller's contract); the array is moved
    // out and the caller's struct left released.
    let a = unsafe { std::ptr::replace(array_ptr(array), FFI_ArrowArray::empty()) };
    if a.is_released() {
        return Err(CError::invalid("the ArrowArray was released (or moved) already"));
    }
    let data = unsafe { arrow_array::ffi::from_ffi(a, &*schema_ptr(schema)) }?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(CError::schema(format!("expected a struct array (a record batch), got Arrow type {}", data.data_type())));
    }
    let n = data.len();
    let sa = StructArray::from(data);
    if sa.null_count() > 0 {
        return Err(CError::invalid("a record batch with null rows cannot be written"));
    }
    let (fields, columns, _) = sa.into_parts();
    let opts = RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(std::sync::Arc::new(Schema::new(fields)), columns, &opts)?)
}

fn new_writer(path: &str, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let opts = options_of(options)?;
    let w = Writer::create_with_types(path, ntuple, &schema, opts)?;
    handles::register(WriterObj { state: Mutex::new(Some(Filling::new(w, &schema))), what: format!("the writer of '{ntuple}' in '{path}'") })
}

fn new_parallel(path: &str, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let opts = options_of(options)?;
    let writer = ParallelWriter::create_with_types(path, ntuple, &schema, opts)?;
    handles::register(ParallelWriterObj { writer, schema, done: AtomicBool::new(false), what: format!("the parallel writer of '{ntuple}' in '{path}'") })
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
        let h = handles::register(FillContextObj { state: Mutex::new(Some(Filling::new(ctx, &p.value.schema))) })?;
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

fn with_context<R>(ctx: u64, f: impl FnOnce(&mut Filling<FillContext>) -> CResult<R>) -> CResult<R> {
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

fn finish(st: Option<Filling<FillContext>>) -> CResult<()> {
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

/// A new file that will hold several RNTuples; `options` (0: the defaults) are the file's and
/// its writers' defaults. Nothing is visible under `path` before `rntuple_file_writer_commit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_create(path: *const c_char, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_file_writer_create", || {
        need(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let fw = FileWriter::create(path, options_of(options)?)?;
        let h = handles::register(FileWriterObj { state: Mutex::new(Some(fw)), what: format!("the file writer of '{path}'") })?;
        unsafe { put(out, h, "out") }
    })
}

fn with_file<R>(fw: u64, f: impl FnOnce(&FileWriter) -> CResult<R>) -> CResult<R> {
    let o = handles::get::<FileWriterObj>(fw)?;
    let g = lock(&o.value.state)?;
    let w = g.as_ref().ok_or_else(|| gone(&o.value.what, "committed or aborted"))?;
    f(w)
}

/// A sequential writer of a new RNTuple `ntuple` in the file (schema in JSON; options 0: the
/// file's). Commit it before the file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_writer(fw: u64, ntuple: *const c_char, schema_json: *const c_char, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_file_writer_writer", || {
        need(out, "out")?;
        let ntuple = unsafe { str_arg(ntuple, "ntuple") }?;
        let schema = schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?;
        let w = with_file(fw, |f| {
            let opts = if options == 0 { f.options().clone() } else { options_of(options)? };
            Ok(f.writer_with_types(ntuple, &schema, &opts)?)
        })?;
        let h = handles::register(WriterObj { state: Mutex::new(Some(Filling::new(w, &schema))), what: format!("the writer of '{ntuple}'") })?;
        unsafe { put(out, h, "out") }
    })
}

/// A parallel writer of a new RNTuple `ntuple` in the file (schema in JSON; options 0: the
/// file's). Commit it before the file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_parallel_writer(fw: u64, ntuple: *const c_char, schema_json: *const c_char, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_file_writer_parallel_writer", || {
        need(out, "out")?;
        let ntuple = unsafe { str_arg(ntuple, "ntuple") }?;
        let schema = schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?;
        let writer = with_file(fw, |f| {
            let opts = if options == 0 { f.options().clone() } else { options_of(options)? };
            Ok(f.parallel_writer_with_types(ntuple, &schema, &opts)?)
        })?;
        let h = handles::register(ParallelWriterObj { writer, schema, done: AtomicBool::new(false), what: format!("the parallel writer of '{ntuple}'") })?;
        unsafe { put(out, h, "out") }
    })
}

/// Commits the file (its writers must be committed). `*bytes` (may be null) receives its size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_commit(fw: u64, bytes: *mut u64) -> i32 {
    guard("rntuple_file_writer_commit", || {
        let o = handles::get::<FileWriterObj>(fw)?;
        let f = lock(&o.value.state)?.take().ok_or_else(|| gone(&o.value.what, "committed or aborted"))?;
        let size = f.commit()?;
        if !bytes.is_null() {
            unsafe { bytes.write(size) };
        }
        Ok(())
    })
}

/// Frees a file writer handle (0 is ignored); a file not committed is discarded.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_file_writer_free(fw: u64) -> i32 {
    guard("rntuple_file_writer_free", || {
        if let Some(o) = handles::free::<FileWriterObj>(fw)?
            && let Some(f) = lock(&o.value.state)?.take()
        {
            f.abort();
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
