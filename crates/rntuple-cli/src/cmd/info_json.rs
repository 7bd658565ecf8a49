//! `info --json`'s object for one RNTuple, written as it is made: its small keys, then its
//! fields, columns and clusters one at a time (the JSON values of 100,000 fields held at once took
//! a gigabyte). `rntuple report` embeds the same object.

use super::info_storage::{cluster_json, field_json, storage_json};
use rntuple::inspect::storage::StorageStats;
use rntuple::primitives::column_type::ColumnType;
use rntuple::Reader;
use serde_json::{json, Map, Value};
use std::io::{self, Write};

/// The keys of an RNTuple's object but its arrays of fields, columns and clusters.
pub(crate) fn summary_json(name: &str, r: &Reader, s: &StorageStats) -> Map<String, Value> {
    let d = r.descriptor();
    let a = r.anchor();
    let aliases: Vec<Value> = d.aliases.iter().map(|al| json!({ "field": d.field_path(al.field_id), "physical_column": al.physical })).collect();
    let skipped: Vec<Value> = r.skipped_fields().into_iter().map(|(n, why)| json!({ "field": n, "why": why })).collect();
    let sets = r.attribute_sets();
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert("format_version".into(), json!(format!("{}.{}.{}.{}", a.epoch, a.major, a.minor, a.patch)));
    m.insert("writer".into(), json!(d.writer));
    m.insert("description".into(), json!(d.description));
    m.insert("entries".into(), json!(r.num_entries()));
    m.insert("clusters".into(), json!(d.clusters.len()));
    m.insert("cluster_groups".into(), json!(d.cluster_groups.len()));
    m.insert("compressed_bytes".into(), json!(s.total.stored));
    m.insert("uncompressed_bytes".into(), json!(s.total.uncompressed));
    m.insert("shared_pages".into(), json!(s.shared_pages.0));
    m.insert("shared_page_bytes".into(), json!(s.shared_pages.1));
    m.insert("alias_columns".into(), Value::Array(aliases));
    m.insert("skipped_fields".into(), Value::Array(skipped));
    m.insert("attribute_sets".into(), Value::Array(attribute_sets_json(&sets[..sets.len().min(MAX_JSON_SETS)], r)));
    m.insert("attribute_sets_total".into(), json!(sets.len()));
    m.extend(storage_json(s));
    m
}

/// One field of `fields`: what it is, and its sizes.
fn field_value(r: &Reader, s: &StorageStats, id: u32) -> Value {
    let d = r.descriptor();
    let f = &d.fields[id as usize];
    let mut obj = json!({
        "path": d.field_path(id), "type": r.display_type(id), "type_alias": f.type_alias(),
        "projected": f.projection_source.is_some(), "schema_extension": f.from_extension,
        "streamer": matches!(r.kind(id), Ok(rntuple::logical::kind::Kind::Streamer)),
        "streamer_read_as": r.streamer_objects(id).map(|o| if o { "objects" } else { "raw bytes" }),
        "top_level": f.parent.is_none(), "readable": r.is_readable(id), "id": id,
    });
    if let Some(o) = obj.as_object_mut() {
        o.extend(field_json(s, id));
    }
    obj
}

/// One column of `columns`: type, encoding, sizes.
fn column_value(r: &Reader, s: &StorageStats, i: usize) -> Value {
    let d = r.descriptor();
    let c = &d.columns[i];
    let b = s.columns.get(i).copied().unwrap_or_default();
    let t = ColumnType::from_u16(c.column_type);
    json!({
        "id": i, "field": d.field_path(c.field_id), "type": t.map_or(format!("unknown({:#x})", c.column_type), |t| t.name().to_string()),
        "encoding": t.map_or("?".to_string(), |t| t.encoding().to_string()), "bits": c.bits_on_storage,
        "representation": c.representation, "deferred_first_element": (c.flags & 1 != 0).then_some(c.first_element),
        "compressed_bytes": b.stored, "uncompressed_bytes": b.uncompressed, "pages": b.pages,
        "compression_factor": b.compression_factor(),
    })
}

/// Writes the items of an array, `,`-separated.
fn items(out: &mut dyn Write, n: usize, item: &mut dyn FnMut(usize) -> Value) -> io::Result<()> {
    out.write_all(b"[")?;
    for i in 0..n {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &item(i))?;
    }
    out.write_all(b"]")
}

/// Writes `info --json`'s object for the RNTuple `name` read by `r` (`s`: its storage statistics):
/// the keys of [`summary_json`], then `fields` (the field tree depth first, each field with its
/// sizes), `columns` and `cluster_details`.
pub(crate) fn write_ntuple_json(out: &mut dyn Write, name: &str, r: &Reader, s: &StorageStats) -> io::Result<()> {
    let d = r.descriptor();
    let head = Value::Object(summary_json(name, r, s)).to_string();
    // The object without its closing brace, then the arrays.
    out.write_all(head.strip_suffix('}').unwrap_or(&head).as_bytes())?;
    out.write_all(br#","fields":"#)?;
    // Depth first, children in order, without recursion: a stack of the fields still to write.
    let mut order = Vec::with_capacity(d.fields.len());
    let mut stack: Vec<u32> = d.top_level_fields().into_iter().rev().collect();
    while let Some(id) = stack.pop() {
        order.push(id);
        if let Some(f) = d.fields.get(id as usize) {
            stack.extend(f.children.iter().rev().filter(|&&c| c > id));
        }
    }
    items(out, order.len(), &mut |k| field_value(r, s, order[k]))?;
    out.write_all(br#","columns":"#)?;
    items(out, d.columns.len(), &mut |i| column_value(r, s, i))?;
    out.write_all(br#","cluster_details":"#)?;
    items(out, s.clusters.len(), &mut |i| cluster_json(&s.clusters[i]))?;
    out.write_all(b"}")
}

/// How many attribute sets the JSON form lists (`attribute_sets_total` counts them all): a footer
/// linking 200,000 took 290 MB of JSON values.
pub(crate) const MAX_JSON_SETS: usize = 10_000;

/// The attribute sets `links` (linked from the RNTuple `r`): name, schema version, entries and the
/// user's fields (or why the set cannot be read).
pub(crate) fn attribute_sets_json(links: &[rntuple::format::descriptor::AttributeSetLink], r: &Reader) -> Vec<serde_json::Value> {
    links
        .iter()
        .map(|link| {
            let version = format!("{}.{}", link.schema_major, link.schema_minor);
            match r.open_attribute_set(link) {
                Ok(set) => {
                    let ar = set.reader();
                    let ad = ar.descriptor();
                    let user = ad.top_level_fields().into_iter().find(|&i| ad.fields[i as usize].name == "_userData");
                    let fields: Vec<serde_json::Value> = user
                        .map(|u| ad.fields[u as usize].children.iter().map(|&c| serde_json::json!([ad.fields[c as usize].name, ar.display_type(c)])).collect())
                        .unwrap_or_default();
                    serde_json::json!({ "name": link.name, "schema_version": version, "entries": set.num_entries(), "fields": fields })
                }
                Err(e) => serde_json::json!({ "name": link.name, "schema_version": version, "error": e.to_string() }),
            }
        })
        .collect()
}
