//! A reader of ROOT's `TBufferFile` object streaming (big-endian numbers, `TString`s, version
//! headers with byte counts, class tags and object references), shared by the parser of the
//! StreamerInfo record (`storage::container::streamer_info_read`) and the deserializer of streamed objects
//! (`read::streamer::streamed_object`). Pure: bytes in, numbers out; every length is checked against the
//! bytes present and every error names the byte offset (counted as ROOT counts it: from the start
//! of the buffer plus its displacement, the key header's length for a key's payload).
//!
//! ```
//! use rntuple::storage::container::tbuffer::TBuf;
//! // A byte count (0x40000000 | 7: the 7 bytes after it), version 3, then a TString "ab" and a
//! // big-endian u16.
//! let b = [0x40, 0, 0, 7, 0, 3, 2, b'a', b'b', 0, 7];
//! let mut r = TBuf::new(&b, 0, "example");
//! let h = r.version_header()?;
//! assert_eq!((h.version, h.end), (3, Some(11)));
//! assert_eq!(r.tstring()?, "ab");
//! assert_eq!(r.u16()?, 7);
//! assert!(r.u8().is_err()); // nothing left: an error naming the offset
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};

/// ROOT's `kByteCountMask`: the bit marking a byte count.
pub const BYTE_COUNT: u32 = 0x4000_0000;
/// ROOT's `kNewClassTag`: a class name follows.
pub const NEW_CLASS: u32 = 0xFFFF_FFFF;
/// ROOT's `kClassMask`: a reference to a class named earlier.
pub const CLASS_MASK: u32 = 0x8000_0000;
/// ROOT's `kMapOffset`: offsets in tags are positions plus 2.
pub const MAP_OFFSET: u32 = 2;
/// ROOT's `TBufferFile::kStreamedMemberWise`: the bit of a collection's version marking
/// member-wise streaming.
pub const MEMBER_WISE: u16 = 0x4000;

/// A version header: the version, and where the byte count says the object ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionHeader {
    /// The class version (with the member-wise bit when set).
    pub version: u16,
    /// Position (as counted by [`TBuf::pos`]) after the object, when a byte count was present.
    pub end: Option<usize>,
    /// The byte count itself (0 without one).
    pub count: u32,
}

/// What an object pointer's tag says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tag {
    /// `kNullTag`: a null pointer.
    Null,
    /// A reference to an object read earlier, by its map offset.
    Object(u32),
    /// A new object of the class, with its map offset and (with a byte count) its end.
    New {
        /// The class name.
        class: String,
        /// The offset ROOT maps the object at (its byte count's position + 2 + displacement).
        offset: u32,
        /// The object's end (from its byte count).
        end: Option<usize>,
    },
}

/// A big-endian cursor over streamed bytes.
pub struct TBuf<'a> {
    b: &'a [u8],
    pos: usize,
    disp: u32,
    what: &'static str,
    /// Map offset -> class name of the class tags read so far.
    classes: Vec<(u32, String)>,
}

impl<'a> TBuf<'a> {
    /// A cursor over `b`, whose first byte ROOT counts as `disp` (tags' offsets); `what` names
    /// the buffer in errors.
    pub fn new(b: &'a [u8], disp: u32, what: &'static str) -> Self {
        TBuf { b, pos: 0, disp, what, classes: Vec::new() }
    }
    /// The position (from the buffer's start).
    pub fn pos(&self) -> usize {
        self.pos
    }
    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }
    /// An error at the current position.
    pub fn err(&self, msg: impl std::fmt::Display) -> Error {
        self.err_at(self.pos, msg)
    }
    /// An error at position `pos`.
    pub fn err_at(&self, pos: usize, msg: impl std::fmt::Display) -> Error {
        Error::corrupt(format!("{} of {} bytes: {msg}", self.what, self.b.len() + self.disp as usize), pos as u64 + u64::from(self.disp))
    }
    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.err(format!("{n} bytes needed, {} left", self.remaining())));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// A byte.
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    /// A big-endian u16.
    pub fn u16(&mut self) -> Result<u16> {
        self.arr().map(u16::from_be_bytes)
    }
    /// A big-endian u32.
    pub fn u32(&mut self) -> Result<u32> {
        self.arr().map(u32::from_be_bytes)
    }
    /// A big-endian i32.
    pub fn i32(&mut self) -> Result<i32> {
        self.arr().map(i32::from_be_bytes)
    }
    /// A big-endian u64.
    pub fn u64(&mut self) -> Result<u64> {
        self.arr().map(u64::from_be_bytes)
    }
    /// A count of items of at least `item_size` bytes each (at least 1): an error when negative or
    /// when the bytes left cannot hold them (before anything is allocated).
    pub fn count(&mut self, item_size: usize, what: &str) -> Result<usize> {
        let at = self.pos;
        let n = self.i32()?;
        self.check_count(n as i64, item_size, what, at)
    }
    /// Checks that `n` items of at least `item_size` bytes (at least 1) fit in the bytes left.
    pub fn check_count(&self, n: i64, item_size: usize, what: &str, at: usize) -> Result<usize> {
        let n = usize::try_from(n).map_err(|_| self.err_at(at, format!("negative {what} {n}")))?;
        if n.saturating_mul(item_size.max(1)) > self.remaining() {
            return Err(self.err_at(at, format!("{what} {n} does not fit in the {} bytes left", self.remaining())));
        }
        Ok(n)
    }
    /// A `TString` (and `std::string`): a length byte (255: a u32 length follows), then the bytes.
    pub fn tstring(&mut self) -> Result<String> {
        let mut n = self.u8()? as usize;
        if n == 255 {
            n = self.u32()? as usize;
        }
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }
    /// A NUL-terminated string of at most `max` bytes (a class tag's name).
    pub fn cstring(&mut self, max: usize) -> Result<String> {
        let rest = &self.b[self.pos..];
        let n = rest.iter().take(max).position(|&c| c == 0).ok_or_else(|| self.err(format!("class name without its NUL within {max} bytes")))?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }
    /// Sets the position to `end` (an object's end from its byte count), which must not lie
    /// before the position nor past the bytes.
    pub fn seek_end(&mut self, end: usize, what: &str) -> Result<()> {
        if end < self.pos {
            return Err(self.err(format!("{what}: read past the end its byte count gives (byte {})", end + self.disp as usize)));
        }
        if end > self.b.len() {
            return Err(self.err(format!("{what}: byte count ends past the buffer")));
        }
        self.pos = end;
        Ok(())
    }
    /// ROOT's `ReadVersion`: a byte count (when its bit is set) then the version; the end the
    /// byte count gives is checked to lie within the bytes.
    pub fn version_header(&mut self) -> Result<VersionHeader> {
        let at = self.pos;
        let first = self.u32()?;
        if first & BYTE_COUNT == 0 {
            self.pos = at;
            return Ok(VersionHeader { version: self.u16()?, end: None, count: 0 });
        }
        let count = first & !BYTE_COUNT;
        let end = at + 4 + count as usize;
        if end > self.b.len() {
            return Err(self.err_at(at, format!("byte count {count} goes past the end of the bytes ({} left)", self.b.len() - at - 4)));
        }
        if count < 2 {
            return Err(self.err_at(at, format!("byte count {count} cannot hold a version")));
        }
        Ok(VersionHeader { version: self.u16()?, end: Some(end), count })
    }
    /// A `TObject`'s streamed form: version, unique id, bits (and the process id of a
    /// referenced object); returns the bits.
    pub fn tobject(&mut self) -> Result<u32> {
        self.version_header()?;
        let _unique_id = self.u32()?;
        let bits = self.u32()?;
        if bits & (1 << 4) != 0 {
            self.u16()?; // kIsReferenced: the process id
        }
        Ok(bits)
    }
    /// A `TNamed`: its version header, `TObject`, name and title.
    pub fn tnamed(&mut self) -> Result<(String, String)> {
        let h = self.version_header()?;
        self.tobject()?;
        let name = self.tstring()?;
        let title = self.tstring()?;
        if let Some(end) = h.end {
            self.seek_end(end, "TNamed")?;
        }
        Ok((name, title))
    }
    /// ROOT's `ReadObjectAny` up to the object's own bytes: a byte count (when present), then a
    /// class tag (new: `0xFFFFFFFF` and a name; `0x80000000 | offset`: a class named before), or
    /// a null tag, or a reference to an object read before.
    pub fn object_tag(&mut self) -> Result<Tag> {
        let start = self.pos;
        let first = self.u32()?;
        let (end, tag) = if first & BYTE_COUNT != 0 && first != NEW_CLASS {
            let count = (first & !BYTE_COUNT) as usize;
            if start + 4 + count > self.b.len() {
                return Err(self.err_at(start, format!("object byte count {count} goes past the end of the bytes ({} left)", self.b.len() - start - 4)));
            }
            (Some(start + 4 + count), self.u32()?)
        } else {
            (None, first)
        };
        let offset = (start as u32).saturating_add(MAP_OFFSET).saturating_add(self.disp);
        if tag == 0 {
            return Ok(Tag::Null);
        }
        if tag == NEW_CLASS {
            let tag_offset = (self.pos as u32 - 4).saturating_add(MAP_OFFSET).saturating_add(self.disp);
            let class = self.cstring(1024)?;
            self.classes.push((tag_offset, class.clone()));
            return Ok(Tag::New { class, offset, end });
        }
        if tag & CLASS_MASK != 0 {
            let at = tag & !CLASS_MASK;
            let class = self.classes.iter().find(|(o, _)| *o == at).map(|(_, c)| c.clone());
            let class = class.ok_or_else(|| self.err_at(start, format!("class tag refers to offset {at}, where no class was named")))?;
            return Ok(Tag::New { class, offset, end });
        }
        if end.is_some() {
            return Err(self.err_at(start, format!("object reference {tag:#x} after a byte count")));
        }
        Ok(Tag::Object(tag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_tags_and_references() {
        // At displacement 10: a new class "A" object (byte count 10), a reference to the class.
        let mut b = vec![0x40, 0, 0, 10, 0xFF, 0xFF, 0xFF, 0xFF, b'A', 0, 0, 1, 0, 0];
        b.extend_from_slice(&[0x40, 0, 0, 6, 0x80, 0, 0, 16, 0, 1]);
        b.extend_from_slice(&[0, 0, 0, 12, 0, 0, 0, 0]);
        let mut r = TBuf::new(&b, 10, "test");
        assert_eq!(r.object_tag().unwrap(), Tag::New { class: "A".into(), offset: 12, end: Some(14) });
        r.seek_end(14, "A").unwrap();
        assert_eq!(r.object_tag().unwrap(), Tag::New { class: "A".into(), offset: 26, end: Some(24) });
        r.seek_end(24, "A").unwrap();
        assert_eq!(r.object_tag().unwrap(), Tag::Object(12));
        assert_eq!(r.object_tag().unwrap(), Tag::Null);
    }

    #[test]
    fn hostile_counts() {
        // A byte count past the end; a reference to no class; a 2^31-ish count.
        let e = TBuf::new(&[0x40, 0, 1, 0, 0, 1], 0, "t").version_header().unwrap_err();
        assert!(e.to_string().contains("byte count 256 goes past the end"), "{e}");
        let e = TBuf::new(&[0x80, 0, 0, 40], 0, "t").object_tag().unwrap_err();
        assert!(e.to_string().contains("no class was named"), "{e}");
        let mut r = TBuf::new(&[0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0, "t");
        let e = r.count(1, "vector size").unwrap_err();
        assert!(e.to_string().contains("vector size 2147483647 does not fit in the 10 bytes left"), "{e}");
        let e = TBuf::new(&[0xFF, 0xFF, 0xFF, 0xFF, b'A'], 0, "t").object_tag().unwrap_err();
        assert!(e.to_string().contains("without its NUL"), "{e}");
    }
}
