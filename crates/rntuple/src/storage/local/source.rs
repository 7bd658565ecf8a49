//! Byte sources: where the reader gets its bytes from (a local file or memory; HTTP and S3 in
//! `remote`; a path or URL is dispatched to one of them by `location`), and what they count.
//!
//! ```
//! use std::sync::Arc;
//! use rntuple::storage::{FileSource, MemSource, ReadAt};
//! # use rntuple::write::{Writer, WriteOptions};
//! # use rntuple::Value;
//! # let path = std::env::temp_dir().join(format!("rntuple-doc-source-{}.root", std::process::id()));
//! # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
//! # w.commit()?;
//! // The same file read from disk and from memory.
//! let from_disk: Arc<dyn ReadAt> = Arc::new(FileSource::open(&path)?);
//! let in_memory: Arc<dyn ReadAt> = Arc::new(MemSource(Arc::new(std::fs::read(&path)?)));
//! for src in [from_disk, in_memory] {
//!     assert_eq!(rntuple::RNTupleFile::from_source(src)?.reader("Events")?.num_entries(), 3);
//! }
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::error::{Error, Result};
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The requests a source served and the bytes they returned (a pread or an HTTP range request
/// is one request).
///
/// ```
/// use rntuple::storage::SourceCounters;
/// let c = SourceCounters::default();
/// c.add(100);
/// c.add(28);
/// assert_eq!(c.get(), (2, 128));
/// ```
#[derive(Debug, Default)]
pub struct SourceCounters {
    /// Requests issued.
    pub requests: AtomicU64,
    /// Bytes returned by them.
    pub bytes: AtomicU64,
}

impl SourceCounters {
    /// Counts one request that returned `bytes` bytes.
    pub fn add(&self, bytes: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }
    /// `(requests, bytes)` so far.
    pub fn get(&self) -> (u64, u64) {
        (self.requests.load(Ordering::Relaxed), self.bytes.load(Ordering::Relaxed))
    }
}

/// Hands each range read by [`ReadAt::read_ranges`] to the caller: its index and its bytes.
///
/// ```
/// use std::sync::Arc;
/// use rntuple::storage::{MemSource, RangeSink, ReadAt};
/// let m = MemSource(Arc::new((0u8..100).collect()));
/// let mut got = Vec::new();
/// let sink: &mut RangeSink<'_> = &mut |i, bytes| {
///     got.push((i, bytes));
///     Ok(())
/// };
/// m.read_ranges(&[10..12, 50..51], sink)?;
/// assert_eq!(got, [(0, vec![10, 11]), (1, vec![50])]);
/// # Ok::<(), rntuple::Error>(())
/// ```
pub type RangeSink<'a> = dyn FnMut(usize, Vec<u8>) -> Result<()> + 'a;

/// Random-access read of a byte range. Implementations check the range against the source's
/// length before allocating, so a lying size in a file cannot drive a large allocation.
///
/// A source implements [`len`](ReadAt::len) and [`read_exact_at`](ReadAt::read_exact_at); the
/// other methods have defaults.
///
/// ```
/// use std::sync::Arc;
/// use rntuple::storage::ReadAt;
/// struct Bytes(Vec<u8>);
/// impl ReadAt for Bytes {
///     fn len(&self) -> u64 {
///         self.0.len() as u64
///     }
///     fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
///         let range = usize::try_from(offset).ok().and_then(|s| Some(s..s.checked_add(buf.len())?));
///         let bytes = range.and_then(|r| self.0.get(r)).ok_or_else(|| rntuple::Error::corrupt("read beyond the end", offset))?;
///         buf.copy_from_slice(bytes);
///         Ok(())
///     }
/// }
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-ReadAt-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let src = Arc::new(Bytes(std::fs::read(&path)?));
/// assert_eq!(rntuple::RNTupleFile::from_source(src.clone())?.reader("Events")?.num_entries(), 3);
/// assert!(src.read_vec(src.len() - 1, 2, "tail").is_err());
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ReadAt: Send + Sync {
    /// Total length of the source in bytes.
    fn len(&self) -> u64;
    /// Whether the source is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Reads exactly `buf.len()` bytes at `offset` into `buf`.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()>;

    /// The bytes `[offset, offset + len)` in place, without copying, when the source holds them
    /// in memory; `None` when they must be read with
    /// [`read_exact_at`](ReadAt::read_exact_at) or lie beyond the end.
    fn view(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let _ = (offset, len);
        None
    }

    /// Reads `len` bytes at `offset`; `what` names the structure for the error message.
    fn read_vec(&self, offset: u64, len: u64, what: &str) -> Result<Vec<u8>> {
        let end = offset.checked_add(len).ok_or_else(|| Error::corrupt(format!("{what}: range overflows"), offset))?;
        if end > self.len() {
            return Err(Error::corrupt(format!("{what}: {len} bytes at offset {offset} extend beyond the end of the file ({} bytes)", self.len()), offset));
        }
        let mut v = vec![0u8; len as usize];
        self.read_exact_at(offset, &mut v)?;
        Ok(v)
    }

    /// Reads several ranges (each within the source, as planned by the reader), handing each to
    /// `sink` with its index as it arrives, in any order. Sources with a latency per request
    /// (HTTP, S3) keep several requests in flight; the default reads them one after the other.
    fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> Result<()> {
        for (i, r) in ranges.iter().enumerate() {
            let v = self.read_vec(r.start, r.end.saturating_sub(r.start), "read-ahead")?;
            sink(i, v)?;
        }
        Ok(())
    }

    /// Whether each request has a latency worth hiding (a network source, a file object): the
    /// reader then loads the coming clusters' pages into memory ahead of decoding. For other
    /// sources it only announces them with [`advise`](ReadAt::advise).
    fn is_remote(&self) -> bool {
        false
    }

    /// Announces ranges that will be read soon, so that the source can start fetching them (a
    /// local file asks the kernel to read them into the page cache in the background). Only a
    /// hint: the default does nothing.
    fn advise(&self, ranges: &[Range<u64>]) {
        let _ = ranges;
    }

    /// Whether the bytes at `offset` are in memory already (a local file's page cache), when
    /// the source can tell without waiting for them; `None` when it cannot tell.
    fn is_cached(&self, offset: u64) -> Option<bool> {
        let _ = offset;
        None
    }

    /// The bytes the kernel reads ahead in one go when a read of this source misses the page
    /// cache (a local file's block device `read_ahead_kb`); `None` when there is no such
    /// read-ahead or it is unknown.
    fn kernel_read_ahead(&self) -> Option<u64> {
        None
    }

    /// The requests served so far, when the source counts them.
    fn counters(&self) -> Option<&SourceCounters> {
        None
    }
}

/// A local file read with `pread`.
///
/// ```
/// use rntuple::storage::{FileSource, ReadAt};
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-FileSource-{}.root", std::process::id()));
/// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// # for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// # w.commit()?;
/// let src = FileSource::open(&path)?;
/// assert_eq!(src.len(), std::fs::metadata(&path)?.len());
/// assert_eq!(src.read_vec(0, 4, "file header")?, b"root"); // the magic of every ROOT file
/// assert_eq!(src.counters().map(|c| c.get()), Some((1, 4)));
/// let again = FileSource::from_file(std::fs::File::open(&path)?, &path)?;
/// assert_eq!(again.len(), src.len());
/// assert!(FileSource::open(std::env::temp_dir()).is_err()); // a directory is refused
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FileSource {
    file: File,
    len: u64,
    path: String,
    counters: SourceCounters,
    /// The kernel's read-ahead window, looked up on first use.
    read_ahead_window: std::sync::OnceLock<Option<u64>>,
}

impl FileSource {
    /// Opens a regular file for reading. A FIFO, socket or device is refused by its type (it is
    /// opened non-blocking and checked before any read, so a FIFO without a writer cannot hang).
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let p = path.as_ref();
        let file =
            std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(p).map_err(|e| Error::io(format!("opening {}", p.display()), e))?;
        let meta = file.metadata().map_err(|e| Error::io(format!("stat of {}", p.display()), e))?;
        if !meta.is_file() {
            let ft = meta.file_type();
            use std::os::unix::fs::FileTypeExt;
            let kind = if ft.is_dir() {
                "a directory"
            } else if ft.is_fifo() {
                "a FIFO"
            } else if ft.is_socket() {
                "a socket"
            } else if ft.is_block_device() || ft.is_char_device() {
                "a device"
            } else {
                "not a regular file"
            };
            return Err(Error::Invalid(format!("{}: {kind}; only regular files are read", p.display())));
        }
        Self::from_file(file, p)
    }

    /// Reads through an already open handle (opened for reading) of the file at `path`.
    pub fn from_file(file: File, path: impl AsRef<Path>) -> Result<Self> {
        let p = path.as_ref();
        let len = file.metadata().map_err(|e| Error::io(format!("stat of {}", p.display()), e))?.len();
        Ok(FileSource { file, len, path: p.display().to_string(), counters: SourceCounters::default(), read_ahead_window: std::sync::OnceLock::new() })
    }
}

impl ReadAt for FileSource {
    fn len(&self) -> u64 {
        self.len
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        self.counters.add(buf.len() as u64);
        self.file.read_exact_at(buf, offset).map_err(|e| Error::io(format!("reading {} bytes at offset {offset} of {}", buf.len(), self.path), e))
    }
    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn is_cached(&self, offset: u64) -> Option<bool> {
        use std::os::fd::AsRawFd;
        let off = libc::off_t::try_from(offset).ok()?;
        let mut buf = [0u8; 512];
        let iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
        // SAFETY: `iov` describes `buf`, which outlives the call; the descriptor is this source's.
        // RWF_NOWAIT: the kernel returns EAGAIN instead of reading from the disk.
        let n = unsafe { libc::preadv2(self.file.as_raw_fd(), &iov, 1, off, libc::RWF_NOWAIT) };
        if n >= 0 {
            return Some(true);
        }
        (std::io::Error::last_os_error().raw_os_error() == Some(libc::EAGAIN)).then_some(false)
    }
    fn advise(&self, ranges: &[Range<u64>]) {
        advise_file(&self.file, ranges);
    }
    fn kernel_read_ahead(&self) -> Option<u64> {
        *self.read_ahead_window.get_or_init(|| super::kernel_read_ahead::window(&self.file))
    }
}

/// Asks the kernel to read `ranges` of `file` into the page cache in the background
/// (`POSIX_FADV_WILLNEED`); only a hint.
pub(crate) fn advise_file(file: &File, ranges: &[Range<u64>]) {
    use std::os::fd::AsRawFd;
    for r in ranges {
        let (Ok(start), Ok(len)) = (libc::off_t::try_from(r.start), libc::off_t::try_from(r.end.saturating_sub(r.start))) else { continue };
        // SAFETY: a plain system call on a descriptor the caller holds open; no memory is passed.
        // A failure only means no read-ahead.
        unsafe {
            libc::posix_fadvise(file.as_raw_fd(), start, len, libc::POSIX_FADV_WILLNEED);
        }
    }
}

/// An in-memory byte source (tests, fuzzing, data already in memory).
///
/// ```
/// use std::sync::Arc;
/// use rntuple::storage::{MemSource, ReadAt};
/// let m = MemSource(Arc::new(b"root and more".to_vec()));
/// assert_eq!(m.len(), 13);
/// assert_eq!(m.view(0, 4), Some(&b"root"[..])); // lent in place, not copied
/// assert!(m.read_vec(10, 4, "tail").is_err()); // beyond the end
/// ```
#[derive(Clone)]
pub struct MemSource(pub Arc<Vec<u8>>);

impl ReadAt for MemSource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
    fn view(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        self.0.get(start..end)
    }
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let start = usize::try_from(offset).map_err(|_| Error::corrupt("offset beyond memory", offset))?;
        let end = start
            .checked_add(buf.len())
            .filter(|&e| e <= self.0.len())
            .ok_or_else(|| Error::corrupt(format!("read of {} bytes beyond end of data", buf.len()), offset))?;
        buf.copy_from_slice(&self.0[start..end]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_lends_its_bytes_and_refuses_ranges_beyond_the_end() {
        let m = MemSource(Arc::new((0u8..100).collect()));
        assert_eq!(m.view(10, 3), Some(&[10u8, 11, 12][..]));
        assert_eq!(m.view(100, 0), Some(&[][..]));
        assert_eq!(m.view(98, 3), None);
        assert_eq!(m.view(u64::MAX, 2), None);
        let mut buf = [0u8; 3];
        assert!(m.read_exact_at(98, &mut buf).is_err());
    }

    #[test]
    fn only_regular_files_are_opened() {
        let dir = std::env::temp_dir().join(format!("rntuple-source-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // A FIFO without a writer would block a plain open; it is refused at once, by type.
        let e = FileSource::open(&fifo).err().unwrap().to_string();
        assert!(e.contains("a FIFO; only regular files are read"), "{e}");
        let e = FileSource::open(&dir).err().unwrap().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = FileSource::open("/dev/null").err().unwrap().to_string();
        assert!(e.contains("a device"), "{e}");
        std::fs::write(dir.join("f"), b"abc").unwrap();
        assert_eq!(FileSource::open(dir.join("f")).unwrap().len(), 3);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
