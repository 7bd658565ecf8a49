//! The report's pictures, as inline SVG: the treemap of bytes per field (nested by the field
//! tree, as ROOT's RNTupleTreeMap), the cluster map (stored bytes per cluster, stacked by the
//! largest top-level fields and "other") and the distribution of page sizes. Every shape carries
//! its numbers as `data-*` attributes and a `<title>` tooltip.

use crate::cmd::human;
use crate::draw::treemap::{squarify, Rect};
use crate::draw::{esc, num};
use rntuple::format::descriptor::Descriptor;
use rntuple::inspect::page_sizes::PageSizes;
use rntuple::inspect::storage::StorageStats;
use std::fmt::Write;

/// The treemap's size in pixels.
const TREEMAP: (f64, f64) = (960.0, 540.0);
/// How deep the treemap nests sub-fields (top-level fields are level 1).
const TREEMAP_DEPTH: usize = 3;
/// The smallest rectangle (in square pixels) the treemap divides further or labels.
const MIN_NESTED_AREA: f64 = 900.0;
/// The most top-level fields the treemap draws apart (the smallest of a larger schema share one
/// rectangle).
const MAX_TREEMAP_FIELDS: usize = 5_000;
/// The most cluster groups the cluster map draws (consecutive clusters are summed beyond).
const MAX_CLUSTER_GROUPS: usize = 240;

/// A colour per top-level field, spread around the hue circle by the golden angle.
pub(crate) fn colour(k: usize, light: u32) -> String {
    format!("hsl({:.1},55%,{light}%)", (k as f64 * 137.508) % 360.0)
}

/// The treemap of stored bytes per field.
pub(crate) fn treemap(d: &Descriptor, s: &StorageStats) -> String {
    let (w, h) = TREEMAP;
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="treemap" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"##
    );
    let bytes_of = |f: u32| s.fields.get(f as usize).map_or(0, |x| x.total.stored);
    let mut top: Vec<(u32, usize)> = d.top_level_fields().into_iter().enumerate().map(|(k, f)| (f, k)).collect();
    let mut rest = (0usize, 0u64);
    if top.len() > MAX_TREEMAP_FIELDS {
        top.sort_by_key(|&(f, _)| std::cmp::Reverse(bytes_of(f)));
        for &(f, _) in &top[MAX_TREEMAP_FIELDS - 1..] {
            rest = (rest.0 + 1, rest.1.saturating_add(bytes_of(f)));
        }
        top.truncate(MAX_TREEMAP_FIELDS - 1);
        top.sort_by_key(|&(_, k)| k);
    }
    let mut sizes: Vec<f64> = top.iter().map(|&(f, _)| bytes_of(f) as f64).collect();
    sizes.push(rest.1 as f64);
    let rects = squarify(&sizes, Rect { x: 0.0, y: 0.0, w, h });
    // Every top-level field has its rectangle (an empty one for a field of no bytes), so that the
    // page lists them all; sub-fields are drawn where they are visible.
    for (&(f, k), r) in top.iter().zip(&rects) {
        node(&mut out, d, s, f, *r, 1, k);
    }
    if let (Some(r), true) = (rects.last(), rest.0 > 0) {
        let _ = write!(
            out,
            r##"<rect class="tm-rest" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="#cccccc" data-fields="{}" data-bytes="{}"><title>{} smaller fields: {}</title></rect>"##,
            r.x,
            r.y,
            r.w,
            r.h,
            rest.0,
            rest.1,
            rest.0,
            human(rest.1)
        );
    }
    out.push_str("</svg>");
    out
}

/// One field's rectangle, and its children's inside it.
fn node(out: &mut String, d: &Descriptor, s: &StorageStats, f: u32, r: Rect, level: usize, k: usize) {
    let Some(field) = d.fields.get(f as usize) else { return };
    let bytes = s.fields.get(f as usize).copied().unwrap_or_default();
    let path = d.field_path(f);
    let light = (54 + 8 * level.min(4)) as u32;
    let _ = write!(
        out,
        r##"<rect class="tm" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{}" stroke="#ffffff" stroke-width="{}" data-field="{}" data-bytes="{}" data-level="{level}"><title>{}: {} ({} stored, {} uncompressed)</title></rect>"##,
        r.x,
        r.y,
        r.w,
        r.h,
        colour(k, light),
        if level == 1 { 1.5 } else { 0.75 },
        esc(&path),
        bytes.total.stored,
        esc(&path),
        esc(&field.type_name),
        human(bytes.total.stored),
        human(bytes.total.uncompressed),
    );
    let nested = level < TREEMAP_DEPTH && !field.children.is_empty() && r.w * r.h >= MIN_NESTED_AREA;
    if nested {
        let inner = r.inset(if level == 1 { 3.0 } else { 2.0 });
        let inner = Rect { y: inner.y + 14.0_f64.min(inner.h / 3.0), h: inner.h - 14.0_f64.min(inner.h / 3.0), ..inner };
        // The field's own columns (a collection's offsets) as a last, unlabelled item.
        let mut sizes: Vec<f64> = field.children.iter().map(|&c| s.fields.get(c as usize).map_or(0.0, |x| x.total.stored as f64)).collect();
        sizes.push(bytes.own.stored as f64);
        let rects = squarify(&sizes, inner);
        for (&c, cr) in field.children.iter().zip(&rects) {
            if cr.w * cr.h >= 0.25 {
                node(out, d, s, c, *cr, level + 1, k);
            }
        }
    }
    if r.w > 40.0 && r.h > 13.0 {
        let chars = ((r.w - 6.0) / 6.5).max(1.0) as usize;
        let mut label: String = field.name.chars().take(chars).collect();
        if label.chars().count() < field.name.chars().count() {
            label.pop();
            label.push('…');
        }
        let _ = write!(out, r##"<text x="{:.2}" y="{:.2}" pointer-events="none">{}</text>"##, r.x + 3.0, r.y + 11.0, esc(&label));
    }
}

/// The top-level fields with the most stored bytes, at most `n`, largest first, each with its
/// position among the top-level fields (which chooses its colour, as in the treemap).
pub(crate) fn largest_fields(d: &Descriptor, s: &StorageStats, n: usize) -> Vec<(u32, usize)> {
    let mut top: Vec<(u32, usize)> = d.top_level_fields().into_iter().enumerate().map(|(k, f)| (f, k)).collect();
    top.sort_by_key(|&(f, _)| std::cmp::Reverse(s.fields.get(f as usize).map_or(0, |x| x.total.stored)));
    top.truncate(n);
    top
}

/// The cluster map: one stacked bar per cluster (or group of consecutive clusters), a segment per
/// field of `chosen` and one for all others.
pub(crate) fn cluster_map(d: &Descriptor, s: &StorageStats, chosen: &[(u32, usize)]) -> String {
    let (w, h, left, bottom) = (960.0, 300.0, 70.0, 270.0);
    let ids: Vec<u32> = chosen.iter().map(|c| c.0).collect();
    let rows = s.cluster_bytes_of(d, &ids);
    let groups = rows.len().div_ceil(MAX_CLUSTER_GROUPS).max(1);
    let mut summed: Vec<(usize, usize, Vec<u64>)> = Vec::new();
    for (g, chunk) in rows.chunks(groups).enumerate() {
        let mut sum = vec![0u64; chosen.len() + 1];
        for row in chunk {
            for (a, b) in sum.iter_mut().zip(row) {
                *a = a.saturating_add(*b);
            }
        }
        summed.push((g * groups, g * groups + chunk.len() - 1, sum));
    }
    let most = summed.iter().map(|(_, _, v)| v.iter().sum::<u64>()).max().unwrap_or(0).max(1) as f64;
    let bar_w = (w - left - 10.0) / summed.len().max(1) as f64;
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="clustermap" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"##
    );
    for (i, (first, last, v)) in summed.iter().enumerate() {
        let x = left + i as f64 * bar_w;
        let total: u64 = v.iter().sum();
        let _ = write!(out, r##"<g class="cluster" data-first="{first}" data-last="{last}" data-bytes="{total}">"##);
        let mut y = bottom;
        for (slot, &b) in v.iter().enumerate() {
            if b == 0 {
                continue;
            }
            let bh = b as f64 / most * (bottom - 10.0);
            y -= bh;
            let (name, fill) = match chosen.get(slot) {
                Some(&(f, k)) => (d.field_path(f), colour(k, 62)),
                None => ("other".to_string(), "#bbbbbb".to_string()),
            };
            let span = if first == last { format!("cluster {first}") } else { format!("clusters {first}-{last}") };
            let _ = write!(
                out,
                r##"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{bh:.2}" fill="{fill}" data-field="{}" data-bytes="{b}"><title>{span}: {}: {}</title></rect>"##,
                (bar_w - 0.5).max(0.5),
                esc(&name),
                esc(&name),
                human(b)
            );
        }
        out.push_str("</g>");
    }
    let _ = write!(out, r##"<path d="M{left} 10V{bottom}H{}" fill="none" stroke="#333333"/>"##, w - 10.0);
    let _ = write!(out, r##"<text x="{}" y="{}" text-anchor="end">{}</text>"##, left - 6.0, 18.0, human(most as u64));
    let _ = write!(out, r##"<text x="{}" y="{}" text-anchor="end">0</text>"##, left - 6.0, bottom);
    let clusters = match rows.len() {
        0 => "no clusters".to_string(),
        n if groups > 1 => format!("clusters 0 to {} ({groups} per bar)", n - 1),
        n => format!("clusters 0 to {}", n - 1),
    };
    let _ = write!(out, r##"<text x="{left}" y="{}">{clusters}</text></svg>"##, bottom + 20.0);
    out
}

/// The legend of the cluster map: a swatch per chosen field and one for "other".
pub(crate) fn legend(d: &Descriptor, chosen: &[(u32, usize)]) -> String {
    let mut out = String::from(r#"<div class="legend">"#);
    for &(f, k) in chosen {
        let _ = write!(out, r#"<span><i style="background:{}"></i>{}</span>"#, colour(k, 62), esc(&d.field_path(f)));
    }
    out.push_str(r#"<span><i style="background:#bbbbbb"></i>other</span></div>"#);
    out
}

/// The distribution of stored page sizes: a bar per power-of-two bucket.
pub(crate) fn page_sizes(p: &PageSizes) -> String {
    let buckets = p.buckets();
    let (w, h, left, bottom) = (960.0, 260.0, 70.0, 220.0);
    let most = buckets.iter().map(|b| b.pages).max().unwrap_or(0).max(1) as f64;
    let bar_w = ((w - left - 10.0) / buckets.len().max(1) as f64).min(80.0);
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" id="pagesizes" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">"##
    );
    for (i, b) in buckets.iter().enumerate() {
        let x = left + i as f64 * bar_w;
        let bh = b.pages as f64 / most * (bottom - 20.0);
        let label = if b.lo == 0 { "0 B".to_string() } else { human(b.lo) };
        let _ = write!(
            out,
            r##"<rect class="pagesize" x="{:.2}" y="{:.2}" width="{:.2}" height="{bh:.2}" fill="#4878b0" data-lo="{}" data-hi="{}" data-pages="{}" data-bytes="{}"><title>[{label}, {}): {} pages</title></rect>"##,
            x + 1.0,
            bottom - bh,
            bar_w - 2.0,
            b.lo,
            b.hi,
            b.pages,
            b.bytes,
            if b.hi == u64::MAX { "16 EiB".to_string() } else { human(b.hi) },
            b.pages
        );
        let _ = write!(out, r##"<text x="{:.2}" y="{}" text-anchor="middle">{}</text>"##, x + bar_w / 2.0, bottom - bh - 4.0, b.pages);
        if buckets.len() <= 24 || i % 2 == 0 {
            let _ = write!(out, r##"<text x="{:.2}" y="{}" text-anchor="middle">{label}</text>"##, x + bar_w / 2.0, bottom + 16.0);
        }
    }
    let _ = write!(out, r##"<path d="M{left} 10V{bottom}H{}" fill="none" stroke="#333333"/>"##, w - 10.0);
    let mean = p.mean().map_or("-".to_string(), |m| num(m, 4));
    let _ = write!(out, r##"<text x="{left}" y="{}">stored page size (lower bound of each power-of-two bucket); mean {mean} B</text></svg>"##, bottom + 34.0);
    out
}
