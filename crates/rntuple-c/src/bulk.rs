//! Bulk column reads into the caller's memory: one column of a field over a range of clusters,
//! decoded straight into the caller's buffer (`rntuple::read::BulkReader`). The decompression
//! scratch stays with the reader handle between calls, so a loop over clusters that reuses one
//! buffer allocates nothing. Offsets columns (a collection's or a string's column 0) read as
//! `uint64_t` end offsets, global over the cluster range read (see `rntuple_reader_read_column`).

use crate::handles;
use crate::read::ReaderObj;
use crate::setters::{
    RNTUPLE_TYPE_BOOL, RNTUPLE_TYPE_F32, RNTUPLE_TYPE_F64, RNTUPLE_TYPE_I16, RNTUPLE_TYPE_I32, RNTUPLE_TYPE_I64, RNTUPLE_TYPE_I8, RNTUPLE_TYPE_U16,
    RNTUPLE_TYPE_U32, RNTUPLE_TYPE_U64, RNTUPLE_TYPE_U8,
};
use crate::status::{guard, CError, CResult, RNTUPLE_ERR_BUFFER};
use crate::strings::{put, str_arg};
use rntuple::logical::Scalar;
use rntuple::read::{BulkColumn, BulkElement, BulkReader};
use std::ffi::{c_char, c_void};
use std::mem::MaybeUninit;
use std::ops::Range;

/// The `RNTUPLE_TYPE_*` code and byte size of an element type.
pub(crate) fn type_of(s: Scalar) -> (u32, u32) {
    match s {
        Scalar::Bool => (RNTUPLE_TYPE_BOOL, 1),
        Scalar::Char | Scalar::I8 => (RNTUPLE_TYPE_I8, 1),
        Scalar::Byte | Scalar::U8 => (RNTUPLE_TYPE_U8, 1),
        Scalar::I16 => (RNTUPLE_TYPE_I16, 2),
        Scalar::U16 => (RNTUPLE_TYPE_U16, 2),
        Scalar::I32 => (RNTUPLE_TYPE_I32, 4),
        Scalar::U32 => (RNTUPLE_TYPE_U32, 4),
        Scalar::I64 => (RNTUPLE_TYPE_I64, 8),
        Scalar::U64 => (RNTUPLE_TYPE_U64, 8),
        Scalar::F32 => (RNTUPLE_TYPE_F32, 4),
        Scalar::F64 => (RNTUPLE_TYPE_F64, 8),
    }
}

/// The cluster range `[begin, end)`, refused when reversed (the core refuses one past the end).
fn clusters(begin: usize, end: usize) -> CResult<Range<usize>> {
    if begin > end {
        return Err(CError::invalid(format!("cluster range {begin}..{end} is reversed")));
    }
    Ok(begin..end)
}

/// Runs `f` with a bulk state of the reader (its scratch and last resolved column) resolved for
/// `field`/`column`, taken from the handle's pool and given back afterwards.
pub(crate) fn with_state<R>(r: &ReaderObj, field: &str, column: u32, f: impl FnOnce(&mut BulkReader, &BulkColumn) -> CResult<R>) -> CResult<R> {
    let poisoned = || CError::new(crate::status::RNTUPLE_ERR_INTERNAL, "the reader's bulk scratch lock was poisoned by a panic");
    let taken = r.bulk.lock().map_err(|_| poisoned())?.pop();
    let (mut bulk, cached) = taken.unwrap_or_default();
    let col = match cached {
        Some(c) if c.path() == field && c.column() == column as usize => c,
        _ => r.reader.bulk_column(field, column as usize)?,
    };
    let out = f(&mut bulk, &col);
    r.bulk.lock().map_err(|_| poisoned())?.push((bulk, Some(col)));
    out
}

/// The checks of a read into a caller's buffer of `buf_bytes` bytes for `count` elements of
/// `size` bytes (field `field`, column `column`): `buf` aligned to the elements, large enough
/// (else `RNTUPLE_ERR_BUFFER`, the count needed written to `*n_written`; `span` says what was
/// asked for, as "clusters 0..2 hold"), and not null unless empty.
///
/// # Safety
/// `n_written` is null or valid for a write of a `u64`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn check_buffer(
    field: &str,
    column: u32,
    size: u32,
    count: u64,
    buf: *mut c_void,
    buf_bytes: usize,
    n_written: *mut u64,
    span: impl FnOnce() -> String,
) -> CResult<()> {
    if !buf.is_null() && !(buf as usize).is_multiple_of(size as usize) {
        return Err(CError::invalid(format!("'buf' is not aligned to the {size}-byte elements of field '{field}' column {column}")));
    }
    let need = count.checked_mul(u64::from(size)).ok_or_else(|| CError::invalid("element count overflows"))?;
    if need > buf_bytes as u64 {
        if !n_written.is_null() {
            unsafe { put(n_written, count, "n_written") }?;
        }
        return Err(CError::new(
            RNTUPLE_ERR_BUFFER,
            format!("field '{field}' column {column}: {} {count} elements of {size} bytes ({need} bytes), the buffer has {buf_bytes} bytes", span()),
        ));
    }
    if buf.is_null() && buf_bytes > 0 {
        return Err(CError::null("buf"));
    }
    Ok(())
}

/// The caller's buffer as a slice of `T` (empty when null).
///
/// # Safety
/// `buf` is null, or valid for writes of `bytes` bytes and aligned for `T` (checked by
/// [`check_buffer`]), for the lifetime `'a`.
pub(crate) unsafe fn out_slice<'a, T>(buf: *mut c_void, bytes: usize) -> &'a mut [MaybeUninit<T>] {
    let len = bytes / std::mem::size_of::<T>();
    if buf.is_null() || len == 0 {
        return &mut [];
    }
    // SAFETY: valid for `len * size_of::<T>() <= bytes` bytes and aligned (the contract);
    // `MaybeUninit` makes no claim about the bytes there.
    unsafe { std::slice::from_raw_parts_mut(buf.cast::<MaybeUninit<T>>(), len) }
}

/// `$f::<T>(args...)` with `T` the Rust type of a column's element type (`$ty`, a [`Scalar`]).
macro_rules! for_element_type {
    ($ty:expr, $f:ident($($arg:expr),*)) => {
        match $ty {
            Scalar::Bool => $f::<bool>($($arg),*),
            Scalar::Char | Scalar::I8 => $f::<i8>($($arg),*),
            Scalar::Byte | Scalar::U8 => $f::<u8>($($arg),*),
            Scalar::I16 => $f::<i16>($($arg),*),
            Scalar::U16 => $f::<u16>($($arg),*),
            Scalar::I32 => $f::<i32>($($arg),*),
            Scalar::U32 => $f::<u32>($($arg),*),
            Scalar::I64 => $f::<i64>($($arg),*),
            Scalar::U64 => $f::<u64>($($arg),*),
            Scalar::F32 => $f::<f32>($($arg),*),
            Scalar::F64 => $f::<f64>($($arg),*),
        }
    };
}
pub(crate) use for_element_type;

/// The number of elements column `column` of field `field` (a dotted path: `"muons._0.pt"`)
/// holds in clusters `[cluster_begin, cluster_end)`, with the element type's size in bytes and
/// `RNTUPLE_TYPE_*` code (`RNTUPLE_TYPE_U64` for offsets). `column` is 0 for a leaf and for a
/// collection's or string's offsets; 1 for a string's chars (`RNTUPLE_TYPE_I8`). Any of the
/// out-pointers may be null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_column_elements(
    reader: u64,
    field: *const c_char,
    column: u32,
    cluster_begin: usize,
    cluster_end: usize,
    n: *mut u64,
    element_size: *mut u32,
    type_code: *mut u32,
) -> i32 {
    guard("rntuple_reader_column_elements", || {
        let r = handles::get::<ReaderObj>(reader)?;
        let field = unsafe { str_arg(field, "field") }?;
        let range = clusters(cluster_begin, cluster_end)?;
        with_state(&r.value, field, column, |_, col| {
            let count = r.value.reader.bulk_len(col, range)?;
            let (code, size) = type_of(col.element_type());
            unsafe {
                if !n.is_null() {
                    put(n, count, "n")?;
                }
                if !element_size.is_null() {
                    put(element_size, size, "element_size")?;
                }
                if !type_code.is_null() {
                    put(type_code, code, "type_code")?;
                }
            }
            Ok(())
        })
    })
}

/// Reads column `column` of field `field` over clusters `[cluster_begin, cluster_end)` into
/// `buf` (`buf_bytes` bytes, aligned to the element size) and the number of elements written into
/// `*n_written` (when not null). Elements are of the type `rntuple_reader_column_elements`
/// reports. A collection's or string's offsets are **end offsets, global over the range**: entry
/// `i` of the range holds items `[i ? buf[i-1] : 0, buf[i])` of the item column read over the same
/// clusters (within one cluster: the stored cluster-local offsets). A buffer too small is
/// `RNTUPLE_ERR_BUFFER`, with the elements needed in `*n_written`. The decompression scratch stays
/// with the reader handle: a loop over clusters into one buffer allocates nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_read_column(
    reader: u64,
    field: *const c_char,
    column: u32,
    cluster_begin: usize,
    cluster_end: usize,
    buf: *mut c_void,
    buf_bytes: usize,
    n_written: *mut u64,
) -> i32 {
    guard("rntuple_reader_read_column", || {
        let r = handles::get::<ReaderObj>(reader)?;
        let field = unsafe { str_arg(field, "field") }?;
        let range = clusters(cluster_begin, cluster_end)?;
        with_state(&r.value, field, column, |bulk, col| {
            let count = r.value.reader.bulk_len(col, range.clone())?;
            let (_, size) = type_of(col.element_type());
            unsafe { check_buffer(field, column, size, count, buf, buf_bytes, n_written, || format!("clusters {cluster_begin}..{cluster_end} hold")) }?;
            let written = unsafe { for_element_type!(col.element_type(), read_into(bulk, &r.value, col, range.clone(), buf, buf_bytes)) }?;
            if !n_written.is_null() {
                unsafe { put(n_written, written as u64, "n_written") }?;
            }
            Ok(())
        })
    })
}

/// Reads into `buf` as a slice of `T`.
///
/// # Safety
/// `buf` is null with `bytes` 0, or valid for writes of `bytes` bytes and aligned for `T`.
unsafe fn read_into<T: BulkElement>(
    bulk: &mut BulkReader,
    r: &ReaderObj,
    col: &BulkColumn,
    range: Range<usize>,
    buf: *mut c_void,
    bytes: usize,
) -> CResult<usize> {
    let out = unsafe { out_slice::<T>(buf, bytes) };
    Ok(bulk.read_uninit(&r.reader, col, range, out)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::{RNTUPLE_ERR_INVALID_ARGUMENT, RNTUPLE_ERR_NOT_FOUND, RNTUPLE_OK};
    use rntuple::write::{WriteOptions, Writer};
    use rntuple::Value;
    use std::ffi::CString;

    #[test]
    fn a_loop_over_clusters_reuses_one_buffer_and_the_scratch() {
        let path = std::env::temp_dir().join(format!("rntuple-c-bulk-{}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 2000, ..Default::default() };
        let mut w = Writer::create(&path, "T", &[("v", "std::vector<float>")], opts).unwrap();
        for i in 0..2000u32 {
            let v = (0..i % 4).map(|k| Value::F32((i + k) as f32)).collect();
            w.fill(&Value::Record(vec![("v".into(), Value::List(v))])).unwrap();
        }
        w.commit().unwrap();
        let (p, ntuple) = (CString::new(path.to_str().unwrap()).unwrap(), CString::new("T").unwrap());
        let mut r = 0u64;
        assert_eq!(unsafe { crate::read::rntuple_open(p.as_ptr(), ntuple.as_ptr(), &mut r) }, RNTUPLE_OK);
        let obj = handles::get::<ReaderObj>(r).unwrap();
        let k = obj.value.reader.descriptor().clusters.len();
        assert!(k > 2);
        let (items, offs) = (CString::new("v._0").unwrap(), CString::new("v").unwrap());
        let mut buf = vec![0f32; 8192];
        let (mut total, mut sum) = (0u64, 0f64);
        for pass in 0..2 {
            for c in 0..k {
                let (mut n, mut size, mut code) = (0u64, 0u32, 0u32);
                assert_eq!(unsafe { rntuple_reader_column_elements(r, items.as_ptr(), 0, c, c + 1, &mut n, &mut size, &mut code) }, RNTUPLE_OK);
                assert_eq!((size, code), (4, RNTUPLE_TYPE_F32));
                let mut got = 0u64;
                let rc = unsafe { rntuple_reader_read_column(r, items.as_ptr(), 0, c, c + 1, buf.as_mut_ptr().cast(), buf.len() * 4, &mut got) };
                assert_eq!((rc, got), (RNTUPLE_OK, n));
                if pass == 0 {
                    total += got;
                    sum += buf[..got as usize].iter().map(|&x| f64::from(x)).sum::<f64>();
                }
            }
        }
        let expect: Vec<u32> = (0..2000u32).flat_map(|i| (0..i % 4).map(move |k| i + k)).collect();
        assert_eq!(total, expect.len() as u64);
        assert_eq!(sum, expect.iter().map(|&x| f64::from(x)).sum::<f64>());
        // One state in the pool, its scratch kept.
        let pool = obj.value.bulk.lock().unwrap();
        assert_eq!(pool.len(), 1);
        assert!(pool[0].0.scratch_bytes() > 0);
        drop(pool);
        // Offsets over the whole range end at the item count; misuse.
        let mut o = vec![0u64; 2000];
        let mut got = 0u64;
        assert_eq!(unsafe { rntuple_reader_read_column(r, offs.as_ptr(), 0, 0, k, o.as_mut_ptr().cast(), 2000 * 8, &mut got) }, RNTUPLE_OK);
        assert_eq!((got, o[1999]), (2000, total));
        let rc = unsafe { rntuple_reader_read_column(r, offs.as_ptr(), 0, 0, k, o.as_mut_ptr().cast(), 100, &mut got) };
        assert_eq!((rc, got), (RNTUPLE_ERR_BUFFER, 2000));
        let rc = unsafe { rntuple_reader_read_column(r, offs.as_ptr(), 0, 0, k, o.as_mut_ptr().cast::<u8>().add(1).cast(), 8000, &mut got) };
        assert_eq!(rc, RNTUPLE_ERR_INVALID_ARGUMENT);
        let rc = unsafe { rntuple_reader_column_elements(r, offs.as_ptr(), 0, 1, 0, &mut got, std::ptr::null_mut(), std::ptr::null_mut()) };
        assert_eq!(rc, RNTUPLE_ERR_INVALID_ARGUMENT);
        let nope = CString::new("nope").unwrap();
        let rc = unsafe { rntuple_reader_column_elements(r, nope.as_ptr(), 0, 0, 1, &mut got, std::ptr::null_mut(), std::ptr::null_mut()) };
        assert_eq!(rc, RNTUPLE_ERR_NOT_FOUND);
        drop(obj);
        assert_eq!(crate::read::rntuple_reader_free(r), RNTUPLE_OK);
        std::fs::remove_file(&path).unwrap();
    }
}
