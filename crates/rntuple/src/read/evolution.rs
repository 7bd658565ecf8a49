//! Schema evolution on read: a field read into a requested type other than the one it was
//! written with, by the rules of ROOT 6.40's fields (measured with ROOT 6.40 by reading each
//! on-disk type into each requested type, `tests/cross/test_schema_evolution.py`):
//!
//! * integers, `bool` and `char` read as any other of them (ROOT's integral fields take every
//!   integer column); a value that does not fit the requested type is an error naming the field,
//!   and any non-zero integer reads as `true`;
//! * `float` and `double` read as each other (narrowing included);
//! * integers never read as floating point, nor floating point as integers;
//! * `std::vector<T>` and `ROOT::RVec<T>` read as each other, the items converted as above; an
//!   optional, a `std::array` of the same size and a pair or tuple of the same arity likewise;
//! * a class reads as another version of the same class: the requested members are matched by
//!   name, a member missing on disk is default-constructed (zero, empty string or collection, a
//!   record of defaults), an on-disk member the requested class lacks is skipped;
//! * anything else must have the same type (after normalizing the spelling:
//!   [`crate::logical::typename::parse`]) and is refused with an error naming the field, the
//!   on-disk type and the requested type.
//!
//! ```
//! use rntuple::logical::typename::parse;
//! use rntuple::read::evolution::check;
//! check("x", &parse("float")?, &parse("double")?)?;
//! check("v", &parse("std::vector<float>")?, &parse("ROOT::RVec<double>")?)?;
//! let e = check("n", &parse("std::int32_t")?, &parse("double")?).unwrap_err();
//! assert!(e.to_string().contains("field 'n'") && e.to_string().contains("std::int32_t"), "{e}");
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::logical::typename::{ClassDef, TypeExpr};
use crate::value::Value;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::RecordBatchOptions;
use arrow_array::*;
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field};
use std::sync::Arc;

/// Whether a scalar is an integral type (bool and char included): ROOT reads integral fields from
/// each other, floating-point ones from each other, never across. `std::byte` reads as itself only.
fn family(s: Scalar) -> u8 {
    match s {
        Scalar::F32 | Scalar::F64 => 1,
        Scalar::Byte => 2,
        _ => 0,
    }
}

/// Whether two collection names are spellings of one container for reading (`std::vector` and
/// `ROOT::RVec`, which ROOT reads as each other).
fn same_collection(a: &str, b: &str) -> bool {
    let vec_like = |n: &str| matches!(n, "std::vector" | "ROOT::VecOps::RVec" | "ROOT::RVec");
    a == b || (vec_like(a) && vec_like(b))
}

fn refuse(path: &str, on_disk: &TypeExpr, want: &TypeExpr) -> Error {
    let name = |t: &TypeExpr| match t.name() {
        n if n.is_empty() => "an untyped record".to_string(),
        n => n,
    };
    Error::Invalid(format!("field '{path}': cannot read on-disk type '{}' as the requested type '{}' (ROOT 6.40 refuses it too)", name(on_disk), name(want)))
}

/// Checks that a field of type `on_disk` can be read as `want` (see the module's rules); the error
/// names the field `path`, the on-disk type and the requested type.
///
/// ```
/// use rntuple::logical::typename::{parse, ClassDef, TypeExpr};
/// use rntuple::read::evolution::check;
/// check("n", &parse("std::int32_t")?, &parse("Long64_t")?)?; // integers as integers
/// check("b", &parse("std::uint8_t")?, &parse("bool")?)?;
/// assert!(check("x", &parse("double")?, &parse("std::int64_t")?).is_err()); // never across
/// // another version of a class, with a member added
/// let v1 = ClassDef::new("C").member("a", parse("float")?);
/// let v2 = ClassDef::new("C").version(2).member("a", parse("double")?).member("b", parse("std::string")?);
/// check("obj", &TypeExpr::Class(Box::new(v1)), &TypeExpr::Class(Box::new(v2)))?;
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn check(path: &str, on_disk: &TypeExpr, want: &TypeExpr) -> Result<()> {
    use TypeExpr as T;
    let ok = match (on_disk, want) {
        (T::Scalar(a, _), T::Scalar(b, _)) => family(*a) == family(*b) && (family(*a) != 2 || a == b),
        (T::Collection(na, a), T::Collection(nb, b)) if same_collection(na, nb) => return check(path, a, b),
        (T::Optional(na, a), T::Optional(nb, b)) if na == nb => return check(path, a, b),
        (T::Array(a, n), T::Array(b, m)) if n == m => return check(path, a, b),
        (T::Tuple(na, a), T::Tuple(nb, b)) if na == nb && a.len() == b.len() => {
            return a.iter().zip(b).enumerate().try_for_each(|(i, (x, y))| check(&format!("{path}._{i}"), x, y));
        }
        (T::Class(a), T::Class(b)) if a.name == b.name => return check_class(path, a, b),
        (T::Record(a), T::Record(b)) => return check_members(path, a, b),
        (a, b) => a.name() == b.name() && a == b,
    };
    if ok {
        Ok(())
    } else {
        Err(refuse(path, on_disk, want))
    }
}

fn check_members(path: &str, on_disk: &[(String, TypeExpr)], want: &[(String, TypeExpr)]) -> Result<()> {
    for (name, w) in want {
        if let Some((_, d)) = on_disk.iter().find(|(n, _)| n == name) {
            check(&format!("{path}.{name}"), d, w)?;
        }
    }
    Ok(())
}

fn check_class(path: &str, on_disk: &ClassDef, want: &ClassDef) -> Result<()> {
    check_members(path, &class_members(on_disk), &class_members(want))
}

/// A class's subfields as (name, type): the bases `:_0`, `:_1`, … then the members.
fn class_members(c: &ClassDef) -> Vec<(String, TypeExpr)> {
    let bases = c.bases.iter().enumerate().map(|(i, b)| (format!(":_{i}"), TypeExpr::Class(Box::new(b.clone()))));
    bases.chain(c.members.iter().cloned()).collect()
}

/// The Arrow array of a field read as `on_disk`, converted to `want` (checked with [`check`]):
/// numbers converted (an integer that does not fit is an error naming the field), collections and
/// classes converted item by item and member by member, missing members filled with defaults.
///
/// ```
/// use arrow_array::{Array, ArrayRef, Float32Array, Float64Array};
/// use rntuple::logical::typename::parse;
/// use rntuple::read::evolution::evolve_array;
/// use std::sync::Arc;
/// let on_disk: ArrayRef = Arc::new(Float32Array::from(vec![1.5, 2.5]));
/// let got = evolve_array("x", &on_disk, &parse("float")?, &parse("double")?)?;
/// assert_eq!(got.as_any().downcast_ref::<Float64Array>().unwrap().values(), &[1.5, 2.5]);
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn evolve_array(path: &str, a: &ArrayRef, on_disk: &TypeExpr, want: &TypeExpr) -> Result<ArrayRef> {
    check(path, on_disk, want)?;
    evolve(path, a, on_disk, want)
}

fn evolve(path: &str, a: &ArrayRef, on_disk: &TypeExpr, want: &TypeExpr) -> Result<ArrayRef> {
    use TypeExpr as T;
    if on_disk == want {
        return Ok(a.clone());
    }
    match (on_disk, want) {
        (T::Scalar(x, _), T::Scalar(y, _)) if x == y => Ok(a.clone()),
        (T::Scalar(_, _), T::Scalar(y, _)) => scalars(path, a, *y),
        (T::Collection(_, x), T::Collection(_, y)) | (T::Array(x, _), T::Array(y, _)) => items(path, a, x, y),
        (T::Optional(_, x), T::Optional(_, y)) => evolve(path, a, x, y),
        (T::Tuple(_, x), T::Tuple(_, y)) => {
            let d: Vec<(String, TypeExpr)> = x.iter().enumerate().map(|(i, t)| (format!("_{i}"), t.clone())).collect();
            let w: Vec<(String, TypeExpr)> = y.iter().enumerate().map(|(i, t)| (format!("_{i}"), t.clone())).collect();
            members(path, a, &d, &w)
        }
        (T::Class(x), T::Class(y)) => members(path, a, &class_members(x), &class_members(y)),
        (T::Record(x), T::Record(y)) => members(path, a, x, y),
        _ => Err(refuse(path, on_disk, want)),
    }
}

fn mismatch(path: &str, a: &ArrayRef) -> Error {
    Error::Internal(format!("field '{path}': unexpected Arrow layout {} for its type", a.data_type()))
}

/// A list or fixed-size list with its items converted.
fn items(path: &str, a: &ArrayRef, x: &TypeExpr, y: &TypeExpr) -> Result<ArrayRef> {
    let item = |f: &Arc<Field>, v: &ArrayRef| Arc::new(Field::new(f.name(), v.data_type().clone(), f.is_nullable()));
    match a.data_type() {
        DataType::LargeList(f) => {
            let l = a.as_list::<i64>();
            let v = evolve(path, l.values(), x, y)?;
            Ok(Arc::new(LargeListArray::try_new(item(f, &v), l.offsets().clone(), v, l.nulls().cloned())?))
        }
        DataType::FixedSizeList(f, n) => {
            let l = a.as_fixed_size_list();
            let v = evolve(path, l.values(), x, y)?;
            Ok(Arc::new(FixedSizeListArray::try_new(item(f, &v), *n, v, l.nulls().cloned())?))
        }
        _ => Err(mismatch(path, a)),
    }
}

/// A struct with the requested members, matched by name: converted when on disk, else defaults.
fn members(path: &str, a: &ArrayRef, on_disk: &[(String, TypeExpr)], want: &[(String, TypeExpr)]) -> Result<ArrayRef> {
    let DataType::Struct(fields) = a.data_type() else { return Err(mismatch(path, a)) };
    let s = a.as_struct();
    let mut out_fields = Vec::with_capacity(want.len());
    let mut out = Vec::with_capacity(want.len());
    for (name, w) in want {
        let p = format!("{path}.{name}");
        let on = on_disk.iter().find(|(n, _)| n == name).and_then(|(_, d)| fields.iter().position(|f| f.name() == name).map(|i| (i, d)));
        let (col, nullable) = match on {
            Some((i, d)) => (evolve(&p, s.column(i), d, w)?, fields[i].is_nullable()),
            None => (default_array(&p, w, a.len())?, matches!(w, TypeExpr::Optional(..))),
        };
        out_fields.push(Field::new(name.clone(), col.data_type().clone(), nullable || col.null_count() > 0));
        out.push(col);
    }
    if out.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(a.len(), s.nulls().cloned())));
    }
    Ok(Arc::new(StructArray::try_new(out_fields.into(), out, s.nulls().cloned())?))
}

/// The integer value of item `i` of an integral (or bool) array, `None` for a null.
fn int_at(a: &ArrayRef, i: usize) -> Option<i128> {
    if a.is_null(i) {
        return None;
    }
    Some(match a.data_type() {
        DataType::Boolean => i128::from(a.as_boolean().value(i)),
        DataType::Int8 => a.as_primitive::<Int8Type>().value(i).into(),
        DataType::UInt8 => a.as_primitive::<UInt8Type>().value(i).into(),
        DataType::Int16 => a.as_primitive::<Int16Type>().value(i).into(),
        DataType::UInt16 => a.as_primitive::<UInt16Type>().value(i).into(),
        DataType::Int32 => a.as_primitive::<Int32Type>().value(i).into(),
        DataType::UInt32 => a.as_primitive::<UInt32Type>().value(i).into(),
        DataType::Int64 => a.as_primitive::<Int64Type>().value(i).into(),
        DataType::UInt64 => a.as_primitive::<UInt64Type>().value(i).into(),
        _ => return None,
    })
}

fn ints<T: ArrowPrimitiveType>(path: &str, a: &ArrayRef, to: Scalar) -> Result<ArrayRef>
where
    T::Native: TryFrom<i128>,
{
    let mut out: Vec<Option<T::Native>> = Vec::with_capacity(a.len());
    for i in 0..a.len() {
        out.push(match int_at(a, i) {
            None => None,
            Some(v) => Some(T::Native::try_from(v).map_err(|_| Error::Invalid(format!("field '{path}': value {v} out of range for {}", to.type_name())))?),
        });
    }
    Ok(Arc::new(out.into_iter().collect::<PrimitiveArray<T>>()))
}

fn scalars(path: &str, a: &ArrayRef, to: Scalar) -> Result<ArrayRef> {
    match to {
        Scalar::F32 | Scalar::F64 => {
            let v: Vec<f64> = match a.data_type() {
                DataType::Float32 => a.as_primitive::<Float32Type>().values().iter().map(|x| f64::from(*x)).collect(),
                DataType::Float64 => a.as_primitive::<Float64Type>().values().to_vec(),
                _ => return Err(mismatch(path, a)),
            };
            Ok(match to {
                Scalar::F32 => Arc::new(Float32Array::new(v.iter().map(|x| *x as f32).collect(), a.nulls().cloned())),
                _ => Arc::new(Float64Array::new(v.into(), a.nulls().cloned())),
            })
        }
        Scalar::Bool => Ok(Arc::new((0..a.len()).map(|i| int_at(a, i).map(|v| v != 0)).collect::<BooleanArray>())),
        Scalar::Char | Scalar::I8 => ints::<Int8Type>(path, a, to),
        Scalar::U8 | Scalar::Byte => ints::<UInt8Type>(path, a, to),
        Scalar::I16 => ints::<Int16Type>(path, a, to),
        Scalar::U16 => ints::<UInt16Type>(path, a, to),
        Scalar::I32 => ints::<Int32Type>(path, a, to),
        Scalar::U32 => ints::<UInt32Type>(path, a, to),
        Scalar::I64 => ints::<Int64Type>(path, a, to),
        Scalar::U64 => ints::<UInt64Type>(path, a, to),
    }
}

/// `n` default-constructed values of type `t`, as ROOT gives a member missing on disk: zeros,
/// `false`, empty strings and collections, empty optionals, records of defaults.
///
/// ```
/// use arrow_array::Array;
/// use rntuple::logical::typename::parse;
/// let a = rntuple::read::evolution::default_array("v", &parse("std::vector<float>")?, 2)?;
/// assert_eq!((a.len(), a.null_count()), (2, 0));
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn default_array(path: &str, t: &TypeExpr, n: usize) -> Result<ArrayRef> {
    use TypeExpr as T;
    let empty_offsets = || OffsetBuffer::<i64>::new_zeroed(n);
    Ok(match t {
        T::Scalar(s, _) => {
            let zeros: ArrayRef = Arc::new(Int8Array::from(vec![0i8; n]));
            if family(*s) == 1 {
                let f: ArrayRef = Arc::new(Float64Array::from(vec![0.0; n]));
                scalars(path, &f, *s)?
            } else {
                scalars(path, &zeros, *s)?
            }
        }
        T::String => Arc::new(LargeStringArray::new(empty_offsets(), Vec::<u8>::new().into(), None)),
        T::Collection(_, item) => {
            let v = default_array(path, item, 0)?;
            Arc::new(LargeListArray::try_new(Arc::new(Field::new("_0", v.data_type().clone(), false)), empty_offsets(), v, None)?)
        }
        T::Array(item, m) => {
            let v = default_array(path, item, n * (*m as usize))?;
            Arc::new(FixedSizeListArray::try_new(Arc::new(Field::new("_0", v.data_type().clone(), false)), *m as i32, v, None)?)
        }
        T::Optional(_, item) => {
            let v = default_array(path, item, n)?;
            arrow_array::make_array(v.to_data().into_builder().nulls(Some(NullBuffer::new_null(n))).build()?)
        }
        T::Class(c) => record_defaults(path, &class_members(c), n)?,
        T::Record(m) => record_defaults(path, m, n)?,
        T::Tuple(_, parts) => record_defaults(path, &parts.iter().enumerate().map(|(i, t)| (format!("_{i}"), t.clone())).collect::<Vec<_>>(), n)?,
        other => return Err(Error::Unsupported(format!("field '{path}': no default value for a missing member of type '{}'", other.name()))),
    })
}

fn record_defaults(path: &str, members: &[(String, TypeExpr)], n: usize) -> Result<ArrayRef> {
    if members.is_empty() {
        return Ok(Arc::new(StructArray::new_empty_fields(n, None)));
    }
    let mut fields = Vec::new();
    let mut cols = Vec::new();
    for (name, t) in members {
        let c = default_array(&format!("{path}.{name}"), t, n)?;
        fields.push(Field::new(name.clone(), c.data_type().clone(), c.null_count() > 0));
        cols.push(c);
    }
    Ok(Arc::new(StructArray::try_new(fields.into(), cols, None)?))
}

/// One scalar value read as `to` by the rules above (for typed reads, [`crate::read::FromValue`]):
/// integers and bools into any integral type (range-checked), floats into floats; `None` when the
/// rules refuse the conversion, an error when the value does not fit.
///
/// ```
/// use rntuple::{logical::Scalar, read::evolution::scalar_value, Value};
/// assert_eq!(scalar_value("n", &Value::Int(-7), Scalar::I64).unwrap()?, Value::Int(-7));
/// assert!(scalar_value("n", &Value::Int(-7), Scalar::U8).unwrap().is_err()); // out of range
/// assert!(scalar_value("n", &Value::Int(1), Scalar::F64).is_none()); // refused
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn scalar_value(path: &str, v: &Value, to: Scalar) -> Option<Result<Value>> {
    let int = match v {
        Value::Bool(b) => i128::from(*b),
        Value::Int(i) => i128::from(*i),
        Value::UInt(u) => i128::from(*u),
        Value::F32(x) if family(to) == 1 => return Some(Ok(if to == Scalar::F32 { Value::F32(*x) } else { Value::F64(f64::from(*x)) })),
        Value::F64(x) if family(to) == 1 => return Some(Ok(if to == Scalar::F32 { Value::F32(*x as f32) } else { Value::F64(*x) })),
        _ => return None,
    };
    if family(to) == 1 {
        return None;
    }
    let range = |lo: i128, hi: i128| (lo..=hi).contains(&int);
    let fits = match to {
        Scalar::Bool => return Some(Ok(Value::Bool(int != 0))),
        Scalar::Char | Scalar::I8 => range(i8::MIN.into(), i8::MAX.into()),
        Scalar::U8 | Scalar::Byte => range(0, u8::MAX.into()),
        Scalar::I16 => range(i16::MIN.into(), i16::MAX.into()),
        Scalar::U16 => range(0, u16::MAX.into()),
        Scalar::I32 => range(i32::MIN.into(), i32::MAX.into()),
        Scalar::U32 => range(0, u32::MAX.into()),
        Scalar::I64 => range(i64::MIN.into(), i64::MAX.into()),
        _ => range(0, u64::MAX.into()),
    };
    if !fits {
        return Some(Err(Error::Invalid(format!("field '{path}': value {int} out of range for {}", to.type_name()))));
    }
    Some(Ok(if int < 0 { Value::Int(int as i64) } else { Value::UInt(int as u64) }))
}

impl crate::read::reader::Reader {
    /// [`crate::read::reader::Reader::read_batch`] with some top-level fields read into requested
    /// types (`types`: field name and type, see the module's rules); the other fields as stored.
    /// A field named in `types` must be among those read. The batch's schema has the requested
    /// types.
    ///
    /// ```
    /// use rntuple::logical::typename::parse;
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-evolve-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let b = r.read_batch_with_types(None, &[("x", parse("double")?)], 0, 3)?;
    /// assert_eq!(b.schema().field(0).data_type(), &arrow_schema::DataType::Float64);
    /// assert!(r.read_batch_with_types(None, &[("x", parse("std::int32_t")?)], 0, 3).is_err());
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_batch_with_types(&self, fields: Option<&[&str]>, types: &[(&str, TypeExpr)], start: u64, stop: u64) -> Result<RecordBatch> {
        self.read_batch_ranges_with_types(fields, types, &[(start, stop)])
    }

    /// [`Self::read_batch_with_types`] of the entries of several ranges, one after the other
    /// (`Reader::read_batch_ranges`).
    pub(crate) fn read_batch_ranges_with_types(&self, fields: Option<&[&str]>, types: &[(&str, TypeExpr)], ranges: &[(u64, u64)]) -> Result<RecordBatch> {
        let mut on_disk = Vec::with_capacity(types.len());
        for (name, want) in types {
            let id = self.resolve_fields(Some(&[name]))?[0];
            let t = crate::logical::descriptor_types::field_type(&self.desc, id, 0)?;
            check(name, &t, want)?;
            on_disk.push(t);
        }
        let batch = self.read_batch_ranges(fields, ranges)?;
        if types.is_empty() {
            return Ok(batch);
        }
        let schema = batch.schema();
        let mut cols = batch.columns().to_vec();
        let mut fs: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        for ((name, want), t) in types.iter().zip(&on_disk) {
            let i = schema.index_of(name).map_err(|_| Error::Invalid(format!("field '{name}' has a requested type but is not among the fields read")))?;
            cols[i] = evolve(name, &cols[i], t, want)?;
            fs[i] = Field::new(*name, cols[i].data_type().clone(), fs[i].is_nullable() || cols[i].null_count() > 0);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(Arc::new(arrow_schema::Schema::new(fs)), cols, &opts)?)
    }
}
