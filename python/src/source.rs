//! A byte source over a Python binary file object (`seek` + `read`): an open local file,
//! `io.BytesIO`, an fsspec file over HTTP, XRootD or S3. The reader asks only for the ranges it
//! needs (anchor, envelopes, the pages of the chosen fields), so reading one field of a remote
//! file transfers that field's pages, not the file.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rntuple::storage::local::source::{RangeSink, ReadAt, SourceCounters};
use std::ops::Range;
use std::sync::Mutex;

/// Reads through a Python file object. `seek` and `read` are one step under `lock`: Python may
/// release the GIL inside `read`, and another reading thread must not move the position then.
pub(crate) struct PyFileSource {
    obj: Py<PyAny>,
    len: u64,
    name: String,
    lock: Mutex<()>,
    counters: SourceCounters,
}

impl PyFileSource {
    /// Wraps a seekable binary file object; its length is found by seeking to its end.
    pub(crate) fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        let len: u64 = obj.call_method1("seek", (0, 2))?.extract()?;
        let name = obj
            .getattr("name")
            .ok()
            .and_then(|n| n.str().ok())
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("<{}>", obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()));
        Ok(PyFileSource { obj: obj.clone().unbind(), len, name, lock: Mutex::new(()), counters: SourceCounters::default() })
    }

    fn read_locked(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.counters.add(buf.len() as u64);
        Python::with_gil(|py| -> PyResult<Result<(), String>> {
            let f = self.obj.bind(py);
            f.call_method1("seek", (offset,))?;
            let mut at = 0;
            while at < buf.len() {
                let chunk = f.call_method1("read", (buf.len() - at,))?;
                // bytes as they are; bytearray, memoryview and other buffers through bytes() (one
                // more copy; the abi3 build has no direct buffer access on Python 3.9).
                let owned;
                let bytes = match chunk.downcast::<PyBytes>() {
                    Ok(b) => b,
                    Err(_) => {
                        owned = py.get_type::<PyBytes>().call1((&chunk,)).map_err(|_| {
                            pyo3::exceptions::PyTypeError::new_err(format!(
                                "read() returned {}, not bytes (open the file in binary mode)",
                                chunk.get_type().name().map(|n| n.to_string()).unwrap_or_default()
                            ))
                        })?;
                        owned.downcast::<PyBytes>().map_err(|_| pyo3::exceptions::PyTypeError::new_err("bytes() did not give bytes"))?
                    }
                };
                let b = bytes.as_bytes();
                let n = b.len().min(buf.len() - at);
                buf[at..at + n].copy_from_slice(&b[..n]);
                if n == 0 {
                    return Ok(Err(format!("the file object ended after {} of {} bytes", at, buf.len())));
                }
                at += n;
            }
            Ok(Ok(()))
        })
        .map_err(|e| e.to_string())
        .and_then(|r| r)
        .map_err(|why| rntuple::Error::Io {
            context: format!("reading {} bytes at offset {offset} of {}", buf.len(), self.name),
            source: std::io::Error::other(why),
        })
    }
}

impl PyFileSource {
    /// The ranges through the file's fsspec filesystem (`fs.cat_ranges`, which keeps several
    /// requests in flight for HTTP, S3 and XRootD filesystems), or `None` for a file object
    /// without one.
    fn cat_ranges(&self, ranges: &[Range<u64>]) -> Option<PyResult<Vec<Vec<u8>>>> {
        Python::with_gil(|py| {
            let f = self.obj.bind(py);
            let (fs, path) = (f.getattr("fs").ok()?, f.getattr("path").ok()?);
            if !fs.hasattr("cat_ranges").unwrap_or(false) {
                return None;
            }
            let paths = vec![path; ranges.len()];
            let starts: Vec<u64> = ranges.iter().map(|r| r.start).collect();
            let ends: Vec<u64> = ranges.iter().map(|r| r.end).collect();
            Some(fs.call_method1("cat_ranges", (paths, starts, ends)).and_then(|out| out.extract::<Vec<Vec<u8>>>()))
        })
    }
}

impl ReadAt for PyFileSource {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> rntuple::Result<()> {
        // Never wait for the lock while holding the GIL: the thread holding the lock may be
        // waiting for the GIL. Take the GIL only to let go of it, then the lock, then the GIL.
        Python::with_gil(|py| py.allow_threads(|| self.read_locked(offset, buf)))
    }

    fn read_ranges(&self, ranges: &[Range<u64>], sink: &mut RangeSink<'_>) -> rntuple::Result<()> {
        match self.cat_ranges(ranges) {
            None => {
                for (i, r) in ranges.iter().enumerate() {
                    let mut v = vec![0u8; (r.end - r.start) as usize];
                    self.read_exact_at(r.start, &mut v)?;
                    sink(i, v)?;
                }
                Ok(())
            }
            Some(Err(e)) => Err(rntuple::Error::Io {
                context: format!("reading {} ranges of {} through its filesystem's cat_ranges", ranges.len(), self.name),
                source: std::io::Error::other(e.to_string()),
            }),
            Some(Ok(parts)) if parts.len() != ranges.len() => Err(rntuple::Error::Io {
                context: format!("reading {} ranges of {} through its filesystem's cat_ranges", ranges.len(), self.name),
                source: std::io::Error::other(format!("cat_ranges returned {} parts", parts.len())),
            }),
            Some(Ok(parts)) => {
                for (i, (r, v)) in ranges.iter().zip(parts).enumerate() {
                    self.counters.add(v.len() as u64);
                    if v.len() as u64 != r.end - r.start {
                        return Err(rntuple::Error::Io {
                            context: format!("reading bytes {}..{} of {}", r.start, r.end, self.name),
                            source: std::io::Error::other(format!("cat_ranges returned {} bytes", v.len())),
                        });
                    }
                    sink(i, v)?;
                }
                Ok(())
            }
        }
    }

    fn is_remote(&self) -> bool {
        true
    }

    fn counters(&self) -> Option<&SourceCounters> {
        Some(&self.counters)
    }
}
