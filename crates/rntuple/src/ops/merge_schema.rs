//! The schema rules of the strict and filter merges: what must agree between inputs, and where
//! the first input's columns are in another input.

use crate::format::descriptor::Descriptor;
use std::collections::HashMap;

/// For [`MergeMode::Filter`]: the column ids of `input` that hold the data of `out`'s columns,
/// in `out`'s column order, found through the fields' paths; a field `input` lacks, or has with
/// another type or other columns, is the error.
pub(crate) fn filter_columns(out: &Descriptor, input: &Descriptor) -> std::result::Result<Vec<usize>, String> {
    let by_path: HashMap<String, u32> = input.fields.iter().map(|f| (input.field_path(f.id), f.id)).collect();
    let describe = |d: &Descriptor, id: u32| {
        let f = &d.fields[id as usize];
        format!(
            "'{}' (alias '{}', version {}/{}), role {:?}, repetition {:?}",
            f.type_name,
            f.type_alias(),
            f.type_version,
            f.field_version,
            f.role,
            f.repetition
        )
    };
    // Every field that holds data (projected fields only alias the output's own columns), with
    // its type: also the records and collections whose columns are their members'. Output
    // field id -> input field id.
    let mut fields: HashMap<u32, u32> = HashMap::new();
    for f in out.fields.iter().filter(|f| f.projection_source.is_none()) {
        let path = out.field_path(f.id);
        let &fid = by_path.get(&path).ok_or_else(|| format!("no field '{path}'"))?;
        let (want, got) = (describe(out, f.id), describe(input, fid));
        if want != got {
            return Err(format!("field '{path}' is {got}, not {want}"));
        }
        fields.insert(f.id, fid);
    }
    let mut map = Vec::with_capacity(out.columns.len());
    for c in &out.columns {
        let path = out.field_path(c.field_id);
        let &fid = fields.get(&c.field_id).ok_or_else(|| format!("no field '{path}'"))?;
        let k = out.fields[c.field_id as usize]
            .columns
            .iter()
            .position(|&x| x == c.id)
            .ok_or_else(|| format!("column {} is not listed by field '{path}'", c.id))?;
        let &ic = input.fields[fid as usize].columns.get(k).ok_or_else(|| format!("field '{path}' has fewer columns"))?;
        let col = input.columns.get(ic as usize).ok_or_else(|| format!("field '{path}' lists a column {ic} that does not exist"))?;
        let same = (col.column_type, col.bits_on_storage, col.representation, col.flags, col.value_range, col.first_element)
            == (c.column_type, c.bits_on_storage, c.representation, c.flags, c.value_range, c.first_element);
        if !same {
            return Err(format!(
                "column {k} of field '{path}' is type {} ({} bits), representation {}, flags {}, first element {}, not type {} ({} bits), representation {}, flags {}, first element {}",
                col.column_type, col.bits_on_storage, col.representation, col.flags, col.first_element, c.column_type, c.bits_on_storage, c.representation, c.flags, c.first_element
            ));
        }
        map.push(ic as usize);
    }
    Ok(map)
}

/// Everything of a schema that must agree between merged RNTuples, one line per item.
pub(crate) fn schema_key(d: &Descriptor) -> Vec<String> {
    let mut k = Vec::with_capacity(d.fields.len() + d.columns.len() + d.aliases.len());
    for f in &d.fields {
        let path = d.field_path(f.id);
        k.push(format!(
            "field '{path}': type '{}' (alias '{}', version {}/{}), role {:?}, flags {}, parent {:?}, repetition {:?}, projection {:?}, extension {}",
            f.type_name,
            f.type_alias(),
            f.type_version,
            f.field_version,
            f.role,
            f.flags,
            f.parent,
            f.repetition,
            f.projection_source,
            f.from_extension
        ));
    }
    for c in &d.columns {
        let path = d.field_path(c.field_id);
        k.push(format!(
            "column {} of field '{path}': type {} ({} bits), representation {}, flags {}, range {:?}, first element {}, extension {}",
            c.id, c.column_type, c.bits_on_storage, c.representation, c.flags, c.value_range, c.first_element, c.from_extension
        ));
    }
    for a in &d.aliases {
        k.push(format!("alias column of field '{}' -> {}", d.field_path(a.field_id), a.physical));
    }
    k
}

pub(crate) fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return Some(format!("{x}, but {y}"));
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!("{} has no counterpart", a[b.len()])),
        std::cmp::Ordering::Less => Some(format!("{} has no counterpart", b[a.len()])),
    }
}
