//! Reads every RNTuple of the shared test files and compares all values with the expected
//! values that uproot produced (`testdata/expected/*.json`).

use crate::common;

use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{Array, ArrayRef};
use rntuple::arrow::datatypes::*;
use rntuple::RNTupleFile;
use serde_json::Value as J;

/// Brings a JSON value into a comparable normal form: records flattened over base classes
/// (`:_k`, which uproot merges into the derived record), keys stripped of uproot's
/// `Class::` disambiguation prefix, and records turned into sorted (key, value) lists.
fn norm(v: &J) -> J {
    match v {
        J::Object(m) => {
            let mut pairs: Vec<(String, J)> = Vec::new();
            flatten(m, &mut pairs);
            pairs.sort_by_key(|a| (a.0.clone(), a.1.to_string()));
            J::Array(pairs.into_iter().map(|(k, v)| J::Array(vec![J::String(k), v])).collect())
        }
        J::Array(a) => J::Array(a.iter().map(norm).collect()),
        J::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => J::from(i),
            (_, Some(u)) => J::from(u),
            _ => J::from(n.as_f64().unwrap_or(f64::NAN)),
        },
        other => other.clone(),
    }
}

fn flatten(m: &serde_json::Map<String, J>, out: &mut Vec<(String, J)>) {
    for (k, v) in m {
        if k.starts_with(":_")
            && let J::Object(inner) = v
        {
            flatten(inner, out);
            continue;
        }
        let key = k.rsplit("::").next().unwrap_or(k).to_string();
        out.push((key, norm(v)));
    }
}

/// Count and sum of every numeric leaf value in an array (nulls skipped), like the
/// `leaf_sums` of the expected files; `ints` also sums the integer and boolean leaves exactly
/// (it becomes `None` at the first floating-point leaf).
fn leaf_sums(a: &ArrayRef, n: &mut u64, s: &mut f64, ints: &mut Option<i128>) {
    macro_rules! prim {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            for i in 0..p.len() {
                if p.is_valid(i) {
                    *n += 1;
                    *s += p.value(i) as f64;
                    if let Some(t) = ints.as_mut() {
                        *t += p.value(i) as i128;
                    }
                }
            }
        }};
    }
    match a.data_type() {
        DataType::Int8 => prim!(Int8Type),
        DataType::UInt8 => prim!(UInt8Type),
        DataType::Int16 => prim!(Int16Type),
        DataType::UInt16 => prim!(UInt16Type),
        DataType::Int32 => prim!(Int32Type),
        DataType::UInt32 => prim!(UInt32Type),
        DataType::Int64 => prim!(Int64Type),
        DataType::UInt64 => prim!(UInt64Type),
        DataType::Float32 => {
            *ints = None;
            let p = a.as_primitive::<Float32Type>();
            for i in 0..p.len() {
                if p.is_valid(i) {
                    *n += 1;
                    // NaN values count but do not add (the reference used a NaN-skipping sum).
                    let x = p.value(i) as f64;
                    if !x.is_nan() {
                        *s += x;
                    }
                }
            }
        }
        DataType::Float64 => {
            *ints = None;
            let p = a.as_primitive::<Float64Type>();
            for i in 0..p.len() {
                if p.is_valid(i) {
                    *n += 1;
                    let x = p.value(i);
                    if !x.is_nan() {
                        *s += x;
                    }
                }
            }
        }
        DataType::Boolean => {
            let b = a.as_boolean();
            for i in 0..b.len() {
                if b.is_valid(i) {
                    *n += 1;
                    *s += b.value(i) as u8 as f64;
                    if let Some(t) = ints.as_mut() {
                        *t += b.value(i) as i128;
                    }
                }
            }
        }
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            let o = l.value_offsets();
            let child = l.values().slice(o[0] as usize, (o[o.len() - 1] - o[0]) as usize);
            leaf_sums(&child, n, s, ints);
        }
        DataType::FixedSizeList(_, _) => leaf_sums(a.as_fixed_size_list().values(), n, s, ints),
        DataType::Struct(_) => {
            for c in a.as_struct().columns() {
                leaf_sums(c, n, s, ints);
            }
        }
        DataType::Map(_, _) => {
            let m = a.as_map();
            let e: ArrayRef = std::sync::Arc::new(m.entries().clone());
            leaf_sums(&e, n, s, ints);
        }
        DataType::Union(_, _) => {
            let u = a.as_union();
            for (t, _) in u.type_ids().iter().zip(0..).collect::<std::collections::BTreeMap<_, _>>() {
                leaf_sums(u.child(*t), n, s, ints);
            }
        }
        _ => {}
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn every_expected_file_reads_equal() {
    let Some(td) = common::testdata() else { return };
    let mut jsons: Vec<_> = std::fs::read_dir(td.join("expected")).unwrap().map(|e| e.unwrap().path()).collect();
    jsons.sort();
    assert!(jsons.len() >= 29, "expected at least 29 reference files, found {}", jsons.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for jp in &jsons {
        let exp: J = serde_json::from_str(&std::fs::read_to_string(jp).unwrap()).unwrap();
        let file = td.join("rntuple").join(exp["file"].as_str().unwrap());
        let ntuple = exp["ntuple"].as_str().unwrap();
        let label = format!("{}:{ntuple}", file.file_name().unwrap().to_string_lossy());
        let f = match RNTupleFile::open(&file) {
            Ok(f) => f,
            Err(e) => {
                failures.push(format!("{label}: open: {e}"));
                continue;
            }
        };
        let r = match f.reader(ntuple) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{label}: reader: {e}"));
                continue;
            }
        };
        let n = exp["num_entries"].as_u64().unwrap();
        if r.num_entries() != n {
            failures.push(format!("{label}: {} entries, expected {n}", r.num_entries()));
            continue;
        }
        let a = r.anchor();
        let av: Vec<u64> = exp["anchor"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        assert_eq!(vec![a.epoch as u64, a.major as u64, a.minor as u64, a.patch as u64], av, "{label}: anchor version");
        if let Some(values) = exp.get("values") {
            let ours = match r.read_values(None, 0, n) {
                Ok(v) => v,
                Err(e) => {
                    failures.push(format!("{label}: read: {e}"));
                    continue;
                }
            };
            let values = values.as_array().unwrap();
            for (i, (o, e)) in ours.iter().zip(values).enumerate() {
                let (no, ne) = (norm(&o.to_json()), norm(e));
                if no != ne {
                    failures.push(format!("{label}: entry {i} differs:\n  ours:     {}\n  expected: {}", o.to_json(), e));
                    break;
                }
            }
        } else {
            let sums = exp["leaf_sums"].as_object().unwrap();
            let batch = match r.read_batch(None, 0, n) {
                Ok(b) => b,
                Err(e) => {
                    failures.push(format!("{label}: read: {e}"));
                    continue;
                }
            };
            for (name, want) in sums {
                let Some(col) = batch.column_by_name(name) else {
                    failures.push(format!("{label}: field '{name}' missing"));
                    continue;
                };
                let (mut cnt, mut sum, mut ints) = (0u64, 0f64, Some(0i128));
                leaf_sums(col, &mut cnt, &mut sum, &mut ints);
                let (wn, ws) = (want["n"].as_u64().unwrap(), want["sum"].as_f64().unwrap());
                // Integer leaves: the exact sum, equal to the reference's where the reference (a
                // float64 sum of integers) is exact, i.e. below 2^53. Floating-point leaves: the
                // order of the additions differs, so within 1e-9 (every value of these files is
                // also compared entry by entry with uproot in tests/cross/test_testdata_uproot.py).
                let exact = ints.filter(|t| t.unsigned_abs() < 1u128 << 53);
                if cnt != wn || exact.is_some_and(|t| t as f64 != ws) || (exact.is_none() && !close(sum, ws)) {
                    failures.push(format!("{label}: field '{name}': n={cnt} sum={sum}, expected n={wn} sum={ws}"));
                }
            }
        }
        checked += 1;
    }
    assert!(failures.is_empty(), "{} of {} RNTuples differ:\n{}", failures.len(), jsons.len(), failures.join("\n"));
    assert_eq!(checked, jsons.len());
}

#[test]
fn every_rntuple_of_every_file_opens() {
    for sub in ["rntuple", "v1-older"] {
        for p in common::root_files(sub) {
            let f = RNTupleFile::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(!f.names().is_empty(), "{}: no RNTuple found", p.display());
            for n in f.names() {
                let r = f.reader(&n).unwrap_or_else(|e| panic!("{}:{n}: {e}", p.display()));
                assert!(r.skipped_fields().is_empty(), "{}:{n}: skipped {:?}", p.display(), r.skipped_fields());
                let stop = r.num_entries().min(5000);
                r.read_values(None, 0, stop).unwrap_or_else(|e| panic!("{}:{n}: {e}", p.display()));
            }
        }
    }
}

#[test]
fn legacy_files_are_refused_with_the_version() {
    let files = common::root_files("legacy");
    if common::testdata().is_some() {
        assert!(files.len() >= 10);
    }
    for p in files {
        let f = RNTupleFile::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let names = f.names();
        assert!(!names.is_empty(), "{}: anchor not found", p.display());
        for n in names {
            let msg = match f.reader(&n) {
                Ok(_) => panic!("{}: pre-1.0 RNTuple was accepted", p.display()),
                Err(e) => e.to_string(),
            };
            assert!(msg.contains("pre-1.0") && msg.contains("epoch 0") && msg.contains("6.32"), "{}: message: {msg}", p.display());
            assert!(msg.contains("format version"), "{msg}");
        }
    }
}

/// Multi-threaded page decoding gives exactly the single-threaded result, also for ranges
/// that start and end inside pages (the 100-million-entry file has many pages per cluster).
#[test]
fn parallel_decoding_equals_serial() {
    let Some(td) = common::testdata() else { return };
    let path = td.join("rntuple/test_int_multicluster_rntuple_v1-0-0-0.root");
    let f = RNTupleFile::open(&path).unwrap();
    let name = f.names()[0].clone();
    let mut serial = f.reader(&name).unwrap();
    serial.set_threads(1);
    let mut parallel = f.reader(&name).unwrap();
    parallel.set_threads(4);
    let n = serial.num_entries();
    for (a, b) in [(0, n.min(3_000_000)), (12_345, 4_567_891), (n - 2_500_001, n)] {
        let x = serial.read_batch(None, a, b).unwrap();
        let y = parallel.read_batch(None, a, b).unwrap();
        assert_eq!(x.num_rows() as u64, b - a);
        assert_eq!(x, y, "range {a}:{b}");
    }
}

/// Our StreamerInfo record for ROOT::RNTuple equals, byte for byte, the one ROOT 6.38 wrote
/// into a file of the shared test data (same key header length).
#[test]
fn streamer_info_record_matches_root() {
    let Some(td) = common::testdata() else { return };
    let path = td.join("rntuple/ntpl001_staff_rntuple_v1-0-1-0.root");
    let bytes = std::fs::read(&path).unwrap();
    let seek_info = u32::from_be_bytes(bytes[37..41].try_into().unwrap()) as u64;
    let src: std::sync::Arc<dyn rntuple::storage::local::source::ReadAt> =
        std::sync::Arc::new(rntuple::storage::local::source::MemSource(std::sync::Arc::new(bytes)));
    let f = rntuple::storage::container::tfile::RootFile::open(src).unwrap();
    let (key, payload) = f.read_key(seek_info, "StreamerInfo").unwrap();
    assert_eq!(key.class_name, "TList");
    assert_eq!(payload, rntuple::storage::container::streamer_info::rntuple_streamer_info(key.key_len as usize));
}
