//! A histogram drawn in the terminal, one row per bin, within 80 columns: the bin's lower edge,
//! its count and a bar of Unicode block characters (eighths of a cell), then the upper edge of the
//! last bin, the under- and overflow and a line of statistics.

use super::num;
use rntuple::inspect::histogram::Histogram;
use std::fmt::Write;

/// Cells of the longest bar (the row is 11 + 3 + 9 + 1 + 55 = 79 columns).
const BAR_CELLS: u64 = 55;

/// The bar of `count` where `most` fills [`BAR_CELLS`]: whole blocks then one partial block; a
/// nonzero count shows at least an eighth.
fn bar(count: u64, most: u64) -> String {
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    if count == 0 || most == 0 {
        return String::new();
    }
    let eighths = ((u128::from(count) * u128::from(BAR_CELLS * 8)) / u128::from(most)).max(1) as usize;
    let mut s = "█".repeat(eighths / 8);
    s.push_str(PARTS[eighths % 8]);
    s
}

/// The statistics line (`entries N  mean X  std Y`), as the terminal, the SVG and the PNG show it.
pub(crate) fn stats_line(h: &Histogram) -> String {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| num(x, 6));
    format!("entries {}  mean {}  std {}", h.entries, opt(h.mean()), opt(h.std()))
}

/// The histogram `h` of what `title` says, as lines of text.
pub(crate) fn render(title: &str, h: &Histogram) -> String {
    let edges = h.edges();
    let counts = h.counts();
    let most = counts.iter().copied().max().unwrap_or(0);
    let mut out = String::new();
    let (lo, hi) = (edges[0], edges[edges.len() - 1]);
    let _ = writeln!(out, "{title}: {} bins from {} to {}", counts.len(), num(lo, 6), num(hi, 6));
    let _ = writeln!(out, "{:>11}   {:>9}", "low edge", "count");
    let _ = writeln!(out, "{:>11} │ {:>9}", "underflow", h.underflow);
    for (i, &c) in counts.iter().enumerate() {
        let _ = writeln!(out, "{:>11} ┤ {:>9} {}", num(edges[i], 6), c, bar(c, most));
    }
    let _ = writeln!(out, "{:>11} ┘", num(hi, 6));
    let _ = writeln!(out, "{:>11} │ {:>9}", "overflow", h.overflow);
    let _ = writeln!(out, "{}  (in range {})", stats_line(h), h.in_range());
    out
}
