//! The dataset sink: where sealed clusters become bytes in a ROOT file and entries in the
//! RNTuple's metadata. Three steps are kept apart, because the parallel writer runs only some of
//! them under its lock and a distributed writer would run them in different processes:
//!
//! 1. [`Dataset::reserve`]: hand out the byte range of a cluster's RBlob keys (usually one; more
//!    when the cluster is larger than the maximum key size) (for MPI: an aggregator, a one-sided
//!    atomic counter or a file lock would hand out the offset);
//! 2. [`write_placement`]: write the keys at that offset (positioned writes, from any thread);
//! 3. [`Dataset::append`]: append the cluster's descriptor, numbering its entries and column
//!    elements after those committed before.

use crate::error::{Error, Result};
use crate::format::anchor::Anchor;
use crate::format::compression;
use crate::format::cursor::Locator;
use crate::format::descriptor::*;
use crate::format::serialize;
use crate::storage::key_plan::{KeyPlan, Piece};
use crate::storage::output::OutputMode;
use crate::storage::tfile_write::{BlobSlot, RootFileWriter, BLOB_KEY_LEN};
use crate::write::options::WriteOptions;
use crate::write::sealed::{ClusterOut, SealedCluster};
use std::collections::BTreeSet;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Alignment of keys and writes with direct I/O.
pub const DIRECT_IO_ALIGN: u64 = 4096;

/// The RNTuple being written: its file, its schema, the clusters committed so far.
pub struct Dataset {
    file: Option<RootFileWriter>,
    /// A second handle opened with `O_DIRECT` when direct I/O is on.
    direct: Option<File>,
    name: String,
    /// The descriptor (schema; clusters go to `clusters`).
    pub desc: Descriptor,
    clusters: Vec<ClusterDescriptor>,
    /// First element of each column in the next cluster.
    col_first: Vec<u64>,
    /// Entries committed.
    pub n_entries: u64,
    header: (u64, u64, u64),
    opts: WriteOptions,
    /// Bytes written for clusters and pages (key headers and padding included).
    pub bytes_written: u64,
    /// Where the sequential writer writes its blobs (a handle made once, not per cluster).
    own_target: Option<WriteTarget>,
    /// Clusters already in a cluster group (listed by a checkpoint's page list).
    grouped: usize,
    /// Clusters appended whose bytes are not written yet (the parallel writer writes outside its
    /// lock): a checkpoint stops before the first of them.
    unwritten: BTreeSet<usize>,
    /// Checkpoints made (the one at creation included).
    checkpoints: u64,
}

impl Dataset {
    /// Creates the file and writes the RNTuple header of `desc` (whose schema is complete).
    pub fn create(path: impl AsRef<Path>, mut desc: Descriptor, opts: WriteOptions) -> Result<Dataset> {
        let path = path.as_ref();
        opts.validate()?;
        crate::format::names::check_name(&desc.name, "RNTuple")?;
        let (hb, sum) = serialize::header(&desc);
        desc.header_checksum = sum;
        let mut file = if opts.update_existing_file {
            let f = RootFileWriter::open_update(path, opts.compression)?;
            if f.had_key("ROOT::RNTuple", &desc.name) {
                return Err(Error::Invalid(format!("{} already holds an RNTuple '{}'", path.display(), desc.name)));
            }
            f
        } else {
            // A writer with checkpoints writes at the final path from its first checkpoint (made
            // below): its checkpoints are what a crash leaves behind. Any other writes under a
            // temporary name, renamed at the commit.
            let mode = if opts.checkpoint_clusters > 0 { OutputMode::Checkpointed } else { OutputMode::Atomic };
            RootFileWriter::create_with(path, opts.compression, mode)?
        };
        let mut z = Vec::new();
        compression::compress(&hb, opts.compression, &mut z)?;
        let off = file.write_payload(&z, hb.len() as u64, opts.max_key_size)?;
        let header = (off, z.len() as u64, hb.len() as u64);
        let direct = if opts.use_direct_io {
            file.align_end(DIRECT_IO_ALIGN)?;
            // The file as it is on disk now (its temporary name until the commit).
            Some(open_direct(file.temporary_path().unwrap_or(path))?)
        } else {
            None
        };
        let col_first = desc.columns.iter().map(|c| c.first_element).collect();
        let mut ds = Dataset {
            file: Some(file),
            direct,
            name: desc.name.clone(),
            desc,
            clusters: Vec::new(),
            col_first,
            n_entries: 0,
            header,
            opts,
            bytes_written: 0,
            own_target: None,
            grouped: 0,
            unwritten: BTreeSet::new(),
            checkpoints: 0,
        };
        ds.own_target = Some(ds.target()?);
        if ds.opts.checkpoint_clusters > 0 {
            // From the start the file reads as an RNTuple (of no entries yet).
            ds.checkpoint()?;
        }
        Ok(ds)
    }

    fn file(&mut self) -> Result<&mut RootFileWriter> {
        self.file.as_mut().ok_or_else(|| Error::Invalid("the RNTuple was committed already".into()))
    }

    /// Columns added to the schema after creation (late model extension) start at these
    /// elements.
    pub fn columns_added(&mut self) {
        for c in &self.desc.columns[self.col_first.len()..] {
            self.col_first.push(c.first_element);
        }
    }

    /// Step 1: reserves consecutive RBlob keys for the payloads laid out by `plan` (each key
    /// aligned and padded for direct I/O).
    pub fn reserve(&mut self, plan: KeyPlan) -> Result<Placement> {
        let align = if self.direct.is_some() { DIRECT_IO_ALIGN } else { 1 };
        let file = self.file()?;
        let slots = plan.keys.iter().map(|k| file.reserve_blob(k.payload_len, k.payload_len, align)).collect::<Result<Vec<_>>>()?;
        let placement = Placement { plan, slots };
        self.bytes_written += placement.total();
        Ok(placement)
    }

    /// The key layout of payloads of these lengths under this dataset's maximum key size.
    pub fn plan(&self, lens: &[u64]) -> Result<KeyPlan> {
        KeyPlan::new(lens, self.opts.max_key_size)
    }

    /// Where blobs are written: the file, or its `O_DIRECT` handle.
    pub fn target(&self) -> Result<WriteTarget> {
        let f = self.file.as_ref().ok_or_else(|| Error::Invalid("the RNTuple was committed already".into()))?;
        let file = match &self.direct {
            Some(d) => d.try_clone(),
            None => f.file().try_clone(),
        }
        .map_err(|e| Error::io(format!("duplicating the handle of {}", f.path()), e))?;
        Ok(WriteTarget { file, path: f.path().to_string(), direct: self.direct.is_some(), preallocate: self.opts.preallocate })
    }

    fn own_target(&self) -> Result<&WriteTarget> {
        self.own_target.as_ref().ok_or_else(|| Error::internal("no write target"))
    }

    /// Step 3: appends a placed cluster's metadata (`offsets`: the file offset of each of its
    /// chunks, empty for a cluster whose pages were written one by one); returns its first entry.
    pub fn append(&mut self, c: &SealedCluster, offsets: &[u64]) -> Result<u64> {
        let first = self.n_entries;
        self.append_placed(c, offsets, true)?;
        Ok(first)
    }

    /// [`Dataset::append`] for a cluster whose bytes may not be written yet (`written` false):
    /// no checkpoint includes it before [`Dataset::written`] says so. Returns its index.
    pub fn append_placed(&mut self, c: &SealedCluster, offsets: &[u64], written: bool) -> Result<usize> {
        if c.columns.len() != self.col_first.len() {
            return Err(Error::Internal(format!("a cluster of {} columns for a schema of {}", c.columns.len(), self.col_first.len())));
        }
        let first = self.n_entries;
        let d = c.describe(self.clusters.len(), first, &self.col_first, offsets)?;
        for (f, col) in self.col_first.iter_mut().zip(&c.columns) {
            *f += col.n_elements;
        }
        self.clusters.push(d);
        self.n_entries += c.n_entries;
        let id = self.clusters.len() - 1;
        if !written {
            self.unwritten.insert(id);
        }
        Ok(id)
    }

    /// The bytes of the clusters `ids` (from [`Dataset::append_placed`]) are written.
    pub fn written(&mut self, ids: &[usize]) {
        for id in ids {
            self.unwritten.remove(id);
        }
    }

    /// Clusters whose bytes are written, counted from the first: what a checkpoint can hold.
    fn written_prefix(&self) -> usize {
        self.unwritten.first().copied().unwrap_or(self.clusters.len())
    }

    /// Makes a checkpoint when `checkpoint_clusters` written clusters are not in one yet.
    pub fn maybe_checkpoint(&mut self) -> Result<()> {
        let k = self.opts.checkpoint_clusters;
        if k > 0 && !self.is_committed() && (self.written_prefix() - self.grouped) as u64 >= k {
            self.checkpoint()?;
        }
        Ok(())
    }

    /// A checkpoint: the written clusters not in a cluster group yet become one (its page list),
    /// then the footer (listing every group so far), the anchor and the file's records make the
    /// file on disk a complete ROOT file (see [`RootFileWriter::checkpoint`] for the order of the
    /// writes); later clusters go after it.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.write_envelopes(false)?;
        let direct = self.direct.is_some();
        let file = self.file()?;
        file.checkpoint()?;
        if direct {
            file.align_end(DIRECT_IO_ALIGN)?;
        }
        self.checkpoints += 1;
        Ok(())
    }

    /// Checkpoints made so far (with `checkpoint_clusters`, the one at creation included).
    pub fn checkpoints(&self) -> u64 {
        self.checkpoints
    }

    /// Writes the page list of the written clusters not in a group yet (as a new cluster group;
    /// at the `last` commit also an empty one when there is none), then the footer and anchor.
    fn write_envelopes(&mut self, last: bool) -> Result<()> {
        let upto = self.written_prefix();
        let c = self.opts.compression;
        let max_key = self.opts.max_key_size;
        if upto > self.grouped || (last && self.desc.cluster_groups.is_empty()) {
            let new = &self.clusters[self.grouped..upto];
            let pl = serialize::page_list(self.desc.header_checksum, new);
            let min_entry = new.first().map_or(0, |c| c.first_entry);
            let entry_span = new.iter().map(|c| c.n_entries).sum();
            let n_clusters = new.len() as u32;
            let mut z = Vec::new();
            compression::compress(&pl, c, &mut z)?;
            let off = self.file()?.write_payload(&z, pl.len() as u64, max_key)?;
            self.desc.cluster_groups.push(ClusterGroupDescriptor {
                min_entry,
                entry_span,
                n_clusters,
                page_list: EnvelopeLink { length: pl.len() as u64, locator: Locator { size: z.len() as u64, offset: off } },
            });
            self.grouped = upto;
        }
        let fb = serialize::footer(&self.desc);
        let mut z = Vec::new();
        compression::compress(&fb, c, &mut z)?;
        let foff = self.file()?.write_payload(&z, fb.len() as u64, max_key)?;
        let anchor = Anchor {
            epoch: 1,
            major: 0,
            minor: 0,
            patch: 1,
            seek_header: self.header.0,
            nbytes_header: self.header.1,
            len_header: self.header.2,
            seek_footer: foff,
            nbytes_footer: z.len() as u64,
            len_footer: fb.len() as u64,
            max_key_size: max_key,
        };
        let name = self.name.clone();
        self.file()?.write_anchor(&name, &anchor)
    }

    /// Commits the dataset: page list, footer, anchor, keys list, streamer info, free list and
    /// file header; syncs the file. Returns the file size.
    pub fn commit(&mut self) -> Result<u64> {
        if self.file.is_none() {
            return Err(Error::Invalid("the RNTuple was committed already".into()));
        }
        if let Some(id) = self.unwritten.first() {
            return Err(Error::Internal(format!("committing while cluster {id} is not written")));
        }
        self.write_envelopes(true)?;
        let file = self.file.take().ok_or_else(|| Error::Invalid("the RNTuple was committed already".into()))?;
        file.finish()
    }

    /// Drops the dataset without committing it: a new file written under a temporary name is
    /// removed (an existing file of that name stays as it was); a file with checkpoints keeps its
    /// last checkpoint; a file opened for update keeps its former records (what was appended
    /// after them is not listed).
    pub fn abort(&mut self) {
        self.file = None;
        self.own_target = None;
        self.direct = None;
    }

    /// Whether the dataset was committed.
    pub fn is_committed(&self) -> bool {
        self.file.is_none()
    }

    /// The RNTuple's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// The sequential writer places each cluster right away: reserve, write, append.
impl ClusterOut for Dataset {
    fn cluster(&mut self, c: &mut SealedCluster) -> Result<()> {
        if !c.is_relocatable() {
            // Unbuffered: the pages were written one by one; only the metadata is left.
            self.append(c, &[])?;
            return self.maybe_checkpoint();
        }
        let plan = self.plan(&c.chunk_lens())?;
        let placement = self.reserve(plan)?;
        write_placement(self.own_target()?, &placement, &c.chunks)?;
        self.append(c, &placement.offsets())?;
        self.maybe_checkpoint()
    }

    fn pages_as_they_fill(&self) -> bool {
        true
    }

    fn page(&mut self, bytes: &[u8]) -> Result<u64> {
        let plan = self.plan(&[bytes.len() as u64])?;
        let placement = self.reserve(plan)?;
        write_placement(self.own_target()?, &placement, &[bytes])?;
        Ok(placement.offsets()[0])
    }
}

/// Reserved keys and the payloads they will hold.
pub struct Placement {
    plan: KeyPlan,
    slots: Vec<BlobSlot>,
}

impl Placement {
    /// The file offset of each payload.
    pub fn offsets(&self) -> Vec<u64> {
        let key_offsets: Vec<u64> = self.slots.iter().map(|s| s.payload_offset).collect();
        self.plan.item_offsets(&key_offsets)
    }

    /// Bytes reserved (key headers and padding included).
    pub fn total(&self) -> u64 {
        self.slots.iter().map(|s| s.total).sum()
    }
}

/// Step 2 for a whole placement: writes every key of it with [`write_slot`]; `payloads` are the
/// placement's payloads in order.
pub fn write_placement<C: AsRef<[u8]>>(t: &WriteTarget, p: &Placement, payloads: &[C]) -> Result<()> {
    if p.plan.item_start.len() != payloads.len() {
        return Err(Error::Internal(format!("{} payloads for a placement of {}", payloads.len(), p.plan.item_start.len())));
    }
    if p.plan.is_single_key() && p.plan.chunk_keys.is_empty() {
        return write_slot(t, &p.slots[0], payloads);
    }
    let key_offsets: Vec<u64> = p.slots.iter().map(|s| s.payload_offset).collect();
    for (key, slot) in p.plan.keys.iter().zip(&p.slots) {
        let mut tables = Vec::new();
        for piece in &key.pieces {
            if let Piece::ChunkTable { item } = piece {
                tables.push(p.plan.chunk_table(*item, &key_offsets));
            }
        }
        let mut tables = tables.iter();
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(key.pieces.len());
        for piece in &key.pieces {
            match piece {
                Piece::Data { item, start, len } => {
                    let b = payloads[*item].as_ref();
                    let range = usize::try_from(*start).ok().zip(usize::try_from(start + len).ok()).and_then(|(a, z)| b.get(a..z));
                    pieces.push(range.ok_or_else(|| Error::Internal(format!("payload {item} has no bytes {start}..{}", start + len)))?);
                }
                Piece::ChunkTable { .. } => pieces.push(tables.next().map(|t| t.as_slice()).unwrap_or(&[])),
            }
        }
        write_slot(t, slot, &pieces)?;
    }
    Ok(())
}

/// A file handle for positioned writes of reserved ranges, usable outside the writer's lock.
pub struct WriteTarget {
    file: File,
    path: String,
    direct: bool,
    preallocate: bool,
}

fn open_direct(path: &Path) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).map_err(|e| {
        let why = if e.raw_os_error() == Some(libc::EINVAL) { " (the file system does not support O_DIRECT)" } else { "" };
        Error::io(format!("opening {} for direct I/O{why}", path.display()), e)
    })
}

/// Step 2: writes a blob into its reserved slot: the key header, then `chunks` back to back,
/// in vectored positioned writes (`pwritev`); with preallocation the range is first allocated
/// with `fallocate`; with direct I/O the bytes go through a page-aligned buffer padded to the
/// slot's (aligned) length.
pub fn write_slot<C: AsRef<[u8]>>(t: &WriteTarget, slot: &BlobSlot, chunks: &[C]) -> Result<()> {
    let len = BLOB_KEY_LEN + chunks.iter().map(|c| c.as_ref().len() as u64).sum::<u64>();
    if len > slot.total {
        return Err(Error::Internal(format!("{len} bytes for a slot of {}", slot.total)));
    }
    if t.preallocate {
        preallocate(&t.file, slot.key_offset, slot.total);
    }
    let r = if t.direct {
        let mut buf = AlignedBuf::zeroed(slot.total as usize, DIRECT_IO_ALIGN as usize)?;
        let out = buf.as_mut_slice();
        let mut at = 0;
        for piece in std::iter::once(slot.key.as_slice()).chain(chunks.iter().map(|c| c.as_ref())) {
            out[at..at + piece.len()].copy_from_slice(piece);
            at += piece.len();
        }
        t.file.write_all_at(out, slot.key_offset)
    } else {
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(chunks.len() + 1);
        pieces.push(&slot.key);
        pieces.extend(chunks.iter().map(|c| c.as_ref()).filter(|c| !c.is_empty()));
        pwritev_all(&t.file, &pieces, slot.key_offset).map(|_| start_writeback(&t.file, slot.key_offset, len))
    };
    r.map_err(|e| Error::io(format!("writing {} bytes at offset {} of {}", slot.total, slot.key_offset, t.path), e))
}

/// Starts writing a just-written range back to disk without waiting (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`), so that the disk works while the next cluster is compressed and the
/// final fsync finds little left to do. Best effort: devices and file systems without support are
/// left to the kernel's own writeback.
fn start_writeback(f: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: a system call on a valid open descriptor; no memory is passed.
    let _ = unsafe { libc::sync_file_range(f.as_raw_fd(), offset as libc::off64_t, len as libc::off64_t, libc::SYNC_FILE_RANGE_WRITE) };
}

/// Writes all `pieces` back to back at `offset` with `pwritev`, resuming after short writes.
fn pwritev_all(f: &File, pieces: &[&[u8]], mut offset: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // At most IOV_MAX (1024 on Linux) buffers per call.
    const MAX_IOV: usize = 1024;
    let mut idx = 0;
    let mut skip = 0usize; // bytes of pieces[idx] already written
    while idx < pieces.len() {
        let iov: Vec<libc::iovec> = pieces[idx..]
            .iter()
            .take(MAX_IOV)
            .enumerate()
            .map(|(k, p)| {
                let p = if k == 0 { &p[skip..] } else { p };
                libc::iovec { iov_base: p.as_ptr() as *mut libc::c_void, iov_len: p.len() }
            })
            .collect();
        // SAFETY: every iovec points into a live, borrowed slice of `pieces` with its exact length;
        // pwritev only reads from them. The descriptor is open for the lifetime of `f`.
        let n = unsafe { libc::pwritev(f.as_raw_fd(), iov.as_ptr(), iov.len() as libc::c_int, offset as libc::off_t) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "pwritev wrote nothing"));
        }
        let mut n = n as usize;
        offset += n as u64;
        while n > 0 && idx < pieces.len() {
            let left = pieces[idx].len() - skip;
            if n >= left {
                n -= left;
                idx += 1;
                skip = 0;
            } else {
                skip += n;
                n = 0;
            }
        }
    }
    Ok(())
}

/// Allocates a file range before writing it (`fallocate`); file systems and devices without
/// support (such as `/dev/null`) are written without.
fn preallocate(f: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on a valid open descriptor with in-range arguments; the result is only
    // inspected, no memory is touched.
    let _ = unsafe { libc::fallocate(f.as_raw_fd(), 0, offset as libc::off_t, len as libc::off_t) };
}

/// A zeroed heap buffer whose start is aligned (for `O_DIRECT`).
struct AlignedBuf {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}

impl AlignedBuf {
    fn zeroed(len: usize, align: usize) -> Result<AlignedBuf> {
        let layout = std::alloc::Layout::from_size_align(len.max(align), align)
            .map_err(|_| Error::Invalid(format!("bad buffer layout of {len} bytes aligned to {align}")))?;
        // SAFETY: the layout has a non-zero size (at least `align`).
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        let ptr = std::ptr::NonNull::new(p).ok_or_else(|| Error::Invalid(format!("out of memory for a {len}-byte write buffer")))?;
        Ok(AlignedBuf { ptr, layout })
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the allocation holds `layout.size()` initialized (zeroed) bytes owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `zeroed` with this layout and not freed before.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectored_write_of_more_pieces_than_iov_max() {
        let path = std::env::temp_dir().join(format!("rntuple-pwritev-{}.bin", std::process::id()));
        let f = File::create(&path).unwrap();
        let owned: Vec<Vec<u8>> = (0..3000u32).map(|i| vec![(i % 251) as u8; (i % 7) as usize + 1]).collect();
        let pieces: Vec<&[u8]> = owned.iter().map(|v| v.as_slice()).collect();
        pwritev_all(&f, &pieces, 10).unwrap();
        let got = std::fs::read(&path).unwrap();
        let mut want = vec![0u8; 10];
        want.extend(owned.concat());
        assert_eq!(got, want);
        std::fs::remove_file(path).ok();
    }
}
