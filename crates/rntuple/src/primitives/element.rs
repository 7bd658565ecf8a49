//! The in-memory element types of columns, in the spirit of ROOT's `RColumnElement<CppT>`.
//!
//! [`primitive_elements!`] is the one place where the eleven primitive element types are listed
//! by hand. From it come the public [`ScalarSlice`] (typed filling), [`PageValues`] (what page
//! encoding takes), the writer's column buffer [`ColumnBuf`] with its one dispatch, the
//! [`BufElement`] trait that finds a typed `Vec` in a buffer, the decoder's
//! [`Native`](super::decode::Native) impls and the typed writer's `FieldValue` impls.

/// Calls `$callback!` with the list of primitive element types, one line each:
/// `Variant rust_type "C++ type name" category,` (category: boolean, signed, unsigned, float). The variant names are also those of
/// [`crate::logical::kind::Scalar`].
macro_rules! primitive_elements {
    ($callback:ident) => {
        $callback! {
            Bool bool "bool" boolean,
            I8 i8 "std::int8_t" signed,
            U8 u8 "std::uint8_t" unsigned,
            I16 i16 "std::int16_t" signed,
            U16 u16 "std::uint16_t" unsigned,
            I32 i32 "std::int32_t" signed,
            U32 u32 "std::uint32_t" unsigned,
            I64 i64 "std::int64_t" signed,
            U64 u64 "std::uint64_t" unsigned,
            F32 f32 "float" float,
            F64 f64 "double" float,
        }
    };
}
pub(crate) use primitive_elements;

/// What a generic operation over a [`ScalarSlice`] does with the typed slice inside it (closures
/// cannot be generic over the element type).
pub(crate) trait SliceVisitor {
    /// The result.
    type Out;
    /// Called with the slice, whatever its element type.
    fn visit<T: BufElement>(self, values: &[T]) -> Self::Out;
}

/// An element type a [`ColumnBuf`] can hold.
pub(crate) trait BufElement: Copy + 'static {
    /// The buffer's values when it holds this type.
    fn vec_mut(b: &mut ColumnBuf) -> Option<&mut Vec<Self>>;
    /// An empty buffer of this type.
    fn empty_buf() -> ColumnBuf;
}

/// A number as the dynamic-value fill converts it to any element type: a signed, an unsigned and
/// a floating-point reading of it, and the exact `float` when it is one.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Number {
    pub i: i64,
    pub u: u64,
    pub f: f64,
    pub f32: Option<f32>,
}

/// The conversion of a [`Number`] to an element of each category.
macro_rules! from_number {
    (boolean, $t:ident, $n:expr) => {
        $n.u != 0
    };
    (signed, $t:ident, $n:expr) => {
        $n.i as $t
    };
    (unsigned, $t:ident, $n:expr) => {
        $n.u as $t
    };
    (float, f32, $n:expr) => {
        $n.f32.unwrap_or($n.f as f32)
    };
    (float, f64, $n:expr) => {
        $n.f
    };
}

macro_rules! define_elements {
    ($($v:ident $t:ident $cpp:literal $kind:ident,)*) => {
        /// A contiguous run of values of one primitive type.
        ///
        /// ```
        /// use rntuple::write::ScalarSlice;
        /// let s: ScalarSlice<'_> = [1.5f32, 2.5][..].into();
        /// assert_eq!((s.len(), s.is_empty(), s.type_name()), (2, false, "float"));
        /// assert!(matches!(s, ScalarSlice::F32([1.5, 2.5])));
        /// assert_eq!(ScalarSlice::U64(&[]).type_name(), "std::uint64_t");
        /// ```
        #[derive(Debug, Clone, Copy)]
        pub enum ScalarSlice<'a> {
            $(#[doc = concat!("`", $cpp, "`")] $v(&'a [$t]),)*
        }

        impl ScalarSlice<'_> {
            /// Number of values.
            pub fn len(&self) -> usize {
                match self {
                    $(ScalarSlice::$v(x) => x.len(),)*
                }
            }

            /// Whether there are no values.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }

            /// The C++ type of the values.
            pub fn type_name(&self) -> &'static str {
                match self {
                    $(ScalarSlice::$v(_) => $cpp,)*
                }
            }

            /// Runs `v` on the typed slice.
            pub(crate) fn visit<V: SliceVisitor>(self, v: V) -> V::Out {
                match self {
                    $(ScalarSlice::$v(x) => v.visit(x),)*
                }
            }
        }

        /// Values of one page, in the column's natural in-memory type (index columns as `U64`
        /// cluster-local end offsets, `F32` also for Real16).
        #[derive(Debug, Clone, Copy)]
        pub enum PageValues<'a> {
            $(#[doc = concat!("`", $cpp, "`")] $v(&'a [$t]),)*
            /// Switch: (index, tag).
            Switch(&'a [(u64, u32)]),
        }

        /// Values buffered for the current page of one column.
        #[derive(Debug, Clone)]
        pub(crate) enum ColumnBuf {
            $($v(Vec<$t>),)*
            /// Switch: (index, tag).
            Switch(Vec<(u64, u32)>),
        }

        /// The one dispatch over a buffer's element type: `each_buf!(buf, v => expr)` evaluates
        /// `expr` with `v` the typed `Vec` inside.
        macro_rules! each_buf {
            ($b:expr, $x:ident => $e:expr) => {
                match $b {
                    $(ColumnBuf::$v($x) => $e,)*
                    ColumnBuf::Switch($x) => $e,
                }
            };
        }

        impl ColumnBuf {
            /// Appends a number converted to the buffer's element type (nothing for a switch).
            pub(crate) fn push_number(&mut self, n: &Number) {
                match self {
                    $(ColumnBuf::$v(x) => x.push(from_number!($kind, $t, n)),)*
                    ColumnBuf::Switch(_) => {}
                }
            }

            /// The buffered values as a page's values.
            pub(crate) fn values(&self) -> PageValues<'_> {
                match self {
                    $(ColumnBuf::$v(x) => PageValues::$v(x),)*
                    ColumnBuf::Switch(x) => PageValues::Switch(x),
                }
            }
        }

        $(
            impl BufElement for $t {
                fn vec_mut(b: &mut ColumnBuf) -> Option<&mut Vec<Self>> {
                    match b {
                        ColumnBuf::$v(x) => Some(x),
                        _ => None,
                    }
                }
                fn empty_buf() -> ColumnBuf {
                    ColumnBuf::$v(Vec::new())
                }
            }

            impl<'a> From<&'a [$t]> for ScalarSlice<'a> {
                fn from(v: &'a [$t]) -> Self {
                    ScalarSlice::$v(v)
                }
            }
        )*
    };
}
primitive_elements!(define_elements);

impl BufElement for (u64, u32) {
    fn vec_mut(b: &mut ColumnBuf) -> Option<&mut Vec<Self>> {
        match b {
            ColumnBuf::Switch(x) => Some(x),
            _ => None,
        }
    }
    fn empty_buf() -> ColumnBuf {
        ColumnBuf::Switch(Vec::new())
    }
}

impl ColumnBuf {
    /// Number of buffered values.
    pub(crate) fn len(&self) -> usize {
        each_buf!(self, v => v.len())
    }

    /// Empties the buffer, keeping its memory.
    pub(crate) fn clear(&mut self) {
        each_buf!(self, v => v.clear())
    }

    /// Room for `n` more values without reallocating.
    pub(crate) fn reserve(&mut self, n: usize) {
        each_buf!(self, v => v.reserve(n))
    }

    /// Bytes of values the buffer has room for without reallocating.
    #[cfg(test)]
    pub(crate) fn capacity_bytes(&self) -> usize {
        fn bytes<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        each_buf!(self, v => bytes(v))
    }

    /// Empties the buffer and frees its memory.
    pub(crate) fn free(&mut self) {
        each_buf!(self, v => *v = Vec::new())
    }

    /// An empty buffer of the same element type, without memory.
    pub(crate) fn empty_like(&self) -> ColumnBuf {
        let mut b = self.clone();
        each_buf!(&mut b, v => *v = Vec::new());
        b
    }

    /// Appends one value of type `T`; false (and nothing appended) when the buffer holds another
    /// type.
    pub(crate) fn push<T: BufElement>(&mut self, value: T) -> bool {
        match T::vec_mut(self) {
            Some(v) => {
                v.push(value);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dispatch_for_every_element_type() {
        let mut b = <f32 as BufElement>::empty_buf();
        assert!(b.push(1.5f32));
        assert!(!b.push(1u8), "a u8 must not go into a float buffer");
        b.reserve(10);
        assert_eq!(b.len(), 1);
        assert!(matches!(b.values(), PageValues::F32([x]) if *x == 1.5));
        let e = b.empty_like();
        assert_eq!(e.len(), 0);
        b.clear();
        assert_eq!(b.len(), 0);
        let s: ScalarSlice<'_> = [1i16, 2, 3][..].into();
        assert_eq!((s.len(), s.type_name()), (3, "std::int16_t"));
        struct Sum;
        impl SliceVisitor for Sum {
            type Out = usize;
            fn visit<T: BufElement>(self, values: &[T]) -> usize {
                std::mem::size_of_val(values)
            }
        }
        assert_eq!(s.visit(Sum), 6);
    }

    #[test]
    fn numbers_convert_by_category() {
        let n = Number { i: -1, u: u64::MAX, f: 0.1, f32: None };
        let mut got = Vec::new();
        for mut b in [bool::empty_buf(), i8::empty_buf(), u16::empty_buf(), f32::empty_buf(), f64::empty_buf(), <(u64, u32)>::empty_buf()] {
            b.push_number(&n);
            got.push(format!("{:?}", b.values()));
        }
        assert_eq!(got, ["Bool([true])", "I8([-1])", "U16([65535])", "F32([0.1])", "F64([0.1])", "Switch([])"]);
        let mut b = f32::empty_buf();
        b.push_number(&Number { i: 0, u: 0, f: 0.0, f32: Some(1.25) });
        assert!(matches!(b.values(), PageValues::F32([x]) if *x == 1.25), "an exact float is kept");
    }
}
