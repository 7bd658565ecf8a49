//! Pictures of numbers, without a plotting library: a histogram in the terminal (Unicode blocks),
//! as SVG (written by hand) and as PNG (rasterized here, with a bitmap font of our own for its
//! numbers); the squarified treemap's layout; number and byte labels shared by all of them.

pub(crate) mod font;
pub(crate) mod hist_svg;
pub(crate) mod png;
pub(crate) mod raster;
pub(crate) mod terminal;
pub(crate) mod treemap;

/// `x` with `digits` significant digits, as C's `%g` writes it: fixed notation for exponents from
/// -4 to `digits - 1`, scientific otherwise, trailing zeros dropped (`0.25`, `1.5e+07`, `-3`).
pub(crate) fn num(x: f64, digits: usize) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let digits = digits.max(1);
    let sci = format!("{:.*e}", digits - 1, x);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= digits as i32 {
        let m = trim_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", exp.abs());
    }
    let decimals = (digits as i32 - 1 - exp).max(0) as usize;
    trim_zeros(&format!("{x:.decimals$}")).to_string()
}

fn trim_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// About `n` round tick positions inside `[lo, hi]` (steps of 1, 2 or 5 times a power of ten).
pub(crate) fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo) || n == 0 {
        return Vec::new();
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw).unwrap_or(10.0 * mag);
    if !(step > 0.0 && step.is_finite()) {
        return Vec::new();
    }
    let first = (lo / step).ceil();
    (0..=n * 2 + 2).map(|k| (first + k as f64) * step).take_while(|t| *t <= hi + step * 1e-9).map(|t| if t.abs() < step * 1e-9 { 0.0 } else { t }).collect()
}

/// XML's special characters escaped (text and attribute values of SVG and HTML).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
