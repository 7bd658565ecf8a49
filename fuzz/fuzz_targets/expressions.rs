//! Fuzz target: selection expressions (`skim --where/--filter`, user text). Parsing and evaluating
//! any text over a small batch (scalars, lists of different sizes, a list of records, an empty
//! list) must never panic: it gives masks of the right lengths or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::arrow::array::{Array, ArrayRef, Float32Array, Int32Array, LargeListArray, RecordBatch, StructArray, UInt32Array};
use rntuple::arrow::buffer::OffsetBuffer;
use rntuple::arrow::datatypes::{DataType, Field, Float32Type};
use rntuple::expr::Selection;
use std::sync::Arc;

fn batch() -> RecordBatch {
    let pt = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![Some(30.0), Some(f32::NAN)]), Some(vec![]), Some(vec![Some(5.0)])]);
    let eta = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![Some(0.1), Some(2.0)]), Some(vec![]), Some(vec![Some(-1.0)])]);
    let mu = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![Some(vec![]), Some(vec![Some(26.0), Some(1.0)]), Some(vec![])]);
    let rec = StructArray::from(vec![
        (Arc::new(Field::new("pt", DataType::Float32, false)), Arc::new(Float32Array::from(vec![1.0, 2.0, 3.0])) as ArrayRef),
        (Arc::new(Field::new("q", DataType::Int32, false)), Arc::new(Int32Array::from(vec![1, -1, 1])) as ArrayRef),
    ]);
    let item = Arc::new(Field::new("_0", rec.data_type().clone(), false));
    let el = LargeListArray::new(item, OffsetBuffer::from_lengths([0, 3, 0]), Arc::new(rec), None);
    RecordBatch::try_from_iter([
        ("event", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        ("nJet", Arc::new(UInt32Array::from(vec![2, 0, 1])) as ArrayRef),
        ("Jet_pt", Arc::new(pt) as ArrayRef),
        ("Jet_eta", Arc::new(eta) as ArrayRef),
        ("Muon_pt", Arc::new(mu) as ArrayRef),
        ("El", Arc::new(el) as ArrayRef),
    ])
    .expect("a valid batch")
}

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let b = batch();
    // As an entry condition, and as a filter of each collection.
    for filters in [vec![], vec![("Jet".to_string(), s.to_string())], vec![("El".to_string(), s.to_string())]] {
        let where_ = if filters.is_empty() { Some(s) } else { None };
        let Ok(sel) = Selection::new(where_, &filters) else { continue };
        if let Ok(out) = sel.apply(&b) {
            assert!(out.num_rows() <= b.num_rows());
            assert_eq!(out.num_columns(), b.num_columns());
        }
    }
});
