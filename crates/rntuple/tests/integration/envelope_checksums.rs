//! Damage to the header, footer and page-list envelopes (their payload or their stored XXH3
//! checksum) is rejected with an error that names the envelope, never read as garbage. (Damaged
//! pages: check.rs and corruption_sweep.rs.) The envelopes are uncompressed here (compression
//! 0), so that a flipped byte reaches the checksum and not the decompressor first.

use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

fn write_file(path: &std::path::Path) {
    let opts =
        WriteOptions { compression: rntuple::write::Compression::NONE, approx_zipped_cluster_size: 4000, max_unzipped_page_size: 1024, ..Default::default() };
    let mut w = Writer::create(path, "Events", &[("x", "double"), ("s", "std::string")], opts).expect("create");
    for i in 0..3000i64 {
        w.fill(&Value::Record(vec![("x".into(), Value::F64(i as f64 * 0.5)), ("s".into(), Value::String(format!("entry {i}")))])).expect("fill");
    }
    w.commit().expect("commit");
}

/// Opening the damaged bytes and reading every entry: the first error on the way.
fn read_all(bytes: Vec<u8>) -> Result<usize, String> {
    let f = RNTupleFile::from_bytes(bytes).map_err(|e| e.to_string())?;
    let r = f.reader("Events").map_err(|e| e.to_string())?;
    let n = r.num_entries();
    r.read_values(None, 0, n).map(|v| v.len()).map_err(|e| e.to_string())
}

#[test]
fn damaged_envelopes_are_rejected_by_name() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("envelope_checksums.root");
    write_file(&path);
    let good = std::fs::read(&path).expect("read");
    assert_eq!(read_all(good.clone()), Ok(3000));
    let f = RNTupleFile::open(&path).expect("open");
    let r = f.reader("Events").expect("reader");
    let a = *r.anchor();
    // Stored uncompressed: each envelope's bytes are its serialization, the last 8 its checksum.
    assert_eq!((a.nbytes_header, a.nbytes_footer), (a.len_header, a.len_footer), "envelopes compressed despite compression 0");
    let groups = &r.descriptor().cluster_groups;
    assert!(!groups.is_empty() && r.descriptor().clusters.len() >= 3);
    let pl = &groups[0].page_list;
    assert_eq!(pl.locator.size, pl.length, "page list compressed despite compression 0");
    let envelopes = [
        ("header envelope", a.seek_header, a.nbytes_header),
        ("footer envelope", a.seek_footer, a.nbytes_footer),
        ("page list envelope", pl.locator.offset, pl.length),
    ];
    for (name, offset, len) in envelopes {
        // A byte in the middle of the payload, then a byte of the stored checksum itself.
        for (what, at) in [("payload", offset + len / 2), ("stored checksum", offset + len - 3)] {
            let mut bad = good.clone();
            bad[at as usize] ^= 0x24;
            let e = read_all(bad).expect_err(&format!("{name}: damaged {what} at byte {at} was accepted"));
            assert!(e.contains("checksum mismatch") && e.contains(name), "{name}, damaged {what} at byte {at}: {e}");
        }
    }
    std::fs::remove_file(path).ok();
}
