//! Merging by copying compressed pages: every RNTuple of the shared test data (written by ROOT,
//! RNTupleImporter, uproot) merged with itself reads as its values twice (deferred columns filled
//! with zeros in the second copy), unless it uses what the merge refuses (suppressed columns),
//! which must be said; files of our writers with
//! different compression settings merge with their pages copied byte for byte; a schema mismatch
//! is refused naming the field.

use crate::common;

#[path = "merge_modes.rs"]
mod modes;

use rntuple::ops::merge::{merge, merge_with_options, MergeOptions};
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use serde_json::Value as J;
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn values(path: &Path, name: &str) -> Vec<J> {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader(name).expect("reader");
    r.read_values(None, 0, r.num_entries()).expect("read").iter().map(|v| v.to_json()).collect()
}

fn json(r: &rntuple::Reader, start: u64, stop: u64) -> Vec<J> {
    r.read_values(None, start, stop).expect("read").iter().map(|v| v.to_json()).collect()
}

#[test]
fn every_test_file_merged_with_itself_reads_twice() {
    let files = common::root_files("rntuple");
    let (mut merged, mut refused) = (0, Vec::new());
    for (k, path) in files.iter().enumerate() {
        let f = RNTupleFile::open(path).expect("open");
        for name in f.names() {
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
            let out = tmp(&format!("merge_self_{k}_{}.root", name.replace('/', "_")));
            let r = f.reader(&name).expect("reader");
            let alone = MergeOptions { ignore_other_objects: true, ..Default::default() };
            match merge_with_options(&[path, path], &name, &out, &alone, WriteOptions::default(), |_, _| {}) {
                Ok(stats) => {
                    let d = r.descriptor();
                    assert_eq!(stats.entries, 2 * r.num_entries(), "{file_name}:{name}");
                    assert_eq!(stats.clusters, 2 * d.clusters.len() as u64, "{file_name}:{name}");
                    // Every entry, or for the 100-million-entry files the first and last 3000 of
                    // each copy.
                    let out_r = RNTupleFile::open(&out).expect("open").reader(&name).expect("reader");
                    let n = r.num_entries();
                    assert_eq!(out_r.num_entries(), 2 * n);
                    let ranges = if n <= 20_000 { vec![(0, n)] } else { vec![(0, 3000), (n - 3000, n)] };
                    for (a, b) in ranges {
                        let once = json(&r, a, b);
                        assert_eq!(json(&out_r, a, b), once, "{file_name}:{name}: first copy, entries {a}..{b}");
                        assert_eq!(json(&out_r, n + a, n + b), once, "{file_name}:{name}: second copy, entries {a}..{b}");
                    }
                    // The schema is the input's.
                    let types = |r: &rntuple::Reader| r.fields().iter().map(|f| (f.name.clone(), f.type_name.clone())).collect::<Vec<_>>();
                    assert_eq!(types(&out_r), types(&r), "{file_name}:{name}");
                    merged += 1;
                }
                Err(e) => {
                    // Refused exactly when the RNTuple has what the merge cannot copy.
                    let d = r.descriptor();
                    let suppressed = d.clusters.iter().any(|c| c.columns.iter().flatten().any(|r| r.suppressed));
                    let e = e.to_string();
                    assert!(e.contains("not supported"), "{file_name}:{name}: {e}");
                    assert!(e.contains("suppressed") && suppressed, "{file_name}:{name}: {e}");
                    refused.push(format!("{file_name}:{name}"));
                }
            }
            std::fs::remove_file(&out).ok();
        }
    }
    if common::testdata().is_some() {
        assert!(merged >= 20 && refused.len() <= 4, "{merged} RNTuples merged; refused: {refused:?}");
    }
}

#[test]
fn our_files_merge_with_their_pages_copied() {
    let schema = [("id", "std::uint64_t"), ("v", "std::vector<float>"), ("s", "std::string"), ("o", "std::optional<std::int16_t>")];
    let entry = |i: u64| {
        Value::Record(vec![
            ("id".into(), Value::UInt(i)),
            ("v".into(), Value::List((0..i % 7).map(|k| Value::F32((i * 3 + k) as f32 * 0.5)).collect())),
            ("s".into(), Value::String(format!("s{i}"))),
            ("o".into(), if i.is_multiple_of(3) { Value::Null } else { Value::Int(i as i64 % 1000) }),
        ])
    };
    let mut inputs = Vec::new();
    let mut want = Vec::new();
    let mut page_sizes = Vec::new();
    for (k, compression) in [505u32, 101, 404].into_iter().enumerate() {
        let p = tmp(&format!("merge_in_{k}.root"));
        let opts = WriteOptions {
            compression: rntuple::write::Compression::from_settings(compression).unwrap(),
            max_unzipped_page_size: 4096,
            approx_zipped_cluster_size: 30_000,
            ..Default::default()
        };
        let mut w = Writer::create(&p, "Events", &schema, opts).expect("create");
        for i in 0..(3000 + 1000 * k as u64) {
            w.fill(&entry(1_000_000 * k as u64 + i)).expect("fill");
        }
        w.commit().expect("commit");
        want.extend(values(&p, "Events"));
        let r = RNTupleFile::open(&p).expect("open").reader("Events").expect("reader");
        for c in &r.descriptor().clusters {
            page_sizes
                .push(c.columns.iter().flatten().map(|c| (c.compression, c.pages.iter().map(|p| p.locator.size).collect::<Vec<_>>())).collect::<Vec<_>>());
        }
        inputs.push(p);
    }
    let out = tmp("merge_out.root");
    let stats = merge(&inputs, "Events", &out, WriteOptions { compression: rntuple::write::Compression::zlib(1), ..Default::default() }).expect("merge");
    assert_eq!(stats.entries, 3000 + 4000 + 5000);
    assert_eq!(values(&out, "Events"), want);
    let r = RNTupleFile::open(&out).expect("open").reader("Events").expect("reader");
    let got: Vec<_> = r
        .descriptor()
        .clusters
        .iter()
        .map(|c| c.columns.iter().flatten().map(|c| (c.compression, c.pages.iter().map(|p| p.locator.size).collect::<Vec<_>>())).collect::<Vec<_>>())
        .collect();
    assert_eq!(got, page_sizes, "pages keep their compression and stored size");
    assert_eq!(r.descriptor().clusters.len() as u64, stats.clusters);
}

#[test]
fn schema_mismatch_and_bad_inputs_are_refused() {
    let a = tmp("merge_mismatch_a.root");
    let b = tmp("merge_mismatch_b.root");
    for (p, t) in [(&a, "float"), (&b, "double")] {
        let mut w = Writer::create(p, "Events", &[("id", "std::uint64_t"), ("x", t)], WriteOptions::default()).expect("create");
        w.fill(&Value::Record(vec![("id".into(), Value::UInt(1)), ("x".into(), Value::F64(1.0))])).expect("fill");
        w.commit().expect("commit");
    }
    let out = tmp("merge_mismatch_out.root");
    let e = merge(&[&a, &b], "Events", &out, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("another schema") && e.contains("field 'x'") && e.contains("double"), "{e}");
    let e = merge(&[&a, &a], "NoSuch", &out, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("NoSuch"), "{e}");
    let e = merge(&[&a, &out], "Events", &out, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("also an input") || e.contains("merge_mismatch_out"), "{e}");
    // The same file under another name is refused before anything is truncated.
    let size = std::fs::metadata(&a).expect("a").len();
    let alias = a.parent().expect("dir").join(".").join(a.file_name().expect("name"));
    let e = merge(&[&a, &b], "Events", &alias, WriteOptions::default()).unwrap_err().to_string();
    assert!(e.contains("also an input"), "{e}");
    assert_eq!(std::fs::metadata(&a).expect("a").len(), size);
    let none: [&Path; 0] = [];
    assert!(merge(&none, "Events", &out, WriteOptions::default()).unwrap_err().to_string().contains("no input"));
}

/// Writes `rows` (JSON objects) with the schema `fields` into `path`.
fn write_rows(path: &Path, fields: &[(&str, &str)], rows: &[J], opts: WriteOptions) {
    let mut w = Writer::create(path, "Events", fields, opts).expect("create");
    for r in rows {
        w.fill(&Value::from_json(r)).expect("fill");
    }
    w.commit().expect("commit");
}

#[test]
fn filter_mode_keeps_the_first_inputs_fields_found_by_name() {
    use rntuple::ops::merge::{merge_with_options, MergeMode, MergeOptions};
    let a = tmp("filter_a.root");
    let b = tmp("filter_b.root");
    let a_rows: Vec<J> = (0..300).map(|i| serde_json::json!({"x": i, "p": [i as f32 * 0.5, format!("a{i}")], "v": vec![i; (i % 3) as usize]})).collect();
    let b_rows: Vec<J> = (0..500)
        .map(|i| serde_json::json!({"extra": format!("dropped {i}"), "v": vec![-i; (i % 4) as usize], "x": 1000 + i, "p": [-(i as f32), format!("b{i}")], "more": [1.5, 2.5]}))
        .collect();
    let small = WriteOptions { approx_zipped_cluster_size: 2000, compression: rntuple::write::Compression::lz4(4), ..Default::default() };
    write_rows(&a, &[("x", "std::int32_t"), ("p", "std::pair<float,std::string>"), ("v", "std::vector<std::int64_t>")], &a_rows, small.clone());
    write_rows(
        &b,
        &[
            ("extra", "std::string"),
            ("v", "std::vector<std::int64_t>"),
            ("x", "std::int32_t"),
            ("p", "std::pair<float,std::string>"),
            ("more", "std::vector<double>"),
        ],
        &b_rows,
        WriteOptions { compression: rntuple::write::Compression::zstd(5), ..small.clone() },
    );
    let out = tmp("filter_out.root");
    // Strict refuses the different schemas.
    let e = merge_with_options(&[&a, &b], "Events", &out, &MergeOptions { mode: MergeMode::Strict, ..Default::default() }, WriteOptions::default(), |_, _| {})
        .expect_err("strict")
        .to_string();
    assert!(e.contains("another schema"), "{e}");
    let stats =
        merge_with_options(&[&a, &b], "Events", &out, &MergeOptions { mode: MergeMode::Filter, ..Default::default() }, WriteOptions::default(), |_, _| {})
            .expect("filter merge");
    assert_eq!(stats.entries, 800);
    let f = RNTupleFile::open(&out).expect("open");
    let r = f.reader("Events").expect("reader");
    assert_eq!(r.fields().iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["x", "p", "v"]);
    let got = json(&r, 0, 800);
    let want: Vec<J> = a_rows.iter().cloned().chain(b_rows.iter().map(|row| serde_json::json!({"x": row["x"], "p": row["p"], "v": row["v"]}))).collect();
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_string(), w.to_string(), "entry {i}");
    }

    // A field the first input has and another lacks, or has with another type, is refused by name.
    let c = tmp("filter_c.root");
    write_rows(&c, &[("x", "std::int32_t"), ("v", "std::vector<std::int64_t>")], &[serde_json::json!({"x": 1, "v": []})], WriteOptions::default());
    let e = merge_with_options(&[&a, &c], "Events", &out, &MergeOptions { mode: MergeMode::Filter, ..Default::default() }, WriteOptions::default(), |_, _| {})
        .expect_err("missing p")
        .to_string();
    assert!(e.contains("no field 'p'") && e.contains("filter_c.root"), "{e}");
    let d = tmp("filter_d.root");
    write_rows(
        &d,
        &[("x", "std::int64_t"), ("p", "std::pair<float,std::string>"), ("v", "std::vector<std::int64_t>")],
        &[serde_json::json!({"x": 1, "p": [1.0, "s"], "v": []})],
        WriteOptions::default(),
    );
    let e = merge_with_options(&[&a, &d], "Events", &out, &MergeOptions { mode: MergeMode::Filter, ..Default::default() }, WriteOptions::default(), |_, _| {})
        .expect_err("x type")
        .to_string();
    assert!(e.contains("field 'x'") && e.contains("std::int64_t") && e.contains("std::int32_t"), "{e}");
    for p in [a, b, c, d, out] {
        std::fs::remove_file(p).ok();
    }
}
