//! The distribution of stored page sizes in powers of two (ROOT's `RNTupleInspector` histograms
//! page sizes per column type; one distribution over all pages says whether pages are too small to
//! compress well or too large to read in pieces).

/// Pages counted by their stored size: bucket 0 holds the empty pages, bucket `k >= 1` the sizes in
/// `[2^(k-1), 2^k)` bytes.
///
/// ```
/// use rntuple::inspect::page_sizes::PageSizes;
/// let mut p = PageSizes::default();
/// for size in [0, 1, 300, 400, 70_000] {
///     p.add(size);
/// }
/// assert_eq!((p.pages, p.bytes, p.min, p.max), (5, 70_701, 0, 70_000));
/// let b = p.buckets();
/// assert_eq!((b[0].lo, b[0].hi, b[0].pages), (0, 1, 1));
/// let of_300 = b.iter().find(|b| b.lo == 256).unwrap();
/// assert_eq!((of_300.hi, of_300.pages, of_300.bytes), (512, 2, 700));
/// assert_eq!(b.last().map(|b| (b.lo, b.hi)), Some((65_536, 131_072)));
/// assert_eq!(b.len(), 18); // every bucket between the first and the last non-empty one
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSizes {
    counts: [(u64, u64); 65],
    /// Pages.
    pub pages: u64,
    /// Their stored bytes.
    pub bytes: u64,
    /// The smallest stored page (0 when there is none).
    pub min: u64,
    /// The largest stored page.
    pub max: u64,
}

impl Default for PageSizes {
    fn default() -> Self {
        PageSizes { counts: [(0, 0); 65], pages: 0, bytes: 0, min: 0, max: 0 }
    }
}

/// One bucket of a [`PageSizes`]: the pages of stored sizes in `[lo, hi)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    /// Lower bound of the sizes, in bytes (included).
    pub lo: u64,
    /// Upper bound (excluded; `u64::MAX` for the last possible bucket).
    pub hi: u64,
    /// Pages.
    pub pages: u64,
    /// Their stored bytes.
    pub bytes: u64,
}

impl PageSizes {
    /// Counts a page of `size` stored bytes.
    pub fn add(&mut self, size: u64) {
        let k = (u64::BITS - size.leading_zeros()) as usize;
        self.counts[k].0 += 1;
        self.counts[k].1 = self.counts[k].1.saturating_add(size);
        self.min = if self.pages == 0 { size } else { self.min.min(size) };
        self.max = self.max.max(size);
        self.pages += 1;
        self.bytes = self.bytes.saturating_add(size);
    }

    /// The mean stored page size (`None` without pages).
    pub fn mean(&self) -> Option<f64> {
        (self.pages > 0).then(|| self.bytes as f64 / self.pages as f64)
    }

    /// The buckets from the first non-empty one to the last, empty ones between included (none
    /// without pages).
    pub fn buckets(&self) -> Vec<Bucket> {
        let Some(first) = self.counts.iter().position(|c| c.0 > 0) else { return Vec::new() };
        let last = self.counts.iter().rposition(|c| c.0 > 0).unwrap_or(first);
        (first..=last)
            .map(|k| {
                let (lo, hi) = match k {
                    0 => (0, 1),
                    64 => (1 << 63, u64::MAX),
                    k => (1 << (k - 1), 1 << k),
                };
                Bucket { lo, hi, pages: self.counts[k].0, bytes: self.counts[k].1 }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extremes() {
        let mut p = PageSizes::default();
        assert!(p.buckets().is_empty() && p.mean().is_none());
        p.add(u64::MAX);
        p.add(u64::MAX);
        assert_eq!(p.buckets(), [Bucket { lo: 1 << 63, hi: u64::MAX, pages: 2, bytes: u64::MAX }]);
        assert_eq!((p.min, p.max, p.bytes), (u64::MAX, u64::MAX, u64::MAX));
        let mut q = PageSizes::default();
        q.add(1024);
        assert_eq!(q.buckets(), [Bucket { lo: 1024, hi: 2048, pages: 1, bytes: 1024 }]);
        assert_eq!(q.mean(), Some(1024.0));
    }
}
