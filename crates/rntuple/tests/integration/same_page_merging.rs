//! Same-page merging (`WriteOptions::same_page_merging`, on by default as in ROOT 6.40): a
//! collection's `std::vector` members of equal lengths have equal offset pages, which are stored
//! once per cluster, their locators sharing the first copy's offset. Checked for the sequential
//! and the parallel writer and for a merge, with the option on and off.

use rntuple::format::descriptor::ClusterDescriptor;
use rntuple::write::{ParallelWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::collections::HashMap;
use std::path::PathBuf;

const SCHEMA: [(&str, &str); 4] =
    [("nMuon", "std::uint32_t"), ("Muon_pt", "std::vector<float>"), ("Muon_eta", "std::vector<float>"), ("Muon_charge", "std::vector<std::int32_t>")];

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("rntuple-it-same_page_merging-{}-{name}", std::process::id()))
}

/// Entry `i`: `i % 5` muons, each member with its own values.
fn entry(i: u64) -> Value {
    let n = i % 5;
    let list = |f: &dyn Fn(u64) -> Value| Value::List((0..n).map(f).collect());
    Value::Record(vec![
        ("nMuon".into(), Value::UInt(n)),
        ("Muon_pt".into(), list(&|k| Value::F32((i * 7 + k) as f32 * 0.5))),
        ("Muon_eta".into(), list(&|k| Value::F32((i + k) as f32 * -0.01))),
        ("Muon_charge".into(), list(&|k| Value::Int(if (i + k).is_multiple_of(2) { 1 } else { -1 }))),
    ])
}

/// Small pages and clusters, so that there are many pages and several clusters.
fn opts(merging: bool) -> WriteOptions {
    WriteOptions { same_page_merging: merging, max_unzipped_page_size: 2048, approx_zipped_cluster_size: 60_000, ..WriteOptions::default() }
}

const N: u64 = 40_000;

fn write_sequential(name: &str, merging: bool) -> PathBuf {
    let path = tmp(name);
    let mut w = Writer::create(&path, "Events", &SCHEMA, opts(merging)).expect("create");
    for i in 0..N {
        w.fill(&entry(i)).expect("fill");
    }
    w.commit().expect("commit");
    path
}

fn write_parallel(name: &str, merging: bool) -> PathBuf {
    let path = tmp(name);
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, opts(merging)).expect("create");
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let mut ctx = w.fill_context().expect("context");
            s.spawn(move || {
                for i in (t * N / 2)..((t + 1) * N / 2) {
                    ctx.fill(&entry(i)).expect("fill");
                }
                ctx.finish().expect("finish");
            });
        }
    });
    w.commit().expect("commit");
    path
}

/// Pages in a cluster, and how many of them share their stored bytes with an earlier page of the
/// cluster (same offset); shared pages have the same size.
fn shared_pages(c: &ClusterDescriptor) -> (usize, usize) {
    let mut seen: HashMap<u64, u64> = HashMap::new();
    let (mut pages, mut shared) = (0, 0);
    for p in c.columns.iter().flatten().flat_map(|r| &r.pages) {
        pages += 1;
        if let Some(size) = seen.insert(p.locator.offset, p.locator.size) {
            assert_eq!(size, p.locator.size, "pages at one offset have one size");
            shared += 1;
        }
    }
    (pages, shared)
}

/// Every entry read back, as JSON.
fn values(path: &PathBuf) -> Vec<String> {
    let r = RNTupleFile::open(path).expect("open").reader("Events").expect("reader");
    assert_eq!(r.num_entries(), N);
    let mut out: Vec<String> = r.read_values(None, 0, N).expect("read").iter().map(|v| v.to_json().to_string()).collect();
    out.sort(); // the parallel writer's clusters come in any order
    out
}

fn sharing(path: &PathBuf) -> (usize, usize, usize) {
    let r = RNTupleFile::open(path).expect("open").reader("Events").expect("reader");
    let clusters = &r.descriptor().clusters;
    let (pages, shared) = clusters.iter().map(shared_pages).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (clusters.len(), pages, shared)
}

fn check_on_off(on: &PathBuf, off: &PathBuf, what: &str) {
    let (clusters, pages, shared) = sharing(on);
    assert!(clusters >= 2, "{what}: several clusters ({clusters})");
    // Three offset columns of equal lengths: two of each three offset pages are shared.
    assert!(shared * 4 >= pages / 2, "{what}: {shared} of {pages} pages shared with merging on");
    let (_, pages_off, shared_off) = sharing(off);
    assert_eq!(shared_off, 0, "{what}: nothing shared with merging off");
    // Fewer pages stored (the cluster boundaries may move: as ROOT's, the compression factor that sizes
    // clusters counts the bytes written, so the pages listed need not be the same).
    assert!(pages - shared < pages_off, "{what}: {} pages stored with merging, {pages_off} without", pages - shared);
    let (size_on, size_off) = (std::fs::metadata(on).expect("size").len(), std::fs::metadata(off).expect("size").len());
    assert!(size_on < size_off, "{what}: {size_on} bytes with merging, {size_off} without");
    assert_eq!(values(on), values(off), "{what}: the same values");
    let expected: Vec<String> = {
        let mut v: Vec<String> = (0..N).map(|i| entry(i).to_json().to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(values(on), expected, "{what}: the values written");
}

#[test]
fn the_sequential_writer_stores_equal_pages_once() {
    let (on, off) = (write_sequential("seq-on.root", true), write_sequential("seq-off.root", false));
    check_on_off(&on, &off, "sequential");
    let default = tmp("seq-default.root");
    let mut w = Writer::create(
        &default,
        "Events",
        &SCHEMA,
        WriteOptions { max_unzipped_page_size: 2048, approx_zipped_cluster_size: 60_000, ..WriteOptions::default() },
    )
    .expect("create");
    for i in 0..N {
        w.fill(&entry(i)).expect("fill");
    }
    w.commit().expect("commit");
    assert!(sharing(&default).2 > 0, "merging is on by default");
    for p in [on, off, default] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn the_parallel_writer_stores_equal_pages_once() {
    let (on, off) = (write_parallel("par-on.root", true), write_parallel("par-off.root", false));
    check_on_off(&on, &off, "parallel");
    for p in [on, off] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn no_merging_without_page_checksums() {
    let path = tmp("nochecksum.root");
    let mut w = Writer::create(&path, "Events", &SCHEMA, WriteOptions { enable_page_checksums: false, ..opts(true) }).expect("create");
    for i in 0..N {
        w.fill(&entry(i)).expect("fill");
    }
    w.commit().expect("commit");
    assert_eq!(sharing(&path).2, 0, "merging needs checksums (as in ROOT)");
    std::fs::remove_file(path).ok();
}

#[test]
fn a_merge_merges_equal_pages_of_unmerged_inputs() {
    let off = write_sequential("merge-in.root", false);
    let (merged_on, merged_off) = (tmp("merged-on.root"), tmp("merged-off.root"));
    let s_on = rntuple::ops::merge::merge(&[&off, &off], "Events", &merged_on, WriteOptions::default()).expect("merge");
    let s_off = rntuple::ops::merge::merge(&[&off, &off], "Events", &merged_off, opts(false)).expect("merge");
    let (_, pages, shared) = sharing(&merged_on);
    assert!(shared > 0 && shared < pages, "merge with merging on: {shared} of {pages} pages shared");
    assert_eq!(sharing(&merged_off).2, 0, "merge with merging off shares nothing");
    assert_eq!(s_on.pages + shared as u64, s_off.pages, "pages stored once are counted once");
    let read = |p: &PathBuf| RNTupleFile::open(p).expect("open").reader("Events").expect("reader").read_values(None, 0, 2 * N).expect("read");
    assert_eq!(read(&merged_on), read(&merged_off));
    for p in [off, merged_on, merged_off] {
        std::fs::remove_file(p).ok();
    }
}

#[test]
fn pages_written_one_by_one_are_merged_too() {
    // Implicit MT off: the sequential writer writes each page as it is sealed; unbuffered: every page.
    for (name, o) in [("streamed", WriteOptions { use_implicit_mt: false, ..opts(true) }), ("unbuffered", WriteOptions { buffered: false, ..opts(true) })] {
        let path = tmp(&format!("{name}.root"));
        let mut w = Writer::create(&path, "Events", &SCHEMA, o.clone()).expect("create");
        for i in 0..N {
            w.fill(&entry(i)).expect("fill");
        }
        w.commit().expect("commit");
        let off = tmp(&format!("{name}-off.root"));
        let mut w = Writer::create(&off, "Events", &SCHEMA, WriteOptions { same_page_merging: false, ..o }).expect("create");
        for i in 0..N {
            w.fill(&entry(i)).expect("fill");
        }
        w.commit().expect("commit");
        check_on_off(&path, &off, name);
        for p in [path, off] {
            std::fs::remove_file(p).ok();
        }
    }
}
