//! The report's page: one self-contained HTML file (inline CSS, a few lines of inline script, inline
//! SVG; nothing fetched), its numbers also in an inline `application/json` block (`info --json`'s
//! object for the RNTuple, and the histograms).

use crate::cmd::human;
use crate::draw::esc;
use std::fmt::Write;

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1000px;color:#222;background:#fff}\
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}\
.sub{color:#666;margin-top:0}.cards{display:flex;flex-wrap:wrap;gap:8px}\
.card{border:1px solid #ddd;border-radius:6px;padding:6px 10px;min-width:120px}.card .k{color:#666;font-size:12px;display:block}\
.card .v{font-size:16px;font-weight:600}.tree{font-size:13px}\
.tree .row{display:grid;grid-template-columns:minmax(200px,1.3fr) minmax(150px,2fr) 80px 80px 48px 72px;gap:6px;padding:1px 0;list-style:none}\
.tree summary{cursor:pointer}.tree summary::-webkit-details-marker{display:none}.tree summary:hover{background:#f3f6fa}\
.tree .n{padding-left:calc(var(--d,0)*16px + 14px);white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\
.tree summary .n{padding-left:calc(var(--d,0)*16px)}.tree summary .n::before{content:'\\25B8  ';color:#777}\
.tree details[open]>summary .n::before{content:'\\25BE  '}\
.tree .t{color:#555;font-family:monospace;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}\
.tree .b,.tree .u,.tree .x,.tree .p{color:#333;text-align:right}.tree .own .n{color:#777}\
table{border-collapse:collapse;font-size:12px;width:100%}th,td{border-bottom:1px solid #eee;padding:2px 6px;text-align:right}\
th:nth-child(2),td:nth-child(2),th:nth-child(3),td:nth-child(3),th:nth-child(4),td:nth-child(4){text-align:left}\
thead th{position:sticky;top:0;background:#f6f6f6}.scroll{max-height:420px;overflow:auto;border:1px solid #eee}\
.legend span{margin-right:12px;font-size:12px;white-space:nowrap}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}\
.note{color:#777;font-size:12px}button{margin:0 6px 6px 0}svg{max-width:100%;height:auto}";

/// Expands or collapses the whole schema tree, and filters it by field name.
const SCRIPT: &str = "\
(function(){\
var tree=document.getElementById('schema');\
function all(open){tree.querySelectorAll('details').forEach(function(d){d.open=open;});}\
document.getElementById('expand').addEventListener('click',function(){all(true);});\
document.getElementById('collapse').addEventListener('click',function(){all(false);});\
document.getElementById('filter').addEventListener('input',function(e){\
var q=e.target.value.toLowerCase();\
tree.querySelectorAll(':scope>.f').forEach(function(n){\
n.style.display=!q||n.getAttribute('data-field').toLowerCase().indexOf(q)>=0?'':'none';});});\
})();";

/// A summary card: a label, the number for people and its raw value.
pub(crate) fn card(out: &mut String, key: &str, label: &str, shown: &str, raw: &serde_json::Value) {
    let raw = match raw {
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    let _ = write!(
        out,
        r#"<div class="card"><span class="k">{}</span><span class="v" data-key="{key}" data-value="{}">{}</span></div>"#,
        esc(label),
        esc(&raw),
        esc(shown)
    );
}

/// The summary cards of the RNTuple `info` (the keys of its `info --json` object but the arrays,
/// with `fields` and `columns` as counts).
pub(crate) fn cards(info: &serde_json::Value) -> String {
    let mut out = String::from(r#"<div class="cards">"#);
    let n = |k: &str| info[k].as_u64().unwrap_or(0);
    let f = |k: &str| info[k].as_f64().map_or("-".to_string(), |x| format!("{x:.2}"));
    card(&mut out, "entries", "entries", &n("entries").to_string(), &info["entries"]);
    card(&mut out, "clusters", "clusters", &n("clusters").to_string(), &info["clusters"]);
    card(&mut out, "fields", "fields", &n("fields").to_string(), &info["fields"]);
    card(&mut out, "columns", "columns", &n("columns").to_string(), &info["columns"]);
    card(&mut out, "pages", "pages", &n("pages").to_string(), &info["pages"]);
    card(&mut out, "compressed_bytes", "stored (compressed)", &human(n("compressed_bytes")), &info["compressed_bytes"]);
    card(&mut out, "uncompressed_bytes", "uncompressed", &human(n("uncompressed_bytes")), &info["uncompressed_bytes"]);
    card(&mut out, "compression_factor", "compression factor", &f("compression_factor"), &info["compression_factor"]);
    let env = |k: &str| info[k]["compressed_bytes"].as_u64().unwrap_or(0);
    card(&mut out, "header", "header (stored)", &human(env("header")), &info["header"]["compressed_bytes"]);
    card(&mut out, "footer", "footer (stored)", &human(env("footer")), &info["footer"]["compressed_bytes"]);
    card(&mut out, "page_lists", "page lists (stored)", &human(env("page_lists")), &info["page_lists"]["compressed_bytes"]);
    let ratio = info["metadata_ratio"].as_f64().map_or("-".to_string(), |r| format!("{:.3} %", 100.0 * r));
    card(&mut out, "metadata_ratio", "metadata / data", &ratio, &info["metadata_ratio"]);
    out.push_str("</div>");
    out
}

/// The sections of a page, in order: (id, heading, HTML).
pub(crate) type Sections = Vec<(&'static str, String, String)>;

/// The whole page; `data` (JSON) goes into its `report-data` block.
pub(crate) fn page(title: &str, subtitle: &str, cards: &str, sections: &Sections, data: &str) -> String {
    let mut out = String::with_capacity(sections.iter().map(|s| s.2.len()).sum::<usize>() + data.len() + (1 << 16));
    let _ = write!(
        out,
        r#"<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="data:,"><title>{}</title><style>{STYLE}</style></head><body>"#,
        esc(title)
    );
    let _ = write!(out, r#"<h1>{}</h1><p class="sub">{}</p>{cards}"#, esc(title), esc(subtitle));
    for (id, heading, html) in sections {
        let _ = write!(out, r#"<section id="{id}"><h2>{}</h2>{html}</section>"#, esc(heading));
    }
    // '<' escaped in the JSON (as \u003c, the same string) so that no "</script>" ends the block early.
    out.push_str(r#"<script type="application/json" id="report-data">"#);
    for (k, part) in data.split('<').enumerate() {
        if k > 0 {
            out.push_str("\\u003c");
        }
        out.push_str(part);
    }
    let _ = write!(out, r#"</script><script>{SCRIPT}</script></body></html>"#);
    out
}
