//! The process-wide read budget (`rntuple::set_memory_limit`): the limit is global, so the test
//! runs alone in a child process of this binary (`isolated`), not beside the other tests.

use super::isolated;
use rntuple::write::{WriteOptions, Writer};
use rntuple::{RNTupleFile, Value};

#[test]
fn a_read_over_the_memory_limit_fails_before_allocating_and_under_it_succeeds() {
    isolated::run(module_path!(), "a_read_over_the_memory_limit_fails_before_allocating_and_under_it_succeeds", || {
        let path = std::env::temp_dir().join(format!("rntuple-memory-limit-{}.root", std::process::id()));
        let n = 1_000_000u64;
        let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default()).expect("writer");
        for i in 0..n {
            w.fill(&Value::Record(vec![("x".into(), Value::F32((i % 1000) as f32 * 0.5))])).expect("fill");
        }
        w.commit().expect("commit");
        let r = RNTupleFile::open(&path).expect("open").reader("Events").expect("reader");

        // 10^6 floats need 4 MB: over a 1 MiB budget, an error naming what and how much.
        rntuple::set_memory_limit(Some(1 << 20));
        assert_eq!(rntuple::memory_limit(), Some(1 << 20));
        let e = r.read_batch(None, 0, n).expect_err("over the limit").to_string();
        assert!(e.contains("of field 'x'") && e.contains("over the memory limit of 1.0 MiB"), "{e}");
        assert!(e.starts_with("unsupported: reading cluster 0 of field 'x'"), "{e}");

        // Under the limit: the values.
        rntuple::set_memory_limit(Some(64 << 20));
        let b = r.read_batch(None, 0, n).expect("under the limit");
        let x = b.column(0).as_any().downcast_ref::<rntuple::arrow::array::Float32Array>().expect("float column");
        assert_eq!(x.len(), n as usize);
        assert_eq!((x.value(0), x.value(1), x.value(999), x.value(1999)), (0.0, 0.5, 499.5, 499.5));
        assert_eq!(x.values().iter().map(|&v| v as f64).sum::<f64>(), 1000.0 * (0..1000).map(|i| i as f64 * 0.5).sum::<f64>());
        rntuple::set_memory_limit(None);
        assert_eq!(rntuple::memory_limit(), None);
        let _ = std::fs::remove_file(&path);
    });
}
