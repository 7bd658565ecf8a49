//! Stress test of the parallel writer: T threads (up to 16, on whatever cores the machine has)
//! each write entries with unique ids through their own fill context, under every writing option;
//! the file must hold every id exactly once, each context's entries in order inside and across its
//! clusters, and the payload of every entry must match its id. Repeated with small clusters so that
//! commits of different contexts interleave many times. (ROOT's reading of such files is checked in
//! tests/cross/test_parallel_writer.py.)

use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{ArrayRef, Float32Array, LargeListArray, RecordBatch, UInt64Array};
use rntuple::arrow::datatypes::{DataType, Field, Float32Type, Schema, UInt64Type};
use rntuple::write::{ParallelWriter, WriteOptions};
use rntuple::{RNTupleFile, Value};
use std::path::PathBuf;
use std::sync::Arc;

const SCHEMA: [(&str, &str); 3] = [("id", "std::uint64_t"), ("v", "std::vector<float>"), ("s", "std::string")];

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-parallel-stress-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

/// The payload of entry `id`: a vector of `id % 7` values `id + k` and the string form of `id`.
fn values_of(id: u64) -> (Vec<f32>, String) {
    ((0..id % 7).map(|k| (id + k) as f32).collect(), format!("e{id}"))
}

fn entry(id: u64) -> Value {
    let (v, s) = values_of(id);
    Value::Record(vec![("id".into(), Value::UInt(id)), ("v".into(), Value::List(v.into_iter().map(Value::F32).collect())), ("s".into(), Value::String(s))])
}

fn batch(ids: std::ops::Range<u64>) -> RecordBatch {
    let item = Arc::new(Field::new("_0", DataType::Float32, false));
    let mut offsets = vec![0i64];
    let mut vals = Vec::new();
    let mut strs = Vec::new();
    for id in ids.clone() {
        let (v, s) = values_of(id);
        vals.extend(v);
        offsets.push(vals.len() as i64);
        strs.push(s);
    }
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::UInt64, false),
        Field::new("v", DataType::LargeList(item.clone()), false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(ids)),
        Arc::new(LargeListArray::new(item, rntuple::arrow::buffer::OffsetBuffer::new(offsets.into()), Arc::new(Float32Array::from(vals)), None)),
        Arc::new(rntuple::arrow::array::StringArray::from(strs)),
    ];
    RecordBatch::try_new(schema, cols).expect("batch")
}

/// Writes `threads` x `per_thread` entries (ids `t * per_thread + i`), alternating the fill
/// paths per thread, and returns the path.
fn write(name: &str, threads: u64, per_thread: u64, opts: WriteOptions) -> PathBuf {
    let path = tmp(name);
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, opts).expect("create");
    std::thread::scope(|s| {
        for t in 0..threads {
            let mut ctx = w.fill_context().expect("context");
            s.spawn(move || {
                let first = t * per_thread;
                if t % 2 == 0 {
                    for id in first..first + per_thread {
                        ctx.fill(&entry(id)).expect("fill");
                    }
                } else {
                    let mut i = 0;
                    while i < per_thread {
                        let n = (per_thread - i).min(37 + t);
                        ctx.append_batch(&batch(first + i..first + i + n)).expect("append");
                        i += n;
                    }
                }
                let m = ctx.finish().expect("finish");
                assert_eq!(m.entries, per_thread);
            });
        }
    });
    w.commit().expect("commit");
    let ms = w.metrics();
    assert_eq!(ms.len() as u64, threads);
    assert_eq!(ms.iter().map(|m| m.entries).sum::<u64>(), threads * per_thread);
    path
}

/// Checks the file: every id once, per-thread order, payloads; returns the number of clusters.
fn verify(path: &PathBuf, threads: u64, per_thread: u64) -> usize {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader("Events").expect("reader");
    assert_eq!(r.num_entries(), threads * per_thread);
    let b = r.read_batch(None, 0, r.num_entries()).expect("read");
    let ids = b.column(0).as_primitive::<UInt64Type>().values().to_vec();
    let mut seen = vec![false; ids.len()];
    let mut last: Vec<Option<u64>> = vec![None; threads as usize];
    for &id in &ids {
        assert!(id < threads * per_thread, "id {id} out of range");
        assert!(!seen[id as usize], "id {id} twice");
        seen[id as usize] = true;
        let t = (id / per_thread) as usize;
        if let Some(prev) = last[t] {
            assert_eq!(id, prev + 1, "thread {t}: id {id} after {prev}");
        } else {
            assert_eq!(id, t as u64 * per_thread, "thread {t} starts at {id}");
        }
        last[t] = Some(id);
    }
    let v = b.column(1).as_list::<i64>();
    let s = b.column(2).as_string::<i64>();
    for (row, &id) in ids.iter().enumerate() {
        let (want_v, want_s) = values_of(id);
        let got = v.value(row);
        assert_eq!(got.as_primitive::<Float32Type>().values().as_ref(), &want_v[..], "values of id {id}");
        assert_eq!(s.value(row), want_s, "string of id {id}");
    }
    r.descriptor().clusters.len()
}

fn small(opts: WriteOptions) -> WriteOptions {
    WriteOptions { approx_zipped_cluster_size: 3000, max_unzipped_page_size: 512, ..opts }
}

#[test]
fn every_id_once_in_order_across_thread_counts() {
    for threads in [1u64, 2, 4, 8, 16] {
        for rep in 0..10 {
            let p = write(&format!("t{threads}_{rep}.root"), threads, 1500, small(WriteOptions::default()));
            let clusters = verify(&p, threads, 1500);
            assert!(clusters as u64 >= 2 * threads, "{clusters} clusters for {threads} threads: too few to interleave");
            std::fs::remove_file(p).ok();
        }
    }
}

#[test]
fn every_option() {
    let base = small(WriteOptions::default());
    let variants: Vec<(&str, WriteOptions)> = vec![
        ("unbuffered", WriteOptions { buffered: false, ..base.clone() }),
        ("preallocate", WriteOptions { preallocate: true, ..base.clone() }),
        ("inside", WriteOptions { write_outside_lock: false, ..base.clone() }),
        ("inside_unbuffered", WriteOptions { write_outside_lock: false, buffered: false, ..base.clone() }),
        ("uncompressed", WriteOptions { compression: rntuple::write::Compression::NONE, ..base.clone() }),
        ("zlib_nochecksum", WriteOptions { compression: rntuple::write::Compression::zlib(1), enable_page_checksums: false, ..base.clone() }),
        ("all", WriteOptions { preallocate: true, write_outside_lock: true, compression: rntuple::write::Compression::lz4(4), ..base.clone() }),
    ];
    for (name, o) in variants {
        for threads in [3u64, 16] {
            for rep in 0..5 {
                let p = write(&format!("{name}_{threads}_{rep}.root"), threads, 800, o.clone());
                verify(&p, threads, 800);
                std::fs::remove_file(p).ok();
            }
        }
    }
}

/// Direct I/O. Where the temporary directory's file system refuses `O_DIRECT` (probed by
/// build.rs when the tests are compiled), this test is `#[ignore]`d with that reason, so that
/// `cargo test` reports it as ignored rather than as passed; the refusal's message is then
/// checked by `direct_io_refusal_names_direct_io`. Refused at run time although the probe
/// accepted it, the test fails.
#[test]
#[cfg_attr(rntuple_no_direct_io, ignore = "O_DIRECT is refused by the file system of the temporary directory (probed by build.rs)")]
fn direct_io_when_the_file_system_allows_it() {
    let o = WriteOptions { use_direct_io: true, ..small(WriteOptions::default()) };
    let path = tmp("direct_probe.root");
    if let Err(e) = ParallelWriter::create(&path, "Events", &SCHEMA, o.clone()) {
        panic!("direct I/O refused although build.rs found O_DIRECT accepted in {}: {e}", std::env::temp_dir().display());
    }
    for threads in [2u64, 8] {
        let p = write(&format!("direct_{threads}.root"), threads, 700, o.clone());
        verify(&p, threads, 700);
        // Every cluster key starts on a 4096-byte boundary.
        let f = RNTupleFile::open(&p).expect("open");
        let r = f.reader("Events").expect("reader");
        for c in &r.descriptor().clusters {
            let first = c.columns.iter().flatten().flat_map(|cr| cr.pages.iter()).map(|p| p.locator.offset).min().expect("pages");
            assert_eq!((first - 42) % 4096, 0, "cluster {} payload at {first}", c.id);
        }
        std::fs::remove_file(p).ok();
    }
}

/// Where `O_DIRECT` is refused, creating a direct-I/O writer fails with an error that says so.
#[test]
#[cfg(rntuple_no_direct_io)]
fn direct_io_refusal_names_direct_io() {
    let o = WriteOptions { use_direct_io: true, ..small(WriteOptions::default()) };
    match ParallelWriter::create(tmp("direct_refused.root"), "Events", &SCHEMA, o) {
        Err(e) => assert!(e.to_string().contains("direct I/O"), "unexpected error: {e}"),
        Ok(_) => panic!("O_DIRECT was accepted although build.rs found it refused: rebuild the tests"),
    }
}

#[test]
fn staged_commits_give_the_order_the_application_chooses() {
    // Four contexts stage their clusters, then commit in a fixed order (context 3, 2, 1, 0): the
    // file's entries are then exactly the ids of context 3, then 2, then 1, then 0.
    let path = tmp("staged.root");
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, small(WriteOptions::default())).expect("create");
    let per = 900u64;
    let turn = std::sync::Mutex::new(3i64);
    let cv = std::sync::Condvar::new();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let mut ctx = w.fill_context().expect("context");
            let (turn, cv) = (&turn, &cv);
            s.spawn(move || {
                ctx.enable_staged_cluster_committing(true).expect("staged");
                for id in t * per..(t + 1) * per {
                    ctx.fill(&entry(id)).expect("fill");
                }
                ctx.flush_cluster().expect("flush");
                let mut g = turn.lock().expect("turn");
                while *g != t as i64 {
                    g = cv.wait(g).expect("wait");
                }
                ctx.commit_staged_clusters().expect("commit staged");
                *g -= 1;
                cv.notify_all();
                drop(g);
                ctx.finish().expect("finish");
            });
        }
    });
    w.commit().expect("commit");
    let f = RNTupleFile::open(&path).expect("open");
    let r = f.reader("Events").expect("reader");
    let b = r.read_batch(Some(&["id"]), 0, r.num_entries()).expect("read");
    let ids = b.column(0).as_primitive::<UInt64Type>().values().to_vec();
    let want: Vec<u64> = (0..4u64).rev().flat_map(|t| t * per..(t + 1) * per).collect();
    assert_eq!(ids, want);
    assert!(r.descriptor().clusters.len() > 4);
    std::fs::remove_file(path).ok();
}

#[test]
fn commit_with_a_live_context_is_an_error_and_can_be_retried() {
    let path = tmp("live.root");
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, WriteOptions::default()).expect("create");
    let mut ctx = w.fill_context().expect("context");
    ctx.fill(&entry(0)).expect("fill");
    let e = w.commit().expect_err("a live context must make commit fail");
    assert!(e.to_string().contains("still alive"), "{e}");
    drop(ctx);
    w.commit().expect("commit after the context ended");
    assert!(w.commit().is_err(), "a second commit must fail");
    assert!(w.fill_context().is_err(), "no contexts after the commit");
    let f = RNTupleFile::open(&path).expect("open");
    assert_eq!(f.reader("Events").expect("reader").num_entries(), 1);
    std::fs::remove_file(path).ok();
}

#[test]
fn metrics_count_lock_acquisitions_per_cluster() {
    let path = tmp("metrics.root");
    let o = small(WriteOptions::default());
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, o.clone()).expect("create");
    let mut ctx = w.fill_context().expect("context");
    for id in 0..3000 {
        ctx.fill(&entry(id)).expect("fill");
    }
    let m = ctx.finish().expect("finish");
    // Buffered: one lock acquisition per cluster.
    assert_eq!(m.acquisitions, m.clusters);
    assert!(m.clusters > 3);
    assert!(m.bytes_written > 0 && m.compress_seconds > 0.0 && m.wall_seconds >= m.compress_seconds);
    w.commit().expect("commit");
    let size = std::fs::metadata(&path).expect("stat").len();
    assert!(m.bytes_written < size);
    // Unbuffered: one per page, plus one per cluster for its metadata.
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, WriteOptions { buffered: false, ..o }).expect("create");
    let mut ctx = w.fill_context().expect("context");
    for id in 0..3000 {
        ctx.fill(&entry(id)).expect("fill");
    }
    let mu = ctx.finish().expect("finish");
    assert!(mu.acquisitions > 3 * mu.clusters, "{} acquisitions for {} clusters", mu.acquisitions, mu.clusters);
    w.commit().expect("commit");
    verify(&path, 1, 3000);
    std::fs::remove_file(path).ok();
}
