//! The recorded writers: each runs on small data in a directory of its own, recorded by
//! `io_record` from the first byte of its outputs to its last durable point, after checking that
//! its final output holds what was written.

use crate::judge::Kind;
use rntuple::storage::local::io_record::{self, Event};
use rntuple::write::{FileWriter, ParallelWriter, WriteOptions, Writer};
use rntuple::Value;
use std::path::{Path, PathBuf};

/// A workload's record and what to judge.
pub struct Recorded {
    /// The workload's name.
    pub name: String,
    /// The merged record.
    pub events: Vec<Event>,
    /// Files that existed before the record (path, bytes).
    pub initial: Vec<(PathBuf, Vec<u8>)>,
    /// The outputs to judge, at their final paths.
    pub outputs: Vec<(PathBuf, Kind)>,
}

/// The workloads `run` knows, in order.
pub const NAMES: [&str; 12] = [
    "sequential",
    "sequential-long-name",
    "sequential-atomic",
    "subdirectory",
    "parallel",
    "file-writer",
    "update",
    "skim",
    "merge",
    "convert-to-root",
    "convert-to-parquet",
    "mpi",
];

const SCHEMA: [(&str, &str); 4] = [("n", "std::int64_t"), ("x", "float"), ("v", "std::vector<std::int32_t>"), ("s", "std::string")];

/// Entry `i` of every workload's data.
pub fn entry(i: i64) -> Value {
    Value::Record(vec![
        ("n".into(), Value::Int(i)),
        ("x".into(), Value::F32(i as f32 * 0.25)),
        ("v".into(), Value::List((0..i % 3).map(|k| Value::Int(i + k)).collect())),
        ("s".into(), Value::String(format!("e{i}"))),
    ])
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Checks that `name` in `path` holds entries `first..first+n` of the data (the value of every
/// entry's `n` and `x`).
fn verify(path: &Path, name: &str, first: i64, n: usize) -> Result<(), String> {
    use rntuple::arrow::array::{Array, Float32Array, Int64Array};
    let r = rntuple::RNTupleFile::open(path).map_err(err)?.reader(name).map_err(err)?;
    let b = r.read_batch(Some(&["n", "x"]), 0, r.num_entries()).map_err(err)?;
    let ns = b.column(0).as_any().downcast_ref::<Int64Array>().ok_or("n is not int64")?;
    let xs = b.column(1).as_any().downcast_ref::<Float32Array>().ok_or("x is not float")?;
    if ns.len() != n {
        return Err(format!("{}: {name} holds {} entries, {n} were written", path.display(), ns.len()));
    }
    for k in 0..n {
        let i = first + k as i64;
        if ns.value(k) != i || xs.value(k) != i as f32 * 0.25 {
            return Err(format!("{}: {name} entry {k} is ({}, {}), ({i}, {}) was written", path.display(), ns.value(k), xs.value(k), i as f32 * 0.25));
        }
    }
    Ok(())
}

fn small() -> WriteOptions {
    WriteOptions { max_unzipped_page_size: 2048, ..Default::default() }
}

fn sequential(path: &Path, name: &str, opts: WriteOptions, n: i64, per_cluster: i64) -> Result<(), String> {
    let mut w = Writer::create(path, name, &SCHEMA, opts).map_err(err)?;
    for i in 0..n {
        w.fill(&entry(i)).map_err(err)?;
        if (i + 1) % per_cluster == 0 {
            w.commit_cluster().map_err(err)?;
        }
    }
    w.commit().map_err(err)?;
    Ok(())
}

/// Runs workload `name` in `dir` (made empty first), recording it; `bin`: the `rntuple` command
/// (for the MPI workload, run by `mpirun`); `scale` multiplies the entries (and so the clusters,
/// checkpoints and writes).
pub fn run(name: &str, dir: &Path, bin: Option<&Path>, scale: i64) -> Result<Recorded, String> {
    let k = scale.max(1);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(err)?;
    let dir = std::fs::canonicalize(dir).map_err(err)?;
    let log = dir.join("io.log");
    let ckpt = WriteOptions { checkpoint_clusters: 1, ..small() };
    let out = dir.join("out.root");
    let mut initial = Vec::new();
    let mut outputs = vec![(out.clone(), Kind::RNTuple)];
    // Inputs are written before the record starts (they are durable: committed).
    let input = dir.join("in.root");
    let make_input = |p: &Path, n: i64| sequential(p, "Events", small(), n, 40);
    let record = |f: &mut dyn FnMut() -> Result<(), String>| -> Result<(), String> {
        io_record::start(&log).map_err(err)?;
        let r = f();
        io_record::stop();
        r
    };
    match name {
        "sequential" => {
            record(&mut || sequential(&out, "Events", ckpt.clone(), 240 * k, 40))?;
            verify(&out, "Events", 0, 240 * k as usize)?;
        }
        "sequential-long-name" => {
            let long = dir.join(format!("{}.root", "a-file-name-as-long-as-grid-paths-make-them".repeat(5)));
            outputs = vec![(long.clone(), Kind::RNTuple)];
            record(&mut || sequential(&long, "Events", ckpt.clone(), 160 * k, 40))?;
            verify(&long, "Events", 0, 160 * k as usize)?;
        }
        "sequential-atomic" => {
            make_input(&out, 30)?;
            initial.push((out.clone(), std::fs::read(&out).map_err(err)?));
            record(&mut || sequential(&out, "Events", small(), 200 * k, 50))?;
            verify(&out, "Events", 0, 200 * k as usize)?;
        }
        "subdirectory" => {
            record(&mut || sequential(&out, "a/b/Events", ckpt.clone(), 160 * k, 40))?;
            verify(&out, "a/b/Events", 0, 160 * k as usize)?;
        }
        "parallel" => {
            record(&mut || {
                let w = ParallelWriter::create(&out, "Events", &SCHEMA, ckpt.clone()).map_err(err)?;
                std::thread::scope(|s| -> Result<(), String> {
                    let hs: Vec<_> = (0..4)
                        .map(|t| {
                            let mut c = w.fill_context().map_err(err)?;
                            Ok(s.spawn(move || -> Result<(), String> {
                                for j in 0..60 * k {
                                    c.fill(&entry(t * 100_000 + j)).map_err(err)?;
                                    if (j + 1) % 20 == 0 {
                                        c.flush_cluster().map_err(err)?;
                                    }
                                }
                                c.finish().map(|_| ()).map_err(err)
                            }))
                        })
                        .collect::<Result<_, String>>()?;
                    for h in hs {
                        h.join().map_err(|_| "a fill thread panicked".to_string())??;
                    }
                    Ok(())
                })?;
                w.commit().map(|_| ()).map_err(err)
            })?;
            let r = rntuple::RNTupleFile::open(&out).map_err(err)?.reader("Events").map_err(err)?;
            if r.num_entries() != 240 * k as u64 {
                return Err(format!("parallel: {} entries, {} written", r.num_entries(), 240 * k));
            }
        }
        "file-writer" => {
            record(&mut || {
                let f = FileWriter::create(&out, ckpt.clone()).map_err(err)?;
                for t in 0..4 {
                    let mut w = f.writer(&format!("T{t}"), &SCHEMA).map_err(err)?;
                    for i in 0..(40 + 20 * t) * k {
                        w.fill(&entry(i)).map_err(err)?;
                        if (i + 1) % 30 == 0 {
                            w.commit_cluster().map_err(err)?;
                        }
                    }
                    w.commit().map_err(err)?;
                }
                f.commit().map(|_| ()).map_err(err)
            })?;
            for t in 0..4 {
                verify(&out, &format!("T{t}"), 0, ((40 + 20 * t) * k) as usize)?;
            }
        }
        "update" => {
            make_input(&out, 50)?;
            initial.push((out.clone(), std::fs::read(&out).map_err(err)?));
            let upd = WriteOptions { update_existing_file: true, ..ckpt.clone() };
            record(&mut || sequential(&out, "Second", upd.clone(), 120 * k, 40))?;
            verify(&out, "Events", 0, 50)?;
            verify(&out, "Second", 0, 120 * k as usize)?;
        }
        "skim" => {
            make_input(&input, 200 * k)?;
            let what = rntuple::ops::skim::Skim { entries: Some((30, 30 + 140 * k as u64)), reencode: true, ..Default::default() };
            record(&mut || rntuple::ops::skim::skim(&input, "Events", &out, &what, small()).map(|_| ()).map_err(err))?;
            verify(&out, "Events", 30, 140 * k as usize)?;
        }
        "merge" => {
            let second = dir.join("in2.root");
            make_input(&input, 90 * k)?;
            make_input(&second, 70 * k)?;
            record(&mut || rntuple::ops::merge::merge(&[&input, &second], "Events", &out, small()).map(|_| ()).map_err(err))?;
            let r = rntuple::RNTupleFile::open(&out).map_err(err)?.reader("Events").map_err(err)?;
            if r.num_entries() != 160 * k as u64 {
                return Err(format!("merge: {} entries, {} merged", r.num_entries(), 160 * k));
            }
        }
        "convert-to-root" | "convert-to-parquet" => {
            let pq = dir.join("data.parquet");
            make_input(&input, 120 * k)?;
            let opts = rntuple::convert::ConvertOptions::default();
            if name == "convert-to-root" {
                rntuple::convert::convert(&input, &pq, &opts).map_err(err)?;
                record(&mut || rntuple::convert::convert(&pq, &out, &opts).map(|_| ()).map_err(err))?;
                verify(&out, "Events", 0, 120 * k as usize)?;
            } else {
                outputs = vec![(pq.clone(), Kind::Bytes)];
                record(&mut || rntuple::convert::convert(&input, &pq, &opts).map(|_| ()).map_err(err))?;
            }
        }
        "mpi" => return run_mpi(&dir, &out, bin, k),
        other => return Err(format!("unknown workload '{other}' (known: {})", NAMES.join(", "))),
    }
    let events = crate::log::load(&log)?;
    Ok(Recorded { name: name.to_string(), events, initial, outputs })
}

/// Two MPI ranks writing one file with a checkpoint every cluster of the job (`rntuple bench
/// write-mpi`), each rank recording its own log (the environment variable), merged by time.
fn run_mpi(dir: &Path, out: &Path, bin: Option<&Path>, k: i64) -> Result<Recorded, String> {
    let bin = bin.ok_or("the MPI workload needs the rntuple command (--rntuple-bin) built with MPI")?;
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(err)?;
    let mut cmd = std::process::Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", "2"]);
    // Run as root (a container): Open MPI asks to be told.
    if std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").map_err(err)?) == 0 {
        cmd.arg("--allow-run-as-root");
    }
    cmd.arg(bin).args(["--no-progress", "bench", "write-mpi", "--cluster-size", "20000", "--page-size", "4096", "--checkpoint-clusters", "1"]);
    cmd.arg("--entries").arg((1500 * k).to_string()).arg("--output").arg(out).env(io_record::ENV, &logs);
    let o = cmd.output().map_err(|e| format!("running mpirun: {e}"))?;
    if !o.status.success() {
        return Err(format!("mpirun {} failed: {}", bin.display(), String::from_utf8_lossy(&o.stderr)));
    }
    let r = rntuple::RNTupleFile::open(out).map_err(err)?;
    let n: u64 = r.names().iter().filter_map(|n| r.reader(n).ok()).map(|r| r.num_entries()).sum();
    if n != 3000 * k as u64 {
        return Err(format!("mpi: {n} entries, {} written", 3000 * k));
    }
    let events = crate::log::load(&logs)?;
    Ok(Recorded { name: "mpi".into(), events, initial: Vec::new(), outputs: vec![(out.to_path_buf(), Kind::RNTuple)] })
}
