//! The StreamerInfo record of a ROOT file describing `ROOT::RNTuple` (class version 2), so that
//! ROOT's `TFile` and `hadd` find the anchor's layout. It is a streamed `TList` holding one
//! `TStreamerInfo` (version 10, as ROOT 6.38+ writes) with 11 `TStreamerBasicType` elements.
//! Built field by field from the layout of ROOT's object streaming (big-endian, byte counts
//! `0x40000000 | n`, class tags `0xFFFFFFFF` + name for a first use and `0x80000000 | offset`
//! for later uses, offsets counted from the start of the key).
//!
//! [`streamer_info_list`] adds, as ROOT does for an RNTuple with class fields, one
//! `TStreamerInfo` per class the RNTuple's fields use (their bases and nested classes included),
//! given as [`StreamerInfo`] records: the logical layer makes them from the classes
//! (`logical::class_streamers`), so that this file knows bytes, not types. The same records,
//! without `ROOT::RNTuple`'s, are an RNTuple's extra type information for its streamer fields
//! ([`streamer_info_object`]); [`from_read`] turns records read back into ones to write again.

use crate::storage::container::streamer_info_read::{ClassInfo, ElementClass};

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
    /// A TString: a length byte, or for 255 bytes and more ROOT's long form (255, then the
    /// length as a big-endian u32), then the bytes.
    fn tstring(&mut self, s: &str) {
        if s.len() < 255 {
            self.b.push(s.len() as u8);
        } else {
            self.b.push(255);
            self.b.extend_from_slice(&(s.len() as u32).to_be_bytes());
        }
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

/// The `TStreamerInfo` record of one class, as the file's StreamerInfo key lists it: built from
/// a class description by the logical layer (`logical::class_streamers`).
#[derive(Clone, Debug)]
pub struct StreamerInfo {
    /// The class name.
    pub name: String,
    /// The class checksum.
    pub checksum: u32,
    /// The class version.
    pub version: u32,
    /// Base classes, then data members.
    pub elements: Vec<StreamerElement>,
}

/// `TStreamerSTLstring`'s STL type and content type code.
const K_STL_STRING: u32 = 365;

/// ROOT basic type codes.
const K_USHORT: u32 = 12;
const K_ULONG: u32 = 14;

/// The (uncompressed) payload of the StreamerInfo key for a key header of `key_len` bytes:
/// `ROOT::RNTuple`'s streamer info only.
pub fn rntuple_streamer_info(key_len: usize) -> Vec<u8> {
    streamer_info_list(key_len, &[])
}

/// The (uncompressed) payload of the StreamerInfo key for a key header of `key_len` bytes:
/// `ROOT::RNTuple`'s streamer info, then `infos`, each (name, version) once, in their order.
pub fn streamer_info_list(key_len: usize, infos: &[StreamerInfo]) -> Vec<u8> {
    let mut w = Buf { b: Vec::with_capacity(1300), displacement: key_len };
    let mut seen = Vec::new();
    write_list(&mut w, &mut seen, true, infos);
    w.b
}

/// The extra type information of an RNTuple with streamer fields (content id 0): `infos` in a
/// `TList` written as `TBufferFile::WriteObject` writes it (a byte count, the class tag `TList`,
/// the list), without `ROOT::RNTuple`'s record; offsets count from the buffer's start.
pub fn streamer_info_object(infos: &[StreamerInfo]) -> Vec<u8> {
    let mut w = Buf { b: Vec::with_capacity(256 * (infos.len() + 1)), displacement: 0 };
    let mut seen = Vec::new();
    let obj = w.open();
    w.class_tag("TList", &mut seen);
    write_list(&mut w, &mut seen, false, infos);
    w.close(obj);
    w.b
}

/// A `TList` of `ROOT::RNTuple`'s record (when `rntuple`) and `infos`, each (name, version) once.
fn write_list(w: &mut Buf, seen: &mut Vec<(String, usize)>, rntuple: bool, infos: &[StreamerInfo]) {
    let mut unique: Vec<&StreamerInfo> = Vec::with_capacity(infos.len());
    for i in infos {
        if !unique.iter().any(|u| u.name == i.name && u.version == i.version) {
            unique.push(i);
        }
    }
    let infos = unique;
    // TList
    let list = w.open();
    w.u16(5);
    w.tobject(0);
    w.tstring("");
    w.u32(u32::from(rntuple) + infos.len() as u32);
    if rntuple {
        rntuple_info(w, seen);
        w.tstring(""); // the list's option string for the object
    }
    for c in infos {
        write_info(w, seen, c);
        w.tstring("");
    }
    w.close(list);
}

/// The `TStreamerInfo` of `ROOT::RNTuple` (as an object of a list: class tag and body).
fn rntuple_info(w: &mut Buf, seen: &mut Vec<(String, usize)>) {
    // the TStreamerInfo, as an object pointer
    let obj = w.open();
    w.class_tag("TStreamerInfo", seen);
    let si = w.open();
    w.u16(10);
    w.tnamed("ROOT::RNTuple", "", 0x0001_0000);
    w.u32(0x28E6_32EC); // class checksum of ROOT::RNTuple v2 ("unsigned long" members)
    w.u32(2); // class version
    let arr_obj = w.open();
    w.class_tag("TObjArray", seen);
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
        w.class_tag("TStreamerBasicType", seen);
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
}

/// Writes the `TStreamerInfo` `c` (as an object of a list: class tag and body).
fn write_info(w: &mut Buf, seen: &mut Vec<(String, usize)>, c: &StreamerInfo) {
    let obj = w.open();
    w.class_tag("TStreamerInfo", seen);
    let si = w.open();
    w.u16(10);
    w.tnamed(&c.name, "", 0x0001_0000);
    w.u32(c.checksum);
    w.u32(c.version);
    let elements = &c.elements;
    let arr_obj = w.open();
    w.class_tag("TObjArray", seen);
    let arr = w.open();
    w.u16(3);
    w.tobject(0);
    w.tstring("");
    w.u32(elements.len() as u32);
    w.u32(0); // lower bound
    for e in elements {
        e.write(w, seen);
    }
    w.close(arr);
    w.close(arr_obj);
    w.close(si);
    w.close(obj);
}

/// The records of `classes` as read from a file (`storage::container::streamer_info_read`), to be written
/// again (the classes of streamer fields whose records an RNTuple's extra type information
/// carries). A class with an element kind this file does not write (pointers to arrays,
/// `TObject`s, `TString`s, loops, ...) is left out; a base's checksum is its class's checksum in
/// `classes` (0 when absent); titles (`Double32_t` ranges) are not kept.
pub fn from_read(classes: &[ClassInfo]) -> Vec<StreamerInfo> {
    let convert = |c: &ClassInfo| -> Option<StreamerInfo> {
        let mut elements = Vec::with_capacity(c.elements.len());
        for e in &c.elements {
            let kind = match e.class {
                ElementClass::Base => ElementKind::Base { version: e.base_version },
                ElementClass::BasicType => ElementKind::Basic,
                ElementClass::Stl => ElementKind::Stl { stl: e.stl_type as u32, ctype: e.ctype as u32 },
                ElementClass::StlString => ElementKind::StlString,
                ElementClass::ObjectAny => ElementKind::Any,
                ElementClass::ObjectAnyPointer => ElementKind::AnyPointer,
                _ => return None,
            };
            let base_checksum = match e.class {
                ElementClass::Base => classes.iter().find(|b| b.name == e.name).map_or(0, |b| b.checksum),
                _ => 0,
            };
            let dims = e.dims.iter().map(|&d| u32::try_from(d).unwrap_or(0)).collect();
            elements.push(StreamerElement {
                kind,
                name: e.name.clone(),
                ty: e.ty as u32,
                size: e.size as u32,
                dims,
                base_checksum,
                type_name: e.type_name.clone(),
            });
        }
        Some(StreamerInfo { name: c.name.clone(), checksum: c.checksum, version: c.version as u32, elements })
    };
    classes.iter().filter_map(convert).collect()
}

/// Which `TStreamerElement` subclass an element is, with what that subclass adds.
#[derive(Clone, Copy, Debug)]
pub enum ElementKind {
    /// `TStreamerBasicType`: a fundamental type, an enum, an array of them.
    Basic,
    /// `TStreamerBase`: a base class, with its class version (-1 without a `ClassDef`).
    Base {
        /// The base class's version.
        version: i32,
    },
    /// `TStreamerSTL`: a collection, with its `ROOT::ESTLType` and content type code.
    Stl {
        /// `ROOT::ESTLType`.
        stl: u32,
        /// `fCtype`: the items' basic type code, or `kObject`.
        ctype: u32,
    },
    /// `TStreamerSTLstring`: a `std::string`.
    StlString,
    /// `TStreamerObjectAny`: a class, pair, tuple, variant or atomic by value.
    Any,
    /// `TStreamerObjectAnyPointer`: a pointer to a class.
    AnyPointer,
}

/// One element of a `TStreamerInfo`: a base class or a data member.
#[derive(Clone, Debug)]
pub struct StreamerElement {
    /// The element's subclass.
    pub kind: ElementKind,
    /// The member's (or base class's) name.
    pub name: String,
    /// `TVirtualStreamerInfo::EReadWrite` type code.
    pub ty: u32,
    /// In-memory size in bytes.
    pub size: u32,
    /// Array dimensions (a `std::array`'s, outermost first).
    pub dims: Vec<u32>,
    /// The fifth `fMaxIndex` slot holds a base class's checksum.
    pub base_checksum: u32,
    /// The type name ROOT records (`BASE` for a base class).
    pub type_name: String,
}

impl StreamerElement {
    fn write(&self, w: &mut Buf, seen: &mut Vec<(String, usize)>) {
        let (class, version) = match self.kind {
            ElementKind::Basic => ("TStreamerBasicType", 2),
            ElementKind::Base { .. } => ("TStreamerBase", 3),
            ElementKind::Stl { .. } => ("TStreamerSTL", 3),
            ElementKind::StlString => ("TStreamerSTLstring", 2),
            ElementKind::Any => ("TStreamerObjectAny", 2),
            ElementKind::AnyPointer => ("TStreamerObjectAnyPointer", 1),
        };
        let obj = w.open();
        w.class_tag(class, seen);
        let outer = w.open();
        w.u16(version);
        // A TStreamerSTLstring is a TStreamerSTL.
        let stl = matches!(self.kind, ElementKind::StlString).then(|| {
            let at = w.open();
            w.u16(3);
            at
        });
        let el = w.open();
        w.u16(4);
        w.tnamed(&self.name, "", 0);
        w.u32(self.ty);
        w.u32(self.size);
        w.u32(self.dims.iter().product::<u32>() * u32::from(!self.dims.is_empty()));
        w.u32(self.dims.len() as u32);
        for i in 0..5 {
            w.u32(if i == 1 && self.base_checksum != 0 { self.base_checksum } else { self.dims.get(i).copied().unwrap_or(0) });
        }
        w.tstring(&self.type_name);
        w.close(el);
        match self.kind {
            ElementKind::Base { version } => w.u32(version as u32),
            ElementKind::Stl { stl, ctype } => {
                w.u32(stl);
                w.u32(ctype);
            }
            ElementKind::StlString => {
                w.u32(K_STL_STRING);
                w.u32(K_STL_STRING);
            }
            ElementKind::Basic | ElementKind::Any | ElementKind::AnyPointer => {}
        }
        if let Some(at) = stl {
            w.close(at);
        }
        w.close(outer);
        w.close(obj);
    }
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

    #[test]
    fn class_names_of_255_bytes_and_more_take_the_long_tstring_form() {
        let name = format!("ns::{}", "C".repeat(296));
        let info = super::StreamerInfo { name: name.clone(), checksum: 7, version: 3, elements: Vec::new() };
        let b = super::streamer_info_list(72, &[info]);
        // ROOT's long form: 255, then the length as a big-endian u32, then the bytes.
        let mut long = vec![255u8];
        long.extend_from_slice(&300u32.to_be_bytes());
        long.extend_from_slice(name.as_bytes());
        assert!(b.windows(long.len()).any(|w| w == long));
        let back = crate::storage::container::streamer_info_read::parse_streamer_infos(&b, 72).unwrap();
        let c = back.iter().find(|c| c.name == name).expect("the long-named class read back");
        assert_eq!((c.version, c.checksum), (3, 7));
    }
}
