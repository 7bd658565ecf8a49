//! Entry-wise reading (`rntuple::read::view`), as an event loop reads: a view reads one field
//! entry by entry (`rntuple_view_*`), an entry object loads every field bound to it into the
//! caller's variables at once (`rntuple_entry_load*`, in [`load`]). Each page a view touches is
//! decoded once into the view's page cache (a byte budget per view, `rntuple_view_set_cache_budget`),
//! so a sequential loop decodes every page once and random access decodes a page again only after
//! the budget evicted it.
//!
//! Views and entry objects may be used from any thread (a call locks the object); pointers they
//! return stay valid until the next call on the same object, so one object per thread is the way
//! to read in parallel (all on one reader handle).
//!
//! Here: creating and freeing views, reading values, items and windows (a page of values, or of
//! offsets with their items, that C++ indexes inline: `rntuple::View`). The cursors of every
//! element type are in `cursors`.

use crate::handles::{self, Object};
use crate::read::ReaderObj;
use crate::status::{guard, CError, CResult};
use crate::strings::{need, put, str_arg};
use cursors::AnyCursor;
use rntuple::Reader;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

pub mod cursors;
pub mod load;

/// A view: its reader, field and cursor.
pub struct ViewObj {
    reader: Arc<Reader>,
    path: String,
    cursor: Mutex<AnyCursor>,
}

impl Object for ViewObj {
    const KIND: &'static str = "view";
    const TAG: u8 = 10;
}

/// A window of an items or string view (`rntuple_view_items_window`): entries `[first, first +
/// count)` of the RNTuple, `first` the entry asked for; entry `first + i` holds the cluster's
/// items `[i ? ends[i-1] : base, ends[i])`, at `items + (item - base)` (elements of the view's
/// type; bytes for a string). The window ends where the entries' offsets page or items page ends.
#[repr(C)]
pub struct rntuple_items_window {
    /// The first entry of the window.
    pub first: u64,
    /// The entries in the window.
    pub count: u64,
    /// `count` cluster-local end offsets.
    pub ends: *const u64,
    /// Where the first entry's items start (cluster-local).
    pub base: u64,
    /// The items `[base, ends[count-1])`.
    pub items: *const c_void,
}

fn with_view<R>(view: u64, f: impl FnOnce(&Reader, &str, &mut AnyCursor) -> CResult<R>) -> CResult<R> {
    let v = handles::get::<ViewObj>(view)?;
    let mut c = v.value.cursor.lock().map_err(|_| CError::new(crate::status::RNTUPLE_ERR_INTERNAL, "a view's lock was poisoned by a panic"))?;
    f(&v.value.reader, &v.value.path, &mut c)
}

/// Creates in `*view` a view of the field at dotted path `field` (`"pt"`, a member of records
/// `"rec.x"`) of `reader`, one value per entry of C type `type` (an `RNTUPLE_TYPE_*` code of a
/// fundamental type: the field's own type, `RNTUPLE_TYPE_I8`/`U8` for `char`), or for
/// `RNTUPLE_TYPE_STRING` a `std::string` field read with `rntuple_view_get_items`.
/// Errors: no such field (`RNTUPLE_ERR_NOT_FOUND`); a field of another type, a collection, or a
/// field inside a collection (`RNTUPLE_ERR_INVALID_ARGUMENT` or `RNTUPLE_ERR_SCHEMA_MISMATCH`,
/// naming the field and its type).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_create(reader: u64, field: *const c_char, r#type: u32, view: *mut u64) -> i32 {
    guard("rntuple_view_create", || unsafe { create(reader, field, r#type, false, view) })
}

/// Creates in `*view` a view of a collection of fundamental values: a `std::vector`,
/// `ROOT::RVec`, ... of C type `type` (`"Jet_pt"`), or a fundamental member of records in a
/// collection (`"Muon._0.pt"`: the collection's counts, the member's values). Read an entry's
/// items with `rntuple_view_get_items`, or windows of entries with `rntuple_view_items_window`.
/// Errors as `rntuple_view_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_create_items(reader: u64, field: *const c_char, r#type: u32, view: *mut u64) -> i32 {
    guard("rntuple_view_create_items", || unsafe { create(reader, field, r#type, true, view) })
}

unsafe fn create(reader: u64, field: *const c_char, code: u32, items: bool, view: *mut u64) -> CResult<()> {
    need(view, "view")?;
    let r = handles::get::<ReaderObj>(reader)?;
    let path = unsafe { str_arg(field, "field") }?;
    let cursor = AnyCursor::open(&r.value.reader, path, code, items)?;
    let h = handles::register(ViewObj { reader: r.value.reader.clone(), path: path.to_string(), cursor: Mutex::new(cursor) })?;
    unsafe { put(view, h, "view") }
}

/// Writes entry `entry`'s value into `out` (`out_size` bytes: the size of the view's C type,
/// checked). Errors: an entry past the end (`RNTUPLE_ERR_INVALID_ARGUMENT`), `out_size` not the
/// type's size, a view of items or of a string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_get(view: u64, entry: u64, out: *mut c_void, out_size: usize) -> i32 {
    guard("rntuple_view_get", || {
        need(out, "out")?;
        with_view(view, |r, path, c| {
            let size = c.value_size();
            if out_size != size {
                return Err(CError::invalid(format!("view of '{path}': out_size {out_size}, the view's values have {size} bytes")));
            }
            // SAFETY: `out` is not null and holds `out_size == size` bytes (the contract).
            unsafe { c.get_value(r, entry, out) }
        })
    })
}

/// Entry `entry`'s items into `*data` and their count into `*len` (a string: its bytes, not
/// NUL-terminated). `*data` stays valid until the next call on this view or its `free`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_get_items(view: u64, entry: u64, data: *mut *const c_void, len: *mut u64) -> i32 {
    guard("rntuple_view_get_items", || {
        need(data, "data")?;
        need(len, "len")?;
        let (p, n) = with_view(view, |r, _, c| c.get_items(r, entry))?;
        unsafe { put(data, p, "data") }?;
        unsafe { put(len, n, "len") }
    })
}

/// The page of values holding entry `entry` of a one-value view: entries `[*first, *first +
/// *count)` with their values at `*values` (of the view's type), valid until the next call on this
/// view. Index it directly while the entries asked for stay inside it (what `rntuple::View` in
/// C++ does).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_window(view: u64, entry: u64, first: *mut u64, count: *mut u64, values: *mut *const c_void) -> i32 {
    guard("rntuple_view_window", || {
        need(first, "first")?;
        need(count, "count")?;
        need(values, "values")?;
        let (f, n, p) = with_view(view, |r, _, c| c.value_window(r, entry))?;
        unsafe { put(first, f, "first") }?;
        unsafe { put(count, n, "count") }?;
        unsafe { put(values, p, "values") }
    })
}

/// The window of an items or string view starting at entry `entry` into `*window` (see
/// `rntuple_items_window`: the entries whose items lie in one decoded page, lent without a copy),
/// valid until the next call on this view.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_items_window(view: u64, entry: u64, window: *mut rntuple_items_window) -> i32 {
    guard("rntuple_view_items_window", || {
        need(window, "window")?;
        let w = with_view(view, |r, _, c| c.items_window(r, entry))?;
        let out = rntuple_items_window { first: w.first, count: w.count, ends: w.ends, base: w.base, items: w.items };
        unsafe { put(window, out, "window") }
    })
}

/// The pages this view decoded (each page touched once while it stays in the cache) into
/// `*pages_decoded` and the bytes of decoded pages it holds into `*cached_bytes` (either may be
/// null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_view_stats(view: u64, pages_decoded: *mut u64, cached_bytes: *mut u64) -> i32 {
    guard("rntuple_view_stats", || {
        let (p, b) = with_view(view, |_, _, c| Ok(c.stats()))?;
        if !pages_decoded.is_null() {
            unsafe { put(pages_decoded, p, "pages_decoded") }?;
        }
        if !cached_bytes.is_null() {
            unsafe { put(cached_bytes, b as u64, "cached_bytes") }?;
        }
        Ok(())
    })
}

/// The bytes of decoded pages the view keeps (16 MiB by default; the page in use is kept
/// whatever the budget).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_view_set_cache_budget(view: u64, bytes: u64) -> i32 {
    guard("rntuple_view_set_cache_budget", || {
        with_view(view, |_, _, c| {
            c.set_budget(usize::try_from(bytes).unwrap_or(usize::MAX));
            Ok(())
        })
    })
}

/// Frees a view (its reader stays open).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_view_free(view: u64) -> i32 {
    guard("rntuple_view_free", || handles::free::<ViewObj>(view).map(|_| ()))
}

#[cfg(test)]
mod tests;
