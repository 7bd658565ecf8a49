//! Positioned writes of reserved byte ranges: step 2 of the sink (see `write::sink`),
//! which any thread runs outside the writers' locks. A [`Placement`] is the keys reserved for a
//! cluster's payloads; [`write_placement`] writes them through a [`WriteTarget`] (a handle of its
//! own on the file, or its `O_DIRECT` twin) in vectored `pwritev` calls.

use crate::error::{Error, Result};
use crate::storage::container::key_plan::{KeyPlan, Piece};
use crate::storage::container::tfile_write::{blob_slot, BlobSlot, BLOB_KEY_LEN};
use crate::storage::local::file_io;
use crate::storage::local::upload_window::UploadWindow;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

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

    /// The keys for the payloads laid out by `plan`, placed back to back from `start` (aligned to
    /// `align`, each key padded to a multiple of it): what a distributed writer's rank computes
    /// itself once it was given `start` (pure layout, no I/O).
    pub fn at(plan: KeyPlan, start: u64, align: u64) -> Result<Placement> {
        let mut at = start;
        let mut slots = Vec::with_capacity(plan.keys.len());
        for k in &plan.keys {
            let slot = blob_slot(at, k.payload_len, k.payload_len, align)?;
            at += slot.total;
            slots.push(slot);
        }
        Ok(Placement { plan, slots })
    }

    /// Bytes the keys of `plan` take when each is padded to a multiple of `align`: the range to
    /// reserve for [`Placement::at`].
    pub fn reserved_len(plan: &KeyPlan, align: u64) -> u64 {
        plan.keys.iter().map(|k| (BLOB_KEY_LEN + k.payload_len).next_multiple_of(align.max(1))).sum()
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
    /// Largest single write in bytes (0: unbounded).
    max_write: u64,
    /// Where completed writes are recorded for a streaming upload (an S3 output).
    window: Option<Arc<UploadWindow>>,
}

impl WriteTarget {
    /// A target writing through `file` (opened with `O_DIRECT` when `direct`), named `path` in
    /// messages; with `preallocate` each slot is allocated with `fallocate` first.
    pub(crate) fn new(file: File, path: String, direct: bool, preallocate: bool) -> WriteTarget {
        WriteTarget { file, path, direct, preallocate, max_write: 4 << 20, window: None }
    }

    /// The same target, recording its completed writes in `window` (a streaming upload's).
    pub(crate) fn with_window(self, window: Option<Arc<UploadWindow>>) -> WriteTarget {
        WriteTarget { window, ..self }
    }

    /// Opens an existing file for positioned writes of reserved ranges (a distributed writer's
    /// rank opening the file rank 0 created), with `O_DIRECT` when `direct`, in writes of at most
    /// `max_write` bytes (0: unbounded; with direct I/O a multiple of 4096).
    pub fn open(path: &Path, direct: bool, max_write: u64) -> Result<WriteTarget> {
        if direct && !max_write.is_multiple_of(DIRECT_IO_ALIGN) {
            return Err(Error::Invalid(format!("a write block of {max_write} bytes with direct I/O: must be a multiple of {DIRECT_IO_ALIGN}")));
        }
        let file = if direct {
            open_direct(path)?
        } else {
            file_io::open_existing(path, false, 0).map_err(|e| Error::io(format!("opening {} for writing", path.display()), e))?
        };
        Ok(WriteTarget { file, path: path.display().to_string(), direct, preallocate: false, max_write, window: None })
    }
}

/// Opens `path` for writing with `O_DIRECT`.
pub(crate) fn open_direct(path: &Path) -> Result<File> {
    file_io::open_existing(path, false, libc::O_DIRECT).map_err(|e| {
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
        file_io::allocate(&t.file, slot.key_offset, slot.total);
    }
    let r = if t.direct {
        let mut buf = AlignedBuf::zeroed(slot.total as usize, DIRECT_IO_ALIGN as usize)?;
        let out = buf.as_mut_slice();
        let mut at = 0;
        for piece in std::iter::once(slot.key.as_slice()).chain(chunks.iter().map(|c| c.as_ref())) {
            out[at..at + piece.len()].copy_from_slice(piece);
            at += piece.len();
        }
        let block = if t.max_write > 0 { t.max_write as usize } else { out.len() };
        out.chunks(block.max(1)).enumerate().try_for_each(|(i, b)| file_io::write_at(&t.file, b, slot.key_offset + (i * block) as u64))
    } else {
        let mut pieces: Vec<&[u8]> = Vec::with_capacity(chunks.len() + 1);
        pieces.push(&slot.key);
        pieces.extend(chunks.iter().map(|c| c.as_ref()).filter(|c| !c.is_empty()));
        if t.max_write > 0 && len > t.max_write {
            // Each block's writeback starts as soon as it is written.
            bounded_blocks(&pieces, t.max_write as usize, slot.key_offset).into_iter().try_for_each(|(at, block)| {
                file_io::write_vectored_at(&t.file, &block, slot.key_offset + at)?;
                file_io::start_writeback(&t.file, slot.key_offset + at, block.iter().map(|b| b.len() as u64).sum());
                Ok(())
            })
        } else {
            file_io::write_vectored_at(&t.file, &pieces, slot.key_offset).map(|_| file_io::start_writeback(&t.file, slot.key_offset, len))
        }
    };
    r.map_err(|e| Error::io(format!("writing {} bytes at offset {} of {}", slot.total, slot.key_offset, t.path), e))?;
    if let Some(w) = &t.window {
        w.record(slot.key_offset, slot.total);
    }
    Ok(())
}

/// Splits `pieces` (written back to back from file offset `start`) into blocks of at most `max`
/// bytes each that end at file offsets divisible by `max` (the first block is shorter when
/// `start` is not): (offset of the block from the first byte, its slices), for writes of bounded
/// size. Writes aligned so let the page cache hold the file in folios as large as the writes (2
/// MiB ones, mapped by single TLB entries when read through a mapping): a write that began a few
/// bytes past a boundary leaves the kernel only small folios up to the next 2 MiB boundary, half
/// of a file written in unaligned 4 MiB blocks (measured: 34 of 68 MB in 2 MiB folios).
fn bounded_blocks<'a>(pieces: &[&'a [u8]], max: usize, start: u64) -> Vec<(u64, Vec<&'a [u8]>)> {
    let max = max.max(1);
    let mut blocks: Vec<(u64, Vec<&'a [u8]>)> = Vec::new();
    // `room`: what the current block may still take; the first block's ends at a multiple of `max`.
    let (mut at, mut room) = (0u64, max - (start % max as u64) as usize);
    for p in pieces {
        let mut rest: &'a [u8] = p;
        while !rest.is_empty() {
            if room == 0 || blocks.is_empty() {
                if room == 0 {
                    room = max;
                }
                blocks.push((at, Vec::new()));
            }
            let n = rest.len().min(room);
            let (head, tail) = rest.split_at(n);
            if let Some((_, b)) = blocks.last_mut() {
                b.push(head);
            }
            room -= n;
            at += n as u64;
            rest = tail;
        }
    }
    blocks
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
    fn bounded_blocks_cover_the_pieces_in_order() {
        let a = [1u8; 5];
        let b = [2u8; 7];
        let c = [3u8; 2];
        // From an aligned offset: blocks of 4; from offset 9: a first block of 3 (to offset 12), then
        // blocks ending at 16, 20, 24.
        for (start, want_starts, want_lens) in [(8u64, vec![0u64, 4, 8, 12], vec![4usize, 4, 4, 2]), (9, vec![0, 3, 7, 11], vec![3, 4, 4, 3])] {
            let blocks = bounded_blocks(&[&a, &b, &c], 4, start);
            let starts: Vec<u64> = blocks.iter().map(|(at, _)| *at).collect();
            assert_eq!(starts, want_starts, "from {start}");
            let lens: Vec<usize> = blocks.iter().map(|(_, p)| p.iter().map(|x| x.len()).sum()).collect();
            assert_eq!(lens, want_lens, "from {start}");
            assert!(blocks.iter().skip(1).all(|(at, _)| (start + at) % 4 == 0), "every block after the first starts at a multiple of 4");
            let joined: Vec<u8> = blocks.iter().flat_map(|(_, p)| p.iter().flat_map(|x| x.iter().copied())).collect();
            assert_eq!(joined, [&a[..], &b[..], &c[..]].concat());
        }
        // Pieces ending exactly at a boundary open no empty block.
        let blocks = bounded_blocks(&[&a[..3], &b[..4]], 4, 1);
        assert_eq!(blocks.iter().map(|(at, p)| (*at, p.iter().map(|x| x.len()).sum::<usize>())).collect::<Vec<_>>(), [(0, 3), (3, 4)]);
    }

    #[test]
    fn placement_at_pads_every_key_to_the_alignment() {
        let plan = KeyPlan::new(&[100, 5000, 3000], 4096).unwrap();
        let len = Placement::reserved_len(&plan, 4096);
        let p = Placement::at(plan, 8192, 4096).unwrap();
        assert_eq!(p.total(), len);
        assert!(p.slots.iter().all(|s| s.key_offset % 4096 == 0 && s.total % 4096 == 0));
        assert_eq!(p.slots[0].key_offset, 8192);
        assert!(Placement::at(KeyPlan::new(&[10], 0).unwrap(), 100, 4096).is_err(), "an unaligned start is refused");
    }
}
