//! What a POSIX file system may keep of a file after a power loss, replayed from a record.
//!
//! Each file has its durable bytes (as of its last `fsync`/`fdatasync`) and the changes made
//! since (writes, size changes, allocations, holes), any subset of which a crash may keep, in
//! any order (a change kept is kept as a whole unless it is torn: see `states`). Names
//! (creations, renames, removals) are durable once their directory is synced; before that a
//! crash keeps a prefix of them (a journaling file system commits them in order).

use rntuple::storage::local::io_record::{Event, FileId, Op};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// A change to a file's bytes not yet synced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Bytes written at an offset.
    Write { offset: u64, bytes: Vec<u8> },
    /// The size set.
    SetLen(u64),
    /// A range allocated (the size grows to cover it).
    Allocate { offset: u64, len: u64 },
    /// A range made a hole (zeros; the size kept).
    PunchHole { offset: u64, len: u64 },
}

impl Change {
    /// Applies the change to `b`.
    pub fn apply(&self, b: &mut Vec<u8>) {
        match self {
            Change::Write { offset, bytes } => write_into(b, *offset, bytes),
            Change::SetLen(n) => b.resize(*n as usize, 0),
            Change::Allocate { offset, len } => {
                let end = (offset + len) as usize;
                if end > b.len() {
                    b.resize(end, 0);
                }
            }
            Change::PunchHole { offset, len } => {
                let (a, z) = ((*offset as usize).min(b.len()), ((offset + len) as usize).min(b.len()));
                b[a..z].fill(0);
            }
        }
    }
}

/// Writes `bytes` at `offset` of `b`, growing it with zeros as needed.
pub fn write_into(b: &mut Vec<u8>, offset: u64, bytes: &[u8]) {
    let (a, z) = (offset as usize, offset as usize + bytes.len());
    if z > b.len() {
        b.resize(z, 0);
    }
    b[a..z].copy_from_slice(bytes);
}

/// A file's bytes: durable, and the changes since.
#[derive(Debug, Clone, Default)]
pub struct FileState {
    /// As of the last sync.
    pub durable: Vec<u8>,
    /// With every change applied (what a process reads).
    pub cache: Vec<u8>,
    /// The changes since the last sync, in order.
    pub pending: Vec<Change>,
}

/// A change of names.
#[derive(Debug, Clone)]
pub enum NameOp {
    Link { path: PathBuf, file: FileId },
    Rename { from: PathBuf, to: PathBuf },
    Unlink { path: PathBuf },
}

fn apply_name(names: &mut BTreeMap<PathBuf, FileId>, op: &NameOp) {
    match op {
        NameOp::Link { path, file } => {
            names.insert(path.clone(), *file);
        }
        NameOp::Rename { from, to } => {
            if let Some(f) = names.remove(from) {
                names.insert(to.clone(), f);
            }
        }
        NameOp::Unlink { path } => {
            names.remove(path);
        }
    }
}

fn dir_of(op: &NameOp) -> Option<&Path> {
    match op {
        NameOp::Link { path, .. } | NameOp::Unlink { path } => path.parent(),
        NameOp::Rename { to, .. } => to.parent(),
    }
}

/// The file system as the record has made it so far.
#[derive(Debug, Clone, Default)]
pub struct Fs {
    pub files: HashMap<FileId, FileState>,
    pub names_durable: BTreeMap<PathBuf, FileId>,
    pub names_cache: BTreeMap<PathBuf, FileId>,
    /// Name changes not yet durable, in order.
    pub names_pending: Vec<NameOp>,
    /// Files that existed before the record (by path): their bytes then, durable.
    initial: HashMap<PathBuf, Vec<u8>>,
    next_synthetic: u64,
}

/// Files that existed before the record are named by a synthetic identity until the record
/// opens them.
const SYNTHETIC_DEV: u64 = u64::MAX;

impl Fs {
    /// A file system holding the files `initial` (path, bytes; durable) before the record.
    pub fn new(initial: &[(PathBuf, Vec<u8>)]) -> Fs {
        let mut fs = Fs::default();
        for (p, b) in initial {
            let id = FileId { dev: SYNTHETIC_DEV, ino: fs.next_synthetic };
            fs.next_synthetic += 1;
            fs.files.insert(id, FileState { durable: b.clone(), cache: b.clone(), pending: Vec::new() });
            fs.names_durable.insert(p.clone(), id);
            fs.names_cache.insert(p.clone(), id);
            fs.initial.insert(p.clone(), b.clone());
        }
        fs
    }

    fn file(&mut self, id: FileId, at: usize) -> Result<&mut FileState, String> {
        self.files
            .get_mut(&id)
            .ok_or_else(|| format!("event {at}: a change to a file the record never created or opened ({}:{}): the record is incomplete", id.dev, id.ino))
    }

    /// Applies event `at` of the record.
    pub fn apply(&mut self, at: usize, e: &Event) -> Result<(), String> {
        match &e.op {
            Op::Create { path, file } => {
                self.files.insert(*file, FileState::default());
                let op = NameOp::Link { path: path.clone(), file: *file };
                apply_name(&mut self.names_cache, &op);
                self.names_pending.push(op);
            }
            Op::Open { path, file } => {
                if !self.files.contains_key(file) {
                    match self.names_cache.get(path).copied() {
                        Some(old) if old.dev == SYNTHETIC_DEV => {
                            let st = self.files.remove(&old).unwrap_or_default();
                            self.files.insert(*file, st);
                            for names in [&mut self.names_durable, &mut self.names_cache] {
                                for v in names.values_mut() {
                                    if *v == old {
                                        *v = *file;
                                    }
                                }
                            }
                        }
                        _ => {
                            // Opened by a name the record does not know: bytes from before it.
                            let b = self.initial.get(path).cloned().unwrap_or_default();
                            self.files.insert(*file, FileState { durable: b.clone(), cache: b, pending: Vec::new() });
                            self.names_durable.entry(path.clone()).or_insert(*file);
                            self.names_cache.entry(path.clone()).or_insert(*file);
                        }
                    }
                }
            }
            Op::Write { file, offset, bytes } => self.change(at, *file, Change::Write { offset: *offset, bytes: bytes.clone() })?,
            Op::SetLen { file, len } => self.change(at, *file, Change::SetLen(*len))?,
            Op::Allocate { file, offset, len } => self.change(at, *file, Change::Allocate { offset: *offset, len: *len })?,
            Op::PunchHole { file, offset, len } => self.change(at, *file, Change::PunchHole { offset: *offset, len: *len })?,
            Op::Sync { file } => {
                let f = self.file(*file, at)?;
                f.durable = f.cache.clone();
                f.pending.clear();
            }
            Op::Rename { from, to } => {
                let op = NameOp::Rename { from: from.clone(), to: to.clone() };
                apply_name(&mut self.names_cache, &op);
                self.names_pending.push(op);
            }
            Op::Remove { path } => {
                let op = NameOp::Unlink { path: path.clone() };
                apply_name(&mut self.names_cache, &op);
                self.names_pending.push(op);
            }
            Op::SyncDir { dir } => {
                let (now, later): (Vec<NameOp>, Vec<NameOp>) = self.names_pending.drain(..).partition(|op| dir_of(op) == Some(dir.as_path()));
                for op in &now {
                    apply_name(&mut self.names_durable, op);
                }
                self.names_pending = later;
            }
            Op::Durable { .. } => {}
        }
        Ok(())
    }

    fn change(&mut self, at: usize, file: FileId, c: Change) -> Result<(), String> {
        let f = self.file(file, at)?;
        c.apply(&mut f.cache);
        f.pending.push(c);
        Ok(())
    }

    /// The file at `path` as a process sees it now (every change kept).
    pub fn current(&self, path: &Path) -> Option<&[u8]> {
        self.names_cache.get(path).and_then(|id| self.files.get(id)).map(|f| f.cache.as_slice())
    }

    /// Which file `path` names after a crash that kept the first `kept` pending name changes.
    pub fn name_after_crash(&self, path: &Path, kept: usize) -> Option<FileId> {
        let mut names = self.names_durable.clone();
        for op in self.names_pending.iter().take(kept) {
            apply_name(&mut names, op);
        }
        names.get(path).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(op: Op) -> Event {
        Event { time_ns: 0, pid: 1, op }
    }

    #[test]
    fn names_are_durable_after_their_directory_sync_and_bytes_after_their_file_sync() {
        let (tmp, dest) = (PathBuf::from("/d/.out.tmp"), PathBuf::from("/d/out"));
        let f = FileId { dev: 1, ino: 7 };
        let mut fs = Fs::new(&[(dest.clone(), b"old".to_vec())]);
        let log = [
            Op::Create { path: tmp.clone(), file: f },
            Op::Write { file: f, offset: 0, bytes: b"new!".to_vec() },
            Op::Sync { file: f },
            Op::Write { file: f, offset: 4, bytes: b"+".to_vec() },
            Op::Rename { from: tmp.clone(), to: dest.clone() },
        ];
        for (i, op) in log.into_iter().enumerate() {
            fs.apply(i, &ev(op)).unwrap();
        }
        // Before the directory sync: the old file or, with both name changes kept, the new one.
        assert_eq!(fs.names_pending.len(), 2);
        let old = fs.name_after_crash(&dest, 0).and_then(|id| fs.files.get(&id)).unwrap();
        assert_eq!(old.durable, b"old");
        let new = fs.name_after_crash(&dest, 2).and_then(|id| fs.files.get(&id)).unwrap();
        assert_eq!((new.durable.as_slice(), new.pending.len()), (&b"new!"[..], 1));
        assert_eq!(fs.current(&dest), Some(&b"new!+"[..]));
        fs.apply(5, &ev(Op::SyncDir { dir: "/d".into() })).unwrap();
        assert!(fs.names_pending.is_empty());
        assert_eq!(fs.name_after_crash(&dest, 0), Some(f));
        // A change to a file the record never opened is refused: the record is incomplete.
        let e = fs.apply(6, &ev(Op::Write { file: FileId { dev: 1, ino: 8 }, offset: 0, bytes: vec![1] })).unwrap_err();
        assert!(e.contains("never created or opened"), "{e}");
    }
}
