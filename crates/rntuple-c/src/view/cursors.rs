//! A view's cursor of any element type, chosen at run time by an `RNTUPLE_TYPE_*` code: one
//! value per entry, a collection's items, or a string's bytes.

use crate::setters::{
    RNTUPLE_TYPE_BOOL, RNTUPLE_TYPE_F32, RNTUPLE_TYPE_F64, RNTUPLE_TYPE_I16, RNTUPLE_TYPE_I32, RNTUPLE_TYPE_I64, RNTUPLE_TYPE_I8, RNTUPLE_TYPE_STRING,
    RNTUPLE_TYPE_U16, RNTUPLE_TYPE_U32, RNTUPLE_TYPE_U64, RNTUPLE_TYPE_U8,
};
use crate::status::{CError, CResult};
use rntuple::read::view::{Cursor, ItemsCursor, ScalarCursor, StringCursor};
use rntuple::Reader;
use std::ffi::c_void;

macro_rules! typed_cursors {
    ($name:ident, $cursor:ident) => {
        /// A cursor of one of the fundamental element types.
        pub enum $name {
            Bool($cursor<bool>),
            I8($cursor<i8>),
            U8($cursor<u8>),
            I16($cursor<i16>),
            U16($cursor<u16>),
            I32($cursor<i32>),
            U32($cursor<u32>),
            I64($cursor<i64>),
            U64($cursor<u64>),
            F32($cursor<f32>),
            F64($cursor<f64>),
        }

        impl $name {
            /// The cursor of `path` for element type `code`.
            fn open(r: &Reader, path: &str, code: u32) -> CResult<$name> {
                Ok(match code {
                    RNTUPLE_TYPE_BOOL => $name::Bool(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_I8 => $name::I8(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_U8 => $name::U8(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_I16 => $name::I16(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_U16 => $name::U16(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_I32 => $name::I32(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_U32 => $name::U32(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_I64 => $name::I64(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_U64 => $name::U64(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_F32 => $name::F32(Cursor::open(r, path)?),
                    RNTUPLE_TYPE_F64 => $name::F64(Cursor::open(r, path)?),
                    _ => return Err(CError::invalid(format!("field '{path}': {code} is not an RNTUPLE_TYPE_* code of a fundamental type"))),
                })
            }
        }
    };
}
typed_cursors!(Scalars, ScalarCursor);
typed_cursors!(Items, ItemsCursor);

/// Runs `$body` with `$c` bound to the typed cursor inside `$e` and `$t` to its element type.
macro_rules! each {
    ($name:ident, $e:expr, $c:ident, $t:ident => $body:expr) => {
        match $e {
            $name::Bool($c) => {
                type $t = bool;
                $body
            }
            $name::I8($c) => {
                type $t = i8;
                $body
            }
            $name::U8($c) => {
                type $t = u8;
                $body
            }
            $name::I16($c) => {
                type $t = i16;
                $body
            }
            $name::U16($c) => {
                type $t = u16;
                $body
            }
            $name::I32($c) => {
                type $t = i32;
                $body
            }
            $name::U32($c) => {
                type $t = u32;
                $body
            }
            $name::I64($c) => {
                type $t = i64;
                $body
            }
            $name::U64($c) => {
                type $t = u64;
                $body
            }
            $name::F32($c) => {
                type $t = f32;
                $body
            }
            $name::F64($c) => {
                type $t = f64;
                $body
            }
        }
    };
}

/// What a view reads.
pub enum AnyCursor {
    /// One value per entry.
    Scalar(Scalars),
    /// A collection's items.
    Items(Items),
    /// A string's bytes.
    Str(StringCursor),
}

/// An offsets window as the C side sees it (`ItemsWindow` with raw pointers).
pub struct RawWindow {
    pub first: u64,
    pub count: u64,
    pub ends: *const u64,
    pub base: u64,
    pub items: *const c_void,
}

impl AnyCursor {
    /// A view of `path` as one value per entry (`items` false; a string for
    /// `RNTUPLE_TYPE_STRING`) or as a collection of values of type `code`.
    pub fn open(r: &Reader, path: &str, code: u32, items: bool) -> CResult<AnyCursor> {
        Ok(match (items, code) {
            (false, RNTUPLE_TYPE_STRING) => AnyCursor::Str(StringCursor::open(r, path)?),
            (true, RNTUPLE_TYPE_STRING) => return Err(CError::invalid(format!("field '{path}': a collection of strings cannot be viewed as items"))),
            (false, _) => AnyCursor::Scalar(Scalars::open(r, path, code)?),
            (true, _) => AnyCursor::Items(Items::open(r, path, code)?),
        })
    }

    /// The byte size of one value (items: of one item; strings: 1).
    pub fn value_size(&self) -> usize {
        match self {
            AnyCursor::Scalar(s) => each!(Scalars, s, _c, T => std::mem::size_of::<T>()),
            AnyCursor::Items(s) => each!(Items, s, _c, T => std::mem::size_of::<T>()),
            AnyCursor::Str(_) => 1,
        }
    }

    /// Writes entry `entry`'s value to `out`.
    ///
    /// # Safety
    /// `out` is valid for a write of [`AnyCursor::value_size`] bytes (any alignment).
    pub unsafe fn get_value(&mut self, r: &Reader, entry: u64, out: *mut c_void) -> CResult<()> {
        let AnyCursor::Scalar(s) = self else { return Err(CError::invalid("a view of items or of a string has no single value: read its items")) };
        each!(Scalars, s, c, T => {
            let v: T = c.get(r, entry)?;
            // SAFETY: the caller's contract.
            unsafe { std::ptr::write_unaligned(out as *mut T, v) };
        });
        Ok(())
    }

    /// Entry `entry`'s items (or string bytes): their address and count, valid until the next
    /// call on this cursor.
    pub fn get_items(&mut self, r: &Reader, entry: u64) -> CResult<(*const c_void, u64)> {
        match self {
            AnyCursor::Scalar(_) => Err(CError::invalid("a view of one value per entry has no items: read its value")),
            AnyCursor::Items(s) => each!(Items, s, c, _T => {
                let v = c.items(r, entry)?;
                Ok((v.as_ptr() as *const c_void, v.len() as u64))
            }),
            AnyCursor::Str(c) => {
                let v = c.bytes(r, entry)?;
                Ok((v.as_ptr() as *const c_void, v.len() as u64))
            }
        }
    }

    /// The page window of a one-value view: its first entry, its entries and their values.
    pub fn value_window(&mut self, r: &Reader, entry: u64) -> CResult<(u64, u64, *const c_void)> {
        let AnyCursor::Scalar(s) = self else { return Err(CError::invalid("a view of items or of a string has item windows, not value windows")) };
        each!(Scalars, s, c, _T => {
            let (first, v) = c.window(r, entry)?;
            Ok((first, v.len() as u64, v.as_ptr() as *const c_void))
        })
    }

    /// The offsets window of an items or string view.
    pub fn items_window(&mut self, r: &Reader, entry: u64) -> CResult<RawWindow> {
        fn raw<T>(w: rntuple::read::view::ItemsWindow<'_, T>) -> RawWindow {
            RawWindow { first: w.first, count: w.ends.len() as u64, ends: w.ends.as_ptr(), base: w.base, items: w.items.as_ptr() as *const c_void }
        }
        match self {
            AnyCursor::Scalar(_) => Err(CError::invalid("a view of one value per entry has value windows, not item windows")),
            AnyCursor::Items(s) => each!(Items, s, c, _T => Ok(raw(c.window(r, entry)?))),
            AnyCursor::Str(c) => Ok(raw(c.window(r, entry)?)),
        }
    }

    /// Pages decoded and bytes of decoded pages held.
    pub fn stats(&self) -> (u64, usize) {
        match self {
            AnyCursor::Scalar(s) => each!(Scalars, s, c, _T => (c.pages_decoded(), c.cached_bytes())),
            AnyCursor::Items(s) => each!(Items, s, c, _T => (c.pages_decoded(), c.cached_bytes())),
            AnyCursor::Str(c) => (c.pages_decoded(), c.cached_bytes()),
        }
    }

    /// Sets the page cache's budget.
    pub fn set_budget(&mut self, bytes: usize) {
        match self {
            AnyCursor::Scalar(s) => each!(Scalars, s, c, _T => c.set_budget(bytes)),
            AnyCursor::Items(s) => each!(Items, s, c, _T => c.set_budget(bytes)),
            AnyCursor::Str(c) => c.set_budget(bytes),
        }
    }
}
