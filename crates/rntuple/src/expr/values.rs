//! The operands of an expression: a field of a batch as numbers or booleans, one per entry or
//! one per element of a collection.

use crate::error::{Error, Result};
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;
use std::sync::Arc;

/// The elements of a collection, entry by entry: entry `i` holds the elements
/// `offsets[i]..offsets[i + 1]`.
#[derive(Debug)]
pub struct Collection {
    /// The collection's field name (for messages).
    pub name: String,
    /// `n_entries + 1` offsets, the first 0.
    pub offsets: Vec<usize>,
}

impl Collection {
    /// Elements of all entries.
    pub fn elements(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// Whether `other` has the same elements per entry.
    pub fn same_shape(&self, other: &Collection) -> bool {
        self.offsets == other.offsets
    }
}

/// A value of an expression over a batch.
#[derive(Debug, Clone)]
pub enum Values {
    /// One number for all.
    Num(f64),
    /// One boolean for all.
    Bool(bool),
    /// A number per entry.
    Nums(Arc<Vec<f64>>),
    /// A boolean per entry.
    Bools(Arc<Vec<bool>>),
    /// A number per element of a collection.
    ElemNums(Arc<Collection>, Arc<Vec<f64>>),
    /// A boolean per element of a collection.
    ElemBools(Arc<Collection>, Arc<Vec<bool>>),
}

impl Values {
    /// `"number"`, `"boolean"`, `"number per element of Jet"`, … for messages.
    pub fn describe(&self) -> String {
        match self {
            Values::Num(_) | Values::Nums(_) => "a number".into(),
            Values::Bool(_) | Values::Bools(_) => "a boolean".into(),
            Values::ElemNums(c, _) => format!("a number per element of '{}'", c.name),
            Values::ElemBools(c, _) => format!("a boolean per element of '{}'", c.name),
        }
    }
}

/// The field `name` of `batch` as [`Values`]: a top-level field of numbers or booleans, a
/// top-level list of them (its elements), a member of a top-level record (`Muon.charge`) or a
/// member of the records of a top-level list (`Jet.pt`). Missing values (optional fields) are
/// NaN, or false for booleans. `collections` caches the collections already made, so that two
/// fields of one list share theirs.
pub fn field_values(batch: &RecordBatch, name: &str, collections: &mut Vec<Arc<Collection>>) -> Result<Values> {
    let schema = batch.schema();
    let (array, member): (&ArrayRef, Option<&str>) = match schema.index_of(name) {
        Ok(i) => (batch.column(i), None),
        Err(_) => {
            let Some((top, member)) = name.split_once('.') else {
                return Err(unknown(batch, name));
            };
            let i = schema.index_of(top).map_err(|_| unknown(batch, name))?;
            (batch.column(i), Some(member))
        }
    };
    match array.data_type() {
        DataType::List(_) | DataType::LargeList(_) => {
            let (offsets, values) = list_parts(array)?;
            let coll = collection(name.split('.').next().unwrap_or(name), offsets, collections);
            let values = match member {
                None => values,
                Some(m) => struct_member(&values, m, name)?,
            };
            match scalars(&values, name)? {
                Scalars::Nums(v) => Ok(Values::ElemNums(coll, Arc::new(v))),
                Scalars::Bools(v) => Ok(Values::ElemBools(coll, Arc::new(v))),
            }
        }
        _ => {
            let values = match member {
                None => array.clone(),
                Some(m) => struct_member(array, m, name)?,
            };
            match scalars(&values, name)? {
                Scalars::Nums(v) => Ok(Values::Nums(Arc::new(v))),
                Scalars::Bools(v) => Ok(Values::Bools(Arc::new(v))),
            }
        }
    }
}

/// The collection `name` of `batch` (for `count(Jet)`): the list field `name`, else the first
/// list field named `name_*` (NanoAOD's flat layout).
pub fn list_collection(batch: &RecordBatch, name: &str, collections: &mut Vec<Arc<Collection>>) -> Result<Option<Arc<Collection>>> {
    let schema = batch.schema();
    let is_list = |t: &DataType| matches!(t, DataType::List(_) | DataType::LargeList(_));
    let prefix = format!("{name}_");
    let found = match schema.index_of(name) {
        Ok(i) => Some(i).filter(|&i| is_list(schema.field(i).data_type())),
        Err(_) => schema.fields().iter().position(|f| f.name().starts_with(&prefix) && is_list(f.data_type())),
    };
    let Some(i) = found else { return Ok(None) };
    let array = batch.column(i);
    let (offsets, _) = list_parts(array)?;
    Ok(Some(collection(name, offsets, collections)))
}

fn collection(name: &str, offsets: Vec<usize>, collections: &mut Vec<Arc<Collection>>) -> Arc<Collection> {
    if let Some(c) = collections.iter().find(|c| c.name == name && c.offsets == offsets) {
        return c.clone();
    }
    let c = Arc::new(Collection { name: name.to_string(), offsets });
    collections.push(c.clone());
    c
}

fn unknown(batch: &RecordBatch, name: &str) -> Error {
    let names: Vec<String> = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
    Error::Invalid(format!("no field '{name}' (the fields are: {})", names.join(", ")))
}

/// The offsets (rebased to 0) and the elements of a list array.
pub(crate) fn list_parts(array: &ArrayRef) -> Result<(Vec<usize>, ArrayRef)> {
    let (raw, values): (Vec<usize>, &ArrayRef) = match array.data_type() {
        DataType::List(_) => {
            let l = array.as_list::<i32>();
            (l.value_offsets().iter().map(|&o| o.max(0) as usize).collect(), l.values())
        }
        DataType::LargeList(_) => {
            let l = array.as_list::<i64>();
            (l.value_offsets().iter().map(|&o| o.max(0) as usize).collect(), l.values())
        }
        other => return Err(Error::Invalid(format!("not a list: {other}"))),
    };
    let first = raw.first().copied().unwrap_or(0);
    let last = raw.last().copied().unwrap_or(0);
    if last < first || last > values.len() {
        return Err(Error::Invalid(format!("list offsets {first}..{last} beyond its {} elements", values.len())));
    }
    let offsets = raw.iter().map(|&o| o.saturating_sub(first)).collect();
    Ok((offsets, values.slice(first, last - first)))
}

fn struct_member(array: &ArrayRef, member: &str, name: &str) -> Result<ArrayRef> {
    let DataType::Struct(_) = array.data_type() else {
        return Err(Error::Invalid(format!("field '{name}': '{}' is not a record", name.split('.').next().unwrap_or(name))));
    };
    let s = array.as_struct();
    s.column_by_name(member).cloned().ok_or_else(|| {
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        Error::Invalid(format!("no field '{name}' (the members are: {})", names.join(", ")))
    })
}

enum Scalars {
    Nums(Vec<f64>),
    Bools(Vec<bool>),
}

fn scalars(a: &ArrayRef, name: &str) -> Result<Scalars> {
    macro_rules! nums {
        ($t:ty) => {{
            let p = a.as_primitive::<$t>();
            Scalars::Nums((0..p.len()).map(|i| if p.is_null(i) { f64::NAN } else { p.value(i) as f64 }).collect())
        }};
    }
    Ok(match a.data_type() {
        DataType::Boolean => {
            let b = a.as_boolean();
            Scalars::Bools((0..b.len()).map(|i| !b.is_null(i) && b.value(i)).collect())
        }
        DataType::Int8 => nums!(Int8Type),
        DataType::Int16 => nums!(Int16Type),
        DataType::Int32 => nums!(Int32Type),
        DataType::Int64 => nums!(Int64Type),
        DataType::UInt8 => nums!(UInt8Type),
        DataType::UInt16 => nums!(UInt16Type),
        DataType::UInt32 => nums!(UInt32Type),
        DataType::UInt64 => nums!(UInt64Type),
        DataType::Float32 => nums!(Float32Type),
        DataType::Float64 => nums!(Float64Type),
        DataType::Float16 => {
            let p = a.as_primitive::<Float16Type>();
            Scalars::Nums((0..p.len()).map(|i| if p.is_null(i) { f64::NAN } else { p.value(i).to_f64() }).collect())
        }
        other => return Err(Error::Invalid(format!("field '{name}' holds {other}, not numbers or booleans"))),
    })
}
