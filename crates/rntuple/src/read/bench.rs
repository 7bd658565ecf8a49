//! Benchmark helpers (compiled with the `unstable` feature only, for the CLI's `bench read` and
//! `examples/profile_read.rs`): the physical limit of reading fields, i.e. their pages read and
//! decompressed without decoding. Not a stable API.

use super::open::Reader;
use crate::error::Result;
use crate::format::compression;
use crate::primitives::alloc::vec_with_capacity;
use crate::primitives::column_type::ColumnType;
use crate::primitives::decode::ColumnCodec;
use crate::storage::container::tfile::read_blob;
use std::time::Instant;

impl Reader {
    /// The stored bytes of every page of the given top-level fields (all when `None`), with
    /// their uncompressed lengths, read before any timing starts.
    fn stored_pages(&self, fields: Option<&[&str]>) -> Result<Vec<(Vec<u8>, usize)>> {
        let ids = self.resolve_fields(fields)?;
        let mut cols = Vec::new();
        let mut stack = ids;
        while let Some(id) = stack.pop() {
            let f = &self.desc.fields[id as usize];
            cols.extend(f.columns.iter().copied());
            stack.extend(f.children.iter().copied());
        }
        cols.sort_unstable();
        cols.dedup();
        let mut pages = Vec::new();
        for cl in &self.desc.clusters {
            for &c in &cols {
                let col = &self.desc.columns[c as usize];
                let Some(ct) = ColumnType::from_u16(col.column_type) else { continue };
                let codec = ColumnCodec { ty: ct, bits: col.bits_on_storage, range: col.value_range };
                if let Some(Some(r)) = cl.columns.get(c as usize) {
                    for p in &r.pages {
                        let b = read_blob(&*self.page_source.src, p.locator.offset, p.locator.size, self.anchor.max_key_size, "page")?;
                        let len = codec.page_bytes(p.n_elements as u64);
                        // The blocks' headers must account for the length the page list claims.
                        compression::check_blocks(&b, len, "page", p.locator.offset)?;
                        pages.push((b, len as usize));
                    }
                }
            }
        }
        Ok(pages)
    }

    /// Reads every page of the given top-level fields (all when `None`) and decompresses it
    /// without decoding; returns (stored bytes, uncompressed bytes, seconds). The physical
    /// limit of reading those fields.
    ///
    /// A benchmark helper (`unstable` feature): not a stable API.
    pub fn decompress_only(&self, fields: Option<&[&str]>) -> Result<(u64, u64, f64)> {
        let pages = self.stored_pages(fields)?;
        let stored: u64 = pages.iter().map(|p| p.0.len() as u64).sum();
        let unz: u64 = pages.iter().map(|p| p.1 as u64).sum();
        let t = Instant::now();
        let mut buf = Vec::new();
        for (b, n) in &pages {
            grow(&mut buf, *n);
            compression::decompress_into(b, &mut buf[..*n], "page", 0)?;
        }
        Ok((stored, unz, t.elapsed().as_secs_f64()))
    }

    /// Like [`Reader::decompress_only`], but decompresses every page into one freshly allocated
    /// buffer of the total uncompressed size (as a read must produce its output in fresh
    /// memory); returns the seconds. The difference to `decompress_only` is the cost of fresh
    /// memory (the kernel's page faults and zeroing).
    ///
    /// A benchmark helper (`unstable` feature): not a stable API.
    pub fn decompress_fresh(&self, fields: Option<&[&str]>) -> Result<f64> {
        let pages = self.stored_pages(fields)?;
        let total: usize = pages.iter().map(|p| p.1).sum();
        let t = Instant::now();
        let mut out: Vec<u8> = vec_with_capacity(total);
        for (b, n) in &pages {
            let at = out.len();
            out.resize(at + n, 0);
            compression::decompress_into(b, &mut out[at..], "page", 0)?;
        }
        let secs = t.elapsed().as_secs_f64();
        drop(out);
        Ok(secs)
    }

    /// The stored bytes of every page of the given top-level fields (all when `None`), with
    /// their uncompressed lengths, for [`Reader::bulk_floor`].
    ///
    /// A benchmark helper (`unstable` feature): not a stable API.
    pub fn pages_in_memory(&self, fields: Option<&[&str]>) -> Result<Vec<(Vec<u8>, usize)>> {
        self.stored_pages(fields)
    }

    /// zstd alone: decompresses every page of `pages` ([`Reader::pages_in_memory`]) into one
    /// reused buffer (cache-resident; grown, never shrunk, as the reader's own), as
    /// [`Reader::decompress_only`] does.
    ///
    /// A benchmark helper (`unstable` feature): not a stable API.
    pub fn decompress_pages(pages: &[(Vec<u8>, usize)]) -> Result<()> {
        let mut buf = Vec::new();
        for (b, n) in pages {
            grow(&mut buf, *n);
            compression::decompress_into(b, &mut buf[..*n], "page", 0)?;
        }
        std::hint::black_box(&buf);
        Ok(())
    }

    /// The floor of any bulk read of `pages` ([`Reader::pages_in_memory`]) into the caller's
    /// layout, by its parts, page after page as a read goes: the XXH3 checksum of the stored page
    /// (which brings it into cache, as a read verifies it before decompressing), zstd
    /// decompressing it into a reused buffer, and one `memcpy` of the decompressed page into a
    /// second reused buffer (the least a re-layout of split or delta-encoded pages costs: it
    /// reads and writes every byte once, in cache). Returns (decompress, copy, checksum) seconds.
    ///
    /// A benchmark helper (`unstable` feature): not a stable API.
    pub fn bulk_floor(pages: &[(Vec<u8>, usize)]) -> Result<(f64, f64, f64)> {
        let (mut unz, mut out) = (Vec::new(), Vec::new());
        let (mut zsecs, mut csecs, mut xsecs) = (0.0, 0.0, 0.0);
        let mut h = 0u64;
        for (b, n) in pages {
            grow(&mut unz, *n);
            grow(&mut out, *n);
            let t0 = Instant::now();
            h ^= crate::format::checksum::xxh3(b);
            let t1 = Instant::now();
            compression::decompress_into(b, &mut unz[..*n], "page", 0)?;
            let t2 = Instant::now();
            out[..*n].copy_from_slice(&unz[..*n]);
            std::hint::black_box(&out);
            let t3 = Instant::now();
            (xsecs, zsecs, csecs) = (xsecs + (t1 - t0).as_secs_f64(), zsecs + (t2 - t1).as_secs_f64(), csecs + (t3 - t2).as_secs_f64());
        }
        std::hint::black_box(h);
        Ok((zsecs, csecs, xsecs))
    }
}

/// `buf` made at least `n` bytes long.
fn grow(buf: &mut Vec<u8>, n: usize) {
    if buf.len() < n {
        buf.resize(n, 0);
    }
}
