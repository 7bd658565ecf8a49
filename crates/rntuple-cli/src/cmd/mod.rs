//! The commands, one module each, and what several of them share: the result type, the choice of
//! the RNTuple and byte counts for people.

pub(crate) mod bench_bulk;
pub(crate) mod bench_read;
pub(crate) mod bench_write;
pub(crate) mod bench_write_mpi;
pub(crate) mod check;
pub(crate) mod convert;
pub(crate) mod dataset;
pub(crate) mod dump;
pub(crate) mod follow;
pub(crate) mod hist;
pub(crate) mod hist_fill;
pub(crate) mod import_json;
pub(crate) mod info;
pub(crate) mod info_json;
pub(crate) mod info_storage;
pub(crate) mod json_schema;
pub(crate) mod merge;
pub(crate) mod precision;
pub(crate) mod select;
pub(crate) mod skim;

use rntuple::RNTupleFile;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether writing commands merge identical pages (`--no-same-page-merging` turns it off).
static SAME_PAGE_MERGING: AtomicBool = AtomicBool::new(true);

/// Sets the global `--no-same-page-merging` switch (once, before a command runs).
pub(crate) fn set_same_page_merging(on: bool) {
    SAME_PAGE_MERGING.store(on, Ordering::Relaxed);
}

/// The write options every writing command starts from: the library's defaults with the global
/// switches applied.
pub(crate) fn write_defaults() -> rntuple::write::WriteOptions {
    rntuple::write::WriteOptions { same_page_merging: SAME_PAGE_MERGING.load(Ordering::Relaxed), ..Default::default() }
}

pub(crate) type Res = Result<(), Box<dyn std::error::Error>>;

pub(crate) fn pick_ntuple(f: &RNTupleFile, name: Option<&str>) -> Result<String, Box<dyn std::error::Error>> {
    if let Some(n) = name {
        return Ok(n.to_string());
    }
    let names = f.names();
    match names.len() {
        1 => Ok(names[0].clone()),
        0 => Err("the file holds no RNTuple".into()),
        _ => Err(format!("the file holds several RNTuples ({}); choose one with --ntuple", names.join(", ")).into()),
    }
}

pub(crate) fn human(n: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = n as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{x:.2} {}", units[u])
    }
}
