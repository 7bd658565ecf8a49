//! The typed setters of [`crate::entry`], one per C type, for a writer or fill context handle
//! (`target`): `rntuple_entry_set_<type>` for a field of that fundamental type,
//! `rntuple_entry_set_vec_<type>` for a `std::vector`/`ROOT::RVec` of it, `rntuple_entry_set_string`
//! for a `std::string`. The type must be the field's own (`float` for `float`, `int32_t` for
//! `std::int32_t`): another is `RNTUPLE_ERR_SCHEMA_MISMATCH` naming both.

use crate::status::{guard, CError};
use crate::strings::{put, str_arg};
use crate::write::with_target;
use std::ffi::c_char;

/// The setters' slot of the top-level field `name` of a writer or fill context (`*out`): look it
/// up once, set it for every entry.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_field(target: u64, name: *const c_char, out: *mut u32) -> i32 {
    guard("rntuple_entry_field", || {
        let name = unsafe { str_arg(name, "name") }?;
        let slot = with_target(target, |t| t.entry().field(name))?;
        unsafe { put(out, slot, "out") }
    })
}

/// Ends the entry being filled: every field must have been set since the last fill. Every 64 KiB
/// of values (at most 4096 entries) the gathered entries go to the writer as one batch.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_fill(target: u64) -> i32 {
    guard("rntuple_entry_fill", || {
        with_target(target, |t| {
            if t.entry().fill()? {
                t.flush_entries()?;
            }
            Ok(())
        })
    })
}

/// Sets a `std::string` field to `len` bytes of UTF-8 at `text` (not NUL-terminated; may be null when
/// `len` is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_string(target: u64, slot: u32, text: *const c_char, len: usize) -> i32 {
    guard("rntuple_entry_set_string", || {
        let bytes = unsafe { items(text.cast::<u8>(), len, "text") }?;
        with_target(target, |t| t.entry().set_string(slot, bytes))
    })
}

/// `n` items at `data` (null allowed when `n` is 0).
unsafe fn items<'a, T>(data: *const T, n: usize, arg: &str) -> Result<&'a [T], CError> {
    if n == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(CError::null(arg));
    }
    // SAFETY: `data` points to `n` items (the caller's contract).
    Ok(unsafe { std::slice::from_raw_parts(data, n) })
}

/// Sets a field of C type `bool`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_bool(target: u64, slot: u32, value: bool) -> i32 {
    guard("rntuple_entry_set_bool", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `bool` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_bool(target: u64, slot: u32, data: *const bool, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_bool", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `int8_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_i8(target: u64, slot: u32, value: i8) -> i32 {
    guard("rntuple_entry_set_i8", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `int8_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_i8(target: u64, slot: u32, data: *const i8, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_i8", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `uint8_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_u8(target: u64, slot: u32, value: u8) -> i32 {
    guard("rntuple_entry_set_u8", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `uint8_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_u8(target: u64, slot: u32, data: *const u8, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_u8", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `int16_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_i16(target: u64, slot: u32, value: i16) -> i32 {
    guard("rntuple_entry_set_i16", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `int16_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_i16(target: u64, slot: u32, data: *const i16, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_i16", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `uint16_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_u16(target: u64, slot: u32, value: u16) -> i32 {
    guard("rntuple_entry_set_u16", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `uint16_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_u16(target: u64, slot: u32, data: *const u16, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_u16", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `int32_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_i32(target: u64, slot: u32, value: i32) -> i32 {
    guard("rntuple_entry_set_i32", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `int32_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_i32(target: u64, slot: u32, data: *const i32, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_i32", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `uint32_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_u32(target: u64, slot: u32, value: u32) -> i32 {
    guard("rntuple_entry_set_u32", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `uint32_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_u32(target: u64, slot: u32, data: *const u32, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_u32", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `int64_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_i64(target: u64, slot: u32, value: i64) -> i32 {
    guard("rntuple_entry_set_i64", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `int64_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_i64(target: u64, slot: u32, data: *const i64, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_i64", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `uint64_t`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_u64(target: u64, slot: u32, value: u64) -> i32 {
    guard("rntuple_entry_set_u64", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `uint64_t` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_u64(target: u64, slot: u32, data: *const u64, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_u64", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `float`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_f32(target: u64, slot: u32, value: f32) -> i32 {
    guard("rntuple_entry_set_f32", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `float` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_f32(target: u64, slot: u32, data: *const f32, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_f32", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// Sets a field of C type `double`.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_set_f64(target: u64, slot: u32, value: f64) -> i32 {
    guard("rntuple_entry_set_f64", || with_target(target, |t| t.entry().set(slot, value)))
}

/// Sets a vector field of `double` to the `n` items at `data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_set_vec_f64(target: u64, slot: u32, data: *const f64, n: usize) -> i32 {
    guard("rntuple_entry_set_vec_f64", || {
        let v = unsafe { items(data, n, "data") }?;
        with_target(target, |t| t.entry().set_vec(slot, v))
    })
}

/// `rntuple_value.ctype`: `bool`.
pub const RNTUPLE_TYPE_BOOL: u32 = 1;
/// `rntuple_value.ctype`: `int8_t`.
pub const RNTUPLE_TYPE_I8: u32 = 2;
/// `rntuple_value.ctype`: `uint8_t`.
pub const RNTUPLE_TYPE_U8: u32 = 3;
/// `rntuple_value.ctype`: `int16_t`.
pub const RNTUPLE_TYPE_I16: u32 = 4;
/// `rntuple_value.ctype`: `uint16_t`.
pub const RNTUPLE_TYPE_U16: u32 = 5;
/// `rntuple_value.ctype`: `int32_t`.
pub const RNTUPLE_TYPE_I32: u32 = 6;
/// `rntuple_value.ctype`: `uint32_t`.
pub const RNTUPLE_TYPE_U32: u32 = 7;
/// `rntuple_value.ctype`: `int64_t`.
pub const RNTUPLE_TYPE_I64: u32 = 8;
/// `rntuple_value.ctype`: `uint64_t`.
pub const RNTUPLE_TYPE_U64: u32 = 9;
/// `rntuple_value.ctype`: `float`.
pub const RNTUPLE_TYPE_F32: u32 = 10;
/// `rntuple_value.ctype`: `double`.
pub const RNTUPLE_TYPE_F64: u32 = 11;
/// `rntuple_value.ctype`: UTF-8 bytes of a `std::string` field.
pub const RNTUPLE_TYPE_STRING: u32 = 12;

/// One field's value in an entry given whole to `rntuple_entry_fill_values`.
#[repr(C)]
pub struct rntuple_value {
    /// The field's slot (`rntuple_entry_field`).
    pub slot: u32,
    /// The C type of `data`: an `RNTUPLE_TYPE_*` code.
    pub ctype: u32,
    /// A scalar field: its value; a vector field: its items; a string: its bytes (may be null when
    /// `len` is 0).
    pub data: *const std::ffi::c_void,
    /// 1 for a scalar; the number of items of a vector, of bytes of a string.
    pub len: usize,
}

/// Sets one field from a `rntuple_value`.
unsafe fn set_value(e: &mut crate::entry::EntryBuf, v: &rntuple_value) -> Result<(), CError> {
    macro_rules! typed {
        ($t:ty) => {{
            let items = unsafe { items(v.data.cast::<$t>(), v.len, "rntuple_value.data") }?;
            e.set_items(v.slot, items)
        }};
    }
    match v.ctype {
        RNTUPLE_TYPE_BOOL => typed!(bool),
        RNTUPLE_TYPE_I8 => typed!(i8),
        RNTUPLE_TYPE_U8 => typed!(u8),
        RNTUPLE_TYPE_I16 => typed!(i16),
        RNTUPLE_TYPE_U16 => typed!(u16),
        RNTUPLE_TYPE_I32 => typed!(i32),
        RNTUPLE_TYPE_U32 => typed!(u32),
        RNTUPLE_TYPE_I64 => typed!(i64),
        RNTUPLE_TYPE_U64 => typed!(u64),
        RNTUPLE_TYPE_F32 => typed!(f32),
        RNTUPLE_TYPE_F64 => typed!(f64),
        RNTUPLE_TYPE_STRING => {
            let bytes = unsafe { items(v.data.cast::<u8>(), v.len, "rntuple_value.data") }?;
            e.set_string(v.slot, bytes)
        }
        t => Err(CError::invalid(format!("slot {}: unknown C type code {t}", v.slot))),
    }
}

/// Sets the fields of an entry from `values[0..n]` and fills it, in one call (one lookup of the
/// handle, one lock). Each value's C type must be its field's (as for the setters); every field
/// must be given. (Entries gathered column by column go faster through
/// `rntuple_entry_fill_columns`, as `rntuple.hpp`'s `EntryBinder` does.)
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_fill_values(target: u64, values: *const rntuple_value, n: usize) -> i32 {
    guard("rntuple_entry_fill_values", || {
        let values = unsafe { items(values, n, "values") }?;
        with_target(target, |t| {
            for v in values {
                unsafe { set_value(t.entry(), v) }?;
            }
            if t.entry().fill()? {
                t.flush_entries()?;
            }
            Ok(())
        })
    })
}

/// One field's values for several entries given at once to `rntuple_entry_fill_columns`.
#[repr(C)]
pub struct rntuple_column {
    /// The field's slot (`rntuple_entry_field`).
    pub slot: u32,
    /// The C type of `data`: an `RNTUPLE_TYPE_*` code.
    pub ctype: u32,
    /// A scalar field: one value per entry; a vector field: the entries' items back to back; a
    /// string field: their UTF-8 bytes back to back (may be null when `len` is 0).
    pub data: *const std::ffi::c_void,
    /// Items (or bytes) at `data`.
    pub len: usize,
    /// A vector or string field: `n + 1` offsets into `data` (entry `i` is `offsets[i]` to
    /// `offsets[i + 1]`; the first need not be 0); null for a scalar field.
    pub offsets: *const i64,
}

/// The typed view of a `rntuple_column` for `n` entries.
unsafe fn column_in<'a>(c: &'a rntuple_column, n: usize) -> Result<crate::entry::ColumnIn<'a>, CError> {
    use crate::entry::Items;
    macro_rules! typed {
        ($v:ident, $t:ty) => {
            Items::$v(unsafe { items(c.data.cast::<$t>(), c.len, "rntuple_column.data") }?)
        };
    }
    let typed_items = match c.ctype {
        RNTUPLE_TYPE_BOOL => typed!(Bool, bool),
        RNTUPLE_TYPE_I8 => typed!(I8, i8),
        RNTUPLE_TYPE_U8 | RNTUPLE_TYPE_STRING => typed!(U8, u8),
        RNTUPLE_TYPE_I16 => typed!(I16, i16),
        RNTUPLE_TYPE_U16 => typed!(U16, u16),
        RNTUPLE_TYPE_I32 => typed!(I32, i32),
        RNTUPLE_TYPE_U32 => typed!(U32, u32),
        RNTUPLE_TYPE_I64 => typed!(I64, i64),
        RNTUPLE_TYPE_U64 => typed!(U64, u64),
        RNTUPLE_TYPE_F32 => typed!(F32, f32),
        RNTUPLE_TYPE_F64 => typed!(F64, f64),
        t => return Err(CError::invalid(format!("slot {}: unknown C type code {t}", c.slot))),
    };
    let offsets = if c.offsets.is_null() {
        None
    } else {
        let len = n.checked_add(1).ok_or_else(|| CError::invalid(format!("{n} entries")))?;
        Some(unsafe { items(c.offsets, len, "rntuple_column.offsets") }?)
    };
    Ok(crate::entry::ColumnIn { slot: c.slot, items: typed_items, offsets, text: c.ctype == RNTUPLE_TYPE_STRING })
}

/// Appends `n` whole entries given column by column (`columns[0..n_columns]`: every field with a
/// setter exactly once, each in its field's C type), as `n` fills would: what `rntuple.hpp`'s
/// `EntryBinder` does with the entries it gathered. Everything is checked first: the call appends
/// all `n` entries or none. An entry being filled with setters must be filled first.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_fill_columns(target: u64, n: usize, columns: *const rntuple_column, n_columns: usize) -> i32 {
    guard("rntuple_entry_fill_columns", || {
        let raw = unsafe { items(columns, n_columns, "columns") }?;
        let cols = raw.iter().map(|c| unsafe { column_in(c, n) }).collect::<Result<Vec<_>, _>>()?;
        with_target(target, |t| {
            if t.entry().fill_columns(n, &cols)? {
                t.flush_entries()?;
            }
            Ok(())
        })
    })
}
