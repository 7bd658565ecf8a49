//! `rntuple_testkit`'s forge: a forged file reads back, and survives disassembly and reassembly
//! (a changed count re-serializes with valid checksums); a directory listed twice.

use rntuple::format::descriptor::{ClusterDescriptor, Descriptor, Role};
use rntuple::primitives::column_type::ColumnType;
use rntuple::primitives::encode::PageValues;
use rntuple::storage::container::tfile::RootFile;
use rntuple::storage::local::source::MemSource;
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

/// A quantized column whose bit width or range is impossible (0, 64 or 255 bits; a NaN bound) is an
/// error wherever it is read: through its own field and through a projected field aliasing it,
/// never values decoded as if it were valid.
#[test]
fn impossible_quantized_columns_are_errors_through_alias_fields_too() {
    use rntuple::logical::typename::{parse, TypeExpr};
    use rntuple::write::{ColumnOptions, FloatRepr, Projection, WriteOptions, Writer};
    use rntuple::Value;
    let path = std::env::temp_dir().join(format!("rntuple-quant-alias-{}.root", std::process::id()));
    let muon = TypeExpr::Record(vec![("pt".into(), parse("float").unwrap())]);
    let schema = [("Muon".to_string(), TypeExpr::Collection("std::vector".into(), Box::new(muon)))];
    let opts = WriteOptions {
        projections: vec![Projection::Member { name: "Muon_pt".into(), collection: "Muon".into(), member: "pt".into() }],
        columns: ColumnOptions::new().with("Muon._0.pt", FloatRepr::Quantized { min: 0.0, max: 100.0, bits: 12 }),
        ..Default::default()
    };
    let mut w = Writer::create_with_types(&path, "Events", &schema, opts).unwrap();
    let mu = |pt: f32| Value::Record(vec![("pt".into(), Value::F32(pt))]);
    w.fill(&Value::Record(vec![("Muon".into(), Value::List(vec![mu(30.5), mu(4.0)]))])).unwrap();
    w.commit().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let valid = RNTupleFile::from_bytes(bytes.clone()).unwrap().reader("Events").unwrap();
    assert_eq!(valid.read_values(Some(&["Muon_pt"]), 0, 1).unwrap()[0].to_json()["Muon_pt"].as_array().unwrap().len(), 2);
    let quant = ColumnType::Real32Quant.to_u16();
    type Range = Option<(f64, f64)>;
    let lies: [(&str, Option<u16>, Range); 4] =
        [("0 bits", Some(0), None), ("64 bits", Some(64), None), ("255 bits", Some(255), None), ("a NaN bound", None, Some((f64::NAN, 100.0)))];
    for (what, bits, range) in lies {
        let mut parts = disassemble(&bytes).unwrap();
        let col = parts[0].desc.columns.iter_mut().find(|c| c.column_type == quant).expect("a quantized column");
        if let Some(b) = bits {
            col.bits_on_storage = b;
        }
        if let Some(r) = range {
            col.value_range = Some(r);
        }
        let r = RNTupleFile::from_bytes(reassemble(&parts).unwrap()).unwrap().reader("Events").unwrap();
        for field in ["Muon_pt", "Muon"] {
            let e = r.read_values(Some(&[field]), 0, 1).expect_err(&format!("{what}: {field} read as if valid"));
            assert!(e.to_string().contains("Real32Quant"), "{what}: {field}: {e}");
            assert!(r.read_batch(Some(&[field]), 0, 1).is_err(), "{what}: {field} as Arrow");
        }
    }
}
