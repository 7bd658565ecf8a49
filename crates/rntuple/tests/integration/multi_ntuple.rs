//! Several RNTuples written at once into one file through one `FileWriter`: a parallel `Events`
//! (two threads) and three sequential writers filled interleaved, every value read back; the
//! file's atomicity (a dropped or failing file writer leaves no file, an existing file stays);
//! names refused twice; direct I/O and checkpoints across RNTuples; RNTuples in subdirectories. (ROOT's and uproot's reading
//! of such files is checked in tests/cross/test_multi_ntuple.py.)

use rntuple::write::{FileWriter, WriteOptions};
use rntuple::{RNTupleFile, Value};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-multi-ntuple-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

fn rec(fields: Vec<(&str, Value)>) -> Value {
    Value::Record(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn json(f: &RNTupleFile, name: &str) -> Vec<String> {
    let r = f.reader(name).expect("reader");
    r.read_values(None, 0, r.num_entries()).expect("values").iter().map(|v| v.to_json().to_string()).collect()
}

/// Writes the CMSSW-like file: Events (parallel, 2 threads, `n_events` each), LuminosityBlocks,
/// Runs and MetaData (sequential), filled interleaved with Events.
fn write_cms_like(path: &PathBuf, opts: WriteOptions, n_events: u64) -> u64 {
    let fw = FileWriter::create(path, opts).expect("file writer");
    let events = fw.parallel_writer("Events", &[("event", "std::uint64_t"), ("pt", "std::vector<float>")]).expect("events");
    let mut lumis = fw.writer("LuminosityBlocks", &[("run", "std::uint32_t"), ("lumi", "std::uint32_t")]).expect("lumis");
    let mut runs = fw.writer("Runs", &[("run", "std::uint32_t"), ("nevents", "std::uint64_t")]).expect("runs");
    let mut meta = fw.writer("MetaData", &[("key", "std::string"), ("value", "std::string")]).expect("meta");
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let mut ctx = events.fill_context().expect("context");
            s.spawn(move || {
                for i in 0..n_events {
                    let id = t * 1_000_000 + i;
                    let pt = (0..id % 4).map(|k| Value::F32((id + k) as f32)).collect();
                    ctx.fill(&rec(vec![("event", Value::UInt(id)), ("pt", Value::List(pt))])).expect("fill");
                    if i % 500 == 499 {
                        ctx.flush_cluster().expect("flush");
                    }
                }
                ctx.finish().expect("finish");
            });
        }
        // Meanwhile the other RNTuples fill on this thread, their clusters interleaved with Events'.
        for l in 0..20u32 {
            lumis.fill(&rec(vec![("run", Value::UInt(1)), ("lumi", Value::UInt(l as u64))])).expect("lumi");
            if l % 5 == 4 {
                lumis.commit_cluster().expect("lumi cluster");
            }
            if l % 10 == 0 {
                meta.fill(&rec(vec![("key", Value::String(format!("k{l}"))), ("value", Value::String(format!("v{l}")))])).expect("meta");
                meta.commit_cluster().expect("meta cluster");
            }
        }
        runs.fill(&rec(vec![("run", Value::UInt(1)), ("nevents", Value::UInt(2 * n_events))])).expect("run");
    });
    assert_eq!(fw.ntuple_names(), ["Events", "LuminosityBlocks", "Runs", "MetaData"]);
    events.commit().expect("events commit");
    lumis.commit().expect("lumis commit");
    runs.commit().expect("runs commit");
    meta.commit().expect("meta commit");
    fw.commit().expect("file commit")
}

fn check_cms_like(path: &PathBuf, n_events: u64) {
    let f = RNTupleFile::open(path).expect("open");
    assert_eq!(f.names(), ["Events", "LuminosityBlocks", "Runs", "MetaData"]);
    let r = f.reader("Events").expect("events");
    assert_eq!(r.num_entries(), 2 * n_events);
    let mut ids: Vec<u64> = Vec::new();
    for v in r.read_values(None, 0, r.num_entries()).expect("values") {
        let Value::Record(m) = v else { panic!("not a record: {v:?}") };
        let Value::UInt(id) = m[0].1 else { panic!("event id {:?}", m[0].1) };
        let want: Vec<Value> = (0..id % 4).map(|k| Value::F32((id + k) as f32)).collect();
        assert_eq!(m[1].1, Value::List(want), "pt of event {id}");
        ids.push(id);
    }
    ids.sort_unstable();
    let want: Vec<u64> = (0..2).flat_map(|t| (0..n_events).map(move |i| t * 1_000_000 + i)).collect();
    assert_eq!(ids, want);
    let lumis = json(&f, "LuminosityBlocks");
    assert_eq!(lumis.len(), 20);
    assert_eq!(lumis[7], r#"{"run":1,"lumi":7}"#);
    assert_eq!(json(&f, "Runs"), [format!(r#"{{"run":1,"nevents":{}}}"#, 2 * n_events)]);
    assert_eq!(json(&f, "MetaData"), [r#"{"key":"k0","value":"v0"}"#, r#"{"key":"k10","value":"v10"}"#]);
    for name in f.names() {
        let report = f.reader(&name).expect("reader").check(|_, _| {});
        assert!(report.problems.is_empty() && report.skipped_fields.is_empty(), "{name}: {report:?}");
    }
}

#[test]
fn four_rntuples_filled_interleaved_read_back() {
    let path = tmp("cms.root");
    let size = write_cms_like(&path, WriteOptions::default(), 3000);
    assert_eq!(std::fs::metadata(&path).expect("file").len(), size);
    check_cms_like(&path, 3000);
}

#[test]
fn four_rntuples_with_direct_io_and_small_keys() {
    let path = tmp("cms-direct.root");
    let opts = WriteOptions { use_direct_io: true, max_key_size: 4096, ..WriteOptions::default() };
    match FileWriter::create(&path, opts.clone()) {
        Err(e) if e.to_string().contains("O_DIRECT") => return eprintln!("skipped: {e}"),
        r => drop(r.expect("file writer")),
    }
    write_cms_like(&path, opts, 2000);
    check_cms_like(&path, 2000);
}

#[test]
fn checkpoints_list_every_rntuple_committed_so_far() {
    let path = tmp("cms-checkpoints.root");
    let opts = WriteOptions { checkpoint_clusters: 1, ..WriteOptions::default() };
    let fw = FileWriter::create(&path, opts).expect("file writer");
    let mut a = fw.writer("A", &[("x", "std::int32_t")]).expect("a");
    let mut b = fw.writer("B", &[("y", "double")]).expect("b");
    a.fill(&rec(vec![("x", Value::Int(1))])).expect("fill");
    a.commit_cluster().expect("cluster");
    b.fill(&rec(vec![("y", Value::F64(2.5))])).expect("fill");
    b.commit_cluster().expect("cluster");
    // Both RNTuples' checkpoints are on disk while the file writer is open.
    let f = RNTupleFile::open(&path).expect("checkpointed file");
    assert_eq!(f.names(), ["A", "B"]);
    assert_eq!(json(&f, "A"), [r#"{"x":1}"#]);
    assert_eq!(json(&f, "B"), [r#"{"y":2.5}"#]);
    a.fill(&rec(vec![("x", Value::Int(2))])).expect("fill");
    a.commit().expect("a");
    b.commit().expect("b");
    fw.commit().expect("commit");
    let f = RNTupleFile::open(&path).expect("file");
    assert_eq!(json(&f, "A"), [r#"{"x":1}"#, r#"{"x":2}"#]);
    assert_eq!(json(&f, "B"), [r#"{"y":2.5}"#]);
}

fn dir_entries(p: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p).expect("dir").map(|e| e.expect("entry").file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn a_dropped_or_failing_file_writer_leaves_no_file() {
    let d = tmp("atomic");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("dir");
    let path = d.join("out.root");
    // Dropped without its commit, after its writers committed.
    {
        let fw = FileWriter::create(&path, WriteOptions::default()).expect("fw");
        let mut w = fw.writer("T", &[("x", "float")]).expect("w");
        w.fill(&rec(vec![("x", Value::F32(1.0))])).expect("fill");
        w.commit().expect("commit");
    }
    assert!(dir_entries(&d).is_empty(), "{:?}", dir_entries(&d));
    // An existing file stays as it was when a commit fails: a writer still open...
    std::fs::write(&path, b"old").expect("old");
    let fw = FileWriter::create(&path, WriteOptions::default()).expect("fw");
    let w = fw.writer("T", &[("x", "float")]).expect("w");
    let e = fw.commit().expect_err("open writer").to_string();
    assert!(e.contains("'T' is still being written"), "{e}");
    drop(w);
    assert_eq!(std::fs::read(&path).expect("old"), b"old");
    // ... or aborted.
    let fw = FileWriter::create(&path, WriteOptions::default()).expect("fw");
    let mut ok = fw.writer("A", &[("x", "float")]).expect("a");
    ok.fill(&rec(vec![("x", Value::F32(1.0))])).expect("fill");
    ok.commit().expect("a");
    fw.writer("B", &[("x", "float")]).expect("b").abort();
    let e = fw.commit().expect_err("aborted writer").to_string();
    assert!(e.contains("'B' was not written") && e.contains("aborted"), "{e}");
    assert_eq!(std::fs::read(&path).expect("old"), b"old");
    assert_eq!(dir_entries(&d), ["out.root"]);
}

#[test]
fn names_are_refused_twice_and_writers_outlive_a_discarded_file_with_errors() {
    let path = tmp("names.root");
    let fw = FileWriter::create(&path, WriteOptions::default()).expect("fw");
    let _a = fw.writer("A", &[("x", "float")]).expect("a");
    let e = fw.parallel_writer("A", &[("x", "float")]).err().expect("same name").to_string();
    assert!(e.contains("'A' is being written into this file already"), "{e}");
    assert!(fw.writer("", &[("x", "float")]).is_err());
    let mut b = fw.writer("B", &[("x", "float")]).expect("b");
    drop(fw);
    b.fill(&rec(vec![("x", Value::F32(1.0))])).expect("fill buffers");
    let e = b.commit().expect_err("file gone").to_string();
    assert!(e.contains("discarded"), "{e}");
}

#[test]
fn an_rntuple_added_to_an_existing_file_with_others() {
    let path = tmp("update.root");
    let mut w = rntuple::write::Writer::create(&path, "First", &[("x", "std::int32_t")], WriteOptions::default()).expect("w");
    w.fill(&rec(vec![("x", Value::Int(7))])).expect("fill");
    w.commit().expect("commit");
    let opts = WriteOptions { update_existing_file: true, ..WriteOptions::default() };
    let fw = FileWriter::create(&path, opts).expect("update");
    assert!(fw.writer("First", &[("x", "float")]).err().expect("exists").to_string().contains("already holds an RNTuple 'First'"));
    for name in ["Second", "Third"] {
        let mut w = fw.writer(name, &[("s", "std::string")]).expect("w");
        w.fill(&rec(vec![("s", Value::String(name.into()))])).expect("fill");
        w.commit().expect("commit");
    }
    fw.commit().expect("commit");
    let f = RNTupleFile::open(&path).expect("open");
    assert_eq!(f.names(), ["First", "Second", "Third"]);
    assert_eq!(json(&f, "First"), [r#"{"x":7}"#]);
    assert_eq!(json(&f, "Third"), [r#"{"s":"Third"}"#]);
}

#[test]
fn rntuples_in_subdirectories_with_checkpoints() {
    // RNTuples named by a path go into (sub)directories, made when first named; the checkpoints
    // between the commits list each RNTuple committed so far in its directory.
    let path = tmp("subdirs.root");
    let opts = WriteOptions { checkpoint_clusters: 1, ..WriteOptions::default() };
    let fw = FileWriter::create(&path, opts).expect("file writer");
    let names = ["top", "d1/inner", "d1/d2/deep", "other/inner"];
    let mut writers: Vec<_> = names.iter().map(|n| fw.writer(n, &[("x", "std::int32_t")]).expect("writer")).collect();
    for (k, w) in writers.iter_mut().enumerate() {
        w.fill(&rec(vec![("x", Value::Int(k as i64))])).expect("fill");
        w.commit_cluster().expect("cluster");
    }
    let f = RNTupleFile::open(&path).expect("checkpointed file");
    assert_eq!(f.names(), names);
    for (k, mut w) in writers.into_iter().enumerate() {
        w.fill(&rec(vec![("x", Value::Int(10 + k as i64))])).expect("fill");
        w.commit().expect("commit");
    }
    fw.commit().expect("commit");
    let f = RNTupleFile::open(&path).expect("file");
    assert_eq!(f.names(), names);
    for (k, n) in names.iter().enumerate() {
        assert_eq!(json(&f, n), [format!(r#"{{"x":{k}}}"#), format!(r#"{{"x":{}}}"#, 10 + k)], "{n}");
        // The header holds the RNTuple's name, the directories are the file's.
        assert_eq!(f.reader(n).expect("reader").descriptor().name, n.rsplit('/').next().unwrap_or(n));
    }
    let keys: Vec<(String, String)> = f.keys().into_iter().map(|(p, c, _)| (p, c)).collect();
    for dir in ["d1", "d1/d2", "other"] {
        assert!(keys.contains(&(dir.to_string(), "TDirectory".to_string())), "{dir}: {keys:?}");
    }
    // A bad path is refused before anything is written.
    let fw = FileWriter::create(tmp("subdirs-bad.root"), WriteOptions::default()).expect("fw");
    for bad in ["d1//x", "/x", "d 1/x", "d.1/x"] {
        assert!(fw.writer(bad, &[("x", "std::int32_t")]).is_err(), "{bad}");
    }
}
