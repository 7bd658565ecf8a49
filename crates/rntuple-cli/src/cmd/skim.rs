//! `rntuple skim`: some fields, entries or selected entries and elements of one or many RNTuples
//! into a new file.

use super::select::{field_list, parse_range, Select};
use super::{pick_ntuple, Res};
use crate::progress::progress_bar;
use rntuple::RNTupleFile;
use std::time::Instant;

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
    pub(crate) checkpoint_clusters: u64,
}

pub(crate) fn skim(a: &SkimArgs, columns: rntuple::write::ColumnOptions, progress: bool) -> Res {
    let Some((output, inputs)) = a.paths.split_last() else { return Err("skim: give the input file(s) and the output file".into()) };
    let opts = rntuple::write::WriteOptions { compression: a.compression, checkpoint_clusters: a.checkpoint_clusters, columns, ..Default::default() };
    let selection = a.where_.is_some() || !a.filters.is_empty();
    let one_plain_file = inputs.len() == 1 && !inputs[0].contains(['*', '?', '[']);
    if one_plain_file && !selection && a.threads.is_none() {
        return skim_one(&inputs[0], output, a, opts, progress);
    }
    if a.sel.entries.is_some() {
        return Err("skim: --entries applies to one input without --where, --filter or --threads".into());
    }
    skim_selected(inputs, output, a, opts, progress)
}

fn skim_one(input: &str, output: &str, a: &SkimArgs, opts: rntuple::write::WriteOptions, progress: bool) -> Res {
    use rntuple::ops::skim::{skim_with_progress, Skim};
    let f = RNTupleFile::open(input)?;
    let name = pick_ntuple(&f, a.sel.ntuple.as_deref())?;
    let n = f.reader(&name)?.num_entries();
    let what = Skim {
        fields: a.sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        entries: a.sel.entries.as_deref().map(|e| parse_range(Some(e), n)).transpose()?,
        reencode: a.reencode,
    };
    let t = Instant::now();
    let pb = progress_bar(0, "entries", progress);
    let stats = skim_with_progress(input, &name, output, &what, opts, |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    println!(
        "{}",
        serde_json::json!({
            "input": input, "output": output, "ntuple": name, "method": stats.method.as_str(), "why_not_copied": stats.reason,
            "fields": stats.fields, "entry_start": stats.range.0, "entry_stop": stats.range.1, "entries": stats.entries,
            "clusters": stats.clusters, "pages_copied": stats.pages, "page_bytes_copied": stats.page_bytes,
            "file_bytes": stats.file_bytes, "seconds": t.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}

fn skim_selected(inputs: &[String], output: &str, a: &SkimArgs, opts: rntuple::write::WriteOptions, progress: bool) -> Res {
    use rntuple::expr::Selection;
    use rntuple::ops::select::{skim_many, SkimMany};
    let filters = a.filters.iter().map(|f| Selection::parse_filter(f)).collect::<Result<Vec<_>, _>>()?;
    let what = SkimMany {
        inputs: inputs.to_vec(),
        ntuple: a.sel.ntuple.clone(),
        fields: a.sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        where_: a.where_.clone(),
        filters,
        threads: a.threads.unwrap_or(1),
    };
    let t = Instant::now();
    let pb = progress_bar(0, "entries", progress);
    let stats = skim_many(&what, output, opts, &|done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    let filters: Vec<String> = a.filters.clone();
    println!(
        "{}",
        serde_json::json!({
            "inputs": stats.inputs, "output": output, "ntuple": stats.ntuple, "method": stats.method(), "where": a.where_, "filters": filters,
            "clusters_copied": stats.clusters_copied,
            "fields": stats.fields, "entries_read": stats.entries_read, "entries": stats.entries, "parts": stats.parts,
            "clusters": stats.clusters, "threads": stats.threads, "file_bytes": stats.file_bytes, "seconds": t.elapsed().as_secs_f64(),
        })
    );
    Ok(())
}
