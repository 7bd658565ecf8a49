//! The Arrow fill path (columnar fill): the rows of an Apache Arrow record batch, one array per
//! top-level field, written column by column without building values. The whole batch is
//! checked (types, nulls, union members) before anything is written.

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::primitives::element::ColumnBuf;
use crate::write::cluster::builder::ClusterBuilder;
use crate::write::cluster::plan::{CollKind, Plan};
use crate::write::cluster::sealed::ClusterOut;
use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::DataType;

/// Most entries per slice of a batch between two checks of the cluster flush rule.
const BATCH_SLICE: usize = 8192;
/// Entries of the first slice of a batch, which measures the bytes per entry.
const PROBE_SLICE: usize = 64;

/// Entries of the next slice of a batch: enough to fill half the room left in the current cluster
/// (`room` bytes at `per_entry` bytes each), at least one, at most [`BATCH_SLICE`];
/// [`PROBE_SLICE`] while the size of an entry is not known (the first batch). The slices shrink as
/// the cluster fills, down to single entries, so a cluster limit is honoured inside one batch to
/// within one entry, however wide the entries (unless they vary more than twice around their mean).
fn slice_len(left: usize, per_entry: Option<f64>, room: f64) -> usize {
    let want = match per_entry {
        None => PROBE_SLICE,
        Some(b) if b > 0.0 => (room / (2.0 * b)).ceil().clamp(1.0, BATCH_SLICE as f64) as usize,
        Some(_) => BATCH_SLICE,
    };
    want.min(left).max(1)
}

/// How the members of an Arrow union map to a variant's alternatives: the members that are not
/// of the Null type are the alternatives in order (`type_ids[k]` is alternative k's type id); a
/// Null-typed member holds valueless entries (what the reader makes of them, `_valueless`).
struct UnionAlternatives {
    type_ids: Vec<i8>,
    /// Per type id (as u8): `Some(Some(k))` alternative k, `Some(None)` valueless, `None` unknown.
    by_id: [Option<Option<usize>>; 128],
}

impl UnionAlternatives {
    fn of(&self, type_id: i8) -> Option<Option<usize>> {
        usize::try_from(type_id).ok().and_then(|i| self.by_id.get(i).copied().flatten())
    }
}

fn union_alternatives(fields: &arrow_schema::UnionFields, n_alt: usize, path: &str) -> Result<UnionAlternatives> {
    let mut out = UnionAlternatives { type_ids: Vec::with_capacity(n_alt), by_id: [None; 128] };
    for (tid, f) in fields.iter() {
        let slot = usize::try_from(tid)
            .ok()
            .and_then(|i| out.by_id.get_mut(i))
            .ok_or_else(|| Error::Invalid(format!("field '{path}': negative union type id {tid}")))?;
        if f.data_type() == &DataType::Null {
            *slot = Some(None);
        } else {
            *slot = Some(Some(out.type_ids.len()));
            out.type_ids.push(tid);
        }
    }
    if out.type_ids.len() != n_alt {
        return Err(Error::Invalid(format!(
            "field '{path}': a union of {} members (besides Null ones) for a variant of {n_alt} alternatives",
            out.type_ids.len()
        )));
    }
    Ok(out)
}

impl<O: ClusterOut> ClusterBuilder<O> {
    /// Appends the rows of an Arrow record batch (columnar fill): one column per top-level
    /// field, matched by name. Supported Arrow types: booleans, integers, floats (float64 into
    /// `Double32_t` too), strings, lists (vectors, RVecs, sets), fixed-size lists (`std::array`,
    /// `std::bitset`), structs (pairs, tuples), maps, nullable arrays for `std::optional` /
    /// `std::unique_ptr`, and unions (dense or sparse) for `std::variant`: the members not of the
    /// Null type are the alternatives in order; entries in a Null member, or null in their
    /// member, are valueless.
    pub fn append_batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let names: Vec<&str> = self.plans.iter().map(|(n, _)| n.as_str()).collect();
        let mut cols: Vec<ArrayRef> = Vec::with_capacity(self.plans.len());
        for (name, c) in names.iter().zip(by_names(&names, batch.schema_ref().fields(), batch.columns())) {
            cols.push(c.ok_or_else(|| Error::Invalid(format!("batch lacks field '{name}'")))?.clone());
        }
        let plans = std::mem::take(&mut self.plans);
        let r = (|| {
            // Check everything first: a bad batch writes nothing.
            for ((name, plan), c) in plans.iter().zip(&cols) {
                check_array(plan, c.as_ref(), name)?;
                // Values outside a quantized field's range are refused before anything is written.
                if crate::write::cluster::reduced::has_quantized(&self.cols.cols, plan) {
                    let first = self.filled;
                    crate::write::cluster::reduced::check_array_ranges(&self.cols.cols, plan, c.as_ref(), &|i| first + i as u64)?;
                }
            }
            let n = batch.num_rows();
            let mut start = 0;
            while start < n {
                let (held, limit) = self.cluster_budget();
                let len = slice_len(n - start, self.entry_bytes, limit - held);
                let before = self.cols.unzipped_in_cluster;
                for ((_, plan), c) in plans.iter().zip(&cols) {
                    self.put_array(plan, &c.slice(start, len))?;
                }
                self.entry_bytes = Some(self.cols.unzipped_in_cluster.saturating_sub(before) as f64 / 8.0 / len as f64);
                start += len;
                self.entries_filled(len as u64)?;
            }
            Ok(())
        })();
        self.plans = plans;
        r
    }

    fn put_array(&mut self, plan: &Plan, a: &ArrayRef) -> Result<()> {
        let n = a.len() as u64;
        match plan {
            Plan::Scalar { col, s, .. } => {
                let col = *col;
                match (s, a.data_type()) {
                    (Scalar::Bool, DataType::Boolean) => {
                        let v: Vec<bool> = a.as_boolean().iter().map(|x| x.unwrap_or(false)).collect();
                        self.cols.extend(col, &v, &mut self.out)?
                    }
                    (Scalar::Char | Scalar::I8, DataType::Int8) => {
                        if matches!(self.cols.cols[col].buf, ColumnBuf::U8(_)) {
                            let v: Vec<u8> = a.as_primitive::<Int8Type>().values().iter().map(|&x| x as u8).collect();
                            self.cols.extend(col, &v, &mut self.out)?
                        } else {
                            self.cols.extend(col, a.as_primitive::<Int8Type>().values(), &mut self.out)?
                        }
                    }
                    (Scalar::Byte | Scalar::U8, DataType::UInt8) => self.cols.extend(col, a.as_primitive::<UInt8Type>().values(), &mut self.out)?,
                    (Scalar::I16, DataType::Int16) => self.cols.extend(col, a.as_primitive::<Int16Type>().values(), &mut self.out)?,
                    (Scalar::U16, DataType::UInt16) => self.cols.extend(col, a.as_primitive::<UInt16Type>().values(), &mut self.out)?,
                    (Scalar::I32, DataType::Int32) => self.cols.extend(col, a.as_primitive::<Int32Type>().values(), &mut self.out)?,
                    (Scalar::U32, DataType::UInt32) => self.cols.extend(col, a.as_primitive::<UInt32Type>().values(), &mut self.out)?,
                    (Scalar::I64, DataType::Int64) => self.cols.extend(col, a.as_primitive::<Int64Type>().values(), &mut self.out)?,
                    (Scalar::U64, DataType::UInt64) => self.cols.extend(col, a.as_primitive::<UInt64Type>().values(), &mut self.out)?,
                    (Scalar::F32, DataType::Float32) => self.cols.extend(col, a.as_primitive::<Float32Type>().values(), &mut self.out)?,
                    (Scalar::F32, DataType::Float64) => {
                        let v: Vec<f32> = a.as_primitive::<Float64Type>().values().iter().map(|&x| x as f32).collect();
                        self.cols.extend(col, &v, &mut self.out)?
                    }
                    (Scalar::F64, DataType::Float64) => self.cols.extend(col, a.as_primitive::<Float64Type>().values(), &mut self.out)?,
                    (s, t) => return Err(Error::Internal(format!("unchecked Arrow type {t} for {s:?}"))),
                }
            }
            Plan::String { idx, chars, .. } => {
                let (idx, chars) = (*idx, *chars);
                let base = self.cols.cols[chars].in_cluster;
                let (offsets, bytes): (Vec<i64>, &[u8]) = match a.data_type() {
                    DataType::Utf8 => {
                        let s = a.as_string::<i32>();
                        (s.value_offsets().iter().map(|&o| o as i64).collect(), s.values().as_slice())
                    }
                    _ => {
                        let s = a.as_string::<i64>();
                        (s.value_offsets().to_vec(), s.values().as_slice())
                    }
                };
                let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                self.cols.extend(chars, &bytes[o0..on], &mut self.out)?;
                self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
            }
            Plan::Collection { idx, child, kind, .. } => {
                let idx = *idx;
                let base = self.counts[child.counter()];
                match (kind, a.data_type()) {
                    (CollKind::Optional, _) | (CollKind::Seq, DataType::Struct(_)) => {
                        // Logical nulls: a union has no validity bitmap, its absent entries are
                        // those in its Null member.
                        let nulls = a.logical_nulls();
                        let mut offsets = Vec::with_capacity(a.len() + 1);
                        offsets.push(0i64);
                        let mut k = 0i64;
                        for i in 0..a.len() {
                            k += nulls.as_ref().is_none_or(|n| n.is_valid(i)) as i64;
                            offsets.push(k);
                        }
                        let values = match nulls {
                            Some(nulls) => arrow_select::filter::filter(a.as_ref(), &arrow_array::BooleanArray::new(nulls.into_inner(), None))?,
                            None => a.clone(),
                        };
                        self.put_array(child, &values)?;
                        self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
                    }
                    (_, DataType::Map(_, _)) => {
                        let m = a.as_map();
                        let offsets: Vec<i64> = m.value_offsets().iter().map(|&o| o as i64).collect();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        let entries: ArrayRef = std::sync::Arc::new(m.entries().slice(o0, on - o0));
                        self.put_array(child, &entries)?;
                        self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
                    }
                    (_, DataType::List(_)) => {
                        let l = a.as_list::<i32>();
                        let offsets: Vec<i64> = l.value_offsets().iter().map(|&o| o as i64).collect();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        self.put_array(child, &l.values().slice(o0, on - o0))?;
                        self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
                    }
                    _ => {
                        let l = a.as_list::<i64>();
                        let offsets = l.value_offsets().to_vec();
                        let (o0, on) = (offsets[0] as usize, offsets[offsets.len() - 1] as usize);
                        self.put_array(child, &l.values().slice(o0, on - o0))?;
                        self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
                    }
                }
            }
            Plan::Record { children, names, .. } => {
                let st = a.as_struct();
                for (c, arr) in children.iter().zip(struct_members(names, st)) {
                    self.put_array(c, arr)?;
                }
            }
            Plan::Array { n: len, child, .. } => {
                let l = a.as_fixed_size_list();
                let values = l.values().slice(l.offset() * *len as usize, a.len() * *len as usize);
                self.put_array(child, &values)?;
            }
            Plan::Bitset { n: len, col, .. } => {
                let l = a.as_fixed_size_list();
                let values = l.values().slice(l.offset() * *len as usize, a.len() * *len as usize);
                let v: Vec<bool> = values.as_boolean().iter().map(|x| x.unwrap_or(false)).collect();
                self.cols.extend(*col, &v, &mut self.out)?;
            }
            Plan::Variant { sw, children, .. } => {
                let u = a.as_any().downcast_ref::<arrow_array::UnionArray>().ok_or_else(|| Error::internal("unchecked Arrow type for a variant"))?;
                let DataType::Union(fields, _) = a.data_type() else { return Err(Error::internal("a union without union type")) };
                let alts = union_alternatives(fields, children.len(), "variant")?;
                // Per alternative: the rows of its child array, in entry order; per entry: the
                // switch (index among the alternative's values in this cluster, tag = k + 1).
                let mut rows: Vec<Vec<u64>> = vec![Vec::new(); children.len()];
                let mut switch: Vec<(u64, u32)> = Vec::with_capacity(u.len());
                // A null inside an alternative's array is valueless too (awkward's unions of
                // options).
                let child_nulls: Vec<Option<arrow_buffer::NullBuffer>> = alts.type_ids.iter().map(|&t| u.child(t).logical_nulls()).collect();
                for i in 0..u.len() {
                    match alts.of(u.type_id(i)) {
                        Some(Some(k)) if child_nulls[k].as_ref().is_some_and(|n| n.is_null(u.value_offset(i))) => switch.push((0, 0)),
                        Some(Some(k)) => {
                            switch.push((self.counts[children[k].counter()] + rows[k].len() as u64, k as u32 + 1));
                            rows[k].push(u.value_offset(i) as u64);
                        }
                        Some(None) => switch.push((0, 0)),
                        None => return Err(Error::Internal(format!("union type id {} not checked", u.type_id(i)))),
                    }
                }
                for (k, rows) in rows.iter().enumerate() {
                    if rows.is_empty() {
                        continue;
                    }
                    let child = u.child(alts.type_ids[k]);
                    let consecutive = rows.windows(2).all(|w| w[1] == w[0] + 1);
                    let values = if consecutive {
                        child.slice(rows[0] as usize, rows.len())
                    } else {
                        arrow_select::take::take(child.as_ref(), &arrow_array::UInt64Array::from(rows.clone()), None)?
                    };
                    self.put_array(&children[k], &values)?;
                }
                self.cols.extend(*sw, &switch, &mut self.out)?;
            }
            Plan::Wrapper { child, .. } => self.put_array(child, a)?,
            Plan::Streamed { idx, bytes, class, .. } => {
                let (idx, bytes) = (*idx, *bytes);
                let base = self.cols.cols[bytes].in_cluster;
                let (blob, offsets) = crate::write::streamer::streamed_fields::arrow_blobs(class, a.as_ref(), &class.name)?;
                self.cols.extend(bytes, &blob, &mut self.out)?;
                self.cols.extend_index(idx, base, &offsets, &mut self.out)?;
            }
        }
        self.counts[plan.counter()] += n;
        Ok(())
    }
}

/// Whether an Arrow array of type `t` for this field is an optional value (nulls allowed): for
/// optional fields, and for untyped collections of records given structs (an awkward option of a
/// record: 0 or 1 items per entry, as uproot writes it).
fn takes_nulls(plan: &Plan, t: &DataType) -> bool {
    match plan {
        // A union's nulls are the entries in its Null-typed member: valueless variants.
        Plan::Variant { .. } => matches!(t, DataType::Union(..)),
        Plan::Collection { kind: CollKind::Optional, .. } => true,
        Plan::Collection { kind: CollKind::Seq, child, .. } => matches!(**child, Plan::Record { .. }) && matches!(t, DataType::Struct(_)),
        _ => false,
    }
}

/// The children of an Arrow struct in the order of a record's member `names`: by name when the
/// struct has every one of them, else by position (tuples arrive with any member names).
fn struct_members<'a>(names: &[String], st: &'a arrow_array::StructArray) -> Vec<&'a ArrayRef> {
    let names: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
    let by_name: Option<Vec<&ArrayRef>> = by_names(&names, st.fields(), st.columns()).into_iter().collect();
    by_name.unwrap_or_else(|| st.columns().iter().collect())
}

/// The arrays of `columns` (named by `fields`) for each of `names`, the first of a repeated name
/// (as `column_by_name`), in time linear in the counts: the same names in the same order are
/// matched by position, others through a map (a lookup per name by a scan would be quadratic:
/// 100,000 fields took minutes).
fn by_names<'a>(names: &[&str], fields: &arrow_schema::Fields, columns: &'a [ArrayRef]) -> Vec<Option<&'a ArrayRef>> {
    let same = names.len() == fields.len() && names.iter().zip(fields.iter()).all(|(n, f)| *n == f.name().as_str());
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    if !same {
        for (i, f) in fields.iter().enumerate() {
            index.entry(f.name().as_str()).or_insert(i);
        }
    }
    names.iter().enumerate().map(|(k, n)| if same { columns.get(k) } else { index.get(n).and_then(|&i| columns.get(i)) }).collect()
}

/// Checks that an Arrow array fits a field: types and nulls (only optional fields take nulls).
fn check_array(plan: &Plan, a: &dyn Array, path: &str) -> Result<()> {
    let t = a.data_type();
    let bad = |want: &str| Err(Error::Invalid(format!("field '{path}': expected Arrow {want}, got {t}")));
    if !takes_nulls(plan, t) && a.logical_null_count() > 0 {
        return Err(Error::Invalid(format!("field '{path}': {} null values, but the field is not optional", a.logical_null_count())));
    }
    match plan {
        Plan::Scalar { s, .. } => {
            let ok = match s {
                Scalar::Bool => t == &DataType::Boolean,
                Scalar::Char | Scalar::I8 => t == &DataType::Int8,
                Scalar::Byte | Scalar::U8 => t == &DataType::UInt8,
                Scalar::I16 => t == &DataType::Int16,
                Scalar::U16 => t == &DataType::UInt16,
                Scalar::I32 => t == &DataType::Int32,
                Scalar::U32 => t == &DataType::UInt32,
                Scalar::I64 => t == &DataType::Int64,
                Scalar::U64 => t == &DataType::UInt64,
                Scalar::F32 => matches!(t, DataType::Float32 | DataType::Float64),
                Scalar::F64 => t == &DataType::Float64,
            };
            if ok {
                Ok(())
            } else {
                bad(&format!("{s:?}"))
            }
        }
        Plan::String { .. } => match t {
            DataType::Utf8 | DataType::LargeUtf8 => Ok(()),
            _ => bad("utf8"),
        },
        Plan::Collection { child, .. } if takes_nulls(plan, t) => check_array_nonnull(child, a, &format!("{path}._0")),
        Plan::Collection { child, .. } => match t {
            DataType::List(_) => check_array(child, a.as_list::<i32>().values().as_ref(), &format!("{path}._0")),
            DataType::LargeList(_) => check_array(child, a.as_list::<i64>().values().as_ref(), &format!("{path}._0")),
            DataType::Map(_, _) => check_array(child, a.as_map().entries(), &format!("{path}._0")),
            _ => bad("list or map"),
        },
        Plan::Record { children, names, .. } => match t {
            DataType::Struct(f) if f.len() == children.len() => children
                .iter()
                .zip(struct_members(names, a.as_struct()))
                .zip(names)
                .try_for_each(|((c, arr), name)| check_array(c, arr.as_ref(), &format!("{path}.{name}"))),
            _ => bad(&format!("struct of {} members ({})", children.len(), names.join(", "))),
        },
        Plan::Array { n, child, .. } => match t {
            DataType::FixedSizeList(_, k) if *k as u64 == *n => check_array(child, a.as_fixed_size_list().values().as_ref(), &format!("{path}._0")),
            _ => bad(&format!("fixed-size list of {n}")),
        },
        Plan::Bitset { n, .. } => match t {
            DataType::FixedSizeList(f, k) if *k as u64 == *n && f.data_type() == &DataType::Boolean => Ok(()),
            _ => bad(&format!("fixed-size list of {n} booleans")),
        },
        Plan::Variant { children, .. } => match t {
            DataType::Union(fields, _) => {
                let alts = union_alternatives(fields, children.len(), path)?;
                let u = a
                    .as_any()
                    .downcast_ref::<arrow_array::UnionArray>()
                    .ok_or_else(|| Error::Invalid(format!("field '{path}': a union type without a union array")))?;
                for (k, &tid) in alts.type_ids.iter().enumerate() {
                    check_array_nonnull(&children[k], u.child(tid).as_ref(), &format!("{path}._{k}"))?;
                }
                let lens: Vec<usize> = alts.type_ids.iter().map(|&tid| u.child(tid).len()).collect();
                for i in 0..u.len() {
                    let tid = u.type_id(i);
                    match alts.of(tid) {
                        None => return Err(Error::Invalid(format!("field '{path}': entry {i} has union type id {tid}, which the union's type does not list"))),
                        Some(Some(k)) if u.value_offset(i) >= lens[k] => {
                            return Err(Error::Invalid(format!("field '{path}': entry {i} points beyond the {} values of its alternative", lens[k])));
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            _ => bad(&format!("union of {} alternatives", children.len())),
        },
        Plan::Wrapper { child, .. } => check_array(child, a, path),
        // Every object is streamed once to check it (binary arrays: objects streamed already).
        Plan::Streamed { class, .. } => crate::write::streamer::streamed_fields::arrow_blobs(class, a, path).map(|_| ()),
    }
}

/// Checks the values of an optional field, ignoring its nulls.
fn check_array_nonnull(child: &Plan, a: &dyn Array, path: &str) -> Result<()> {
    match a.logical_nulls() {
        Some(n) => {
            let mask = arrow_array::BooleanArray::new(n.into_inner(), None);
            let v = arrow_select::filter::filter(a, &mask)?;
            check_array(child, v.as_ref(), path)
        }
        None => check_array(child, a, path),
    }
}

#[cfg(test)]
mod slice_tests {
    use super::*;

    #[test]
    fn slices_fill_the_cluster_and_no_more() {
        // Unknown entry size: a probe; narrow entries: the largest slice; wide ones: what fits.
        assert_eq!(slice_len(100_000, None, 1e6), PROBE_SLICE);
        assert_eq!(slice_len(10, None, 1e6), 10);
        assert_eq!(slice_len(100_000, Some(8.0), 1e9), BATCH_SLICE);
        assert_eq!(slice_len(100_000, Some(4000.0), 4e6), 500);
        assert_eq!(slice_len(100_000, Some(4000.0), 4e6 + 1.0), 501);
        assert_eq!(slice_len(100_000, Some(4000.0), 7999.0), 1);
        // A full cluster (no room) still takes one entry, which flushes it.
        assert_eq!(slice_len(100_000, Some(4000.0), 0.0), 1);
        assert_eq!(slice_len(100_000, Some(4000.0), -5.0), 1);
        assert_eq!(slice_len(100_000, Some(0.0), 10.0), BATCH_SLICE);
    }
}
