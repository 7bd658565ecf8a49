//! The crate's unsafe layer over the MPI C API (rsmpi's C bindings), for what rsmpi's safe API
//! lacks: the one-sided counter, adopting a communicator from another binding (mpi4py), and
//! communicators moved between threads. Nothing else in the crate is unsafe.
//!
//! The one-sided counter: a u64 in an MPI window on rank 0, advanced with `MPI_Fetch_and_op`
//! (`MPI_SUM`). Every rank keeps a shared passive-target epoch open (`MPI_Win_lock_all`) from the
//! creation to [`WindowCounter::free`]: accumulate operations on one location are atomic, so no
//! exclusive lock per request is needed, and a request is issued at once and completed later
//! (`MPI_Win_flush`), overlapping the next cluster's compression. (An exclusive `MPI_Win_lock`
//! per request, as in the paper's prototype, is a blocking round trip to rank 0: measured under
//! 8 ranks on this 2-vCPU machine at 3-13 ms per request, 4 % of a rank's time at compression
//! 505, while the rank waits.)
//!
//! Invariants: the window is created collectively by every rank of the communicator with
//! `MPI_Win_allocate` (rank 0 exposes 8 bytes, the others none), so MPI owns the memory and it
//! outlives every access; rank 0 stores the start value and synchronizes (`MPI_Win_sync`) before
//! a barrier, after which the ranks access it; it is freed collectively by
//! [`WindowCounter::free`] (never in `Drop`, which would be a collective call at an
//! unpredictable time). Accesses of one process are serialized by a mutex, so the counter works
//! with any thread level. The origin and result buffers of an operation in flight are boxed and
//! kept in the counter until its completion.

use mpi::collective::CommunicatorCollectives;
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::{Communicator, SimpleCommunicator};
use rntuple::write::distributed::{OffsetService, Ticket};
use rntuple::{Error, Result};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// The window and the operations in flight, used by the thread holding the mutex.
struct Win {
    win: ffi::MPI_Win,
    /// Requests issued so far.
    issued: u64,
    /// Requests in flight: (origin value, result) buffers MPI reads and writes until the flush.
    flying: BTreeMap<u64, (Box<u64>, Box<u64>)>,
    /// Results of completed requests nobody asked for yet.
    done: BTreeMap<u64, u64>,
}
// SAFETY: an MPI window handle is a process-wide identifier and the boxed buffers are plain
// heap memory; every use goes through the mutex of `WindowCounter`, so no two threads call MPI
// on the window at once.
unsafe impl Send for Win {}

/// A global counter on rank 0, advanced by any rank.
pub struct WindowCounter {
    win: Mutex<Option<Win>>,
}

fn check(rc: std::os::raw::c_int, what: &str) -> Result<()> {
    if rc == ffi::MPI_SUCCESS as std::os::raw::c_int {
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
            // SAFETY: rank 0's window memory is 8 bytes aligned to 8 (disp_unit 8), owned by the
            // window; nobody accesses it before the barrier below. The store is made inside rank
            // 0's own shared epoch and published with MPI_Win_sync.
            unsafe {
                check(ffi::MPI_Win_lock_all(0, win), "MPI_Win_lock_all")?;
                base.write(start);
                check(ffi::MPI_Win_sync(win), "MPI_Win_sync")?;
            }
        }
        comm.barrier();
        if rank != 0 {
            // SAFETY: a live window; a shared epoch on every rank, compatible with rank 0's.
            check(unsafe { ffi::MPI_Win_lock_all(0, win) }, "MPI_Win_lock_all")?;
        }
        Ok(WindowCounter { win: Mutex::new(Some(Win { win, issued: 0, flying: BTreeMap::new(), done: BTreeMap::new() })) })
    }

    fn window(&self) -> Result<std::sync::MutexGuard<'_, Option<Win>>> {
        self.win.lock().map_err(|_| Error::Invalid("the one-sided counter's lock is poisoned".into()))
    }

    /// Frees the window (collective; call on every rank once nobody reserves any more).
    pub fn free(&self) -> Result<()> {
        let mut g = self.window()?;
        if let Some(mut w) = g.take() {
            // SAFETY: a live window with this process's shared epoch open: unlock_all completes
            // the operations in flight (their boxed buffers are still owned by `w`), then the
            // window is freed once (taken out of the option).
            unsafe {
                check(ffi::MPI_Win_unlock_all(w.win), "MPI_Win_unlock_all")?;
                check(ffi::MPI_Win_free(&mut w.win), "MPI_Win_free")?;
            }
        }
        Ok(())
    }
}

impl OffsetService for WindowCounter {
    fn reserve(&self, len: u64) -> Result<u64> {
        let t = self.request(len)?;
        self.complete(t)
    }

    fn request(&self, len: u64) -> Result<Ticket> {
        let mut g = self.window()?;
        let w = g.as_mut().ok_or_else(|| Error::Invalid("the one-sided counter was freed already".into()))?;
        let (origin, mut result) = (Box::new(len), Box::new(0u64));
        // SAFETY: inside this process's shared epoch on a live window; the origin and result
        // buffers are heap boxes moved into `w.flying` right after the call, so they stay at the
        // same address, unread and unwritten by us, until MPI_Win_flush completes the operation.
        let rc = unsafe {
            ffi::MPI_Fetch_and_op((&*origin as *const u64).cast(), (&mut *result as *mut u64).cast(), ffi::RSMPI_UINT64_T, 0, 0, ffi::RSMPI_SUM, w.win)
        };
        check(rc, "MPI_Fetch_and_op")?;
        let n = w.issued;
        w.issued += 1;
        w.flying.insert(n, (origin, result));
        Ok(Ticket::Pending(n))
    }

    fn complete(&self, t: Ticket) -> Result<u64> {
        let n = match t {
            Ticket::Ready(at) => return Ok(at),
            Ticket::Pending(n) => n,
        };
        let mut g = self.window()?;
        let w = g.as_mut().ok_or_else(|| Error::Invalid("the one-sided counter was freed already".into()))?;
        if let Some(at) = w.done.remove(&n) {
            return Ok(at);
        }
        if !w.flying.contains_key(&n) {
            return Err(Error::Invalid(format!("no one-sided request {n} in flight")));
        }
        // SAFETY: a live window inside this process's shared epoch; the flush completes every
        // operation this process issued to rank 0, after which their result buffers hold values.
        check(unsafe { ffi::MPI_Win_flush(0, w.win) }, "MPI_Win_flush")?;
        for (k, (_, result)) in std::mem::take(&mut w.flying) {
            w.done.insert(k, *result);
        }
        w.done.remove(&n).ok_or_else(|| Error::Invalid(format!("one-sided request {n} has no result")))
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
        return Err(Error::Invalid(
            "MPI is not initialized: initialize it before creating the writer (MPI_Init_thread with MPI_THREAD_MULTIPLE; in Python, import mpi4py.MPI)".into(),
        ));
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
