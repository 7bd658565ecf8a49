//! Reduced-precision float columns on the write side: `Real16` (IEEE half), `Real32Trunc` (the
//! top bits of the float32 pattern) and `Real32Quant` (an integer in a value range), the inverse
//! of what [`super::decode`] reads. The arithmetic follows ROOT 6.40 (`SetHalfPrecision`,
//! `SetTruncated`, `SetQuantized`), so the values ROOT reads back from a page written here are bit
//! for bit those it reads from its own page of the same inputs:
//!
//! * half: round to nearest, ties to even; doubles are first rounded to float; overflow gives
//!   infinity, NaN stays a (quiet) NaN;
//! * truncation: doubles are first rounded to float, then the low `32 - bits` bits of the float's
//!   pattern are dropped (rounding towards zero);
//! * quantization: in double precision, `q = floor(0.5 + (x - min) * (2^bits - 1) / (max - min))`;
//!   for a `float` field `min` and `max` are first rounded to float (ROOT takes them as the
//!   field's type). A value outside `[min, max]` (or NaN) is refused: ROOT leaves it undefined.
//!
//! Bit-packed items (truncated and quantized) form one little-endian bit stream per page, item `i`
//! at bits `[i * bits, (i + 1) * bits)`, least significant bit first.

use super::column_type::ColumnType;
use super::element::PageValues;
use crate::error::{Error, Result};

/// A reduced-precision on-disk representation of a `float` or `double` field (ROOT's
/// `SetHalfPrecision`, `SetTruncated`, `SetQuantized`).
///
/// ```
/// use rntuple::primitives::reduced_float::FloatRepr;
/// let q = FloatRepr::Quantized { min: 0.0, max: 1000.0, bits: 16 };
/// q.validate()?;
/// assert_eq!(q.bits_on_storage(), 16);
/// assert!(FloatRepr::Truncated { bits: 9 }.validate().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FloatRepr {
    /// IEEE-754 binary16 (`Real16`): 1 sign, 5 exponent, 10 mantissa bits.
    Half,
    /// The float's top `bits` bits (`Real32Trunc`), 10 to 31: sign, exponent and `bits - 9`
    /// mantissa bits; rounds towards zero.
    Truncated {
        /// Bits kept per value.
        bits: u8,
    },
    /// An unsigned `bits`-bit integer spread evenly over `[min, max]` (`Real32Quant`), 1 to 32 bits.
    Quantized {
        /// Smallest value the field may hold.
        min: f64,
        /// Largest value the field may hold.
        max: f64,
        /// Bits per value.
        bits: u8,
    },
}

impl FloatRepr {
    /// Checks the bit count and the range as ROOT does (bits 10..=31 for truncation, 1..=32 for
    /// quantization; a range of finite, non-denormal bounds with `min < max`).
    pub fn validate(&self) -> std::result::Result<(), String> {
        match *self {
            FloatRepr::Half => Ok(()),
            FloatRepr::Truncated { bits } if (10..=31).contains(&bits) => Ok(()),
            FloatRepr::Truncated { bits } => Err(format!("truncation to {bits} bits: the bit count must be between 10 and 31")),
            FloatRepr::Quantized { bits, .. } if !(1..=32).contains(&bits) => {
                Err(format!("quantization to {bits} bits: the bit count must be between 1 and 32"))
            }
            FloatRepr::Quantized { min, max, .. } => {
                let ok = |x: f64| x == 0.0 || x.is_normal();
                if !ok(min) || !ok(max) {
                    Err(format!("quantization range [{min}, {max}]: the bounds must be finite and not denormal"))
                } else if min >= max {
                    Err(format!("quantization range [{min}, {max}]: min must be less than max"))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// The representation for a field of C++ type `float` (`is_float`) or `double`: a `float`
    /// field's range bounds are rounded to float, as ROOT's `SetQuantized` takes them as the
    /// field's type; an error when a bound is then no longer finite.
    pub fn for_field_type(self, is_float: bool) -> std::result::Result<FloatRepr, String> {
        match self {
            FloatRepr::Quantized { min, max, bits } if is_float => {
                let r = FloatRepr::Quantized { min: min as f32 as f64, max: max as f32 as f64, bits };
                r.validate().map(|_| r)
            }
            r => r.validate().map(|_| r),
        }
    }

    /// The column type.
    pub fn column_type(&self) -> ColumnType {
        match self {
            FloatRepr::Half => ColumnType::Real16,
            FloatRepr::Truncated { .. } => ColumnType::Real32Trunc,
            FloatRepr::Quantized { .. } => ColumnType::Real32Quant,
        }
    }

    /// Bits per value on storage.
    pub fn bits_on_storage(&self) -> u16 {
        match *self {
            FloatRepr::Half => 16,
            FloatRepr::Truncated { bits } | FloatRepr::Quantized { bits, .. } => bits as u16,
        }
    }

    /// The value range recorded in the column descriptor (quantization only).
    pub fn value_range(&self) -> Option<(f64, f64)> {
        match *self {
            FloatRepr::Quantized { min, max, .. } => Some((min, max)),
            _ => None,
        }
    }

    /// Whether `x` may be stored: always, except outside the quantization range (or NaN).
    #[inline]
    pub fn accepts(&self, x: f64) -> bool {
        match *self {
            FloatRepr::Quantized { min, max, .. } => min <= x && x <= max,
            _ => true,
        }
    }

    /// The error for a value [`FloatRepr::accepts`] refuses, naming the field and (when known)
    /// the entry.
    pub fn range_error(&self, field: &str, entry: Option<u64>, x: f64) -> Error {
        let (min, max) = self.value_range().unwrap_or((f64::NAN, f64::NAN));
        let at = entry.map(|e| format!(" entry {e}:")).unwrap_or_default();
        Error::Invalid(format!("field '{field}':{at} value {x} is outside the quantization range [{min}, {max}]"))
    }
}

/// The IEEE half-precision bits of `x`, rounded to nearest (ties to even).
#[inline]
pub fn half_bits(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

/// The `bits` kept of `x`'s float32 pattern (the low bits of the result).
#[inline]
pub fn truncated_bits(x: f32, bits: u8) -> u32 {
    x.to_bits() >> (32 - bits as u32)
}

/// The quantized integer of `x` in `[min, max]` with `bits` bits; `None` when `x` is outside the
/// range or NaN.
#[inline]
pub fn quantize(x: f64, min: f64, max: f64, bits: u8) -> Option<u32> {
    if !(min <= x && x <= max) {
        return None;
    }
    let q_max = ((1u64 << bits) - 1) as f64;
    let scale = q_max / (max - min);
    // Rounds half up; `as` truncates the non-negative value, and saturates (never reached).
    Some((0.5 + (x - min) * scale) as u32)
}

/// Appends `items` (each in its low `bits` bits) to `out` as a little-endian bit stream.
fn pack_bits(items: impl Iterator<Item = u32>, bits: u8, out: &mut Vec<u8>) {
    let nb = bits as u32;
    let mask = if nb == 32 { u32::MAX as u64 } else { (1u64 << nb) - 1 };
    let mut acc = 0u64;
    let mut filled = 0u32;
    for it in items {
        acc |= (it as u64 & mask) << filled;
        filled += nb;
        while filled >= 8 {
            out.push(acc as u8);
            acc >>= 8;
            filled -= 8;
        }
    }
    if filled > 0 {
        out.push(acc as u8);
    }
}

/// Encodes a page of `vals` (float or double values) with representation `repr`, appending the
/// bytes to `out`; `field` names the column's field in errors. A value outside a quantization
/// range is an error (nothing is appended).
pub fn encode_reduced(repr: &FloatRepr, vals: PageValues, field: &str, out: &mut Vec<u8>) -> Result<()> {
    fn to_f32(v: PageValues<'_>) -> Option<std::borrow::Cow<'_, [f32]>> {
        match v {
            PageValues::F32(v) => Some(std::borrow::Cow::Borrowed(v)),
            PageValues::F64(v) => Some(std::borrow::Cow::Owned(v.iter().map(|&x| x as f32).collect())),
            _ => None,
        }
    }
    let wrong = || Error::Internal(format!("field '{field}': a {} column takes float or double values", repr.column_type().name()));
    match *repr {
        FloatRepr::Half => {
            let v = to_f32(vals).ok_or_else(wrong)?;
            out.reserve(2 * v.len());
            v.iter().for_each(|&x| out.extend_from_slice(&half_bits(x).to_le_bytes()));
        }
        FloatRepr::Truncated { bits } => {
            let v = to_f32(vals).ok_or_else(wrong)?;
            out.reserve((v.len() * bits as usize).div_ceil(8));
            pack_bits(v.iter().map(|&x| truncated_bits(x, bits)), bits, out);
        }
        FloatRepr::Quantized { min, max, bits } => {
            let q: Vec<u32> = match vals {
                PageValues::F32(v) => {
                    v.iter().map(|&x| quantize(x as f64, min, max, bits).ok_or_else(|| repr.range_error(field, None, x as f64))).collect::<Result<_>>()?
                }
                PageValues::F64(v) => v.iter().map(|&x| quantize(x, min, max, bits).ok_or_else(|| repr.range_error(field, None, x))).collect::<Result<_>>()?,
                _ => return Err(wrong()),
            };
            out.reserve((q.len() * bits as usize).div_ceil(8));
            pack_bits(q.into_iter(), bits, out);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::decode::{decode_append, ColumnCodec};

    fn codec(r: &FloatRepr) -> ColumnCodec {
        ColumnCodec { ty: r.column_type(), bits: r.bits_on_storage(), range: r.value_range() }
    }

    fn round_trip_f32(r: FloatRepr, vals: &[f32]) -> Vec<f32> {
        let mut b = Vec::new();
        encode_reduced(&r, PageValues::F32(vals), "x", &mut b).unwrap();
        assert_eq!(b.len(), (vals.len() * r.bits_on_storage() as usize).div_ceil(8));
        let mut out: Vec<f32> = Vec::new();
        decode_append(&codec(&r), &b, vals.len(), &mut out).unwrap();
        out
    }

    fn round_trip_f64(r: FloatRepr, vals: &[f64]) -> Vec<f64> {
        let mut b = Vec::new();
        encode_reduced(&r, PageValues::F64(vals), "x", &mut b).unwrap();
        let mut out: Vec<f64> = Vec::new();
        decode_append(&codec(&r), &b, vals.len(), &mut out).unwrap();
        out
    }

    #[test]
    fn truncation_rounds_towards_zero() {
        let vals = [1.234_567_9_f32, -1.234_567_9, 0.0, -0.0, 3.0e38, -7.5e-3, f32::INFINITY, 1.0];
        for bits in [10u8, 11, 12, 16, 20, 23, 24, 31] {
            let out = round_trip_f32(FloatRepr::Truncated { bits }, &vals);
            for (&x, &y) in vals.iter().zip(&out) {
                // Same sign, never larger in magnitude, and exactly the kept bits.
                assert!(y.abs() <= x.abs() && y.is_sign_negative() == x.is_sign_negative(), "{x} -> {y} at {bits}");
                assert_eq!(y.to_bits(), x.to_bits() & (u32::MAX << (32 - bits)), "{x} at {bits}");
            }
        }
        // The values the format notes give for a ROOT file.
        assert_eq!(round_trip_f32(FloatRepr::Truncated { bits: 10 }, &[1.234_567_9]), [1.0]);
        assert_eq!(round_trip_f32(FloatRepr::Truncated { bits: 16 }, &[1.234_567_9]), [1.234375]);
        // Doubles are rounded to float first.
        let d = [1.0 + 1e-12, 0.1];
        let out = round_trip_f64(FloatRepr::Truncated { bits: 31 }, &d);
        assert_eq!(out, [1.0, f64::from(f32::from_bits(0.1f32.to_bits() & !1))]);
    }

    #[test]
    fn half_rounds_to_nearest_even() {
        let vals = [1.0f32, 1.0 + 2f32.powi(-11), 1.0 + 3.0 * 2f32.powi(-11), 65504.0, 65520.0, 1e-8, -2.5, f32::NAN];
        let out = round_trip_f32(FloatRepr::Half, &vals);
        assert_eq!(out[0], 1.0);
        assert_eq!(out[1], 1.0, "tie to even (down)");
        assert_eq!(out[2], 1.0 + 2.0 * 2f32.powi(-10), "tie to even (up)");
        assert_eq!(out[3], 65504.0);
        assert_eq!(out[4], f32::INFINITY, "overflow");
        assert_eq!(out[5], 0.0, "underflow");
        assert_eq!(out[6], -2.5);
        assert!(out[7].is_nan());
        assert_eq!(round_trip_f64(FloatRepr::Half, &[0.1]), [f64::from(half::f16::from_f32(0.1).to_f32())]);
    }

    #[test]
    fn quantization_round_trips_within_a_step() {
        for (min, max, bits) in [(-2.0, 3.0, 8u8), (0.0, 1000.0, 16), (-1.0, 1.0, 1), (-5.0, 7.0, 32), (0.0, 1.0, 20)] {
            let r = FloatRepr::Quantized { min, max, bits };
            let vals: Vec<f64> = (0..=100).map(|i| min + (max - min) * i as f64 / 100.0).collect();
            let out = round_trip_f64(r, &vals);
            let step = (max - min) / ((1u64 << bits) - 1) as f64;
            for (&x, &y) in vals.iter().zip(&out) {
                assert!((x - y).abs() <= step / 2.0 + 1e-12 * max.abs().max(1.0), "{x} -> {y} ({min}, {max}, {bits})");
                assert!(min <= y && y <= max);
            }
            assert_eq!(out[0], min);
            assert_eq!(out[100], max);
        }
        // The value the format notes give for a ROOT file: 1.23456789 in [-2, 3] with 8 bits.
        let out = round_trip_f32(FloatRepr::Quantized { min: -2.0, max: 3.0, bits: 8 }, &[1.234_567_9]);
        assert!((out[0] - 1.235294).abs() < 1e-6);
        // Half-way rounds up: 0.5 step above min.
        assert_eq!(quantize(0.5, 0.0, 255.0, 8), Some(1));
        assert_eq!(quantize(0.49, 0.0, 255.0, 8), Some(0));
    }

    #[test]
    fn out_of_range_values_are_errors() {
        let r = FloatRepr::Quantized { min: 0.0, max: 10.0, bits: 12 };
        for bad in [-0.001, 10.5, f64::NAN, f64::INFINITY] {
            let mut b = Vec::new();
            let e = encode_reduced(&r, PageValues::F64(&[1.0, bad]), "jet.pt", &mut b).unwrap_err().to_string();
            assert!(e.contains("jet.pt") && e.contains(&format!("{bad}")) && e.contains("[0, 10]"), "{e}");
            assert!(b.is_empty());
        }
        let e = r.range_error("a.b", Some(7), 11.0).to_string();
        assert!(e.contains("'a.b'") && e.contains("entry 7") && e.contains("11"), "{e}");
    }

    #[test]
    fn invalid_settings() {
        assert!(FloatRepr::Truncated { bits: 9 }.validate().is_err());
        assert!(FloatRepr::Truncated { bits: 32 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 0.0, max: 1.0, bits: 0 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 0.0, max: 1.0, bits: 33 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 1.0, max: 1.0, bits: 8 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 0.0, max: f64::INFINITY, bits: 8 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 1e-310, max: 1.0, bits: 8 }.validate().is_err());
        assert!(FloatRepr::Quantized { min: 0.0, max: 1e300, bits: 8 }.for_field_type(true).is_err());
        assert_eq!(
            FloatRepr::Quantized { min: 0.1, max: 1.0, bits: 8 }.for_field_type(true),
            Ok(FloatRepr::Quantized { min: 0.1f32 as f64, max: 1.0, bits: 8 })
        );
    }

    #[test]
    fn bit_stream_layout() {
        // Three 12-bit items: 0xABC, 0x123, 0xFFF -> LSB first.
        let mut b = Vec::new();
        pack_bits([0xABCu32, 0x123, 0xFFF].into_iter(), 12, &mut b);
        assert_eq!(b, [0xBC, 0x3A, 0x12, 0xFF, 0x0F]);
        let mut b = Vec::new();
        pack_bits([u32::MAX, 1].into_iter(), 32, &mut b);
        assert_eq!(b, [0xFF, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0]);
    }
}
