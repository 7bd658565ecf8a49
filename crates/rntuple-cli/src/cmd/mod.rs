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
pub(crate) mod import_json;
pub(crate) mod info;
pub(crate) mod merge;
pub(crate) mod precision;
pub(crate) mod select;
pub(crate) mod skim;

use rntuple::RNTupleFile;

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
