//! Schema evolution on read (`rntuple::read::evolution`, ROOT 6.40's rules): typed reads with
//! widened and narrowed numbers, a class read at another version (members matched by name, those
//! missing on disk default-constructed, the others skipped), Arrow batches read into requested
//! types, what ROOT refuses refused; and files whose type names are spelled as ROOT 6.34 wrote
//! them (`vector<int>`, `Float_t`, `vector<vector<float> >`), forged from ours, read with the
//! same values.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use rntuple::logical::typename::parse;
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Record};

#[derive(Record, Debug, PartialEq, Clone)]
#[rntuple(class = "Evo", version = 1)]
struct EvoV1 {
    a: i32,
    b: f32,
    gone: String,
}

#[derive(Record, Debug, PartialEq, Clone)]
#[rntuple(class = "Evo", version = 2)]
struct EvoV2 {
    a: i64,
    b: f64,
    added: Vec<f32>,
    extra: f64,
}

#[derive(Record, Debug, PartialEq)]
struct V1 {
    obj: EvoV1,
    objs: Vec<EvoV1>,
    f: f32,
    i: i32,
    v: Vec<f32>,
}

#[derive(Record, Debug, PartialEq)]
struct V2 {
    obj: EvoV2,
    objs: Vec<EvoV2>,
    f: f64,
    i: i64,
    v: Vec<f32>,
}

/// A field read as a narrower or refused type.
#[derive(Record, Debug, PartialEq)]
struct Narrow {
    i: u8,
}
#[derive(Record, Debug, PartialEq)]
struct AsBool {
    i: bool,
}
#[derive(Record, Debug, PartialEq)]
struct IntAsDouble {
    i: f64,
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("rntuple-evolution-{name}-{}.root", std::process::id()))
}

fn v1_events() -> Vec<V1> {
    (0..3)
        .map(|k| {
            let obj = EvoV1 { a: 10 * k - 5, b: 0.5 + k as f32, gone: "x".repeat(k as usize) };
            V1 { objs: vec![obj.clone(); k as usize], obj, f: 1.25 + k as f32, i: -7 + 1000 * k, v: vec![0.5 * k as f32; k as usize] }
        })
        .collect()
}

#[test]
fn class_version_1_reads_as_version_2_and_back() {
    let path = temp("v1");
    let mut w = Writer::create_typed::<V1>(&path, "Events", WriteOptions::default()).unwrap();
    for e in &v1_events() {
        w.fill_typed(e).unwrap();
    }
    w.commit().unwrap();
    let r = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    let got = r.read_typed::<V2>(0, 3).unwrap();
    let evo2 = EvoV2 { a: 15, b: 2.5, added: vec![], extra: 0.0 };
    assert_eq!(got[2], V2 { obj: evo2.clone(), objs: vec![EvoV2 { a: 15, ..evo2.clone() }; 2], f: 3.25, i: 1993, v: vec![1.0, 1.0] });
    assert_eq!(got[0].obj, EvoV2 { a: -5, b: 0.5, added: vec![], extra: 0.0 });

    // and back: version 2 written, read as version 1 (`gone` default-constructed, `added` skipped)
    let path2 = temp("v2");
    let mut w = Writer::create_typed::<V2>(&path2, "Events", WriteOptions::default()).unwrap();
    w.fill_typed(&V2 { obj: EvoV2 { a: -7, b: 0.1, added: vec![1.5], extra: 2.0 }, objs: vec![], f: 1.0, i: 3, v: vec![] }).unwrap();
    w.fill_typed(&V2 { obj: EvoV2 { a: 3_000_000_000, b: 1.0, added: vec![], extra: 0.0 }, objs: vec![], f: 1e300, i: 300, v: vec![] }).unwrap();
    w.commit().unwrap();
    let r = RNTupleFile::open(&path2).unwrap().reader("Events").unwrap();
    let back = r.read_typed::<V1>(0, 1).unwrap();
    assert_eq!(back[0].obj, EvoV1 { a: -7, b: 0.1f64 as f32, gone: String::new() });
    // 3e9 does not fit the version-1 `a` (an `i32`): an error naming the member, as ROOT's range check
    let e = r.read_typed::<V1>(1, 2).unwrap_err().to_string();
    assert!(e.contains("obj.a") && e.contains("i32"), "{e}");
    // integers as other integers (range-checked), as bool; never as floating point
    assert_eq!(r.read_typed::<Narrow>(0, 1).unwrap(), [Narrow { i: 3 }]);
    assert!(r.read_typed::<Narrow>(1, 2).unwrap_err().to_string().contains("does not fit"));
    assert_eq!(r.read_typed::<AsBool>(0, 2).unwrap(), [AsBool { i: true }, AsBool { i: true }]);
    assert!(r.read_typed::<IntAsDouble>(0, 1).is_err());
    for p in [path, path2] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn batches_read_into_requested_types() {
    let path = temp("batch");
    let mut w = Writer::create_typed::<V1>(&path, "Events", WriteOptions::default()).unwrap();
    for e in &v1_events() {
        w.fill_typed(e).unwrap();
    }
    w.commit().unwrap();
    let r = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
    let class2 = parse("double").unwrap();
    let types = [("f", class2), ("i", parse("std::int64_t").unwrap()), ("v", parse("ROOT::RVec<double>").unwrap())];
    let b = r.read_batch_with_types(Some(&["f", "i", "v"]), &types, 0, 3).unwrap();
    assert_eq!(b.column(0).as_primitive::<Float64Type>().values(), &[1.25, 2.25, 3.25]);
    assert_eq!(b.column(1).as_primitive::<Int64Type>().values(), &[-7, 993, 1993]);
    let v = b.column(2).as_list::<i64>();
    assert_eq!(v.values().as_primitive::<Float64Type>().values(), &[0.5, 1.0, 1.0]);
    // refused as ROOT refuses: the error names the field and both types
    let e = r.read_batch_with_types(None, &[("i", parse("float").unwrap())], 0, 3).unwrap_err().to_string();
    assert!(e.contains("field 'i'") && e.contains("std::int32_t") && e.contains("float"), "{e}");
    let e = r.read_batch_with_types(None, &[("v", parse("std::vector<std::int32_t>").unwrap())], 0, 3).unwrap_err().to_string();
    assert!(e.contains("field 'v'"), "{e}");
    std::fs::remove_file(path).unwrap();
}

/// Type names as ROOT 6.34 wrote them (Meta-normalized: no `std::`, `> >`), and typedef
/// spellings of fundamental types (`Int_t`, `Float_t`, `Long64_t`), each in a file otherwise ours:
/// the same values as with the normalized names. With `RNTUPLE_OLD_NAMES_OUT` set (a directory),
/// the forged files are also written there (the fixtures of tests/cross/test_schema_evolution.py:
/// `old_type_names_6_34.root`, `typedef_type_names.root`).
#[test]
fn type_names_spelled_as_root_6_34_read() {
    #[derive(Record, Debug, PartialEq)]
    struct Old {
        vi: Vec<i32>,
        x: f32,
        vv: Vec<Vec<f32>>,
        l: i64,
    }
    let path = temp("old-names");
    let events = vec![Old { vi: vec![1, -2], x: 1.5, vv: vec![vec![0.25], vec![]], l: -9 }, Old { vi: vec![], x: -3.0, vv: vec![], l: 1 << 40 }];
    let mut w = Writer::create_typed::<Old>(&path, "Events", WriteOptions::default()).unwrap();
    for e in &events {
        w.fill_typed(e).unwrap();
    }
    w.commit().unwrap();
    let templates: &[(&str, &str)] =
        &[("std::vector<std::int32_t>", "vector<int>"), ("std::vector<std::vector<float>>", "vector<vector<float> >"), ("std::vector<float>", "vector<float>")];
    let typedefs: &[(&str, &str)] = &[("std::int32_t", "Int_t"), ("float", "Float_t"), ("std::int64_t", "Long64_t")];
    for (file, old, shown) in [("old_type_names_6_34.root", templates, "vector<vector<float> >"), ("typedef_type_names.root", typedefs, "Float_t")] {
        let mut parts = rntuple_testkit::disassemble(&std::fs::read(&path).unwrap()).unwrap();
        for f in &mut parts[0].desc.fields {
            if let Some((_, o)) = old.iter().find(|(n, _)| *n == f.type_name) {
                f.type_name = o.to_string();
            }
        }
        let bytes = rntuple_testkit::reassemble(&parts).unwrap();
        if let Ok(dir) = std::env::var("RNTUPLE_OLD_NAMES_OUT") {
            std::fs::write(std::path::Path::new(&dir).join(file), &bytes).unwrap();
        }
        let r = RNTupleFile::from_bytes(bytes).unwrap().reader("Events").unwrap();
        let names: Vec<String> = r.descriptor().fields.iter().map(|f| f.type_name.clone()).collect();
        assert!(names.iter().any(|n| n == shown), "{file}: {names:?}");
        assert_eq!(r.read_typed::<Old>(0, 2).unwrap(), events, "{file}");
        assert_eq!(r.read_batch(None, 0, 2).unwrap().num_columns(), 4, "{file}");
    }
    std::fs::remove_file(path).unwrap();
}
