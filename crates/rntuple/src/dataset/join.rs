//! A join: a primary chain plus auxiliary ones ("friends"), aligned entry by entry or matched on
//! index fields through each friend's [`JoinIndex`] (ROOT's `RNTupleJoinProcessor`). A friend's
//! fields are named `FRIEND.field`. Reading a batch reads the primary's fields and keys over its
//! range, looks the keys up, and gathers the friends' entries cluster by cluster (see `gather`):
//! memory is bounded by the indices and one cluster per input, not by the friends' data.

use super::chain::Chain;
use super::gather::{gather, ClusterCache};
use super::join_index::{check_index_fields, key_values, JoinIndex};
use crate::error::{Error, Result};
use crate::value::Value;
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema};
use std::sync::{Arc, Mutex};

/// What a join does with a primary entry no friend entry matches.
///
/// ```
/// use rntuple::dataset::How;
/// assert_eq!(How::default(), How::Left); // as ROOT's join: the friend's fields are missing (null)
/// assert_eq!("inner".parse::<How>()?, How::Inner);
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum How {
    /// The entry is kept; the friend's fields are null (ROOT's join).
    #[default]
    Left,
    /// The entry is dropped.
    Inner,
}

impl std::str::FromStr for How {
    type Err = Error;
    /// `"left"` or `"inner"`.
    ///
    /// ```
    /// assert_eq!("inner".parse::<rntuple::dataset::How>()?, rntuple::dataset::How::Inner);
    /// assert!("outer".parse::<rntuple::dataset::How>().is_err());
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<How> {
        match s {
            "left" => Ok(How::Left),
            "inner" => Ok(How::Inner),
            _ => Err(Error::Invalid(format!("join: how must be \"left\" or \"inner\", not {s:?}"))),
        }
    }
}

struct Friend {
    name: String,
    chain: Chain,
    index: Option<JoinIndex>,
    cache: Mutex<ClusterCache>,
}

/// A primary chain joined with auxiliary chains.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let dir = std::env::temp_dir();
/// # let (p, a) = (dir.join(format!("rntuple-doc-join-p-{}.root", std::process::id())), dir.join(format!("rntuple-doc-join-a-{}.root", std::process::id())));
/// # let (p, a) = (p.display().to_string(), a.display().to_string());
/// # let mut w = Writer::create(&p, "Events", &[("event", "std::uint64_t"), ("x", "float")], WriteOptions::default())?;
/// # for e in 0..4u64 { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e)), ("x".into(), Value::F32(e as f32))]))?; }
/// # w.commit()?;
/// # let mut w = Writer::create(&a, "Scores", &[("event", "std::uint64_t"), ("score", "double")], WriteOptions::default())?;
/// # for e in [3u64, 0, 1] { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e)), ("score".into(), Value::F64(e as f64 / 10.0))]))?; }
/// # w.commit()?;
/// use rntuple::dataset::{Chain, How, Join};
/// use rntuple::arrow::array::{Array, Float64Array};
/// let primary = Chain::open(&[p.clone()], None)?;
/// let scores = Chain::open(&[a.clone()], None)?; // shuffled, event 2 missing
/// let join = Join::new(primary, vec![("Scores".into(), scores)], &["event"], How::Left)?;
/// let batch = join.read_batch(Some(&["x", "Scores.score"]), 0, 4)?;
/// let score = batch.column(1).as_any().downcast_ref::<Float64Array>().unwrap();
/// assert_eq!((score.value(0), score.value(3), score.is_null(2)), (0.0, 0.3, true));
/// # std::fs::remove_file(&p)?; std::fs::remove_file(&a)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Join {
    primary: Chain,
    friends: Vec<Friend>,
    on: Vec<String>,
    how: How,
}

/// Where a field of the join comes from.
enum Source<'a> {
    Primary(&'a str),
    Friend(usize, &'a str),
}

impl Join {
    /// Joins `friends` (`(name, chain)`: its fields read as `name.field`) to `primary`: entry by
    /// entry when `on` is empty, else on the index fields `on` (integers, in every input; each key
    /// at most once per friend). The friends' indices are built here, in parallel.
    pub fn new(primary: Chain, friends: Vec<(String, Chain)>, on: &[&str], how: How) -> Result<Join> {
        for (k, (name, _)) in friends.iter().enumerate() {
            if name.is_empty() {
                return Err(Error::Invalid("join: a friend needs a name".into()));
            }
            if friends[..k].iter().any(|(n, _)| n == name) {
                return Err(Error::Invalid(format!("join: two friends named '{name}'; give them names as (name, source)")));
            }
        }
        if !on.is_empty() {
            check_index_fields(&primary, on, "primary")?;
        }
        let indices: Vec<Result<Option<JoinIndex>>> = std::thread::scope(|s| {
            let handles: Vec<_> =
                friends.iter().map(|(_, c)| s.spawn(move || if on.is_empty() { Ok(None) } else { JoinIndex::build(c, on).map(Some) })).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::internal("join: an index build panicked")))).collect()
        });
        let mut out = Vec::with_capacity(friends.len());
        for ((name, chain), index) in friends.into_iter().zip(indices) {
            out.push(Friend { name, chain, index: index?, cache: Mutex::new(ClusterCache::default()) });
        }
        Ok(Join { primary, friends: out, on: on.iter().map(|s| s.to_string()).collect(), how })
    }

    /// Opens a join from locations: the primary's inputs (paths, globs, URLs, each may end in
    /// `:NTUPLE`; else `ntuple` or the file's only RNTuple) and one friend per `friends` spec
    /// (`FILE[:NTUPLE]`, a glob makes a chain), named after its RNTuple. Without friends it is the
    /// primary chain alone.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let dir = std::env::temp_dir();
    /// # let (p, a) = (dir.join(format!("rntuple-doc-join-open-p-{}.root", std::process::id())), dir.join(format!("rntuple-doc-join-open-a-{}.root", std::process::id())));
    /// # let (p, a) = (p.display().to_string(), a.display().to_string());
    /// # let mut w = Writer::create(&p, "Events", &[("event", "std::uint64_t")], WriteOptions::default())?;
    /// # for e in 0..3u64 { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e))]))?; }
    /// # w.commit()?;
    /// # let mut w = Writer::create(&a, "Scores", &[("event", "std::uint64_t"), ("score", "double")], WriteOptions::default())?;
    /// # for e in [2u64, 0] { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e)), ("score".into(), Value::F64(e as f64))]))?; }
    /// # w.commit()?;
    /// use rntuple::dataset::{How, Join};
    /// let join = Join::open(&[p.clone()], None, &[a.clone()], &["event"], How::Inner)?;
    /// assert_eq!(join.friend_names(), ["Scores"]);
    /// assert_eq!(join.read_values(Some(&["event"]), 0, 3)?.len(), 2); // event 1 has no score
    /// # std::fs::remove_file(&p)?; std::fs::remove_file(&a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(inputs: &[String], ntuple: Option<&str>, friends: &[String], on: &[&str], how: How) -> Result<Join> {
        let primary = Chain::open(inputs, ntuple).map_err(|e| e.context("primary"))?;
        let mut chains = Vec::with_capacity(friends.len());
        for spec in friends {
            let c = Chain::open(std::slice::from_ref(spec), None).map_err(|e| e.context(format!("friend {spec}")))?;
            chains.push((c.name().to_string(), c));
        }
        Join::new(primary, chains, on, how)
    }

    /// The friends: `(name, chain)`, in order.
    pub fn friends(&self) -> Vec<(&str, &Chain)> {
        self.friends.iter().map(|f| (f.name.as_str(), &f.chain)).collect()
    }

    /// Entries of the primary (with [`How::Inner`], reads may give fewer).
    pub fn num_entries(&self) -> u64 {
        self.primary.num_entries()
    }

    /// The primary chain.
    pub fn primary(&self) -> &Chain {
        &self.primary
    }

    /// The friends' names, in order.
    pub fn friend_names(&self) -> Vec<&str> {
        self.friends.iter().map(|f| f.name.as_str()).collect()
    }

    /// The index fields (empty: an aligned join).
    pub fn on(&self) -> &[String] {
        &self.on
    }

    /// Left or inner.
    pub fn how(&self) -> How {
        self.how
    }

    /// Bytes held by the friends' indices.
    pub fn index_bytes(&self) -> u64 {
        self.friends.iter().filter_map(|f| f.index.as_ref()).map(JoinIndex::bytes).sum()
    }

    /// The fields of the join: the primary's, then each friend's as `FRIEND.field`, with their
    /// ROOT type names.
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut out = self.primary.fields();
        for f in &self.friends {
            out.extend(f.chain.fields().into_iter().map(|(n, t)| (format!("{}.{n}", f.name), t)));
        }
        out
    }

    /// Cluster-aligned ranges of primary entries for parallel iteration (see [`Chain::parts`]).
    pub fn parts(&self, min_entries: u64) -> Vec<std::ops::Range<u64>> {
        self.primary.parts(min_entries)
    }

    fn source<'a>(&self, name: &'a str) -> Result<Source<'a>> {
        let primary = self.primary.fields();
        if primary.iter().any(|(n, _)| n == name) {
            return Ok(Source::Primary(name));
        }
        for (k, f) in self.friends.iter().enumerate() {
            if let Some(rest) = name.strip_prefix(f.name.as_str()).and_then(|r| r.strip_prefix('.'))
                && f.chain.fields().iter().any(|(n, _)| n == rest)
            {
                return Ok(Source::Friend(k, rest));
            }
        }
        let all: Vec<String> = self.fields().into_iter().map(|(n, _)| n).collect();
        Err(Error::NotFound(format!("join: no field '{name}' (fields: {})", all.join(", "))))
    }

    /// The friend `friend`'s entry for each primary entry `start..stop` (`None`: no match).
    pub fn friend_entries(&self, friend: usize, start: u64, stop: u64) -> Result<Vec<Option<u64>>> {
        let f = self.friends.get(friend).ok_or_else(|| Error::NotFound(format!("join: no friend number {friend}")))?;
        let keys = self.keys(start, stop)?;
        Ok(self.entries(f, &keys, start, stop))
    }

    fn keys(&self, start: u64, stop: u64) -> Result<Vec<Vec<i64>>> {
        if self.on.is_empty() {
            return Ok(Vec::new());
        }
        let on: Vec<&str> = self.on.iter().map(String::as_str).collect();
        let b = self.primary.read_batch(Some(&on), start, stop)?;
        let place = format!("the primary RNTuple '{}' of {}", self.primary.name(), self.primary.location());
        (0..on.len()).map(|i| key_values(b.column(i), on[i], &place)).collect()
    }

    fn entries(&self, f: &Friend, keys: &[Vec<i64>], start: u64, stop: u64) -> Vec<Option<u64>> {
        match &f.index {
            Some(index) => index.lookup(keys),
            None => {
                let n = f.chain.num_entries();
                (start..stop).map(|e| (e < n).then_some(e)).collect()
            }
        }
    }

    /// What a read of `fields` over primary entries `start..stop` takes: where each field comes
    /// from, the friends' matching entries, and (inner joins) which primary entries are kept.
    fn plan<'a>(&self, names: &[&'a str], start: u64, stop: u64) -> Result<Plan<'a>> {
        let sources = names.iter().map(|n| self.source(n)).collect::<Result<Vec<_>>>()?;
        let mut primary_fields: Vec<&str> = Vec::new();
        let mut friend_fields: Vec<Vec<&str>> = vec![Vec::new(); self.friends.len()];
        for s in &sources {
            match *s {
                Source::Primary(n) if !primary_fields.contains(&n) => primary_fields.push(n),
                Source::Friend(k, n) if !friend_fields[k].contains(&n) => friend_fields[k].push(n),
                _ => {}
            }
        }
        let needed: Vec<usize> = (0..self.friends.len()).filter(|&k| self.how == How::Inner || !friend_fields[k].is_empty()).collect();
        let keys = if needed.is_empty() { Vec::new() } else { self.keys(start, stop)? };
        let mut entries: Vec<Vec<Option<u64>>> = vec![Vec::new(); self.friends.len()];
        for &k in &needed {
            entries[k] = self.entries(&self.friends[k], &keys, start, stop);
        }
        let mut keep = None;
        if self.how == How::Inner && !needed.is_empty() {
            let mask: Vec<bool> = (0..(stop - start) as usize).map(|r| needed.iter().all(|&k| entries[k][r].is_some())).collect();
            if mask.iter().any(|&m| !m) {
                for &k in &needed {
                    entries[k] = entries[k].iter().zip(&mask).filter(|(_, keep)| **keep).map(|(e, _)| *e).collect();
                }
                keep = Some(mask);
            }
        }
        Ok(Plan { sources, primary_fields, friend_fields, entries, keep })
    }

    /// The chosen field names (all when `None`).
    fn names<'a>(&self, fields: Option<&[&'a str]>, all: &'a [String]) -> Vec<&'a str> {
        match fields {
            Some(f) => f.to_vec(),
            None => all.iter().map(String::as_str).collect(),
        }
    }

    /// Reads the chosen fields (primary fields by name, a friend's as `FRIEND.field`; all when
    /// `None`) of primary entries `start..stop`: one row per primary entry, a friend's fields null
    /// where it has no match ([`How::Left`]), or only the entries every friend matches ([`How::Inner`]).
    pub fn read_batch(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        let all: Vec<String> = if fields.is_none() { self.fields().into_iter().map(|(n, _)| n).collect() } else { Vec::new() };
        let names = self.names(fields, &all);
        let p = self.plan(&names, start, stop)?;
        let mut primary = self.primary.read_batch(Some(&p.primary_fields), start, stop)?;
        if let Some(mask) = &p.keep {
            primary = arrow_select::filter::filter_record_batch(&primary, &BooleanArray::from(mask.clone()))?;
        }
        let rows = primary.num_rows();
        let mut friend_columns: Vec<Vec<ArrayRef>> = vec![Vec::new(); self.friends.len()];
        for (k, f) in self.friends.iter().enumerate() {
            if !p.friend_fields[k].is_empty() {
                friend_columns[k] = gather(&f.chain, &p.friend_fields[k], &p.entries[k], &f.cache)?;
            }
        }
        let mut schema = Vec::with_capacity(names.len());
        let mut columns = Vec::with_capacity(names.len());
        for (name, s) in names.iter().zip(&p.sources) {
            let (a, nullable) = match *s {
                Source::Primary(n) => {
                    let i = p.primary_fields.iter().position(|&f| f == n).ok_or_else(|| Error::internal("join: a primary column lost"))?;
                    (primary.column(i).clone(), primary.schema().field(i).is_nullable())
                }
                Source::Friend(k, n) => {
                    let i = p.friend_fields[k].iter().position(|&f| f == n).ok_or_else(|| Error::internal("join: a friend column lost"))?;
                    (friend_columns[k][i].clone(), true)
                }
            };
            schema.push(Field::new(*name, a.data_type().clone(), nullable || a.null_count() > 0));
            columns.push(a);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(schema)), columns, &opts)?)
    }

    /// [`Join::read_batch`] as values, one record per entry keyed by the chosen names (a friend's
    /// fields `null` where it has no match), each value as [`crate::Reader::read_values`] gives it
    /// (what `rntuple dump` prints for a join).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let dir = std::env::temp_dir();
    /// # let (p, a) = (dir.join(format!("rntuple-doc-join-values-p-{}.root", std::process::id())), dir.join(format!("rntuple-doc-join-values-a-{}.root", std::process::id())));
    /// # let (p, a) = (p.display().to_string(), a.display().to_string());
    /// # let mut w = Writer::create(&p, "Events", &[("event", "std::uint64_t")], WriteOptions::default())?;
    /// # for e in 0..3u64 { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e))]))?; }
    /// # w.commit()?;
    /// # let mut w = Writer::create(&a, "Scores", &[("event", "std::uint64_t"), ("score", "double")], WriteOptions::default())?;
    /// # for e in [2u64, 0] { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e)), ("score".into(), Value::F64(e as f64 / 10.0))]))?; }
    /// # w.commit()?;
    /// use rntuple::dataset::{Chain, How, Join};
    /// let scores = Chain::open(&[a.clone()], None)?; // event 1 missing
    /// let join = Join::new(Chain::open(&[p.clone()], None)?, vec![("Scores".into(), scores)], &["event"], How::Left)?;
    /// let rows: Vec<String> = join.read_values(Some(&["event", "Scores.score"]), 0, 3)?.iter().map(|v| v.to_json().to_string()).collect();
    /// assert_eq!(rows, [r#"{"event":0,"Scores.score":0.0}"#, r#"{"event":1,"Scores.score":null}"#, r#"{"event":2,"Scores.score":0.2}"#]);
    /// # std::fs::remove_file(&p)?; std::fs::remove_file(&a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_values(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<Vec<Value>> {
        Ok(self.read_values_matched(fields, start, stop)?.0)
    }

    /// [`Join::read_values`] with, per friend, its entry for each returned row (`None`: no match;
    /// empty for a friend none of whose fields was read).
    pub(crate) fn read_values_matched(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<(Vec<Value>, FriendEntries)> {
        let all: Vec<String> = if fields.is_none() { self.fields().into_iter().map(|(n, _)| n).collect() } else { Vec::new() };
        let names = self.names(fields, &all);
        let p = self.plan(&names, start, stop)?;
        let mut primary: Vec<Value> = if p.primary_fields.is_empty() {
            vec![Value::Record(Vec::new()); (stop - start) as usize]
        } else {
            self.primary.read_values(Some(&p.primary_fields), start, stop)?
        };
        if let Some(mask) = &p.keep {
            primary = primary.into_iter().zip(mask).filter(|(_, k)| **k).map(|(v, _)| v).collect();
        }
        let mut friend_rows: Vec<Vec<Value>> = vec![Vec::new(); self.friends.len()];
        for (k, f) in self.friends.iter().enumerate() {
            if !p.friend_fields[k].is_empty() {
                friend_rows[k] = values_at(&f.chain, &p.friend_fields[k], &p.entries[k])?;
            }
        }
        let member = |v: &Value, n: &str| match v {
            Value::Record(m) => m.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()),
            _ => None,
        };
        let mut out = Vec::with_capacity(primary.len());
        for (r, row) in primary.iter().enumerate() {
            let mut rec = Vec::with_capacity(names.len());
            for (name, s) in names.iter().zip(&p.sources) {
                let v = match *s {
                    Source::Primary(n) => member(row, n).ok_or_else(|| Error::internal("join: a primary value lost"))?,
                    Source::Friend(k, n) => friend_rows[k].get(r).and_then(|v| member(v, n)).unwrap_or(Value::Null),
                };
                rec.push((name.to_string(), v));
            }
            out.push(Value::Record(rec));
        }
        Ok((out, p.entries))
    }
}

/// Per friend, its entry for each row of a read (`None`: no match).
pub(crate) type FriendEntries = Vec<Vec<Option<u64>>>;

/// A planned read of a join (see `Join::plan`).
struct Plan<'a> {
    sources: Vec<Source<'a>>,
    primary_fields: Vec<&'a str>,
    friend_fields: Vec<Vec<&'a str>>,
    /// Per friend, its entry for each (kept) primary entry; empty for friends not read.
    entries: FriendEntries,
    /// Inner joins: which primary entries are kept (`None`: all).
    keep: Option<Vec<bool>>,
}

/// The records of `fields` of `chain`'s entries `entries` (`Null` where `None`), read in runs of
/// nearby entries (a gap of up to 64 entries is read through rather than starting a new read).
fn values_at(chain: &Chain, fields: &[&str], entries: &[Option<u64>]) -> Result<Vec<Value>> {
    let mut order: Vec<(u64, usize)> = entries.iter().enumerate().filter_map(|(r, e)| e.map(|e| (e, r))).collect();
    order.sort_unstable();
    let mut out = vec![Value::Null; entries.len()];
    let mut i = 0;
    while i < order.len() {
        let first = order[i].0;
        let mut j = i + 1;
        while j < order.len() && order[j].0 - order[j - 1].0 <= 64 {
            j += 1;
        }
        let last = order[j - 1].0;
        let vals = chain.read_values(Some(fields), first, last + 1)?;
        for &(e, r) in &order[i..j] {
            out[r] = vals.get((e - first) as usize).cloned().ok_or_else(|| Error::internal("join: a friend entry lost"))?;
        }
        i = j;
    }
    Ok(out)
}
