//! Arrow types → ROOT types, for writing Arrow data (Parquet, Arrow IPC) as an RNTuple, and
//! where each level of a column holds nulls ([`NullTree`]), which decides `std::optional`.
//!
//! | Arrow | ROOT |
//! |---|---|
//! | bool | `bool` |
//! | int8 … int64, uint8 … uint64 | `std::int8_t` … `std::int64_t`, `std::uint8_t` … `std::uint64_t` |
//! | float32, float64 | `float`, `double` |
//! | utf8, large_utf8 | `std::string` |
//! | list, large_list | `std::vector<T>` (of structs: an untyped collection of untyped records) |
//! | fixed_size_list of n | `std::array<T,n>` (of structs: of a class named after the column) |
//! | map | `std::map<K,V>` |
//! | struct | an untyped record (empty type name, one subfield per member) |
//! | a level holding nulls | `std::optional<T>`; of a struct: an untyped collection of 0 or 1 records |
//!
//! Anything else (dates, times, decimals, binary, dictionaries, unions, float16) is refused,
//! naming the column and its type.

use crate::error::{Error, Result};
use crate::logical::typename::{parse, TypeExpr};
use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BooleanArray};
use arrow_schema::{DataType, Schema};

/// Per level of an Arrow type, whether the data hold a null there (counted only where the level
/// above is valid): the children follow the type's children (a list's item, a struct's members,
/// a map's entries).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NullTree {
    /// A null was seen at this level.
    pub nulls: bool,
    /// The levels below.
    pub children: Vec<NullTree>,
}

impl NullTree {
    /// A tree of "no nulls seen" for a data type.
    pub fn of(dt: &DataType) -> NullTree {
        let children = match dt {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => vec![NullTree::of(f.data_type())],
            DataType::Struct(fs) => fs.iter().map(|f| NullTree::of(f.data_type())).collect(),
            _ => Vec::new(),
        };
        NullTree { nulls: false, children }
    }

    /// A tree saying "nulls" wherever the type is nullable: what is assumed without looking at
    /// the data.
    pub fn nullable(dt: &DataType, nullable: bool) -> NullTree {
        let children = match dt {
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) | DataType::Map(f, _) => {
                vec![NullTree::nullable(f.data_type(), f.is_nullable())]
            }
            DataType::Struct(fs) => fs.iter().map(|f| NullTree::nullable(f.data_type(), f.is_nullable())).collect(),
            _ => Vec::new(),
        };
        NullTree { nulls: nullable, children }
    }

    /// Records the nulls of an array of this tree's type.
    pub fn scan(&mut self, a: &dyn Array) -> Result<()> {
        let mut owned: Option<ArrayRef> = None;
        if let Some(n) = a.logical_nulls().filter(|n| n.null_count() > 0) {
            self.nulls = true;
            if self.children.is_empty() {
                return Ok(());
            }
            // The levels below count only where this one is valid.
            owned = Some(arrow_select::filter::filter(a, &BooleanArray::new(n.into_inner(), None))?);
        }
        let a: &dyn Array = owned.as_deref().unwrap_or(a);
        match a.data_type() {
            DataType::List(_) => {
                let l = a.as_list::<i32>();
                let (o0, on) = span(l.value_offsets().iter().map(|&o| o as i64));
                self.child(0)?.scan(l.values().slice(o0, on - o0).as_ref())
            }
            DataType::LargeList(_) => {
                let l = a.as_list::<i64>();
                let (o0, on) = span(l.value_offsets().iter().copied());
                self.child(0)?.scan(l.values().slice(o0, on - o0).as_ref())
            }
            DataType::Map(_, _) => {
                let m = a.as_map();
                let (o0, on) = span(m.value_offsets().iter().map(|&o| o as i64));
                self.child(0)?.scan(&m.entries().slice(o0, on - o0))
            }
            DataType::FixedSizeList(_, n) => {
                let l = a.as_fixed_size_list();
                let n = *n as usize;
                self.child(0)?.scan(l.values().slice(l.offset() * n, l.len() * n).as_ref())
            }
            DataType::Struct(_) => {
                let s = a.as_struct();
                for (i, c) in s.columns().iter().enumerate() {
                    self.child(i)?.scan(c.as_ref())?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn child(&mut self, i: usize) -> Result<&mut NullTree> {
        self.children.get_mut(i).ok_or_else(|| Error::internal("a null tree does not follow its Arrow type"))
    }
}

/// The first and the last offset of a list's (non-empty) offsets, as a range of its values.
fn span(mut offsets: impl Iterator<Item = i64>) -> (usize, usize) {
    let first = offsets.next().unwrap_or(0);
    let last = offsets.last().unwrap_or(first);
    (usize::try_from(first).unwrap_or(0), usize::try_from(last.max(first)).unwrap_or(0))
}

/// Whether any level of a field (itself included) may hold nulls by its type.
pub fn may_hold_nulls(dt: &DataType, nullable: bool) -> bool {
    fn any(t: &NullTree) -> bool {
        t.nulls || t.children.iter().any(any)
    }
    any(&NullTree::nullable(dt, nullable))
}

/// The RNTuple schema of an Arrow schema: one top-level field per column, with where nulls were
/// seen (`nulls[i]` for column i). Errors name the column (with its path inside nested types)
/// and the Arrow type that has no RNTuple equivalent.
pub fn rntuple_schema(schema: &Schema, nulls: &[NullTree]) -> Result<Vec<(String, TypeExpr)>> {
    schema.fields().iter().zip(nulls).map(|(f, n)| Ok((f.name().clone(), type_expr(f.data_type(), n, f.name())?))).collect()
}

/// The ROOT type of an Arrow type, `std::optional` where `nulls` says the level holds nulls.
pub fn type_expr(dt: &DataType, nulls: &NullTree, path: &str) -> Result<TypeExpr> {
    let child = |i: usize| nulls.children.get(i).ok_or_else(|| Error::internal(format!("column '{path}': a null tree does not follow its Arrow type")));
    let scalar = |name: &str| parse(name);
    let inner = match dt {
        DataType::Boolean => scalar("bool")?,
        DataType::Int8 => scalar("std::int8_t")?,
        DataType::Int16 => scalar("std::int16_t")?,
        DataType::Int32 => scalar("std::int32_t")?,
        DataType::Int64 => scalar("std::int64_t")?,
        DataType::UInt8 => scalar("std::uint8_t")?,
        DataType::UInt16 => scalar("std::uint16_t")?,
        DataType::UInt32 => scalar("std::uint32_t")?,
        DataType::UInt64 => scalar("std::uint64_t")?,
        DataType::Float32 => scalar("float")?,
        DataType::Float64 => scalar("double")?,
        DataType::Utf8 | DataType::LargeUtf8 => TypeExpr::String,
        DataType::List(f) | DataType::LargeList(f) => {
            TypeExpr::Collection("std::vector".into(), Box::new(type_expr(f.data_type(), child(0)?, &format!("{path}._0"))?))
        }
        DataType::FixedSizeList(f, n) => {
            // Of structs: the writer makes each record a class (`logical::record_classes`).
            let item = type_expr(f.data_type(), child(0)?, &format!("{path}._0"))?;
            let n = u64::try_from(*n).map_err(|_| Error::Invalid(format!("column '{path}': fixed-size list of negative size {n}")))?;
            TypeExpr::Array(Box::new(item), n)
        }
        DataType::Map(f, _) => {
            let DataType::Struct(kv) = f.data_type() else {
                return Err(Error::Unsupported(format!("column '{path}': a map whose entries are {} and not a struct", f.data_type())));
            };
            let (Some(k), Some(v)) = (kv.first(), kv.get(1)) else {
                return Err(Error::Unsupported(format!("column '{path}': a map whose entries have {} members, not 2", kv.len())));
            };
            let entries = child(0)?;
            let none = NullTree::default();
            let kn = entries.children.first().unwrap_or(&none);
            let vn = entries.children.get(1).unwrap_or(&none);
            let key = type_expr(k.data_type(), kn, &format!("{path}.key"))?;
            let value = type_expr(v.data_type(), vn, &format!("{path}.value"))?;
            TypeExpr::Map("std::map".into(), Box::new(key), Box::new(value))
        }
        DataType::Struct(fs) => {
            if fs.is_empty() {
                return Err(Error::Unsupported(format!("column '{path}': an empty struct has no RNTuple equivalent")));
            }
            let mut members = Vec::with_capacity(fs.len());
            for (i, f) in fs.iter().enumerate() {
                members.push((f.name().clone(), type_expr(f.data_type(), child(i)?, &format!("{path}.{}", f.name()))?));
            }
            TypeExpr::Record(members)
        }
        other => {
            return Err(Error::Unsupported(format!(
                "column '{path}': Arrow type {other} has no RNTuple equivalent (supported: bool, integers, float32, float64, utf8, \
                 lists, fixed-size lists, maps, structs)"
            )))
        }
    };
    Ok(if nulls.nulls { TypeExpr::Optional("std::optional".into(), Box::new(inner)) } else { inner })
}
