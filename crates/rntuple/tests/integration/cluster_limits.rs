//! The cluster size limits hold inside one Arrow batch: a single `append_batch` of many wide
//! entries is cut into clusters of at most `max_unzipped_cluster_size` uncompressed bytes (to
//! within one entry), by the sequential writer and by a fill context of the parallel writer, and
//! the entries read back in order. (Before, a batch was cut only every 8,192 entries.)

use rntuple::arrow::array::cast::AsArray;
use rntuple::arrow::array::{ArrayRef, Float32Array, LargeListArray, RecordBatch, UInt64Array};
use rntuple::arrow::buffer::OffsetBuffer;
use rntuple::arrow::datatypes::{DataType, Field, Float32Type, Schema, UInt64Type};
use rntuple::write::{Compression, ParallelWriter, WriteOptions, Writer};
use rntuple::RNTupleFile;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCHEMA: [(&str, &str); 2] = [("id", "std::uint64_t"), ("hits", "std::vector<float>")];
const ENTRIES: u64 = 20_000;
/// 8 + 8 (offset) + 4 x (50..=150) bytes per entry: about 400 bytes.
const LIMIT: u64 = 256 * 1024;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rntuple-cluster-limits-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d.join(name)
}

fn hits_of(id: u64) -> usize {
    50 + (id * 37 % 101) as usize
}

fn batch() -> RecordBatch {
    let item = Arc::new(Field::new("_0", DataType::Float32, false));
    let mut offsets = vec![0i64];
    let mut vals = Vec::new();
    for id in 0..ENTRIES {
        vals.extend((0..hits_of(id)).map(|k| (id + k as u64) as f32));
        offsets.push(vals.len() as i64);
    }
    let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::UInt64, false), Field::new("hits", DataType::LargeList(item.clone()), false)]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt64Array::from_iter_values(0..ENTRIES)),
        Arc::new(LargeListArray::new(item, OffsetBuffer::new(offsets.into()), Arc::new(Float32Array::from(vals)), None)),
    ];
    RecordBatch::try_new(schema, cols).expect("batch")
}

fn opts() -> WriteOptions {
    // Uncompressed: the flush point is exactly min(approx_zipped, max_unzipped) uncompressed bytes.
    WriteOptions {
        compression: Compression::from_settings(0).expect("settings 0"),
        approx_zipped_cluster_size: LIMIT,
        max_unzipped_cluster_size: LIMIT,
        max_unzipped_page_size: 64 * 1024,
        ..Default::default()
    }
}

/// Every cluster holds at most LIMIT bytes plus one entry, there are as many clusters as the data
/// needs, and the entries read back in order.
fn check(path: &Path) {
    let f = RNTupleFile::open(path).expect("open");
    let r = f.reader("Events").expect("reader");
    let d = r.descriptor();
    assert_eq!(r.num_entries(), ENTRIES);
    let widest = 8 + 8 + 4 * 150;
    let mut total = 0;
    for c in &d.clusters {
        let bytes: u64 = c
            .columns
            .iter()
            .enumerate()
            .filter_map(|(cid, range)| Some((range.as_ref()?, d.columns.get(cid)?)))
            .map(|(range, col)| range.pages.iter().map(|p| (p.n_elements as u64 * col.bits_on_storage as u64).div_ceil(8)).sum::<u64>())
            .sum();
        assert!(bytes <= LIMIT + widest, "cluster at entry {} holds {bytes} bytes, above {LIMIT} + one entry", c.first_entry);
        total += bytes;
    }
    let needed = total.div_ceil(LIMIT + widest) as usize;
    assert!(d.clusters.len() >= needed && d.clusters.len() <= needed + 2, "{} clusters for {total} bytes", d.clusters.len());
    let b = r.read_batch(None, 0, ENTRIES).expect("read");
    let ids = b.column(0).as_primitive::<UInt64Type>();
    let hits = b.column(1).as_list::<i64>();
    for id in (0..ENTRIES).step_by(997) {
        assert_eq!(ids.value(id as usize), id);
        let v = hits.value(id as usize);
        let v = v.as_primitive::<Float32Type>();
        assert_eq!(v.len(), hits_of(id), "entry {id}");
        assert_eq!(v.value(0), id as f32, "entry {id}");
    }
}

#[test]
fn one_batch_is_cut_at_the_cluster_limit_sequential() {
    let path = tmp("sequential.root");
    let mut w = Writer::create(&path, "Events", &SCHEMA, opts()).expect("create");
    w.append_batch(&batch()).expect("append");
    w.commit().expect("commit");
    check(&path);
}

#[test]
fn one_batch_is_cut_at_the_cluster_limit_parallel() {
    let path = tmp("parallel.root");
    let w = ParallelWriter::create(&path, "Events", &SCHEMA, opts()).expect("create");
    let mut ctx = w.fill_context().expect("context");
    ctx.append_batch(&batch()).expect("append");
    ctx.finish().expect("finish");
    w.commit().expect("commit");
    check(&path);
}
