//! Property test of the writer: random schemas (every supported field type, nesting up to depth
//! 4) and random values, written with each compression algorithm, with small pages and clusters
//! so that page and cluster boundaries fall everywhere, read back by our reader identical.

use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

use crate::common::Rng;

const SCALARS: [&str; 14] = [
    "bool",
    "char",
    "std::int8_t",
    "std::uint8_t",
    "std::int16_t",
    "std::uint16_t",
    "std::int32_t",
    "std::uint32_t",
    "std::int64_t",
    "std::uint64_t",
    "float",
    "double",
    "std::string",
    "Double32_t",
];

/// A random type name of nesting depth at most `depth`.
fn random_type(r: &mut Rng, depth: u32) -> String {
    if depth == 0 || r.below(3) == 0 {
        return SCALARS[r.below(SCALARS.len() as u64) as usize].to_string();
    }
    let inner = |r: &mut Rng| random_type(r, depth - 1);
    match r.below(12) {
        0 => format!("std::vector<{}>", inner(r)),
        1 => format!("ROOT::RVec<{}>", inner(r)),
        2 => format!("std::array<{},{}>", inner(r), 1 + r.below(3)),
        3 => format!("std::optional<{}>", inner(r)),
        4 => format!("std::unique_ptr<{}>", inner(r)),
        5 => format!("std::pair<{},{}>", inner(r), inner(r)),
        6 => format!("std::tuple<{},{},{}>", inner(r), inner(r), inner(r)),
        7 => format!("std::map<std::int32_t,{}>", inner(r)),
        8 => "std::set<std::int64_t>".to_string(),
        9 => "std::variant<std::int32_t,std::string,double>".to_string(),
        10 => format!("std::bitset<{}>", 1 + r.below(70)),
        _ => "std::atomic<std::uint16_t>".to_string(),
    }
}

fn split_args(s: &str) -> Vec<String> {
    let (mut out, mut depth, mut cur) = (Vec::new(), 0, String::new());
    for c in s.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

/// A random value of type `t`, in the JSON form of `rntuple dump` (what the reader gives back).
fn random_value(r: &mut Rng, t: &str) -> Value {
    let args = |t: &str| split_args(&t[t.find('<').unwrap() + 1..t.len() - 1]);
    match t {
        "bool" => Value::Bool(r.below(2) == 1),
        "char" | "std::int8_t" => Value::Int(r.below(256) as i64 - 128),
        "std::uint8_t" => Value::UInt(r.below(256)),
        "std::int16_t" => Value::Int(r.below(65536) as i64 - 32768),
        "std::uint16_t" => Value::UInt(r.below(65536)),
        "std::int32_t" => Value::Int(r.next() as i32 as i64),
        "std::uint32_t" => Value::UInt(r.next() as u32 as u64),
        "std::int64_t" => Value::Int(r.next() as i64),
        "std::uint64_t" => Value::UInt(r.next()),
        "float" => Value::F32(f32::from_bits(r.next() as u32 & 0x7F7F_FFFF) * if r.below(2) == 0 { 1.0 } else { -1.0 }),
        "double" => Value::F64((r.next() >> 11) as f64 / 7.0 - 1e15),
        "Double32_t" => Value::F32((r.below(1 << 20) as f32) / 64.0),
        "std::string" => Value::String((0..r.below(12)).map(|i| ['a', 'é', 'z', '€', '0'][((i + r.below(5)) % 5) as usize]).collect()),
        _ if t.starts_with("std::vector<") || t.starts_with("ROOT::RVec<") => {
            let a = args(t);
            Value::List((0..r.below(4)).map(|_| random_value(r, &a[0])).collect())
        }
        _ if t.starts_with("std::array<") => {
            let a = args(t);
            let n: u64 = a[1].parse().unwrap();
            Value::List((0..n).map(|_| random_value(r, &a[0])).collect())
        }
        _ if t.starts_with("std::optional<") || t.starts_with("std::unique_ptr<") => {
            if r.below(3) == 0 {
                Value::Null
            } else {
                random_value(r, &args(t)[0])
            }
        }
        _ if t.starts_with("std::pair<") || t.starts_with("std::tuple<") => Value::List(args(t).iter().map(|a| random_value(r, a)).collect()),
        _ if t.starts_with("std::map<") => {
            let a = args(t);
            // Keys unique and sorted, as a std::map holds them.
            let mut keys: Vec<i64> = (0..r.below(4)).map(|_| r.below(100) as i64).collect();
            keys.sort();
            keys.dedup();
            Value::List(keys.into_iter().map(|k| Value::List(vec![Value::Int(k), random_value(r, &a[1])])).collect())
        }
        _ if t.starts_with("std::set<") => {
            let mut keys: Vec<i64> = (0..r.below(5)).map(|_| r.next() as i64).collect();
            keys.sort();
            keys.dedup();
            Value::List(keys.into_iter().map(Value::Int).collect())
        }
        _ if t.starts_with("std::variant<") => match r.below(4) {
            0 => Value::Int(r.next() as i32 as i64),
            1 => Value::String("v".repeat(r.below(5) as usize)),
            2 => Value::F64(r.below(1000) as f64 / 8.0),
            _ => Value::Null,
        },
        _ if t.starts_with("std::bitset<") => {
            let n: u64 = args(t)[0].parse().unwrap();
            Value::List((0..n).map(|_| Value::Bool(r.below(2) == 1)).collect())
        }
        _ if t.starts_with("std::atomic<") => Value::UInt(r.below(65536)),
        _ => panic!("no generator for {t}"),
    }
}

#[test]
fn random_schemas_round_trip_with_every_algorithm() {
    let mut r = Rng(42);
    let dir = std::env::temp_dir().join(format!("rntuple-writer-prop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = 0;
    for round in 0..30 {
        let n_fields = 1 + r.below(6) as usize;
        let types: Vec<String> = (0..n_fields).map(|_| random_type(&mut r, 4)).collect();
        let names: Vec<String> = (0..n_fields).map(|i| format!("f{i}")).collect();
        let schema: Vec<(&str, &str)> = names.iter().map(|s| s.as_str()).zip(types.iter().map(|s| s.as_str())).collect();
        let n_entries = 1 + r.below(700);
        let entries: Vec<Value> =
            (0..n_entries).map(|_| Value::Record(names.iter().zip(&types).map(|(n, t)| (n.clone(), random_value(&mut r, t))).collect())).collect();
        for settings in [0u32, 101, 207, 404, 505] {
            let path = dir.join(format!("r{round}_{settings}.root"));
            let opts = WriteOptions {
                compression: rntuple::write::Compression::from_settings(settings).unwrap(),
                // Small pages and clusters, so that boundaries fall inside collections.
                max_unzipped_page_size: 64 + r.below(512),
                approx_zipped_cluster_size: 512 + r.below(4096),
                // Both ways of compressing: at page fill, and on threads at cluster commit.
                use_implicit_mt: round % 2 == 0,
                ..Default::default()
            };
            let mut w = Writer::create(&path, "T", &schema, opts).unwrap_or_else(|e| panic!("{schema:?}: {e}"));
            for e in &entries {
                w.fill(e).unwrap_or_else(|err| panic!("{schema:?}: fill {}: {err}", e.to_json()));
            }
            w.commit().unwrap();
            let f = RNTupleFile::open(&path).unwrap();
            let rd = f.reader("T").unwrap();
            assert_eq!(rd.num_entries(), n_entries);
            assert!(rd.skipped_fields().is_empty(), "{:?}", rd.skipped_fields());
            for (i, t) in types.iter().enumerate() {
                let fd = &rd.descriptor().fields[rd.descriptor().field_by_path(&names[i]).unwrap() as usize];
                let want = rntuple::logical::typename::parse(t).unwrap().name();
                assert_eq!(fd.type_name, want);
            }
            let back = rd.read_values(None, 0, n_entries).unwrap_or_else(|e| panic!("{schema:?}: {e}"));
            for (k, (a, b)) in entries.iter().zip(&back).enumerate() {
                assert_eq!(a.to_json(), b.to_json(), "schema {schema:?}, settings {settings}, entry {k}");
            }
            // Also a range starting inside the file.
            let mid = n_entries / 2;
            let part = rd.read_values(None, mid, n_entries).unwrap();
            assert_eq!(part.iter().map(|v| v.to_json()).collect::<Vec<_>>(), back[mid as usize..].iter().map(|v| v.to_json()).collect::<Vec<_>>());
            files += 1;
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(files, 150);
}

#[test]
fn mismatched_values_are_refused_with_the_field_name() {
    let path = std::env::temp_dir().join(format!("rntuple-writer-bad-{}.root", std::process::id()));
    let mut w = Writer::create(&path, "T", &[("n", "std::uint8_t"), ("v", "std::vector<float>")], WriteOptions::default()).unwrap();
    let e = w.fill(&Value::Record(vec![("n".into(), Value::Int(300)), ("v".into(), Value::List(vec![]))])).unwrap_err().to_string();
    assert!(e.contains("'n'"), "{e}");
    let e = w.fill(&Value::Record(vec![("n".into(), Value::Int(3)), ("v".into(), Value::List(vec![Value::String("x".into())]))])).unwrap_err().to_string();
    assert!(e.contains("'v._0'"), "{e}");
    let e = w.fill(&Value::Record(vec![("n".into(), Value::Int(3))])).unwrap_err().to_string();
    assert!(e.contains("lacks field 'v'"), "{e}");
    // Nothing partial was written: the one good entry reads back alone.
    w.fill(&Value::Record(vec![("n".into(), Value::Int(3)), ("v".into(), Value::List(vec![Value::F32(1.5)]))])).unwrap();
    w.commit().unwrap();
    let f = RNTupleFile::open(&path).unwrap();
    let r = f.reader("T").unwrap();
    let v = r.read_values(None, 0, r.num_entries()).unwrap();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0].to_json().to_string(), r#"{"n":3,"v":[1.5]}"#);
    std::fs::remove_file(&path).ok();
}

/// The columnar (Arrow) fill path writes exactly what the row-wise path writes: random schemas
/// (variants included, as Arrow unions) written row-wise, read back as Arrow batches, appended
/// to a second file with `append_batch`, read back identical.
#[test]
fn arrow_fill_path_equals_row_fill_path() {
    let mut r = Rng(7);
    let dir = std::env::temp_dir().join(format!("rntuple-writer-arrow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut done = 0;
    let mut with_variants = 0;
    while done < 40 {
        let n_fields = 1 + r.below(5) as usize;
        let types: Vec<String> = (0..n_fields).map(|_| random_type(&mut r, 3)).collect();
        with_variants += types.iter().any(|t| t.contains("variant")) as usize;
        let names: Vec<String> = (0..n_fields).map(|i| format!("f{i}")).collect();
        let schema: Vec<(&str, &str)> = names.iter().map(|s| s.as_str()).zip(types.iter().map(|s| s.as_str())).collect();
        let n_entries = 1 + r.below(3000);
        let settings = [0u32, 505, 404][done % 3];
        let opts = || WriteOptions {
            compression: rntuple::write::Compression::from_settings(settings).unwrap(),
            max_unzipped_page_size: 200,
            approx_zipped_cluster_size: 3000,
            ..Default::default()
        };
        let a = dir.join(format!("a{done}.root"));
        let mut w = Writer::create(&a, "T", &schema, opts()).unwrap();
        for _ in 0..n_entries {
            let e = Value::Record(names.iter().zip(&types).map(|(n, t)| (n.clone(), random_value(&mut r, t))).collect());
            w.fill(&e).unwrap();
        }
        w.commit().unwrap();
        let fa = RNTupleFile::open(&a).unwrap();
        let ra = fa.reader("T").unwrap();
        let b = dir.join(format!("b{done}.root"));
        let mut w = Writer::create(&b, "T", &schema, opts()).unwrap();
        // Uneven batches, so that batch, page and cluster boundaries all differ.
        let mut start = 0;
        while start < n_entries {
            let stop = (start + 1 + r.below(900)).min(n_entries);
            let batch = ra.read_batch(None, start, stop).unwrap();
            w.append_batch(&batch).unwrap_or_else(|e| panic!("{schema:?}: {e}"));
            start = stop;
        }
        w.commit().unwrap();
        let fb = RNTupleFile::open(&b).unwrap();
        let rb = fb.reader("T").unwrap();
        assert_eq!(rb.num_entries(), n_entries);
        let va: Vec<_> = ra.read_values(None, 0, n_entries).unwrap().iter().map(|v| v.to_json()).collect();
        let vb: Vec<_> = rb.read_values(None, 0, n_entries).unwrap_or_else(|e| panic!("{schema:?}: {e}")).iter().map(|v| v.to_json()).collect();
        assert_eq!(va, vb, "{schema:?}");
        done += 1;
    }
    assert!(with_variants >= 5, "only {with_variants} schemas with variants");
    std::fs::remove_dir_all(&dir).ok();
}

/// I/O failures come back as errors that say what was being written: a full disk (`/dev/full`)
/// and a target directory that does not exist.
#[test]
fn io_errors_are_reported() {
    if std::path::Path::new("/dev/full").exists() {
        let e = Writer::create("/dev/full", "T", &[("x", "float")], WriteOptions::default()).err().expect("writing to /dev/full must fail");
        let msg = e.to_string();
        assert!(msg.contains("/dev/full") && msg.contains("writing"), "{msg}");
    }
    let e = Writer::create("/nonexistent-dir-rntuple/x.root", "T", &[("x", "float")], WriteOptions::default()).err().expect("must fail");
    assert!(e.to_string().contains("creating /nonexistent-dir-rntuple/x.root"), "{e}");
    // A bad schema is refused before anything is written.
    let p = std::env::temp_dir().join(format!("rntuple-bad-schema-{}.root", std::process::id()));
    let e = Writer::create(&p, "T", &[("x", "MyUnknownClass")], WriteOptions::default()).err().expect("must fail");
    assert!(e.to_string().contains("'x'") && e.to_string().contains("MyUnknownClass"), "{e}");
    let e = Writer::create(&p, "T", &[("a.b", "float")], WriteOptions::default()).err().expect("must fail");
    assert!(e.to_string().contains("a.b"), "{e}");
}

/// Late model extension: fields added after entries were written (at a cluster boundary and in
/// the middle of a cluster) read as default values for the earlier entries, and as written after.
#[test]
fn late_model_extension_reads_defaults_before() {
    let added: [(&str, &str, serde_json::Value); 9] = [
        ("x", "float", serde_json::json!(0.0)),
        ("s", "std::string", serde_json::json!("")),
        ("v", "std::vector<std::int32_t>", serde_json::json!([])),
        ("arr", "std::array<std::int16_t,3>", serde_json::json!([0, 0, 0])),
        ("bits", "std::bitset<5>", serde_json::json!([false, false, false, false, false])),
        ("opt", "std::optional<double>", serde_json::json!(null)),
        ("var", "std::variant<std::int32_t,std::string>", serde_json::json!(null)),
        ("tup", "std::pair<std::uint8_t,std::string>", serde_json::json!([0, ""])),
        ("m", "std::map<std::int32_t,float>", serde_json::json!([])),
    ];
    let later: [serde_json::Value; 9] = [
        serde_json::json!(1.5),
        serde_json::json!("late"),
        serde_json::json!([1, 2]),
        serde_json::json!([1, 2, 3]),
        serde_json::json!([true, false, true, false, true]),
        serde_json::json!(2.5),
        serde_json::json!("alt"),
        serde_json::json!([7, "t"]),
        serde_json::json!([[1, 0.5]]),
    ];
    // The files stay in target/tmp (late_field_{boundary,mid}_<settings>.root, with the expected
    // entries beside them as .expected.json) for tests/cross/test_late_field.py, where ROOT 6.40 and
    // uproot read them entry by entry.
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for (mid_cluster, settings) in [(false, 505u32), (false, 0), (true, 0), (true, 505)] {
        let path = dir.join(format!("late_field_{}_{settings}.root", if mid_cluster { "mid" } else { "boundary" }));
        let opts = WriteOptions {
            compression: rntuple::write::Compression::from_settings(settings).unwrap(),
            approx_zipped_cluster_size: 2000,
            max_unzipped_page_size: 256,
            ..Default::default()
        };
        let mut w = Writer::create(&path, "T", &[("id", "std::uint64_t")], opts).unwrap();
        let first = 1000u64;
        for i in 0..first {
            w.fill(&Value::Record(vec![("id".into(), Value::UInt(i))])).unwrap();
        }
        if !mid_cluster {
            w.commit_cluster().unwrap();
        }
        for (n, t, _) in &added {
            w.add_field(n, t).unwrap();
        }
        for i in first..first + 700 {
            let mut rec = vec![("id".to_string(), Value::UInt(i))];
            for ((n, _, _), v) in added.iter().zip(&later) {
                rec.push((n.to_string(), Value::from_json(v)));
            }
            w.fill(&Value::Record(rec)).unwrap();
        }
        w.commit().unwrap();
        let f = RNTupleFile::open(&path).unwrap();
        let r = f.reader("T").unwrap();
        assert_eq!(r.num_entries(), first + 700);
        assert!(r.descriptor().fields.iter().filter(|f| f.parent.is_none()).skip(1).all(|f| f.from_extension));
        if !mid_cluster {
            // The late fields start exactly at the second cluster.
            let c = &r.descriptor().clusters;
            assert!(c.len() >= 2 && c.iter().any(|c| c.first_entry == first), "no cluster starts at entry {first}");
        }
        let vals = r.read_values(None, 0, first + 700).unwrap();
        let mut expected = Vec::new();
        for (i, v) in vals.iter().enumerate() {
            let j = v.to_json();
            assert_eq!(j["id"], serde_json::json!(i), "entry {i}");
            let mut want_entry = serde_json::Map::new();
            want_entry.insert("id".into(), serde_json::json!(i));
            for (k, (n, _, default)) in added.iter().enumerate() {
                let want = if (i as u64) < first { default } else { &later[k] };
                assert_eq!(&j[*n], want, "mid_cluster={mid_cluster} settings={settings} entry {i} field {n}");
                want_entry.insert(n.to_string(), want.clone());
            }
            expected.push(serde_json::Value::Object(want_entry));
        }
        std::fs::write(path.with_extension("expected.json"), serde_json::to_string(&expected).unwrap()).unwrap();
    }
}

/// Untyped record members are matched by name, in any order, in both fill paths (values and Arrow
/// structs); a record whose member names are none of the field's is taken by position (a pair
/// given as `first`/`second`); a partial match is an error naming the missing and unknown members.
/// An untyped collection of records also takes optional records (0 or 1 item per entry).
#[test]
fn untyped_record_members_are_matched_by_name() {
    use arrow_array::{Array, ArrayRef, Float32Array, Int32Array, RecordBatch, StructArray};
    use arrow_schema::{DataType, Field};
    use rntuple::logical::typename::{parse, TypeExpr};
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("rntuple-writer-byname-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = TypeExpr::Record(vec![("pt".into(), parse("float").unwrap()), ("q".into(), parse("std::int32_t").unwrap())]);
    let schema = vec![
        ("mu".to_string(), rec.clone()),
        ("opt".to_string(), TypeExpr::Collection("std::vector".into(), Box::new(rec))),
        ("pair".to_string(), parse("std::pair<std::int32_t,float>").unwrap()),
    ];
    let member = |pt: f32, q: i64, swapped: bool| {
        let (a, b) = (("pt".to_string(), Value::F32(pt)), ("q".to_string(), Value::Int(q)));
        Value::Record(if swapped { vec![b, a] } else { vec![a, b] })
    };
    let p = dir.join("values.root");
    let mut w = Writer::create_with_types(&p, "T", &schema, WriteOptions::default()).unwrap();
    let pair = Value::Record(vec![("first".into(), Value::Int(7)), ("second".into(), Value::F32(0.5))]);
    w.fill(&Value::Record(vec![("mu".into(), member(1.5, -1, true)), ("opt".into(), member(2.5, 1, true)), ("pair".into(), pair.clone())])).unwrap();
    w.fill(&Value::Record(vec![("mu".into(), member(3.5, 2, false)), ("opt".into(), Value::Null), ("pair".into(), pair)])).unwrap();
    let bad = Value::Record(vec![("pt".into(), Value::F32(1.0)), ("charge".into(), Value::Int(1))]);
    let e = w.fill(&Value::Record(vec![("mu".into(), bad), ("opt".into(), Value::Null), ("pair".into(), Value::Null)])).unwrap_err().to_string();
    assert!(e.contains("'mu'") && e.contains("missing: q; unknown: charge"), "{e}");
    w.commit().unwrap();
    let f = RNTupleFile::open(&p).unwrap();
    let got: Vec<String> = f.reader("T").unwrap().read_values(None, 0, 2).unwrap().iter().map(|v| v.to_json().to_string()).collect();
    assert_eq!(got, [r#"{"mu":{"pt":1.5,"q":-1},"opt":[{"pt":2.5,"q":1}],"pair":[7,0.5]}"#, r#"{"mu":{"pt":3.5,"q":2},"opt":[],"pair":[7,0.5]}"#]);
    // Arrow: structs whose members come in the other order; an optional struct for the collection.
    let swapped = |q: Vec<i32>, pt: Vec<f32>, nulls: Option<Vec<bool>>| -> ArrayRef {
        let fields = vec![Field::new("q", DataType::Int32, false), Field::new("pt", DataType::Float32, false)];
        let cols: Vec<ArrayRef> = vec![Arc::new(Int32Array::from(q)), Arc::new(Float32Array::from(pt))];
        Arc::new(StructArray::try_new(fields.into(), cols, nulls.map(|n| n.into())).unwrap())
    };
    let mu = swapped(vec![-1, 2], vec![1.5, 3.5], None);
    let opt = swapped(vec![1, 0], vec![2.5, 0.0], Some(vec![true, false]));
    let pair: ArrayRef = Arc::new(StructArray::from(vec![
        (Arc::new(Field::new("_0", DataType::Int32, false)), Arc::new(Int32Array::from(vec![7, 7])) as ArrayRef),
        (Arc::new(Field::new("_1", DataType::Float32, false)), Arc::new(Float32Array::from(vec![0.5, 0.5])) as ArrayRef),
    ]));
    assert_eq!(opt.null_count(), 1);
    let batch = RecordBatch::try_from_iter(vec![("mu", mu), ("opt", opt), ("pair", pair)]).unwrap();
    let p2 = dir.join("arrow.root");
    let mut w = Writer::create_with_types(&p2, "T", &schema, WriteOptions::default()).unwrap();
    w.append_batch(&batch).unwrap();
    w.commit().unwrap();
    let f = RNTupleFile::open(&p2).unwrap();
    let got2: Vec<String> = f.reader("T").unwrap().read_values(None, 0, 2).unwrap().iter().map(|v| v.to_json().to_string()).collect();
    assert_eq!(got2, got);
    std::fs::remove_dir_all(&dir).ok();
}

/// Uncompressed, the sequential writer writes each page as it fills (pages of the columns
/// interleave in the file); with `stream_uncompressed_pages` off it keeps a cluster's pages and
/// writes them column by column. Both read back the same values; at 505 the option changes nothing.
#[test]
fn uncompressed_pages_are_streamed_unless_asked_to_buffer() {
    let dir = std::env::temp_dir().join(format!("rntuple-writer-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = [("id", "std::uint64_t"), ("v", "std::vector<float>")];
    // For each file: whether the first page of column 0 lies before the last page of the last
    // column (columns interleaved), and the values.
    let mut seen = Vec::new();
    for (compression, stream) in [(0u32, true), (0, false), (505, true)] {
        let p = dir.join(format!("s{compression}_{stream}.root"));
        let opts = WriteOptions {
            compression: rntuple::write::Compression::from_settings(compression).unwrap(),
            stream_uncompressed_pages: stream,
            max_unzipped_page_size: 4096,
            ..Default::default()
        };
        let mut w = Writer::create(&p, "T", &schema, opts).unwrap();
        for i in 0..20_000u64 {
            let v = Value::List((0..i % 4).map(|k| Value::F32(k as f32 + i as f32)).collect());
            w.fill(&Value::Record(vec![("id".into(), Value::UInt(i)), ("v".into(), v)])).unwrap();
        }
        w.commit().unwrap();
        let f = RNTupleFile::open(&p).unwrap();
        let r = f.reader("T").unwrap();
        let d = r.descriptor();
        assert_eq!(d.clusters.len(), 1);
        let cols = &d.clusters[0].columns;
        let pages = |c: usize| &cols[c].as_ref().unwrap().pages;
        let (first0, last_col) = (pages(0)[0].locator.offset, pages(cols.len() - 1).last().unwrap().locator.offset);
        let col0_end = pages(0).last().unwrap().locator.offset;
        let first_last_col = pages(cols.len() - 1)[0].locator.offset;
        assert!(pages(0).len() > 3, "several pages per column");
        assert!(first0 < last_col);
        let interleaved = first_last_col < col0_end;
        let values: Vec<String> = r.read_values(None, 0, r.num_entries()).unwrap().iter().map(|v| v.to_json().to_string()).collect();
        assert_eq!(values.len(), 20_000);
        assert_eq!(values[5], r#"{"id":5,"v":[5.0]}"#);
        seen.push((interleaved, values));
    }
    assert!(seen[0].0, "compression 0 streamed: the columns' pages interleave");
    assert!(!seen[1].0, "compression 0 buffered: column by column");
    assert!(!seen[2].0, "505: buffered column by column");
    assert_eq!(seen[0].1, seen[1].1);
    assert_eq!(seen[0].1, seen[2].1);
    std::fs::remove_dir_all(&dir).ok();
}

/// Arrow unions for a variant: a sparse union and a dense one with a null inside a member write
/// the same values (nulls valueless); a union whose members do not match the alternatives, or
/// whose offsets point beyond a member, is refused before anything is written.
#[test]
fn variants_from_arrow_unions() {
    use arrow_array::{ArrayRef, Float64Array, Int32Array, RecordBatch, StringArray, UnionArray};
    use arrow_buffer::ScalarBuffer;
    use arrow_schema::{DataType, Field, UnionFields};
    use std::sync::Arc;
    let dir = std::env::temp_dir().join(format!("rntuple-writer-unions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fields = UnionFields::new(vec![0, 1], vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true)]);
    let batch = |u: UnionArray| RecordBatch::try_from_iter(vec![("v", Arc::new(u) as ArrayRef)]).unwrap();
    // entries: 7, "x", valueless, 9, "yz"
    let dense = UnionArray::try_new(
        fields.clone(),
        ScalarBuffer::from(vec![0i8, 1, 0, 0, 1]),
        Some(ScalarBuffer::from(vec![0i32, 0, 1, 2, 1])),
        vec![Arc::new(Int32Array::from(vec![Some(7), None, Some(9)])) as ArrayRef, Arc::new(StringArray::from(vec!["x", "yz"]))],
    )
    .unwrap();
    let sparse = UnionArray::try_new(
        fields.clone(),
        ScalarBuffer::from(vec![0i8, 1, 0, 0, 1]),
        None,
        vec![
            Arc::new(Int32Array::from(vec![Some(7), None, None, Some(9), None])) as ArrayRef,
            Arc::new(StringArray::from(vec![None, Some("x"), None, None, Some("yz")])),
        ],
    )
    .unwrap();
    for (k, u) in [dense, sparse].into_iter().enumerate() {
        let p = dir.join(format!("u{k}.root"));
        let mut w = Writer::create(&p, "T", &[("v", "std::variant<std::int32_t,std::string>")], WriteOptions::default()).unwrap();
        w.append_batch(&batch(u)).unwrap();
        w.commit().unwrap();
        let r = RNTupleFile::open(&p).unwrap().reader("T").unwrap();
        let got: Vec<String> = r.read_values(None, 0, 5).unwrap().iter().map(|v| v.to_json()["v"].to_string()).collect();
        assert_eq!(got, ["7", "\"x\"", "null", "9", "\"yz\""], "union {k}");
    }
    let p = dir.join("bad.root");
    let mut w = Writer::create(&p, "T", &[("v", "std::variant<std::int32_t,std::string,double>")], WriteOptions::default()).unwrap();
    let two = UnionArray::try_new(
        fields.clone(),
        ScalarBuffer::from(vec![0i8]),
        Some(ScalarBuffer::from(vec![0i32])),
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef, Arc::new(StringArray::from(Vec::<&str>::new()))],
    )
    .unwrap();
    let e = w.append_batch(&batch(two)).unwrap_err().to_string();
    assert!(e.contains("a union of 2 members") && e.contains("3 alternatives"), "{e}");
    let fields3 = UnionFields::new(
        vec![0, 1, 2],
        vec![Field::new("a", DataType::Int32, true), Field::new("b", DataType::Utf8, true), Field::new("c", DataType::Float64, true)],
    );
    let wrong_type = UnionArray::try_new(
        fields3,
        ScalarBuffer::from(vec![2i8]),
        Some(ScalarBuffer::from(vec![0i32])),
        vec![Arc::new(Int32Array::from(vec![1])) as ArrayRef, Arc::new(Float64Array::from(vec![1.0])), Arc::new(Float64Array::from(vec![2.0]))],
    )
    .unwrap();
    let e = w.append_batch(&batch(wrong_type)).unwrap_err().to_string();
    assert!(e.contains("v._1") && e.contains("utf8"), "{e}");
    assert_eq!(w.num_entries(), 0, "refused batches write nothing");
    w.commit().unwrap();
    std::fs::remove_dir_all(&dir).ok();
}
