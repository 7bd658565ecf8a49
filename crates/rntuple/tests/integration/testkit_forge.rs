//! `rntuple_testkit`'s forge: a forged file reads back, and survives disassembly and reassembly
//! (a changed count re-serializes with valid checksums); a directory listed twice.

use rntuple::format::descriptor::{ClusterDescriptor, Descriptor, Role};
use rntuple::primitives::column_type::ColumnType;
use rntuple::primitives::encode::PageValues;
use rntuple::storage::source::MemSource;
use rntuple::storage::tfile::RootFile;
use rntuple::RNTupleFile;
use rntuple_testkit::*;
use std::sync::Arc;

fn small() -> Vec<u8> {
    let mut d = Descriptor { name: "Events".into(), ..Default::default() };
    let v = push_field(&mut d, None, Role::Collection, "v", "std::vector<float>");
    let x = push_field(&mut d, Some(v), Role::Leaf, "_0", "float");
    push_column(&mut d, v, ColumnType::Index64);
    push_column(&mut d, x, ColumnType::Real32);
    let mut f = FileForge::new("t.root");
    let off = encode(ColumnType::Index64, PageValues::U64(&[1, 3])).unwrap();
    let vals = encode(ColumnType::Real32, PageValues::F32(&[1.0, 2.0, 3.0])).unwrap();
    let p0 = f.page(&off, 2, true);
    let p1 = f.page(&compress(&vals, 505).unwrap(), 3, true);
    d.clusters.push(ClusterDescriptor {
        id: 0,
        first_entry: 0,
        n_entries: 2,
        columns: vec![Some(column_range(0, 0, vec![p0])), Some(column_range(0, 505, vec![p1]))],
    });
    single_group(&mut d);
    let sub = f.directory(TOP, "dir").unwrap();
    f.add_ntuple(sub, &mut d, &NTupleOptions::default()).unwrap();
    f.finish().unwrap()
}

#[test]
fn forged_file_reads_and_round_trips() {
    let bytes = small();
    let file = RNTupleFile::from_bytes(bytes.clone()).unwrap();
    assert_eq!(file.names(), vec!["dir/Events".to_string()]);
    let r = file.reader("dir/Events").unwrap();
    let v = r.read_values(None, 0, 2).unwrap();
    assert_eq!(format!("{v:?}").matches("F32").count(), 3, "{v:?}");
    let mut parts = disassemble(&bytes).unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].dirs, vec!["dir".to_string()]);
    let again = reassemble(&parts).unwrap();
    let r2 = RNTupleFile::from_bytes(again).unwrap();
    assert_eq!(format!("{:?}", r2.reader("dir/Events").unwrap().read_values(None, 0, 2).unwrap()), format!("{v:?}"));
    // A changed count re-serializes with valid checksums: the reader sees the lie itself.
    parts[0].desc.clusters[0].n_entries = 1 << 40;
    parts[0].desc.cluster_groups[0].entry_span = 1 << 40;
    let lie = RNTupleFile::from_bytes(reassemble(&parts).unwrap()).unwrap();
    assert_eq!(lie.reader("dir/Events").unwrap().num_entries(), 1 << 40);
}

#[test]
fn directory_listed_twice() {
    let mut f = FileForge::new("t.root");
    let a = f.directory(TOP, "a").unwrap();
    f.list_directory_again(TOP, a, "b").unwrap();
    let bytes = f.finish().unwrap();
    let root = RootFile::open(Arc::new(MemSource(Arc::new(bytes)))).unwrap();
    assert_eq!(root.keys.len(), 2);
}
