//! Where a writer's bytes go, in one place for every writer (the sequential and parallel
//! writers, merge, skim, the CLI and Python): outputs that are never half-written.
//!
//! - **Atomic replacement.** A new file is written under a temporary name beside its destination
//!   (`.NAME.tmp-PID-RANDOM` in the same directory, so that the rename stays within one file
//!   system) and renamed over the destination at [`OutputFile::commit`], after its bytes were
//!   synced; the directory is synced after the rename. An existing file is therefore replaced only
//!   at the commit (as ROOT's `RECREATE`, no "force" needed), and an output that is dropped
//!   without a commit (an error, a panic unwinding) removes its temporary file and leaves the
//!   destination as it was. A destination that is a symbolic link is followed: the file it points
//!   at is replaced, the link stays.
//! - **Checkpointed.** A writer with checkpoints writes at the final path
//!   ([`OutputMode::Checkpointed`]), since its checkpoints are what a crash must leave behind: its
//!   file is created under a temporary name too, renamed over the destination at its first
//!   checkpoint ([`OutputFile::publish`], made at its creation), and written in place from then
//!   on, so that the destination never holds a file without a checkpoint. A file opened for
//!   update is written in place ([`OutputFile::existing`]).
//! - **Non-regular outputs** (`/dev/null`, a FIFO, a character device) are written directly.
//! - **Staged outputs.** An output at a URL (`s3://bucket/key`, `root://host//path`) is staged in
//!   a temporary file in `TMPDIR` and uploaded atomically at the commit: `storage::remote` makes
//!   the staging file and its upload (a `StagedUpload`) and hands both to `OutputFile::staged`;
//!   this file knows no URL (`storage::location::create_output` tells them from paths).
//! - **Interrupts.** Every temporary file is registered (`storage::local::interrupt`) until its
//!   commit, so that a program handling SIGINT/SIGTERM removes it with
//!   [`crate::storage::clean_up_pending_outputs`]; after that, no output commits.
//! - **Same file as an input.** [`refuse_same_file`] refuses an output that is an input under
//!   any name (the same device and inode: hard links, symbolic links, relative paths), before
//!   anything is opened for writing.

use crate::error::{Error, Result};
use crate::storage::local::interrupt::{self, Cleanup, Pending};
use crate::storage::local::upload_window::UploadWindow;
use crate::storage::local::file_io;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a new output file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputMode {
    /// Under a temporary name, renamed over the destination at the commit.
    Atomic,
    /// Under a temporary name until [`OutputFile::publish`] renames it over the destination;
    /// written in place from then on (writers with checkpoints).
    Checkpointed,
}

/// The upload of a staged output (an output at a URL, made by `storage::remote`): its staging
/// file is written as any output is, and uploaded to the destination at the commit instead of
/// renamed over it.
pub(crate) trait StagedUpload: std::fmt::Debug + Send {
    /// The destination (for messages).
    fn url(&self) -> &str;

    /// Where the output's writes are recorded, for an upload that streams while the file is
    /// written (see `storage::local::upload_window`).
    fn window(&self) -> Option<Arc<UploadWindow>>;

    /// Uploads the `len` bytes of the staging file `file` to the destination, atomically (for an
    /// upload that streams, the rest of them).
    fn finish(self: Box<Self>, file: &File, len: u64) -> Result<()>;
}

/// A file being written: its handle, and where it goes at the commit.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// The destination as the caller named it (for messages).
    path: PathBuf,
    /// Atomic mode: (temporary file, destination with symbolic links resolved); a staged output:
    /// (staging file, nothing).
    pending: Option<(PathBuf, PathBuf)>,
    /// Created for a writer with checkpoints ([`OutputMode::Checkpointed`]).
    checkpointed: bool,
    /// The temporary file's registration for an interrupt's clean-up.
    registered: Option<Pending>,
    /// A staged output: the upload of its staging file at the commit (it may stream meanwhile).
    upload: Option<Box<dyn StagedUpload>>,
}

/// Whether `path` names something that exists and is not a regular file (a device, a FIFO, a
/// socket), following symbolic links.
fn is_special(path: &Path) -> Result<bool> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::Invalid(format!("the output {} is a directory", path.display()))),
        Ok(m) => Ok(!m.is_file()),
        Err(_) => Ok(false),
    }
}

/// The file a destination stands for: itself, or the target of the symbolic link(s) it is.
fn resolve_destination(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let to = std::fs::read_link(&p).map_err(|e| Error::io(format!("reading the symbolic link {}", p.display()), e))?;
                p = match p.parent() {
                    Some(dir) if to.is_relative() => dir.join(to),
                    _ => to,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::Invalid(format!("the output {} is a chain of more than 40 symbolic links", path.display())))
}

/// A name for a temporary file beside `dest`: `.NAME.tmp-PID-RANDOM`.
fn temporary_name(dest: &Path, attempt: u32) -> Result<PathBuf> {
    use std::hash::{BuildHasher, Hasher};
    let name = dest.file_name().ok_or_else(|| Error::Invalid(format!("the output {} does not name a file", dest.display())))?;
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(attempt);
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    let tmp = format!(".{}.tmp-{}-{:08x}", name.to_string_lossy(), std::process::id(), h.finish() as u32);
    Ok(dest.with_file_name(tmp))
}

impl OutputFile {
    /// Creates the local output `path` under a temporary name beside it (both modes differ in when
    /// it is renamed: see [`OutputMode`]). A non-regular `path` (`/dev/null`) is opened for
    /// writing directly. `path` is a path, never a URL: `storage::location::create_output` takes
    /// either.
    pub fn create(path: impl AsRef<Path>, mode: OutputMode) -> Result<OutputFile> {
        let path = path.as_ref();
        let checkpointed = mode == OutputMode::Checkpointed;
        if is_special(path)? {
            let file = file_io::open_existing(path, false, 0).map_err(|e| Error::io(format!("opening {} for writing", path.display()), e))?;
            return Ok(OutputFile { file, path: path.to_path_buf(), pending: None, checkpointed, registered: None, upload: None });
        }
        let dest = resolve_destination(path)?;
        let mut attempt = 0;
        loop {
            let tmp = temporary_name(&dest, attempt)?;
            match file_io::create_new(&tmp) {
                Ok(file) => {
                    let registered = Some(interrupt::register(Cleanup::File(tmp.clone())));
                    return Ok(OutputFile { file, path: path.to_path_buf(), pending: Some((tmp, dest)), checkpointed, registered, upload: None });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 16 => attempt += 1,
                Err(e) => return Err(Error::io(format!("creating {} (as the temporary file {})", path.display(), tmp.display()), e)),
            }
        }
    }

    /// An existing file written in place (update mode): nothing is renamed or removed.
    pub fn existing(file: File, path: impl AsRef<Path>) -> OutputFile {
        OutputFile { file, path: path.as_ref().to_path_buf(), pending: None, checkpointed: false, registered: None, upload: None }
    }

    /// A staged output (atomic mode): `file` is the staging file `tmp` (registered for an
    /// interrupt's clean-up as `registered`), uploaded by `upload` at the commit and removed after
    /// it, on failure and when the output is dropped uncommitted; `path` is the destination as the
    /// caller named it.
    pub(crate) fn staged(file: File, path: &Path, tmp: PathBuf, registered: Pending, upload: Box<dyn StagedUpload>) -> OutputFile {
        OutputFile { file, path: path.to_path_buf(), pending: Some((tmp, PathBuf::new())), checkpointed: false, registered: Some(registered), upload: Some(upload) }
    }

    /// Whether it was created for a writer with checkpoints ([`OutputMode::Checkpointed`]): its
    /// first checkpoint publishes it.
    pub fn is_checkpointed(&self) -> bool {
        self.checkpointed
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Where the writes of a streaming upload are recorded (see `storage::local::upload_window`).
    pub(crate) fn window(&self) -> Option<Arc<UploadWindow>> {
        self.upload.as_ref().and_then(|u| u.window())
    }

    /// Records that `len` bytes at `offset` are written (or skipped on purpose), for a streaming
    /// upload.
    pub(crate) fn record(&self, offset: u64, len: u64) {
        if let Some(w) = self.upload.as_ref().and_then(|u| u.window()) {
            w.record(offset, len);
        }
    }

    /// The destination as the caller named it.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file being written, in atomic mode (until the commit).
    pub fn temporary_path(&self) -> Option<&Path> {
        self.pending.as_ref().map(|(tmp, _)| tmp.as_path())
    }

    /// Syncs the file's data (`fdatasync`); devices that cannot be synced (`/dev/null`) are fine.
    pub fn sync_data(&self) -> Result<()> {
        ignore_unsyncable(file_io::sync_data(&self.file)).map_err(|e| Error::io(format!("syncing {}", self.shown()), e))
    }

    /// Syncs the file (`fsync`), then renames a temporary file over the destination
    /// ([`OutputFile::publish`]); a staged output's staging file is uploaded instead (not synced:
    /// it is removed after the upload).
    pub fn commit(mut self) -> Result<()> {
        if self.upload.is_none() {
            ignore_unsyncable(file_io::sync_all(&self.file)).map_err(|e| Error::io(format!("syncing {}", self.shown()), e))?;
        }
        self.publish()
    }

    /// Uploads the staging file of a staged output, then removes it.
    fn finish_upload(&mut self, upload: Box<dyn StagedUpload>) -> Result<()> {
        let Some((tmp, _)) = self.pending.take() else { return Ok(()) };
        let r = (|| {
            let len = self.file.metadata().map_err(|e| Error::io(format!("the size of {}", tmp.display()), e))?.len();
            if interrupt::interrupted() {
                return Err(Error::Invalid(format!("{}: not uploaded: the process is interrupted", upload.url())));
            }
            upload.finish(&self.file, len)
        })();
        let _ = file_io::remove(&tmp);
        self.registered = None;
        r
    }

    /// Renames the temporary file (if any) over the destination and syncs the directory, so that
    /// the file is there after a crash; the handle stays open and writes go on in place. The
    /// caller has synced the file's content before.
    pub fn publish(&mut self) -> Result<()> {
        if let Some(upload) = self.upload.take() {
            return self.finish_upload(upload);
        }
        if self.pending.is_some()
            && let Some(reg) = self.registered.take()
            && reg.release_for_commit().is_err()
        {
            return Err(Error::Invalid(format!("{}: not written: the process is interrupted", self.path.display())));
        }
        let Some((tmp, dest)) = self.pending.take() else { return Ok(()) };
        if let Err(e) = file_io::rename(&tmp, &dest) {
            let _ = file_io::remove(&tmp);
            return Err(Error::io(format!("renaming {} to {}", tmp.display(), dest.display()), e));
        }
        file_io::sync_dir(file_io::parent_dir(&dest));
        Ok(())
    }

    fn shown(&self) -> String {
        if let (Some(upload), Some((tmp, _))) = (&self.upload, &self.pending) {
            return format!("{} (local staging file of {})", tmp.display(), upload.url());
        }
        match &self.pending {
            Some((tmp, _)) => format!("{} (temporary file of {})", tmp.display(), self.path.display()),
            None => self.path.display().to_string(),
        }
    }
}

impl Drop for OutputFile {
    /// An output dropped without a commit removes its temporary file (the destination stays as it
    /// was).
    fn drop(&mut self) {
        if let Some((tmp, _)) = self.pending.take() {
            let _ = file_io::remove(&tmp);
        }
    }
}

/// Character devices such as `/dev/null` cannot be synced; nothing is lost.
fn ignore_unsyncable(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Ok(()),
        r => r,
    }
}

/// Refuses an `output` that is one of the `inputs` under any name: the same device and inode
/// (hard links, symbolic links, relative paths), or the same path. `what` starts the message
/// ("merge", "skim"). Called before anything is opened for writing.
///
/// ```
/// use rntuple::storage::local::output::refuse_same_file;
/// let dir = std::env::temp_dir();
/// let a = dir.join("rntuple-doc-same-file.txt");
/// std::fs::write(&a, b"input")?;
/// let link = dir.join("rntuple-doc-same-file-link.txt");
/// let _ = std::fs::remove_file(&link);
/// std::fs::hard_link(&a, &link)?;
/// let e = refuse_same_file(&link, &[a.as_path()], "merge").unwrap_err().to_string();
/// assert!(e.contains("is also an input") && e.contains("rntuple-doc-same-file.txt"), "{e}");
/// assert!(refuse_same_file(&dir.join("rntuple-doc-other.txt"), &[a.as_path()], "merge").is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn refuse_same_file(output: &Path, inputs: &[&Path], what: &str) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let out = std::fs::metadata(output).ok().filter(|m| m.is_file()).map(|m| (m.dev(), m.ino()));
    for input in inputs {
        let same_path = *input == output;
        let same_inode = out.is_some() && std::fs::metadata(input).ok().map(|m| (m.dev(), m.ino())) == out;
        if same_path || same_inode {
            let how = if same_path { "the same path".to_string() } else { "the same file: same device and inode".to_string() };
            let noun = if inputs.len() == 1 && what != "merge" { "the input" } else { "an input" };
            return Err(Error::Invalid(format!(
                "{what}: the output {} is also {noun}, {} ({how}); writing it would destroy the input",
                output.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("rntuple-output-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn entries(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn atomic_output_replaces_only_at_commit() {
        let d = dir("atomic");
        let p = d.join("out.root");
        std::fs::write(&p, b"old").unwrap();
        let mut o = OutputFile::create(&p, OutputMode::Atomic).unwrap();
        let tmp = o.temporary_path().unwrap().to_path_buf();
        assert!(tmp.file_name().unwrap().to_string_lossy().starts_with(".out.root.tmp-"), "{}", tmp.display());
        assert_eq!(tmp.parent(), p.parent());
        o.file.write_all(b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        o.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(entries(&d), ["out.root"]);
    }

    #[test]
    fn dropped_output_removes_its_temporary_file() {
        let d = dir("drop");
        let p = d.join("out.root");
        std::fs::write(&p, b"old").unwrap();
        {
            let mut o = OutputFile::create(&p, OutputMode::Atomic).unwrap();
            o.file.write_all(b"half").unwrap();
        }
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(entries(&d), ["out.root"]);
        // A panic unwinding drops it too.
        let p2 = p.clone();
        let r = std::panic::catch_unwind(move || {
            let _o = OutputFile::create(&p2, OutputMode::Atomic).unwrap();
            panic!("boom");
        });
        assert!(r.is_err());
        assert_eq!(entries(&d), ["out.root"]);
    }

    #[test]
    fn symbolic_link_destination_keeps_the_link() {
        let d = dir("symlink");
        let target = d.join("target.root");
        std::fs::write(&target, b"old").unwrap();
        let link = d.join("link.root");
        std::os::unix::fs::symlink("target.root", &link).unwrap();
        let mut o = OutputFile::create(&link, OutputMode::Atomic).unwrap();
        o.file.write_all(b"new").unwrap();
        o.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    #[test]
    fn checkpointed_outputs_appear_at_publish_and_special_outputs_are_written_directly() {
        let d = dir("inplace");
        let p = d.join("out.root");
        std::fs::write(&p, b"old").unwrap();
        let mut o = OutputFile::create(&p, OutputMode::Checkpointed).unwrap();
        o.file.write_all(b"first").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        o.publish().unwrap();
        assert!(o.temporary_path().is_none());
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        o.file.write_all(b"+more").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"first+more");
        o.commit().unwrap();
        assert_eq!(entries(&d), ["out.root"]);
        let o = OutputFile::create("/dev/null", OutputMode::Atomic).unwrap();
        assert!(o.temporary_path().is_none());
        o.sync_data().unwrap();
        o.commit().unwrap();
        assert!(OutputFile::create(&d, OutputMode::Atomic).unwrap_err().to_string().contains("is a directory"));
    }

    #[test]
    fn same_file_under_other_names_is_refused() {
        let d = dir("same");
        let a = d.join("a.root");
        std::fs::write(&a, b"input").unwrap();
        let hard = d.join("hard.root");
        std::fs::hard_link(&a, &hard).unwrap();
        let soft = d.join("soft.root");
        std::os::unix::fs::symlink(&a, &soft).unwrap();
        let dotted = d.join(".").join("a.root");
        for out in [&hard, &soft, &dotted, &a] {
            let e = refuse_same_file(out, &[d.join("other.root").as_path(), a.as_path()], "merge").unwrap_err().to_string();
            assert!(e.contains("also an input") && e.contains(&a.display().to_string()) && e.contains(&out.display().to_string()), "{e}");
        }
        assert!(refuse_same_file(&d.join("new.root"), &[a.as_path()], "skim").is_ok());
        assert_eq!(std::fs::read(&a).unwrap(), b"input");
    }
}
