//! The running sum of a delta-encoded offset page (`SplitIndex64` / `SplitIndex32` pages store
//! each offset as its difference to the one before), made global and checked in the same pass.
//!
//! A plain loop carries one addition from element to element: about one element per cycle
//! whatever the processor's width. With AVX-512, eight elements are summed within a register
//! (three shifted additions, independent of the elements before them) and only the block's
//! total is carried: one addition per eight elements on the dependency chain.
//!
//! The unsafe block depends on AVX-512 F being detected at run time and on the loads and stores
//! staying within `v` (blocks of eight while eight remain); the rest runs in the plain loop.

/// Turns the deltas in `v` into their running sums, each plus `base`; returns the last running
/// sum (without `base`) and whether any running sum is below the one before it, the first
/// compared with `prev` (the last running sum of the page before; a wrapping addition counts as
/// decreasing).
pub(crate) fn scan_offsets(v: &mut [u64], base: u64, prev: u64) -> (u64, bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if v.len() >= 8 && super::transpose::has_avx512() {
            // SAFETY: AVX-512 F is present (detected); the function reads and writes `v` only.
            return unsafe { scan_avx512(v, base, prev) };
        }
    }
    scan_plain(v, 0, base, prev, false)
}

/// The plain loop over `v`, the running sum starting at `acc` and compared with `last`.
fn scan_plain(v: &mut [u64], mut acc: u64, base: u64, mut last: u64, mut decreased: bool) -> (u64, bool) {
    for x in v.iter_mut() {
        acc = acc.wrapping_add(*x);
        decreased |= acc < last;
        last = acc;
        *x = acc.wrapping_add(base);
    }
    (last, decreased)
}

/// Blocks of eight by AVX-512, the rest by [`scan_plain`].
///
/// # Safety
/// AVX-512 F is present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scan_avx512(v: &mut [u64], base: u64, prev: u64) -> (u64, bool) {
    use std::arch::x86_64::*;
    let blocks = v.len() / 8;
    let zero = _mm512_setzero_si512();
    let last_lane = _mm512_set1_epi64(7);
    let base_v = _mm512_set1_epi64(base as i64);
    // `carry`: the running sum before the block, in every lane; `before`: the block before's
    // running sums (its last lane is what the block's first must not fall below).
    let (mut carry, mut before) = (zero, _mm512_set1_epi64(prev as i64));
    let mut bad: __mmask8 = 0;
    let p = v.as_mut_ptr();
    for k in 0..blocks {
        // SAFETY: k < blocks = len / 8, so elements 8k .. 8k + 8 lie within `v`.
        let x = unsafe { _mm512_loadu_si512(p.add(8 * k).cast()) };
        // Running sums within the block: lane i plus lanes i-1, then i-2 and i-3, then i-4 .. i-7.
        let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<7>(x, zero));
        let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<6>(x, zero));
        let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<4>(x, zero));
        let sums = _mm512_add_epi64(x, carry);
        carry = _mm512_add_epi64(carry, _mm512_permutexvar_epi64(last_lane, x));
        // Each running sum against the one before it: the block's own, shifted in by one lane.
        bad |= _mm512_cmplt_epu64_mask(sums, _mm512_alignr_epi64::<7>(sums, before));
        before = sums;
        // SAFETY: as the load.
        unsafe { _mm512_storeu_si512(p.add(8 * k).cast(), _mm512_add_epi64(sums, base_v)) };
    }
    let mut lanes = [0u64; 8];
    // SAFETY: `lanes` holds 64 bytes.
    unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), before) };
    let acc = if blocks == 0 { 0 } else { lanes[7] };
    let last = if blocks == 0 { prev } else { lanes[7] };
    scan_plain(&mut v[8 * blocks..], acc, base, last, bad != 0)
}

#[cfg(test)]
mod tests {
    use super::{scan_offsets, scan_plain};

    /// Both paths against each other on lengths around the block size, with and without a
    /// decrease (a delta of -1), at every position of the first blocks.
    #[test]
    fn the_fast_scan_equals_the_plain_loop() {
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 64, 100, 1003] {
            let deltas: Vec<u64> = (0..n as u64).map(|i| 1 + (i * 2_654_435_761) % 97).collect();
            for (base, prev) in [(0u64, 0u64), (1_000, 0), (5, 3), (u64::MAX - 10, 0)] {
                let mut want = deltas.clone();
                let w = scan_plain(&mut want, 0, base, prev, false);
                let mut got = deltas.clone();
                assert_eq!(scan_offsets(&mut got, base, prev), w, "n = {n}, base = {base}, prev = {prev}");
                assert_eq!(got, want, "n = {n}, base = {base}, prev = {prev}");
            }
            for at in 0..n.min(20) {
                let mut d = deltas.clone();
                d[at] = u64::MAX; // -1: this running sum falls below the one before (or, first, the next wraps)
                let mut want = d.clone();
                let w = scan_plain(&mut want, 0, 7, 0, false);
                let mut got = d;
                assert_eq!(scan_offsets(&mut got, 7, 0), w, "decrease at {at} of {n}");
                assert_eq!(got, want);
                assert!(w.1 || n == 1, "decrease at {at} of {n} not seen");
            }
        }
        // The first offset below the previous page's last.
        let mut v = vec![3u64; 16];
        assert!(scan_offsets(&mut v, 0, 4).1);
        let mut v = vec![3u64; 16];
        assert!(!scan_offsets(&mut v, 0, 3).1);
    }
}
