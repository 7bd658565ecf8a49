//! The file writer: one new file holding several RNTuples, each written by its own sequential or
//! parallel writer (commit them, then the file). Nothing is visible at the path before the
//! file's commit.

use crate::ffi_types::ArrowSchema;
use crate::filling::{gone, lock};
use crate::handles::{self, Object};
use crate::options::options_of;
use crate::parallel::register_parallel;
use crate::schema::{schema_from_arrow, schema_from_json, FieldTypes};
use crate::status::{guard, CResult};
use crate::strings::{need, put, str_arg};
use crate::write::register_writer;
use rntuple::write::{FileWriter, WriteOptions};
use std::ffi::c_char;
use std::sync::Mutex;

/// A file holding several RNTuples.
pub struct FileWriterObj {
    state: Mutex<Option<FileWriter>>,
    what: String,
}

impl Object for FileWriterObj {
    const KIND: &'static str = "file writer";
    const TAG: u8 = 8;
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

fn options_in(f: &FileWriter, options: u64) -> CResult<WriteOptions> {
    if options == 0 {
        Ok(f.options().clone())
    } else {
        options_of(options)
    }
}

fn sequential_in(fw: u64, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let w = with_file(fw, |f| Ok(f.writer_with_types(ntuple, &schema, &options_in(f, options)?)?))?;
    register_writer(w, &schema, format!("the writer of '{ntuple}'"))
}

fn parallel_in(fw: u64, ntuple: &str, schema: FieldTypes, options: u64) -> CResult<u64> {
    let writer = with_file(fw, |f| Ok(f.parallel_writer_with_types(ntuple, &schema, &options_in(f, options)?)?))?;
    register_parallel(writer, schema, format!("the parallel writer of '{ntuple}'"))
}

/// A sequential writer of a new RNTuple `ntuple` in the file (schema in JSON; options 0: the
/// file's). Commit it before the file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_writer(fw: u64, ntuple: *const c_char, schema_json: *const c_char, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_file_writer_writer", || {
        need(out, "out")?;
        let ntuple = unsafe { str_arg(ntuple, "ntuple") }?;
        let h = sequential_in(fw, ntuple, schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?, options)?;
        unsafe { put(out, h, "out") }
    })
}

/// As `rntuple_file_writer_writer`, with the schema of an Arrow schema (borrowed, not released).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_writer_arrow(fw: u64, ntuple: *const c_char, schema: *const ArrowSchema, options: u64, out: *mut u64) -> i32 {
    guard("rntuple_file_writer_writer_arrow", || {
        need(out, "out")?;
        let ntuple = unsafe { str_arg(ntuple, "ntuple") }?;
        let h = sequential_in(fw, ntuple, unsafe { schema_from_arrow(schema) }?, options)?;
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
        let h = parallel_in(fw, ntuple, schema_from_json(unsafe { str_arg(schema_json, "schema_json") }?)?, options)?;
        unsafe { put(out, h, "out") }
    })
}

/// As `rntuple_file_writer_parallel_writer`, with the schema of an Arrow schema (borrowed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_writer_parallel_writer_arrow(
    fw: u64,
    ntuple: *const c_char,
    schema: *const ArrowSchema,
    options: u64,
    out: *mut u64,
) -> i32 {
    guard("rntuple_file_writer_parallel_writer_arrow", || {
        need(out, "out")?;
        let ntuple = unsafe { str_arg(ntuple, "ntuple") }?;
        let h = parallel_in(fw, ntuple, unsafe { schema_from_arrow(schema) }?, options)?;
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
