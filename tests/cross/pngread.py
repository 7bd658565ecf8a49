"""A PNG decoder for the tests (zlib, struct and numpy; no imaging library): 8-bit grey, RGB, grey+alpha and RGBA,
not interlaced, every row filter; each chunk's CRC is checked. Rows filtered by Sub and Up are undone with numpy;
Average and Paeth (which depend on the pixel to the left) pixel by pixel."""

from __future__ import annotations

import struct
import zlib

import numpy as np

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def chunks(data: bytes):
    """(type, payload) of each chunk, CRCs checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos = 8
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + payload) == crc, f"bad CRC of chunk {kind!r} at byte {pos}"
        yield kind, payload
        pos += 12 + n


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def decode(data: bytes) -> np.ndarray:
    """The pixels, shape (height, width, channels), uint8."""
    header, idat, kinds = None, b"", []
    for kind, payload in chunks(data):
        kinds.append(kind)
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", payload)
        elif kind == b"IDAT":
            idat += payload
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND", kinds
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in CHANNELS and interlace == 0, header
    bpp = CHANNELS[colour]
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8)
    assert raw.size == height * (stride + 1), f"{raw.size} bytes for {height} rows of {stride + 1}"
    rows = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        f, line = rows[y, 0], rows[y, 1:]
        if f == 0:
            cur = line.copy()
        elif f == 1:
            cur = (np.cumsum(line.reshape(width, bpp).astype(np.int64), axis=0) % 256).astype(np.uint8).reshape(-1)
        elif f == 2:
            cur = (line.astype(np.int64) + prev).astype(np.uint8)
        elif f in (3, 4):
            cur = np.zeros(stride, dtype=np.int64)
            src, up = line.astype(np.int64), prev.astype(np.int64)
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                c = up[i - bpp] if i >= bpp else 0
                pred = (a + up[i]) // 2 if f == 3 else _paeth(a, up[i], c)
                cur[i] = (src[i] + pred) % 256
            cur = cur.astype(np.uint8)
        else:
            raise AssertionError(f"row {y}: filter type {f}")
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)
