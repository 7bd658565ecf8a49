//! SIGINT and SIGTERM: outputs in the making are removed before the process exits (temporary
//! files beside local outputs and in TMPDIR, S3 multipart uploads aborted, XRootD temporary files
//! removed: `rntuple::storage::clean_up_pending_outputs`), then the process ends by the signal, as
//! it would have without the clean-up.
//!
//! The handler only writes the signal's number into a pipe (what a signal handler may do); a
//! thread of its own reads it, cleans up and exits. Handlers are reset by `exec`, so child
//! processes (`convert --tree` runs Python) keep the default dispositions.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// The pipe's write end, for the handler.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// Set when a signal came: the clean-up thread ends the process.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// When a signal came, waits for the clean-up thread to end the process (the command may have
/// failed because its upload was cancelled: its exit status is the signal's, not the failure's).
pub(crate) fn wait_if_signalled() {
    if SIGNALLED.load(Ordering::SeqCst) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
}

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; one byte from a local.
        unsafe {
            libc::write(fd, (&b as *const u8).cast(), 1);
        }
    }
}

/// Installs the handlers and starts the clean-up thread; on failure the default dispositions stay
/// (a signal then ends the process without the clean-up).
pub(crate) fn install() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: a two-int array for pipe(2).
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let (read_fd, write_fd) = (fds[0], fds[1]);
    let started = std::thread::Builder::new().name("rntuple-signals".into()).spawn(move || {
        let mut b = 0u8;
        loop {
            // SAFETY: reading one byte into a local from the pipe this thread owns.
            let n = unsafe { libc::read(read_fd, (&mut b as *mut u8).cast(), 1) };
            if n == 1 {
                break;
            }
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let sig = libc::c_int::from(b);
        SIGNALLED.store(true, Ordering::SeqCst);
        let n = rntuple::storage::clean_up_pending_outputs();
        if n > 0 {
            eprintln!("rntuple: interrupted: {n} output(s) in the making removed, nothing written");
        }
        // SAFETY: the signal's default disposition back, and the signal raised again: the process
        // ends by it, as it would have without the clean-up (a shell sees a process killed by
        // SIGINT, and stops its loop); `_exit` if it did not end.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            std::thread::sleep(std::time::Duration::from_secs(1));
            libc::_exit(128 + sig)
        }
    });
    if started.is_err() {
        return;
    }
    PIPE_WRITE.store(write_fd, Ordering::Relaxed);
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: installing a handler that only calls write(2); no SA_RESTART-sensitive state.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}
