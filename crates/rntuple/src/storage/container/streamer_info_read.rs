//! Reads the StreamerInfo record of a ROOT file (the payload of its StreamerInfo key: a streamed
//! `TList` of `TStreamerInfo`): per class its name, version, checksum and elements (base classes
//! and data members: name, type code, type name, array dimensions, collection type, count member,
//! and the range and bits of a `Double32_t`/`Float16_t` from its title). The counterpart of
//! `storage::container::streamer_info`, which writes such records. Pure: bytes in, records out; objects of
//! other classes in the list (the schema-evolution rules' `TList`) are skipped by their byte count.
//!
//! ```
//! use rntuple::storage::container::streamer_info::rntuple_streamer_info;
//! use rntuple::storage::container::streamer_info_read::parse_streamer_infos;
//! let infos = parse_streamer_infos(&rntuple_streamer_info(72), 72)?;
//! assert_eq!(infos[0].name, "ROOT::RNTuple");
//! assert_eq!(infos[0].version, 2);
//! assert_eq!(infos[0].elements[4].name, "fSeekHeader");
//! assert_eq!(infos[0].elements[4].type_name, "unsigned long");
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::Result;
use crate::storage::container::tbuffer::{TBuf, Tag};

/// Most nested objects (lists in lists) the record may hold.
const MAX_DEPTH: usize = 16;

/// One class's `TStreamerInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassInfo {
    /// The class name.
    pub name: String,
    /// The class version.
    pub version: i32,
    /// The class checksum.
    pub checksum: u32,
    /// Base classes, then data members, in streaming order.
    pub elements: Vec<ElementInfo>,
}

/// Which `TStreamerElement` subclass an element is.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElementClass {
    Base,
    BasicType,
    BasicPointer,
    Loop,
    String,
    Stl,
    StlString,
    Object,
    ObjectAny,
    ObjectPointer,
    ObjectAnyPointer,
    Artificial,
}

impl ElementClass {
    fn from_name(n: &str) -> Option<Self> {
        use ElementClass::*;
        Some(match n {
            "TStreamerBase" => Base,
            "TStreamerBasicType" => BasicType,
            "TStreamerBasicPointer" => BasicPointer,
            "TStreamerLoop" => Loop,
            "TStreamerString" => String,
            "TStreamerSTL" => Stl,
            "TStreamerSTLstring" => StlString,
            "TStreamerObject" => Object,
            "TStreamerObjectAny" => ObjectAny,
            "TStreamerObjectPointer" => ObjectPointer,
            "TStreamerObjectAnyPointer" => ObjectAnyPointer,
            "TStreamerArtificial" => Artificial,
            _ => return None,
        })
    }
}

/// The range of a `Double32_t`/`Float16_t` as ROOT's `TStreamerElement::GetRange` computes it
/// from the title `[xmin,xmax(,nbits)]`: with `factor` 0, `xmin` holds the mantissa bits (0:
/// a plain float).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// The lower end (or the mantissa bits + 0.1 without a range).
    pub xmin: f64,
    /// The upper end.
    pub xmax: f64,
    /// `2^nbits / (xmax - xmin)`, 0 without a range.
    pub factor: f64,
}

/// One `TStreamerElement`.
#[derive(Debug, Clone, PartialEq)]
pub struct ElementInfo {
    /// The element's subclass.
    pub class: ElementClass,
    /// The member's (or base class's) name.
    pub name: String,
    /// The title (the member's comment).
    pub title: String,
    /// `TVirtualStreamerInfo::EReadWrite` type code.
    pub ty: i32,
    /// In-memory size.
    pub size: i32,
    /// Elements of a fixed array (0: not an array).
    pub array_length: i32,
    /// The array's dimensions, outermost first.
    pub dims: Vec<i32>,
    /// The member's type name (`BASE` for a base class).
    pub type_name: String,
    /// A base class's version.
    pub base_version: i32,
    /// A collection's `ROOT::ESTLType` (365 for `std::string`).
    pub stl_type: i32,
    /// A collection's content type code.
    pub ctype: i32,
    /// The counter member of a pointer to an array (`TStreamerBasicPointer`, `TStreamerLoop`).
    pub count_name: String,
    /// Range and bits of a `Double32_t`/`Float16_t`.
    pub range: Option<Range>,
}

/// Parses the StreamerInfo record `b` (a key's uncompressed payload; `key_len`: its key
/// header's length, from which ROOT counts the tags' offsets).
pub fn parse_streamer_infos(b: &[u8], key_len: u32) -> Result<Vec<ClassInfo>> {
    let mut r = TBuf::new(b, key_len, "StreamerInfo record");
    let mut out = Vec::new();
    list(&mut r, &mut out, 0)?;
    Ok(out)
}

/// Parses the extra type information of an RNTuple (content id 0): a `TList` of `TStreamerInfo`s
/// written as an object (a byte count and the class tag `TList` first), offsets counted from the
/// start of `b`.
pub fn parse_streamer_info_object(b: &[u8]) -> Result<Vec<ClassInfo>> {
    let mut r = TBuf::new(b, 0, "extra type information");
    let mut out = Vec::new();
    match r.object_tag()? {
        Tag::New { class, .. } if class == "TList" => list(&mut r, &mut out, 0)?,
        Tag::Null => {}
        t => return Err(r.err(format!("the streamer infos are not a TList ({t:?})"))),
    }
    Ok(out)
}

/// A `TList` (its version header, `TObject`, name, objects each followed by an option string).
fn list(r: &mut TBuf, out: &mut Vec<ClassInfo>, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(r.err("lists nested too deeply"));
    }
    let h = r.version_header()?;
    if h.version > 3 {
        r.tobject()?;
        r.tstring()?;
    }
    let n = r.count(4, "TList size")?;
    for _ in 0..n {
        match r.object_tag()? {
            Tag::New { class, end, .. } => {
                match class.as_str() {
                    "TStreamerInfo" => out.push(info(r)?),
                    "TList" => list(r, &mut Vec::new(), depth + 1)?,
                    _ if end.is_none() => return Err(r.err(format!("object of class {class} without a byte count"))),
                    _ => {}
                }
                if let Some(end) = end {
                    r.seek_end(end, &class)?;
                }
            }
            Tag::Null | Tag::Object(_) => {}
        }
        if h.version > 4 {
            let n = r.u8()? as usize;
            r.take(n)?;
        }
    }
    if let Some(end) = h.end {
        r.seek_end(end, "TList")?;
    }
    Ok(())
}

/// A `TStreamerInfo`'s body.
fn info(r: &mut TBuf) -> Result<ClassInfo> {
    let h = r.version_header()?;
    let (name, _) = r.tnamed()?;
    let checksum = r.u32()?;
    let version = r.i32()?;
    let mut elements = Vec::new();
    match r.object_tag()? {
        Tag::New { class, end, .. } if class == "TObjArray" => {
            let ah = r.version_header()?;
            if ah.version > 2 {
                r.tobject()?;
            }
            if ah.version > 1 {
                r.tstring()?;
            }
            let n = r.count(4, "number of elements")?;
            let _lower = r.i32()?;
            for _ in 0..n {
                elements.push(element(r).map_err(|e| e.context(format!("a streamer element of class {name}")))?);
            }
            if let Some(end) = ah.end {
                r.seek_end(end, "TObjArray")?;
            }
            if let Some(end) = end {
                r.seek_end(end, "TObjArray")?;
            }
        }
        Tag::Null => {}
        t => return Err(r.err(format!("the elements of class {name} are not a TObjArray ({t:?})"))),
    }
    if let Some(end) = h.end {
        r.seek_end(end, "TStreamerInfo")?;
    }
    Ok(ClassInfo { name, version, checksum, elements })
}

/// One element (an object of a `TStreamerElement` subclass).
fn element(r: &mut TBuf) -> Result<ElementInfo> {
    let (class_name, end) = match r.object_tag()? {
        Tag::New { class, end, .. } => (class, end),
        t => return Err(r.err(format!("expected a streamer element, found {t:?}"))),
    };
    let class = ElementClass::from_name(&class_name).ok_or_else(|| r.err(format!("unknown streamer element class {class_name}")))?;
    let outer = r.version_header()?;
    // A TStreamerSTLstring is a TStreamerSTL.
    let stl = if class == ElementClass::StlString { Some(r.version_header()?) } else { None };
    let eh = r.version_header()?;
    let (name, title) = r.tnamed()?;
    let ty = r.i32()?;
    let size = r.i32()?;
    let array_length = r.i32()?;
    let array_dim = r.i32()?;
    let max_index: Vec<i32> = if eh.version == 1 {
        let n = r.count(4, "fMaxIndex length")?;
        (0..n).map(|_| r.i32()).collect::<Result<_>>()?
    } else {
        (0..5).map(|_| r.i32()).collect::<Result<_>>()?
    };
    let type_name = r.tstring()?;
    if let Some(end) = eh.end {
        r.seek_end(end, "TStreamerElement")?;
    }
    let n_dims = usize::try_from(array_dim).unwrap_or(0).min(max_index.len());
    let dims = max_index[..n_dims].to_vec();
    let range = matches!(ty % 20, 9 | 19).then(|| range(&title)).flatten();
    let ty = if ty == 11 && (type_name == "Bool_t" || type_name == "bool") { 18 } else { ty };
    let mut e =
        ElementInfo { class, name, title, ty, size, array_length, dims, type_name, base_version: 0, stl_type: 0, ctype: 0, count_name: String::new(), range };
    match class {
        ElementClass::Base if outer.version > 2 => e.base_version = r.i32()?,
        ElementClass::BasicPointer | ElementClass::Loop => {
            let _count_version = r.i32()?;
            e.count_name = r.tstring()?;
            let _count_class = r.tstring()?;
        }
        ElementClass::Stl | ElementClass::StlString => {
            e.stl_type = r.i32()?;
            e.ctype = r.i32()?;
        }
        _ => {}
    }
    for end in [stl.and_then(|h| h.end), outer.end, end].into_iter().flatten() {
        r.seek_end(end, &class_name)?;
    }
    Ok(e)
}

/// One bound of a range as `GetRange` reads it: a number, or a multiple of pi.
fn bound(s: &str) -> f64 {
    let s = s.to_lowercase().replace(' ', "");
    if s.contains("pi") {
        let pi = std::f64::consts::PI;
        let v = if s.contains("2pi") || s.contains("2*pi") || s.contains("twopi") {
            2.0 * pi
        } else if s.contains("pi/2") {
            pi / 2.0
        } else if s.contains("pi/4") {
            pi / 4.0
        } else {
            pi
        };
        return if s.contains('-') { -v } else { v };
    }
    // sscanf("%lg"): the longest numeric prefix (of at most 64 characters).
    let num: String = s.chars().take_while(|c| c.is_ascii_digit() || "+-.eE".contains(*c)).take(64).collect();
    (1..=num.len()).rev().find_map(|n| num[..n].parse::<f64>().ok()).unwrap_or(0.0)
}

/// The range ROOT's `TStreamerElement::GetRange` finds in a title: the first bracket holding a
/// comma (a bracket without one may be a dimension), `[xmin,xmax]` or `[xmin,xmax,nbits]`.
fn range(title: &str) -> Option<Range> {
    let mut left = title.find('[')?;
    let mut right = left + title[left..].find(']')?;
    let mut comma = title[left..].find(',').map(|c| c + left);
    if comma.is_none_or(|c| c > right) {
        left = right + title[right..].find('[')?;
        right = left + title[left..].find(']')?;
        comma = title[left..].find(',').map(|c| c + left).filter(|&c| c < right);
    }
    let comma = comma?;
    let mut nbits = 32u32;
    let mut hi_end = right;
    if let Some(c2) = title[comma + 1..].find(',').map(|c| c + comma + 1).filter(|&c| c < right) {
        let digits: String = title[c2 + 1..right].trim().chars().take_while(|c| c.is_ascii_digit() || *c == '-').collect();
        nbits = digits.parse::<i64>().ok().filter(|n| (2..=32).contains(n)).map_or(32, |n| n as u32);
        hi_end = c2;
    }
    let mut xmin = bound(&title[left + 1..comma]);
    let xmax = bound(&title[comma + 1..hi_end]);
    let bigint = if nbits < 32 { (1u64 << nbits) as f64 } else { u32::MAX as f64 };
    let factor = if xmin < xmax { bigint / (xmax - xmin) } else { 0.0 };
    if xmin >= xmax && nbits < 15 {
        xmin = nbits as f64 + 0.1;
    }
    Some(Range { xmin, xmax, factor })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::container::streamer_info::{streamer_info_list, ElementKind, StreamerElement, StreamerInfo};

    fn el(kind: ElementKind, name: &str, ty: u32, dims: Vec<u32>, type_name: &str) -> StreamerElement {
        StreamerElement { kind, name: name.into(), ty, size: 4, dims, base_checksum: 0, type_name: type_name.into() }
    }

    #[test]
    fn reads_what_the_writer_writes() {
        let elements = vec![
            el(ElementKind::Base { version: 3 }, "B", 0, vec![], "BASE"),
            el(ElementKind::Basic, "x", 3, vec![2, 3], "int"),
            el(ElementKind::Stl { stl: 1, ctype: 5 }, "v", 500, vec![], "vector<float>"),
            el(ElementKind::StlString, "s", 500, vec![], "string"),
            el(ElementKind::Any, "o", 62, vec![], "Inner"),
            el(ElementKind::AnyPointer, "p", 69, vec![], "Inner*"),
        ];
        let a = StreamerInfo { name: "A".into(), checksum: 77, version: 5, elements };
        let b = StreamerInfo { name: "B".into(), checksum: 8, version: 3, elements: vec![] };
        let infos = parse_streamer_infos(&streamer_info_list(60, &[a, b]), 60).unwrap();
        assert_eq!(infos.len(), 3);
        let a = &infos[1];
        assert_eq!((a.name.as_str(), a.version, a.checksum, a.elements.len()), ("A", 5, 77, 6));
        let e = &a.elements;
        assert_eq!((e[0].class, e[0].base_version), (ElementClass::Base, 3));
        assert_eq!((e[1].class, e[1].ty, e[1].array_length, e[1].dims.clone()), (ElementClass::BasicType, 3, 6, vec![2, 3]));
        assert_eq!((e[2].class, e[2].stl_type, e[2].ctype, e[2].type_name.as_str()), (ElementClass::Stl, 1, 5, "vector<float>"));
        assert_eq!((e[3].class, e[3].stl_type), (ElementClass::StlString, 365));
        assert_eq!((e[4].class, e[4].ty, e[4].name.as_str()), (ElementClass::ObjectAny, 62, "o"));
        assert_eq!((e[5].class, e[5].type_name.as_str()), (ElementClass::ObjectAnyPointer, "Inner*"));
        assert_eq!((infos[2].name.as_str(), infos[2].elements.len()), ("B", 0));
    }

    #[test]
    fn ranges_from_titles() {
        let r = range("[0, 100, 10] energy").unwrap();
        assert_eq!((r.xmin, r.xmax, r.factor), (0.0, 100.0, 1024.0 / 100.0));
        let r = range("[-pi,pi,16]").unwrap();
        assert!((r.xmin + std::f64::consts::PI).abs() < 1e-15 && r.factor > 0.0);
        let r = range("[0,0,12]").unwrap();
        assert_eq!((r.xmin, r.factor), (12.1, 0.0));
        let r = range("[3][0,1]").unwrap(); // a dimension first
        assert_eq!((r.xmin, r.xmax, r.factor), (0.0, 1.0, u32::MAX as f64));
        assert_eq!(range("no range"), None);
        assert_eq!(range("[5]"), None);
    }

    #[test]
    fn hostile_records() {
        let good = streamer_info_list(60, &[]);
        // Every truncation is an error, never a panic.
        for n in 0..good.len() {
            assert!(parse_streamer_infos(&good[..n], 60).is_err(), "truncated to {n}");
        }
        // A list claiming 2^31-1 objects.
        let mut b = good.clone();
        let at = 4 + 2 + 10 + 1;
        b[at..at + 4].copy_from_slice(&0x7FFF_FFFFu32.to_be_bytes());
        let e = parse_streamer_infos(&b, 60).unwrap_err().to_string();
        assert!(e.contains("TList size 2147483647 does not fit"), "{e}");
        // Flipping any byte gives a result or an error, never a panic.
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0xA5;
            let _ = parse_streamer_infos(&b, 60);
        }
    }
}
