//! Reads with a selection pushed into the read (`rntuple.dask(where=)`, `arrays(cut=)`, the Spark
//! source's filters): the selection's fields are read first and its masks computed; the clusters
//! where no entry passes are skipped (the pages of the other fields there are not read at all);
//! the other fields are read for the remaining clusters only, in one read, and the masks applied.
//! Only the kept entries (and, with element filters, the kept elements) leave, in one batch of the
//! requested fields.
//!
//! The selection's fields are read for the whole range at once (they are needed in every cluster):
//! callers bound the range (a Dask partition, a Spark piece, an `iterate` step).
//!
//! ```
//! use rntuple::expr::Selection;
//! use rntuple::ops::read_selected::read_selected;
//! use rntuple::write::{Writer, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join(format!("rntuple-doc-read_selected-{}.root", std::process::id()));
//! let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t"), ("y", "float")], WriteOptions::default())?;
//! for i in 0..6 {
//!     w.fill(&Value::Record(vec![("x".into(), Value::Int(i)), ("y".into(), Value::F32(i as f32 / 2.0))]))?;
//!     if i == 2 {
//!         w.commit_cluster()?; // clusters of entries 0..3 and 3..6
//!     }
//! }
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let got = read_selected(&r, Some(&["y"]), &[], 0, 6, &Selection::new(Some("x >= 4"), &[])?)?;
//! assert_eq!(got.batch.num_columns(), 1); // `x` was read for the selection, not asked for
//! assert_eq!(got.entry_numbers(), [4, 5]);
//! let s = got.stats;
//! assert_eq!((s.entries_read, s.entries_kept, s.clusters, s.clusters_skipped), (6, 2, 2, 1));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{Error, Result};
use crate::expr::{apply_masks, collection_of, Masks, Selection};
use crate::logical::typename::TypeExpr;
use crate::read::reader::Reader;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema};
use std::sync::Arc;

/// What a selected read did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectedStats {
    /// Entries the selection was evaluated on.
    pub entries_read: u64,
    /// Entries kept (the batch's rows).
    pub entries_kept: u64,
    /// Clusters (or the parts of them in the range) read.
    pub clusters: u64,
    /// Of those, the clusters where no entry passed: only the selection's fields were read there.
    pub clusters_skipped: u64,
}

/// The result of [`read_selected`].
#[derive(Debug, Clone)]
pub struct Selected {
    /// The kept entries of the requested fields, in entry order.
    pub batch: RecordBatch,
    /// What was read and kept.
    pub stats: SelectedStats,
    /// The entry mask over `start..stop` (`None`: every entry kept).
    mask: Option<Vec<bool>>,
    start: u64,
}

impl Selected {
    /// The entry numbers of the batch's rows.
    pub fn entry_numbers(&self) -> Vec<u64> {
        match &self.mask {
            None => (self.start..self.start + self.stats.entries_read).collect(),
            Some(m) => m.iter().enumerate().filter(|&(_, &k)| k).map(|(i, _)| self.start + i as u64).collect(),
        }
    }
}

/// Reads the top-level fields `fields` (all readable fields when `None`) of the entries
/// `start..stop` of `r` that `sel` keeps, with its element filters applied (see the module
/// documentation). `types`: (field, type) pairs, those fields read into the requested types
/// (`Reader::read_batch_with_types`; the selection sees the requested types too); pairs of
/// fields this read does not read are left alone. A field the selection names that the RNTuple
/// lacks is an error naming it and where the selection names it.
pub fn read_selected(r: &Reader, fields: Option<&[&str]>, types: &[(&str, TypeExpr)], start: u64, stop: u64, sel: &Selection) -> Result<Selected> {
    let d = r.descriptor();
    let n = r.num_entries();
    if start > stop || stop > n {
        return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{n}")));
    }
    let out: Vec<String> = match fields {
        Some(f) => f.iter().map(|s| s.to_string()).collect(),
        None => r.fields().iter().map(|f| f.name.clone()).collect(),
    };
    let sel_names = selection_fields(r, sel)?;
    let typed = |names: &[&str]| -> Vec<(&str, TypeExpr)> { types.iter().filter(|(t, _)| names.contains(t)).cloned().collect() };
    let sel_refs: Vec<&str> = sel_names.iter().map(String::as_str).collect();
    let in_range = |e: Error| e.context(format!("selection on RNTuple '{}', entries {start}..{stop}", d.name));
    let sel_batch = r.read_batch_ranges_with_types(Some(&sel_refs), &typed(&sel_refs), &[(start, stop)]).map_err(in_range)?;
    let masks = if sel.is_empty() { Masks::default() } else { sel.masks(&sel_batch).map_err(in_range)? };
    if masks.entries.as_ref().is_some_and(|m| m.len() as u64 != stop - start) {
        return Err(Error::internal("selection: an entry mask of another length than the entries read"));
    }
    // The clusters (their parts in the range), and whether an entry passes in each.
    let units: Vec<(u64, u64)> = d
        .clusters
        .iter()
        .map(|c| (c.first_entry.max(start), c.first_entry.saturating_add(c.n_entries).min(stop)))
        .filter(|(a, b)| a < b)
        .collect();
    let passes = |&(a, b): &(u64, u64)| match &masks.entries {
        None => true,
        Some(m) => m.get((a - start) as usize..(b - start) as usize).is_some_and(|s| s.contains(&true)),
    };
    let kept_units: Vec<(u64, u64)> = units.iter().copied().filter(passes).collect();
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in &kept_units {
        match ranges.last_mut() {
            Some(last) if last.1 == a => last.1 = b,
            _ => ranges.push((a, b)),
        }
    }
    // The other fields, of the kept clusters only.
    let mut rest: Vec<&str> = Vec::new();
    for name in &out {
        if !sel_names.contains(name) && !rest.contains(&name.as_str()) {
            rest.push(name);
        }
    }
    let rest_batch = r.read_batch_ranges_with_types(Some(&rest), &typed(&rest), &ranges)?;
    // The selection's fields and masks of the kept clusters only.
    let skipped = units.len() - kept_units.len();
    let (sel_kept, masks_kept) = if skipped == 0 { (sel_batch, masks.clone()) } else { of_ranges(&sel_batch, &masks, start, &ranges)? };
    let rows = rest_batch.num_rows();
    if sel_kept.num_rows() != rows {
        return Err(Error::internal(format!("selected read: {} entries of the selection's fields, {rows} of the others", sel_kept.num_rows())));
    }
    // The requested fields in order, then the selection's others (count fields and members of
    // filtered collections are updated with the rest); the masks applied; the requested kept.
    let mut fields_out: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    let sel_only = sel_names.iter().filter(|n| !out.contains(n));
    for name in out.iter().chain(sel_only) {
        let from = if sel_names.contains(name) { &sel_kept } else { &rest_batch };
        let i = from.schema().index_of(name).map_err(|_| Error::internal(format!("selected read lost field '{name}'")))?;
        fields_out.push(from.schema().field(i).clone());
        columns.push(from.column(i).clone());
    }
    let opts = RecordBatchOptions::new().with_row_count(Some(rows));
    let all = RecordBatch::try_new_with_options(Arc::new(Schema::new(fields_out)), columns, &opts)?;
    let kept = if sel.is_empty() { all } else { apply_masks(&all, &masks_kept).map_err(in_range)? };
    let batch = kept.project(&(0..out.len()).collect::<Vec<_>>())?;
    let stats = SelectedStats { entries_read: stop - start, entries_kept: batch.num_rows() as u64, clusters: units.len() as u64, clusters_skipped: skipped as u64 };
    Ok(Selected { batch, stats, mask: masks.entries, start })
}

/// The top-level fields a selection reads: those its expressions name (each checked to be a field
/// of `r`), and for a filtered collection none of whose members they name, its first member (the
/// filter needs the collection's elements).
fn selection_fields(r: &Reader, sel: &Selection) -> Result<Vec<String>> {
    let d = r.descriptor();
    let tops: Vec<&str> = d.top_level_fields().iter().map(|&t| d.fields[t as usize].name.as_str()).collect();
    for (top, full, text, col) in sel.names() {
        if !tops.contains(&top.as_str()) {
            let at = if top == full { String::new() } else { format!(" (as '{full}')") };
            return Err(Error::NotFound(format!(
                "selection '{text}': no field '{top}'{at} at column {col} in RNTuple '{}' (fields: {})",
                d.name,
                tops.join(", ")
            )));
        }
    }
    let mut names = sel.fields_named();
    let member = |c: &str, n: &str| n == c || n.strip_prefix(c).is_some_and(|rest| rest.starts_with('_'));
    for c in sel.collections() {
        if !names.iter().any(|n| member(c, n))
            && let Some(m) = r.fields().iter().find(|f| member(c, &f.name))
        {
            names.push(m.name.clone());
        }
    }
    Ok(names)
}

/// The rows of `batch` (entries from `start` on) in `ranges`, and the masks of those rows.
fn of_ranges(batch: &RecordBatch, masks: &Masks, start: u64, ranges: &[(u64, u64)]) -> Result<(RecordBatch, Masks)> {
    let local: Vec<(usize, usize)> = ranges.iter().map(|&(a, b)| ((a - start) as usize, (b - start) as usize)).collect();
    let mut keep = vec![false; batch.num_rows()];
    for &(a, b) in &local {
        keep.get_mut(a..b).ok_or_else(|| Error::internal("selected read: a range outside the batch"))?.fill(true);
    }
    let rows = arrow_select::filter::filter_record_batch(batch, &BooleanArray::from(keep)).map_err(|e| Error::Invalid(format!("selection: {e}")))?;
    let take = |m: &[bool], bounds: &dyn Fn(usize) -> Option<usize>| -> Result<Vec<bool>> {
        let mut out = Vec::new();
        for &(a, b) in &local {
            let part = bounds(a).zip(bounds(b)).and_then(|(x, y)| m.get(x..y));
            out.extend_from_slice(part.ok_or_else(|| Error::internal("selected read: a mask shorter than its entries"))?);
        }
        Ok(out)
    };
    let entries = masks.entries.as_deref().map(|m| take(m, &|i| Some(i))).transpose()?;
    let mut elements = Vec::with_capacity(masks.elements.len());
    for (c, m) in &masks.elements {
        let coll = collection_of(batch, c)?;
        elements.push((c.clone(), take(m, &|i| coll.offsets.get(i).copied())?));
    }
    Ok((rows, Masks { entries, elements }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::ReadAhead;
    use crate::write::{WriteOptions, Writer};
    use crate::{RNTupleFile, Value};
    use arrow_array::cast::AsArray;
    use arrow_array::Array;
    use arrow_array::types::{Float32Type, Int32Type, UInt32Type};
    use std::sync::atomic::Ordering;

    /// Entries `0..n` in clusters of `per_cluster`: `event` (= entry), `nJet` and `Jet_pt`
    /// (`event % 4` jets of pt `10 * k + event % 10`), `w` (a float), written to a fresh path.
    fn file(n: i32, per_cluster: i32) -> std::path::PathBuf {
        static FILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let k = FILES.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("rntuple-read-selected-{}-{k}.root", std::process::id()));
        let schema = [("event", "std::int32_t"), ("nJet", "std::uint32_t"), ("Jet_pt", "std::vector<float>"), ("w", "float")];
        let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default()).unwrap();
        for i in 0..n {
            let jets: Vec<Value> = (0..i % 4).map(|k| Value::F32((10 * k + i % 10) as f32)).collect();
            let entry = vec![
                ("event".into(), Value::Int(i as i64)),
                ("nJet".into(), Value::UInt((i % 4) as u64)),
                ("Jet_pt".into(), Value::List(jets)),
                ("w".into(), Value::F32(i as f32 * 0.5)),
            ];
            w.fill(&Value::Record(entry)).unwrap();
            if (i + 1) % per_cluster == 0 {
                w.commit_cluster().unwrap();
            }
        }
        w.commit().unwrap();
        path
    }

    fn reader(path: &std::path::Path) -> Reader {
        let mut r = RNTupleFile::open(path).unwrap().reader("Events").unwrap();
        r.set_read_ahead(ReadAhead::off());
        r
    }

    fn ints(b: &RecordBatch, name: &str) -> Vec<i64> {
        let c = b.column(b.schema().index_of(name).unwrap());
        match c.as_primitive_opt::<Int32Type>() {
            Some(p) => p.values().iter().map(|&x| x as i64).collect(),
            None => c.as_primitive::<UInt32Type>().values().iter().map(|&x| x as i64).collect(),
        }
    }

    fn lists(b: &RecordBatch, name: &str) -> Vec<Vec<f32>> {
        let l = b.column(b.schema().index_of(name).unwrap()).as_list::<i64>();
        (0..l.len()).map(|i| l.value(i).as_primitive::<Float32Type>().values().to_vec()).collect()
    }

    /// The pages (and their stored bytes) of the top-level fields `names` in the clusters `which`.
    fn pages_of(r: &Reader, names: &[&str], which: impl Fn(usize) -> bool) -> (u64, u64) {
        let d = r.descriptor();
        let cols = crate::ops::skim_one::read_columns(d, names).unwrap();
        let (mut pages, mut bytes) = (0, 0);
        for (_, c) in d.clusters.iter().enumerate().filter(|(k, _)| which(*k)) {
            for (i, range) in c.columns.iter().enumerate() {
                if let (Some(range), true) = (range, cols[i]) {
                    pages += range.pages.len() as u64;
                    bytes += range.pages.iter().map(|p| p.locator.size).sum::<u64>();
                }
            }
        }
        (pages, bytes)
    }

    #[test]
    fn keeps_the_entries_that_pass_and_only_the_fields_asked_for() {
        let path = file(100, 10);
        let r = reader(&path);
        let sel = Selection::new(Some("count(Jet_pt > 25) > 0 && event % 10 >= 5"), &[]).unwrap();
        let got = read_selected(&r, Some(&["w", "event"]), &[], 0, 100, &sel).unwrap();
        let names: Vec<String> = got.batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["w", "event"], "Jet_pt only read for the selection");
        // 3 jets (pts 0+e, 10+e, 20+e with e = event % 10): the third passes when e >= 6.
        let want: Vec<i64> = (0..100).filter(|i| i % 4 == 3 && i % 10 >= 6).collect();
        assert_eq!(ints(&got.batch, "event"), want);
        assert_eq!(got.entry_numbers(), want.iter().map(|&i| i as u64).collect::<Vec<_>>());
        let w: Vec<f32> = got.batch.column(0).as_primitive::<Float32Type>().values().to_vec();
        assert_eq!(w, want.iter().map(|&i| i as f32 * 0.5).collect::<Vec<_>>());
        assert_eq!(got.stats, SelectedStats { entries_read: 100, entries_kept: want.len() as u64, clusters: 10, clusters_skipped: 0 });
        // The same as reading everything and applying the selection.
        let all = r.read_batch(Some(&["w", "event", "Jet_pt"]), 0, 100).unwrap();
        let old = sel.apply(&all).unwrap();
        assert_eq!(old.project(&[0, 1]).unwrap(), got.batch);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn clusters_where_nothing_passes_are_not_read() {
        let path = file(100, 10);
        let r = reader(&path);
        // Entries 35..=44 pass: clusters 3 and 4 of 0..10 hold them; a range 20..90 covers clusters 2..9.
        let sel = Selection::new(Some("event >= 35 && event < 45"), &[]).unwrap();
        let before = (r.stats().pages.load(Ordering::Relaxed), r.stats().stored_bytes.load(Ordering::Relaxed));
        let io_before = r.io_counts().unwrap().1;
        let got = read_selected(&r, Some(&["Jet_pt", "w"]), &[], 20, 90, &sel).unwrap();
        let pages = r.stats().pages.load(Ordering::Relaxed) - before.0;
        let bytes = r.stats().stored_bytes.load(Ordering::Relaxed) - before.1;
        let io = r.io_counts().unwrap().1 - io_before;
        assert_eq!(got.entry_numbers(), (35..45).collect::<Vec<u64>>());
        assert_eq!(got.stats, SelectedStats { entries_read: 70, entries_kept: 10, clusters: 7, clusters_skipped: 5 });
        let w: Vec<f32> = got.batch.column(1).as_primitive::<Float32Type>().values().to_vec();
        assert_eq!(w, (35..45).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
        assert_eq!(lists(&got.batch, "Jet_pt")[..2], [vec![5.0, 15.0, 25.0], vec![]]); // entries 35 and 36
        // `event` of clusters 2..9, the others of clusters 3 and 4 only: exactly those pages.
        let (sel_pages, sel_bytes) = pages_of(&r, &["event"], |k| (2..9).contains(&k));
        let (kept_pages, kept_bytes) = pages_of(&r, &["Jet_pt", "w"], |k| k == 3 || k == 4);
        assert_eq!((pages, bytes), (sel_pages + kept_pages, sel_bytes + kept_bytes));
        let (all_pages, all_bytes) = pages_of(&r, &["event", "Jet_pt", "w"], |k| (2..9).contains(&k));
        assert!(pages < all_pages && bytes < all_bytes);
        assert!(io >= bytes && io < all_bytes, "the source served {io} bytes; the pages read are {bytes}, all pages {all_bytes}");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn no_entry_passing_gives_an_empty_batch_of_the_fields() {
        let path = file(30, 10);
        let r = reader(&path);
        let sel = Selection::new(Some("event < 0"), &[]).unwrap();
        let got = read_selected(&r, Some(&["Jet_pt", "nJet"]), &[], 0, 30, &sel).unwrap();
        assert_eq!((got.batch.num_rows(), got.batch.num_columns()), (0, 2));
        assert_eq!(got.batch.schema().field(0).name(), "Jet_pt");
        assert_eq!(got.stats, SelectedStats { entries_read: 30, entries_kept: 0, clusters: 3, clusters_skipped: 3 });
        assert!(got.entry_numbers().is_empty());
        // Nothing but the selection's field was read.
        assert_eq!(r.stats().pages.load(Ordering::Relaxed), pages_of(&r, &["event"], |_| true).0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn element_filters_cut_members_and_counts_of_kept_clusters() {
        let path = file(40, 10);
        let r = reader(&path);
        // Entries of clusters 1 and 3 (10..20, 30..40) with jets above 15.
        let sel = Selection::new(Some("(event >= 10 && event < 20) || event >= 30"), &[("Jet".into(), "Jet_pt > 15".into())]).unwrap();
        let got = read_selected(&r, Some(&["event", "nJet", "Jet_pt"]), &[], 0, 40, &sel).unwrap();
        assert_eq!(got.stats.clusters_skipped, 2);
        let all = r.read_batch(Some(&["event", "nJet", "Jet_pt"]), 0, 40).unwrap();
        assert_eq!(sel.apply(&all).unwrap(), got.batch);
        assert_eq!(ints(&got.batch, "event"), (10..20).chain(30..40).collect::<Vec<i64>>());
        // Entry 15: jets 5, 15, 25 -> 25 kept; nJet follows.
        assert_eq!((lists(&got.batch, "Jet_pt")[5].clone(), ints(&got.batch, "nJet")[5]), (vec![25.0], 1));
        // A filter whose expression names no member of its collection (nor the count field).
        let sel = Selection::new(Some("event >= 30"), &[("Jet".into(), "event % 2 == 1".into())]).unwrap();
        let got = read_selected(&r, Some(&["nJet"]), &[], 0, 40, &sel).unwrap();
        let want: Vec<i64> = (30..40).map(|i| if i % 2 == 1 { i % 4 } else { 0 }).collect();
        assert_eq!(ints(&got.batch, "nJet"), want);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn requested_types_and_all_fields() {
        let path = file(20, 10);
        let r = reader(&path);
        let sel = Selection::new(Some("w >= 8.5"), &[]).unwrap();
        let types = [("w", crate::logical::typename::parse("double").unwrap()), ("event", crate::logical::typename::parse("std::int64_t").unwrap())];
        let got = read_selected(&r, None, &types, 0, 20, &sel).unwrap();
        let names: Vec<String> = got.batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        assert_eq!(names, ["event", "nJet", "Jet_pt", "w"]);
        assert_eq!(got.batch.schema().field(3).data_type(), &arrow_schema::DataType::Float64);
        assert_eq!(got.batch.schema().field(0).data_type(), &arrow_schema::DataType::Int64);
        assert_eq!(got.entry_numbers(), [17, 18, 19]);
        // A type of a field not read is left alone.
        let got = read_selected(&r, Some(&["nJet"]), &types, 0, 20, &sel).unwrap();
        assert_eq!(ints(&got.batch, "nJet"), [1, 2, 3]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn errors_name_what_and_where() {
        let path = file(20, 10);
        let r = reader(&path);
        let e = read_selected(&r, Some(&["w"]), &[], 0, 20, &Selection::new(Some("event > 1 && nMuon >= 2"), &[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no field 'nMuon' at column 14") && e.contains("event > 1 && nMuon >= 2") && e.contains("fields: event, nJet, Jet_pt, w"), "{e}");
        let e = read_selected(&r, Some(&["w"]), &[], 0, 20, &Selection::new(Some("Muon.pt > 2"), &[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no field 'Muon' (as 'Muon.pt')"), "{e}");
        let e = read_selected(&r, Some(&["v"]), &[], 0, 20, &Selection::new(Some("event > 1"), &[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("no top-level field 'v'"), "{e}");
        let e = read_selected(&r, Some(&["w"]), &[], 0, 20, &Selection::new(Some("Jet_pt > 1"), &[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("boolean per entry") && e.contains("entries 0..20"), "{e}");
        let e = read_selected(&r, Some(&["w"]), &[], 5, 21, &Selection::new(Some("event > 1"), &[]).unwrap()).unwrap_err().to_string();
        assert!(e.contains("entry range 5:21 outside 0:20"), "{e}");
        std::fs::remove_file(&path).unwrap();
    }
}
