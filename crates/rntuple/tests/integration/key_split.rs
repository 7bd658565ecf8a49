//! Payloads above the maximum key size: with a small `max_key_size`, a cluster's pages are spread
//! over several RBlob keys and pages, the header and the page list (or any envelope) larger than a key
//! are split into chunks with a chunk table, as ROOT does; the anchor records the size. Our reader
//! reads the files back equal (sequential and parallel writer, compressed and not). The files also
//! go to `target/tmp/key_split_{0,505}.root` with their expected values for
//! `tests/cross/test_key_split.py`, where ROOT 6.40 and uproot read them.

use rntuple::write::{ParallelWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};
use serde_json::{json, Value as J};

const N_EXTRA: usize = 60;
const MAX_KEY: u64 = 4096;

fn schema() -> Vec<(String, String)> {
    let mut s = vec![("id".to_string(), "std::uint64_t".to_string()), ("v".into(), "std::vector<float>".into()), ("s".into(), "std::string".into())];
    // Many fields, so that the header and the footer are larger than one key.
    s.extend((0..N_EXTRA).map(|j| (format!("extra_field_with_a_long_name_{j}"), "double".to_string())));
    s
}

fn v_of(i: u64) -> Vec<f32> {
    // Values that do not compress well, so that compressed pages stay above the key size.
    (0..(i % 40)).map(|k| ((i.wrapping_mul(2_654_435_761) ^ k.wrapping_mul(40_503)) % 100_003) as f32 * 0.25).collect()
}

fn entry(i: u64) -> Value {
    let mut f = vec![
        ("id".to_string(), Value::UInt(i)),
        ("v".into(), Value::List(v_of(i).into_iter().map(Value::F32).collect())),
        ("s".into(), Value::String(format!("entry-{i}-{}", "x".repeat((i % 13) as usize)))),
    ];
    f.extend((0..N_EXTRA).map(|j| (format!("extra_field_with_a_long_name_{j}"), Value::F64(i as f64 * 0.5 + j as f64))));
    Value::Record(f)
}

fn expected(i: u64) -> J {
    let mut m = serde_json::Map::new();
    m.insert("id".into(), json!(i));
    m.insert("v".into(), J::Array(v_of(i).into_iter().map(|x| json!(x)).collect()));
    m.insert("s".into(), json!(format!("entry-{i}-{}", "x".repeat((i % 13) as usize))));
    for j in 0..N_EXTRA {
        m.insert(format!("extra_field_with_a_long_name_{j}"), json!(i as f64 * 0.5 + j as f64));
    }
    J::Object(m)
}

fn opts(compression: u32) -> WriteOptions {
    WriteOptions {
        compression: rntuple::write::Compression::from_settings(compression).unwrap(),
        max_key_size: MAX_KEY,
        max_unzipped_page_size: 32 << 10,
        approx_zipped_cluster_size: 256 << 10,
        ..Default::default()
    }
}

fn read_json(path: &std::path::Path) -> Vec<J> {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader("Events").expect("reader");
    r.read_values(None, 0, r.num_entries()).expect("read").iter().map(|v| v.to_json()).collect()
}

#[test]
fn payloads_above_the_key_size_are_split_and_read_back() {
    let n = 20_000u64;
    let sch = schema();
    let sch: Vec<(&str, &str)> = sch.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let want: Vec<J> = (0..n).map(expected).collect();
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    for compression in [0u32, 505] {
        let path = dir.join(format!("key_split_{compression}.root"));
        let mut w = Writer::create(&path, "Events", &sch, opts(compression)).expect("create");
        for i in 0..n {
            w.fill(&entry(i)).expect("fill");
        }
        w.commit().expect("commit");

        let f = RNTupleFile::open(&path).expect("open");
        let r = f.reader("Events").expect("reader");
        let d = r.descriptor();
        assert_eq!(r.anchor().max_key_size, MAX_KEY);
        let page_list = d.cluster_groups[0].page_list.locator.size;
        // Compressed, the envelopes fit one key; uncompressed they do not.
        assert!(
            compression != 0 || (r.anchor().nbytes_header > MAX_KEY && page_list > MAX_KEY),
            "header {} / page list {page_list} bytes",
            r.anchor().nbytes_header
        );
        let pages: Vec<u64> = d.clusters.iter().flat_map(|c| c.columns.iter().flatten()).flat_map(|c| c.pages.iter().map(|p| p.locator.size)).collect();
        let split = pages.iter().filter(|&&s| s > MAX_KEY).count();
        assert!(split > 0 && split < pages.len(), "{split} of {} pages above the key size", pages.len());
        assert!(d.clusters.len() > 1, "{} clusters", d.clusters.len());
        assert_eq!(read_json(&path), want, "compression {compression}");
        std::fs::write(dir.join(format!("key_split_{compression}.expected.json")), serde_json::to_string(&want).expect("json")).expect("write expected");

        // Parallel writer, each option that changes how clusters are written.
        for (outside, buffered) in [(false, true), (true, true), (false, false)] {
            let ppath = dir.join(format!("key_split_parallel_{compression}_{outside}_{buffered}.root"));
            let o = WriteOptions { write_outside_lock: outside, buffered, ..opts(compression) };
            let pw = ParallelWriter::create(&ppath, "Events", &sch, o).expect("create");
            std::thread::scope(|s| {
                for t in 0..3u64 {
                    let mut ctx = pw.fill_context().expect("context");
                    s.spawn(move || {
                        for i in (t..n).step_by(3) {
                            ctx.fill(&entry(i)).expect("fill");
                        }
                        ctx.finish().expect("finish");
                    });
                }
            });
            pw.commit().expect("commit");
            let mut got = read_json(&ppath);
            got.sort_by_key(|e| e["id"].as_u64());
            assert_eq!(got, want, "parallel, compression {compression}, outside lock {outside}, buffered {buffered}");
        }
    }
}

#[test]
fn bad_write_options_are_refused_naming_the_option() {
    let path = std::env::temp_dir().join(format!("rntuple-badopts-{}.root", std::process::id()));
    let cases = [
        (WriteOptions { initial_unzipped_page_size: 0, ..Default::default() }, "initial_unzipped_page_size"),
        (WriteOptions { max_key_size: 10, ..Default::default() }, "max_key_size"),
        (WriteOptions { max_unzipped_page_size: 4 << 30, ..Default::default() }, "max_unzipped_page_size"),
        (WriteOptions { approx_zipped_cluster_size: 0, ..Default::default() }, "approx_zipped_cluster_size"),
    ];
    for (o, name) in cases {
        let e = match Writer::create(&path, "T", &[("x", "float")], o) {
            Ok(_) => panic!("options with a bad {name} were accepted"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(name), "{e}");
    }
    std::fs::remove_file(path).ok();
}
