//! Skims of a join (`rntuple skim ... --friend FILE[:NTUPLE] --on FIELDS`): the primary's fields and
//! its friends' into one new file, entries kept where a condition on both holds. A friend's fields
//! are written as an untyped record field named after the friend (its RNTuple's name), so that they
//! read back as `FRIEND.field`, the names a [`Join`] gives them and the names a condition uses; each
//! member is `std::optional` of the friend's type, empty where the friend has no match (a left
//! join). The primary's pages are re-encoded (a joined entry is new data).

use super::chain::Chain;
use super::join::{How, Join};
use crate::error::{Error, Result};
use crate::expr::{apply_masks, Selection};
use crate::logical::typename::TypeExpr;
use crate::ops::merge_attrs::AttributeSets;
use crate::ops::select::output_schema;
use crate::ops::select_attrs::{boundaries, PartLog, Placements, ThreadLog};
use crate::write::{WriteOptions, Writer};
use arrow_array::{ArrayRef, RecordBatch, StructArray};
use arrow_schema::{Field, Fields, Schema};
use std::path::Path;
use std::sync::Arc;

/// What to skim from a join.
///
/// ```
/// use rntuple::dataset::JoinSkim;
/// let what = JoinSkim {
///     inputs: vec!["events.root".into()],
///     friends: vec!["corrections.root:Corr".into()],
///     on: vec!["run".into(), "event".into()],
///     where_: Some("Corr.weight > 0.5".into()),
///     ..Default::default()
/// };
/// assert!(what.fields.is_none()); // every field of the primary and of the friends
/// ```
#[derive(Debug, Clone, Default)]
pub struct JoinSkim {
    /// The primary's input files, globs or URLs (each may end in `:NTUPLE`).
    pub inputs: Vec<String>,
    /// The primary RNTuple (the only one of each file when `None`).
    pub ntuple: Option<String>,
    /// The friends, `FILE[:NTUPLE]` each (a glob makes a chain); named after their RNTuple.
    pub friends: Vec<String>,
    /// Index fields to match entries on (empty: entry by entry).
    pub on: Vec<String>,
    /// Fields to write: the primary's top-level fields, a friend's name (all its fields) or
    /// `FRIEND.field`; all when `None`.
    pub fields: Option<Vec<String>>,
    /// The entry condition, over the primary's fields and `FRIEND.field`.
    pub where_: Option<String>,
    /// Decoding threads per input (0: the reader's default).
    pub threads: usize,
}

/// What a join skim did ([`skim_join`] returns it; the CLI prints it as JSON).
///
/// ```
/// let s = rntuple::dataset::JoinSkimStats { entries_read: 10, entries: 4, ..Default::default() };
/// assert!(s.entries <= s.entries_read);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinSkimStats {
    /// Primary entries read.
    pub entries_read: u64,
    /// Entries written.
    pub entries: u64,
    /// The top-level fields written (a friend's as one record field).
    pub fields: Vec<String>,
    /// The friends' names.
    pub friends: Vec<String>,
    /// Bytes of the friends' indices.
    pub index_bytes: u64,
    /// Size of the output file.
    pub file_bytes: u64,
}

impl JoinSkimStats {
    /// The report of the skim of `what` as one JSON object (what `rntuple skim --friend` prints,
    /// without the output's name, and what Python's `rntuple.skim(..., friends=)` returns).
    ///
    /// ```
    /// use rntuple::dataset::{JoinSkim, JoinSkimStats};
    /// let what = JoinSkim { inputs: vec!["a.root".into(), "b.root".into()], on: vec!["event".into()], ..Default::default() };
    /// let s = JoinSkimStats { entries_read: 10, entries: 4, ..Default::default() };
    /// let j = s.to_json(&what);
    /// assert_eq!((j["inputs"].as_u64(), j["entries"].as_u64(), j["on"][0].as_str()), (Some(2), Some(4), Some("event")));
    /// assert_eq!(j["method"], "joined and re-encoded");
    /// ```
    pub fn to_json(&self, what: &JoinSkim) -> serde_json::Value {
        serde_json::json!({
            "inputs": what.inputs.len(), "friends": self.friends, "on": what.on, "fields": self.fields,
            "entries_read": self.entries_read, "entries": self.entries, "index_bytes": self.index_bytes,
            "file_bytes": self.file_bytes, "method": "joined and re-encoded",
        })
    }
}

/// One friend's part of the output: its name and the fields kept (all read ones for the condition).
struct FriendOut {
    name: String,
    kept: Vec<String>,
    read: Vec<String>,
}

/// Skims the join of `what` into a new file `output` (see the module's documentation);
/// `progress` is called with (primary entries done, all).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let dir = std::env::temp_dir();
/// # let id = std::process::id();
/// # let (p, a, out) = (dir.join(format!("rntuple-doc-jskim-p-{id}.root")), dir.join(format!("rntuple-doc-jskim-a-{id}.root")), dir.join(format!("rntuple-doc-jskim-o-{id}.root")));
/// # let mut w = Writer::create(&p, "Events", &[("event", "std::uint64_t"), ("x", "float")], WriteOptions::default())?;
/// # for i in 0..4u64 { w.fill(&Value::Record(vec![("event".into(), Value::UInt(i)), ("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// # let mut w = Writer::create(&a, "Corr", &[("event", "std::uint64_t"), ("w", "double")], WriteOptions::default())?;
/// # for i in [3u64, 1, 0] { w.fill(&Value::Record(vec![("event".into(), Value::UInt(i)), ("w".into(), Value::F64(i as f64 / 2.0))]))?; }
/// # w.commit()?;
/// use rntuple::dataset::{skim_join, JoinSkim};
/// let what = JoinSkim {
///     inputs: vec![p.display().to_string()],
///     friends: vec![a.display().to_string()],
///     on: vec!["event".into()],
///     where_: Some("Corr.w > 0".into()),
///     ..Default::default()
/// };
/// let s = skim_join(&what, &out, WriteOptions::default(), &|_, _| {})?;
/// assert_eq!((s.entries_read, s.entries), (4, 2)); // events 1 and 3 (0 has w = 0, 2 no match)
/// assert_eq!(s.fields, ["event", "x", "Corr"]);
/// # for f in [&p, &a, &out] { std::fs::remove_file(f)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn skim_join(what: &JoinSkim, output: impl AsRef<Path>, opts: WriteOptions, progress: &dyn Fn(u64, u64)) -> Result<JoinSkimStats> {
    let sel = Selection::new(what.where_.as_deref(), &[])?;
    let mut primary = Chain::open(&what.inputs, what.ntuple.as_deref()).map_err(|e| e.context("skim --friend: primary"))?;
    let mut friends = Vec::with_capacity(what.friends.len());
    for spec in &what.friends {
        let mut c = Chain::open(std::slice::from_ref(spec), None).map_err(|e| e.context(format!("skim --friend {spec}")))?;
        if what.threads > 0 {
            c.set_threads(what.threads);
        }
        friends.push((c.name().to_string(), c));
    }
    if what.threads > 0 {
        primary.set_threads(what.threads);
    }
    let primary_names: Vec<String> = primary.fields().into_iter().map(|(n, _)| n).collect();
    if let Some((n, _)) = friends.iter().find(|(n, _)| primary_names.contains(n)) {
        return Err(Error::Invalid(format!("skim --friend: the friend '{n}' has the name of a field of the primary RNTuple")));
    }
    // What is written and what is read: the primary's fields by name, a friend by its name.
    let wanted = |name: &str| what.fields.as_ref().is_none_or(|f| f.iter().any(|w| w == name));
    let named = sel.fields_named();
    let p_kept: Vec<String> = primary_names.iter().filter(|n| wanted(n)).cloned().collect();
    let mut outs = Vec::new();
    let mut schema = output_schema(&primary.parts_inner()[0].reader, Some(&p_kept)).map_err(|e| e.context("skim --friend"))?.0;
    for (name, chain) in &friends {
        let members: Vec<String> = chain.fields().into_iter().map(|(n, _)| n).collect();
        let kept: Vec<String> = members.iter().filter(|m| wanted(name) || wanted(&format!("{name}.{m}"))).cloned().collect();
        let read = if named.contains(name) { members.clone() } else { kept.clone() };
        if !kept.is_empty() {
            let types = output_schema(&chain.parts_inner()[0].reader, Some(&kept)).map_err(|e| e.context(format!("skim --friend {name}")))?.0;
            let optional = types.into_iter().map(|(m, t)| (m, TypeExpr::Optional("std::optional".into(), Box::new(t)))).collect();
            schema.push((name.clone(), TypeExpr::Record(optional)));
        }
        outs.push(FriendOut { name: name.clone(), kept, read });
    }
    if let Some(f) = &what.fields {
        let known = |w: &String| p_kept.contains(w) || outs.iter().any(|o| *w == o.name || o.kept.iter().any(|m| *w == format!("{}.{m}", o.name)));
        if let Some(w) = f.iter().find(|w| !known(w)) {
            return Err(Error::Invalid(format!("skim --friend: no field '{w}' in the primary RNTuple or a friend")));
        }
    }
    let mut read: Vec<String> = p_kept.clone();
    for n in named.iter().filter(|n| primary_names.contains(n)) {
        if !read.contains(n) {
            read.push(n.clone());
        }
    }
    let p_read = read.len();
    for o in &outs {
        read.extend(o.read.iter().map(|m| format!("{}.{m}", o.name)));
    }
    let on: Vec<&str> = what.on.iter().map(String::as_str).collect();
    let join = Join::new(primary, friends, &on, How::Left)?;
    let names: Vec<String> = schema.iter().map(|(n, _)| n.clone()).collect();
    let ntuple = join.primary().name().to_string();
    let mut w = Writer::create_with_types(output.as_ref(), &ntuple, &schema, opts)?;
    let read_refs: Vec<&str> = read.iter().map(String::as_str).collect();
    let (total, mut written) = (join.num_entries(), 0u64);
    let mut log = Vec::new();
    // Parts are logged only when the primary has attribute sets to carry over (as ops::select does).
    let with_sets = join.primary().parts_inner().iter().any(|p| !p.reader.attribute_set_names().is_empty());
    let bounds: Vec<Vec<u64>> = if with_sets { join.primary().parts_inner().iter().map(|p| boundaries(&p.reader)).collect::<Result<_>>()? } else { Vec::new() };
    for part in join.parts(1 << 16) {
        let batch = join.read_batch(Some(&read_refs), part.start, part.end)?;
        let nested = nest(&batch, p_read, &outs, |o| &o.read)?;
        let masks = sel.masks(&nested)?;
        let kept = apply_masks(&nested, &masks)?;
        let out = keep(&kept, &p_kept, &outs)?;
        if out.num_rows() > 0 {
            w.append_batch(&out)?;
        }
        // A part lies in one input (whole clusters of it): logged for the attribute sets.
        if with_sets && let Some((input, a)) = join.primary().locate(part.start) {
            log.push(PartLog::new(input, a, a + (part.end - part.start), written, masks.entries.as_deref(), &bounds[input]));
        }
        written += out.num_rows() as u64;
        progress(part.end, total);
    }
    // The primary's attribute sets, their ranges moved to the entries kept.
    if with_sets {
        let inputs = join.primary().parts_inner();
        let placements = Placements::new(vec![ThreadLog { parts: log, placed: vec![(0, written)] }], inputs.len());
        let mut sets = AttributeSets::default();
        for (k, p) in inputs.iter().enumerate() {
            sets.gather_mapped(&p.reader, &format!("skim --friend: {}", p.location), |start, len| placements.place(k, start, len))?;
        }
        sets.write_with(&mut w)?;
    }
    let index_bytes = join.index_bytes();
    let friends = join.friend_names().iter().map(|s| s.to_string()).collect();
    let file_bytes = w.commit()?;
    Ok(JoinSkimStats { entries_read: total, entries: written, fields: names, friends, index_bytes, file_bytes })
}

/// The batch read (`p` primary columns, then each friend's `members(friend)` as `FRIEND.m`) with
/// each friend's columns gathered into one struct column named after it.
fn nest(b: &RecordBatch, p: usize, outs: &[FriendOut], members: impl Fn(&FriendOut) -> &Vec<String>) -> Result<RecordBatch> {
    let schema = b.schema();
    let mut fields: Vec<Field> = schema.fields()[..p].iter().map(|f| f.as_ref().clone()).collect();
    let mut columns: Vec<ArrayRef> = b.columns()[..p].to_vec();
    let mut at = p;
    for o in outs {
        let ms = members(o);
        if ms.is_empty() {
            continue;
        }
        let children: Fields = ms.iter().enumerate().map(|(i, m)| Field::new(m, schema.field(at + i).data_type().clone(), true)).collect();
        let arrays = b.columns()[at..at + ms.len()].to_vec();
        let s = StructArray::try_new(children.clone(), arrays, None).map_err(|e| Error::internal(format!("skim --friend {}: {e}", o.name)))?;
        fields.push(Field::new(&o.name, arrow_schema::DataType::Struct(children), false));
        columns.push(Arc::new(s));
        at += ms.len();
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| Error::internal(format!("skim --friend: {e}")))
}

/// The written columns of a nested batch: the primary's kept ones, then each friend's record of
/// its kept members.
fn keep(b: &RecordBatch, p_kept: &[String], outs: &[FriendOut]) -> Result<RecordBatch> {
    let lost = |n: &str| Error::internal(format!("skim --friend lost field '{n}'"));
    let schema = b.schema();
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for n in p_kept {
        let i = schema.index_of(n).map_err(|_| lost(n))?;
        fields.push(schema.field(i).clone());
        columns.push(b.column(i).clone());
    }
    for o in outs.iter().filter(|o| !o.kept.is_empty()) {
        let i = schema.index_of(&o.name).map_err(|_| lost(&o.name))?;
        let s = b.column(i).as_any().downcast_ref::<StructArray>().ok_or_else(|| lost(&o.name))?;
        let idx: Vec<usize> = o.kept.iter().map(|m| o.read.iter().position(|r| r == m).ok_or_else(|| lost(m))).collect::<Result<_>>()?;
        let children: Fields = idx.iter().map(|&k| s.fields()[k].clone()).collect();
        let arrays: Vec<ArrayRef> = idx.iter().map(|&k| s.column(k).clone()).collect();
        let kept = StructArray::try_new(children.clone(), arrays, None).map_err(|e| Error::internal(format!("skim --friend {}: {e}", o.name)))?;
        fields.push(Field::new(&o.name, arrow_schema::DataType::Struct(children), false));
        columns.push(Arc::new(kept));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).map_err(|e| Error::internal(format!("skim --friend: {e}")))
}
