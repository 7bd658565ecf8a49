//! Fuzz target: ROOT's compression framing (block headers; zstd, zlib, lzma, lz4 with its XXH64)
//! on any bytes and any claimed uncompressed length. Must never panic, and never allocate more
//! than the claimed length, which the first four bytes give (capped at 16 MiB here).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rntuple::format::compression::{compress, decompress, decompress_into, Compression};

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let len = (u32::from_le_bytes([data[0], data[1], data[2], data[3]]) as usize) & ((16 << 20) - 1);
    let src = &data[4..];
    if let Ok(out) = decompress(src, len, "fuzz", 0) {
        assert_eq!(out.len(), len);
    }
    let mut dst = vec![0u8; len.min(1 << 16)];
    let _ = decompress_into(src, &mut dst, "fuzz", 0);
    // What we compress decompresses to the same bytes, for every algorithm (low levels: the
    // round trip is the point, and high lzma levels would make each run slow).
    if src.len() > 4096 {
        return;
    }
    for c in [Compression::zlib(1), Compression::lzma(1), Compression::lz4(1), Compression::zstd(1)] {
        let settings = c.settings();
        let mut z = Vec::new();
        compress(src, c, &mut z).expect("compressing never fails");
        let back = decompress(&z, src.len(), "round trip", 0).expect("our own output decompresses");
        assert_eq!(back, src, "settings {settings}");
    }
});
