//! Skimming: whole clusters copy their pages, a range that cuts a cluster is re-encoded; either
//! way the output reads as the input's kept fields and entries. Every RNTuple of the shared test
//! data is skimmed field by field (pages copied) and over a range inside its first cluster
//! (re-encoded, or refused naming the field whose type cannot be written).

use crate::common;

use rntuple::ops::skim::{skim, Skim, SkimMethod};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Reader, Value};
use serde_json::Value as J;
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn open(path: &std::path::Path, name: &str) -> Reader {
    RNTupleFile::open(path).expect("open").reader(name).expect("reader")
}

fn json(r: &Reader, fields: Option<&[&str]>, start: u64, stop: u64) -> Vec<J> {
    r.read_values(fields, start, stop).expect("read").iter().map(|v| v.to_json()).collect()
}

fn fields(names: &[&str]) -> Option<Vec<String>> {
    Some(names.iter().map(|s| s.to_string()).collect())
}

/// 5 clusters of 100 entries: x (int32, the entry number), v (vector<float>, x % 4 items),
/// s (string), o (optional<double>, every third entry).
fn five_clusters(path: &std::path::Path) {
    let schema = [("x", "std::int32_t"), ("v", "std::vector<float>"), ("s", "std::string"), ("o", "std::optional<double>")];
    let mut w = Writer::create(path, "Events", &schema, WriteOptions::default()).expect("create");
    for i in 0..500i64 {
        let o = if i % 3 == 0 { Value::Null } else { Value::F64(i as f64 / 8.0) };
        w.fill(&Value::Record(vec![
            ("x".into(), Value::Int(i)),
            ("v".into(), Value::List((0..i % 4).map(|k| Value::F32((i * 10 + k) as f32)).collect())),
            ("s".into(), Value::String(format!("entry {i}"))),
            ("o".into(), o),
        ]))
        .expect("fill");
        if i % 100 == 99 {
            w.commit_cluster().expect("cluster");
        }
    }
    w.commit().expect("commit");
}

#[test]
fn whole_clusters_copy_pages_and_cut_clusters_reencode() {
    let input = tmp("skim_in.root");
    five_clusters(&input);
    let r = open(&input, "Events");
    assert_eq!(r.descriptor().clusters.len(), 5);

    // Clusters 1 and 2, fields s and x (asked in another order: the schema's order is kept).
    let out = tmp("skim_copy.root");
    let s =
        skim(&input, "Events", &out, &Skim { fields: fields(&["s", "x"]), entries: Some((100, 300)), reencode: false }, WriteOptions::default()).expect("skim");
    assert_eq!(s.method, SkimMethod::CopiedPages);
    assert_eq!(s.reason, None);
    assert_eq!(s.fields, ["x", "s"]);
    assert_eq!((s.entries, s.clusters, s.range), (200, 2, (100, 300)));
    assert!(s.pages >= 4 && s.page_bytes > 0, "{s:?}");
    let o = open(&out, "Events");
    let names: Vec<&str> = o.fields().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["x", "s"]);
    assert_eq!(o.descriptor().columns.len(), 3, "x: one column; s: offsets and characters");
    assert_eq!(json(&o, None, 0, 200), json(&r, Some(&["x", "s"]), 100, 300));
    assert_eq!(o.read_values(None, 0, 1).expect("read")[0].to_json().to_string(), r#"{"x":100,"s":"entry 100"}"#);

    // Entries 150..250 cut clusters 1 and 2: re-encoded, with the reason.
    let out2 = tmp("skim_cut.root");
    let s = skim(&input, "Events", &out2, &Skim { fields: None, entries: Some((150, 250)), reencode: false }, WriteOptions::default()).expect("skim");
    assert_eq!(s.method, SkimMethod::Reencoded);
    assert!(s.reason.as_deref().is_some_and(|w| w.contains("cut a cluster")), "{:?}", s.reason);
    assert_eq!(s.entries, 100);
    let o = open(&out2, "Events");
    assert_eq!(json(&o, None, 0, 100), json(&r, None, 150, 250));
    let types: Vec<(String, String)> = o.fields().iter().map(|f| (f.name.clone(), f.type_name.clone())).collect();
    let want: Vec<(String, String)> = r.fields().iter().map(|f| (f.name.clone(), f.type_name.clone())).collect();
    assert_eq!(types, want);

    // Re-encoding on request (here to store the pages uncompressed), all entries.
    let out3 = tmp("skim_reencode.root");
    let s = skim(
        &input,
        "Events",
        &out3,
        &Skim { fields: fields(&["v", "o"]), entries: None, reencode: true },
        WriteOptions { compression: rntuple::write::Compression::NONE, ..Default::default() },
    )
    .expect("skim");
    assert_eq!((s.method, s.reason.as_deref(), s.entries), (SkimMethod::Reencoded, None, 500));
    let o = open(&out3, "Events");
    assert_eq!(json(&o, None, 0, 500), json(&r, Some(&["v", "o"]), 0, 500));
    for c in &o.descriptor().clusters {
        assert!(c.columns.iter().flatten().all(|range| range.compression == 0));
    }

    // A stop beyond the end is clamped; an empty range gives an empty RNTuple.
    let s =
        skim(&input, "Events", &out3, &Skim { fields: fields(&["x"]), entries: Some((400, 9999)), reencode: false }, WriteOptions::default()).expect("skim");
    assert_eq!((s.method, s.entries, s.range), (SkimMethod::CopiedPages, 100, (400, 500)));
    let s = skim(&input, "Events", &out3, &Skim { fields: fields(&["x"]), entries: Some((200, 200)), reencode: false }, WriteOptions::default()).expect("skim");
    assert_eq!((s.entries, s.clusters), (0, 0));
    assert_eq!(open(&out3, "Events").num_entries(), 0);
}

#[test]
fn bad_requests_are_refused_with_what_is_wrong() {
    let input = tmp("skim_bad_in.root");
    five_clusters(&input);
    let out = tmp("skim_bad_out.root");
    let e = skim(&input, "Events", &out, &Skim { fields: fields(&["x", "nope"]), ..Default::default() }, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("'nope'") && e.contains("x, v, s, o"), "{e}");
    let e = skim(&input, "Events", &out, &Skim { entries: Some((300, 100)), ..Default::default() }, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("300..100") && e.contains("reversed"), "{e}");
    let e = skim(&input, "Events", &input, &Skim::default(), WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("also the input"), "{e}");
    assert_eq!(open(&input, "Events").num_entries(), 500, "the input is untouched");
    let e = skim(&input, "Nope", &out, &Skim::default(), WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("Nope"), "{e}");
}

#[test]
fn deferred_columns_are_reencoded_with_defaults_before_their_start() {
    let input = tmp("skim_late_in.root");
    let mut w = Writer::create(&input, "T", &[("a", "std::int32_t")], WriteOptions::default()).expect("create");
    for i in 0..10 {
        if i == 4 {
            w.add_field("b", "float").expect("late field");
        }
        let mut rec = vec![("a".into(), Value::Int(i))];
        if i >= 4 {
            rec.push(("b".into(), Value::F32(i as f32 + 0.5)));
        }
        w.fill(&Value::Record(rec)).expect("fill");
    }
    w.commit().expect("commit");
    let r = open(&input, "T");
    let out = tmp("skim_late_out.root");
    let s = skim(&input, "T", &out, &Skim::default(), WriteOptions::default()).expect("skim");
    assert_eq!(s.method, SkimMethod::Reencoded);
    assert!(s.reason.as_deref().is_some_and(|w| w.contains("deferred")), "{:?}", s.reason);
    let o = open(&out, "T");
    assert_eq!(json(&o, None, 0, 10), json(&r, None, 0, 10));
    assert_eq!(o.read_values(None, 2, 3).expect("read")[0].to_json().to_string(), r#"{"a":2,"b":0.0}"#);
    // Only the field that was there from the start: its pages are copied.
    let s = skim(&input, "T", &out, &Skim { fields: fields(&["a"]), ..Default::default() }, WriteOptions::default()).expect("skim");
    assert_eq!(s.method, SkimMethod::CopiedPages);
    assert_eq!(json(&open(&out, "T"), None, 0, 10), json(&r, Some(&["a"]), 0, 10));
}

/// Every RNTuple of the shared test data: each top-level field alone with its pages copied
/// (projected fields bring their sources), and all fields over a range inside the first cluster,
/// re-encoded where this writer can write every type, else refused naming a field.
#[test]
fn every_test_file_skims_field_by_field_and_by_range() {
    let files: Vec<PathBuf> = common::root_files("rntuple").into_iter().chain(common::root_files("v1-older")).collect();
    let (mut copied, mut reencoded, mut refused) = (0, 0, Vec::new());
    for (k, path) in files.iter().enumerate() {
        let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let f = RNTupleFile::open(path).expect("open");
        for name in f.names() {
            let r = f.reader(&name).expect("reader");
            let n = r.num_entries();
            let d = r.descriptor();
            let copyable_columns = d.columns.iter().all(|c| c.first_element == 0 && !c.suppressed_deferred);
            let some = if n <= 20_000 { vec![(0, n)] } else { vec![(0, 2000), (n - 2000, n)] };
            // At most 12 fields of a file (the NanoAOD file has hundreds).
            for fd in r.fields().into_iter().take(12) {
                let out = tmp(&format!("skim_field_{k}_{}.root", fd.name.replace(['/', '.'], "_")));
                let what = Skim { fields: Some(vec![fd.name.clone()]), ..Default::default() };
                let s = skim(path, &name, &out, &what, WriteOptions::default()).unwrap_or_else(|e| panic!("{file_name}:{name}:{}: {e}", fd.name));
                assert_eq!(s.entries, n, "{file_name}:{name}:{}", fd.name);
                let o = open(&out, &name);
                let field = [fd.name.as_str()];
                for &(a, b) in &some {
                    assert_eq!(json(&o, Some(&field), a, b), json(&r, Some(&field), a, b), "{file_name}:{name}:{} entries {a}..{b}", fd.name);
                }
                if s.method == SkimMethod::CopiedPages {
                    assert_eq!(o.fields().iter().find(|f| f.name == fd.name).map(|f| f.type_name.clone()), Some(fd.type_name.clone()));
                    copied += 1;
                } else {
                    assert!(
                        !copyable_columns || s.reason.as_deref().is_some_and(|w| !w.contains("cut a cluster")),
                        "{file_name}:{name}:{}: {:?}",
                        fd.name,
                        s.reason
                    );
                }
            }
            // A range inside the first cluster.
            let Some(c0) = d.clusters.first() else { continue };
            if c0.n_entries < 3 {
                continue;
            }
            let (a, b) = (c0.first_entry + 1, c0.first_entry + c0.n_entries.min(1000) - 1);
            let out = tmp(&format!("skim_range_{k}_{}.root", name.replace('/', "_")));
            match skim(path, &name, &out, &Skim { entries: Some((a, b)), ..Default::default() }, WriteOptions::default()) {
                Ok(s) => {
                    assert_eq!((s.method, s.entries), (SkimMethod::Reencoded, b - a), "{file_name}:{name}");
                    let o = open(&out, &name);
                    let names: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
                    let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                    assert_eq!(json(&o, Some(&names), 0, b - a), json(&r, Some(&names), a, b), "{file_name}:{name} entries {a}..{b}");
                    reencoded += 1;
                }
                Err(e) => {
                    let e = e.to_string();
                    assert!(e.contains("re-encoding failed") && e.contains("field '"), "{file_name}:{name}: {e}");
                    refused.push(format!("{file_name}:{name}: {e}"));
                }
            }
        }
    }
    if !files.is_empty() {
        eprintln!("skim: {copied} fields copied, {reencoded} ranges re-encoded, {} refused:\n  {}", refused.len(), refused.join("\n  "));
        assert!(copied >= 30 && reencoded >= 15, "{copied} copied, {reencoded} re-encoded");
    }
}
