//! `ops::skim::run`, the one entry of skims: the engine it picks (one input without a selection:
//! the page-copying engine; a selection, several inputs, a glob or threads: the selecting engine;
//! an entry range with any of those: an error) and the report it returns, whose JSON is what the
//! CLI prints (keys in order, values from the engines' statistics).

use rntuple::ops::skim::{run, EntryRange, SkimEngine, SkimMethod, SkimOutcome, SkimReport, SkimRequest};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::path::{Path, PathBuf};

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-skim-run-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An input of 1000 entries (`x` = the entry, `v` = `x % 4` floats) in clusters of 250 entries.
fn input(d: &Path, name: &str, first: i64) -> String {
    let p = d.join(name);
    let mut w = Writer::create(&p, "Events", &[("x", "std::int64_t"), ("v", "std::vector<float>")], WriteOptions::default()).unwrap();
    for i in first..first + 1000 {
        let v = (0..i % 4).map(|k| Value::F32(k as f32)).collect();
        w.fill(&Value::Record(vec![("x".into(), Value::Int(i)), ("v".into(), Value::List(v))])).unwrap();
        if (i - first + 1) % 250 == 0 {
            w.commit_cluster().unwrap();
        }
    }
    w.commit().unwrap();
    p.display().to_string()
}

fn skim(req: &SkimRequest, out: &Path) -> SkimReport {
    run(req, out, WriteOptions::default(), &|_, _| {}).unwrap_or_else(|e| panic!("{e}"))
}

fn keys(j: &serde_json::Value) -> Vec<&str> {
    j.as_object().unwrap().keys().map(String::as_str).collect()
}

fn xs(path: &Path) -> Vec<i64> {
    let r = RNTupleFile::open(path).unwrap().reader("Events").unwrap();
    r.read_values(Some(&["x"][..]), 0, r.num_entries())
        .unwrap()
        .iter()
        .map(|v| match v {
            Value::Record(f) => match &f[0].1 {
                Value::Int(x) => *x,
                x => panic!("{x:?}"),
            },
            x => panic!("{x:?}"),
        })
        .collect()
}

const ONE_KEYS: [&str; 14] = [
    "input",
    "output",
    "ntuple",
    "method",
    "why_not_copied",
    "fields",
    "entry_start",
    "entry_stop",
    "entries",
    "clusters",
    "pages_copied",
    "page_bytes_copied",
    "file_bytes",
    "seconds",
];
const MANY_KEYS: [&str; 15] = [
    "inputs",
    "output",
    "ntuple",
    "method",
    "where",
    "filters",
    "clusters_copied",
    "fields",
    "entries_read",
    "entries",
    "parts",
    "clusters",
    "threads",
    "file_bytes",
    "seconds",
];

#[test]
fn one_input_without_a_selection_copies_pages_and_reports_as_the_cli() {
    let d = dir("one");
    let a = input(&d, "a.root", 0);
    let out = d.join("out.root");
    let req = SkimRequest { inputs: vec![a.clone()], fields: Some(vec!["x".into()]), ..Default::default() };
    assert_eq!(req.engine().unwrap(), SkimEngine::One);
    let rep = skim(&req, &out);
    let SkimOutcome::One(s) = &rep.outcome else { panic!("not the page-copying engine: {:?}", rep.outcome) };
    assert_eq!(s.method, SkimMethod::CopiedPages);
    let j = rep.to_json();
    assert_eq!(keys(&j), ONE_KEYS);
    assert_eq!(j["input"], a.as_str());
    assert_eq!(j["output"], out.display().to_string());
    assert_eq!(j["ntuple"], "Events");
    assert_eq!(j["method"], "copied pages");
    assert!(j["why_not_copied"].is_null());
    assert_eq!(j["fields"], serde_json::json!(["x"]));
    assert_eq!((j["entry_start"].as_u64(), j["entry_stop"].as_u64(), j["entries"].as_u64()), (Some(0), Some(1000), Some(1000)));
    assert_eq!(j["clusters"], 4);
    assert_eq!(j["pages_copied"].as_u64(), Some(s.pages));
    assert!(s.pages >= 4 && j["page_bytes_copied"].as_u64().unwrap() > 0);
    assert_eq!(j["file_bytes"].as_u64(), Some(std::fs::metadata(&out).unwrap().len()));
    assert!(j["seconds"].as_f64().unwrap() >= 0.0);
    assert_eq!(xs(&out), (0..1000).collect::<Vec<_>>());

    // An entry range that cuts clusters: the same engine re-encodes, and says why.
    let req = SkimRequest { entries: Some(EntryRange::Text("100:300".into())), ..req };
    let j = skim(&req, &out).to_json();
    assert_eq!(keys(&j), ONE_KEYS);
    assert_eq!(j["method"], "re-encoded");
    assert!(j["why_not_copied"].as_str().unwrap().contains("cut a cluster"), "{j}");
    assert_eq!((j["entry_start"].as_u64(), j["entry_stop"].as_u64(), j["entries"].as_u64()), (Some(100), Some(300), Some(200)));
    assert_eq!((j["pages_copied"].as_u64(), j["page_bytes_copied"].as_u64()), (Some(0), Some(0)));
    assert_eq!(xs(&out), (100..300).collect::<Vec<_>>());
    // The CLI's range checks; Python's clamped ranges.
    let e = run(&SkimRequest { entries: Some(EntryRange::Text("0:1001".into())), ..req.clone() }, &out, WriteOptions::default(), &|_, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("--entries '0:1001': the RNTuple has 1000 entries"), "{e}");
    let j = skim(&SkimRequest { entries: Some(EntryRange::Clamped(750, u64::MAX)), ..req }, &out).to_json();
    assert_eq!((j["entry_start"].as_u64(), j["entry_stop"].as_u64(), j["method"].as_str()), (Some(750), Some(1000), Some("copied pages")));
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn a_selection_several_inputs_a_glob_or_threads_take_the_selecting_engine() {
    let d = dir("many");
    let a = input(&d, "a.root", 0);
    let b = input(&d, "b.root", 1000);
    let out = d.join("out.root");
    let one = SkimRequest { inputs: vec![a.clone()], ..Default::default() };

    // --where on one input: the last cluster passes whole and is copied, the others are read.
    let req = SkimRequest { where_: Some("x >= 750".into()), ..one.clone() };
    assert_eq!(req.engine().unwrap(), SkimEngine::Many);
    let rep = skim(&req, &out);
    let SkimOutcome::Many(s) = &rep.outcome else { panic!("not the selecting engine: {:?}", rep.outcome) };
    assert_eq!((s.inputs, s.entries_read, s.entries, s.threads), (1, 1000, 250, 1));
    let j = rep.to_json();
    assert_eq!(keys(&j), MANY_KEYS);
    assert_eq!(j["inputs"], 1);
    assert_eq!(j["output"], out.display().to_string());
    assert_eq!(j["ntuple"], "Events");
    assert_eq!(j["method"], "copied pages and re-encoded");
    assert_eq!(j["where"], "x >= 750");
    assert_eq!(j["filters"], serde_json::json!([]));
    assert_eq!((j["clusters_copied"].as_u64(), j["parts"].as_u64()), (Some(1), Some(4)), "{j}");
    assert_eq!(j["fields"], serde_json::json!(["x", "v"]));
    assert_eq!((j["entries_read"].as_u64(), j["entries"].as_u64(), j["threads"].as_u64()), (Some(1000), Some(250), Some(1)));
    assert_eq!(j["clusters"].as_u64(), Some(s.clusters));
    assert_eq!(j["file_bytes"].as_u64(), Some(std::fs::metadata(&out).unwrap().len()));
    assert_eq!(xs(&out), (750..1000).collect::<Vec<_>>());

    // A filter: its text comes back as COLLECTION:EXPR.
    let req = SkimRequest { filters: vec![("v".into(), "v > 1".into())], ..one.clone() };
    let j = skim(&req, &out).to_json();
    assert_eq!((j["method"].as_str(), j["where"].is_null()), (Some("re-encoded"), true));
    assert_eq!(j["filters"], serde_json::json!(["v:v > 1"]));
    assert_eq!(j["entries"], 1000);

    // Several inputs, no selection: every cluster copied.
    let req = SkimRequest { inputs: vec![a.clone(), b.clone()], ..Default::default() };
    assert_eq!(req.engine().unwrap(), SkimEngine::Many);
    let j = skim(&req, &out).to_json();
    assert_eq!(keys(&j), MANY_KEYS);
    assert_eq!((j["inputs"].as_u64(), j["entries"].as_u64(), j["method"].as_str()), (Some(2), Some(2000), Some("copied pages")));
    assert_eq!(xs(&out), (0..2000).collect::<Vec<_>>());

    // A glob, and threads on one input.
    let glob = d.join("?.root").display().to_string();
    let j = skim(&SkimRequest { inputs: vec![glob], ..Default::default() }, &out).to_json();
    assert_eq!((j["inputs"].as_u64(), j["entries"].as_u64()), (Some(2), Some(2000)));
    let j = skim(&SkimRequest { threads: Some(2), ..one.clone() }, &out).to_json();
    assert_eq!(keys(&j), MANY_KEYS);
    assert_eq!((j["inputs"].as_u64(), j["threads"].as_u64(), j["entries"].as_u64()), (Some(1), Some(2), Some(1000)));

    // An entry range applies to one input without a selection only.
    for bad in [
        SkimRequest { inputs: vec![a.clone(), b.clone()], entries: Some(EntryRange::Text("0:10".into())), ..Default::default() },
        SkimRequest { where_: Some("x > 1".into()), entries: Some(EntryRange::Clamped(0, 10)), ..one.clone() },
        SkimRequest { threads: Some(1), entries: Some(EntryRange::Clamped(0, 10)), ..one.clone() },
    ] {
        let e = run(&bad, d.join("never.root"), WriteOptions::default(), &|_, _| {}).unwrap_err().to_string();
        assert!(e.contains("skim: --entries applies to one input without --where, --filter or --threads"), "{e}");
        assert!(!d.join("never.root").exists());
    }
    std::fs::remove_dir_all(&d).ok();
}
