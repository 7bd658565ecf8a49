//! Outputs in the making, for a process that is interrupted: every temporary file of an output
//! (beside a local destination, or in `TMPDIR` for a remote one), every S3 multipart upload and
//! every temporary XRootD file not yet committed is registered here while it exists, so that a
//! program that catches SIGINT or SIGTERM (the `rntuple` command does) can remove them all with
//! [`clean_up_pending_outputs`] before it exits. A dropped or failed output cleans up after itself
//! (its `Drop`); this registry is for the exit that runs no destructors.
//!
//! After a clean-up the process is [`interrupted`]: an upload that still runs refuses to complete
//! (an S3 upload is not completed, an XRootD temporary file not moved over its destination), so
//! that what the interrupt cancelled stays cancelled.

// Without the remote and xrootd features no remote output exists: its machinery is unused.
#![cfg_attr(not(any(feature = "remote", feature = "xrootd")), allow(dead_code))]

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// How a pending output is undone.
pub(crate) enum Cleanup {
    /// A local temporary file, removed.
    File(PathBuf),
    /// A remote action (abort an S3 multipart upload, remove an XRootD temporary file), bounded
    /// in time by the closure itself.
    Remote(Box<dyn FnOnce() + Send>),
}

static PENDING: Mutex<Vec<(u64, Cleanup)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// A registered pending output: unregistered when dropped (the output was committed or cleaned up
/// by its owner).
#[derive(Debug)]
pub(crate) struct Pending(u64);

/// Registers `c` until the returned guard is dropped.
pub(crate) fn register(c: Cleanup) -> Pending {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let mut g = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    g.push((id, c));
    Pending(id)
}

impl Pending {
    /// Unregisters, unless the process was interrupted: `Ok` when the caller may go on to make
    /// its output visible (complete the upload, move the file), `Err` when a clean-up cancelled it.
    /// Checked and unregistered under the registry's lock, so that a clean-up either runs before
    /// (and the caller stops) or finds nothing to undo.
    pub(crate) fn release_for_commit(self) -> std::result::Result<(), ()> {
        let mut g = PENDING.lock().unwrap_or_else(|p| p.into_inner());
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(());
        }
        g.retain(|(i, _)| *i != self.0);
        drop(g);
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let mut g = PENDING.lock().unwrap_or_else(|p| p.into_inner());
        g.retain(|(i, _)| *i != self.0);
    }
}

/// Whether [`clean_up_pending_outputs`] ran in this process: nothing may be committed any more.
pub(crate) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Removes every output still being written by this process (temporary files, S3 multipart
/// uploads, XRootD temporary files) and marks the process interrupted, so that no output is
/// committed after it; returns how many were removed. For a program's SIGINT/SIGTERM handling,
/// run on an ordinary thread (not inside a signal handler): remote clean-ups make requests, each
/// bounded by a few seconds. Destinations are never touched: a replaced file or object stays as it
/// was.
///
/// (The example runs as a program of its own: it marks its process interrupted.)
///
/// ```standalone_crate
/// use rntuple::write::{WriteOptions, Writer};
/// let path = std::env::temp_dir().join(format!("rntuple-doc-interrupt-{}.root", std::process::id()));
/// let w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// // A signal arrives: the CLI's signal thread calls this, then exits.
/// assert!(rntuple::storage::clean_up_pending_outputs() >= 1);
/// assert!(!path.exists());
/// // The interrupted process commits nothing any more.
/// assert!(w.commit().is_err());
/// assert!(!path.exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn clean_up_pending_outputs() -> usize {
    let taken = {
        let mut g = PENDING.lock().unwrap_or_else(|p| p.into_inner());
        INTERRUPTED.store(true, Ordering::SeqCst);
        std::mem::take(&mut *g)
    };
    let n = taken.len();
    for (_, c) in taken {
        match c {
            Cleanup::File(p) => {
                let _ = std::fs::remove_file(p);
            }
            Cleanup::Remote(f) => f(),
        }
    }
    n
}
