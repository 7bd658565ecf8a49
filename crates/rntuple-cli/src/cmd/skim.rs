//! `rntuple skim`: some fields and/or entries of an RNTuple into a new file.

use super::select::{field_list, parse_range, Select};
use super::{pick_ntuple, Res};
use crate::progress::progress_bar;
use rntuple::RNTupleFile;
use std::time::Instant;

#[allow(clippy::too_many_arguments)]
pub(crate) fn skim(
    input: &str,
    output: &str,
    sel: &Select,
    compression: u32,
    reencode: bool,
    checkpoint_clusters: u64,
    columns: rntuple::write::options::ColumnOptions,
    progress: bool,
) -> Res {
    use rntuple::ops::skim::{skim_with_progress, Skim};
    let f = RNTupleFile::open(input)?;
    let name = pick_ntuple(&f, sel.ntuple.as_deref())?;
    let n = f.reader(&name)?.num_entries();
    let what = Skim {
        fields: sel.fields.as_deref().map(|s| field_list(s).into_iter().map(String::from).collect()),
        entries: sel.entries.as_deref().map(|e| parse_range(Some(e), n)).transpose()?,
        reencode,
    };
    let opts = rntuple::write::WriteOptions { compression, checkpoint_clusters, columns, ..Default::default() };
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
