//! Skims of many inputs into one output with a selection: entries kept by a condition
//! (`--where`), elements of collections kept by filters (`--filter`), on several threads.
//!
//! The inputs (paths, globs or URLs) are read cluster by cluster (a cluster of more than about
//! 256 MiB of decoded data in the fields read, in parts), handed out to `threads` threads; each
//! applies the [`Selection`] to its part and fills the result through its own fill context of one
//! [`ParallelWriter`], so that compression and writing run on all threads and the output is one
//! file. With one thread the output keeps the inputs' entry order; with several, each part's
//! entries stay together and in order, parts interleave. A thread ends its output cluster at the
//! end of a part once the cluster is an eighth of the writer's cluster size, so that it holds about
//! one part's output (ROOT's RDataFrame `Snapshot` ends one per task). A whole cluster whose every
//! entry passes, when nothing is filtered and the input's kept fields have the output's column
//! layout (same types and encodings: the same compression family), is copied as stored, pages not
//! decompressed.
//!
//! ```
//! use rntuple::ops::select::{skim_many, SkimMany};
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let mut inputs = Vec::new();
//! for k in 0..2 {
//!     let path = dir.join(format!("rntuple-doc-select-{k}.root"));
//!     let mut w = Writer::create(&path, "Events", &[("event", "std::int32_t"), ("Jet_pt", "std::vector<float>")], WriteOptions::default())?;
//!     for i in 0..10 {
//!         let pts = (0..i % 4).map(|j| Value::F32((10 * j + i) as f32)).collect();
//!         w.fill(&Value::Record(vec![("event".into(), Value::Int(100 * k + i)), ("Jet_pt".into(), Value::List(pts))]))?;
//!     }
//!     w.commit()?;
//!     inputs.push(path.display().to_string());
//! }
//! let out = dir.join("rntuple-doc-select-out.root");
//! let what = SkimMany {
//!     inputs,
//!     where_: Some("count(Jet_pt > 20) >= 1".into()),
//!     filters: vec![("Jet".into(), "Jet_pt > 20".into())],
//!     threads: 1, // one thread keeps the inputs' entry order
//!     ..Default::default()
//! };
//! let s = skim_many(&what, &out, WriteOptions::default(), &|_, _| {})?;
//! assert_eq!((s.inputs, s.entries_read, s.entries), (2, 20, 4)); // events 3 and 7 of each input
//! let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
//! assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"event":3,"Jet_pt":[23.0]}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::expr::{apply_masks, Selection};
use crate::format::descriptor::Descriptor;
use crate::logical::descriptor_types::field_type;
use crate::logical::typename::TypeExpr;
use crate::ops::merge::copy_cluster;
use crate::ops::merge_attrs::AttributeSets;
use crate::ops::select_attrs::{boundaries, PartLog, Placements, ThreadLog};
use crate::ops::skim_one::{batch_end, only_ntuple, read_columns, subset, top_ancestors, uncopyable, Subset};
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use crate::storage::local::output::refuse_same_file;
use crate::write::ParallelWriter;
use crate::write::WriteOptions;
use arrow_array::RecordBatch;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What to skim.
#[derive(Debug, Clone, Default)]
pub struct SkimMany {
    /// Input files, globs (`data/*.root`) or URLs, in order.
    pub inputs: Vec<String>,
    /// The RNTuple to read (the only one of each file when `None`).
    pub ntuple: Option<String>,
    /// Top-level fields to write, in the first input's schema order (all when `None`).
    pub fields: Option<Vec<String>>,
    /// The entry condition.
    pub where_: Option<String>,
    /// `(collection, expression)` element filters.
    pub filters: Vec<(String, String)>,
    /// Threads (at least 1; `0` means one per available core).
    pub threads: usize,
    /// Inputs may lack kept fields: the output holds every kept field any input has, and the
    /// entries of an input lacking one get its default value (zero, empty; as ROOT's union merge
    /// fills them). Off, such an input is an error. Fields the expressions name must be in every
    /// input either way.
    pub fill_missing: bool,
}

/// What a skim of many inputs did.
///
/// ```
/// use rntuple::ops::skim::{run, SkimOutcome, SkimRequest};
/// use rntuple::write::WriteOptions;
/// # let dir = std::env::temp_dir();
/// # let input = dir.join(format!("rntuple-doc-SkimManyStats-in-{}.root", std::process::id()));
/// # let out = dir.join(format!("rntuple-doc-SkimManyStats-out-{}.root", std::process::id()));
/// # let mut w = rntuple::write::Writer::create(&input, "Events", &[("x", "std::int32_t"), ("y", "float")], Default::default())?;
/// # for i in 0..10 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i)), ("y".into(), rntuple::Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// // Two inputs (the same file twice) go to the selecting engine.
/// let req = SkimRequest { inputs: vec![input.display().to_string(); 2], ..Default::default() };
/// let report = run(&req, &out, WriteOptions::default(), &|_, _| {})?;
/// let SkimOutcome::Many(s) = &report.outcome else { panic!("not the selecting engine") };
/// assert_eq!((s.inputs, s.entries_read, s.entries, s.threads), (2, 20, 20, 1));
/// assert_eq!((s.clusters_copied, s.method()), (2, "copied pages")); // every entry kept
/// # std::fs::remove_file(&input)?;
/// # std::fs::remove_file(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SkimManyStats {
    /// Input files read.
    pub inputs: usize,
    /// The RNTuple's name.
    pub ntuple: String,
    /// The fields written.
    pub fields: Vec<String>,
    /// Entries read.
    pub entries_read: u64,
    /// Entries written.
    pub entries: u64,
    /// Parts of inputs read (whole clusters or pieces of large ones).
    pub parts: u64,
    /// Clusters written.
    pub clusters: u64,
    /// Input clusters whose pages were copied as stored (every entry kept, nothing filtered).
    pub clusters_copied: u64,
    /// Threads used.
    pub threads: usize,
    /// Size of the output file.
    pub file_bytes: u64,
}

impl SkimManyStats {
    /// `"copied pages"` (every input cluster copied as stored), `"re-encoded"` (none), or
    /// `"copied pages and re-encoded"`.
    pub fn method(&self) -> &'static str {
        match (self.clusters_copied, self.parts) {
            (0, _) => "re-encoded",
            (c, p) if c == p => "copied pages",
            _ => "copied pages and re-encoded",
        }
    }
}

/// The input list with globs expanded (sorted), URLs and plain paths as given.
///
/// A glob that matches no file is an error; so is an empty list.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for i in inputs {
        let is_glob = i.contains(['*', '?', '[']);
        if RNTupleFile::is_url(i) || !is_glob || Path::new(i).exists() {
            out.push(i.clone());
            continue;
        }
        let paths = glob::glob(i).map_err(|e| Error::Invalid(format!("input pattern '{i}': {e}")))?;
        let mut found: Vec<PathBuf> = paths.filter_map(|p| p.ok()).collect();
        if found.is_empty() {
            return Err(Error::Invalid(format!("input pattern '{i}' matches no file")));
        }
        found.sort();
        out.extend(found.into_iter().map(|p| p.display().to_string()));
    }
    if out.is_empty() {
        return Err(Error::Invalid("skim: no inputs".into()));
    }
    Ok(out)
}

struct Input {
    name: String,
    reader: Reader,
}

/// Skims `what` into a new file `output` (see the module docs); `progress` is called with
/// (entries read, entries to read), from any thread.
pub fn skim_many(what: &SkimMany, output: impl AsRef<Path>, opts: WriteOptions, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<SkimManyStats> {
    let output = output.as_ref();
    let sel = Selection::new(what.where_.as_deref(), &what.filters)?;
    let names = expand_inputs(&what.inputs)?;
    let local: Vec<&Path> = names.iter().filter(|n| !RNTupleFile::is_url(n)).map(Path::new).collect();
    refuse_same_file(output, &local, "skim")?;
    let mut inputs = Vec::with_capacity(names.len());
    let mut ntuple_name: Option<String> = what.ntuple.clone();
    for n in &names {
        let f = RNTupleFile::open(n).map_err(|e| e.context(format!("skim: {n}")))?;
        let nt = match &ntuple_name {
            Some(nt) => nt.clone(),
            None => only_ntuple(&f, n)?,
        };
        ntuple_name.get_or_insert_with(|| nt.clone());
        let mut reader = f.reader(&nt).map_err(|e| e.context(format!("skim: {n}")))?;
        reader.share_between_threads();
        inputs.push(Input { name: n.clone(), reader });
    }
    let ntuple = ntuple_name.unwrap_or_default();
    let first = inputs.first().ok_or_else(|| Error::Invalid("skim: no inputs".into()))?;
    let (schema, kept) = if what.fill_missing {
        let readers: Vec<(&Reader, &str)> = inputs.iter().map(|i| (&i.reader, i.name.as_str())).collect();
        crate::ops::skim_missing::union_schema(&readers, what.fields.as_deref())?
    } else {
        output_schema(&first.reader, what.fields.as_deref())?
    };
    // The batch read: the kept fields and those the expressions name.
    let mut read: Vec<String> = kept.clone();
    for n in sel.fields_named() {
        if !read.contains(&n) {
            read.push(n);
        }
    }
    let named = sel.names();
    for inp in &inputs {
        check_fields(&inp.reader, first.reader.descriptor(), &schema, &read, &named, &inp.name, what.fill_missing)?;
    }
    // What each input reads and keeps: all of `read` and `kept`, but the fields it lacks (only
    // kept ones, with `fill_missing`).
    let has = |r: &Reader, n: &str| r.descriptor().top_level_fields().iter().any(|&t| r.descriptor().fields[t as usize].name == n);
    let read_refs: Vec<Vec<&str>> = inputs.iter().map(|i| read.iter().map(String::as_str).filter(|n| has(&i.reader, n)).collect()).collect();
    let kept_here: Vec<Vec<String>> = inputs.iter().map(|i| kept.iter().filter(|n| has(&i.reader, n)).cloned().collect()).collect();
    let mut parts: Vec<(usize, u64, u64)> = Vec::new();
    for (k, inp) in inputs.iter().enumerate() {
        let d = inp.reader.descriptor();
        let columns = read_columns(d, &read_refs[k])?;
        for c in &d.clusters {
            let (mut at, stop) = (c.first_entry, c.first_entry.saturating_add(c.n_entries));
            while at < stop {
                let end = batch_end(d, &columns, at, stop).max(at + 1).min(stop);
                parts.push((k, at, end));
                at = end;
            }
        }
    }
    let total: u64 = inputs.iter().map(|i| i.reader.num_entries()).sum();
    let threads = match what.threads {
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        t => t,
    }
    .clamp(1, parts.len().max(1));
    let w = ParallelWriter::create_with_types(output, &ntuple, &schema, opts)?;
    // Inputs whose kept fields have the output's layout: their clusters that pass whole are copied.
    let plans: Vec<Option<Subset>> = if sel.filters_elements() {
        inputs.iter().map(|_| None).collect()
    } else {
        let out = w.descriptor()?;
        inputs.iter().map(|i| copy_plan(&i.reader, &kept, &out)).collect()
    };
    let named: Vec<String> = sel.fields_named();
    let copied = AtomicU64::new(0);
    let (next, done, written) = (AtomicUsize::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let failed = AtomicBool::new(false);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    // With attribute sets, each thread logs where its parts' entries went.
    let with_sets = inputs.iter().any(|i| !i.reader.attribute_set_names().is_empty());
    let bounds: Vec<Vec<u64>> = if with_sets {
        inputs.iter().map(|i| boundaries(&i.reader).map_err(|e| e.context(format!("skim: {}: attribute sets", i.name)))).collect::<Result<_>>()?
    } else {
        Vec::new()
    };
    let logs: Mutex<Vec<ThreadLog>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            let ctx = w.fill_context();
            let (inputs, parts, sel, kept_here, read_refs, plans, named, schema) = (&inputs, &parts, &sel, &kept_here, &read_refs, &plans, &named, &schema);
            let (next, done, written, failed, first_error, copied, logs, bounds) = (&next, &done, &written, &failed, &first_error, &copied, &logs, &bounds);
            s.spawn(move || {
                let r = (|| -> Result<()> {
                    let mut ctx = ctx?;
                    let (mut log, mut local) = (Vec::new(), 0u64);
                    while !failed.load(Ordering::Relaxed) {
                        let Some(&(k, a, b)) = parts.get(next.fetch_add(1, Ordering::Relaxed)) else { break };
                        let inp = &inputs[k];
                        if let Some(plan) = &plans[k]
                            && let Some(n) =
                                copy_if_whole(&inp.reader, plan, sel, named, a, b, &mut ctx).map_err(|e| e.context(format!("skim: {}", inp.name)))?
                        {
                            if with_sets {
                                log.push(PartLog::new(k, a, b, local, None, &bounds[k]));
                            }
                            local += n;
                            written.fetch_add(n, Ordering::Relaxed);
                            copied.fetch_add(1, Ordering::Relaxed);
                            progress(done.fetch_add(b - a, Ordering::Relaxed) + (b - a), total);
                            continue;
                        }
                        let batch = inp.reader.read_batch(Some(&read_refs[k]), a, b).map_err(|e| e.context(format!("skim: {} entries {a}..{b}", inp.name)))?;
                        let masks = sel.masks(&batch).map_err(|e| e.context(format!("skim: {}", inp.name)))?;
                        let out = apply_masks(&batch, &masks).map_err(|e| e.context(format!("skim: {}", inp.name)))?;
                        let out = crate::ops::skim_missing::with_defaults(&project(&out, &kept_here[k])?, schema)?;
                        if out.num_rows() > 0 {
                            ctx.append_batch(&out)?;
                        }
                        if ctx.cluster_fill() >= PART_CLUSTER_FILL {
                            ctx.flush_cluster()?;
                        }
                        if with_sets {
                            log.push(PartLog::new(k, a, b, local, masks.entries.as_deref(), &bounds[k]));
                        }
                        local += out.num_rows() as u64;
                        written.fetch_add(out.num_rows() as u64, Ordering::Relaxed);
                        progress(done.fetch_add(b - a, Ordering::Relaxed) + (b - a), total);
                    }
                    let m = ctx.finish()?;
                    if with_sets {
                        if m.placed.iter().map(|p| p.1).sum::<u64>() != local {
                            return Err(Error::internal("skim: the clusters of a thread do not hold the entries it kept"));
                        }
                        logs.lock().map_err(|_| Error::internal("skim: a thread panicked"))?.push(ThreadLog { parts: log, placed: m.placed });
                    }
                    Ok(())
                })();
                if let Err(e) = r {
                    failed.store(true, Ordering::Relaxed);
                    if let Ok(mut f) = first_error.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = first_error.lock().ok().and_then(|mut f| f.take()) {
        w.abort(&e.to_string());
        return Err(e);
    }
    if with_sets && let Err(e) = keep_attribute_sets(&w, &inputs, logs) {
        w.abort(&e.to_string());
        return Err(e);
    }
    let file_bytes = w.commit()?;
    let clusters = w.metrics().iter().map(|m| m.clusters).sum();
    Ok(SkimManyStats {
        inputs: inputs.len(),
        ntuple,
        fields: kept,
        entries_read: done.load(Ordering::Relaxed),
        entries: written.load(Ordering::Relaxed),
        parts: parts.len() as u64,
        clusters,
        clusters_copied: copied.load(Ordering::Relaxed),
        threads,
        file_bytes,
    })
}

/// Writes the inputs' attribute sets into the output, each range moved to where its kept
/// entries went (see `select_attrs`).
fn keep_attribute_sets(w: &ParallelWriter, inputs: &[Input], logs: Mutex<Vec<ThreadLog>>) -> Result<()> {
    let logs = logs.into_inner().map_err(|_| Error::internal("skim: a thread panicked"))?;
    let placements = Placements::new(logs, inputs.len());
    let mut sets = AttributeSets::default();
    for (k, inp) in inputs.iter().enumerate() {
        sets.gather_mapped(&inp.reader, &format!("skim: {}", inp.name), |start, len| placements.place(k, start, len))?;
    }
    w.with_dataset(|ds, opts| sets.write_into(ds, opts))
}

/// A thread ends its output cluster at the end of a part once the cluster is at least this full
/// (relative to the writer's cluster size): a thread then holds about one part's compressed output
/// instead of a whole 128 MiB cluster (ROOT's RDataFrame `Snapshot` ends a cluster after every
/// task), while a selective skim still joins small parts into clusters of a useful size.
const PART_CLUSTER_FILL: f64 = 0.125;

/// The kept fields of `r` as a schema of their own, when it has `out`'s layout (the same fields,
/// types and columns, in the same order), so that their pages can be copied as stored. (Column
/// types follow the compression as in ROOT: split encodings when compressed; an uncompressed
/// input does not match a compressed output.)
fn copy_plan(r: &Reader, kept: &[String], out: &Descriptor) -> Option<Subset> {
    let d = r.descriptor();
    let top = top_ancestors(d).ok()?;
    let tops: Vec<u32> = d.top_level_fields().into_iter().filter(|&t| kept.contains(&d.fields[t as usize].name)).collect();
    let sub = subset(d, &top, &tops).ok()?;
    same_layout(&sub.desc, out).then_some(sub)
}

/// Whether two schemas have the same fields and columns, id for id.
fn same_layout(a: &Descriptor, b: &Descriptor) -> bool {
    let fields = a.fields.len() == b.fields.len()
        && a.fields.iter().zip(&b.fields).all(|(x, y)| {
            (x.id, x.parent, &x.name, &x.type_name, x.role, x.repetition, &x.children, &x.columns)
                == (y.id, y.parent, &y.name, &y.type_name, y.role, y.repetition, &y.children, &y.columns)
                && x.projection_source.is_none()
                && y.projection_source.is_none()
        });
    let columns = a.columns.len() == b.columns.len()
        && a.columns.iter().zip(&b.columns).all(|(x, y)| {
            (x.id, x.column_type, x.bits_on_storage, x.field_id, x.representation, x.value_range)
                == (y.id, y.column_type, y.bits_on_storage, y.field_id, y.representation, y.value_range)
        });
    fields && columns && a.aliases.is_empty() && b.aliases.is_empty()
}

/// Copies the cluster `[a, b)` of `r` into the fill context when it is a whole cluster whose every
/// entry passes the selection (which filters no elements); the entries copied, or `None`.
fn copy_if_whole(r: &Reader, plan: &Subset, sel: &Selection, named: &[String], a: u64, b: u64, ctx: &mut crate::write::FillContext) -> Result<Option<u64>> {
    let d = r.descriptor();
    let Some(c) = d.clusters.iter().find(|c| c.first_entry == a && c.first_entry.saturating_add(c.n_entries) == b) else { return Ok(None) };
    if uncopyable(d, plan, &[c], a, b).is_some() {
        return Ok(None);
    }
    if !sel.is_empty() {
        let names: Vec<&str> = named.iter().map(String::as_str).collect();
        let batch = r.read_batch(Some(&names), a, b)?;
        if sel.masks(&batch)?.entries.is_some_and(|m| m.iter().any(|&x| !x)) {
            return Ok(None);
        }
    }
    let mut sealed = copy_cluster(r, c, &plan.columns)?;
    ctx.append_sealed_cluster(&mut sealed)?;
    Ok(Some(c.n_entries))
}

/// The (name, type) of each field of a schema.
pub type Schema = Vec<(String, TypeExpr)>;

/// The (name, type) of the kept top-level fields of `r` (all when `None`), in schema order, and
/// their names: the schema of a skim's output. Projected fields become fields of their own
/// (`nMuon`'s cardinality a `std::uint32_t`, `Muon_pt` an `RVec<float>`).
///
/// ```
/// use rntuple::ops::skim::output_schema;
/// use rntuple::write::{Projection, Writer, WriteOptions};
/// let path = std::env::temp_dir().join(format!("rntuple-doc-output_schema-{}.root", std::process::id()));
/// let projections = vec![Projection::Cardinality { name: "nv".into(), collection: "v".into() }];
/// Writer::create(&path, "Events", &[("v", "std::vector<float>")], WriteOptions { projections, ..Default::default() })?.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let (schema, names) = output_schema(&r, None)?;
/// assert_eq!(names, ["v", "nv"]);
/// assert_eq!(schema[1].1.name(), "std::uint32_t");
/// assert!(output_schema(&r, Some(&["w".to_string()])).is_err()); // no such field
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn output_schema(r: &Reader, fields: Option<&[String]>) -> Result<(Schema, Vec<String>)> {
    let d = r.descriptor();
    let tops = d.top_level_fields();
    if let Some(want) = fields {
        if want.is_empty() {
            return Err(Error::Invalid("skim: no fields selected".into()));
        }
        for w in want {
            if !tops.iter().any(|&t| d.fields[t as usize].name == *w) {
                let known: Vec<&str> = tops.iter().map(|&t| d.fields[t as usize].name.as_str()).collect();
                return Err(Error::Invalid(format!("skim: no top-level field '{w}' (the fields are: {})", known.join(", "))));
            }
        }
    }
    let mut schema = Vec::new();
    for t in tops {
        let name = &d.fields[t as usize].name;
        if fields.is_none_or(|f| f.contains(name)) {
            schema.push((name.clone(), field_type(d, t, 0).map_err(|e| e.context(format!("skim: field '{name}'")))?));
        }
    }
    let names = schema.iter().map(|(n, _)| n.clone()).collect();
    Ok((schema, names))
}

/// Refuses an input whose kept fields differ in type from the first input's (the output's), or
/// that lacks a kept field (unless `fill_missing`) or a field the expressions name.
fn check_fields(
    r: &Reader,
    first: &crate::format::descriptor::Descriptor,
    schema: &[(String, TypeExpr)],
    read: &[String],
    names: &[(String, String, String, usize)],
    input: &str,
    fill_missing: bool,
) -> Result<()> {
    let d = r.descriptor();
    let type_name = |d: &crate::format::descriptor::Descriptor, n: &str| {
        d.fields.iter().find(|f| f.parent.is_none() && f.name == n).map(|f| f.type_name.clone()).unwrap_or_default()
    };
    let tops = d.top_level_fields();
    let find = |n: &str| tops.iter().copied().find(|&t| d.fields[t as usize].name == n);
    for (name, ty) in schema {
        let id = match find(name) {
            Some(id) => id,
            None if fill_missing => continue,
            None => return Err(Error::Invalid(format!("skim: {input} has no field '{name}' (the first input has it; --fill-missing writes defaults)"))),
        };
        let here = field_type(d, id, 0)?;
        if here != *ty {
            return Err(Error::Invalid(format!(
                "skim: field '{name}' is '{}' in {input}, '{}' in the first input",
                type_name(d, name),
                type_name(first, name)
            )));
        }
    }
    for name in read {
        let kept_field = fill_missing && schema.iter().any(|(n, _)| n == name) && !names.iter().any(|n| n.0 == *name);
        if !kept_field && find(name).is_none() {
            let known: Vec<&str> = tops.iter().map(|&t| d.fields[t as usize].name.as_str()).collect();
            let at = names.iter().find(|n| n.0 == *name).map(|(_, full, text, col)| format!(" (as '{full}' at column {col} of '{text}')")).unwrap_or_default();
            return Err(Error::Invalid(format!("skim: no field '{name}'{at} in {input} (the fields are: {})", known.join(", "))));
        }
    }
    Ok(())
}

/// The kept columns of a batch, in order.
fn project(b: &RecordBatch, kept: &[String]) -> Result<RecordBatch> {
    let schema = b.schema();
    let idx = kept.iter().map(|k| schema.index_of(k).map_err(|_| Error::internal(format!("skim lost field '{k}'")))).collect::<Result<Vec<_>>>()?;
    b.project(&idx).map_err(|e| Error::Invalid(format!("skim: {e}")))
}
