//! Typed filling with `#[derive(Record)]`: every supported Rust type (primitives, String, Vec,
//! arrays, Option, tuples, nested derived structs as untyped records and untyped collections),
//! through the sequential and the parallel writer, read back equal to an independently built JSON
//! form, and read back typed (`read_typed`, `iter_typed`) equal to the values written. The file also goes to `target/tmp/typed_derive.root` (with its expected values) for
//! tests/cross/test_typed_derive.py, where ROOT 6.40 and uproot read it.

use rntuple::write::{ParallelWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Record};
use serde_json::{json, Value as J};

#[derive(Record, Clone, Debug, PartialEq)]
struct Hit {
    x: f32,
    y: f32,
    layer: u8,
}

#[derive(Record, Clone, Debug, PartialEq)]
struct Event {
    id: u64,
    flag: bool,
    e: f64,
    small: i8,
    wide: i64,
    name: String,
    ints: Vec<i32>,
    arr: [f32; 3],
    pair: (i32, String),
    triple: (bool, u16, f64),
    opt: Option<f32>,
    hits: Vec<Hit>,
    vv: Vec<Vec<u16>>,
    lead: Hit,
    maybe: Option<Hit>,
}

fn hit(i: u64, k: u64) -> Hit {
    Hit { x: (i * 10 + k) as f32 + 0.5, y: -((i + k) as f32), layer: (k % 256) as u8 }
}

fn event(i: u64) -> Event {
    Event {
        id: i,
        flag: i.is_multiple_of(3),
        e: i as f64 * 1.25,
        small: ((i % 200) as i64 - 100) as i8,
        wide: -(i as i64) * 1_000_000_007,
        name: format!("ev{i}"),
        ints: (0..i % 4).map(|k| k as i32 - 1).collect(),
        arr: [i as f32, 0.5, -(i as f32)],
        pair: (i as i32, "p".repeat((i % 3) as usize)),
        triple: (i % 2 == 1, (i % 60000) as u16, 0.25),
        opt: i.is_multiple_of(2).then_some(i as f32 / 4.0),
        hits: (0..i % 3).map(|k| hit(i, k)).collect(),
        vv: (0..i % 3).map(|k| (0..k).map(|m| (m + i) as u16).collect()).collect(),
        lead: hit(i, 7),
        maybe: (i % 4 == 1).then(|| hit(i, 9)),
    }
}

fn hit_json(h: &Hit) -> J {
    json!({"x": h.x, "y": h.y, "layer": h.layer})
}

/// The JSON form of `rntuple dump` for an event, built without the writer.
fn expected(ev: &Event) -> J {
    json!({
        "id": ev.id, "flag": ev.flag, "e": ev.e, "small": ev.small, "wide": ev.wide, "name": ev.name,
        "ints": ev.ints, "arr": ev.arr, "pair": [ev.pair.0, ev.pair.1], "triple": [ev.triple.0, ev.triple.1, ev.triple.2],
        "opt": ev.opt, "hits": ev.hits.iter().map(hit_json).collect::<Vec<_>>(), "vv": ev.vv,
        "lead": hit_json(&ev.lead),
        // An optional struct is an untyped collection (ROOT reads those as vectors) of 0 or 1 records.
        "maybe": ev.maybe.iter().map(hit_json).collect::<Vec<_>>(),
    })
}

fn read_json(path: &std::path::Path) -> Vec<J> {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader("Events").expect("reader");
    r.read_values(None, 0, r.num_entries()).expect("read").iter().map(|v| v.to_json()).collect()
}

#[test]
fn derived_structs_round_trip_sequential_and_parallel() {
    let n = 2000u64;
    let events: Vec<Event> = (0..n).map(event).collect();
    let want: Vec<J> = events.iter().map(expected).collect();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for compression in [0u32, 505] {
        let path = dir.join(format!("typed_derive_{compression}.root"));
        let opts = WriteOptions {
            compression: rntuple::write::Compression::from_settings(compression).unwrap(),
            max_unzipped_page_size: 4096,
            approx_zipped_cluster_size: 20_000,
            ..Default::default()
        };
        let mut w = Writer::create_typed::<Event>(&path, "Events", opts.clone()).expect("create");
        for e in &events {
            w.fill_typed(e).expect("fill");
        }
        w.commit().expect("commit");
        let got = read_json(&path);
        assert_eq!(got.len(), want.len());
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, e, "entry {i} (compression {compression})");
        }
        let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");
        let clusters = r.descriptor().clusters.len();
        assert!(clusters > 1, "{clusters} clusters");
        // The same struct reads the entries back (typed reading), whole and in batches across
        // clusters, and a range in the middle.
        assert!(r.read_typed::<Event>(0, n).expect("read typed") == events, "typed read (compression {compression})");
        let it: Vec<Event> = r.iter_typed::<Event>(333).collect::<Result<_, _>>().expect("iter typed");
        assert!(it == events);
        assert!(r.read_typed::<Event>(777, 1234).expect("range") == events[777..1234]);
        if compression == 505 {
            std::fs::copy(&path, dir.join("typed_derive.root")).expect("copy");
            std::fs::write(dir.join("typed_derive.expected.json"), serde_json::to_string(&want).expect("json")).expect("write expected");
        }

        // Parallel: 4 contexts, each a quarter of the events; the entries are then checked as a set
        // keyed by id, and per context in order.
        let ppath = dir.join(format!("typed_derive_parallel_{compression}.root"));
        let pw = ParallelWriter::create_typed::<Event>(&ppath, "Events", opts).expect("create");
        std::thread::scope(|s| {
            for t in 0..4usize {
                let mut ctx = pw.fill_context().expect("context");
                let part = &events[t * 500..(t + 1) * 500];
                s.spawn(move || {
                    for e in part {
                        ctx.fill_typed(e).expect("fill");
                    }
                    ctx.finish().expect("finish");
                });
            }
        });
        pw.commit().expect("commit");
        let got = read_json(&ppath);
        assert_eq!(got.len(), want.len());
        let mut last = [None::<u64>; 4];
        for g in &got {
            let id = g["id"].as_u64().expect("id");
            assert_eq!(g, &want[id as usize]);
            let t = (id / 500) as usize;
            assert!(last[t].is_none_or(|p| p + 1 == id), "context {t}: {id} after {:?}", last[t]);
            last[t] = Some(id);
        }
        std::fs::remove_file(ppath).ok();
    }
}

#[test]
fn a_typed_entry_of_another_schema_is_refused_and_writes_nothing() {
    #[derive(Record)]
    struct Other {
        id: u64,
        name: f32,
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("typed_mismatch.root");
    let mut w = Writer::create(&path, "Events", &[("id", "std::uint64_t"), ("name", "std::string")], WriteOptions::default()).expect("create");
    let e = w.fill_typed(&Other { id: 1, name: 2.0 }).expect_err("mismatch");
    let msg = e.to_string();
    assert!(msg.contains("name: float") && msg.contains("name: std::string"), "{msg}");
    assert_eq!(w.num_entries(), 0);
    w.commit().expect("commit");
    assert_eq!(RNTupleFile::open(&path).expect("open").reader("Events").expect("reader").num_entries(), 0);
}

#[test]
fn derived_structs_inside_pairs_keep_their_member_names() {
    // A pair holding a derived struct is written as uproot writes a tuple of a record: an untyped
    // record of members `_0`, `_1` (ROOT has no std::pair of an untyped record).
    #[derive(Record, Clone, Debug, PartialEq)]
    struct Paired {
        p: (i32, Hit),
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("typed_paired.root");
    let rows: Vec<Paired> = (0..4).map(|i| Paired { p: (i as i32 - 1, hit(i, 1)) }).collect();
    let mut w = Writer::create_typed::<Paired>(&path, "Events", WriteOptions::default()).expect("create");
    for r in &rows {
        w.fill_typed(r).expect("fill");
    }
    w.commit().expect("commit");
    let got = read_json(&path);
    assert_eq!(got[2], json!({"p": {"_0": 1, "_1": {"x": 21.5, "y": -3.0, "layer": 1}}}));
    let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");
    assert_eq!(r.descriptor().fields.iter().filter(|f| f.type_name.is_empty()).count(), 2, "p and its _1 are untyped records");
    assert!(r.read_typed::<Paired>(0, 4).expect("typed read") == rows);
}
