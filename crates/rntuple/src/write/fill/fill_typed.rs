//! The typed fill path: Rust values (`#[derive(Record)]` structs, primitives, `Vec`, `Option`,
//! tuples) written straight into the column buffers through [`crate::write::fill::typed`]'s writers,
//! which reach the columns through the [`TypedCols`] access implemented here.

use crate::error::{Error, Result};
use crate::logical::typename::TypeExpr;
use crate::primitives::element::{BufElement, ScalarSlice, SliceVisitor};
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::cluster::sealed::ClusterOut;
use crate::write::fill::typed::{Entry, RecordWriter, TypedCols};

impl<O: ClusterOut> ClusterBuilder<O> {
    /// Fills one typed entry (see [`crate::write::fill::typed`]).
    pub fn fill_typed<E: Entry>(&mut self, e: &E) -> Result<()> {
        let id = std::any::TypeId::of::<E>();
        if self.typed_ok != Some(id) {
            let want = E::fields();
            if want != self.exprs {
                let show = |f: &[(String, TypeExpr)]| {
                    f.iter().map(|(n, t)| format!("{n}: {}", if t.name().is_empty() { "record".to_string() } else { t.name() })).collect::<Vec<_>>().join(", ")
                };
                return Err(Error::Invalid(format!(
                    "the Rust type {} has the fields ({}) but the RNTuple has ({})",
                    std::any::type_name::<E>(),
                    show(&want),
                    show(&self.exprs)
                )));
            }
            self.typed_ok = Some(id);
        }
        let children = std::mem::take(&mut self.top_plans);
        let r = {
            let mut w = RecordWriter::top(self, &children);
            e.put_fields(&mut w).and_then(|_| w.finish())
        };
        self.top_plans = children;
        r?;
        self.entries_filled(1)
    }
}

/// Appends a typed slice to one column of a builder.
struct Extend<'b, O: ClusterOut> {
    b: &'b mut ClusterBuilder<O>,
    col: usize,
}

impl<O: ClusterOut> SliceVisitor for Extend<'_, O> {
    type Out = Result<()>;
    fn visit<T: BufElement>(self, values: &[T]) -> Result<()> {
        // The type is checked even for no values, so that a mismatch is found on the first entry.
        if T::vec_mut(&mut self.b.cols.cols[self.col].buf).is_none() {
            return Err(Error::internal("values for a column of another type"));
        }
        self.b.cols.extend(self.col, values, &mut self.b.out)
    }
}

impl<O: ClusterOut> TypedCols for ClusterBuilder<O> {
    fn extend_scalars(&mut self, col: usize, v: ScalarSlice<'_>) -> Result<()> {
        v.visit(Extend { b: self, col })
    }
    fn col_len(&self, col: usize) -> u64 {
        self.cols.cols[col].in_cluster
    }
    fn push_index(&mut self, col: usize, end: u64) -> Result<()> {
        self.cols.push_index(col, end, &mut self.out)
    }
    fn counts(&mut self) -> &mut [u64] {
        &mut self.counts
    }
}
