//! The first and last bytes of a remote file, read once when it is opened (one request for both
//! where the protocol allows): ROOT's file header, the keys list, the RNTuple's anchor, footer and
//! page lists, and the StreamerInfo record usually lie there, so that opening takes few round trips.
//! Shared by the HTTP/S3 and XRootD sources.

use crate::storage::local::source::ReadAt;
use crate::error::Result;

/// Bytes read at the start of a remote file when it is opened (the TFile header, the RNTuple
/// header envelope of small files).
pub(crate) const HEAD_BYTES: u64 = 64 << 10;
/// Bytes read at the end of a remote file when it is opened (keys list, anchor, footer, page
/// lists, streamer info of files written by ROOT and by this project).
pub(crate) const TAIL_BYTES: u64 = 256 << 10;

/// The head and tail of a file of `len` bytes, held in memory.
#[derive(Default)]
pub(crate) struct Edges {
    head: Vec<u8>,
    tail: Vec<u8>,
    len: u64,
}

impl Edges {
    /// Reads the head and the tail of `src` with one `read_ranges` call (before `src` holds any).
    pub(crate) fn load(src: &dyn ReadAt) -> Result<Edges> {
        let len = src.len();
        let head = 0..len.min(HEAD_BYTES);
        let tail = len.saturating_sub(TAIL_BYTES).max(head.end)..len;
        let mut parts = vec![Vec::new(), Vec::new()];
        src.read_ranges(&[head, tail], &mut |i, v| {
            if let Some(p) = parts.get_mut(i) {
                *p = v;
            }
            Ok(())
        })?;
        let tail = parts.pop().unwrap_or_default();
        let head = parts.pop().unwrap_or_default();
        Ok(Edges { head, tail, len })
    }

    /// The bytes `[offset, offset + len)` when the head or the tail holds them.
    pub(crate) fn get(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let end = offset.checked_add(len)?;
        if end <= self.head.len() as u64 {
            return self.head.get(offset as usize..end as usize);
        }
        let tail_start = self.len.checked_sub(self.tail.len() as u64)?;
        if offset >= tail_start && end <= self.len {
            return self.tail.get((offset - tail_start) as usize..(end - tail_start) as usize);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::local::source::MemSource;
    use std::sync::Arc;

    #[test]
    fn head_and_tail_serve_what_they_hold_and_nothing_else() {
        let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        let e = Edges::load(&MemSource(Arc::new(bytes.clone()))).unwrap();
        assert_eq!(e.get(10, 5), Some(&bytes[10..15]));
        assert_eq!(e.get(999_990, 10), Some(&bytes[999_990..]));
        assert_eq!(e.get(HEAD_BYTES - 1, 2), None); // across the end of the head
        assert_eq!(e.get(500_000, 1), None); // in the middle
        assert_eq!(e.get(999_999, 2), None); // beyond the end
        let small = Edges::load(&MemSource(Arc::new(vec![7u8; 100]))).unwrap();
        assert_eq!(small.get(0, 100), Some(&[7u8; 100][..]));
    }
}
