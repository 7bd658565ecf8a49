//! `rntuple info`: every RNTuple of a file with its entries, clusters, field tree and columns, as
//! text or one JSON object.

use super::info_json::{attribute_sets_json, write_ntuple_json, MAX_JSON_SETS};
use super::info_storage::{print_sections, print_summary};
use super::{human, Res};
use rntuple::format::anchor::AnchorStatus;
use rntuple::inspect::storage::StorageStats;
use rntuple::primitives::column_type::ColumnType;
use rntuple::{RNTupleFile, Reader};
use std::io::Write;

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
    // The JSON form is written as it is made, an RNTuple at a time and its fields, columns and
    // clusters item by item (100,000 fields as JSON values took a gigabyte).
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    if json {
        write!(w, r#"{{"file":{},"root_version_code":{v},"root_version":{},"ntuples":["#, serde_json::json!(path), serde_json::json!(version))?;
    }
    let mut first = true;
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
        if json && !std::mem::take(&mut first) {
            write!(w, ",")?;
        }
        match r {
            Ok(r) if json => write_ntuple_json(&mut w, name, &r, &StorageStats::of(r.descriptor(), Some(r.anchor())))?,
            Ok(r) => print_info(name, &r),
            Err((what, msg)) => {
                if json {
                    serde_json::to_writer(&mut w, &serde_json::json!({ "name": name, "error": format!("{}: {msg}", what.to_lowercase()) }))?;
                } else {
                    println!("RNTuple '{name}': {what}: {msg}");
                }
                failures.push(format!("RNTuple '{name}': {msg}"));
            }
        }
    }
    if json {
        writeln!(w, "]}}")?;
    }
    w.flush()?;
    if !failures.is_empty() {
        return Err(failures.join("; ").into());
    }
    Ok(())
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
    let s = StorageStats::of(d, Some(a));
    let sizes = &s.columns;
    println!("  stored bytes   : {} compressed, {} uncompressed", human(s.total.stored), human(s.total.uncompressed));
    print_summary(&s);
    let (shared, shared_bytes) = s.shared_pages;
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
        println!(
            "    {:>4}  {:<40} {:<13} {:<28} {:>5} {:>12} {:>12} {:>6}",
            i, path, tn, enc, c.bits_on_storage, sizes[i].stored, sizes[i].uncompressed, sizes[i].pages
        );
    }
    for a in &d.aliases {
        println!("    alias: field {} -> physical column {}", r.descriptor().field_path(a.field_id), a.physical);
    }
    print_sections(d, &s);
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
