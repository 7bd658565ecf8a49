//! Which bytes of a staged output are final, for an upload that streams while the file is being
//! written (`storage::remote::s3_stream`). Writers reserve byte ranges in increasing offsets and write them
//! later, from several threads, in any order; every completed write (and every gap skipped on
//! purpose) is [`UploadWindow::record`]ed here. The window keeps the end of the contiguous prefix
//! written so far and the completed ranges beyond it; an uploader waits for the prefix to pass a
//! part's end ([`UploadWindow::wait_for`]), claims the parts it uploads
//! ([`UploadWindow::claim`]), and a later write into a claimed range beyond the first part (which
//! holds the TFile header and directory record, rewritten at the commit, and is uploaded last) is
//! remembered as an error, so that the commit fails rather than upload a file that differs from
//! the staged one. [`punch_hole`] frees the uploaded bytes of the staging file.

// Without the remote and xrootd features no remote output exists: its machinery is unused.
#![cfg_attr(not(any(feature = "remote", feature = "xrootd")), allow(dead_code))]

use std::collections::BTreeMap;
use std::sync::{Condvar, Mutex};

#[derive(Default)]
struct State {
    /// End of the contiguous prefix of written bytes.
    prefix: u64,
    /// Completed ranges beyond the prefix: start -> end.
    done: BTreeMap<u64, u64>,
    /// End of the bytes an uploader took (beyond `first_part`).
    claimed: u64,
    /// Set when writing ended (commit or drop): waiters return.
    closed: bool,
    /// A write into bytes already uploaded.
    rewritten: Option<String>,
}

/// The written bytes of a staged output (see the module).
pub(crate) struct UploadWindow {
    /// Bytes `0..first_part` are uploaded last: writes there are always fine.
    first_part: u64,
    state: Mutex<State>,
    cv: Condvar,
}

impl UploadWindow {
    /// A window whose first `first_part` bytes are uploaded at the commit.
    pub(crate) fn new(first_part: u64) -> UploadWindow {
        UploadWindow { first_part, state: Mutex::new(State::default()), cv: Condvar::new() }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that `len` bytes at `offset` are written (or are a gap that stays as it is).
    pub(crate) fn record(&self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let end = offset.saturating_add(len);
        let mut s = self.lock();
        if offset < s.claimed && end > self.first_part && s.rewritten.is_none() {
            s.rewritten = Some(format!("bytes {offset}..{end} were written after bytes up to {} were uploaded", s.claimed));
        }
        if end <= s.prefix {
            return;
        }
        if offset <= s.prefix {
            s.prefix = end;
        } else {
            let e = s.done.entry(offset).or_insert(end);
            *e = (*e).max(end);
        }
        // Ranges now joined to the prefix.
        while let Some((&start, &stop)) = s.done.first_key_value() {
            if start > s.prefix {
                break;
            }
            s.done.remove(&start);
            s.prefix = s.prefix.max(stop);
        }
        drop(s);
        self.cv.notify_all();
    }

    /// Waits until the prefix reaches `upto` (`Some(prefix)`) or writing ended (`None`).
    pub(crate) fn wait_for(&self, upto: u64) -> Option<u64> {
        let mut s = self.lock();
        loop {
            if s.prefix >= upto {
                return Some(s.prefix);
            }
            if s.closed {
                return None;
            }
            s = self.cv.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Takes the bytes up to `end` for uploading: a later write there is an error.
    pub(crate) fn claim(&self, end: u64) {
        let mut s = self.lock();
        s.claimed = s.claimed.max(end);
    }

    /// Writing ended: waiters return.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.cv.notify_all();
    }

    /// A write into bytes already uploaded, if there was one.
    pub(crate) fn rewritten(&self) -> Option<String> {
        self.lock().rewritten.clone()
    }
}

/// Frees the bytes `[start, end)` of the staging file (they are uploaded); best effort.
pub(crate) fn punch_hole(file: &std::fs::File, start: u64, end: u64) {
    let _ = crate::storage::local::file_io::punch_hole(file, start, end - start);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_grows_over_ranges_completed_out_of_order() {
        let w = UploadWindow::new(10);
        w.record(0, 10);
        w.record(30, 10);
        w.record(20, 10);
        assert_eq!(w.lock().prefix, 10);
        w.record(10, 10);
        assert_eq!(w.wait_for(40), Some(40));
        w.claim(40);
        w.record(5, 2); // the first part: fine
        assert!(w.rewritten().is_none());
        w.record(35, 2);
        assert!(w.rewritten().unwrap().contains("35..37"));
        w.close();
        assert_eq!(w.wait_for(100), None);
    }
}
