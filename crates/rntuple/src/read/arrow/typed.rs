//! Typed reading: entries as Rust values. [`FromValue`] turns the value of a field into a Rust
//! type; it is implemented for the primitives, `String`, `Vec<T>`, arrays, `Option<T>` and tuples
//! (the types [`crate::write::FieldValue`] writes), and `#[derive(Record)]` implements it and
//! [`FromEntry`] for user structs, whose members are matched by name. The same struct therefore
//! writes and reads an RNTuple:
//!
//! ```
//! use rntuple::write::{Writer, WriteOptions};
//! #[derive(rntuple::Record, Debug, PartialEq)]
//! struct Muon { pt: f32, charge: i8 }
//! #[derive(rntuple::Record, Debug, PartialEq)]
//! struct Event { id: u64, muons: Vec<Muon>, tag: Option<String> }
//!
//! let path = std::env::temp_dir().join("rntuple-doc-typed-read.root");
//! let events = vec![
//!     Event { id: 1, muons: vec![Muon { pt: 25.5, charge: -1 }], tag: None },
//!     Event { id: 2, muons: vec![], tag: Some("good".into()) },
//! ];
//! let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default())?;
//! for e in &events {
//!     w.fill_typed(e)?;
//! }
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! assert_eq!(r.read_typed::<Event>(0, 2)?, events);
//!
//! // A struct may read some of the fields, here one member of the entry.
//! #[derive(rntuple::Record, Debug, PartialEq)]
//! struct Ids { id: u64 }
//! let ids: Vec<u64> = r.iter_typed::<Ids>(1).map(|e| e.map(|e| e.id)).collect::<Result<_, _>>()?;
//! assert_eq!(ids, [1, 2]);
//! # Ok::<(), rntuple::Error>(())
//! ```
//!
//! Values pass through the dynamic [`Value`] of each entry: convenient, not the fast path. For
//! speed, read columns with [`Reader::read_batch`].

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::read::open::Reader;
use crate::value::Value;

/// A Rust type that a field's value can be read into.
///
/// ```
/// use rntuple::read::FromValue;
/// use rntuple::Value;
/// let pts = Value::List(vec![Value::F32(1.5), Value::F32(2.0)]);
/// assert_eq!(Vec::<f32>::from_value(&pts, "pts")?, [1.5, 2.0]);
/// assert_eq!(Option::<String>::from_value(&Value::Null, "tag")?, None);
/// let e = u8::from_value(&Value::Int(300), "n").unwrap_err();
/// assert!(e.to_string().contains("field 'n'"), "{e}");
/// # Ok::<(), rntuple::Error>(())
/// ```
pub trait FromValue: Sized {
    /// Converts the value of the field at `path` (used in error messages).
    fn from_value(v: &Value, path: &str) -> Result<Self>;

    /// The value of a member of a class (`#[rntuple(class = ...)]`) that the class's version on
    /// disk lacks: default-constructed, as ROOT does (zero, `false`, empty, `None`, a class of
    /// defaults); by default, what a null reads as (`None` for an `Option`, else an error).
    ///
    /// ```
    /// use rntuple::read::FromValue;
    /// assert_eq!((f64::absent("x")?, Vec::<i32>::absent("v")?, String::absent("s")?), (0.0, vec![], String::new()));
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    fn absent(path: &str) -> Result<Self> {
        Self::from_value(&Value::Null, path)
    }
}

/// Default-constructed when absent (see [`FromValue::absent`]).
macro_rules! absent_default {
    () => {
        fn absent(_path: &str) -> Result<Self> {
            Ok(Self::default())
        }
    };
}

/// A Rust type whose values are entries: its members are top-level fields, matched by name.
///
/// ```
/// use rntuple::read::FromEntry;
/// use rntuple::Value;
/// #[derive(rntuple::Record, Debug, PartialEq)]
/// struct Event { id: u64, tag: Option<String> }
/// assert_eq!(Event::field_names(), ["id", "tag"]);
/// // A member the entry lacks reads as null: `None` for an `Option`, an error otherwise.
/// assert_eq!(Event::from_entry(&Value::Record(vec![("id".into(), Value::UInt(7))]))?, Event { id: 7, tag: None });
/// assert!(Event::from_entry(&Value::Record(vec![])).is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
pub trait FromEntry: Sized {
    /// The top-level fields the type reads.
    fn field_names() -> Vec<&'static str>;
    /// Converts one entry (a record of at least the fields of [`FromEntry::field_names`]).
    fn from_entry(v: &Value) -> Result<Self>;
}

fn kind(v: &Value) -> String {
    match v {
        Value::Null => "null (a missing field or an empty optional)".into(),
        Value::Bool(b) => format!("bool {b}"),
        Value::Int(i) => format!("integer {i}"),
        Value::UInt(u) => format!("unsigned integer {u}"),
        Value::F32(x) => format!("float {x}"),
        Value::F64(x) => format!("double {x}"),
        Value::String(_) => "a string".into(),
        Value::Bytes(_) => "raw bytes (a streamer field)".into(),
        Value::List(l) => format!("a collection of {}", l.len()),
        Value::Record(_) => "a record".into(),
    }
}

fn mismatch(path: &str, want: &str, v: &Value) -> Error {
    Error::Invalid(format!("field '{path}': cannot read {} as a Rust {want}", kind(v)))
}

/// The member `name` of a record value (an entry or a nested record).
///
/// ```
/// use rntuple::{Value, __private::member};
/// let v = Value::Record(vec![("x".into(), Value::F32(1.0))]);
/// assert!(matches!(member(&v, "x", "")?, Value::F32(_)));
/// assert!(matches!(member(&v, "y", "")?, Value::Null));
/// # Ok::<(), rntuple::Error>(())
/// ```
///
/// A member the record lacks reads as [`Value::Null`], so that it can fill an `Option`;
/// non-optional types then name the missing member.
pub fn member<'a>(v: &'a Value, name: &str, path: &str) -> Result<&'a Value> {
    const NULL: &Value = &Value::Null;
    match v {
        Value::Record(m) => Ok(m.iter().find(|(k, _)| k == name).map(|(_, x)| x).unwrap_or(NULL)),
        other => Err(mismatch(path, "struct", other)),
    }
}

/// The member `name` of a record value, `None` when the record lacks it (for class members
/// missing on disk, see [`FromValue::absent`]).
///
/// ```
/// use rntuple::{Value, __private::member_opt};
/// let v = Value::Record(vec![("x".into(), Value::F32(1.0))]);
/// assert!(member_opt(&v, "x", "")?.is_some() && member_opt(&v, "y", "")?.is_none());
/// # Ok::<(), rntuple::Error>(())
/// ```
pub fn member_opt<'a>(v: &'a Value, name: &str, path: &str) -> Result<Option<&'a Value>> {
    match v {
        Value::Record(m) => Ok(m.iter().find(|(k, _)| k == name).map(|(_, x)| x)),
        other => Err(mismatch(path, "struct", other)),
    }
}

/// The path of member `name` under `path`.
pub fn member_path(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// A scalar read by ROOT 6.40's conversion rules ([`crate::read::evolution`]): integers and bools
/// into any integral type (range-checked), `float` and `double` into each other.
fn convert(v: &Value, path: &str, to: Scalar, want: &str) -> Result<Value> {
    crate::read::evolution::scalar_value(path, v, to).unwrap_or_else(|| Err(mismatch(path, want, v)))
}

macro_rules! integer {
    ($($t:ty => $s:ident),+) => {$(
        impl FromValue for $t {
            /// Any integer or bool that fits (as ROOT reads integral fields from each other).
            fn from_value(v: &Value, path: &str) -> Result<Self> {
                let r = match convert(v, path, Scalar::$s, stringify!($t)).map_err(|e| match e {
                    Error::Invalid(m) if m.contains("out of range") => Error::Invalid(format!("field '{path}': {} does not fit a Rust {}", kind(v), stringify!($t))),
                    e => e,
                })? {
                    Value::Int(i) => <$t>::try_from(i).ok(),
                    Value::UInt(u) => <$t>::try_from(u).ok(),
                    _ => None,
                };
                r.ok_or_else(|| Error::Invalid(format!("field '{path}': {} does not fit a Rust {}", kind(v), stringify!($t))))
            }
            absent_default!();
        }
    )+};
}
integer!(i8 => I8, u8 => U8, i16 => I16, u16 => U16, i32 => I32, u32 => U32, i64 => I64, u64 => U64);

impl FromValue for bool {
    absent_default!();
    /// A bool, or an integer (non-zero is `true`, as ROOT reads an integer field as `bool`).
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match convert(v, path, Scalar::Bool, "bool")? {
            Value::Bool(b) => Ok(b),
            _ => Err(mismatch(path, "bool", v)),
        }
    }
}

impl FromValue for f32 {
    absent_default!();
    /// A float, or a double narrowed (ROOT reads a double field as `float`).
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match convert(v, path, Scalar::F32, "f32")? {
            Value::F32(x) => Ok(x),
            _ => Err(mismatch(path, "f32", v)),
        }
    }
}

impl FromValue for f64 {
    absent_default!();
    /// A double, or a float widened exactly (so an `f64` member reads float and Double32_t fields).
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match convert(v, path, Scalar::F64, "f64")? {
            Value::F64(x) => Ok(x),
            _ => Err(mismatch(path, "f64", v)),
        }
    }
}

impl FromValue for String {
    absent_default!();
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::String(s) => Ok(s.clone()),
            _ => Err(mismatch(path, "String", v)),
        }
    }
}

impl<T: FromValue> FromValue for Vec<T> {
    absent_default!();
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::List(items) => items.iter().map(|x| T::from_value(x, path)).collect(),
            _ => Err(mismatch(path, "Vec", v)),
        }
    }
}

impl<T: FromValue> FromValue for Option<T> {
    /// `std::optional` and `std::unique_ptr` (null or the value), and a collection of 0 or 1
    /// items: how an optional record is stored as an untyped collection (RNTupleImporter, uproot
    /// and `#[derive(Record)]` write `Option<struct>` that way, as ROOT has no optional of an
    /// untyped record).
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        match v {
            Value::Null => Ok(None),
            x => match T::from_value(x, path) {
                Ok(t) => Ok(Some(t)),
                Err(e) => match x {
                    Value::List(items) if items.is_empty() => Ok(None),
                    Value::List(items) if items.len() == 1 => T::from_value(&items[0], path).map(Some),
                    _ => Err(e),
                },
            },
        }
    }
}

impl<T: FromValue, const N: usize> FromValue for [T; N] {
    fn absent(path: &str) -> Result<Self> {
        let got: Vec<T> = (0..N).map(|_| T::absent(path)).collect::<Result<_>>()?;
        got.try_into().map_err(|_| Error::Internal(format!("field '{path}': array of {N}")))
    }
    fn from_value(v: &Value, path: &str) -> Result<Self> {
        let Value::List(items) = v else { return Err(mismatch(path, &format!("array of {N}"), v)) };
        let got: Vec<T> = items.iter().map(|x| T::from_value(x, path)).collect::<Result<_>>()?;
        got.try_into().map_err(|g: Vec<T>| Error::Invalid(format!("field '{path}': {} values for a Rust array of {N}", g.len())))
    }
}

/// A record of exactly the members `_0` .. `_{n-1}`, in order.
fn is_tuple_record(members: &[(String, Value)], n: usize) -> bool {
    members.len() == n && members.iter().enumerate().all(|(i, (k, _))| k.len() > 1 && k[1..] == i.to_string() && k.starts_with('_'))
}

macro_rules! tuple {
    ($n:expr; $($t:ident $i:tt),+) => {
        impl<$($t: FromValue),+> FromValue for ($($t,)+) {
            fn from_value(v: &Value, path: &str) -> Result<Self> {
                match v {
                    Value::List(items) if items.len() == $n => Ok(($($t::from_value(&items[$i], path)?,)+)),
                    // A tuple written as uproot writes tuples of records: members `_0`, `_1`, ...
                    Value::Record(m) if is_tuple_record(m, $n) => Ok(($($t::from_value(&m[$i].1, path)?,)+)),
                    _ => Err(mismatch(path, concat!("tuple of ", $n), v)),
                }
            }
        }
    };
}
tuple!(2; A 0, B 1);
tuple!(3; A 0, B 1, C 2);
tuple!(4; A 0, B 1, C 2, D 3);
tuple!(5; A 0, B 1, C 2, D 3, E 4);

/// Entries read `batch` at a time, for [`Reader::iter_typed`].
///
/// ```
/// #[derive(rntuple::Record, Debug, PartialEq)]
/// struct Hit { x: f32 }
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-TypedEntries-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let mut hits = r.iter_typed::<Hit>(2); // two entries per read
/// assert_eq!(hits.next().transpose()?, Some(Hit { x: 0.0 }));
/// let rest: Vec<Hit> = hits.collect::<rntuple::Result<_>>()?;
/// assert_eq!(rest, [Hit { x: 1.0 }, Hit { x: 2.0 }]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct TypedEntries<'r, T> {
    reader: &'r Reader,
    names: Vec<&'static str>,
    next: u64,
    end: u64,
    batch: u64,
    buffered: std::vec::IntoIter<Value>,
    /// An error to report as the next item (then the iteration ends).
    pending: Option<Error>,
    _t: std::marker::PhantomData<T>,
}

impl<T: FromEntry> Iterator for TypedEntries<'_, T> {
    type Item = Result<T>;
    fn next(&mut self) -> Option<Result<T>> {
        if let Some(e) = self.pending.take() {
            self.end = self.next;
            self.buffered = Vec::new().into_iter();
            return Some(Err(e));
        }
        if let Some(v) = self.buffered.next() {
            let r = T::from_entry(&v);
            if r.is_err() {
                self.end = self.next;
                self.buffered = Vec::new().into_iter();
            }
            return Some(r);
        }
        if self.next >= self.end {
            return None;
        }
        let stop = self.end.min(self.next.saturating_add(self.batch));
        match self.reader.values_of(&self.names, self.next, stop) {
            Ok(values) => {
                self.next = stop;
                self.buffered = values.into_iter();
                self.next()
            }
            Err(e) => {
                self.pending = Some(e);
                self.next()
            }
        }
    }
}

impl Reader {
    /// Entries `[start, stop)` as values of `T` (a `#[derive(Record)]` struct whose members are
    /// some of the top-level fields, matched by name). A member the RNTuple lacks is an error
    /// naming it (or `None` for an `Option` member); a value that does not fit its member names
    /// the field and what it holds.
    pub fn read_typed<T: FromEntry>(&self, start: u64, stop: u64) -> Result<Vec<T>> {
        self.values_of(&self.typed_fields::<T>(), start, stop)?.iter().map(T::from_entry).collect()
    }

    /// Every entry as a value of `T`, read `batch` entries at a time (memory stays bounded); the
    /// first error is the last item.
    pub fn iter_typed<T: FromEntry>(&self, batch: u64) -> TypedEntries<'_, T> {
        TypedEntries {
            reader: self,
            names: self.typed_fields::<T>(),
            next: 0,
            end: self.num_entries(),
            batch: batch.max(1),
            buffered: Vec::new().into_iter(),
            pending: None,
            _t: std::marker::PhantomData,
        }
    }

    /// The members of `T` this RNTuple has as top-level fields (the others read as null: an
    /// `Option` member takes it, any other names the missing field when converting).
    fn typed_fields<T: FromEntry>(&self) -> Vec<&'static str> {
        let have = self.fields();
        T::field_names().into_iter().filter(|n| have.iter().any(|f| f.name == *n)).collect()
    }

    /// Entries `[start, stop)` of the named fields as records; with no fields, empty records.
    fn values_of(&self, names: &[&str], start: u64, stop: u64) -> Result<Vec<Value>> {
        if names.is_empty() {
            let stop = stop.min(self.num_entries());
            return Ok((start..stop).map(|_| Value::Record(Vec::new())).collect());
        }
        self.read_values(Some(names), start, stop)
    }
}
