//! Deterministic corruption sweep: thousands of damaged variants of the bundled files (bit
//! flips, overwritten bytes, lying sizes and counts, truncations). Each must end in `Err` or in
//! values: never a panic, an abort, a hang, or an allocation the file's size cannot justify.

mod common;

use rntuple::RNTupleFile;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Skims every RNTuple in `bytes` twice, pages copied (all fields) and re-encoded (a range inside
/// the entries), into `out`; returns how many skims succeeded.
fn skim_both(bytes: Vec<u8>, out: &std::path::Path) -> usize {
    use rntuple::ops::skim::{skim_reader, Skim};
    let Ok(f) = RNTupleFile::from_bytes(bytes) else { return 0 };
    let mut ok = 0;
    for name in f.names() {
        let Ok(r) = f.reader(&name) else { continue };
        let n = r.num_entries().min(2000);
        for what in [Skim::default(), Skim { entries: Some((n / 3, n)), reencode: true, ..Default::default() }] {
            ok += skim_reader(&r, out, &what, rntuple::write::WriteOptions::default(), |_, _| {}).is_ok() as usize;
        }
    }
    ok
}

/// Tracks the largest single allocation request.
struct Tracking;
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        // SAFETY: forwarding the caller's layout to the system allocator unchanged.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` was allocated by `System` with this layout (see `alloc`).
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LARGEST.fetch_max(n, Ordering::Relaxed);
        // SAFETY: as above; `p` and `l` come from this allocator.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

/// Small deterministic generator (SplitMix64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Reads everything readable in `bytes`; the result is irrelevant, only that it returns.
fn exercise(bytes: Vec<u8>) -> usize {
    let Ok(f) = RNTupleFile::from_bytes(bytes) else { return 0 };
    let mut n = 0;
    for name in f.names() {
        let Ok(r) = f.reader(&name) else { continue };
        let stop = r.num_entries().min(2000);
        if let Ok(v) = r.read_values(None, 0, stop) {
            n += v.len();
        }
        // Also a range that starts inside a cluster.
        let _ = r.read_batch(None, stop / 3, stop);
    }
    n
}

fn mutate(orig: &[u8], rng: &mut Rng, kind: usize) -> (Vec<u8>, String) {
    let mut b = orig.to_vec();
    let len = b.len();
    let desc;
    match kind {
        0 => {
            let p = rng.below(len);
            let bit = rng.below(8);
            b[p] ^= 1 << bit;
            desc = format!("flip bit {bit} of byte {p}");
        }
        1 => {
            let p = rng.below(len);
            let v = rng.next() as u8;
            b[p] = v;
            desc = format!("byte {p} := {v:#x}");
        }
        2 => {
            // A lying size or count: a 4- or 8-byte word replaced by a large or extreme value.
            let w = if rng.below(2) == 0 { 4 } else { 8 };
            let p = rng.below(len.saturating_sub(w));
            let vals: [u64; 6] = [u64::MAX, 1 << 47, 0x7FFF_FFFF, 1 << 31, 0, rng.next()];
            let v = vals[rng.below(vals.len())];
            let bytes = if rng.below(2) == 0 { v.to_le_bytes() } else { v.to_be_bytes() };
            b[p..p + w].copy_from_slice(&bytes[..w]);
            desc = format!("{w} bytes at {p} := {v:#x}");
        }
        3 => {
            let n = rng.below(len);
            b.truncate(n);
            desc = format!("truncated to {n} bytes");
        }
        _ => {
            // A burst of damage: several random bytes in a small window.
            let p = rng.below(len);
            for i in 0..8 {
                if p + i < len {
                    b[p + i] = rng.next() as u8;
                }
            }
            desc = format!("8 random bytes at {p}");
        }
    }
    (b, desc)
}

#[test]
fn corrupted_files_never_panic_hang_or_overallocate() {
    let Some(td) = common::testdata() else { return };
    // Small files covering most features (the 100-million-entry file is left out: reading it
    // legitimately allocates hundreds of MB).
    let names = [
        "test_stl_containers_rntuple_v1-0-0-0.root",
        "test_atomic_bitset_rntuple_v1-0-0-0.root",
        "test_class_inheritance_rntuple_v1-0-0-1.root",
        "test_emptystruct_invalidvar_rntuple_v1-0-0-0.root",
        "test_extension_columns_rntuple_v1-0-0-0.root",
        "test_float_types_rntuple_v1-0-0-0.root",
        "test_multiple_cluster_groups_rntuple_v1-0-0-0.root",
        "test_multiple_representations_rntuple_v1-0-0-0.root",
        "rntviewer-testfile-multiple-rntuples-v1-0-0-0.root",
        "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root",
        "Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root",
        "test_index_multicluster_rntuple_v1-0-0-0.root",
    ];
    let per_file = 1000;
    let mut total = 0;
    let mut ok_values = 0;
    let mut rng = Rng(0x5EED_2026);
    for name in names {
        let orig = std::fs::read(td.join("rntuple").join(name)).unwrap();
        // The original reads.
        assert!(exercise(orig.clone()) > 0, "{name}: original does not read");
        let budget = (orig.len() << 17) + (16 << 20);
        for i in 0..per_file {
            let (bytes, desc) = mutate(&orig, &mut rng, i % 5);
            LARGEST.store(0, Ordering::Relaxed);
            let start = Instant::now();
            let data = Arc::new(bytes);
            let d2 = data.clone();
            let r = std::panic::catch_unwind(move || exercise((*d2).clone()));
            let took = start.elapsed();
            match r {
                Ok(n) => ok_values += n,
                Err(_) => panic!("{name}: variant {i} ({desc}) panicked"),
            }
            assert!(took < Duration::from_secs(20), "{name}: variant {i} ({desc}) took {took:?}");
            let largest = LARGEST.load(Ordering::Relaxed);
            assert!(largest <= budget, "{name}: variant {i} ({desc}) allocated {largest} bytes at once (budget {budget})");
            total += 1;
        }
    }
    assert!(total >= 10_000, "only {total} variants");
    eprintln!("corruption sweep: {total} variants, {ok_values} entries read from variants that still parsed");
}

/// Damage inside the envelopes and pages of an uncompressed file, with the checksums
/// recomputed afterwards, so the damage reaches the parsers and decoders behind them; each
/// variant is also skimmed (pages copied, and re-encoded).
#[test]
fn corrupted_envelopes_with_valid_checksums() {
    let Some(td) = common::testdata() else { return };
    let mut total = 0;
    for name in ["rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root"] {
        let orig = std::fs::read(td.join("rntuple").join(name)).unwrap();
        let f = RNTupleFile::from_bytes(orig.clone()).unwrap();
        let ntuple = f.names()[0].clone();
        let r = f.reader(&ntuple).unwrap();
        let a = *r.anchor();
        assert_eq!(a.nbytes_header, a.len_header, "{name} must be uncompressed for this test");
        // (start, len, checksum kind): envelopes carry their XXH3 in their last 8 bytes,
        // pages right after the locator's range.
        let mut regions: Vec<(usize, usize, bool)> =
            vec![(a.seek_header as usize, a.len_header as usize, true), (a.seek_footer as usize, a.len_footer as usize, true)];
        for g in &r.descriptor().cluster_groups {
            regions.push((g.page_list.locator.offset as usize, g.page_list.length as usize, true));
        }
        for c in &r.descriptor().clusters {
            for cr in c.columns.iter().flatten() {
                for p in &cr.pages {
                    if p.has_checksum {
                        regions.push((p.locator.offset as usize, p.locator.size as usize, false));
                    }
                }
            }
        }
        let mut rng = Rng(0xC0FFEE);
        let budget = (orig.len() << 17) + (16 << 20);
        let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corruption_skim.root");
        assert_eq!(skim_both(orig.clone(), &out), 2, "{name}: the original skims both ways");
        let mut skimmed = 0;
        for i in 0..3000 {
            let (start, len, envelope) = regions[i % regions.len()];
            let body = if envelope { 8..len - 8 } else { 0..len };
            if body.is_empty() {
                continue;
            }
            let mut b = orig.clone();
            let p = start + body.start + rng.below(body.len());
            let desc = match i % 3 {
                0 => {
                    b[p] ^= 1 << rng.below(8);
                    format!("flip at {p}")
                }
                1 => {
                    let w = 4.min(start + body.end - p);
                    let v = [u32::MAX, 0x8000_0000, 0xFFFF, 0][rng.below(4)];
                    b[p..p + w].copy_from_slice(&v.to_le_bytes()[..w]);
                    format!("u32 {v:#x} at {p}")
                }
                _ => {
                    b[p] = rng.next() as u8;
                    format!("byte at {p}")
                }
            };
            if envelope {
                let sum = xxhash_rust_xxh3(&b[start..start + len - 8]);
                b[start + len - 8..start + len].copy_from_slice(&sum.to_le_bytes());
            } else {
                let sum = xxhash_rust_xxh3(&b[start..start + len]);
                b[start + len..start + len + 8].copy_from_slice(&sum.to_le_bytes());
            }
            LARGEST.store(0, Ordering::Relaxed);
            let t = Instant::now();
            let out2 = out.clone();
            let res = std::panic::catch_unwind(move || (exercise(b.clone()), skim_both(b, &out2)));
            assert!(res.is_ok(), "{name}: {desc} panicked");
            skimmed += res.map_or(0, |r| r.1);
            assert!(t.elapsed() < Duration::from_secs(20), "{name}: {desc} hung");
            let largest = LARGEST.load(Ordering::Relaxed);
            assert!(largest <= budget, "{name}: {desc} allocated {largest} bytes at once");
            total += 1;
        }
        eprintln!("{name}: {skimmed} skims of damaged variants succeeded");
        assert!(skimmed > 0, "{name}: no damaged variant got as far as a skim");
    }
    assert!(total >= 2900);
}

fn xxhash_rust_xxh3(b: &[u8]) -> u64 {
    rntuple::format::checksum::xxh3(b)
}
