//! A record of every change made to output files, for the crash explorer (`crates/rntuple-crash`):
//! each write, size change, allocation, sync, rename, directory sync and removal that
//! `storage::local::file_io` makes, with its bytes, in the order the system saw them, and the
//! points where a writer reported a checkpoint or a commit durable to its caller.
//!
//! Off unless asked for, at the cost of one atomic load per operation: [`start`] records the
//! calling process into a log file; the environment variable [`ENV`] (a directory) does the same
//! for any process that writes (the CLI, Python, a C program, every MPI rank: one log per
//! process, `io-PID-NANOS.log`). While recording, each operation and its entry are made under one
//! lock, so that the log of a process is in the order its operations took effect; entries carry a
//! system-wide monotonic time (`CLOCK_MONOTONIC`), taken before a sync (it covers what completed
//! before it began) and after any other operation (it took effect when it returned), so that the
//! logs of several processes merge by time.
//!
//! The log is a sequence of entries: a tag byte, the time (u64), the process id (u32), then the
//! operation's fields (little endian; paths and bytes as a u64 length and the bytes).
//! [`parse_log`] reads it back, refusing anything malformed with the offset.
//!
//! ```
//! use rntuple::storage::local::io_record::{self, Op};
//! let log = std::env::temp_dir().join(format!("rntuple-doc-io-record-{}.log", std::process::id()));
//! io_record::start(&log)?;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-io-record-{}.root", std::process::id()));
//! let mut w = rntuple::write::Writer::create(&path, "Events", &[("x", "float")], Default::default())?;
//! w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::F32(1.0))]))?;
//! w.commit()?;
//! io_record::stop();
//! let events = io_record::parse_log(&std::fs::read(&log)?)?;
//! // The file was written, synced, renamed over its destination, and its commit reported durable.
//! assert!(events.iter().any(|e| matches!(e.op, Op::Write { .. })));
//! assert!(events.iter().any(|e| matches!(&e.op, Op::Rename { to, .. } if to == &path)));
//! assert!(matches!(&events.last().unwrap().op, Op::Durable { path: p } if p == &path));
//! # std::fs::remove_file(&log)?; std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

/// The environment variable naming a directory: every process that sees it records its output
/// operations into a log of its own there.
pub const ENV: &str = "RNTUPLE_RECORD_IO";

/// A file by identity (device and inode), as the operations on an open handle name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId {
    /// Device number.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

/// One operation on an output file or its directory. Paths are absolute; `file` is the file the
/// operation's handle refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)] // The fields are named for what they are; the variants say what was done.
pub enum Op {
    /// A new, empty file was created at `path`.
    Create { path: PathBuf, file: FileId },
    /// An existing file at `path` was opened for writing (nothing changed yet).
    Open { path: PathBuf, file: FileId },
    /// `bytes` were written at `offset`.
    Write { file: FileId, offset: u64, bytes: Vec<u8> },
    /// The file's size was set to `len`.
    SetLen { file: FileId, len: u64 },
    /// `len` bytes from `offset` were allocated (the size grows to cover them, as zeros).
    Allocate { file: FileId, offset: u64, len: u64 },
    /// `len` bytes from `offset` were made a hole (read as zeros; the size is kept).
    PunchHole { file: FileId, offset: u64, len: u64 },
    /// The file's data (and the size needed to read it) were synced (`fsync`, `fdatasync`).
    Sync { file: FileId },
    /// `from` was renamed to `to` (replacing it).
    Rename { from: PathBuf, to: PathBuf },
    /// The directory `dir` was synced: its entries' changes are durable.
    SyncDir { dir: PathBuf },
    /// The name `path` was removed.
    Remove { path: PathBuf },
    /// A writer reported the file at `path` durable to its caller (a checkpoint or a commit
    /// returned).
    Durable { path: PathBuf },
}

/// An operation with when and by whom it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `CLOCK_MONOTONIC`, nanoseconds.
    pub time_ns: u64,
    /// The process that made it.
    pub pid: u32,
    /// What was done.
    pub op: Op,
}

static ACTIVE: AtomicBool = AtomicBool::new(false);
static LOG: Mutex<Option<File>> = Mutex::new(None);
static FROM_ENV: Once = Once::new();

fn log_lock() -> MutexGuard<'static, Option<File>> {
    LOG.lock().unwrap_or_else(|p| p.into_inner())
}

/// Starts recording this process's output operations into `log` (created or truncated).
pub fn start(log: &Path) -> Result<()> {
    FROM_ENV.call_once(|| {});
    let f = File::create(log).map_err(|e| Error::io(format!("creating the I/O log {}", log.display()), e))?;
    *log_lock() = Some(f);
    ACTIVE.store(true, Ordering::SeqCst);
    Ok(())
}

/// Stops recording (the log is complete when this returns).
pub fn stop() {
    let mut g = log_lock();
    ACTIVE.store(false, Ordering::SeqCst);
    if let Some(f) = g.as_mut() {
        let _ = f.flush();
    }
    *g = None;
}

/// Whether operations are being recorded (the environment variable is looked at once).
pub(crate) fn active() -> bool {
    FROM_ENV.call_once(|| {
        if let Some(dir) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
            let p = PathBuf::from(dir).join(format!("io-{}-{}.log", std::process::id(), now_ns()));
            match File::create(&p) {
                Ok(f) => {
                    *log_lock() = Some(f);
                    ACTIVE.store(true, Ordering::SeqCst);
                }
                // Asked for and impossible: said once, and the process goes on unrecorded.
                Err(e) => eprintln!("rntuple: {ENV}: cannot create the I/O log {}: {e}; not recording", p.display()),
            }
        }
    });
    ACTIVE.load(Ordering::Relaxed)
}

/// `CLOCK_MONOTONIC` in nanoseconds (system-wide, so that the logs of processes merge).
fn now_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec it is given, which lives across the call.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
}

/// The identity of an open file.
pub(crate) fn file_id(f: &File) -> FileId {
    use std::os::unix::fs::MetadataExt;
    match f.metadata() {
        Ok(m) => FileId { dev: m.dev(), ino: m.ino() },
        Err(_) => FileId { dev: 0, ino: 0 },
    }
}

/// Runs `action` and, when recording, records the operation `op` makes of its result, under the
/// log's lock (so that the log's order is the order the operations took effect). `sync`: the
/// time is taken before the action (a sync covers what completed before it began).
pub(crate) fn around<T>(sync: bool, action: impl FnOnce() -> std::io::Result<T>, op: impl FnOnce(&T) -> Op) -> std::io::Result<T> {
    if !active() {
        return action();
    }
    let mut g = log_lock();
    let before = now_ns();
    let r = action()?;
    let time_ns = if sync { before } else { now_ns() };
    if let Some(f) = g.as_mut() {
        let _ = f.write_all(&encode(&Event { time_ns, pid: std::process::id(), op: op(&r) }));
    }
    Ok(r)
}

/// Records that a writer reported the file at `path` durable (a checkpoint or commit returned).
pub(crate) fn durable(path: &Path) {
    if active() {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut g = log_lock();
        if let Some(f) = g.as_mut() {
            let _ = f.write_all(&encode(&Event { time_ns: now_ns(), pid: std::process::id(), op: Op::Durable { path } }));
            let _ = f.flush();
        }
    }
}

/// A path as it will be found again (absolute, symbolic links of its directory resolved).
pub(crate) fn absolute(path: &Path) -> PathBuf {
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = std::fs::canonicalize(dir) {
            return d.join(name);
        }
    }
    path.to_path_buf()
}

const TAGS: [&str; 11] = ["create", "open", "write", "set_len", "allocate", "punch_hole", "sync", "rename", "sync_dir", "remove", "durable"];

fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(b: &mut Vec<u8>, v: &[u8]) {
    put_u64(b, v.len() as u64);
    b.extend_from_slice(v);
}

fn put_file(b: &mut Vec<u8>, f: &FileId) {
    put_u64(b, f.dev);
    put_u64(b, f.ino);
}

/// The bytes of one log entry.
pub fn encode(e: &Event) -> Vec<u8> {
    let mut b = Vec::new();
    let tag = match &e.op {
        Op::Create { .. } => 0u8,
        Op::Open { .. } => 1,
        Op::Write { .. } => 2,
        Op::SetLen { .. } => 3,
        Op::Allocate { .. } => 4,
        Op::PunchHole { .. } => 5,
        Op::Sync { .. } => 6,
        Op::Rename { .. } => 7,
        Op::SyncDir { .. } => 8,
        Op::Remove { .. } => 9,
        Op::Durable { .. } => 10,
    };
    b.push(tag);
    put_u64(&mut b, e.time_ns);
    b.extend_from_slice(&e.pid.to_le_bytes());
    match &e.op {
        Op::Create { path, file } | Op::Open { path, file } => {
            put_bytes(&mut b, path.as_os_str().as_bytes());
            put_file(&mut b, file);
        }
        Op::Write { file, offset, bytes } => {
            put_file(&mut b, file);
            put_u64(&mut b, *offset);
            put_bytes(&mut b, bytes);
        }
        Op::SetLen { file, len } => {
            put_file(&mut b, file);
            put_u64(&mut b, *len);
        }
        Op::Allocate { file, offset, len } | Op::PunchHole { file, offset, len } => {
            put_file(&mut b, file);
            put_u64(&mut b, *offset);
            put_u64(&mut b, *len);
        }
        Op::Sync { file } => put_file(&mut b, file),
        Op::Rename { from, to } => {
            put_bytes(&mut b, from.as_os_str().as_bytes());
            put_bytes(&mut b, to.as_os_str().as_bytes());
        }
        Op::SyncDir { dir: path } | Op::Remove { path } | Op::Durable { path } => put_bytes(&mut b, path.as_os_str().as_bytes()),
    }
    b
}

/// Reads a log's bytes.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: u64, what: &str) -> Result<&[u8]> {
        let end = usize::try_from(n).ok().and_then(|n| self.at.checked_add(n)).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| Error::Invalid(format!("I/O log: {what} at byte {} runs past the end ({} bytes)", self.at, self.b.len())))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let s = self.take(8, what)?;
        Ok(u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]))
    }

    fn bytes(&mut self, what: &str) -> Result<Vec<u8>> {
        let n = self.u64(what)?;
        Ok(self.take(n, what)?.to_vec())
    }

    fn path(&mut self, what: &str) -> Result<PathBuf> {
        Ok(PathBuf::from(std::ffi::OsString::from_vec(self.bytes(what)?)))
    }

    fn file(&mut self) -> Result<FileId> {
        Ok(FileId { dev: self.u64("device")?, ino: self.u64("inode")? })
    }
}

/// The events of a log, in its order.
pub fn parse_log(bytes: &[u8]) -> Result<Vec<Event>> {
    let mut c = Cursor { b: bytes, at: 0 };
    let mut out = Vec::new();
    while c.at < bytes.len() {
        let start = c.at;
        let tag = c.take(1, "tag")?[0];
        let time_ns = c.u64("time")?;
        let p = c.take(4, "pid")?;
        let pid = u32::from_le_bytes([p[0], p[1], p[2], p[3]]);
        let op = match tag {
            0 => Op::Create { path: c.path("path")?, file: c.file()? },
            1 => Op::Open { path: c.path("path")?, file: c.file()? },
            2 => Op::Write { file: c.file()?, offset: c.u64("offset")?, bytes: c.bytes("bytes")? },
            3 => Op::SetLen { file: c.file()?, len: c.u64("length")? },
            4 => Op::Allocate { file: c.file()?, offset: c.u64("offset")?, len: c.u64("length")? },
            5 => Op::PunchHole { file: c.file()?, offset: c.u64("offset")?, len: c.u64("length")? },
            6 => Op::Sync { file: c.file()? },
            7 => Op::Rename { from: c.path("from")?, to: c.path("to")? },
            8 => Op::SyncDir { dir: c.path("directory")? },
            9 => Op::Remove { path: c.path("path")? },
            10 => Op::Durable { path: c.path("path")? },
            t => return Err(Error::Invalid(format!("I/O log: unknown entry tag {t} at byte {start} (known: {})", TAGS.join(", ")))),
        };
        out.push(Event { time_ns, pid, op });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_truncation_is_refused() {
        let f = FileId { dev: 3, ino: 9 };
        let ops = vec![
            Op::Create { path: "/a/b".into(), file: f },
            Op::Open { path: "/a/c".into(), file: f },
            Op::Write { file: f, offset: 7, bytes: vec![1, 2, 3] },
            Op::SetLen { file: f, len: 11 },
            Op::Allocate { file: f, offset: 4, len: 5 },
            Op::PunchHole { file: f, offset: 1, len: 2 },
            Op::Sync { file: f },
            Op::Rename { from: "/a/b".into(), to: "/a/d".into() },
            Op::SyncDir { dir: "/a".into() },
            Op::Remove { path: "/a/c".into() },
            Op::Durable { path: "/a/d".into() },
        ];
        let events: Vec<Event> = ops.into_iter().enumerate().map(|(i, op)| Event { time_ns: i as u64 * 10, pid: 42, op }).collect();
        let bytes: Vec<u8> = events.iter().flat_map(encode).collect();
        assert_eq!(parse_log(&bytes).unwrap(), events);
        let cut = &bytes[..bytes.len() - 3];
        let e = parse_log(cut).unwrap_err().to_string();
        assert!(e.contains("runs past the end"), "{e}");
        let mut bad = bytes.clone();
        bad[0] = 200;
        assert!(parse_log(&bad).unwrap_err().to_string().contains("unknown entry tag 200 at byte 0"));
    }
}
