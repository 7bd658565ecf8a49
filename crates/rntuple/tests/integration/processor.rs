//! Chains and joins (`rntuple::dataset`): a chain of three files of several clusters read across
//! their boundaries and split into cluster-aligned parts; inputs with other fields or types refused
//! naming file and field; a join on (run, event) with a shuffled friend of several clusters that
//! misses entries (left and inner, a jagged friend field), an aligned join with a shorter friend;
//! the bad inputs of a join (index field missing, not an integer, duplicate keys). (ROOT 6.40's
//! `RNTupleProcessor` reads the same values: tests/cross/test_processor_root.py.)

use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{Array, RecordBatch};
use rntuple::arrow::datatypes::{Float64Type, Int32Type, UInt64Type};
use rntuple::dataset::{Chain, How, Join};
use rntuple::write::{WriteOptions, Writer};
use rntuple::Value;

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("rntuple-processor-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name).display().to_string()
}

/// One input as a chain.
fn chain(path: &str) -> Chain {
    Chain::open(&[path.to_string()], None).expect("open")
}

/// The primary's and the friend's paths and keys.
type JoinInputs = (String, String, Vec<(u32, u64)>, Vec<(u32, u64)>);

fn rec(fields: Vec<(&str, Value)>) -> Value {
    Value::Record(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Writes `name` with fields (run, event, x: i32, v: vector<double>) for the given (run, event)
/// keys, a cluster every `per_cluster` entries; x = 10 * event + run, v = [event; event % 3].
fn write(path: &str, name: &str, keys: &[(u32, u64)], per_cluster: usize) {
    let schema = [("run", "std::uint32_t"), ("event", "std::uint64_t"), ("x", "std::int32_t"), ("v", "std::vector<double>")];
    let mut w = Writer::create(path, name, &schema, WriteOptions::default()).expect("writer");
    for (i, &(run, event)) in keys.iter().enumerate() {
        let v = Value::List((0..event % 3).map(|_| Value::F64(event as f64)).collect());
        w.fill(&rec(vec![("run", Value::UInt(run.into())), ("event", Value::UInt(event)), ("x", Value::Int(10 * event as i64 + run as i64)), ("v", v)]))
            .expect("fill");
        if (i + 1) % per_cluster == 0 {
            w.commit_cluster().expect("cluster");
        }
    }
    w.commit().expect("commit");
}

fn u64s(b: &RecordBatch, i: usize) -> Vec<Option<u64>> {
    b.column(i).as_primitive::<UInt64Type>().iter().collect()
}

fn i32s(b: &RecordBatch, i: usize) -> Vec<Option<i32>> {
    b.column(i).as_primitive::<Int32Type>().iter().collect()
}

#[test]
fn chain_reads_across_files_and_clusters() {
    let paths: Vec<String> = (0..3).map(|k| tmp(&format!("chain{k}.root"))).collect();
    for (k, p) in paths.iter().enumerate() {
        let keys: Vec<(u32, u64)> = (0..7).map(|i| (k as u32, 100 * k as u64 + i)).collect();
        write(p, "Events", &keys, 3);
    }
    let chain = Chain::open(&[tmp("chain*.root")], None).expect("chain");
    assert_eq!(chain.num_entries(), 21);
    assert_eq!(chain.inputs().len(), 3);
    let b = chain.read_batch(Some(&["event", "v"]), 5, 16).expect("read");
    let want: Vec<Option<u64>> = [5u64, 6, 100, 101, 102, 103, 104, 105, 106, 200, 201].into_iter().map(Some).collect();
    assert_eq!(u64s(&b, 0), want);
    let v = b.column(1).as_list::<i64>();
    assert_eq!(v.value(2).len(), 1, "event 100: one value");
    assert_eq!(v.value(2).as_primitive::<Float64Type>().value(0), 100.0);
    // parts: whole clusters (3, 3, 1 per file), joined to at least 5 entries within a file
    let parts = chain.parts(0);
    assert_eq!(parts.len(), 9);
    assert_eq!(parts[..3], [0..3, 3..6, 6..7]);
    assert_eq!(chain.parts(5)[..2], [0..6, 6..7]);
    // empty ranges and the whole
    assert_eq!(chain.read_batch(None, 21, 21).expect("empty").num_rows(), 0);
    assert_eq!(chain.read_batch(None, 0, 21).expect("all").num_columns(), 4);
    assert!(chain.read_batch(None, 0, 22).is_err());
    // a file:NTUPLE spec names the RNTuple
    assert_eq!(Chain::open(&[format!("{}:Events", paths[0])], None).expect("spec").num_entries(), 7);
    assert!(Chain::open(&[paths[0].clone()], Some("Nope")).is_err());
}

#[test]
fn chain_refuses_other_schemas() {
    let a = tmp("schema_a.root");
    write(&a, "Events", &[(1, 1)], 10);
    let b = tmp("schema_b.root");
    let w = Writer::create(
        &b,
        "Events",
        &[("run", "std::uint32_t"), ("event", "std::uint64_t"), ("x", "float"), ("v", "std::vector<double>")],
        WriteOptions::default(),
    )
    .expect("writer");
    w.commit().expect("commit");
    let e = Chain::open(&[a.clone(), b.clone()], None).err().expect("type differs").to_string();
    assert!(e.contains("'x'") && e.contains("float") && e.contains(&b), "{e}");
    let c = tmp("schema_c.root");
    let w = Writer::create(&c, "Events", &[("run", "std::uint32_t"), ("event", "std::uint64_t")], WriteOptions::default()).expect("writer");
    w.commit().expect("commit");
    let e = Chain::open(&[a.clone(), c.clone()], None).err().expect("field missing").to_string();
    assert!(e.contains("'x'") && e.contains(&c), "{e}");
    let e = Chain::open(&[c.clone(), a.clone()], None).err().expect("field extra").to_string();
    assert!(e.contains("'x'") && e.contains(&a), "{e}");
}

/// The primary's keys: runs 1..=3, events 0..40 each; the friend: the same keys shuffled, every
/// seventh missing, in clusters of 9.
fn join_inputs(tag: &str) -> JoinInputs {
    let primary_keys: Vec<(u32, u64)> = (1..=3u32).flat_map(|r| (0..40u64).map(move |e| (r, e))).collect();
    let mut friend_keys: Vec<(u32, u64)> = primary_keys.iter().copied().enumerate().filter(|(i, _)| i % 7 != 3).map(|(_, k)| k).collect();
    // a fixed shuffle (an LCG permutation)
    let mut state = 12345u64;
    for i in (1..friend_keys.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        friend_keys.swap(i, (state >> 33) as usize % (i + 1));
    }
    let (p, f) = (tmp(&format!("{tag}_primary.root")), tmp(&format!("{tag}_friend.root")));
    write(&p, "Events", &primary_keys, 50);
    write(&f, "Friend", &friend_keys, 9);
    (p, f, primary_keys, friend_keys)
}

#[test]
fn join_on_two_index_fields_left_and_inner() {
    let (p, f, primary_keys, friend_keys) = join_inputs("on2");
    for how in [How::Left, How::Inner] {
        let join = Join::new(chain(&p), vec![("F".into(), chain(&f))], &["run", "event"], how).expect("join");
        assert!(join.index_bytes() > 0);
        let names: Vec<String> = join.fields().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["run", "event", "x", "v", "F.run", "F.event", "F.x", "F.v"]);
        // in several batches, so that friend clusters are read again (or taken from the cache)
        for (start, stop) in [(0u64, 120u64), (0, 37), (37, 90), (90, 120)] {
            let b = join.read_batch(Some(&["event", "F.x", "run", "F.v", "F.event"]), start, stop).expect("read");
            let expected: Vec<(u32, u64)> =
                primary_keys[start as usize..stop as usize].iter().copied().filter(|k| how == How::Left || friend_keys.contains(k)).collect();
            assert_eq!(b.num_rows(), expected.len());
            let fx = i32s(&b, 1);
            let fe = u64s(&b, 4);
            let fv = b.column(3).as_list::<i64>();
            for (row, &(run, event)) in expected.iter().enumerate() {
                assert_eq!(u64s(&b, 0)[row], Some(event));
                if friend_keys.contains(&(run, event)) {
                    assert_eq!(fx[row], Some(10 * event as i32 + run as i32), "row {row} ({run}, {event})");
                    assert_eq!(fe[row], Some(event));
                    let v = fv.value(row);
                    assert_eq!(v.len() as u64, event % 3);
                    assert!(v.as_primitive::<Float64Type>().values().iter().all(|&x| x == event as f64));
                } else {
                    assert_eq!((fx[row], fe[row], fv.is_null(row)), (None, None, true), "row {row} ({run}, {event}) has no match");
                }
            }
        }
    }
}

#[test]
fn aligned_join_with_a_shorter_friend() {
    let p = tmp("aligned_p.root");
    let f = tmp("aligned_f.root");
    let keys: Vec<(u32, u64)> = (0..30u64).map(|e| (1, e)).collect();
    write(&p, "Events", &keys, 8);
    write(&f, "Aux", &keys[..25], 4);
    let join = Join::new(chain(&p), vec![("Aux".into(), chain(&f))], &[], How::Left).expect("join");
    let b = join.read_batch(Some(&["Aux.event", "x"]), 3, 30).expect("read");
    let e = u64s(&b, 0);
    assert_eq!(e[..22], (3..25u64).map(Some).collect::<Vec<_>>()[..]);
    assert!(e[22..].iter().all(Option::is_none));
    let inner = Join::new(chain(&p), vec![("Aux".into(), chain(&f))], &[], How::Inner).expect("join");
    assert_eq!(inner.read_batch(Some(&["x"]), 0, 30).expect("read").num_rows(), 25);
    assert!(inner.read_batch(Some(&["Aux.nope"]), 0, 1).is_err());
}

#[test]
fn join_refuses_bad_index_fields_and_duplicate_keys() {
    let (p, f, _, _) = join_inputs("bad");
    let open = |path: &str| Chain::open(&[path.to_string()], None).expect("open");
    // missing in the friend
    let g = tmp("bad_nokey.root");
    let mut w = Writer::create(&g, "G", &[("run", "std::uint32_t"), ("y", "float")], WriteOptions::default()).expect("writer");
    w.fill(&rec(vec![("run", Value::UInt(1)), ("y", Value::F32(1.0))])).expect("fill");
    w.commit().expect("commit");
    let e = Join::new(open(&p), vec![("G".into(), open(&g))], &["run", "event"], How::Left).err().expect("missing").to_string();
    assert!(e.contains("'event'") && e.contains(&g), "{e}");
    // missing in the primary
    let e = Join::new(open(&g), vec![("F".into(), open(&f))], &["event"], How::Left).err().expect("missing").to_string();
    assert!(e.contains("'event'") && e.contains("primary") && e.contains(&g), "{e}");
    // not an integer
    let e = Join::new(open(&g), vec![("G2".into(), open(&g))], &["y"], How::Left).err().expect("float").to_string();
    assert!(e.contains("'y'") && e.contains("not an integer") && e.contains(&g), "{e}");
    // duplicate keys: run alone repeats
    let e = Join::new(open(&p), vec![("F".into(), open(&f))], &["run"], How::Left).err().expect("duplicates").to_string();
    assert!(e.contains("duplicate key") && e.contains("run=") && e.contains(&f), "{e}");
    // two friends of one name
    let e = Join::new(open(&p), vec![("F".into(), open(&f)), ("F".into(), open(&f))], &[], How::Left).err().expect("names").to_string();
    assert!(e.contains("two friends named 'F'"), "{e}");
}

#[derive(rntuple::Record, Debug, PartialEq)]
struct FriendPart {
    x: i32,
    v: Vec<f64>,
}

#[derive(rntuple::Record, Debug, PartialEq)]
#[allow(non_snake_case)] // a member named after the friend "F"
struct JoinedRow {
    run: u32,
    event: u64,
    F: Option<FriendPart>,
}

#[test]
fn typed_and_value_reads_of_a_join_agree_with_its_batches() {
    let (p, f, primary_keys, friend_keys) = join_inputs("typed");
    for how in [How::Left, How::Inner] {
        let join = Join::new(chain(&p), vec![("F".into(), chain(&f))], &["run", "event"], how).expect("join");
        for (start, stop) in [(0u64, 120u64), (37, 90)] {
            let rows = join.read_typed::<JoinedRow>(start, stop).expect("typed");
            let expected: Vec<(u32, u64)> =
                primary_keys[start as usize..stop as usize].iter().copied().filter(|k| how == How::Left || friend_keys.contains(k)).collect();
            assert_eq!(rows.len(), expected.len());
            for (row, &(run, event)) in rows.iter().zip(&expected) {
                let friend =
                    friend_keys.contains(&(run, event)).then(|| FriendPart { x: 10 * event as i32 + run as i32, v: vec![event as f64; (event % 3) as usize] });
                assert_eq!(*row, JoinedRow { run, event, F: friend }, "({run}, {event})");
            }
            // The values of the same fields, flat, as `rntuple dump` prints them.
            let values = join.read_values(Some(&["run", "F.x"]), start, stop).expect("values");
            let flat: Vec<(i64, Option<i64>)> = values.iter().map(|v| (v.to_json()["run"].as_i64().unwrap(), v.to_json()["F.x"].as_i64())).collect();
            let want: Vec<(i64, Option<i64>)> = rows.iter().map(|r| (r.run as i64, r.F.as_ref().map(|f| f.x as i64))).collect();
            assert_eq!(flat, want);
        }
    }
    // A chain reads typed too, across its files.
    let c = Chain::open(&[p.clone(), p.clone()], None).expect("chain");
    #[derive(rntuple::Record, Debug, PartialEq)]
    struct Key {
        run: u32,
        event: u64,
    }
    let keys = c.read_typed::<Key>(118, 122).expect("typed");
    assert_eq!(keys, [Key { run: 3, event: 38 }, Key { run: 3, event: 39 }, Key { run: 1, event: 0 }, Key { run: 1, event: 1 }]);
}
