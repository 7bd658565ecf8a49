//! The schema of a union merge (ROOT's `rntuple.MergingMode=Union`): the output starts with the
//! first input's schema; a top-level field that a later input brings is added through late model
//! extension (fields and columns in the footer's schema extension, the principal column deferred
//! to the entries written so far, as ROOT's `RNTupleMerger` does); a field that an input lacks is
//! filled with zero pages in its clusters (see `merge_cluster.rs`). A field of the same name must
//! have the same type, version, structure and columns everywhere.
//!
//! ```
//! use rntuple::ops::merge::{merge_with_options, MergeMode, MergeOptions};
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let (a, b) = (dir.join("rntuple-doc-union-a.root"), dir.join("rntuple-doc-union-b.root"));
//! let mut w = Writer::create(&a, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
//! w.fill(&Value::Record(vec![("x".into(), Value::Int(1))]))?;
//! w.commit()?;
//! let mut w = Writer::create(&b, "Events", &[("y", "float")], WriteOptions::default())?;
//! w.fill(&Value::Record(vec![("y".into(), Value::F32(2.5))]))?;
//! w.commit()?;
//! let out = dir.join("rntuple-doc-union-out.root");
//! let union = MergeOptions { mode: MergeMode::Union, ..Default::default() };
//! merge_with_options(&[&a, &b], "Events", &out, &union, WriteOptions::default(), |_, _| {})?;
//! let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
//! let rows: Vec<String> = r.read_values(None, 0, 2)?.iter().map(|v| v.to_json().to_string()).collect();
//! assert_eq!(rows, [r#"{"x":1,"y":0.0}"#, r#"{"x":0,"y":2.5}"#]);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::Error;
use crate::format::descriptor::{ColumnDescriptor, Descriptor, Role};
use std::collections::HashMap;

/// The deferred-column flag of a column descriptor.
const DEFERRED: u16 = 0x01;

/// Elements a principal column holds per entry when it can be zero-filled (it is the first
/// column of a field with no collection or variant above it): the product of the repetitions of
/// the field and its ancestors. `None` for other columns (their element counts follow the data).
pub(crate) fn fill_reps(d: &Descriptor, col: &ColumnDescriptor) -> Option<u64> {
    let f = d.fields.get(col.field_id as usize)?;
    if f.columns.first() != Some(&col.id) || f.projection_source.is_some() {
        return None;
    }
    let mut reps = f.repetition.unwrap_or(1).max(1);
    let mut cur = f.parent;
    let mut depth = 0;
    while let Some(p) = cur {
        let pf = d.fields.get(p as usize)?;
        if matches!(pf.role, Role::Collection | Role::Variant) || depth > 256 || pf.id == f.id {
            return None;
        }
        reps = reps.checked_mul(pf.repetition.unwrap_or(1).max(1))?;
        cur = pf.parent;
        depth += 1;
    }
    Some(reps)
}

/// One line naming what of a field must agree between inputs.
fn describe(d: &Descriptor, id: u32) -> String {
    let f = &d.fields[id as usize];
    format!(
        "'{}' (alias '{}', version {}/{}, checksum {:?}), role {:?}, repetition {:?}, {} columns, {} subfields{}",
        f.type_name,
        f.type_alias(),
        f.type_version,
        f.field_version,
        f.type_checksum,
        f.role,
        f.repetition,
        f.columns.len(),
        f.children.len(),
        if f.projection_source.is_some() { ", projected" } else { "" }
    )
}

/// Extends `out` (the output's schema so far) by the top-level fields of `input` it lacks, as
/// late model extension after `entries_before` entries; returns, per output column, the input
/// column holding its data (`None`: the input lacks it, its clusters get zero pages). A field of
/// the same name but another type, version or columns is the error, naming the field.
pub(crate) fn union_columns(out: &mut Descriptor, input: &Descriptor, entries_before: u64) -> std::result::Result<Vec<Option<usize>>, String> {
    let mut map: Vec<Option<usize>> = vec![None; out.columns.len()];
    let out_tops: HashMap<String, u32> = out.top_level_fields().into_iter().map(|id| (out.fields[id as usize].name.clone(), id)).collect();
    let mut added = Vec::new();
    for in_id in input.top_level_fields() {
        let name = &input.fields[in_id as usize].name;
        match out_tops.get(name) {
            Some(&out_id) => match_field(out, input, out_id, in_id, &mut map, 0)?,
            None => added.push(in_id),
        }
    }
    for in_id in added {
        let f = &input.fields[in_id as usize];
        if f.projection_source.is_some() {
            return Err(format!("field '{}' is a projected field that the inputs before lack: a union merge cannot add it", f.name));
        }
        add_subtree(out, input, in_id, None, entries_before, &mut map, 0)?;
    }
    Ok(map)
}

/// Checks that the input field `in_id` matches the output field `out_id` (recursively, children
/// by position as ROOT compares them) and maps their columns.
fn match_field(out: &Descriptor, input: &Descriptor, out_id: u32, in_id: u32, map: &mut [Option<usize>], depth: usize) -> std::result::Result<(), String> {
    let path = out.field_path(out_id);
    if depth > 256 {
        return Err(format!("field '{path}' nests deeper than 256 levels"));
    }
    let (want, got) = (describe(out, out_id), describe(input, in_id));
    if want != got {
        return Err(format!("field '{path}' is {got}, but {want} in the inputs before"));
    }
    let (of, inf) = (&out.fields[out_id as usize], &input.fields[in_id as usize]);
    if let (Some(a), Some(b)) = (of.projection_source, inf.projection_source) {
        if out.field_path(a) != input.field_path(b) {
            return Err(format!("field '{path}' projects '{}', but '{}' in the inputs before", input.field_path(b), out.field_path(a)));
        }
        return Ok(());
    }
    for (k, (&oc, &ic)) in of.columns.iter().zip(&inf.columns).enumerate() {
        let o = out.columns.get(oc as usize).ok_or_else(|| format!("field '{path}' lists a column {oc} that does not exist"))?;
        let i = input.columns.get(ic as usize).ok_or_else(|| format!("field '{path}' lists a column {ic} that does not exist"))?;
        if (o.column_type, o.bits_on_storage, o.value_range, o.representation) != (i.column_type, i.bits_on_storage, i.value_range, i.representation) {
            return Err(format!(
                "column {k} of field '{path}' is type {} ({} bits, range {:?}, representation {}), but type {} ({} bits, range {:?}, representation {}) in the inputs before",
                i.column_type, i.bits_on_storage, i.value_range, i.representation, o.column_type, o.bits_on_storage, o.value_range, o.representation
            ));
        }
        let slot = map.get_mut(oc as usize).ok_or_else(|| format!("field '{path}': column {oc} out of range"))?;
        *slot = Some(ic as usize);
    }
    for (&oc, &ic) in of.children.iter().zip(&inf.children) {
        if input.fields.get(ic as usize).is_none() || out.fields.get(oc as usize).is_none() {
            return Err(format!("field '{path}' lists a subfield that does not exist"));
        }
        if out.fields[oc as usize].name != input.fields[ic as usize].name {
            return Err(format!(
                "field '{path}' has a subfield '{}' where the inputs before have '{}'",
                input.fields[ic as usize].name, out.fields[oc as usize].name
            ));
        }
        match_field(out, input, oc, ic, map, depth + 1)?;
    }
    Ok(())
}

/// Adds the input field `in_id` and its subfields to `out` as schema extension; their principal
/// columns start after `entries_before` entries (deferred), the others at element 0.
fn add_subtree(
    out: &mut Descriptor,
    input: &Descriptor,
    in_id: u32,
    parent: Option<u32>,
    entries_before: u64,
    map: &mut Vec<Option<usize>>,
    depth: usize,
) -> std::result::Result<(), String> {
    let f = input.fields.get(in_id as usize).ok_or_else(|| format!("no field {in_id}"))?.clone();
    let path = input.field_path(in_id);
    if depth > 256 {
        return Err(format!("field '{path}' nests deeper than 256 levels"));
    }
    if f.projection_source.is_some() {
        return Err(format!("field '{path}' is projected: a union merge cannot add it"));
    }
    let id = u32::try_from(out.fields.len()).map_err(|_| "too many fields".to_string())?;
    let mut nf = f.clone();
    nf.id = id;
    nf.parent = parent;
    nf.children = Vec::new();
    nf.columns = Vec::new();
    nf.from_extension = true;
    out.fields.push(nf);
    if let Some(p) = parent {
        out.fields[p as usize].children.push(id);
    }
    for &ic in &f.columns {
        let c = input.columns.get(ic as usize).ok_or_else(|| format!("field '{path}' lists a column {ic} that does not exist"))?;
        if c.representation > 0 {
            return Err(format!("field '{path}' has a column of representation {}: not supported by merge", c.representation));
        }
        let cid = u32::try_from(out.columns.len()).map_err(|_| "too many columns".to_string())?;
        let mut nc = c.clone();
        nc.id = cid;
        nc.field_id = id;
        nc.from_extension = true;
        out.fields[id as usize].columns.push(cid);
        nc.first_element = 0;
        let first = fill_reps(out, &nc).map_or(Some(0), |r| entries_before.checked_mul(r)).ok_or_else(|| format!("field '{path}': element index overflow"))?;
        nc.first_element = first;
        nc.flags = if first > 0 { nc.flags | DEFERRED } else { nc.flags & !DEFERRED };
        out.columns.push(nc);
        map.push(Some(ic as usize));
    }
    for &child in &f.children {
        add_subtree(out, input, child, Some(id), entries_before, map, depth + 1)?;
    }
    Ok(())
}

/// The error of a union merge that found `why` in the input `path`.
pub(crate) fn union_error(path: &str, why: &str) -> Error {
    Error::Invalid(format!("merge (union): {path}: {why}"))
}
