//! The cursors of views of fields with several values per entry: a collection of a fundamental
//! type (`std::vector<float>`, `ROOT::RVec<int>`), a member of a collection of records
//! (`"Muon._0.pt"`: the collection's counts, the member's values) and a string's characters.
//!
//! The offsets page holding the entry gives its item range (the end of the entry before it, on
//! the page before when the entry is a page's first); items within one page are lent from the
//! decoded page, items spread over several pages are copied into the cursor's buffer.

use super::cursor::{cluster_of, type_of, Cursor};
use super::pages::{ColumnPages, DEFAULT_PAGE_BUDGET};
use crate::error::{Error, Result};
use crate::format::descriptor::Role;
use crate::read::decode::bulk::BulkColumn;
use crate::read::decode::bulk_element::BulkElement;
use crate::read::open::Reader;
use std::sync::Arc;

/// An offsets page: the global entries `first..first + ends.len()` of cluster `k`, whose items
/// start at item `base` of the cluster.
#[derive(Debug)]
struct Window {
    k: usize,
    first: u64,
    /// The page's first element in the cluster.
    start: u64,
    base: u64,
    ends: Arc<Vec<u64>>,
}

/// An offsets page and its entries' items (see [`ItemsCursor::window`]).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ItemsWindow-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let mut v = r.view::<Vec<f32>>("v")?;
/// let w = v.cursor().window(&r, 0)?;
/// let entry = |i: usize| &w.items[(if i == 0 { w.base } else { w.ends[i - 1] } - w.base) as usize..(w.ends[i] - w.base) as usize];
/// assert_eq!((w.first, entry(0), entry(3)), (0, &[][..], &[1.5; 3][..]));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ItemsWindow<'a, T> {
    /// The global entry of the first entry.
    pub first: u64,
    /// The entries' cluster-local end offsets.
    pub ends: &'a [u64],
    /// Where the first entry's items start in the cluster.
    pub base: u64,
    /// The items `base..ends[ends.len() - 1]` of the cluster.
    pub items: &'a [T],
}

/// Reads the items of one entry of a collection whose items are of element type `T` (see
/// [`super::View`]).
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ItemsCursor-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// use rntuple::read::view::{Cursor, ItemsCursor};
/// let mut c = ItemsCursor::<f32>::open(&r, "v")?;
/// assert_eq!(c.items(&r, 2)?, &[1.5, 1.5]);
/// let w = c.window(&r, 1)?; // entries 1, 2, 3 and their items
/// assert_eq!((w.first, w.ends, w.base, w.items.len()), (1, &[1, 3, 6][..], 0, 6));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ItemsCursor<T> {
    offsets: ColumnPages<u64>,
    items: ColumnPages<T>,
    cur: Option<Window>,
    /// The item page lent last: cluster, its first item, its values.
    page: Option<(usize, u64, Arc<Vec<T>>)>,
    /// The items of an entry spread over pages.
    spread: Vec<T>,
    /// The entry a reader going in order asks for next, and how many calls in a row asked for
    /// it: from 2 on the reader goes in order (once in random access is chance) and the pages it
    /// leaves are dropped.
    next: u64,
    run: u32,
}

impl<T: BulkElement> ItemsCursor<T> {
    /// The cursor of a collection given its offsets column and its items' column.
    pub(crate) fn new(offsets: BulkColumn, items: BulkColumn) -> Result<ItemsCursor<T>> {
        Ok(ItemsCursor {
            offsets: ColumnPages::new(offsets, DEFAULT_PAGE_BUDGET)?,
            items: ColumnPages::new(items, DEFAULT_PAGE_BUDGET)?,
            cur: None,
            page: None,
            spread: Vec::new(),
            next: u64::MAX,
            run: 0,
        })
    }

    /// The cluster of `entry` and its items' range there.
    #[inline]
    fn range(&mut self, r: &Reader, entry: u64) -> Result<(usize, u64, u64)> {
        if let Some(w) = &self.cur
            && let Some(i) = entry.checked_sub(w.first).map(|i| i as usize).filter(|&i| i < w.ends.len())
        {
            let lo = if i == 0 { w.base } else { w.ends[i - 1] };
            return Ok((w.k, lo, w.ends[i]));
        }
        let what = self.offsets.col.what();
        let (k, local) = cluster_of(r, entry, &what)?;
        let (start, ends) = self.offsets.page(r, k, local)?;
        let base = match &self.cur {
            _ if start == 0 => 0,
            // The page before, just read in order: its last offset.
            Some(w) if w.k == k && w.start + w.ends.len() as u64 == start => w.ends.last().copied().unwrap_or(w.base),
            _ => {
                let (s, prev) = self.offsets.page(r, k, start - 1)?;
                let b = prev.get((start - 1 - s) as usize).copied().ok_or_else(|| Error::internal("the offset before a page outside its page"))?;
                self.offsets.page(r, k, local)?;
                b
            }
        };
        // Within a page the bulk read checked the offsets ascend; across pages, here.
        if ends.first().is_some_and(|&e| e < base) {
            return Err(Error::corrupt(format!("{what}: offsets decrease at element {start} of cluster {k}"), 0));
        }
        let first = r.desc.clusters[k].first_entry + start;
        let left = self.cur.take().filter(|w| self.run >= 2 && w.first + w.ends.len() as u64 == entry).map(|w| (w.k, w.start));
        self.cur = Some(Window { k, first, start, base, ends });
        if let Some((lk, ls)) = left {
            self.offsets.release(r, lk, ls)?;
        }
        let w = self.cur.as_ref().ok_or_else(|| Error::internal("a view's window is missing"))?;
        let i = (entry - w.first) as usize;
        let lo = if i == 0 { w.base } else { w.ends[i - 1] };
        Ok((k, lo, w.ends[i]))
    }

    /// Whether `entry` continues a run of calls in order (counting it).
    fn in_order(&mut self, entry: u64) -> bool {
        self.run = if entry == self.next { self.run.saturating_add(1) } else { 0 };
        self.run >= 2
    }

    /// Lends item page `(k, s, d)` from now on; reading in order, the page it replaces is dropped
    /// when it comes before it (the page before in the cluster, or a page of an earlier cluster).
    fn lend(&mut self, r: &Reader, k: usize, s: u64, d: Arc<Vec<T>>, in_order: bool) -> Result<()> {
        let old = self.page.replace((k, s, d));
        if let Some((ok, os, od)) = old
            && in_order
            && (ok < k || (ok == k && os + od.len() as u64 == s))
        {
            drop(od);
            self.items.release(r, ok, os)?;
        }
        Ok(())
    }

    /// The items of `entry`.
    #[inline]
    pub fn items(&mut self, r: &Reader, entry: u64) -> Result<&[T]> {
        let in_order = self.in_order(entry);
        let (k, lo, hi) = self.range(r, entry)?;
        self.next = entry + 1;
        if lo == hi {
            return Ok(&[]);
        }
        let lent = self.page.as_ref().is_some_and(|(pk, s, d)| *pk == k && lo >= *s && hi <= s + d.len() as u64);
        if !lent {
            let (s, d) = self.items.page(r, k, lo)?;
            if hi > s + d.len() as u64 {
                self.spread.clear();
                self.items.extend(r, k, lo..hi, &mut self.spread)?;
                return Ok(&self.spread);
            }
            self.lend(r, k, s, d, in_order)?;
        }
        let (_, s, d) = self.page.as_ref().ok_or_else(|| Error::internal("a view's item page is missing"))?;
        d.get((lo - s) as usize..(hi - s) as usize).ok_or_else(|| Error::internal("items outside the page lent"))
    }

    /// Entries from `entry` on whose items lie in one decoded page, for callers indexing them
    /// themselves (the C++ views): entries `first..first + ends.len()` (`first` is `entry`),
    /// entry `first + i` holding items `[ends[i - 1], ends[i])` (`[base, ends[0])` for the first)
    /// of the cluster, which are `items[x - base]`. The items are lent from the page (an entry
    /// whose items span pages comes alone, its items copied), the window ends where the entries'
    /// offsets page or items page ends. Lent until the next call.
    pub fn window(&mut self, r: &Reader, entry: u64) -> Result<ItemsWindow<'_, T>> {
        let in_order = self.in_order(entry);
        let (k, lo, hi) = self.range(r, entry)?;
        let i = {
            let w = self.cur.as_ref().ok_or_else(|| Error::internal("a view's window is missing"))?;
            (entry - w.first) as usize
        };
        // The entries from `entry` on whose items end by `end`.
        let upto = |cur: &Option<Window>, end: u64| -> Result<usize> {
            let w = cur.as_ref().ok_or_else(|| Error::internal("a view's window is missing"))?;
            let ends = w.ends.get(i..).ok_or_else(|| Error::internal("an entry outside its offsets page"))?;
            Ok(ends.partition_point(|&e| e <= end))
        };
        let total = self.items.len(r, k)?;
        let (n, items_from) = if lo >= total {
            // The entries left in the cluster hold no items (a lying offset fails in `range`'s
            // checks or here: past the items, not empty).
            let n = upto(&self.cur, lo)?;
            if n == 0 {
                return Err(Error::corrupt(format!("{}: entry {entry} ends its items at {hi}, past the cluster's {total}", self.items.col.what()), 0));
            }
            (n, None)
        } else {
            let (s, d) = self.items.page(r, k, lo)?;
            let n = upto(&self.cur, s + d.len() as u64)?;
            if n == 0 {
                // The entry's items span pages: copied.
                self.spread.clear();
                self.items.extend(r, k, lo..hi, &mut self.spread)?;
                (1, None)
            } else {
                self.lend(r, k, s, d, in_order)?;
                (n, Some(()))
            }
        };
        self.next = entry + n as u64;
        let w = self.cur.as_ref().ok_or_else(|| Error::internal("a view's window is missing"))?;
        let ends = w.ends.get(i..i + n).ok_or_else(|| Error::internal("a window past its offsets page"))?;
        let items: &[T] = match items_from {
            None if lo >= total => &[],
            None => &self.spread,
            Some(()) => {
                let (_, s, d) = self.page.as_ref().ok_or_else(|| Error::internal("a view's item page is missing"))?;
                let last = ends[n - 1];
                d.get((lo - s) as usize..(last - s) as usize).ok_or_else(|| Error::internal("items outside the page lent"))?
            }
        };
        Ok(ItemsWindow { first: entry, ends, base: lo, items })
    }

    pub(crate) fn decoded(&self) -> u64 {
        self.offsets.decoded + self.items.decoded
    }

    pub(crate) fn bytes(&self) -> usize {
        self.offsets.bytes() + self.items.bytes()
    }

    pub(crate) fn budget(&mut self, bytes: usize) {
        self.offsets.set_budget(bytes / 2);
        self.items.set_budget(bytes - bytes / 2);
    }
}

/// The columns of a collection of values at `path`: a collection field whose one item is a
/// fundamental type, or a fundamental member of records in a collection (`"Muon._0.pt"`),
/// with its nearest collection ancestor's offsets.
pub(crate) fn collection_columns(r: &Reader, path: &str) -> Result<(BulkColumn, BulkColumn)> {
    let id = r.desc.field_by_path(path).ok_or_else(|| r.bulk_column(path, 0).err().unwrap_or_else(|| Error::NotFound(format!("no field '{path}'"))))?;
    let f = &r.desc.fields[id as usize];
    let not_values = || {
        Error::Invalid(format!(
            "field '{path}' ({}) is not a collection of fundamental values nor a member of records in a collection: view its members",
            type_of(r, path)
        ))
    };
    if f.role == Role::Collection {
        let offsets = r.bulk_column(path, 0)?;
        let [child] = f.children.as_slice() else { return Err(not_values()) };
        let item = &r.desc.fields[*child as usize];
        if item.role != Role::Leaf || item.repetition.is_some() {
            return Err(not_values());
        }
        return Ok((entry_aligned(r, path, offsets)?, r.bulk_column(&format!("{path}.{}", item.name), 0)?));
    }
    if f.role != Role::Leaf || f.repetition.is_some() {
        return Err(not_values());
    }
    // A member of records: the records up to the nearest collection, none repeated.
    let mut cur = f.parent;
    let mut depth = 0;
    while let Some(p) = cur {
        let pf = &r.desc.fields[p as usize];
        match pf.role {
            Role::Collection => {
                let cpath = r.desc.field_path(p);
                let offsets = r.bulk_column(&cpath, 0)?;
                return Ok((entry_aligned(r, &cpath, offsets)?, r.bulk_column(path, 0)?));
            }
            Role::Record if pf.repetition.is_none() => {}
            _ => return Err(not_values()),
        }
        cur = pf.parent;
        depth += 1;
        if depth > r.desc.fields.len() {
            return Err(Error::corrupt(format!("field '{path}': its parents loop"), 0));
        }
    }
    Err(not_values())
}

/// `offsets` if the collection has one count per entry (no collection or array around it).
fn entry_aligned(r: &Reader, path: &str, offsets: BulkColumn) -> Result<BulkColumn> {
    if offsets.mult == Some(1) {
        Ok(offsets)
    } else {
        Err(Error::Invalid(format!("collection '{path}' ({}) lies inside another collection or an array: not one count per entry", type_of(r, path))))
    }
}

impl<T: BulkElement> Cursor for ItemsCursor<T> {
    type Out<'a> = &'a [T];

    fn open(r: &Reader, path: &str) -> Result<Self> {
        let (offsets, items) = collection_columns(r, path)?;
        ItemsCursor::new(offsets, items)
    }

    #[inline]
    fn get<'a>(&'a mut self, r: &Reader, entry: u64) -> Result<&'a [T]> {
        self.items(r, entry)
    }

    fn pages_decoded(&self) -> u64 {
        self.decoded()
    }

    fn cached_bytes(&self) -> usize {
        self.bytes()
    }

    fn set_budget(&mut self, bytes: usize) {
        self.budget(bytes);
    }
}

/// Reads the characters of one entry of a `std::string` field.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-StringCursor-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// use rntuple::read::view::{Cursor, StringCursor};
/// let mut c = StringCursor::open(&r, "s")?;
/// assert_eq!(c.get(&r, 2)?, "abab");
/// assert_eq!(c.bytes(&r, 1)?, b"ab");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StringCursor {
    chars: ItemsCursor<u8>,
    path: String,
}

impl StringCursor {
    /// The bytes of `entry`'s string (ROOT stores them as they were given, usually UTF-8).
    #[inline]
    pub fn bytes(&mut self, r: &Reader, entry: u64) -> Result<&[u8]> {
        self.chars.items(r, entry)
    }

    /// The offsets page holding `entry` with its strings' bytes (see [`ItemsCursor::window`]).
    pub fn window(&mut self, r: &Reader, entry: u64) -> Result<ItemsWindow<'_, u8>> {
        self.chars.window(r, entry)
    }
}

impl Cursor for StringCursor {
    type Out<'a> = &'a str;

    fn open(r: &Reader, path: &str) -> Result<Self> {
        let offsets = r.bulk_column(path, 0)?;
        let chars = r.bulk_column(path, 1).ok().filter(|c| offsets.is_offsets() && !c.is_offsets());
        let Some(chars) = chars else {
            return Err(Error::Invalid(format!("field '{path}' ({}) is not a string", type_of(r, path))));
        };
        Ok(StringCursor { chars: ItemsCursor::new(entry_aligned(r, path, offsets)?, chars)?, path: path.to_string() })
    }

    fn get<'a>(&'a mut self, r: &Reader, entry: u64) -> Result<&'a str> {
        let b = self.chars.items(r, entry)?;
        std::str::from_utf8(b).map_err(|e| Error::Invalid(format!("field '{}' entry {entry}: not UTF-8 ({e}); read its bytes", self.path)))
    }

    fn pages_decoded(&self) -> u64 {
        self.chars.decoded()
    }

    fn cached_bytes(&self) -> usize {
        self.chars.bytes()
    }

    fn set_budget(&mut self, bytes: usize) {
        self.chars.budget(bytes);
    }
}
