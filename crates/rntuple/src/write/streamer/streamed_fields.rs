//! Streamer fields on the write side, around their plans (`Plan::Streamed`, which this file does
//! not know: the builder hands over the classes of the plans): the marked paths
//! checked against the planned schema, the classes' StreamerInfo records kept in the
//! descriptor's extra type information (content id 0, in the footer, as ROOT writes them), and
//! the records the file's StreamerInfo key gets from there.

use crate::error::{Error, Result};
use crate::format::descriptor::{Descriptor, ExtraTypeInfo, Role};
use crate::logical::typename::ClassDef;
use crate::storage::container::streamer_info::{from_read, streamer_info_object, ElementKind, StreamerInfo};
use crate::storage::container::streamer_info_read::parse_streamer_info_object;
use crate::value::Value;
use arrow_array::{cast::AsArray, types::*, Array, ArrayRef};
use arrow_schema::DataType;

/// Checks that every path of `marked` names a streamer field among the fields from `first_field`
/// (the ones just planned); the error names the path.
pub(crate) fn check_marked(desc: &Descriptor, first_field: usize, marked: &[String]) -> Result<()> {
    for path in marked {
        let found = (first_field..desc.fields.len()).any(|i| desc.fields[i].role == Role::Streamer && desc.field_path(i as u32) == *path);
        if !found {
            let top: Vec<String> = desc.fields[first_field.min(desc.fields.len())..].iter().filter(|f| f.parent.is_none()).map(|f| f.name.clone()).collect();
            return Err(Error::NotFound(format!(
                "streamer option: no class field '{path}' in the schema (top-level fields: {}; a member of a streamed class cannot be marked itself)",
                top.join(", ")
            )));
        }
    }
    Ok(())
}

/// Sets the extra type information of `desc` to the StreamerInfo records of the streamer fields'
/// `classes` (each name once: `write::cluster::plan::streamed_classes` of the fields' plans) and
/// of their bases and nested classes, as ROOT's `RStreamerField`s record them; none without
/// streamer fields. Two classes of one name but different members are refused.
pub(crate) fn record_classes(desc: &mut Descriptor, classes: &[ClassDef]) -> Result<()> {
    if classes.is_empty() {
        return Ok(());
    }
    let infos = crate::logical::class_streamers::streamer_infos(classes);
    for (i, a) in infos.iter().enumerate() {
        if let Some(b) = infos[..i].iter().find(|b| b.name == a.name && b.checksum != a.checksum) {
            return Err(Error::Invalid(format!("streamer fields: two different classes are named {} (checksums {} and {})", a.name, b.checksum, a.checksum)));
        }
    }
    let content = streamer_info_object(&with_array_codes(infos, true));
    desc.extra_type_info.retain(|e| e.content_id != 0);
    desc.extra_type_info.push(ExtraTypeInfo { content_id: 0, type_version: 0, type_name: String::new(), content });
    Ok(())
}

/// The records of the extra type information of `desc` (content id 0) that the file's
/// StreamerInfo key lists too: those of streamer fields written here, or carried over from a
/// file being copied. Records that cannot be parsed are left out (the footer keeps them).
pub(crate) fn key_records(desc: &Descriptor) -> Vec<StreamerInfo> {
    let infos =
        desc.extra_type_info.iter().filter(|e| e.content_id == 0).filter_map(|e| parse_streamer_info_object(&e.content).ok()).flat_map(|c| from_read(&c));
    with_array_codes(infos.collect(), false)
}

/// `infos` with the type codes of arrays of fundamental types as ROOT 6.40 writes them: with
/// `kOffsetL` (20) added in an RNTuple's extra type information (`offset`), without it in the
/// file's StreamerInfo key (what ROOT's reader of streamer fields and its `TFile` expect).
fn with_array_codes(mut infos: Vec<StreamerInfo>, offset: bool) -> Vec<StreamerInfo> {
    for e in infos.iter_mut().flat_map(|i| i.elements.iter_mut()) {
        if matches!(e.kind, ElementKind::Basic) && !e.dims.is_empty() {
            e.ty = match (offset, e.ty) {
                (true, 1..=19) => e.ty + 20,
                (false, 21..=39) => e.ty - 20,
                _ => e.ty,
            };
        }
    }
    infos
}

/// One entry of streamer field `path` of `class`: its object's bytes.
pub(crate) fn encode(class: &ClassDef, v: &Value, path: &str) -> Result<Vec<u8>> {
    crate::write::streamer::streamed_encode::serialize(class, v).map_err(|e| e.context(format!("streamer field '{path}'")))
}

/// The bytes of the entries of `a` for a streamer field of `class`, all entries one after the
/// other, and their end offsets (from 0; one more than the entries): binary arrays are objects
/// streamed already (copied as they are), any other array holds the objects' values (structs of
/// the members, as `Reader::read_batch` gives them).
pub(crate) fn arrow_blobs(class: &ClassDef, a: &dyn Array, path: &str) -> Result<(Vec<u8>, Vec<i64>)> {
    let mut blob = Vec::new();
    let mut offsets = Vec::with_capacity(a.len() + 1);
    offsets.push(0i64);
    for row in 0..a.len() {
        match a.data_type() {
            DataType::Binary => blob.extend_from_slice(a.as_binary::<i32>().value(row)),
            DataType::LargeBinary => blob.extend_from_slice(a.as_binary::<i64>().value(row)),
            _ => {
                let v = arrow_value(a, row).map_err(|e| e.context(format!("streamer field '{path}', row {row}")))?;
                blob.extend_from_slice(&encode(class, &v, path)?);
            }
        }
        offsets.push(blob.len() as i64);
    }
    Ok((blob, offsets))
}

/// Row `row` of `a` as a value: numbers, strings, lists, structs (records); nulls as
/// `Value::Null`.
fn arrow_value(a: &dyn Array, row: usize) -> Result<Value> {
    if a.is_null(row) {
        return Ok(Value::Null);
    }
    let list = |values: &ArrayRef, from: usize, to: usize| -> Result<Value> {
        (from..to).map(|i| arrow_value(values.as_ref(), i)).collect::<Result<Vec<_>>>().map(Value::List)
    };
    Ok(match a.data_type() {
        DataType::Boolean => Value::Bool(a.as_boolean().value(row)),
        DataType::Int8 => Value::Int(a.as_primitive::<Int8Type>().value(row).into()),
        DataType::Int16 => Value::Int(a.as_primitive::<Int16Type>().value(row).into()),
        DataType::Int32 => Value::Int(a.as_primitive::<Int32Type>().value(row).into()),
        DataType::Int64 => Value::Int(a.as_primitive::<Int64Type>().value(row)),
        DataType::UInt8 => Value::UInt(a.as_primitive::<UInt8Type>().value(row).into()),
        DataType::UInt16 => Value::UInt(a.as_primitive::<UInt16Type>().value(row).into()),
        DataType::UInt32 => Value::UInt(a.as_primitive::<UInt32Type>().value(row).into()),
        DataType::UInt64 => Value::UInt(a.as_primitive::<UInt64Type>().value(row)),
        DataType::Float32 => Value::F32(a.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => Value::F64(a.as_primitive::<Float64Type>().value(row)),
        DataType::Utf8 => Value::String(a.as_string::<i32>().value(row).to_string()),
        DataType::LargeUtf8 => Value::String(a.as_string::<i64>().value(row).to_string()),
        DataType::List(_) => {
            let l = a.as_list::<i32>();
            let o = l.value_offsets();
            list(l.values(), o[row] as usize, o[row + 1] as usize)?
        }
        DataType::LargeList(_) => {
            let l = a.as_list::<i64>();
            let o = l.value_offsets();
            list(l.values(), o[row] as usize, o[row + 1] as usize)?
        }
        DataType::FixedSizeList(_, n) => {
            let l = a.as_fixed_size_list();
            let n = *n as usize;
            let from = (l.offset() + row) * n;
            list(l.values(), from, from + n)?
        }
        DataType::Struct(fields) => {
            let s = a.as_struct();
            let members = fields.iter().zip(s.columns()).map(|(f, c)| Ok((f.name().clone(), arrow_value(c.as_ref(), row)?))).collect::<Result<Vec<_>>>()?;
            Value::Record(members)
        }
        t => return Err(Error::Unsupported(format!("Arrow type {t} in a streamer field's values"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::typename::{parse, TypeExpr};
    use crate::write::{ColumnOptions, WriteOptions, Writer};
    use arrow_array::{builder::*, StructArray};
    use std::sync::Arc;

    fn hit() -> ClassDef {
        let base = ClassDef::new("HBase").member("d", parse("double").unwrap());
        ClassDef::new("Hit").base(base).member("x", parse("float").unwrap()).member("tags", parse("std::vector<std::int32_t>").unwrap())
    }

    #[test]
    fn written_records_read_back_from_the_descriptor_and_the_file() {
        let path = std::env::temp_dir().join(format!("rntuple-streamed-fields-{}.root", std::process::id()));
        let opts = WriteOptions { columns: ColumnOptions::new().streamer("hit"), ..WriteOptions::default() };
        let schema = [("hit".to_string(), TypeExpr::Class(Box::new(hit()))), ("n".to_string(), parse("std::int32_t").unwrap())];
        let mut w = Writer::create_with_types(&path, "T", &schema, opts).unwrap();
        let entry = serde_json::json!({"hit": {":_0": {"d": 0.5}, "x": 1.5, "tags": [1, 2]}, "n": 3});
        w.fill(&Value::from_json(&entry)).unwrap();
        w.commit().unwrap();
        let r = crate::RNTupleFile::open(&path).unwrap().reader("T").unwrap();
        let d = r.descriptor();
        let f = &d.fields[0];
        assert_eq!((f.role, f.type_name.as_str(), f.type_version, f.type_checksum), (Role::Streamer, "Hit", u32::MAX, Some(hit().type_checksum())));
        let names: Vec<String> = key_records(d).into_iter().map(|i| i.name).collect();
        assert_eq!(names, ["Hit", "HBase"]);
        assert_eq!(r.read_values(None, 0, 1).unwrap()[0].to_json(), entry);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn arrow_structs_and_binaries() {
        let c = ClassDef::new("P").member("x", parse("std::int32_t").unwrap()).member("v", parse("std::vector<float>").unwrap());
        let mut v = ListBuilder::new(Float32Builder::new());
        v.values().append_value(1.5);
        v.append(true);
        v.append(true);
        let v = v.finish();
        let x: ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![4, 5]));
        let s = StructArray::from(vec![
            (Arc::new(arrow_schema::Field::new("x", DataType::Int32, false)), x),
            (Arc::new(arrow_schema::Field::new("v", v.data_type().clone(), true)), Arc::new(v) as ArrayRef),
        ]);
        let (blob, offsets) = arrow_blobs(&c, &s, "p").unwrap();
        let first = encode(&c, &Value::from_json(&serde_json::json!({"x": 4, "v": [1.5]})), "p").unwrap();
        assert_eq!(&blob[..offsets[1] as usize], &first[..]);
        // Bytes streamed already are copied.
        let bin = arrow_array::BinaryArray::from(vec![&first[..]]);
        assert_eq!(arrow_blobs(&c, &bin, "p").unwrap(), (first.clone(), vec![0, first.len() as i64]));
        let bad = arrow_array::Float64Array::from(vec![1.0]);
        assert!(arrow_blobs(&c, &bad, "p").unwrap_err().to_string().contains("streamer field 'p'"));
    }
}
