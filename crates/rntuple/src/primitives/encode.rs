//! Page encoding: in-memory values to the bytes of one page, the inverse of
//! [`super::decode`]. Split, zigzag and delta encodings apply per page, as ROOT does.

use super::column_type::ColumnType;
pub use super::element::PageValues;
use crate::error::{Error, Result};

/// Byte-split encoding, the inverse of the decoder's `unsplit`: byte `b` of every element goes to
/// stream `b`; appends `W * vals.len()` bytes to `out`. `f` turns an element into its
/// little-endian bytes (zigzag, delta) and is called once per element, in order.
///
/// On x86-64 CPUs with AVX2 the same code is compiled a second time with AVX2 enabled and chosen
/// at run time, as for decoding.
#[inline(always)]
fn split<const W: usize, T: Copy, F: FnMut(T) -> [u8; W]>(vals: &[T], f: F, out: &mut Vec<u8>) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the only precondition of calling a `#[target_feature(enable = "avx2")]` function
        // is that the CPU supports AVX2, which was detected just above.
        return unsafe { split_avx2::<W, T, F>(vals, f, out) };
    }
    split_portable::<W, T, F>(vals, f, out)
}

/// [`split_portable`] compiled with AVX2 enabled.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn split_avx2<const W: usize, T: Copy, F: FnMut(T) -> [u8; W]>(vals: &[T], f: F, out: &mut Vec<u8>) {
    split_portable::<W, T, F>(vals, f, out)
}

/// Blocks of 64 elements are transposed into a local `[[u8; 64]; W]` (element by element, byte
/// index innermost: the form the compiler vectorizes), then copied to the `W` streams. Measured on
/// 1 MiB pages (AMD EPYC, AVX2): SplitReal32 3.9 -> 16 GB/s, SplitUInt64 4.0 -> 9.8 GB/s against
/// writing one byte at a time into the streams (transposing from a `[[u8; W]; 64]` gave 5.3-5.6).
#[inline(always)]
fn split_portable<const W: usize, T: Copy, F: FnMut(T) -> [u8; W]>(vals: &[T], mut f: F, out: &mut Vec<u8>) {
    const B: usize = 64;
    let n = vals.len();
    if n == 0 {
        return;
    }
    let base = out.len();
    out.resize(base + W * n, 0);
    let mut parts = out[base..].chunks_exact_mut(n);
    let mut streams: [&mut [u8]; W] = std::array::from_fn(|_| parts.next().unwrap_or_default());
    let full = n - n % B;
    for (k, blk) in vals[..full].chunks_exact(B).enumerate() {
        let Some(blk) = blk.first_chunk::<B>() else { continue };
        let mut t = [[0u8; B]; W];
        for (i, &v) in blk.iter().enumerate() {
            let a = f(v);
            for b in 0..W {
                t[b][i] = a[b];
            }
        }
        for (stream, t) in streams.iter_mut().zip(&t) {
            if let Some(o) = stream[k * B..].first_chunk_mut::<B>() {
                *o = *t;
            }
        }
    }
    for (j, &v) in vals[full..].iter().enumerate() {
        for (stream, x) in streams.iter_mut().zip(f(v)) {
            stream[full + j] = x;
        }
    }
}

fn zigzag(x: i64, bits: u32) -> u64 {
    ((x << 1) ^ (x >> (bits - 1))) as u64
}

/// Appends the little-endian bytes of `v`: one copy of the whole slice on little-endian machines
/// (a per-element loop was a sixth of an uncompressed write).
fn put_le<T: arrow_buffer::ArrowNativeType>(v: &[T], out: &mut Vec<u8>) {
    use arrow_buffer::ToByteSlice;
    let start = out.len();
    out.extend_from_slice(v.to_byte_slice());
    if cfg!(target_endian = "big") {
        out[start..].chunks_exact_mut(std::mem::size_of::<T>()).for_each(|c| c.reverse());
    }
}

/// Encodes `vals` as a page of column type `ty`, appending the bytes to `out`.
pub fn encode_page(ty: ColumnType, vals: PageValues, out: &mut Vec<u8>) -> Result<()> {
    use ColumnType as C;
    use PageValues as V;
    match (ty, vals) {
        (C::Bit, V::Bool(v)) => {
            let base = out.len();
            out.resize(base + v.len().div_ceil(8), 0);
            for (i, &b) in v.iter().enumerate() {
                out[base + i / 8] |= (b as u8) << (i % 8);
            }
        }
        (C::Byte | C::Char | C::UInt8, V::U8(v)) => out.extend_from_slice(v),
        (C::Int8, V::I8(v)) => out.extend(v.iter().map(|&x| x as u8)),
        (C::Int16, V::I16(v)) => put_le(v, out),
        (C::UInt16, V::U16(v)) => put_le(v, out),
        (C::Int32, V::I32(v)) => put_le(v, out),
        (C::UInt32, V::U32(v)) => put_le(v, out),
        (C::Int64, V::I64(v)) => put_le(v, out),
        (C::UInt64 | C::Index64, V::U64(v)) => put_le(v, out),
        (C::Index32, V::U64(v)) => {
            for &x in v {
                let y = u32::try_from(x).map_err(|_| Error::Invalid(format!("offset {x} does not fit an Index32 column")))?;
                out.extend_from_slice(&y.to_le_bytes());
            }
        }
        (C::Real16, V::F32(v)) => v.iter().for_each(|&x| out.extend_from_slice(&half::f16::from_f32(x).to_bits().to_le_bytes())),
        (C::Real32, V::F32(v)) => put_le(v, out),
        (C::Real64, V::F64(v)) => put_le(v, out),
        (C::SplitInt16, V::I16(v)) => split::<2, _, _>(v, |x| (zigzag(x as i64, 16) as u16).to_le_bytes(), out),
        (C::SplitUInt16, V::U16(v)) => split::<2, _, _>(v, |x: u16| x.to_le_bytes(), out),
        (C::SplitInt32, V::I32(v)) => split::<4, _, _>(v, |x| (zigzag(x as i64, 32) as u32).to_le_bytes(), out),
        (C::SplitUInt32, V::U32(v)) => split::<4, _, _>(v, |x: u32| x.to_le_bytes(), out),
        (C::SplitInt64, V::I64(v)) => split::<8, _, _>(v, |x| zigzag(x, 64).to_le_bytes(), out),
        (C::SplitUInt64, V::U64(v)) => split::<8, _, _>(v, |x: u64| x.to_le_bytes(), out),
        (C::SplitReal32, V::F32(v)) => split::<4, _, _>(v, |x: f32| x.to_le_bytes(), out),
        (C::SplitReal64, V::F64(v)) => split::<8, _, _>(v, |x: f64| x.to_le_bytes(), out),
        (C::SplitIndex64, V::U64(v)) => {
            let mut prev = 0u64;
            split::<8, _, _>(
                v,
                |x: u64| {
                    let d = x.wrapping_sub(prev);
                    prev = x;
                    d.to_le_bytes()
                },
                out,
            )
        }
        (C::SplitIndex32, V::U64(v)) => {
            if let Some(&x) = v.iter().find(|&&x| x > u32::MAX as u64) {
                return Err(Error::Invalid(format!("offset {x} does not fit a SplitIndex32 column")));
            }
            let mut prev = 0u32;
            split::<4, _, _>(
                v,
                |x: u64| {
                    let x = x as u32;
                    let d = x.wrapping_sub(prev);
                    prev = x;
                    d.to_le_bytes()
                },
                out,
            )
        }
        (C::Switch, V::Switch(v)) => {
            for &(i, t) in v {
                out.extend_from_slice(&i.to_le_bytes());
                out.extend_from_slice(&t.to_le_bytes());
            }
        }
        (t, _) => return Err(Error::Invalid(format!("values of the wrong type for a {} column", t.name()))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::decode::{decode_append, decode_switch, ColumnCodec};

    fn codec(ty: ColumnType) -> ColumnCodec {
        ColumnCodec { ty, bits: ty.fixed_bits().unwrap_or(0), range: None }
    }

    #[test]
    fn round_trips_through_the_decoder() {
        let i32s = [0i32, -1, 1, i32::MIN, i32::MAX, 12345];
        for ty in [ColumnType::Int32, ColumnType::SplitInt32] {
            let mut b = Vec::new();
            encode_page(ty, PageValues::I32(&i32s), &mut b).unwrap();
            let mut out: Vec<i32> = Vec::new();
            decode_append(&codec(ty), &b, i32s.len(), &mut out).unwrap();
            assert_eq!(out, i32s, "{ty:?}");
        }
        let offs = [3u64, 3, 10, 11, 400];
        for ty in [ColumnType::Index64, ColumnType::SplitIndex64, ColumnType::Index32, ColumnType::SplitIndex32] {
            let mut b = Vec::new();
            encode_page(ty, PageValues::U64(&offs), &mut b).unwrap();
            let mut out: Vec<u64> = Vec::new();
            decode_append(&codec(ty), &b, offs.len(), &mut out).unwrap();
            assert_eq!(out, offs, "{ty:?}");
        }
        let f = [1.5f32, -0.0, f32::INFINITY, 3.25];
        for ty in [ColumnType::Real32, ColumnType::SplitReal32, ColumnType::Real16] {
            let mut b = Vec::new();
            encode_page(ty, PageValues::F32(&f), &mut b).unwrap();
            let mut out: Vec<f32> = Vec::new();
            decode_append(&codec(ty), &b, f.len(), &mut out).unwrap();
            assert_eq!(out.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), f.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        }
        let bits = [true, false, true, true, false, false, false, false, true];
        let mut b = Vec::new();
        encode_page(ColumnType::Bit, PageValues::Bool(&bits), &mut b).unwrap();
        assert_eq!(b, [0b0000_1101, 1]);
        let sw = [(0u64, 1u32), (0, 2), (1, 1), (0, 0)];
        let mut b = Vec::new();
        encode_page(ColumnType::Switch, PageValues::Switch(&sw), &mut b).unwrap();
        let mut out = Vec::new();
        decode_switch(&b, 4, &mut out).unwrap();
        assert_eq!(out, sw);
        let i64s = [i64::MIN, -7, 0, i64::MAX];
        let mut b = Vec::new();
        encode_page(ColumnType::SplitInt64, PageValues::I64(&i64s), &mut b).unwrap();
        let mut out: Vec<i64> = Vec::new();
        decode_append(&codec(ColumnType::SplitInt64), &b, 4, &mut out).unwrap();
        assert_eq!(out, i64s);
    }

    /// The blocked split equals the byte-by-byte definition, for every width, sizes around the
    /// block size, and after bytes already in the output.
    #[test]
    fn split_matches_the_definition() {
        fn reference<const W: usize>(vals: &[[u8; W]]) -> Vec<u8> {
            let n = vals.len();
            let mut out = vec![0u8; W * n];
            for (i, a) in vals.iter().enumerate() {
                for (b, &x) in a.iter().enumerate() {
                    out[b * n + i] = x;
                }
            }
            out
        }
        for n in [0usize, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4099] {
            let v64: Vec<u64> = (0..n as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 3)).collect();
            let mut out = vec![0xAAu8; 3];
            split::<8, _, _>(&v64, |x: u64| x.to_le_bytes(), &mut out);
            assert_eq!(&out[..3], &[0xAA; 3]);
            assert_eq!(out[3..], reference(&v64.iter().map(|x| x.to_le_bytes()).collect::<Vec<_>>())[..], "W=8 n={n}");
            let v32: Vec<u32> = v64.iter().map(|&x| (x >> 17) as u32).collect();
            let mut out = Vec::new();
            split::<4, _, _>(&v32, |x: u32| x.to_le_bytes(), &mut out);
            assert_eq!(out, reference(&v32.iter().map(|x| x.to_le_bytes()).collect::<Vec<_>>()), "W=4 n={n}");
            let v16: Vec<u16> = v64.iter().map(|&x| (x >> 40) as u16).collect();
            let mut out = Vec::new();
            split::<2, _, _>(&v16, |x: u16| x.to_le_bytes(), &mut out);
            assert_eq!(out, reference(&v16.iter().map(|x| x.to_le_bytes()).collect::<Vec<_>>()), "W=2 n={n}");
            // a stateful map (delta) sees the elements once each, in order
            let mut prev = 0u64;
            let mut out = Vec::new();
            split::<8, _, _>(&v64, |x: u64| { let d = x.wrapping_sub(prev); prev = x; d.to_le_bytes() }, &mut out);
            let mut p = 0u64;
            let deltas: Vec<[u8; 8]> = v64.iter().map(|&x| { let d = x.wrapping_sub(p); p = x; d.to_le_bytes() }).collect();
            assert_eq!(out, reference(&deltas), "delta n={n}");
        }
    }

    #[test]
    fn wrong_type_and_overflow_are_errors() {
        let mut b = Vec::new();
        assert!(encode_page(ColumnType::SplitReal32, PageValues::I32(&[1]), &mut b).is_err());
        assert!(encode_page(ColumnType::Index32, PageValues::U64(&[1 << 33]), &mut b).is_err());
    }
}
