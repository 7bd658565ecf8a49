//! `rntuple skim`: some fields, entries or selected entries and elements of one or many RNTuples
//! into a new file, through `rntuple::ops::skim::run` (which picks the engine and makes the
//! report printed).

use super::select::{field_list, Select};
use super::Res;
use crate::progress::progress_bar;
use rntuple::dataset::JoinSkim;
use rntuple::expr::Selection;
use rntuple::ops::skim::{run, EntryRange, SkimRequest};

/// The command line of a skim.
pub(crate) struct SkimArgs {
    /// Inputs, then the output.
    pub(crate) paths: Vec<String>,
    pub(crate) sel: Select,
    pub(crate) where_: Option<String>,
    pub(crate) filters: Vec<String>,
    pub(crate) threads: Option<usize>,
    pub(crate) compression: rntuple::write::Compression,
    pub(crate) reencode: bool,
    /// `--fill-missing`.
    pub(crate) fill_missing: bool,
    pub(crate) checkpoint_clusters: u64,
    /// `--friend FILE[:NTUPLE]`, each.
    pub(crate) friends: Vec<String>,
    /// `--on FIELD,FIELD`.
    pub(crate) on: Option<String>,
}

pub(crate) fn skim(a: &SkimArgs, columns: rntuple::write::ColumnOptions, progress: bool) -> Res {
    let Some((output, inputs)) = a.paths.split_last() else { return Err("skim: give the input file(s) and the output file".into()) };
    let opts = rntuple::write::WriteOptions { compression: a.compression, checkpoint_clusters: a.checkpoint_clusters, columns, ..super::write_defaults() };
    if !a.friends.is_empty() {
        return skim_join(a, inputs, output, opts, progress);
    }
    let req = SkimRequest {
        inputs: inputs.to_vec(),
        ntuple: a.sel.ntuple.clone(),
        fields: a.sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        entries: a.sel.entries.clone().map(EntryRange::Text),
        where_: a.where_.clone(),
        filters: a.filters.iter().map(|f| Selection::parse_filter(f)).collect::<Result<Vec<_>, _>>()?,
        threads: a.threads,
        reencode: a.reencode,
        fill_missing: a.fill_missing,
    };
    let pb = progress_bar(0, "entries", progress);
    let report = run(&req, output, opts, &|done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    println!("{}", report.to_json());
    Ok(())
}

/// `skim --friend`: the join of the inputs with the friends (`rntuple::dataset::skim_join`).
fn skim_join(a: &SkimArgs, inputs: &[String], output: &str, opts: rntuple::write::WriteOptions, progress: bool) -> Res {
    let refused = [(!a.filters.is_empty(), "--filter"), (a.sel.entries.is_some(), "--entries"), (a.reencode, "--reencode"), (a.fill_missing, "--fill-missing")];
    if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
        return Err(format!("skim: {flag} is not supported with --friend (a joined entry is always re-encoded; cut with --where)").into());
    }
    let what = JoinSkim {
        inputs: inputs.to_vec(),
        ntuple: a.sel.ntuple.clone(),
        friends: a.friends.clone(),
        on: a.on.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()).unwrap_or_default(),
        fields: a.sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        where_: a.where_.clone(),
        threads: a.threads.unwrap_or(0),
    };
    let pb = progress_bar(0, "entries", progress);
    let s = rntuple::dataset::skim_join(&what, output, opts, &|done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    let mut report = serde_json::json!({ "output": output });
    if let (Some(r), serde_json::Value::Object(stats)) = (report.as_object_mut(), s.to_json(&what)) {
        r.extend(stats);
    }
    println!("{report}");
    Ok(())
}
