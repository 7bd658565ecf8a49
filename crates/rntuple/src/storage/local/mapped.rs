//! A local file read through a memory map: the reader decompresses pages straight out of the
//! kernel's page cache instead of copying them into its own buffers first (`pread`). Opt-in,
//! for files nobody changes while they are read (see [`MappedSource`]).
//!
//! ```
//! use std::sync::Arc;
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-mapped-{}.root", std::process::id()));
//! # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
//! # w.commit()?;
//! let src = Arc::new(rntuple::storage::local::mapped::MappedSource::open(&path)?);
//! let f = rntuple::RNTupleFile::from_source(src)?;
//! assert_eq!(f.reader("Events")?.num_entries(), 3);
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::source::{ReadAt, SourceCounters};
use crate::error::{Error, Result};
use std::fs::File;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A local file mapped into memory (`mmap`, read-only): [`ReadAt::view`] lends its bytes in
/// place, so a read skips the copy out of the page cache that [`FileSource`](super::source::FileSource)
/// makes (measured on a warm 165 MB file: ~30 ms of a 170 ms bulk read, `bench/RESULTS.md`).
///
/// **The file must not shrink or change while it is mapped.** Bytes past a new end raise
/// `SIGBUS` when touched, and the reader assumes the bytes it was lent stay as they are. Use it
/// for files that are complete and left alone (the usual case for analysis inputs); the default
/// source (`pread`) is immune to both.
///
/// ```
/// use std::sync::Arc;
/// use rntuple::storage::local::mapped::MappedSource;
/// use rntuple::storage::ReadAt;
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-MappedSource-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let src = Arc::new(MappedSource::open(&path)?);
/// assert_eq!(src.view(0, 4), Some(&b"root"[..])); // lent in place
/// assert_eq!(src.view(src.len() - 1, 2), None); // past the end
/// let r = rntuple::RNTupleFile::from_source(src)?.reader("Events")?;
/// assert_eq!(r.num_entries(), 3);
/// assert!(MappedSource::open(std::env::temp_dir()).is_err()); // a directory is refused
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct MappedSource {
    /// Start of the mapping of `len` bytes (null when the file is empty: nothing is mapped).
    ptr: *const u8,
    len: usize,
    /// Kept open for the mapping's lifetime (and for `advise`).
    file: File,
    path: String,
    counters: SourceCounters,
}

// SAFETY: the mapping is read-only and owned by this value (unmapped only in `drop`); shared
// references only read it, which is sound from any thread.
unsafe impl Send for MappedSource {}
// SAFETY: as above: nothing mutates the mapping through `&self`.
unsafe impl Sync for MappedSource {}

impl MappedSource {
    /// Maps the regular file at `path` read-only (a directory, FIFO or device is refused).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let file = File::open(p).map_err(|e| Error::io(format!("opening {}", p.display()), e))?;
        let meta = file.metadata().map_err(|e| Error::io(format!("stat of {}", p.display()), e))?;
        if !meta.is_file() {
            return Err(Error::Invalid(format!("{}: not a regular file; only regular files are mapped", p.display())));
        }
        let len = usize::try_from(meta.len()).map_err(|_| Error::Invalid(format!("{}: larger than the address space", p.display())))?;
        let ptr = if len == 0 {
            std::ptr::null()
        } else {
            // SAFETY: a fresh read-only private mapping of a descriptor we own, of the file's
            // length; the kernel picks the address. The result is checked against MAP_FAILED.
            let m = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_PRIVATE, file.as_raw_fd(), 0) };
            if m == libc::MAP_FAILED {
                return Err(Error::io(format!("mapping {}", p.display()), std::io::Error::last_os_error()));
            }
            // Huge pages where the page cache holds the file in 2 MiB folios (read in by the
            // kernel's read-ahead or large writes; ext4 and XFS keep large folios): one TLB entry
            // per 2 MiB instead of per 4 KiB as zstd streams through the pages (warm bulk read of
            // 165 MB: 77-79 -> 73-74 ms, bench/RESULTS.md). Advice only: refused or not, the
            // mapping reads the same bytes.
            // SAFETY: advice on the mapping just made, of its own length.
            unsafe { libc::madvise(m, len, libc::MADV_HUGEPAGE) };
            m as *const u8
        };
        Ok(MappedSource { ptr, len, file, path: p.display().to_string(), counters: SourceCounters::default() })
    }

    /// The whole mapping as a slice.
    fn bytes(&self) -> &[u8] {
        if self.ptr.is_null() {
            return &[];
        }
        // SAFETY: `ptr` maps `len` readable bytes until `drop`, which `&self` outlives; the
        // struct's contract (the file neither shrinks nor changes while mapped) keeps them valid
        // and unchanged.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for MappedSource {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: unmaps exactly the mapping `open` made; no slice of it outlives `self`.
            unsafe {
                libc::munmap(self.ptr as *mut libc::c_void, self.len);
            }
        }
    }
}

impl ReadAt for MappedSource {
    fn len(&self) -> u64 {
        self.len as u64
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let v = self.view(offset, buf.len() as u64).ok_or_else(|| {
            Error::corrupt(format!("{} bytes at offset {offset} extend beyond the end of {} ({} bytes)", buf.len(), self.path, self.len), offset)
        })?;
        self.counters.add(buf.len() as u64);
        buf.copy_from_slice(v);
        Ok(())
    }
    fn view(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.bytes().get(start..end)
    }
    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
    fn advise(&self, ranges: &[Range<u64>]) {
        super::source::advise_file(&self.file, ranges);
    }
}

#[cfg(test)]
mod tests {
    use super::MappedSource;
    use crate::storage::local::source::ReadAt;

    #[test]
    fn reads_and_views_agree_with_the_file_and_refuse_the_outside() {
        let path = std::env::temp_dir().join(format!("rntuple-mapped-{}.bin", std::process::id()));
        let bytes: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let m = MappedSource::open(&path).unwrap();
        assert_eq!(m.len(), 10_000);
        assert_eq!(m.view(100, 50), Some(&bytes[100..150]));
        let mut buf = [0u8; 9];
        m.read_exact_at(9_991, &mut buf).unwrap();
        assert_eq!(buf, bytes[9_991..]);
        let e = m.read_exact_at(9_992, &mut buf).unwrap_err().to_string();
        assert!(e.contains("offset 9992") && e.contains("10000 bytes"), "{e}");
        assert_eq!(m.view(u64::MAX, 2), None);
        assert_eq!(m.counters().map(|c| c.get()), Some((1, 9)));
        std::fs::write(&path, b"").unwrap();
        let empty = MappedSource::open(&path).unwrap();
        assert_eq!((empty.len(), empty.view(0, 0)), (0, Some(&[][..])));
        assert_eq!(empty.view(0, 1), None);
        std::fs::remove_file(&path).unwrap();
    }
}
