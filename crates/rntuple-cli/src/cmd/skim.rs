//! `rntuple skim`: some fields, entries or selected entries and elements of one or many RNTuples
//! into a new file, through `rntuple::ops::skim::run` (which picks the engine and makes the
//! report printed).

use super::select::{field_list, Select};
use super::Res;
use crate::progress::progress_bar;
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
    pub(crate) checkpoint_clusters: u64,
}

pub(crate) fn skim(a: &SkimArgs, columns: rntuple::write::ColumnOptions, progress: bool) -> Res {
    let Some((output, inputs)) = a.paths.split_last() else { return Err("skim: give the input file(s) and the output file".into()) };
    let opts = rntuple::write::WriteOptions { compression: a.compression, checkpoint_clusters: a.checkpoint_clusters, columns, ..Default::default() };
    let req = SkimRequest {
        inputs: inputs.to_vec(),
        ntuple: a.sel.ntuple.clone(),
        fields: a.sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        entries: a.sel.entries.clone().map(EntryRange::Text),
        where_: a.where_.clone(),
        filters: a.filters.iter().map(|f| Selection::parse_filter(f)).collect::<Result<Vec<_>, _>>()?,
        threads: a.threads,
        reencode: a.reencode,
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
