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

use crate::status::{CError, CResult};
use arrow_array::{ArrayRef, BooleanArray, LargeListArray, LargeStringArray, PrimitiveArray, RecordBatch};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Schema};
use rntuple::logical::typename::TypeExpr;
use rntuple::logical::Scalar;
use std::sync::Arc;

/// Entries gathered at most before they go to the writer as one batch.
const ENTRY_BATCH: u64 = 4096;
/// Bytes of values gathered before they go to the writer, whatever the entry count: small enough
/// that the columns being filled stay in the core's cache (an output module's ~50 columns filled in
/// turn). Measured on an NanoAOD-like event of 50 fields (`examples/cpp/output_module`, one thread,
/// sample shares of `perf record`): gathering 4096 entries spent ~39 % of the time in
/// these buffers, 128-256 entries ~26-30 %.
const ENTRY_BATCH_BYTES: usize = 64 << 10;

macro_rules! value_types {
    ($($v:ident($t:ty, $arrow:ident, $dt:ident, $cname:literal)),*) => {
        /// The values of one field's column, by C type.
        #[derive(Debug)]
        pub enum Values {
            /// `bool`.
            Bool(Vec<bool>),
            $(#[doc = $cname] $v(Vec<$t>),)*
        }

        impl Values {
            fn truncate(&mut self, n: usize) {
                match self {
                    Values::Bool(v) => v.truncate(n),
                    $(Values::$v(v) => v.truncate(n),)*
                }
            }
            /// The values as an Arrow array; the buffer left behind has the capacity of the values
            /// taken, so that the next batch grows without reallocating.
            fn take(&mut self) -> (ArrayRef, DataType) {
                match self {
                    Values::Bool(v) => (Arc::new(BooleanArray::from(take_keeping_capacity(v))), DataType::Boolean),
                    $(Values::$v(v) => (Arc::new(PrimitiveArray::<arrow_array::types::$arrow>::new(ScalarBuffer::from(take_keeping_capacity(v)), None)), DataType::$dt),)*
                }
            }
            /// The C type's name, for messages.
            fn c_type(&self) -> &'static str {
                match self {
                    Values::Bool(_) => "bool",
                    $(Values::$v(_) => $cname,)*
                }
            }
        }

        /// A C type a setter writes.
        pub trait CValue: Copy {
            /// Its values' column, if that is the column's type.
            fn values(v: &mut Values) -> Option<&mut Vec<Self>>;
            /// The C type's name.
            const NAME: &'static str;
        }

        impl CValue for bool {
            fn values(v: &mut Values) -> Option<&mut Vec<bool>> {
                if let Values::Bool(x) = v { Some(x) } else { None }
            }
            const NAME: &'static str = "bool";
        }
        $(impl CValue for $t {
            fn values(v: &mut Values) -> Option<&mut Vec<$t>> {
                if let Values::$v(x) = v { Some(x) } else { None }
            }
            const NAME: &'static str = $cname;
        })*
    };
}

value_types!(
    I8(i8, Int8Type, Int8, "int8_t"),
    U8(u8, UInt8Type, UInt8, "uint8_t"),
    I16(i16, Int16Type, Int16, "int16_t"),
    U16(u16, UInt16Type, UInt16, "uint16_t"),
    I32(i32, Int32Type, Int32, "int32_t"),
    U32(u32, UInt32Type, UInt32, "uint32_t"),
    I64(i64, Int64Type, Int64, "int64_t"),
    U64(u64, UInt64Type, UInt64, "uint64_t"),
    F32(f32, Float32Type, Float32, "float"),
    F64(f64, Float64Type, Float64, "double")
);

/// The values of `v`, leaving an empty vector of the same capacity in their place.
fn take_keeping_capacity<T>(v: &mut Vec<T>) -> Vec<T> {
    let cap = v.len();
    std::mem::replace(v, Vec::with_capacity(cap))
}

/// A new offsets vector (a leading 0) of the capacity of `v`, and `v`.
fn take_offsets(v: &mut Vec<i64>) -> Vec<i64> {
    let mut fresh = Vec::with_capacity(v.len());
    fresh.push(0);
    std::mem::replace(v, fresh)
}

fn values_of(s: Scalar) -> Values {
    match s {
        Scalar::Bool => Values::Bool(Vec::new()),
        Scalar::Char | Scalar::I8 => Values::I8(Vec::new()),
        Scalar::Byte | Scalar::U8 => Values::U8(Vec::new()),
        Scalar::I16 => Values::I16(Vec::new()),
        Scalar::U16 => Values::U16(Vec::new()),
        Scalar::I32 => Values::I32(Vec::new()),
        Scalar::U32 => Values::U32(Vec::new()),
        Scalar::I64 => Values::I64(Vec::new()),
        Scalar::U64 => Values::U64(Vec::new()),
        Scalar::F32 => Values::F32(Vec::new()),
        Scalar::F64 => Values::F64(Vec::new()),
    }
}

/// How a field's values are laid out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    Scalar,
    List,
    String,
}

/// One top-level field's gathered values.
#[derive(Debug)]
struct Slot {
    name: String,
    type_name: String,
    shape: Shape,
    values: Values,
    /// Lists and strings: the end offsets of the entries so far, after a leading 0 (the entry being
    /// filled has its end here as soon as it is set).
    offsets: Vec<i64>,
    /// Strings: their bytes.
    bytes: Vec<u8>,
    /// The entry being filled has a value for this field when this is the buffer's `generation`.
    set_in: u64,
}

/// The entry being filled and the entries gathered, for a writer's schema.
#[derive(Debug)]
pub struct EntryBuf {
    slots: Vec<Option<Slot>>,
    /// Top-level fields in schema order, (name, type name): for the messages of a field without
    /// a setter.
    names: Vec<(String, String)>,
    /// Whether every field has a setter (else entries cannot be filled with setters at all).
    all_settable: bool,
    /// Counts entries begun (a fill or a batch taken starts the next): marks the slots set in the
    /// entry being filled without clearing every slot at each fill.
    generation: u64,
    n_set: usize,
    entries: u64,
    bytes: usize,
}

impl EntryBuf {
    /// The buffers of a writer's schema; fields without setters get no slot (using one is an
    /// error naming the field and its type).
    pub fn new(schema: &[(String, TypeExpr)]) -> EntryBuf {
        let slots = schema
            .iter()
            .map(|(name, t)| {
                let (shape, values) = match t {
                    TypeExpr::Scalar(s, _) => (Shape::Scalar, values_of(*s)),
                    TypeExpr::String => (Shape::String, Values::U8(Vec::new())),
                    TypeExpr::Collection(_, item) => match item.as_ref() {
                        TypeExpr::Scalar(s, _) => (Shape::List, values_of(*s)),
                        _ => return None,
                    },
                    _ => return None,
                };
                Some(Slot { name: name.clone(), type_name: t.name(), shape, values, offsets: vec![0], bytes: Vec::new(), set_in: 0 })
            })
            .collect::<Vec<_>>();
        let all_settable = slots.iter().all(Option::is_some);
        EntryBuf { slots, names: schema.iter().map(|(n, t)| (n.clone(), t.name())).collect(), all_settable, generation: 1, n_set: 0, entries: 0, bytes: 0 }
    }

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

    #[inline]
    fn slot(&mut self, slot: u32) -> CResult<(&mut Slot, u64)> {
        let n = self.slots.len();
        match self.slots.get_mut(slot as usize) {
            Some(Some(s)) => Ok((s, self.generation)),
            Some(None) => Err(CError::schema(format!("field '{}' has no typed setter", self.names[slot as usize].0))),
            None => Err(CError::invalid(format!("field slot {slot} is past the {n} top-level fields"))),
        }
    }

    /// Counts a slot set for the first time in this entry (`newly`) and its bytes.
    fn count(&mut self, newly: bool, bytes: usize) {
        self.n_set += usize::from(newly);
        self.bytes += bytes;
    }

    /// Sets a field of a fundamental type.
    pub fn set<T: CValue>(&mut self, slot: u32, v: T) -> CResult<()> {
        let (s, g) = self.slot(slot)?;
        if s.shape != Shape::Scalar {
            return Err(mismatch(&s.name, &s.type_name, T::NAME));
        }
        let newly = put_scalar(s, g, v)?;
        self.count(newly, if newly { std::mem::size_of::<T>() } else { 0 });
        Ok(())
    }

    /// Sets a collection field to `items`.
    pub fn set_vec<T: CValue>(&mut self, slot: u32, items: &[T]) -> CResult<()> {
        let (s, g) = self.slot(slot)?;
        if s.shape != Shape::List {
            return Err(mismatch(&s.name, &s.type_name, &format!("vector of {}", T::NAME)));
        }
        let newly = put_items(s, g, items)?;
        self.count(newly, std::mem::size_of_val(items));
        Ok(())
    }

    /// Sets a scalar field to `items[0]` (exactly one item) or a collection field to `items`: what a
    /// `rntuple_value` of a fundamental C type gives, with one lookup of the slot.
    #[inline]
    pub fn set_items<T: CValue>(&mut self, slot: u32, items: &[T]) -> CResult<()> {
        let (s, g) = self.slot(slot)?;
        let newly = match (s.shape, items) {
            (Shape::Scalar, [x]) => put_scalar(s, g, *x)?,
            (Shape::Scalar, _) => return Err(CError::invalid(format!("slot {slot}: a scalar field takes len 1, got {}", items.len()))),
            (Shape::List, _) => put_items(s, g, items)?,
            (Shape::String, _) => return Err(mismatch(&s.name, &s.type_name, &format!("vector of {}", T::NAME))),
        };
        let bytes = if s.shape == Shape::Scalar && !newly { 0 } else { std::mem::size_of_val(items) };
        self.count(newly, bytes);
        Ok(())
    }

    /// Sets a `std::string` field (UTF-8 bytes).
    pub fn set_string(&mut self, slot: u32, text: &[u8]) -> CResult<()> {
        let (s, g) = self.slot(slot)?;
        if s.shape != Shape::String {
            return Err(mismatch(&s.name, &s.type_name, "string"));
        }
        std::str::from_utf8(text).map_err(|e| CError::invalid(format!("field '{}': the string is not valid UTF-8 ({e})", s.name)))?;
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
            let unset: Vec<&str> = self.slots.iter().flatten().filter(|s| s.set_in != g).map(|s| s.name.as_str()).collect();
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
        let mut fields = Vec::with_capacity(self.slots.len());
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.slots.len());
        for s in self.slots.iter_mut().flatten() {
            let mut offsets = || OffsetBuffer::new(ScalarBuffer::from(take_offsets(&mut s.offsets)));
            let (array, dt): (ArrayRef, DataType) = match s.shape {
                Shape::Scalar => s.values.take(),
                Shape::List => {
                    let offs = offsets();
                    let (values, dt) = s.values.take();
                    let item = Arc::new(Field::new("_0", dt, false));
                    (Arc::new(LargeListArray::try_new(item.clone(), offs, values, None)?), DataType::LargeList(item))
                }
                Shape::String => {
                    let offs = offsets();
                    let bytes = Buffer::from_vec(take_keeping_capacity(&mut s.bytes));
                    (Arc::new(LargeStringArray::try_new(offs, bytes, None)?), DataType::LargeUtf8)
                }
            };
            fields.push(Field::new(&s.name, dt, false));
            arrays.push(array);
        }
        self.entries = 0;
        self.bytes = 0;
        Ok(Some(RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?))
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

/// Sets a scalar slot's value for the entry (the last call wins); whether it was not set before.
#[inline]
fn put_scalar<T: CValue>(s: &mut Slot, g: u64, v: T) -> CResult<bool> {
    let Some(vals) = T::values(&mut s.values) else {
        return Err(mismatch_c(&s.name, &s.type_name, s.values.c_type(), T::NAME));
    };
    if s.set_in == g {
        if let Some(last) = vals.last_mut() {
            *last = v;
        }
        return Ok(false);
    }
    vals.push(v);
    s.set_in = g;
    Ok(true)
}

/// Sets a collection slot's items for the entry (the last call wins); whether it was not set before.
#[inline]
fn put_items<T: CValue>(s: &mut Slot, g: u64, items: &[T]) -> CResult<bool> {
    if T::values(&mut s.values).is_none() {
        return Err(mismatch_c(&s.name, &s.type_name, s.values.c_type(), T::NAME));
    }
    let newly = begin(s, g);
    let start = entry_start(s);
    let Some(vals) = T::values(&mut s.values) else { return Ok(newly) };
    vals.truncate(start); // set twice in one entry: the last call wins
                          // A few items (an event's muons, jets): `extend` from a slice iterator reserves once and copies
                          // without a call of memcpy.
    vals.extend(items.iter().copied());
    let end = vals.len();
    end_entry(s, end);
    Ok(newly)
}

fn mismatch(name: &str, type_name: &str, what: &str) -> CError {
    CError::schema(format!("field '{name}' is a '{type_name}', not a {what}"))
}

fn mismatch_c(name: &str, type_name: &str, c_type: &str, got: &str) -> CError {
    CError::schema(format!("field '{name}' is a '{type_name}' (C type {c_type}); a setter of {got} cannot set it"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use rntuple::logical::typename::parse;

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
