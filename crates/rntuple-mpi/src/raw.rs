//! The one-sided counter: a u64 in an MPI window on rank 0, advanced with an exclusive lock and
//! `MPI_Fetch_and_op` (rsmpi has no one-sided communication, so this is a small layer over its C
//! bindings; the only unsafe code of the crate).
//!
//! Invariants: the window is created collectively by every rank of the communicator with
//! `MPI_Win_allocate` (rank 0 exposes 8 bytes, the others none), so MPI owns the memory and it
//! outlives every access; it is freed collectively by [`WindowCounter::free`] (never in `Drop`,
//! which would be a collective call at an unpredictable time). Accesses of one process are
//! serialized by a mutex, so the counter works with any thread level.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use rntuple::write::distributed::OffsetService;
use rntuple::{Error, Result};
use std::sync::Mutex;

/// The handle of the window, usable from the thread holding the mutex.
struct Win(ffi::MPI_Win);
// SAFETY: an MPI window handle is a process-wide identifier; every use of it goes through the
// mutex of `WindowCounter`, so no two threads call MPI on it at once.
unsafe impl Send for Win {}

/// A global counter on rank 0, advanced by any rank.
pub struct WindowCounter {
    win: Mutex<Option<Win>>,
}

fn check(rc: std::os::raw::c_int, what: &str) -> Result<()> {
    // SAFETY: reading an immutable constant of the MPI library.
    let ok = rc == ffi::MPI_SUCCESS as std::os::raw::c_int;
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!("MPI one-sided communication: {what} failed with error code {rc}")))
    }
}

impl WindowCounter {
    /// Creates the window (collective over `comm`) with the counter at `start` on rank 0.
    pub fn create(comm: &SimpleCommunicator, rank: i32, start: u64) -> Result<WindowCounter> {
        let size: ffi::MPI_Aint = if rank == 0 { 8 } else { 0 };
        let mut base: *mut u64 = std::ptr::null_mut();
        // SAFETY: `MPI_WIN_NULL` is an immutable handle constant of the library.
        let mut win: ffi::MPI_Win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: collective call with valid arguments; MPI allocates `size` bytes (8 on rank 0)
        // and stores their address in `base` and the window in `win`.
        let rc = unsafe { ffi::MPI_Win_allocate(size, 8, ffi::RSMPI_INFO_NULL, comm.as_raw(), (&mut base as *mut *mut u64).cast(), &mut win) };
        check(rc, "MPI_Win_allocate")?;
        if rank == 0 {
            // SAFETY: rank 0's window memory is 8 bytes, aligned to 8 (MPI_Win_allocate with
            // disp_unit 8); writing it inside an exclusive lock epoch on our own rank is the
            // portable way to initialize window memory.
            unsafe {
                check(ffi::MPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as i32, 0, 0, win), "MPI_Win_lock")?;
                base.write(start);
                check(ffi::MPI_Win_unlock(0, win), "MPI_Win_unlock")?;
            }
        }
        Ok(WindowCounter { win: Mutex::new(Some(Win(win))) })
    }

    /// Frees the window (collective; call on every rank once nobody reserves any more).
    pub fn free(&self) -> Result<()> {
        let mut g = self.win.lock().map_err(|_| Error::Invalid("the one-sided counter's lock is poisoned".into()))?;
        if let Some(mut w) = g.take() {
            // SAFETY: a live window created by MPI_Win_allocate, freed once (taken out of the
            // option), with no access epoch open.
            check(unsafe { ffi::MPI_Win_free(&mut w.0) }, "MPI_Win_free")?;
        }
        Ok(())
    }
}

impl OffsetService for WindowCounter {
    fn reserve(&self, len: u64) -> Result<u64> {
        let g = self.win.lock().map_err(|_| Error::Invalid("the one-sided counter's lock is poisoned".into()))?;
        let w = g.as_ref().ok_or_else(|| Error::Invalid("the one-sided counter was freed already".into()))?;
        let mut old: u64 = 0;
        // SAFETY: an exclusive passive-target epoch on rank 0 of a live window; the origin buffer
        // `len` and result buffer `old` are valid u64s that live across MPI_Win_unlock, which
        // completes the operation.
        unsafe {
            check(ffi::MPI_Win_lock(ffi::MPI_LOCK_EXCLUSIVE as i32, 0, 0, w.0), "MPI_Win_lock")?;
            let rc = ffi::MPI_Fetch_and_op((&len as *const u64).cast(), (&mut old as *mut u64).cast(), ffi::RSMPI_UINT64_T, 0, 0, ffi::RSMPI_SUM, w.0);
            let unlock = ffi::MPI_Win_unlock(0, w.0);
            check(rc, "MPI_Fetch_and_op")?;
            check(unlock, "MPI_Win_unlock")?;
        }
        Ok(old)
    }
}
