//! Skims of inputs whose fields differ (`SkimMany::fill_missing`): the output holds every kept
//! field any input has, and an input's entries get the default value (zero, empty, an optional
//! without value, a class of defaults: `read::evolution::default_array`) of each field it lacks,
//! as ROOT's union merge fills the columns an input lacks. Types must agree where a field is
//! present (checked by the skim as for any multi-input skim).

use crate::error::{Error, Result};
use crate::logical::descriptor_types::field_type;
use crate::logical::typename::TypeExpr;
use crate::read::evolution::default_array;
use crate::read::reader::Reader;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{Field, Schema as ArrowSchema};
use std::sync::Arc;

/// The (name, type) of each field of a schema (`ops::select::Schema`).
type Schema = Vec<(String, TypeExpr)>;

/// The output schema of a skim of `readers` (named `inputs`): the top-level fields of the first
/// input, then those of each later input not seen before, in their order, each with the type of
/// the first input that has it; only the `fields` asked for (all when `None`), each of which
/// must be in some input.
pub(crate) fn union_schema(readers: &[(&Reader, &str)], fields: Option<&[String]>) -> Result<(Schema, Vec<String>)> {
    let mut schema: Schema = Vec::new();
    for (r, input) in readers {
        let d = r.descriptor();
        for t in d.top_level_fields() {
            let name = &d.fields[t as usize].name;
            if fields.is_some_and(|f| !f.contains(name)) || schema.iter().any(|(n, _)| n == name) {
                continue;
            }
            let ty = field_type(d, t, 0).map_err(|e| e.context(format!("skim: {input}: field '{name}'")))?;
            schema.push((name.clone(), ty));
        }
    }
    if let Some(want) = fields {
        if want.is_empty() {
            return Err(Error::Invalid("skim: no fields selected".into()));
        }
        if let Some(w) = want.iter().find(|w| !schema.iter().any(|(n, _)| n == *w)) {
            return Err(Error::Invalid(format!("skim: no input has a top-level field '{w}'")));
        }
        // In the order asked for when every field was found.
        schema.sort_by_key(|(n, _)| want.iter().position(|w| w == n));
    }
    let names = schema.iter().map(|(n, _)| n.clone()).collect();
    Ok((schema, names))
}

/// `batch` (the kept fields an input has, in the order of `schema`) with a column of defaults for
/// each field of `schema` it lacks, in `schema`'s order.
pub(crate) fn with_defaults(batch: &RecordBatch, schema: &Schema) -> Result<RecordBatch> {
    let have = batch.schema();
    if have.fields().len() == schema.len() {
        return Ok(batch.clone());
    }
    let n = batch.num_rows();
    let mut fields = Vec::with_capacity(schema.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.len());
    for (name, ty) in schema {
        match have.index_of(name) {
            Ok(i) => {
                fields.push(have.field(i).clone());
                columns.push(batch.column(i).clone());
            }
            Err(_) => {
                let a = default_array(name, ty, n)?;
                fields.push(Field::new(name, a.data_type().clone(), a.null_count() > 0));
                columns.push(a);
            }
        }
    }
    RecordBatch::try_new(Arc::new(ArrowSchema::new(fields)), columns).map_err(|e| Error::internal(format!("skim: filling missing fields: {e}")))
}
