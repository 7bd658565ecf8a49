//! The dynamic-value fill path: one entry at a time from a [`Value::Record`] of the top-level
//! fields (what `rntuple import-json` and Python lists of dicts write). Each entry is checked
//! whole before any of it is written, so a bad value leaves no partial entry behind.

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::primitives::element::{ColumnBuf, Number};
use crate::value::Value;
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::cluster::plan::{CollKind, Plan};
use crate::write::cluster::sealed::ClusterOut;

impl<O: ClusterOut> ClusterBuilder<O> {
    /// Fills one entry: a [`Value::Record`] with one member per top-level field, in any order.
    pub fn fill(&mut self, entry: &Value) -> Result<()> {
        let Value::Record(members) = entry else {
            return Err(Error::Invalid("an entry must be a record of top-level fields".into()));
        };
        // Validate the whole entry first, so a bad value leaves no partial entry behind.
        let mut ordered = Vec::with_capacity(self.plans.len());
        for (name, plan) in &self.plans {
            let v = members.iter().find(|(k, _)| k == name).map(|(_, v)| v).ok_or_else(|| Error::Invalid(format!("entry lacks field '{name}'")))?;
            check(plan, v, name)?;
            ordered.push(v);
        }
        if members.len() != self.plans.len() {
            let unknown: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).filter(|k| !self.plans.iter().any(|(n, _)| n == k)).collect();
            return Err(Error::Invalid(format!("entry has fields that are not in the schema: {}", unknown.join(", "))));
        }
        // Values outside a quantized field's range are refused before anything is written.
        for ((_, plan), v) in self.plans.iter().zip(&ordered) {
            if crate::write::cluster::reduced::has_quantized(&self.cols.cols, plan) {
                crate::write::cluster::reduced::check_value_ranges(&self.cols.cols, plan, v, self.filled)?;
            }
        }
        let plans = std::mem::take(&mut self.plans);
        let mut r = Ok(());
        for ((_, plan), v) in plans.iter().zip(ordered) {
            r = self.put(plan, v);
            if r.is_err() {
                break;
            }
        }
        self.plans = plans;
        r?;
        self.entries_filled(1)
    }

    fn put(&mut self, plan: &Plan, v: &Value) -> Result<()> {
        self.counts[plan.counter()] += 1;
        match plan {
            Plan::Scalar { col, .. } => self.cols.push(*col, |b| put_scalar(b, v), &mut self.out),
            Plan::String { idx, chars, .. } => {
                let Value::String(st) = v else { return Err(Error::Invalid("expected a string".into())) };
                for &byte in st.as_bytes() {
                    self.cols.push(
                        *chars,
                        |b| {
                            b.push(byte);
                        },
                        &mut self.out,
                    )?;
                }
                let end = self.cols.cols[*chars].in_cluster;
                self.cols.push_index(*idx, end, &mut self.out)
            }
            Plan::Collection { idx, child, kind, .. } => {
                match (kind, v) {
                    (CollKind::Optional, Value::Null) => {}
                    (CollKind::Optional, v) => self.put(child, v)?,
                    // An untyped collection of records also takes an optional record (0 or 1 item).
                    (CollKind::Seq, Value::Null) if matches!(**child, Plan::Record { .. }) => {}
                    (CollKind::Seq, Value::Record(_)) if matches!(**child, Plan::Record { .. }) => self.put(child, v)?,
                    (_, Value::List(items)) => {
                        for it in items {
                            self.put(child, it)?;
                        }
                    }
                    _ => return Err(Error::Invalid("expected a list".into())),
                }
                let end = self.counts[child.counter()];
                self.cols.push_index(*idx, end, &mut self.out)
            }
            Plan::Record { children, names, .. } => {
                let items = record_items(names, v).map_err(Error::Invalid)?;
                for (c, it) in children.iter().zip(items) {
                    self.put(c, it)?;
                }
                Ok(())
            }
            Plan::Array { child, .. } => {
                let Value::List(items) = v else { return Err(Error::Invalid("expected a list".into())) };
                for it in items {
                    self.put(child, it)?;
                }
                Ok(())
            }
            Plan::Bitset { col, .. } => {
                let Value::List(items) = v else { return Err(Error::Invalid("expected a list of booleans".into())) };
                for it in items {
                    let bit = matches!(it, Value::Bool(true)) || matches!(it, Value::Int(x) if *x != 0) || matches!(it, Value::UInt(x) if *x != 0);
                    self.cols.push(
                        *col,
                        |b| {
                            b.push(bit);
                        },
                        &mut self.out,
                    )?;
                }
                Ok(())
            }
            Plan::Variant { sw, children, .. } => {
                let (index, tag) = match choose_alternative(children, v) {
                    None => (0u64, 0u32),
                    Some(k) => {
                        let index = self.counts[children[k].counter()];
                        self.put(&children[k], v)?;
                        (index, k as u32 + 1)
                    }
                };
                self.cols.push(
                    *sw,
                    |b| {
                        b.push((index, tag));
                    },
                    &mut self.out,
                )
            }
            Plan::Wrapper { child, .. } => self.put(child, v),
            Plan::Streamed { idx, bytes, class, .. } => {
                let blob = crate::write::streamer::streamed_fields::encode(class, v, &class.name)?;
                self.cols.extend(*bytes, &blob, &mut self.out)?;
                let end = self.cols.cols[*bytes].in_cluster;
                self.cols.push_index(*idx, end, &mut self.out)
            }
        }
    }
}

/// Which alternative of a variant holds `v`: the first one whose type accepts it; `None` for
/// `Value::Null` (valueless).
fn choose_alternative(children: &[Plan], v: &Value) -> Option<usize> {
    if matches!(v, Value::Null) {
        return None;
    }
    // Prefer an exact kind match (integers to integer alternatives, floats to floating ones).
    let exact = children.iter().position(|c| match (c, v) {
        (Plan::Scalar { s: Scalar::F32 | Scalar::F64, .. }, Value::F32(_) | Value::F64(_)) => true,
        (Plan::Scalar { s: Scalar::Bool, .. }, Value::Bool(_)) => true,
        (Plan::Scalar { s, .. }, Value::Int(_) | Value::UInt(_)) => !matches!(s, Scalar::F32 | Scalar::F64 | Scalar::Bool),
        _ => false,
    });
    exact.or_else(|| children.iter().position(|c| check(c, v, "").is_ok()))
}

fn check(plan: &Plan, v: &Value, path: &str) -> Result<()> {
    let bad = |want: &str| Err(Error::Invalid(format!("field '{path}': expected {want}, got {}", v.to_json())));
    match plan {
        Plan::Scalar { s, .. } => match (s, v) {
            (Scalar::Bool, Value::Bool(_)) => Ok(()),
            (Scalar::F32 | Scalar::F64, v) if v.as_f64().is_some() => Ok(()),
            (Scalar::Bool, _) => bad("a boolean"),
            (Scalar::F32 | Scalar::F64, _) => bad("a number"),
            (s, Value::Int(i)) => match int_range(*s) {
                (lo, hi) if (*i as i128) >= lo && (*i as i128) <= hi => Ok(()),
                _ => bad(&format!("an integer in the range of {s:?}")),
            },
            (s, Value::UInt(u)) => match int_range(*s) {
                (_, hi) if (*u as i128) <= hi => Ok(()),
                _ => bad(&format!("an integer in the range of {s:?}")),
            },
            _ => bad("an integer"),
        },
        Plan::String { .. } => match v {
            Value::String(_) => Ok(()),
            _ => bad("a string"),
        },
        Plan::Collection { child, kind, .. } => match (kind, v) {
            (CollKind::Optional, Value::Null) => Ok(()),
            (CollKind::Optional, v) => check(child, v, &format!("{path}._0")),
            (CollKind::Seq, Value::Null) if matches!(**child, Plan::Record { .. }) => Ok(()),
            (CollKind::Seq, Value::Record(_)) if matches!(**child, Plan::Record { .. }) => check(child, v, &format!("{path}._0")),
            (_, Value::List(items)) => items.iter().try_for_each(|it| check(child, it, &format!("{path}._0"))),
            _ => bad("a list"),
        },
        Plan::Record { children, names, .. } => {
            let items = match record_items(names, v) {
                Ok(items) => items,
                Err(e) => return Err(Error::Invalid(format!("field '{path}': {e}"))),
            };
            if items.len() != children.len() {
                return bad(&format!("{} members", children.len()));
            }
            children.iter().zip(items).zip(names).try_for_each(|((c, it), name)| check(c, it, &format!("{path}.{name}")))
        }
        Plan::Array { n, child, .. } => match v {
            Value::List(items) if items.len() as u64 == *n => items.iter().try_for_each(|it| check(child, it, &format!("{path}._0"))),
            _ => bad(&format!("a list of {n} values")),
        },
        Plan::Bitset { n, .. } => match v {
            Value::List(items) if items.len() as u64 == *n && items.iter().all(|b| matches!(b, Value::Bool(_) | Value::Int(0 | 1) | Value::UInt(0 | 1))) => {
                Ok(())
            }
            _ => bad(&format!("a list of {n} booleans")),
        },
        Plan::Variant { children, .. } => match v {
            Value::Null => Ok(()),
            _ if choose_alternative(children, v).is_some() => Ok(()),
            _ => bad("a value of one of the variant's alternatives"),
        },
        Plan::Wrapper { child, .. } => check(child, v, path),
        Plan::Streamed { class, .. } => crate::write::streamer::streamed_fields::encode(class, v, path).map(|_| ()),
    }
}

fn int_range(s: Scalar) -> (i128, i128) {
    match s {
        Scalar::Char | Scalar::I8 => (i8::MIN as i128, i8::MAX as i128),
        Scalar::Byte | Scalar::U8 => (0, u8::MAX as i128),
        Scalar::I16 => (i16::MIN as i128, i16::MAX as i128),
        Scalar::U16 => (0, u16::MAX as i128),
        Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
        Scalar::U32 => (0, u32::MAX as i128),
        Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
        Scalar::U64 => (0, u64::MAX as i128),
        _ => (i128::MIN, i128::MAX),
    }
}

fn put_scalar(b: &mut ColumnBuf, v: &Value) {
    let (i, u, f) = match *v {
        Value::Int(i) => (i, i as u64, i as f64),
        Value::UInt(u) => (u as i64, u, u as f64),
        Value::Bool(b) => (b as i64, b as u64, b as u8 as f64),
        Value::F32(x) => (x as i64, x as u64, x as f64),
        Value::F64(x) => (x as i64, x as u64, x),
        _ => (0, 0, 0.0),
    };
    let f32 = match *v {
        Value::F32(y) => Some(y),
        _ => None,
    };
    b.push_number(&Number { i, u, f: v.as_f64().unwrap_or(f), f32 });
}

/// The members of a record value in the order of the record's `names`: a list is taken by
/// position; a record by member name (any order), or by position when its names are not the
/// record's but as many (`first`/`second` for a pair's `_0`/`_1`).
fn record_items<'v>(names: &[String], v: &'v Value) -> std::result::Result<Vec<&'v Value>, String> {
    match v {
        Value::List(l) => Ok(l.iter().collect()),
        Value::Record(m) => {
            let by_name: Option<Vec<&Value>> = names.iter().map(|n| m.iter().find(|(k, _)| k == n).map(|(_, v)| v)).collect();
            match by_name {
                Some(items) if m.len() == names.len() => Ok(items),
                _ if m.len() == names.len() && !m.iter().any(|(k, _)| names.contains(k)) => Ok(m.iter().map(|(_, v)| v).collect()),
                _ => {
                    let missing: Vec<&str> = names.iter().filter(|n| !m.iter().any(|(k, _)| k == *n)).map(|s| s.as_str()).collect();
                    let unknown: Vec<&str> = m.iter().filter(|(k, _)| !names.contains(k)).map(|(k, _)| k.as_str()).collect();
                    Err(format!("expected a record with members {} (missing: {}; unknown: {})", names.join(", "), or_none(&missing), or_none(&unknown)))
                }
            }
        }
        _ => Err(format!("expected a record with members {} or a list of them", names.join(", "))),
    }
}

fn or_none(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
