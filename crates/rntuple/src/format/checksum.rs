//! Checksums of the format: XXH3-64 (seed 0) over envelopes, pages and the anchor.

/// XXH3-64 with seed 0, as ROOT computes it.
///
/// ```
/// assert_eq!(rntuple::format::checksum::xxh3(b""), 0x2d06800538d394c2);
/// ```
pub fn xxh3(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}
