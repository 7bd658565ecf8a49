//! `rntuple dump`: entries as a JSON array, one object per entry.

use super::select::{field_list, parse_range};
use super::{pick_ntuple, Res};
use crate::progress::progress_bar;
use rntuple::RNTupleFile;
use std::io::Write;

pub(crate) fn dump(path: &str, ntuple: Option<&str>, fields: Option<&str>, entries: Option<&str>, progress: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let name = pick_ntuple(&f, ntuple)?;
    let r = f.reader(&name)?;
    let (start, stop) = parse_range(entries, r.num_entries())?;
    let order: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    let names = in_schema_order(fields, &order);
    // Batches of at most 4096 entries, fewer when entries hold many columns: about 2^18 column
    // values per batch keep the memory of a wide RNTuple bounded (4,000 columns: 65 entries).
    let step = (262_144 / r.descriptor().columns.len().max(1) as u64).clamp(1, 4096);
    print_entries(start, stop, step, progress, |s, e| r.read_values(names.as_deref(), s, e))
}

/// The names of a `--fields` list in schema order (`order`), whatever the order given: the keys
/// of `dump`'s objects come in schema order (DESIGN.md).
pub(crate) fn in_schema_order<'a>(fields: Option<&'a str>, order: &[String]) -> Option<Vec<&'a str>> {
    fields.map(|s| {
        let mut v = field_list(s);
        v.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
        v.dedup();
        v
    })
}

/// Prints entries `[start, stop)` as a JSON array, one object per line, read `step` entries at a
/// time by `read` (a file's reader, or a chain's or a join's), with a progress bar.
pub(crate) fn print_entries(start: u64, stop: u64, step: u64, progress: bool, read: impl Fn(u64, u64) -> rntuple::Result<Vec<rntuple::Value>>) -> Res {
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    write!(w, "[")?;
    let mut first = true;
    let mut s = start;
    let pb = progress_bar(stop.saturating_sub(start), "entries", progress);
    while s < stop {
        let e = (s + step).min(stop);
        for v in read(s, e)? {
            if !first {
                write!(w, ",")?;
            }
            first = false;
            writeln!(w)?;
            serde_json::to_writer(&mut w, &v.to_json())?;
        }
        pb.inc(e - s);
        s = e;
    }
    pb.finish_and_clear();
    writeln!(w, "\n]")?;
    w.flush()?;
    Ok(())
}
