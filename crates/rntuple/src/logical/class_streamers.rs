//! The `TStreamerInfo` records (see `storage::container::streamer_info`, which writes them) of a class
//! written as an RNTuple class field, as ROOT 6.40 writes it for
//! a class it knows through an interpreted dictionary: one element per base class
//! (`TStreamerBase`) and per data member (`TStreamerBasicType` for fundamental types, enums and
//! `std::array`s of them, `TStreamerSTLstring`, `TStreamerSTL` for the collections,
//! `TStreamerObjectAny` for classes, pairs, tuples, variants and atomics,
//! `TStreamerObjectAnyPointer` for a `std::unique_ptr` of a class), with the in-memory sizes of
//! the x86-64 Itanium ABI and libstdc++ (`std::string` 32 bytes, `std::vector` 24, the sets and
//! maps 48, the unordered ones 56). Like ROOT for interpreted classes, no element is written for a
//! `std::bitset` or a `std::unique_ptr` of a non-class.
//!
//! ROOT records a class's version and whether it has a `ClassDef`; a [`ClassDef`] has only the
//! version, so a class of version 1 is taken to have no `ClassDef` (base version `-1`, no
//! virtual table) and one of another version to have one (a virtual table pointer first).

use crate::logical::kind::Scalar;
use crate::logical::typename::{ClassDef, TypeExpr};
use crate::storage::container::streamer_info::{ElementKind as Kind, StreamerElement as Element, StreamerInfo};

/// `TStreamerInfo` element type codes (`TVirtualStreamerInfo::EReadWrite`).
const K_OFFSET_L: u32 = 20;
const K_ANY: u32 = 62;
const K_ANY_P: u32 = 69;
const K_OBJECT: u32 = 61;
const K_STL: u32 = 500;

/// The classes whose streamer infos describe `classes`: each class, then (depth first) its
/// bases and the classes its members use, each (name, version) once.
fn with_dependencies(classes: &[ClassDef]) -> Vec<&ClassDef> {
    fn visit_type<'a>(t: &'a TypeExpr, out: &mut Vec<&'a ClassDef>) {
        match t {
            TypeExpr::Class(c) => visit(c, out),
            TypeExpr::Collection(_, c) | TypeExpr::Optional(_, c) | TypeExpr::Array(c, _) | TypeExpr::Atomic(c) => visit_type(c, out),
            TypeExpr::Map(_, k, v) => {
                visit_type(k, out);
                visit_type(v, out);
            }
            TypeExpr::Tuple(_, items) | TypeExpr::Variant(items) => items.iter().for_each(|i| visit_type(i, out)),
            TypeExpr::Record(members) => members.iter().for_each(|(_, m)| visit_type(m, out)),
            TypeExpr::Scalar(..) | TypeExpr::String | TypeExpr::Bitset(_) | TypeExpr::Enum(..) => {}
        }
    }
    fn visit<'a>(c: &'a ClassDef, out: &mut Vec<&'a ClassDef>) {
        if out.iter().any(|o| o.name == c.name && o.version == c.version) {
            return;
        }
        out.push(c);
        c.bases.iter().for_each(|b| visit(b, out));
        c.members.iter().for_each(|(_, t)| visit_type(t, out));
    }
    let mut out = Vec::new();
    classes.iter().for_each(|c| visit(c, &mut out));
    out
}

/// The `TStreamerInfo` records describing `classes`: each class, then (depth first) its bases and
/// the classes its members use, each (name, version) once.
pub(crate) fn streamer_infos(classes: &[ClassDef]) -> Vec<StreamerInfo> {
    with_dependencies(classes).into_iter().map(streamer_info).collect()
}

/// The `TStreamerInfo` record of one class.
fn streamer_info(c: &ClassDef) -> StreamerInfo {
    let elements = c.bases.iter().map(base_element).chain(c.members.iter().filter_map(|(n, t)| member_element(n, t))).collect();
    StreamerInfo { name: c.name.clone(), checksum: c.type_checksum(), version: c.version, elements }
}

fn base_element(b: &ClassDef) -> Element {
    let version = if has_class_def(b) { b.version as i32 } else { -1 };
    Element { kind: Kind::Base { version }, name: b.name.clone(), ty: 0, size: 0, dims: Vec::new(), base_checksum: b.type_checksum(), type_name: "BASE".into() }
}

/// ROOT's basic type code of a scalar (`kChar` 1 … `kBool` 18), `Double32_t` 9.
fn basic_code(s: Scalar, alias: bool) -> u32 {
    match s {
        Scalar::Bool => 18,
        Scalar::Char | Scalar::I8 => 1,
        Scalar::U8 => 11,
        Scalar::I16 => 2,
        Scalar::U16 => 12,
        Scalar::I32 | Scalar::Byte => 3,
        Scalar::U32 => 13,
        Scalar::I64 => 4,
        Scalar::U64 => 14,
        Scalar::F32 => 5,
        Scalar::F64 if alias => 9,
        Scalar::F64 => 8,
    }
}

/// `ROOT::ESTLType` of a collection or map name.
fn stl_type(name: &str) -> u32 {
    match name.trim_start_matches("std::") {
        "vector" => 1,
        "map" => 4,
        "multimap" => 5,
        "set" => 6,
        "multiset" => 7,
        "unordered_set" => 10,
        "unordered_multiset" => 11,
        "unordered_map" => 12,
        "unordered_multimap" => 13,
        _ => 14, // ROOT::VecOps::RVec
    }
}

fn member_element(name: &str, t: &TypeExpr) -> Option<Element> {
    // A std::array (of arrays) is an array element of its innermost item.
    let mut dims = Vec::new();
    let mut item = t;
    while let TypeExpr::Array(inner, n) = item {
        dims.push(u32::try_from(*n).unwrap_or(u32::MAX));
        item = inner;
    }
    let n: u32 = dims.iter().product();
    let size = layout(t).0 as u32;
    let el = |kind, ty, size, type_name| Element { kind, name: name.into(), ty, size, dims: dims.clone(), base_checksum: 0, type_name };
    let any = if dims.is_empty() { K_ANY } else { K_ANY + K_OFFSET_L };
    Some(match item {
        TypeExpr::Scalar(Scalar::Byte, _) => el(Kind::Basic, 3, 4 * n.max(1), "std::byte".into()),
        TypeExpr::Scalar(s, alias) => el(Kind::Basic, basic_code(*s, alias.is_some()), size, item.meta_name()),
        TypeExpr::Enum(e, _) => el(Kind::Basic, 3, 4 * n.max(1), e.clone()),
        // ROOT counts an array of STL objects twice in the size.
        TypeExpr::String => el(Kind::StlString, K_STL, size * n.max(1), "string".into()),
        TypeExpr::Collection(c, v) => el(Kind::Stl { stl: stl_type(c), ctype: content_code(v) }, K_STL, size * n.max(1), item.meta_name()),
        TypeExpr::Map(c, ..) => el(Kind::Stl { stl: stl_type(c), ctype: K_OBJECT }, K_STL, size * n.max(1), item.meta_name()),
        TypeExpr::Optional(p, v) if p == "std::unique_ptr" => match v.as_ref() {
            TypeExpr::Class(c) => el(Kind::AnyPointer, K_ANY_P, 8, format!("{}*", c.name)),
            _ => return None,
        },
        TypeExpr::Bitset(_) | TypeExpr::Record(_) => return None,
        _ => el(Kind::Any, any, size, item.meta_name()),
    })
}

/// `fCtype` of a collection: the basic type code of a fundamental (an enum's underlying) item,
/// else `kObject`.
fn content_code(t: &TypeExpr) -> u32 {
    match t {
        TypeExpr::Scalar(s, alias) => basic_code(*s, alias.is_some()),
        TypeExpr::Enum(_, s) => basic_code(*s, false),
        _ => K_OBJECT,
    }
}

/// Whether the class is taken to have a `ClassDef`: a version other than 1 (and than -1, which
/// old writers recorded for classes without one).
pub(crate) fn has_class_def(c: &ClassDef) -> bool {
    c.version != 1 && c.version != u32::MAX
}

fn round_up(n: u64, align: u64) -> u64 {
    n.div_ceil(align.max(1)) * align.max(1)
}

/// Lays out members of (size, align) one after the other: (size, align, unpadded size).
fn struct_layout(items: impl IntoIterator<Item = (u64, u64)>) -> (u64, u64, u64) {
    let (mut off, mut align) = (0u64, 1u64);
    for (s, a) in items {
        off = round_up(off, a) + s;
        align = align.max(a);
    }
    (round_up(off, align).max(1), align, off)
}

/// Size and alignment of a type in memory (x86-64, libstdc++).
fn layout(t: &TypeExpr) -> (u64, u64) {
    let scalar = |s: Scalar| -> u64 {
        match s {
            Scalar::Bool | Scalar::Char | Scalar::Byte | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    };
    match t {
        TypeExpr::Scalar(s, _) | TypeExpr::Enum(_, s) => (scalar(*s), scalar(*s)),
        TypeExpr::String => (32, 8),
        TypeExpr::Collection(c, v) => match c.trim_start_matches("std::") {
            "vector" if matches!(v.as_ref(), TypeExpr::Scalar(Scalar::Bool, _)) => (40, 8),
            "vector" => (24, 8),
            "set" | "multiset" => (48, 8),
            "unordered_set" | "unordered_multiset" => (56, 8),
            _ => {
                // ROOT::VecOps::RVec<T>: a 16-byte header and inline storage for N items.
                let (s, a) = layout(v);
                let per_line = (64 - 16) / s.max(1);
                let n = if per_line >= 8 {
                    per_line
                } else if s * 8 > 1024 {
                    0
                } else {
                    8
                };
                let a = a.max(8);
                (round_up(round_up(16, a) + n * s, a), a)
            }
        },
        TypeExpr::Map(c, ..) => (if c.contains("unordered") { 56 } else { 48 }, 8),
        TypeExpr::Optional(p, _) if p == "std::unique_ptr" => (8, 8),
        TypeExpr::Optional(_, v) => {
            let (s, a) = layout(v);
            (round_up(s + 1, a), a)
        }
        TypeExpr::Array(v, n) => {
            let (s, a) = layout(v);
            (s.saturating_mul(*n), a)
        }
        TypeExpr::Bitset(n) => (n.div_ceil(64).max(1) * 8, 8),
        // libstdc++ stores a tuple's elements last first.
        TypeExpr::Tuple(n, items) if n == "std::tuple" => {
            let (s, a, _) = struct_layout(items.iter().rev().map(layout));
            (s, a)
        }
        TypeExpr::Tuple(_, items) => {
            let (s, a, _) = struct_layout(items.iter().map(layout));
            (s, a)
        }
        TypeExpr::Record(members) => {
            let (s, a, _) = struct_layout(members.iter().map(|(_, m)| layout(m)));
            (s, a)
        }
        TypeExpr::Variant(items) => {
            let (s, a) = items.iter().map(layout).fold((0, 1), |(s, a), (s2, a2)| (s.max(s2), a.max(a2)));
            (round_up(s + 1, a), a)
        }
        TypeExpr::Atomic(v) => {
            let (s, a) = layout(v);
            (s, if s.is_power_of_two() && s <= 16 { a.max(s) } else { a })
        }
        TypeExpr::Class(c) => {
            let (s, a, _) = class_layout(c);
            (s, a)
        }
    }
}

/// Size, alignment and unpadded size of a class: a virtual table pointer first for a class with a
/// `ClassDef` (unless its first base has one), the bases (an empty one takes no room; the tail
/// padding of a base with a `ClassDef` is reused), then the members.
fn class_layout(c: &ClassDef) -> (u64, u64, u64) {
    let (mut off, mut align) = (0u64, 1u64);
    if has_class_def(c) && !c.bases.first().is_some_and(has_class_def) {
        off = 8;
        align = 8;
    }
    for b in &c.bases {
        if b.members.is_empty() && b.bases.is_empty() && !has_class_def(b) {
            continue;
        }
        let (s, a, d) = class_layout(b);
        off = round_up(off, a) + if has_class_def(b) { d } else { s };
        align = align.max(a);
    }
    for (_, t) in &c.members {
        let (s, a) = layout(t);
        off = round_up(off, a) + s;
        align = align.max(a);
    }
    (round_up(off, align).max(1), align, off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::typename::parse;

    #[test]
    fn sizes_as_root_records_them() {
        let p = |t: &str| layout(&parse(t).unwrap()).0;
        // What ROOT 6.40 wrote as the elements' sizes of interpreted classes.
        assert_eq!(p("std::variant<std::int32_t,std::string>"), 40);
        assert_eq!(p("std::tuple<int,char,double>"), 16);
        assert_eq!(p("std::pair<int,double>"), 16);
        assert_eq!(p("ROOT::VecOps::RVec<float>"), 64);
        assert_eq!(p("std::unordered_set<std::int64_t>"), 56);
        assert_eq!(p("std::vector<bool>"), 40);
        assert_eq!(p("std::array<float,3>"), 12);
        let leaf = ClassDef::new("Leaf").member("x", parse("float").unwrap());
        let cbase = ClassDef::new("CBase").version(4).member("d", parse("double").unwrap());
        assert_eq!(class_layout(&leaf).0, 4);
        assert_eq!(class_layout(&cbase).0, 16);
        let muon = ClassDef::new("Muon").version(3).member("pt", parse("float").unwrap()).member("c", parse("std::int16_t").unwrap());
        assert_eq!(class_layout(&muon).0, 16);
        let e = member_element("arr", &TypeExpr::Array(Box::new(TypeExpr::Class(Box::new(leaf))), 2)).unwrap();
        assert_eq!((e.ty, e.size, e.dims.clone(), e.type_name.as_str()), (82, 8, vec![2], "Leaf"));
        let s = member_element("as", &parse("std::array<std::string,2>").unwrap()).unwrap();
        assert_eq!((s.ty, s.size), (500, 128));
        assert!(member_element("b", &parse("std::bitset<5>").unwrap()).is_none());
    }
}
