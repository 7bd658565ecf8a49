//! Output buffers for decoded columns.
//!
//! Reading a large column writes hundreds of MB of fresh memory; with 4 KiB pages the kernel's
//! page faults then cost more than decoding (measured on the 10-million-entry synthetic file:
//! 0.49 s with 4 KiB pages, 0.28 s with transparent huge pages, zstd decompression alone 0.08 s).
//! Large buffers are therefore advised to use huge pages.

/// Below this many bytes the hint is not worth a system call.
const HUGE_HINT_MIN: usize = 8 << 20;
const HUGE_PAGE: usize = 2 << 20;

/// A vector with room for `n` elements; large allocations are advised to use transparent huge
/// pages before they are first touched.
///
/// ```
/// let v: Vec<u64> = rntuple::primitives::alloc::vec_with_capacity(1 << 22);
/// assert!(v.capacity() >= 1 << 22);
/// ```
pub fn vec_with_capacity<T>(n: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(n);
    let bytes = v.capacity().saturating_mul(std::mem::size_of::<T>());
    if bytes >= HUGE_HINT_MIN {
        let start = v.as_ptr() as usize;
        let aligned = start.div_ceil(HUGE_PAGE) * HUGE_PAGE;
        let end = (start + bytes) / HUGE_PAGE * HUGE_PAGE;
        if end > aligned {
            // SAFETY: [aligned, end) lies inside the allocation owned by `v` (it is the
            // huge-page-aligned interior of [start, start + bytes)). MADV_HUGEPAGE is purely
            // advisory: it changes neither the contents nor the validity of the memory, and
            // its failure (e.g. THP disabled) is harmless, so the result is ignored.
            unsafe {
                libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
            }
        }
    }
    v
}
