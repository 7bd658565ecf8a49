//! Checksums of the format: XXH3-64 (seed 0) over envelopes, pages and the anchor.

/// XXH3-64 with seed 0, as ROOT computes it: every checksum the crate writes or verifies goes
/// through here. twox-hash picks AVX2 at run time where the processor has it (xxhash-rust uses
/// only what the build targets, SSE2 for a portable x86-64 build: half the speed over a page).
///
/// ```
/// assert_eq!(rntuple::format::checksum::xxh3(b""), 0x2d06800538d394c2);
/// ```
pub fn xxh3(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// The same hash from xxhash-rust, an independent implementation, on inputs of every length
/// class (XXH3 has separate code for 0-16, 17-128, 129-240 bytes and long inputs, and a SIMD
/// loop over 1 KiB stripes).
#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_xxhash_rust_at_every_length_class() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let lengths = (0..=260).chain([511, 1024, 1025, 4095, 65_536, 100_003, 300_000]);
        for n in lengths {
            for start in [0, 1, 7] {
                let b = &bytes[start..start + n.min(bytes.len() - start)];
                assert_eq!(super::xxh3(b), xxhash_rust::xxh3::xxh3_64(b), "{} bytes at {start}", b.len());
            }
        }
    }
}
