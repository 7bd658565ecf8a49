//! Skimming: a new file holding some top-level fields, a range of entries, or the entries and
//! collection elements a selection keeps, of one RNTuple or of many files of it.
//!
//! [`run`] is the one entry (the CLI's `skim` and Python's `rntuple.skim` call it): it picks the
//! engine for a [`SkimRequest`] and returns a [`SkimReport`], whose [`SkimReport::to_json`] is the
//! report they print or return. The engines:
//! - one input without a selection: `skim` / `skim_reader` (`ops/skim_one.rs`), which copy the
//!   kept fields' compressed pages when the entries are whole clusters and re-encode otherwise;
//! - a selection (`where_`, `filters`), several inputs, a glob or a number of threads:
//!   `ops::select::skim_many`, on threads, through one parallel writer.
//!
//! ```
//! use rntuple::ops::skim::{run, EntryRange, SkimOutcome, SkimRequest};
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let input = dir.join("rntuple-doc-skim-run-in.root");
//! let mut w = Writer::create(&input, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
//! for i in 0..10 {
//!     w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
//! }
//! w.commit()?;
//! let out = dir.join("rntuple-doc-skim-run-out.root");
//! let one = SkimRequest { inputs: vec![input.display().to_string()], ..Default::default() };
//! let rep = run(&one, &out, WriteOptions::default(), &|_, _| {})?;
//! assert!(matches!(rep.outcome, SkimOutcome::One(_)));
//! assert_eq!(rep.to_json()["method"], "copied pages");
//! let selected = SkimRequest { where_: Some("x >= 7".into()), ..one.clone() };
//! let rep = run(&selected, &out, WriteOptions::default(), &|_, _| {})?;
//! assert!(matches!(rep.outcome, SkimOutcome::Many(_)));
//! assert_eq!((rep.to_json()["entries_read"].as_u64(), rep.to_json()["entries"].as_u64()), (Some(10), Some(3)));
//! let ranged = SkimRequest { entries: Some(EntryRange::Text("2:5".into())), ..one };
//! assert_eq!(run(&ranged, &out, WriteOptions::default(), &|_, _| {})?.to_json()["entries"], 3);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::ops::select::{skim_many, SkimMany};
use crate::ops::skim_one::{self, only_ntuple};
use crate::read::file::RNTupleFile;
use crate::storage::local::output::refuse_same_file;
use crate::write::WriteOptions;
use serde_json::json;
use std::path::Path;
use std::time::Instant;

pub use crate::ops::select::SkimManyStats;
pub use crate::ops::skim_one::{SkimMethod, SkimStats};
/// The engines behind [`run`], for the in-tree front ends and tests (`unstable` feature).
#[cfg(feature = "unstable")]
pub use crate::ops::{
    select::output_schema,
    skim_one::{skim, skim_reader, skim_with_progress, Skim},
};

/// What to skim, for either engine (see [`run`]).
///
/// ```
/// use rntuple::ops::skim::{run, SkimRequest};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-SkimRequest-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-SkimRequest-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// // The field x of the entries with y > 4.5, on two threads.
/// let req = SkimRequest {
///     inputs: vec![input.display().to_string()],
///     fields: Some(vec!["x".into()]),
///     where_: Some("y > 4.5".into()),
///     threads: Some(2),
///     ..Default::default()
/// };
/// run(&req, &out, WriteOptions::default(), &|_, _| {})?;
/// let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
/// assert_eq!((r.fields().len(), r.num_entries()), (1, 5));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SkimRequest {
    /// Input files, globs (`data/*.root`) or URLs, in order.
    pub inputs: Vec<String>,
    /// The RNTuple to read (the only one of each input when `None`).
    pub ntuple: Option<String>,
    /// Top-level fields to write, in the (first) input's schema order (all when `None`).
    pub fields: Option<Vec<String>>,
    /// The entries to keep, of one input without a selection only.
    pub entries: Option<EntryRange>,
    /// The entry condition (an expression).
    pub where_: Option<String>,
    /// `(collection, expression)` element filters.
    pub filters: Vec<(String, String)>,
    /// Threads of the selecting engine (`0`: one per core). `None` lets one input without a
    /// selection be skimmed by the page-copying engine, and is one thread otherwise.
    pub threads: Option<usize>,
    /// Re-encode even when the pages could be copied (page-copying engine; the selecting engine
    /// copies clusters that pass whole and re-encodes the rest, whatever this says).
    pub reencode: bool,
    /// Inputs (of the selecting engine) may lack kept fields: the output holds every kept field
    /// any input has, and the entries of an input lacking one get its default value (zero,
    /// empty; as ROOT's union merge fills them). Off, such an input is an error. Fields the
    /// expressions name must be in every input either way.
    pub fill_missing: bool,
}

/// An entry range of a skim of one input.
///
/// ```
/// use rntuple::ops::skim::EntryRange;
/// assert_eq!(EntryRange::Text("2:5".into()).resolve(10)?, (2, 5));
/// assert_eq!(EntryRange::Text(":".into()).resolve(10)?, (0, 10));
/// assert!(EntryRange::Text("0:11".into()).resolve(10).is_err()); // past the 10 entries
/// assert_eq!(EntryRange::Clamped(3, u64::MAX).resolve(10)?, (3, u64::MAX)); // the skim clamps it
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryRange {
    /// Entries `[start, stop)`: `stop` is clamped to the entry count, a reversed range is an error
    /// (as the page-copying engine takes it).
    Clamped(u64, u64),
    /// `START:STOP`, as the CLI's `--entries`: either side may be omitted; a range reaching outside
    /// `0..=n` or reversed is an error naming the range and the entry count.
    Text(String),
}

impl EntryRange {
    /// The `[start, stop)` of this range in an RNTuple of `n` entries (as the page-copying engine
    /// takes it).
    pub fn resolve(&self, n: u64) -> Result<(u64, u64)> {
        match self {
            EntryRange::Clamped(a, b) => Ok((*a, *b)),
            EntryRange::Text(s) => {
                let bad = |m: String| Error::Invalid(format!("--entries '{s}': {m}"));
                let (a, b) = s.split_once(':').ok_or_else(|| bad("expected START:STOP".into()))?;
                let a: u64 = if a.is_empty() { 0 } else { a.trim().parse().map_err(|_| bad(format!("bad start '{a}'")))? };
                let b: u64 = if b.is_empty() { n } else { b.trim().parse().map_err(|_| bad(format!("bad stop '{b}'")))? };
                if a > n || b > n {
                    return Err(bad(format!("the RNTuple has {n} entries (valid ranges lie within 0:{n})")));
                }
                if a > b {
                    return Err(bad(format!("start {a} is after stop {b}")));
                }
                Ok((a, b))
            }
        }
    }
}

/// The engine a [`SkimRequest`] runs on.
///
/// ```
/// use rntuple::ops::skim::{EntryRange, SkimEngine, SkimRequest};
/// let one = SkimRequest { inputs: vec!["a.root".into()], ..Default::default() };
/// assert_eq!(one.engine()?, SkimEngine::One);
/// assert_eq!(SkimRequest { where_: Some("x > 1".into()), ..one.clone() }.engine()?, SkimEngine::Many);
/// assert_eq!(SkimRequest { inputs: vec!["data/*.root".into()], ..one.clone() }.engine()?, SkimEngine::Many);
/// // An entry range is for the page-copying engine only.
/// let ranged = SkimRequest { entries: Some(EntryRange::Clamped(0, 5)), threads: Some(2), ..one };
/// assert!(ranged.engine().is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkimEngine {
    /// `skim_reader`: one input, no selection; pages copied as stored, or entries re-encoded.
    One,
    /// `skim_many`: a selection, several inputs, a glob or threads.
    Many,
}

impl SkimRequest {
    /// The engine for this request: one input (not a glob) without a selection and without
    /// `threads` is skimmed by [`SkimEngine::One`], anything else by [`SkimEngine::Many`]; an entry
    /// range with anything else is an error.
    pub fn engine(&self) -> Result<SkimEngine> {
        let selection = self.where_.is_some() || !self.filters.is_empty();
        let one_plain_file = self.inputs.len() == 1 && !self.inputs[0].contains(['*', '?', '[']);
        if one_plain_file && !selection && self.threads.is_none() {
            return Ok(SkimEngine::One);
        }
        if self.entries.is_some() {
            return Err(Error::Invalid("skim: --entries applies to one input without --where, --filter or --threads".into()));
        }
        Ok(SkimEngine::Many)
    }
}

/// What the engine of a skim did.
///
/// ```
/// use rntuple::ops::skim::{run, SkimMethod, SkimOutcome, SkimRequest};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-SkimOutcome-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-SkimOutcome-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let req = SkimRequest { inputs: vec![input.display().to_string()], ..Default::default() };
/// let report = run(&req, &out, WriteOptions::default(), &|_, _| {})?;
/// let SkimOutcome::One(stats) = &report.outcome else { panic!("not the page-copying engine") };
/// assert_eq!((stats.entries, stats.method), (10, SkimMethod::CopiedPages));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub enum SkimOutcome {
    /// The page-copying engine's statistics ([`SkimEngine::One`]).
    One(SkimStats),
    /// The selecting engine's statistics ([`SkimEngine::Many`]).
    Many(SkimManyStats),
}

/// What a skim did: the request's inputs, output and selection, the engine's statistics and the
/// time taken. [`SkimReport::to_json`] is the report the CLI prints.
///
/// ```
/// use rntuple::ops::skim::{run, SkimRequest};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-SkimReport-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-SkimReport-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let req = SkimRequest { inputs: vec![input.display().to_string()], where_: Some("x < 3".into()), ..Default::default() };
/// let report = run(&req, &out, WriteOptions::default(), &|_, _| {})?;
/// assert_eq!((report.ntuple.as_str(), report.where_.as_deref()), ("Events", Some("x < 3")));
/// assert_eq!(report.output, out.display().to_string());
/// let json = report.to_json();
/// assert_eq!((json["method"].as_str(), json["entries"].as_u64()), (Some("re-encoded"), Some(3)));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SkimReport {
    /// The inputs, as given.
    pub inputs: Vec<String>,
    /// The output, as given.
    pub output: String,
    /// The RNTuple skimmed.
    pub ntuple: String,
    /// The entry condition.
    pub where_: Option<String>,
    /// The element filters.
    pub filters: Vec<(String, String)>,
    /// Seconds the skim took.
    pub seconds: f64,
    /// What the engine did.
    pub outcome: SkimOutcome,
}

impl SkimReport {
    /// The report as JSON: for [`SkimOutcome::One`] `input`, `output`, `ntuple`, `method`,
    /// `why_not_copied`, `fields`, `entry_start`, `entry_stop`, `entries`, `clusters`,
    /// `pages_copied`, `page_bytes_copied`, `file_bytes`, `seconds`; for [`SkimOutcome::Many`]
    /// `inputs` (their number), `output`, `ntuple`, `method`, `where`, `filters`
    /// (`COLLECTION:EXPR`), `clusters_copied`, `fields`, `entries_read`, `entries`, `parts`,
    /// `clusters`, `threads`, `file_bytes`, `seconds`; in this order.
    pub fn to_json(&self) -> serde_json::Value {
        match &self.outcome {
            SkimOutcome::One(s) => json!({
                "input": self.inputs.first(), "output": self.output, "ntuple": self.ntuple, "method": s.method.as_str(),
                "why_not_copied": s.reason, "fields": s.fields, "entry_start": s.range.0, "entry_stop": s.range.1,
                "entries": s.entries, "clusters": s.clusters, "pages_copied": s.pages, "page_bytes_copied": s.page_bytes,
                "file_bytes": s.file_bytes, "seconds": self.seconds,
            }),
            SkimOutcome::Many(s) => {
                let filters: Vec<String> = self.filters.iter().map(|(c, e)| format!("{c}:{e}")).collect();
                json!({
                    "inputs": s.inputs, "output": self.output, "ntuple": s.ntuple, "method": s.method(), "where": self.where_,
                    "filters": filters, "clusters_copied": s.clusters_copied, "fields": s.fields, "entries_read": s.entries_read,
                    "entries": s.entries, "parts": s.parts, "clusters": s.clusters, "threads": s.threads, "file_bytes": s.file_bytes,
                    "seconds": self.seconds,
                })
            }
        }
    }
}

/// Skims `req` into a new file `output` on the engine [`SkimRequest::engine`] picks; `progress` is
/// called with (entries done, entries to do), from any thread.
///
/// ```
/// use rntuple::ops::skim::{run, SkimRequest};
/// use rntuple::write::WriteOptions;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-run-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-run-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let req = SkimRequest { inputs: vec![input.display().to_string()], where_: Some("x % 2 == 0".into()), ..Default::default() };
/// let done = AtomicU64::new(0);
/// let report = run(&req, &out, WriteOptions::default(), &|d, _| {
///     done.fetch_max(d, Ordering::Relaxed);
/// })?;
/// assert_eq!((done.load(Ordering::Relaxed), report.to_json()["entries"].as_u64()), (10, Some(5)));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(req: &SkimRequest, output: impl AsRef<Path>, opts: WriteOptions, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<SkimReport> {
    let output = output.as_ref();
    let t = Instant::now();
    let (ntuple, outcome) = match req.engine()? {
        SkimEngine::One => {
            let input = &req.inputs[0];
            // Refused under any name, before anything is opened for writing.
            refuse_same_file(output, &[Path::new(input)], "skim")?;
            let f = RNTupleFile::open(input).map_err(|e| e.context(format!("skim: {input}")))?;
            let ntuple = match &req.ntuple {
                Some(n) => n.clone(),
                None => only_ntuple(&f, input)?,
            };
            let r = f.reader(&ntuple).map_err(|e| e.context(format!("skim: {input}")))?;
            let entries = req.entries.as_ref().map(|e| e.resolve(r.num_entries())).transpose()?;
            let what = skim_one::Skim { fields: req.fields.clone(), entries, reencode: req.reencode };
            let stats = skim_one::skim_reader(&r, output, &what, opts, progress)?;
            (ntuple, SkimOutcome::One(stats))
        }
        SkimEngine::Many => {
            let what = SkimMany {
                inputs: req.inputs.clone(),
                ntuple: req.ntuple.clone(),
                fields: req.fields.clone(),
                where_: req.where_.clone(),
                filters: req.filters.clone(),
                threads: req.threads.unwrap_or(1),
                fill_missing: req.fill_missing,
            };
            let stats = skim_many(&what, output, opts, progress)?;
            (stats.ntuple.clone(), SkimOutcome::Many(stats))
        }
    };
    Ok(SkimReport {
        inputs: req.inputs.clone(),
        output: output.display().to_string(),
        ntuple,
        where_: req.where_.clone(),
        filters: req.filters.clone(),
        seconds: t.elapsed().as_secs_f64(),
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(inputs: &[&str]) -> SkimRequest {
        SkimRequest { inputs: inputs.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn the_engine_follows_the_inputs_the_selection_and_the_threads() {
        assert_eq!(request(&["a.root"]).engine().unwrap(), SkimEngine::One);
        let ranged = SkimRequest { entries: Some(EntryRange::Clamped(0, 5)), reencode: true, ..request(&["a.root"]) };
        assert_eq!(ranged.engine().unwrap(), SkimEngine::One);
        assert_eq!(request(&["a.root", "b.root"]).engine().unwrap(), SkimEngine::Many);
        assert_eq!(request(&["data/*.root"]).engine().unwrap(), SkimEngine::Many);
        assert_eq!(request(&["a[12].root"]).engine().unwrap(), SkimEngine::Many);
        assert_eq!(request(&[]).engine().unwrap(), SkimEngine::Many);
        assert_eq!(SkimRequest { where_: Some("x > 1".into()), ..request(&["a.root"]) }.engine().unwrap(), SkimEngine::Many);
        assert_eq!(SkimRequest { filters: vec![("Jet".into(), "Jet_pt > 1".into())], ..request(&["a.root"]) }.engine().unwrap(), SkimEngine::Many);
        assert_eq!(SkimRequest { threads: Some(1), ..request(&["a.root"]) }.engine().unwrap(), SkimEngine::Many);
        for bad in [
            SkimRequest { entries: Some(EntryRange::Text("0:5".into())), ..request(&["a.root", "b.root"]) },
            SkimRequest { entries: Some(EntryRange::Clamped(0, 5)), where_: Some("x > 1".into()), ..request(&["a.root"]) },
            SkimRequest { entries: Some(EntryRange::Clamped(0, 5)), threads: Some(2), ..request(&["a.root"]) },
        ] {
            let e = bad.engine().unwrap_err().to_string();
            assert!(e.contains("--entries applies to one input without --where, --filter or --threads"), "{e}");
        }
    }

    #[test]
    fn entry_ranges() {
        let r = |s: &str| EntryRange::Text(s.into()).resolve(10);
        assert_eq!(r("2:5").unwrap(), (2, 5));
        assert_eq!(r(":").unwrap(), (0, 10));
        assert_eq!(r("3:").unwrap(), (3, 10));
        assert_eq!(r(":4").unwrap(), (0, 4));
        assert_eq!(r("10:10").unwrap(), (10, 10));
        let e = |s: &str| r(s).unwrap_err().to_string();
        assert!(e("10:5").contains("--entries '10:5': start 10 is after stop 5"), "{}", e("10:5"));
        assert!(e("0:11").contains("has 10 entries (valid ranges lie within 0:10)"), "{}", e("0:11"));
        assert!(e("11:").contains("has 10 entries"), "{}", e("11:"));
        assert!(e("x:3").contains("bad start 'x'"));
        assert!(e("1:y").contains("bad stop 'y'"));
        assert!(e("5").contains("expected START:STOP"));
        // Clamped ranges are the engine's business (clamped there, reversed refused there).
        assert_eq!(EntryRange::Clamped(3, u64::MAX).resolve(10).unwrap(), (3, u64::MAX));
    }
}
