//! Coalescing of wanted byte ranges into few read requests (pure: ranges in, requests out).
//!
//! A request that reads over a small gap between two pages costs a few wasted bytes; a second
//! request costs a round trip. The cut-off follows ROOT's rule for a cluster's pages
//! (`RPageSourceFile`): the largest gap such that all gaps up to that size together stay within a
//! fraction of the wanted bytes (25 % by default) is read over; larger gaps split requests.

use std::ops::Range;

/// Fraction of extra (unwanted) bytes a plan may read to save requests: ROOT's default.
pub const DEFAULT_OVERHEAD: f64 = 0.25;

/// The largest gap read over when coalescing `sorted` (ranges sorted by start): gaps are taken
/// from the smallest up while their sum stays within `overhead` × the wanted bytes.
///
/// ```
/// use rntuple::storage::local::coalesce::gap_cut;
/// // 300 wanted bytes; gaps of 10, 20 and 1000: 10 + 20 <= 75, 10 + 20 + 1000 is not.
/// assert_eq!(gap_cut(&[0..100, 110..200, 220..250, 1250..1280], 0.25), 20);
/// ```
pub fn gap_cut(sorted: &[Range<u64>], overhead: f64) -> u64 {
    let wanted: u64 = sorted.iter().map(|r| r.end.saturating_sub(r.start)).sum();
    let mut gaps: Vec<u64> = sorted.windows(2).map(|w| w[1].start.saturating_sub(w[0].end)).collect();
    gaps.sort_unstable();
    let budget = overhead.max(0.0) * wanted as f64;
    let mut sum = 0u64;
    let mut cut = 0u64;
    let mut i = 0;
    while i < gaps.len() {
        // All gaps of one size are taken or none.
        let g = gaps[i];
        let mut j = i;
        while j < gaps.len() && gaps[j] == g {
            sum = sum.saturating_add(g);
            j += 1;
        }
        if sum as f64 > budget {
            break;
        }
        cut = g;
        i = j;
    }
    cut
}

/// Merges `ranges` (any order, may overlap) into requests: neighbours whose gap is at most
/// [`gap_cut`]`(overhead)` are read as one, as long as the request stays within `max_request`
/// bytes (0: no limit; a single range larger than the limit stays one request). Returns the
/// requests sorted by offset; every wanted range lies inside exactly one of them.
///
/// ```
/// use rntuple::storage::local::coalesce::coalesce;
/// let reqs = coalesce(vec![220..250, 0..100, 110..200, 1250..1280], 0.25, 0);
/// assert_eq!(reqs, vec![0..250, 1250..1280]);
/// // A limit on the request size splits where the limit would be passed.
/// assert_eq!(coalesce(vec![0..100, 100..200, 200..300], 0.25, 200), vec![0..200, 200..300]);
/// ```
pub fn coalesce(mut ranges: Vec<Range<u64>>, overhead: f64, max_request: u64) -> Vec<Range<u64>> {
    ranges.retain(|r| r.end > r.start);
    ranges.sort_unstable_by_key(|r| (r.start, r.end));
    let cut = gap_cut(&ranges, overhead);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in ranges {
        if let Some(last) = out.last_mut() {
            let overlaps = r.start < last.end;
            let fits = max_request == 0 || r.end.max(last.end) - last.start <= max_request;
            if overlaps || (r.start - last.end <= cut && fits) {
                last.end = last.end.max(r.end);
                continue;
            }
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_adjacent_ranges_become_one_request() {
        assert_eq!(coalesce(vec![0..10, 5..20, 20..30], 0.0, 0), vec![0..30]);
        assert_eq!(coalesce(vec![], 0.25, 0), Vec::<Range<u64>>::new());
        assert_eq!(coalesce(vec![7..7, 3..4], 0.25, 0), vec![3..4]);
    }

    #[test]
    fn the_cut_keeps_the_extra_bytes_within_the_overhead() {
        // Pages of 100 bytes with gaps of 5 (key headers) and one large gap (another column).
        let mut ranges = Vec::new();
        let mut at = 0;
        for i in 0..20 {
            ranges.push(at..at + 100);
            at += if i == 9 { 100 + 50_000 } else { 105 };
        }
        let reqs = coalesce(ranges.clone(), DEFAULT_OVERHEAD, 0);
        assert_eq!(reqs.len(), 2, "{reqs:?}");
        let read: u64 = reqs.iter().map(|r| r.end - r.start).sum();
        assert!(read as f64 <= 2000.0 * 1.25, "{read}");
        for r in &ranges {
            assert_eq!(reqs.iter().filter(|q| q.start <= r.start && r.end <= q.end).count(), 1);
        }
        // With no overhead allowed, only touching ranges merge.
        assert_eq!(coalesce(ranges, 0.0, 0).len(), 20);
    }
}
