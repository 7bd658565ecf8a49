//! An RGB canvas to rasterize a histogram's layout on: rectangles, lines and the bitmap font's
//! text; then written as PNG (`png`).

use super::font;
use super::hist_svg::Layout;

/// Colours of the picture (as the SVG's).
const WHITE: [u8; 3] = [255, 255, 255];
const INK: [u8; 3] = [0x33, 0x33, 0x33];
const BAR: [u8; 3] = [0x48, 0x78, 0xb0];

/// Pixels, row by row, 3 bytes each.
pub(crate) struct Canvas {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) rgb: Vec<u8>,
}

impl Canvas {
    /// A white canvas.
    pub(crate) fn new(width: usize, height: usize) -> Canvas {
        Canvas { width, height, rgb: WHITE.repeat(width * height) }
    }

    /// Fills the pixels whose centres lie in `[x0, x1) × [y0, y1)` (clipped to the canvas).
    pub(crate) fn fill(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, colour: [u8; 3]) {
        let clip = |v: f64, max: usize| (v - 0.5).ceil().clamp(0.0, max as f64) as usize;
        let (cx0, cx1, cy0, cy1) = (clip(x0, self.width), clip(x1, self.width), clip(y0, self.height), clip(y1, self.height));
        for y in cy0..cy1 {
            let row = y * self.width * 3;
            for x in cx0..cx1 {
                self.rgb[row + x * 3..row + x * 3 + 3].copy_from_slice(&colour);
            }
        }
    }

    /// `text` in the bitmap font, `scale` pixels per font pixel, its top left corner at `(x, y)`.
    pub(crate) fn text(&mut self, text: &str, x: f64, y: f64, scale: usize, colour: [u8; 3]) {
        let s = scale as f64;
        for (k, c) in text.chars().enumerate() {
            let gx = x + (k * font::ADVANCE) as f64 * s;
            for (px, py) in font::pixels(c) {
                let (fx, fy) = (gx + px as f64 * s, y + py as f64 * s);
                self.fill(fx, fy, fx + s, fy + s, colour);
            }
        }
    }
}

/// The histogram's layout rasterized: bars, axes, ticks, tick labels and the statistics line
/// (the title's letters are not all in the font: the picture's file name carries it).
pub(crate) fn rasterize(l: &Layout) -> Canvas {
    let mut c = Canvas::new(l.width as usize, l.height as usize);
    let (left, top, right, bottom) = l.area;
    for b in &l.bars {
        // At least one pixel wide, so that narrow bins still show.
        c.fill(b.x, b.y, (b.x + b.w).max(b.x + 1.0), b.y + b.h, BAR);
    }
    c.fill(left - 1.0, top, left, bottom + 1.0, INK);
    c.fill(left - 1.0, bottom, right, bottom + 1.0, INK);
    let scale = 2;
    let glyph_h = (font::HEIGHT * scale) as f64;
    for (x, label) in &l.x_ticks {
        c.fill(x - 0.5, bottom, x + 0.5, bottom + 5.0, INK);
        let w = font::text_width(label, scale) as f64;
        c.text(label, x - w / 2.0, bottom + 9.0, scale, INK);
    }
    for (y, label) in &l.y_ticks {
        c.fill(left - 5.0, y - 0.5, left, y + 0.5, INK);
        let w = font::text_width(label, scale) as f64;
        c.text(label, left - 9.0 - w, y - glyph_h / 2.0, scale, INK);
    }
    c.text(&l.stats.0, left, 6.0, scale, INK);
    c.text(&l.stats.1, left, 6.0 + glyph_h + 6.0, scale, INK);
    c
}
