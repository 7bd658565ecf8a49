//! `WriteOptions::page_buffer_budget`: with implicit MT and buffered writing, encoded pages wait
//! for compression until they exceed the budget. A small budget must bound the encoded pages
//! waiting (seen in the writer's peak memory, counted by this binary's allocator, `alloc_probe`, in
//! a process of its own, `isolated`) and give the same file contents as the default (auto: twice the target
//! cluster size), with which the encoded pages of a whole cluster wait.

use super::{alloc_probe, isolated};
use rntuple::arrow::array::{ArrayRef, Float64Array, RecordBatch};
use rntuple::arrow::datatypes::{DataType, Field, Schema};
use rntuple::write::{WriteOptions, Writer};
use rntuple::RNTupleFile;
use std::sync::Arc;

const ENTRIES: usize = 6_000_000; // 48 MB of doubles, one cluster
const BATCH: usize = 100_000;

/// Writes the doubles `(i % 64) * 0.25` (compressible: the compressed cluster is small, the
/// encoded pages waiting for compression are not) and returns the writer's peak memory above
/// what was allocated before it, and the path.
fn write(name: &str, budget: u64) -> (usize, std::path::PathBuf) {
    let path = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let opts = WriteOptions {
        compression: rntuple::write::Compression::zstd(5),
        use_implicit_mt: true,
        buffered: true,
        page_buffer_budget: budget,
        approx_zipped_cluster_size: 256 << 20,
        ..Default::default()
    };
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
    let batches: Vec<RecordBatch> = (0..ENTRIES / BATCH)
        .map(|b| {
            let col: ArrayRef = Arc::new(Float64Array::from_iter_values((b * BATCH..(b + 1) * BATCH).map(|i| (i % 64) as f64 * 0.25)));
            RecordBatch::try_new(schema.clone(), vec![col]).expect("batch")
        })
        .collect();
    alloc_probe::reset_peak();
    let base = alloc_probe::live();
    let mut w = Writer::create(&path, "Events", &[("x", "double")], opts).expect("create");
    for b in &batches {
        w.append_batch(b).expect("append");
    }
    w.commit().expect("commit");
    ((alloc_probe::peak() - base).max(0) as usize, path)
}

#[test]
fn a_small_page_buffer_budget_bounds_memory_and_keeps_the_contents() {
    isolated::run(module_path!(), "a_small_page_buffer_budget_bounds_memory_and_keeps_the_contents", || {
        let (auto_peak, auto_path) = write("budget_auto.root", 0);
        let (small_peak, small_path) = write("budget_small.root", 2 << 20);
        eprintln!("peak writer memory: auto budget {auto_peak} bytes, 2 MiB budget {small_peak} bytes");
        // Auto: the whole cluster's 48 MB of encoded pages wait for compression, then the compressed
        // pages are made (each in a buffer of its encoded page's capacity: another 48 MB).
        assert!(auto_peak > 90_000_000, "auto budget: peak {auto_peak} bytes, expected the cluster's encoded pages to wait");
        // 2 MiB: the encoded pages are compressed as the budget fills, so at most ~2 MiB of them wait
        // beside the compressed ones: the peak is lower by about the cluster's encoded size.
        assert!(small_peak + 35_000_000 < auto_peak, "2 MiB budget: peak {small_peak} bytes, auto {auto_peak}: the budget did not bound the waiting pages");
        let (fa, fs) = (RNTupleFile::open(&auto_path).expect("open"), RNTupleFile::open(&small_path).expect("open"));
        let (ra, rs) = (fa.reader("Events").expect("reader"), fs.reader("Events").expect("reader"));
        assert_eq!((ra.num_entries(), rs.num_entries()), (ENTRIES as u64, ENTRIES as u64));
        assert_eq!(ra.descriptor().clusters.len(), 1, "one cluster expected");
        let (a, s) = (ra.read_batch(None, 0, ENTRIES as u64).expect("read"), rs.read_batch(None, 0, ENTRIES as u64).expect("read"));
        assert_eq!(a, s);
        let x = a.column(0).as_any().downcast_ref::<Float64Array>().expect("doubles");
        assert!(x.values().iter().enumerate().all(|(i, v)| *v == (i % 64) as f64 * 0.25));
        // The same pages, compressed the same.
        let pages = |r: &rntuple::Reader| {
            r.descriptor()
                .clusters
                .iter()
                .flat_map(|c| c.columns.iter().flatten())
                .flat_map(|cr| cr.pages.iter().map(|p| (p.n_elements, p.locator.size)))
                .collect::<Vec<_>>()
        };
        assert_eq!(pages(&ra), pages(&rs));
        for p in [auto_path, small_path] {
            std::fs::remove_file(p).ok();
        }
    });
}
