//! Skims of several inputs with `--where` / `--filter` selections, on 1 and 4 threads: the output
//! equals the selection done entry by entry on the inputs' values.

use rntuple::logical::typename::{parse, TypeExpr};
use rntuple::ops::select::{expand_inputs, skim_many, SkimMany};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::path::PathBuf;

fn dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-skim-select-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn schema() -> Vec<(String, TypeExpr)> {
    let muon = TypeExpr::Record(vec![("pt".into(), parse("float").unwrap()), ("q".into(), parse("std::int32_t").unwrap())]);
    vec![
        ("event".into(), parse("std::uint64_t").unwrap()),
        ("nJet".into(), parse("std::uint32_t").unwrap()),
        ("Jet_pt".into(), parse("std::vector<float>").unwrap()),
        ("Jet_eta".into(), parse("std::vector<float>").unwrap()),
        ("Muon".into(), TypeExpr::Collection("std::vector".into(), Box::new(muon))),
    ]
}

/// A small deterministic generator (no dependency).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pt(&mut self) -> f32 {
        (self.next() % 6000) as f32 / 100.0
    }
}

/// Three inputs of 3000 entries, several clusters each.
fn inputs(d: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut g = Lcg(7);
    for k in 0..3u64 {
        let p = d.join(format!("in{k}.root"));
        let opts = WriteOptions { approx_zipped_cluster_size: 20_000, compression: rntuple::write::Compression::NONE, ..Default::default() };
        let mut w = Writer::create_with_types(&p, "Events", &schema(), opts).unwrap();
        for i in 0..3000u64 {
            let nj = (g.next() % 7) as usize;
            let nm = (g.next() % 3) as usize;
            let jets: Vec<f32> = (0..nj).map(|_| g.pt()).collect();
            let etas: Vec<f32> = (0..nj).map(|_| (g.next() % 600) as f32 / 100.0 - 3.0).collect();
            let muons: Vec<Value> = (0..nm)
                .map(|_| Value::Record(vec![("pt".into(), Value::F32(g.pt())), ("q".into(), Value::Int(if g.next().is_multiple_of(2) { 1 } else { -1 }))]))
                .collect();
            w.fill(&Value::Record(vec![
                ("event".into(), Value::UInt(k * 10_000 + i)),
                ("nJet".into(), Value::UInt(nj as u64)),
                ("Jet_pt".into(), Value::List(jets.into_iter().map(Value::F32).collect())),
                ("Jet_eta".into(), Value::List(etas.into_iter().map(Value::F32).collect())),
                ("Muon".into(), Value::List(muons)),
            ]))
            .unwrap();
        }
        w.commit().unwrap();
        out.push(p.display().to_string());
    }
    out
}

fn f32s(v: &Value) -> Vec<f32> {
    match v {
        Value::List(l) => l.iter().map(|x| if let Value::F32(f) = x { *f } else { panic!("{x:?}") }).collect(),
        _ => panic!("{v:?}"),
    }
}

fn member<'a>(v: &'a Value, name: &str) -> &'a Value {
    match v {
        Value::Record(m) => &m.iter().find(|(n, _)| n == name).unwrap().1,
        _ => panic!("{v:?}"),
    }
}

/// The reference: entries with a muon of pt > 25 and q > 0 and at least two jets above 25 GeV
/// within |eta| < 2.4; jets filtered to pt > 25 (nJet follows); fields event, nJet, Jet_pt, Jet_eta.
fn expected(inputs: &[String]) -> Vec<(u64, u64, Vec<f32>, Vec<f32>)> {
    let mut out = Vec::new();
    for i in inputs {
        let r = RNTupleFile::open(i).unwrap().reader("Events").unwrap();
        for e in r.read_values(None, 0, r.num_entries()).unwrap() {
            let pts = f32s(member(&e, "Jet_pt"));
            let etas = f32s(member(&e, "Jet_eta"));
            let good_jets = pts.iter().zip(&etas).filter(|(p, e)| **p > 25.0 && e.abs() < 2.4).count();
            let Value::List(mu) = member(&e, "Muon") else { panic!() };
            let good_mu = mu.iter().any(|m| matches!(member(m, "pt"), Value::F32(p) if *p > 25.0) && matches!(member(m, "q"), Value::Int(q) if *q > 0));
            if good_jets >= 2 && good_mu {
                let keep: Vec<usize> = (0..pts.len()).filter(|&j| pts[j] > 25.0).collect();
                let Value::UInt(ev) = member(&e, "event") else { panic!() };
                out.push((*ev, keep.len() as u64, keep.iter().map(|&j| pts[j]).collect(), keep.iter().map(|&j| etas[j]).collect()));
            }
        }
    }
    out
}

fn written(path: &std::path::Path) -> Vec<(u64, u64, Vec<f32>, Vec<f32>)> {
    let r = RNTupleFile::open(path).unwrap().reader("Events").unwrap();
    let names: Vec<String> = r.descriptor().top_level_fields().iter().map(|&f| r.descriptor().fields[f as usize].name.clone()).collect();
    assert_eq!(names, ["event", "nJet", "Jet_pt", "Jet_eta"]);
    r.read_values(None, 0, r.num_entries())
        .unwrap()
        .iter()
        .map(|e| {
            let (Value::UInt(ev), Value::UInt(n)) = (member(e, "event"), member(e, "nJet")) else { panic!("{e:?}") };
            (*ev, *n, f32s(member(e, "Jet_pt")), f32s(member(e, "Jet_eta")))
        })
        .collect()
}

fn what(inputs: Vec<String>, threads: usize) -> SkimMany {
    SkimMany {
        inputs,
        fields: Some(vec!["event".into(), "nJet".into(), "Jet_pt".into(), "Jet_eta".into()]),
        where_: Some("count(Jet_pt > 25 && abs(Jet_eta) < 2.4) >= 2 && any(Muon.pt > 25 && Muon.q > 0)".into()),
        filters: vec![("Jet".into(), "Jet_pt > 25".into())],
        threads,
        ..Default::default()
    }
}

#[test]
fn where_and_filter_over_several_inputs_on_1_and_4_threads() {
    let d = dir("main");
    let ins = inputs(&d);
    let want = expected(&ins);
    assert!(want.len() > 100 && want.len() < 8000, "a selection that keeps some: {}", want.len());
    for threads in [1, 4] {
        let out = d.join(format!("out{threads}.root"));
        let s = skim_many(&what(ins.clone(), threads), &out, WriteOptions::default(), &|_, _| {}).unwrap();
        assert_eq!((s.inputs, s.entries_read, s.entries, s.threads), (3, 9000, want.len() as u64, threads));
        assert!(s.parts >= 3);
        let mut got = written(&out);
        if threads == 1 {
            assert_eq!(got, want, "one thread keeps the order");
        } else {
            got.sort_by_key(|g| g.0);
            assert_eq!(got, want);
        }
    }
}

#[test]
fn globs_expand_sorted_and_unmatched_patterns_fail() {
    let d = dir("glob");
    let ins = inputs(&d);
    let pattern = d.join("in*.root").display().to_string();
    assert_eq!(expand_inputs(std::slice::from_ref(&pattern)).unwrap(), ins);
    let out = d.join("out.root");
    let s = skim_many(&what(vec![pattern], 2), &out, WriteOptions::default(), &|_, _| {}).unwrap();
    assert_eq!(s.inputs, 3);
    let e = expand_inputs(&[d.join("nothing*.root").display().to_string()]).unwrap_err().to_string();
    assert!(e.contains("matches no file"), "{e}");
}

#[test]
fn errors_name_the_field_and_leave_no_output() {
    let d = dir("errors");
    let ins = inputs(&d);
    let out = d.join("out.root");
    let mut w = what(ins.clone(), 2);
    w.where_ = Some("count(Jet_ptt > 25) >= 2".into());
    let e = skim_many(&w, &out, WriteOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("no field 'Jet_ptt' (as 'Jet_ptt' at column 7 of 'count(Jet_ptt > 25) >= 2')"), "{e}");
    assert!(!out.exists());
    let mut w = what(ins.clone(), 2);
    w.where_ = Some("Jet_pt > 25".into());
    let e = skim_many(&w, &out, WriteOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("must give a boolean per entry"), "{e}");
    assert!(!out.exists(), "a failed skim leaves no output");
    let mut w = what(ins.clone(), 1);
    w.where_ = Some("count(Jet_pt > 25) >= (2".into());
    let e = skim_many(&w, &out, WriteOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("the '(' at column 23 is not closed"), "{e}");
    // An input whose field has another type.
    let odd = d.join("odd.root");
    let mut wr = Writer::create(
        &odd,
        "Events",
        &[("event", "std::int32_t"), ("nJet", "std::uint32_t"), ("Jet_pt", "std::vector<float>"), ("Jet_eta", "std::vector<float>")],
        WriteOptions::default(),
    )
    .unwrap();
    wr.fill(&Value::Record(vec![
        ("event".into(), Value::Int(1)),
        ("nJet".into(), Value::UInt(0)),
        ("Jet_pt".into(), Value::List(vec![])),
        ("Jet_eta".into(), Value::List(vec![])),
    ]))
    .unwrap();
    wr.commit().unwrap();
    let mut w = what(vec![ins[0].clone(), odd.display().to_string()], 1);
    w.where_ = None;
    let e = skim_many(&w, &out, WriteOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("field 'event' is 'std::int32_t' in") && e.contains("'std::uint64_t' in the first input"), "{e}");
}

#[test]
fn clusters_that_pass_whole_are_copied_as_stored() {
    let d = dir("copy");
    let ins = inputs(&d);
    let fields: Vec<String> = ["event", "nJet", "Jet_pt"].iter().map(|s| s.to_string()).collect();
    let n_clusters: usize = ins.iter().map(|i| RNTupleFile::open(i).unwrap().reader("Events").unwrap().descriptor().clusters.len()).sum();
    let read = |p: &std::path::Path| -> Vec<String> {
        let r = RNTupleFile::open(p).unwrap().reader("Events").unwrap();
        r.read_values(None, 0, r.num_entries()).unwrap().iter().map(|v| v.to_json().to_string()).collect()
    };
    // Every entry kept: every cluster copied (the inputs are uncompressed, so is the output: the same
    // column encodings), values equal to a re-encoding skim's (a filter that keeps all).
    let plain = || WriteOptions { compression: rntuple::write::Compression::NONE, ..Default::default() };
    let copy = d.join("copy.root");
    let w = SkimMany { inputs: ins.clone(), fields: Some(fields.clone()), where_: Some("event >= 0".into()), threads: 1, ..Default::default() };
    let s = skim_many(&w, &copy, plain(), &|_, _| {}).unwrap();
    assert_eq!((s.entries, s.clusters_copied), (9000, n_clusters as u64));
    let reenc = d.join("reencoded.root");
    let w2 = SkimMany { filters: vec![("Jet".into(), "Jet_pt >= 0".into())], ..w.clone() };
    let s2 = skim_many(&w2, &reenc, plain(), &|_, _| {}).unwrap();
    assert_eq!((s2.entries, s2.clusters_copied), (9000, 0));
    assert_eq!(read(&copy), read(&reenc));
    // A compressed output has other column encodings (split): re-encoded, same values.
    let zipped = d.join("zipped.root");
    let s4 = skim_many(&w, &zipped, WriteOptions::default(), &|_, _| {}).unwrap();
    assert_eq!((s4.entries, s4.clusters_copied), (9000, 0));
    assert_eq!(read(&zipped), read(&copy));
    // Some clusters pass whole, others not: both ways in one output, in input order on one thread.
    let mixed = d.join("mixed.root");
    let w3 = SkimMany { where_: Some("event < 2000 || event >= 10000".into()), ..w.clone() };
    let s3 = skim_many(&w3, &mixed, plain(), &|_, _| {}).unwrap();
    assert!(s3.clusters_copied > 0 && (s3.clusters_copied as usize) < n_clusters, "{s3:?}");
    let all = read(&copy);
    let want: Vec<String> = all
        .iter()
        .filter(|v| {
            let e: u64 = v.split("\"event\":").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
            !(2000..10000).contains(&e)
        })
        .cloned()
        .collect();
    assert_eq!(read(&mixed), want);
}

/// A thread ends its output cluster at the end of an input part once the cluster is an eighth full
/// (a thread holds about one part's output, not a whole cluster), so small parts are joined. Here
/// the parts are the inputs' clusters. With ROOT's default cluster size, all are joined in one.
#[test]
fn output_clusters_end_at_parts_of_useful_size() {
    let d = dir("part-clusters");
    let ins = inputs(&d);
    let want = expected(&ins);
    // The kept entries and their uncompressed bytes (event 8, nJet 4, two offsets of 8 per entry,
    // two floats per kept jet) of each input cluster, in order.
    let mut parts: Vec<(u64, u64)> = Vec::new();
    for (k, i) in ins.iter().enumerate() {
        let r = RNTupleFile::open(i).unwrap().reader("Events").unwrap();
        for c in &r.descriptor().clusters {
            let event = |e: u64| k as u64 * 10_000 + e;
            let kept = want.iter().filter(|w| (event(c.first_entry)..event(c.first_entry + c.n_entries)).contains(&w.0));
            parts.push(kept.fold((0, 0), |(n, b), w| (n + 1, b + 28 + 8 * w.1)));
        }
    }
    // A cluster size that some parts reach an eighth of alone and others do not.
    let size = 12_000u64;
    assert!(parts.iter().filter(|p| 8 * p.1 >= size).count() > 10 && parts.iter().filter(|p| 8 * p.1 < size).count() >= 3, "{parts:?}");
    assert!(parts.iter().all(|p| 2 * p.1 < size), "no part fills a cluster by itself: {parts:?}");
    let mut expect_clusters = Vec::new();
    let (mut n, mut bytes) = (0, 0);
    for (pn, pb) in &parts {
        (n, bytes) = (n + pn, bytes + pb);
        if 8 * bytes >= size {
            expect_clusters.push(n);
            (n, bytes) = (0, 0);
        }
    }
    if n > 0 {
        expect_clusters.push(n);
    }
    assert!(expect_clusters.len() < parts.len());
    let clusters = |p: &std::path::Path| -> Vec<u64> {
        RNTupleFile::open(p).unwrap().reader("Events").unwrap().descriptor().clusters.iter().map(|c| c.n_entries).collect()
    };
    let out = d.join("parts.root");
    let opts = WriteOptions { compression: rntuple::write::Compression::NONE, approx_zipped_cluster_size: size, ..Default::default() };
    let s = skim_many(&what(ins.clone(), 1), &out, opts, &|_, _| {}).unwrap();
    assert_eq!(s.parts as usize, parts.len(), "{s:?}");
    assert_eq!(clusters(&out), expect_clusters);
    assert_eq!(written(&out), want);
    let joined = d.join("joined.root");
    skim_many(&what(ins, 1), &joined, WriteOptions { compression: rntuple::write::Compression::NONE, ..Default::default() }, &|_, _| {}).unwrap();
    assert_eq!(clusters(&joined), [want.len() as u64]);
    assert_eq!(written(&joined), want);
}
