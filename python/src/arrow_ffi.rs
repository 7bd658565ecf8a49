//! Record batches across the Arrow C Data Interface, both ways, without copying their buffers: to pyarrow, and
//! from pyarrow's older `_export_to_c`; the checks of imported data (`struct_to_batch`). The Arrow PyCapsule
//! interface (capsules, streams, and the objects with `__arrow_c_array__` that `capsule::batch_from_pyarrow`
//! takes before trying `_export_to_c`) is `capsule`'s, which uses this file; this file uses no other of the
//! extension's Arrow files.

use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{Array, RecordBatch, StructArray};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Schema, SchemaRef};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use rntuple::Error;
use std::sync::Arc;

use crate::errors::{caught, OrRaise};

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
    let out = pa
        .getattr("RecordBatch")?
        .call_method1("_import_from_c", (&*array as *const FFI_ArrowArray as usize, &*schema as *const FFI_ArrowSchema as usize))
        .map_err(|e| refused(py, e))?;
    // pyarrow moved the release callbacks out; dropping the emptied structs frees only them.
    drop(array);
    drop(schema);
    Ok(out.unbind())
}

/// pyarrow's refusal of data it cannot import (a type nested deeper than its recursion limit of 64) as an
/// `UnsupportedError` (an `RNTupleError`), not pyarrow's `ArrowInvalid`.
fn refused(py: Python<'_>, e: PyErr) -> PyErr {
    crate::errors::to_py_err(py, Error::Unsupported(format!("pyarrow cannot import the data read: {}", e.value(py))))
}

/// A schema as a `pyarrow.Schema`.
pub(crate) fn schema_to_pyarrow(py: Python<'_>, schema: &SchemaRef) -> PyResult<PyObject> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref()).map_err(|e| Error::Internal(format!("exporting an Arrow schema: {e}"))).or_raise(py)?;
    let ffi = Box::new(ffi);
    let out =
        py.import("pyarrow")?.getattr("Schema")?.call_method1("_import_from_c", (&*ffi as *const FFI_ArrowSchema as usize,)).map_err(|e| refused(py, e))?;
    // pyarrow moved the release callback out.
    drop(ffi);
    Ok(out.unbind())
}

/// Takes a `pyarrow.RecordBatch` (a struct array: one row per entry, one child per field) through pyarrow's
/// older `_export_to_c`, without copying its buffers: what `capsule::batch_from_pyarrow` falls back to for an
/// object without `__arrow_c_array__`.
pub(crate) fn batch_from_export_to_c(obj: &Bound<'_, PyAny>) -> PyResult<RecordBatch> {
    let py = obj.py();
    if !obj.hasattr("_export_to_c")? {
        return Err(PyTypeError::new_err(format!(
            "expected a pyarrow.RecordBatch or an object with __arrow_c_array__ (the Arrow PyCapsule interface), got {}",
            obj.get_type().name()?
        )));
    }
    let mut array = Box::new(FFI_ArrowArray::empty());
    let mut schema = Box::new(FFI_ArrowSchema::empty());
    obj.call_method1("_export_to_c", (&mut *array as *mut FFI_ArrowArray as usize, &mut *schema as *mut FFI_ArrowSchema as usize))?;
    // SAFETY: pyarrow filled both structs following the C Data Interface; `from_ffi` takes the array (and
    // its release callback); `struct_to_batch` validates the layout.
    let data = caught(|| unsafe { from_ffi(*array, &schema) }.map_err(|e| Error::Invalid(format!("importing Arrow data: {e}")))).or_raise(py)?;
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(PyTypeError::new_err(format!("expected a record batch (an Arrow struct array), got Arrow type {}", data.data_type())));
    }
    struct_to_batch(data, !from_pyarrow(obj)).or_raise(py)
}

/// Whether `obj` is one of pyarrow's objects, whose exported data follow their types (checked only for buffer
/// sizes and offset bounds, as pyarrow checks what it imports; other producers' data are checked value by value).
pub(crate) fn from_pyarrow(obj: &Bound<'_, PyAny>) -> bool {
    obj.get_type().module().map(|m| m.to_string_lossy().starts_with("pyarrow.")).unwrap_or(false)
}

/// An imported struct array (one row per entry) as a record batch, after checking its buffers against its
/// type: their sizes and the bounds of offsets, and with `full` every value (offsets, UTF-8, dictionary keys:
/// data of a producer not known to follow the format); a struct with null rows is refused. Buffers not aligned
/// to their element type (numpy arrays unpickled from a byte stream, as Dask's workers receive partitions) are
/// copied into aligned ones first: Arrow's own arrays may only be read aligned.
pub(crate) fn struct_to_batch(mut data: ArrayData, full: bool) -> rntuple::Result<RecordBatch> {
    caught(|| {
        if !matches!(data.data_type(), DataType::Struct(_)) {
            return Err(Error::Invalid(format!("expected a record batch (an Arrow struct array), got Arrow type {}", data.data_type())));
        }
        data.align_buffers();
        let checked = if full { data.validate_full() } else { data.validate() };
        checked.map_err(|e| Error::Invalid(format!("the Arrow data do not follow their type: {e}")))?;
        let n = data.len();
        let sa = StructArray::from(data);
        if sa.null_count() > 0 {
            return Err(Error::Invalid("a record batch with null rows cannot be written".into()));
        }
        let (fields, columns, _) = sa.into_parts();
        let schema = Arc::new(Schema::new(fields));
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(n));
        RecordBatch::try_new_with_options(schema, columns, &opts).map_err(|e| Error::Invalid(format!("importing Arrow data: {e}")))
    })
}
