//! Attribute sets written and read back: ranges and values of two sets, the format version of
//! the main RNTuple (1.0.2.0 with sets, 1.0.0.1 without), the hidden anchors (only the main
//! RNTuple is listed), sets of an RNTuple of a shared file, an aborted writer, and bad links
//! refused with errors. (ROOT's reading is checked in tests/cross/test_attributes.py.)

use rntuple::write::{FileWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-attributes-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

fn rec(fields: Vec<(&str, Value)>) -> Value {
    Value::Record(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn write_two_sets(w: &mut Writer) {
    let prov = w.attributes("provenance", &[("run", "std::int32_t"), ("tag", "std::string")]).expect("set");
    let calib = w.attributes("calibration", &[("scale", "double"), ("bins", "std::vector<float>")]).expect("set");
    assert!(w.attributes("provenance", &[("x", "float")]).err().expect("twice").to_string().contains("exists already"));
    assert!(w.attributes("__reserved", &[("x", "float")]).is_err());
    for r in 0..3u64 {
        let start = w.num_entries();
        for i in 0..(10 + r) {
            w.fill(&rec(vec![("x", Value::F32((r * 100 + i) as f32))])).expect("fill");
        }
        prov.commit_range(start, w.num_entries(), &rec(vec![("run", Value::Int(r as i64)), ("tag", Value::String(format!("t{r}")))])).expect("range");
        w.commit_cluster().expect("cluster");
    }
    calib
        .commit_range(0, w.num_entries(), &rec(vec![("scale", Value::F64(1.5)), ("bins", Value::List(vec![Value::F32(1.0), Value::F32(2.0)]))]))
        .expect("calib");
    assert!(calib.commit_range(5, 4, &rec(vec![("scale", Value::F64(0.0)), ("bins", Value::List(vec![]))])).is_err());
}

fn check_two_sets(path: &PathBuf, name: &str) {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader(name).expect("reader");
    assert_eq!((r.anchor().major, r.anchor().minor, r.anchor().patch), (0, 2, 0));
    assert_eq!(r.num_entries(), 33);
    assert_eq!(r.attribute_set_names(), ["provenance", "calibration"]);
    let prov = r.attribute_set("provenance").expect("provenance");
    let got: Vec<(u64, u64, String)> =
        prov.entries().expect("entries").into_iter().map(|e| (e.range_start, e.range_len, e.values.to_json().to_string())).collect();
    assert_eq!(
        got,
        [(0, 10, r#"{"run":0,"tag":"t0"}"#.to_string()), (10, 11, r#"{"run":1,"tag":"t1"}"#.to_string()), (21, 12, r#"{"run":2,"tag":"t2"}"#.to_string())]
    );
    assert_eq!(prov.entries_for(20).expect("for")[0].values.to_json().to_string(), r#"{"run":1,"tag":"t1"}"#);
    assert!(prov.entries_for(33).expect("none").is_empty());
    let attr_anchor = prov.reader().anchor();
    assert_eq!((attr_anchor.major, attr_anchor.minor), (0, 2));
    let calib = r.attribute_set("calibration").expect("calibration").entries().expect("entries");
    assert_eq!(calib.len(), 1);
    assert_eq!((calib[0].range_start, calib[0].range_len), (0, 33));
    assert_eq!(calib[0].values.to_json().to_string(), r#"{"scale":1.5,"bins":[1.0,2.0]}"#);
    assert!(r.attribute_set("nope").err().expect("missing").to_string().contains("no attribute set 'nope'"));
}

#[test]
fn two_attribute_sets_read_back() {
    let path = tmp("two.root");
    let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default()).expect("writer");
    write_two_sets(&mut w);
    w.commit().expect("commit");
    check_two_sets(&path, "Events");
    // Only the main RNTuple is listed; the sets' anchors are hidden keys.
    assert_eq!(RNTupleFile::open(&path).expect("open").names(), ["Events"]);
}

#[test]
fn attribute_sets_of_an_rntuple_in_a_shared_file_and_with_checkpoints() {
    let path = tmp("shared.root");
    let fw = FileWriter::create(&path, WriteOptions { checkpoint_clusters: 1, ..WriteOptions::default() }).expect("fw");
    let mut w = fw.writer("Events", &[("x", "float")]).expect("w");
    let mut other = fw.writer("Runs", &[("run", "std::int32_t")]).expect("runs");
    other.fill(&rec(vec![("run", Value::Int(1))])).expect("fill");
    write_two_sets(&mut w);
    w.commit().expect("commit");
    other.commit().expect("commit");
    fw.commit().expect("file");
    check_two_sets(&path, "Events");
    let f = RNTupleFile::open(&path).expect("open");
    assert_eq!(f.names(), ["Events", "Runs"]);
    let runs = f.reader("Runs").expect("runs");
    assert!(runs.attribute_sets().is_empty());
    assert_eq!((runs.anchor().minor, runs.anchor().patch), (0, 1));
}

#[test]
fn an_aborted_writer_with_attribute_sets_leaves_no_file() {
    let d = tmp("abort");
    std::fs::create_dir_all(&d).expect("dir");
    let path = d.join("out.root");
    let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default()).expect("w");
    let prov = w.attributes("p", &[("run", "std::int32_t")]).expect("set");
    w.fill(&rec(vec![("x", Value::F32(1.0))])).expect("fill");
    prov.commit_range(0, 1, &rec(vec![("run", Value::Int(1))])).expect("range");
    w.abort();
    assert!(std::fs::read_dir(&d).expect("dir").next().is_none());
    assert!(prov.commit_range(0, 1, &rec(vec![("run", Value::Int(1))])).is_err());
}

#[test]
fn bad_attribute_links_are_errors_with_offsets() {
    let path = tmp("bad.root");
    let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default()).expect("w");
    let prov = w.attributes("p", &[("run", "std::int32_t")]).expect("set");
    w.fill(&rec(vec![("x", Value::F32(1.0))])).expect("fill");
    prov.commit_range(0, 1, &rec(vec![("run", Value::Int(1))])).expect("range");
    w.commit().expect("commit");
    let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");
    let link = r.attribute_sets()[0].clone();
    assert_eq!(link.anchor_length, 78);
    // A damaged anchor of the set: an error naming the set and the offset; the main RNTuple reads.
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[link.anchor.offset as usize + 20] ^= 0xFF;
    let r2 = RNTupleFile::from_bytes(bytes).expect("open").reader("Events").expect("main still reads");
    let e = r2.attribute_set("p").err().expect("damaged").to_string();
    assert!(e.contains("attribute set 'p'") && e.contains(&link.anchor.offset.to_string()), "{e}");
    assert_eq!(r2.read_values(None, 0, 1).expect("main")[0].to_json().to_string(), r#"{"x":1.0}"#);
    let mut desc = r.descriptor().clone();
    // A link whose anchor length is out of bounds is refused by the footer parser.
    desc.attribute_sets[0].anchor_length = 1 << 20;
    let footer = rntuple::format::serialize::footer(&desc);
    let mut parsed = rntuple::format::envelope::parse_header(&rntuple::format::serialize::header(&desc).0).expect("header");
    parsed.header_checksum = desc.header_checksum;
    let e = rntuple::format::envelope::parse_footer(&footer, &mut parsed).expect_err("too long").to_string();
    assert!(e.contains("anchor length 1048576"), "{e}");
    assert!(r.attribute_set("p").is_ok());
}
