//! `rntuple-crash`: records the writers (see `rntuple_crash::workloads`), explores their crash
//! states and prints a JSON report; exits 1 when a state breaks the rule or the planted bug is
//! not caught.
//!
//! ```text
//! rntuple-crash [--states N] [--subsets K] [--seed S] [--workloads a,b] [--rntuple-bin PATH]
//!               [--save-samples DIR] [--samples-per-output N] [--work DIR] [--planted] [--scale K]
//! rntuple-crash --from-log DIR --output PATH [--bytes] [--states N] ...
//! ```
//!
//! `--from-log`: explores a run recorded elsewhere (any process run with `RNTUPLE_RECORD_IO=DIR`: the
//! CLI, Python, a C program), judging the file at `--output` (an RNTuple file, or with `--bytes` any
//! file compared byte for byte); the run must have started with no file at `--output`.

use rntuple::storage::local::io_record::Op;
use rntuple_crash::explore::{explore, Options};
use rntuple_crash::judge::Kind;
use rntuple_crash::log::load;
use rntuple_crash::workloads::{run, Recorded, NAMES};
use serde_json::json;
use std::path::PathBuf;

struct Args {
    opts: Options,
    workloads: Vec<String>,
    bin: Option<PathBuf>,
    work: PathBuf,
    planted: bool,
    scale: i64,
    from_log: Option<(PathBuf, PathBuf, bool)>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        opts: Options { budget: 400, subsets: 4, seed: 1, save: None },
        workloads: NAMES.iter().map(|s| s.to_string()).collect(),
        bin: None,
        work: std::env::temp_dir().join(format!("rntuple-crash-{}", std::process::id())),
        planted: false,
        scale: 1,
        from_log: None,
    };
    let (mut log_dir, mut output, mut bytes) = (None, None, false);
    let mut save_dir = None;
    let mut per_output = 20;
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut val = || it.next().ok_or(format!("{k} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|_| format!("{k}: not a number: {v}"));
        match k.as_str() {
            "--states" => a.opts.budget = num(val()?)? as usize,
            "--subsets" => a.opts.subsets = num(val()?)? as usize,
            "--seed" => a.opts.seed = num(val()?)?,
            "--workloads" => a.workloads = val()?.split(',').map(str::to_string).collect(),
            "--rntuple-bin" => a.bin = Some(PathBuf::from(val()?)),
            "--save-samples" => save_dir = Some(PathBuf::from(val()?)),
            "--samples-per-output" => per_output = num(val()?)? as usize,
            "--work" => a.work = PathBuf::from(val()?),
            "--planted" => a.planted = true,
            "--scale" => a.scale = num(val()?)? as i64,
            "--from-log" => log_dir = Some(PathBuf::from(val()?)),
            "--output" => output = Some(PathBuf::from(val()?)),
            "--bytes" => bytes = true,
            "-h" | "--help" => {
                println!("{}", include_str!("main.rs").lines().filter_map(|l| l.strip_prefix("//! ")).collect::<Vec<_>>().join("\n"));
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    a.opts.save = save_dir.map(|d| (d, per_output));
    match (log_dir, output) {
        (Some(l), Some(o)) => {
            let o = std::fs::canonicalize(&o).map_err(|e| format!("--output {}: {e}", o.display()))?;
            a.from_log = Some((l, o, bytes));
        }
        (None, None) => {}
        _ => return Err("--from-log and --output go together".into()),
    }
    Ok(a)
}

/// The planted bug: the sequential writer's record with the sync before each rewrite of the
/// file's first bytes (the header pointing at the new anchor and footer) removed, as a writer
/// that wrote its anchor before its footer was synced. The explorer must catch it.
fn planted(a: &Args) -> Result<serde_json::Value, String> {
    let mut rec = run("sequential", &a.work.join("planted"), None, a.scale)?;
    let mut removed = 0;
    let mut i = 1;
    while i < rec.events.len() {
        let header = matches!(&rec.events[i].op, Op::Write { offset: 0, .. });
        if header && matches!(rec.events[i - 1].op, Op::Sync { .. }) {
            rec.events.remove(i - 1);
            removed += 1;
        } else {
            i += 1;
        }
    }
    rec.name = "planted-missing-sync".into();
    let r = explore(&rec, &Options { save: None, ..a.opts.clone() })?;
    Ok(json!({"syncs_removed": removed, "states_judged": r.states_judged, "violations": r.violations.len(),
        "first_violation": r.violations.first().map(|v| format!("{}: {} (allowed: {})", v.state, v.got, v.allowed.join(" | ")))}))
}

fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let a = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("rntuple-crash: {e}");
            std::process::exit(2);
        }
    };
    if let Some((d, _)) = &a.opts.save {
        let _ = std::fs::create_dir_all(d);
    }
    let mut failed = false;
    let mut out = serde_json::Map::new();
    let mut samples = Vec::new();
    let workloads = if a.from_log.is_some() { vec!["from-log".to_string()] } else { a.workloads.clone() };
    for w in &workloads {
        let t = std::time::Instant::now();
        let recorded = match &a.from_log {
            Some((log, output, bytes)) => load(log).map(|events| Recorded {
                name: "from-log".into(),
                events,
                initial: Vec::new(),
                outputs: vec![(output.clone(), if *bytes { Kind::Bytes } else { Kind::RNTuple })],
            }),
            None => run(w, &a.work.join(w), a.bin.as_deref(), a.scale),
        };
        let r = recorded.and_then(|rec| explore(&rec, &a.opts));
        match r {
            Ok(r) => {
                failed |= !r.violations.is_empty();
                eprintln!(
                    "{w}: {} events, {} durable points, {} states ({} judged, {} distinct files, {} refused), {} violations, {:.1} s",
                    r.events,
                    r.durable_points,
                    r.states_total,
                    r.states_judged,
                    r.distinct_files,
                    r.refused,
                    r.violations.len(),
                    t.elapsed().as_secs_f64()
                );
                for v in r.violations.iter().take(5) {
                    eprintln!("  VIOLATION {}: {}: read as {}; allowed: {}", v.output.display(), v.state, v.got, v.allowed.join(" | "));
                }
                samples.extend(r.samples.iter().map(|s| json!({"workload": w, "path": s.path, "entries": s.entries})));
                out.insert(w.clone(), json!({"events": r.events, "durable_points": r.durable_points, "states_total": r.states_total,
                    "states_judged": r.states_judged, "distinct_files": r.distinct_files, "refused": r.refused,
                    "violations": r.violations.iter().map(|v| json!({"output": v.output, "state": v.state, "got": v.got, "allowed": v.allowed})).collect::<Vec<_>>(),
                    "seconds": t.elapsed().as_secs_f64()}));
            }
            Err(e) => {
                failed = true;
                eprintln!("{w}: ERROR {e}");
                out.insert(w.clone(), json!({"error": e}));
            }
        }
    }
    let mut report = json!({"workloads": out, "samples": samples});
    if a.planted {
        match planted(&a) {
            Ok(p) => {
                failed |= p["violations"].as_u64().unwrap_or(0) == 0;
                eprintln!("planted bug (an anchor rewritten before its footer is synced): {} violations found", p["violations"]);
                report["planted"] = p;
            }
            Err(e) => {
                failed = true;
                report["planted"] = json!({"error": e});
            }
        }
    }
    println!("{}", serde_json::to_string_pretty(&report).unwrap_or_default());
    let _ = std::fs::remove_dir_all(&a.work);
    std::process::exit(i32::from(failed));
}
