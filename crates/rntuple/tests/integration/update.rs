//! Adding an RNTuple to an existing ROOT file (`WriteOptions::update_existing_file`, ROOT's
//! UPDATE mode): the file's RNTuples before and after read as written, through the sequential
//! and the parallel writer; a name already taken is refused without touching the file; a file
//! that is not a ROOT file is refused. ROOT 6.40 and uproot read updated files (histograms,
//! TTrees, directories and RNTuples) in tests/cross/test_update.py.

use rntuple::write::{ParallelWriter, WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

fn rows(r: &rntuple::Reader) -> Vec<String> {
    r.read_values(None, 0, r.num_entries()).expect("read").iter().map(|v| v.to_json().to_string()).collect()
}

#[test]
fn rntuples_added_to_an_existing_file_read_with_the_ones_before() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("update.root");
    let mut w = Writer::create(&path, "A", &[("x", "std::int32_t")], WriteOptions::default()).expect("create");
    for i in 0..1000 {
        w.fill(&Value::Record(vec![("x".into(), Value::Int(i))])).expect("fill");
    }
    w.commit().expect("commit");
    let a_before = rows(&RNTupleFile::open(&path).expect("open").reader("A").expect("A"));

    let upd = WriteOptions { update_existing_file: true, approx_zipped_cluster_size: 5000, ..Default::default() };
    let mut w = Writer::create(&path, "B", &[("s", "std::string"), ("v", "std::vector<float>")], upd.clone()).expect("update");
    for i in 0..3000 {
        let v = Value::List((0..i % 3).map(|k| Value::F32(k as f32 + 0.5)).collect());
        w.fill(&Value::Record(vec![("s".into(), Value::String(format!("s{i}"))), ("v".into(), v)])).expect("fill");
    }
    w.commit().expect("commit");
    // A third through the parallel writer, 3 threads.
    let pw = ParallelWriter::create(&path, "C", &[("id", "std::uint64_t")], upd.clone()).expect("parallel update");
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let mut ctx = pw.fill_context().expect("context");
            s.spawn(move || {
                for i in 0..2000u64 {
                    ctx.fill(&Value::Record(vec![("id".into(), Value::UInt(t * 2000 + i))])).expect("fill");
                }
                ctx.finish().expect("finish");
            });
        }
    });
    pw.commit().expect("commit");

    let f = RNTupleFile::open(&path).expect("open updated");
    assert_eq!(f.names(), ["A", "B", "C"]);
    assert_eq!(rows(&f.reader("A").expect("A")), a_before);
    let b = rows(&f.reader("B").expect("B"));
    assert_eq!(b.len(), 3000);
    assert_eq!(b[4], r#"{"s":"s4","v":[0.5]}"#);
    assert_eq!(b[2999], r#"{"s":"s2999","v":[0.5,1.5]}"#);
    assert_eq!(b[3], r#"{"s":"s3","v":[]}"#);
    assert!(f.reader("B").expect("B").descriptor().clusters.len() > 1);
    let mut ids: Vec<u64> = f.reader("C").expect("C").read_values(None, 0, 6000).expect("C").iter().map(|v| v.to_json()["id"].as_u64().expect("id")).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..6000).collect::<Vec<u64>>());
    assert_eq!(std::fs::metadata(&path).expect("stat").len(), f.root_file().source().len());

    // The name is taken: refused, and the file is left as it was.
    let before = std::fs::read(&path).expect("read");
    let e = Writer::create(&path, "B", &[("y", "float")], upd.clone()).err().expect("refused").to_string();
    assert!(e.contains("already holds an RNTuple 'B'"), "{e}");
    assert_eq!(std::fs::read(&path).expect("read"), before);

    // Not a ROOT file, or no file: refused.
    let junk = path.with_extension("junk");
    std::fs::write(&junk, b"not a ROOT file at all").expect("write");
    let e = Writer::create(&junk, "X", &[("y", "float")], upd.clone()).err().expect("not ROOT").to_string();
    assert!(e.contains("not a ROOT file"), "{e}");
    let missing = path.with_extension("missing");
    assert!(Writer::create(&missing, "X", &[("y", "float")], upd).is_err());
    for p in [path, junk] {
        std::fs::remove_file(p).ok();
    }
}

/// The update-mode refusals: a file whose fBEGIN does not point at its top directory, one
/// whose top directory record has no room for its 64-bit form, a name already taken (also
/// through the parallel writer), a file that does not exist. Each is refused before anything is
/// written: the file's bytes are unchanged.
#[test]
fn update_mode_refusals_leave_the_file_as_it_was() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = dir.join("update_refusals.root");
    let mut w = Writer::create(&path, "A", &[("x", "std::int32_t")], WriteOptions::default()).expect("create");
    for i in 0..100 {
        w.fill(&Value::Record(vec![("x".into(), Value::Int(i))])).expect("fill");
    }
    w.commit().expect("commit");
    let good = std::fs::read(&path).expect("read");
    let upd = WriteOptions { update_existing_file: true, ..Default::default() };
    let refused = |bytes: &[u8], name: &str, what: &str| -> String {
        let p = dir.join(format!("update_refusal_{what}.root"));
        std::fs::write(&p, bytes).expect("write");
        let e = Writer::create(&p, name, &[("y", "float")], upd.clone()).err().unwrap_or_else(|| panic!("{what}: accepted")).to_string();
        assert_eq!(std::fs::read(&p).expect("read"), bytes, "{what}: the file was changed");
        std::fs::remove_file(&p).ok();
        e
    };
    // The header: "root", fVersion, fBEGIN, fEND... fNbytesName (at 28, or at 36 in the 64-bit form).
    let version = i32::from_be_bytes(good[4..8].try_into().expect("4 bytes"));
    let at_nbytes_name = if version > 1_000_000 { 36 } else { 28 };
    let nbytes_name = u32::from_be_bytes(good[at_nbytes_name..at_nbytes_name + 4].try_into().expect("4 bytes"));
    assert_eq!(u32::from_be_bytes(good[8..12].try_into().expect("4 bytes")), 100);

    // fBEGIN 200 (ROOT always writes 100): the top directory key is looked for there, and what is
    // found is not one. (A consistent file with another fBEGIN, refused naming fBEGIN, would need
    // every offset of the file moved.)
    let mut b = good.clone();
    b[8..12].copy_from_slice(&200u32.to_be_bytes());
    let e = refused(&b, "B", "fbegin");
    assert!(e.contains("cannot add to this file"), "{e}");

    // The TFile key shortened so that 50 bytes are left for the directory record: enough for
    // its fields up to fSeekKeys (42 bytes in the 64-bit form), not for the whole 64-bit record (60).
    let mut b = good.clone();
    b[100..104].copy_from_slice(&(nbytes_name + 50).to_be_bytes());
    let e = refused(&b, "B", "dir_record");
    assert!(e.contains("50 bytes of room") && e.contains("fewer than the 60"), "{e}");

    // The name is taken, through either writer.
    let e = refused(&good, "A", "taken");
    assert!(e.contains("already holds an RNTuple 'A'"), "{e}");
    let p = dir.join("update_refusal_parallel.root");
    std::fs::write(&p, &good).expect("write");
    let e = ParallelWriter::create(&p, "A", &[("y", "float")], upd.clone()).err().expect("parallel: name taken accepted").to_string();
    assert!(e.contains("already holds an RNTuple 'A'"), "{e}");
    assert_eq!(std::fs::read(&p).expect("read"), good);
    std::fs::remove_file(&p).ok();

    // No file: refused naming it (update mode never creates one).
    let missing = dir.join("update_refusal_missing.root");
    std::fs::remove_file(&missing).ok();
    let e = Writer::create(&missing, "X", &[("y", "float")], upd).err().expect("missing file accepted").to_string();
    assert!(e.contains("update_refusal_missing.root"), "{e}");
    assert!(!missing.exists(), "update mode created {}", missing.display());
    std::fs::remove_file(path).ok();
}
