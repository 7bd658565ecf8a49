//! Opening a local file that a writer may still be extending (`checkpoint_clusters`): the reader
//! takes one checkpoint, whole, and tells a file that has none yet from a missing one.
//!
//! A checkpointing writer only appends, then switches checkpoints with ONE positioned write of the
//! file header and top directory record (`RootFileWriter::checkpoint` in `storage::container::tfile_write`):
//! every record a header points at (keys list, anchors, envelopes, pages) is in the file before
//! that header is, and never changes after. A reader's snapshot is therefore consistent when the
//! header did not change while the reader walked the keys, and when the file's length the reader
//! took (its byte source checks every read against it) covers the header's `fEND`. [`open_local`]
//! checks both and opens again when either failed (the writer switched checkpoints meanwhile); an
//! error while the file is changing is retried the same way, an error of a file at rest is
//! reported at once.
//!
//! Before its first checkpoint, a new file lives under a temporary name beside its destination
//! (`.NAME.tmp-PID-RANDOM`, `storage::local::output`): a missing path with such a file beside it, of a
//! process still running, is "not yet a complete RNTuple", not "no such file".

use crate::error::{Error, Result};
use crate::storage::container::tfile::RootFile;
use crate::storage::local::source::{FileSource, ReadAt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes at the start of the file compared before and after a walk: the file header and the top
/// directory record (at most `100 + fNbytesName + 60` bytes for any name ROOT writes), with room.
const HEADER_PROBE: u64 = 4096;

/// How long an open retries while the file keeps changing under it.
const RETRY_FOR: Duration = Duration::from_secs(5);

/// Opens the local file at `p` as one consistent checkpoint (see the module documentation).
pub(crate) fn open_local(p: &Path) -> Result<RootFile> {
    let deadline = Instant::now() + RETRY_FOR;
    let mut pause = Duration::from_millis(1);
    loop {
        let src: Arc<dyn ReadAt> = match FileSource::open(p) {
            Ok(s) => Arc::new(s),
            Err(e) => return Err(being_written(p).map(|why| Error::io(why, std::io::Error::from(std::io::ErrorKind::NotFound))).unwrap_or(e)),
        };
        let before = probe(&*src);
        let opened = RootFile::open(src.clone());
        let after = probe(&*src);
        let stable = before.is_some() && before == after;
        let covered = before.as_deref().and_then(file_end).is_some_and(|end| end <= src.len());
        let grown = std::fs::metadata(p).map(|m| m.len() != src.len()).unwrap_or(false);
        match opened {
            Ok(root) if stable && covered => return Ok(root),
            // A file at rest whose header names an end beyond its length: damaged, not being written.
            Ok(root) if stable && !grown => return Ok(root),
            Err(e) if (stable && !grown) || Instant::now() >= deadline => return Err(e),
            Ok(root) if Instant::now() >= deadline => return Ok(root),
            _ => {}
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// The first bytes of the file (see [`HEADER_PROBE`]), read now, or `None` when they cannot be read.
fn probe(src: &dyn ReadAt) -> Option<Vec<u8>> {
    let n = src.len().min(HEADER_PROBE);
    let mut buf = vec![0u8; n as usize];
    src.read_exact_at(0, &mut buf).ok()?;
    Some(buf)
}

/// The file header's `fEND` (32-bit below version 1,000,000, else 64-bit).
fn file_end(h: &[u8]) -> Option<u64> {
    if h.get(..4)? != b"root" {
        return None;
    }
    let version = u32::from_be_bytes(h.get(4..8)?.try_into().ok()?);
    if version >= 1_000_000 {
        Some(u64::from_be_bytes(h.get(12..20)?.try_into().ok()?))
    } else {
        Some(u64::from(u32::from_be_bytes(h.get(12..16)?.try_into().ok()?)))
    }
}

/// When `p` does not exist but a writer's temporary file for it lies beside it: what to say
/// instead of "no such file" (a running writer: no checkpoint yet; a writer gone: a file left by
/// a writer killed before its first checkpoint).
pub(crate) fn being_written(p: &Path) -> Option<String> {
    if p.exists() {
        return None;
    }
    let name = p.file_name()?.to_string_lossy().into_owned();
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let prefix = format!(".{name}.tmp-");
    let mut found: Vec<(String, Option<u32>)> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let f = e.file_name().to_string_lossy().into_owned();
            let rest = f.strip_prefix(&prefix)?;
            let pid = rest.split('-').next().and_then(|s| s.parse::<u32>().ok());
            Some((f, pid))
        })
        .collect();
    found.sort();
    let alive = |pid: Option<u32>| pid.is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
    if let Some((tmp, pid)) = found.iter().find(|(_, pid)| alive(*pid)) {
        let pid = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
        return Some(format!(
            "{}: not yet a complete RNTuple (being written: no checkpoint yet; the writer{pid} writes it as {tmp} until its first checkpoint or commit)",
            p.display()
        ));
    }
    let (tmp, pid) = found.first()?;
    let pid = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
    Some(format!(
        "{}: no such file; a temporary file {tmp} of a writer{pid} that is no longer running lies beside it (a writer stopped before its first checkpoint or commit leaves nothing readable)",
        p.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_with_a_running_writers_temporary_file_is_being_written() {
        let dir = std::env::temp_dir().join(format!("rntuple-live-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join("out.root");
        assert_eq!(being_written(&dest), None, "nothing beside it: the ordinary not-found error");
        let me = std::process::id();
        std::fs::write(dir.join(format!(".out.root.tmp-{me}-0000abcd")), b"").unwrap();
        let why = being_written(&dest).unwrap();
        assert!(why.contains("not yet a complete RNTuple (being written: no checkpoint yet") && why.contains(&format!("pid {me}")), "{why}");
        let e = open_local(&dest).err().unwrap().to_string();
        assert!(e.contains("not yet a complete RNTuple"), "{e}");
        std::fs::remove_file(dir.join(format!(".out.root.tmp-{me}-0000abcd"))).unwrap();
        // A writer that is gone (no such process): said so.
        std::fs::write(dir.join(".out.root.tmp-4294967290-0000abcd"), b"").unwrap();
        let why = being_written(&dest).unwrap();
        assert!(why.contains("no longer running") && why.contains("pid 4294967290"), "{why}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_end_of_small_and_large_headers() {
        let mut h = b"root".to_vec();
        h.extend_from_slice(&63_400u32.to_be_bytes());
        h.extend_from_slice(&100u32.to_be_bytes());
        h.extend_from_slice(&12_345u32.to_be_bytes());
        assert_eq!(file_end(&h), Some(12_345));
        let mut big = b"root".to_vec();
        big.extend_from_slice(&1_063_400u32.to_be_bytes());
        big.extend_from_slice(&100u32.to_be_bytes());
        big.extend_from_slice(&(5u64 << 32).to_be_bytes());
        assert_eq!(file_end(&big), Some(5 << 32));
        assert_eq!(file_end(b"junk and more bytes"), None);
    }
}
