//! The cursor of a view of a field with one value per entry: a fundamental type at the top level
//! or a member of records (`"rec.x"`), outside any collection.

use super::cursor::{cluster_of, Cursor};
use super::pages::{ColumnPages, DEFAULT_PAGE_BUDGET};
use crate::error::{Error, Result};
use crate::read::decode::bulk_element::BulkElement;
use crate::read::open::Reader;
use std::sync::Arc;

/// The page the last entry came from: its global entries `first..first + data.len()`, its
/// cluster and first element there.
#[derive(Debug)]
struct Window<T> {
    first: u64,
    data: Arc<Vec<T>>,
    k: usize,
    start: u64,
}

/// Reads the value of one entry of a field of element type `T` (see [`super::View`]).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ScalarCursor-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// use rntuple::read::view::{Cursor, ScalarCursor};
/// let mut c = ScalarCursor::<f32>::open(&r, "x")?;
/// let (first, values) = c.window(&r, 2)?; // the page holding entry 2
/// assert_eq!((first, values), (0, &[0.0, 1.0, 2.0, 3.0][..]));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ScalarCursor<T> {
    pages: ColumnPages<T>,
    cur: Option<Window<T>>,
    /// How many window changes in a row asked for the entry right after the window: from 2 on
    /// the reader goes in order (one such change in random access is chance) and the page it
    /// leaves is dropped.
    run: u32,
}

impl<T: BulkElement> ScalarCursor<T> {
    /// The values of the page holding `entry`, and the global entry of the first of them: the
    /// window a caller can index itself until it needs an entry outside it.
    pub fn window(&mut self, r: &Reader, entry: u64) -> Result<(u64, &[T])> {
        let hit = self.cur.as_ref().is_some_and(|w| entry >= w.first && entry - w.first < w.data.len() as u64);
        if !hit {
            let (k, local) = cluster_of(r, entry, &self.pages.col.what())?;
            let first = r.desc.clusters[k].first_entry;
            let (start, data) = self.pages.page(r, k, local)?;
            // The entry right after the window, again: reading in order, the page left is done with.
            let after = self.cur.as_ref().is_some_and(|w| w.first + w.data.len() as u64 == entry);
            self.run = if after { self.run.saturating_add(1) } else { 0 };
            let left = self.cur.take().filter(|_| self.run >= 2).map(|w| (w.k, w.start));
            self.cur = Some(Window { first: first + start, data, k, start });
            if let Some((lk, ls)) = left {
                self.pages.release(r, lk, ls)?;
            }
        }
        let w = self.cur.as_ref().ok_or_else(|| Error::internal("a view's window is missing"))?;
        Ok((w.first, &w.data))
    }
}

impl<T: BulkElement> Cursor for ScalarCursor<T> {
    type Out<'a> = T;

    fn open(r: &Reader, path: &str) -> Result<Self> {
        let col = r.bulk_column(path, 0)?;
        if col.is_offsets() || col.mult != Some(1) {
            return Err(Error::Invalid(format!(
                "field '{path}' ({}) does not hold one value per entry: view it as a collection (Vec<T>, std::vector<T>) or view its members",
                super::cursor::type_of(r, path)
            )));
        }
        Ok(ScalarCursor { pages: ColumnPages::new(col, DEFAULT_PAGE_BUDGET)?, cur: None, run: 0 })
    }

    #[inline]
    fn get(&mut self, r: &Reader, entry: u64) -> Result<T> {
        if let Some(w) = &self.cur
            && let Some(v) = entry.checked_sub(w.first).and_then(|i| w.data.get(i as usize))
        {
            return Ok(*v);
        }
        let (first, data) = self.window(r, entry)?;
        data.get((entry - first) as usize).copied().ok_or_else(|| Error::internal("an entry outside the window just loaded"))
    }

    fn pages_decoded(&self) -> u64 {
        self.pages.decoded
    }

    fn cached_bytes(&self) -> usize {
        self.pages.bytes()
    }

    fn set_budget(&mut self, bytes: usize) {
        self.pages.set_budget(bytes);
    }
}
