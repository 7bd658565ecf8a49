//! `rntuple info FILE --follow`: watches a file that a writer with `--checkpoint-clusters` is still
//! extending, printing each new checkpoint's entries and clusters as it appears.
//!
//! A final commit writes the same records as a checkpoint (the file header, keys list, anchor and
//! footer of a committed file and of a checkpoint are alike), so a reader cannot tell that the
//! writer is done: following ends after `--timeout` seconds without a new checkpoint, or on
//! Ctrl-C.

use super::Res;
use rntuple::RNTupleFile;
use std::io::Write;
use std::time::{Duration, Instant};

/// The options of `--follow`.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct FollowArgs {
    /// Watch the file as a writer with checkpoints extends it: print every new checkpoint's
    /// entries and clusters (a line each; JSON lines with --json), until --timeout or Ctrl-C. A
    /// file not written yet is waited for.
    #[arg(long)]
    pub(crate) follow: bool,
    /// Seconds between two looks at the file (with --follow).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub(crate) interval: f64,
    /// Stop following after this many seconds without a new checkpoint (a commit looks like a
    /// checkpoint, so the end of a writer cannot be told otherwise); without it, follow until Ctrl-C.
    #[arg(long, value_name = "SECONDS")]
    pub(crate) timeout: Option<f64>,
}

/// What one look at the file found: the RNTuple's entries and cluster boundaries.
#[derive(PartialEq)]
struct Seen {
    entries: u64,
    clusters: u64,
}

fn look(path: &str, ntuple: Option<&str>) -> rntuple::Result<(String, Seen)> {
    let f = RNTupleFile::open(path)?;
    let name = match ntuple {
        Some(n) => n.to_string(),
        None => super::pick_ntuple(&f, None).map_err(|e| rntuple::Error::NotFound(e.to_string()))?,
    };
    let r = f.reader(&name)?;
    Ok((name, Seen { entries: r.num_entries(), clusters: r.descriptor().clusters.len() as u64 }))
}

/// Follows `path` (see the module documentation).
pub(crate) fn follow(path: &str, ntuple: Option<&str>, json: bool, args: &FollowArgs) -> Res {
    if !(args.interval.is_finite() && args.interval > 0.0) {
        return Err(format!("--interval {} is not a positive number of seconds", args.interval).into());
    }
    let idle = match args.timeout {
        Some(t) if !(t.is_finite() && t >= 0.0) => return Err(format!("--timeout {t} is not a number of seconds").into()),
        Some(t) => Some(Duration::from_secs_f64(t)),
        None => None,
    };
    let interval = Duration::from_secs_f64(args.interval);
    let start = Instant::now();
    let mut last_change = start;
    let mut last: Option<Seen> = None;
    let mut checkpoints = 0u64;
    let mut last_error = String::new();
    let out = std::io::stdout();
    loop {
        match look(path, ntuple) {
            Ok((name, seen)) if last.as_ref() != Some(&seen) => {
                checkpoints += 1;
                let (prev_entries, prev_clusters) = last.as_ref().map_or((0, 0), |s| (s.entries, s.clusters));
                let mut w = out.lock();
                let t = start.elapsed().as_secs_f64();
                if json {
                    let line = serde_json::json!({
                        "ntuple": name,
                        "checkpoint": checkpoints,
                        "entries": seen.entries,
                        "new_entries": seen.entries as i128 - prev_entries as i128,
                        "clusters": seen.clusters,
                        "new_clusters": seen.clusters as i128 - prev_clusters as i128,
                        "seconds": (t * 1000.0).round() / 1000.0,
                    });
                    writeln!(w, "{line}")?;
                } else {
                    writeln!(
                        w,
                        "{path}:{name}: {} entries (+{}) in {} clusters (+{}) after {t:.1} s",
                        seen.entries,
                        seen.entries as i128 - prev_entries as i128,
                        seen.clusters,
                        seen.clusters as i128 - prev_clusters as i128
                    )?;
                }
                w.flush()?;
                last = Some(seen);
                last_change = Instant::now();
                last_error.clear();
            }
            Ok(_) => {}
            // Not there yet, no checkpoint yet, or a look that failed: said once, and looked at again.
            Err(e) => {
                let msg = e.to_string();
                if msg != last_error {
                    eprintln!("rntuple: {msg} (following: looking again every {} s)", args.interval);
                    last_error = msg;
                }
            }
        }
        if idle.is_some_and(|d| last_change.elapsed() >= d) {
            return match last {
                Some(_) => Ok(()),
                None => Err(format!("{path}: no checkpoint appeared within --timeout {} s", args.timeout.unwrap_or_default()).into()),
            };
        }
        std::thread::sleep(interval);
    }
}
