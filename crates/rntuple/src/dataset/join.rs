//! A join: a primary chain plus auxiliary ones ("friends"), aligned entry by entry or matched on
//! index fields through each friend's [`JoinIndex`] (ROOT's `RNTupleJoinProcessor`). A friend's
//! fields are named `FRIEND.field`. Reading a batch reads the primary's fields and keys over its
//! range, looks the keys up, and gathers the friends' entries cluster by cluster (see `gather`):
//! memory is bounded by the indices and one cluster per input, not by the friends' data.

use super::chain::Chain;
use super::gather::{gather, ClusterCache};
use super::join_index::{check_index_fields, key_values, JoinIndex};
use crate::error::{Error, Result};
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

    /// Reads the chosen fields (primary fields by name, a friend's as `FRIEND.field`; all when
    /// `None`) of primary entries `start..stop`: one row per primary entry, a friend's fields null
    /// where it has no match ([`How::Left`]), or only the entries every friend matches ([`How::Inner`]).
    pub fn read_batch(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        let all: Vec<String>;
        let names: Vec<&str> = match fields {
            Some(f) => f.to_vec(),
            None => {
                all = self.fields().into_iter().map(|(n, _)| n).collect();
                all.iter().map(String::as_str).collect()
            }
        };
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
        let mut primary = self.primary.read_batch(Some(&primary_fields), start, stop)?;
        let needed: Vec<usize> = (0..self.friends.len()).filter(|&k| self.how == How::Inner || !friend_fields[k].is_empty()).collect();
        let keys = if needed.is_empty() { Vec::new() } else { self.keys(start, stop)? };
        let mut entries: Vec<Vec<Option<u64>>> = vec![Vec::new(); self.friends.len()];
        for &k in &needed {
            entries[k] = self.entries(&self.friends[k], &keys, start, stop);
        }
        if self.how == How::Inner && !needed.is_empty() {
            let keep = BooleanArray::from((0..(stop - start) as usize).map(|r| needed.iter().all(|&k| entries[k][r].is_some())).collect::<Vec<bool>>());
            if keep.true_count() < keep.len() {
                primary = arrow_select::filter::filter_record_batch(&primary, &keep)?;
                for &k in &needed {
                    entries[k] = entries[k].iter().zip(keep.values().iter()).filter(|(_, keep)| *keep).map(|(e, _)| *e).collect();
                }
            }
        }
        let rows = primary.num_rows();
        let mut friend_columns: Vec<Vec<ArrayRef>> = vec![Vec::new(); self.friends.len()];
        for (k, f) in self.friends.iter().enumerate() {
            if !friend_fields[k].is_empty() {
                friend_columns[k] = gather(&f.chain, &friend_fields[k], &entries[k], &f.cache)?;
            }
        }
        let mut schema = Vec::with_capacity(names.len());
        let mut columns = Vec::with_capacity(names.len());
        for (name, s) in names.iter().zip(&sources) {
            let (a, nullable) = match *s {
                Source::Primary(n) => {
                    let i = primary_fields.iter().position(|&p| p == n).ok_or_else(|| Error::internal("join: a primary column lost"))?;
                    (primary.column(i).clone(), primary.schema().field(i).is_nullable())
                }
                Source::Friend(k, n) => {
                    let i = friend_fields[k].iter().position(|&p| p == n).ok_or_else(|| Error::internal("join: a friend column lost"))?;
                    let a = friend_columns[k][i].clone();
                    (a, true)
                }
            };
            schema.push(Field::new(*name, a.data_type().clone(), nullable || a.null_count() > 0));
            columns.push(a);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(schema)), columns, &opts)?)
    }
}
