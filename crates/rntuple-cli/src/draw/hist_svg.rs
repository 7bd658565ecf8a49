//! A histogram as a picture: its layout (bars, ticks, labels in pixels), shared by the SVG written
//! here and the PNG rasterized in `png`.

use super::terminal::stats_line;
use super::{esc, num, ticks};
use rntuple::inspect::histogram::Histogram;
use std::fmt::Write;

/// One bin's bar, in pixels (y down), with its count and edges.
pub(crate) struct Bar {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
    pub(crate) count: u64,
    pub(crate) lo: f64,
    pub(crate) hi: f64,
}

/// Where everything of a histogram's picture goes, in pixels (y down).
pub(crate) struct Layout {
    pub(crate) width: f64,
    pub(crate) height: f64,
    /// The plot area: left, top, right, bottom.
    pub(crate) area: (f64, f64, f64, f64),
    /// One per bin.
    pub(crate) bars: Vec<Bar>,
    /// Tick positions and labels on the x axis (values) and the y axis (counts).
    pub(crate) x_ticks: Vec<(f64, String)>,
    pub(crate) y_ticks: Vec<(f64, String)>,
    /// The title, and the statistics in two lines (entries, mean, std; under- and overflow).
    pub(crate) title: String,
    pub(crate) stats: (String, String),
}

impl Layout {
    /// The layout of `h` in a `width` × `height` picture.
    pub(crate) fn new(title: &str, h: &Histogram, width: f64, height: f64) -> Layout {
        let area = (72.0, 56.0, width - 24.0, height - 44.0);
        let (left, top, right, bottom) = area;
        let edges = h.edges();
        let (lo, hi) = (edges[0], edges[edges.len() - 1]);
        let most = h.counts().iter().copied().max().unwrap_or(0);
        // The y axis ends at the first round tick at or above the largest count.
        let mut y_ticks_values = ticks(0.0, most.max(1) as f64, 5);
        let step = match y_ticks_values.as_slice() {
            [a, b, ..] => b - a,
            _ => 1.0,
        };
        let y_max = ((most.max(1) as f64 / step).ceil() * step).max(1.0);
        if y_ticks_values.last().is_some_and(|t| *t < y_max) {
            y_ticks_values.push(y_max);
        }
        let px = |x: f64| left + (x - lo) / (hi - lo) * (right - left);
        let py = |c: f64| bottom - c / y_max * (bottom - top);
        let bars = h
            .counts()
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let (x0, x1) = (px(edges[i]), px(edges[i + 1]));
                let y = py(c as f64);
                Bar { x: x0, y, w: (x1 - x0).max(0.0), h: bottom - y, count: c, lo: edges[i], hi: edges[i + 1] }
            })
            .collect();
        let x_ticks = ticks(lo, hi, 6).into_iter().map(|t| (px(t), num(t, 6))).collect();
        let y_ticks = y_ticks_values.into_iter().filter(|t| *t <= y_max).map(|t| (py(t), num(t, 6))).collect();
        let stats = (stats_line(h), format!("underflow {}  overflow {}", h.underflow, h.overflow));
        Layout { width, height, area, bars, x_ticks, y_ticks, title: title.to_string(), stats }
    }

    /// The picture as an `<svg>` element (with its namespace: a file of its own or inline in
    /// HTML); one `<rect class="bar">` per bin, with the bin's count and edges as `data-*`.
    pub(crate) fn svg(&self) -> String {
        let (left, top, right, bottom) = self.area;
        let mut s = String::new();
        let _ = write!(
            s,
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="hist" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"##,
            w = self.width,
            h = self.height
        );
        let _ = write!(s, r##"<rect x="0" y="0" width="{}" height="{}" fill="#ffffff"/>"##, self.width, self.height);
        let _ = write!(s, r##"<text x="{left}" y="20" font-size="14" font-weight="bold">{}</text>"##, esc(&self.title));
        let _ = write!(
            s,
            r##"<text x="{left}" y="40" class="stats" xml:space="preserve" style="white-space:pre">{}   {}</text>"##,
            esc(&self.stats.0),
            esc(&self.stats.1)
        );
        for b in &self.bars {
            let _ = write!(
                s,
                r##"<rect class="bar" x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="#4878b0" data-count="{c}" data-lo="{lo}" data-hi="{hi}"><title>[{}, {}): {c}</title></rect>"##,
                b.x,
                b.y,
                b.w,
                b.h,
                num(b.lo, 6),
                num(b.hi, 6),
                c = b.count,
                lo = b.lo,
                hi = b.hi
            );
        }
        let _ = write!(s, r##"<path d="M{left} {top}V{bottom}H{right}" fill="none" stroke="#333333"/>"##);
        for (x, label) in &self.x_ticks {
            let _ = write!(
                s,
                r##"<path d="M{x:.2} {bottom}v5" stroke="#333333"/><text x="{x:.2}" y="{}" text-anchor="middle">{}</text>"##,
                bottom + 18.0,
                esc(label)
            );
        }
        for (y, label) in &self.y_ticks {
            let _ = write!(
                s,
                r##"<path d="M{left} {y:.2}h-5" stroke="#333333"/><text x="{}" y="{:.2}" text-anchor="end">{}</text>"##,
                left - 8.0,
                y + 4.0,
                esc(label)
            );
        }
        s.push_str("</svg>");
        s
    }
}
