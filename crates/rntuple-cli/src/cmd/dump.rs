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
    // Keys come in schema order whatever the order of --fields (DESIGN.md).
    let order: Vec<String> = r.fields().iter().map(|f| f.name.clone()).collect();
    let names: Option<Vec<&str>> = fields.map(|s| {
        let mut v = field_list(s);
        v.sort_by_key(|n| order.iter().position(|o| o == n).unwrap_or(usize::MAX));
        v.dedup();
        v
    });
    let out = std::io::stdout();
    let mut w = std::io::BufWriter::new(out.lock());
    write!(w, "[")?;
    // Batches of at most 4096 entries, fewer when entries hold many columns: about 2^18 column
    // values per batch keep the memory of a wide RNTuple bounded (4,000 columns: 65 entries).
    let step = (262_144 / r.descriptor().columns.len().max(1) as u64).clamp(1, 4096);
    let mut first = true;
    let mut s = start;
    let pb = progress_bar(stop.saturating_sub(start), "entries", progress);
    while s < stop {
        let e = (s + step).min(stop);
        let vals = r.read_values(names.as_deref(), s, e)?;
        for v in vals {
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
