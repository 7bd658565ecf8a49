//! Entry-wise reading: a view reads one field entry by entry, as an event loop does (ROOT's
//! `RNTupleView`). Each page a view touches is decoded once and kept in the view's page cache
//! within a byte budget ([`View::set_cache_budget`]), so sequential loops decode every page once
//! and random access decodes a page again only after the budget evicted it.
//!
//! - `cursor`: what every cursor does (the `Cursor` trait), finding an entry's cluster.
//! - `pages`: the decoded pages of one column, least recently used evicted first.
//! - `scalar`: one value per entry (`f32`, `i64`, `bool`, a member of records `"rec.x"`).
//! - `items`: several values per entry (`Vec<f32>` of a `std::vector<float>` or of a member of
//!   records in a collection, `"Muon._0.pt"`), and strings.
//!
//! A view borrows or shares its reader (`&Reader`, `Arc<Reader>`); views of one reader may be
//! used on several threads at once, one view per thread (a view is `Send`, not shared).
//!
//! ```
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-view-{}.root", std::process::id()));
//! # let mut w = Writer::create(&path, "Events", &[("pt", "float"), ("jets", "std::vector<float>"), ("tag", "std::string")], WriteOptions::default())?;
//! # for i in 0..10 {
//! #     let jets = (0..i % 3).map(|k| Value::F32(k as f32)).collect();
//! #     w.fill(&Value::Record(vec![("pt".into(), Value::F32(i as f32)), ("jets".into(), Value::List(jets)), ("tag".into(), Value::String(format!("e{i}")))]))?;
//! # }
//! # w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let mut pt = r.view::<f32>("pt")?;
//! let mut jets = r.view::<Vec<f32>>("jets")?;
//! let mut tag = r.view::<String>("tag")?;
//! let mut sum = 0.0;
//! for i in 0..r.num_entries() {
//!     sum += pt.get(i)? + jets.get(i)?.iter().sum::<f32>();
//! }
//! assert_eq!(sum, 45.0 + 3.0 * 1.0);
//! assert_eq!(tag.get(7)?, "e7");
//! assert_eq!(jets.get(5)?, &[0.0, 1.0]);
//! assert!(r.view::<f64>("pt").is_err()); // a float is not viewed as a double
//! assert!(pt.get(10).is_err()); // past the end
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cursor;
mod items;
mod pages;
mod scalar;

pub use cursor::Cursor;
pub use items::{ItemsCursor, ItemsWindow, StringCursor};
pub use pages::DEFAULT_PAGE_BUDGET;
pub use scalar::ScalarCursor;

use crate::error::Result;
use crate::read::decode::bulk_element::BulkElement;
use crate::read::open::Reader;
use std::ops::Deref;

/// A type a field can be viewed as: the fundamental types (one value per entry), `Vec<T>` of
/// them (a collection, or a member of records in a collection) and `String`.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ViewType-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// use rntuple::read::view::{ItemsCursor, View};
/// // Vec<f32> views a std::vector<float> through an ItemsCursor<f32>.
/// let mut v: View<&rntuple::Reader, Vec<f32>> = r.view::<Vec<f32>>("v")?;
/// let _: &mut ItemsCursor<f32> = v.cursor();
/// assert_eq!(v.get(3)?.len(), 3);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ViewType {
    /// The cursor reading it.
    type Cursor: Cursor;
}

impl<T: BulkElement> ViewType for T {
    type Cursor = ScalarCursor<T>;
}

impl<T: BulkElement> ViewType for Vec<T> {
    type Cursor = ItemsCursor<T>;
}

impl ViewType for String {
    type Cursor = StringCursor;
}

/// One field read entry by entry (see the module documentation); `R` is the reader (`&Reader`
/// from [`Reader::view`], or an `Arc<Reader>` with [`View::new`]).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-View-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let r = std::sync::Arc::new(r);
/// let mut x = rntuple::read::view::View::<_, f32>::new(r.clone(), "x")?; // owns its reader
/// let t = std::thread::spawn(move || x.get(3));
/// assert_eq!(t.join().expect("the thread")?, 3.0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct View<R, T: ViewType> {
    reader: R,
    cursor: T::Cursor,
}

impl<R, T: ViewType> std::fmt::Debug for View<R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View").field("type", &std::any::type_name::<T>()).finish_non_exhaustive()
    }
}

impl<R: Deref<Target = Reader>, T: ViewType> View<R, T> {
    /// A view of the field at dotted path `path` of `reader`.
    pub fn new(reader: R, path: &str) -> Result<Self> {
        let cursor = T::Cursor::open(&reader, path)?;
        Ok(View { reader, cursor })
    }

    /// Entry `entry`: a value, or the entry's items and characters (lent until the next call).
    #[inline]
    pub fn get(&mut self, entry: u64) -> Result<<T::Cursor as Cursor>::Out<'_>> {
        self.cursor.get(&self.reader, entry)
    }

    /// Pages decoded so far: each page the view touched once, unless the budget evicted it.
    pub fn pages_decoded(&self) -> u64 {
        self.cursor.pages_decoded()
    }

    /// Bytes of decoded pages the view holds.
    pub fn cached_bytes(&self) -> usize {
        self.cursor.cached_bytes()
    }

    /// The bytes of decoded pages the view keeps ([`DEFAULT_PAGE_BUDGET`] by default; at least
    /// the page in use is kept whatever the budget).
    pub fn set_cache_budget(&mut self, bytes: usize) {
        self.cursor.set_budget(bytes);
    }

    /// The reader.
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The cursor, for calls of its own (a scalar view's page window).
    pub fn cursor(&mut self) -> &mut T::Cursor {
        &mut self.cursor
    }
}

impl Reader {
    /// A view of the field at dotted path `path` read as `T`: `f32`, `i64`, ... for one value per
    /// entry (a top-level field or a member of records, `"rec.x"`), `Vec<T>` for a collection of
    /// fundamental values or a member of records in a collection (`"Muon._0.pt"`), `String`. An
    /// error names the field and its type when it cannot read as `T`.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-Reader-view-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("n", "std::int32_t")], WriteOptions::default())?;
    /// # for i in 0..5 { w.fill(&Value::Record(vec![("n".into(), Value::Int(i))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let mut n = r.view::<i32>("n")?;
    /// assert_eq!((n.get(4)?, n.get(0)?), (4, 0));
    /// assert_eq!(n.pages_decoded(), 1);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn view<T: ViewType>(&self, path: &str) -> Result<View<&Reader, T>> {
        View::new(self, path)
    }
}

#[cfg(test)]
mod tests;
