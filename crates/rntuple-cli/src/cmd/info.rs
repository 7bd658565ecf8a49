//! `rntuple info`: every RNTuple of a file with its entries, clusters, field tree and columns, as
//! text or one JSON object.

use super::{human, Res};
use rntuple::format::anchor::AnchorStatus;
use rntuple::primitives::column_type::ColumnType;
use rntuple::{RNTupleFile, Reader};

pub(crate) fn info(path: &str, only: Option<&str>, json: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let names = f.names();
    let v = f.root_file().root_version;
    let version = format!("{}.{:02}/{:02}", v / 10000, v / 100 % 100, v % 100);
    if !json {
        println!("file: {path} (ROOT file version {v}: {version})");
        if names.is_empty() {
            println!("no RNTuple in this file");
        }
    }
    let mut failures = Vec::new();
    if let Some(o) = only {
        if !names.iter().any(|n| n == o || n.ends_with(&format!("/{o}"))) {
            return Err(format!("no RNTuple named '{o}' in {path} (it holds: {})", if names.is_empty() { "none".into() } else { names.join(", ") }).into());
        }
    }
    let mut objs = Vec::new();
    for name in &names {
        if let Some(o) = only {
            if o != name && !name.ends_with(&format!("/{o}")) {
                continue;
            }
        }
        if !json {
            println!();
        }
        let problem = match f.anchor_status(name) {
            Some(AnchorStatus::Legacy(msg)) => Some(("REFUSED", msg.to_string())),
            Some(AnchorStatus::Broken(msg)) => Some(("BROKEN ANCHOR", msg.to_string())),
            _ => None,
        };
        let r = match problem {
            Some(p) => Err(p),
            None => f.reader(name).map_err(|e| ("ERROR", e.to_string())),
        };
        match r {
            Ok(r) if json => objs.push(ntuple_json(name, &r)),
            Ok(r) => print_info(name, &r),
            Err((what, msg)) => {
                if json {
                    objs.push(serde_json::json!({ "name": name, "error": format!("{}: {msg}", what.to_lowercase()) }));
                } else {
                    println!("RNTuple '{name}': {what}: {msg}");
                }
                failures.push(format!("RNTuple '{name}': {msg}"));
            }
        }
    }
    if json {
        println!("{}", serde_json::json!({ "file": path, "root_version_code": v, "root_version": version, "ntuples": objs }));
    }
    if !failures.is_empty() {
        return Err(failures.join("; ").into());
    }
    Ok(())
}

/// Per physical column: stored (compressed) bytes, uncompressed bytes, pages.
fn column_sizes(d: &rntuple::format::descriptor::Descriptor) -> Vec<(u64, u64, u64)> {
    let mut out = vec![(0u64, 0u64, 0u64); d.columns.len()];
    for c in &d.clusters {
        for (i, cr) in c.columns.iter().enumerate() {
            if let (Some(cr), Some(o)) = (cr, out.get_mut(i)) {
                for p in &cr.pages {
                    o.0 += p.locator.size;
                    o.1 += (p.n_elements as u64 * d.columns[i].bits_on_storage as u64).div_ceil(8);
                    o.2 += 1;
                }
            }
        }
    }
    out
}

/// Pages that share their stored bytes with an earlier page of their cluster (same-page merging:
/// the same locator offset) and their bytes, which the column sizes count once per page.
fn shared_pages(d: &rntuple::format::descriptor::Descriptor) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    for c in &d.clusters {
        let mut seen = std::collections::HashSet::new();
        for p in c.columns.iter().flatten().flat_map(|cr| &cr.pages) {
            if p.locator.size > 0 && !seen.insert(p.locator.offset) {
                n += 1;
                bytes += p.locator.size;
            }
        }
    }
    (n, bytes)
}

/// `info --json` for one RNTuple: the facts of the text form as one object.
fn ntuple_json(name: &str, r: &Reader) -> serde_json::Value {
    let d = r.descriptor();
    let a = r.anchor();
    let sizes = column_sizes(d);
    let mut fields = Vec::new();
    fn walk(r: &Reader, id: u32, out: &mut Vec<serde_json::Value>) {
        let d = r.descriptor();
        let f = &d.fields[id as usize];
        out.push(serde_json::json!({
            "path": r.descriptor().field_path(id), "type": r.display_type(id), "type_alias": f.type_alias(),
            "projected": f.projection_source.is_some(), "schema_extension": f.from_extension,
            "streamer": matches!(r.kind(id), Ok(rntuple::logical::kind::Kind::Streamer)),
            "streamer_read_as": r.streamer_objects(id).map(|o| if o { "objects" } else { "raw bytes" }),
            "top_level": f.parent.is_none(), "readable": r.is_readable(id),
        }));
        for &c in &f.children {
            walk(r, c, out);
        }
    }
    for id in d.top_level_fields() {
        walk(r, id, &mut fields);
    }
    let columns: Vec<serde_json::Value> = d
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let t = ColumnType::from_u16(c.column_type);
            serde_json::json!({
                "id": i, "field": r.descriptor().field_path(c.field_id), "type": t.map_or(format!("unknown({:#x})", c.column_type), |t| t.name().to_string()),
                "encoding": t.map_or("?".to_string(), |t| t.encoding().to_string()), "bits": c.bits_on_storage,
                "representation": c.representation, "deferred_first_element": (c.flags & 1 != 0).then_some(c.first_element),
                "compressed_bytes": sizes[i].0, "uncompressed_bytes": sizes[i].1, "pages": sizes[i].2,
            })
        })
        .collect();
    let aliases: Vec<serde_json::Value> =
        d.aliases.iter().map(|al| serde_json::json!({ "field": r.descriptor().field_path(al.field_id), "physical_column": al.physical })).collect();
    let skipped: Vec<serde_json::Value> = r.skipped_fields().into_iter().map(|(n, why)| serde_json::json!({ "field": n, "why": why })).collect();
    serde_json::json!({
        "name": name, "format_version": format!("{}.{}.{}.{}", a.epoch, a.major, a.minor, a.patch), "writer": d.writer,
        "description": d.description, "entries": r.num_entries(), "clusters": d.clusters.len(), "cluster_groups": d.cluster_groups.len(),
        "compressed_bytes": sizes.iter().map(|s| s.0).sum::<u64>(), "uncompressed_bytes": sizes.iter().map(|s| s.1).sum::<u64>(),
        "shared_pages": shared_pages(d).0, "shared_page_bytes": shared_pages(d).1,
        "fields": fields, "columns": columns, "alias_columns": aliases, "skipped_fields": skipped,
        "attribute_sets": attribute_sets_json(&r.attribute_sets()[..r.attribute_sets().len().min(MAX_JSON_SETS)], r),
        "attribute_sets_total": r.attribute_sets().len(),
    })
}

fn print_info(name: &str, r: &Reader) {
    let d = r.descriptor();
    let a = r.anchor();
    println!("RNTuple '{name}'");
    println!("  format version : {}.{}.{}.{}", a.epoch, a.major, a.minor, a.patch);
    println!("  writer         : {}", d.writer);
    if !d.description.is_empty() {
        println!("  description    : {}", d.description);
    }
    println!("  entries        : {}", r.num_entries());
    println!("  clusters       : {} in {} cluster group(s)", d.clusters.len(), d.cluster_groups.len());
    let sizes = column_sizes(d);
    println!("  stored bytes   : {} compressed, {} uncompressed", human(sizes.iter().map(|s| s.0).sum()), human(sizes.iter().map(|s| s.1).sum()));
    let (shared, shared_bytes) = shared_pages(d);
    if shared > 0 {
        println!("  shared pages   : {shared} pages ({}) point at an equal page of their cluster (same-page merging), stored once", human(shared_bytes));
    }
    println!("  fields:");
    fn walk(r: &Reader, id: u32, depth: usize) {
        let d = r.descriptor();
        let f = &d.fields[id as usize];
        let mut extra = String::new();
        if !f.type_alias().is_empty() {
            extra.push_str(&format!(" (alias {})", f.type_alias()));
        }
        if f.projection_source.is_some() {
            extra.push_str(" [projected]");
        }
        if f.from_extension {
            extra.push_str(" [schema extension]");
        }
        match r.streamer_objects(id) {
            Some(true) => extra.push_str(" [streamer field: read as objects, described by the file's StreamerInfo]"),
            Some(false) => {
                extra.push_str(" [streamer field: read as raw bytes per entry (no StreamerInfo record describes the class or its entries: a custom Streamer?)]")
            }
            None => {}
        }
        if !r.is_readable(id) && f.parent.is_none() {
            extra.push_str(" [SKIPPED: cannot be read]");
        }
        println!("    {}{}: {}{}", "  ".repeat(depth), f.name, r.display_type(id), extra);
        for &c in &f.children {
            walk(r, c, depth + 1);
        }
    }
    for id in d.top_level_fields() {
        walk(r, id, 0);
    }
    for (n, why) in r.skipped_fields() {
        println!("  skipped field '{n}': {why}");
    }
    println!("  columns:");
    println!("    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}", "id", "field", "type", "encoding", "bits", "compressed", "uncompressed", "pages");
    for (i, c) in d.columns.iter().enumerate() {
        let path = r.descriptor().field_path(c.field_id);
        let (tn, enc) = match ColumnType::from_u16(c.column_type) {
            Some(t) => (t.name().to_string(), t.encoding().to_string()),
            None => (format!("unknown({:#x})", c.column_type), "?".into()),
        };
        let mut enc = enc;
        if c.representation > 0 {
            enc.push_str(&format!(" (repr {})", c.representation));
        }
        if c.flags & 1 != 0 {
            enc.push_str(&format!(" (deferred@{})", c.first_element));
        }
        println!("    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}", i, path, tn, enc, c.bits_on_storage, sizes[i].0, sizes[i].1, sizes[i].2);
    }
    for a in &d.aliases {
        println!("    alias: field {} -> physical column {}", r.descriptor().field_path(a.field_id), a.physical);
    }
    let links = r.attribute_sets();
    if !links.is_empty() {
        println!("  attribute sets:");
        for set in attribute_sets_json(&links[..links.len().min(MAX_LISTED_SETS)], r) {
            let name = set["name"].as_str().unwrap_or_default();
            let version = set["schema_version"].as_str().unwrap_or_default();
            match set.get("error").and_then(|e| e.as_str()) {
                Some(e) => println!("    {name} (attribute schema {version}): unreadable: {e}"),
                None => {
                    let fields: Vec<String> = set["fields"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|f| format!("{}: {}", f[0].as_str().unwrap_or_default(), f[1].as_str().unwrap_or_default()))
                        .collect();
                    println!("    {name} (attribute schema {version}): {} entries; fields {}", set["entries"], fields.join(", "));
                }
            }
        }
        if links.len() > MAX_LISTED_SETS {
            println!("    ... and {} more attribute sets (`info --json` lists up to {MAX_JSON_SETS})", links.len() - MAX_LISTED_SETS);
        }
    }
}

/// How many attribute sets the text form lists (each is opened to show its entries and fields).
const MAX_LISTED_SETS: usize = 100;
/// How many attribute sets the JSON form lists (`attribute_sets_total` counts them all): a footer
/// linking 200,000 took 290 MB of JSON values.
const MAX_JSON_SETS: usize = 10_000;

/// The attribute sets `links` (linked from the RNTuple `r`): name, schema version, entries and the
/// user's fields (or why the set cannot be read).
fn attribute_sets_json(links: &[rntuple::format::descriptor::AttributeSetLink], r: &Reader) -> Vec<serde_json::Value> {
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
