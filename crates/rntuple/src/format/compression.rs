//! ROOT's compression block framing (zstd, zlib, lzma, lz4), as used for envelopes and pages.
//!
//! A compressed payload is a sequence of blocks, each with a 9-byte header: two tag bytes naming
//! the algorithm, one method byte, the compressed size (u24 LE) and the uncompressed size
//! (u24 LE). A payload whose stored size equals its uncompressed length is stored raw.

use crate::error::{Error, Result};
use std::cell::RefCell;

/// Compression algorithms of ROOT's settings integer (`algorithm * 100 + level`).
///
/// ```
/// use rntuple::write::{Algorithm, Compression};
/// assert_eq!(Compression::from_settings(207)?.algorithm(), Algorithm::Lzma);
/// assert_eq!(Compression::default().algorithm(), Algorithm::Zstd);
/// assert_eq!(Compression::zlib(0).algorithm(), Algorithm::None); // level 0 stores raw
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// Level 0: stored raw.
    None,
    /// zlib (1).
    Zlib,
    /// lzma / xz (2).
    Lzma,
    /// lz4 (4).
    Lz4,
    /// zstd (5).
    Zstd,
}

/// A compression setting: an algorithm and a level, as ROOT's settings integer
/// (`algorithm * 100 + level`, e.g. 505 = zstd level 5) names them. Parsed once, where a setting
/// enters (an option, a command line, a file header), so that compressing a page checks nothing.
///
/// ```
/// use rntuple::write::{Algorithm, Compression};
/// let c = Compression::from_settings(404)?;
/// assert_eq!((c.algorithm(), c.level(), c.settings()), (Algorithm::Lz4, 4, 404));
/// assert_eq!(Compression::default(), Compression::zstd(5));
/// assert!(Compression::from_settings(0)?.is_none());
/// assert!(Compression::from_settings(303).is_err()); // algorithm 3 (old LZMA) is not supported
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    algorithm: Algorithm,
    level: u32,
    /// The settings integer as given (algorithm 0 and 1 both mean zlib; a level-0 setting keeps
    /// its algorithm digit, as ROOT records it in a file header).
    settings: u32,
}

impl Compression {
    /// No compression (settings 0): data is stored raw.
    pub const NONE: Compression = Compression { algorithm: Algorithm::None, level: 0, settings: 0 };

    const fn of(algorithm: Algorithm, code: u32, level: u32) -> Compression {
        let level = if level > 99 { 99 } else { level };
        if level == 0 {
            return Compression { algorithm: Algorithm::None, level: 0, settings: code * 100 };
        }
        Compression { algorithm, level, settings: code * 100 + level }
    }
    /// zstd at `level` (1-99; ROOT's default is zstd 5; 0 stores raw).
    pub const fn zstd(level: u32) -> Compression {
        Compression::of(Algorithm::Zstd, 5, level)
    }
    /// zlib at `level` (1-9).
    pub const fn zlib(level: u32) -> Compression {
        Compression::of(Algorithm::Zlib, 1, level)
    }
    /// lzma (xz) at `level` (1-9).
    pub const fn lzma(level: u32) -> Compression {
        Compression::of(Algorithm::Lzma, 2, level)
    }
    /// lz4 at `level`.
    pub const fn lz4(level: u32) -> Compression {
        Compression::of(Algorithm::Lz4, 4, level)
    }

    /// The setting of a ROOT compression settings integer; an unknown algorithm is an error.
    pub fn from_settings(settings: u32) -> Result<Compression> {
        let level = settings % 100;
        if level == 0 {
            return Ok(Compression { algorithm: Algorithm::None, level: 0, settings });
        }
        let algorithm = match settings / 100 {
            0 | 1 => Algorithm::Zlib,
            2 => Algorithm::Lzma,
            4 => Algorithm::Lz4,
            5 => Algorithm::Zstd,
            a => return Err(Error::Unsupported(format!("compression algorithm {a} (settings {settings}; known: 1 zlib, 2 lzma, 4 lz4, 5 zstd)"))),
        };
        Ok(Compression { algorithm, level, settings })
    }

    /// The algorithm ([`Algorithm::None`] when the level is 0).
    pub fn algorithm(self) -> Algorithm {
        self.algorithm
    }
    /// The level (0: stored raw).
    pub fn level(self) -> u32 {
        self.level
    }
    /// ROOT's settings integer (`algorithm * 100 + level`).
    pub fn settings(self) -> u32 {
        self.settings
    }
    /// Whether data is stored raw (level 0).
    pub fn is_none(self) -> bool {
        self.algorithm == Algorithm::None
    }
}

impl Default for Compression {
    /// ROOT's default: zstd level 5 (505).
    fn default() -> Self {
        Compression::zstd(5)
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.settings)
    }
}

/// Size of a block header.
pub const BLOCK_HEADER: usize = 9;
/// Largest input of one block.
pub const MAX_BLOCK: usize = 0xFF_FFFF;

thread_local! {
    static ZSTD: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

fn u24(b: &[u8]) -> usize {
    b[0] as usize | (b[1] as usize) << 8 | (b[2] as usize) << 16
}

/// Decompresses `src` (stored bytes) into `dst`, whose length is the expected uncompressed length.
/// `what` and `offset` name the payload for error messages.
pub fn decompress_into(src: &[u8], dst: &mut [u8], what: &str, offset: u64) -> Result<()> {
    if src.len() == dst.len() {
        dst.copy_from_slice(src);
        return Ok(());
    }
    if src.len() > dst.len() {
        return Err(Error::corrupt(format!("{what}: stored size {} is larger than the uncompressed length {}", src.len(), dst.len()), offset));
    }
    let mut ip = 0usize;
    let mut op = 0usize;
    while op < dst.len() {
        let at = offset + ip as u64;
        if src.len() - ip < BLOCK_HEADER {
            return Err(Error::corrupt(format!("{what}: truncated compression block header"), at));
        }
        let h = &src[ip..ip + BLOCK_HEADER];
        let csize = u24(&h[3..6]);
        let usize_ = u24(&h[6..9]);
        ip += BLOCK_HEADER;
        if csize > src.len() - ip {
            return Err(Error::corrupt(format!("{what}: compressed block of {csize} bytes exceeds the stored data"), at));
        }
        if usize_ > dst.len() - op {
            return Err(Error::corrupt(format!("{what}: block says it expands to {usize_} bytes, beyond the expected length"), at));
        }
        let block = &src[ip..ip + csize];
        let out = &mut dst[op..op + usize_];
        block_into([h[0], h[1]], block, out, what, at)?;
        ip += csize;
        op += usize_;
        if usize_ == 0 {
            return Err(Error::corrupt(format!("{what}: empty compression block"), at));
        }
    }
    if ip != src.len() {
        return Err(Error::corrupt(format!("{what}: {} trailing bytes after the last compression block", src.len() - ip), offset + ip as u64));
    }
    Ok(())
}

/// Checks, before any buffer is allocated, that the compression block headers of `src` add up
/// to `len` uncompressed bytes: every block lies inside `src`, the blocks' uncompressed sizes sum
/// to exactly `len`, and a zstd block whose frame states its content size states the block
/// header's. So a declared length is backed by the stored bytes' own framing, not only by a
/// count in the metadata. A payload stored raw (`src.len() == len`) passes.
pub fn check_blocks(src: &[u8], len: u64, what: &str, offset: u64) -> Result<()> {
    if src.len() as u64 == len {
        return Ok(());
    }
    if src.len() as u64 > len {
        return Err(Error::corrupt(format!("{what}: stored size {} is larger than the uncompressed length {len}", src.len()), offset));
    }
    let mut ip = 0usize;
    let mut total = 0u64;
    while ip < src.len() {
        let at = offset + ip as u64;
        let Some(h) = src.get(ip..ip + BLOCK_HEADER) else {
            return Err(Error::corrupt(format!("{what}: truncated compression block header"), at));
        };
        let csize = u24(&h[3..6]);
        let usize_ = u24(&h[6..9]);
        ip += BLOCK_HEADER;
        let Some(block) = src.get(ip..ip + csize) else {
            return Err(Error::corrupt(format!("{what}: compressed block of {csize} bytes exceeds the stored data"), at));
        };
        if usize_ == 0 {
            return Err(Error::corrupt(format!("{what}: empty compression block"), at));
        }
        if (h[0], h[1]) == (b'Z', b'S')
            && let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(block)
                && n != usize_ as u64 {
                    return Err(Error::corrupt(format!("{what}: zstd frame holds {n} bytes, its block header says {usize_}"), at));
                }
        total += usize_ as u64;
        if total > len {
            return Err(Error::corrupt(format!("{what}: compression blocks expand beyond the expected {len} bytes"), at));
        }
        ip += csize;
    }
    if total != len {
        return Err(Error::corrupt(format!("{what}: compression blocks hold {total} bytes, expected {len}"), offset));
    }
    Ok(())
}

/// A zero-filled buffer of `len` bytes, or an error instead of an abort when it cannot be had
/// or is over the read budget ([`crate::format::budget`]).
pub fn zeroed(len: usize, what: &str) -> Result<Vec<u8>> {
    crate::format::budget::check(len as u64, || what.to_string())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| Error::Unsupported(format!("{what}: cannot allocate {len} bytes")))?;
    v.resize(len, 0);
    Ok(v)
}

/// Most a metadata payload (an envelope, a key's record) may expand over its stored bytes, above
/// [`METADATA_INFLATE_FLOOR`]. Metadata is varied (names, offsets, sizes): ROOT's envelopes and
/// records compress by 2-20 times; only runs of one byte reach ratios of thousands (a zstd block
/// of 16 MiB of zeros is ~600 bytes). Pages are not bounded this way (a constant column is
/// legitimately such a run).
pub const METADATA_MAX_RATIO: u64 = 256;
/// Metadata payloads up to this length may inflate at any ratio.
pub const METADATA_INFLATE_FLOOR: u64 = 16 << 20;

/// Checks that a metadata payload of `stored` bytes may expand to `len` bytes (see
/// [`METADATA_MAX_RATIO`]), before anything is decompressed.
///
/// ```
/// use rntuple::format::compression::check_metadata_ratio;
/// assert!(check_metadata_ratio(100, 4 << 20, "footer", 0).is_ok());
/// assert!(check_metadata_ratio(1 << 20, 200 << 20, "footer", 0).is_ok());
/// let e = check_metadata_ratio(40_000, 1 << 30, "footer", 7).unwrap_err().to_string();
/// assert!(e.contains("footer: 40000 stored bytes would inflate to 1073741824"), "{e}");
/// ```
pub fn check_metadata_ratio(stored: u64, len: u64, what: &str, offset: u64) -> Result<()> {
    if len > METADATA_INFLATE_FLOOR && len > stored.saturating_mul(METADATA_MAX_RATIO) {
        return Err(Error::corrupt(
            format!("{what}: {stored} stored bytes would inflate to {len} bytes, more than {METADATA_MAX_RATIO} times (metadata does not compress that well: a compression bomb?)"),
            offset,
        ));
    }
    Ok(())
}

/// The first `n` uncompressed bytes of `src` (a payload of compression blocks whose headers
/// [`check_blocks`] accepted), decompressing only the blocks that hold them.
pub fn decompress_prefix(src: &[u8], n: usize, what: &str, offset: u64) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut ip = 0usize;
    while out.len() < n && ip < src.len() {
        let at = offset + ip as u64;
        let Some(h) = src.get(ip..ip + BLOCK_HEADER) else {
            return Err(Error::corrupt(format!("{what}: truncated compression block header"), at));
        };
        let (csize, ulen) = (u24(&h[3..6]), u24(&h[6..9]));
        let block = src.get(ip + BLOCK_HEADER..ip + BLOCK_HEADER + csize).ok_or_else(|| Error::corrupt(format!("{what}: compressed block of {csize} bytes exceeds the stored data"), at))?;
        let start = out.len();
        out.resize(start + ulen, 0);
        block_into([h[0], h[1]], block, &mut out[start..], what, at)?;
        ip += BLOCK_HEADER + csize;
    }
    out.truncate(n);
    Ok(out)
}

/// Decompresses into a new vector of length `len`, after [`check_blocks`] has shown that the
/// blocks' headers account for exactly `len` bytes.
pub fn decompress(src: &[u8], len: usize, what: &str, offset: u64) -> Result<Vec<u8>> {
    if src.len() == len {
        return Ok(src.to_vec());
    }
    check_blocks(src, len as u64, what, offset)?;
    let mut v = zeroed(len, what)?;
    decompress_into(src, &mut v, what, offset)?;
    Ok(v)
}

/// Decompresses one block's data (`tag`: its two tag bytes) into `out`, its uncompressed length.
fn block_into(tag: [u8; 2], block: &[u8], out: &mut [u8], what: &str, at: u64) -> Result<()> {
    match (tag[0], tag[1]) {
        (b'Z', b'S') => zstd_block(block, out, what, at),
        (b'Z', b'L') => zlib_block(block, out, what, at),
        (b'X', b'Z') => lzma_block(block, out, what, at),
        (b'L', b'4') => lz4_block(block, out, what, at),
        (b'C', b'S') => Err(Error::Unsupported(format!("{what}: old ROOT 'CS' compression at offset {at}"))),
        (a, b) => Err(Error::corrupt(format!("{what}: unknown compression block tag {:?}", [a, b].map(|c| c as char)), at)),
    }
}

fn zstd_block(src: &[u8], out: &mut [u8], what: &str, at: u64) -> Result<()> {
    ZSTD.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| Error::io("creating a zstd context", e))?);
        }
        let d = slot.as_mut().ok_or_else(|| Error::Invalid("zstd context".into()))?;
        let n = d.decompress_to_buffer(src, out).map_err(|e| Error::corrupt(format!("{what}: zstd block does not decompress: {e}"), at))?;
        if n != out.len() {
            return Err(Error::corrupt(format!("{what}: zstd block gave {n} bytes, header says {}", out.len()), at));
        }
        Ok(())
    })
}

fn zlib_block(src: &[u8], out: &mut [u8], what: &str, at: u64) -> Result<()> {
    let mut d = flate2::Decompress::new(true);
    let st = d.decompress(src, out, flate2::FlushDecompress::Finish).map_err(|e| Error::corrupt(format!("{what}: zlib block does not decompress: {e}"), at))?;
    if st != flate2::Status::StreamEnd || d.total_out() as usize != out.len() {
        return Err(Error::corrupt(format!("{what}: zlib block gave {} bytes, header says {}", d.total_out(), out.len()), at));
    }
    Ok(())
}

fn lzma_block(src: &[u8], out: &mut [u8], what: &str, at: u64) -> Result<()> {
    let mut s = xz2::stream::Stream::new_stream_decoder(u64::MAX, 0).map_err(|e| Error::corrupt(format!("{what}: lzma decoder: {e}"), at))?;
    let st = s.process(src, out, xz2::stream::Action::Finish).map_err(|e| Error::corrupt(format!("{what}: lzma block does not decompress: {e}"), at))?;
    if st != xz2::stream::Status::StreamEnd || s.total_out() as usize != out.len() {
        return Err(Error::corrupt(format!("{what}: lzma block gave {} bytes, header says {}", s.total_out(), out.len()), at));
    }
    Ok(())
}

fn lz4_block(src: &[u8], out: &mut [u8], what: &str, at: u64) -> Result<()> {
    if src.len() < 8 {
        return Err(Error::corrupt(format!("{what}: lz4 block shorter than its checksum"), at));
    }
    let mut a = [0u8; 8];
    a.copy_from_slice(&src[..8]);
    let stored = u64::from_be_bytes(a);
    let data = &src[8..];
    let computed = xxhash_rust::xxh64::xxh64(data, 0);
    if stored != computed {
        return Err(Error::Checksum { what: format!("{what} (lz4 block)"), offset: at, stored, computed });
    }
    let n = lz4_flex::block::decompress_into(data, out).map_err(|e| Error::corrupt(format!("{what}: lz4 block does not decompress: {e}"), at))?;
    if n != out.len() {
        return Err(Error::corrupt(format!("{what}: lz4 block gave {n} bytes, header says {}", out.len()), at));
    }
    Ok(())
}

/// Inputs larger than this are compressed with a context of their own, freed after (see [`zstd_into`]).
const KEPT_CONTEXT_MAX_INPUT: usize = 4 << 20;

/// Appends the zstd frame of `src` to `out`, with a compression context kept per thread and
/// level (creating one per page costs more than compressing a small page). An input larger than
/// [`KEPT_CONTEXT_MAX_INPUT`] (an envelope, say) gets a context of its own: sized for it (the
/// header of 100,000 fields took 21 MB at zstd level 10), which kept would stay for the thread's life.
fn zstd_into(src: &[u8], level: i32, out: &mut Vec<u8>) -> Result<()> {
    use std::cell::RefCell;
    thread_local! {
        static CTX: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    }
    if src.len() > KEPT_CONTEXT_MAX_INPUT {
        let mut own = zstd::bulk::Compressor::new(level).map_err(|e| Error::io("zstd compression", e))?;
        return zstd_with(&mut own, src, out);
    }
    CTX.with(|c| {
        let mut c = c.borrow_mut();
        if c.as_ref().map(|(l, _)| *l) != Some(level) {
            *c = Some((level, zstd::bulk::Compressor::new(level).map_err(|e| Error::io("zstd compression", e))?));
        }
        let Some((_, z)) = c.as_mut() else { return Err(Error::internal("no zstd context")) };
        zstd_with(z, src, out)
    })
}

/// Appends the zstd frame of `src` to `out` through the context `z`.
fn zstd_with(z: &mut zstd::bulk::Compressor<'static>, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let at = out.len();
    out.reserve(zstd::zstd_safe::compress_bound(src.len()));
    let mut cur = std::io::Cursor::new(std::mem::take(out));
    cur.set_position(at as u64);
    let r = z.compress_to_buffer(src, &mut cur);
    *out = cur.into_inner();
    let n = r.map_err(|e| Error::io("zstd compression", e))?;
    if out.len() != at + n {
        return Err(Error::Internal(format!("zstd wrote {n} bytes but the buffer holds {}", out.len() - at)));
    }
    Ok(())
}

/// Compresses `src` with the setting `c` and ROOT's block framing, appending to `out`. As ROOT does, the data is stored raw when the level is 0 or when any block
/// would not shrink; the caller recognises raw data by its length being unchanged.
///
/// ```
/// use rntuple::format::compression::{compress, decompress, Compression};
/// let data = vec![7u8; 100_000];
/// let mut z = Vec::new();
/// compress(&data, Compression::zstd(5), &mut z).unwrap();
/// assert!(z.len() < data.len());
/// assert_eq!(decompress(&z, data.len(), "example", 0).unwrap(), data);
/// ```
pub fn compress(src: &[u8], c: Compression, out: &mut Vec<u8>) -> Result<()> {
    let (alg, level) = (c.algorithm, c.level);
    let start = out.len();
    if alg == Algorithm::None || src.is_empty() {
        out.extend_from_slice(src);
        return Ok(());
    }
    for block in src.chunks(MAX_BLOCK) {
        let at = out.len();
        out.extend_from_slice(&[0u8; BLOCK_HEADER]);
        let (tag, method): ([u8; 2], u8) = match alg {
            Algorithm::Zstd => {
                zstd_into(block, (2 * level) as i32, out)?;
                (*b"ZS", 1)
            }
            Algorithm::Zlib => {
                let mut e = flate2::write::ZlibEncoder::new(std::mem::take(out), flate2::Compression::new(level.min(9)));
                std::io::Write::write_all(&mut e, block).map_err(|e| Error::io("zlib compression", e))?;
                *out = e.finish().map_err(|e| Error::io("zlib compression", e))?;
                (*b"ZL", 8)
            }
            Algorithm::Lzma => {
                let mut e = xz2::write::XzEncoder::new(std::mem::take(out), level.min(9));
                std::io::Write::write_all(&mut e, block).map_err(|e| Error::io("lzma compression", e))?;
                *out = e.finish().map_err(|e| Error::io("lzma compression", e))?;
                (*b"XZ", 0)
            }
            Algorithm::Lz4 => {
                let c = lz4_flex::block::compress(block);
                out.extend_from_slice(&xxhash_rust::xxh64::xxh64(&c, 0).to_be_bytes());
                out.extend_from_slice(&c);
                (*b"L4", 1)
            }
            Algorithm::None => unreachable!("handled above"),
        };
        let csize = out.len() - at - BLOCK_HEADER;
        if csize + BLOCK_HEADER >= block.len() {
            out.truncate(start);
            out.extend_from_slice(src);
            return Ok(());
        }
        let h = &mut out[at..at + BLOCK_HEADER];
        h[0] = tag[0];
        h[1] = tag[1];
        h[2] = method;
        h[3..6].copy_from_slice(&(csize as u32).to_le_bytes()[..3]);
        h[6..9].copy_from_slice(&(block.len() as u32).to_le_bytes()[..3]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn compress_round_trip_every_algorithm() {
        let data: Vec<u8> = (0..200_000u32).map(|i| ((i / 3) % 17) as u8).collect();
        for settings in [0, 101, 109, 207, 404, 505, 509] {
            let mut z = Vec::new();
            compress(&data, Compression::from_settings(settings).unwrap(), &mut z).unwrap();
            if settings == 0 {
                assert_eq!(z, data);
            } else {
                assert!(z.len() < data.len(), "{settings}");
            }
            assert_eq!(decompress(&z, data.len(), "t", 0).unwrap(), data, "{settings}");
        }
        // Incompressible data is stored raw.
        let noise: Vec<u8> = (0..4096u64).map(|i| (xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes()) >> 56) as u8).collect();
        let mut z = Vec::new();
        compress(&noise, Compression::zstd(5), &mut z).unwrap();
        assert_eq!(z, noise);
    }

    #[test]
    fn data_above_16_mib_spans_several_blocks() {
        let data: Vec<u8> = (0..(MAX_BLOCK + 1000) as u32).map(|i| (i % 251) as u8).collect();
        let mut z = Vec::new();
        compress(&data, Compression::zstd(5), &mut z).unwrap();
        assert_eq!(decompress(&z, data.len(), "t", 0).unwrap(), data);
    }

    #[test]
    fn declared_lengths_must_match_the_block_headers() {
        let data = vec![7u8; 100_000];
        let mut z = Vec::new();
        compress(&data, Compression::zstd(5), &mut z).unwrap();
        check_blocks(&z, data.len() as u64, "t", 0).unwrap();
        // A length the blocks do not hold is refused before anything is allocated, however
        // plausible the ratio (2^28 doubles from a few hundred bytes).
        for lie in [data.len() as u64 + 1, 8 << 28, u32::MAX as u64 * 8] {
            let e = check_blocks(&z, lie, "page", 40).unwrap_err().to_string();
            assert!(e.contains("page") && e.contains("offset 40"), "{e}");
            assert!(decompress(&z, lie as usize, "page", 40).is_err());
        }
        // A zstd frame stating another content size than its block header.
        let mut bad = z.clone();
        let n = u24(&bad[6..9]) - 1;
        bad[6..9].copy_from_slice(&(n as u32).to_le_bytes()[..3]);
        let e = check_blocks(&bad, n as u64, "t", 0).unwrap_err().to_string();
        assert!(e.contains("zstd frame holds 100000 bytes"), "{e}");
        // Truncated header and trailing garbage.
        assert!(check_blocks(&z[..5], 1000, "t", 0).is_err());
        let mut tail = z.clone();
        tail.extend_from_slice(&[0; 3]);
        assert!(check_blocks(&tail, data.len() as u64, "t", 0).is_err());
    }

    use super::*;

    fn frame(tag: &[u8; 2], method: u8, c: &[u8], ulen: usize) -> Vec<u8> {
        let mut v = vec![tag[0], tag[1], method];
        v.extend_from_slice(&(c.len() as u32).to_le_bytes()[..3]);
        v.extend_from_slice(&(ulen as u32).to_le_bytes()[..3]);
        v.extend_from_slice(c);
        v
    }

    #[test]
    fn zstd_and_zlib_blocks() {
        let data: Vec<u8> = (0..10000u32).map(|i| (i % 7) as u8).collect();
        let z = zstd::bulk::compress(&data, 3).unwrap();
        let f = frame(b"ZS", 1, &z, data.len());
        assert_eq!(decompress(&f, data.len(), "t", 0).unwrap(), data);
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
        std::io::Write::write_all(&mut e, &data).unwrap();
        let zl = e.finish().unwrap();
        let f = frame(b"ZL", 8, &zl, data.len());
        assert_eq!(decompress(&f, data.len(), "t", 0).unwrap(), data);
    }

    #[test]
    fn lz4_checksum_is_verified() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 13) as u8).collect();
        let c = lz4_flex::block::compress(&data);
        let mut payload = xxhash_rust::xxh64::xxh64(&c, 0).to_be_bytes().to_vec();
        payload.extend_from_slice(&c);
        let f = frame(b"L4", 1, &payload, data.len());
        assert_eq!(decompress(&f, data.len(), "t", 0).unwrap(), data);
        let mut bad = f.clone();
        bad[9] ^= 1;
        assert!(matches!(decompress(&bad, data.len(), "t", 0), Err(Error::Checksum { .. })));
    }

    #[test]
    fn absurd_length_refused_without_allocating() {
        assert!(decompress(&[b'Z', b'S', 1, 1, 0, 0, 1, 0, 0, 0], 1 << 47, "t", 0).is_err());
    }
}
