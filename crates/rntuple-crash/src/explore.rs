//! Exploring a recorded workload: the durable points' outcomes, then every crash state (or a
//! sample of them) judged against them.

use crate::judge::{allowed, judge, Kind, Outcome};
use crate::model::Fs;
use crate::states::{bytes_after, describe, enumerate, CrashState, Rng};
use crate::workloads::Recorded;
use rntuple::storage::local::io_record::Op;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A state that broke the rule.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The output.
    pub output: PathBuf,
    /// The state.
    pub state: String,
    /// What it read as.
    pub got: String,
    /// What was allowed.
    pub allowed: Vec<String>,
}

/// A saved state for other readers (uproot): the file and what it must read as.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Where the state's file is.
    pub path: PathBuf,
    /// Entries per RNTuple it must hold (None: our reader refused it, so must others or agree).
    pub entries: Option<std::collections::BTreeMap<String, usize>>,
}

/// What exploring one workload found.
#[derive(Debug, Default)]
pub struct Report {
    /// Events in the record.
    pub events: usize,
    /// Durable points (checkpoints and commits reported) per output.
    pub durable_points: usize,
    /// Crash states there were.
    pub states_total: usize,
    /// Crash states judged.
    pub states_judged: usize,
    /// Distinct files among them (each read once).
    pub distinct_files: usize,
    /// States whose file was refused (allowed only before the first durable point).
    pub refused: usize,
    /// States that broke the rule.
    pub violations: Vec<Violation>,
    /// States saved for other readers.
    pub samples: Vec<Sample>,
}

/// The outcome of `bytes` as `kind`, read once per distinct file.
fn cached<'a>(cache: &'a mut HashMap<(u64, usize, bool), Outcome>, kind: Kind, bytes: Option<&[u8]>) -> &'a Outcome {
    let key = match bytes {
        Some(b) => (xxhash_rust::xxh3::xxh3_64(b), b.len(), true),
        None => (0, 0, false),
    };
    cache.entry(key).or_insert_with(|| judge(kind, bytes))
}

/// Options of an exploration.
#[derive(Debug, Clone)]
pub struct Options {
    /// Most states judged per output (a seeded sample when there are more; 0: all).
    pub budget: usize,
    /// Random subsets of the pending changes per point.
    pub subsets: usize,
    /// The sample's seed.
    pub seed: u64,
    /// Where to save states for other readers, and how many per output.
    pub save: Option<(PathBuf, usize)>,
}

/// Explores `rec` (see the crate's documentation for the rule).
pub fn explore(rec: &Recorded, o: &Options) -> Result<Report, String> {
    let mut report = Report { events: rec.events.len(), ..Default::default() };
    for (output, kind) in &rec.outputs {
        explore_output(rec, output, *kind, o, &mut report)?;
    }
    Ok(report)
}

fn explore_output(rec: &Recorded, output: &Path, kind: Kind, o: &Options, report: &mut Report) -> Result<(), String> {
    let mut cache: HashMap<(u64, usize, bool), Outcome> = HashMap::new();
    // Pass 1: the durable points (the initial state first), and every crash state's descriptor.
    let mut fs = Fs::new(&rec.initial);
    let first = rec.initial.iter().find(|(p, _)| p == output).map(|(_, b)| b.clone());
    let mut durable: Vec<Outcome> = vec![cached(&mut cache, kind, first.as_deref()).clone()];
    // For each event: the index into `durable` of the last durable point made before it.
    let mut last_durable = Vec::with_capacity(rec.events.len());
    let mut rng = Rng::new(o.seed);
    let mut states: Vec<CrashState> = Vec::new();
    for (at, e) in rec.events.iter().enumerate() {
        fs.apply(at, e)?;
        if let Op::Durable { path } = &e.op
            && path == output
        {
            let now = cached(&mut cache, kind, fs.current(output)).clone();
            if !matches!(now, Outcome::Read(_) | Outcome::Bytes(..)) {
                return Err(format!("{}: the durable point at event {at} itself reads as {}", output.display(), now.summary()));
            }
            durable.push(now);
        }
        last_durable.push(durable.len() - 1);
        let names = fs.names_pending.len() + 1;
        let pending = (0..names)
            .filter_map(|k| fs.name_after_crash(output, k))
            .filter_map(|id| fs.files.get(&id))
            .map(|f| f.pending.as_slice())
            .max_by_key(|p| p.len())
            .unwrap_or(&[]);
        states.extend(enumerate(at, names, pending, o.subsets, &mut rng));
    }
    report.durable_points += durable.len() - 1;
    // The record is complete: replaying it gives the file on disk.
    let on_disk = std::fs::read(output).ok();
    if fs.current(output).map(|b| b.to_vec()) != on_disk {
        return Err(format!(
            "{}: replaying the record does not give the file on disk ({:?} bytes replayed, {:?} on disk): something changed it outside storage::local::file_io",
            output.display(),
            fs.current(output).map(|b| b.len()),
            on_disk.as_ref().map(|b| b.len())
        ));
    }
    report.states_total += states.len();
    if o.budget > 0 && states.len() > o.budget {
        // A seeded sample, in the record's order.
        for i in 0..o.budget {
            let j = i + rng.below(states.len() - i);
            states.swap(i, j);
        }
        states.truncate(o.budget);
        states.sort_by_key(|s| s.point);
    }
    // Pass 2: replay again, judging the sampled states at their points.
    let mut fs = Fs::new(&rec.initial);
    let mut next = 0;
    let mut saved = 0;
    for (at, e) in rec.events.iter().enumerate() {
        fs.apply(at, e)?;
        while next < states.len() && states[next].point == at {
            let s = &states[next];
            next += 1;
            let bytes = fs.name_after_crash(output, s.names_kept).and_then(|id| fs.files.get(&id)).map(|f| bytes_after(f, &s.keep, o.seed ^ at as u64));
            let got = cached(&mut cache, kind, bytes.as_deref()).clone();
            report.states_judged += 1;
            if matches!(got, Outcome::Refused(_)) {
                report.refused += 1;
            }
            if !allowed(&got, &durable, last_durable[at]) {
                report.violations.push(Violation {
                    output: output.to_path_buf(),
                    state: describe(s),
                    got: got.summary(),
                    allowed: durable[last_durable[at]..].iter().map(Outcome::summary).collect(),
                });
            }
            if let (Some((dir, per_output)), Some(b)) = (&o.save, &bytes)
                && kind == Kind::RNTuple
                && saved < *per_output
                && (rng.below(4) == 0 || matches!(got, Outcome::Refused(_)))
            {
                let path = dir.join(format!("{}-{}-{saved}.root", rec.name, at));
                std::fs::write(&path, b).map_err(|e| format!("saving {}: {e}", path.display()))?;
                report.samples.push(Sample { path, entries: got.entries() });
                saved += 1;
            }
        }
    }
    report.distinct_files += cache.len();
    Ok(())
}
