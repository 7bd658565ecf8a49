//! Typed filling: Rust values written straight into the column buffers, without building dynamic
//! values. [`FieldValue`] maps a Rust type to a ROOT type and writes it; it is implemented for the
//! primitives, `String`, `Vec<T>`, arrays, `Option<T>` and tuples, and `#[derive(Record)]` (crate
//! `rntuple-derive`, re-exported as [`crate::Record`]) implements it and [`Entry`] for user
//! structs, as ROOT builds a model from a C++ class.
//!
//! ```
//! use rntuple::write::{Writer, WriteOptions};
//! #[derive(rntuple::Record)]
//! struct Muon { pt: f32, charge: i8 }
//! #[derive(rntuple::Record)]
//! struct Event { id: u64, muons: Vec<Muon>, tag: Option<String> }
//!
//! let path = std::env::temp_dir().join("rntuple-doc-typed.root");
//! let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default())?;
//! w.fill_typed(&Event { id: 1, muons: vec![Muon { pt: 25.5, charge: -1 }], tag: None })?;
//! w.fill_typed(&Event { id: 2, muons: vec![], tag: Some("good".into()) })?;
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let rows: Vec<String> = r.read_values(None, 0, 2)?.iter().map(|v| v.to_json().to_string()).collect();
//! assert_eq!(rows[0], r#"{"id":1,"muons":[{"pt":25.5,"charge":-1}],"tag":null}"#);
//! assert_eq!(rows[1], r#"{"id":2,"muons":[],"tag":"good"}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::logical::typename::TypeExpr;
pub use crate::primitives::element::ScalarSlice;
use crate::value::Value;
use crate::write::cluster::plan::Plan;

/// A Rust type that can be written as an RNTuple field.
///
/// ```
/// use rntuple::logical::typename::TypeExpr;
/// use rntuple::read::FromValue;
/// use rntuple::write::{FieldValue, FieldWriter, Writer, WriteOptions};
/// /// An energy in MeV, written as a `float` field.
/// #[derive(Debug, PartialEq)]
/// struct MeV(f32);
/// impl FieldValue for MeV {
///     fn type_expr() -> TypeExpr { f32::type_expr() }
///     fn put(&self, w: FieldWriter<'_>) -> rntuple::Result<()> { self.0.put(w) }
/// }
/// impl FromValue for MeV {
///     fn from_value(v: &rntuple::Value, path: &str) -> rntuple::Result<Self> { f32::from_value(v, path).map(MeV) }
/// }
/// #[derive(rntuple::Record, Debug, PartialEq)]
/// struct Event { energy: MeV, hits: Vec<MeV> }
/// let path = std::env::temp_dir().join(format!("rntuple-doc-FieldValue-{}.root", std::process::id()));
/// let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default())?;
/// w.fill_typed(&Event { energy: MeV(125.0), hits: vec![MeV(1.5), MeV(2.5)] })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.display_type(r.fields()[1].id), "std::vector<float>");
/// assert_eq!(r.read_typed::<Event>(0, 1)?, [Event { energy: MeV(125.0), hits: vec![MeV(1.5), MeV(2.5)] }]);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait FieldValue {
    /// The field's type (a ROOT type, or an untyped record for derived structs).
    fn type_expr() -> TypeExpr;
    /// Writes one value.
    fn put(&self, w: FieldWriter<'_>) -> Result<()>;
    /// Writes consecutive values (vector items, array elements); primitives write them in bulk.
    fn put_slice(items: &[Self], mut w: FieldWriter<'_>) -> Result<()>
    where
        Self: Sized,
    {
        for it in items {
            it.put(w.reborrow())?;
        }
        Ok(())
    }
}

/// A Rust type whose values are entries: its members are the top-level fields.
///
/// `#[derive(Record)]` implements it; by hand:
///
/// ```
/// use rntuple::logical::typename::{parse, TypeExpr};
/// use rntuple::write::{Entry, RecordWriter, Writer, WriteOptions};
/// struct Hit { layer: u8, energy: f64 }
/// impl Entry for Hit {
///     fn fields() -> Vec<(String, TypeExpr)> {
///         vec![("layer".into(), parse("std::uint8_t").unwrap()), ("energy".into(), parse("double").unwrap())]
///     }
///     fn put_fields(&self, w: &mut RecordWriter<'_>) -> rntuple::Result<()> {
///         w.member(&self.layer)?;
///         w.member(&self.energy)
///     }
/// }
/// let path = std::env::temp_dir().join(format!("rntuple-doc-Entry-{}.root", std::process::id()));
/// let mut w = Writer::create_typed::<Hit>(&path, "Hits", WriteOptions::default())?;
/// w.fill_typed(&Hit { layer: 3, energy: 0.25 })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Hits")?;
/// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"layer":3,"energy":0.25}"#);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Entry: 'static {
    /// The top-level fields: (name, type).
    fn fields() -> Vec<(String, TypeExpr)>;
    /// Writes the members in the order of [`Entry::fields`].
    fn put_fields(&self, w: &mut RecordWriter<'_>) -> Result<()>;
    /// The top-level fields written as streamer fields (ROOT's `RStreamerField`; members marked
    /// `#[rntuple(streamer)]` by `#[derive(Record)]`); none by default.
    ///
    /// ```
    /// use rntuple::write::{Entry, Writer, WriteOptions};
    /// #[derive(rntuple::Record)]
    /// #[rntuple(class = "Hit")]
    /// struct Hit { x: f32, tags: Vec<i32> }
    /// #[derive(rntuple::Record)]
    /// struct Event { #[rntuple(streamer)] hit: Hit, run: u32 }
    /// assert_eq!(Event::streamer_fields(), vec!["hit".to_string()]);
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-streamer_fields-{}.root", std::process::id()));
    /// let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default())?;
    /// w.fill_typed(&Event { hit: Hit { x: 1.5, tags: vec![3, 4] }, run: 7 })?;
    /// w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.descriptor().fields[0].role, rntuple::format::descriptor::Role::Streamer);
    /// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"hit":{"x":1.5,"tags":[3,4]},"run":7}"#);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    fn streamer_fields() -> Vec<String> {
        Vec::new()
    }
}

/// Column access for typed filling (implemented by the cluster builder in `fill_typed.rs`).
pub(crate) trait TypedCols {
    /// Appends values to a column of their type (an error when the column holds another type).
    fn extend_scalars(&mut self, col: usize, v: ScalarSlice<'_>) -> Result<()>;
    /// Elements of a column in the current cluster.
    fn col_len(&self, col: usize) -> u64;
    /// Appends a collection's end offset to its index column.
    fn push_index(&mut self, col: usize, end: u64) -> Result<()>;
    /// Elements per plan node in the current cluster.
    fn counts(&mut self) -> &mut [u64];
}

/// Writes one value into the columns of a field.
///
/// ```
/// use rntuple::logical::typename::{parse, TypeExpr};
/// use rntuple::write::{FieldValue, FieldWriter, ScalarSlice, Writer, WriteOptions};
/// # use rntuple::read::FromValue;
/// /// Samples written as a `std::vector<float>`, copied in bulk.
/// struct Samples(Vec<f32>);
/// impl FieldValue for Samples {
///     fn type_expr() -> TypeExpr { parse("std::vector<float>").unwrap() }
///     fn put(&self, w: FieldWriter<'_>) -> rntuple::Result<()> {
///         w.collection(|items| items.scalars(ScalarSlice::F32(&self.0)))
///     }
/// }
/// # impl FromValue for Samples {
/// #     fn from_value(v: &rntuple::Value, path: &str) -> rntuple::Result<Self> { Vec::from_value(v, path).map(Samples) }
/// # }
/// #[derive(rntuple::Record)]
/// struct Trace { samples: Samples }
/// let path = std::env::temp_dir().join(format!("rntuple-doc-FieldWriter-{}.root", std::process::id()));
/// let mut w = Writer::create_typed::<Trace>(&path, "Traces", WriteOptions::default())?;
/// w.fill_typed(&Trace { samples: Samples(vec![0.5, 1.0, 0.75]) })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Traces")?;
/// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"samples":[0.5,1.0,0.75]}"#);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FieldWriter<'a> {
    cols: &'a mut dyn TypedCols,
    plan: &'a Plan,
    path: &'a str,
    /// Inside the object of a streamer field: the values go here, in order, not to columns.
    capture: Option<&'a mut Vec<Value>>,
}

fn mismatch(path: &str, want: &str, plan: &Plan) -> Error {
    Error::Invalid(format!("field '{path}': a Rust {want} does not fit this field ({})", plan.describe()))
}

impl<'a> FieldWriter<'a> {
    /// A writer for the same field, for writing several values in turn.
    pub fn reborrow(&mut self) -> FieldWriter<'_> {
        FieldWriter { cols: &mut *self.cols, plan: self.plan, path: self.path, capture: self.capture.as_deref_mut() }
    }

    /// Writes primitive values.
    pub fn scalars(self, v: ScalarSlice<'_>) -> Result<()> {
        if let Some(c) = self.capture {
            c.extend(slice_values(v));
            return Ok(());
        }
        match self.plan {
            Plan::Scalar { col, counter, .. } => {
                self.cols
                    .extend_scalars(*col, v)
                    .map_err(|_| mismatch(self.path, &format!("{v:?}").chars().take_while(|c| *c != '(').collect::<String>(), self.plan))?;
                self.cols.counts()[*counter] += v.len() as u64;
                Ok(())
            }
            Plan::Wrapper { child, counter } => {
                self.cols.counts()[*counter] += v.len() as u64;
                FieldWriter { cols: self.cols, plan: child, path: self.path, capture: None }.scalars(v)
            }
            p => Err(mismatch(self.path, "primitive", p)),
        }
    }

    /// Writes a string.
    pub fn string(self, s: &str) -> Result<()> {
        if let Some(c) = self.capture {
            c.push(Value::String(s.to_string()));
            return Ok(());
        }
        let Plan::String { idx, chars, counter } = self.plan else { return Err(mismatch(self.path, "String", self.plan)) };
        self.cols.extend_scalars(*chars, ScalarSlice::U8(s.as_bytes()))?;
        let end = self.cols.col_len(*chars);
        self.cols.push_index(*idx, end)?;
        self.cols.counts()[*counter] += 1;
        Ok(())
    }

    /// Writes a collection (vector, optional): `items` writes its items through the writer of
    /// the item field.
    pub fn collection(self, items: impl FnOnce(FieldWriter<'_>) -> Result<()>) -> Result<()> {
        if let Some(c) = self.capture {
            let mut inner = Vec::new();
            items(FieldWriter { cols: self.cols, plan: self.plan, path: self.path, capture: Some(&mut inner) })?;
            c.push(Value::List(inner));
            return Ok(());
        }
        let Plan::Collection { idx, child, counter, .. } = self.plan else { return Err(mismatch(self.path, "collection", self.plan)) };
        items(FieldWriter { cols: &mut *self.cols, plan: child, path: self.path, capture: None })?;
        let end = self.cols.counts()[child.counter()];
        self.cols.push_index(*idx, end)?;
        self.cols.counts()[*counter] += 1;
        Ok(())
    }

    /// Writes a fixed-size array.
    pub fn array<T: FieldValue>(self, items: &[T]) -> Result<()> {
        if let Some(c) = self.capture {
            let mut inner = Vec::new();
            T::put_slice(items, FieldWriter { cols: self.cols, plan: self.plan, path: self.path, capture: Some(&mut inner) })?;
            c.push(Value::List(inner));
            return Ok(());
        }
        let Plan::Array { n, child, counter } = self.plan else { return Err(mismatch(self.path, "array", self.plan)) };
        if items.len() as u64 != *n {
            return Err(Error::Invalid(format!("field '{}': {} values for an array of {n}", self.path, items.len())));
        }
        T::put_slice(items, FieldWriter { cols: &mut *self.cols, plan: child, path: self.path, capture: None })?;
        self.cols.counts()[*counter] += 1;
        Ok(())
    }

    /// Starts a record (struct, pair, tuple): write its members in order with
    /// [`RecordWriter::member`], then call [`RecordWriter::finish`].
    pub fn record(self) -> Result<RecordWriter<'a>> {
        let (plan, path) = (self.plan, self.path);
        if let Some(c) = self.capture {
            return Ok(RecordWriter { cols: self.cols, children: &[], next: 0, path, capture: Capture::Into(plan, c, Vec::new()) });
        }
        if let Plan::Streamed { .. } = plan {
            // A streamer field's object: its members are collected, then streamed at `finish`.
            return Ok(RecordWriter { cols: self.cols, children: &[], next: 0, path, capture: Capture::Root(plan, Vec::new()) });
        }
        let Plan::Record { children, counter, .. } = plan else { return Err(mismatch(path, "record", plan)) };
        self.cols.counts()[*counter] += 1;
        Ok(RecordWriter { cols: self.cols, children, next: 0, path, capture: Capture::None })
    }
}

/// Writes the members of a record (or the top-level fields of an entry) in order.
///
/// ```
/// use rntuple::logical::typename::{parse, TypeExpr};
/// use rntuple::write::{FieldValue, FieldWriter, Writer, WriteOptions};
/// # use rntuple::read::FromValue;
/// /// A point written as a `std::pair<float,float>`.
/// struct Point { x: f32, y: f32 }
/// impl FieldValue for Point {
///     fn type_expr() -> TypeExpr { parse("std::pair<float,float>").unwrap() }
///     fn put(&self, w: FieldWriter<'_>) -> rntuple::Result<()> {
///         let mut r = w.record()?;
///         r.member(&self.x)?;
///         r.member(&self.y)?;
///         r.finish() // an error had a member been left out
///     }
/// }
/// # impl FromValue for Point {
/// #     fn from_value(v: &rntuple::Value, path: &str) -> rntuple::Result<Self> { <(f32, f32)>::from_value(v, path).map(|(x, y)| Point { x, y }) }
/// # }
/// #[derive(rntuple::Record)]
/// struct Event { p: Point }
/// let path = std::env::temp_dir().join(format!("rntuple-doc-RecordWriter-{}.root", std::process::id()));
/// let mut w = Writer::create_typed::<Event>(&path, "Events", WriteOptions::default())?;
/// w.fill_typed(&Event { p: Point { x: 1.0, y: 2.5 } })?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"p":[1.0,2.5]}"#);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordWriter<'a> {
    cols: &'a mut dyn TypedCols,
    children: &'a [Plan],
    next: usize,
    path: &'a str,
    capture: Capture<'a>,
}

/// Where a record's members go: to columns, or (in a streamer field's object) into a list of
/// values, which `finish` appends to the enclosing value (`Into`) or streams into the streamer
/// field's columns (`Root`, its plan).
enum Capture<'a> {
    None,
    Into(&'a Plan, &'a mut Vec<Value>, Vec<Value>),
    Root(&'a Plan, Vec<Value>),
}

impl<'a> RecordWriter<'a> {
    pub(crate) fn top(cols: &'a mut dyn TypedCols, children: &'a [Plan]) -> Self {
        RecordWriter { cols, children, next: 0, path: "", capture: Capture::None }
    }

    /// Writes the next member.
    pub fn member<T: FieldValue>(&mut self, v: &T) -> Result<()> {
        if let Capture::Into(plan, _, items) | Capture::Root(plan, items) = &mut self.capture {
            return v.put(FieldWriter { cols: &mut *self.cols, plan, path: self.path, capture: Some(items) });
        }
        let plan = self
            .children
            .get(self.next)
            .ok_or_else(|| Error::Invalid(format!("field '{}': more members than the record has ({})", self.path, self.children.len())))?;
        self.next += 1;
        v.put(FieldWriter { cols: &mut *self.cols, plan, path: self.path, capture: None })
    }

    /// Checks that every member was written.
    pub fn finish(self) -> Result<()> {
        match self.capture {
            Capture::None => {}
            Capture::Into(_, out, items) => {
                out.push(Value::List(items));
                return Ok(());
            }
            Capture::Root(plan, items) => {
                let Plan::Streamed { idx, bytes, class, counter } = plan else { return Err(Error::internal("a streamed record without its plan")) };
                let blob = crate::write::streamer::streamed_fields::encode(class, &Value::List(items), self.path)?;
                self.cols.extend_scalars(*bytes, ScalarSlice::U8(&blob))?;
                let end = self.cols.col_len(*bytes);
                self.cols.push_index(*idx, end)?;
                self.cols.counts()[*counter] += 1;
                return Ok(());
            }
        }
        if self.next != self.children.len() {
            return Err(Error::Invalid(format!("field '{}': {} of {} members written", self.path, self.next, self.children.len())));
        }
        Ok(())
    }
}

macro_rules! primitive_field_values {
    ($($v:ident $t:ident $cpp:literal $kind:ident,)*) => {$(
        impl FieldValue for $t {
            fn type_expr() -> TypeExpr {
                TypeExpr::Scalar(Scalar::$v, None)
            }
            fn put(&self, w: FieldWriter<'_>) -> Result<()> {
                w.scalars(ScalarSlice::$v(std::slice::from_ref(self)))
            }
            fn put_slice(items: &[Self], w: FieldWriter<'_>) -> Result<()> {
                w.scalars(ScalarSlice::$v(items))
            }
        }
    )*};
}
crate::primitives::element::primitive_elements!(primitive_field_values);

macro_rules! slice_values {
    ($($v:ident $t:ident $cpp:literal $kind:ident,)*) => {
        /// The values of a slice (collected for a streamer field's object).
        fn slice_values(v: ScalarSlice<'_>) -> Vec<Value> {
            match v {
                $(ScalarSlice::$v(x) => x.iter().map(|&y| slice_values!(@ $kind, y)).collect(),)*
            }
        }
    };
    (@ boolean, $y:expr) => { Value::Bool($y) };
    (@ signed, $y:expr) => { Value::Int($y as i64) };
    (@ unsigned, $y:expr) => { Value::UInt($y as u64) };
    (@ float, $y:expr) => { Value::F64($y as f64) };
}
crate::primitives::element::primitive_elements!(slice_values);

impl FieldValue for String {
    fn type_expr() -> TypeExpr {
        TypeExpr::String
    }
    fn put(&self, w: FieldWriter<'_>) -> Result<()> {
        w.string(self)
    }
}

impl<T: FieldValue> FieldValue for Vec<T> {
    fn type_expr() -> TypeExpr {
        TypeExpr::Collection("std::vector".into(), Box::new(T::type_expr()))
    }
    fn put(&self, w: FieldWriter<'_>) -> Result<()> {
        w.collection(|c| T::put_slice(self, c))
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn type_expr() -> TypeExpr {
        TypeExpr::Optional("std::optional".into(), Box::new(T::type_expr()))
    }
    fn put(&self, w: FieldWriter<'_>) -> Result<()> {
        w.collection(|c| match self {
            Some(v) => v.put(c),
            None => Ok(()),
        })
    }
}

impl<T: FieldValue, const N: usize> FieldValue for [T; N] {
    fn type_expr() -> TypeExpr {
        TypeExpr::Array(Box::new(T::type_expr()), N as u64)
    }
    fn put(&self, w: FieldWriter<'_>) -> Result<()> {
        w.array(self)
    }
}

macro_rules! tuple {
    ($name:expr; $($t:ident $i:tt),+) => {
        impl<$($t: FieldValue),+> FieldValue for ($($t,)+) {
            fn type_expr() -> TypeExpr {
                TypeExpr::Tuple($name.into(), vec![$($t::type_expr()),+])
            }
            fn put(&self, w: FieldWriter<'_>) -> Result<()> {
                let mut r = w.record()?;
                $(r.member(&self.$i)?;)+
                r.finish()
            }
        }
    };
}
tuple!("std::pair"; A 0, B 1);
tuple!("std::tuple"; A 0, B 1, C 2);
tuple!("std::tuple"; A 0, B 1, C 2, D 3);
tuple!("std::tuple"; A 0, B 1, C 2, D 3, E 4);
