//! The integration binary's global allocator: the system allocator, counting what it hands out
//! once a test has called [`enable`] (only tests that run alone in a child process do, see
//! `isolated`; for all others it costs one relaxed load per call). It records the largest single
//! request (the corruption sweep's "no allocation the file cannot justify") and the bytes live
//! and their peak (`page_buffer_budget`'s writer memory).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering::Relaxed};

struct Probe;
static ENABLED: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);
// Signed: memory allocated before `enable` and freed after it counts negative.
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: usize, request: usize) {
    LARGEST.fetch_max(request, Relaxed);
    let by = by as isize;
    PEAK.fetch_max(LIVE.fetch_add(by, Relaxed) + by, Relaxed);
}

// SAFETY: every call forwards the caller's pointer and layout to `System` unchanged; the counters
// are only statistics and never influence what is allocated.
unsafe impl GlobalAlloc for Probe {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() && ENABLED.load(Relaxed) {
            grew(l.size(), l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        if ENABLED.load(Relaxed) {
            LIVE.fetch_sub(l.size() as isize, Relaxed);
        }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() && ENABLED.load(Relaxed) {
            if new >= l.size() {
                grew(new - l.size(), new);
            } else {
                LIVE.fetch_sub((l.size() - new) as isize, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static PROBE: Probe = Probe;

/// Starts counting (for the rest of the process: call it only in a test that runs alone).
pub fn enable() {
    ENABLED.store(true, Relaxed);
}

/// Forgets the largest request seen so far.
pub fn reset_largest() {
    LARGEST.store(0, Relaxed);
}

/// The largest single allocation or reallocation request since [`reset_largest`].
pub fn largest() -> usize {
    LARGEST.load(Relaxed)
}

/// Bytes live now, counted from [`enable`] (can be negative).
pub fn live() -> isize {
    LIVE.load(Relaxed)
}

/// Makes the current live bytes the peak, so that [`peak`] reports what comes after.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Relaxed), Relaxed);
}

/// The most bytes live at once since [`reset_peak`].
pub fn peak() -> isize {
    PEAK.load(Relaxed)
}
