//! Merging RNTuples into one, as ROOT's `hadd` (`RNTupleMerger`) does and beyond: by copying their
//! compressed pages (no page is decompressed or re-encoded unless another compression is asked for). This works because a cluster is relocatable (its collection offsets
//! are cluster-local), so each input cluster becomes an output cluster through the same three
//! steps as a cluster of the writers (reserve, write, append metadata). Pages keep their
//! compression and checksums; same-page merging inside a cluster is kept. The clusters are
//! assembled on several threads (`merge_cluster.rs`) and placed in order. Schemas may differ in a
//! union merge (`merge_union.rs`); attribute sets come along (`merge_attrs.rs`); `cluster_size`
//! re-clusters by decoding the merged pages and refilling them through the writer.
//!
//! ```
//! use rntuple::ops::merge;
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let inputs: Vec<_> = (0..2).map(|k| dir.join(format!("rntuple-doc-merge-in{k}.root"))).collect();
//! for (k, p) in inputs.iter().enumerate() {
//!     let mut w = Writer::create(p, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
//!     for i in 0..3 {
//!         w.fill(&Value::Record(vec![("x".into(), Value::Int(10 * k as i64 + i))]))?;
//!     }
//!     w.commit()?;
//! }
//! let out = dir.join("rntuple-doc-merge-out.root");
//! let stats = merge::merge(&inputs, "Events", &out, WriteOptions::default())?;
//! assert_eq!((stats.entries, stats.clusters), (6, 2));
//! let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
//! let xs: Vec<String> = r.read_values(None, 0, 6)?.iter().map(|v| v.to_json()["x"].to_string()).collect();
//! assert_eq!(xs, ["0", "1", "2", "10", "11", "12"]);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::format::compression::Compression;
use crate::format::descriptor::{ColumnDescriptor, Descriptor, FieldDescriptor, Role};
use crate::ops::merge_attrs::AttributeSets;
use crate::ops::merge_cluster::{build_cluster, ClusterCounts, ColumnPlan, PageSettings};
use crate::ops::merge_schema::{filter_columns, first_difference, schema_key};
use crate::ops::merge_union::{fill_reps, union_columns, union_error};
use crate::ops::skim_one::{skim_reader, Skim};
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use crate::storage::local::output::refuse_same_file;
use crate::write::cluster::sealed::{ClusterOut, SealedCluster};
use crate::write::sink::Dataset;
use crate::write::WriteOptions;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

pub(crate) use crate::ops::page_copy::copy_cluster;

/// What a merge did.
///
/// ```
/// use rntuple::ops::merge::merge;
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let a = dir.join(format!("rntuple-doc-MergeStats-a-{}.root", std::process::id()));
/// # let b = dir.join(format!("rntuple-doc-MergeStats-b-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-MergeStats-out-{}.root", std::process::id()));
/// # for p in [&a, &b] {
/// #     let mut w = rntuple::write::Writer::create(p, "Events", &[("x", "std::int32_t")], Default::default())?;
/// #     for i in 0..3 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i))]))?; }
/// #     w.commit()?;
/// # }
/// let s = merge(&[&a, &b], "Events", &out, WriteOptions::default())?;
/// assert_eq!((s.entries, s.clusters, s.pages), (6, 2, 2)); // one page of x per input cluster
/// assert_eq!(s.file_bytes, std::fs::metadata(&out)?.len());
/// assert!(s.page_bytes > 0 && s.page_bytes < s.file_bytes);
/// # for p in [&a, &b, &out] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MergeStats {
    /// Entries in the output.
    pub entries: u64,
    /// Clusters copied.
    pub clusters: u64,
    /// Pages copied (pages shared by same-page merging count once).
    pub pages: u64,
    /// Page bytes copied (as stored, checksums included).
    pub page_bytes: u64,
    /// Size of the output file.
    pub file_bytes: u64,
    /// Zero pages written for what inputs lack (union merge, deferred columns).
    pub zero_pages: u64,
    /// Pages decompressed and compressed again (another compression asked for).
    pub recompressed_pages: u64,
    /// Attribute sets written.
    pub attribute_sets: u64,
}

/// How the schemas of the inputs must relate (ROOT's `rntuple.MergingMode`).
///
/// ```
/// use rntuple::ops::merge::MergeMode;
/// assert_eq!(MergeMode::default(), MergeMode::Strict);
/// assert_eq!("filter".parse::<MergeMode>()?, MergeMode::Filter);
/// assert_eq!("STRICT".parse::<MergeMode>()?, MergeMode::Strict);
/// assert_eq!("Union".parse::<MergeMode>()?, MergeMode::Union);
/// assert!("any".parse::<MergeMode>().is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MergeMode {
    /// Every input has the same schema (fields, types and columns, in the same order).
    #[default]
    Strict,
    /// The output has the first input's fields; every other input must have each of them, with
    /// the same type and columns, in any order; fields that only other inputs have are dropped.
    Filter,
    /// The output has every field of every input: a field missing from the inputs before is
    /// added by late model extension (it reads as its default value there), a field an input
    /// lacks reads as its default value in that input's entries; fields of one name must have
    /// the same type and columns.
    Union,
}

impl std::str::FromStr for MergeMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "strict" => Ok(MergeMode::Strict),
            "filter" => Ok(MergeMode::Filter),
            "union" => Ok(MergeMode::Union),
            other => Err(Error::Invalid(format!("merge mode '{other}': expected 'strict', 'filter' or 'union'"))),
        }
    }
}

/// The options of [`merge_with_options`] beyond the output's [`WriteOptions`].
///
/// ```
/// use rntuple::ops::merge::{MergeMode, MergeOptions};
/// use rntuple::write::Compression;
/// let o = MergeOptions { mode: MergeMode::Union, compression: Some(Compression::zstd(1)), threads: 2, ..Default::default() };
/// assert_eq!((o.cluster_size, o.ignore_other_objects), (None, false));
/// ```
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// How the inputs' schemas must relate.
    pub mode: MergeMode,
    /// Recompress pages stored with another compression to this one (`None`: every page keeps
    /// its compression). Pages already so compressed are copied as they are.
    pub compression: Option<Compression>,
    /// Re-cluster: decode the merged entries and refill them through the writer, clusters cut at
    /// this many uncompressed bytes (`None`: each input cluster stays a cluster).
    pub cluster_size: Option<u64>,
    /// Threads assembling clusters (0: one per core).
    pub threads: usize,
    /// Merge inputs that hold other objects beside the RNTuple (a TTree, a histogram, another
    /// RNTuple), which are not copied; by default such inputs are refused.
    pub ignore_other_objects: bool,
}

/// Merges the RNTuple `name` of every input, in order, into a new file `output`, with the
/// schema rule, page compression, clustering and threads of `mopts` (see [`MergeOptions`]); the
/// output's envelopes are compressed with `opts.compression`. Attribute sets of the inputs are
/// merged by name (their ranges moved to where the entries went). `progress` is called after
/// each cluster with (clusters done, clusters in all inputs).
///
/// ```
/// use rntuple::ops::merge::{merge_with_options, MergeMode, MergeOptions};
/// use rntuple::write::{Compression, WriteOptions, Writer};
/// use rntuple::Value;
/// let dir = std::env::temp_dir();
/// let inputs: Vec<_> = (0..3).map(|k| dir.join(format!("rntuple-doc-merge-options-{k}.root"))).collect();
/// for p in &inputs {
///     let mut w = Writer::create(p, "Events", &[("x", "std::int64_t")], WriteOptions::default())?;
///     for i in 0..1000 {
///         w.fill(&Value::Record(vec![("x".into(), Value::Int(i))]))?;
///     }
///     w.commit()?;
/// }
/// let out = dir.join("rntuple-doc-merge-options-out.root");
/// let lz4 = MergeOptions { compression: Some(Compression::lz4(4)), threads: 2, ..Default::default() };
/// let s = merge_with_options(&inputs, "Events", &out, &lz4, WriteOptions::default(), |_, _| {})?;
/// assert_eq!((s.entries, s.clusters, s.recompressed_pages), (3000, 3, 3));
/// let one = MergeOptions { cluster_size: Some(1 << 20), ..Default::default() };
/// let s = merge_with_options(&inputs, "Events", &out, &one, WriteOptions::default(), |_, _| {})?;
/// assert_eq!((s.entries, s.clusters), (3000, 1));
/// // Progress: (clusters done, clusters in all inputs) after each cluster.
/// let mut calls = Vec::new();
/// merge_with_options(&inputs, "Events", &out, &MergeOptions::default(), WriteOptions::default(), |d, n| calls.push((d, n)))?;
/// assert_eq!(calls, [(1, 3), (2, 3), (3, 3)]);
/// // MergeMode::Filter: the first input's fields, found by name in the others (here after another field).
/// let other = dir.join("rntuple-doc-merge-options-other.root");
/// let mut w = Writer::create(&other, "Events", &[("tag", "std::string"), ("x", "std::int64_t")], WriteOptions::default())?;
/// w.fill(&Value::Record(vec![("tag".into(), Value::String("b".into())), ("x".into(), Value::Int(7))]))?;
/// w.commit()?;
/// let filter = MergeOptions { mode: MergeMode::Filter, ..Default::default() };
/// merge_with_options(&[&inputs[0], &other], "Events", &out, &filter, WriteOptions::default(), |_, _| {})?;
/// let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
/// assert_eq!((r.num_entries(), r.read_values(None, 1000, 1001)?[0].to_json().to_string()), (1001, r#"{"x":7}"#.to_string()));
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn merge_with_options(
    inputs: &[impl AsRef<Path>],
    name: &str,
    output: impl AsRef<Path>,
    mopts: &MergeOptions,
    opts: WriteOptions,
    mut progress: impl FnMut(u64, u64),
) -> Result<MergeStats> {
    if inputs.is_empty() {
        return Err(Error::Invalid("merge: no input files".into()));
    }
    let output = output.as_ref();
    // An output that is one of the inputs under any name (hard or symbolic links, relative
    // paths) is refused before anything is opened for writing.
    let paths: Vec<&Path> = inputs.iter().map(|p| p.as_ref()).collect();
    refuse_same_file(output, &paths, "merge")?;
    let mut readers = Vec::with_capacity(inputs.len());
    for p in &paths {
        let f = RNTupleFile::open(p).map_err(|e| e.context(format!("merge: {}", p.display())))?;
        if !mopts.ignore_other_objects {
            refuse_other_objects(&f, name, &p.display().to_string())?;
        }
        let r = f.reader(name).map_err(|e| e.context(format!("merge: {}", p.display())))?;
        readers.push((p.display().to_string(), r));
    }
    let Some(cluster_size) = mopts.cluster_size else {
        return merge_pages(&readers, output, mopts, opts, &mut progress);
    };
    // Re-clustering: the pages merged into a file of its own, then decoded and refilled.
    let tmp = std::env::temp_dir().join(format!("rntuple-merge-{}-{}.root", std::process::id(), TMP_SEQ.fetch_add(1, Ordering::Relaxed)));
    let mut stats = merge_pages(
        &readers,
        &tmp,
        &MergeOptions { compression: None, ..mopts.clone() },
        WriteOptions { checkpoint_clusters: 0, ..opts.clone() },
        &mut progress,
    )?;
    let refilled = (|| {
        let r = RNTupleFile::open(&tmp)?.reader(name)?;
        let cut = WriteOptions {
            compression: mopts.compression.unwrap_or(opts.compression),
            approx_zipped_cluster_size: cluster_size,
            max_unzipped_cluster_size: cluster_size,
            max_unzipped_page_size: opts.max_unzipped_page_size.min(cluster_size),
            ..opts
        };
        let what = Skim { reencode: true, ..Default::default() };
        skim_reader(&r, output, &what, cut, |_, _| {})
    })();
    crate::storage::local::file_io::remove(&tmp).ok();
    let refilled = refilled.map_err(|e| e.context("merge: re-clustering"))?;
    stats.clusters = refilled.clusters;
    stats.file_bytes = refilled.file_bytes;
    Ok(stats)
}

static TMP_SEQ: AtomicUsize = AtomicUsize::new(0);

/// Refuses a file that holds objects beside the RNTuple `name` (and the directories it is in).
fn refuse_other_objects(f: &RNTupleFile, name: &str, path: &str) -> Result<()> {
    for (key, class, _) in f.keys() {
        let ours = key == name && class.contains("RNTuple");
        let dir = class.starts_with("TDirectory") && name.starts_with(&format!("{key}/"));
        if !ours && !dir {
            return Err(Error::Invalid(format!(
                "merge: {path} holds the {class} '{key}' beside the RNTuple '{name}': it would not be merged (pass --ignore-other-objects, in Python ignore_other_objects=True, to merge the RNTuple alone)"
            )));
        }
    }
    Ok(())
}

/// The cluster-level merge: schemas joined, clusters assembled on threads and placed in order.
fn merge_pages(
    readers: &[(String, Reader)],
    output: &Path,
    mopts: &MergeOptions,
    opts: WriteOptions,
    progress: &mut impl FnMut(u64, u64),
) -> Result<MergeStats> {
    let first = readers[0].1.descriptor();
    let mut union = Descriptor {
        name: first.name.clone(),
        description: first.description.clone(),
        writer: format!("rntuple v{} (merge)", env!("CARGO_PKG_VERSION")),
        fields: first.fields.clone(),
        columns: first.columns.clone(),
        aliases: first.aliases.clone(),
        extra_type_info: first.extra_type_info.clone(),
        n_header_fields: first.n_header_fields,
        ..Default::default()
    };
    // Per input: its column for each output column, and the output's field and column counts
    // once its fields are in (a union merge extends the schema before the input's clusters).
    let mut maps: Vec<(Vec<Option<usize>>, usize, usize)> = Vec::with_capacity(readers.len());
    // What the other inputs must agree with in a strict merge (made only then: 390 bytes a field).
    let key = (readers.len() > 1 && mopts.mode == MergeMode::Strict).then(|| schema_key(first));
    let mut entries_before = 0u64;
    for (k, (path, r)) in readers.iter().enumerate() {
        let d = r.descriptor();
        let map: Vec<Option<usize>> = match (k, mopts.mode) {
            (0, _) => (0..first.columns.len()).map(Some).collect(),
            (_, MergeMode::Strict) => {
                if let Some(diff) = key.as_ref().and_then(|key| first_difference(key, &schema_key(d))) {
                    return Err(Error::Invalid(format!("merge: {path} has another schema than {}: {diff}", readers[0].0)));
                }
                (0..first.columns.len()).map(Some).collect()
            }
            (_, MergeMode::Filter) => filter_columns(first, d)
                .map_err(|why| Error::Invalid(format!("merge (filter): {path}: {why} (the first input {} has it)", readers[0].0)))?
                .into_iter()
                .map(Some)
                .collect(),
            (_, MergeMode::Union) => {
                let map = union_columns(&mut union, d, entries_before).map_err(|why| union_error(path, &why))?;
                for t in &d.extra_type_info {
                    if !union.extra_type_info.iter().any(|u| format!("{u:?}") == format!("{t:?}")) {
                        union.extra_type_info.push(t.clone());
                    }
                }
                map
            }
        };
        maps.push((map, union.fields.len(), union.columns.len()));
        entries_before = entries_before.saturating_add(r.num_entries());
    }
    let plans: Vec<Vec<ColumnPlan>> = maps
        .iter()
        .map(|(map, _, _)| {
            map.iter()
                .enumerate()
                .map(|(k, &input)| {
                    let c = &union.columns[k];
                    let field = union.fields.get(c.field_id as usize);
                    ColumnPlan {
                        input,
                        reps: fill_reps(&union, c),
                        first_element: c.first_element,
                        bits: c.bits_on_storage,
                        field: union.field_path(c.field_id),
                        streamer: field.is_some_and(|f| f.role == Role::Streamer),
                    }
                })
                .collect()
        })
        .collect();
    drop(key);
    // The header holds the first input's schema; later fields go to the footer's extension (the
    // union is split, not copied: a copy was 26 MB of a schema of 100,000 fields).
    let tail = SchemaTail {
        first_field: maps[0].1,
        first_column: maps[0].2,
        fields: union.fields.split_off(maps[0].1.min(union.fields.len())),
        columns: union.columns.split_off(maps[0].2.min(union.columns.len())),
    };
    let mut ds = Dataset::create(output, union, opts.clone())?;
    let pages = PageSettings {
        recompress: mopts.compression,
        fallback: (mopts.compression.unwrap_or(opts.compression), opts.enable_page_checksums),
        same_page_merging: opts.same_page_merging,
    };
    let mut stats = MergeStats::default();
    let result = place_clusters(&mut ds, readers, &tail, &maps, &plans, pages, mopts.threads, &mut stats, progress).and_then(|()| {
        let mut sets = AttributeSets::default();
        let mut to = 0;
        for (path, r) in readers {
            sets.gather(r, path, 0, u64::MAX, to)?;
            to += r.num_entries();
        }
        stats.attribute_sets = sets.len() as u64;
        sets.write_into(&mut ds, &opts)
    });
    if let Err(e) = result {
        ds.abort();
        return Err(e);
    }
    stats.file_bytes = ds.commit()?;
    Ok(stats)
}

/// Assembles every cluster of every input (on `threads` threads, a bounded number ahead of the
/// writing) and places them in order into `ds`, extending its schema before each input's
/// clusters as the union asks.
#[allow(clippy::too_many_arguments)]
fn place_clusters(
    ds: &mut Dataset,
    readers: &[(String, Reader)],
    tail: &SchemaTail,
    maps: &[(Vec<Option<usize>>, usize, usize)],
    plans: &[Vec<ColumnPlan>],
    pages: PageSettings,
    threads: usize,
    stats: &mut MergeStats,
    progress: &mut impl FnMut(u64, u64),
) -> Result<()> {
    // (input, cluster, first entry in the output)
    let mut jobs: Vec<(usize, usize, u64)> = Vec::new();
    let mut at = 0u64;
    for (k, (_, r)) in readers.iter().enumerate() {
        for (i, c) in r.descriptor().clusters.iter().enumerate() {
            jobs.push((k, i, at));
            at = at.checked_add(c.n_entries).ok_or_else(|| Error::Invalid(format!("merge: {}: entry count overflows", readers[k].0)))?;
        }
    }
    let total = jobs.len() as u64;
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads }.clamp(1, jobs.len().max(1));
    let window = threads + 1;
    let build = |j: usize| -> Result<(SealedCluster, ClusterCounts)> {
        let (k, i, first) = jobs[j];
        let (path, r) = &readers[k];
        let c = &r.descriptor().clusters[i];
        build_cluster(r, c, first, &plans[k], pages).map_err(|e| e.context(format!("merge: {path}, cluster {}", c.id)))
    };
    let next = AtomicUsize::new(0);
    let placed = (Mutex::new(0usize), Condvar::new());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| -> Result<()> {
        let (tx, rx) = mpsc::channel::<(usize, Result<(SealedCluster, ClusterCounts)>)>();
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, placed, stop, build, n_jobs) = (&next, &placed, &stop, &build, jobs.len());
            s.spawn(move || loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                if j >= n_jobs {
                    break;
                }
                {
                    let mut g = placed.0.lock().unwrap_or_else(|p| p.into_inner());
                    while j >= *g + window && !stop.load(Ordering::Relaxed) {
                        g = placed.1.wait(g).unwrap_or_else(|p| p.into_inner());
                    }
                }
                if stop.load(Ordering::Relaxed) || tx.send((j, build(j))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending = BTreeMap::new();
        let mut done = 0usize;
        let mut outcome = Ok(());
        for (j, res) in rx.iter() {
            pending.insert(j, res);
            while let Some(res) = pending.remove(&done) {
                let (k, _, _) = jobs[done];
                let step = res.and_then(|(mut sealed, counts)| {
                    extend_schema(ds, tail, maps[k].1, maps[k].2);
                    ds.cluster(&mut sealed)?;
                    stats.pages += counts.pages;
                    stats.page_bytes += counts.page_bytes;
                    stats.zero_pages += counts.zero_pages;
                    stats.recompressed_pages += counts.recompressed;
                    stats.entries += sealed.n_entries;
                    stats.clusters += 1;
                    Ok(())
                });
                done += 1;
                *placed.0.lock().unwrap_or_else(|p| p.into_inner()) = done;
                placed.1.notify_all();
                if let Err(e) = step {
                    outcome = Err(e);
                    break;
                }
                progress(done as u64, total);
            }
            if outcome.is_err() {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        placed.1.notify_all();
        drop(rx);
        outcome
    })?;
    // Inputs without clusters still bring their fields.
    if let Some((_, nf, nc)) = maps.last() {
        extend_schema(ds, tail, *nf, *nc);
    }
    Ok(())
}

/// The union schema's fields and columns past the first input's (those of the header): from the
/// field `first_field` and the column `first_column` on.
struct SchemaTail {
    first_field: usize,
    first_column: usize,
    fields: Vec<FieldDescriptor>,
    columns: Vec<ColumnDescriptor>,
}

/// Late model extension of the output: the union's fields and columns up to these counts.
fn extend_schema(ds: &mut Dataset, tail: &SchemaTail, n_fields: usize, n_columns: usize) {
    if ds.desc.columns.len() < n_columns || ds.desc.fields.len() < n_fields {
        let fields = ds.desc.fields.len() - tail.first_field..n_fields - tail.first_field;
        ds.desc.fields.extend_from_slice(&tail.fields[fields]);
        let columns = ds.desc.columns.len() - tail.first_column..n_columns - tail.first_column;
        ds.desc.columns.extend_from_slice(&tail.columns[columns]);
        ds.columns_added();
    }
}

/// Merges the RNTuple `name` of every input, in order, into a new file `output`:
/// [`merge_with_options`] with the default [`MergeOptions`] (the same schema in every input;
/// pages keep their compression) and no progress callback.
///
/// ```
/// use rntuple::ops::merge::merge;
/// use rntuple::write::{Writer, WriteOptions};
/// # let dir = std::env::temp_dir();
/// # let a = dir.join(format!("rntuple-doc-merge-a-{}.root", std::process::id()));
/// # let b = dir.join(format!("rntuple-doc-merge-b-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-merge-out-{}.root", std::process::id()));
/// # for p in [&a, &b] {
/// #     let mut w = rntuple::write::Writer::create(p, "Events", &[("x", "std::int32_t")], Default::default())?;
/// #     for i in 0..3 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i))]))?; }
/// #     w.commit()?;
/// # }
/// assert_eq!(merge(&[&a, &b], "Events", &out, WriteOptions::default())?.entries, 6);
/// // An input of another schema is refused (see `MergeMode::Filter` for a looser rule).
/// # let c = dir.join(format!("rntuple-doc-merge-c-{}.root", std::process::id()));
/// Writer::create(&c, "Events", &[("x", "std::int64_t")], WriteOptions::default())?.commit()?;
/// assert!(merge(&[&a, &c], "Events", &out, WriteOptions::default()).is_err());
/// # std::fs::remove_file(&c)?;
/// # for p in [&a, &b, &out] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge(inputs: &[impl AsRef<Path>], name: &str, output: impl AsRef<Path>, opts: WriteOptions) -> Result<MergeStats> {
    merge_with_options(inputs, name, output, &MergeOptions::default(), opts, |_, _| {})
}
