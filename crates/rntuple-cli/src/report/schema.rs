//! The report's tables: the schema tree (collapsible `<details>`, each field with its type, its
//! bytes summed over its sub-fields and its compression factor), the columns and the clusters.
//! Numbers are shown for people and carried raw in `data-*` attributes.

use crate::cmd::human;
use crate::draw::esc;
use rntuple::format::descriptor::Descriptor;
use rntuple::inspect::storage::{Bytes, StorageStats};
use rntuple::primitives::column_type::ColumnType;
use rntuple::Reader;
use std::fmt::Write;

/// The most fields the tree shows, columns and clusters the tables list (`info --json` has all).
const MAX_TREE_NODES: usize = 20_000;
const MAX_TABLE_ROWS: usize = 20_000;

fn factor(b: &Bytes) -> String {
    b.compression_factor().map_or("-".into(), |f| format!("{f:.2}"))
}

/// The sizes of a node: stored, uncompressed, factor, pages.
fn sizes(out: &mut String, b: &Bytes) {
    let _ = write!(
        out,
        r#"<span class="b">{}</span><span class="u">{}</span><span class="x">{}</span><span class="p">{} pages</span>"#,
        human(b.stored),
        human(b.uncompressed),
        factor(b),
        b.pages
    );
}

/// The collapsible field tree (top-level fields closed).
pub(crate) fn tree(r: &Reader, s: &StorageStats) -> String {
    let d = r.descriptor();
    let mut out = String::from(r#"<div id="schema" class="tree">"#);
    let mut shown = 0usize;
    for f in d.top_level_fields() {
        node(&mut out, r, s, f, 0, &mut shown);
    }
    if shown < d.fields.len() {
        let _ = write!(out, r#"<p class="note">{} more fields not shown (`rntuple info --json` lists all)</p>"#, d.fields.len() - shown);
    }
    out.push_str("</div>");
    out
}

/// The row of field `id` at `depth` (indented by its depth), then its children's.
fn node(out: &mut String, r: &Reader, s: &StorageStats, id: u32, depth: usize, shown: &mut usize) {
    let d = r.descriptor();
    let Some(f) = d.fields.get(id as usize) else { return };
    if *shown >= MAX_TREE_NODES {
        return;
    }
    *shown += 1;
    let b = s.fields.get(id as usize).copied().unwrap_or_default();
    let attrs = format!(
        r#"class="f" style="--d:{depth}" data-field="{}" data-compressed="{}" data-uncompressed="{}" data-pages="{}""#,
        esc(&d.field_path(id)),
        b.total.stored,
        b.total.uncompressed,
        b.total.pages
    );
    let head = |out: &mut String| {
        let _ = write!(out, r#"<span class="n">{}</span><span class="t">{}</span>"#, esc(&f.name), esc(&r.display_type(id)));
        sizes(out, &b.total);
    };
    if f.children.is_empty() {
        let _ = write!(out, r#"<div {attrs}><div class="row">"#);
        head(out);
        out.push_str("</div>");
        out.push_str("</div>");
        return;
    }
    let _ = write!(out, r#"<details {attrs}><summary class="row">"#);
    head(out);
    out.push_str("</summary>");
    if b.own.pages > 0 {
        let _ = write!(out, r#"<div class="own row" style="--d:{}"><span class="n">(own columns)</span><span class="t"></span>"#, depth + 1);
        sizes(out, &b.own);
        out.push_str("</div>");
    }
    for &c in &f.children {
        node(out, r, s, c, depth + 1, shown);
    }
    out.push_str("</details>");
}

/// The table of physical columns.
pub(crate) fn columns(d: &Descriptor, s: &StorageStats) -> String {
    let mut out = String::from(
        r#"<table id="columns"><thead><tr><th>id</th><th>field</th><th>type</th><th>encoding</th><th>bits</th><th>compressed</th><th>uncompressed</th><th>factor</th><th>pages</th></tr></thead><tbody>"#,
    );
    for (i, c) in d.columns.iter().enumerate().take(MAX_TABLE_ROWS) {
        let b = s.columns.get(i).copied().unwrap_or_default();
        let (tn, enc) = match ColumnType::from_u16(c.column_type) {
            Some(t) => (t.name().to_string(), t.encoding().to_string()),
            None => (format!("unknown({:#x})", c.column_type), "?".into()),
        };
        let _ = write!(
            out,
            r#"<tr data-column="{i}" data-compressed="{}" data-uncompressed="{}"><td>{i}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            b.stored,
            b.uncompressed,
            esc(&d.field_path(c.field_id)),
            esc(&tn),
            esc(&enc),
            c.bits_on_storage,
            b.stored,
            b.uncompressed,
            factor(&b),
            b.pages
        );
    }
    out.push_str("</tbody></table>");
    if d.columns.len() > MAX_TABLE_ROWS {
        let _ = write!(out, r#"<p class="note">{} more columns not listed</p>"#, d.columns.len() - MAX_TABLE_ROWS);
    }
    out
}

/// The table of clusters.
pub(crate) fn clusters(s: &StorageStats) -> String {
    let mut out = String::from(
        r#"<table id="clusters"><thead><tr><th>id</th><th>first entry</th><th>entries</th><th>pages</th><th>compressed</th><th>uncompressed</th><th>factor</th><th>compression</th></tr></thead><tbody>"#,
    );
    for c in s.clusters.iter().take(MAX_TABLE_ROWS) {
        let settings: Vec<String> = c.compression.iter().map(u32::to_string).collect();
        let _ = write!(
            out,
            r#"<tr data-cluster="{}" data-entries="{}" data-compressed="{}"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"#,
            c.id,
            c.entries,
            c.bytes.stored,
            c.id,
            c.first_entry,
            c.entries,
            c.bytes.pages,
            human(c.bytes.stored),
            human(c.bytes.uncompressed),
            factor(&c.bytes),
            settings.join(", ")
        );
    }
    out.push_str("</tbody></table>");
    if s.clusters.len() > MAX_TABLE_ROWS {
        let _ = write!(out, r#"<p class="note">{} more clusters not listed</p>"#, s.clusters.len() - MAX_TABLE_ROWS);
    }
    out
}
