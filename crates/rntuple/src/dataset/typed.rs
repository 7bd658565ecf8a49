//! Typed reads of a chain or a join: entries as `#[derive(Record)]` structs (see
//! [`crate::read::FromEntry`]), as `Reader::read_typed` reads one file. In a join, a member named
//! after a friend takes the friend's fields as one record (`Option<Struct>`: `None` where the
//! friend has no match), since `FRIEND.field` is not a Rust member name.

use super::chain::Chain;
use super::join::{How, Join};
use crate::error::Result;
use crate::read::FromEntry;
use crate::value::Value;

impl Chain {
    /// Global entries `[start, stop)` as values of `T` (members matched by name to top-level
    /// fields; a member the chain lacks reads as null, which an `Option` member takes).
    ///
    /// ```
    /// use rntuple::{Record, Value};
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let dir = std::env::temp_dir();
    /// # let paths: Vec<String> = (0..2).map(|k| dir.join(format!("rntuple-doc-chain-typed-{k}-{}.root", std::process::id())).display().to_string()).collect();
    /// # for (k, p) in paths.iter().enumerate() {
    /// #     let mut w = Writer::create(p, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
    /// #     for i in 0..2 { w.fill(&Value::Record(vec![("x".into(), Value::Int(10 * k as i64 + i))]))?; }
    /// #     w.commit()?;
    /// # }
    /// #[derive(Record, Debug, PartialEq)]
    /// struct Row {
    ///     x: i32,
    /// }
    /// let chain = rntuple::dataset::Chain::open(&paths, None)?;
    /// assert_eq!(chain.read_typed::<Row>(1, 3)?, [Row { x: 1 }, Row { x: 10 }]);
    /// # for p in &paths { std::fs::remove_file(p)?; }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_typed<T: FromEntry>(&self, start: u64, stop: u64) -> Result<Vec<T>> {
        let have = self.fields();
        let names: Vec<&str> = T::field_names().into_iter().filter(|n| have.iter().any(|(f, _)| f == n)).collect();
        let rows = if names.is_empty() { empty_records(self.num_entries(), start, stop) } else { self.read_values(Some(&names), start, stop)? };
        rows.iter().map(T::from_entry).collect()
    }
}

impl Join {
    /// Primary entries `[start, stop)` as values of `T`: a member named after a primary field
    /// reads it; a member named after a friend reads the friend's fields as one record, null where
    /// the friend has no match (an `Option` member); with [`How::Inner`] only the entries every
    /// friend matches.
    ///
    /// ```
    /// use rntuple::{Record, Value};
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # let dir = std::env::temp_dir();
    /// # let (p, a) = (dir.join(format!("rntuple-doc-join-typed-p-{}.root", std::process::id())), dir.join(format!("rntuple-doc-join-typed-a-{}.root", std::process::id())));
    /// # let (p, a) = (p.display().to_string(), a.display().to_string());
    /// # let mut w = Writer::create(&p, "Events", &[("event", "std::uint64_t")], WriteOptions::default())?;
    /// # for e in 0..3u64 { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e))]))?; }
    /// # w.commit()?;
    /// # let mut w = Writer::create(&a, "scores", &[("event", "std::uint64_t"), ("score", "double")], WriteOptions::default())?;
    /// # for e in [2u64, 0] { w.fill(&Value::Record(vec![("event".into(), Value::UInt(e)), ("score".into(), Value::F64(e as f64))]))?; }
    /// # w.commit()?;
    /// #[derive(Record, Debug, PartialEq)]
    /// struct Score {
    ///     score: f64,
    /// }
    /// #[derive(Record, Debug, PartialEq)]
    /// struct Row {
    ///     event: u64,
    ///     scores: Option<Score>, // the friend "scores"
    /// }
    /// use rntuple::dataset::{How, Join};
    /// let join = Join::open(&[p.clone()], None, &[a.clone()], &["event"], How::Left)?;
    /// let rows = join.read_typed::<Row>(0, 3)?;
    /// assert_eq!(rows[0], Row { event: 0, scores: Some(Score { score: 0.0 }) });
    /// assert_eq!(rows[1], Row { event: 1, scores: None }); // no score for event 1
    /// # std::fs::remove_file(&p)?; std::fs::remove_file(&a)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_typed<T: FromEntry>(&self, start: u64, stop: u64) -> Result<Vec<T>> {
        let wanted = T::field_names();
        let primary = self.primary().fields();
        let mut names: Vec<String> = wanted.iter().filter(|n| primary.iter().any(|(f, _)| f == *n)).map(|n| n.to_string()).collect();
        // The friends T names, with the flat names of their fields.
        let mut friends: Vec<(usize, String, Vec<String>)> = Vec::new();
        for (k, (name, chain)) in self.friends().into_iter().enumerate() {
            if wanted.contains(&name) && !primary.iter().any(|(f, _)| f == name) {
                let members: Vec<String> = chain.fields().into_iter().map(|(m, _)| m).collect();
                names.extend(members.iter().map(|m| format!("{name}.{m}")));
                friends.push((k, name.to_string(), members));
            }
        }
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (rows, mut entries) =
            if refs.is_empty() { (empty_records(self.num_entries(), start, stop), Vec::new()) } else { self.read_values_matched(Some(&refs), start, stop)? };
        // Which rows each friend matched (the read's own lookup): all of them in an inner join (the
        // others are left out); a friend without fields was not looked up by the read.
        let mut matched: Vec<Option<Vec<Option<u64>>>> = Vec::with_capacity(friends.len());
        for (k, _, members) in &friends {
            let looked_up = entries.get_mut(*k).filter(|_| !members.is_empty()).map(std::mem::take);
            matched.push(match looked_up {
                _ if self.how() == How::Inner => None,
                Some(e) => Some(e),
                None => Some(self.friend_entries(*k, start, stop)?),
            });
        }
        let mut out = Vec::with_capacity(rows.len());
        for (r, row) in rows.into_iter().enumerate() {
            let Value::Record(mut fields) = row else { return Err(crate::error::Error::internal("join: a row that is not a record")) };
            for ((_, name, members), m) in friends.iter().zip(&matched) {
                let prefix = format!("{name}.");
                let mut rec = Vec::with_capacity(members.len());
                fields.retain_mut(|(n, v)| match n.strip_prefix(&prefix) {
                    Some(member) if members.iter().any(|x| x == member) => {
                        rec.push((member.to_string(), std::mem::replace(v, Value::Null)));
                        false
                    }
                    _ => true,
                });
                let present = m.as_ref().is_none_or(|m| m.get(r).is_some_and(Option::is_some));
                fields.push((name.clone(), if present { Value::Record(rec) } else { Value::Null }));
            }
            out.push(T::from_entry(&Value::Record(fields))?);
        }
        Ok(out)
    }
}

/// Empty records for entries `[start, stop)` of `n` (a type that reads no field).
fn empty_records(n: u64, start: u64, stop: u64) -> Vec<Value> {
    (start..stop.min(n)).map(|_| Value::Record(Vec::new())).collect()
}
