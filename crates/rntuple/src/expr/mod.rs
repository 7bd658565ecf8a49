//! Selection expressions: the `--where` and `--filter` of `rntuple skim`, and `where=`/`filters=`
//! of the Python `rntuple.skim`.
//!
//! The text is parsed by the [`evalexpr`] crate (a maintained expression parser with the usual
//! precedence, `&&`/`||`/`!`, comparisons, arithmetic and function calls); its operator tree is
//! turned into an `Expr` (`parse`) and evaluated here column-wise over Arrow record batches
//! (`Evaluator`), because a skim needs vectorized evaluation over collections, which evalexpr's
//! own scalar evaluator does not do.
//!
//! Names are fields of the input: a top-level field (`nMuon`, `MET_pt`), a list field's elements
//! (`Jet_pt` of a `std::vector<float>`), or a member of a record field or of the records of a list
//! (`Jet.pt` of a `std::vector<Jet>`). Numbers are compared as `f64`. Values of the elements of a
//! collection combine with per-entry values (broadcast), and reduce to per-entry values with the
//! functions (`count(Jet_pt > 25) >= 4`, `any(abs(Muon_eta) < 2.4)`): `count`, `sum`, `any`, `all`, `max`, `min`, `abs`, `sqrt`, `exp`, `log`.
//! Missing values of optional fields are NaN (every comparison with them is false).
//!
//! ```
//! use rntuple::expr::Selection;
//! use rntuple::arrow::array::{Float32Array, LargeListArray, RecordBatch, UInt32Array};
//! use rntuple::arrow::datatypes::Float32Type;
//! use std::sync::Arc;
//! let pt = LargeListArray::from_iter_primitive::<Float32Type, _, _>(vec![
//!     Some(vec![Some(30.0), Some(10.0)]), Some(vec![Some(5.0)]), Some(vec![Some(40.0), Some(50.0)]),
//! ]);
//! let batch = RecordBatch::try_from_iter([
//!     ("nJet", Arc::new(UInt32Array::from(vec![2, 1, 2])) as _),
//!     ("Jet_pt", Arc::new(pt) as _),
//! ])?;
//! let sel = Selection::new(Some("any(Jet_pt > 25)"), &[("Jet".into(), "Jet_pt > 25".into())])?;
//! let out = sel.apply(&batch)?;
//! assert_eq!(out.num_rows(), 2); // the second entry has no jet above 25
//! let n = out.column(0).as_any().downcast_ref::<UInt32Array>().unwrap();
//! assert_eq!(n.values().to_vec(), vec![1, 2]); // nJet follows the filter
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod eval;
mod parse;
mod select;
mod values;

pub use select::{apply_masks, Filter, Masks, Selection};
// The parser and evaluator behind a selection: public with the `unstable` feature only.
#[cfg(feature = "unstable")]
pub use {
    eval::{Evaluator, FUNCTIONS},
    parse::{parse, BinOp, Expr},
    select::collection_of,
    values::{Collection, Values},
};
#[cfg(not(feature = "unstable"))]
#[allow(unused_imports)]
pub(crate) use {
    eval::{Evaluator, FUNCTIONS},
    parse::{parse, BinOp, Expr},
    select::collection_of,
    values::{Collection, Values},
};
