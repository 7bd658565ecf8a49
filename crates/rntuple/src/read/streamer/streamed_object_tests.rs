//! Unit tests of the streamed-object deserializer on hand-made bytes, one per element kind, the
//! bytes ROOT 6.40 streamed for a class of many members, and hostile inputs.

use super::*;
use crate::storage::container::streamer_info_read::{ClassInfo, ElementClass as C, ElementInfo, Range};

fn el(class: C, name: &str, ty: i32, type_name: &str) -> ElementInfo {
    ElementInfo {
        class,
        name: name.into(),
        title: String::new(),
        ty,
        size: 0,
        array_length: 0,
        dims: vec![],
        type_name: type_name.into(),
        base_version: 0,
        stl_type: if class == C::Stl { 1 } else { 0 },
        ctype: 0,
        count_name: String::new(),
        range: None,
    }
}

fn class(name: &str, version: i32, checksum: u32, elements: Vec<ElementInfo>) -> ClassInfo {
    ClassInfo { name: name.into(), version, checksum, elements }
}

/// Bytes with byte counts filled in when closed.
#[derive(Default)]
struct B(Vec<u8>, Vec<usize>);
impl B {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn f32(&mut self, v: f32) -> &mut Self {
        self.u32(v.to_bits())
    }
    fn s(&mut self, v: &str) -> &mut Self {
        self.u8(v.len() as u8);
        self.0.extend_from_slice(v.as_bytes());
        self
    }
    /// Opens a byte count and writes the version.
    fn open(&mut self, version: u16) -> &mut Self {
        self.1.push(self.0.len());
        self.u32(0).u16(version)
    }
    fn close(&mut self) -> &mut Self {
        let at = self.1.pop().unwrap();
        let n = (self.0.len() - at - 4) as u32;
        self.0[at..at + 4].copy_from_slice(&(0x4000_0000 | n).to_be_bytes());
        self
    }
}

fn json(bytes: &[u8], infos: &[ClassInfo], c: &str) -> String {
    deserialize(bytes, infos, c).map(|v| v.to_json().to_string()).unwrap_or_else(|e| format!("error: {e}"))
}

/// The bytes ROOT 6.40's `RStreamerField` wrote for one object of `SAll` (a base class, every
/// fundamental type, std::string, a fixed array, vector<float>, vector<SInner> member-wise, a
/// nested class, vector<vector<int>>); the classes have no ClassDef (version 0 + checksum).
#[test]
fn bytes_root_wrote() {
    let hex = "400000b00000e09c7e7d4000000e0000014986613ff8000000000000017afffd00000007fffffffffffffff700\
        00000b40200000400a00000000000040000006000a036865790000000100000002000000034000000e000a000000023f800000400000004000001c400a00006b6136fb0000000200000001000000023fc00000402000004000000e00006b6136fb0000000540b000004000001a000a000000020000000100000001000000020000000200000003"
        .replace(' ', "");
    let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
    let mut arr = el(C::BasicType, "arr", 23, "int");
    arr.array_length = 3;
    arr.dims = vec![3];
    let mut str_el = el(C::StlString, "str", 500, "string");
    str_el.stl_type = 365;
    let infos = [
        class("SBase", 1, 0x0149_8661, vec![el(C::BasicType, "d", 8, "double")]),
        class("SInner", 1, 0x6b61_36fb, vec![el(C::BasicType, "a", 3, "int"), el(C::BasicType, "b", 5, "float")]),
        class(
            "SAll",
            1,
            0xe09c_7e7d,
            vec![
                el(C::Base, "SBase", 0, "BASE"),
                el(C::BasicType, "fl", 18, "bool"),
                el(C::BasicType, "c", 1, "char"),
                el(C::BasicType, "s", 2, "short"),
                el(C::BasicType, "i", 3, "int"),
                el(C::BasicType, "l", 16, "long long"),
                el(C::BasicType, "u", 13, "unsigned int"),
                el(C::BasicType, "f", 5, "float"),
                el(C::BasicType, "x", 8, "double"),
                str_el,
                arr,
                el(C::Stl, "vf", 500, "vector<float>"),
                el(C::Stl, "vi", 500, "vector<SInner>"),
                el(C::ObjectAny, "in", 62, "SInner"),
                el(C::Stl, "vv", 500, "vector<vector<int> >"),
            ],
        ),
    ];
    assert_eq!(
        json(&bytes, &infos, "SAll"),
        r#"{":_0":{"d":1.5},"fl":true,"c":122,"s":-3,"i":7,"l":-9,"u":11,"f":2.5,"x":3.25,"str":"hey","arr":[1,2,3],"vf":[1.0,2.0],"vi":[{"a":1,"b":1.5},{"a":2,"b":2.5}],"in":{"a":5,"b":5.5},"vv":[[1],[2,3]]}"#
    );
    // One byte less or more: an error naming the class.
    let e = json(&bytes[..bytes.len() - 1], &infos, "SAll");
    assert!(e.starts_with("error:") && e.contains("SAll"), "{e}");
    let mut more = bytes.clone();
    more.push(0);
    assert!(json(&more, &infos, "SAll").contains("1 bytes left after the object of class SAll"));
}

#[test]
fn double32_and_float16() {
    let mut d = el(C::BasicType, "d", 9, "Double32_t");
    d.range = Some(Range { xmin: 0.0, xmax: 100.0, factor: 1024.0 / 100.0 });
    let mut t = el(C::BasicType, "t", 9, "Double32_t"); // [0,0,10]: 10 mantissa bits
    t.range = Some(Range { xmin: 10.1, xmax: 0.0, factor: 0.0 });
    let plain = el(C::BasicType, "p", 9, "Double32_t"); // a float
    let h = el(C::BasicType, "h", 19, "Float16_t"); // 12 mantissa bits
    let infos = [class("R", 2, 0, vec![d, t, plain, h])];
    let mut b = B::default();
    b.open(2).u32(512); // 512 / 10.24 = 50
    b.u8(127).u16((0x40_0000u32 >> 13) as u16); // 1.5: exponent 127, the mantissa's top 10+1 bits
    b.f32(0.25);
    b.u8(128).u16(((0x40_0000u32 >> 11) | (1 << 13)) as u16); // -3.0 with the sign bit at nbits+1
    b.close();
    assert_eq!(json(&b.0, &infos, "R"), r#"{"d":50.0,"t":1.5,"p":0.25,"h":-3.0}"#);
}

#[test]
fn pointers_counters_and_tobject() {
    let mut arr = el(C::BasicPointer, "arr", 45, "float*"); // float* with [n]
    arr.count_name = "n".into();
    let infos = [
        class("Leaf", 3, 0, vec![el(C::BasicType, "v", 3, "int")]),
        class(
            "Holder",
            4,
            0,
            vec![
                el(C::Base, "TObject", 66, "BASE"),
                el(C::BasicType, "n", 6, "int"),
                arr,
                el(C::ObjectAnyPointer, "p", 69, "Leaf*"),
                el(C::ObjectAnyPointer, "q", 69, "Leaf*"),
                el(C::ObjectAnyPointer, "z", 69, "Leaf*"),
                el(C::String, "ts", 65, "TString"),
                el(C::Object, "named", 67, "TNamed"),
            ],
        ),
    ];
    let mut b = B::default();
    b.open(4);
    b.u16(1).u32(0).u32(0x0300_0000); // TObject
    b.u32(2).u8(1).f32(1.0).f32(2.0); // n, the array
    let p_at = b.0.len();
    b.1.push(p_at);
    b.u32(0).u32(0xFFFF_FFFF).0.extend_from_slice(b"Leaf\0");
    b.open(3).u32(9).close().close(); // the pointed-to Leaf
    b.u32(p_at as u32 + 2); // q: a reference to it
    b.u32(0); // z: null
    b.s("hi");
    b.open(1).u16(1).u32(0).u32(0).s("nm").s("tt").close();
    b.close();
    assert_eq!(
        json(&b.0, &infos, "Holder"),
        r#"{":_0":{"fUniqueID":0,"fBits":50331648},"n":2,"arr":[1.0,2.0],"p":{"v":9},"q":{"v":9},"z":null,"ts":"hi","named":{"fUniqueID":0,"fBits":0,"fName":"nm","fTitle":"tt"}}"#
    );
}

#[test]
fn maps_sets_pairs_and_strings() {
    let infos = [
        class("P", 1, 0, vec![el(C::BasicType, "x", 3, "int")]),
        class(
            "M",
            2,
            0,
            vec![
                el(C::Stl, "m", 500, "map<int,string>"),
                el(C::Stl, "mw", 500, "map<string,vector<float> >"),
                el(C::Stl, "s", 500, "set<short>"),
                el(C::Stl, "vp", 500, "vector<pair<int,P> >"),
                el(C::Stl, "vs", 500, "vector<string>"),
                el(C::Stl, "lp", 500, "list<P*>"),
            ],
        ),
    ];
    let mut b = B::default();
    b.open(2);
    b.open(6).u32(2).u32(1).s("a").u32(2).s("bb").close(); // object-wise map
    b.open(6 | 0x4000).u16(0).u32(0x1234).u32(2).s("k1").s("k2"); // member-wise: keys, then values
    b.u32(1).f32(0.5).u32(0).close();
    b.open(6).u32(2).u16(0xFFFF).u16(4).close();
    b.open(6).u32(1).u32(7).open(1).u32(8).close().close(); // a pair of int and a class
    b.open(6).u32(2).s("x").s("").close();
    b.open(6).u32(2).u32(0); // a null pointer, then a new P
    b.1.push(b.0.len());
    b.u32(0).u32(0xFFFF_FFFF).0.extend_from_slice(b"P\0");
    b.open(1).u32(5).close().close().close();
    b.close();
    assert_eq!(
        json(&b.0, &infos, "M"),
        r#"{"m":[[1,"a"],[2,"bb"]],"mw":[["k1",[0.5]],["k2",[]]],"s":[-1,4],"vp":[[7,{"x":8}]],"vs":["x",""],"lp":[null,{"x":5}]}"#
    );
}

#[test]
fn member_wise_with_bases_and_objects_without_byte_count() {
    let infos = [
        class("B", 2, 0, vec![el(C::BasicType, "b", 2, "short")]),
        class("I", 3, 0, vec![el(C::Base, "B", 0, "BASE"), el(C::BasicType, "i", 3, "int"), el(C::Stl, "v", 500, "vector<int>")]),
        class("O", 1, 0, vec![el(C::Stl, "items", 500, "vector<I>"), el(C::Stl, "none", 500, "vector<I>"), el(C::ObjectAny, "one", 62, "I")]),
    ];
    let mut b = B::default();
    b.open(1);
    b.open(0x4000 | 9).u16(3).u32(2); // member-wise vector<I> of 2
    b.u16(1).u16(2); // the base's b of both
    b.u32(10).u32(20); // i of both
    b.open(6).u32(1).u32(5).u32(0).close(); // v of both: one header
    b.close();
    b.open(0x4000 | 9).u16(3).u32(0).close(); // an empty member-wise vector<I>: no member headers
    b.u16(3); // "one": a version without a byte count
    b.open(2).u16(7).close().u32(30).open(6).u32(0).close();
    b.close();
    assert_eq!(
        json(&b.0, &infos, "O"),
        r#"{"items":[{":_0":{"b":1},"i":10,"v":[5]},{":_0":{"b":2},"i":20,"v":[]}],"none":[],"one":{":_0":{"b":7},"i":30,"v":[]}}"#
    );
}

#[test]
fn fixed_arrays_of_classes_and_two_dimensions() {
    let mut grid = el(C::BasicType, "g", 22, "short");
    grid.array_length = 6;
    grid.dims = vec![2, 3];
    let mut objs = el(C::ObjectAny, "o", 82, "P");
    objs.array_length = 2;
    objs.dims = vec![2];
    let infos = [class("P", 1, 0, vec![el(C::BasicType, "x", 11, "unsigned char")]), class("A", 1, 0, vec![grid, objs])];
    let mut b = B::default();
    b.open(1);
    for i in 0..6 {
        b.u16(i);
    }
    b.open(1).u8(200).close().open(1).u8(3).close();
    b.close();
    assert_eq!(json(&b.0, &infos, "A"), r#"{"g":[[0,1,2],[3,4,5]],"o":[{"x":200},{"x":3}]}"#);
}

#[test]
fn hostile_bytes() {
    let infos = [
        class("Self", 1, 0, vec![el(C::ObjectAny, "me", 62, "Self")]),
        class("V", 1, 0, vec![el(C::Stl, "v", 500, "vector<double>")]),
        class("Cyc", 1, 0, vec![el(C::ObjectAnyPointer, "p", 69, "Cyc*")]),
    ];
    // A class that contains itself: the depth limit, not the stack, ends it.
    let mut b = B::default();
    for _ in 0..200 {
        b.u16(1);
    }
    assert!(json(&b.0, &infos, "Self").contains("nested more than 64 levels deep"));
    // A 2^31 count with 10 bytes left.
    let mut b = B::default();
    b.open(1).open(6).u32(0x7FFF_FFFF).u32(0).u16(0).close().close();
    let e = json(&b.0, &infos, "V");
    assert!(e.contains("collection size 2147483647 does not fit in the 6 bytes left"), "{e}");
    // A byte count past the end.
    let e = json(&[0x40, 0, 0, 0x60, 0, 1, 0, 0], &infos, "V");
    assert!(e.contains("byte count 96 goes past the end"), "{e}");
    // A pointer to the object that holds it: the new object at byte 6 (map offset 8) refers to itself.
    let mut b = B::default();
    b.open(1);
    b.1.push(b.0.len());
    b.u32(0).u32(0xFFFF_FFFF).0.extend_from_slice(b"Cyc\0");
    b.open(1).u32(8).close();
    b.close().close();
    let e = json(&b.0, &infos, "Cyc");
    assert!(e.contains("which contains it (a cycle)"), "{e}");
    // Many references to one big object: bounded by the bytes, not copied without limit.
    let many = [
        class("Big", 1, 0, vec![el(C::Stl, "v", 500, "vector<double>")]),
        class("Many", 1, 0, vec![el(C::ObjectAnyPointer, "p", 69, "Big*"), el(C::Stl, "refs", 500, "vector<Big*>")]),
    ];
    let mut b = B::default();
    b.open(1);
    b.1.push(b.0.len());
    b.u32(0).u32(0xFFFF_FFFF).0.extend_from_slice(b"Big\0");
    b.open(1).open(6).u32(1000);
    for i in 0..1000 {
        b.u32(0).u32(i);
    }
    b.close().close().close();
    b.open(6).u32(100);
    for _ in 0..100 {
        b.u32(8);
    }
    b.close().close();
    let e = json(&b.0, &many, "Many");
    assert!(e.contains("copy more values than the bytes justify"), "{e}");
    // No record of the class.
    assert!(json(&[0, 1, 0, 0], &infos, "Nope").contains("no StreamerInfo record describes class Nope"));
    // Every truncation and every flipped byte of a good object: an error or a value, never a panic.
    let mut b = B::default();
    b.open(1).open(6).u32(2).f32(1.0).f32(0.0).f32(2.0).f32(0.0).close().close();
    for n in 0..b.0.len() {
        assert!(deserialize(&b.0[..n], &infos, "V").is_err());
    }
    for i in 0..b.0.len() {
        let mut c = b.0.clone();
        c[i] ^= 0x5A;
        let _ = deserialize(&c, &infos, "V");
    }
}
