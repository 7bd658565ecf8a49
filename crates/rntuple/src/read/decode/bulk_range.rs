//! Bulk reads of a range of elements within one cluster, for callers whose buffers are smaller
//! than a cluster (ROOT's `RBulkValues` reads chunks of entries the same way): a buffer of a few
//! pages stays in the processor's cache from chunk to chunk, where a cluster-sized one sends every
//! decoded byte out to memory.

use super::bulk::{BulkColumn, BulkReader};
use super::bulk_element::BulkElement;
use crate::error::{Error, Result};
use crate::read::open::Reader;
use crate::read::pool::read_plan::ReadPlan;
use std::mem::MaybeUninit;
use std::ops::Range;

impl BulkReader {
    /// Reads elements `elements` of column `col` in cluster `cluster` into the start of `out`
    /// and returns how many it wrote. Buffers of a few pages reused from chunk to chunk stay in
    /// the processor's cache; chunks ending where pages end ([`Reader::bulk_page_ends`]) decode
    /// every page once, others decode the pages they cut through once per chunk.
    ///
    /// Offsets read this way are **cluster-local** end offsets: element `i` of an offsets column
    /// ends its entry's items at item `end[i]` of the cluster's item column (read those with
    /// another range). Errors as [`BulkReader::read`], and a range outside the cluster.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-read_range-{}.root", std::process::id()));
    /// # let opts = WriteOptions { initial_unzipped_page_size: 64, max_unzipped_page_size: 64, ..Default::default() };
    /// # let mut w = Writer::create(&path, "Events", &[("x", "double"), ("v", "std::vector<float>")], opts)?;
    /// # for i in 0..100 {
    /// #     let items = (0..i % 3).map(|k| Value::F32(k as f32)).collect();
    /// #     w.fill(&Value::Record(vec![("x".into(), Value::F64(i as f64)), ("v".into(), Value::List(items))]))?;
    /// # }
    /// # w.commit()?;
    /// use rntuple::read::BulkReader;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let (x, v, items) = (r.bulk_column("x", 0)?, r.bulk_column("v", 0)?, r.bulk_column("v._0", 0)?);
    /// let mut bulk = BulkReader::new();
    /// let mut buf = [0.0f64; 16];
    /// // Entries 10..26 of cluster 0, in one chunk of 16 (pages of 8 doubles here).
    /// let n = bulk.read_range(&r, &x, 0, 10..26, &mut buf)?;
    /// assert_eq!(&buf[..n], &(10..26).map(f64::from).collect::<Vec<_>>()[..]);
    /// // The items of entries 3..6: the end offsets of entries 2..6 give their item range.
    /// let mut ends = [0u64; 4];
    /// bulk.read_range(&r, &v, 0, 2..6, &mut ends)?;
    /// let mut vals = [0.0f32; 8];
    /// let m = bulk.read_range(&r, &items, 0, ends[0]..ends[3], &mut vals)?;
    /// assert_eq!(&vals[..m], &[0.0, 0.0, 1.0]); // entry 3: [], 4: [0], 5: [0, 1]
    /// assert!(bulk.read_range(&r, &x, 0, 90..101, &mut buf).is_err()); // past the cluster
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_range<T: BulkElement>(&mut self, r: &Reader, col: &BulkColumn, cluster: usize, elements: Range<u64>, out: &mut [T]) -> Result<usize> {
        // SAFETY: as in `read`: `MaybeUninit<T>` has `T`'s layout, and `read_range_uninit` writes
        // only valid `T`s (decoded values or `T::default()`), so `out` holds valid values whatever
        // it returns.
        let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
        self.read_range_uninit(r, col, cluster, elements, out)
    }

    /// [`BulkReader::read_range`] into uninitialized memory: on `Ok(n)`, `out[..n]` is
    /// initialized.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-read_range_uninit-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("n", "std::int32_t")], WriteOptions::default())?;
    /// # for i in 0..10 { w.fill(&Value::Record(vec![("n".into(), Value::Int(-i))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let col = r.bulk_column("n", 0)?;
    /// let mut v: Vec<i32> = Vec::with_capacity(4);
    /// let n = rntuple::read::BulkReader::new().read_range_uninit(&r, &col, 0, 3..7, v.spare_capacity_mut())?;
    /// unsafe { v.set_len(n) };
    /// assert_eq!(v, [-3, -4, -5, -6]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_range_uninit<T: BulkElement>(
        &mut self,
        r: &Reader,
        col: &BulkColumn,
        cluster: usize,
        elements: Range<u64>,
        out: &mut [MaybeUninit<T>],
    ) -> Result<usize> {
        // `saturating_add`: cluster `usize::MAX` is outside the RNTuple (an error), not a wrap.
        let one = cluster..cluster.saturating_add(1);
        let n = r.bulk_len(col, one.clone())?;
        let what = || format!("{}: elements {}..{} of cluster {cluster}", col.what(), elements.start, elements.end);
        if elements.start > elements.end || elements.end > n {
            return Err(Error::Invalid(format!("{}: the cluster holds {n}", what())));
        }
        col.check_type::<T>()?;
        let len = usize::try_from(elements.end - elements.start).map_err(|_| Error::Invalid(format!("{}: beyond the address space", what())))?;
        let room = out.len();
        let dst = out.get_mut(..len).ok_or_else(|| Error::Invalid(format!("{}: the buffer holds {room}", what())))?;
        let plan = r.bulk_plan(col, one)?;
        r.bulk_cluster(&plan, col, cluster, elements, dst, 0, &mut self.scratch)?;
        Ok(len)
    }
}

impl Reader {
    /// Where the pages of `col` end in cluster `cluster`, as element indices within the cluster
    /// (ascending, the last the cluster's element count): chunk boundaries at these decode each
    /// page once with [`BulkReader::read_range`]. A column without data in the cluster has one
    /// "page" of all its elements.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-bulk_page_ends-{}.root", std::process::id()));
    /// # let opts = WriteOptions { initial_unzipped_page_size: 64, max_unzipped_page_size: 64, ..Default::default() };
    /// # let mut w = Writer::create(&path, "Events", &[("x", "double")], opts)?;
    /// # for i in 0..20 { w.fill(&Value::Record(vec![("x".into(), Value::F64(i as f64))]))?; }
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.bulk_page_ends(&r.bulk_column("x", 0)?, 0)?, [8, 16, 20]); // 64-byte pages
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bulk_page_ends(&self, col: &BulkColumn, cluster: usize) -> Result<Vec<u64>> {
        let n = self.bulk_len(col, cluster..cluster.saturating_add(1))?;
        let mut ends: Vec<u64> = Vec::new();
        if let Some((lead, pages)) = self.bulk_pages(col, cluster)? {
            for p in pages {
                let end = lead.saturating_add(p.first_in_cluster).saturating_add(u64::from(p.n_elements));
                if end > n {
                    break;
                }
                if end > ends.last().copied().unwrap_or(0) {
                    ends.push(end);
                }
            }
        }
        if ends.last() != Some(&n) {
            ends.push(n);
        }
        Ok(ends)
    }

    /// The plan of a bulk read: a local file is read page by page (from the page cache) with a
    /// plan that allocates nothing; a remote one has the clusters' pages loaded ahead, as other
    /// reads do.
    pub(crate) fn bulk_plan(&self, col: &BulkColumn, clusters: Range<usize>) -> Result<ReadPlan> {
        if self.page_source.src.is_remote() {
            let spans: Vec<_> = clusters.map(|c| crate::read::pool::read_plan::Span { cluster: c, start: 0, end: 0 }).collect();
            self.prefetch(&[col.top], &spans)
        } else {
            Ok(ReadPlan { columns: Vec::new(), clusters: Vec::new(), pooled: false })
        }
    }
}

/// Range reads against whole-cluster reads: every column of a file of many small clusters and
/// pages, in chunks of several sizes (cutting pages anywhere) and at the page ends; a field added
/// in the middle of a cluster; misuse.
#[cfg(test)]
mod tests {
    use super::super::bulk::tests::{by_cluster, reader};
    use super::{BulkElement, BulkReader};
    use crate::write::{WriteOptions, Writer};
    use crate::{RNTupleFile, Reader, Value};
    use arrow_array::cast::AsArray;
    use arrow_array::types::Int32Type;
    use std::fmt::Debug;

    /// Column `column` of `path` read cluster by cluster in chunks of `chunk` elements into one
    /// reused buffer, concatenated.
    fn by_chunks<T: BulkElement + Debug>(r: &Reader, bulk: &mut BulkReader, path: &str, column: usize, chunk: u64) -> Vec<T> {
        let col = r.bulk_column(path, column).unwrap();
        let mut buf = vec![T::default(); chunk as usize];
        let mut out = Vec::new();
        for c in 0..r.descriptor().clusters.len() {
            let n = r.bulk_len(&col, c..c + 1).unwrap();
            let mut at = 0;
            while at < n {
                let end = (at + chunk).min(n);
                assert_eq!(bulk.read_range(r, &col, c, at..end, &mut buf).unwrap() as u64, end - at);
                out.extend_from_slice(&buf[..(end - at) as usize]);
                at = end;
            }
        }
        out
    }

    /// The same at the column's page ends: one chunk per page.
    fn by_pages<T: BulkElement + Debug>(r: &Reader, bulk: &mut BulkReader, path: &str, column: usize) -> Vec<T> {
        let col = r.bulk_column(path, column).unwrap();
        let mut out = Vec::new();
        for c in 0..r.descriptor().clusters.len() {
            let ends = r.bulk_page_ends(&col, c).unwrap();
            assert_eq!(ends.last().copied(), Some(r.bulk_len(&col, c..c + 1).unwrap()));
            assert!(ends.windows(2).all(|w| w[0] < w[1]), "page ends ascend: {ends:?}");
            let mut start = 0;
            for end in ends {
                let mut buf = vec![T::default(); (end - start) as usize];
                bulk.read_range(r, &col, c, start..end, &mut buf).unwrap();
                out.extend(buf);
                start = end;
            }
        }
        out
    }

    fn same_every_way<T: BulkElement + Debug + PartialEq>(r: &Reader, bulk: &mut BulkReader, path: &str, column: usize) -> usize {
        let want: Vec<T> = by_cluster(r, bulk, path, column);
        assert!(!want.is_empty(), "{path}: no elements");
        for chunk in [1, 7, 100, 1000, 1 << 20] {
            assert_eq!(by_chunks::<T>(r, bulk, path, column, chunk), want, "{path} column {column} in chunks of {chunk}");
        }
        assert_eq!(by_pages::<T>(r, bulk, path, column), want, "{path} column {column} by pages");
        want.len()
    }

    #[test]
    fn every_column_in_chunks_equals_whole_clusters() {
        let r = reader();
        let mut bulk = BulkReader::new();
        // Offsets are cluster-local in both reads (one cluster per whole read).
        same_every_way::<u64>(&r, &mut bulk, "id", 0);
        same_every_way::<f64>(&r, &mut bulk, "x", 0);
        same_every_way::<u64>(&r, &mut bulk, "v", 0);
        same_every_way::<f32>(&r, &mut bulk, "v._0", 0);
        same_every_way::<u64>(&r, &mut bulk, "s", 0);
        same_every_way::<i8>(&r, &mut bulk, "s", 1);
        same_every_way::<i16>(&r, &mut bulk, "a._0", 0);
        same_every_way::<u64>(&r, &mut bulk, "vv", 0);
        same_every_way::<u64>(&r, &mut bulk, "vv._0", 0);
        same_every_way::<i32>(&r, &mut bulk, "vv._0._0", 0);
        same_every_way::<bool>(&r, &mut bulk, "b", 0);
        // Once grown, the scratch stays as it is.
        let grown = bulk.scratch_bytes();
        same_every_way::<f32>(&r, &mut bulk, "v._0", 0);
        same_every_way::<i32>(&r, &mut bulk, "vv._0._0", 0);
        assert_eq!(bulk.scratch_bytes(), grown);
    }

    #[test]
    fn a_field_added_inside_a_cluster_reads_zeros_then_values() {
        let path = std::env::temp_dir().join(format!("rntuple-bulk-range-late-{}.root", std::process::id()));
        let opts = WriteOptions { approx_zipped_cluster_size: 4_000, max_unzipped_page_size: 256, ..Default::default() };
        let mut w = Writer::create(&path, "Events", &[("x", "std::int32_t")], opts).unwrap();
        for i in 0..2000 {
            if i == 1234 {
                w.add_field("y", "std::int32_t").unwrap();
            }
            let mut rec = vec![("x".into(), Value::Int(i))];
            if i >= 1234 {
                rec.push(("y".into(), Value::Int(-i)));
            }
            w.fill(&Value::Record(rec)).unwrap();
        }
        w.commit().unwrap();
        let r = RNTupleFile::open(&path).unwrap().reader("Events").unwrap();
        std::fs::remove_file(&path).unwrap();
        let b = r.read_batch(None, 0, 2000).unwrap();
        let y: Vec<i32> = b.column_by_name("y").unwrap().as_primitive::<Int32Type>().values().to_vec();
        assert_eq!((y[1233], y[1234], y[1999]), (0, -1234, -1999));
        // The cluster holding entry 1234 has y's column deferred: zeros before its first page.
        let col = r.bulk_column("y", 0).unwrap();
        let leads: Vec<u64> = (0..r.descriptor().clusters.len()).filter_map(|c| r.bulk_pages(&col, c).unwrap().map(|p| p.0)).collect();
        assert!(leads.iter().any(|&l| l > 0), "no deferred start: {leads:?}");
        let mut bulk = BulkReader::new();
        let n = same_every_way::<i32>(&r, &mut bulk, "y", 0);
        assert_eq!(n, 2000);
        for chunk in [3, 50, 333] {
            assert_eq!(by_chunks::<i32>(&r, &mut bulk, "y", 0, chunk), y, "chunks of {chunk}");
        }
    }

    #[test]
    fn misuse_is_an_error_naming_column_and_range() {
        let r = reader();
        let mut bulk = BulkReader::new();
        let x = r.bulk_column("x", 0).unwrap();
        let n = r.bulk_len(&x, 0..1).unwrap();
        let mut buf = vec![0.0f64; n as usize + 1];
        let e = bulk.read_range(&r, &x, 0, 0..n + 1, &mut buf).unwrap_err().to_string();
        assert!(e.contains("'x'") && e.contains(&format!("0..{}", n + 1)) && e.contains(&format!("holds {n}")), "{e}");
        let e = bulk.read_range(&r, &x, 0, 0..n, &mut buf[..2]).unwrap_err().to_string();
        assert!(e.contains("buffer holds 2"), "{e}");
        let e = bulk.read_range(&r, &x, 0, 0..2, &mut [0f32; 2]).unwrap_err().to_string();
        assert!(e.contains("not f32"), "{e}");
        let k = r.descriptor().clusters.len();
        assert!(bulk.read_range(&r, &x, k, 0..1, &mut buf).unwrap_err().to_string().contains("outside"));
        assert!(r.bulk_page_ends(&x, k).is_err());
        // The last index is outside too (no wrap-around to cluster 0).
        assert!(bulk.read_range(&r, &x, usize::MAX, 0..1, &mut buf).unwrap_err().to_string().contains("outside"));
        assert!(r.bulk_page_ends(&x, usize::MAX).unwrap_err().to_string().contains("outside"));
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = 5..2;
        assert!(bulk.read_range(&r, &x, 0, backwards, &mut buf).is_err());
        assert_eq!(bulk.read_range(&r, &x, 0, 3..3, &mut buf).unwrap(), 0);
    }
}
