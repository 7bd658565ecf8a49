//! `Reader::check`: a file with one damaged page reports exactly that field and cluster, and
//! reads everything else; an undamaged file reports nothing.

use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

#[test]
fn one_damaged_page_is_reported_with_its_field_and_cluster() {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("check_damaged.root");
    let opts = WriteOptions { approx_zipped_cluster_size: 4000, max_unzipped_page_size: 1024, ..Default::default() };
    let mut w = Writer::create(&path, "Events", &[("x", "double"), ("v", "std::vector<std::int32_t>")], opts).expect("create");
    for i in 0..5000i64 {
        let v = Value::List((0..i % 4).map(|k| Value::Int(i * 7 + k)).collect());
        w.fill(&Value::Record(vec![("x".into(), Value::F64(i as f64 * 0.37)), ("v".into(), v)])).expect("fill");
    }
    w.commit().expect("commit");
    let good = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");
    let report = good.check(|_, _| {});
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert!(report.clusters >= 3, "{} clusters", report.clusters);
    assert_eq!(report.fields, 2);
    let total_pages: usize = good.descriptor().clusters.iter().flat_map(|c| c.columns.iter().flatten()).map(|r| r.pages.len()).sum();
    assert_eq!(report.pages as usize, total_pages);

    // Damage the middle of the first page of x in cluster 1.
    let x_col = good.descriptor().fields.iter().find(|f| f.name == "x").expect("x").columns[0] as usize;
    let page = &good.descriptor().clusters[1].columns[x_col].as_ref().expect("x in cluster 1").pages[0];
    let at = (page.locator.offset + page.locator.size / 2) as usize;
    let mut bytes = std::fs::read(&path).expect("read");
    bytes[at] ^= 0x5a;
    let damaged = RNTupleFile::from_bytes(bytes).expect("open damaged").reader("Events").expect("reader");
    let mut calls = 0;
    let report = damaged.check(|done, total| {
        calls += 1;
        assert!(done <= total);
    });
    assert_eq!(calls, report.clusters * 2);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    let p = &report.problems[0];
    let c1 = &good.descriptor().clusters[1];
    assert_eq!((p.field.as_str(), p.cluster, p.entries), ("x", 1, (c1.first_entry, c1.first_entry + c1.n_entries)));
    assert!(p.error.contains("checksum") && p.error.contains(&page.locator.offset.to_string()), "{}", p.error);
    // Everything else was read: every page but the damaged one (and the rest of its cluster's x pages).
    let x_pages_c1 = c1.columns[x_col].as_ref().expect("x").pages.len() as u64;
    assert!(report.pages >= total_pages as u64 - x_pages_c1, "{} of {total_pages}", report.pages);
    std::fs::remove_file(path).ok();
}
