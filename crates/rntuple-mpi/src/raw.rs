//! The crate's unsafe layer over the MPI C API (rsmpi's C bindings), for what rsmpi's safe API
//! lacks: the one-sided counter, adopting a communicator from another binding (mpi4py), and
//! communicators moved between threads. Nothing else in the crate is unsafe.
//!
//! The one-sided counter: a u64 in an MPI window on rank 0, advanced with an exclusive lock and
//! `MPI_Fetch_and_op`. Invariants: the window is created collectively by every rank of the communicator with
//! `MPI_Win_allocate` (rank 0 exposes 8 bytes, the others none), so MPI owns the memory and it
//! outlives every access; it is freed collectively by [`WindowCounter::free`] (never in `Drop`,
//! which would be a collective call at an unpredictable time). Accesses of one process are
//! serialized by a mutex, so the counter works with any thread level.

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
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

/// A communicator that may move to another thread.
pub(crate) struct SendComm(pub(crate) SimpleCommunicator);
// SAFETY: an MPI communicator handle is a process-wide identifier, not tied to a thread. The
// writer makes its MPI calls from one thread at a time per handle (the thread owning the writer,
// the aggregator thread owning its handle, or the holder of a rank's mutex), and checks at
// creation that MPI provides MPI_THREAD_MULTIPLE before the aggregator thread calls MPI while
// other threads do.
unsafe impl Send for SendComm {}

impl std::ops::Deref for SendComm {
    type Target = SimpleCommunicator;
    fn deref(&self) -> &SimpleCommunicator {
        &self.0
    }
}

/// A duplicate of the communicator with the Fortran handle `f` (what mpi4py's `comm.py2f()`
/// returns), owned by the caller: another binding's communicator made usable here without
/// taking it over.
pub fn communicator_from_fortran(f: i64) -> Result<SimpleCommunicator> {
    let mut init = 0;
    // SAFETY: MPI_Initialized may be called at any time and writes one int.
    check(unsafe { ffi::MPI_Initialized(&mut init) }, "MPI_Initialized")?;
    if init == 0 {
        return Err(Error::Invalid("MPI is not initialized: import mpi4py.MPI (or initialize MPI) before creating the writer".into()));
    }
    let f = ffi::RSMPI_Fint::try_from(f).map_err(|_| Error::Invalid(format!("{f} is not an MPI communicator handle")))?;
    // SAFETY: MPI_Comm_f2c converts any integer without side effects; an invalid handle is
    // caught by MPI_Comm_dup below (MPI_ERRORS_RETURN is not set, so MPI would abort the job
    // with its own message rather than return).
    let comm = unsafe { ffi::MPI_Comm_f2c(f) };
    // SAFETY: `MPI_COMM_NULL` is an immutable handle constant of the library.
    if comm == unsafe { ffi::RSMPI_COMM_NULL } {
        return Err(Error::Invalid("the communicator is MPI_COMM_NULL".into()));
    }
    // SAFETY: `MPI_COMM_NULL` is an immutable handle constant; MPI_Comm_dup (collective over the
    // communicator) writes the new handle into `dup`.
    let mut dup = unsafe { ffi::RSMPI_COMM_NULL };
    check(unsafe { ffi::MPI_Comm_dup(comm, &mut dup) }, "MPI_Comm_dup")?;
    // SAFETY: `dup` is a fresh intra-communicator owned by nobody else; rsmpi frees it on drop.
    let owned = unsafe { <SimpleCommunicator as mpi::raw::FromRaw>::from_raw(dup) };
    let _ = owned.size();
    Ok(owned)
}
