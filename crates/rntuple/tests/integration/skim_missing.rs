//! Skims of inputs whose fields differ (`SkimRequest::fill_missing`, the CLI's `--fill-missing`):
//! the output holds every kept field any input has, defaults where an input lacks one; without
//! the option, or where types differ or an expression names a missing field, an error.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int32Type};
use rntuple::ops::skim::{run, SkimRequest};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-skim-missing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `n` entries of the fields `schema`: `x` = first + entry, a float `y` = 0.5 + that (an integer
/// `y` that), `z` = that many (mod 3) floats.
fn input(d: &Path, name: &str, schema: &[(&str, &str)], first: i32, n: i32) -> String {
    let p = d.join(name);
    let mut w = Writer::create(&p, "Events", schema, WriteOptions::default()).unwrap();
    for i in first..first + n {
        let member = |f: &str, ty: &str| match (f, ty) {
            ("y", "float") => Value::F32(i as f32 + 0.5),
            ("z", _) => Value::List((0..i % 3).map(|k| Value::F32(k as f32)).collect()),
            _ => Value::Int(i.into()),
        };
        w.fill(&Value::Record(schema.iter().map(|(f, ty)| (f.to_string(), member(f, ty))).collect())).unwrap();
    }
    w.commit().unwrap();
    p.display().to_string()
}

#[test]
fn kept_fields_an_input_lacks_get_defaults() {
    let d = dir();
    let a = input(&d, "a.root", &[("x", "std::int32_t"), ("y", "float")], 0, 10);
    let b = input(&d, "b.root", &[("x", "std::int32_t"), ("z", "std::vector<float>")], 100, 5);
    let out = d.join("out.root");
    let req = SkimRequest { inputs: vec![a.clone(), b.clone()], fill_missing: true, ..Default::default() };
    run(&req, &out, WriteOptions::default(), &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = RNTupleFile::open(&out).unwrap().reader("Events").unwrap();
    let names: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    assert_eq!(names, ["x", "y", "z"]);
    let batch = r.read_batch(None, 0, r.num_entries()).unwrap();
    let x: Vec<i32> = batch.column(0).as_primitive::<Int32Type>().values().to_vec();
    assert_eq!(x, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, 101, 102, 103, 104]);
    let y: Vec<f32> = batch.column(1).as_primitive::<Float32Type>().values().to_vec();
    assert_eq!(y, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let z = batch.column(2).as_list::<i64>();
    let lens: Vec<i64> = z.offsets().windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(lens, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 1, 2]);

    // Fields asked for come in the order asked, from whichever input has them; a cut works.
    let req = SkimRequest { fields: Some(vec!["z".into(), "x".into()]), where_: Some("x < 5 || x >= 102".into()), ..req };
    run(&req, &out, WriteOptions::default(), &|_, _| {}).unwrap_or_else(|e| panic!("{e}"));
    let r = RNTupleFile::open(&out).unwrap().reader("Events").unwrap();
    let names: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    assert_eq!(names, ["z", "x"]);
    let batch = r.read_batch(None, 0, r.num_entries()).unwrap();
    assert_eq!(batch.column(1).as_primitive::<Int32Type>().values().to_vec(), [0, 1, 2, 3, 4, 102, 103, 104]);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn without_the_option_or_with_conflicts_it_is_an_error() {
    let d = dir().join("errors");
    std::fs::create_dir_all(&d).unwrap();
    let a = input(&d, "a.root", &[("x", "std::int32_t"), ("y", "float")], 0, 10);
    let b = input(&d, "b.root", &[("x", "std::int32_t"), ("z", "std::vector<float>")], 100, 5);
    let c = input(&d, "c.root", &[("x", "std::int32_t"), ("y", "std::int32_t")], 200, 5);
    let out = d.join("out.root");
    let skim = |inputs: Vec<String>, fill_missing: bool, where_: Option<&str>, fields: Option<Vec<String>>| {
        let req = SkimRequest { inputs, fill_missing, where_: where_.map(String::from), fields, ..Default::default() };
        run(&req, &out, WriteOptions::default(), &|_, _| {}).map(|_| ()).map_err(|e| e.to_string())
    };
    let e = skim(vec![a.clone(), b.clone()], false, None, None).unwrap_err();
    assert!(e.contains("has no field 'y'") && e.contains("--fill-missing"), "{e}");
    // The types must agree where a field is present.
    let e = skim(vec![a.clone(), c.clone()], true, None, None).unwrap_err();
    assert!(e.contains("field 'y'") && e.contains("std::int32_t") && e.contains("float"), "{e}");
    // A field the cut names must be in every input.
    let e = skim(vec![a.clone(), b.clone()], true, Some("y > 1"), None).unwrap_err();
    assert!(e.contains("no field 'y'"), "{e}");
    // A field asked for must be in some input.
    let e = skim(vec![a, b], true, None, Some(vec!["w".into()])).unwrap_err();
    assert!(e.contains("no input has a top-level field 'w'"), "{e}");
    assert!(!out.exists(), "a failed skim leaves no output");
    std::fs::remove_dir_all(&d).unwrap();
}
