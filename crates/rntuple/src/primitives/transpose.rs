//! Byte-split pages to elements by explicit AVX2 shuffles, for the split encodings whose element
//! is the in-memory value as it is (`SplitReal32` read as `f32`, `SplitUInt64` as `u64`, ...):
//! stream `b` of a page of `n` elements holds byte `b` of every element, and the transpose writes
//! the elements' bytes straight into the destination. The generic decoder
//! ([`super::decode`]) leaves the shuffles to the compiler, which widens each stream's bytes
//! (`vpmovzx`) and merges them with shifts and ors: about twice the instructions of the unpack
//! ladder below (4 bytes: 4 loads, 8 unpacks, 4 lane permutes and 4 stores per 32 elements; 8
//! bytes: 8 loads, 24 unpacks, 8 permutes, 8 stores).
//!
//! This file holds the crate's only SIMD intrinsics; the unsafe blocks depend on two facts each
//! function states: AVX2 was detected at run time, and the pointers cover the `W * n` bytes read
//! and written (checked by the safe entry point [`transpose`]).

use std::mem::MaybeUninit;

/// Writes the `n = out.len() / W` elements of the `W` byte streams at the start of `raw` into
/// `out`, as their little-endian bytes; `false` (nothing written) when this CPU or this `W` has no
/// fast path here, or the lengths do not fit (`raw` shorter than `out`, `out` not whole elements).
pub(crate) fn transpose<const W: usize>(raw: &[u8], out: &mut [MaybeUninit<u8>]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if !out.len().is_multiple_of(W) || raw.len() < out.len() || !(W == 4 || W == 8) || !std::arch::is_x86_feature_detected!("avx2") {
            return false;
        }
        let n = out.len() / W;
        // SAFETY: AVX2 is present (detected above); `raw` holds the `W * n` bytes of the streams
        // (`raw.len() >= out.len() = W * n`) and `out` exactly `W * n` writable bytes.
        unsafe {
            if W == 4 {
                transpose4(raw.as_ptr(), n, out.as_mut_ptr().cast::<u8>());
            } else {
                transpose8(raw.as_ptr(), n, out.as_mut_ptr().cast::<u8>());
            }
        }
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (raw, out);
        false
    }
}

/// The elements past the last whole block of 32, byte by byte.
///
/// # Safety
/// `raw` holds `W * n` readable bytes, `out` `W * n` writable bytes.
#[cfg(target_arch = "x86_64")]
unsafe fn tail<const W: usize>(raw: *const u8, n: usize, out: *mut u8, from: usize) {
    for i in from..n {
        for b in 0..W {
            // SAFETY: i < n and b < W, so both offsets lie within the W * n bytes.
            unsafe { *out.add(i * W + b) = *raw.add(b * n + i) };
        }
    }
}

/// Four streams: blocks of 32 elements (128 bytes out).
///
/// # Safety
/// AVX2 is present; `raw` holds `4 * n` readable bytes, `out` `4 * n` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose4(raw: *const u8, n: usize, out: *mut u8) {
    use std::arch::x86_64::*;
    let blocks = n / 32;
    for k in 0..blocks {
        let i = k * 32;
        // SAFETY: i + 32 <= n, so every load reads bytes b * n + i .. b * n + i + 32 of stream b
        // (b < 4) and every store writes bytes 4 * i .. 4 * i + 128 of `out`.
        unsafe {
            let s0 = _mm256_loadu_si256(raw.add(i).cast());
            let s1 = _mm256_loadu_si256(raw.add(n + i).cast());
            let s2 = _mm256_loadu_si256(raw.add(2 * n + i).cast());
            let s3 = _mm256_loadu_si256(raw.add(3 * n + i).cast());
            // Byte pairs (0,1) and (2,3): per 128-bit lane, elements 0-7 / 16-23 (lo), 8-15 / 24-31 (hi).
            let a = _mm256_unpacklo_epi8(s0, s1);
            let b = _mm256_unpackhi_epi8(s0, s1);
            let c = _mm256_unpacklo_epi8(s2, s3);
            let d = _mm256_unpackhi_epi8(s2, s3);
            // Whole elements: lane 0 holds elements 0-3, 4-7, 8-11, 12-15; lane 1 the same plus 16.
            let e0 = _mm256_unpacklo_epi16(a, c);
            let e1 = _mm256_unpackhi_epi16(a, c);
            let e2 = _mm256_unpacklo_epi16(b, d);
            let e3 = _mm256_unpackhi_epi16(b, d);
            let o = out.add(4 * i);
            _mm256_storeu_si256(o.cast(), _mm256_permute2x128_si256::<0x20>(e0, e1));
            _mm256_storeu_si256(o.add(32).cast(), _mm256_permute2x128_si256::<0x20>(e2, e3));
            _mm256_storeu_si256(o.add(64).cast(), _mm256_permute2x128_si256::<0x31>(e0, e1));
            _mm256_storeu_si256(o.add(96).cast(), _mm256_permute2x128_si256::<0x31>(e2, e3));
        }
    }
    // SAFETY: the caller's bounds.
    unsafe { tail::<4>(raw, n, out, blocks * 32) };
}

/// Eight streams: blocks of 32 elements (256 bytes out).
///
/// # Safety
/// AVX2 is present; `raw` holds `8 * n` readable bytes, `out` `8 * n` writable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose8(raw: *const u8, n: usize, out: *mut u8) {
    use std::arch::x86_64::*;
    let blocks = n / 32;
    for k in 0..blocks {
        let i = k * 32;
        // SAFETY: i + 32 <= n: loads read bytes b * n + i .. + 32 of stream b (b < 8), stores
        // write bytes 8 * i .. 8 * i + 256 of `out`.
        unsafe {
            let s: [__m256i; 8] = std::array::from_fn(|b| _mm256_loadu_si256(raw.add(b * n + i).cast()));
            // Byte pairs (2j, 2j+1): lane 0 elements 0-7 (lo) / 8-15 (hi), lane 1 16-23 / 24-31.
            let p_lo: [__m256i; 4] = std::array::from_fn(|j| _mm256_unpacklo_epi8(s[2 * j], s[2 * j + 1]));
            let p_hi: [__m256i; 4] = std::array::from_fn(|j| _mm256_unpackhi_epi8(s[2 * j], s[2 * j + 1]));
            // Byte quads 0-3 (q[0..4]) and 4-7 (q[4..8]): elements 0-3, 4-7, 8-11, 12-15 per lane.
            let q: [__m256i; 8] = std::array::from_fn(|m| {
                let (h, pair) = (m / 4, m % 4); // bytes 4h..4h+4 of elements 4*pair.. (per lane)
                let (x, y) = if pair < 2 { (p_lo[2 * h], p_lo[2 * h + 1]) } else { (p_hi[2 * h], p_hi[2 * h + 1]) };
                if pair % 2 == 0 {
                    _mm256_unpacklo_epi16(x, y)
                } else {
                    _mm256_unpackhi_epi16(x, y)
                }
            });
            // Whole elements: r[2g] elements 4g, 4g+1, r[2g+1] 4g+2, 4g+3 (lane 0; lane 1 plus 16).
            let r: [__m256i; 8] = std::array::from_fn(|m| {
                let g = m / 2;
                if m % 2 == 0 {
                    _mm256_unpacklo_epi32(q[g], q[4 + g])
                } else {
                    _mm256_unpackhi_epi32(q[g], q[4 + g])
                }
            });
            let o = out.add(8 * i);
            for g in 0..4 {
                _mm256_storeu_si256(o.add(32 * g).cast(), _mm256_permute2x128_si256::<0x20>(r[2 * g], r[2 * g + 1]));
                _mm256_storeu_si256(o.add(128 + 32 * g).cast(), _mm256_permute2x128_si256::<0x31>(r[2 * g], r[2 * g + 1]));
            }
        }
    }
    // SAFETY: the caller's bounds.
    unsafe { tail::<8>(raw, n, out, blocks * 32) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits elements of `W` bytes into streams, as the writer does.
    fn split<const W: usize>(elems: &[[u8; W]]) -> Vec<u8> {
        let n = elems.len();
        let mut raw = vec![0u8; W * n];
        for (i, e) in elems.iter().enumerate() {
            for b in 0..W {
                raw[b * n + i] = e[b];
            }
        }
        raw
    }

    fn round_trip<const W: usize>() {
        for n in [0usize, 1, 31, 32, 33, 64, 100, 1000, 4099] {
            let elems: Vec<[u8; W]> = (0..n).map(|i| std::array::from_fn(|b| (i * 7 + b * 31 + i / 256) as u8)).collect();
            let mut raw = split(&elems);
            raw.extend_from_slice(&[0xAA; 5]); // bytes past the streams are not read
            let mut out = vec![MaybeUninit::<u8>::uninit(); W * n];
            if !transpose::<W>(&raw, &mut out) {
                return; // no AVX2 here: nothing to test
            }
            // SAFETY: transpose wrote every byte of `out`.
            let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
            assert_eq!(got, elems.concat(), "W = {W}, n = {n}");
        }
    }

    #[test]
    fn four_and_eight_byte_streams_become_elements() {
        round_trip::<4>();
        round_trip::<8>();
    }

    #[test]
    fn other_widths_and_short_inputs_are_left_to_the_caller() {
        let mut out = vec![MaybeUninit::<u8>::uninit(); 8];
        assert!(!transpose::<2>(&[0; 8], &mut out));
        assert!(!transpose::<4>(&[0; 7], &mut out));
        assert!(!transpose::<8>(&[0; 8], &mut out[..7]));
    }
}
