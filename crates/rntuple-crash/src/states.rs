//! The crash states of a point of the record: which of the file's changes since its last sync a
//! crash kept (none, all, all but one, each prefix, random subsets, one of them torn at a 512- or
//! 4096-byte boundary with the old bytes, zeros or garbage after the tear, the others dropped or
//! kept), for each prefix of the name changes not yet durable.

use crate::model::{write_into, Change, FileState};

/// What a crash kept of the pending changes of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keep {
    /// Nothing since the last sync.
    None,
    /// Every change.
    All,
    /// Every change but the one at this index.
    AllBut(usize),
    /// The first n changes.
    Prefix(usize),
    /// The changes whose bit is set (a random subset).
    Subset(Vec<bool>),
    /// The changes before `index` kept, the write at `index` torn at file offset `at`, the rest
    /// after the tear `fill`ed; the changes after `index` kept when `rest`.
    Torn { index: usize, at: u64, fill: Fill, rest: bool },
}

/// What the bytes after a tear hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// What was there before (the write did not reach them).
    Old,
    /// Zeros.
    Zeros,
    /// Garbage.
    Garbage,
}

/// A crash state of one output at one point: how many pending name changes were kept, and what
/// of the named file's pending changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashState {
    /// Index of the last event made before the crash.
    pub point: usize,
    /// Pending name changes kept (a prefix).
    pub names_kept: usize,
    /// What of the file's pending changes was kept.
    pub keep: Keep,
}

/// A small deterministic generator (xorshift64*), for reproducible samples.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded (0 is replaced).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Offsets inside a write of `len` bytes at `offset` where a `sector`-sized tear can happen: the
/// first and last boundary and one chosen at random.
fn tears(offset: u64, len: u64, sector: u64, rng: &mut Rng) -> Vec<u64> {
    let first = (offset / sector + 1) * sector;
    let end = offset + len;
    if first >= end {
        return Vec::new();
    }
    let last = (end - 1) / sector * sector;
    let n = (last - first) / sector + 1;
    let mid = first + (rng.next_u64() % n) * sector;
    let mut v = vec![first, mid, last];
    v.sort_unstable();
    v.dedup();
    v
}

/// The states of a file with `pending` changes, for `names` prefixes of pending name changes
/// (1 when there are none), at `point`; `subsets` random subsets.
pub fn enumerate(point: usize, names: usize, pending: &[Change], subsets: usize, rng: &mut Rng) -> Vec<CrashState> {
    let mut keeps = vec![Keep::None];
    if !pending.is_empty() {
        keeps.push(Keep::All);
        for i in 0..pending.len() {
            if pending.len() > 1 {
                keeps.push(Keep::AllBut(i));
            }
            if i > 0 {
                keeps.push(Keep::Prefix(i));
            }
        }
        for _ in 0..subsets.min(1 << pending.len().min(16)) {
            keeps.push(Keep::Subset((0..pending.len()).map(|_| rng.next_u64() & 1 == 1).collect()));
        }
        for (index, c) in pending.iter().enumerate() {
            if let Change::Write { offset, bytes } = c {
                let mut ats = tears(*offset, bytes.len() as u64, 512, rng);
                ats.extend(tears(*offset, bytes.len() as u64, 4096, rng));
                ats.sort_unstable();
                ats.dedup();
                for at in ats {
                    for fill in [Fill::Old, Fill::Zeros, Fill::Garbage] {
                        for rest in [false, true] {
                            if rest && index + 1 == pending.len() {
                                continue;
                            }
                            keeps.push(Keep::Torn { index, at, fill, rest });
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    for names_kept in 0..names.max(1) {
        for keep in &keeps {
            out.push(CrashState { point, names_kept, keep: keep.clone() });
        }
    }
    out
}

/// The bytes of `f` after a crash that kept `keep` of its pending changes.
pub fn bytes_after(f: &FileState, keep: &Keep, seed: u64) -> Vec<u8> {
    let mut b = f.durable.clone();
    let kept = |i: usize| -> bool {
        match keep {
            Keep::None => false,
            Keep::All => true,
            Keep::AllBut(j) => i != *j,
            Keep::Prefix(n) => i < *n,
            Keep::Subset(bits) => bits.get(i).copied().unwrap_or(false),
            Keep::Torn { index, rest, .. } => i < *index || (*rest && i > *index),
        }
    };
    for (i, c) in f.pending.iter().enumerate() {
        if let (Keep::Torn { index, at, fill, .. }, Change::Write { offset, bytes }) = (keep, c)
            && i == *index
            && *offset < *at
            && *at < offset + bytes.len() as u64
        {
            let cut = (*at - offset) as usize;
            write_into(&mut b, *offset, &bytes[..cut]);
            let rest = bytes.len() - cut;
            match fill {
                Fill::Old => {}
                Fill::Zeros => write_into(&mut b, *at, &vec![0u8; rest]),
                Fill::Garbage => {
                    let mut rng = Rng::new(seed ^ at);
                    let g: Vec<u8> = (0..rest).map(|_| rng.next_u64() as u8).collect();
                    write_into(&mut b, *at, &g);
                }
            }
            continue;
        }
        if kept(i) {
            c.apply(&mut b);
        }
    }
    b
}

/// A short description of a state, for reports.
pub fn describe(s: &CrashState) -> String {
    let keep = match &s.keep {
        Keep::None => "only synced bytes".to_string(),
        Keep::All => "every unsynced change kept".to_string(),
        Keep::AllBut(i) => format!("unsynced change {i} lost, the others kept"),
        Keep::Prefix(n) => format!("the first {n} unsynced changes kept"),
        Keep::Subset(bits) => format!("unsynced changes kept: {}", bits.iter().map(|&b| if b { '1' } else { '0' }).collect::<String>()),
        Keep::Torn { index, at, fill, rest } => {
            format!("unsynced write {index} torn at byte {at} ({fill:?} after the tear), later changes {}", if *rest { "kept" } else { "lost" })
        }
    };
    format!("crash after event {}, {} pending name change(s) kept, {keep}", s.point, s.names_kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_torn_write_keeps_what_came_before_the_tear() {
        let f = FileState { durable: vec![1u8; 1024], cache: Vec::new(), pending: vec![Change::Write { offset: 256, bytes: vec![9u8; 512] }] };
        let torn = bytes_after(&f, &Keep::Torn { index: 0, at: 512, fill: Fill::Zeros, rest: false }, 1);
        assert_eq!(&torn[..256], &[1u8; 256][..]);
        assert_eq!(&torn[256..512], &[9u8; 256][..]);
        assert_eq!(&torn[512..768], &[0u8; 256][..]);
        assert_eq!(&torn[768..], &[1u8; 256][..]);
        let old = bytes_after(&f, &Keep::Torn { index: 0, at: 512, fill: Fill::Old, rest: false }, 1);
        assert_eq!(&old[512..], &[1u8; 512][..]);
        assert_eq!(tears(256, 512, 512, &mut Rng::new(3)), vec![512]);
        assert!(tears(0, 512, 512, &mut Rng::new(3)).is_empty(), "a write within one sector is not torn");
    }
}
