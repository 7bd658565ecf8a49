//! The skim of one input without a selection (the engine [`crate::ops::skim::run`] picks for it;
//! its items are re-exported by [`crate::ops::skim`]): a new file holding some top-level fields
//! and/or a range of entries of an RNTuple.
//!
//! Two ways, chosen per skim:
//! - **copying pages**: when the entry range is made of whole clusters (no range at all counts),
//!   the kept fields' compressed pages are copied cluster by cluster without being decompressed,
//!   as [`crate::ops::merge`] does, under a schema cut down to the kept fields (field and column
//!   ids renumbered). Pages keep their compression, encodings and checksums.
//! - **re-encoding**: otherwise (a range that cuts a cluster, deferred or suppressed columns, or
//!   when asked), the entries are read into Arrow batches, one input cluster at a time, and
//!   written by this project's [`Writer`] with ROOT's default column types and the requested
//!   compression. Fields whose type this writer cannot write (user classes, streamer fields) can
//!   only be skimmed by copying pages.
//!
//! ```
//! use rntuple::ops::skim::{skim, Skim, SkimMethod};
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let input = dir.join("rntuple-doc-skim-in.root");
//! let mut w = Writer::create(&input, "Events", &[("x", "std::int32_t"), ("v", "std::vector<float>")], WriteOptions::default())?;
//! for i in 0..10 {
//!     w.fill(&Value::Record(vec![("x".into(), Value::Int(i)), ("v".into(), Value::List(vec![Value::F32(i as f32); i as usize]))]))?;
//! }
//! w.commit()?;
//! // One field, all entries: pages are copied.
//! let out = dir.join("rntuple-doc-skim-out.root");
//! let s = skim(&input, "Events", &out, &Skim { fields: Some(vec!["x".into()]), ..Default::default() }, WriteOptions::default())?;
//! assert_eq!((s.entries, s.method), (10, SkimMethod::CopiedPages));
//! // Entries 3..6 cut the one cluster: re-encoded.
//! let s = skim(&input, "Events", &out, &Skim { entries: Some((3, 6)), ..Default::default() }, WriteOptions::default())?;
//! assert_eq!((s.entries, s.method), (3, SkimMethod::Reencoded));
//! let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
//! assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"x":3,"v":[3.0,3.0,3.0]}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::format::descriptor::{ClusterDescriptor, Descriptor, FieldDescriptor};
use crate::logical::descriptor_types::field_type;
use crate::ops::merge_attrs::AttributeSets;
use crate::ops::page_copy::copy_cluster_into;
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use crate::storage::local::output::refuse_same_file;
use crate::write::sink::Dataset;
use crate::write::{WriteOptions, Writer};
use std::collections::HashSet;
use std::path::Path;

/// What to keep.
///
/// ```
/// use rntuple::ops::skim::{skim, Skim, SkimMethod};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-Skim-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-Skim-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// // Field y of the entries from 5 on (the stop is clamped to the 10 entries).
/// let what = Skim { fields: Some(vec!["y".into()]), entries: Some((5, 100)), reencode: false };
/// let s = skim(&input, "Events", &out, &what, WriteOptions::default())?;
/// assert_eq!((s.fields, s.range, s.entries), (vec!["y".to_string()], (5, 10), 5));
/// assert_eq!(s.method, SkimMethod::Reencoded); // the range cuts the one cluster
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct Skim {
    /// Top-level fields to keep, written in the input's schema order (all when `None`).
    pub fields: Option<Vec<String>>,
    /// Entries `[start, stop)` to keep (all when `None`); `stop` is clamped to the entry count.
    pub entries: Option<(u64, u64)>,
    /// Re-encode even when the pages could be copied (to change the pages' compression, say).
    pub reencode: bool,
}

/// How a skim wrote its output.
///
/// ```
/// use rntuple::ops::skim::SkimMethod;
/// assert_eq!(SkimMethod::CopiedPages.as_str(), "copied pages");
/// assert_eq!(SkimMethod::Reencoded.as_str(), "re-encoded");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkimMethod {
    /// Compressed pages copied as stored.
    CopiedPages,
    /// Entries read and written again.
    Reencoded,
}

impl SkimMethod {
    /// `"copied pages"` or `"re-encoded"`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkimMethod::CopiedPages => "copied pages",
            SkimMethod::Reencoded => "re-encoded",
        }
    }
}

/// What a skim did.
///
/// ```
/// use rntuple::ops::skim::{skim, Skim, SkimMethod};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-SkimStats-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-SkimStats-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let s = skim(&input, "Events", &out, &Skim::default(), WriteOptions::default())?;
/// assert_eq!((s.method, s.reason.as_deref(), s.entries, s.clusters, s.pages), (SkimMethod::CopiedPages, None, 10, 1, 2));
/// assert_eq!(s.file_bytes, std::fs::metadata(&out)?.len());
/// let s = skim(&input, "Events", &out, &Skim { reencode: true, ..Default::default() }, WriteOptions::default())?;
/// assert_eq!((s.method, s.entries, s.pages, s.page_bytes), (SkimMethod::Reencoded, 10, 0, 0));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SkimStats {
    /// How the output was written.
    pub method: SkimMethod,
    /// Why pages could not be copied (re-encoding not asked for), if so.
    pub reason: Option<String>,
    /// The top-level fields kept, in schema order.
    pub fields: Vec<String>,
    /// First and end entry of the input kept.
    pub range: (u64, u64),
    /// Entries written.
    pub entries: u64,
    /// Clusters in the output.
    pub clusters: u64,
    /// Pages copied (0 when re-encoded).
    pub pages: u64,
    /// Page bytes copied (as stored, checksums included; 0 when re-encoded).
    pub page_bytes: u64,
    /// Size of the output file.
    pub file_bytes: u64,
}

/// Skims the RNTuple `name` of `input` into a new file `output` (see the module docs);
/// `progress` is called with (entries done, entries to do).
///
/// ```
/// use rntuple::ops::skim::{skim_with_progress, Skim};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-skim_with_progress-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-skim_with_progress-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let mut last = (0, 0);
/// skim_with_progress(&input, "Events", &out, &Skim::default(), WriteOptions::default(), |done, all| last = (done, all))?;
/// assert_eq!(last, (10, 10));
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(not(feature = "unstable"), allow(dead_code))] // the tests' and the front ends' entry
pub fn skim_with_progress(
    input: impl AsRef<Path>,
    name: &str,
    output: impl AsRef<Path>,
    what: &Skim,
    opts: WriteOptions,
    progress: impl FnMut(u64, u64),
) -> Result<SkimStats> {
    let (input, output) = (input.as_ref(), output.as_ref());
    // Refused under any name (hard or symbolic links, relative paths), before anything is opened
    // for writing.
    refuse_same_file(output, &[input], "skim")?;
    let f = RNTupleFile::open(input).map_err(|e| e.context(format!("skim: {}", input.display())))?;
    let r = f.reader(name).map_err(|e| e.context(format!("skim: {}", input.display())))?;
    skim_reader(&r, output, what, opts, progress)
}

/// [`skim_with_progress`] from an open reader (of a file or of bytes in memory).
///
/// ```
/// use rntuple::ops::skim::{skim_reader, Skim};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-skim_reader-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-skim_reader-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::from_bytes(std::fs::read(&input)?)?.reader("Events")?;
/// let s = skim_reader(&r, &out, &Skim { entries: Some((0, 4)), ..Default::default() }, WriteOptions::default(), |_, _| {})?;
/// assert_eq!(s.entries, 4);
/// assert_eq!(rntuple::RNTupleFile::open(&out)?.reader("Events")?.num_entries(), 4);
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn skim_reader(r: &Reader, output: impl AsRef<Path>, what: &Skim, opts: WriteOptions, mut progress: impl FnMut(u64, u64)) -> Result<SkimStats> {
    let output = output.as_ref();
    let d = r.descriptor();
    let tops = top_fields(d, what.fields.as_deref())?;
    let n = r.num_entries();
    let (start, stop) = match what.entries {
        None => (0, n),
        Some((a, b)) if a > b => return Err(Error::Invalid(format!("skim: the entry range {a}..{b} is reversed"))),
        Some((a, b)) => (a.min(n), b.min(n)),
    };
    let names: Vec<String> = tops.iter().map(|&i| d.fields[i as usize].name.clone()).collect();
    let clusters: Vec<&ClusterDescriptor> = d.clusters.iter().filter(|c| c.first_entry < stop && c.first_entry + c.n_entries > start).collect();
    // Attribute sets come along, their ranges clipped to the entries kept.
    let mut sets = AttributeSets::default();
    sets.gather(r, &format!("RNTuple '{}'", d.name), start, stop, 0)?;
    // Copied pages keep projected fields as projections: their source fields come along.
    let top = top_ancestors(d)?;
    let copy_tops = with_projection_sources(d, &top, &tops)?;
    // Column options (reduced-precision floats) change how values are encoded: re-encode.
    let why_not_copy = if what.reencode || !opts.columns.is_empty() {
        None
    } else {
        let sub = subset(d, &top, &copy_tops)?;
        Some(match uncopyable(d, &sub, &clusters, start, stop) {
            None => {
                let stats = copy_pages(r, sub, &clusters, output, opts, &sets, &mut progress)?;
                let fields = copy_tops.iter().map(|&i| d.fields[i as usize].name.clone()).collect();
                return Ok(SkimStats { fields, range: (start, stop), ..stats });
            }
            Some(why) => why,
        })
    };
    let mut stats = reencode(r, &tops, &names, (start, stop), output, opts, &sets, &mut progress).map_err(|e| match &why_not_copy {
        Some(why) => Error::Invalid(format!("skim: pages cannot be copied ({why}), and re-encoding failed: {e}")),
        None => Error::Invalid(format!("skim: re-encoding failed: {e}")),
    })?;
    stats.reason = why_not_copy;
    stats.fields = names;
    stats.range = (start, stop);
    Ok(stats)
}

/// [`skim_with_progress`] without a progress callback.
///
/// ```
/// use rntuple::ops::skim::{skim, Skim};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-skim-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-skim-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let s = skim(&input, "Events", &out, &Skim { fields: Some(vec!["x".into()]), ..Default::default() }, WriteOptions::default())?;
/// assert_eq!(s.fields, ["x"]);
/// let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
/// assert_eq!(r.read_values(None, 9, 10)?[0].to_json().to_string(), r#"{"x":9}"#);
/// // Writing over the input is refused.
/// assert!(skim(&input, "Events", &input, &Skim::default(), WriteOptions::default()).is_err());
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg_attr(not(feature = "unstable"), allow(dead_code))] // the tests' and the front ends' entry
pub fn skim(input: impl AsRef<Path>, name: &str, output: impl AsRef<Path>, what: &Skim, opts: WriteOptions) -> Result<SkimStats> {
    skim_with_progress(input, name, output, what, opts, |_, _| {})
}

/// The only RNTuple of `f` (the input `input`); none or several are an error.
pub(crate) fn only_ntuple(f: &RNTupleFile, input: &str) -> Result<String> {
    let all = f.names();
    match all.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::Invalid(format!("skim: {input} holds no RNTuple"))),
        _ => Err(Error::Invalid(format!("skim: {input} holds several RNTuples ({}); name one", all.join(", ")))),
    }
}

/// The ids of the top-level fields to keep, in schema order; unknown names are an error listing
/// the known ones.
fn top_fields(d: &Descriptor, wanted: Option<&[String]>) -> Result<Vec<u32>> {
    let all: Vec<&FieldDescriptor> = d.fields.iter().filter(|f| f.parent.is_none()).collect();
    let Some(wanted) = wanted else { return Ok(all.iter().map(|f| f.id).collect()) };
    if wanted.is_empty() {
        return Err(Error::Invalid("skim: no fields selected".into()));
    }
    let known: HashSet<&str> = all.iter().map(|f| f.name.as_str()).collect();
    if let Some(w) = wanted.iter().find(|w| !known.contains(w.as_str())) {
        let known: Vec<&str> = all.iter().map(|f| f.name.as_str()).collect();
        return Err(Error::Invalid(format!("skim: no top-level field '{w}' (the fields are: {})", known.join(", "))));
    }
    let wanted: HashSet<&str> = wanted.iter().map(|w| w.as_str()).collect();
    Ok(all.iter().filter(|f| wanted.contains(f.name.as_str())).map(|f| f.id).collect())
}

/// `tops` and the top-level fields the projected fields among them read from, in schema order.
fn with_projection_sources(d: &Descriptor, top: &[u32], tops: &[u32]) -> Result<Vec<u32>> {
    let wanted: HashSet<u32> = tops.iter().copied().collect();
    let mut keep = wanted.clone();
    for a in &d.aliases {
        if wanted.contains(&top_at(top, a.field_id)?) {
            let col = d
                .columns
                .get(a.physical as usize)
                .ok_or_else(|| Error::Invalid(format!("skim: alias column of field {} names column {}, which does not exist", a.field_id, a.physical)))?;
            keep.insert(top_at(top, col.field_id)?);
        }
    }
    let mut keep: Vec<u32> = keep.into_iter().collect();
    keep.sort_unstable();
    Ok(keep)
}

/// The top-level ancestor of every field, in work linear in the fields: each walk up stops at
/// the first ancestor already resolved. A parent chain that loops or leaves the field list is an
/// error.
pub(crate) fn top_ancestors(d: &Descriptor) -> Result<Vec<u32>> {
    let n = d.fields.len();
    let mut top: Vec<Option<u32>> = vec![None; n];
    let mut path = Vec::new();
    for start in 0..n {
        path.clear();
        let mut id = start;
        let found = loop {
            if let Some(t) = top[id] {
                break t;
            }
            if path.len() >= n {
                return Err(Error::Invalid(format!("skim: field {start} has no top-level ancestor (its parents form a loop)")));
            }
            path.push(id);
            match d.fields[id].parent {
                None => break id as u32,
                Some(p) if (p as usize) < n => id = p as usize,
                Some(p) => return Err(Error::Invalid(format!("skim: field {id} names parent {p}, which does not exist"))),
            }
        };
        for &p in &path {
            top[p] = Some(found);
        }
    }
    Ok(top.into_iter().map(|t| t.unwrap_or_default()).collect())
}

/// The entry of [`top_ancestors`] for a field id from the file.
fn top_at(top: &[u32], id: u32) -> Result<u32> {
    top.get(id as usize).copied().ok_or_else(|| Error::Invalid(format!("skim: field {id} does not exist")))
}

/// A schema cut down to some top-level fields, and the input column ids of its columns.
pub(crate) struct Subset {
    pub(crate) desc: Descriptor,
    pub(crate) columns: Vec<usize>,
}

/// Keeps the fields under `tops` (in input order, so header fields stay before extension
/// fields), renumbers fields and columns, and keeps the alias columns of kept projected fields.
pub(crate) fn subset(d: &Descriptor, top: &[u32], tops: &[u32]) -> Result<Subset> {
    let tops: HashSet<u32> = tops.iter().copied().collect();
    let mut field_map: Vec<Option<u32>> = vec![None; d.fields.len()];
    let mut fields = Vec::new();
    for f in &d.fields {
        if tops.contains(&top_at(top, f.id)?) {
            field_map[f.id as usize] = Some(fields.len() as u32);
            fields.push(f.clone());
        }
    }
    let fmap = |id: u32| field_map.get(id as usize).copied().flatten();
    let mut column_map: Vec<Option<u32>> = vec![None; d.columns.len()];
    let mut columns = Vec::new();
    for c in &d.columns {
        if let Some(nf) = fmap(c.field_id) {
            column_map[c.id as usize] = Some(columns.len() as u32);
            let mut c = c.clone();
            c.id = columns.len() as u32;
            c.field_id = nf;
            columns.push(c);
        }
    }
    // The input column id of each kept column, in output order.
    let kept: Vec<usize> = d.columns.iter().filter(|c| fmap(c.field_id).is_some()).map(|c| c.id as usize).collect();
    let mut aliases = Vec::new();
    for a in &d.aliases {
        let Some(nf) = fmap(a.field_id) else { continue };
        let Some(np) = column_map.get(a.physical as usize).copied().flatten() else {
            let src = d.columns.get(a.physical as usize).map(|c| d.field_path(c.field_id)).unwrap_or_default();
            return Err(Error::Invalid(format!(
                "skim: field '{}' is a projection of '{src}', which is not kept: select its top-level field too",
                d.field_path(a.field_id)
            )));
        };
        aliases.push(crate::format::descriptor::AliasColumn { physical: np, field_id: nf });
    }
    for f in fields.iter_mut() {
        f.id = fmap(f.id).ok_or_else(|| Error::internal("skim lost a field"))?;
        f.parent = f.parent.map(|p| fmap(p).ok_or_else(|| Error::Invalid(format!("skim: field '{}' has a parent outside its tree", f.name)))).transpose()?;
        f.children = f.children.iter().filter_map(|&c| fmap(c)).collect();
        f.columns = f.columns.iter().filter_map(|&c| column_map.get(c as usize).copied().flatten()).collect();
        if let Some(p) = f.projection_source {
            f.projection_source =
                Some(fmap(p).ok_or_else(|| Error::Invalid(format!("skim: field '{}' is a projection of a field that is not kept: select it too", f.name)))?);
        }
    }
    let n_header_fields = fields.iter().filter(|f| !f.from_extension).count();
    let desc = Descriptor {
        name: d.name.clone(),
        description: d.description.clone(),
        writer: format!("rntuple v{} (skim)", env!("CARGO_PKG_VERSION")),
        fields,
        columns,
        aliases,
        extra_type_info: d.extra_type_info.clone(),
        n_header_fields,
        ..Default::default()
    };
    Ok(Subset { desc, columns: kept })
}

/// Why the kept columns of these clusters cannot be copied as stored, if they cannot.
pub(crate) fn uncopyable(d: &Descriptor, sub: &Subset, clusters: &[&ClusterDescriptor], start: u64, stop: u64) -> Option<String> {
    if let (Some(first), Some(last)) = (clusters.first(), clusters.last())
        && (first.first_entry != start || last.first_entry + last.n_entries != stop)
    {
        return Some(format!("entries {start}..{stop} cut a cluster (the clusters kept span {}..{})", first.first_entry, last.first_entry + last.n_entries));
    }
    for &c in &sub.columns {
        let col = &d.columns[c];
        if col.first_element > 0 || col.suppressed_deferred {
            return Some(format!("column {c} of '{}' is deferred (late model extension)", d.field_path(col.field_id)));
        }
    }
    for cl in clusters {
        let mut settings = None;
        for &c in &sub.columns {
            match cl.columns.get(c) {
                Some(Some(range)) if !range.suppressed => {
                    for p in &range.pages {
                        let these = (range.compression, p.has_checksum);
                        if *settings.get_or_insert(these) != these {
                            return Some(format!("cluster {} mixes compression settings or page checksums", cl.id));
                        }
                    }
                }
                Some(Some(_)) => return Some(format!("column {c} is suppressed in cluster {} (several column representations)", cl.id)),
                _ => return Some(format!("column {c} has no pages in cluster {}", cl.id)),
            }
        }
    }
    None
}

fn copy_pages(
    r: &Reader,
    sub: Subset,
    clusters: &[&ClusterDescriptor],
    output: &Path,
    opts: WriteOptions,
    sets: &AttributeSets,
    progress: &mut impl FnMut(u64, u64),
) -> Result<SkimStats> {
    let total: u64 = clusters.iter().map(|c| c.n_entries).sum();
    let mut ds = Dataset::create(output, sub.desc, opts.clone())?;
    let mut stats = SkimStats {
        method: SkimMethod::CopiedPages,
        reason: None,
        fields: Vec::new(),
        range: (0, 0),
        entries: 0,
        clusters: 0,
        pages: 0,
        page_bytes: 0,
        file_bytes: 0,
    };
    for c in clusters {
        let copied = copy_cluster_into(&mut ds, r, c, &sub.columns).map_err(|e| e.context(format!("skim: cluster {}", c.id)))?;
        stats.pages += copied.pages;
        stats.page_bytes += copied.page_bytes;
        stats.entries += copied.entries;
        stats.clusters += 1;
        progress(stats.entries, total);
    }
    if let Err(e) = sets.write_into(&mut ds, &opts) {
        ds.abort();
        return Err(e);
    }
    stats.file_bytes = ds.commit()?;
    Ok(stats)
}

#[allow(clippy::too_many_arguments)]
fn reencode(
    r: &Reader,
    tops: &[u32],
    names: &[String],
    (start, stop): (u64, u64),
    output: &Path,
    opts: WriteOptions,
    sets: &AttributeSets,
    progress: &mut impl FnMut(u64, u64),
) -> Result<SkimStats> {
    let d = r.descriptor();
    let schema = tops.iter().zip(names).map(|(&id, n)| Ok((n.clone(), field_type(d, id, 0)?))).collect::<Result<Vec<_>>>()?;
    let mut w = Writer::create_with_types(output, &d.name, &schema, opts)?;
    drop(schema); // the writer has its own copy (9 MB of 100,000 fields' types)
    match sets.write_with(&mut w).and_then(|()| fill_reencoded(r, &mut w, names, start, stop, progress)) {
        Ok(()) => {}
        Err(e) => {
            // No output from a skim that failed half-way (a writer dropped would commit).
            w.abort();
            return Err(e);
        }
    }
    let entries = w.num_entries();
    let clusters = w.num_clusters();
    let file_bytes = w.commit()?;
    Ok(SkimStats {
        method: SkimMethod::Reencoded,
        reason: None,
        fields: Vec::new(),
        range: (start, stop),
        entries,
        clusters,
        pages: 0,
        page_bytes: 0,
        file_bytes,
    })
}

/// About how many decoded bytes one batch of a re-encoding skim reads (per thread). Large enough
/// that clusters as ROOT writes them (about 128 MiB compressed, a few hundred MiB decoded for the
/// fields a skim keeps) are read whole or in few parts: each cut decompresses the pages it splits
/// twice (a NanoAOD-like skim cut into 64 MiB parts spent ~15 % more CPU).
const REENCODE_BATCH_BYTES: u64 = 256 << 20;

/// Fills the entries `start..stop` of the fields `names` of `r` into `w`, in batches of about
/// [`REENCODE_BATCH_BYTES`] decoded bytes: several small input clusters at once, a large one in
/// parts (the writer forms its own clusters). Memory is bounded by a batch, and the work by the
/// entries, not by clusters times fields.
fn fill_reencoded(r: &Reader, w: &mut Writer, names: &[String], start: u64, stop: u64, progress: &mut impl FnMut(u64, u64)) -> Result<()> {
    let d = r.descriptor();
    let fields: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
    let wanted: std::collections::HashSet<&str> = fields.iter().copied().collect();
    let ids: Vec<u32> = d.top_level_fields().into_iter().filter(|&f| wanted.contains(d.fields[f as usize].name.as_str())).collect();
    // Deferred columns read as zeros are backed by no stored bytes: refuse a skim that would
    // write more of them than one read may fill, before anything is written.
    r.check_zero_fill(&ids, start, stop)?;
    let read = read_columns(d, &fields)?;
    let mut at = start;
    while at < stop {
        let end = batch_end(d, &read, at, stop);
        let batch = r.read_batch(Some(&fields), at, end)?;
        w.append_batch(&batch)?;
        at = end;
        progress(at - start, stop - start);
    }
    w.commit_cluster()
}

/// The physical columns that reading the top-level fields `names` decodes (their own columns,
/// their subfields', and the physical columns behind projected fields among them), by column id.
pub(crate) fn read_columns(d: &Descriptor, names: &[&str]) -> Result<Vec<bool>> {
    let top = top_ancestors(d)?;
    let names: std::collections::HashSet<&str> = names.iter().copied().collect();
    let wanted = |field: u32| top.get(field as usize).and_then(|&t| d.fields.get(t as usize)).is_some_and(|f| names.contains(f.name.as_str()));
    let mut read = vec![false; d.columns.len()];
    for (i, c) in d.columns.iter().enumerate() {
        read[i] = wanted(c.field_id);
    }
    for a in &d.aliases {
        if wanted(a.field_id)
            && let Some(r) = read.get_mut(a.physical as usize)
        {
            *r = true;
        }
    }
    Ok(read)
}

/// The end of the batch starting at entry `at` that reads the columns marked in `read` (see
/// [`read_columns`]): whole clusters while their estimated decoded size stays within
/// [`REENCODE_BATCH_BYTES`], or a part of one large cluster. The estimate counts 8 bytes per
/// element of the read columns' pages (at least their stored bytes), and 8 bytes per entry for
/// each read column a cluster does not list. A cluster is cut only when it must be: a page that
/// spans two batches is decompressed for each.
pub(crate) fn batch_end(d: &Descriptor, read: &[bool], at: u64, stop: u64) -> u64 {
    let is_read = |i: usize| read.get(i).copied().unwrap_or(false);
    let n_read = (0..d.columns.len()).filter(|&i| is_read(i)).count() as u64;
    let mut k = d.clusters.partition_point(|c| c.first_entry + c.n_entries <= at);
    let mut end = at;
    let mut bytes = 0u64;
    while let Some(c) = d.clusters.get(k).filter(|c| end < stop && c.first_entry <= end) {
        let listed = || c.columns.iter().enumerate().filter(|&(i, r)| r.is_some() && is_read(i)).filter_map(|(_, r)| r.as_ref());
        let stored: u64 = listed().flat_map(|r| &r.pages).map(|p| p.locator.size.max(8 * p.n_elements as u64)).sum();
        let unlisted = n_read.saturating_sub(listed().count() as u64);
        let est = stored.saturating_add(unlisted.saturating_mul(8).saturating_mul(c.n_entries));
        let c_end = (c.first_entry + c.n_entries).min(stop);
        let here = c_end - end;
        let part = est.saturating_mul(here) / c.n_entries.max(1);
        if bytes > 0 && bytes.saturating_add(part) > REENCODE_BATCH_BYTES {
            break;
        }
        if part > REENCODE_BATCH_BYTES {
            // A large cluster alone: as many entries as fit.
            let per_entry = (est / c.n_entries.max(1)).max(1);
            return (end + (REENCODE_BATCH_BYTES / per_entry).max(1)).min(c_end);
        }
        bytes += part;
        end = c_end;
        k += 1;
    }
    if end <= at {
        stop
    } else {
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::cursor::Locator;
    use crate::format::descriptor::{PageDescriptor, Role};
    use crate::logical::build::push_field;

    /// Float fields `f0`, `f1`, ... with these parents (forge's field builder).
    fn fields(parents: impl IntoIterator<Item = Option<u32>>) -> Descriptor {
        let mut d = Descriptor::default();
        for (i, p) in parents.into_iter().enumerate() {
            push_field(&mut d, p, Role::Leaf, &format!("f{i}"), "float");
        }
        d
    }

    #[test]
    fn top_ancestors_of_a_deep_chain_and_of_roots() {
        // 0 <- 1 <- 2 <- ... <- 9999, and a second root 10000 with child 10001.
        let chain = (0..10_000u32).map(|i| i.checked_sub(1));
        let d = fields(chain.chain([None, Some(10_000)]));
        let top = top_ancestors(&d).unwrap();
        assert_eq!(top.len(), 10_002);
        assert!(top[..10_000].iter().all(|&t| t == 0));
        assert_eq!(&top[10_000..], &[10_000, 10_000]);
        let sub = subset(&d, &top, &[10_000]).unwrap();
        assert_eq!(sub.desc.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["f10000", "f10001"]);
        assert_eq!(sub.desc.fields[1].parent, Some(0));
    }

    #[test]
    fn top_ancestors_refuses_loops_and_missing_parents() {
        let e = top_ancestors(&fields([Some(1), Some(0)])).unwrap_err().to_string();
        assert!(e.contains("loop"), "{e}");
        let e = top_ancestors(&fields([None, Some(7)])).unwrap_err().to_string();
        assert!(e.contains("parent 7"), "{e}");
    }

    /// `f0` with subfield `f1` (a column each), `f2` (a column), `f3` projected onto `f1`'s column;
    /// `clusters` clusters of 1,000,000 entries with one page of 1,000,000 elements per column.
    fn with_columns(clusters: u64) -> Descriptor {
        use crate::format::descriptor::AliasColumn;
        use crate::logical::build::{column_range, push_column};
        use crate::primitives::column_type::ColumnType;
        let mut d = fields([None, Some(0), None, None]);
        for f in [0, 1, 2] {
            push_column(&mut d, f, ColumnType::Real32);
        }
        d.aliases.push(AliasColumn { physical: 1, field_id: 3 });
        let page = PageDescriptor { n_elements: 1_000_000, has_checksum: false, locator: Locator { size: 100, offset: 0 }, first_in_cluster: 0 };
        for k in 0..clusters {
            let columns = (0..3).map(|_| Some(column_range(k * 1_000_000, 505, vec![page]))).collect();
            d.clusters.push(ClusterDescriptor { id: k as usize, first_entry: k * 1_000_000, n_entries: 1_000_000, columns });
        }
        d
    }

    #[test]
    fn read_columns_follow_subfields_and_projections() {
        let d = with_columns(0);
        assert_eq!(read_columns(&d, &["f0"]).unwrap(), [true, true, false]);
        assert_eq!(read_columns(&d, &["f2"]).unwrap(), [false, false, true]);
        assert_eq!(read_columns(&d, &["f3"]).unwrap(), [false, true, false]);
        assert_eq!(read_columns(&d, &[]).unwrap(), [false, false, false]);
    }

    #[test]
    fn batches_count_only_the_columns_read() {
        // Each column holds 8 MB (decoded, estimated) per cluster of 1,000,000 entries.
        let d = with_columns(40);
        let all = read_columns(&d, &["f0", "f2"]).unwrap();
        let one = read_columns(&d, &["f2"]).unwrap();
        let per_cluster = 1_000_000u64;
        let (all_bytes, one_bytes) = (3 * 8 * per_cluster, 8 * per_cluster);
        let whole = |bytes: u64| (REENCODE_BATCH_BYTES / bytes) * per_cluster;
        assert_eq!(batch_end(&d, &all, 0, 40 * per_cluster), whole(all_bytes));
        assert_eq!(batch_end(&d, &one, 0, 40 * per_cluster), whole(one_bytes));
        // Batches start where the previous one ended and never pass `stop`.
        assert_eq!(batch_end(&d, &one, 5 * per_cluster, 7 * per_cluster), 7 * per_cluster);
        // A cluster larger than a batch is cut into parts of about a batch.
        let mut big = with_columns(1);
        let huge =
            PageDescriptor { n_elements: 1_000_000, has_checksum: false, locator: Locator { size: 4 * REENCODE_BATCH_BYTES, offset: 0 }, first_in_cluster: 0 };
        big.clusters[0].columns[2] = Some(crate::logical::build::column_range(0, 505, vec![huge]));
        let part = batch_end(&big, &one, 0, per_cluster);
        assert!((per_cluster / 4 - 1000..=per_cluster / 4 + 1000).contains(&part), "{part}");
        assert_eq!(batch_end(&big, &read_columns(&big, &["f0"]).unwrap(), 0, per_cluster), per_cluster);
    }

    #[test]
    fn top_fields_keeps_schema_order_and_names_the_unknown() {
        let d = fields([None, None, Some(1)]);
        let want = vec!["f1".to_string(), "f0".to_string()];
        assert_eq!(top_fields(&d, Some(&want)).unwrap(), [0, 1]);
        let e = top_fields(&d, Some(&["f2".to_string()])).unwrap_err().to_string();
        assert!(e.contains("no top-level field 'f2'") && e.contains("f0, f1"), "{e}");
    }
}
