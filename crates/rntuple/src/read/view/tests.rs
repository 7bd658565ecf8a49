//! Views against the bulk and value reads: every entry in order and at random over a file of many
//! small clusters and pages, records' members, collections of records, strings; the page counts
//! with and without a budget; misuse.

use crate::read::file::RNTupleFile;
use crate::read::open::Reader;
use crate::write::{WriteOptions, Writer};
use crate::Value;

const N: u64 = 3000;

fn reader(tag: &str) -> Reader {
    let path = std::env::temp_dir().join(format!("rntuple-view-{tag}-{}.root", std::process::id()));
    let opts = WriteOptions { approx_zipped_cluster_size: 6_000, max_unzipped_page_size: 512, ..Default::default() };
    let schema = [
        ("id", "std::uint64_t"),
        ("x", "double"),
        ("v", "std::vector<float>"),
        ("s", "std::string"),
        ("p", "std::pair<float,std::int32_t>"),
        ("vp", "std::vector<std::pair<std::int16_t,double>>"),
        ("b", "bool"),
        ("a", "std::array<float,2>"),
    ];
    let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
    for i in 0..N {
        let v: Vec<Value> = (0..i % 5).map(|j| Value::F32((i * 10 + j) as f32 * 0.5)).collect();
        let vp: Vec<Value> =
            (0..i % 4).map(|j| Value::Record(vec![("_0".into(), Value::Int(j as i64 - 2)), ("_1".into(), Value::F64(i as f64 + j as f64 / 8.0))])).collect();
        w.fill(&Value::Record(vec![
            ("id".into(), Value::UInt(i * 7)),
            ("x".into(), Value::F64(i as f64 / 3.0)),
            ("v".into(), Value::List(v)),
            ("s".into(), Value::String(format!("é{}", "ab".repeat((i % 4) as usize)))),
            ("p".into(), Value::Record(vec![("_0".into(), Value::F32(i as f32 * 0.25)), ("_1".into(), Value::Int(-(i as i64)))])),
            ("vp".into(), Value::List(vp)),
            ("b".into(), Value::Bool(i % 3 == 0)),
            ("a".into(), Value::List(vec![Value::F32(1.0), Value::F32(2.0)])),
        ]))
        .unwrap();
    }
    w.commit().unwrap();
    let r = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(r.descriptor().clusters.len() > 5, "the file should have many clusters");
    r
}

/// Entries in an order that jumps between clusters and pages and comes back.
fn shuffled() -> Vec<u64> {
    let mut x = 12345u64;
    (0..N)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % N
        })
        .collect()
}

#[test]
fn scalars_in_order_and_at_random_equal_the_values() {
    let r = reader("scalars");
    let mut id = r.view::<u64>("id").unwrap();
    let mut x = r.view::<f64>("x").unwrap();
    let mut b = r.view::<bool>("b").unwrap();
    let mut p0 = r.view::<f32>("p._0").unwrap();
    let mut p1 = r.view::<i32>("p._1").unwrap();
    for i in shuffled().into_iter().chain(0..N) {
        assert_eq!(id.get(i).unwrap(), i * 7);
        assert_eq!(x.get(i).unwrap(), i as f64 / 3.0);
        assert_eq!(b.get(i).unwrap(), i % 3 == 0);
        assert_eq!(p0.get(i).unwrap(), i as f32 * 0.25);
        assert_eq!(p1.get(i).unwrap(), -(i as i32));
    }
    // Every page once: the scattered pass kept every page it touched (far below the budget), the
    // pass in order found them there and dropped each page it left.
    let pages: usize = (0..r.descriptor().clusters.len()).map(|k| r.bulk_page_ends(&r.bulk_column("x", 0).unwrap(), k).unwrap().len()).sum();
    assert!(pages > 20, "{pages} pages");
    assert_eq!(x.pages_decoded(), pages as u64);
    assert!(x.cached_bytes() < 3 * 512, "{} bytes held after reading in order", x.cached_bytes());
}

#[test]
fn reading_in_order_holds_the_page_in_use_only() {
    let r = reader("in-order");
    let mut x = r.view::<f64>("x").unwrap();
    let mut v = r.view::<Vec<f32>>("v").unwrap();
    let mut most = 0;
    for i in 0..N {
        assert_eq!(x.get(i).unwrap(), i as f64 / 3.0);
        assert_eq!(v.get(i).unwrap().len() as u64, i % 5);
        most = most.max(x.cached_bytes() + v.cached_bytes());
    }
    // A page of x, an offsets page and one or two item pages of v at a time, and the first page
    // of each column (left before the run in order showed): bounded, where keeping every page
    // would hold the whole columns (512-byte pages).
    assert!(most <= 8 * 512, "{most} bytes held at most");
    const { assert!(N * 8 > 20 * 512) };
    // Each page decoded once.
    let count = |path: &str| -> u64 {
        let c = r.bulk_column(path, 0).unwrap();
        (0..r.descriptor().clusters.len()).map(|k| r.bulk_page_ends(&c, k).unwrap().len() as u64).sum()
    };
    assert_eq!(x.pages_decoded(), count("x"));
    assert_eq!(v.pages_decoded(), count("v") + count("v._0"));
}

#[test]
fn a_small_budget_evicts_and_decodes_again() {
    let r = reader("budget");
    let mut x = r.view::<f64>("x").unwrap();
    x.set_cache_budget(1024);
    for i in 0..N {
        assert_eq!(x.get(i).unwrap(), i as f64 / 3.0);
    }
    let in_order = x.pages_decoded();
    assert!(x.cached_bytes() <= 1024, "{}", x.cached_bytes());
    for i in shuffled() {
        assert_eq!(x.get(i).unwrap(), i as f64 / 3.0);
    }
    assert!(x.pages_decoded() > in_order + 100, "{} then {}", in_order, x.pages_decoded());
}

#[test]
fn collections_strings_and_members_of_collections_equal_the_values() {
    let r = reader("items");
    let values = r.read_values(None, 0, N).unwrap();
    let mut v = r.view::<Vec<f32>>("v").unwrap();
    let mut s = r.view::<String>("s").unwrap();
    let mut vp0 = r.view::<Vec<i16>>("vp._0._0").unwrap();
    let mut vp1 = r.view::<Vec<f64>>("vp._0._1").unwrap();
    for i in shuffled().into_iter().chain(0..N) {
        let Value::Record(fields) = &values[i as usize] else { panic!("entry {i} is no record") };
        let want_v: Vec<f32> = (0..i % 5).map(|j| (i * 10 + j) as f32 * 0.5).collect();
        assert_eq!(v.get(i).unwrap(), &want_v[..], "entry {i}");
        assert_eq!(s.get(i).unwrap(), format!("é{}", "ab".repeat((i % 4) as usize)));
        let want0: Vec<i16> = (0..i % 4).map(|j| j as i16 - 2).collect();
        let want1: Vec<f64> = (0..i % 4).map(|j| i as f64 + j as f64 / 8.0).collect();
        assert_eq!(vp0.get(i).unwrap(), &want0[..]);
        assert_eq!(vp1.get(i).unwrap(), &want1[..]);
        assert_eq!(fields.len(), 8);
    }
    // Each offsets and item page decoded once though entries spread over pages (the scattered
    // pass first: it keeps them, the pass in order finds them).
    let count = |path: &str| -> u64 {
        let c = r.bulk_column(path, 0).unwrap();
        (0..r.descriptor().clusters.len()).map(|k| r.bulk_page_ends(&c, k).unwrap().len() as u64).sum()
    };
    assert_eq!(v.pages_decoded(), count("v") + count("v._0"));
}

#[test]
fn views_on_threads_share_a_reader() {
    let r = std::sync::Arc::new(reader("threads"));
    let sums: Vec<u64> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..3u64)
            .map(|t| {
                let r = r.clone();
                sc.spawn(move || {
                    let mut id = crate::read::view::View::<_, u64>::new(r, "id").unwrap();
                    (t..N).step_by(3).map(|i| id.get(i).unwrap()).sum::<u64>()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(sums.iter().sum::<u64>(), 7 * N * (N - 1) / 2);
}

#[test]
fn misuse_is_an_error_naming_the_field() {
    let r = reader("misuse");
    let msg = |e: crate::Error| e.to_string();
    assert!(msg(r.view::<f32>("x").unwrap_err()).contains("'x'"));
    assert!(msg(r.view::<f32>("v").unwrap_err()).contains("one value per entry"));
    assert!(msg(r.view::<f32>("a._0").unwrap_err()).contains("one value per entry"));
    assert!(msg(r.view::<Vec<f32>>("x").unwrap_err()).contains("not a collection"));
    assert!(msg(r.view::<Vec<f32>>("p").unwrap_err()).contains("not a collection"));
    assert!(msg(r.view::<String>("v").unwrap_err()).contains("not a string"));
    assert!(msg(r.view::<u64>("nope").unwrap_err()).contains("no field 'nope'"));
    let mut x = r.view::<f64>("x").unwrap();
    assert!(msg(x.get(N).unwrap_err()).contains("past the end"));
    let mut v = r.view::<Vec<f32>>("v").unwrap();
    assert!(v.get(u64::MAX).is_err());
}

#[test]
fn item_windows_hold_their_entries_items() {
    let r = reader("windows");
    let mut v = crate::read::view::ItemsCursor::<f32>::new(r.bulk_column("v", 0).unwrap(), r.bulk_column("v._0", 0).unwrap()).unwrap();
    let mut covered = 0u64;
    let mut i = 0;
    while i < N {
        let w = v.window(&r, i).unwrap();
        assert_eq!(w.first, i);
        for (j, &end) in w.ends.iter().enumerate() {
            let e = w.first + j as u64;
            let lo = if j == 0 { w.base } else { w.ends[j - 1] };
            let got = &w.items[(lo - w.base) as usize..(end - w.base) as usize];
            let want: Vec<f32> = (0..e % 5).map(|q| (e * 10 + q) as f32 * 0.5).collect();
            assert_eq!(got, &want[..], "entry {e}");
        }
        covered += w.ends.len() as u64;
        i += w.ends.len() as u64;
    }
    assert_eq!(covered, N);
}
