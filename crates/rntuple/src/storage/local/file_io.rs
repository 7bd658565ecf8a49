//! Every system call that changes an output file or its directory, in one place: the writes
//! (`pwrite`, `pwritev`, a `Write` stream), size changes (`ftruncate`, `fallocate`, hole
//! punching), syncs (`fsync`, `fdatasync`, a directory's), creation, opening for writing,
//! renames and removals. Each goes through `io_record`, which records it with its bytes when
//! asked (the crash explorer rebuilds what a power loss may leave from that record); nothing
//! else in the project changes an output file (`.ci/check_file_io.py` says so, and the explorer
//! checks that replaying a workload's record gives the file on disk).

use crate::storage::local::io_record::{self, absolute, file_id, Op};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Creates a new file at `path` for reading and writing; fails when something is there.
pub(crate) fn create_new(path: &Path) -> io::Result<File> {
    io_record::around(false, || OpenOptions::new().read(true).write(true).create_new(true).open(path), |f| Op::Create { path: absolute(path), file: file_id(f) })
}

/// Creates the file at `path` for writing, emptying what was there (a non-RNTuple output under a
/// temporary name: Parquet, Arrow IPC).
pub(crate) fn create_truncate(path: &Path) -> io::Result<File> {
    match create_new(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let f = open_existing(path, true, 0)?;
            set_len(&f, 0)?;
            Ok(f)
        }
        r => r,
    }
}

/// Opens the existing file `path` for writing (and reading when `read`), with extra `open(2)`
/// flags (`O_DIRECT`; 0 for none).
pub(crate) fn open_existing(path: &Path, read: bool, flags: i32) -> io::Result<File> {
    io_record::around(false, || OpenOptions::new().read(read).write(true).custom_flags(flags).open(path), |f| Op::Open { path: absolute(path), file: file_id(f) })
}

/// Writes all of `b` at `offset` (`pwrite`).
pub(crate) fn write_at(f: &File, b: &[u8], offset: u64) -> io::Result<()> {
    io_record::around(false, || f.write_all_at(b, offset), |_| Op::Write { file: file_id(f), offset, bytes: b.to_vec() })
}

/// Writes all `pieces` back to back at `offset` (`pwritev`, resuming after short writes).
pub(crate) fn write_vectored_at(f: &File, pieces: &[&[u8]], offset: u64) -> io::Result<()> {
    io_record::around(false, || pwritev_all(f, pieces, offset), |_| Op::Write { file: file_id(f), offset, bytes: pieces.concat() })
}

/// Sets the file's size (`ftruncate`).
pub(crate) fn set_len(f: &File, len: u64) -> io::Result<()> {
    io_record::around(false, || f.set_len(len), |_| Op::SetLen { file: file_id(f), len })
}

/// Allocates `len` bytes from `offset` (`fallocate`); best effort: file systems and devices
/// without support are written without.
pub(crate) fn allocate(f: &File, offset: u64, len: u64) {
    let _ = io_record::around(
        false,
        || {
            // SAFETY: fallocate on a valid open descriptor; no memory is passed.
            let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, offset as libc::off_t, len as libc::off_t) };
            if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
        },
        |_| Op::Allocate { file: file_id(f), offset, len },
    );
}

/// Makes `len` bytes from `offset` a hole, keeping the size (`fallocate(PUNCH_HOLE)`): a
/// streaming upload's staging file returns what it sent.
pub(crate) fn punch_hole(f: &File, offset: u64, len: u64) -> io::Result<()> {
    io_record::around(
        false,
        || {
            // SAFETY: fallocate on a valid open descriptor; no memory is passed.
            let r = unsafe { libc::fallocate(f.as_raw_fd(), libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset as libc::off_t, len as libc::off_t) };
            if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
        },
        |_| Op::PunchHole { file: file_id(f), offset, len },
    )
}

/// Starts writing a just-written range back to disk without waiting (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`); promises nothing about durability (so it is not recorded). Best
/// effort.
pub(crate) fn start_writeback(f: &File, offset: u64, len: u64) {
    // SAFETY: a system call on a valid open descriptor; no memory is passed.
    let _ = unsafe { libc::sync_file_range(f.as_raw_fd(), offset as libc::off64_t, len as libc::off64_t, libc::SYNC_FILE_RANGE_WRITE) };
}

/// Syncs the file's data and the size needed to read it (`fdatasync`).
pub(crate) fn sync_data(f: &File) -> io::Result<()> {
    io_record::around(true, || f.sync_data(), |_| Op::Sync { file: file_id(f) })
}

/// Syncs the file (`fsync`).
pub(crate) fn sync_all(f: &File) -> io::Result<()> {
    io_record::around(true, || f.sync_all(), |_| Op::Sync { file: file_id(f) })
}

/// Renames `from` to `to`, replacing it.
pub(crate) fn rename(from: &Path, to: &Path) -> io::Result<()> {
    let (a, b) = (absolute(from), absolute(to));
    io_record::around(false, || std::fs::rename(from, to), |_| Op::Rename { from: a, to: b })
}

/// Syncs the directory `dir`, so that the names created, renamed and removed in it are durable.
/// Best effort: some file systems refuse to sync a directory.
pub(crate) fn sync_dir(dir: &Path) {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    if let Ok(d) = File::open(dir) {
        let abs = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let _ = io_record::around(true, || d.sync_all(), |_| Op::SyncDir { dir: abs });
    }
}

/// The directory holding `path` (`.` for a bare name).
pub(crate) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Removes the name `path`.
pub(crate) fn remove(path: &Path) -> io::Result<()> {
    let abs = absolute(path);
    io_record::around(false, || std::fs::remove_file(path), |_| Op::Remove { path: abs })
}

/// An output file written as a stream (`std::io::Write`) through [`write_at`], for encoders that
/// take a writer (Parquet, Arrow IPC).
pub(crate) struct StreamOut {
    file: File,
    at: u64,
}

impl StreamOut {
    /// A stream writing `file` from its start.
    pub(crate) fn new(file: File) -> StreamOut {
        StreamOut { file, at: 0 }
    }
}

impl io::Write for StreamOut {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        write_at(&self.file, b, self.at)?;
        self.at += b.len() as u64;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes all `pieces` back to back at `offset` with `pwritev`, resuming after short writes.
fn pwritev_all(f: &File, pieces: &[&[u8]], mut offset: u64) -> io::Result<()> {
    // At most IOV_MAX (1024 on Linux) buffers per call.
    const MAX_IOV: usize = 1024;
    let mut idx = 0;
    let mut skip = 0usize; // bytes of pieces[idx] already written
    while idx < pieces.len() {
        let iov: Vec<libc::iovec> = pieces[idx..]
            .iter()
            .take(MAX_IOV)
            .enumerate()
            .map(|(k, p)| {
                let p = if k == 0 { &p[skip..] } else { p };
                libc::iovec { iov_base: p.as_ptr() as *mut libc::c_void, iov_len: p.len() }
            })
            .collect();
        // SAFETY: every iovec points into a live, borrowed slice of `pieces` with its exact length;
        // pwritev only reads from them. The descriptor is open for the lifetime of `f`.
        let n = unsafe { libc::pwritev(f.as_raw_fd(), iov.as_ptr(), iov.len() as libc::c_int, offset as libc::off_t) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "pwritev wrote nothing"));
        }
        let mut n = n as usize;
        offset += n as u64;
        while n > 0 && idx < pieces.len() {
            let left = pieces[idx].len() - skip;
            if n >= left {
                n -= left;
                idx += 1;
                skip = 0;
            } else {
                skip += n;
                n = 0;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectored_write_of_more_pieces_than_iov_max() {
        let path = std::env::temp_dir().join(format!("rntuple-pwritev-{}.bin", std::process::id()));
        let f = create_truncate(&path).unwrap();
        let owned: Vec<Vec<u8>> = (0..3000u32).map(|i| vec![(i % 251) as u8; (i % 7) as usize + 1]).collect();
        let pieces: Vec<&[u8]> = owned.iter().map(|v| v.as_slice()).collect();
        write_vectored_at(&f, &pieces, 10).unwrap();
        let got = std::fs::read(&path).unwrap();
        let mut want = vec![0u8; 10];
        want.extend(owned.concat());
        assert_eq!(got, want);
        remove(&path).unwrap();
    }
}
