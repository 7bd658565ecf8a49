//! Filling entry by entry with typed setters, as an output module does: look a top-level field
//! up once (`rntuple_entry_field`), set each field of the entry (`rntuple_entry_set_f32`,
//! `rntuple_entry_set_vec_f32`, `rntuple_entry_set_string`, ...), then `rntuple_entry_fill`.
//! Values gather column by column in typed buffers and go to the writer as an Arrow batch every
//! 64 KiB of values (at most 4096 entries), so a setter is a bounds check and a push: no per-entry
//! values, no per-field allocation, and the buffers stay in the cache.
//!
//! Setters work on top-level fields of fundamental types, `std::string` and collections
//! (`std::vector`, `ROOT::RVec`) of fundamental types; other fields are written with Arrow batches.
//! The target is a writer or a fill context handle.
//!
//! Here: the setters, the batch taken from the buffers and their buffers taken back; the buffer's
//! data are in `buffer`, entries handed over column by column in `columns`.

use crate::status::{CError, CResult};
use arrow_array::{ArrayRef, LargeListArray, LargeStringArray, RecordBatch};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use buffer::{wrong_c_type, wrong_kind, Shape, Slot, ENTRY_BATCH, ENTRY_BATCH_BYTES};
use std::sync::Arc;

mod buffer;
mod columns;
pub use buffer::{CValue, EntryBuf, Items, Values};
pub use columns::ColumnIn;

/// Items of a collection copied one by one rather than with `memcpy`.
const SMALL_ITEMS: usize = 16;

/// The contents of `v`, leaving `spare` (emptied) in their place and an empty vector in `spare`.
fn take_for_spare<T>(v: &mut Vec<T>, spare: &mut Vec<T>) -> Vec<T> {
    spare.clear();
    std::mem::replace(v, std::mem::take(spare))
}

/// The offsets of `v`, leaving `spare` with a leading 0 in their place.
fn take_offsets(v: &mut Vec<i64>, spare: &mut Vec<i64>) -> Vec<i64> {
    let full = take_for_spare(v, spare);
    v.push(0);
    full
}

/// `buf` as a vector again (emptied) in `spare`, when no one else holds it.
fn reclaim_vec<T: arrow_buffer::ArrowNativeType>(spare: &mut Vec<T>, buf: Buffer) {
    if let Ok(mut back) = buf.into_vec::<T>() {
        back.clear();
        *spare = back;
    }
}

/// The slot `slot` (an error naming the field when it has no setter, or the index when it is past
/// the fields).
#[inline]
fn slot_mut<'a>(slots: &'a mut [Option<Slot>], names: &[(String, String)], slot: u32) -> CResult<&'a mut Slot> {
    let n = slots.len();
    match slots.get_mut(slot as usize) {
        Some(Some(s)) => Ok(s),
        Some(None) => Err(CError::schema(format!("field '{}' has no typed setter", names.get(slot as usize).map_or("?", |x| x.0.as_str())))),
        None => Err(CError::invalid(format!("field slot {slot} is past the {n} top-level fields"))),
    }
}

impl EntryBuf {
    /// The slot of a top-level field by name.
    pub fn field(&self, name: &str) -> CResult<u32> {
        let i = self.names.iter().position(|(n, _)| n == name).ok_or_else(|| {
            let all: Vec<&str> = self.names.iter().map(|(n, _)| n.as_str()).collect();
            CError::new(crate::status::RNTUPLE_ERR_NOT_FOUND, format!("no top-level field '{name}' (fields: {})", all.join(", ")))
        })?;
        if self.slots[i].is_none() {
            return Err(CError::schema(format!(
                "field '{name}' of type '{}' has no typed setter (fundamental types, std::string and vectors of fundamental types have); write it with Arrow batches",
                self.names[i].1
            )));
        }
        u32::try_from(i).map_err(|_| CError::invalid("more than 2^32 fields"))
    }

    /// Counts a slot set for the first time in this entry (`newly`) and its bytes.
    #[inline]
    fn count(&mut self, newly: bool, bytes: usize) {
        self.n_set += usize::from(newly);
        self.bytes += bytes;
    }

    /// Sets a field of a fundamental type.
    pub fn set<T: CValue>(&mut self, slot: u32, v: T) -> CResult<()> {
        let g = self.generation;
        let s = slot_mut(&mut self.slots, &self.names, slot)?;
        if s.shape != Shape::Scalar {
            return Err(wrong_kind(&self.names, slot, T::NAME));
        }
        let Some(newly) = put_scalar(s, g, v) else {
            return Err(wrong_c_type(&self.names, slot, s.values.c_type(), T::NAME));
        };
        self.count(newly, if newly { std::mem::size_of::<T>() } else { 0 });
        Ok(())
    }

    /// Sets a collection field to `items`.
    pub fn set_vec<T: CValue>(&mut self, slot: u32, items: &[T]) -> CResult<()> {
        let g = self.generation;
        let s = slot_mut(&mut self.slots, &self.names, slot)?;
        if s.shape != Shape::List {
            return Err(wrong_kind(&self.names, slot, &format!("vector of {}", T::NAME)));
        }
        let Some(newly) = put_items(s, g, items) else {
            return Err(wrong_c_type(&self.names, slot, s.values.c_type(), T::NAME));
        };
        self.count(newly, std::mem::size_of_val(items));
        Ok(())
    }

    /// Sets a scalar field to `items[0]` (exactly one item) or a collection field to `items`: what a
    /// `rntuple_value` of a fundamental C type gives, with one lookup of the slot.
    #[inline]
    pub fn set_items<T: CValue>(&mut self, slot: u32, items: &[T]) -> CResult<()> {
        let g = self.generation;
        let s = slot_mut(&mut self.slots, &self.names, slot)?;
        let shape = s.shape;
        let newly = match (shape, items) {
            (Shape::Scalar, [x]) => put_scalar(s, g, *x),
            (Shape::Scalar, _) => return Err(CError::invalid(format!("slot {slot}: a scalar field takes len 1, got {}", items.len()))),
            (Shape::List, _) => put_items(s, g, items),
            (Shape::String, _) => return Err(wrong_kind(&self.names, slot, &format!("vector of {}", T::NAME))),
        };
        let Some(newly) = newly else {
            return Err(wrong_c_type(&self.names, slot, s.values.c_type(), T::NAME));
        };
        let bytes = if shape == Shape::Scalar && !newly { 0 } else { std::mem::size_of_val(items) };
        self.count(newly, bytes);
        Ok(())
    }

    /// Sets a `std::string` field (UTF-8 bytes).
    pub fn set_string(&mut self, slot: u32, text: &[u8]) -> CResult<()> {
        let g = self.generation;
        let s = slot_mut(&mut self.slots, &self.names, slot)?;
        if s.shape != Shape::String {
            return Err(wrong_kind(&self.names, slot, "string"));
        }
        if let Err(e) = std::str::from_utf8(text) {
            return Err(CError::invalid(format!(
                "field '{}': the string is not valid UTF-8 ({e})",
                self.names.get(slot as usize).map_or("?", |x| x.0.as_str())
            )));
        }
        let newly = begin(s, g);
        s.bytes.truncate(entry_start(s));
        s.bytes.extend_from_slice(text);
        let end = s.bytes.len();
        end_entry(s, end);
        self.count(newly, text.len());
        Ok(())
    }

    /// Ends the entry: every field with a setter must have been set. Returns whether enough
    /// entries are gathered to go to the writer ([`EntryBuf::take_batch`]).
    pub fn fill(&mut self) -> CResult<bool> {
        if !self.all_settable {
            let missing: Vec<&str> = self.slots.iter().zip(&self.names).filter(|(s, _)| s.is_none()).map(|(_, (n, _))| n.as_str()).collect();
            return Err(CError::schema(format!("fields without typed setters ({}) cannot be filled entry by entry; write Arrow batches", missing.join(", "))));
        }
        if self.n_set < self.slots.len() {
            let g = self.generation;
            let unset: Vec<&str> =
                self.slots.iter().zip(&self.names).filter(|(s, _)| s.as_ref().is_some_and(|s| s.set_in != g)).map(|(_, (n, _))| n.as_str()).collect();
            return Err(CError::invalid(format!("entry {}: fields not set: {}", self.entries, unset.join(", "))));
        }
        // Every slot holds this entry's values and, for lists and strings, its end offset already.
        self.generation += 1;
        self.n_set = 0;
        self.entries += 1;
        Ok(self.entries >= ENTRY_BATCH || self.bytes >= ENTRY_BATCH_BYTES)
    }

    /// Entries filled and not yet taken.
    pub fn pending(&self) -> u64 {
        self.entries
    }

    /// The filled entries as a record batch (`None` when there are none); values of an entry
    /// begun and not filled are dropped.
    pub fn take_batch(&mut self) -> CResult<Option<RecordBatch>> {
        let n = self.entries as usize;
        for s in self.slots.iter_mut().flatten() {
            // An entry begun but not filled is dropped.
            s.offsets.truncate(n + 1);
            let end = usize::try_from(s.offsets.last().copied().unwrap_or(0)).unwrap_or(0);
            match s.shape {
                Shape::Scalar => s.values.truncate(n),
                Shape::List => s.values.truncate(end),
                Shape::String => s.bytes.truncate(end),
            }
        }
        self.generation += 1;
        self.n_set = 0;
        if n == 0 {
            return Ok(None);
        }
        let mut fields = Vec::new();
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.slots.len());
        for ((s, spare), (name, _)) in self.slots.iter_mut().zip(self.spares.iter_mut()).zip(&self.names) {
            let Some(s) = s else { continue };
            let (array, dt): (ArrayRef, DataType) = match s.shape {
                Shape::Scalar => s.values.take(&mut spare.values),
                Shape::List => {
                    let offs = OffsetBuffer::new(ScalarBuffer::from(take_offsets(&mut s.offsets, &mut spare.offsets)));
                    let (values, dt) = s.values.take(&mut spare.values);
                    let item = Arc::new(Field::new("_0", dt, false));
                    (Arc::new(LargeListArray::try_new(item.clone(), offs, values, None)?), DataType::LargeList(item))
                }
                Shape::String => {
                    let offs = OffsetBuffer::new(ScalarBuffer::from(take_offsets(&mut s.offsets, &mut spare.offsets)));
                    let bytes = Buffer::from_vec(take_for_spare(&mut s.bytes, &mut spare.bytes));
                    (Arc::new(LargeStringArray::try_new(offs, bytes, None)?), DataType::LargeUtf8)
                }
            };
            if self.batch_schema.is_none() {
                fields.push(Field::new(name, dt, false));
            }
            arrays.push(array);
        }
        self.entries = 0;
        self.bytes = 0;
        let schema = self.batch_schema.get_or_insert_with(|| Arc::new(Schema::new(fields))).clone();
        Ok(Some(RecordBatch::try_new(schema, arrays)?))
    }

    /// Takes back the buffers of a batch [`EntryBuf::take_batch`] made, once it was appended (the
    /// writer copied its values): the next batch fills them again instead of allocating.
    pub fn recycle(&mut self, batch: RecordBatch) {
        let (_, arrays, _) = batch.into_parts();
        let settable = self.slots.iter().zip(self.spares.iter_mut()).filter_map(|(s, spare)| s.as_ref().map(|s| (s.shape, spare)));
        for ((shape, spare), array) in settable.zip(arrays) {
            match shape {
                Shape::Scalar => spare.values.reclaim(array),
                Shape::List => {
                    let parts = array.as_any().downcast_ref::<LargeListArray>().map(|l| (l.offsets().inner().inner().clone(), l.values().clone()));
                    drop(array);
                    if let Some((offsets, values)) = parts {
                        reclaim_vec(&mut spare.offsets, offsets);
                        spare.values.reclaim(values);
                    }
                }
                Shape::String => {
                    let parts = array.as_any().downcast_ref::<LargeStringArray>().map(|a| (a.offsets().inner().inner().clone(), a.values().clone()));
                    drop(array);
                    if let Some((offsets, bytes)) = parts {
                        reclaim_vec(&mut spare.offsets, offsets);
                        reclaim_vec(&mut spare.bytes, bytes);
                    }
                }
            }
        }
    }
}

/// Marks a slot set in the entry of generation `g`; whether it was not set before. A list's or
/// string's first set in the entry opens the entry's end offset (at the start: nothing yet).
#[inline]
fn begin(s: &mut Slot, g: u64) -> bool {
    if s.set_in == g {
        return false;
    }
    s.set_in = g;
    if s.shape != Shape::Scalar {
        let start = s.offsets.last().copied().unwrap_or(0);
        s.offsets.push(start);
    }
    true
}

/// Where the entry being filled starts in a list's values or a string's bytes (after [`begin`]).
#[inline]
fn entry_start(s: &Slot) -> usize {
    let n = s.offsets.len();
    if n < 2 {
        0
    } else {
        usize::try_from(s.offsets[n - 2]).unwrap_or(0)
    }
}

/// Sets the end offset of the entry being filled (after [`begin`]).
#[inline]
fn end_entry(s: &mut Slot, end: usize) {
    if let Some(last) = s.offsets.last_mut() {
        *last = end as i64;
    }
}

/// Sets a scalar slot's value for the entry (the last call wins); whether it was not set before,
/// `None` when the slot's values are not of type `T`.
#[inline]
fn put_scalar<T: CValue>(s: &mut Slot, g: u64, v: T) -> Option<bool> {
    let vals = T::values(&mut s.values)?;
    if s.set_in == g {
        if let Some(last) = vals.last_mut() {
            *last = v;
        }
        return Some(false);
    }
    vals.push(v);
    s.set_in = g;
    Some(true)
}

/// Sets a collection slot's items for the entry (the last call wins); whether it was not set
/// before, `None` when the slot's values are not of type `T`.
#[inline]
fn put_items<T: CValue>(s: &mut Slot, g: u64, items: &[T]) -> Option<bool> {
    T::values(&mut s.values)?;
    let newly = begin(s, g);
    let start = entry_start(s);
    let vals = T::values(&mut s.values)?;
    vals.truncate(start); // set twice in one entry: the last call wins
    if items.len() <= SMALL_ITEMS {
        // A few items (an event's muons, jets): pushed one by one, which is cheaper than a call
        // of memcpy for a few bytes (`extend` from a slice becomes one).
        vals.reserve(items.len());
        for &x in items {
            vals.push(x);
        }
    } else {
        vals.extend_from_slice(items);
    }
    let end = vals.len();
    end_entry(s, end);
    Some(newly)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use rntuple::logical::typename::{parse, TypeExpr};

    fn schema() -> Vec<(String, TypeExpr)> {
        [("n", "std::int32_t"), ("pt", "std::vector<float>"), ("tag", "std::string"), ("m", "std::map<int,int>")]
            .iter()
            .map(|(n, t)| (n.to_string(), parse(t).unwrap()))
            .collect()
    }

    #[test]
    fn entries_become_a_batch() {
        let mut e = EntryBuf::new(&schema()[..3]);
        let (n, pt, tag) = (e.field("n").unwrap(), e.field("pt").unwrap(), e.field("tag").unwrap());
        for i in 0..3 {
            e.set(n, i).unwrap();
            e.set_vec(pt, &[1.0f32; 2][..i as usize]).unwrap();
            e.set_vec(pt, &vec![i as f32; i as usize]).unwrap(); // the second call wins
            e.set_string(tag, format!("t{i}").as_bytes()).unwrap();
            assert!(!e.fill().unwrap());
        }
        e.set(n, 99).unwrap(); // begun, not filled: dropped
        let b = e.take_batch().unwrap().unwrap();
        assert_eq!(b.num_rows(), 3);
        assert_eq!(b.column(0).as_primitive::<arrow_array::types::Int32Type>().values().to_vec(), [0, 1, 2]);
        let l = b.column(1).as_list::<i64>();
        assert_eq!(l.value_offsets().to_vec(), [0, 0, 1, 3]);
        assert_eq!(l.values().as_primitive::<arrow_array::types::Float32Type>().values().to_vec(), [1.0, 2.0, 2.0]);
        assert_eq!(b.column(2).as_string::<i64>().value(2), "t2");
        assert!(e.take_batch().unwrap().is_none());
    }

    #[test]
    fn misuse_is_an_error_naming_the_field() {
        let mut e = EntryBuf::new(&schema());
        let n = e.field("n").unwrap();
        let err = e.set(n, 1.5f32).unwrap_err();
        assert_eq!(err.code, crate::status::RNTUPLE_ERR_SCHEMA_MISMATCH);
        assert!(err.message.contains("field 'n'") && err.message.contains("float"), "{}", err.message);
        assert_eq!(e.field("m").unwrap_err().code, crate::status::RNTUPLE_ERR_SCHEMA_MISMATCH);
        assert_eq!(e.field("nope").unwrap_err().code, crate::status::RNTUPLE_ERR_NOT_FOUND);
        assert_eq!(e.set(7, 1i32).unwrap_err().code, crate::status::RNTUPLE_ERR_INVALID_ARGUMENT);
        let mut e = EntryBuf::new(&schema()[..3]);
        e.set(0, 1i32).unwrap();
        let err = e.fill().unwrap_err();
        assert!(err.message.contains("fields not set: pt, tag"), "{}", err.message);
        assert!(e.set_string(2, b"\xff").unwrap_err().message.contains("UTF-8"));
    }
}
