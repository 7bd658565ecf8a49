//! The element types of bulk reads ([`BulkElement`], sealed) and the scratch a
//! [`BulkReader`](crate::read::BulkReader) keeps: a page's stored and decompressed bytes, and per
//! element type a decoded page that a range read cuts through.

use crate::logical::kind::Scalar;
use crate::primitives::decode::Native;
use std::mem::MaybeUninit;

/// Element types a bulk read decodes into: `bool`, the fixed-width integers, `f32` and `f64`
/// (sealed). The type must be the column's [`BulkColumn::element_type`](crate::read::BulkColumn::element_type) (`i8` for `char`, `u8`
/// for `std::byte`).
///
/// ```
/// fn takes<T: rntuple::read::BulkElement>(_: &[T]) {}
/// takes(&[1.0f32, 2.0]);
/// takes(&[1u64, 2]);
/// ```
pub trait BulkElement: sealed::Sealed {}

mod sealed {
    use super::{Native, PageBuffers, Scalar};
    use std::mem::MaybeUninit;

    /// What a bulk read needs of an element type (not nameable outside the crate).
    pub trait Sealed: Native + 'static {
        /// Whether columns of element type `s` read into this type.
        fn accepts(s: Scalar) -> bool;
        /// The slice as `u64`s, when this type is `u64` (offsets are rebased as such).
        fn as_u64(_s: &mut [MaybeUninit<Self>]) -> Option<&mut [MaybeUninit<u64>]> {
            None
        }
        /// This type's buffer for a decoded page.
        fn page_buffer(p: &mut PageBuffers) -> &mut Vec<MaybeUninit<Self>>;
    }
}

macro_rules! bulk_elements {
    ($($t:ty, $buf:ident => $($s:ident)|+;)*) => {$(
        impl sealed::Sealed for $t {
            fn accepts(s: Scalar) -> bool {
                matches!(s, $(Scalar::$s)|+)
            }
            fn page_buffer(p: &mut PageBuffers) -> &mut Vec<MaybeUninit<Self>> {
                &mut p.$buf
            }
        }
        impl BulkElement for $t {}
    )*};
}
bulk_elements! {
    bool, bool_ => Bool;
    i8, i8_ => I8 | Char;
    u8, u8_ => U8 | Byte | Char;
    i16, i16_ => I16;
    u16, u16_ => U16;
    i32, i32_ => I32;
    u32, u32_ => U32;
    i64, i64_ => I64;
    f32, f32_ => F32;
    f64, f64_ => F64;
}

impl sealed::Sealed for u64 {
    fn accepts(s: Scalar) -> bool {
        s == Scalar::U64
    }
    fn as_u64(s: &mut [MaybeUninit<u64>]) -> Option<&mut [MaybeUninit<u64>]> {
        Some(s)
    }
    fn page_buffer(p: &mut PageBuffers) -> &mut Vec<MaybeUninit<u64>> {
        &mut p.u64_
    }
}
impl BulkElement for u64 {}

/// A bulk reader's scratch: a page's stored and decompressed bytes, and per element type the
/// decoded values of a page that a range read cuts through. Grown to the largest page, kept.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) stored: Vec<u8>,
    pub(crate) unz: Vec<u8>,
    pub(crate) pages: PageBuffers,
}

impl Scratch {
    /// The bytes held (capacities).
    pub(crate) fn bytes(&self) -> usize {
        let p = &self.pages;
        let typed = p.bool_.capacity()
            + p.i8_.capacity()
            + p.u8_.capacity()
            + 2 * (p.i16_.capacity() + p.u16_.capacity())
            + 4 * (p.i32_.capacity() + p.u32_.capacity() + p.f32_.capacity())
            + 8 * (p.i64_.capacity() + p.u64_.capacity() + p.f64_.capacity());
        self.stored.capacity() + self.unz.capacity() + typed
    }
}

/// One decoded-page buffer per element type, so that reading columns of several types in turn
/// allocates nothing once each buffer has grown.
#[derive(Debug, Default)]
pub struct PageBuffers {
    pub(crate) bool_: Vec<MaybeUninit<bool>>,
    pub(crate) i8_: Vec<MaybeUninit<i8>>,
    pub(crate) u8_: Vec<MaybeUninit<u8>>,
    pub(crate) i16_: Vec<MaybeUninit<i16>>,
    pub(crate) u16_: Vec<MaybeUninit<u16>>,
    pub(crate) i32_: Vec<MaybeUninit<i32>>,
    pub(crate) u32_: Vec<MaybeUninit<u32>>,
    pub(crate) i64_: Vec<MaybeUninit<i64>>,
    pub(crate) u64_: Vec<MaybeUninit<u64>>,
    pub(crate) f32_: Vec<MaybeUninit<f32>>,
    pub(crate) f64_: Vec<MaybeUninit<f64>>,
}

impl PageBuffers {
    /// The buffer of `T`s, at least `n` long, its first `n` elements.
    pub(crate) fn get<T: BulkElement>(&mut self, n: usize) -> &mut [MaybeUninit<T>] {
        let v = T::page_buffer(self);
        if v.len() < n {
            v.resize(n, MaybeUninit::uninit());
        }
        &mut v[..n]
    }
}
