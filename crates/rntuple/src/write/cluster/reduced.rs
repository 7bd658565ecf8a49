//! Reduced-precision float fields on the write side: [`ColumnOptions`] applied to a planned
//! schema (the float and double columns they name switch to `Real16`, `Real32Trunc` or
//! `Real32Quant`), and the range checks of quantized fields, made before an entry is written so
//! that a value outside the range leaves nothing behind and its error names the field, the entry
//! and the value.

use crate::error::{Error, Result};
use crate::format::descriptor::{Descriptor, Role};
use crate::primitives::element::ColumnBuf;
use crate::primitives::reduced_float::FloatRepr;
use crate::value::Value;
use crate::write::cluster::columns::Column;
use crate::write::cluster::plan::{CollKind, Plan};
use crate::write::options::ColumnOptions;
use arrow_array::{cast::AsArray, types::*, Array, ArrayRef};
use arrow_schema::DataType;

/// Switches the columns named by `opts` to their reduced-precision representation: `desc`'s
/// fields from `first_field` and columns from `first_column` are those just planned, `cols` their
/// buffers (column `first_column + k` is `cols[k]`). A path that names no field, or a field that is
/// not a float or double (nor a collection, array or optional of one), is an error naming it.
pub(crate) fn apply_column_options(desc: &mut Descriptor, cols: &mut [Column], first_field: usize, first_column: usize, opts: &ColumnOptions) -> Result<()> {
    if opts.is_empty() {
        return Ok(());
    }
    let ids: Vec<u32> = (first_field..desc.fields.len()).map(|i| i as u32).collect();
    for (path, repr) in opts.iter() {
        let id = ids.iter().copied().find(|&i| desc.field_path(i) == path).ok_or_else(|| {
            let known: Vec<String> = ids.iter().filter(|&&i| desc.fields[i as usize].parent.is_none()).map(|&i| desc.field_path(i)).collect();
            Error::NotFound(format!("column options: no field '{path}' in the schema (top-level fields: {})", known.join(", ")))
        })?;
        // Collections, arrays, optionals and atomics of floats: down to the item.
        let mut target = id;
        loop {
            let f = &desc.fields[target as usize];
            let wraps = f.children.len() == 1 && matches!(f.role, Role::Collection | Role::Leaf) && f.columns.len() <= 1;
            match f.children.first() {
                Some(&c) if wraps && desc.fields[c as usize].name == "_0" => target = c,
                _ => break,
            }
        }
        let f = &desc.fields[target as usize];
        let is_float = match f.type_name.as_str() {
            "float" => true,
            "double" => false,
            t => {
                return Err(Error::Invalid(format!(
                    "column options for field '{path}': a field of type '{}' is not a float or double",
                    if t.is_empty() { "record" } else { t }
                )))
            }
        };
        let double32 = f.type_alias() == "Double32_t";
        if double32 && matches!(repr, FloatRepr::Quantized { .. }) {
            return Err(Error::Unsupported(format!("column options for field '{path}': quantizing a Double32_t field is not supported (use double)")));
        }
        let repr = repr.for_field_type(is_float).map_err(|e| Error::Invalid(format!("column options for field '{path}': {e}")))?;
        let (Some(&cid), 1) = (f.columns.first(), f.columns.len()) else {
            return Err(Error::Internal(format!("field '{path}' has no single column")));
        };
        let k =
            (cid as usize).checked_sub(first_column).filter(|&k| k < cols.len()).ok_or_else(|| Error::internal("column of a planned field out of range"))?;
        let c = &mut desc.columns[cid as usize];
        c.column_type = repr.column_type().to_u16();
        c.bits_on_storage = repr.bits_on_storage();
        c.value_range = repr.value_range();
        cols[k].ty = repr.column_type();
        cols[k].reduced = Some((repr, desc.field_path(target)));
    }
    Ok(())
}

/// The quantized column behind a scalar plan, if any: its representation, field path, and
/// whether it buffers floats (a float field holds its values rounded to float).
fn quantized<'c>(cols: &'c [Column], plan: &Plan) -> Option<(&'c FloatRepr, &'c str, bool)> {
    match plan {
        Plan::Scalar { col, .. } => match cols.get(*col) {
            Some(Column { reduced: Some((r @ FloatRepr::Quantized { .. }, path)), buf, .. }) => Some((r, path.as_str(), matches!(buf, ColumnBuf::F32(_)))),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a plan has a quantized column below it.
pub(crate) fn has_quantized(cols: &[Column], plan: &Plan) -> bool {
    match plan {
        Plan::Scalar { .. } => quantized(cols, plan).is_some(),
        Plan::String { .. } | Plan::Bitset { .. } | Plan::Streamed { .. } => false,
        Plan::Collection { child, .. } | Plan::Array { child, .. } | Plan::Wrapper { child, .. } => has_quantized(cols, child),
        Plan::Record { children, .. } | Plan::Variant { children, .. } => children.iter().any(|c| has_quantized(cols, c)),
    }
}

/// Checks the values of one entry's field against the quantization ranges below `plan`
/// (a value already checked for its type by the fill path).
pub(crate) fn check_value_ranges(cols: &[Column], plan: &Plan, v: &Value, entry: u64) -> Result<()> {
    match plan {
        Plan::Scalar { .. } => {
            if let Some((r, path, f32_field)) = quantized(cols, plan) {
                let x = match v {
                    Value::F32(x) => *x as f64,
                    Value::F64(x) => *x,
                    Value::Int(x) => *x as f64,
                    Value::UInt(x) => *x as f64,
                    _ => return Ok(()),
                };
                let x = if f32_field { x as f32 as f64 } else { x };
                if !r.accepts(x) {
                    return Err(r.range_error(path, Some(entry), x));
                }
            }
            Ok(())
        }
        Plan::Collection { child, kind, .. } => match (kind, v) {
            (_, Value::List(items)) => items.iter().try_for_each(|it| check_value_ranges(cols, child, it, entry)),
            (_, Value::Null) => Ok(()),
            (CollKind::Optional, v) | (CollKind::Seq, v @ Value::Record(_)) => check_value_ranges(cols, child, v, entry),
            _ => Ok(()),
        },
        Plan::Array { child, .. } => match v {
            Value::List(items) => items.iter().try_for_each(|it| check_value_ranges(cols, child, it, entry)),
            _ => Ok(()),
        },
        Plan::Wrapper { child, .. } => check_value_ranges(cols, child, v, entry),
        Plan::Record { children, names, .. } => match v {
            Value::Record(members) => {
                for (c, n) in children.iter().zip(names) {
                    if let Some((_, m)) = members.iter().find(|(k, _)| k == n) {
                        check_value_ranges(cols, c, m, entry)?;
                    }
                }
                Ok(())
            }
            Value::List(items) => children.iter().zip(items).try_for_each(|(c, it)| check_value_ranges(cols, c, it, entry)),
            _ => Ok(()),
        },
        // A variant's value goes to the first alternative that takes it; a value outside the
        // range of a quantized alternative is refused when its page is written.
        Plan::Variant { .. } | Plan::String { .. } | Plan::Bitset { .. } | Plan::Streamed { .. } => Ok(()),
    }
}

/// Checks an Arrow array of a field (`rows[i]` the entry of element `i`) against the
/// quantization ranges below `plan`.
pub(crate) fn check_array_ranges(cols: &[Column], plan: &Plan, a: &dyn Array, rows: &dyn Fn(usize) -> u64) -> Result<()> {
    match plan {
        Plan::Scalar { .. } => {
            let Some((r, path, f32_field)) = quantized(cols, plan) else { return Ok(()) };
            let check = |i: usize, x: f64| if r.accepts(x) { Ok(()) } else { Err(r.range_error(path, Some(rows(i)), x)) };
            match a.data_type() {
                DataType::Float32 => a.as_primitive::<Float32Type>().values().iter().enumerate().try_for_each(|(i, &x)| check(i, x as f64)),
                DataType::Float64 if f32_field => a.as_primitive::<Float64Type>().values().iter().enumerate().try_for_each(|(i, &x)| check(i, x as f32 as f64)),
                DataType::Float64 => a.as_primitive::<Float64Type>().values().iter().enumerate().try_for_each(|(i, &x)| check(i, x)),
                _ => Ok(()),
            }
        }
        Plan::Collection { child, .. } | Plan::Array { child, .. } => {
            if !has_quantized(cols, child) {
                return Ok(());
            }
            let (values, offsets): (&ArrayRef, Vec<usize>) = match a.data_type() {
                DataType::List(_) => {
                    let l = a.as_list::<i32>();
                    (l.values(), l.value_offsets().iter().map(|&o| o.max(0) as usize).collect())
                }
                DataType::LargeList(_) => {
                    let l = a.as_list::<i64>();
                    (l.values(), l.value_offsets().iter().map(|&o| o.max(0) as usize).collect())
                }
                DataType::FixedSizeList(_, n) => {
                    let l = a.as_fixed_size_list();
                    let n = (*n).max(0) as usize;
                    (l.values(), (0..=a.len()).map(|i| (i + a.offset()) * n).collect())
                }
                // Optionals as nullable arrays: element i is entry i.
                _ => return check_array_ranges(cols, child, a, rows),
            };
            // Only the items of this array's rows (the values may be shared with other slices).
            let (o0, on) = (offsets.first().copied().unwrap_or(0), offsets.last().copied().unwrap_or(0));
            if on < o0 || on > values.len() {
                return Ok(());
            }
            let items = values.slice(o0, on - o0);
            let sub = |j: usize| rows(offsets.partition_point(|&o| o <= j + o0).saturating_sub(1));
            check_array_ranges(cols, child, items.as_ref(), &sub)
        }
        Plan::Wrapper { child, .. } => check_array_ranges(cols, child, a, rows),
        Plan::Record { children, names, .. } => {
            let DataType::Struct(_) = a.data_type() else { return Ok(()) };
            let s = a.as_struct();
            for (c, n) in children.iter().zip(names) {
                if let Some(m) = s.column_by_name(n) {
                    check_array_ranges(cols, c, m.as_ref(), rows)?;
                }
            }
            Ok(())
        }
        Plan::Variant { .. } | Plan::String { .. } | Plan::Bitset { .. } | Plan::Streamed { .. } => Ok(()),
    }
}
