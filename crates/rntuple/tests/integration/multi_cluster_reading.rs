//! Reads across many clusters, on 1-3 decoding threads, of scalars, collections of scalars, late
//! (deferred) fields and nested fields in one batch: they give what was written, and the same
//! batch as reading each cluster on its own and concatenating.

use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

const TYPES: &[(&str, &str)] = &[
    ("i8", "std::int8_t"),
    ("u16", "std::uint16_t"),
    ("i32", "std::int32_t"),
    ("u64", "std::uint64_t"),
    ("f32", "float"),
    ("f64", "double"),
    ("flag", "bool"),
    ("pts", "std::vector<float>"),
    ("ids", "std::vector<std::int64_t>"),
    ("bits", "std::vector<bool>"),
    ("rv", "ROOT::RVec<double>"),
    // Not flat: read field by field in the same batch.
    ("nested", "std::vector<std::vector<float>>"),
    ("name", "std::string"),
];

/// The JSON of entry `i` as written (before the late fields exist).
fn entry(i: i64) -> Vec<(String, serde_json::Value)> {
    use serde_json::json;
    let n = (i % 5) as usize;
    vec![
        ("i8".into(), json!((i % 200 - 100) as i8)),
        ("u16".into(), json!((i * 7 % 65536) as u16)),
        ("i32".into(), json!(i as i32 * -3)),
        ("u64".into(), json!(i as u64 * 1_000_003)),
        ("f32".into(), json!(i as f32 * 0.5)),
        ("f64".into(), json!(i as f64 * 0.25)),
        ("flag".into(), json!(i % 3 == 0)),
        ("pts".into(), json!((0..n).map(|k| (i as f32) + k as f32 * 0.5).collect::<Vec<f32>>())),
        ("ids".into(), json!((0..(i % 3) as usize).map(|k| i * 10 + k as i64).collect::<Vec<i64>>())),
        ("bits".into(), json!((0..n).map(|k| (i as usize + k).is_multiple_of(2)).collect::<Vec<bool>>())),
        ("rv".into(), json!((0..(n % 2)).map(|k| i as f64 + k as f64).collect::<Vec<f64>>())),
        ("nested".into(), json!((0..(i % 3) as usize).map(|k| vec![k as f32; k]).collect::<Vec<Vec<f32>>>())),
        ("name".into(), json!(format!("e{i}"))),
    ]
}

fn json_row(fields: &[(String, serde_json::Value)]) -> String {
    let m: serde_json::Map<String, serde_json::Value> = fields.iter().cloned().collect();
    serde_json::Value::Object(m).to_string()
}

#[test]
fn reads_across_many_clusters_equal_what_was_written() {
    let path = std::env::temp_dir().join(format!("rntuple-multi-cluster-reading-{}.root", std::process::id()));
    let mut w = Writer::create(&path, "T", TYPES, WriteOptions::default()).unwrap();
    let mut expected: Vec<Vec<(String, serde_json::Value)>> = Vec::new();
    let (total, late_from) = (1000i64, 430i64);
    for i in 0..total {
        if i == late_from {
            // Late (deferred) fields: zero / empty before they were added.
            w.add_field("late_u32", "std::uint32_t").unwrap();
            w.add_field("late_pts", "std::vector<float>").unwrap();
        }
        let mut e = entry(i);
        if i >= late_from {
            e.push(("late_u32".into(), serde_json::json!(i as u32 + 1)));
            e.push(("late_pts".into(), serde_json::json!(vec![i as f32; (i % 2) as usize])));
        }
        let v: Vec<(String, Value)> = e.iter().map(|(k, j)| (k.clone(), Value::from_json(j))).collect();
        w.fill(&Value::Record(v)).unwrap();
        if i < late_from {
            e.push(("late_u32".into(), serde_json::json!(0)));
            e.push(("late_pts".into(), serde_json::json!([])));
        }
        expected.push(e);
        if i % 97 == 96 {
            w.commit_cluster().unwrap();
        }
    }
    w.commit().unwrap();
    let f = RNTupleFile::open(&path).unwrap();
    let mut r = f.reader("T").unwrap();
    assert!(r.descriptor().clusters.len() >= 10, "{} clusters", r.descriptor().clusters.len());
    for threads in [1, 2, 3] {
        r.set_threads(threads);
        // Whole file, ranges starting and ending inside clusters, and one crossing a single boundary.
        for (a, b) in [(0u64, total as u64), (5, 993), (90, 100), (400, 700)] {
            let got: Vec<String> = r.read_values(None, a, b).unwrap().iter().map(|v| v.to_json().to_string()).collect();
            let want: Vec<String> = expected[a as usize..b as usize].iter().map(|e| json_row(e)).collect();
            assert_eq!(got.len(), want.len());
            for (k, (g, x)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, x, "threads {threads}, entries {a}..{b}, entry {}", a as usize + k);
            }
            // The same batch as the concatenation of the per-cluster batches.
            let batch = r.read_batch(None, a, b).unwrap();
            let mut parts = Vec::new();
            for c in &r.descriptor().clusters {
                let (s, e) = (c.first_entry.max(a), (c.first_entry + c.n_entries).min(b));
                if s < e {
                    parts.push(r.read_batch(None, s, e).unwrap());
                }
            }
            let joined = arrow_select::concat::concat_batches(&batch.schema(), &parts).unwrap();
            assert_eq!(batch, joined, "threads {threads}, entries {a}..{b}");
        }
        // A subset of fields, in another order than the schema's.
        let got = r.read_values(Some(&["pts", "u64", "name", "flag"]), 95, 300).unwrap();
        assert_eq!(got.len(), 205);
        assert_eq!(got[3].to_json()["u64"], serde_json::json!(98u64 * 1_000_003));
        assert_eq!(got[3].to_json()["pts"], expected[98][7].1);
    }
    let _ = std::fs::remove_file(&path);
}
