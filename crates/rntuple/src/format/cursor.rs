//! A bounds-checked little-endian reader over a byte slice, used by every parser.

use crate::error::{Error, Result};

/// Cursor over an envelope or record. `name` names the envelope in errors.
#[derive(Clone)]
pub struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    name: &'static str,
}

macro_rules! get_le {
    ($fn:ident, $t:ty) => {
        #[doc = concat!("Reads a little-endian `", stringify!($t), "`.")]
        pub fn $fn(&mut self, what: &str) -> Result<$t> {
            const N: usize = std::mem::size_of::<$t>();
            let b = self.bytes(N, what)?;
            let mut a = [0u8; N];
            a.copy_from_slice(b);
            Ok(<$t>::from_le_bytes(a))
        }
    };
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8], name: &'static str) -> Self {
        Cursor { buf, pos: 0, name }
    }
    /// Current position.
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    /// An error at the current position.
    pub fn err(&self, what: impl Into<String>) -> Error {
        Error::in_envelope(what, self.pos as u64, self.name)
    }
    /// Moves to an absolute position within the buffer.
    pub fn seek(&mut self, pos: usize, what: &str) -> Result<()> {
        if pos > self.buf.len() {
            return Err(self.err(format!("{what}: jump to {pos} beyond the end ({} bytes)", self.buf.len())));
        }
        self.pos = pos;
        Ok(())
    }
    /// Takes `n` bytes.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err(format!("{what}: need {n} bytes, only {} left", self.remaining())));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    get_le!(u16, u16);
    get_le!(u32, u32);
    get_le!(u64, u64);
    get_le!(i32, i32);
    get_le!(i64, i64);
    get_le!(f64, f64);

    /// A string: u32 length then UTF-8 bytes.
    pub fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u32(what)? as usize;
        let b = self.bytes(n, what)?;
        String::from_utf8(b.to_vec()).map_err(|_| self.err(format!("{what}: not valid UTF-8")))
    }

    /// Feature flags: a sequence of u64 words, bit 63 = another word follows. Returns the list of
    /// set feature bits (excluding the continuation bit).
    pub fn feature_flags(&mut self) -> Result<Vec<u32>> {
        let mut set = Vec::new();
        let mut word = 0u32;
        loop {
            let w = self.u64("feature flags")?;
            for bit in 0..63 {
                if w & (1u64 << bit) != 0 {
                    set.push(word * 64 + bit);
                }
            }
            if w & (1u64 << 63) == 0 {
                break;
            }
            word += 1;
            if word > 1024 {
                return Err(self.err("feature flags: too many continuation words"));
            }
        }
        Ok(set)
    }

    /// Reads a frame preamble. Returns (frame kind, end position, item count for list frames).
    pub fn frame(&mut self, what: &str) -> Result<Frame> {
        let start = self.pos;
        let size = self.i64(what)?;
        let (is_list, abs) = if size < 0 { (true, size.unsigned_abs()) } else { (false, size as u64) };
        let header = if is_list { 12 } else { 8 };
        if abs < header as u64 {
            return Err(Error::in_envelope(format!("{what}: frame size {abs} smaller than its preamble"), start as u64, self.name));
        }
        let end = (start as u64).checked_add(abs).filter(|&e| e <= self.buf.len() as u64).ok_or_else(|| {
            Error::in_envelope(
                format!("{what}: frame of {abs} bytes extends beyond the envelope ({} bytes)", self.buf.len()),
                start as u64,
                self.name,
            )
        })? as usize;
        let n_items = if is_list { Some(self.u32(what)?) } else { None };
        Ok(Frame { start, end, n_items })
    }

    /// Reads a list frame and checks that the item count is plausible given its size
    /// (`min_item_size` bytes per item at least).
    pub fn list_frame(&mut self, what: &str, min_item_size: usize) -> Result<Frame> {
        let f = self.frame(what)?;
        let Some(n) = f.n_items else {
            return Err(Error::in_envelope(format!("{what}: expected a list frame, found a record frame"), f.start as u64, self.name));
        };
        if (n as u64).saturating_mul(min_item_size as u64) > (f.end - self.pos) as u64 {
            return Err(Error::in_envelope(
                format!("{what}: list claims {n} items but holds only {} bytes", f.end - self.pos),
                f.start as u64,
                self.name,
            ));
        }
        Ok(f)
    }

    /// Reads a record frame.
    pub fn record_frame(&mut self, what: &str) -> Result<Frame> {
        let f = self.frame(what)?;
        if f.n_items.is_some() {
            return Err(Error::in_envelope(format!("{what}: expected a record frame, found a list frame"), f.start as u64, self.name));
        }
        Ok(f)
    }

    /// Leaves a frame: jumps to its end (skipping unknown trailing members); errors if the parser
    /// read past it.
    pub fn leave(&mut self, f: &Frame, what: &str) -> Result<()> {
        if self.pos > f.end {
            return Err(Error::in_envelope(format!("{what}: contents overrun the frame end"), f.start as u64, self.name));
        }
        self.pos = f.end;
        Ok(())
    }

    /// Reads a locator.
    pub fn locator(&mut self, what: &str) -> Result<Locator> {
        let start = self.pos;
        let head = self.i32(what)?;
        if head >= 0 {
            let offset = self.u64(what)?;
            return Ok(Locator { size: head as u64, offset });
        }
        let h = head.unsigned_abs();
        let total = (h & 0xFFFF) as usize;
        let ty = (h >> 24) & 0x7F;
        if total < 4 {
            return Err(Error::in_envelope(format!("{what}: locator size {total} < 4"), start as u64, self.name));
        }
        let payload = self.bytes(total - 4, what)?;
        match ty {
            0x01 => {
                if payload.len() < 16 {
                    return Err(Error::in_envelope(format!("{what}: large locator payload of {} bytes", payload.len()), start as u64, self.name));
                }
                let mut a = [0u8; 8];
                a.copy_from_slice(&payload[0..8]);
                let size = u64::from_le_bytes(a);
                a.copy_from_slice(&payload[8..16]);
                let offset = u64::from_le_bytes(a);
                Ok(Locator { size, offset })
            }
            _ => Err(Error::Unsupported(format!(
                "{what}: locator type {ty:#x} (not a file locator) in {} envelope at byte {start}",
                self.name
            ))),
        }
    }
}

/// A parsed frame preamble.
#[derive(Debug, Clone, Copy)]
pub struct Frame {
    /// Position of the frame's first byte.
    pub start: usize,
    /// Position just past the frame.
    pub end: usize,
    /// Item count (list frames).
    pub n_items: Option<u32>,
}

impl Frame {
    /// Number of items (0 for record frames).
    pub fn len(&self) -> u32 {
        self.n_items.unwrap_or(0)
    }
    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Where a block of bytes is: stored size and absolute file offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Locator {
    /// Stored (possibly compressed) size in bytes.
    pub size: u64,
    /// Absolute offset in the file.
    pub offset: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_locators() {
        let mut b = Vec::new();
        b.extend_from_slice(&(-(12i64 + 12)).to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&7i32.to_le_bytes());
        b.extend_from_slice(&1000u64.to_le_bytes());
        let mut c = Cursor::new(&b, "test");
        let f = c.list_frame("l", 12).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(c.locator("loc").unwrap(), Locator { size: 7, offset: 1000 });
        c.leave(&f, "l").unwrap();
        assert_eq!(c.remaining(), 0);
    }

    #[test]
    fn lying_list_count_is_refused() {
        let mut b = Vec::new();
        b.extend_from_slice(&(-12i64).to_le_bytes());
        b.extend_from_slice(&u32::MAX.to_le_bytes());
        let mut c = Cursor::new(&b, "test");
        assert!(c.list_frame("l", 1).is_err());
    }

    #[test]
    fn large_locator() {
        let mut b = Vec::new();
        b.extend_from_slice(&(-(20i32 | (1 << 24))).to_le_bytes());
        b.extend_from_slice(&(5u64 << 32).to_le_bytes());
        b.extend_from_slice(&(9u64 << 32).to_le_bytes());
        let mut c = Cursor::new(&b, "test");
        assert_eq!(c.locator("x").unwrap(), Locator { size: 5 << 32, offset: 9 << 32 });
    }
}
