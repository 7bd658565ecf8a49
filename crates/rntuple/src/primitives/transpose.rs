//! Byte-split pages to elements by explicit SIMD shuffles, for the split encodings whose element
//! is the in-memory value as it is (`SplitReal32` read as `f32`, `SplitUInt64` as `u64`, ...):
//! stream `b` of a page of `n` elements holds byte `b` of every element, and the transpose writes
//! the elements' bytes straight into the destination. The generic decoder
//! ([`super::decode`]) leaves the shuffles to the compiler, which widens each stream's bytes
//! (`vpmovzx`) and merges them with shifts and ors: about twice the instructions of the AVX2
//! unpack ladder below (4 bytes: 4 loads, 8 unpacks, 4 lane permutes and 4 stores per 32
//! elements; 8 bytes: 8 loads, 24 unpacks, 8 permutes, 8 stores). Where the processor has
//! AVX-512 VBMI (Zen 4, Ice Lake and later), two-source permutes over 64-byte registers interleave
//! bytes, then words, then double words, already in order: 8 permutes per 64 elements of 4 bytes
//! (the ladder needs 24), 24 per 64 elements of 8 bytes (the ladder 64).
//!
//! This file and [`super::offsets_scan`] hold the crate's only SIMD intrinsics; the unsafe blocks
//! here depend on two facts each function states: the instruction set was detected at run time,
//! and the pointers cover the `W * n` bytes read and written (checked by the safe entry point
//! [`transpose`]).

use std::mem::MaybeUninit;

/// Writes the `n = out.len() / W` elements of the `W` byte streams at the start of `raw` into
/// `out`, as their little-endian bytes; `false` (nothing written) when this CPU or this `W` has no
/// fast path here, or the lengths do not fit (`raw` shorter than `out`, `out` not whole elements).
pub(crate) fn transpose<const W: usize>(raw: &[u8], out: &mut [MaybeUninit<u8>]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if !out.len().is_multiple_of(W) || raw.len() < out.len() || !(W == 4 || W == 8) {
            return false;
        }
        let n = out.len() / W;
        let (raw, out) = (raw.as_ptr(), out.as_mut_ptr().cast::<u8>());
        if has_vbmi() {
            // SAFETY: AVX-512 F/BW/VBMI are present (detected); `raw` holds the `W * n` bytes of
            // the streams (`raw.len() >= out.len() = W * n`) and `out` exactly `W * n` bytes.
            unsafe {
                if W == 4 {
                    transpose4_vbmi(raw, n, out);
                } else {
                    transpose8_vbmi(raw, n, out);
                }
            }
            return true;
        }
        if !std::arch::is_x86_feature_detected!("avx2") {
            return false;
        }
        // SAFETY: AVX2 is present (detected above); the same bounds as above.
        unsafe {
            if W == 4 {
                transpose4(raw, n, out);
            } else {
                transpose8(raw, n, out);
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

/// Whether AVX-512 paths may run: F detected, and not switched off by `RNTUPLE_NO_AVX512` (set,
/// the AVX2 and plain paths run: to compare them, or where AVX-512 lowers the clock).
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_avx512() -> bool {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("RNTUPLE_NO_AVX512").is_none() && std::arch::is_x86_feature_detected!("avx512f"))
}

/// Whether the AVX-512 transposes may run: [`has_avx512`], BW and VBMI.
#[cfg(target_arch = "x86_64")]
pub(crate) fn has_vbmi() -> bool {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| has_avx512() && std::arch::is_x86_feature_detected!("avx512bw") && std::arch::is_x86_feature_detected!("avx512vbmi"))
}

/// Indices of a two-source permute interleaving lanes of `size` bytes: output lane `2k` is lane
/// `from + k` of the first source, lane `2k + 1` lane `from + k` of the second (whose lanes are
/// numbered after the first's `64 / size`), for the 64-byte register's `64 / size` lanes.
#[cfg(target_arch = "x86_64")]
const fn interleave(size: usize, from: usize) -> [u8; 64] {
    let lanes = 64 / size;
    let mut idx = [0u8; 64];
    let mut k = 0;
    while k < lanes / 2 {
        let (a, b) = (from + k, lanes + from + k);
        // Little-endian lane values of `size` bytes (1, 2 or 4) holding a and b.
        idx[2 * k * size] = a as u8;
        idx[(2 * k + 1) * size] = b as u8;
        k += 1;
    }
    idx
}

#[cfg(target_arch = "x86_64")]
static BYTES_LO: [u8; 64] = interleave(1, 0);
#[cfg(target_arch = "x86_64")]
static BYTES_HI: [u8; 64] = interleave(1, 32);
#[cfg(target_arch = "x86_64")]
static WORDS_LO: [u8; 64] = interleave(2, 0);
#[cfg(target_arch = "x86_64")]
static WORDS_HI: [u8; 64] = interleave(2, 16);
#[cfg(target_arch = "x86_64")]
static DWORDS_LO: [u8; 64] = interleave(4, 0);
#[cfg(target_arch = "x86_64")]
static DWORDS_HI: [u8; 64] = interleave(4, 8);

/// One of the permute index tables above in a register.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn table(t: &[u8; 64]) -> std::arch::x86_64::__m512i {
    // SAFETY: the load reads the table's 64 bytes.
    unsafe { std::arch::x86_64::_mm512_loadu_si512(t.as_ptr().cast()) }
}

/// The sixteen 4-byte lanes of `x` widened to 8-byte lanes (zero above): lanes 0-7, then 8-15.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) fn widen32(x: std::arch::x86_64::__m512i) -> [std::arch::x86_64::__m512i; 2] {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_si512();
    [_mm512_permutex2var_epi32(x, table(&DWORDS_LO), zero), _mm512_permutex2var_epi32(x, table(&DWORDS_HI), zero)]
}

/// Four streams, AVX-512: blocks of 64 elements (256 bytes out); the rest (fewer than 64) byte by byte.
///
/// # Safety
/// AVX-512 F, BW and VBMI are present; `raw` holds `4 * n` readable bytes, `out` `4 * n` writable
/// bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn transpose4_vbmi(raw: *const u8, n: usize, out: *mut u8) {
    use std::arch::x86_64::_mm512_storeu_si512;
    // SAFETY: the caller's bounds: block `k`'s elements are bytes 256 * k .. 256 * k + 256 of
    // `out` (k < n / 64).
    unsafe {
        transpose4_vbmi_with(raw, n, |k, x| {
            for (j, v) in x.into_iter().enumerate() {
                _mm512_storeu_si512(out.add(256 * k + 64 * j).cast(), v);
            }
        });
        tail::<4>(raw, n, out, n / 64 * 64);
    }
}

/// The whole blocks of 64 elements of four streams of `n` bytes each (stream `b` at `raw + b *
/// n`), AVX-512: `put(k, x)` is called with each block `k` in order, `x[j]` holding its elements
/// `16 j .. 16 j + 16` as 4-byte lanes. The streams may be the first four of a page with more:
/// [`super::offsets_scan`] reads the low four bytes of 8-byte offsets this way.
///
/// # Safety
/// AVX-512 F, BW and VBMI are present; `raw` holds `4 * n` readable bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn transpose4_vbmi_with(raw: *const u8, n: usize, mut put: impl FnMut(usize, [std::arch::x86_64::__m512i; 4])) {
    use std::arch::x86_64::*;
    let [b_lo, b_hi, w_lo, w_hi] = [&BYTES_LO, &BYTES_HI, &WORDS_LO, &WORDS_HI].map(|t| table(t));
    for k in 0..n / 64 {
        let i = k * 64;
        // SAFETY: i + 64 <= n, so every load reads bytes b * n + i .. b * n + i + 64 of stream b
        // (b < 4).
        let s: [__m512i; 4] = std::array::from_fn(|b| unsafe { _mm512_loadu_si512(raw.add(b * n + i).cast()) });
        // Byte pairs (0,1) and (2,3) of elements 0-31 (lo) and 32-63 (hi).
        let a_lo = _mm512_permutex2var_epi8(s[0], b_lo, s[1]);
        let a_hi = _mm512_permutex2var_epi8(s[0], b_hi, s[1]);
        let c_lo = _mm512_permutex2var_epi8(s[2], b_lo, s[3]);
        let c_hi = _mm512_permutex2var_epi8(s[2], b_hi, s[3]);
        put(
            k,
            [
                _mm512_permutex2var_epi16(a_lo, w_lo, c_lo),
                _mm512_permutex2var_epi16(a_lo, w_hi, c_lo),
                _mm512_permutex2var_epi16(a_hi, w_lo, c_hi),
                _mm512_permutex2var_epi16(a_hi, w_hi, c_hi),
            ],
        );
    }
}

/// Eight streams, AVX-512: blocks of 64 elements (512 bytes out); the rest (fewer than 64) byte by byte.
///
/// # Safety
/// AVX-512 F, BW and VBMI are present; `raw` holds `8 * n` readable bytes, `out` `8 * n` writable
/// bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
unsafe fn transpose8_vbmi(raw: *const u8, n: usize, out: *mut u8) {
    use std::arch::x86_64::_mm512_storeu_si512;
    // SAFETY: the caller's; every store the closure makes is one `transpose8_vbmi_with` bounds.
    unsafe {
        transpose8_vbmi_with(raw, n, out, |o, x| _mm512_storeu_si512(o.cast(), x));
        tail::<8>(raw, n, out, n / 64 * 64);
    }
}

/// The whole blocks of 64 elements of eight streams, AVX-512: `put(at, elements)` is called with
/// each eight consecutive elements (64 bytes) and where they go in `out`, in the order of the
/// elements, and must store them there (after whatever else it does with them, such as the
/// running sum of offsets, `super::offsets_scan`). The elements past the last whole block are
/// left to the caller.
///
/// # Safety
/// AVX-512 F, BW and VBMI are present; `raw` holds `8 * n` readable bytes, `out` `8 * n` writable
/// bytes; `put` writes at most the 64 bytes at the address it is given.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
pub(crate) unsafe fn transpose8_vbmi_with(raw: *const u8, n: usize, out: *mut u8, mut put: impl FnMut(*mut u8, std::arch::x86_64::__m512i)) {
    use std::arch::x86_64::*;
    let blocks = n / 64;
    let [b_lo, b_hi, w_lo, w_hi, d_lo, d_hi] = [&BYTES_LO, &BYTES_HI, &WORDS_LO, &WORDS_HI, &DWORDS_LO, &DWORDS_HI].map(|t| table(t));
    for k in 0..blocks {
        let i = k * 64;
        // SAFETY: i + 64 <= n: loads read bytes b * n + i .. + 64 of stream b (b < 8), and the
        // addresses given to `put` are bytes 8 * i .. 8 * i + 512 of `out`.
        unsafe {
            let s: [__m512i; 8] = std::array::from_fn(|b| _mm512_loadu_si512(raw.add(b * n + i).cast()));
            // Byte pairs (2j, 2j+1): p[2j] of elements 0-31, p[2j+1] of elements 32-63.
            let p: [__m512i; 8] = std::array::from_fn(|m| {
                let j = m / 2;
                _mm512_permutex2var_epi8(s[2 * j], if m % 2 == 0 { b_lo } else { b_hi }, s[2 * j + 1])
            });
            // Byte quads 0-3 (q[0..4]) and 4-7 (q[4..8]) of elements 16g .. 16g + 16 (q[4h + g]).
            let q: [__m512i; 8] = std::array::from_fn(|m| {
                let (h, g) = (m / 4, m % 4);
                let (x, y) = (p[4 * h + g / 2], p[4 * h + 2 + g / 2]);
                _mm512_permutex2var_epi16(x, if g % 2 == 0 { w_lo } else { w_hi }, y)
            });
            let o = out.add(8 * i);
            for g in 0..4 {
                // Whole elements 16g .. 16g + 8, then 16g + 8 .. 16g + 16.
                put(o.add(128 * g), _mm512_permutex2var_epi32(q[g], d_lo, q[4 + g]));
                put(o.add(128 * g + 64), _mm512_permutex2var_epi32(q[g], d_hi, q[4 + g]));
            }
        }
    }
}

/// The elements past the last whole block (of 32 or 64), byte by byte.
///
/// # Safety
/// `raw` holds `W * n` readable bytes, `out` `W * n` writable bytes.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn tail<const W: usize>(raw: *const u8, n: usize, out: *mut u8, from: usize) {
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

    /// Every implementation this processor runs (the AVX2 ladder, the AVX-512 permutes, and the
    /// entry point's choice), each against the elements it must give back.
    fn round_trip<const W: usize>() {
        type Imp = unsafe fn(*const u8, usize, *mut u8);
        let mut imps: Vec<(&str, Imp)> = Vec::new();
        if std::arch::is_x86_feature_detected!("avx2") {
            imps.push(("avx2", if W == 4 { transpose4 } else { transpose8 }));
        }
        if has_vbmi() {
            imps.push(("avx512", if W == 4 { transpose4_vbmi } else { transpose8_vbmi }));
        }
        for n in [0usize, 1, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4099, 65_536 + 77] {
            let elems: Vec<[u8; W]> = (0..n).map(|i| std::array::from_fn(|b| (i * 7 + b * 31 + i / 256) as u8)).collect();
            let mut raw = split(&elems);
            raw.extend_from_slice(&[0xAA; 5]); // bytes past the streams are not read
            let mut out = vec![MaybeUninit::<u8>::uninit(); W * n];
            if transpose::<W>(&raw, &mut out) {
                // SAFETY: transpose wrote every byte of `out`.
                let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
                assert_eq!(got, elems.concat(), "entry point, W = {W}, n = {n}");
            }
            for (name, f) in &imps {
                let mut got = vec![0u8; W * n];
                // SAFETY: the instruction set was detected above; `raw` holds W * n bytes and
                // `got` W * n.
                unsafe { f(raw.as_ptr(), n, got.as_mut_ptr()) };
                assert_eq!(got, elems.concat(), "{name}, W = {W}, n = {n}");
            }
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
