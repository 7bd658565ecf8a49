//! Same-page merging, as ROOT 6.40's `RNTupleWriteOptions::SetEnableSamePageMerging` (on by
//! default): within one cluster, a sealed page whose stored bytes equal those of an earlier page
//! of the cluster (of any column) is not stored again; its locator points at the first copy. The
//! offset columns of a collection's many `std::vector` members (NanoAOD's `Muon_pt`, `Muon_eta`, …)
//! are such pages. As in ROOT, it needs page checksums: the page's XXH3 checksum (its last 8
//! bytes, computed when it was sealed) is the hash, and equal checksums are confirmed byte by byte;
//! only the first page of each checksum is a candidate (a collision of checksums of different
//! pages keeps both). A buffered cluster is merged when it is sealed ([`SealedCluster::merge_same_pages`]);
//! pages written on their own as they fill ([`WrittenPages`]: unbuffered mode, the sequential
//! writer's streamed pages) are compared with copies of the cluster's earlier written pages, kept
//! up to [`WrittenPages::MAX_BYTES`].

use crate::write::cluster::sealed::{PagePosition, SealedCluster};
use std::collections::HashMap;

/// The first chunk of each page checksum seen in one cluster.
#[derive(Debug, Default)]
pub(crate) struct SamePages {
    first: HashMap<u64, usize>,
}

impl SamePages {
    /// The index of a chunk of `chunks` whose bytes equal `bytes` (a sealed page with its
    /// trailing checksum), if an earlier one was registered; otherwise `bytes` is registered as
    /// the chunk `index` (when no page of its checksum was) and `None` is returned.
    pub fn find_or_insert(&mut self, chunks: &[Vec<u8>], bytes: &[u8], index: usize) -> Option<usize> {
        let sum = checksum_of(bytes)?;
        match self.first.get(&sum) {
            Some(&i) => chunks.get(i).filter(|c| c.as_slice() == bytes).map(|_| i),
            None => {
                self.first.insert(sum, index);
                None
            }
        }
    }
}

/// The pages of the current cluster written one by one: a copy of each (up to
/// [`WrittenPages::MAX_BYTES`] in all) and its file offset, so that an equal page later in the
/// cluster is not written again but points at the first copy.
#[derive(Debug, Default)]
pub(crate) struct WrittenPages {
    same: SamePages,
    copies: Vec<Vec<u8>>,
    offsets: Vec<u64>,
    bytes: usize,
}

impl WrittenPages {
    /// Bytes of page copies kept per cluster at most (pages written after that are not
    /// compared; equal offset pages of a collection's members are sealed close together).
    pub const MAX_BYTES: usize = 16 << 20;

    /// The file offset of an earlier written page of the cluster equal to `bytes`.
    pub fn find(&self, bytes: &[u8]) -> Option<u64> {
        let i = *self.same.first.get(&checksum_of(bytes)?)?;
        self.copies.get(i).filter(|c| c.as_slice() == bytes).and(self.offsets.get(i).copied())
    }

    /// Keeps a copy of a page just written at `at` (unless the budget is spent or a page of its
    /// checksum is kept already).
    pub fn remember(&mut self, bytes: &[u8], at: u64) {
        let Some(sum) = checksum_of(bytes) else { return };
        if self.bytes + bytes.len() > Self::MAX_BYTES || self.same.first.contains_key(&sum) {
            return;
        }
        self.same.first.insert(sum, self.copies.len());
        self.copies.push(bytes.to_vec());
        self.offsets.push(at);
        self.bytes += bytes.len();
    }

    /// Forgets the cluster's pages (at its end).
    pub fn clear(&mut self) {
        *self = WrittenPages::default();
    }
}

/// The trailing 8-byte checksum of a sealed page (`None` for a page shorter than that).
fn checksum_of(bytes: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = bytes.get(bytes.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_le_bytes(tail))
}

impl SealedCluster {
    /// Stores each distinct page of the cluster once: a chunk equal to an earlier chunk is
    /// dropped and the pages positioned on it point at the earlier one. Only for a cluster with
    /// page checksums whose pages are all still chunks (not written one by one); otherwise
    /// nothing changes. Returns the dropped chunks' buffers (for reuse). O(pages) hash lookups,
    /// plus one byte comparison per duplicate.
    pub fn merge_same_pages(&mut self) -> Vec<Vec<u8>> {
        if !self.checksums || self.chunks.len() < 2 || !self.is_relocatable() {
            return Vec::new();
        }
        let old = std::mem::take(&mut self.chunks);
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(old.len());
        let mut dropped = Vec::new();
        // The new index of each old chunk.
        let mut remap = Vec::with_capacity(old.len());
        let mut same = SamePages::default();
        for chunk in old {
            match same.find_or_insert(&kept, &chunk, kept.len()) {
                Some(i) => {
                    remap.push(i);
                    dropped.push(chunk);
                }
                None => {
                    remap.push(kept.len());
                    kept.push(chunk);
                }
            }
        }
        self.chunks = kept;
        if !dropped.is_empty() {
            for p in self.columns.iter_mut().flat_map(|c| &mut c.pages) {
                if let PagePosition::Chunk(i) = p.position
                    && let Some(&to) = remap.get(i)
                {
                    p.position = PagePosition::Chunk(to);
                }
            }
        }
        dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::cluster::sealed::{SealedColumn, SealedPage};

    fn page(body: &[u8]) -> Vec<u8> {
        let mut b = body.to_vec();
        b.extend_from_slice(&crate::format::checksum::xxh3(body).to_le_bytes());
        b
    }

    fn cluster(chunks: Vec<Vec<u8>>, checksums: bool) -> SealedCluster {
        let pages = (0..chunks.len()).map(|i| SealedPage { n_elements: 1, stored: chunks[i].len() as u64 - 8, position: PagePosition::Chunk(i) }).collect();
        SealedCluster { n_entries: 1, columns: vec![SealedColumn { n_elements: chunks.len() as u64, pages }], chunks, compression: 0, checksums }
    }

    fn positions(c: &SealedCluster) -> Vec<usize> {
        c.columns[0].pages.iter().map(|p| if let PagePosition::Chunk(i) = p.position { i } else { usize::MAX }).collect()
    }

    #[test]
    fn equal_pages_are_stored_once_and_share_the_first_copy() {
        let mut c = cluster(vec![page(b"aaaa"), page(b"bbbb"), page(b"aaaa"), page(b"cc"), page(b"bbbb"), page(b"aaaa")], true);
        let dropped = c.merge_same_pages();
        assert_eq!(dropped.len(), 3);
        assert_eq!(c.chunks, vec![page(b"aaaa"), page(b"bbbb"), page(b"cc")]);
        assert_eq!(positions(&c), [0, 1, 0, 2, 1, 0]);
    }

    #[test]
    fn a_checksum_collision_keeps_both_pages() {
        // Two different pages that carry the same (forged) checksum.
        let mut forged = b"zzzz".to_vec();
        forged.extend_from_slice(&page(b"aaaa")[4..]);
        let mut c = cluster(vec![page(b"aaaa"), forged.clone(), page(b"aaaa")], true);
        c.merge_same_pages();
        assert_eq!(c.chunks, vec![page(b"aaaa"), forged]);
        assert_eq!(positions(&c), [0, 1, 0]);
    }

    #[test]
    fn written_pages_are_found_by_their_bytes() {
        let mut w = WrittenPages::default();
        assert_eq!(w.find(&page(b"aaaa")), None);
        w.remember(&page(b"aaaa"), 100);
        w.remember(&page(b"bbbb"), 200);
        assert_eq!((w.find(&page(b"aaaa")), w.find(&page(b"bbbb")), w.find(&page(b"cccc"))), (Some(100), Some(200), None));
        let mut forged = b"zzzz".to_vec();
        forged.extend_from_slice(&page(b"aaaa")[4..]);
        assert_eq!(w.find(&forged), None, "an equal checksum alone is no match");
        w.clear();
        assert_eq!(w.find(&page(b"aaaa")), None);
    }

    #[test]
    fn nothing_is_merged_without_checksums_or_once_written() {
        let mut c = cluster(vec![page(b"aaaa"), page(b"aaaa")], false);
        assert!(c.merge_same_pages().is_empty());
        assert_eq!(c.chunks.len(), 2);
        let mut c = cluster(vec![page(b"aaaa"), page(b"aaaa")], true);
        c.columns[0].pages[1].position = PagePosition::FileOffset(100);
        assert!(c.merge_same_pages().is_empty());
    }
}
