//! Bulk reads of element ranges within one cluster (`rntuple::read::BulkReader::read_range`), for
//! callers whose buffers are smaller than a cluster: a buffer of a few pages reused from chunk to
//! chunk stays in the processor's cache. Where the column's pages end
//! (`rntuple_reader_column_page_ends`) are the chunk boundaries that decode every page once.
//! Offsets read by ranges are **cluster-local** end offsets.

use crate::bulk::{check_buffer, for_element_type, out_slice, type_of, with_state};
use crate::handles;
use crate::read::ReaderObj;
use crate::status::{guard, CError, CResult, RNTUPLE_ERR_BUFFER};
use crate::strings::{put, str_arg};
use rntuple::logical::Scalar;
use rntuple::read::{BulkColumn, BulkElement, BulkReader};
use std::ffi::{c_char, c_void};
use std::ops::Range;

/// Refuses a cluster index past the RNTuple's clusters, naming the column asked for.
fn check_cluster(r: &ReaderObj, field: &str, column: u32, cluster: usize) -> CResult<()> {
    let k = r.reader.descriptor().clusters.len();
    if cluster >= k {
        return Err(CError::invalid(format!("field '{field}' column {column}: cluster index {cluster} is past the RNTuple's {k} clusters")));
    }
    Ok(())
}

/// Reads elements `[first, first + count)` of column `column` of field `field` in cluster
/// `cluster` (indices within the cluster) into `buf` (`buf_bytes` bytes, aligned to the element
/// size) and the number of elements written (`count`) into `*n_written` (when not null).
/// Elements are of the type `rntuple_reader_column_elements` reports. A collection's or string's
/// offsets are **cluster-local end offsets**: entry `i` of the cluster ends its items at item
/// `off[i]` of the cluster's item column, so the items of entries `[a, b)` are
/// `[a ? off[a-1] : 0, off[b-1])` (read those with another range). Chunks that end where pages end (`rntuple_reader_column_page_ends`)
/// decode every page once; other chunks decode the pages they cut through once per chunk.
///
/// Errors: a cluster index past the clusters or a range past the cluster's elements (or
/// `first + count` overflowing) is `RNTUPLE_ERR_INVALID_ARGUMENT`; a buffer smaller than `count`
/// elements `RNTUPLE_ERR_BUFFER`, with `count` in `*n_written`; an unknown field or column
/// `RNTUPLE_ERR_NOT_FOUND`. The decompression scratch stays with the reader handle: a loop over
/// chunks into one buffer allocates nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_read_column_range(
    reader: u64,
    field: *const c_char,
    column: u32,
    cluster: usize,
    first: u64,
    count: u64,
    buf: *mut c_void,
    buf_bytes: usize,
    n_written: *mut u64,
) -> i32 {
    guard("rntuple_reader_read_column_range", || {
        let r = handles::get::<ReaderObj>(reader)?;
        let field = unsafe { str_arg(field, "field") }?;
        let end = first.checked_add(count).ok_or_else(|| {
            CError::invalid(format!("field '{field}' column {column}: elements {first} + {count} of cluster {cluster}: the range's end overflows 64 bits"))
        })?;
        check_cluster(&r.value, field, column, cluster)?;
        with_state(&r.value, field, column, |bulk, col| {
            let held = r.value.reader.bulk_len(col, cluster..cluster + 1)?;
            if end > held {
                return Err(CError::invalid(format!(
                    "field '{field}' column {column}: elements {first}..{end} of cluster {cluster}: the cluster holds {held}"
                )));
            }
            let (_, size) = type_of(col.element_type());
            unsafe { check_buffer(field, column, size, count, buf, buf_bytes, n_written, || format!("elements {first}..{end} of cluster {cluster} are")) }?;
            let args = (&r.value, col, cluster, first..end, buf, buf_bytes);
            let written = unsafe { for_element_type!(col.element_type(), read_range_into(bulk, args)) }?;
            if !n_written.is_null() {
                unsafe { put(n_written, written as u64, "n_written") }?;
            }
            Ok(())
        })
    })
}

/// What a range read reads: the reader, the column, the cluster, the elements, the buffer and its
/// size in bytes.
type RangeArgs<'a> = (&'a ReaderObj, &'a BulkColumn, usize, Range<u64>, *mut c_void, usize);

/// Reads a range into `buf` as a slice of `T`.
///
/// # Safety
/// `buf` is null with `bytes` 0, or valid for writes of `bytes` bytes and aligned for `T`.
unsafe fn read_range_into<T: BulkElement>(bulk: &mut BulkReader, (r, col, cluster, range, buf, bytes): RangeArgs) -> CResult<usize> {
    let out = unsafe { out_slice::<T>(buf, bytes) };
    Ok(bulk.read_range_uninit(&r.reader, col, cluster, range, out)?)
}

/// Where the pages of column `column` of field `field` end in cluster `cluster`, as element
/// indices within the cluster (ascending; the last is the cluster's element count; a column
/// without data in the cluster has one "page" of all its elements), into `ends` (room for
/// `capacity` values). The number of page ends is always written to `*n` (when not null); when
/// more than `capacity`, the result is `RNTUPLE_ERR_BUFFER` and `ends` is left untouched (call
/// again with `*n` values of room; `ends` may be null with `capacity` 0 to ask). Chunks of
/// `rntuple_reader_read_column_range` between consecutive ends (from 0) decode every page once.
/// Errors as `rntuple_reader_read_column_range`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_reader_column_page_ends(
    reader: u64,
    field: *const c_char,
    column: u32,
    cluster: usize,
    ends: *mut u64,
    capacity: usize,
    n: *mut usize,
) -> i32 {
    guard("rntuple_reader_column_page_ends", || {
        let r = handles::get::<ReaderObj>(reader)?;
        let field = unsafe { str_arg(field, "field") }?;
        check_cluster(&r.value, field, column, cluster)?;
        let got = with_state(&r.value, field, column, |_, col| Ok(r.value.reader.bulk_page_ends(col, cluster)?))?;
        if !n.is_null() {
            unsafe { put(n, got.len(), "n") }?;
        }
        if got.len() > capacity {
            return Err(CError::new(
                RNTUPLE_ERR_BUFFER,
                format!("field '{field}' column {column}: cluster {cluster} has {} page ends, the buffer has room for {capacity}", got.len()),
            ));
        }
        if ends.is_null() {
            return Err(CError::null("ends"));
        }
        // SAFETY: `ends` is not null and valid for `capacity >= got.len()` values (the contract).
        unsafe { std::ptr::copy_nonoverlapping(got.as_ptr(), ends, got.len()) };
        Ok(())
    })
}

/// The range reads of every column of a file of several clusters and many pages, through the ABI,
/// against whole-cluster reads: in chunks of several sizes (cutting pages) and at the page ends;
/// from a mapped file too; misuse.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::{rntuple_reader_column_elements, rntuple_reader_read_column};
    use crate::read::{rntuple_file_free, rntuple_file_open, rntuple_file_open_mapped, rntuple_open, rntuple_reader_free, rntuple_reader_open};
    use crate::status::{RNTUPLE_ERR_INVALID_ARGUMENT, RNTUPLE_ERR_NOT_FOUND, RNTUPLE_ERR_NULL_POINTER, RNTUPLE_OK};
    use rntuple::write::{WriteOptions, Writer};
    use rntuple::Value;
    use std::ffi::{CStr, CString};
    use std::path::PathBuf;

    /// Every column of the test file: (field, column).
    const COLUMNS: [(&str, u32); 11] =
        [("id", 0), ("x", 0), ("v", 0), ("v._0", 0), ("s", 0), ("s", 1), ("a._0", 0), ("vv", 0), ("vv._0", 0), ("vv._0._0", 0), ("b", 0)];

    fn last_error() -> String {
        unsafe { CStr::from_ptr(crate::status::rntuple_last_error()) }.to_string_lossy().into_owned()
    }

    /// A file of several clusters of many small pages, with a column of every kind; removed on drop.
    struct TestFile(PathBuf);

    impl Drop for TestFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn test_file(tag: &str) -> TestFile {
        let path = std::env::temp_dir().join(format!("rntuple-c-bulk-range-{tag}-{}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 8_000, max_unzipped_page_size: 512, ..Default::default() };
        let schema = [
            ("id", "std::uint64_t"),
            ("x", "double"),
            ("v", "std::vector<float>"),
            ("s", "std::string"),
            ("a", "std::array<std::int16_t,3>"),
            ("vv", "std::vector<std::vector<std::int32_t>>"),
            ("b", "bool"),
        ];
        let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
        for i in 0..3000u64 {
            let v: Vec<Value> = (0..i % 5).map(|j| Value::F32((i * 10 + j) as f32 * 0.5)).collect();
            let a: Vec<Value> = (0..3).map(|j| Value::Int(i as i64 * 3 - j)).collect();
            let vv: Vec<Value> = (0..i % 3).map(|j| Value::List((0..j + i % 2).map(|q| Value::Int((i + q) as i64 - 7)).collect())).collect();
            w.fill(&Value::Record(vec![
                ("id".into(), Value::UInt(i * 7)),
                ("x".into(), Value::F64(i as f64 / 3.0)),
                ("v".into(), Value::List(v)),
                ("s".into(), Value::String("ab".repeat((i % 4) as usize))),
                ("a".into(), Value::List(a)),
                ("vv".into(), Value::List(vv)),
                ("b".into(), Value::Bool(i % 3 == 0)),
            ]))
            .unwrap();
        }
        w.commit().unwrap();
        TestFile(path)
    }

    fn open(path: &std::path::Path, mapped: bool) -> u64 {
        let p = CString::new(path.to_str().unwrap()).unwrap();
        let (mut f, mut r) = (0u64, 0u64);
        let rc = unsafe {
            if mapped {
                rntuple_file_open_mapped(p.as_ptr(), &mut f)
            } else {
                rntuple_file_open(p.as_ptr(), &mut f)
            }
        };
        assert_eq!(rc, RNTUPLE_OK, "{}", last_error());
        assert_eq!(unsafe { rntuple_reader_open(f, std::ptr::null(), &mut r) }, RNTUPLE_OK, "{}", last_error());
        assert_eq!(rntuple_file_free(f), RNTUPLE_OK);
        r
    }

    fn clusters(r: u64) -> usize {
        handles::get::<ReaderObj>(r).unwrap().value.reader.descriptor().clusters.len()
    }

    /// (elements, element size) of a column in a cluster.
    fn elements(r: u64, field: &CStr, column: u32, c: usize) -> (u64, usize) {
        let (mut n, mut size) = (0u64, 0u32);
        let rc = unsafe { rntuple_reader_column_elements(r, field.as_ptr(), column, c, c + 1, &mut n, &mut size, std::ptr::null_mut()) };
        assert_eq!(rc, RNTUPLE_OK, "{}", last_error());
        (n, size as usize)
    }

    /// The column's bytes, cluster by cluster, read whole.
    fn whole(r: u64, field: &CStr, column: u32) -> Vec<Vec<u8>> {
        (0..clusters(r))
            .map(|c| {
                let (n, size) = elements(r, field, column, c);
                let mut buf = vec![0u64; (n as usize * size).div_ceil(8)];
                let mut got = 0u64;
                let rc = unsafe { rntuple_reader_read_column(r, field.as_ptr(), column, c, c + 1, buf.as_mut_ptr().cast(), buf.len() * 8, &mut got) };
                assert_eq!((rc, got), (RNTUPLE_OK, n), "{}", last_error());
                bytes(&buf)[..n as usize * size].to_vec()
            })
            .collect()
    }

    fn bytes(v: &[u64]) -> &[u8] {
        // SAFETY: any `u64` is 8 initialized bytes.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), v.len() * 8) }
    }

    fn page_ends(r: u64, field: &CStr, column: u32, c: usize) -> Vec<u64> {
        let mut n = 0usize;
        let rc = unsafe { rntuple_reader_column_page_ends(r, field.as_ptr(), column, c, std::ptr::null_mut(), 0, &mut n) };
        assert_eq!((rc, n > 0), (RNTUPLE_ERR_BUFFER, true), "{}", last_error());
        let mut ends = vec![u64::MAX; n + 2];
        let mut again = 0usize;
        let rc = unsafe { rntuple_reader_column_page_ends(r, field.as_ptr(), column, c, ends.as_mut_ptr(), ends.len(), &mut again) };
        assert_eq!((rc, again), (RNTUPLE_OK, n), "{}", last_error());
        assert_eq!(&ends[n..], &[u64::MAX; 2], "written past the count");
        ends.truncate(n);
        ends
    }

    /// The column's bytes, cluster by cluster, read in ranges ending at `bounds(cluster, n)` into
    /// one buffer of `room` bytes reused for every chunk.
    fn by_ranges(r: u64, field: &CStr, column: u32, room: usize, bounds: impl Fn(usize, u64) -> Vec<u64>) -> Vec<Vec<u8>> {
        let mut buf = vec![0u64; room.div_ceil(8)];
        (0..clusters(r))
            .map(|c| {
                let (n, size) = elements(r, field, column, c);
                let mut out = Vec::new();
                let mut start = 0u64;
                for end in bounds(c, n) {
                    let mut got = u64::MAX;
                    let rc =
                        unsafe { rntuple_reader_read_column_range(r, field.as_ptr(), column, c, start, end - start, buf.as_mut_ptr().cast(), room, &mut got) };
                    assert_eq!((rc, got), (RNTUPLE_OK, end - start), "{field:?} cluster {c} {start}..{end}: {}", last_error());
                    out.extend_from_slice(&bytes(&buf)[..(end - start) as usize * size]);
                    start = end;
                }
                assert_eq!(start, n);
                out
            })
            .collect()
    }

    fn chunks(n: u64, chunk: u64) -> Vec<u64> {
        (1..=n.div_ceil(chunk)).map(|k| (k * chunk).min(n)).collect()
    }

    #[test]
    fn every_column_in_chunks_and_by_pages_equals_whole_clusters() {
        let f = test_file("chunks");
        let r = open(&f.0, false);
        let k = clusters(r);
        assert!(k > 2, "{k} clusters");
        let core = handles::get::<ReaderObj>(r).unwrap();
        let mut cut_pages = false;
        for (name, column) in COLUMNS {
            let field = CString::new(name).unwrap();
            let want = whole(r, &field, column);
            assert!(want.iter().map(Vec::len).sum::<usize>() > 0, "{name}: no elements");
            for chunk in [1u64, 7, 100, 1 << 20] {
                let got = by_ranges(r, &field, column, chunk as usize * 8, |_, n| chunks(n, chunk));
                assert_eq!(got, want, "{name} column {column} in chunks of {chunk}");
            }
            // At the page ends, into a buffer of the largest page; they are the core's.
            let col = core.value.reader.bulk_column(name, column as usize).unwrap();
            let ends: Vec<Vec<u64>> = (0..k).map(|c| page_ends(r, &field, column, c)).collect();
            for (c, e) in ends.iter().enumerate() {
                assert_eq!(e, &core.value.reader.bulk_page_ends(&col, c).unwrap(), "{name} cluster {c}");
                assert_eq!(e.last().copied(), Some(elements(r, &field, column, c).0));
                assert!(e.windows(2).all(|w| w[0] < w[1]), "{name}: page ends ascend: {e:?}");
                cut_pages |= e.len() > 2 && e.iter().any(|&end| end % 7 != 0);
            }
            let page = ends.iter().flat_map(|e| e.iter().scan(0, |s, &end| Some(end - std::mem::replace(s, end)))).max().unwrap_or(0);
            let got = by_ranges(r, &field, column, page as usize * 8, |c, _| ends[c].clone());
            assert_eq!(got, want, "{name} column {column} by pages");
        }
        assert!(cut_pages, "chunks of 7 should cut pages");
        // Offsets by ranges are cluster-local: the last of a cluster is its item count.
        let (v, items) = (CString::new("v").unwrap(), CString::new("v._0").unwrap());
        for c in 0..k {
            let (n, _) = elements(r, &v, 0, c);
            let mut last = 0u64;
            let rc = unsafe { rntuple_reader_read_column_range(r, v.as_ptr(), 0, c, n - 1, 1, (&mut last as *mut u64).cast(), 8, std::ptr::null_mut()) };
            assert_eq!((rc, last), (RNTUPLE_OK, elements(r, &items, 0, c).0));
        }
        drop(core);
        assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
    }

    #[test]
    fn a_mapped_file_reads_what_pread_reads() {
        let f = test_file("mapped");
        let (plain, mapped) = (open(&f.0, false), open(&f.0, true));
        assert_eq!(clusters(plain), clusters(mapped));
        for (name, column) in COLUMNS {
            let field = CString::new(name).unwrap();
            let want = whole(plain, &field, column);
            assert_eq!(whole(mapped, &field, column), want, "{name} column {column}, whole clusters");
            assert_eq!(by_ranges(mapped, &field, column, 7 * 8, |_, n| chunks(n, 7)), want, "{name} column {column}, chunks of 7");
        }
        // The same through the one-call open (pread) and the mapped file handle's reader.
        let p = CString::new(f.0.to_str().unwrap()).unwrap();
        let mut again = 0u64;
        assert_eq!(unsafe { rntuple_open(p.as_ptr(), std::ptr::null(), &mut again) }, RNTUPLE_OK);
        let x = CString::new("x").unwrap();
        assert_eq!(whole(again, &x, 0), whole(mapped, &x, 0));
        for r in [plain, mapped, again] {
            assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
        }
        // A directory and a missing file are refused, naming the path.
        let mut h = 0u64;
        let dir = CString::new(std::env::temp_dir().to_str().unwrap()).unwrap();
        assert_eq!(unsafe { rntuple_file_open_mapped(dir.as_ptr(), &mut h) }, RNTUPLE_ERR_INVALID_ARGUMENT);
        assert!(last_error().contains("not a regular file"), "{}", last_error());
        let missing = CString::new("/nonexistent/mapped.root").unwrap();
        assert_eq!(unsafe { rntuple_file_open_mapped(missing.as_ptr(), &mut h) }, RNTUPLE_ERR_NOT_FOUND);
        assert!(last_error().contains("/nonexistent/mapped.root"), "{}", last_error());
        assert_eq!(unsafe { rntuple_file_open_mapped(std::ptr::null(), &mut h) }, RNTUPLE_ERR_NULL_POINTER);
        assert_eq!(unsafe { rntuple_file_open_mapped(p.as_ptr(), std::ptr::null_mut()) }, RNTUPLE_ERR_NULL_POINTER);
        assert_eq!(h, 0);
    }

    #[test]
    fn misuse_is_an_error_naming_field_column_cluster_and_range() {
        let f = test_file("misuse");
        let r = open(&f.0, false);
        let k = clusters(r);
        let (x, nope) = (CString::new("x").unwrap(), CString::new("nope").unwrap());
        let (n, _) = elements(r, &x, 0, 0);
        let mut buf = [0f64; 16];
        let p = buf.as_mut_ptr().cast::<c_void>();
        let mut got = 0u64;
        let read = |cluster: usize, first: u64, count: u64, buf: *mut c_void, bytes: usize, got: &mut u64| unsafe {
            rntuple_reader_read_column_range(r, x.as_ptr(), 0, cluster, first, count, buf, bytes, got)
        };
        let check = |rc: i32, want: i32, needle: &str| {
            let e = last_error();
            assert_eq!(rc, want, "{e}");
            assert!(e.starts_with("rntuple_reader_") && e.contains(needle), "'{e}' lacks '{needle}'");
        };
        check(
            read(0, n - 2, 3, p, 128, &mut got),
            RNTUPLE_ERR_INVALID_ARGUMENT,
            &format!("field 'x' column 0: elements {}..{} of cluster 0: the cluster holds {n}", n - 2, n + 1),
        );
        check(
            read(0, 5, u64::MAX, p, 128, &mut got),
            RNTUPLE_ERR_INVALID_ARGUMENT,
            &format!("elements 5 + {} of cluster 0: the range's end overflows", u64::MAX),
        );
        check(
            read(k, 0, 1, p, 128, &mut got),
            RNTUPLE_ERR_INVALID_ARGUMENT,
            &format!("field 'x' column 0: cluster index {k} is past the RNTuple's {k} clusters"),
        );
        check(read(usize::MAX, 0, 1, p, 128, &mut got), RNTUPLE_ERR_INVALID_ARGUMENT, "is past the RNTuple's");
        got = 0;
        check(
            read(0, 1, 17, p, 128, &mut got),
            RNTUPLE_ERR_BUFFER,
            "elements 1..18 of cluster 0 are 17 elements of 8 bytes (136 bytes), the buffer has 128 bytes",
        );
        assert_eq!(got, 17, "the elements needed");
        check(
            read(0, 0, 1, unsafe { p.cast::<u8>().add(4) }.cast(), 64, &mut got),
            RNTUPLE_ERR_INVALID_ARGUMENT,
            "not aligned to the 8-byte elements of field 'x' column 0",
        );
        check(read(0, 0, 1, std::ptr::null_mut(), 8, &mut got), RNTUPLE_ERR_NULL_POINTER, "'buf'");
        let rc = unsafe { rntuple_reader_read_column_range(r, std::ptr::null(), 0, 0, 0, 1, p, 128, &mut got) };
        check(rc, RNTUPLE_ERR_NULL_POINTER, "'field'");
        let rc = unsafe { rntuple_reader_read_column_range(r, nope.as_ptr(), 0, 0, 0, 1, p, 128, &mut got) };
        check(rc, RNTUPLE_ERR_NOT_FOUND, "no field 'nope'");
        // An empty range at the cluster's end reads nothing, into no buffer.
        got = 1;
        assert_eq!((read(0, n, 0, std::ptr::null_mut(), 0, &mut got), got), (RNTUPLE_OK, 0));
        let mut ends = [0u64; 1];
        let mut m = 0usize;
        let rc = unsafe { rntuple_reader_column_page_ends(r, x.as_ptr(), 0, 0, ends.as_mut_ptr(), 1, &mut m) };
        check(rc, RNTUPLE_ERR_BUFFER, "field 'x' column 0: cluster 0 has");
        assert!(m > 1 && ends[0] == 0, "{m} page ends; nothing written");
        let rc = unsafe { rntuple_reader_column_page_ends(r, x.as_ptr(), 0, k, ends.as_mut_ptr(), 1, &mut m) };
        check(rc, RNTUPLE_ERR_INVALID_ARGUMENT, &format!("cluster index {k} is past"));
        let rc = unsafe { rntuple_reader_column_page_ends(r, x.as_ptr(), 0, 0, std::ptr::null_mut(), 100, &mut m) };
        check(rc, RNTUPLE_ERR_NULL_POINTER, "'ends'");
        let rc = unsafe { rntuple_reader_column_page_ends(r, std::ptr::null(), 0, 0, ends.as_mut_ptr(), 1, &mut m) };
        check(rc, RNTUPLE_ERR_NULL_POINTER, "'field'");
        assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
        check(read(0, 0, 1, p, 128, &mut got), crate::status::RNTUPLE_ERR_BAD_HANDLE, "freed");
    }
}
