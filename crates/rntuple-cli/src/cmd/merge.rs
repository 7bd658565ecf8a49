//! `rntuple merge`: the RNTuple of several files into a new file, copying compressed pages.

use super::{pick_ntuple, Res};
use crate::progress::progress_bar;
use rntuple::RNTupleFile;
use std::time::Instant;

pub(crate) fn merge(
    output: &str,
    inputs: &[String],
    ntuple: Option<&str>,
    compression: rntuple::write::Compression,
    mode: &str,
    checkpoint_clusters: u64,
    progress: bool,
) -> Res {
    let mode: rntuple::ops::merge::MergeMode = mode.parse()?;
    let first = inputs.first().ok_or("merge: no input files")?;
    let name = pick_ntuple(&RNTupleFile::open(first)?, ntuple)?;
    let opts = rntuple::write::WriteOptions { compression, checkpoint_clusters, ..Default::default() };
    let t = Instant::now();
    let pb = progress_bar(0, "clusters", progress);
    let stats = rntuple::ops::merge::merge_with_mode(inputs, &name, output, mode, opts, |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "output": output, "ntuple": name, "inputs": inputs.len(), "mode": format!("{mode:?}").to_lowercase(), "entries": stats.entries, "clusters": stats.clusters,
            "pages": stats.pages, "page_bytes": stats.page_bytes, "file_bytes": stats.file_bytes, "seconds": secs,
            "mb_per_second": stats.page_bytes as f64 / 1e6 / secs,
        })
    );
    Ok(())
}
