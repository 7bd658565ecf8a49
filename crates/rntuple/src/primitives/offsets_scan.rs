//! The running sum of a delta-encoded offset page (`SplitIndex64` / `SplitIndex32` pages store
//! each offset as its difference to the one before), made global and checked in the same pass.
//!
//! A plain loop carries one addition from element to element: about one element per cycle
//! whatever the processor's width. With AVX-512, eight elements are summed within a register
//! (three shifted additions, independent of the elements before them) and only the block's
//! total is carried: one addition per eight elements on the dependency chain. Split pages are
//! transposed and summed in one pass; those whose deltas all fit in 28 bits (nearly all) are
//! summed sixteen at a time in 4-byte lanes, fewer shuffles per offset than in 8-byte lanes.
//!
//! The unsafe blocks depend on AVX-512 F (with BW and VBMI for the transpose) being detected at
//! run time and on the loads and stores staying within the page (blocks of eight while eight
//! remain); the rest runs in the plain loop.

use std::mem::MaybeUninit;

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

/// The page's running sums made in one pass with the transpose of its eight byte streams
/// (`SplitIndex64`): the deltas of the `out.len()` elements in `raw` become their running sums
/// plus `base` in `out`, and the result is [`scan_offsets`]'s. `None`, with nothing written, where
/// the processor lacks AVX-512 VBMI or the lengths do not fit (`raw` shorter than the elements,
/// fewer than one block of 64).
pub(crate) fn split_scan(raw: &[u8], out: &mut [MaybeUninit<u64>], base: u64, prev: u64) -> Option<(u64, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        if out.len() >= 64 && raw.len() / 8 >= out.len() && super::transpose::has_vbmi() {
            // SAFETY: AVX-512 F/BW/VBMI are present (detected); `raw` holds the 8 * n bytes of
            // the streams and `out` n elements.
            return Some(unsafe { split_scan_vbmi(raw.as_ptr(), out.len(), out.as_mut_ptr().cast::<u64>(), base, prev) });
        }
    }
    let _ = (raw, out, base, prev);
    None
}

/// The running sum of blocks of eight deltas, AVX-512.
///
/// The running sums of a page only fall when an addition wraps, and no addition can wrap while
/// the largest delta times the number of deltas stays below 2^64: the blocks keep the OR of the
/// deltas (at least the largest) instead of comparing every sum with the one before it, two
/// vector operations more per block. Pages beyond that bound (only hostile ones: offsets near
/// 2^64) are checked sum by sum afterwards ([`Running::finish`]).
#[cfg(target_arch = "x86_64")]
struct Running {
    /// `base` plus the running sum before the block, in every lane.
    carry: std::arch::x86_64::__m512i,
    /// The OR of the deltas so far.
    any: std::arch::x86_64::__m512i,
    base: u64,
}

#[cfg(target_arch = "x86_64")]
impl Running {
    #[target_feature(enable = "avx512f")]
    fn new(base: u64) -> Running {
        use std::arch::x86_64::*;
        Running { carry: _mm512_set1_epi64(base as i64), any: _mm512_setzero_si512(), base }
    }

    /// The next eight deltas' running sums plus `base`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn add(&mut self, d: std::arch::x86_64::__m512i) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::*;
        let zero = _mm512_setzero_si512();
        self.any = _mm512_or_si512(self.any, d);
        // Running sums within the block: lane i plus lanes i-1, then i-2 and i-3, then i-4 .. i-7.
        let x = _mm512_add_epi64(d, _mm512_alignr_epi64::<7>(d, zero));
        let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<6>(x, zero));
        let x = _mm512_add_epi64(x, _mm512_alignr_epi64::<4>(x, zero));
        let sums = _mm512_add_epi64(x, self.carry);
        self.carry = _mm512_add_epi64(self.carry, _mm512_permutexvar_epi64(_mm512_set1_epi64(7), x));
        sums
    }

    /// [`scan_offsets`]'s result for `v`, whose first `done` elements (a multiple of eight, at
    /// least eight) went through [`Running::add`], the rest still deltas; those are summed here.
    #[target_feature(enable = "avx512f")]
    fn finish(&self, v: &mut [u64], done: usize, prev: u64) -> (u64, bool) {
        use std::arch::x86_64::*;
        let base = self.base;
        let acc = (_mm_cvtsi128_si64(_mm512_castsi512_si128(self.carry)) as u64).wrapping_sub(base);
        let mut decreased = v[0].wrapping_sub(base) < prev;
        if (u128::from(_mm512_reduce_or_epi64(self.any) as u64) * done as u128) >> 64 != 0 {
            decreased |= v[..done].windows(2).any(|w| w[1].wrapping_sub(base) < w[0].wrapping_sub(base));
        }
        scan_plain(&mut v[done..], acc, base, acc, decreased)
    }
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
    if blocks == 0 {
        return scan_plain(v, 0, base, prev, false);
    }
    let mut run = Running::new(base);
    let p = v.as_mut_ptr();
    for k in 0..blocks {
        // SAFETY: k < blocks = len / 8, so elements 8k .. 8k + 8 lie within `v`.
        unsafe { _mm512_storeu_si512(p.add(8 * k).cast(), run.add(_mm512_loadu_si512(p.add(8 * k).cast()))) };
    }
    run.finish(v, 8 * blocks, prev)
}

/// [`split_scan`] for `n >= 64` elements.
///
/// # Safety
/// AVX-512 F, BW and VBMI are present; `raw` holds `8 * n` readable bytes, `out` `n` writable
/// elements.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn split_scan_vbmi(raw: *const u8, n: usize, out: *mut u64, base: u64, prev: u64) -> (u64, bool) {
    use super::transpose::{tail, transpose8_vbmi_with};
    use std::arch::x86_64::*;
    // SAFETY: the caller's bounds and features.
    if let Some(r) = unsafe { split_scan_narrow(raw, n, out, base, prev) } {
        return r;
    }
    let mut run = Running::new(base);
    let done = n / 64 * 64;
    // SAFETY: the caller's bounds; the closure stores the 64 bytes at the address it is given.
    unsafe {
        transpose8_vbmi_with(raw, n, out.cast(), |o, d| _mm512_storeu_si512(o.cast(), run.add(d)));
        tail::<8>(raw, n, out.cast(), done);
    }
    // SAFETY: every element of `out` was written (the blocks, then the tail).
    let v = unsafe { std::slice::from_raw_parts_mut(out, n) };
    run.finish(v, done, prev)
}

/// [`split_scan_vbmi`] for pages whose deltas are all below 2^28 (every offsets page but those
/// of collections with hundreds of millions of items per entry): the low four byte streams
/// transposed into 4-byte lanes and summed sixteen at a time (the sums of sixteen such deltas fit
/// in 4 bytes), widened and added to the 8-byte running sum. About 36 permutes and shifts per 64
/// offsets against the 8-byte path's 56, which bound both. The four high streams are only ORed:
/// a page with any bit set there, or a delta of 2^28 or more, returns `None` after its whole pass
/// (`out` partly written) and is done again by the 8-byte path.
///
/// # Safety
/// As [`split_scan_vbmi`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn split_scan_narrow(raw: *const u8, n: usize, out: *mut u64, base: u64, prev: u64) -> Option<(u64, bool)> {
    use super::transpose::{tail, transpose4_vbmi_with, widen32};
    use std::arch::x86_64::*;
    let mut run = Running::new(base);
    let zero = _mm512_setzero_si512();
    let (mut high, mut any) = (zero, zero);
    let last = _mm512_set1_epi64(7);
    // SAFETY: the caller's bounds: block k reads bytes b * n + 64 k .. + 64 of the eight streams
    // (64 k + 64 <= n) and writes elements 64 k .. 64 k + 64 of `out`.
    unsafe {
        transpose4_vbmi_with(raw, n, |k, x| {
            let i = 64 * k;
            let h: [__m512i; 4] = std::array::from_fn(|b| _mm512_loadu_si512(raw.add((4 + b) * n + i).cast()));
            high = _mm512_or_si512(high, _mm512_or_si512(_mm512_or_si512(h[0], h[1]), _mm512_or_si512(h[2], h[3])));
            for (j, d) in x.into_iter().enumerate() {
                any = _mm512_or_si512(any, d);
                // Running sums of the sixteen 4-byte lanes: lane i plus lane i-1, then i-2 .. i-3,
                // i-4 .. i-7 and i-8 .. i-15.
                let s = _mm512_add_epi32(d, _mm512_alignr_epi32::<15>(d, zero));
                let s = _mm512_add_epi32(s, _mm512_alignr_epi32::<14>(s, zero));
                let s = _mm512_add_epi32(s, _mm512_alignr_epi32::<12>(s, zero));
                let s = _mm512_add_epi32(s, _mm512_alignr_epi32::<8>(s, zero));
                let [lo, hi] = widen32(s);
                let o = out.add(i + 16 * j);
                _mm512_storeu_si512(o.cast(), _mm512_add_epi64(lo, run.carry));
                _mm512_storeu_si512(o.add(8).cast(), _mm512_add_epi64(hi, run.carry));
                run.carry = _mm512_add_epi64(run.carry, _mm512_permutexvar_epi64(last, hi));
            }
        });
    }
    let any = _mm512_reduce_or_epi32(any) as u32;
    if _mm512_test_epi64_mask(high, high) != 0 || any >= 1 << 28 {
        return None;
    }
    run.any = _mm512_set1_epi64(i64::from(any));
    let done = n / 64 * 64;
    // SAFETY: the caller's bounds.
    unsafe { tail::<8>(raw, n, out.cast(), done) };
    // SAFETY: every element of `out` was written (the blocks, then the tail).
    let v = unsafe { std::slice::from_raw_parts_mut(out, n) };
    Some(run.finish(v, done, prev))
}

#[cfg(test)]
mod tests {
    use super::{scan_offsets, scan_plain, split_scan};
    use std::mem::MaybeUninit;

    /// `deltas` as a `SplitIndex64` page stores them: byte `b` of element `i` at `b * n + i`.
    fn split(deltas: &[u64]) -> Vec<u8> {
        let n = deltas.len();
        let mut raw = vec![0u8; 8 * n];
        for (i, d) in deltas.iter().enumerate() {
            for (b, byte) in d.to_le_bytes().into_iter().enumerate() {
                raw[b * n + i] = byte;
            }
        }
        raw
    }

    /// The running sums of the byte-split `deltas` by [`split_scan`] (`None` where it does not
    /// apply), with the result.
    fn by_split_scan(deltas: &[u64], base: u64, prev: u64) -> Option<(Vec<u64>, (u64, bool))> {
        let raw = split(deltas);
        let mut out = vec![MaybeUninit::<u64>::uninit(); deltas.len()];
        let r = split_scan(&raw, &mut out, base, prev)?;
        // SAFETY: split_scan wrote every element when it returned Some.
        Some((out.iter().map(|x| unsafe { x.assume_init() }).collect(), r))
    }

    /// The transpose and running sum in one pass against the plain loop over the deltas: block
    /// and tail lengths, decreases at the start, in a block and in the tail, and large deltas.
    #[test]
    fn the_one_pass_split_scan_equals_the_plain_loop() {
        let mut cases: Vec<Vec<u64>> = Vec::new();
        for n in [63usize, 64, 65, 127, 128, 200, 1000, 4099] {
            let deltas: Vec<u64> = (0..n as u64).map(|i| 1 + (i * 2_654_435_761) % 97 + ((i % 5) << 40)).collect();
            for at in [0, 1, 9, 63.min(n - 1), n - 1] {
                let mut d = deltas.clone();
                d[at] = u64::MAX;
                cases.push(d);
            }
            cases.push(deltas);
        }
        for shift in [56u32, 57, 58] {
            cases.push(vec![1u64 << shift; 256]); // sums up to 2^64 (wraps at the last) and beyond
        }
        // Deltas of the 4-byte path (below 2^28), and pages it hands to the 8-byte path: one delta
        // of 2^28, or with a bit in a high byte stream, in the first block, the last and the tail.
        for n in [64usize, 65, 130, 1000, 4099] {
            let small: Vec<u64> = (0..n as u64).map(|i| (i * 2_654_435_761) % 97).collect();
            cases.push(small.clone());
            cases.push(vec![(1 << 28) - 1; n]);
            for at in [0, n / 64 * 64 - 1, n - 1] {
                for big in [1u64 << 28, 1 << 32, 1 << 63] {
                    let mut d = small.clone();
                    d[at] = big;
                    cases.push(d);
                }
            }
        }
        let mut ran = false;
        for d in &cases {
            for (base, prev) in [(0u64, 0u64), (1_000, 5), (7, u64::MAX)] {
                let mut want = d.clone();
                let w = scan_plain(&mut want, 0, base, prev, false);
                if let Some((got, r)) = by_split_scan(d, base, prev) {
                    ran = true;
                    assert_eq!(r, w, "{} deltas, base {base}, prev {prev}", d.len());
                    assert_eq!(got, want, "{} deltas, base {base}, prev {prev}", d.len());
                }
            }
        }
        assert_eq!(ran, super::super::transpose::has_vbmi() && cfg!(target_arch = "x86_64"));
        assert!(by_split_scan(&[1; 63], 0, 0).is_none(), "fewer than a block");
        let mut out = vec![MaybeUninit::<u64>::uninit(); 64];
        assert!(split_scan(&[0; 511], &mut out, 0, 0).is_none(), "streams shorter than the elements");
    }

    /// The 4-byte path takes exactly the pages whose whole blocks have deltas below 2^28, and
    /// agrees with the plain loop on them.
    #[test]
    fn the_narrow_path_takes_deltas_below_2_28() {
        if !super::super::transpose::has_vbmi() {
            return;
        }
        let run = |d: &[u64]| {
            let (n, raw) = (d.len(), split(d));
            let mut out = vec![0u64; n];
            // SAFETY: AVX-512 VBMI is present (checked above); `raw` holds 8 n bytes, `out` n.
            unsafe { super::split_scan_narrow(raw.as_ptr(), n, out.as_mut_ptr(), 10, 3) }.map(|r| (r, out))
        };
        let mut d: Vec<u64> = (0..200u64).map(|i| ((1 << 28) - 1) - i % 3).collect();
        let mut want = d.clone();
        let w = scan_plain(&mut want, 0, 10, 3, false);
        assert_eq!(run(&d), Some((w, want)));
        d[150] = 1 << 28;
        assert_eq!(run(&d), None, "a delta of 2^28 in a block");
        d[150] = 5;
        d[199] = u64::MAX; // in the tail (200 = 3 blocks + 8): summed by the plain loop
        let mut want = d.clone();
        let w = scan_plain(&mut want, 0, 10, 3, false);
        assert!(w.1);
        assert_eq!(run(&d), Some((w, want)));
        d[199] = 1;
        d[3] = 1 << 40;
        assert_eq!(run(&d), None, "a bit in a high stream");
    }

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
        // Large deltas: sums up to 2^63 (no wrap), exactly 2^64 (the last wraps to 0), 2^65.
        for (shift, wraps) in [(59u32, false), (60, true), (61, true)] {
            let d = vec![1u64 << shift; 16];
            let mut want = d.clone();
            let w = scan_plain(&mut want, 0, 3, 0, false);
            assert_eq!(w.1, wraps, "deltas 2^{shift}");
            let mut got = d;
            assert_eq!(scan_offsets(&mut got, 3, 0), w, "deltas 2^{shift}");
            assert_eq!(got, want);
        }
        // The first offset below the previous page's last.
        let mut v = vec![3u64; 16];
        assert!(scan_offsets(&mut v, 0, 4).1);
        let mut v = vec![3u64; 16];
        assert!(!scan_offsets(&mut v, 0, 3).1);
    }
}
