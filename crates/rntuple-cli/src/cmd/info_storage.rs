//! What `rntuple info` shows of where an RNTuple's bytes go (after ROOT's `PrintInfo` and
//! `RNTupleInspector`): envelope sizes and the metadata/data ratio, clusters, field sizes summed
//! over sub-fields, the distribution of page sizes; as text and as keys of `info --json`. The
//! numbers are `rntuple::inspect::storage`'s.

use super::human;
use rntuple::format::descriptor::Descriptor;
use rntuple::inspect::page_sizes::PageSizes;
use rntuple::inspect::storage::{Bytes, ClusterStats, StorageStats};
use serde_json::{json, Map, Value};

/// How many clusters the text lists (`info --json` lists all).
const MAX_LISTED_CLUSTERS: usize = 50;

/// A compression factor for JSON: null when nothing is stored.
fn factor(b: &Bytes) -> Value {
    b.compression_factor().map_or(Value::Null, |f| json!(f))
}

/// A compression factor for people.
fn factor_text(b: &Bytes) -> String {
    b.compression_factor().map_or("-".into(), |f| format!("{f:.2}"))
}

/// The size keys of one field of `info --json`'s `fields`: its own columns and, summed with all its
/// sub-fields', its totals.
pub(crate) fn field_json(s: &StorageStats, id: u32) -> Map<String, Value> {
    let f = s.fields.get(id as usize).copied().unwrap_or_default();
    let mut m = Map::new();
    m.insert("compressed_bytes".into(), json!(f.total.stored));
    m.insert("uncompressed_bytes".into(), json!(f.total.uncompressed));
    m.insert("pages".into(), json!(f.total.pages));
    m.insert("compression_factor".into(), factor(&f.total));
    m.insert("own_compressed_bytes".into(), json!(f.own.stored));
    m.insert("own_uncompressed_bytes".into(), json!(f.own.uncompressed));
    m.insert("own_pages".into(), json!(f.own.pages));
    m
}

fn page_sizes_json(p: &PageSizes) -> Value {
    let buckets: Vec<Value> = p.buckets().iter().map(|b| json!({ "lo": b.lo, "hi": b.hi, "pages": b.pages, "bytes": b.bytes })).collect();
    json!({ "pages": p.pages, "bytes": p.bytes, "min": p.min, "max": p.max, "mean": p.mean(), "buckets": buckets })
}

/// The keys `info --json` adds for the storage of one RNTuple, but the clusters' (see
/// [`cluster_json`]): `header`, `footer`, `page_lists`, `metadata_bytes`, `data_bytes`,
/// `metadata_ratio`, `compression_factor`, `pages` and `page_sizes`.
pub(crate) fn storage_json(s: &StorageStats) -> Map<String, Value> {
    let mut m = Map::new();
    if let Some(e) = s.envelopes {
        let env = |stored: u64, uncompressed: u64| json!({ "compressed_bytes": stored, "uncompressed_bytes": uncompressed });
        m.insert("header".into(), env(e.header.stored, e.header.uncompressed));
        m.insert("footer".into(), env(e.footer.stored, e.footer.uncompressed));
        let mut pl = env(e.page_lists.stored, e.page_lists.uncompressed);
        pl["count"] = json!(e.page_list_count);
        m.insert("page_lists".into(), pl);
        m.insert("metadata_bytes".into(), json!(e.stored()));
    }
    m.insert("data_bytes".into(), json!(s.data_bytes()));
    m.insert("metadata_ratio".into(), s.metadata_ratio().map_or(Value::Null, |r| json!(r)));
    m.insert("compression_factor".into(), factor(&s.total));
    m.insert("pages".into(), json!(s.total.pages));
    m.insert("page_sizes".into(), page_sizes_json(&s.page_sizes));
    m
}

/// One cluster of `info --json`'s `cluster_details`.
pub(crate) fn cluster_json(c: &ClusterStats) -> Value {
    json!({
        "id": c.id, "first_entry": c.first_entry, "entries": c.entries, "pages": c.bytes.pages,
        "compressed_bytes": c.bytes.stored, "uncompressed_bytes": c.bytes.uncompressed,
        "compression_factor": factor(&c.bytes), "compression": c.compression,
    })
}

/// The summary lines of the text form (under "stored bytes"): compression factor, envelopes and
/// the metadata/data ratio.
pub(crate) fn print_summary(s: &StorageStats) {
    println!("  compression    : factor {} (uncompressed / stored bytes), {} pages", factor_text(&s.total), s.total.pages);
    let Some(e) = s.envelopes else { return };
    println!("  header         : {} stored, {} uncompressed", human(e.header.stored), human(e.header.uncompressed));
    println!("  footer         : {} stored, {} uncompressed", human(e.footer.stored), human(e.footer.uncompressed));
    println!("  page lists     : {} envelope(s), {} stored, {} uncompressed", e.page_list_count, human(e.page_lists.stored), human(e.page_lists.uncompressed));
    let ratio = s.metadata_ratio().map_or("-".into(), |r| format!("{r:.4} ({:.2} %)", 100.0 * r));
    println!("  metadata/data  : {} metadata / {} page data = {ratio}", human(e.stored()), human(s.data_bytes()));
}

/// The sections of the text form after the columns: clusters, field sizes, page sizes.
pub(crate) fn print_sections(d: &Descriptor, s: &StorageStats) {
    println!("  clusters:");
    println!(
        "    {:>6}  {:>12} {:>12}  {:>7} {:>12} {:>12} {:>7}  compression",
        "id", "first entry", "entries", "pages", "compressed", "uncompressed", "factor"
    );
    for c in s.clusters.iter().take(MAX_LISTED_CLUSTERS) {
        let settings: Vec<String> = c.compression.iter().map(u32::to_string).collect();
        println!(
            "    {:>6}  {:>12} {:>12}  {:>7} {:>12} {:>12} {:>7}  {}",
            c.id,
            c.first_entry,
            c.entries,
            c.bytes.pages,
            c.bytes.stored,
            c.bytes.uncompressed,
            factor_text(&c.bytes),
            settings.join(",")
        );
    }
    if s.clusters.len() > MAX_LISTED_CLUSTERS {
        println!("    ... and {} more clusters (`info --json` lists all, under cluster_details)", s.clusters.len() - MAX_LISTED_CLUSTERS);
    }
    println!("  field sizes (a field's own columns and all its sub-fields'):");
    println!("    {:<40} {:>12} {:>12} {:>7} {:>7}", "field", "compressed", "uncompressed", "factor", "pages");
    for id in d.top_level_fields() {
        let f = s.fields.get(id as usize).copied().unwrap_or_default();
        let name = &d.fields[id as usize].name;
        println!("    {:<40} {:>12} {:>12} {:>7} {:>7}", name, f.total.stored, f.total.uncompressed, factor_text(&f.total), f.total.pages);
    }
    print_page_sizes(&s.page_sizes);
}

fn print_page_sizes(p: &PageSizes) {
    let mean = p.mean().map_or("-".into(), |m| human(m.round() as u64));
    println!("  page sizes (stored): {} pages, smallest {}, largest {}, mean {mean}", p.pages, human(p.min), human(p.max));
    let buckets = p.buckets();
    let most = buckets.iter().map(|b| b.pages).max().unwrap_or(0).max(1);
    for b in &buckets {
        let bar = "█".repeat((b.pages * 40).div_ceil(most) as usize);
        let hi = if b.hi == u64::MAX { "16 EiB".to_string() } else { human(b.hi) };
        println!("    [{:>10}, {:>10})  {:>9} pages  {bar}", human(b.lo), hi, b.pages);
    }
}
