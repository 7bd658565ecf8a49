//! Dynamic values of the fields of an entry, converted from the Arrow arrays the reader builds.

use crate::error::{Error, Result};
use crate::logical::kind::{Kind, Scalar};
use crate::read::open::Reader;
use crate::value::Value;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};

impl Reader {
    /// Converts row `row` of `array` (as read for field `field`) into a dynamic value.
    pub fn value_at(&self, field: u32, array: &ArrayRef, row: usize) -> Result<Value> {
        let d = self.descriptor();
        let f = &d.fields[field as usize];
        let kind = self.kind(field).map_err(|e| Error::Unsupported(e.to_string()))?;
        if array.is_null(row) {
            return Ok(Value::Null);
        }
        Ok(match kind {
            Kind::Scalar(s) => match s {
                Scalar::Bool => Value::Bool(array.as_boolean().value(row)),
                Scalar::Char | Scalar::I8 => Value::Int(array.as_primitive::<Int8Type>().value(row) as i64),
                Scalar::Byte | Scalar::U8 => Value::UInt(array.as_primitive::<UInt8Type>().value(row) as u64),
                Scalar::I16 => Value::Int(array.as_primitive::<Int16Type>().value(row) as i64),
                Scalar::U16 => Value::UInt(array.as_primitive::<UInt16Type>().value(row) as u64),
                Scalar::I32 => Value::Int(array.as_primitive::<Int32Type>().value(row) as i64),
                Scalar::U32 => Value::UInt(array.as_primitive::<UInt32Type>().value(row) as u64),
                Scalar::I64 => Value::Int(array.as_primitive::<Int64Type>().value(row)),
                Scalar::U64 => Value::UInt(array.as_primitive::<UInt64Type>().value(row)),
                Scalar::F32 => Value::F32(array.as_primitive::<Float32Type>().value(row)),
                Scalar::F64 => Value::F64(array.as_primitive::<Float64Type>().value(row)),
            },
            Kind::String => Value::String(array.as_string::<i64>().value(row).to_string()),
            Kind::Streamer => self.streamer_value(field, array.as_binary::<i64>().value(row)),
            Kind::List => {
                let l = array.as_list::<i64>();
                let items = l.value(row);
                (0..items.len()).map(|i| self.value_at(f.children[0], &items, i)).collect::<Result<_>>().map(Value::List)?
            }
            Kind::RecordList => {
                let items = array.as_list::<i64>().value(row);
                let s = items.as_struct();
                let mut out = Vec::with_capacity(s.len());
                for i in 0..s.len() {
                    let mut members = Vec::with_capacity(f.children.len());
                    for (k, &c) in f.children.iter().enumerate() {
                        members.push((d.fields[c as usize].name.clone(), self.value_at(c, s.column(k), i)?));
                    }
                    out.push(Value::Record(members));
                }
                Value::List(out)
            }
            Kind::Map => {
                let m = array.as_map();
                let entries: ArrayRef = std::sync::Arc::new(m.value(row));
                (0..entries.len()).map(|i| self.value_at(f.children[0], &entries, i)).collect::<Result<_>>().map(Value::List)?
            }
            Kind::Optional | Kind::Wrapper => self.value_at(f.children[0], array, row)?,
            Kind::Array(_) | Kind::Bitset(_) => {
                let l = array.as_fixed_size_list();
                let items = l.value(row);
                if let Kind::Bitset(_) = kind {
                    let b = items.as_boolean();
                    Value::List((0..b.len()).map(|i| Value::Bool(b.value(i))).collect())
                } else {
                    (0..items.len()).map(|i| self.value_at(f.children[0], &items, i)).collect::<Result<_>>().map(Value::List)?
                }
            }
            Kind::Record | Kind::Tuple => {
                let s = array.as_struct();
                let mut members = Vec::with_capacity(f.children.len());
                for (i, &c) in f.children.iter().enumerate() {
                    members.push((d.fields[c as usize].name.clone(), self.value_at(c, s.column(i), row)?));
                }
                if *kind == Kind::Tuple {
                    Value::List(members.into_iter().map(|(_, v)| v).collect())
                } else {
                    Value::Record(members)
                }
            }
            Kind::Variant => {
                let u = array.as_union();
                let t = u.type_id(row);
                let off = u.value_offset(row);
                if t as usize >= f.children.len() {
                    Value::Null
                } else {
                    self.value_at(f.children[t as usize], u.child(t), off)?
                }
            }
            Kind::Cardinality(true) => Value::UInt(array.as_primitive::<UInt64Type>().value(row)),
            Kind::Cardinality(false) => Value::UInt(array.as_primitive::<UInt32Type>().value(row) as u64),
        })
    }

    /// Reads entries `start..stop` of the chosen top-level fields as dynamic values: one
    /// record per entry, keyed by field name in schema order.
    pub fn read_values(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<Vec<Value>> {
        // Streamer fields as bytes: each entry becomes its object below (`streamer_value`), with
        // its base classes and the actual class of each pointed-to object.
        let batch = self.read_batch_as(fields, start, stop, false)?;
        let ids: Vec<u32> =
            batch.schema().fields().iter().map(|fl| self.top_field_id(fl.name()).ok_or_else(|| Error::NotFound(fl.name().clone()))).collect::<Result<_>>()?;
        let mut out = Vec::with_capacity(batch.num_rows());
        for row in 0..batch.num_rows() {
            let mut rec = Vec::with_capacity(ids.len());
            for (i, &id) in ids.iter().enumerate() {
                rec.push((self.descriptor().fields[id as usize].name.clone(), self.value_at(id, batch.column(i), row)?));
            }
            out.push(Value::Record(rec));
        }
        Ok(out)
    }
}
