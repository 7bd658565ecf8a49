//! Filling a histogram from a dataset (`rntuple hist`, and the histograms of `rntuple report`):
//! the values of a field (or of an expression over fields, in the selection language of `skim
//! --where`), a collection's elements flattened as RDataFrame's `Histo1D` of an RVec does, in the
//! entries where the `--where` condition holds. Only the fields named are read, a range of whole
//! clusters at a time.

use rntuple::arrow::array::RecordBatch;
use rntuple::dataset::Join;
use rntuple::expr::{parse, Evaluator, Expr, Selection, Values};
use rntuple::inspect::histogram::{Histogram, MinMax};
use std::ops::Range;

/// The most entries read at once (a cluster holding more is read in pieces), and the fewest
/// (smaller clusters are read together).
const MAX_STEP: u64 = 1 << 20;
const MIN_STEP: u64 = 1 << 16;
/// The most values kept from the pass that finds the default range, so that the fill needs no
/// second read (64 MiB); above that, the data are read again.
const MAX_KEPT: usize = 8 << 20;

/// What to histogram.
pub(crate) struct HistSpec<'a> {
    /// A field (`Muon_pt`, `Jet.pt`) or an expression of fields.
    pub(crate) field: &'a str,
    /// The entry condition.
    pub(crate) where_: Option<&'a str>,
    pub(crate) bins: usize,
    /// The range; by default the values' minimum to just above their maximum.
    pub(crate) range: Option<(f64, f64)>,
}

/// The parsed value expression and condition, and the top-level fields they read.
struct Compiled<'a> {
    text: &'a str,
    value: Expr,
    condition: Selection,
    fields: Vec<String>,
}

fn compile<'a>(join: &Join, spec: &HistSpec<'a>) -> Result<Compiled<'a>, Box<dyn std::error::Error>> {
    let value = parse(spec.field)?;
    let condition = Selection::new(spec.where_, &[])?;
    let known: Vec<String> = join.fields().into_iter().map(|(n, _)| n).collect();
    // What to read for each name: the name itself when the dataset has it (a friend's `FRIEND.x`),
    // else its top-level field (`Jet` for `Jet.pt`), else the first field of the collection it
    // names (`Jet_pt` for `count(Jet)`, NanoAOD's flat layout).
    let mut fields: Vec<String> = Vec::new();
    for (top, name, ..) in Selection::new(Some(spec.field), &[])?.names().into_iter().chain(condition.names()) {
        let prefix = format!("{top}_");
        let read = if known.contains(&name) {
            name
        } else if known.contains(&top) {
            top
        } else {
            known.iter().find(|k| k.starts_with(&prefix)).cloned().unwrap_or(top)
        };
        if !known.contains(&read) {
            let shown: Vec<&str> = known.iter().take(30).map(String::as_str).collect();
            let more = if known.len() > shown.len() { format!(", ... ({} fields)", known.len()) } else { String::new() };
            return Err(format!("hist: no field '{read}' (the fields are: {}{more})", shown.join(", ")).into());
        }
        if !fields.contains(&read) {
            fields.push(read);
        }
    }
    Ok(Compiled { text: spec.field, value, condition, fields })
}

/// Entry ranges of whole clusters, consecutive small clusters together (each read has a cost per
/// column and cluster: 36,000 clusters of one entry read one by one took a minute), at most
/// `MAX_STEP` entries each.
fn steps(join: &Join) -> Vec<Range<u64>> {
    let mut out = Vec::new();
    for r in join.parts(MIN_STEP) {
        let mut s = r.start;
        while s < r.end {
            let e = r.end.min(s.saturating_add(MAX_STEP));
            out.push(s..e);
            s = e;
        }
    }
    out
}

/// The values of `c` in the entries of `batch` its condition keeps, handed to `sink`.
fn batch_values(c: &Compiled, batch: &RecordBatch, sink: &mut dyn FnMut(f64)) -> Result<(), Box<dyn std::error::Error>> {
    let n = batch.num_rows();
    let keep = c.condition.masks(batch)?.entries;
    let kept = |i: usize| keep.as_ref().is_none_or(|m| m.get(i).copied().unwrap_or(false));
    let flag = |b: bool| if b { 1.0 } else { 0.0 };
    let elements = |offsets: &[usize], i: usize| offsets.get(i).copied().unwrap_or(0)..offsets.get(i + 1).copied().unwrap_or(0);
    match Evaluator::new(batch, c.text).eval(&c.value)? {
        Values::Num(x) => (0..n).filter(|&i| kept(i)).for_each(|_| sink(x)),
        Values::Bool(b) => (0..n).filter(|&i| kept(i)).for_each(|_| sink(flag(b))),
        Values::Nums(v) => v.iter().enumerate().filter(|(i, _)| kept(*i)).for_each(|(_, &x)| sink(x)),
        Values::Bools(v) => v.iter().enumerate().filter(|(i, _)| kept(*i)).for_each(|(_, &b)| sink(flag(b))),
        Values::ElemNums(coll, v) => {
            for i in (0..n).filter(|&i| kept(i)) {
                v.get(elements(&coll.offsets, i)).into_iter().flatten().for_each(|&x| sink(x));
            }
        }
        Values::ElemBools(coll, v) => {
            for i in (0..n).filter(|&i| kept(i)) {
                v.get(elements(&coll.offsets, i)).into_iter().flatten().for_each(|&b| sink(flag(b)));
            }
        }
    }
    Ok(())
}

/// Every value of `c` over `join`, handed to `sink`.
fn each_value(join: &Join, c: &Compiled, sink: &mut dyn FnMut(f64)) -> Result<(), Box<dyn std::error::Error>> {
    let names: Vec<&str> = c.fields.iter().map(String::as_str).collect();
    for r in steps(join) {
        let batch = join.read_batch(Some(&names), r.start, r.end)?;
        batch_values(c, &batch, sink)?;
    }
    Ok(())
}

/// The histogram of `spec` over `join`. Without a range, a first pass finds it and keeps up to
/// `MAX_KEPT` values to fill from; beyond that, the data are read again.
pub(crate) fn fill(join: &Join, spec: &HistSpec) -> Result<Histogram, Box<dyn std::error::Error>> {
    let c = compile(join, spec)?;
    if let Some((lo, hi)) = spec.range {
        let mut h = Histogram::new(spec.bins, lo, hi)?;
        each_value(join, &c, &mut |x| h.fill(x))?;
        return Ok(h);
    }
    let mut m = MinMax::default();
    let mut kept: Option<Vec<f64>> = Some(Vec::new());
    each_value(join, &c, &mut |x| {
        m.add(x);
        if kept.as_ref().is_some_and(|k| k.len() >= MAX_KEPT) {
            kept = None;
        } else if let Some(k) = &mut kept {
            k.push(x);
        }
    })?;
    let (lo, hi) = m.range();
    let mut h = Histogram::new(spec.bins, lo, hi)?;
    match kept {
        Some(values) => values.into_iter().for_each(|x| h.fill(x)),
        None => each_value(join, &c, &mut |x| h.fill(x))?,
    }
    Ok(h)
}
