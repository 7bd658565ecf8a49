//! The file-lock counter: the global offset kept in a side file next to the output, read and
//! advanced under an `fcntl` byte-range write lock. It needs nothing of MPI but a shared POSIX
//! file system (`fcntl` locks work across nodes on NFS, Lustre and GPFS). `fcntl` locks belong
//! to the process, not the thread, so the threads of one rank take a mutex first.

use rntuple::write::distributed::OffsetService;
use rntuple::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A counter in a side file under an `fcntl` lock.
pub struct FileLockCounter {
    file: Mutex<File>,
    path: PathBuf,
}

/// The side file holding the counter for a file written at `writing_path` (rank 0's temporary
/// file, or the file itself with checkpoints): beside it, hidden; for `/dev/null`, in the temporary directory (one node).
pub fn side_file(writing_path: &Path) -> PathBuf {
    if writing_path == Path::new("/dev/null") {
        return std::env::temp_dir().join(format!(
            "rntuple-offset-{}-{}",
            std::process::id(),
            std::time::SystemTime::UNIX_EPOCH.elapsed().map(|d| d.as_nanos()).unwrap_or(0)
        ));
    }
    // Hidden: a file written with checkpoints is written at its final name, not a hidden one.
    let name = writing_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dot = if name.starts_with('.') { "" } else { "." };
    writing_path.with_file_name(format!("{dot}{name}.offset"))
}

fn io(what: String, e: std::io::Error) -> Error {
    Error::Invalid(format!("{what}: {e}"))
}

impl FileLockCounter {
    /// Creates the side file with the counter at `start` (rank 0, before the others open it).
    pub fn create(path: &Path, start: u64) -> Result<FileLockCounter> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| io(format!("creating the offset file {}", path.display()), e))?;
        file.write_all_at(&start.to_le_bytes(), 0).map_err(|e| io(format!("writing the offset file {}", path.display()), e))?;
        file.sync_all().map_err(|e| io(format!("syncing the offset file {}", path.display()), e))?;
        Ok(FileLockCounter { file: Mutex::new(file), path: path.to_path_buf() })
    }

    /// Opens the side file rank 0 created.
    pub fn open(path: &Path) -> Result<FileLockCounter> {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path).map_err(|e| io(format!("opening the offset file {}", path.display()), e))?;
        Ok(FileLockCounter { file: Mutex::new(file), path: path.to_path_buf() })
    }

    /// The side file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the side file (rank 0 at the end, or a failing rank).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    fn lock(f: &File, kind: libc::c_int) -> std::io::Result<()> {
        // SAFETY: `flock` is a plain C struct for which all-zero is a valid value.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = kind as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = 0;
        fl.l_len = 8;
        loop {
            // SAFETY: fcntl on an open descriptor with a valid `flock` that lives across the call.
            let rc = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETLKW, &fl) };
            if rc == 0 {
                return Ok(());
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl OffsetService for FileLockCounter {
    fn reserve(&self, len: u64) -> Result<u64> {
        let f = self.file.lock().map_err(|_| Error::Invalid("the file-lock counter's mutex is poisoned".into()))?;
        let what = |s: &str| format!("{s} the offset file {}", self.path.display());
        Self::lock(&f, libc::F_WRLCK).map_err(|e| io(what("locking"), e))?;
        let r = (|| -> Result<u64> {
            let mut b = [0u8; 8];
            f.read_exact_at(&mut b, 0).map_err(|e| io(what("reading"), e))?;
            let at = u64::from_le_bytes(b);
            let next = at.checked_add(len).ok_or_else(|| Error::Invalid(format!("the offset file {} overflows", self.path.display())))?;
            f.write_all_at(&next.to_le_bytes(), 0).map_err(|e| io(what("writing"), e))?;
            Ok(at)
        })();
        let unlock = Self::lock(&f, libc::F_UNLCK).map_err(|e| io(what("unlocking"), e));
        let at = r?;
        unlock?;
        Ok(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_get_disjoint_ranges_and_another_handle_continues() {
        // (fcntl locks do not exclude handles of one process from each other: one counter per
        // process, as each rank has; other processes are the MPI tests' business.)
        let p = std::env::temp_dir().join(format!("rntuple-mpi-lock-{}", std::process::id()));
        let c0 = FileLockCounter::create(&p, 4096).unwrap();
        let mut got: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4).map(|_| s.spawn(|| (0..50).map(|_| c0.reserve(4096).unwrap()).collect::<Vec<_>>())).collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        got.sort();
        let want: Vec<u64> = (1..=200).map(|i| i * 4096).collect();
        assert_eq!(got, want);
        let c1 = FileLockCounter::open(&p).unwrap();
        assert_eq!(c1.reserve(10).unwrap(), 201 * 4096);
        c0.remove();
        assert!(!p.exists());
    }
}
