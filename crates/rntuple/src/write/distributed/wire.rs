//! The bytes ranks exchange: a sealed cluster's metadata (and, for the `send-data` strategy, its
//! pages), and the list of clusters a rank placed, gathered by rank 0 at the commit. Pure
//! encoding: little-endian u64 words, no I/O. The bytes come from other processes of the same
//! program but are still decoded as untrusted: counts are checked against the bytes left, and
//! errors say what and where.
//!
//! ```text
//! cluster  := n_entries compression checksums n_columns column* n_chunks chunk_len* chunk_bytes
//! column   := n_elements n_pages page*
//! page     := n_elements stored kind position        (kind 0: chunk index, 1: file offset)
//! placed   := start reserved cluster                  (a cluster without chunks)
//! list     := n placed*
//! ```

use crate::error::{Error, Result};
use crate::write::cluster::sealed::{PagePosition, SealedCluster, SealedColumn, SealedPage};

/// A cluster a rank wrote into the shared file: the byte range it reserved and its pages, each
/// at its absolute file offset.
#[derive(Debug)]
pub struct PlacedCluster {
    /// Offset of the reserved range (its first key).
    pub start: u64,
    /// Bytes reserved (keys and padding).
    pub reserved: u64,
    pub(crate) cluster: SealedCluster,
}

impl PlacedCluster {
    /// Entries in the cluster.
    pub fn n_entries(&self) -> u64 {
        self.cluster.n_entries
    }
}

fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends a sealed cluster: its metadata, then (when it still holds them) its chunks.
pub(crate) fn encode_cluster(c: &SealedCluster, out: &mut Vec<u8>) {
    put(out, c.n_entries);
    put(out, c.compression as u64);
    put(out, c.checksums as u64);
    put(out, c.columns.len() as u64);
    for col in &c.columns {
        put(out, col.n_elements);
        put(out, col.pages.len() as u64);
        for p in &col.pages {
            put(out, p.n_elements as u64);
            put(out, p.stored);
            match p.position {
                PagePosition::Chunk(i) => {
                    put(out, 0);
                    put(out, i as u64);
                }
                PagePosition::FileOffset(at) => {
                    put(out, 1);
                    put(out, at);
                }
            }
        }
    }
    put(out, c.chunks.len() as u64);
    for ch in &c.chunks {
        put(out, ch.len() as u64);
    }
    for ch in &c.chunks {
        out.extend_from_slice(ch);
    }
}

/// Encodes the clusters a rank placed, for the gather at the commit.
pub fn encode_placed(list: &[PlacedCluster]) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, list.len() as u64);
    for p in list {
        put(&mut out, p.start);
        put(&mut out, p.reserved);
        encode_cluster(&p.cluster, &mut out);
    }
    out
}

/// Reads the words of an encoding; `what` names the message in errors.
pub(crate) struct Words<'a> {
    b: &'a [u8],
    at: usize,
    what: &'a str,
}

impl<'a> Words<'a> {
    pub(crate) fn new(b: &'a [u8], what: &'a str) -> Words<'a> {
        Words { b, at: 0, what }
    }

    fn bad(&self, why: impl std::fmt::Display) -> Error {
        Error::Invalid(format!("{}: {why} (at byte {} of {})", self.what, self.at, self.b.len()))
    }

    fn u64(&mut self, name: &str) -> Result<u64> {
        let w = self.b.get(self.at..self.at + 8).ok_or_else(|| self.bad(format_args!("truncated before {name}")))?;
        self.at += 8;
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        Ok(u64::from_le_bytes(a))
    }

    /// A count of items of at least `item_bytes` bytes each, checked against the bytes left.
    fn count(&mut self, name: &str, item_bytes: usize) -> Result<usize> {
        let n = self.u64(name)?;
        let left = (self.b.len() - self.at) / item_bytes.max(1);
        usize::try_from(n).ok().filter(|&n| n <= left).ok_or_else(|| self.bad(format_args!("{n} {name} do not fit in the {left} words left")))
    }

    fn bytes(&mut self, n: u64, name: &str) -> Result<&'a [u8]> {
        let end = usize::try_from(n).ok().and_then(|n| self.at.checked_add(n)).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| self.bad(format_args!("{name} of {n} bytes is past the end")))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    pub(crate) fn done(&self) -> Result<()> {
        if self.at != self.b.len() {
            return Err(self.bad(format_args!("{} bytes left over", self.b.len() - self.at)));
        }
        Ok(())
    }

    /// A sealed cluster (see [`encode_cluster`]).
    pub(crate) fn cluster(&mut self) -> Result<SealedCluster> {
        let n_entries = self.u64("the entry count")?;
        let compression = u32::try_from(self.u64("the compression")?).map_err(|_| self.bad("compression settings beyond 32 bits"))?;
        let checksums = match self.u64("the checksum flag")? {
            0 => false,
            1 => true,
            v => return Err(self.bad(format_args!("checksum flag {v}"))),
        };
        let n_cols = self.count("columns", 16)?;
        let mut columns = Vec::with_capacity(n_cols);
        for _ in 0..n_cols {
            let n_elements = self.u64("a column's element count")?;
            let n_pages = self.count("pages", 32)?;
            let mut pages = Vec::with_capacity(n_pages);
            for _ in 0..n_pages {
                let n = u32::try_from(self.u64("a page's element count")?).map_err(|_| self.bad("a page of more than 2^32 elements"))?;
                let stored = self.u64("a page's size")?;
                let position = match self.u64("a page's position kind")? {
                    0 => PagePosition::Chunk(usize::try_from(self.u64("a chunk index")?).map_err(|_| self.bad("chunk index"))?),
                    1 => PagePosition::FileOffset(self.u64("a page offset")?),
                    k => return Err(self.bad(format_args!("page position kind {k}"))),
                };
                pages.push(SealedPage { n_elements: n, stored, position });
            }
            columns.push(SealedColumn { n_elements, pages });
        }
        let n_chunks = self.count("chunks", 8)?;
        let mut lens = Vec::with_capacity(n_chunks);
        for _ in 0..n_chunks {
            lens.push(self.u64("a chunk length")?);
        }
        let mut chunks = Vec::with_capacity(n_chunks);
        for (i, len) in lens.into_iter().enumerate() {
            chunks.push(self.bytes(len, &format!("chunk {i}"))?.to_vec());
        }
        for p in columns.iter().flat_map(|c| &c.pages) {
            if let PagePosition::Chunk(i) = p.position
                && i >= chunks.len()
            {
                return Err(self.bad(format_args!("a page in chunk {i} of a cluster of {} chunks", chunks.len())));
            }
        }
        Ok(SealedCluster { n_entries, chunks, columns, compression, checksums })
    }
}

/// Decodes one rank's list of placed clusters (see [`encode_placed`]); `what` names the rank in
/// errors.
pub fn decode_placed(b: &[u8], what: &str) -> Result<Vec<PlacedCluster>> {
    let mut w = Words::new(b, what);
    let n = w.count("clusters", 48)?;
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        let start = w.u64("a cluster's start")?;
        let reserved = w.u64("a cluster's reserved length")?;
        let cluster = w.cluster()?;
        list.push(PlacedCluster { start, reserved, cluster });
    }
    w.done()?;
    Ok(list)
}

/// Decodes a cluster shipped whole to the aggregator (`send-data`).
pub(crate) fn decode_shipped(b: &[u8], what: &str) -> Result<SealedCluster> {
    let mut w = Words::new(b, what);
    let c = w.cluster()?;
    w.done()?;
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cluster() -> SealedCluster {
        SealedCluster {
            n_entries: 7,
            chunks: vec![vec![1, 2, 3], vec![], vec![9; 10]],
            columns: vec![
                SealedColumn { n_elements: 7, pages: vec![SealedPage { n_elements: 7, stored: 3, position: PagePosition::Chunk(0) }] },
                SealedColumn {
                    n_elements: 12,
                    pages: vec![
                        SealedPage { n_elements: 2, stored: 0, position: PagePosition::Chunk(1) },
                        SealedPage { n_elements: 10, stored: 10, position: PagePosition::FileOffset(4096) },
                    ],
                },
            ],
            compression: 505,
            checksums: true,
        }
    }

    #[test]
    fn a_shipped_cluster_round_trips() {
        let mut b = Vec::new();
        encode_cluster(&cluster(), &mut b);
        let c = decode_shipped(&b, "test").unwrap();
        assert_eq!((c.n_entries, c.compression, c.checksums), (7, 505, true));
        assert_eq!(c.chunks, cluster().chunks);
        assert_eq!(c.columns[1].pages[1].position, PagePosition::FileOffset(4096));
        assert_eq!(c.columns[1].n_elements, 12);
    }

    #[test]
    fn a_placed_list_round_trips() {
        let mut c = cluster();
        c.chunks.clear();
        for p in c.columns.iter_mut().flat_map(|c| &mut c.pages) {
            p.position = PagePosition::FileOffset(8192);
        }
        let list = vec![PlacedCluster { start: 8192, reserved: 4096, cluster: c }];
        let got = decode_placed(&encode_placed(&list), "rank 1").unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].start, got[0].reserved, got[0].n_entries()), (8192, 4096, 7));
    }

    #[test]
    fn truncated_and_lying_inputs_are_errors_naming_the_sender() {
        let mut b = Vec::new();
        encode_cluster(&cluster(), &mut b);
        for cut in [0, 7, 8, 40, b.len() - 1] {
            let e = decode_shipped(&b[..cut], "rank 3").unwrap_err().to_string();
            assert!(e.contains("rank 3"), "{e}");
        }
        // A column count far beyond the bytes: refused before allocating.
        let mut lie = b.clone();
        lie[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
        let e = decode_shipped(&lie, "rank 3").unwrap_err().to_string();
        assert!(e.contains("columns do not fit"), "{e}");
        // A page pointing past the chunks.
        let mut c = cluster();
        c.columns[0].pages[0].position = PagePosition::Chunk(5);
        let mut b = Vec::new();
        encode_cluster(&c, &mut b);
        assert!(decode_shipped(&b, "rank 3").unwrap_err().to_string().contains("chunk 5"));
        let mut extra = encode_placed(&[]);
        extra.push(0);
        assert!(decode_placed(&extra, "rank 2").unwrap_err().to_string().contains("left over"));
    }
}
