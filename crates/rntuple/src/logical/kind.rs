//! The logical layer: what a field is (its kind) from its descriptor, as ROOT maps C++ types
//! to fields and columns.

use crate::format::descriptor::{Descriptor, FieldDescriptor, Role};
use crate::primitives::column_type::ColumnType;

/// Fixed-width scalar types a leaf field holds in memory.
///
/// ```
/// use rntuple::logical::Scalar;
/// assert_eq!(Scalar::from_type_name("Long64_t"), Some(Scalar::I64));
/// assert_eq!(Scalar::I64.type_name(), "std::int64_t"); // ROOT's normalized name
/// assert_eq!(Scalar::from_type_name("Double32_t").map(Scalar::type_name), Some("double"));
/// assert_eq!(Scalar::from_type_name("std::string"), None);
/// ```
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Bool,
    /// `char`: signed 8-bit in memory.
    Char,
    /// `std::byte`: unsigned 8-bit.
    Byte,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
}

/// Every C++ spelling of a fundamental type that ROOT accepts, with its scalar; the first spelling
/// of each scalar is the name ROOT normalizes to. The one table of these aliases: the type-name
/// parser and the field classifier both look names up here.
pub const SCALAR_NAMES: &[(&str, Scalar)] = {
    use Scalar::*;
    &[
        ("bool", Bool),
        ("Bool_t", Bool),
        ("char", Char),
        ("Char_t", Char),
        ("std::byte", Byte),
        ("byte", Byte),
        ("std::int8_t", I8),
        ("int8_t", I8),
        ("signed char", I8),
        ("std::uint8_t", U8),
        ("uint8_t", U8),
        ("unsigned char", U8),
        ("UChar_t", U8),
        ("std::int16_t", I16),
        ("int16_t", I16),
        ("short", I16),
        ("Short_t", I16),
        ("std::uint16_t", U16),
        ("uint16_t", U16),
        ("unsigned short", U16),
        ("UShort_t", U16),
        ("std::int32_t", I32),
        ("int32_t", I32),
        ("int", I32),
        ("Int_t", I32),
        ("std::uint32_t", U32),
        ("uint32_t", U32),
        ("unsigned int", U32),
        ("unsigned", U32),
        ("UInt_t", U32),
        ("std::int64_t", I64),
        ("int64_t", I64),
        ("long", I64),
        ("long long", I64),
        ("Long64_t", I64),
        ("Long_t", I64),
        ("std::uint64_t", U64),
        ("uint64_t", U64),
        ("unsigned long", U64),
        ("unsigned long long", U64),
        ("ULong64_t", U64),
        ("ULong_t", U64),
        ("float", F32),
        ("Float_t", F32),
        ("double", F64),
        ("Double_t", F64),
        ("Double32_t", F64),
    ]
};

impl Scalar {
    /// From a C++ type name, in any spelling of `SCALAR_NAMES`.
    pub fn from_type_name(t: &str) -> Option<Scalar> {
        SCALAR_NAMES.iter().find(|(n, _)| *n == t).map(|&(_, s)| s)
    }

    /// ROOT's (normalized) name of the type: its first spelling in `SCALAR_NAMES`.
    pub fn type_name(self) -> &'static str {
        SCALAR_NAMES.iter().find(|&&(_, s)| s == self).map_or("", |&(n, _)| n)
    }

    /// The scalar a column type naturally decodes to (used when the type name is unknown).
    pub fn from_column(c: ColumnType) -> Option<Scalar> {
        use ColumnType::*;
        Some(match c {
            Bit => Scalar::Bool,
            Byte => Scalar::Byte,
            Char => Scalar::Char,
            Int8 => Scalar::I8,
            UInt8 => Scalar::U8,
            Int16 | SplitInt16 => Scalar::I16,
            UInt16 | SplitUInt16 => Scalar::U16,
            Int32 | SplitInt32 => Scalar::I32,
            UInt32 | SplitUInt32 => Scalar::U32,
            Int64 | SplitInt64 => Scalar::I64,
            UInt64 | SplitUInt64 => Scalar::U64,
            Real16 | Real32 | SplitReal32 | Real32Trunc | Real32Quant => Scalar::F32,
            Real64 | SplitReal64 => Scalar::F64,
            _ => return None,
        })
    }

    /// Whether `c` can be read into this scalar.
    pub fn accepts(self, c: ColumnType) -> bool {
        use ColumnType::*;
        match self {
            Scalar::F32 | Scalar::F64 => matches!(c, Real16 | Real32 | Real64 | SplitReal32 | SplitReal64 | Real32Trunc | Real32Quant),
            _ => matches!(
                c,
                Bit | Byte
                    | Char
                    | Int8
                    | UInt8
                    | Int16
                    | UInt16
                    | Int32
                    | UInt32
                    | Int64
                    | UInt64
                    | SplitInt16
                    | SplitUInt16
                    | SplitInt32
                    | SplitUInt32
                    | SplitInt64
                    | SplitUInt64
            ),
        }
    }
}

/// What a field is, for reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A scalar leaf with one column.
    Scalar(Scalar),
    /// `std::string`: offsets and chars.
    String,
    /// A variable-length collection (vector, RVec, set, untyped collection); one child.
    List,
    /// An untyped collection (empty type name) whose several children are the members of its
    /// items, as ROOT's importer writes leaf-count arrays and `#[derive(Record)]` writes vectors
    /// of structs: a list of records.
    RecordList,
    /// An associative collection (map, multimap, unordered maps); one child of pair type.
    Map,
    /// `std::optional` / `std::unique_ptr`: a collection of 0 or 1.
    Optional,
    /// `std::array<T,N>` (one child, N per entry).
    Array(u64),
    /// `std::bitset<N>`: one Bit column, N bits per entry.
    Bitset(u64),
    /// A record (class, struct, untyped record) whose members are its children.
    Record,
    /// `std::pair` / `std::tuple`: a record written as an array in JSON.
    Tuple,
    /// `std::variant`: Switch column and one child per alternative.
    Variant,
    /// A transparent wrapper around its only child (enum, `std::atomic`).
    Wrapper,
    /// `ROOT::RNTupleCardinality<T>`: per-entry size of a collection, as u32 or u64.
    Cardinality(bool),
    /// A ROOT streamer field: raw bytes per entry.
    Streamer,
}

/// Classifies a field, or says why it cannot be read.
pub fn classify(d: &Descriptor, f: &FieldDescriptor) -> Result<Kind, String> {
    let t = f.type_name.as_str();
    let col_type = |i: usize| -> Result<ColumnType, String> {
        let id = *f.columns.get(i).ok_or_else(|| format!("field '{}' ({t}) has no column {i}", f.name))?;
        let c = d.columns.get(id as usize).ok_or_else(|| format!("field '{}' refers to unknown column {id}", f.name))?;
        ColumnType::from_u16(c.column_type).ok_or_else(|| format!("unknown column type {:#x}", c.column_type))
    };
    for (i, _) in f.columns.iter().enumerate() {
        col_type(i)?;
    }
    let n_children = f.children.len();
    let strip = |p: &str| t.strip_prefix(p).is_some();
    match f.role {
        Role::Unknown(r) => Err(format!("unknown structural role {r}")),
        Role::Streamer => Ok(Kind::Streamer),
        Role::Variant => {
            if f.columns.is_empty() || col_type(0)? != ColumnType::Switch {
                return Err(format!("variant field '{}' without a Switch column", f.name));
            }
            Ok(Kind::Variant)
        }
        Role::Record => {
            if strip("std::pair<") || strip("std::tuple<") {
                Ok(Kind::Tuple)
            } else {
                Ok(Kind::Record)
            }
        }
        Role::Collection => {
            if f.columns.is_empty() || !col_type(0)?.is_index() {
                return Err(format!("collection field '{}' without an index column", f.name));
            }
            if n_children != 1 {
                if t.is_empty() {
                    return Ok(Kind::RecordList);
                }
                return Err(format!("collection field '{}' has {n_children} children, expected 1", f.name));
            }
            if ["std::map<", "std::unordered_map<", "std::multimap<", "std::unordered_multimap<"].iter().any(|p| strip(p)) {
                Ok(Kind::Map)
            } else if strip("std::optional<") || strip("std::unique_ptr<") {
                Ok(Kind::Optional)
            } else {
                Ok(Kind::List)
            }
        }
        Role::Leaf => {
            if t == "std::string" {
                if f.columns.len() < 2 || !col_type(0)?.is_index() {
                    return Err(format!("string field '{}' without offset and char columns", f.name));
                }
                return Ok(Kind::String);
            }
            if let Some(n) = f.repetition {
                if n == 0 || n > i32::MAX as u64 {
                    return Err(format!("fixed-size field '{}' of {n} elements per entry (supported: 1 to 2^31-1)", f.name));
                }
                if strip("std::bitset<") || (n_children == 0 && !f.columns.is_empty()) {
                    if f.columns.is_empty() || col_type(0)? != ColumnType::Bit {
                        return Err(format!("bitset field '{}' without a Bit column", f.name));
                    }
                    return Ok(Kind::Bitset(n));
                }
                if n_children != 1 {
                    return Err(format!("array field '{}' has {n_children} children, expected 1", f.name));
                }
                return Ok(Kind::Array(n));
            }
            if let Some(inner) = t.strip_prefix("ROOT::RNTupleCardinality<").or_else(|| t.strip_prefix("ROOT::Experimental::RNTupleCardinality<")) {
                if f.columns.is_empty() || !col_type(0)?.is_index() {
                    return Err(format!("cardinality field '{}' without an index column", f.name));
                }
                return Ok(Kind::Cardinality(inner.contains("64")));
            }
            if f.columns.is_empty() && n_children == 1 {
                return Ok(Kind::Wrapper);
            }
            if f.columns.is_empty() {
                return Err(format!("leaf field '{}' of type '{t}' has no columns", f.name));
            }
            let ct = col_type(0)?;
            let s = match Scalar::from_type_name(t) {
                Some(s) => s,
                None => Scalar::from_column(ct).ok_or_else(|| format!("type '{t}' with column {}", ct.name()))?,
            };
            if !s.accepts(ct) {
                return Err(format!("field '{}' of type '{t}' cannot be read from a {} column", f.name, ct.name()));
            }
            Ok(Kind::Scalar(s))
        }
    }
}
