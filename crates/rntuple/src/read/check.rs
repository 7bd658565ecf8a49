//! Verifying an RNTuple: every page of every readable field is read, its checksum verified,
//! decompressed and decoded, cluster by cluster and field by field, so that one damaged page is
//! reported with its field, cluster and entries while the rest is still checked. What a data
//! manager runs on a file before trusting it (`rntuple check`).
//!
//! ```
//! use rntuple::write::{Writer, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join("rntuple-doc-check.root");
//! let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! for i in 0..100 {
//!     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?;
//! }
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let report = r.check(|_, _| {});
//! assert!(report.problems.is_empty());
//! assert_eq!((report.entries, report.fields, report.pages), (100, 1, 1));
//! # Ok::<(), rntuple::Error>(())
//! ```

use super::pool::read_plan::Span;
use crate::format::descriptor::{ClusterDescriptor, Role};
use crate::read::reader::Reader;
use std::sync::atomic::Ordering;

/// About how many decoded bytes one batch of [`Reader::check`] reads.
const CHECK_BATCH_BYTES: u64 = 64 << 20;

/// A field whose data in one cluster could not be read.
///
/// ```
/// use rntuple::write::{Compression, Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-Problem-{}.root", std::process::id()));
/// let opts = WriteOptions { compression: Compression::NONE, ..WriteOptions::default() };
/// let mut w = Writer::create(&path, "Events", &[("s", "std::string")], opts)?;
/// w.fill(&Value::Record(vec![("s".into(), Value::String("payload-payload".into()))]))?;
/// w.commit()?;
/// let mut bytes = std::fs::read(&path)?;
/// let at = bytes.windows(15).position(|b| b == b"payload-payload").unwrap();
/// bytes[at] ^= 0xff; // damage the page of the string's characters
/// let report = rntuple::RNTupleFile::from_bytes(bytes)?.reader("Events")?.check(|_, _| {});
/// let p = &report.problems[0];
/// assert_eq!((p.field.as_str(), p.cluster, p.entries), ("s", 0, (0, 1)));
/// assert!(p.error.contains("checksum"), "{}", p.error);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Problem {
    /// The top-level field.
    pub field: String,
    /// The cluster (its id).
    pub cluster: usize,
    /// The cluster's entries, `[first, end)`.
    pub entries: (u64, u64),
    /// What is wrong and where (the reader's error).
    pub error: String,
}

/// What [`Reader::check`] found.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-CheckReport-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// // Ten floats in two clusters.
/// for i in 0..10 {
///     if i == 5 {
///         w.commit_cluster()?;
///     }
///     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?;
/// }
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let mut units = 0;
/// let report = r.check(|_, _| units += 1); // one (cluster, field) unit at a time
/// assert_eq!((report.entries, report.clusters, report.fields, report.pages, units), (10, 2, 1, 2, 2));
/// assert_eq!(report.uncompressed_bytes, 40);
/// assert!(report.problems.is_empty() && report.skipped_fields.is_empty());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Entries of the RNTuple.
    pub entries: u64,
    /// Clusters checked.
    pub clusters: usize,
    /// Top-level fields checked (the readable ones).
    pub fields: usize,
    /// Pages read (a page shared by several fields, as with projections, counts each time).
    pub pages: u64,
    /// Stored (compressed) page bytes read.
    pub stored_bytes: u64,
    /// Uncompressed page bytes produced.
    pub uncompressed_bytes: u64,
    /// Fields that are not checked because they cannot be read, with the reason.
    pub skipped_fields: Vec<(String, String)>,
    /// Damage found, one entry per field and cluster.
    pub problems: Vec<Problem>,
}

impl Reader {
    /// Reads every readable top-level field of every cluster and reports what could not be read.
    /// `progress(done, total)` is called after each (cluster, field) unit.
    pub fn check(&self, mut progress: impl FnMut(u64, u64)) -> CheckReport {
        let checked = self.fields();
        let names: Vec<String> = checked.iter().map(|f| f.name.clone()).collect();
        let ids: Vec<u32> = checked.iter().map(|f| f.id).collect();
        let clusters = &self.descriptor().clusters;
        let mut report = CheckReport {
            entries: self.num_entries(),
            clusters: clusters.len(),
            fields: names.len(),
            skipped_fields: self.skipped_fields(),
            ..Default::default()
        };
        let stats = self.stats();
        let before = (stats.pages.load(Ordering::Relaxed), stats.stored_bytes.load(Ordering::Relaxed), stats.uncompressed_bytes.load(Ordering::Relaxed));
        // What there is to check follows the page lists: a field is read in a cluster that lists
        // one of its columns (the work is proportional to the page lists, not to fields times
        // clusters); a column every cluster must list (neither deferred nor added late) but one
        // does not is reported without reading.
        let owner = self.column_owners(&ids);
        let d = self.descriptor();
        let required: Vec<usize> = (0..d.columns.len())
            .filter(|&id| owner[id].is_some() && d.columns[id].flags & crate::format::descriptor::COLUMN_FLAG_DEFERRED == 0 && !d.columns[id].from_extension)
            .collect();
        let units: Vec<Vec<usize>> = clusters.iter().map(|c| self.fields_listed(c, &owner)).collect();
        let total: u64 = units.iter().map(|u| u.len() as u64).sum();
        let mut done = 0;
        for (c, fields) in clusters.iter().zip(&units) {
            let end = c.first_entry.saturating_add(c.n_entries);
            if let Some(p) = missing_column(c, &required, &owner, &names) {
                report.problems.push(p);
            }
            // The cluster's pages of every field to check, loaded together: the reads below take
            // one field at a time and would otherwise request each field's pages on its own.
            let index = d.clusters.partition_point(|x| x.first_entry < c.first_entry);
            let wanted: Vec<u32> = fields.iter().map(|&k| ids[k]).collect();
            if !wanted.is_empty() && c.n_entries > 0 {
                // A failure to start loading ahead only means the reads below fetch their pages
                // themselves; the plan is dropped, each read below makes its own.
                let _ = self.prefetch(&wanted, &[Span { cluster: index, start: 0, end: c.n_entries }]);
            }
            for &k in fields {
                let name = &names[k];
                // In batches of entries whose decoded size stays near `CHECK_BATCH_BYTES`, so that
                // a large cluster (or one of zero-filled deferred columns) is checked in bounded
                // memory; the first error ends the field's check in this cluster.
                let step = self.check_step(ids[k], c);
                let mut at = c.first_entry;
                while at < end {
                    let stop = at.saturating_add(step).min(end);
                    if let Err(e) = self.read_batch_as(Some(&[name.as_str()]), at, stop, false) {
                        report.problems.push(Problem { field: name.clone(), cluster: c.id, entries: (c.first_entry, end), error: e.to_string() });
                        break;
                    }
                    at = stop;
                }
                done += 1;
                progress(done, total);
            }
        }
        report.pages = stats.pages.load(Ordering::Relaxed) - before.0;
        report.stored_bytes = stats.stored_bytes.load(Ordering::Relaxed) - before.1;
        report.uncompressed_bytes = stats.uncompressed_bytes.load(Ordering::Relaxed) - before.2;
        report
    }
}

impl Reader {
    /// How many entries of top-level field `top` one check batch reads in cluster `c`: the
    /// cluster's elements of the field's subtree (from the page list; `repetition` per entry for
    /// columns without data there), at 8 bytes each, spread over its entries.
    fn check_step(&self, top: u32, c: &ClusterDescriptor) -> u64 {
        let d = self.descriptor();
        let top = top as usize;
        let mut elements = 0u64;
        // (field, elements per entry while no collection lies above it)
        let mut stack = vec![(top, Some(1u64))];
        while let Some((id, per_entry)) = stack.pop() {
            let f = &d.fields[id];
            let per_entry = per_entry.and_then(|p| p.checked_mul(f.repetition.unwrap_or(1)));
            for &col in &f.columns {
                match c.columns.get(col as usize).and_then(Option::as_ref) {
                    Some(range) => elements = elements.saturating_add(range.n_elements),
                    None => elements = elements.saturating_add(per_entry.unwrap_or(0).saturating_mul(c.n_entries)),
                }
            }
            let below = match f.role {
                Role::Collection | Role::Variant => None,
                _ => per_entry,
            };
            stack.extend(f.children.iter().map(|&ch| (ch as usize, below)));
        }
        let per_entry_bytes = elements.saturating_mul(8).div_ceil(c.n_entries.max(1)).max(1);
        (CHECK_BATCH_BYTES / per_entry_bytes).max(1)
    }
}

impl Reader {
    /// For each physical column, the index in `names` of the checked top-level field it belongs
    /// to (`None`: a field not checked).
    fn column_owners(&self, ids: &[u32]) -> Vec<Option<usize>> {
        let d = self.descriptor();
        let index: std::collections::HashMap<u32, usize> = ids.iter().enumerate().map(|(k, &id)| (id, k)).collect();
        let mut top: Vec<Option<usize>> = vec![None; d.fields.len()];
        // Parents precede children (checked when the reader opened), so one pass suffices.
        for (i, f) in d.fields.iter().enumerate() {
            top[i] = match f.parent {
                None => index.get(&(i as u32)).copied(),
                Some(p) => top.get(p as usize).copied().flatten(),
            };
        }
        d.columns.iter().map(|c| top.get(c.field_id as usize).copied().flatten()).collect()
    }

    /// The checked fields (indices into the names) that cluster `c` lists a column of, in order.
    /// Linear in the columns the cluster lists (not in the fields: a cluster listing none of
    /// 100,000 fields costs nothing, 200,000 such clusters no 2e10 steps).
    fn fields_listed(&self, c: &ClusterDescriptor, owner: &[Option<usize>]) -> Vec<usize> {
        let mut here: Vec<usize> = c.columns.iter().enumerate().filter(|(_, r)| r.is_some()).filter_map(|(id, _)| owner.get(id).copied().flatten()).collect();
        here.sort_unstable();
        here.dedup();
        here
    }
}

/// The first of the `required` columns (of checked fields, neither deferred nor added by a schema
/// extension) that cluster `c` does not list, as a problem of its field.
fn missing_column(c: &ClusterDescriptor, required: &[usize], owner: &[Option<usize>], names: &[String]) -> Option<Problem> {
    let id = *required.iter().find(|&&id| c.n_entries > 0 && c.columns.get(id).is_none_or(|r| r.is_none()))?;
    let k = owner[id]?;
    Some(Problem {
        field: names[k].clone(),
        cluster: c.id,
        entries: (c.first_entry, c.first_entry.saturating_add(c.n_entries)),
        error: format!("the page list of cluster {} lacks column {id}, which is neither deferred nor added late", c.id),
    })
}
