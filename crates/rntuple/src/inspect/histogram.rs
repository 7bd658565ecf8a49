//! A one-dimensional histogram of regular bins, as ROOT's `TH1D` (and `numpy.histogram`) bins
//! values: bin `i` holds `edges[i] <= x < edges[i + 1]`, the edges `lo + i * ((hi - lo) / bins)`
//! (the last one `hi`), values below `lo` go to the underflow and values at or above `hi` (and
//! NaN) to the overflow. The statistics are `TH1`'s: `entries` counts every value filled, the
//! mean and the standard deviation are those of the values inside the range.

use crate::error::{Error, Result};

/// The most bins a histogram may have.
pub const MAX_BINS: usize = 10_000_000;

/// Counts of values in regular bins, with under- and overflow and the in-range mean and standard
/// deviation (Welford's running sums: stable when the mean is far larger than the spread).
///
/// ```
/// use rntuple::inspect::histogram::Histogram;
/// let mut h = Histogram::new(4, 0.0, 2.0)?;
/// for x in [-1.0, 0.0, 0.4, 0.5, 1.9, 2.0, f64::NAN] {
///     h.fill(x);
/// }
/// assert_eq!(h.edges(), [0.0, 0.5, 1.0, 1.5, 2.0]);
/// assert_eq!(h.counts(), [2, 1, 0, 1]);
/// assert_eq!((h.underflow, h.overflow, h.entries), (1, 2, 7));
/// assert_eq!(h.mean(), Some(0.7));
/// assert!((h.std().unwrap() - 0.515f64.sqrt()).abs() < 1e-12); // numpy.std([0, 0.4, 0.5, 1.9])
/// assert!(Histogram::new(0, 0.0, 1.0).is_err() && Histogram::new(10, 1.0, 1.0).is_err());
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    edges: Vec<f64>,
    counts: Vec<u64>,
    /// Values below the range.
    pub underflow: u64,
    /// Values at or above the range's upper edge, and NaN.
    pub overflow: u64,
    /// Every value filled (in range, under- and overflow).
    pub entries: u64,
    in_range: u64,
    mean: f64,
    m2: f64,
}

impl Histogram {
    /// `bins` regular bins over `[lo, hi)`: `lo < hi`, both finite, `1 <= bins <= MAX_BINS`.
    pub fn new(bins: usize, lo: f64, hi: f64) -> Result<Histogram> {
        if bins == 0 || bins > MAX_BINS {
            return Err(Error::Invalid(format!("histogram: {bins} bins (1 to {MAX_BINS})")));
        }
        if !(lo < hi && (hi - lo).is_finite()) {
            return Err(Error::Invalid(format!("histogram: range {lo} to {hi} (low below high, both finite)")));
        }
        // As numpy.linspace makes them: i * step + lo, the last edge exactly hi.
        let step = (hi - lo) / bins as f64;
        let mut edges: Vec<f64> = (0..bins).map(|i| i as f64 * step + lo).collect();
        edges.push(hi);
        Ok(Histogram { edges, counts: vec![0; bins], underflow: 0, overflow: 0, entries: 0, in_range: 0, mean: 0.0, m2: 0.0 })
    }

    /// Adds one value.
    pub fn fill(&mut self, x: f64) {
        self.entries += 1;
        let n = self.counts.len();
        let (lo, hi) = (self.edges[0], self.edges[n]);
        if x < lo {
            self.underflow += 1;
            return;
        }
        if x >= hi || x.is_nan() {
            self.overflow += 1;
            return;
        }
        // The arithmetic guess, then corrected against the edges themselves (as numpy does).
        let mut i = (((x - lo) / (hi - lo)) * n as f64) as usize;
        i = i.min(n - 1);
        while i > 0 && x < self.edges[i] {
            i -= 1;
        }
        while i + 1 < n && x >= self.edges[i + 1] {
            i += 1;
        }
        self.counts[i] += 1;
        self.in_range += 1;
        let delta = x - self.mean;
        self.mean += delta / self.in_range as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// The `bins + 1` bin edges.
    pub fn edges(&self) -> &[f64] {
        &self.edges
    }

    /// The counts of the bins.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Values inside the range.
    pub fn in_range(&self) -> u64 {
        self.in_range
    }

    /// The mean of the values inside the range (`None` when there is none).
    pub fn mean(&self) -> Option<f64> {
        (self.in_range > 0).then_some(self.mean)
    }

    /// The standard deviation of the values inside the range (ROOT's `GetStdDev`, numpy's `std`:
    /// divided by their number; `None` when there is none).
    pub fn std(&self) -> Option<f64> {
        (self.in_range > 0).then(|| (self.m2 / self.in_range as f64).max(0.0).sqrt())
    }
}

/// The smallest and largest finite values seen, for a histogram's default range.
///
/// ```
/// use rntuple::inspect::histogram::MinMax;
/// let mut m = MinMax::default();
/// assert_eq!(m.range(), (0.0, 1.0)); // no value
/// m.add(f64::NAN);
/// m.add(3.0);
/// assert_eq!(m.range(), (2.5, 3.5)); // one value: a bin of width 1 around it
/// m.add(-1.0);
/// m.add(f64::INFINITY);
/// assert_eq!(m.range(), (-1.0, 3.0f64.next_up())); // the maximum inside the last bin
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MinMax {
    found: Option<(f64, f64)>,
}

impl MinMax {
    /// Takes a value into account (NaN and infinities are not).
    pub fn add(&mut self, x: f64) {
        if x.is_finite() {
            self.found = Some(match self.found {
                Some((lo, hi)) => (lo.min(x), hi.max(x)),
                None => (x, x),
            });
        }
    }

    /// The default range of a histogram of these values (as `RNTuple.hist` of the Python package
    /// chooses it): minimum to just above the maximum, so that the maximum falls inside the last
    /// bin; `value ± 0.5` for a single value; `0..1` without values.
    pub fn range(&self) -> (f64, f64) {
        match self.found {
            None => (0.0, 1.0),
            Some((lo, hi)) if lo == hi => (lo - 0.5, hi + 0.5),
            Some((lo, hi)) => {
                let up = hi.next_up();
                // A range too wide to be finite (from -f64::MAX to f64::MAX) is halved at the top.
                if (up - lo).is_finite() { (lo, up) } else { (lo, hi.min(lo + f64::MAX)) }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_and_bins_agree() {
        // Values on the edges of bins whose width is not exact in binary fall where the edges say.
        let mut h = Histogram::new(10, 0.1, 0.7).unwrap();
        let edges = h.edges().to_vec();
        for &e in &edges[..10] {
            h.fill(e);
        }
        assert_eq!(h.counts(), [1; 10]);
        for w in edges.windows(2) {
            h.fill(w[1].next_down());
        }
        assert_eq!(h.counts(), [2; 10]);
        assert_eq!(h.overflow, 0);
    }

    #[test]
    fn extreme_ranges() {
        assert!(Histogram::new(3, f64::NEG_INFINITY, 0.0).is_err());
        assert!(Histogram::new(3, -f64::MAX, f64::MAX).is_err());
        assert!(Histogram::new(MAX_BINS + 1, 0.0, 1.0).is_err());
        let mut m = MinMax::default();
        m.add(-f64::MAX);
        m.add(f64::MAX);
        let (lo, hi) = m.range();
        assert!(Histogram::new(100, lo, hi).is_ok());
        let mut h = Histogram::new(1, 1e300, 1e300 * 2.0).unwrap();
        h.fill(1.5e300);
        assert_eq!((h.counts()[0], h.mean()), (1, Some(1.5e300)));
        assert_eq!(h.std(), Some(0.0));
    }
}
