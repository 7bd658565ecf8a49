//! Union, recompressing and re-clustering merges, attribute sets through merge and skim, and the
//! refusal of inputs that hold other objects: values read back equal the inputs' (defaults where
//! an input lacks a field).

use rntuple::ops::merge::{merge_with_options, MergeMode, MergeOptions};
use rntuple::ops::skim::{skim, Skim};
use rntuple::write::{Compression, FileWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use serde_json::{json, Value as J};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn rows(path: &Path) -> Vec<J> {
    let r = RNTupleFile::open(path).expect("open").reader("Events").expect("reader");
    r.read_values(None, 0, r.num_entries()).expect("read").iter().map(|v| v.to_json()).collect()
}

fn write(path: &Path, fields: &[(&str, &str)], rows: &[J], opts: WriteOptions) {
    let mut w = Writer::create(path, "Events", fields, opts).expect("create");
    for r in rows {
        w.fill(&Value::from_json(r)).expect("fill");
    }
    w.commit().expect("commit");
}

fn union() -> MergeOptions {
    MergeOptions { mode: MergeMode::Union, threads: 2, ..Default::default() }
}

#[test]
fn union_adds_late_fields_and_fills_missing_ones_with_defaults() {
    let (a, b, c, out) = (tmp("mm_u_a.root"), tmp("mm_u_b.root"), tmp("mm_u_c.root"), tmp("mm_u_out.root"));
    let small = WriteOptions { approx_zipped_cluster_size: 200, ..Default::default() };
    let ra: Vec<J> = (0..300).map(|i| json!({"x": i, "v": vec![i as f32; (i % 3) as usize], "arr": [i, i + 1]})).collect();
    write(&a, &[("x", "std::int32_t"), ("v", "std::vector<float>"), ("arr", "std::array<std::int16_t,2>")], &ra, small.clone());
    let rb: Vec<J> = (0..200).map(|i| json!({"s": format!("s{i}"), "x": 1000 + i, "flag": i % 2 == 0})).collect();
    write(&b, &[("s", "std::string"), ("x", "std::int32_t"), ("flag", "bool")], &rb, small);
    let rc: Vec<J> = (0..5).map(|i| json!({"x": -i})).collect();
    write(&c, &[("x", "std::int32_t")], &rc, WriteOptions::default());
    let s = merge_with_options(&[&a, &b, &c], "Events", &out, &union(), WriteOptions::default(), |_, _| {}).expect("union");
    assert_eq!(s.entries, 505);
    assert!(s.zero_pages > 0);
    let got = rows(&out);
    let d = RNTupleFile::open(&out).unwrap().reader("Events").unwrap().descriptor().clone();
    // s and flag came with the second input: deferred to entry 300, in the footer's extension.
    let s_col = &d.columns[d.fields[d.field_by_path("s").unwrap() as usize].columns[0] as usize];
    assert_eq!((s_col.first_element, s_col.from_extension), (300, true));
    for (i, row) in got.iter().enumerate() {
        let want = if i < 300 {
            let k = i as i64;
            json!({"x": k, "v": vec![k as f64; i % 3], "arr": [k, k + 1], "s": "", "flag": false})
        } else if i < 500 {
            let k = (i - 300) as i64;
            json!({"x": 1000 + k, "v": [], "arr": [0, 0], "s": format!("s{k}"), "flag": k % 2 == 0})
        } else {
            json!({"x": 300 - i as i64 + 200, "v": [], "arr": [0, 0], "s": "", "flag": false})
        };
        assert_eq!(row, &want, "entry {i}");
    }
    // The union output merged again (deferred columns in a first input) reads the same twice.
    let again = tmp("mm_u_again.root");
    merge_with_options(&[&out, &out], "Events", &again, &union(), WriteOptions::default(), |_, _| {}).expect("again");
    let twice = rows(&again);
    assert_eq!(&twice[..505], &got[..]);
    assert_eq!(&twice[505..], &got[..]);
}

#[test]
fn union_refuses_a_field_of_another_type_naming_file_and_field() {
    let (a, b, out) = (tmp("mm_t_a.root"), tmp("mm_t_b.root"), tmp("mm_t_out.root"));
    write(&a, &[("x", "std::int32_t")], &[json!({"x": 1})], WriteOptions::default());
    write(&b, &[("x", "double")], &[json!({"x": 1.5})], WriteOptions::default());
    let e = merge_with_options(&[&a, &b], "Events", &out, &union(), WriteOptions::default(), |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("mm_t_b.root") && e.contains("field 'x'") && e.contains("double") && e.contains("std::int32_t"), "{e}");
    assert!(!out.exists());
}

#[test]
fn recompression_and_reclustering_keep_every_value() {
    let ins: Vec<PathBuf> = (0..3).map(|k| tmp(&format!("mm_r_{k}.root"))).collect();
    let mut all = Vec::new();
    for (k, p) in ins.iter().enumerate() {
        let r: Vec<J> = (0..2000).map(|i| json!({"id": k * 10000 + i, "v": vec![i as f64 * 0.5; i % 4]})).collect();
        let z = if k == 1 { Compression::lz4(4) } else { Compression::zstd(5) };
        write(p, &[("id", "std::uint64_t"), ("v", "std::vector<double>")], &r, WriteOptions { compression: z, ..Default::default() });
        all.extend(r);
    }
    let out = tmp("mm_r_out.root");
    let z = MergeOptions { compression: Some(Compression::lz4(4)), threads: 3, ..Default::default() };
    let s = merge_with_options(&ins, "Events", &out, &z, WriteOptions::default(), |_, _| {}).unwrap();
    assert_eq!(s.recompressed_pages, 6, "the two zstd inputs' three pages each");
    assert_eq!(rows(&out), all);
    let d = RNTupleFile::open(&out).unwrap().reader("Events").unwrap().descriptor().clone();
    assert!(d.clusters.iter().flat_map(|c| c.columns.iter().flatten()).all(|r| r.compression == 404));
    let one = MergeOptions { cluster_size: Some(16 << 10), ..Default::default() };
    let s = merge_with_options(&ins, "Events", &out, &one, WriteOptions::default(), |_, _| {}).unwrap();
    assert_eq!(rows(&out), all);
    let n = RNTupleFile::open(&out).unwrap().reader("Events").unwrap().descriptor().clusters.len() as u64;
    assert_eq!(s.clusters, n);
    assert!(n > 3, "{n} clusters of at most 16 KiB");
}

#[test]
fn attribute_sets_survive_merge_and_skim() {
    let ins: Vec<PathBuf> = (0..2).map(|k| tmp(&format!("mm_a_{k}.root"))).collect();
    for (k, p) in ins.iter().enumerate() {
        let mut w = Writer::create(p, "Events", &[("x", "float")], WriteOptions::default()).unwrap();
        let runs = w.attributes("runs", &[("run", "std::int32_t"), ("tag", "std::string")]).unwrap();
        for i in 0..10 {
            w.fill(&Value::from_json(&json!({"x": i as f32}))).unwrap();
        }
        runs.commit_range(0, 4, &Value::from_json(&json!({"run": k * 10, "tag": "a"}))).unwrap();
        runs.commit_range(4, 10, &Value::from_json(&json!({"run": k * 10 + 1, "tag": "b"}))).unwrap();
        w.commit().unwrap();
    }
    let out = tmp("mm_a_out.root");
    let s = merge_with_options(&ins, "Events", &out, &MergeOptions::default(), WriteOptions::default(), |_, _| {}).unwrap();
    assert_eq!(s.attribute_sets, 1);
    let r = RNTupleFile::open(&out).unwrap().reader("Events").unwrap();
    let got: Vec<(u64, u64, J)> =
        r.attribute_set("runs").unwrap().entries().unwrap().into_iter().map(|e| (e.range_start, e.range_len, e.values.to_json())).collect();
    let want = [
        (0, 4, json!({"run": 0, "tag": "a"})),
        (4, 6, json!({"run": 1, "tag": "b"})),
        (10, 4, json!({"run": 10, "tag": "a"})),
        (14, 6, json!({"run": 11, "tag": "b"})),
    ];
    assert_eq!(got, want);
    // A skim of entries 2..12 (re-encoded): ranges clipped and moved.
    let sk = tmp("mm_a_skim.root");
    skim(&out, "Events", &sk, &Skim { entries: Some((2, 12)), ..Default::default() }, WriteOptions::default()).unwrap();
    let r = RNTupleFile::open(&sk).unwrap().reader("Events").unwrap();
    let got: Vec<(u64, u64, J)> =
        r.attribute_set("runs").unwrap().entries().unwrap().into_iter().map(|e| (e.range_start, e.range_len, e.values.to_json())).collect();
    assert_eq!(got, [(0, 2, json!({"run": 0, "tag": "a"})), (2, 6, json!({"run": 1, "tag": "b"})), (8, 2, json!({"run": 10, "tag": "a"}))]);
}

#[test]
fn inputs_with_other_objects_are_refused_unless_ignored() {
    let (a, out) = (tmp("mm_o_a.root"), tmp("mm_o_out.root"));
    let fw = FileWriter::create(&a, WriteOptions::default()).unwrap();
    let mut ev = fw.writer("Events", &[("x", "std::int32_t")]).unwrap();
    ev.fill(&Value::from_json(&json!({"x": 1}))).unwrap();
    let mut runs = fw.writer("Runs", &[("run", "std::int32_t")]).unwrap();
    runs.fill(&Value::from_json(&json!({"run": 1}))).unwrap();
    ev.commit().unwrap();
    runs.commit().unwrap();
    fw.commit().unwrap();
    let e = merge_with_options(&[&a], "Events", &out, &MergeOptions::default(), WriteOptions::default(), |_, _| {}).unwrap_err().to_string();
    assert!(e.contains("mm_o_a.root") && e.contains("'Runs'") && e.contains("ignore-other-objects"), "{e}");
    let ok = MergeOptions { ignore_other_objects: true, ..Default::default() };
    merge_with_options(&[&a, &a], "Events", &out, &ok, WriteOptions::default(), |_, _| {}).unwrap();
    assert_eq!(rows(&out), [json!({"x": 1}), json!({"x": 1})]);
    assert_eq!(RNTupleFile::open(&out).unwrap().names(), ["Events"]);
}

#[test]
fn attribute_sets_follow_the_entries_a_selecting_skim_keeps() {
    use rntuple::ops::select::{skim_many, SkimMany};
    use std::collections::BTreeMap;
    // Two inputs of 3,000 entries in small clusters; a run every 500 entries and an empty range.
    let ins: Vec<String> = (0..2).map(|k| tmp(&format!("mm_sel_{k}.root")).display().to_string()).collect();
    for (k, p) in ins.iter().enumerate() {
        // Clusters of 200 entries (8 bytes each).
        let opts = WriteOptions { max_unzipped_cluster_size: 1600, max_unzipped_page_size: 800, approx_zipped_cluster_size: 1600, ..Default::default() };
        let mut w = Writer::create(p, "Events", &[("x", "std::int32_t"), ("run", "std::int32_t")], opts).unwrap();
        let runs = w.attributes("runs", &[("run", "std::int32_t")]).unwrap();
        for i in 0..3000 {
            w.fill(&Value::from_json(&json!({"x": i, "run": k * 10 + i / 500}))).unwrap();
        }
        for j in 0..6 {
            runs.commit_range(500 * j, 500 * (j + 1), &Value::from_json(&json!({"run": k as u64 * 10 + j}))).unwrap();
        }
        runs.commit_range(1000, 1000, &Value::from_json(&json!({"run": 99}))).unwrap();
        w.commit().unwrap();
    }
    // Runs 2 and 12 are cut whole; the first entries of each input pass whole (clusters copied).
    let where_ = "x < 300 || (x % 3 == 0 && run % 10 != 2)";
    for threads in [1, 3] {
        let out = tmp(&format!("mm_sel_out_{threads}.root"));
        let what = SkimMany { inputs: ins.clone(), where_: Some(where_.into()), threads, ..Default::default() };
        let s = skim_many(&what, &out, WriteOptions::default(), &|_, _| {}).unwrap();
        let r = RNTupleFile::open(&out).unwrap().reader("Events").unwrap();
        let runs_of: Vec<i64> = r.read_values(None, 0, r.num_entries()).unwrap().iter().map(|v| v.to_json()["run"].as_i64().unwrap()).collect();
        assert_eq!(runs_of.len() as u64, s.entries);
        let mut kept: BTreeMap<i64, u64> = BTreeMap::new();
        for &run in &runs_of {
            *kept.entry(run).or_default() += 1;
        }
        let mut covered: BTreeMap<i64, u64> = BTreeMap::new();
        let mut empty: Vec<i64> = Vec::new();
        for e in r.attribute_set("runs").unwrap().entries().unwrap() {
            let run = e.values.to_json()["run"].as_i64().unwrap();
            if e.range_len == 0 {
                empty.push(run);
                continue;
            }
            // Every entry of the range belongs to the run the range says.
            let (a, b) = (e.range_start as usize, (e.range_start + e.range_len) as usize);
            assert!(runs_of[a..b].iter().all(|&x| x == run), "threads {threads}: range {a}..{b} of run {run}");
            *covered.entry(run).or_default() += e.range_len;
        }
        assert_eq!(covered, kept, "threads {threads}: the ranges cover exactly the kept entries of each run");
        empty.sort();
        assert_eq!(empty, [2, 12, 99, 99], "threads {threads}: cut runs and the empty range stay as empty ranges");
        if threads == 1 {
            assert_eq!(covered.len() as u64, r.attribute_set("runs").unwrap().entries().unwrap().len() as u64 - 4, "one range per run in order");
        }
        assert!(s.clusters_copied > 0, "threads {threads}: some clusters pass whole and are copied");
    }
}

#[test]
fn attribute_sets_follow_the_entries_a_skim_with_a_friend_keeps() {
    use rntuple::dataset::{skim_join, JoinSkim};
    // A primary of two files (runs as attribute ranges) and a friend keyed on event.
    let ins: Vec<String> = (0..2).map(|k| tmp(&format!("mm_jf_{k}.root")).display().to_string()).collect();
    for (k, p) in ins.iter().enumerate() {
        let mut w = Writer::create(p, "Events", &[("event", "std::uint64_t")], WriteOptions::default()).unwrap();
        let runs = w.attributes("runs", &[("run", "std::int32_t")]).unwrap();
        for i in 0..10 {
            w.fill(&Value::from_json(&json!({"event": 100 * k + i}))).unwrap();
        }
        runs.commit_range(0, 5, &Value::from_json(&json!({"run": 10 * k}))).unwrap();
        runs.commit_range(5, 10, &Value::from_json(&json!({"run": 10 * k + 1}))).unwrap();
        w.commit().unwrap();
    }
    let friend = tmp("mm_jf_friend.root");
    let mut w = Writer::create(&friend, "Corr", &[("event", "std::uint64_t"), ("w", "double")], WriteOptions::default()).unwrap();
    for e in (0..2u64).flat_map(|k| (0..10).map(move |i| 100 * k + i)).rev() {
        w.fill(&Value::from_json(&json!({"event": e, "w": (e % 10) as f64}))).unwrap();
    }
    w.commit().unwrap();
    let out = tmp("mm_jf_out.root");
    // Keeps events with w >= 3 and w != 7: entries 3, 4 | 5, 6, 8, 9 of each file.
    let what = JoinSkim {
        inputs: ins,
        friends: vec![friend.display().to_string()],
        on: vec!["event".into()],
        where_: Some("Corr.w >= 3 && Corr.w != 7".into()),
        ..Default::default()
    };
    let s = skim_join(&what, &out, WriteOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(s.entries, 12);
    let r = RNTupleFile::open(&out).unwrap().reader("Events").unwrap();
    let got: Vec<(u64, u64, J)> =
        r.attribute_set("runs").unwrap().entries().unwrap().into_iter().map(|e| (e.range_start, e.range_len, e.values.to_json())).collect();
    assert_eq!(got, [(0, 2, json!({"run": 0})), (2, 4, json!({"run": 1})), (6, 2, json!({"run": 10})), (8, 4, json!({"run": 11}))]);
}
