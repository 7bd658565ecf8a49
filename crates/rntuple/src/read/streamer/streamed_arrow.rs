//! Streamer fields as Arrow arrays: the Arrow type of a class described by `TStreamerInfo`
//! records ([`object_type`]), and the array built from the objects `read::streamer::streamed_object`
//! deserializes ([`object_array`]), as uproot models the objects of a TTree.
//!
//! - a class is a struct of its members, the members of its base classes first and in place
//!   (flattened, as `TBufferJSON` and uproot show them; a member whose name a base class already
//!   used keeps the base's); `TObject` is `fUniqueID`, `fBits`; `TNamed` adds `fName`, `fTitle`;
//! - fundamental types as Arrow's (`Double32_t` as float64, `Float16_t` as float32), strings
//!   (`TString`, `std::string`, `char*`) as large UTF-8;
//! - fixed arrays as fixed-size lists (nested by their dimensions); variable-length arrays
//!   (`[fN]`) and sequences (`vector`, `list`, `set`, `deque`, ...) as large lists; maps as Arrow
//!   maps whose entries are `first`, `second`; a `std::pair` as a struct of `first`, `second`;
//! - a pointer as its declared class (null where the pointer is; an object of a derived class
//!   keeps the declared class's members).
//!
//! Every member and item is nullable: a pointer may be null anywhere, and an object of another
//! version of its class may lack a member (null). Pure: records and values in, types and arrays out.
//!
//! ```
//! use arrow_array::{cast::AsArray, types::Int32Type, Array};
//! use arrow_schema::DataType;
//! use rntuple::read::streamer::streamed_arrow::{object_array, object_type};
//! use rntuple::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo};
//! use rntuple::Value;
//! let member = |name: &str, ty: i32, type_name: &str| ElementInfo {
//!     class: ElementClass::BasicType, name: name.into(), title: String::new(), ty, size: 4,
//!     array_length: 0, dims: vec![], type_name: type_name.into(), base_version: 0, stl_type: 0,
//!     ctype: 0, count_name: String::new(), range: None,
//! };
//! let infos = [ClassInfo { name: "P".into(), version: 2, checksum: 1, elements: vec![member("x", 3, "int"), member("y", 5, "float")] }];
//! let t = object_type(&infos, "P")?;
//! let DataType::Struct(fields) = &t else { unreachable!() };
//! assert_eq!(fields.iter().map(|f| f.name().as_str()).collect::<Vec<_>>(), ["x", "y"]);
//! let p = Value::Record(vec![("x".into(), Value::Int(7)), ("y".into(), Value::F32(1.5))]);
//! let a = object_array(&[&p, &Value::Null], &t)?;
//! assert_eq!(a.as_struct().column(0).as_primitive::<Int32Type>().value(0), 7);
//! assert!(a.is_null(1));
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::streamed_types::{basic_from_name, Basic, Stl, TypeName};
use crate::read::arrow::assemble::scalar_type;
use crate::read::streamer::streamed_object::{basic_of_code, class_of, CHAR_STAR};
use crate::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo};
use crate::value::Value;
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{BooleanBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields};
use std::sync::Arc;

/// Deepest nesting of classes and collections a type may have: a class that contains itself
/// (through a pointer) has no finite Arrow type.
const MAX_TYPE_DEPTH: usize = 32;

/// The Arrow type of objects of `class` described by `infos`; an error when a record is missing,
/// a member's type is not supported, or the class contains itself.
pub fn object_type(infos: &[ClassInfo], class: &str) -> Result<DataType> {
    Types { infos, depth: 0 }.class(class)
}

struct Types<'a> {
    infos: &'a [ClassInfo],
    depth: usize,
}

impl Types<'_> {
    fn nested<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.depth += 1;
        if self.depth > MAX_TYPE_DEPTH {
            return Err(Error::Unsupported(format!("{what} nests more than {MAX_TYPE_DEPTH} levels (a class that contains itself has no Arrow type)")));
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn class(&mut self, class: &str) -> Result<DataType> {
        match class {
            "TObject" => return Ok(struct_of(tobject_fields())),
            "TNamed" => {
                let mut f = tobject_fields();
                f.push(member("fName", DataType::LargeUtf8));
                f.push(member("fTitle", DataType::LargeUtf8));
                return Ok(struct_of(f));
            }
            "TString" | "string" | "std::string" => return Ok(DataType::LargeUtf8),
            _ => {}
        }
        let Some(info) = latest(self.infos, class) else {
            if let Ok(t) = TypeName::parse(class)
                && matches!(t.name.as_str(), "pair" | "std::pair")
                && t.args.len() == 2
            {
                return self.typed(&t);
            }
            return Err(Error::Unsupported(format!("no StreamerInfo record describes class {class}")));
        };
        self.nested(class, |s| {
            let mut fields: Vec<Field> = Vec::with_capacity(info.elements.len());
            for e in &info.elements {
                let t = s.element(e).map_err(|err| err.context(format!("member {} ({}) of class {class}", e.name, e.type_name)))?;
                if e.class == ElementClass::Base {
                    if let DataType::Struct(base) = t {
                        for f in base.iter() {
                            push_unique(&mut fields, f.as_ref().clone());
                        }
                    }
                } else {
                    push_unique(&mut fields, member(&e.name, t));
                }
            }
            Ok(struct_of(fields))
        })
    }

    fn element(&mut self, e: &ElementInfo) -> Result<DataType> {
        match e.class {
            ElementClass::Base => return self.class(&e.name),
            ElementClass::StlString => return Ok(DataType::LargeUtf8),
            ElementClass::Stl => {
                if e.ty == 365 || e.stl_type == 365 {
                    return Ok(DataType::LargeUtf8);
                }
                let t = TypeName::parse(&e.type_name).map_err(Error::Unsupported)?;
                return self.typed(&t);
            }
            _ => {}
        }
        let n = usize::try_from(e.array_length).unwrap_or(0);
        let ty = crate::read::streamer::streamed_object::streamed_type(e);
        Ok(match ty {
            1..=19 => basic_code(ty)?,
            21..=39 => fixed(basic_code(ty - 20)?, n, &e.dims)?,
            41..=59 => list_of(basic_code(ty - 40)?),
            61 | 62 | 63 | 66 | 67 | 68 | 64 | 69 => self.class(class_of(&e.type_name))?,
            81 | 82 | 83 | 88 | 84 | 89 => fixed(self.class(class_of(&e.type_name))?, n, &e.dims)?,
            65 => DataType::LargeUtf8,
            85 => fixed(DataType::LargeUtf8, n, &e.dims)?,
            501 => list_of(self.class(class_of(&e.type_name))?),
            _ => return Err(Error::Unsupported(format!("element type {ty} ({:?})", e.class))),
        })
    }

    /// The type named `t` inside a collection.
    fn typed(&mut self, t: &TypeName) -> Result<DataType> {
        if let Some(b) = basic_from_name(&t.name) {
            return Ok(basic(b));
        }
        match t.name.as_str() {
            "string" | "std::string" | "TString" => Ok(DataType::LargeUtf8),
            _ if t.stl().is_some() => self.nested(&t.full, |s| match t.stl() {
                Some(Stl::Map) => Ok(list_of(struct_of(vec![member("first", s.typed(&t.args[0])?), member("second", s.typed(&t.args[1])?)]))),
                _ => Ok(list_of(s.typed(&t.args[0])?)),
            }),
            "pair" | "std::pair" if t.args.len() == 2 && latest(self.infos, &t.full).is_none() => {
                self.nested(&t.full, |s| Ok(struct_of(vec![member("first", s.typed(&t.args[0])?), member("second", s.typed(&t.args[1])?)])))
            }
            _ => self.class(&t.full),
        }
    }
}

/// The record of `class` with the highest version (the class as a program reads it today).
fn latest<'a>(infos: &'a [ClassInfo], class: &str) -> Option<&'a ClassInfo> {
    let strip = |n: &str| n.replace("std::", "").replace(' ', "");
    let want = strip(class);
    infos.iter().filter(|i| i.name == class || strip(&i.name) == want).max_by_key(|i| i.version)
}

fn tobject_fields() -> Vec<Field> {
    vec![member("fUniqueID", DataType::UInt32), member("fBits", DataType::UInt32)]
}

fn member(name: &str, t: DataType) -> Field {
    Field::new(name, t, true)
}

fn push_unique(fields: &mut Vec<Field>, f: Field) {
    if !fields.iter().any(|g| g.name() == f.name()) {
        fields.push(f);
    }
}

fn struct_of(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

fn list_of(item: DataType) -> DataType {
    DataType::LargeList(Arc::new(member("item", item)))
}

/// A fixed array of `n` items (flat), or nested by `dims` (outermost first) when it has several.
fn fixed(item: DataType, n: usize, dims: &[i32]) -> Result<DataType> {
    let sizes: Vec<usize> = if dims.len() > 1 { dims.iter().map(|&d| usize::try_from(d).unwrap_or(1).max(1)).collect() } else { vec![n] };
    let mut t = item;
    for &d in sizes.iter().rev() {
        let d = i32::try_from(d).map_err(|_| Error::Unsupported(format!("fixed array of {d} items")))?;
        t = DataType::FixedSizeList(Arc::new(member("item", t)), d);
    }
    Ok(t)
}

fn basic_code(ty: i32) -> Result<DataType> {
    if ty == CHAR_STAR {
        return Ok(DataType::LargeUtf8);
    }
    basic_of_code(ty).map(basic).ok_or_else(|| Error::Unsupported(format!("basic type code {ty}")))
}

fn basic(b: Basic) -> DataType {
    match b {
        Basic::Scalar(s) => scalar_type(s),
        Basic::Float16 => DataType::Float32,
        Basic::Double32 => DataType::Float64,
    }
}

static NULL: Value = Value::Null;

/// The array of type `t` (from [`object_type`]) holding `values` (objects as
/// `read::streamer::streamed_object` gives them; `Value::Null` for a null entry).
pub fn object_array(values: &[&Value], t: &DataType) -> Result<ArrayRef> {
    build(values, t).map_err(|e| e.context(format!("objects as Arrow {t}")))
}

fn build(values: &[&Value], t: &DataType) -> Result<ArrayRef> {
    Ok(match t {
        DataType::Boolean => Arc::new(values.iter().map(|v| conv(v, t, |v| if let Value::Bool(b) = v { Some(*b) } else { None })).collect::<Result<BooleanArray>>()?),
        DataType::Int8 => prim::<Int8Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::Int16 => prim::<Int16Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::Int32 => prim::<Int32Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::Int64 => prim::<Int64Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::UInt8 => prim::<UInt8Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::UInt16 => prim::<UInt16Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::UInt32 => prim::<UInt32Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::UInt64 => prim::<UInt64Type>(values, t, |v| int(v).and_then(|i| i.try_into().ok()))?,
        DataType::Float32 => prim::<Float32Type>(values, t, |v| float(v).map(|x| x as f32))?,
        DataType::Float64 => prim::<Float64Type>(values, t, float)?,
        DataType::LargeUtf8 => {
            Arc::new(values.iter().map(|v| conv(v, t, |v| if let Value::String(s) = v { Some(s.as_str()) } else { None })).collect::<Result<LargeStringArray>>()?)
        }
        DataType::LargeList(item) => {
            let (offsets, items, nulls) = lists(values, t)?;
            Arc::new(LargeListArray::try_new(item.clone(), OffsetBuffer::new(ScalarBuffer::from(offsets)), build(&items, item.data_type())?, nulls)?)
        }
        DataType::FixedSizeList(item, n) => {
            let n_items = usize::try_from(*n).unwrap_or(0);
            let mut items: Vec<&Value> = Vec::with_capacity(values.len().saturating_mul(n_items));
            let mut valid = Vec::with_capacity(values.len());
            for v in values {
                match v {
                    Value::Null => {
                        items.extend(std::iter::repeat_n(&NULL, n_items));
                        valid.push(false);
                    }
                    Value::List(l) if l.len() == n_items => {
                        items.extend(l.iter());
                        valid.push(true);
                    }
                    other => return Err(mismatch(other, t)),
                }
            }
            Arc::new(FixedSizeListArray::try_new(item.clone(), *n, build(&items, item.data_type())?, nulls_of(valid))?)
        }
        DataType::Struct(fields) => {
            let (children, nulls) = members(values, fields, t)?;
            Arc::new(StructArray::try_new(fields.clone(), children, nulls)?)
        }
        other => return Err(Error::internal(format!("no objects of Arrow type {other}"))),
    })
}

/// The offsets, items and validity of lists of `values`.
fn lists<'v>(values: &[&'v Value], t: &DataType) -> Result<(Vec<i64>, Vec<&'v Value>, Option<NullBuffer>)> {
    let mut offsets = Vec::with_capacity(values.len() + 1);
    offsets.push(0i64);
    let mut items: Vec<&Value> = Vec::new();
    let mut valid = Vec::with_capacity(values.len());
    for v in values {
        match v {
            Value::Null => valid.push(false),
            Value::List(l) => {
                items.extend(l.iter());
                valid.push(true);
            }
            other => return Err(mismatch(other, t)),
        }
        offsets.push(items.len() as i64);
    }
    Ok((offsets, items, nulls_of(valid)))
}

/// The member arrays of structs of `fields` holding `values`: records by member name (base
/// classes flattened), pairs (lists of two) by position.
fn members(values: &[&Value], fields: &Fields, t: &DataType) -> Result<(Vec<ArrayRef>, Option<NullBuffer>)> {
    let mut columns: Vec<Vec<&Value>> = fields.iter().map(|_| Vec::with_capacity(values.len())).collect();
    let mut valid = Vec::with_capacity(values.len());
    let mut flat: Vec<(&str, &Value)> = Vec::new();
    for v in values {
        match v {
            Value::Null => {
                valid.push(false);
                columns.iter_mut().for_each(|c| c.push(&NULL));
            }
            Value::Record(m) => {
                valid.push(true);
                flat.clear();
                flatten(m, &mut flat);
                for (k, f) in fields.iter().enumerate() {
                    let hit = flat.get(k).filter(|(n, _)| *n == f.name()).or_else(|| flat.iter().find(|(n, _)| *n == f.name()));
                    columns[k].push(hit.map_or(&NULL, |(_, x)| *x));
                }
            }
            Value::List(items) if items.len() == fields.len() => {
                valid.push(true);
                for (c, x) in columns.iter_mut().zip(items) {
                    c.push(x);
                }
            }
            other => return Err(mismatch(other, t)),
        }
    }
    let children = fields.iter().zip(&columns).map(|(f, c)| build(c, f.data_type()).map_err(|e| e.context(format!("member {}", f.name())))).collect::<Result<Vec<_>>>()?;
    Ok((children, nulls_of(valid)))
}

/// The members of a record with those of its base classes (`:_0`, `:_1`, ...) in place.
fn flatten<'v>(members: &'v [(String, Value)], out: &mut Vec<(&'v str, &'v Value)>) {
    for (name, v) in members {
        match v {
            Value::Record(base) if name.starts_with(":_") => flatten(base, out),
            _ => out.push((name.as_str(), v)),
        }
    }
}

fn nulls_of(valid: Vec<bool>) -> Option<NullBuffer> {
    if valid.iter().all(|&b| b) {
        None
    } else {
        Some(NullBuffer::new(BooleanBuffer::from(valid)))
    }
}

fn int(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        Value::Bool(b) => Some(i128::from(*b)),
        _ => None,
    }
}

fn float(v: &Value) -> Option<f64> {
    match v {
        Value::F32(x) => Some(f64::from(*x)),
        Value::F64(x) => Some(*x),
        _ => None,
    }
}

/// One optional value: `Value::Null` is null, anything `f` cannot convert an error.
fn conv<'v, T>(v: &'v Value, t: &DataType, f: impl Fn(&'v Value) -> Option<T>) -> Result<Option<T>> {
    match v {
        Value::Null => Ok(None),
        v => f(v).map(Some).ok_or_else(|| mismatch(v, t)),
    }
}

fn prim<P: ArrowPrimitiveType>(values: &[&Value], t: &DataType, f: impl Fn(&Value) -> Option<P::Native>) -> Result<ArrayRef> {
    let a: PrimitiveArray<P> = values.iter().map(|v| conv(v, t, &f)).collect::<Result<_>>()?;
    Ok(Arc::new(a))
}

fn mismatch(v: &Value, t: &DataType) -> Error {
    let mut s = v.to_json().to_string();
    if s.len() > 80 {
        let cut = (0..=80).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        s.truncate(cut);
        s.push_str("...");
    }
    Error::Invalid(format!("value {s} does not fit Arrow type {t}"))
}

#[cfg(test)]
#[path = "streamed_arrow_tests.rs"]
mod tests;
