//! Record batches across the Arrow C Data Interface, both ways, without copying their buffers.

use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use rntuple::Error;
use std::sync::Arc;

use crate::errors::OrRaise;

/// Moves a record batch into a `pyarrow.RecordBatch` without copying its buffers.
pub(crate) fn batch_to_pyarrow(py: Python<'_>, batch: RecordBatch) -> PyResult<PyObject> {
    let n = batch.num_rows();
    let sa = StructArray::from(batch);
    if sa.len() != n {
        return Err(Error::Internal(format!("record batch of {n} rows became a struct array of {}", sa.len()))).or_raise(py);
    }
    let (array, schema) = to_ffi(&sa.into_data()).map_err(|e| Error::Internal(format!("exporting Arrow data: {e}"))).or_raise(py)?;
    let array = Box::new(array);
    let schema = Box::new(schema);
    let pa = py.import("pyarrow")?;
    let out =
        pa.getattr("RecordBatch")?.call_method1("_import_from_c", (&*array as *const FFI_ArrowArray as usize, &*schema as *const FFI_ArrowSchema as usize))?;
    // pyarrow moved the release callbacks out; dropping the emptied structs frees only them.
    drop(array);
    drop(schema);
    Ok(out.unbind())
}

/// Takes a `pyarrow.RecordBatch` (or anything with `_export_to_c` exporting a struct array)
/// without copying its buffers.
pub(crate) fn batch_from_pyarrow(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let py = obj.py();
    if !obj.hasattr("_export_to_c")? {
        return Err(PyTypeError::new_err(format!("expected a pyarrow.RecordBatch, got {}", obj.get_type().name()?)));
    }
    let mut array = Box::new(FFI_ArrowArray::empty());
    let mut schema = Box::new(FFI_ArrowSchema::empty());
    obj.call_method1("_export_to_c", (&mut *array as *mut FFI_ArrowArray as usize, &mut *schema as *mut FFI_ArrowSchema as usize))?;
    // SAFETY: pyarrow filled both structs following the C Data Interface; `from_ffi` takes the
    // array (and its release callback) and validates the layout against the schema.
    let data = unsafe { from_ffi(*array, &schema) }.map_err(|e| Error::Invalid(format!("importing Arrow data: {e}"))).or_raise(py)?;
    let n = data.len();
    if !matches!(data.data_type(), arrow_schema::DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!("expected a record batch (an Arrow struct array), got Arrow type {}", data.data_type())));
    }
    let sa = StructArray::from(data);
    if sa.null_count() > 0 {
        return Err(PyValueError::new_err("a record batch with null rows cannot be written"));
    }
    let (fields, columns, _) = sa.into_parts();
    let schema = Arc::new(arrow_schema::Schema::new(fields));
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
    RecordBatch::try_new_with_options(schema, columns, &opts).map_err(|e| Error::Invalid(format!("importing Arrow data: {e}"))).or_raise(py)
}
