//! A writer's schema and its batches: JSON text of field name -> C++ type name (the CLI's
//! `import-json --schema`), an Arrow schema (`ArrowSchema`), and record batches moved in as
//! C `ArrowArray`s.

use crate::ffi_types::{array_ptr, schema_ptr, ArrowArray, ArrowSchema};
use crate::status::{CError, CResult};
use arrow_array::ffi::FFI_ArrowArray;
use arrow_array::{Array, RecordBatch, RecordBatchOptions, StructArray};
use arrow_schema::{DataType, Schema};
use rntuple::logical::typename::{parse, TypeExpr};

/// A writer's schema: (field name, type) pairs in order.
pub type FieldTypes = Vec<(String, TypeExpr)>;

/// A schema from JSON text: an object of field name -> C++ type name, in order.
pub fn schema_from_json(text: &str) -> CResult<FieldTypes> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| CError::invalid(format!("the schema is not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| CError::invalid("the schema must be a JSON object of field name -> C++ type name"))?;
    let mut pairs = Vec::with_capacity(obj.len());
    for (k, t) in obj {
        pairs.push((k.as_str(), t.as_str().ok_or_else(|| CError::invalid(format!("the schema's type of '{k}' must be a string")))?));
    }
    if pairs.is_empty() {
        return Err(CError::invalid("the schema has no field"));
    }
    pairs.into_iter().map(|(f, t)| Ok((f.to_string(), parse(t).map_err(|e| CError::invalid(format!("field '{f}': {e}")))?))).collect()
}

/// A schema from an Arrow schema (a struct, one member per field; nullable levels become
/// `std::optional`). The C schema is borrowed, not released.
pub unsafe fn schema_from_arrow(schema: *const ArrowSchema) -> CResult<FieldTypes> {
    if schema.is_null() {
        return Err(CError::null("schema"));
    }
    // SAFETY: not null; a valid ArrowSchema (the caller's contract).
    let ffi = unsafe { &*schema_ptr(schema) };
    let s = Schema::try_from(ffi)?;
    if s.fields().is_empty() {
        return Err(CError::invalid("the Arrow schema has no field"));
    }
    Ok(rntuple::convert::schema_from_arrow(&s)?)
}

/// Takes a C `ArrowArray` (a struct array: a record batch) described by `schema`: the array is
/// moved (its release callback is ours now, the caller's struct is marked released), the schema
/// borrowed.
pub unsafe fn import_batch(array: *mut ArrowArray, schema: *const ArrowSchema) -> CResult<RecordBatch> {
    if array.is_null() {
        return Err(CError::null("array"));
    }
    if schema.is_null() {
        return Err(CError::null("schema"));
    }
    // SAFETY: both are valid C data interface structs (the caller's contract); the array is moved
    // out and the caller's struct left released.
    let a = unsafe { std::ptr::replace(array_ptr(array), FFI_ArrowArray::empty()) };
    if a.is_released() {
        return Err(CError::invalid("the ArrowArray was released (or moved) already"));
    }
    let mut data = unsafe { arrow_array::ffi::from_ffi(a, &*schema_ptr(schema)) }?;
    // Buffers not aligned to their element type are copied into aligned ones: Arrow's arrays are read aligned.
    data.align_buffers();
    if !matches!(data.data_type(), DataType::Struct(_)) {
        return Err(CError::schema(format!("expected a struct array (a record batch), got Arrow type {}", data.data_type())));
    }
    let n = data.len();
    let sa = StructArray::from(data);
    if sa.null_count() > 0 {
        return Err(CError::invalid("a record batch with null rows cannot be written"));
    }
    let (fields, columns, _) = sa.into_parts();
    let opts = RecordBatchOptions::new().with_row_count(Some(n));
    Ok(RecordBatch::try_new_with_options(std::sync::Arc::new(Schema::new(fields)), columns, &opts)?)
}
