//! Chains over inputs whose fields differ ([`crate::dataset::Chain::from_readers_allowing_missing`]):
//! a field an input lacks is read as nulls of the type the other inputs give it.

use crate::error::{Error, Result};
use crate::read::reader::Reader;
use crate::value::Value;
use arrow_array::{new_null_array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{DataType, Field, Schema};
use std::sync::Arc;

/// Refuses a field whose type in `reader` differs from its type in an earlier input
/// (`earlier`: their locations and readers).
pub(super) fn check_types<'a>(earlier: impl IntoIterator<Item = (&'a str, &'a Reader)>, location: &str, reader: &Reader) -> Result<()> {
    let types = |r: &Reader| -> Vec<(String, String)> { r.fields().iter().map(|f| (f.name.clone(), r.display_type(f.id))).collect() };
    let mine = types(reader);
    for (other, r) in earlier {
        for (name, ty) in types(r) {
            if let Some((_, t)) = mine.iter().find(|(n, t)| *n == name && *t != ty) {
                return Err(Error::Invalid(format!("chain: field '{name}' is {t} in {location} but {ty} in {other}")));
            }
        }
    }
    Ok(())
}

/// The Arrow type of top-level field `name` in the first of `readers` that has it.
fn arrow_type_of(readers: &[&Reader], name: &str) -> Result<DataType> {
    for r in readers {
        if let Some(f) = r.fields().iter().find(|f| f.name == name) {
            return r.arrow_type(f.id);
        }
    }
    Err(Error::NotFound(format!("chain: no input has a field '{name}'")))
}

/// Entries `start..stop` of `reader` (local numbers) with the fields `names`, those it lacks as
/// nulls of the type the first of `all` (the chain's inputs) that has them gives them.
pub(super) fn read_with_nulls(all: &[&Reader], reader: &Reader, names: &[&str], start: u64, stop: u64) -> Result<RecordBatch> {
    let have = reader.fields();
    let present: Vec<&str> = names.iter().copied().filter(|n| have.iter().any(|f| f.name == *n)).collect();
    let batch = reader.read_batch(Some(&present), start, stop)?;
    let rows = batch.num_rows();
    let mut fields = Vec::with_capacity(names.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(names.len());
    for name in names {
        match batch.schema().index_of(name) {
            Ok(i) => {
                fields.push(batch.schema().field(i).clone().with_nullable(true));
                columns.push(batch.column(i).clone());
            }
            Err(_) => {
                let t = arrow_type_of(all, name)?;
                fields.push(Field::new(*name, t.clone(), true));
                columns.push(new_null_array(&t, rows));
            }
        }
    }
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &opts)?)
}

/// Entries `start..stop` of `reader` as records of the fields `names`, those it lacks as nulls.
pub(super) fn values_with_nulls(reader: &Reader, names: &[&str], start: u64, stop: u64) -> Result<Vec<Value>> {
    let have = reader.fields();
    let present: Vec<&str> = names.iter().copied().filter(|n| have.iter().any(|f| f.name == *n)).collect();
    let values = if present.is_empty() {
        (start..stop.min(reader.num_entries())).map(|_| Value::Record(Vec::new())).collect()
    } else {
        reader.read_values(Some(&present), start, stop)?
    };
    Ok(values
        .into_iter()
        .map(|v| {
            let Value::Record(mut m) = v else { return v };
            let mut out = Vec::with_capacity(names.len());
            for n in names {
                let x = m.iter().position(|(k, _)| k == n).map(|i| m.swap_remove(i).1).unwrap_or(Value::Null);
                out.push((n.to_string(), x));
            }
            Value::Record(out)
        })
        .collect())
}
