//! Merging RNTuples of the same schema into one, by copying their compressed pages: no page is
//! decompressed or re-encoded. This works because a cluster is relocatable (its collection offsets
//! are cluster-local), so each input cluster becomes an output cluster through the same three
//! steps as a cluster of the writers (reserve, write, append metadata). Pages keep their
//! compression and checksums; same-page merging inside a cluster is kept.
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
use crate::format::descriptor::{ClusterDescriptor, Descriptor};
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use crate::storage::output::refuse_same_file;
use crate::storage::tfile::read_blob;
use crate::write::sealed::{ClusterOut, PagePosition, SealedCluster, SealedColumn, SealedPage};
use crate::write::sink::Dataset;
use crate::write::WriteOptions;
use std::collections::HashMap;
use std::path::Path;

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
}

/// How the schemas of the inputs must relate (ROOT's `rntuple.MergingMode`, without `Union`).
///
/// ```
/// use rntuple::ops::merge::MergeMode;
/// assert_eq!(MergeMode::default(), MergeMode::Strict);
/// assert_eq!("filter".parse::<MergeMode>()?, MergeMode::Filter);
/// assert_eq!("STRICT".parse::<MergeMode>()?, MergeMode::Strict);
/// assert!("union".parse::<MergeMode>().is_err());
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
}

impl std::str::FromStr for MergeMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "strict" => Ok(MergeMode::Strict),
            "filter" => Ok(MergeMode::Filter),
            other => Err(Error::Invalid(format!("merge mode '{other}': expected 'strict' or 'filter'"))),
        }
    }
}

/// Merges the RNTuple `name` of every input, in order, into a new file `output`. The inputs
/// must have the same schema (fields, types and columns); the output's envelopes are compressed
/// with `opts.compression`, its pages keep the compression of their input. `progress` is called
/// after each cluster with (clusters done, clusters in all inputs).
///
/// ```
/// use rntuple::ops::merge::merge_with_progress;
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let a = dir.join(format!("rntuple-doc-merge_with_progress-a-{}.root", std::process::id()));
/// # let b = dir.join(format!("rntuple-doc-merge_with_progress-b-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-merge_with_progress-out-{}.root", std::process::id()));
/// # for p in [&a, &b] {
/// #     let mut w = rntuple::write::Writer::create(p, "Events", &[("x", "std::int32_t")], Default::default())?;
/// #     for i in 0..3 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i))]))?; }
/// #     w.commit()?;
/// # }
/// let mut calls = Vec::new();
/// merge_with_progress(&[&a, &b], "Events", &out, WriteOptions::default(), |done, all| calls.push((done, all)))?;
/// assert_eq!(calls, [(1, 2), (2, 2)]);
/// # for p in [&a, &b, &out] { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge_with_progress(
    inputs: &[impl AsRef<Path>],
    name: &str,
    output: impl AsRef<Path>,
    opts: WriteOptions,
    progress: impl FnMut(u64, u64),
) -> Result<MergeStats> {
    merge_with_mode(inputs, name, output, MergeMode::Strict, opts, progress)
}

/// [`merge_with_progress`] with a choice of how the inputs' schemas must relate
/// ([`MergeMode::Filter`]: the first input's fields, found by name in the others).
///
/// ```
/// use rntuple::ops::merge::{merge_with_mode, MergeMode};
/// use rntuple::write::{WriteOptions, Writer};
/// use rntuple::Value;
/// let dir = std::env::temp_dir();
/// let a = dir.join("rntuple-doc-filter-a.root");
/// let b = dir.join("rntuple-doc-filter-b.root");
/// let mut w = Writer::create(&a, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// w.fill(&Value::Record(vec![("x".into(), Value::Int(1))]))?;
/// w.commit()?;
/// // b has another field first, and x later.
/// let mut w = Writer::create(&b, "Events", &[("tag", "std::string"), ("x", "std::int32_t")], WriteOptions::default())?;
/// w.fill(&Value::Record(vec![("tag".into(), Value::String("b".into())), ("x".into(), Value::Int(2))]))?;
/// w.commit()?;
/// let out = dir.join("rntuple-doc-filter-out.root");
/// merge_with_mode(&[&a, &b], "Events", &out, MergeMode::Filter, WriteOptions::default(), |_, _| {})?;
/// let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
/// let rows: Vec<String> = r.read_values(None, 0, 2)?.iter().map(|v| v.to_json().to_string()).collect();
/// assert_eq!(rows, [r#"{"x":1}"#, r#"{"x":2}"#]);
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn merge_with_mode(
    inputs: &[impl AsRef<Path>],
    name: &str,
    output: impl AsRef<Path>,
    mode: MergeMode,
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
    for p in inputs {
        let p = p.as_ref();
        let f = RNTupleFile::open(p).map_err(|e| e.context(format!("merge: {}", p.display())))?;
        let r = f.reader(name).map_err(|e| e.context(format!("merge: {}", p.display())))?;
        readers.push((p.display().to_string(), r));
    }
    let first = readers[0].1.descriptor();
    let key = schema_key(first);
    // Per input, its column ids in the order of the output's columns.
    let mut column_maps: Vec<Vec<usize>> = vec![(0..first.columns.len()).collect()];
    for (path, r) in &readers[1..] {
        match mode {
            MergeMode::Strict => {
                if let Some(diff) = first_difference(&key, &schema_key(r.descriptor())) {
                    return Err(Error::Invalid(format!("merge: {path} has another schema than {}: {diff}", readers[0].0)));
                }
                column_maps.push((0..first.columns.len()).collect());
            }
            MergeMode::Filter => {
                let map = filter_columns(first, r.descriptor())
                    .map_err(|why| Error::Invalid(format!("merge (filter): {path}: {why} (the first input {} has it)", readers[0].0)))?;
                column_maps.push(map);
            }
        }
    }
    if let Some(c) = first.columns.iter().find(|c| c.first_element > 0) {
        // Entries before a deferred column's first element read as defaults in its own file; in
        // a later copy they would be missing, and pages cannot be copied to fill them.
        return Err(Error::Invalid(format!(
            "merge: column {} of field '{}' in {} is deferred (late model extension, its first element is {}): merging such RNTuples is not supported",
            c.id,
            first.field_path(c.field_id),
            readers[0].0,
            c.first_element
        )));
    }
    let desc = Descriptor {
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
    let total: u64 = readers.iter().map(|(_, r)| r.descriptor().clusters.len() as u64).sum();
    let mut ds = Dataset::create(output, desc, opts)?;
    let mut stats = MergeStats::default();
    for ((path, r), columns) in readers.iter().zip(&column_maps) {
        let n_columns = r.descriptor().columns.len();
        for c in &r.descriptor().clusters {
            if c.columns.len() > n_columns {
                return Err(Error::Invalid(format!("merge: {path}, cluster {}: {} column ranges for {n_columns} columns", c.id, c.columns.len())));
            }
            let copied = copy_cluster_into(&mut ds, r, c, columns).map_err(|e| e.context(format!("merge: {path}, cluster {}", c.id)))?;
            stats.pages += copied.pages;
            stats.page_bytes += copied.page_bytes;
            stats.entries += copied.entries;
            stats.clusters += 1;
            progress(stats.clusters, total);
        }
    }
    stats.file_bytes = ds.commit()?;
    Ok(stats)
}

/// [`merge_with_progress`] without a progress callback.
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
    merge_with_progress(inputs, name, output, opts, |_, _| {})
}

/// What [`copy_cluster_into`] copied.
pub(crate) struct Copied {
    /// Pages (shared ones once).
    pub pages: u64,
    /// Page bytes as stored, checksums included.
    pub page_bytes: u64,
    /// Entries of the cluster.
    pub entries: u64,
}

/// Copies the stored pages of `columns` of one cluster of `r` into `ds` as its next cluster.
pub(crate) fn copy_cluster_into(ds: &mut Dataset, r: &Reader, c: &ClusterDescriptor, columns: &[usize]) -> Result<Copied> {
    let mut sealed = copy_cluster(r, c, columns)?;
    let copied = Copied { pages: sealed.chunks.len() as u64, page_bytes: sealed.chunks.iter().map(|b| b.len() as u64).sum(), entries: sealed.n_entries };
    ds.cluster(&mut sealed)?;
    Ok(copied)
}

/// Reads the stored pages of the columns `columns` (input column ids, in output order) of one
/// cluster into a relocatable cluster.
pub(crate) fn copy_cluster(r: &Reader, c: &ClusterDescriptor, columns: &[usize]) -> Result<SealedCluster> {
    let mut out = SealedCluster { n_entries: c.n_entries, ..Default::default() };
    let mut settings: Option<(u32, bool)> = None;
    // Same-page merging: page descriptors pointing at one stored page share one copy.
    let mut copied: HashMap<u64, usize> = HashMap::new();
    let max_key = r.anchor().max_key_size;
    for &col in columns {
        let range =
            c.columns.get(col).and_then(Option::as_ref).ok_or_else(|| {
                Error::Invalid(format!("column {col} has no pages in this cluster (a deferred column): merging such RNTuples is not supported"))
            })?;
        if range.suppressed {
            return Err(Error::Invalid(format!(
                "column {col} is suppressed in this cluster (several column representations): merging such RNTuples is not supported"
            )));
        }
        let mut pages = Vec::with_capacity(range.pages.len());
        for p in &range.pages {
            let these = (range.compression, p.has_checksum);
            if *settings.get_or_insert(these) != these {
                return Err(Error::Invalid(format!("column {col} mixes compression settings or page checksums within the cluster: not supported")));
            }
            let stored = p.locator.size + if p.has_checksum { 8 } else { 0 };
            let chunk = match copied.get(&p.locator.offset) {
                Some(&i) => i,
                None => {
                    let bytes = read_blob(&**r.source(), p.locator.offset, stored, max_key, &format!("page of column {col}"))?;
                    if p.has_checksum {
                        verify_page_checksum(&bytes, col, p.locator.offset)?;
                    }
                    out.chunks.push(bytes);
                    copied.insert(p.locator.offset, out.chunks.len() - 1);
                    out.chunks.len() - 1
                }
            };
            pages.push(SealedPage { n_elements: p.n_elements, stored: p.locator.size, position: PagePosition::Chunk(chunk) });
        }
        out.columns.push(SealedColumn { n_elements: range.n_elements, pages });
    }
    let (compression, checksums) = settings.unwrap_or((0, false));
    out.compression = compression;
    out.checksums = checksums;
    Ok(out)
}

/// Checks the XXH3 checksum that ends a copied page (the pages are copied, not decoded, so this
/// is where a damaged page is caught: the copy fails instead of passing the damage on).
fn verify_page_checksum(stored: &[u8], col: usize, offset: u64) -> Result<()> {
    let Some(split) = stored.len().checked_sub(8) else {
        return Err(Error::Invalid(format!("page of column {col} at offset {offset}: {} bytes, too short for its checksum", stored.len())));
    };
    let (body, sum) = stored.split_at(split);
    if crate::format::checksum::xxh3(body).to_le_bytes() != sum {
        return Err(Error::Invalid(format!("page of column {col} at offset {offset}: checksum mismatch (the page is damaged)")));
    }
    Ok(())
}

/// For [`MergeMode::Filter`]: the column ids of `input` that hold the data of `out`'s columns,
/// in `out`'s column order, found through the fields' paths; a field `input` lacks, or has with
/// another type or other columns, is the error.
fn filter_columns(out: &Descriptor, input: &Descriptor) -> std::result::Result<Vec<usize>, String> {
    let by_path: HashMap<String, u32> = input.fields.iter().map(|f| (input.field_path(f.id), f.id)).collect();
    let describe = |d: &Descriptor, id: u32| {
        let f = &d.fields[id as usize];
        format!(
            "'{}' (alias '{}', version {}/{}), role {:?}, repetition {:?}",
            f.type_name, f.type_alias, f.type_version, f.field_version, f.role, f.repetition
        )
    };
    // Every field that holds data (projected fields only alias the output's own columns), with
    // its type: also the records and collections whose columns are their members'. Output
    // field id -> input field id.
    let mut fields: HashMap<u32, u32> = HashMap::new();
    for f in out.fields.iter().filter(|f| f.projection_source.is_none()) {
        let path = out.field_path(f.id);
        let &fid = by_path.get(&path).ok_or_else(|| format!("no field '{path}'"))?;
        let (want, got) = (describe(out, f.id), describe(input, fid));
        if want != got {
            return Err(format!("field '{path}' is {got}, not {want}"));
        }
        fields.insert(f.id, fid);
    }
    let mut map = Vec::with_capacity(out.columns.len());
    for c in &out.columns {
        let path = out.field_path(c.field_id);
        let &fid = fields.get(&c.field_id).ok_or_else(|| format!("no field '{path}'"))?;
        let k = out.fields[c.field_id as usize]
            .columns
            .iter()
            .position(|&x| x == c.id)
            .ok_or_else(|| format!("column {} is not listed by field '{path}'", c.id))?;
        let &ic = input.fields[fid as usize].columns.get(k).ok_or_else(|| format!("field '{path}' has fewer columns"))?;
        let col = input.columns.get(ic as usize).ok_or_else(|| format!("field '{path}' lists a column {ic} that does not exist"))?;
        let same = (col.column_type, col.bits_on_storage, col.representation, col.flags, col.value_range, col.first_element)
            == (c.column_type, c.bits_on_storage, c.representation, c.flags, c.value_range, c.first_element);
        if !same {
            return Err(format!(
                "column {k} of field '{path}' is type {} ({} bits), representation {}, flags {}, first element {}, not type {} ({} bits), representation {}, flags {}, first element {}",
                col.column_type, col.bits_on_storage, col.representation, col.flags, col.first_element, c.column_type, c.bits_on_storage, c.representation, c.flags, c.first_element
            ));
        }
        map.push(ic as usize);
    }
    Ok(map)
}

/// Everything of a schema that must agree between merged RNTuples, one line per item.
fn schema_key(d: &Descriptor) -> Vec<String> {
    let mut k = Vec::with_capacity(d.fields.len() + d.columns.len() + d.aliases.len());
    for f in &d.fields {
        let path = d.field_path(f.id);
        k.push(format!(
            "field '{path}': type '{}' (alias '{}', version {}/{}), role {:?}, flags {}, parent {:?}, repetition {:?}, projection {:?}, extension {}",
            f.type_name, f.type_alias, f.type_version, f.field_version, f.role, f.flags, f.parent, f.repetition, f.projection_source, f.from_extension
        ));
    }
    for c in &d.columns {
        let path = d.field_path(c.field_id);
        k.push(format!(
            "column {} of field '{path}': type {} ({} bits), representation {}, flags {}, range {:?}, first element {}, extension {}",
            c.id, c.column_type, c.bits_on_storage, c.representation, c.flags, c.value_range, c.first_element, c.from_extension
        ));
    }
    for a in &d.aliases {
        k.push(format!("alias column of field '{}' -> {}", d.field_path(a.field_id), a.physical));
    }
    k
}

fn first_difference(a: &[String], b: &[String]) -> Option<String> {
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return Some(format!("{x}, but {y}"));
        }
    }
    match a.len().cmp(&b.len()) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(format!("{} has no counterpart", a[b.len()])),
        std::cmp::Ordering::Less => Some(format!("{} has no counterpart", b[a.len()])),
    }
}
