//! Loading one page for the page source: from the cluster pool when the read's plan takes its
//! pages from there, else from a lent view of the source or read into thread-local scratch; its
//! checksum verified, decompressed into scratch and the uncompressed bytes handed to a decoder;
//! errors of a page's decoding are relocated to its offset. ROOT's counterpart:
//! `RPageSource::LoadPage` and `RPageSource::UnzipPage`.

use crate::error::{Error, Result};
use crate::format::compression;
use crate::format::descriptor::{ColumnDescriptor, PageDescriptor};
use crate::primitives::decode::ColumnCodec;
use crate::read::pool::page_source::PageSource;
use crate::read::pool::read_plan::ReadPlan;
use crate::storage::container::tfile::read_blob;
use std::cell::RefCell;
use std::sync::atomic::Ordering;

thread_local! {
    /// Per-thread scratch buffers for stored and decompressed page bytes.
    static SCRATCH: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

impl PageSource {
    /// Loads a page of a read following `plan` (read, checksum, decompress) into thread-local
    /// scratch buffers and hands the uncompressed bytes to `f`. Buffers are reused across pages.
    pub(crate) fn with_page<R>(
        &self,
        plan: &ReadPlan,
        col: &ColumnDescriptor,
        codec: &ColumnCodec,
        page: &PageDescriptor,
        cluster: usize,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        SCRATCH.with(|cell| {
            let mut guard = cell.borrow_mut();
            let (stored, unz) = &mut *guard;
            self.with_page_in(plan, col, codec, page, cluster, (stored, unz), f)
        })
    }

    /// [`PageSource::with_page`] with the caller's scratch buffers (stored bytes, uncompressed
    /// bytes) instead of the thread's: a bulk read keeps its own (`BulkReader`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn with_page_in<R>(
        &self,
        plan: &ReadPlan,
        col: &ColumnDescriptor,
        codec: &ColumnCodec,
        page: &PageDescriptor,
        cluster: usize,
        scratch: (&mut Vec<u8>, &mut Vec<u8>),
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        let what = || format!("page of column {} ({}) in cluster {cluster} at offset {}", col.id, codec.ty.name(), page.locator.offset);
        let len = codec.page_bytes(page.n_elements as u64);
        check_page_len(len, &what)?;
        let size = page.locator.size;
        if size > len {
            return Err(Error::corrupt(format!("{}: {size} stored bytes for {len} uncompressed bytes", what()), page.locator.offset));
        }
        // A compressed page expands by a bounded factor; refuse lying element counts before
        // allocating.
        if size < len && len > size.saturating_mul(1 << 17) + (1 << 20) {
            return Err(Error::corrupt(format!("{}: claims {len} uncompressed bytes from {size} stored bytes", what()), page.locator.offset));
        }
        let stored_len = size + if page.has_checksum { 8 } else { 0 };
        let pooled = self.pooled_page(plan, cluster, page)?;
        let (stored, unz) = scratch;
        {
            // Loaded ahead by the cluster pool.
            if let Some((chunk, at)) = &pooled {
                let v = chunk.get(*at..*at + stored_len as usize).ok_or_else(|| Error::internal(format!("{}: outside its read-ahead request", what())))?;
                return self.unpack_page(v, size, len, page, &what, unz, f);
            }
            let chunked = self.max_key_size > 0 && stored_len > self.max_key_size;
            // A source holding the bytes in memory lends them; others copy into scratch.
            if let Some(v) = if chunked { None } else { self.src.view(page.locator.offset, stored_len) } {
                return self.unpack_page(v, size, len, page, &what, unz, f);
            }
            if chunked {
                *stored = read_blob(&*self.src, page.locator.offset, stored_len, self.max_key_size, &what())?;
            } else {
                if stored_len > self.src.len() {
                    return Err(Error::corrupt(format!("{}: larger than the file", what()), page.locator.offset));
                }
                stored.resize(stored_len as usize, 0);
                let end = page.locator.offset.checked_add(stored_len).filter(|&e| e <= self.src.len());
                if end.is_none() {
                    return Err(Error::corrupt(format!("{}: extends beyond the end of the file", what()), page.locator.offset));
                }
                self.src.read_exact_at(page.locator.offset, stored)?;
            }
            self.unpack_page(stored, size, len, page, &what, unz, f)
        }
    }

    /// Checks, without decompressing, that a page's stored bytes can back its element count:
    /// they lie inside the file, and for a compressed page its compression block headers (read
    /// from the file, 9 bytes per block) add up to the uncompressed length. Run before an output
    /// buffer for many elements is reserved, so that a page list's lying counts fail before the
    /// allocation they would drive. Pages split over several keys are checked by size only.
    pub(crate) fn probe_page(&self, plan: &ReadPlan, col: &ColumnDescriptor, codec: &ColumnCodec, page: &PageDescriptor, cluster: usize) -> Result<()> {
        let what = || format!("page of column {} ({}) at offset {}", col.id, codec.ty.name(), page.locator.offset);
        let (offset, size) = (page.locator.offset, page.locator.size);
        let len = codec.page_bytes(page.n_elements as u64);
        check_page_len(len, &what)?;
        if size > len || (size < len && len > size.saturating_mul(1 << 17) + (1 << 20)) {
            return Err(Error::corrupt(format!("{}: claims {len} uncompressed bytes from {size} stored bytes", what()), offset));
        }
        let chunked = self.max_key_size > 0 && size > self.max_key_size;
        if chunked {
            return Ok(());
        }
        if offset.checked_add(size).is_none_or(|e| e > self.src.len()) {
            return Err(Error::corrupt(format!("{}: extends beyond the end of the file", what()), offset));
        }
        // The block headers from the read-ahead's bytes when it holds the page, else from the source.
        let pooled = if size < len { self.pooled_page(plan, cluster, page)? } else { None };
        let mut ip = 0u64;
        let mut total = 0u64;
        while size < len && ip < size {
            let mut h = [0u8; compression::BLOCK_HEADER];
            if size - ip < h.len() as u64 {
                return Err(Error::corrupt(format!("{}: truncated compression block header", what()), offset + ip));
            }
            match &pooled {
                Some((chunk, at)) => {
                    let from = *at + ip as usize;
                    let b = chunk.get(from..from + h.len()).ok_or_else(|| Error::internal(format!("{}: outside its read-ahead request", what())))?;
                    h.copy_from_slice(b);
                }
                None => self.src.read_exact_at(offset + ip, &mut h)?,
            }
            let csize = u64::from(h[3]) | u64::from(h[4]) << 8 | u64::from(h[5]) << 16;
            total += u64::from(h[6]) | u64::from(h[7]) << 8 | u64::from(h[8]) << 16;
            ip += h.len() as u64 + csize;
            if ip > size || total > len {
                return Err(Error::corrupt(format!("{}: compression blocks do not fit the page's {size} stored bytes", what()), offset + ip));
            }
        }
        if size < len && total != len {
            return Err(Error::corrupt(format!("{}: compression blocks hold {total} bytes, the page list says {len}", what()), offset));
        }
        Ok(())
    }

    /// Checks a stored page's checksum (`stored` = the page's `size` bytes, then its checksum if
    /// it has one), decompresses it into `unz` when compressed and hands the `len` uncompressed
    /// bytes to `f`.
    ///
    /// A compressed page is decompressed first and its checksum verified after, before `f` sees
    /// a byte: the decompressor has then just brought the stored bytes into the processor's
    /// cache, and hashing them there spares a second read of them out of memory (bench/RESULTS.md,
    /// 2026-11-28: the bulk read 1.33x -> 1.28x zstd alone). The decompressor is safe on any input (bounded
    /// by `len`, checked against the blocks' headers), and when it fails on a page whose checksum
    /// does not match, the checksum error is the one reported: it says more.
    #[allow(clippy::too_many_arguments)]
    fn unpack_page<R>(
        &self,
        stored: &[u8],
        size: u64,
        len: u64,
        page: &PageDescriptor,
        what: &dyn Fn() -> String,
        unz: &mut Vec<u8>,
        f: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<R> {
        let data = stored.get(..size as usize).ok_or_else(|| Error::corrupt(format!("{}: truncated", what()), page.locator.offset))?;
        let stored_sum = if page.has_checksum && self.verify_page_checksums {
            let a: [u8; 8] = stored
                .get(size as usize..size as usize + 8)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| Error::corrupt(format!("{}: checksum missing", what()), page.locator.offset))?;
            Some(u64::from_le_bytes(a))
        } else {
            None
        };
        let verify = || match stored_sum {
            Some(st) => {
                let comp = crate::format::checksum::xxh3(data);
                if st != comp {
                    return Err(Error::Checksum { what: what(), offset: page.locator.offset, stored: st, computed: comp });
                }
                Ok(())
            }
            None => Ok(()),
        };
        let count = || {
            self.stats.pages.fetch_add(1, Ordering::Relaxed);
            self.stats.stored_bytes.fetch_add(size, Ordering::Relaxed);
            self.stats.uncompressed_bytes.fetch_add(len, Ordering::Relaxed);
        };
        if size == len {
            verify()?;
            count();
            return f(data);
        }
        // The checksum first: of a damaged page it names the cause, whatever the decompressor
        // would say. It also brings the stored bytes into cache in one sequential pass that the
        // processor's prefetchers follow, so that zstd then reads them from cache.
        verify()?;
        self.decompress_page(data, len, page, what, unz)?;
        count();
        f(&unz[..len as usize])
    }

    /// Decompresses the page's stored bytes `data` into the first `len` bytes of `unz` (grown
    /// when shorter, never shrunk: a reused buffer is not zeroed again for every page).
    fn decompress_page(&self, data: &[u8], len: u64, page: &PageDescriptor, what: &dyn Fn() -> String, unz: &mut Vec<u8>) -> Result<()> {
        let w = what();
        // The blocks' own headers must account for the page's length before a buffer of that
        // length is made: a lying element count cannot drive the allocation.
        compression::check_blocks(data, len, &w, page.locator.offset)?;
        crate::format::budget::check(len, || format!("decompressing {w}"))?;
        if unz.len() < len as usize {
            unz.try_reserve(len as usize - unz.len()).map_err(|_| Error::Unsupported(format!("{w}: cannot allocate {len} bytes for the uncompressed page")))?;
            unz.resize(len as usize, 0);
        }
        compression::decompress_into(data, &mut unz[..len as usize], &w, page.locator.offset)
    }
}

use crate::format::budget::MAX_PAGE_BYTES;

fn check_page_len(len: u64, what: &dyn Fn() -> String) -> Result<()> {
    if len > MAX_PAGE_BYTES {
        return Err(Error::Unsupported(format!(
            "{}: {len} uncompressed bytes, more than the {} MiB this reader decodes as one page",
            what(),
            MAX_PAGE_BYTES >> 20
        )));
    }
    Ok(())
}

pub(crate) fn relocate(e: Error, page: &PageDescriptor) -> Error {
    match e {
        Error::Corrupt { what, envelope: None, .. } => Error::corrupt(what, page.locator.offset),
        other => other,
    }
}
