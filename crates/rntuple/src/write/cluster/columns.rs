//! Column buffers and page sealing, as ROOT's `RPageSinkBuf` and `RPageSink::SealPage`: values
//! are buffered per column until a page is full, encoded, then compressed and checksummed —
//! at once on the filling thread, or later on several threads (implicit MT) — and kept until the
//! cluster is sealed or written as they come (unbuffered mode). Nothing here knows about fields
//! or files: the output of a page written on its own is passed in as a [`ClusterOut`].

use crate::error::{Error, Result};
use crate::format::compression::{self, Compression};
use crate::primitives::column_type::ColumnType;
use crate::primitives::element::{BufElement, ColumnBuf};
use crate::primitives::encode::encode_page;
use crate::primitives::reduced_float::{encode_reduced, FloatRepr};
use crate::write::cluster::same_pages::WrittenPages;
use crate::write::cluster::sealed::{ClusterOut, PagePosition, SealedColumn, SealedPage};
use crate::write::options::WriteOptions;
use std::time::Instant;

/// One page of the current cluster.
struct Page {
    /// Encoded page awaiting compression (`sealed == false`), or the sealed page (compressed,
    /// with its checksum); empty once written (unbuffered mode).
    bytes: Vec<u8>,
    n_elements: u32,
    /// Stored size without the checksum (known once sealed).
    stored: u64,
    sealed: bool,
    /// Absolute file offset when the page was written on its own (unbuffered mode).
    written_at: Option<u64>,
}

/// A column of the current cluster: its page buffer and its pages so far.
pub(crate) struct Column {
    pub ty: ColumnType,
    pub buf: ColumnBuf,
    pages: Vec<Page>,
    /// Elements of this column in the current cluster.
    pub in_cluster: u64,
    /// A reduced-precision float column (half, truncated, quantized): its representation and
    /// the field path for errors.
    pub reduced: Option<(FloatRepr, String)>,
}

impl Column {
    /// An empty column of type `ty` buffering into `buf`.
    pub fn new(ty: ColumnType, buf: ColumnBuf) -> Column {
        Column { ty, buf, pages: Vec::new(), in_cluster: 0, reduced: None }
    }

    /// Bits of one element in memory accounting (the stored width of reduced-precision floats).
    pub fn bits(&self) -> u64 {
        match &self.reduced {
            Some((r, _)) => r.bits_on_storage() as u64,
            None => self.ty.fixed_bits().unwrap_or(32) as u64,
        }
    }
}

/// Bytes the first pages of all columns of a builder may take together (see [`Columns::new`]).
const FIRST_PAGES_BUDGET: u64 = 8 << 20;

/// The columns of a builder with their pages, the page buffer pool and the compression counters.
pub(crate) struct Columns {
    pub cols: Vec<Column>,
    /// Whether full pages stay in memory until their cluster is written (see [`Columns::new`]).
    buffered: bool,
    compression: Compression,
    checksums: bool,
    implicit_mt: bool,
    imt_threads: usize,
    max_page: u64,
    budget: u64,
    pool_cap: u64,
    /// Uncompressed bits buffered in the current cluster.
    pub unzipped_in_cluster: u64,
    /// Encoded pages waiting for compression (implicit MT), in bytes.
    pending_raw: u64,
    pub zipped_total: u64,
    pub unzipped_total: u64,
    /// Page buffers for reuse (allocating fresh memory for every page costs page faults).
    pool: Vec<Vec<u8>>,
    /// Capacity of the pooled buffers.
    pool_bytes: u64,
    /// Seconds spent compressing (and checksumming) pages.
    pub compress_seconds: f64,
    /// Same-page merging of the pages written one by one (unbuffered, streamed); `None` when off.
    written: Option<WrittenPages>,
}

impl Columns {
    /// Columns writing with `opts` into an output that does (`pages_as_they_fill`) or does not
    /// take pages as they fill; their buffers get room for a first page when they will be filled (`fill`).
    ///
    /// Full pages stay in memory until their cluster is written (`WriteOptions::buffered`),
    /// except for the pages the sequential writer streams (`WriteOptions::stream_uncompressed_pages`:
    /// uncompressed pages, and with implicit MT off every page, compressed on the filling thread
    /// as it fills; not with direct I/O, whose aligned writes want whole clusters).
    pub fn new(mut cols: Vec<Column>, opts: &WriteOptions, pages_as_they_fill: bool, fill: bool) -> Columns {
        // Adaptive pages, as ROOT's: a column's buffer starts with room for the initial page
        // size and doubles as values come, up to the maximum page size (where the page is sealed
        // and the buffer reused), so sparse columns stay small. Together the first pages take at most
        // FIRST_PAGES_BUDGET: columns past 32,768 start smaller (100,000 columns took 26 MB before a value).
        let first_page = opts.initial_unzipped_page_size.min(opts.max_unzipped_page_size).min(FIRST_PAGES_BUDGET / (cols.len().max(1) as u64));
        if fill {
            for c in &mut cols {
                let n = (first_page * 8 / c.bits()).max(1);
                c.buf.reserve(n as usize);
            }
        }
        let sealed_as_filled = opts.compression.is_none() || !opts.use_implicit_mt;
        let stream = opts.stream_uncompressed_pages && sealed_as_filled && !opts.use_direct_io && pages_as_they_fill;
        // The page buffer budget in bytes: encoded pages awaiting compression beyond it are
        // compressed at once, largest first (0 = auto: twice the target cluster size when
        // compressing, once when not, as ROOT).
        let budget = match opts.page_buffer_budget {
            0 if opts.compression.is_none() => opts.approx_zipped_cluster_size,
            0 => 2 * opts.approx_zipped_cluster_size,
            b => b,
        };
        Columns {
            cols,
            buffered: opts.buffered && !stream,
            compression: opts.compression,
            checksums: opts.enable_page_checksums,
            implicit_mt: opts.use_implicit_mt,
            imt_threads: opts.imt_threads,
            max_page: opts.max_unzipped_page_size,
            budget,
            pool_cap: opts.approx_zipped_cluster_size,
            unzipped_in_cluster: 0,
            pending_raw: 0,
            zipped_total: 0,
            unzipped_total: 0,
            pool: Vec::new(),
            pool_bytes: 0,
            compress_seconds: 0.0,
            written: (opts.same_page_merging && opts.enable_page_checksums).then(WrittenPages::default),
        }
    }

    /// Empty columns of the same types, without memory.
    pub fn blank(&self) -> Vec<Column> {
        self.cols.iter().map(|c| Column { reduced: c.reduced.clone(), ..Column::new(c.ty, c.buf.empty_like()) }).collect()
    }

    /// Appends one value through `f`, sealing the page when it is full.
    #[inline]
    pub fn push(&mut self, col: usize, f: impl FnOnce(&mut ColumnBuf), out: &mut impl ClusterOut) -> Result<()> {
        let c = &mut self.cols[col];
        f(&mut c.buf);
        c.in_cluster += 1;
        let bits = c.bits();
        self.unzipped_in_cluster += bits;
        if (c.buf.len() as u64 * bits).div_ceil(8) >= self.max_page {
            self.seal_page(col, out)?;
        }
        Ok(())
    }

    /// Appends an index value (a collection's end offset).
    pub fn push_index(&mut self, col: usize, end: u64, out: &mut impl ClusterOut) -> Result<()> {
        self.push(
            col,
            |b| {
                b.push(end);
            },
            out,
        )
    }

    /// Appends `vals` to column `col`, sealing pages at the maximum page size; an error (and
    /// nothing appended) when the column holds another type.
    pub fn extend<T: BufElement>(&mut self, col: usize, vals: &[T], out: &mut impl ClusterOut) -> Result<()> {
        let bits = self.cols[col].bits();
        let per_page = ((self.max_page * 8) / bits).max(1) as usize;
        let mut rest = vals;
        while !rest.is_empty() {
            let c = &mut self.cols[col];
            let v = T::vec_mut(&mut c.buf).ok_or_else(|| Error::internal("column buffer of another type"))?;
            let room = per_page.saturating_sub(v.len()).max(1);
            let k = room.min(rest.len());
            v.extend_from_slice(&rest[..k]);
            let full = v.len() >= per_page;
            c.in_cluster += k as u64;
            self.unzipped_in_cluster += k as u64 * bits;
            rest = &rest[k..];
            if full {
                self.seal_page(col, out)?;
            }
        }
        Ok(())
    }

    /// Appends index values: `base + (offsets[i+1] - offsets[0])`.
    pub fn extend_index(&mut self, col: usize, base: u64, offsets: &[i64], out: &mut impl ClusterOut) -> Result<()> {
        let o0 = offsets.first().copied().unwrap_or(0);
        let ends: Vec<u64> = offsets[1..].iter().map(|&o| base + (o - o0) as u64).collect();
        self.extend(col, &ends, out)
    }

    /// Encodes the buffered values of a column as a page and seals it (or queues it for
    /// compression on several threads).
    pub fn seal_page(&mut self, col: usize, out: &mut impl ClusterOut) -> Result<()> {
        if self.cols[col].buf.len() == 0 {
            return Ok(());
        }
        let buffered = self.buffered;
        let mut raw = self.take_buf();
        let c = &mut self.cols[col];
        let n = c.buf.len();
        raw.clear();
        raw.reserve(c.ty.fixed_bits().unwrap_or(8) as usize * n / 8 + 16);
        match &c.reduced {
            Some((r, field)) => encode_reduced(r, c.buf.values(), field, &mut raw)?,
            None => encode_page(c.ty, c.buf.values(), &mut raw)?,
        }
        if self.implicit_mt && buffered {
            self.pending_raw += raw.len() as u64;
            c.pages.push(Page { bytes: raw, n_elements: n as u32, stored: 0, sealed: false, written_at: None });
            c.buf.clear();
            if self.pending_raw > self.budget {
                self.compress_pending()?;
            }
            return Ok(());
        }
        c.buf.clear();
        let t = Instant::now();
        let unzipped = raw.len() as u64;
        let spare = self.take_buf();
        let (z, spare) = seal(raw, spare, self.compression, self.checksums)?;
        self.recycle(spare);
        self.compress_seconds += t.elapsed().as_secs_f64();
        let stored = (z.len() - 8 * self.checksums as usize) as u64;
        self.zipped_total += stored;
        self.unzipped_total += unzipped;
        let page = if buffered {
            let (z, big) = held(z);
            self.recycle(big);
            Page { bytes: z, n_elements: n as u32, stored, sealed: true, written_at: None }
        } else {
            // Same-page merging: a page equal to one written earlier in the cluster points at it.
            let at = match self.written.as_ref().and_then(|w| w.find(&z)) {
                Some(at) => {
                    // Not written: not counted in the compression factor (as ROOT's, from the bytes written).
                    self.zipped_total -= stored;
                    at
                }
                None => {
                    let at = out.page(&z)?;
                    if let Some(w) = self.written.as_mut() {
                        w.remember(&z, at);
                    }
                    at
                }
            };
            self.recycle(z);
            Page { bytes: Vec::new(), n_elements: n as u32, stored, sealed: true, written_at: Some(at) }
        };
        self.cols[col].pages.push(page);
        Ok(())
    }

    /// Compresses the encoded pages waiting in the cluster on several threads (implicit MT),
    /// largest first.
    pub fn compress_pending(&mut self) -> Result<()> {
        let n_jobs = self.cols.iter().flat_map(|c| c.pages.iter()).filter(|p| !p.sealed).count();
        if n_jobs == 0 {
            return Ok(());
        }
        let spares: Vec<Spares> = (0..n_jobs).map(|_| (self.take_buf(), Vec::new())).collect();
        let mut jobs: Vec<(&mut Page, Spares)> = self.cols.iter_mut().flat_map(|c| c.pages.iter_mut()).filter(|p| !p.sealed).zip(spares).collect();
        let t = Instant::now();
        let threads = if self.imt_threads > 0 { self.imt_threads } else { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) }.min(jobs.len());
        let (settings, checksums) = (self.compression, self.checksums);
        let unzipped: u64 = jobs.iter().map(|j| j.0.bytes.len() as u64).sum();
        // Largest pages first, handed out one at a time, so that the threads finish together.
        jobs.sort_by_key(|j| std::cmp::Reverse(j.0.bytes.len()));
        let seal_job = |job: &mut (&mut Page, Spares)| -> Result<()> {
            let raw = std::mem::take(&mut job.0.bytes);
            let (z, spare) = seal(raw, std::mem::take(&mut job.1 .0), settings, checksums)?;
            let (z, big) = held(z);
            job.0.stored = (z.len() - 8 * checksums as usize) as u64;
            job.0.bytes = z;
            job.0.sealed = true;
            job.1 = (spare, big);
            Ok(())
        };
        if threads <= 1 {
            for job in jobs.iter_mut() {
                seal_job(job)?;
            }
        } else {
            let queue = std::sync::Mutex::new(jobs.iter_mut());
            let results: Vec<Result<()>> = std::thread::scope(|sc| {
                let handles: Vec<_> = (0..threads)
                    .map(|_| {
                        sc.spawn(|| loop {
                            let next = queue.lock()?.next();
                            match next {
                                Some(job) => seal_job(job)?,
                                None => return Ok(()),
                            }
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(Error::internal("a compression thread panicked")))).collect()
            });
            for r in results {
                r?;
            }
        }
        let zipped: u64 = jobs.iter().map(|p| p.0.stored).sum();
        let spares: Vec<Spares> = jobs.into_iter().map(|j| j.1).collect();
        for (a, b) in spares {
            self.recycle(a);
            self.recycle(b);
        }
        self.zipped_total += zipped;
        self.unzipped_total += unzipped;
        self.pending_raw = 0;
        self.compress_seconds += t.elapsed().as_secs_f64();
        Ok(())
    }

    /// Seals every column's last page and takes the cluster's pages: the columns with their
    /// pages, and the chunks (sealed page bytes, in file order) the pages' positions point into.
    pub fn take_cluster(&mut self, out: &mut impl ClusterOut) -> Result<(Vec<SealedColumn>, Vec<Vec<u8>>)> {
        for i in 0..self.cols.len() {
            self.seal_page(i, out)?;
        }
        self.compress_pending()?;
        let mut chunks = Vec::with_capacity(self.cols.iter().map(|c| c.pages.len()).sum());
        let mut columns = Vec::with_capacity(self.cols.len());
        for c in &mut self.cols {
            let mut pages = Vec::with_capacity(c.pages.len());
            for p in c.pages.drain(..) {
                let position = match p.written_at {
                    Some(at) => PagePosition::FileOffset(at),
                    None => {
                        chunks.push(p.bytes);
                        PagePosition::Chunk(chunks.len() - 1)
                    }
                };
                pages.push(SealedPage { n_elements: p.n_elements, stored: p.stored, position });
            }
            columns.push(SealedColumn { n_elements: c.in_cluster, pages });
            c.in_cluster = 0;
        }
        self.unzipped_in_cluster = 0;
        if let Some(w) = self.written.as_mut() {
            w.clear();
        }
        Ok((columns, chunks))
    }

    /// Keeps a page buffer for reuse, up to a cluster's worth of memory. Buffers smaller than the
    /// largest page (the held copies of compressed pages, a cluster's short last pages) go back
    /// to the allocator, which reuses them as cheaply: pooled, they would be grown for the next
    /// page, and until then hold memory (a skim's threads each kept ~100 MiB of compressed page
    /// copies this way).
    pub fn recycle(&mut self, mut b: Vec<u8>) {
        let keep = b.capacity() > 0 && b.capacity() as u64 >= self.max_page;
        if keep && self.pool.len() < 4096 && self.pool_bytes < self.pool_cap {
            b.clear();
            self.pool_bytes += b.capacity() as u64;
            self.pool.push(b);
        }
    }

    /// Frees the column buffers and the pooled page buffers, once the last cluster is out (a commit
    /// writes its envelopes without them: 100,000 columns' first pages and pooled pages were 48 MB).
    pub fn release_buffers(&mut self) {
        for c in &mut self.cols {
            c.buf.free();
        }
        drop(self.take_pool());
    }

    /// Takes the pooled page buffers (a fill context that ends hands them to its writer).
    pub fn take_pool(&mut self) -> Vec<Vec<u8>> {
        self.pool_bytes = 0;
        std::mem::take(&mut self.pool)
    }

    /// The pooled page buffers (for tests: their addresses show which buffers are reused).
    #[cfg(test)]
    pub fn pooled(&self) -> &[Vec<u8>] {
        &self.pool
    }

    /// A page buffer from the pool (or a new one).
    fn take_buf(&mut self) -> Vec<u8> {
        match self.pool.pop() {
            Some(b) => {
                self.pool_bytes -= b.capacity() as u64;
                b
            }
            None => Vec::new(),
        }
    }
}

/// A compression job's buffers: the one it compresses into (then the encoded page's, left over)
/// and the one a held page leaves (see [`held`]).
type Spares = (Vec<u8>, Vec<u8>);

/// A sealed page to hold until its cluster is written, and the buffer left to reuse: a compressed
/// page that fills less than half of its (page-sized) buffer is moved into a buffer of its own
/// size, so that a buffered cluster holds about its stored bytes, not its pages' uncompressed
/// sizes (a NanoAOD-like skim held ~3x its clusters' stored size before, and paid for it in fresh
/// memory; bench/RESULTS.md).
fn held(z: Vec<u8>) -> (Vec<u8>, Vec<u8>) {
    if z.capacity() > 2 * z.len() + 4096 {
        (z.as_slice().to_vec(), z)
    } else {
        (z, Vec::new())
    }
}

/// Compresses an encoded page (into `spare`) and appends its XXH3 checksum when asked; returns
/// the sealed page and the buffer left over. Uncompressed pages are sealed in place.
fn seal(raw: Vec<u8>, spare: Vec<u8>, settings: Compression, checksum: bool) -> Result<(Vec<u8>, Vec<u8>)> {
    let (mut z, left) = if settings.is_none() {
        (raw, spare)
    } else {
        let mut z = spare;
        z.clear();
        compression::compress(&raw, settings, &mut z)?;
        (z, raw)
    };
    if checksum {
        let sum = crate::format::checksum::xxh3(&z);
        z.extend_from_slice(&sum.to_le_bytes());
    }
    Ok((z, left))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::primitives::decode::{decode_append, ColumnCodec};

    /// An output that records the pages written on their own.
    #[derive(Default)]
    struct Pages(Vec<Vec<u8>>);
    impl ClusterOut for Pages {
        fn cluster(&mut self, _: &mut crate::write::cluster::sealed::SealedCluster) -> Result<()> {
            Ok(())
        }
        fn page(&mut self, bytes: &[u8]) -> Result<u64> {
            self.0.push(bytes.to_vec());
            Ok(1000 * self.0.len() as u64)
        }
    }

    fn columns(opts: &WriteOptions) -> Columns {
        let (ty, buf) = (ColumnType::SplitReal32, <f32 as BufElement>::empty_buf());
        Columns::new(vec![Column::new(ty, buf)], opts, false, true)
    }

    fn decode(page: &[u8], compressed: bool, n: usize) -> Vec<f32> {
        let body = &page[..page.len() - 8];
        assert_eq!(xxhash_rust::xxh3::xxh3_64(body).to_le_bytes(), page[page.len() - 8..], "page checksum");
        let unzipped;
        let raw = if compressed {
            unzipped = compression::decompress(body, 4 * n, "page", 0).unwrap_or_else(|e| panic!("{e}"));
            unzipped.as_slice()
        } else {
            body
        };
        let mut out = Vec::new();
        decode_append(&ColumnCodec { ty: ColumnType::SplitReal32, bits: 32, range: None }, raw, n, &mut out).unwrap_or_else(|e| panic!("{e}"));
        out
    }

    #[test]
    fn pages_are_cut_at_the_maximum_size_and_sealed_with_checksums() {
        for (compression, implicit_mt) in [(0, false), (505, false), (505, true), (101, true)] {
            let opts = WriteOptions {
                compression: Compression::from_settings(compression).unwrap(),
                use_implicit_mt: implicit_mt,
                imt_threads: 2,
                max_unzipped_page_size: 400,
                ..WriteOptions::default()
            };
            let mut c = columns(&opts);
            let vals: Vec<f32> = (0..250).map(|i| i as f32 * 0.5).collect();
            let mut out = Pages::default();
            c.extend(0, &vals, &mut out).unwrap_or_else(|e| panic!("{e}"));
            assert!(c.extend(0, &[1u64][..], &mut out).is_err(), "u64 values into a float column");
            let (cols, chunks) = c.take_cluster(&mut out).unwrap_or_else(|e| panic!("{e}"));
            assert!(out.0.is_empty(), "buffered: nothing written page by page");
            assert_eq!(cols[0].n_elements, 250);
            let ns: Vec<u32> = cols[0].pages.iter().map(|p| p.n_elements).collect();
            assert_eq!(ns, [100, 100, 50], "pages of at most 400 bytes");
            let mut back = Vec::new();
            for p in &cols[0].pages {
                let PagePosition::Chunk(i) = p.position else { panic!("buffered pages are chunks") };
                assert_eq!(p.stored as usize + 8, chunks[i].len());
                back.extend(decode(&chunks[i], compression != 0, p.n_elements as usize));
            }
            assert_eq!(back, vals, "compression {compression}, implicit MT {implicit_mt}");
        }
    }

    #[test]
    fn unbuffered_pages_go_to_the_output_as_they_fill() {
        for merging in [false, true] {
            let opts = WriteOptions { buffered: false, same_page_merging: merging, max_unzipped_page_size: 40, ..WriteOptions::default() };
            let mut c = columns(&opts);
            let mut out = Pages::default();
            c.extend(0, &[1.0f32; 25][..], &mut out).unwrap_or_else(|e| panic!("{e}"));
            // Two equal full pages of 10: with same-page merging the second is not written again.
            assert_eq!(out.0.len(), if merging { 1 } else { 2 }, "full pages written on their own");
            let (cols, chunks) = c.take_cluster(&mut out).unwrap_or_else(|e| panic!("{e}"));
            assert!(chunks.is_empty());
            let pos: Vec<PagePosition> = cols[0].pages.iter().map(|p| p.position).collect();
            let at: &[u64] = if merging { &[1000, 1000, 2000] } else { &[1000, 2000, 3000] };
            assert_eq!(pos, at.iter().map(|&a| PagePosition::FileOffset(a)).collect::<Vec<_>>());
        }
    }

    #[test]
    fn first_pages_fit_a_budget_and_are_freed_after_the_last_cluster() {
        let opts = WriteOptions::default();
        let floats = |n: usize| (0..n).map(|_| Column::new(ColumnType::SplitReal32, <f32 as BufElement>::empty_buf())).collect::<Vec<_>>();
        let room = |c: &Columns| c.cols.iter().map(|c| c.buf.capacity_bytes()).collect::<Vec<_>>();
        // A few columns: each has room for the initial page.
        let few = Columns::new(floats(10), &opts, false, true);
        assert!(room(&few).iter().all(|&b| b == opts.initial_unzipped_page_size as usize), "{:?}", room(&few));
        // 100,000 columns: together within the budget, each with room for a value at least.
        let mut many = Columns::new(floats(100_000), &opts, false, true);
        let r = room(&many);
        assert!(r.iter().sum::<usize>() <= FIRST_PAGES_BUDGET as usize && r.iter().all(|&b| b >= 4), "{} bytes", r.iter().sum::<usize>());
        // The template's columns (never filled) get nothing.
        let template = Columns::new(floats(10), &opts, false, false);
        assert_eq!(room(&template), [0; 10]);
        // After the last cluster, the buffers are freed.
        let mut out = Pages::default();
        many.extend(7, &[1.0f32; 3][..], &mut out).unwrap_or_else(|e| panic!("{e}"));
        many.take_cluster(&mut out).unwrap_or_else(|e| panic!("{e}"));
        many.release_buffers();
        assert_eq!(room(&many).iter().sum::<usize>(), 0);
        assert!(many.pooled().is_empty());
    }
}
