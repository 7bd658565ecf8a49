//! `rntuple merge`: the RNTuple of several files into a new file, copying compressed pages
//! (recompressing or re-clustering them when asked), as strict, filter or union merge.

use super::{pick_ntuple, Res};
use crate::progress::progress_bar;
use rntuple::ops::merge::{MergeMode, MergeOptions};
use rntuple::write::Compression;
use rntuple::RNTupleFile;
use std::time::Instant;

/// The options of `rntuple merge`.
pub(crate) struct MergeArgs {
    pub compression: Option<Compression>,
    pub mode: String,
    pub cluster_size: Option<u64>,
    pub threads: usize,
    pub ignore_other_objects: bool,
    pub checkpoint_clusters: u64,
}

pub(crate) fn merge(output: &str, inputs: &[String], ntuple: Option<&str>, what: &MergeArgs, progress: bool) -> Res {
    let mode: MergeMode = what.mode.parse()?;
    let first = inputs.first().ok_or("merge: no input files")?;
    let name = pick_ntuple(&RNTupleFile::open(first)?, ntuple)?;
    let mut opts = rntuple::write::WriteOptions { checkpoint_clusters: what.checkpoint_clusters, ..super::write_defaults() };
    if let Some(c) = what.compression {
        opts.compression = c;
    }
    let mopts = MergeOptions {
        mode,
        compression: what.compression,
        cluster_size: what.cluster_size,
        threads: what.threads,
        ignore_other_objects: what.ignore_other_objects,
    };
    let t = Instant::now();
    let pb = progress_bar(0, "clusters", progress);
    let stats = rntuple::ops::merge::merge_with_options(inputs, &name, output, &mopts, opts, |done, total| {
        pb.set_length(total);
        pb.set_position(done);
    })?;
    pb.finish_and_clear();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "output": output, "ntuple": name, "inputs": inputs.len(), "mode": format!("{mode:?}").to_lowercase(), "entries": stats.entries, "clusters": stats.clusters,
            "pages": stats.pages, "page_bytes": stats.page_bytes, "zero_pages": stats.zero_pages, "recompressed_pages": stats.recompressed_pages,
            "attribute_sets": stats.attribute_sets, "file_bytes": stats.file_bytes, "seconds": secs,
            "mb_per_second": stats.page_bytes as f64 / 1e6 / secs,
        })
    );
    Ok(())
}
