//! The handle registry: every object the C side holds is a `uint64_t` handle naming an entry
//! here, never a pointer, so that a freed, forged or wrong-kind handle is an error code instead of
//! undefined behaviour. A handle's top byte is its kind's tag, the rest a serial number never
//! reused. Lookups take a read lock and clone an `Arc`; the last handle a thread used is cached
//! without any lock (fill contexts call setters millions of times), and a freed object is marked
//! dead so that a cached copy refuses it too.

use crate::status::{CError, CResult, RNTUPLE_ERR_BAD_HANDLE, RNTUPLE_ERR_WRONG_HANDLE};
use std::any::Any;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// A kind of object behind a handle.
pub trait Object: Send + Sync + 'static {
    /// Its name in messages ("reader").
    const KIND: &'static str;
    /// The top byte of its handles (unique per kind, not 0).
    const TAG: u8;
}

/// A registered object: the value and whether its handle was freed.
pub struct Registered<T> {
    alive: AtomicBool,
    /// The object.
    pub value: T,
}

type Stored = Arc<dyn Any + Send + Sync>;

struct Slot {
    kind: &'static str,
    obj: Stored,
}

fn table() -> &'static RwLock<HashMap<u64, Slot>> {
    static TABLE: OnceLock<RwLock<HashMap<u64, Slot>>> = OnceLock::new();
    TABLE.get_or_init(|| RwLock::new(HashMap::new()))
}

static SERIAL: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static LAST: RefCell<Option<(u64, &'static str, Stored)>> = const { RefCell::new(None) };
}

/// Registers an object and returns its new handle.
pub fn register<T: Object>(value: T) -> CResult<u64> {
    let serial = SERIAL.fetch_add(1, Ordering::Relaxed) & ((1 << 56) - 1);
    let h = (u64::from(T::TAG) << 56) | serial;
    let obj: Stored = Arc::new(Registered { alive: AtomicBool::new(true), value });
    let mut t = table().write().map_err(|_| poisoned())?;
    t.insert(h, Slot { kind: T::KIND, obj });
    Ok(h)
}

fn poisoned() -> CError {
    CError::new(crate::status::RNTUPLE_ERR_INTERNAL, "the handle table's lock was poisoned by a panic")
}

fn missing<T: Object>(h: u64) -> CError {
    if h == 0 {
        CError::new(RNTUPLE_ERR_BAD_HANDLE, format!("handle 0 is no object (expected a {})", T::KIND))
    } else {
        CError::new(RNTUPLE_ERR_BAD_HANDLE, format!("handle {h:#x} was freed or never issued (expected a {})", T::KIND))
    }
}

fn downcast<T: Object>(h: u64, kind: &str, obj: Stored) -> CResult<Arc<Registered<T>>> {
    obj.downcast::<Registered<T>>().map_err(|_| CError::new(RNTUPLE_ERR_WRONG_HANDLE, format!("handle {h:#x} is a {kind}, not a {}", T::KIND)))
}

/// The object of a handle, if it is alive and of kind `T`.
pub fn get<T: Object>(h: u64) -> CResult<Arc<Registered<T>>> {
    let cached = LAST.with(|l| l.borrow().as_ref().filter(|(k, _, _)| *k == h).map(|(_, kind, o)| (*kind, o.clone())));
    let obj = match cached {
        Some((kind, o)) => downcast::<T>(h, kind, o)?,
        None => {
            let (kind, o) = {
                let t = table().read().map_err(|_| poisoned())?;
                let s = t.get(&h).ok_or_else(|| missing::<T>(h))?;
                (s.kind, s.obj.clone())
            };
            let o = downcast::<T>(h, kind, o)?;
            LAST.with(|l| *l.borrow_mut() = Some((h, kind, o.clone() as Stored)));
            o
        }
    };
    if !obj.alive.load(Ordering::Acquire) {
        return Err(missing::<T>(h));
    }
    Ok(obj)
}

/// Removes a handle: later lookups of it fail; returns the object for its last rites (an abort,
/// a release). Freeing 0 is not an error (as `free(NULL)`), and returns `None`.
pub fn free<T: Object>(h: u64) -> CResult<Option<Arc<Registered<T>>>> {
    if h == 0 {
        return Ok(None);
    }
    let o = get::<T>(h)?;
    let mut t = table().write().map_err(|_| poisoned())?;
    if t.remove(&h).is_none() {
        return Err(missing::<T>(h)); // freed by another thread in between
    }
    o.alive.store(false, Ordering::Release);
    drop(t);
    LAST.with(|l| {
        if l.borrow().as_ref().is_some_and(|(k, _, _)| *k == h) {
            *l.borrow_mut() = None;
        }
    });
    Ok(Some(o))
}

/// The number of live handles (leak checks in the tests).
#[unsafe(no_mangle)]
pub extern "C" fn rntuple_live_handles() -> u64 {
    table().read().map(|t| t.len() as u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct A(u32);
    impl Object for A {
        const KIND: &'static str = "test A";
        const TAG: u8 = 0x7e;
    }
    struct B;
    impl Object for B {
        const KIND: &'static str = "test B";
        const TAG: u8 = 0x7f;
    }

    #[test]
    fn kinds_frees_and_forgeries() {
        let a = register(A(5)).unwrap();
        assert_eq!(get::<A>(a).unwrap().value.0, 5);
        let e = get::<B>(a).err().unwrap();
        assert_eq!(e.code, RNTUPLE_ERR_WRONG_HANDLE);
        assert!(e.message.contains("is a test A, not a test B"), "{}", e.message);
        assert_eq!(get::<A>(a + 1_000_000).err().unwrap().code, RNTUPLE_ERR_BAD_HANDLE);
        assert_eq!(get::<A>(0).err().unwrap().code, RNTUPLE_ERR_BAD_HANDLE);
        let kept = get::<A>(a).unwrap();
        assert!(free::<A>(a).unwrap().is_some());
        // Freed: by lookup, by the thread's cache, and twice.
        assert_eq!(get::<A>(a).err().unwrap().code, RNTUPLE_ERR_BAD_HANDLE);
        assert_eq!(free::<A>(a).err().unwrap().code, RNTUPLE_ERR_BAD_HANDLE);
        assert_eq!(kept.value.0, 5, "an Arc held during the free stays valid memory");
        assert!(free::<A>(0).unwrap().is_none());
    }

    #[test]
    fn a_handle_freed_on_another_thread_is_refused_from_the_cache() {
        let a = register(A(1)).unwrap();
        assert!(get::<A>(a).is_ok()); // now cached on this thread
        std::thread::spawn(move || free::<A>(a).map(|_| ()).unwrap()).join().unwrap();
        assert_eq!(get::<A>(a).err().unwrap().code, RNTUPLE_ERR_BAD_HANDLE);
    }
}
