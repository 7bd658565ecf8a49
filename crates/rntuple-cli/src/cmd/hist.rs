//! `rntuple hist`: a histogram of a numeric field (a collection's elements flattened), drawn in
//! the terminal, as JSON (`--json`) and as a picture (`--output h.png|h.svg`), over the inputs
//! `dump` takes (files, globs, `FILE:NTUPLE`, friends).

use super::dataset::DatasetArgs;
use super::hist_fill::{fill, HistSpec};
use super::Res;
use crate::draw::hist_svg::Layout;
use crate::draw::{png, raster, terminal};
use rntuple::inspect::histogram::Histogram;

/// The command line of `rntuple hist`.
#[derive(clap::Args)]
pub(crate) struct HistArgs {
    /// The inputs (ROOT files, globs, URLs; each may end in `:NTUPLE`; several make a chain), then
    /// the field: a top-level field (`Muon_pt`), a member (`Jet.pt`) or an expression of fields
    /// (`Muon_pt * 2`); a collection's elements are histogrammed one by one.
    #[arg(required = true, num_args = 2.., value_name = "FILE... FIELD")]
    pub(crate) args: Vec<String>,
    /// The RNTuple (may be omitted when a file holds exactly one).
    #[arg(long)]
    pub(crate) ntuple: Option<String>,
    /// Only the entries where this holds, e.g. 'nMuon >= 2 && MET_pt > 20' (the language of
    /// `skim --where`).
    #[arg(long = "where", value_name = "EXPR")]
    pub(crate) where_: Option<String>,
    /// Number of bins.
    #[arg(long, default_value_t = 100)]
    pub(crate) bins: usize,
    /// The range of the bins, LO HI or LO:HI (`--range=-5:5` for a negative LO); by default the
    /// values' minimum to just above their maximum (the maximum falls inside the last bin).
    /// Values below go to the underflow, values at or above HI (and NaN) to the overflow.
    #[arg(long, num_args = 1..=2, allow_negative_numbers = true, value_names = ["LO", "HI"])]
    pub(crate) range: Option<Vec<String>>,
    /// Also write the histogram as a picture: PATH.png or PATH.svg.
    #[arg(long, short = 'o', value_name = "PATH")]
    pub(crate) output: Option<String>,
    /// One JSON object instead of the drawing: edges, counts, underflow, overflow, entries, mean,
    /// std (mean and std of the values in range, as ROOT's TH1; entries counts all).
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) dataset: DatasetArgs,
}

/// `--range LO HI` or `--range LO:HI`.
fn parse_range(v: &[String]) -> Result<(f64, f64), String> {
    let parts: Vec<&str> = match v {
        [one] => one.splitn(2, ':').collect(),
        [lo, hi] => vec![lo.as_str(), hi.as_str()],
        _ => vec![],
    };
    let bad = || format!("--range {}: give LO HI or LO:HI, two numbers with LO < HI", v.join(" "));
    let [lo, hi] = parts.as_slice() else { return Err(bad()) };
    let (lo, hi): (f64, f64) = (lo.trim().parse().map_err(|_| bad())?, hi.trim().parse().map_err(|_| bad())?);
    if lo < hi && lo.is_finite() && hi.is_finite() {
        Ok((lo, hi))
    } else {
        Err(bad())
    }
}

/// The JSON form of a histogram (`hist --json`, and each histogram of `rntuple report`).
pub(crate) fn hist_json(field: &str, where_: Option<&str>, h: &Histogram) -> serde_json::Value {
    serde_json::json!({
        "field": field, "where": where_, "edges": h.edges(), "counts": h.counts(),
        "underflow": h.underflow, "overflow": h.overflow, "entries": h.entries, "in_range": h.in_range(),
        "mean": h.mean(), "std": h.std(),
    })
}

/// The title of a histogram's drawing.
pub(crate) fn title(field: &str, where_: Option<&str>) -> String {
    match where_ {
        Some(w) => format!("{field} (where {w})"),
        None => field.to_string(),
    }
}

/// Writes the picture of `h` to `path` (by its extension: .png or .svg).
fn write_picture(path: &str, title: &str, h: &Histogram) -> Res {
    let layout = Layout::new(title, h, 720.0, 420.0);
    let lower = path.to_ascii_lowercase();
    let bytes = if lower.ends_with(".svg") {
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n", layout.svg()).into_bytes()
    } else if lower.ends_with(".png") {
        png::encode(&raster::rasterize(&layout))?
    } else {
        return Err(format!("hist --output {path}: the picture's format comes from its extension, .png or .svg").into());
    };
    std::fs::write(path, bytes).map_err(|e| format!("hist --output {path}: {e}"))?;
    Ok(())
}

pub(crate) fn hist(a: &HistArgs) -> Res {
    let Some((field, inputs)) = a.args.split_last() else { return Err("hist: give the input file(s) and the field".into()) };
    let range = a.range.as_deref().map(parse_range).transpose()?;
    let join = a.dataset.open(inputs, a.ntuple.as_deref())?;
    let spec = HistSpec { field, where_: a.where_.as_deref(), bins: a.bins, range };
    let h = fill(&join, &spec)?;
    let title = title(field, a.where_.as_deref());
    if let Some(path) = &a.output {
        write_picture(path, &title, &h)?;
    }
    if a.json {
        println!("{}", hist_json(field, a.where_.as_deref(), &h));
    } else {
        print!("{}", terminal::render(&title, &h));
        if let Some(path) = &a.output {
            println!("picture: {path}");
        }
    }
    Ok(())
}
