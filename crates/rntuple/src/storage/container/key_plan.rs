//! Laying payloads out in RBlob keys of at most `max_key_size` bytes, as ROOT does (its
//! `RNTupleWriteOptions` "MaxKeySize", 1 GiB by default, recorded in the anchor).
//!
//! Consecutive payloads (the pages of a cluster) share a key as long as the key stays within the
//! limit. A payload larger than the limit is split over several keys: the first key holds
//! `max_key_size - 8 * (n - 1)` bytes of it followed by the little-endian file offsets of the data
//! of the other `n - 1` chunks, which hold up to `max_key_size` bytes each; its locator points at
//! the first chunk with the payload's total size (see `storage::container::tfile::read_blob`, the reading
//! side). The plan is pure arithmetic: the caller reserves the keys (consecutively), then writes
//! their pieces.
//!
//! ```
//! use rntuple::storage::container::key_plan::{KeyPlan, Piece};
//! // Three pages of 40, 50 and 300 bytes with keys of at most 100 bytes.
//! let plan = KeyPlan::new(&[40, 50, 300], 100)?;
//! // Key 0 holds the first two pages; the third is split into a first chunk (76 bytes and a
//! // table of 3 offsets) and chunks of 100, 100 and 24 bytes.
//! let lens: Vec<u64> = plan.keys.iter().map(|k| k.payload_len).collect();
//! assert_eq!(lens, [90, 100, 100, 100, 24]);
//! assert_eq!(plan.keys[1].pieces, [Piece::Data { item: 2, start: 0, len: 76 }, Piece::ChunkTable { item: 2 }]);
//! assert_eq!(plan.item_start, [(0, 0), (0, 40), (1, 0)]);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};

/// What a key's payload is made of, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// `len` bytes of payload `item` from byte `start`.
    Data {
        /// Index of the payload.
        item: usize,
        /// First byte of the payload in this piece.
        start: u64,
        /// Bytes in this piece.
        len: u64,
    },
    /// The offsets (little-endian u64) of the chunks after the first of the split payload `item`.
    ChunkTable {
        /// Index of the split payload.
        item: usize,
    },
}

/// One RBlob key of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyLayout {
    /// Bytes of the key's payload (without its header).
    pub payload_len: u64,
    /// What the payload is made of, in order.
    pub pieces: Vec<Piece>,
}

/// Where a list of payloads goes, key by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPlan {
    /// The keys, in file order (reserved back to back).
    pub keys: Vec<KeyLayout>,
    /// For each payload: the key holding its (first) bytes and their offset in that key's payload.
    pub item_start: Vec<(usize, u64)>,
    /// For each split payload: the keys of its chunks after the first, in order.
    pub chunk_keys: Vec<(usize, Vec<usize>)>,
}

/// Number of chunks of a payload of `len > max_key` bytes, as ROOT and our reader count them.
fn n_chunks(len: u64, max_key: u64) -> u64 {
    let mut n = len.div_ceil(max_key);
    let tail = len % max_key;
    let slack = if tail > 0 { max_key - tail } else { 0 };
    if (n - 1) * 8 > slack {
        n += 1;
    }
    n
}

impl KeyPlan {
    /// Lays out payloads of the given lengths, in order, in keys of at most `max_key` bytes
    /// (`max_key` of 0 means no limit). A payload too large for the chunk table of its first key
    /// (more than about `max_key * max_key / 8` bytes) is an error.
    pub fn new(lens: &[u64], max_key: u64) -> Result<KeyPlan> {
        let limit = if max_key == 0 { u64::MAX } else { max_key };
        let mut plan = KeyPlan { keys: Vec::new(), item_start: Vec::with_capacity(lens.len()), chunk_keys: Vec::new() };
        let mut cur = KeyLayout { payload_len: 0, pieces: Vec::new() };
        for (item, &len) in lens.iter().enumerate() {
            if len <= limit {
                if !cur.pieces.is_empty() && cur.payload_len + len > limit {
                    plan.keys.push(std::mem::replace(&mut cur, KeyLayout { payload_len: 0, pieces: Vec::new() }));
                }
                plan.item_start.push((plan.keys.len(), cur.payload_len));
                cur.pieces.push(Piece::Data { item, start: 0, len });
                cur.payload_len += len;
                continue;
            }
            if !cur.pieces.is_empty() {
                plan.keys.push(std::mem::replace(&mut cur, KeyLayout { payload_len: 0, pieces: Vec::new() }));
            }
            let n = n_chunks(len, limit);
            if (n - 1).saturating_mul(8) >= limit {
                return Err(Error::Invalid(format!("a payload of {len} bytes cannot be split into keys of at most {limit} bytes (the chunk table would not fit its first key); raise the maximum key size")));
            }
            let first = limit - (n - 1) * 8;
            plan.item_start.push((plan.keys.len(), 0));
            plan.keys.push(KeyLayout { payload_len: limit, pieces: vec![Piece::Data { item, start: 0, len: first }, Piece::ChunkTable { item }] });
            let mut at = first;
            let mut rest = Vec::with_capacity(n as usize - 1);
            while at < len {
                let part = (len - at).min(limit);
                rest.push(plan.keys.len());
                plan.keys.push(KeyLayout { payload_len: part, pieces: vec![Piece::Data { item, start: at, len: part }] });
                at += part;
            }
            plan.chunk_keys.push((item, rest));
        }
        if !cur.pieces.is_empty() || plan.keys.is_empty() {
            plan.keys.push(cur);
        }
        Ok(plan)
    }

    /// Whether everything fits in one key (the common case).
    pub fn is_single_key(&self) -> bool {
        self.keys.len() == 1
    }

    /// File offsets of each payload, given the payload offset of every key.
    pub fn item_offsets(&self, key_payload_offsets: &[u64]) -> Vec<u64> {
        self.item_start.iter().map(|&(k, off)| key_payload_offsets.get(k).copied().unwrap_or(0) + off).collect()
    }

    /// The chunk table of split payload `item`: little-endian offsets of its later chunks.
    pub fn chunk_table(&self, item: usize, key_payload_offsets: &[u64]) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some((_, keys)) = self.chunk_keys.iter().find(|(i, _)| *i == item) {
            for &k in keys {
                out.extend_from_slice(&key_payload_offsets.get(k).copied().unwrap_or(0).to_le_bytes());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::local::source::ReadAt;

    struct Mem(Vec<u8>);
    impl ReadAt for Mem {
        fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> crate::Result<()> {
            let o = offset as usize;
            buf.copy_from_slice(&self.0[o..o + buf.len()]);
            Ok(())
        }
        fn len(&self) -> u64 {
            self.0.len() as u64
        }
    }

    /// Places the plan's keys back to back (with a fake 10-byte key header each) and checks that
    /// the reader's chunk logic gives every payload back.
    fn roundtrip(lens: &[u64], max_key: u64) {
        let payloads: Vec<Vec<u8>> = lens.iter().enumerate().map(|(i, &n)| (0..n).map(|b| (b as u8).wrapping_mul(31).wrapping_add(i as u8)).collect()).collect();
        let plan = KeyPlan::new(lens, max_key).unwrap();
        let mut offs = Vec::new();
        let mut at = 0u64;
        for k in &plan.keys {
            assert!(max_key == 0 || k.payload_len <= max_key, "key of {} bytes over {max_key}", k.payload_len);
            at += 10;
            offs.push(at);
            at += k.payload_len;
        }
        let mut file = vec![0xEEu8; at as usize];
        for (k, key) in plan.keys.iter().enumerate() {
            let mut w = offs[k] as usize;
            for p in &key.pieces {
                let bytes = match p {
                    Piece::Data { item, start, len } => payloads[*item][*start as usize..(*start + *len) as usize].to_vec(),
                    Piece::ChunkTable { item } => plan.chunk_table(*item, &offs),
                };
                file[w..w + bytes.len()].copy_from_slice(&bytes);
                w += bytes.len();
            }
            assert_eq!(w as u64, offs[k] + key.payload_len);
        }
        let src = Mem(file);
        for (i, off) in plan.item_offsets(&offs).into_iter().enumerate() {
            let got = crate::storage::container::tfile::read_blob(&src, off, lens[i], max_key, "payload").unwrap();
            assert_eq!(got, payloads[i], "payload {i} of {lens:?} with keys of {max_key}");
        }
    }

    #[test]
    fn payloads_read_back_through_the_reader_chunk_logic() {
        roundtrip(&[5, 6, 7], 100);
        roundtrip(&[100, 100, 1], 100);
        roundtrip(&[101], 100);
        roundtrip(&[200], 100); // no slack: one extra chunk for the table
        roundtrip(&[192, 3, 1000, 17, 99, 500], 256);
        roundtrip(&[100, 300, 60], 64);
        roundtrip(&[1 << 12], 256);
        roundtrip(&[1 << 20], 0);
        roundtrip(&[], 100);
        for len in 90..400 {
            roundtrip(&[len], 100);
        }
    }

    #[test]
    fn pages_share_keys_up_to_the_limit() {
        let plan = KeyPlan::new(&[60, 40, 1, 100, 50], 100).unwrap();
        let lens: Vec<u64> = plan.keys.iter().map(|k| k.payload_len).collect();
        assert_eq!(lens, [100, 1, 100, 50]);
        assert!(KeyPlan::new(&[1 << 40], 0).unwrap().is_single_key());
    }

    #[test]
    fn a_payload_whose_chunk_table_cannot_fit_is_refused() {
        let e = KeyPlan::new(&[1 << 12], 16).unwrap_err().to_string();
        assert!(e.contains("4096 bytes") && e.contains("at most 16 bytes"), "{e}");
    }
}
