//! The decoded pages of one column that a view keeps: each page a view touches is decompressed
//! and decoded once into a buffer of its own and kept while the cache's byte budget allows, the
//! least recently used evicted first. Sequential reading finds the page it needs in the one it
//! used last, and drops the pages it has left (`release`: the cursor asked for the entry right
//! after a page), reusing their buffers; random reading finds every page it touched before as
//! long as they fit the budget.

use crate::error::{Error, Result};
use crate::format::budget;
use crate::read::decode::bulk::{BulkColumn, BulkReader};
use crate::read::decode::bulk_element::BulkElement;
use crate::read::open::Reader;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// What a view's page cache holds by default, per column: 16 MiB, the whole column of a few
/// million tiny events (random access decodes each page once), a few pages of the largest size
/// (1 MiB) for sequential reading, whose evicted pages' buffers are reused.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-BUDGET-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// let mut x = r.view::<f32>("x")?;
/// x.set_cache_budget(rntuple::read::view::DEFAULT_PAGE_BUDGET / 4);
/// assert_eq!(x.get(1)?, 1.0);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_PAGE_BUDGET: usize = 16 << 20;

/// A decoded page: its first element within its cluster, its values, when it was last used.
#[derive(Debug)]
struct Cached<T> {
    start: u64,
    data: Arc<Vec<T>>,
    used: u64,
}

/// See the module documentation.
#[derive(Debug)]
pub(crate) struct ColumnPages<T> {
    pub(crate) col: BulkColumn,
    /// Per cluster, where the column's pages end (element indices within the cluster).
    ends: HashMap<usize, Vec<u64>>,
    /// Decoded pages by (cluster, page index).
    pages: HashMap<(usize, usize), Cached<T>>,
    /// The page used last, looked at before the map.
    last: Option<(usize, usize)>,
    tick: u64,
    bytes: usize,
    budget: usize,
    bulk: BulkReader,
    /// Buffers of evicted pages no view holds any more, reused for the next pages (fresh memory
    /// costs a page fault per 4 KiB).
    spare: Vec<Vec<T>>,
    /// Pages decoded (a page evicted and needed again counts twice).
    pub(crate) decoded: u64,
}

impl<T: BulkElement> ColumnPages<T> {
    /// A cache for column `col` (of element type `T`, checked) keeping up to `budget` bytes.
    pub(crate) fn new(col: BulkColumn, budget: usize) -> Result<ColumnPages<T>> {
        col.check_type::<T>()?;
        Ok(ColumnPages {
            col,
            ends: HashMap::new(),
            pages: HashMap::new(),
            last: None,
            tick: 0,
            bytes: 0,
            budget,
            bulk: BulkReader::new(),
            spare: Vec::new(),
            decoded: 0,
        })
    }

    /// Changes the budget; pages over it go at the next page decoded.
    pub(crate) fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
    }

    /// The bytes of decoded values held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// The page of cluster `k` holding element `e` (an element of the cluster): its first
    /// element in the cluster and its values (shared: a page evicted stays alive while a view
    /// holds it).
    pub(crate) fn page(&mut self, r: &Reader, k: usize, e: u64) -> Result<(u64, Arc<Vec<T>>)> {
        self.tick += 1;
        let key = match self.last {
            Some(key @ (lk, _)) if lk == k && self.pages.get(&key).is_some_and(|c| (c.start..c.start + c.data.len() as u64).contains(&e)) => key,
            _ => {
                let (j, range) = self.locate(r, k, e)?;
                if !self.pages.contains_key(&(k, j)) {
                    self.load(r, k, j, range)?;
                }
                (k, j)
            }
        };
        self.last = Some(key);
        let tick = self.tick;
        let c = self.pages.get_mut(&key).ok_or_else(|| Error::internal(format!("{}: a page just decoded is not cached", self.col.what())))?;
        c.used = tick;
        Ok((c.start, c.data.clone()))
    }

    /// Drops the cached page of cluster `k` that starts at element `start`, keeping its buffer for
    /// the next page: a reader going through the entries in order has left it (it asked for the
    /// entry right after it), so holding it would only take fresh memory for every page read.
    pub(crate) fn release(&mut self, r: &Reader, k: usize, start: u64) -> Result<()> {
        let (j, range) = self.locate(r, k, start)?;
        if range.start != start || self.last == Some((k, j)) {
            return Ok(());
        }
        if let Some(c) = self.pages.remove(&(k, j)) {
            self.bytes -= c.data.len() * std::mem::size_of::<T>();
            self.recycle(c.data);
        }
        Ok(())
    }

    /// Keeps a dropped page's buffer for the next page when no view holds it any more.
    fn recycle(&mut self, data: Arc<Vec<T>>) {
        if let Ok(v) = Arc::try_unwrap(data)
            && self.spare.len() < 2
        {
            self.spare.push(v);
        }
    }

    /// Appends elements `range` of cluster `k` to `out`, page by page.
    pub(crate) fn extend(&mut self, r: &Reader, k: usize, range: Range<u64>, out: &mut Vec<T>) -> Result<()> {
        let mut e = range.start;
        while e < range.end {
            let (start, data) = self.page(r, k, e)?;
            let stop = (start + data.len() as u64).min(range.end);
            let part = data.get((e - start) as usize..(stop - start) as usize).ok_or_else(|| Error::internal("a page's part outside the page"))?;
            out.extend_from_slice(part);
            e = stop;
        }
        Ok(())
    }

    /// The elements the column holds in cluster `k`.
    pub(crate) fn len(&mut self, r: &Reader, k: usize) -> Result<u64> {
        self.ends_of(r, k).map(|ends| ends.last().copied().unwrap_or(0))
    }

    /// Where the column's pages end in cluster `k`, computed once.
    fn ends_of(&mut self, r: &Reader, k: usize) -> Result<&[u64]> {
        if !self.ends.contains_key(&k) {
            let ends = r.bulk_page_ends(&self.col, k)?;
            self.ends.insert(k, ends);
        }
        self.ends.get(&k).map(|v| v.as_slice()).ok_or_else(|| Error::internal("page ends just computed are missing"))
    }

    /// The index of the page of cluster `k` holding element `e` and the elements it holds.
    fn locate(&mut self, r: &Reader, k: usize, e: u64) -> Result<(usize, Range<u64>)> {
        let ends = self.ends_of(r, k)?;
        let j = ends.partition_point(|&x| x <= e);
        let Some(&end) = ends.get(j) else {
            let n = ends.last().copied().unwrap_or(0);
            return Err(Error::Invalid(format!("{}: element {e} of cluster {k}, which holds {n}", self.col.what())));
        };
        let start = if j == 0 { 0 } else { ends[j - 1] };
        Ok((j, start..end))
    }

    /// Decodes page `j` of cluster `k` (elements `range`) into the cache, evicting the least
    /// recently used pages beyond the budget first.
    fn load(&mut self, r: &Reader, k: usize, j: usize, range: Range<u64>) -> Result<()> {
        let n = range.end - range.start;
        let size = n.saturating_mul(std::mem::size_of::<T>() as u64);
        budget::check(size, || format!("{}: a page of {n} elements in cluster {k}", self.col.what()))?;
        let n = usize::try_from(n).map_err(|_| Error::Invalid(format!("{}: a page of {n} elements", self.col.what())))?;
        let size = size as usize;
        while self.bytes + size > self.budget {
            let Some((&old, _)) = self.pages.iter().min_by_key(|(_, c)| c.used) else { break };
            if let Some(c) = self.pages.remove(&old) {
                self.bytes -= c.data.len() * std::mem::size_of::<T>();
                self.recycle(c.data);
            }
        }
        let mut data = self.spare.pop().unwrap_or_default();
        data.clear();
        data.resize(n, T::default());
        self.bulk.read_range(r, &self.col, k, range.clone(), &mut data)?;
        self.decoded += 1;
        self.bytes += size;
        self.pages.insert((k, j), Cached { start: range.start, data: Arc::new(data), used: self.tick });
        Ok(())
    }
}
