//! Python objects -> library values: rows in the JSON form of `rntuple dump` -> [`Value`]s, and field types
//! and schemas given in Python (ROOT type names, untyped records and collections) -> [`TypeExpr`]s.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use rntuple::logical::typename::{self, TypeExpr};
use rntuple::Value;

use crate::errors::OrRaise;

const MAX_VALUE_DEPTH: usize = 256;
const MAX_TYPE_DEPTH: usize = 64;

/// Converts a Python object in the JSON form of `rntuple dump` into a dynamic value.
pub(crate) fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_VALUE_DEPTH {
        return Err(PyValueError::new_err(format!("value nested more than {MAX_VALUE_DEPTH} levels deep")));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Int(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::UInt(u));
        }
        return Err(PyValueError::new_err(format!("integer {obj} does not fit 64 bits")));
    }
    if let Ok(f) = obj.downcast::<PyFloat>() {
        return Ok(Value::F64(f.value()));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut m = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("record keys must be strings, got {k:?}")))?;
            m.push((k, to_value(&v, depth + 1)?));
        }
        return Ok(Value::Record(m));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        return Ok(Value::List(l.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>()?));
    }
    if let Ok(t) = obj.downcast::<PyTuple>() {
        return Ok(Value::List(t.iter().map(|x| to_value(&x, depth + 1)).collect::<PyResult<_>>()?));
    }
    if let Ok(b) = obj.downcast::<PyBytes>() {
        return Ok(Value::Bytes(b.as_bytes().to_vec()));
    }
    // numpy scalars and arrays, awkward records and lists: their Python form.
    if obj.hasattr("tolist")? {
        let plain = obj.call_method0("tolist")?;
        if !plain.is(obj) {
            return to_value(&plain, depth + 1);
        }
    }
    if obj.hasattr("to_list")? {
        return to_value(&obj.call_method0("to_list")?, depth + 1);
    }
    if obj.hasattr("items")? && obj.hasattr("keys")? {
        let d = PyDict::new(obj.py());
        for item in obj.call_method0("items")?.try_iter()? {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            d.set_item(k, v)?;
        }
        return to_value(d.as_any(), depth + 1);
    }
    if let Ok(it) = obj.try_iter() {
        let mut out = Vec::new();
        for x in it {
            out.push(to_value(&x?, depth + 1)?);
        }
        return Ok(Value::List(out));
    }
    Err(PyTypeError::new_err(format!("cannot write a Python {} ({obj:.100})", obj.get_type().name()?)))
}

/// Converts a sequence of rows (dicts) into values, naming the entry that cannot be converted.
pub(crate) fn rows_to_values(rows: &Bound<'_, PyAny>, first_entry: u64) -> PyResult<Vec<Value>> {
    let mut out = Vec::new();
    for (i, row) in rows.try_iter()?.enumerate() {
        let row = row?;
        let v = to_value(&row, 0).map_err(|e| PyValueError::new_err(format!("entry {}: {}", first_entry + i as u64, e)))?;
        if !matches!(v, Value::Record(_)) {
            return Err(PyTypeError::new_err(format!("entry {}: a row must be a dict of top-level fields, got {:.100}", first_entry + i as u64, row)));
        }
        out.push(v);
    }
    Ok(out)
}

/// A field type from Python: a ROOT type name (`str`), an untyped record (`dict`: member name ->
/// type, in order) or an untyped collection (`[item]`; of a record it has an empty type name, of
/// anything else it is a `std::vector`).
fn py_type(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<TypeExpr> {
    if depth > MAX_TYPE_DEPTH {
        return Err(PyValueError::new_err(format!("field '{path}': the type nests deeper than {MAX_TYPE_DEPTH} levels")));
    }
    if let Ok(s) = obj.downcast::<PyString>() {
        let name: String = s.extract()?;
        return typename::parse(&name).map_err(|e| e.context(format!("field '{path}'"))).or_raise(obj.py());
    }
    if let Some(te) = py_named_type(obj, path, depth)? {
        return Ok(te);
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut members = Vec::with_capacity(d.len());
        for (k, v) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("field '{path}': record member names must be strings, got {k:.60}")))?;
            let t = py_type(&v, &format!("{path}.{k}"), depth + 1)?;
            members.push((k, t));
        }
        if members.is_empty() {
            return Err(PyValueError::new_err(format!("field '{path}': an untyped record needs at least one member")));
        }
        return Ok(TypeExpr::Record(members));
    }
    if let Ok(l) = obj.downcast::<PyList>() {
        if l.len() != 1 {
            return Err(PyValueError::new_err(format!("field '{path}': a collection type is a list of one item type, got {} items", l.len())));
        }
        let item = py_type(&l.get_item(0)?, &format!("{path}._0"), depth + 1)?;
        return Ok(TypeExpr::Collection("std::vector".into(), Box::new(item)));
    }
    Err(PyTypeError::new_err(format!(
        "field '{path}': a type is a ROOT type name (str), an untyped record ({{member: type}}) or an untyped collection ([item type]); got {:.60}",
        obj.get_type().name()?
    )))
}

/// An `rntuple.Class` (a class field) or `rntuple.Enum` (an enum over its integer), else `None`.
fn py_named_type(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<Option<TypeExpr>> {
    let ty = obj.get_type();
    let module = ty.module()?;
    if module == "rntuple._compound" {
        return py_template(obj, path, depth).map(Some);
    }
    if module != "rntuple._classes" {
        return Ok(None);
    }
    match ty.name()?.to_string().as_str() {
        "Class" => py_class(obj, path, depth).map(|c| Some(TypeExpr::Class(Box::new(c)))),
        "Enum" => {
            let name: String = obj.getattr("name")?.extract()?;
            let under: String = obj.getattr("underlying")?.extract()?;
            match typename::parse(&under) {
                Ok(TypeExpr::Scalar(s, None)) => Ok(Some(TypeExpr::Enum(name, s))),
                _ => Err(PyValueError::new_err(format!("field '{path}': enum {name} over '{under}': the underlying type of an enum is an integer type"))),
            }
        }
        _ => Ok(None),
    }
}

/// An `rntuple.Variant`, `Tuple`, `Optional` or `Array`: the template over its item types.
fn py_template(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<TypeExpr> {
    if depth > MAX_TYPE_DEPTH {
        return Err(PyValueError::new_err(format!("field '{path}': the type nests deeper than {MAX_TYPE_DEPTH} levels")));
    }
    let kind = obj.get_type().name()?.to_string();
    let mut items = Vec::new();
    for (i, t) in obj.getattr("items")?.try_iter()?.enumerate() {
        items.push(py_type(&t?, &format!("{path}._{i}"), depth + 1)?);
    }
    let one = |items: Vec<TypeExpr>| -> PyResult<Box<TypeExpr>> {
        let n = items.len();
        items
            .into_iter()
            .next()
            .filter(|_| n == 1)
            .map(Box::new)
            .ok_or_else(|| PyValueError::new_err(format!("field '{path}': {kind} takes one item type, got {n}")))
    };
    Ok(match kind.as_str() {
        "Variant" => TypeExpr::Variant(items),
        "Tuple" => TypeExpr::Tuple("std::tuple".into(), items),
        "Optional" => TypeExpr::Optional("std::optional".into(), one(items)?),
        "Array" => TypeExpr::Array(one(items)?, obj.getattr("size")?.extract()?),
        other => return Err(PyTypeError::new_err(format!("field '{path}': rntuple.{other} is not a field type"))),
    })
}

/// The class definition of an `rntuple.Class`: members in order, bases, version, checksum.
fn py_class(obj: &Bound<'_, PyAny>, path: &str, depth: usize) -> PyResult<typename::ClassDef> {
    if depth > MAX_TYPE_DEPTH {
        return Err(PyValueError::new_err(format!("field '{path}': the type nests deeper than {MAX_TYPE_DEPTH} levels")));
    }
    let name: String = obj.getattr("name")?.extract()?;
    let mut c = typename::ClassDef::new(name.clone()).version(obj.getattr("version")?.extract()?);
    if let Some(ck) = obj.getattr("checksum")?.extract::<Option<u32>>()? {
        c = c.checksum(ck);
    }
    for (i, b) in obj.getattr("bases")?.try_iter()?.enumerate() {
        c = c.base(py_class(&b?, &format!("{path}.:_{i}"), depth + 1)?);
    }
    let members = obj.getattr("members")?;
    let members = members.downcast::<PyDict>().map_err(|_| PyTypeError::new_err(format!("field '{path}': class {name}: members must be a dict")))?;
    for (k, v) in members.iter() {
        let k: String = k.extract().map_err(|_| PyTypeError::new_err(format!("field '{path}': class {name}: member names must be strings, got {k:.60}")))?;
        let t = py_type(&v, &format!("{path}.{k}"), depth + 1)?;
        c = c.member(k, t);
    }
    Ok(c)
}

/// A schema from Python: (field name, type) pairs, the types as [`py_type`] takes them.
pub(crate) fn py_schema(schema: &Bound<'_, PyAny>) -> PyResult<Vec<(String, TypeExpr)>> {
    let mut out = Vec::new();
    for item in schema.try_iter()? {
        let item = item?;
        let (name, t): (String, Bound<'_, PyAny>) =
            item.extract().map_err(|_| PyTypeError::new_err(format!("a schema entry must be a (field name, type) pair, got {item:.100}")))?;
        let te = py_type(&t, &name, 0)?;
        out.push((name, te));
    }
    Ok(out)
}

/// Normalizes a ROOT type name as the writer stores it (`int` -> `std::int32_t`); raises if the
/// type cannot be written.
#[pyfunction]
pub(crate) fn normalize_type(py: Python<'_>, type_name: &str) -> PyResult<String> {
    crate::errors::unblocked(py, || typename::parse(type_name).map(|t| t.name())).or_raise(py)
}
