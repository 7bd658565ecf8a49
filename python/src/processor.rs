//! Chains and joins (`rntuple.chain`, `rntuple.join`): `NativeProcessor`, the native part of
//! `rntuple._join.Join` and `rntuple._chain.Chain`, over the core's `dataset::Join` (a chain is a
//! join without friends). Inputs come as `(location, RNTuple name or None)` pairs, globs already
//! expanded by the Python side; data leave as `pyarrow.RecordBatch`es, read with the GIL released.

use pyo3::prelude::*;
use rntuple::dataset::{Chain, How, Join};
use std::sync::Arc;

use crate::arrow_ffi::batch_to_pyarrow;
use crate::errors::{unblocked, OrRaise};

type Inputs = Vec<(String, Option<String>)>;

/// A join of a primary chain with friend chains (or a chain alone).
#[pyclass(module = "rntuple._rntuple", frozen)]
struct NativeProcessor {
    join: Arc<Join>,
}

#[pymethods]
impl NativeProcessor {
    /// `primary`: the primary chain's inputs; `friends`: `(name or None, inputs)`, a friend without a
    /// name called by its RNTuple's name; `on`: index fields (empty: aligned); `how`: "left"/"inner";
    /// `missing`: "error" (inputs of the primary chain must have the same fields) or "none" (a field
    /// some of them lack is null in their entries: `Chain::open_pairs_allowing_missing`).
    #[new]
    #[pyo3(signature = (primary, friends=Vec::new(), on=Vec::new(), how="left", threads=None, missing="error"))]
    fn new(
        py: Python<'_>,
        primary: Inputs,
        friends: Vec<(Option<String>, Inputs)>,
        on: Vec<String>,
        how: &str,
        threads: Option<usize>,
        missing: &str,
    ) -> PyResult<Self> {
        let how: How = how.parse().or_raise(py)?;
        let allow_missing = match missing {
            "error" => false,
            "none" => true,
            other => return Err(pyo3::exceptions::PyValueError::new_err(format!("missing must be \"error\" or \"none\", got {other:?}"))),
        };
        let join = unblocked(py, move || {
            let mut p = if allow_missing { Chain::open_pairs_allowing_missing(&primary)? } else { Chain::open_pairs(&primary)? };
            if let Some(t) = threads {
                p.set_threads(t);
            }
            let mut fs = Vec::with_capacity(friends.len());
            for (name, inputs) in &friends {
                let mut c = Chain::open_pairs(inputs)?;
                if let Some(t) = threads {
                    c.set_threads(t);
                }
                fs.push((name.clone().unwrap_or_else(|| c.name().to_string()), c));
            }
            let on: Vec<&str> = on.iter().map(String::as_str).collect();
            Join::new(p, fs, &on, how)
        })
        .or_raise(py)?;
        Ok(NativeProcessor { join: Arc::new(join) })
    }

    /// Entries of the primary chain.
    #[getter]
    fn num_entries(&self) -> u64 {
        self.join.num_entries()
    }

    /// `(name, ROOT type name)` of every field: the primary's, then `FRIEND.field`.
    fn fields(&self) -> Vec<(String, String)> {
        self.join.fields()
    }

    /// The friends' names.
    fn friend_names(&self) -> Vec<String> {
        self.join.friend_names().into_iter().map(str::to_string).collect()
    }

    /// `(location, RNTuple name, entries)` of each primary input.
    fn primary_inputs(&self) -> Vec<(String, String, u64)> {
        self.join.primary().inputs()
    }

    /// Bytes held by the friends' indices.
    fn index_bytes(&self) -> u64 {
        self.join.index_bytes()
    }

    /// Cluster-aligned `(start, stop)` ranges of at least `min_entries` entries.
    #[pyo3(signature = (min_entries=0))]
    fn parts(&self, min_entries: u64) -> Vec<(u64, u64)> {
        self.join.parts(min_entries).into_iter().map(|r| (r.start, r.end)).collect()
    }

    /// The fields (all when None) of primary entries `start..stop` as a `pyarrow.RecordBatch`.
    #[pyo3(signature = (fields, start, stop))]
    fn read(&self, py: Python<'_>, fields: Option<Vec<String>>, start: u64, stop: u64) -> PyResult<PyObject> {
        let j = self.join.clone();
        let batch = unblocked(py, move || {
            let names: Option<Vec<&str>> = fields.as_ref().map(|v| v.iter().map(String::as_str).collect());
            j.read_batch(names.as_deref(), start, stop)
        })
        .or_raise(py)?;
        batch_to_pyarrow(py, batch)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeProcessor>()
}
