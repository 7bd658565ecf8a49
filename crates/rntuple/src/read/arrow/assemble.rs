//! Arrow assembly: the Arrow data type of each field kind, and the arrays built from decoded
//! columns (scalars, strings, collections, maps, optionals, fixed arrays, bitsets, records,
//! variants as dense unions), top-level fields read in parallel, all following the read's plan.
//! ROOT's counterpart: the fields' bulk reading (`RFieldBase::ReadBulk`), into Arrow arrays.

use crate::error::{Error, Result};
use crate::format::descriptor::FieldDescriptor;
use crate::logical::kind::{Kind, Scalar};
use crate::primitives::alloc::vec_with_capacity;
use crate::primitives::decode::Native;
use crate::read::decode::columns::{mul_span, origin};
use crate::read::open::Reader;
use crate::read::pool::read_plan::{ReadPlan, Span};
use arrow_array::types::*;
use arrow_array::*;
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, UnionFields};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

impl Reader {
    #[cfg(test)]
    pub(crate) fn read_fields_parallel(&self, plan: &ReadPlan, ids: &[u32], spans: &[Span]) -> Result<Vec<ArrayRef>> {
        self.read_fields_as(plan, ids, spans, self.streamer_objects_on())
    }

    /// [`Reader::read_fields_parallel`], streamer fields as objects (`objects`, where their class
    /// is described) or as the raw bytes of each entry.
    pub(crate) fn read_fields_as(&self, plan: &ReadPlan, ids: &[u32], spans: &[Span], objects: bool) -> Result<Vec<ArrayRef>> {
        // The entries of the spans, summed once: a field without columns (an empty record) takes its
        // length from it, not from a sum per field (fields x clusters).
        let len: u64 = spans.iter().map(|s| s.end - s.start).sum();
        let shared = SharedOffsets::default();
        if ids.len() <= 1 {
            return ids.iter().map(|&id| self.read_node(plan, &shared, id, spans, len, Some(1), objects)).collect();
        }
        let threads = self.threads.min(ids.len());
        if threads <= 1 {
            return ids.iter().map(|&id| self.read_node(plan, &shared, id, spans, len, Some(1), objects)).collect();
        }
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut results: Vec<Option<Result<ArrayRef>>> = (0..ids.len()).map(|_| None).collect();
        let slots: Vec<std::sync::Mutex<Option<Result<ArrayRef>>>> = (0..ids.len()).map(|_| std::sync::Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= ids.len() {
                        break;
                    }
                    let r = self.read_node(plan, &shared, ids[i], spans, len, Some(1), objects);
                    if let Ok(mut g) = slots[i].lock() {
                        *g = Some(r);
                    }
                });
            }
        });
        for (i, m) in slots.into_iter().enumerate() {
            results[i] = m.into_inner().ok().flatten();
        }
        results.into_iter().map(|r| r.unwrap_or_else(|| Err(Error::internal("a reading thread panicked")))).collect()
    }

    pub(crate) fn nullable(&self, id: u32) -> bool {
        matches!(self.kinds[id as usize], Ok(Kind::Optional))
    }

    /// Arrow data type of a field (a streamer field's class as a struct of its members where
    /// the file's StreamerInfo records describe it, see [`Reader::streamer_objects`]).
    pub fn arrow_type(&self, id: u32) -> Result<DataType> {
        self.arrow_type_as(id, self.streamer_objects_on())
    }

    /// [`Reader::arrow_type`], streamer fields as objects (`objects`) or raw bytes.
    pub(crate) fn arrow_type_as(&self, id: u32, objects: bool) -> Result<DataType> {
        let f = &self.desc.fields[id as usize];
        let kind = self.kinds[id as usize].as_ref().map_err(|e| Error::Unsupported(e.clone()))?;
        let child = |i: usize| -> Result<Field> {
            let c = f.children[i];
            let t = self.arrow_type_as(c, objects)?;
            let nullable = self.nullable(c) || t == DataType::Null;
            Ok(Field::new(self.desc.fields[c as usize].name.clone(), t, nullable))
        };
        Ok(match kind {
            Kind::Scalar(s) => scalar_type(*s),
            Kind::String => DataType::LargeUtf8,
            Kind::Streamer => match objects.then(|| self.streamer_arrow_type(id)).flatten() {
                Some(t) => t,
                None => DataType::LargeBinary,
            },
            Kind::List => DataType::LargeList(Arc::new(child(0)?)),
            Kind::RecordList => {
                let st = DataType::Struct((0..f.children.len()).map(child).collect::<Result<Vec<_>>>()?.into());
                DataType::LargeList(Arc::new(Field::new("_0", st, false)))
            }
            Kind::Map => {
                let DataType::Struct(kv) = self.arrow_type_as(f.children[0], objects)? else {
                    return Err(Error::Unsupported(format!("map field '{}' whose item is not a pair", f.name)));
                };
                DataType::Map(Arc::new(Field::new("entries", DataType::Struct(kv), false)), false)
            }
            Kind::Optional => self.arrow_type_as(f.children[0], objects)?,
            Kind::Array(n) => DataType::FixedSizeList(Arc::new(child(0)?), *n as i32),
            Kind::Bitset(n) => DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Boolean, false)), *n as i32),
            Kind::Record | Kind::Tuple => DataType::Struct((0..f.children.len()).map(child).collect::<Result<Vec<_>>>()?.into()),
            Kind::Variant => DataType::Union(self.union_fields(id, objects)?, arrow_schema::UnionMode::Dense),
            Kind::Wrapper => self.arrow_type_as(f.children[0], objects)?,
            Kind::Cardinality(true) => DataType::UInt64,
            Kind::Cardinality(false) => DataType::UInt32,
        })
    }

    fn union_fields(&self, id: u32, objects: bool) -> Result<UnionFields> {
        let f = &self.desc.fields[id as usize];
        let mut fs = Vec::new();
        for &c in &f.children {
            fs.push(Field::new(self.desc.fields[c as usize].name.clone(), self.arrow_type_as(c, objects)?, true));
        }
        fs.push(Field::new("_valueless", DataType::Null, true));
        let n = fs.len();
        if n > 127 {
            return Err(Error::Unsupported(format!("variant '{}' with {} alternatives", f.name, n - 1)));
        }
        Ok(UnionFields::new(0..n as i8, fs))
    }

    /// The array of field `id` over `spans` (`len` elements in all: the sum of their lengths).
    #[allow(clippy::too_many_arguments)]
    fn read_node(&self, plan: &ReadPlan, shared: &SharedOffsets, id: u32, spans: &[Span], len: u64, mult: Option<u64>, objects: bool) -> Result<ArrayRef> {
        let f = &self.desc.fields[id as usize];
        let kind = self.kinds[id as usize].as_ref().map_err(|e| Error::Unsupported(e.clone()))?;
        Ok(match kind {
            Kind::Scalar(s) => self.read_scalar(plan, f, *s, spans, mult)?,
            Kind::String | Kind::Streamer => {
                let (offs, chars) = self.offsets(plan, f, spans, mult)?;
                let mut data: Vec<u8> = Vec::new();
                for sp in &chars {
                    self.read_column(plan, f, 1, *sp, None, &mut data)?;
                }
                let offsets = OffsetBuffer::new(ScalarBuffer::from(offs));
                if *kind == Kind::String {
                    Arc::new(
                        LargeStringArray::try_new(offsets, data.into(), None)
                            .map_err(|e| Error::corrupt(format!("string field '{}' holds invalid UTF-8: {e}", f.name), 0))?,
                    )
                } else {
                    let bytes = LargeBinaryArray::try_new(offsets, data.into(), None)?;
                    match objects.then(|| self.streamer_arrow_type(id)).flatten() {
                        Some(t) => self.streamer_objects_array(id, &bytes, &t)?,
                        None => Arc::new(bytes),
                    }
                }
            }
            Kind::List => {
                let (offs, cs) = self.offsets(plan, f, spans, mult)?;
                let c = f.children[0];
                let child = self.read_node(plan, shared, c, &cs, items(&offs), None, objects)?;
                let field = Arc::new(Field::new(self.desc.fields[c as usize].name.clone(), child.data_type().clone(), self.child_nullable(c, &child)));
                Arc::new(LargeListArray::try_new(field, shared.share(offs), child, None)?)
            }
            Kind::RecordList => {
                let (offs, cs) = self.offsets(plan, f, spans, mult)?;
                let n_items = offs.last().copied().unwrap_or(0) as usize;
                let items: ArrayRef = if f.children.is_empty() {
                    Arc::new(StructArray::new_empty_fields(n_items, None))
                } else {
                    let mut fields = Vec::new();
                    let mut arrays = Vec::new();
                    for &c in &f.children {
                        let a = self.read_node(plan, shared, c, &cs, n_items as u64, None, objects)?;
                        fields.push(Field::new(self.desc.fields[c as usize].name.clone(), a.data_type().clone(), self.child_nullable(c, &a)));
                        arrays.push(a);
                    }
                    Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?)
                };
                let field = Arc::new(Field::new("_0", items.data_type().clone(), false));
                Arc::new(LargeListArray::try_new(field, shared.share(offs), items, None)?)
            }
            Kind::Map => {
                let (offs, cs) = self.offsets(plan, f, spans, mult)?;
                let child = self.read_node(plan, shared, f.children[0], &cs, items(&offs), None, objects)?;
                let Some(entries) = child.as_any().downcast_ref::<StructArray>() else {
                    return Err(Error::Unsupported(format!("map field '{}' whose item is not a pair", f.name)));
                };
                let offs32: Vec<i32> = offs
                    .iter()
                    .map(|&o| i32::try_from(o).map_err(|_| Error::Unsupported(format!("map '{}' with more than 2^31 items in one read", f.name))))
                    .collect::<Result<_>>()?;
                let field = Arc::new(Field::new("entries", entries.data_type().clone(), false));
                Arc::new(MapArray::try_new(field, OffsetBuffer::new(ScalarBuffer::from(offs32)), entries.clone(), None, false)?)
            }
            Kind::Optional => {
                let (offs, cs) = self.offsets(plan, f, spans, mult)?;
                let child = self.read_node(plan, shared, f.children[0], &cs, items(&offs), None, objects)?;
                let mut idx: Vec<Option<u64>> = Vec::with_capacity(offs.len().saturating_sub(1));
                for w in offs.windows(2) {
                    match w[1] - w[0] {
                        0 => idx.push(None),
                        1 => idx.push(Some(w[0] as u64)),
                        n => return Err(Error::corrupt(format!("optional field '{}' has an entry with {n} values", f.name), 0)),
                    }
                }
                if let Some(u) = child.as_any().downcast_ref::<UnionArray>() {
                    // Unions carry no validity bitmap: an absent value points into the union's
                    // `_valueless` (Null) child instead.
                    optional_union(u, &idx)?
                } else {
                    arrow_select::take::take(&child, &UInt64Array::from(idx), None)?
                }
            }
            Kind::Array(n) => {
                let n = *n;
                let cs: Vec<Span> = spans.iter().map(|s| mul_span(s, n)).collect::<Result<_>>()?;
                let c = f.children[0];
                let child = self.read_node(plan, shared, c, &cs, len.saturating_mul(n), mult.and_then(|m| m.checked_mul(n)), objects)?;
                let field = Arc::new(Field::new(self.desc.fields[c as usize].name.clone(), child.data_type().clone(), self.child_nullable(c, &child)));
                Arc::new(FixedSizeListArray::try_new(field, i32::try_from(n).map_err(|_| Error::Unsupported("array too long".into()))?, child, None)?)
            }
            Kind::Bitset(n) => {
                let n = *n;
                let mut bits: Vec<bool> = Vec::new();
                let m = mult.and_then(|m| m.checked_mul(n));
                for s in spans {
                    let sp = mul_span(s, n)?;
                    self.read_column(plan, f, 0, sp, origin(m, &self.desc.clusters[s.cluster]), &mut bits)?;
                }
                let child: ArrayRef = Arc::new(BooleanArray::from(bits));
                let field = Arc::new(Field::new("item", DataType::Boolean, false));
                Arc::new(FixedSizeListArray::try_new(field, i32::try_from(n).map_err(|_| Error::Unsupported("bitset too long".into()))?, child, None)?)
            }
            Kind::Record | Kind::Tuple => {
                if f.children.is_empty() {
                    Arc::new(StructArray::new_empty_fields(len as usize, None))
                } else {
                    let mut fields = Vec::new();
                    let mut arrays = Vec::new();
                    for &c in &f.children {
                        let a = self.read_node(plan, shared, c, spans, len, mult, objects)?;
                        fields.push(Field::new(self.desc.fields[c as usize].name.clone(), a.data_type().clone(), self.child_nullable(c, &a)));
                        arrays.push(a);
                    }
                    Arc::new(StructArray::try_new(Fields::from(fields), arrays, None)?)
                }
            }
            Kind::Wrapper => self.read_node(plan, shared, f.children[0], spans, len, mult, objects)?,
            Kind::Cardinality(is64) => {
                let (offs, _) = self.offsets(plan, f, spans, mult)?;
                let sizes = offs.windows(2).map(|w| (w[1] - w[0]) as u64);
                if *is64 {
                    Arc::new(UInt64Array::from_iter_values(sizes))
                } else {
                    let v: Vec<u32> = sizes
                        .map(|x| u32::try_from(x).map_err(|_| Error::Invalid(format!("cardinality {x} of '{}' does not fit in 32 bits", f.name))))
                        .collect::<Result<_>>()?;
                    Arc::new(UInt32Array::from(v))
                }
            }
            Kind::Variant => self.read_variant(plan, shared, id, f, spans, mult, objects)?,
        })
    }

    fn child_nullable(&self, c: u32, a: &ArrayRef) -> bool {
        self.nullable(c) || a.logical_null_count() > 0 || a.data_type() == &DataType::Null
    }

    fn read_scalar(&self, plan: &ReadPlan, f: &FieldDescriptor, s: Scalar, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef> {
        fn prim<P: ArrowPrimitiveType>(r: &Reader, plan: &ReadPlan, f: &FieldDescriptor, spans: &[Span], mult: Option<u64>) -> Result<ArrayRef>
        where
            P::Native: Native,
        {
            let mut v: Vec<P::Native> = vec_with_capacity(r.reservation(plan, f, spans));
            for sp in spans {
                r.read_column(plan, f, 0, *sp, origin(mult, &r.desc.clusters[sp.cluster]), &mut v)?;
            }
            Ok(Arc::new(PrimitiveArray::<P>::new(ScalarBuffer::from(v), None)))
        }
        match s {
            Scalar::Bool => {
                let mut v: Vec<bool> = Vec::new();
                for sp in spans {
                    self.read_column(plan, f, 0, *sp, origin(mult, &self.desc.clusters[sp.cluster]), &mut v)?;
                }
                Ok(Arc::new(BooleanArray::from(v)))
            }
            Scalar::Char | Scalar::I8 => prim::<Int8Type>(self, plan, f, spans, mult),
            Scalar::Byte | Scalar::U8 => prim::<UInt8Type>(self, plan, f, spans, mult),
            Scalar::I16 => prim::<Int16Type>(self, plan, f, spans, mult),
            Scalar::U16 => prim::<UInt16Type>(self, plan, f, spans, mult),
            Scalar::I32 => prim::<Int32Type>(self, plan, f, spans, mult),
            Scalar::U32 => prim::<UInt32Type>(self, plan, f, spans, mult),
            Scalar::I64 => prim::<Int64Type>(self, plan, f, spans, mult),
            Scalar::U64 => prim::<UInt64Type>(self, plan, f, spans, mult),
            Scalar::F32 => prim::<Float32Type>(self, plan, f, spans, mult),
            Scalar::F64 => prim::<Float64Type>(self, plan, f, spans, mult),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn read_variant(
        &self,
        plan: &ReadPlan,
        shared: &SharedOffsets,
        id: u32,
        f: &FieldDescriptor,
        spans: &[Span],
        mult: Option<u64>,
        objects: bool,
    ) -> Result<ArrayRef> {
        let n_alt = f.children.len();
        let mut type_ids: Vec<i8> = Vec::new();
        let mut offsets: Vec<i32> = Vec::new();
        let mut child_spans: Vec<Vec<Span>> = vec![Vec::new(); n_alt];
        let mut child_len = vec![0u64; n_alt];
        let mut n_null = 0i32;
        let mut sw = Vec::new();
        for sp in spans {
            sw.clear();
            self.read_switch(plan, f, *sp, origin(mult, &self.desc.clusters[sp.cluster]), &mut sw)?;
            // Per alternative: the smallest index used in this span.
            let mut lo = vec![u64::MAX; n_alt];
            let mut hi = vec![0u64; n_alt];
            for &(idx, tag) in &sw {
                if tag as usize > n_alt {
                    return Err(Error::corrupt(format!("variant '{}': tag {tag} but only {n_alt} alternatives", f.name), 0));
                }
                if tag > 0 {
                    let k = tag as usize - 1;
                    lo[k] = lo[k].min(idx);
                    hi[k] = hi[k].max(idx + 1);
                }
            }
            for &(idx, tag) in &sw {
                if tag == 0 {
                    type_ids.push(n_alt as i8);
                    offsets.push(n_null);
                    n_null += 1;
                } else {
                    let k = tag as usize - 1;
                    type_ids.push(k as i8);
                    let o = child_len[k] + (idx - lo[k]);
                    offsets.push(i32::try_from(o).map_err(|_| Error::Unsupported("variant with more than 2^31 values in one read".into()))?);
                }
            }
            for k in 0..n_alt {
                if lo[k] != u64::MAX {
                    child_spans[k].push(Span { cluster: sp.cluster, start: lo[k], end: hi[k] });
                    child_len[k] += hi[k] - lo[k];
                }
            }
        }
        let mut children: Vec<ArrayRef> = Vec::new();
        for (k, &c) in f.children.iter().enumerate() {
            children.push(self.read_node(plan, shared, c, &child_spans[k], child_len[k], None, objects)?);
        }
        children.push(Arc::new(NullArray::new(n_null as usize)));
        let fields = self.union_fields(id, objects)?;
        Ok(Arc::new(UnionArray::try_new(fields, ScalarBuffer::from(type_ids), Some(ScalarBuffer::from(offsets)), children)?))
    }
}

/// The offsets of the collections of one read (any depth), by their length and last value:
/// collections whose offsets are equal share one buffer. NanoAOD's members of a collection
/// (`Jet_pt`, `Jet_eta`, ... each a `std::vector` with its own offset column) have equal offsets:
/// one buffer for them all instead of one each, and no second check of offsets that are equal to
/// checked ones.
#[derive(Default)]
struct SharedOffsets(Mutex<HashMap<OffsetsKey, Vec<OffsetBuffer<i64>>>>);

/// What offsets equal ones must have in common: their length and their last value.
type OffsetsKey = (usize, i64);

/// Most distinct offset buffers kept per (length, last value): the comparisons a new one costs.
const SHARED_PER_KEY: usize = 4;

impl SharedOffsets {
    /// The buffer of `offs` (from `Reader::offsets`: starting at 0, never decreasing): an equal
    /// one of this read if there is one, else a new one, remembered.
    fn share(&self, offs: Vec<i64>) -> OffsetBuffer<i64> {
        let key = (offs.len(), offs.last().copied().unwrap_or(0));
        // A poisoned lock (a panic in another reading thread) only ends the sharing.
        let Ok(mut known) = self.0.lock() else {
            return OffsetBuffer::new(ScalarBuffer::from(offs));
        };
        let same = known.entry(key).or_default();
        if let Some(b) = same.iter().find(|b| b.inner().as_ref() == offs.as_slice()) {
            return b.clone();
        }
        let b = OffsetBuffer::new(ScalarBuffer::from(offs));
        if same.len() < SHARED_PER_KEY {
            same.push(b.clone());
        }
        b
    }
}

/// An optional around a dense union: entry i is `idx[i]` of the union, or valueless.
fn optional_union(u: &UnionArray, idx: &[Option<u64>]) -> Result<ArrayRef> {
    let DataType::Union(fields, _) = u.data_type() else {
        return Err(Error::internal("optional_union on an array whose type is not a union"));
    };
    let null_id = fields.iter().map(|(id, _)| id).max().unwrap_or(0);
    let mut type_ids = Vec::with_capacity(idx.len());
    let mut offsets = Vec::with_capacity(idx.len());
    let mut extra = 0i32;
    let base_nulls = u.child(null_id).len() as i32;
    for i in idx {
        match i {
            Some(k) => {
                let k = *k as usize;
                if k >= u.len() {
                    return Err(Error::corrupt("optional variant index beyond its values", 0));
                }
                type_ids.push(u.type_id(k));
                offsets.push(u.value_offset(k) as i32);
            }
            None => {
                type_ids.push(null_id);
                offsets.push(base_nulls + extra);
                extra += 1;
            }
        }
    }
    let children: Vec<ArrayRef> = fields
        .iter()
        .map(|(id, _)| if id == null_id { Arc::new(NullArray::new((base_nulls + extra) as usize)) as ArrayRef } else { u.child(id).clone() })
        .collect();
    Ok(Arc::new(UnionArray::try_new(fields.clone(), ScalarBuffer::from(type_ids), Some(ScalarBuffer::from(offsets)), children)?))
}

/// The Arrow type of a scalar field (and of a fundamental type in a streamed object).
pub(crate) fn scalar_type(s: Scalar) -> DataType {
    match s {
        Scalar::Bool => DataType::Boolean,
        Scalar::Char | Scalar::I8 => DataType::Int8,
        Scalar::Byte | Scalar::U8 => DataType::UInt8,
        Scalar::I16 => DataType::Int16,
        Scalar::U16 => DataType::UInt16,
        Scalar::I32 => DataType::Int32,
        Scalar::U32 => DataType::UInt32,
        Scalar::I64 => DataType::Int64,
        Scalar::U64 => DataType::UInt64,
        Scalar::F32 => DataType::Float32,
        Scalar::F64 => DataType::Float64,
    }
}

/// The items a collection's offsets (from 0) span: its last offset.
fn items(offs: &[i64]) -> u64 {
    offs.last().map_or(0, |&o| o.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use crate::write::{WriteOptions, Writer};
    use crate::{RNTupleFile, Value};
    use arrow_array::{Array, LargeListArray};

    /// Two members of one collection (equal sizes: equal offsets), a third vector of other sizes
    /// and a nested vector whose inner lists have the members' sizes, over several clusters.
    fn file(n: u64) -> Vec<u8> {
        let path = std::env::temp_dir().join(format!("rntuple-shared-offsets-{}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 4_000, max_unzipped_page_size: 1024, ..Default::default() };
        let schema = [
            ("Jet_pt", "std::vector<float>"),
            ("Jet_id", "std::vector<std::int32_t>"),
            ("Mu_pt", "std::vector<float>"),
            ("nested", "std::vector<std::vector<float>>"),
        ];
        let mut w = Writer::create(&path, "Events", &schema, opts).unwrap();
        for i in 0..n {
            let jets = i % 4;
            let pt: Vec<Value> = (0..jets).map(|k| Value::F32((i * 10 + k) as f32)).collect();
            let id: Vec<Value> = (0..jets).map(|k| Value::Int((i + k) as i64)).collect();
            let mu: Vec<Value> = (0..i % 3).map(|k| Value::F32(k as f32)).collect();
            let nested: Vec<Value> = (0..2).map(|_| Value::List(pt.clone())).collect();
            let fields = [("Jet_pt", Value::List(pt)), ("Jet_id", Value::List(id)), ("Mu_pt", Value::List(mu)), ("nested", Value::List(nested))];
            w.fill(&Value::Record(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())).unwrap();
        }
        w.commit().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        bytes
    }

    fn list(b: &arrow_array::RecordBatch, name: &str) -> LargeListArray {
        b.column_by_name(name).unwrap().as_any().downcast_ref::<LargeListArray>().unwrap().clone()
    }

    #[test]
    fn equal_offsets_share_one_buffer_and_keep_their_values() {
        let n = 3_000;
        let mut r = RNTupleFile::from_bytes(file(n)).unwrap().reader("Events").unwrap();
        assert!(r.descriptor().clusters.len() > 2, "several clusters");
        for threads in [1, 2] {
            r.set_threads(threads);
            for (start, stop) in [(0, n), (7, n - 5), (1_500, 1_501)] {
                let b = r.read_batch(None, start, stop).unwrap();
                let (pt, id, mu, nested) = (list(&b, "Jet_pt"), list(&b, "Jet_id"), list(&b, "Mu_pt"), list(&b, "nested"));
                let inner = nested.values().as_any().downcast_ref::<LargeListArray>().unwrap().clone();
                let ptr = |a: &LargeListArray| a.offsets().inner().inner().as_ptr();
                assert_eq!(ptr(&pt), ptr(&id), "members of one collection share their offsets");
                if (start..stop).any(|e| e % 4 != e % 3) {
                    assert_ne!(ptr(&pt), ptr(&mu), "other sizes, other offsets");
                } else {
                    assert_eq!(ptr(&pt), ptr(&mu), "the same sizes (all 0): one buffer");
                }
                assert_eq!(pt.offsets().len(), (stop - start + 1) as usize);
                for (row, e) in (start..stop).enumerate() {
                    let jets = (e % 4) as usize;
                    assert_eq!(pt.value_length(row) as usize, jets);
                    assert_eq!(id.value_length(row) as usize, jets);
                    assert_eq!(mu.value_length(row) as usize, (e % 3) as usize);
                    assert_eq!(nested.value_length(row), 2);
                    let v = pt.value(row);
                    let v = v.as_any().downcast_ref::<arrow_array::Float32Array>().unwrap();
                    assert_eq!(v.values().to_vec(), (0..jets as u64).map(|k| (e * 10 + k) as f32).collect::<Vec<_>>());
                    let ids = id.value(row);
                    let ids = ids.as_any().downcast_ref::<arrow_array::Int32Array>().unwrap();
                    assert_eq!(ids.values().to_vec(), (0..jets as u64).map(|k| (e + k) as i32).collect::<Vec<_>>());
                }
                for row in 0..inner.len() {
                    assert_eq!(inner.value_length(row) as u64, (start + row as u64 / 2) % 4, "inner list {row}");
                }
            }
        }
    }
}
