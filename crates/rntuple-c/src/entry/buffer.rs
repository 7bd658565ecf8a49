//! The entry buffer's data, shared by the setters (`entry.rs`) and the column hand-over
//! (`columns.rs`): [`EntryBuf`] and its slots, the typed columns of values (`Values`), the items
//! given for several entries (`Items`), the C types a setter writes (`CValue`), when a batch is
//! full, and the messages of a setter that does not fit its field.

use crate::status::CError;
use arrow_array::{ArrayRef, BooleanArray, PrimitiveArray};
use arrow_buffer::{BooleanBuffer, ScalarBuffer};
use arrow_schema::{DataType, Schema};
use rntuple::logical::typename::TypeExpr;
use rntuple::logical::Scalar;
use std::sync::Arc;

/// Entries gathered at most before they go to the writer as one batch.
pub(super) const ENTRY_BATCH: u64 = 4096;
/// Bytes of values gathered before they go to the writer, whatever the entry count: small enough
/// that the columns being filled stay in the core's cache (an output module's ~50 columns filled in
/// turn). Measured on an NanoAOD-like event of 50 fields (`examples/cpp/output_module`, one thread,
/// sample shares of `perf record`): gathering 4096 entries spent ~39 % of the time in
/// these buffers, 128-256 entries ~26-30 %.
pub(super) const ENTRY_BATCH_BYTES: usize = 64 << 10;

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
            pub(super) fn truncate(&mut self, n: usize) {
                match self {
                    Values::Bool(v) => v.truncate(n),
                    $(Values::$v(v) => v.truncate(n),)*
                }
            }
            /// The values as an Arrow array (their buffer moves into it, no copy); `spare` (the same
            /// variant: a buffer [`Values::reclaim`] took back from an earlier batch, emptied)
            /// takes their place, so that a batch allocates nothing once the buffers have grown.
            pub(super) fn take(&mut self, spare: &mut Values) -> (ArrayRef, DataType) {
                match self {
                    Values::Bool(v) => {
                        let bits = BooleanBuffer::collect_bool(v.len(), |i| v[i]);
                        v.clear();
                        (Arc::new(BooleanArray::new(bits, None)), DataType::Boolean)
                    }
                    $(Values::$v(v) => {
                        let next = match spare {
                            Values::$v(back) => std::mem::take(back),
                            _ => Vec::new(),
                        };
                        let full = std::mem::replace(v, next);
                        (Arc::new(PrimitiveArray::<arrow_array::types::$arrow>::new(ScalarBuffer::from(full), None)), DataType::$dt)
                    })*
                }
            }
            /// Takes back the buffer of `array` (made by [`Values::take`] and appended, so no one
            /// else holds it), emptied, as the next batch's buffer; a buffer shared still is left.
            pub(super) fn reclaim(&mut self, array: ArrayRef) {
                match self {
                    Values::Bool(_) => {}
                    $(Values::$v(v) => {
                        let buf = array.as_any().downcast_ref::<PrimitiveArray<arrow_array::types::$arrow>>().map(|p| p.values().inner().clone());
                        drop(array);
                        if let Some(Ok(mut back)) = buf.map(|b| b.into_vec::<$t>()) {
                            back.clear();
                            *v = back;
                        }
                    })*
                }
            }
            /// The C type's name, for messages.
            pub(super) fn c_type(&self) -> &'static str {
                match self {
                    Values::Bool(_) => "bool",
                    $(Values::$v(_) => $cname,)*
                }
            }
            /// Whether `items` are of this column's C type.
            pub(super) fn accepts(&self, items: &Items<'_>) -> bool {
                match (self, items) {
                    (Values::Bool(_), Items::Bool(_)) => true,
                    $((Values::$v(_), Items::$v(_)) => true,)*
                    _ => false,
                }
            }
            /// Appends `items[range]` (nothing when they are of another C type: see `accepts`).
            pub(super) fn extend_items(&mut self, items: &Items<'_>, range: std::ops::Range<usize>) {
                match (self, items) {
                    (Values::Bool(v), Items::Bool(x)) => v.extend_from_slice(&x[range]),
                    $((Values::$v(v), Items::$v(x)) => v.extend_from_slice(&x[range]),)*
                    _ => {}
                }
            }
        }

        /// Items of one C type given for several entries (`rntuple_entry_fill_columns`).
        #[derive(Debug, Clone, Copy)]
        pub enum Items<'a> {
            /// `bool`.
            Bool(&'a [bool]),
            $(#[doc = $cname] $v(&'a [$t]),)*
        }

        impl Items<'_> {
            /// How many items.
            pub(super) fn len(&self) -> usize {
                match self {
                    Items::Bool(x) => x.len(),
                    $(Items::$v(x) => x.len(),)*
                }
            }
            /// The items' C type, for messages.
            pub(super) fn c_type(&self) -> &'static str {
                match self {
                    Items::Bool(_) => "bool",
                    $(Items::$v(_) => $cname,)*
                }
            }
            /// Their size in bytes.
            pub(super) fn bytes(&self) -> usize {
                match self {
                    Items::Bool(x) => x.len(),
                    $(Items::$v(x) => std::mem::size_of_val(*x),)*
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

/// An empty column of values of scalar type `s`.
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
pub(super) enum Shape {
    Scalar,
    List,
    String,
}

/// One top-level field's gathered values: what a setter touches, kept small (one or two cache
/// lines) since an entry sets every slot in turn.
#[derive(Debug)]
pub(super) struct Slot {
    /// The entry being filled has a value for this field when this is the buffer's `generation`.
    pub(super) set_in: u64,
    pub(super) shape: Shape,
    pub(super) values: Values,
    /// Lists and strings: the end offsets of the entries so far, after a leading 0 (the entry being
    /// filled has its end here as soon as it is set).
    pub(super) offsets: Vec<i64>,
    /// Strings: their bytes.
    pub(super) bytes: Vec<u8>,
}

/// The buffers of a slot's last batch, taken back after it was appended (empty): the next batch's
/// buffers, so that filling allocates nothing once the buffers have grown.
#[derive(Debug)]
pub(super) struct Spare {
    pub(super) values: Values,
    pub(super) offsets: Vec<i64>,
    pub(super) bytes: Vec<u8>,
}

/// The entry being filled and the entries gathered, for a writer's schema.
#[derive(Debug)]
pub struct EntryBuf {
    pub(super) slots: Vec<Option<Slot>>,
    /// Per slot (by index), the buffers of the last batch.
    pub(super) spares: Vec<Spare>,
    /// Top-level fields in schema order, (name, type name): for messages.
    pub(super) names: Vec<(String, String)>,
    /// Whether every field has a setter (else entries cannot be filled with setters at all).
    pub(super) all_settable: bool,
    /// Counts entries begun (a fill or a batch taken starts the next): marks the slots set in the
    /// entry being filled without clearing every slot at each fill.
    pub(super) generation: u64,
    pub(super) n_set: usize,
    pub(super) entries: u64,
    pub(super) bytes: usize,
    /// The schema of the batches (the same for every batch), made at the first.
    pub(super) batch_schema: Option<Arc<Schema>>,
}

impl EntryBuf {
    /// The buffers of a writer's schema; fields without setters get no slot (using one is an
    /// error naming the field and its type).
    pub fn new(schema: &[(String, TypeExpr)]) -> EntryBuf {
        let mut spares = Vec::with_capacity(schema.len());
        let slots = schema
            .iter()
            .map(|(_, t)| {
                let (shape, scalar) = match t {
                    TypeExpr::Scalar(s, _) => (Shape::Scalar, Some(*s)),
                    TypeExpr::String => (Shape::String, Some(Scalar::U8)),
                    TypeExpr::Collection(_, item) => match item.as_ref() {
                        TypeExpr::Scalar(s, _) => (Shape::List, Some(*s)),
                        _ => (Shape::List, None),
                    },
                    _ => (Shape::Scalar, None),
                };
                spares.push(Spare { values: values_of(scalar.unwrap_or(Scalar::U8)), offsets: Vec::new(), bytes: Vec::new() });
                scalar.map(|s| Slot { set_in: 0, shape, values: values_of(s), offsets: vec![0], bytes: Vec::new() })
            })
            .collect::<Vec<_>>();
        let all_settable = slots.iter().all(Option::is_some);
        EntryBuf {
            slots,
            spares,
            names: schema.iter().map(|(n, t)| (n.clone(), t.name())).collect(),
            all_settable,
            generation: 1,
            n_set: 0,
            entries: 0,
            bytes: 0,
            batch_schema: None,
        }
    }
}

/// The message of a setter of the wrong kind (`what`) for slot `slot`.
pub(super) fn wrong_kind(names: &[(String, String)], slot: u32, what: &str) -> CError {
    let (name, type_name) = names.get(slot as usize).map_or(("?", "?"), |x| (x.0.as_str(), x.1.as_str()));
    mismatch(name, type_name, what)
}

/// The message of a setter of C type `got` for slot `slot`, whose values are of C type `c_type`.
pub(super) fn wrong_c_type(names: &[(String, String)], slot: u32, c_type: &str, got: &str) -> CError {
    let (name, type_name) = names.get(slot as usize).map_or(("?", "?"), |x| (x.0.as_str(), x.1.as_str()));
    mismatch_c(name, type_name, c_type, got)
}

fn mismatch(name: &str, type_name: &str, what: &str) -> CError {
    CError::schema(format!("field '{name}' is a '{type_name}', not a {what}"))
}

fn mismatch_c(name: &str, type_name: &str, c_type: &str, got: &str) -> CError {
    CError::schema(format!("field '{name}' is a '{type_name}' (C type {c_type}); a setter of {got} cannot set it"))
}
