//! PNG files written by hand: 8-bit RGB, one zlib stream (flate2) of unfiltered rows, CRC-32 per
//! chunk (ISO/IEC 15948: signature, IHDR, IDAT, IEND).

use super::raster::Canvas;
use std::io::Write;

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) -> std::io::Result<()> {
    let len = u32::try_from(data.len()).map_err(|_| std::io::Error::other("PNG chunk above 4 GiB"))?;
    out.extend_from_slice(&len.to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut crc = flate2::Crc::new();
    crc.update(&out[start..]);
    out.extend_from_slice(&crc.sum().to_be_bytes());
    Ok(())
}

/// The canvas as the bytes of a PNG file.
pub(crate) fn encode(c: &Canvas) -> std::io::Result<Vec<u8>> {
    let (w, h) = (u32::try_from(c.width).map_err(std::io::Error::other)?, u32::try_from(c.height).map_err(std::io::Error::other)?);
    if c.width == 0 || c.height == 0 || c.rgb.len() != c.width * c.height * 3 {
        return Err(std::io::Error::other(format!("PNG of {} x {} pixels from {} bytes", c.width, c.height, c.rgb.len())));
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    // 8 bits per sample, colour type 2 (RGB), deflate, adaptive filtering (each row: filter 0), no interlace.
    ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr)?;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    for row in c.rgb.chunks(c.width * 3) {
        z.write_all(&[0])?;
        z.write_all(row)?;
    }
    chunk(&mut out, b"IDAT", &z.finish()?)?;
    chunk(&mut out, b"IEND", &[])?;
    Ok(out)
}
