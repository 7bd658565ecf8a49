//! `rntuple convert`: Parquet and Arrow IPC files to and from RNTuple (in the core), and TTrees
//! into RNTuple (through the Python package, which reads TTrees with uproot).

use super::Res;
use crate::progress::progress_bar;
use rntuple::convert::{convert_with_progress, ConvertOptions, Format};
use rntuple::RNTupleFile;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// The Python interpreter that converts TTrees: `$RNTUPLE_PYTHON`, else `python3`.
fn python() -> String {
    std::env::var("RNTUPLE_PYTHON").ok().filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

pub(crate) fn convert(input: &str, output: &str, ntuple: Option<&str>, tree: Option<&str>, compression: rntuple::write::Compression, progress: bool) -> Res {
    let (from, to) = (Format::of_path(Path::new(input))?, Format::of_path(Path::new(output))?);
    if tree.is_some() || (from == Format::Root && to == Format::Root) {
        if to != Format::Root || from != Format::Root {
            return Err(format!("a TTree converts into an RNTuple in a .root file; '{input}' -> '{output}' is not .root -> .root").into());
        }
        if tree.is_none() {
            // No --tree: the file decides. An RNTuple is copied by other commands.
            let names = RNTupleFile::open(input)?.names();
            if !names.is_empty() {
                return Err(format!(
                    "'{input}' holds the RNTuple(s) {}: copy an RNTuple with `rntuple skim` or `rntuple merge`; \
                     convert a TTree of the file with --tree NAME",
                    names.join(", ")
                )
                .into());
            }
        }
        return convert_tree(input, output, ntuple, tree, compression, progress);
    }
    let opts = ConvertOptions { ntuple: ntuple.map(String::from), compression, same_page_merging: super::write_defaults().same_page_merging };
    let t = Instant::now();
    let pb = progress_bar(0, "entries", progress);
    let s = convert_with_progress(Path::new(input), Path::new(output), &opts, &mut |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    println!(
        "{}",
        serde_json::json!({
            "input": input, "output": output, "entries": s.entries, "clusters": s.clusters, "seconds": t.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}

/// Runs `python3 -m rntuple._tools.convert_tree`, which prints the JSON summary itself.
fn convert_tree(input: &str, output: &str, ntuple: Option<&str>, tree: Option<&str>, compression: rntuple::write::Compression, progress: bool) -> Res {
    let py = python();
    let missing = || {
        format!("converting a TTree needs Python with the rntuple and uproot packages (`pip install rntuple uproot`; the interpreter is `{py}`, or $RNTUPLE_PYTHON)")
    };
    let probe =
        Command::new(&py).args(["-c", "import rntuple._tools.convert_tree, uproot"]).output().map_err(|e| format!("{}: running it failed: {e}", missing()))?;
    if !probe.status.success() {
        let why = String::from_utf8_lossy(&probe.stderr);
        let last = why.lines().last().unwrap_or("").trim().to_string();
        return Err(format!("{}: {last}", missing()).into());
    }
    let mut cmd = Command::new(&py);
    cmd.args(["-m", "rntuple._tools.convert_tree", input, output, "--compression", &compression.to_string()]);
    if let Some(t) = tree {
        cmd.args(["--tree", t]);
    }
    if let Some(n) = ntuple {
        cmd.args(["--ntuple", n]);
    }
    if !progress {
        cmd.arg("--no-progress");
    }
    if !super::write_defaults().same_page_merging {
        cmd.arg("--no-same-page-merging");
    }
    let status = cmd.status().map_err(|e| format!("running {py} -m rntuple._tools.convert_tree: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("converting the TTree of '{input}' failed ({py} -m rntuple._tools.convert_tree: {status})").into())
    }
}
