//! Positioned writes of reserved byte ranges: step 2 of the sink (see [`crate::write::sink`]),
//! which any thread runs outside the writers' locks. A [`Placement`] is the keys reserved for a
//! cluster's payloads; [`write_placement`] writes them through a [`WriteTarget`] (a handle of its
//! own on the file, or its `O_DIRECT` twin) in vectored `pwritev` calls.

use crate::error::{Error, Result};
use crate::storage::key_plan::{KeyPlan, Piece};
use crate::storage::tfile_write::{BlobSlot, BLOB_KEY_LEN};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Alignment of keys and writes with direct I/O.
pub const DIRECT_IO_ALIGN: u64 = 4096;

/// Reserved keys and the payloads they will hold.
pub struct Placement {
    plan: KeyPlan,
    slots: Vec<BlobSlot>,
}

impl Placement {
    /// The keys `slots` reserved for the payloads laid out by `plan`.
    pub(crate) fn new(plan: KeyPlan, slots: Vec<BlobSlot>) -> Placement {
        Placement { plan, slots }
    }

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

impl WriteTarget {
    /// A target writing through `file` (opened with `O_DIRECT` when `direct`), named `path` in
    /// messages; with `preallocate` each slot is allocated with `fallocate` first.
    pub(crate) fn new(file: File, path: String, direct: bool, preallocate: bool) -> WriteTarget {
        WriteTarget { file, path, direct, preallocate }
    }
}

/// Opens `path` for writing with `O_DIRECT`.
pub(crate) fn open_direct(path: &Path) -> Result<File> {
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
