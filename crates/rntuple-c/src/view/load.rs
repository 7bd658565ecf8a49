//! The entry object: fields bound once to the caller's variables (`rntuple_entry_load_bind*`),
//! then every bound field of entry `i` loaded into them in one call (`rntuple_entry_load`), the
//! mirror of the typed setters that fill an entry. Each field reads through a view's cursor, so
//! pages are decoded once as with views.

use super::cursors::AnyCursor;
use crate::handles::{self, Object};
use crate::read::ReaderObj;
use crate::status::{guard, CError, CResult, RNTUPLE_ERR_INTERNAL};
use crate::strings::{need, put, str_arg};
use rntuple::Reader;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

/// Where an entry object puts a collection's items or a string's bytes: their address (valid
/// until the next `rntuple_entry_load` on the object or its `free`) and count.
#[repr(C)]
pub struct rntuple_items {
    /// The items (elements of the bound type; a string's bytes, not NUL-terminated).
    pub data: *const c_void,
    /// How many.
    pub len: u64,
}

/// One bound field: its cursor and the caller's variable.
struct Bound {
    cursor: AnyCursor,
    /// A value of the cursor's type, or an `rntuple_items` for items and strings.
    dst: *mut c_void,
    items: bool,
}

// SAFETY: `dst` is the caller's address, written only inside `rntuple_entry_load` while the
// object's lock is held; the caller promised it stays valid and is not raced (the bind contract).
// Nothing else in `Bound` is tied to a thread.
unsafe impl Send for Bound {}

/// An entry object.
pub struct LoaderObj {
    reader: Arc<Reader>,
    bound: Mutex<Vec<Bound>>,
}

impl Object for LoaderObj {
    const KIND: &'static str = "entry loader";
    const TAG: u8 = 11;
}

fn locked<R>(loader: u64, f: impl FnOnce(&Reader, &mut Vec<Bound>) -> CResult<R>) -> CResult<R> {
    let l = handles::get::<LoaderObj>(loader)?;
    let mut b = l.value.bound.lock().map_err(|_| CError::new(RNTUPLE_ERR_INTERNAL, "an entry loader's lock was poisoned by a panic"))?;
    f(&l.value.reader, &mut b)
}

/// Creates in `*loader` an entry object of `reader` with no field bound.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_load_create(reader: u64, loader: *mut u64) -> i32 {
    guard("rntuple_entry_load_create", || {
        need(loader, "loader")?;
        let r = handles::get::<ReaderObj>(reader)?;
        let h = handles::register(LoaderObj { reader: r.value.reader.clone(), bound: Mutex::new(Vec::new()) })?;
        unsafe { put(loader, h, "loader") }
    })
}

/// Binds the field at dotted path `field` to the caller's variable `dst`: one value per entry of
/// C type `type` (`dst` points to it, e.g. a `float`), or for `RNTUPLE_TYPE_STRING` a string
/// (`dst` points to an `rntuple_items`). `dst` must stay valid, and not be read or written by
/// another thread during `rntuple_entry_load`, until the object is freed. Errors as
/// `rntuple_view_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_load_bind(loader: u64, field: *const c_char, r#type: u32, dst: *mut c_void) -> i32 {
    guard("rntuple_entry_load_bind", || unsafe { bind(loader, field, r#type, false, dst) })
}

/// Binds a collection of fundamental values (as `rntuple_view_create_items`) to the caller's
/// `rntuple_items` at `dst`, filled with the entry's items at each load. Contract and errors as
/// `rntuple_entry_load_bind`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_load_bind_items(loader: u64, field: *const c_char, r#type: u32, dst: *mut rntuple_items) -> i32 {
    guard("rntuple_entry_load_bind_items", || unsafe { bind(loader, field, r#type, true, dst as *mut c_void) })
}

unsafe fn bind(loader: u64, field: *const c_char, code: u32, items: bool, dst: *mut c_void) -> CResult<()> {
    need(dst, "dst")?;
    let path = unsafe { str_arg(field, "field") }?;
    locked(loader, |r, bound| {
        let cursor = AnyCursor::open(r, path, code, items)?;
        let items = !matches!(cursor, AnyCursor::Scalar(_));
        bound.push(Bound { cursor, dst, items });
        Ok(())
    })
}

/// Loads entry `entry` of every bound field into its variable. Errors: an entry past the end
/// (`RNTUPLE_ERR_INVALID_ARGUMENT`), a damaged page (naming the field); the variables of the
/// fields before the failing one hold the entry's values, the others are untouched.
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_load(loader: u64, entry: u64) -> i32 {
    guard("rntuple_entry_load", || {
        locked(loader, |r, bound| {
            for b in bound.iter_mut() {
                if b.items {
                    let (data, len) = b.cursor.get_items(r, entry)?;
                    // SAFETY: `dst` points to the caller's `rntuple_items` (the bind contract).
                    unsafe { std::ptr::write_unaligned(b.dst as *mut rntuple_items, rntuple_items { data, len }) };
                } else {
                    // SAFETY: `dst` points to a value of the cursor's type (the bind contract).
                    unsafe { b.cursor.get_value(r, entry, b.dst) }?;
                }
            }
            Ok(())
        })
    })
}

/// The number of fields bound into `*n`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_entry_load_fields(loader: u64, n: *mut usize) -> i32 {
    guard("rntuple_entry_load_fields", || {
        need(n, "n")?;
        let k = locked(loader, |_, b| Ok(b.len()))?;
        unsafe { put(n, k, "n") }
    })
}

/// Frees an entry object (its reader stays open; the bound variables are no longer used).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_entry_load_free(loader: u64) -> i32 {
    guard("rntuple_entry_load_free", || handles::free::<LoaderObj>(loader).map(|_| ()))
}
