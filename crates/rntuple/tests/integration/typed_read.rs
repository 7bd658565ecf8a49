//! Typed reading of files this crate did not write: ROOT's RNTupleImporter output (projected
//! fields, an untyped collection of records, a cardinality field) read into `#[derive(Record)]`
//! structs, checked against the dynamic values (which other tests check against uproot); and the
//! errors of typed reading: a type that does not fit, a missing field, a value out of range.

use crate::common;

use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Record, Value};
use serde_json::json;

#[derive(Record, Debug, PartialEq)]
#[allow(non_snake_case)]
struct Muon {
    Muon_pt: f32,
    Muon_eta: f32,
    Muon_charge: i32,
}

#[derive(Record, Debug, PartialEq)]
#[allow(non_snake_case)]
struct Event {
    nMuon: u32,
    Muon_pt: Vec<f32>,
    Muon_charge: Vec<i32>,
    _collection0: Vec<Muon>,
    /// Not in the file: an `Option` member reads as `None`.
    trigger: Option<bool>,
}

fn cms() -> Option<std::path::PathBuf> {
    let p = common::testdata()?.join("rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root");
    p.exists().then_some(p)
}

#[test]
fn importer_file_reads_into_structs() {
    let Some(path) = cms() else { return };
    let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");
    let events = r.read_typed::<Event>(0, r.num_entries()).expect("typed read");
    assert_eq!(events.len(), 1000);
    let values = r.read_values(Some(&["nMuon", "Muon_pt", "Muon_charge", "_collection0"]), 0, 1000).expect("values");
    let mut muons = 0;
    for (i, (e, v)) in events.iter().zip(&values).enumerate() {
        let j = v.to_json();
        let built = json!({
            "nMuon": e.nMuon, "Muon_pt": e.Muon_pt, "Muon_charge": e.Muon_charge,
        });
        assert_eq!(built["nMuon"], j["nMuon"], "entry {i}");
        assert_eq!(built["Muon_pt"], j["Muon_pt"], "entry {i}");
        assert_eq!(built["Muon_charge"], j["Muon_charge"], "entry {i}");
        // The projected fields and the collection they are projected from agree.
        assert_eq!(e.nMuon as usize, e._collection0.len());
        for (k, m) in e._collection0.iter().enumerate() {
            assert_eq!(m.Muon_pt, e.Muon_pt[k]);
            assert_eq!(m.Muon_charge, e.Muon_charge[k]);
        }
        assert_eq!(e.trigger, None);
        muons += e.nMuon;
    }
    assert!(muons > 1000, "{muons} muons");
    // In batches: the same entries.
    let batched: Vec<Event> = r.iter_typed::<Event>(97).collect::<Result<_, _>>().expect("iter");
    assert_eq!(batched, events);
}

#[test]
fn typed_reading_errors_name_the_field() {
    let Some(path) = cms() else { return };
    let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");

    #[derive(Record, Debug)]
    #[allow(non_snake_case, dead_code)]
    struct WrongType {
        Muon_pt: Vec<String>,
    }
    let e = r.read_typed::<WrongType>(0, 10).expect_err("strings from floats").to_string();
    assert!(e.contains("Muon_pt") && e.contains("float") && e.contains("String"), "{e}");

    #[derive(Record, Debug)]
    #[allow(dead_code)]
    struct Missing {
        nope: f32,
    }
    let e = r.read_typed::<Missing>(0, 10).expect_err("missing field").to_string();
    assert!(e.contains("'nope'") && e.contains("missing field"), "{e}");
    let mut it = r.iter_typed::<Missing>(4);
    assert!(it.next().expect("an item").is_err());
    assert!(it.next().is_none(), "the iteration ends after its error");
}

#[test]
fn out_of_range_integers_are_errors() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("typed_read_range.root");
    let mut w = Writer::create(&path, "T", &[("n", "std::uint32_t"), ("x", "double")], WriteOptions::default()).expect("create");
    for n in [1u64, 200, 300] {
        w.fill(&Value::Record(vec![("n".into(), Value::UInt(n)), ("x".into(), Value::F64(n as f64 / 8.0))])).expect("fill");
    }
    w.commit().expect("commit");
    let r = RNTupleFile::open(&path).expect("open").reader("T").expect("reader");

    #[derive(Record, Debug, PartialEq)]
    struct Wide {
        n: u64,
        x: f64,
    }
    assert_eq!(r.read_typed::<Wide>(0, 3).expect("wide"), [Wide { n: 1, x: 0.125 }, Wide { n: 200, x: 25.0 }, Wide { n: 300, x: 37.5 }]);

    #[derive(Record, Debug, PartialEq)]
    struct Narrow {
        n: u8,
    }
    assert_eq!(r.read_typed::<Narrow>(0, 2).expect("fits"), [Narrow { n: 1 }, Narrow { n: 200 }]);
    let e = r.read_typed::<Narrow>(0, 3).expect_err("300 in a u8").to_string();
    assert!(e.contains("'n'") && e.contains("300") && e.contains("u8"), "{e}");

    // A double reads as f32 (narrowed, as ROOT 6.40 reads a double field as float: read::evolution);
    // a floating-point field never reads as an integer.
    #[derive(Record, Debug, PartialEq)]
    struct Single {
        x: f32,
    }
    assert_eq!(r.read_typed::<Single>(0, 1).expect("double into f32"), [Single { x: 0.125 }]);
    #[derive(Record, Debug)]
    #[allow(dead_code)]
    struct AsInt {
        x: i64,
    }
    let e = r.read_typed::<AsInt>(0, 1).expect_err("double into i64").to_string();
    assert!(e.contains("'x'") && e.contains("double") && e.contains("i64"), "{e}");
    std::fs::remove_file(path).ok();
}
