//! Files and readers: open a path or URL, list its RNTuples, open one (the only one when no name
//! is given, as the CLI's `--ntuple`), its entries, top-level fields with their ROOT type names,
//! cluster boundaries and Arrow schema.

use crate::ffi_types::{schema_out, ArrowSchema};
use crate::handles::{self, Object};
use crate::status::{guard, CError, CResult};
use crate::strings::{need, opt_str_arg, put, str_arg, str_list_arg, write_str};
use arrow_array::ffi::FFI_ArrowSchema;
use rntuple::{RNTupleFile, Reader};
use std::ffi::c_char;
use std::sync::Arc;

/// A ROOT file open for reading.
pub struct FileObj {
    /// The file.
    pub file: Arc<RNTupleFile>,
}

impl Object for FileObj {
    const KIND: &'static str = "file";
    const TAG: u8 = 1;
}

/// One RNTuple open for reading.
pub struct ReaderObj {
    /// The reader, shared with the streams made from it.
    pub reader: Arc<Reader>,
    /// Readable top-level fields: (name, ROOT type name).
    pub fields: Vec<(String, String)>,
    /// The scratch of bulk column reads (`bulk`), one per call at a time, kept for the next calls
    /// with the column each last resolved: a loop over clusters allocates nothing.
    pub bulk: std::sync::Mutex<Vec<(rntuple::read::BulkReader, Option<rntuple::read::BulkColumn>)>>,
}

impl Object for ReaderObj {
    const KIND: &'static str = "reader";
    const TAG: u8 = 2;
}

/// The RNTuple `name`, or the only one of the file when `None` (an error naming them when
/// there are several).
pub fn pick_ntuple(f: &RNTupleFile, name: Option<&str>) -> CResult<String> {
    if let Some(n) = name {
        return Ok(n.to_string());
    }
    let names = f.names();
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(CError::new(crate::status::RNTUPLE_ERR_NOT_FOUND, "the file holds no RNTuple")),
        _ => Err(CError::invalid(format!("the file holds several RNTuples ({}); name one", names.join(", ")))),
    }
}

fn reader_obj(f: &RNTupleFile, name: Option<&str>) -> CResult<ReaderObj> {
    let name = pick_ntuple(f, name)?;
    let reader = f.reader(&name)?;
    let fields = reader.fields().iter().map(|fd| (fd.name.clone(), reader.display_type(fd.id))).collect();
    Ok(ReaderObj { reader: Arc::new(reader), fields, bulk: Default::default() })
}

/// Opens a ROOT file: a path, or an `http(s)://` or `s3://` URL. `*out` receives the file handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_open(path: *const c_char, out: *mut u64) -> i32 {
    guard("rntuple_file_open", || {
        need(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let file = RNTupleFile::open(path)?;
        let h = handles::register(FileObj { file: Arc::new(file) })?;
        unsafe { put(out, h, "out") }
    })
}

/// Opens a local ROOT file at `path` through a read-only memory map (`mmap`): pages are decompressed
/// straight out of the kernel's page cache, without the copy into the library's buffers that
/// `rntuple_file_open` (`pread`) makes. `*out` receives the file handle, used as one from
/// `rntuple_file_open`. Only regular files are mapped: a directory, FIFO or device is
/// `RNTUPLE_ERR_INVALID_ARGUMENT`, a missing file `RNTUPLE_ERR_NOT_FOUND`; a URL is not a path here.
///
/// **The file must not shrink or change while it is mapped**: until this handle and every reader
/// and stream opened from it are freed. Bytes past a new end raise `SIGBUS` when touched (which
/// kills the process), and the reader assumes the bytes it was lent stay as they are. Use it for complete files left alone (the usual analysis
/// input); `rntuple_file_open` is immune to both.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_open_mapped(path: *const c_char, out: *mut u64) -> i32 {
    guard("rntuple_file_open_mapped", || {
        need(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let file = RNTupleFile::open_mapped(path)?;
        let h = handles::register(FileObj { file: Arc::new(file) })?;
        unsafe { put(out, h, "out") }
    })
}

/// Closes a file handle (0 is ignored). Readers opened from it stay valid.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_file_free(file: u64) -> i32 {
    guard("rntuple_file_free", || handles::free::<FileObj>(file).map(|_| ()))
}

/// The number of RNTuples in the file.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_ntuple_count(file: u64, out: *mut usize) -> i32 {
    guard("rntuple_file_ntuple_count", || {
        let f = handles::get::<FileObj>(file)?;
        unsafe { put(out, f.value.file.names().len(), "out") }
    })
}

/// The path of the `index`-th RNTuple of the file (key order) into `buf` (see the string rules).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_file_ntuple_name(file: u64, index: usize, buf: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_file_ntuple_name", || {
        let f = handles::get::<FileObj>(file)?;
        let names = f.value.file.names();
        let name = names.get(index).ok_or_else(|| CError::invalid(format!("index {index} is past the file's {} RNTuples", names.len())))?;
        unsafe { write_str(name, buf, cap, len) }
    })
}

/// Opens the RNTuple `ntuple` of an open file (null: the file's only RNTuple). `*out` receives
/// the reader handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_open(file: u64, ntuple: *const c_char, out: *mut u64) -> i32 {
    guard("rntuple_reader_open", || {
        need(out, "out")?;
        let f = handles::get::<FileObj>(file)?;
        let name = unsafe { opt_str_arg(ntuple, "ntuple") }?;
        let h = handles::register(reader_obj(&f.value.file, name)?)?;
        unsafe { put(out, h, "out") }
    })
}

/// Opens the RNTuple `ntuple` (null: the only one) of the file at `path` (a path or URL) in one
/// call. `*out` receives the reader handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_open(path: *const c_char, ntuple: *const c_char, out: *mut u64) -> i32 {
    guard("rntuple_open", || {
        need(out, "out")?;
        let path = unsafe { str_arg(path, "path") }?;
        let name = unsafe { opt_str_arg(ntuple, "ntuple") }?;
        let file = RNTupleFile::open(path)?;
        let h = handles::register(reader_obj(&file, name)?)?;
        unsafe { put(out, h, "out") }
    })
}

/// Closes a reader handle (0 is ignored). Streams made from it stay valid.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_reader_free(reader: u64) -> i32 {
    guard("rntuple_reader_free", || handles::free::<ReaderObj>(reader).map(|_| ()))
}

/// The number of entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_entries(reader: u64, out: *mut u64) -> i32 {
    guard("rntuple_reader_entries", || {
        let r = handles::get::<ReaderObj>(reader)?;
        unsafe { put(out, r.value.reader.num_entries(), "out") }
    })
}

/// The number of readable top-level fields.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_field_count(reader: u64, out: *mut usize) -> i32 {
    guard("rntuple_reader_field_count", || {
        let r = handles::get::<ReaderObj>(reader)?;
        unsafe { put(out, r.value.fields.len(), "out") }
    })
}

fn field_at(r: &ReaderObj, index: usize) -> CResult<&(String, String)> {
    r.fields.get(index).ok_or_else(|| CError::invalid(format!("field index {index} is past the {} readable top-level fields", r.fields.len())))
}

/// The name of the `index`-th readable top-level field into `buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_field_name(reader: u64, index: usize, buf: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_reader_field_name", || {
        let r = handles::get::<ReaderObj>(reader)?;
        unsafe { write_str(&field_at(&r.value, index)?.0, buf, cap, len) }
    })
}

/// The ROOT type name of the `index`-th readable top-level field (`std::vector<float>`) into
/// `buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_field_type(reader: u64, index: usize, buf: *mut c_char, cap: usize, len: *mut usize) -> i32 {
    guard("rntuple_reader_field_type", || {
        let r = handles::get::<ReaderObj>(reader)?;
        unsafe { write_str(&field_at(&r.value, index)?.1, buf, cap, len) }
    })
}

/// The number of clusters.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_cluster_count(reader: u64, out: *mut usize) -> i32 {
    guard("rntuple_reader_cluster_count", || {
        let r = handles::get::<ReaderObj>(reader)?;
        unsafe { put(out, r.value.reader.descriptor().clusters.len(), "out") }
    })
}

/// The entries of the `index`-th cluster: its first entry and its number of entries.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_cluster(reader: u64, index: usize, first_entry: *mut u64, n_entries: *mut u64) -> i32 {
    guard("rntuple_reader_cluster", || {
        need(first_entry, "first_entry")?;
        need(n_entries, "n_entries")?;
        let r = handles::get::<ReaderObj>(reader)?;
        let clusters = &r.value.reader.descriptor().clusters;
        let c = clusters.get(index).ok_or_else(|| CError::invalid(format!("cluster index {index} is past the {} clusters", clusters.len())))?;
        unsafe {
            put(first_entry, c.first_entry, "first_entry")?;
            put(n_entries, c.n_entries, "n_entries")
        }
    })
}

/// The projection's field names (all readable fields when `fields` is null and `n_fields` 0).
pub unsafe fn projection<'a>(fields: *const *const c_char, n_fields: usize) -> CResult<Option<Vec<&'a str>>> {
    if fields.is_null() && n_fields == 0 {
        return Ok(None);
    }
    unsafe { str_list_arg(fields, n_fields, "fields") }.map(Some)
}

/// The Arrow schema (a struct of one child per field) of the chosen top-level fields (`fields[0..n_fields]`;
/// all readable fields when `fields` is null) into `*out`, which the caller releases.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_arrow_schema(reader: u64, fields: *const *const c_char, n_fields: usize, out: *mut ArrowSchema) -> i32 {
    guard("rntuple_reader_arrow_schema", || {
        need(out, "out")?;
        let r = handles::get::<ReaderObj>(reader)?;
        let names = unsafe { projection(fields, n_fields) }?;
        let batch = r.value.reader.read_batch(names.as_deref(), 0, 0)?;
        let ffi = FFI_ArrowSchema::try_from(batch.schema().as_ref())?;
        // SAFETY: `out` is not null and points to writable memory for a schema (the contract).
        unsafe { schema_out(out).write(ffi) };
        Ok(())
    })
}
