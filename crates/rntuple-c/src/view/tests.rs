//! Views and entry objects through the ABI against the values written: values, items, strings,
//! windows, the entry object; misuse as error codes.

use super::load::*;
use super::*;
use crate::read::{rntuple_file_free, rntuple_file_open, rntuple_reader_free, rntuple_reader_open};
use crate::setters::{RNTUPLE_TYPE_F32, RNTUPLE_TYPE_F64, RNTUPLE_TYPE_I32, RNTUPLE_TYPE_STRING, RNTUPLE_TYPE_U64};
use crate::status::{RNTUPLE_ERR_BAD_HANDLE, RNTUPLE_ERR_INVALID_ARGUMENT, RNTUPLE_ERR_NOT_FOUND, RNTUPLE_ERR_NULL_POINTER, RNTUPLE_OK};
use rntuple::write::{WriteOptions, Writer};
use rntuple::Value;
use std::ffi::{CStr, CString};

const N: u64 = 2000;

fn last_error() -> String {
    unsafe { CStr::from_ptr(crate::status::rntuple_last_error()) }.to_string_lossy().into_owned()
}

/// A reader handle of a file of many clusters and small pages.
fn reader(tag: &str) -> u64 {
    let path = std::env::temp_dir().join(format!("rntuple-c-view-{tag}-{}.root", std::process::id()));
    let opts = WriteOptions { approx_zipped_cluster_size: 6_000, max_unzipped_page_size: 512, ..Default::default() };
    let schema = [("id", "std::uint64_t"), ("x", "double"), ("v", "std::vector<float>"), ("s", "std::string"), ("p", "std::pair<float,std::int32_t>")];
    let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
    for i in 0..N {
        let v: Vec<Value> = (0..i % 5).map(|j| Value::F32((i * 10 + j) as f32 * 0.5)).collect();
        w.fill(&Value::Record(vec![
            ("id".into(), Value::UInt(i * 7)),
            ("x".into(), Value::F64(i as f64 / 3.0)),
            ("v".into(), Value::List(v)),
            ("s".into(), Value::String("ab".repeat((i % 4) as usize))),
            ("p".into(), Value::Record(vec![("_0".into(), Value::F32(i as f32 * 0.25)), ("_1".into(), Value::Int(-(i as i64)))])),
        ]))
        .unwrap();
    }
    w.commit().unwrap();
    let p = CString::new(path.to_str().unwrap()).unwrap();
    let (mut f, mut r) = (0u64, 0u64);
    assert_eq!(unsafe { rntuple_file_open(p.as_ptr(), &mut f) }, RNTUPLE_OK, "{}", last_error());
    assert_eq!(unsafe { rntuple_reader_open(f, std::ptr::null(), &mut r) }, RNTUPLE_OK, "{}", last_error());
    assert_eq!(rntuple_file_free(f), RNTUPLE_OK);
    std::fs::remove_file(&path).unwrap();
    r
}

fn view(r: u64, field: &str, code: u32, items: bool) -> Result<u64, i32> {
    let f = CString::new(field).unwrap();
    let mut v = 0u64;
    let rc = unsafe {
        if items {
            rntuple_view_create_items(r, f.as_ptr(), code, &mut v)
        } else {
            rntuple_view_create(r, f.as_ptr(), code, &mut v)
        }
    };
    if rc == RNTUPLE_OK {
        Ok(v)
    } else {
        Err(rc)
    }
}

fn items<T: Copy>(v: u64, entry: u64) -> Vec<T> {
    let (mut p, mut n) = (std::ptr::null::<c_void>(), 0u64);
    assert_eq!(unsafe { rntuple_view_get_items(v, entry, &mut p, &mut n) }, RNTUPLE_OK, "{}", last_error());
    if n == 0 {
        return Vec::new();
    }
    unsafe { std::slice::from_raw_parts(p as *const T, n as usize) }.to_vec()
}

fn want_v(i: u64) -> Vec<f32> {
    (0..i % 5).map(|j| (i * 10 + j) as f32 * 0.5).collect()
}

#[test]
fn views_read_values_items_strings_and_windows() {
    let r = reader("views");
    let (id, x, v, s, p1) = (
        view(r, "id", RNTUPLE_TYPE_U64, false).unwrap(),
        view(r, "x", RNTUPLE_TYPE_F64, false).unwrap(),
        view(r, "v", RNTUPLE_TYPE_F32, true).unwrap(),
        view(r, "s", RNTUPLE_TYPE_STRING, false).unwrap(),
        view(r, "p._1", RNTUPLE_TYPE_I32, false).unwrap(),
    );
    for i in (0..N).rev() {
        let mut got = 0u64;
        assert_eq!(unsafe { rntuple_view_get(id, i, (&mut got as *mut u64).cast(), 8) }, RNTUPLE_OK, "{}", last_error());
        assert_eq!(got, i * 7);
        let mut q = 0i32;
        assert_eq!(unsafe { rntuple_view_get(p1, i, (&mut q as *mut i32).cast(), 4) }, RNTUPLE_OK);
        assert_eq!(q, -(i as i32));
        assert_eq!(items::<f32>(v, i), want_v(i));
        assert_eq!(items::<u8>(s, i), "ab".repeat((i % 4) as usize).into_bytes());
    }
    // Windows of values and of items cover every entry once, in order.
    let (mut e, mut w) = (0u64, rntuple_items_window { first: 0, count: 0, ends: std::ptr::null(), base: 0, items: std::ptr::null() });
    while e < N {
        let (mut first, mut count, mut vals) = (0u64, 0u64, std::ptr::null::<c_void>());
        assert_eq!(unsafe { rntuple_view_window(x, e, &mut first, &mut count, &mut vals) }, RNTUPLE_OK, "{}", last_error());
        assert!(first <= e && e < first + count);
        let xs = unsafe { std::slice::from_raw_parts(vals as *const f64, count as usize) };
        assert_eq!(xs[(e - first) as usize], e as f64 / 3.0);
        assert_eq!(unsafe { rntuple_view_items_window(v, e, &mut w) }, RNTUPLE_OK, "{}", last_error());
        let ends = unsafe { std::slice::from_raw_parts(w.ends, w.count as usize) };
        let all = unsafe { std::slice::from_raw_parts(w.items as *const f32, (ends[ends.len() - 1] - w.base) as usize) };
        for (j, &end) in ends.iter().enumerate() {
            let lo = if j == 0 { w.base } else { ends[j - 1] };
            assert_eq!(&all[(lo - w.base) as usize..(end - w.base) as usize], &want_v(w.first + j as u64)[..]);
        }
        e = w.first + w.count;
    }
    let (mut pages, mut bytes) = (0u64, 0u64);
    assert_eq!(unsafe { rntuple_view_stats(id, &mut pages, &mut bytes) }, RNTUPLE_OK);
    assert_eq!(bytes, N * 8);
    assert!(pages > 10, "{pages}");
    for h in [id, x, v, s, p1] {
        assert_eq!(rntuple_view_free(h), RNTUPLE_OK);
    }
    assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
}

#[test]
fn the_entry_object_loads_bound_fields() {
    let r = reader("load");
    let mut l = 0u64;
    assert_eq!(unsafe { rntuple_entry_load_create(r, &mut l) }, RNTUPLE_OK);
    let (mut id, mut x, mut p0) = (0u64, 0f64, 0f32);
    let mut v = rntuple_items { data: std::ptr::null(), len: 0 };
    let mut s = rntuple_items { data: std::ptr::null(), len: 0 };
    let bind = |name: &str, code: u32, dst: *mut c_void| unsafe { rntuple_entry_load_bind(l, CString::new(name).unwrap().as_ptr(), code, dst) };
    assert_eq!(bind("id", RNTUPLE_TYPE_U64, (&mut id as *mut u64).cast()), RNTUPLE_OK);
    assert_eq!(bind("x", RNTUPLE_TYPE_F64, (&mut x as *mut f64).cast()), RNTUPLE_OK);
    assert_eq!(bind("p._0", RNTUPLE_TYPE_F32, (&mut p0 as *mut f32).cast()), RNTUPLE_OK);
    assert_eq!(bind("s", RNTUPLE_TYPE_STRING, (&mut s as *mut rntuple_items).cast()), RNTUPLE_OK);
    assert_eq!(unsafe { rntuple_entry_load_bind_items(l, c"v".as_ptr(), RNTUPLE_TYPE_F32, &mut v) }, RNTUPLE_OK);
    // Misuse: a wrong type, an unknown field, a null destination; nothing bound by them.
    assert_ne!(bind("x", RNTUPLE_TYPE_F32, (&mut p0 as *mut f32).cast()), RNTUPLE_OK);
    assert!(last_error().contains("'x'"), "{}", last_error());
    assert_eq!(bind("nope", RNTUPLE_TYPE_F32, (&mut p0 as *mut f32).cast()), RNTUPLE_ERR_NOT_FOUND);
    assert_eq!(bind("x", RNTUPLE_TYPE_F64, std::ptr::null_mut()), RNTUPLE_ERR_NULL_POINTER);
    let mut n = 0usize;
    assert_eq!(unsafe { rntuple_entry_load_fields(l, &mut n) }, RNTUPLE_OK);
    assert_eq!(n, 5);
    for i in (0..N).step_by(7).chain((0..N).rev().step_by(13)) {
        assert_eq!(rntuple_entry_load(l, i), RNTUPLE_OK, "{}", last_error());
        assert_eq!((id, x, p0), (i * 7, i as f64 / 3.0, i as f32 * 0.25));
        let got = if v.len == 0 { Vec::new() } else { unsafe { std::slice::from_raw_parts(v.data as *const f32, v.len as usize) }.to_vec() };
        assert_eq!(got, want_v(i));
        let st = if s.len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(s.data as *const u8, s.len as usize) } };
        assert_eq!(st, "ab".repeat((i % 4) as usize).as_bytes());
    }
    assert_eq!(rntuple_entry_load(l, N), RNTUPLE_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("past the end"), "{}", last_error());
    assert_eq!(rntuple_entry_load_free(l), RNTUPLE_OK);
    assert_eq!(rntuple_entry_load(l, 0), RNTUPLE_ERR_BAD_HANDLE);
    assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
}

#[test]
fn misuse_of_views_is_an_error_code() {
    let r = reader("misuse");
    assert!(view(r, "x", RNTUPLE_TYPE_F32, false).is_err());
    assert!(last_error().contains("'x'"), "{}", last_error());
    assert_eq!(view(r, "nope", RNTUPLE_TYPE_F32, false), Err(RNTUPLE_ERR_NOT_FOUND));
    assert_eq!(view(r, "x", 99, false), Err(RNTUPLE_ERR_INVALID_ARGUMENT));
    assert!(view(r, "v", RNTUPLE_TYPE_F32, false).is_err());
    assert!(view(r, "x", RNTUPLE_TYPE_F64, true).is_err());
    let x = view(r, "x", RNTUPLE_TYPE_F64, false).unwrap();
    let mut f = 0f32;
    assert_eq!(unsafe { rntuple_view_get(x, 0, (&mut f as *mut f32).cast(), 4) }, RNTUPLE_ERR_INVALID_ARGUMENT);
    let mut d = 0f64;
    assert_eq!(unsafe { rntuple_view_get(x, N, (&mut d as *mut f64).cast(), 8) }, RNTUPLE_ERR_INVALID_ARGUMENT);
    assert_eq!(unsafe { rntuple_view_get(x, 0, std::ptr::null_mut(), 8) }, RNTUPLE_ERR_NULL_POINTER);
    let (mut p, mut n) = (std::ptr::null::<c_void>(), 0u64);
    assert_eq!(unsafe { rntuple_view_get_items(x, 0, &mut p, &mut n) }, RNTUPLE_ERR_INVALID_ARGUMENT);
    assert_eq!(unsafe { rntuple_view_get(r, 0, (&mut d as *mut f64).cast(), 8) }, crate::status::RNTUPLE_ERR_WRONG_HANDLE);
    assert_eq!(rntuple_view_free(x), RNTUPLE_OK);
    assert_eq!(unsafe { rntuple_view_get(x, 0, (&mut d as *mut f64).cast(), 8) }, RNTUPLE_ERR_BAD_HANDLE);
    assert_eq!(rntuple_reader_free(r), RNTUPLE_OK);
}
