//! The squarified treemap layout (Bruls, Huizing and van Wijk, 2000), as ROOT's RNTupleTreeMap
//! draws a file's bytes: items in decreasing size fill rows along the shorter side of what is
//! left while that keeps the rows' rectangles closer to squares. Linear in the items (after their
//! sort): running sums, no pass over pairs.

/// A rectangle: left, top, width, height.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Rect {
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

impl Rect {
    /// The rectangle shrunk by `by` on every side (never below zero size).
    pub(crate) fn inset(&self, by: f64) -> Rect {
        let (dx, dy) = (by.min(self.w / 2.0), by.min(self.h / 2.0));
        Rect { x: self.x + dx, y: self.y + dy, w: self.w - 2.0 * dx, h: self.h - 2.0 * dy }
    }
}

/// The worst aspect ratio of a row of total area `sum`, whose largest and smallest items have
/// areas `max` and `min`, laid along a side of length `side`.
fn worst(sum: f64, max: f64, min: f64, side: f64) -> f64 {
    let (s2, side2) = (sum * sum, side * side);
    (side2 * max / s2).max(s2 / (side2 * min))
}

/// One rectangle per item of `sizes` (in their order), their areas proportional to the sizes,
/// together filling `r` (items of size 0 or less get an empty rectangle).
pub(crate) fn squarify(sizes: &[f64], r: Rect) -> Vec<Rect> {
    let mut out = vec![Rect { x: r.x, y: r.y, w: 0.0, h: 0.0 }; sizes.len()];
    let mut order: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0.0 && sizes[i].is_finite()).collect();
    order.sort_by(|&a, &b| sizes[b].total_cmp(&sizes[a]));
    let total: f64 = order.iter().map(|&i| sizes[i]).sum();
    if total <= 0.0 || r.w <= 0.0 || r.h <= 0.0 {
        return out;
    }
    let scale = r.w * r.h / total;
    let mut free = r;
    let mut start = 0;
    while start < order.len() {
        let side = free.w.min(free.h);
        // Grow the row while its worst aspect ratio does not get worse.
        let first = sizes[order[start]] * scale;
        let (mut sum, max, mut min) = (first, first, first);
        let mut end = start + 1;
        while end < order.len() {
            let a = sizes[order[end]] * scale;
            if worst(sum + a, max, min.min(a), side) > worst(sum, max, min, side) {
                break;
            }
            sum += a;
            min = min.min(a);
            end += 1;
        }
        let row = &order[start..end];
        if free.w >= free.h {
            // A column at the left of what is free.
            let cw = if end == order.len() { free.w } else { (sum / free.h).min(free.w) };
            let mut y = free.y;
            for &i in row {
                let h = sizes[i] * scale / sum * free.h;
                out[i] = Rect { x: free.x, y, w: cw, h };
                y += h;
            }
            free = Rect { x: free.x + cw, w: free.w - cw, ..free };
        } else {
            // A row at the top.
            let rh = if end == order.len() { free.h } else { (sum / free.w).min(free.h) };
            let mut x = free.x;
            for &i in row {
                let w = sizes[i] * scale / sum * free.w;
                out[i] = Rect { x, y: free.y, w, h: rh };
                x += w;
            }
            free = Rect { y: free.y + rh, h: free.h - rh, ..free };
        }
        start = end;
    }
    out
}
