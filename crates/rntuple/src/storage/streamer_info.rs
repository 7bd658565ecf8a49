//! The StreamerInfo record of a ROOT file describing `ROOT::RNTuple` (class version 2), so that
//! ROOT's `TFile` and `hadd` find the anchor's layout. It is a streamed `TList` holding one
//! `TStreamerInfo` (version 10, as ROOT 6.38+ writes) with 11 `TStreamerBasicType` elements.
//! Built field by field from the layout of ROOT's object streaming (big-endian, byte counts
//! `0x40000000 | n`, class tags `0xFFFFFFFF` + name for a first use and `0x80000000 | offset`
//! for later uses, offsets counted from the start of the key).
//!
//! [`streamer_info_list`] adds, as ROOT does for an RNTuple with class fields, one
//! `TStreamerInfo` per class the RNTuple's fields use (their bases and nested classes included):
//! see [`classes`].

use crate::logical::typename::ClassDef;

pub mod classes;

/// Big-endian buffer with ROOT byte counts.
struct Buf {
    b: Vec<u8>,
    /// Offset of the buffer's first byte within the key (the key header length).
    displacement: usize,
}

impl Buf {
    fn u16(&mut self, v: u16) {
        self.b.extend_from_slice(&v.to_be_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.b.extend_from_slice(&v.to_be_bytes());
    }
    fn tstring(&mut self, s: &str) {
        self.b.push(s.len() as u8);
        self.b.extend_from_slice(s.as_bytes());
    }
    /// Starts a byte-counted section; returns its position.
    fn open(&mut self) -> usize {
        let at = self.b.len();
        self.u32(0);
        at
    }
    fn close(&mut self, at: usize) {
        let n = (self.b.len() - at - 4) as u32;
        self.b[at..at + 4].copy_from_slice(&(0x4000_0000 | n).to_be_bytes());
    }
    /// A TObject: version 1, unique id 0, bits.
    fn tobject(&mut self, bits: u32) {
        self.u16(1);
        self.u32(0);
        self.u32(bits);
    }
    fn tnamed(&mut self, name: &str, title: &str, bits: u32) {
        let at = self.open();
        self.u16(1);
        self.tobject(bits);
        self.tstring(name);
        self.tstring(title);
        self.close(at);
    }
    /// Writes a class tag: new (0xFFFFFFFF + name + NUL) the first time, a reference later.
    fn class_tag(&mut self, name: &str, seen: &mut Vec<(String, usize)>) {
        if let Some((_, pos)) = seen.iter().find(|(n, _)| n == name) {
            self.u32(0x8000_0000 | (*pos as u32));
        } else {
            let pos = self.displacement + self.b.len() + 2;
            self.u32(0xFFFF_FFFF);
            self.b.extend_from_slice(name.as_bytes());
            self.b.push(0);
            seen.push((name.to_string(), pos));
        }
    }
}

/// ROOT basic type codes.
const K_USHORT: u32 = 12;
const K_ULONG: u32 = 14;

/// The (uncompressed) payload of the StreamerInfo key for a key header of `key_len` bytes:
/// `ROOT::RNTuple`'s streamer info only.
pub fn rntuple_streamer_info(key_len: usize) -> Vec<u8> {
    streamer_info_list(key_len, &[])
}

/// The (uncompressed) payload of the StreamerInfo key for a key header of `key_len` bytes:
/// `ROOT::RNTuple`'s streamer info, then those of `classes` and of the classes they use (bases,
/// member classes), each once, in that order (depth first).
pub fn streamer_info_list(key_len: usize, classes: &[ClassDef]) -> Vec<u8> {
    let infos = classes::with_dependencies(classes);
    let mut w = Buf { b: Vec::with_capacity(1300), displacement: key_len };
    let mut seen = Vec::new();
    // TList
    let list = w.open();
    w.u16(5);
    w.tobject(0);
    w.tstring("");
    w.u32(1 + infos.len() as u32);
    // the TStreamerInfo, as an object pointer
    let obj = w.open();
    w.class_tag("TStreamerInfo", &mut seen);
    let si = w.open();
    w.u16(10);
    w.tnamed("ROOT::RNTuple", "", 0x0001_0000);
    w.u32(0x28E6_32EC); // class checksum of ROOT::RNTuple v2 ("unsigned long" members)
    w.u32(2); // class version
    let arr_obj = w.open();
    w.class_tag("TObjArray", &mut seen);
    let arr = w.open();
    w.u16(3);
    w.tobject(0);
    w.tstring("");
    let members: [(&str, u32, u32, &str); 11] = [
        ("fVersionEpoch", K_USHORT, 2, "unsigned short"),
        ("fVersionMajor", K_USHORT, 2, "unsigned short"),
        ("fVersionMinor", K_USHORT, 2, "unsigned short"),
        ("fVersionPatch", K_USHORT, 2, "unsigned short"),
        ("fSeekHeader", K_ULONG, 8, "unsigned long"),
        ("fNBytesHeader", K_ULONG, 8, "unsigned long"),
        ("fLenHeader", K_ULONG, 8, "unsigned long"),
        ("fSeekFooter", K_ULONG, 8, "unsigned long"),
        ("fNBytesFooter", K_ULONG, 8, "unsigned long"),
        ("fLenFooter", K_ULONG, 8, "unsigned long"),
        ("fMaxKeySize", K_ULONG, 8, "unsigned long"),
    ];
    w.u32(members.len() as u32);
    w.u32(0); // lower bound
    for (name, ty, size, type_name) in members {
        let el = w.open();
        w.class_tag("TStreamerBasicType", &mut seen);
        let bt = w.open();
        w.u16(2);
        let se = w.open();
        w.u16(4);
        w.tnamed(name, "", 0);
        w.u32(ty);
        w.u32(size);
        w.u32(0); // array length
        w.u32(0); // array dimensions
        for _ in 0..5 {
            w.u32(0); // max index
        }
        w.tstring(type_name);
        w.close(se);
        w.close(bt);
        w.close(el);
    }
    w.close(arr);
    w.close(arr_obj);
    w.close(si);
    w.close(obj);
    w.tstring(""); // the list's option string for the object
    for c in infos {
        classes::write_info(&mut w, &mut seen, c);
        w.tstring("");
    }
    w.close(list);
    w.b
}

#[cfg(test)]
mod tests {
    #[test]
    fn layout_and_size() {
        let b = super::rntuple_streamer_info(72);
        assert_eq!(b.len(), 1254);
        assert_eq!(&b[0..4], &(0x4000_0000u32 | 1250).to_be_bytes());
        // The second TStreamerBasicType refers back to the first one's class tag.
        let tag = b.windows(18).position(|w| w == b"TStreamerBasicType").unwrap() - 4;
        let r = (0x8000_0000u32 | (72 + tag + 2) as u32).to_be_bytes();
        assert!(b.windows(4).any(|w| w == r));
    }
}
