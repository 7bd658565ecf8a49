//! `rntuple report`: one self-contained HTML page of what a file's RNTuple holds and where its
//! bytes go: summary, collapsible schema tree with sizes, treemap of bytes per field, cluster map,
//! page-size distribution, column and cluster tables, and histograms of chosen fields. The numbers
//! are `info --json`'s (its object for the RNTuple is embedded in the page as JSON).

mod charts;
mod page;
mod schema;

use crate::cmd::hist::{hist_json, title};
use crate::cmd::hist_fill::{fill, HistSpec};
use crate::cmd::info_json::{summary_json, write_ntuple_json};
use crate::cmd::select::field_list;
use crate::cmd::{human, pick_ntuple, Res};
use crate::draw::esc;
use crate::draw::hist_svg::Layout;
use rntuple::dataset::{Chain, How, Join};
use rntuple::format::descriptor::{Descriptor, Role};
use rntuple::inspect::storage::StorageStats;
use rntuple::RNTupleFile;
use std::fmt::Write;
use std::sync::Arc;

/// The command line of `rntuple report`.
#[derive(clap::Args)]
pub(crate) struct ReportArgs {
    /// A ROOT file (or URL).
    pub(crate) file: String,
    /// The RNTuple (may be omitted when the file holds exactly one).
    #[arg(long)]
    pub(crate) ntuple: Option<String>,
    /// Histogram these fields (comma-separated, or repeat the option; a field, `Jet.pt` or an
    /// expression); default: the first few numeric top-level fields.
    #[arg(long = "hist", value_name = "FIELD,...")]
    pub(crate) hist: Vec<String>,
    /// Bins of each histogram.
    #[arg(long, default_value_t = 50)]
    pub(crate) bins: usize,
    /// The HTML file to write.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub(crate) output: String,
}

/// How many fields are histogrammed by default, and how many fields the cluster map shows apart.
const DEFAULT_HISTOGRAMS: usize = 3;
const CLUSTER_MAP_FIELDS: usize = 10;

/// Whether a C++ type name is a number type a histogram takes.
fn numeric_type(t: &str) -> bool {
    let t = t.trim_start_matches("std::");
    matches!(t, "bool" | "char" | "float" | "double" | "Double32_t" | "Float16_t")
        || (t.ends_with("_t") && (t.starts_with("int") || t.starts_with("uint")) && !t.contains('<'))
}

/// Whether the top-level field `f` holds numbers or collections of numbers.
fn numeric_field(d: &Descriptor, f: u32) -> bool {
    let Some(field) = d.fields.get(f as usize) else { return false };
    match (field.role, field.children.as_slice()) {
        (Role::Leaf, []) => numeric_type(&field.type_name),
        (Role::Collection, [item]) => {
            let vector = ["std::vector<", "ROOT::VecOps::RVec<", "ROOT::RVec<"].iter().any(|p| field.type_name.starts_with(p));
            vector && d.fields.get(*item as usize).is_some_and(|i| i.children.is_empty() && numeric_type(&i.type_name))
        }
        _ => false,
    }
}

pub(crate) fn report(a: &ReportArgs) -> Res {
    let f = RNTupleFile::open(&a.file)?;
    let name = pick_ntuple(&f, a.ntuple.as_deref())?;
    let reader = Arc::new(f.reader(&name)?);
    let r = &*reader;
    let d = r.descriptor();
    let s = StorageStats::of(d, Some(r.anchor()));
    // The page's data: `info --json`'s object as it writes it, with the file and (below) the
    // histograms, written into one buffer (100,000 fields make 50 MB of it).
    let mut data = format!(r#"{{"file":{},"ntuple":"#, serde_json::json!(a.file)).into_bytes();
    write_ntuple_json(&mut data, &name, r, &s)?;
    let mut summary = summary_json(&name, r, &s);
    summary.insert("fields".into(), serde_json::json!(d.fields.len()));
    summary.insert("columns".into(), serde_json::json!(d.columns.len()));

    let mut wanted: Vec<String> = a.hist.iter().flat_map(|h| field_list(h).into_iter().map(String::from)).collect();
    if a.hist.is_empty() {
        wanted = d
            .top_level_fields()
            .into_iter()
            .filter(|&f| r.is_readable(f) && numeric_field(d, f))
            .take(DEFAULT_HISTOGRAMS)
            .map(|f| d.fields[f as usize].name.clone())
            .collect();
    }
    let join = Join::new(Chain::from_readers(vec![(a.file.clone(), reader.clone())])?, Vec::new(), &[], How::Left)?;
    let mut hist_html = String::new();
    let mut hists = Vec::new();
    for field in &wanted {
        let h = fill(&join, &HistSpec { field, where_: None, bins: a.bins, range: None }).map_err(|e| format!("report: histogram of '{field}': {e}"))?;
        let _ =
            write!(hist_html, r#"<figure class="histogram" data-field="{}">{}</figure>"#, esc(field), Layout::new(&title(field, None), &h, 720.0, 420.0).svg());
        hists.push(hist_json(field, None, &h));
    }
    if wanted.is_empty() {
        hist_html.push_str(r#"<p class="note">no numeric top-level field to histogram (choose fields with --hist)</p>"#);
    }

    let chosen = charts::largest_fields(d, &s, CLUSTER_MAP_FIELDS);
    let mut sections: page::Sections = Vec::new();
    let tree_tools = r#"<p><button id="expand" type="button">expand all</button><button id="collapse" type="button">collapse all</button><input id="filter" type="search" placeholder="filter top-level fields"></p>"#;
    sections.push(("schema-tree", "Schema".into(), format!("{tree_tools}{}", schema::tree(r, &s))));
    sections.push(("treemap-section", "Bytes per field (treemap)".into(), charts::treemap(d, &s)));
    let map = format!("{}{}", charts::cluster_map(d, &s, &chosen), charts::legend(d, &chosen));
    sections.push(("cluster-map", format!("Clusters: stored bytes per cluster and field ({} clusters)", s.clusters.len()), map));
    sections.push(("page-sizes", format!("Page sizes ({} pages)", s.page_sizes.pages), charts::page_sizes(&s.page_sizes)));
    sections.push(("histograms", "Histograms".into(), hist_html));
    sections.push(("column-table", format!("Columns ({})", d.columns.len()), format!(r#"<div class="scroll">{}</div>"#, schema::columns(d, &s))));
    sections.push(("cluster-table", format!("Clusters ({})", s.clusters.len()), format!(r#"<div class="scroll">{}</div>"#, schema::clusters(&s))));

    data.extend_from_slice(format!(r#","histograms":{}}}"#, serde_json::Value::Array(hists)).as_bytes());
    let data = String::from_utf8(data).map_err(|e| format!("report: the page's data is not UTF-8: {e}"))?;
    let subtitle = format!("{} — {} entries, {} stored, written by {}", a.file, r.num_entries(), human(s.total.stored), d.writer);
    let html = page::page(&format!("RNTuple '{name}'"), &subtitle, &page::cards(&serde_json::Value::Object(summary)), &sections, &data);
    std::fs::write(&a.output, &html).map_err(|e| format!("report -o {}: {e}", a.output))?;
    println!("{}", serde_json::json!({ "output": a.output, "bytes": html.len(), "ntuple": name, "histograms": wanted }));
    Ok(())
}
