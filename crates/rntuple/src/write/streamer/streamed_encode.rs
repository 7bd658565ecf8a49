//! Serializes one entry of a streamer field: an object of a class ([`ClassDef`]) given as a
//! [`Value`], as ROOT's `TBufferFile` streams it by the `TStreamerInfo` records that
//! `logical::class_streamers` makes for the class (the mirror of `read::streamer::streamed_object`).
//!
//! Each class is written as ROOT's `WriteClassBuffer` writes it: a byte count
//! (`0x40000000 | bytes after it`), the class version (for a class without `ClassDef`, which
//! ROOT streams as a foreign class: version 0, then the class checksum), its base classes (each
//! with its own byte count and version), then its data members in declaration order, big-endian:
//! fundamental types and enums (as `int`), `Double32_t` (as a `float`), `std::array`s of them,
//! `std::string` and `std::vector` members (a byte count and version, then the string, or the
//! size and the items: fundamental values, strings, nested vectors, objects with their own
//! headers), nested classes. Other member types are refused by [`check_streamable`], naming the
//! member. Pure: a value in, bytes out.

use crate::error::{Error, Result};
use crate::logical::class_streamers::has_class_def;
use crate::logical::kind::Scalar;
use crate::logical::typename::{ClassDef, TypeExpr};
use crate::value::Value;

/// The version ROOT 6.40 writes in the header of a `std::vector` or `std::string` member (the
/// class version of its collection proxy's `TClass`).
const STL_VERSION: u16 = 10;

/// `TBufferFile::kStreamedMemberWise`: the bit of a collection's version for member-wise items.
const MEMBER_WISE: u16 = 0x4000;

/// Deepest nesting of classes and vectors written (the bound of the reader of streamer fields).
const MAX_DEPTH: usize = 64;

/// Checks that every member of `class` (its bases' and nested classes' too) has a type this
/// serializer writes; the error names the class and the member.
pub(crate) fn check_streamable(class: &ClassDef) -> Result<()> {
    check_class(class, 0)
}

fn check_class(c: &ClassDef, depth: usize) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(Error::Unsupported(format!("class {} nests classes more than {MAX_DEPTH} levels deep", c.name)));
    }
    for b in &c.bases {
        check_class(b, depth + 1)?;
    }
    for (m, t) in &c.members {
        check_member(t, depth).map_err(|why| Error::Unsupported(format!("class {}, member '{m}' of type '{}': {why}", c.name, t.name())))?;
    }
    Ok(())
}

/// Why a member of type `t` cannot be streamed (or nested classes' errors).
fn check_member(t: &TypeExpr, depth: usize) -> std::result::Result<(), String> {
    match t {
        TypeExpr::Scalar(Scalar::Byte, _) => Err("std::byte members are not supported in streamer fields".into()),
        TypeExpr::Scalar(..) | TypeExpr::Enum(..) | TypeExpr::String => Ok(()),
        TypeExpr::Array(..) => match innermost(t) {
            TypeExpr::Scalar(Scalar::Byte, _) => Err("std::byte arrays are not supported in streamer fields".into()),
            TypeExpr::Scalar(..) => Ok(()),
            _ => Err("only std::arrays of fundamental types are supported in streamer fields".into()),
        },
        TypeExpr::Collection(c, item) if c == "std::vector" => check_item(item, depth),
        TypeExpr::Class(c) => check_class(c, depth + 1).map_err(|e| e.to_string()),
        _ => Err("streamer fields support fundamental types, enums, std::string, std::array of fundamental types, std::vector and classes".into()),
    }
}

/// Why a vector item of type `t` cannot be streamed.
fn check_item(t: &TypeExpr, depth: usize) -> std::result::Result<(), String> {
    match t {
        TypeExpr::Scalar(Scalar::Byte, _) => Err("vectors of std::byte are not supported in streamer fields".into()),
        TypeExpr::Scalar(_, Some(_)) => Err("vectors of Double32_t are not supported in streamer fields".into()),
        TypeExpr::Scalar(..) | TypeExpr::String => Ok(()),
        TypeExpr::Collection(c, item) if c == "std::vector" => check_item(item, depth + 1),
        TypeExpr::Class(c) => check_class(c, depth + 1).map_err(|e| e.to_string()),
        _ => Err(format!("vectors of {} are not supported in streamer fields (items: fundamental types, std::string, std::vector, classes)", t.name())),
    }
}

fn innermost(t: &TypeExpr) -> &TypeExpr {
    match t {
        TypeExpr::Array(inner, _) => innermost(inner),
        t => t,
    }
}

/// The bytes of `value`, an object of `class` (a record of its members by name, base classes
/// under `:_0`, `:_1`, ..., or a list of them in that order), as `TBufferFile` streams it.
pub(crate) fn serialize(class: &ClassDef, value: &Value) -> Result<Vec<u8>> {
    let mut w = Encoder { b: Vec::with_capacity(64), depth: 0 };
    w.class(class, value, &class.name)?;
    Ok(w.b)
}

struct Encoder {
    b: Vec<u8>,
    depth: usize,
}

fn invalid(path: &str, msg: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("{path}: {msg}"))
}

impl Encoder {
    fn open(&mut self) -> usize {
        let at = self.b.len();
        self.b.extend_from_slice(&[0; 4]);
        at
    }
    fn close(&mut self, at: usize, path: &str) -> Result<()> {
        let n = u32::try_from(self.b.len() - at - 4).ok().filter(|n| *n < 0x4000_0000).ok_or_else(|| invalid(path, "the object is larger than 1 GiB"))?;
        self.b[at..at + 4].copy_from_slice(&(0x4000_0000 | n).to_be_bytes());
        Ok(())
    }
    fn enter(&mut self, path: &str) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(invalid(path, format!("nested more than {MAX_DEPTH} levels deep")));
        }
        Ok(())
    }

    /// An object: byte count, version (0 and checksum without ClassDef), bases, members.
    fn class(&mut self, c: &ClassDef, v: &Value, path: &str) -> Result<()> {
        self.enter(path)?;
        let at = self.open();
        self.version(c, path)?;
        let names: Vec<String> = (0..c.bases.len()).map(|i| format!(":_{i}")).chain(c.members.iter().map(|(m, _)| m.clone())).collect();
        let items = members(&names, v).map_err(|e| invalid(path, format!("class {}: {e}", c.name)))?;
        for (i, b) in c.bases.iter().enumerate() {
            self.class(b, items[i], &format!("{path}.:_{i}"))?;
        }
        for ((m, t), it) in c.members.iter().zip(&items[c.bases.len()..]) {
            self.member(t, it, &format!("{path}.{m}"))?;
        }
        self.close(at, path)?;
        self.depth -= 1;
        Ok(())
    }

    /// A data member of type `t`.
    fn member(&mut self, t: &TypeExpr, v: &Value, path: &str) -> Result<()> {
        match t {
            TypeExpr::Scalar(s, alias) => self.scalar(*s, alias.is_some(), v, path),
            TypeExpr::Enum(..) => self.scalar(Scalar::I32, false, v, path),
            TypeExpr::Array(..) => self.array(t, v, path),
            TypeExpr::Class(c) => self.class(c, v, path),
            TypeExpr::String | TypeExpr::Collection(..) => self.stl_block(t, &[v], path),
            _ => Err(Error::Unsupported(format!("{path}: members of type {} are not supported in streamer fields", t.name()))),
        }
    }

    /// A `TStreamerSTL(string)` member of the objects whose values are `values` (one object, or
    /// all items of a collection streamed member-wise): one byte count and version, then each
    /// object's string or collection. A vector of classes is streamed member-wise, as ROOT does:
    /// the version with `kStreamedMemberWise`, the items' class version (0 and checksum without
    /// `ClassDef`), then per object its size and each member of all its items in turn.
    fn stl_block(&mut self, t: &TypeExpr, values: &[&Value], path: &str) -> Result<()> {
        self.enter(path)?;
        let at = self.open();
        match t {
            TypeExpr::Collection(_, item) if matches!(**item, TypeExpr::Class(_)) => {
                let TypeExpr::Class(c) = &**item else { return Err(Error::internal("a class item")) };
                self.b.extend_from_slice(&(STL_VERSION | MEMBER_WISE).to_be_bytes());
                self.version(c, path)?;
                for v in values {
                    let Value::List(items) = v else { return Err(invalid(path, format!("expected a list, got {}", v.to_json()))) };
                    let n = i32::try_from(items.len()).map_err(|_| invalid(path, "more than 2^31 items"))?;
                    self.b.extend_from_slice(&n.to_be_bytes());
                    let items: Vec<&Value> = items.iter().collect();
                    self.member_wise(c, &items, path)?;
                }
            }
            _ => {
                self.b.extend_from_slice(&STL_VERSION.to_be_bytes());
                for v in values {
                    self.item(t, v, path)?;
                }
            }
        }
        self.close(at, path)?;
        self.depth -= 1;
        Ok(())
    }

    /// A class's version as a header holds it: the version, or 0 and the checksum.
    fn version(&mut self, c: &ClassDef, path: &str) -> Result<()> {
        if has_class_def(c) {
            let version = u16::try_from(c.version).map_err(|_| invalid(path, format!("class {} version {} does not fit 16 bits", c.name, c.version)))?;
            self.b.extend_from_slice(&version.to_be_bytes());
        } else {
            self.b.extend_from_slice(&0u16.to_be_bytes());
            self.b.extend_from_slice(&c.type_checksum().to_be_bytes());
        }
        Ok(())
    }

    /// The objects `objects` of class `c` member-wise: each base's members, then each member, of
    /// all objects in turn (strings and collections under one header for all); nothing for none.
    fn member_wise(&mut self, c: &ClassDef, objects: &[&Value], path: &str) -> Result<()> {
        if objects.is_empty() {
            return Ok(());
        }
        self.enter(path)?;
        let names: Vec<String> = (0..c.bases.len()).map(|i| format!(":_{i}")).chain(c.members.iter().map(|(m, _)| m.clone())).collect();
        let rows = objects
            .iter()
            .enumerate()
            .map(|(i, v)| members(&names, v).map_err(|e| invalid(&format!("{path}[{i}]"), format!("class {}: {e}", c.name))))
            .collect::<Result<Vec<_>>>()?;
        let column = |k: usize| -> Vec<&Value> { rows.iter().map(|r| r[k]).collect() };
        for (i, b) in c.bases.iter().enumerate() {
            self.member_wise(b, &column(i), &format!("{path}.:_{i}"))?;
        }
        for (k, (m, t)) in c.members.iter().enumerate() {
            let values = column(c.bases.len() + k);
            let mpath = format!("{path}.{m}");
            match t {
                TypeExpr::String | TypeExpr::Collection(..) => self.stl_block(t, &values, &mpath)?,
                _ => {
                    for v in values {
                        self.member(t, v, &mpath)?;
                    }
                }
            }
        }
        self.depth -= 1;
        Ok(())
    }

    /// A value inside a collection (or a member's string or vector after its header).
    fn item(&mut self, t: &TypeExpr, v: &Value, path: &str) -> Result<()> {
        match (t, v) {
            (TypeExpr::String, Value::String(s)) => {
                if s.len() < 255 {
                    self.b.push(s.len() as u8);
                } else {
                    let n = u32::try_from(s.len()).map_err(|_| invalid(path, "a string longer than 4 GiB"))?;
                    self.b.push(255);
                    self.b.extend_from_slice(&n.to_be_bytes());
                }
                self.b.extend_from_slice(s.as_bytes());
                Ok(())
            }
            (TypeExpr::String, v) => Err(invalid(path, format!("expected a string, got {}", v.to_json()))),
            (TypeExpr::Collection(_, item), Value::List(items)) => {
                self.enter(path)?;
                let n = i32::try_from(items.len()).map_err(|_| invalid(path, "more than 2^31 items"))?;
                self.b.extend_from_slice(&n.to_be_bytes());
                for (i, it) in items.iter().enumerate() {
                    self.item(item, it, &format!("{path}[{i}]"))?;
                }
                self.depth -= 1;
                Ok(())
            }
            (TypeExpr::Collection(..), v) => Err(invalid(path, format!("expected a list, got {}", v.to_json()))),
            (TypeExpr::Scalar(s, alias), v) => self.scalar(*s, alias.is_some(), v, path),
            (TypeExpr::Class(c), v) => self.class(c, v, path),
            (t, _) => Err(Error::Unsupported(format!("{path}: items of type {} are not supported in streamer fields", t.name()))),
        }
    }

    /// A `std::array` (of arrays) of fundamental values: the values, row-major, no header.
    fn array(&mut self, t: &TypeExpr, v: &Value, path: &str) -> Result<()> {
        match (t, v) {
            (TypeExpr::Array(inner, n), Value::List(items)) if items.len() as u64 == *n => {
                for (i, it) in items.iter().enumerate() {
                    self.array(inner, it, &format!("{path}[{i}]"))?;
                }
                Ok(())
            }
            (TypeExpr::Array(_, n), v) => Err(invalid(path, format!("expected a list of {n} values, got {}", v.to_json()))),
            (TypeExpr::Scalar(s, alias), v) => self.scalar(*s, alias.is_some(), v, path),
            (t, _) => Err(Error::Unsupported(format!("{path}: arrays of {} are not supported in streamer fields", t.name()))),
        }
    }

    /// A fundamental value, big-endian (`Double32_t`, `double32`, as a float).
    fn scalar(&mut self, s: Scalar, double32: bool, v: &Value, path: &str) -> Result<()> {
        let bad = |want: &str| invalid(path, format!("expected {want}, got {}", v.to_json()));
        let int = |lo: i128, hi: i128| -> Result<i128> {
            let i = match *v {
                Value::Int(i) => i as i128,
                Value::UInt(u) => u as i128,
                Value::Bool(b) => b as i128,
                _ => return Err(bad("an integer")),
            };
            if i < lo || i > hi {
                return Err(bad(&format!("an integer from {lo} to {hi}")));
            }
            Ok(i)
        };
        match s {
            Scalar::Bool => match *v {
                Value::Bool(x) => self.b.push(x as u8),
                Value::Int(0 | 1) | Value::UInt(0 | 1) => self.b.push(int(0, 1)? as u8),
                _ => return Err(bad("a boolean")),
            },
            Scalar::Char | Scalar::I8 => {
                let x = int(i8::MIN.into(), i8::MAX.into())? as i8;
                self.b.push(x as u8)
            }
            Scalar::U8 | Scalar::Byte => {
                let x = int(0, u8::MAX.into())? as u8;
                self.b.push(x)
            }
            Scalar::I16 => {
                let x = int(i16::MIN.into(), i16::MAX.into())? as i16;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::U16 => {
                let x = int(0, u16::MAX.into())? as u16;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::I32 => {
                let x = int(i32::MIN.into(), i32::MAX.into())? as i32;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::U32 => {
                let x = int(0, u32::MAX.into())? as u32;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::I64 => {
                let x = int(i64::MIN.into(), i64::MAX.into())? as i64;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::U64 => {
                let x = int(0, u64::MAX.into())? as u64;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::F32 => {
                let x = match *v {
                    Value::F32(x) => x,
                    _ => v.as_f64().ok_or_else(|| bad("a number"))? as f32,
                };
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::F64 if double32 => {
                let x = v.as_f64().ok_or_else(|| bad("a number"))? as f32;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
            Scalar::F64 => {
                let x = v.as_f64().ok_or_else(|| bad("a number"))?;
                self.b.extend_from_slice(&x.to_be_bytes())
            }
        }
        Ok(())
    }
}

/// The members of an object value in the order of `names`: a record by member name (all of
/// them, no others), or a list by position.
fn members<'v>(names: &[String], v: &'v Value) -> std::result::Result<Vec<&'v Value>, String> {
    match v {
        Value::List(items) if items.len() == names.len() => Ok(items.iter().collect()),
        Value::Record(m) => {
            let found: Option<Vec<&Value>> = names.iter().map(|n| m.iter().find(|(k, _)| k == n).map(|(_, v)| v)).collect();
            match found {
                Some(items) if m.len() == names.len() => Ok(items),
                _ => {
                    let missing: Vec<&str> = names.iter().filter(|n| !m.iter().any(|(k, _)| k == *n)).map(|s| s.as_str()).collect();
                    let unknown: Vec<&str> = m.iter().filter(|(k, _)| !names.contains(k)).map(|(k, _)| k.as_str()).collect();
                    Err(format!("expected a record with members {} (missing: {}; unknown: {})", names.join(", "), list(&missing), list(&unknown)))
                }
            }
        }
        _ => Err(format!("expected a record with members {} or a list of {} values, got {}", names.join(", "), names.len(), v.to_json())),
    }
}

fn list(v: &[&str]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Objects serialized here read back by the deserializer of streamer fields
/// (`read::streamer::streamed_object`) through the StreamerInfo records this crate writes for their classes.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::class_streamers::streamer_infos;
    use crate::logical::typename::parse;
    use crate::read::streamer::streamed_object::deserialize;
    use crate::storage::container::streamer_info::streamer_info_object;
    use crate::storage::container::streamer_info_read::parse_streamer_info_object;
    use serde_json::json;

    fn t(s: &str) -> TypeExpr {
        parse(s).unwrap()
    }

    /// Serializes `v` (JSON) as an object of `c`, reads it back by the records of `c`; returns the
    /// bytes and the value read as JSON.
    fn round_trip(c: &ClassDef, v: serde_json::Value) -> (Vec<u8>, serde_json::Value) {
        let bytes = serialize(c, &Value::from_json(&v)).unwrap();
        let records = parse_streamer_info_object(&streamer_info_object(&streamer_infos(std::slice::from_ref(c)))).unwrap();
        let back = deserialize(&bytes, &records, &c.name).unwrap();
        (bytes, back.to_json())
    }

    fn inner() -> ClassDef {
        ClassDef::new("Inner").member("a", t("std::int32_t")).member("b", t("float"))
    }

    #[test]
    fn scalars_big_endian_after_version_zero_and_checksum() {
        let c = ClassDef::new("P").member("x", t("std::int32_t")).member("y", t("float"));
        let (bytes, back) = round_trip(&c, json!({"x": 7, "y": 1.5}));
        let mut want = vec![0x40, 0, 0, 14, 0, 0];
        want.extend_from_slice(&c.type_checksum().to_be_bytes());
        want.extend_from_slice(&[0, 0, 0, 7, 0x3F, 0xC0, 0, 0]);
        assert_eq!(bytes, want);
        assert_eq!(back, json!({"x": 7, "y": 1.5}));
    }

    #[test]
    fn every_fundamental_type() {
        let c = ClassDef::new("S")
            .member("fl", t("bool"))
            .member("c", t("char"))
            .member("uc", t("std::uint8_t"))
            .member("s", t("std::int16_t"))
            .member("us", t("std::uint16_t"))
            .member("i", t("std::int32_t"))
            .member("u", t("std::uint32_t"))
            .member("l", t("std::int64_t"))
            .member("ul", t("std::uint64_t"))
            .member("f", t("float"))
            .member("x", t("double"))
            .member("d32", t("Double32_t"));
        let v = json!({"fl": true, "c": -3, "uc": 200, "s": -300, "us": 60000, "i": -70000, "u": 4000000000u64,
            "l": -9000000000i64, "ul": 18000000000000000000u64, "f": 2.5, "x": 0.125, "d32": 3.5});
        assert_eq!(round_trip(&c, v.clone()).1, v);
    }

    #[test]
    fn strings_vectors_arrays() {
        let c = ClassDef::new("V")
            .member("s", t("std::string"))
            .member("long", t("std::string"))
            .member("vs", t("std::vector<std::string>"))
            .member("vf", t("std::vector<float>"))
            .member("vv", t("std::vector<std::vector<std::int32_t>>"))
            .member("vb", t("std::vector<bool>"))
            .member("arr", t("std::array<std::int16_t,3>"))
            .member("grid", t("std::array<std::array<double,2>,2>"));
        let long = "x".repeat(300);
        let v = json!({"s": "ab", "long": long, "vs": ["", "cd"], "vf": [1.5, -2.0], "vv": [[1], [], [2, 3]], "vb": [true, false],
            "arr": [1, -2, 3], "grid": [[0.5, 1.5], [2.5, 3.5]]});
        assert_eq!(round_trip(&c, v.clone()).1, v);
    }

    #[test]
    fn nested_classes_bases_and_vectors_of_classes() {
        let base = ClassDef::new("Base").member("d", t("double"));
        let derived = ClassDef::new("Derived").base(base).member("k", t("std::int32_t")).member("name", t("std::string"));
        let c = ClassDef::new("Deep")
            .member("in", TypeExpr::Class(Box::new(inner())))
            .member("items", TypeExpr::Collection("std::vector".into(), Box::new(TypeExpr::Class(Box::new(inner())))))
            .member("all", TypeExpr::Collection("std::vector".into(), Box::new(TypeExpr::Class(Box::new(derived.clone())))))
            .member("one", TypeExpr::Class(Box::new(derived)));
        let v = json!({"in": {"a": 1, "b": 0.5}, "items": [{"a": 2, "b": 1.5}, {"a": 3, "b": -1.0}],
            "all": [{":_0": {"d": 1.5}, "k": -1, "name": "n"}], "one": {":_0": {"d": 2.5}, "k": 4, "name": ""}});
        assert_eq!(round_trip(&c, v.clone()).1, v);
        // Members given as a list, in order.
        let (_, back) = round_trip(&inner(), json!([5, 0.25]));
        assert_eq!(back, json!({"a": 5, "b": 0.25}));
    }

    /// The bytes ROOT 6.40's `RStreamerField` wrote for these objects of ACLiC-compiled classes
    /// (tests/cross/streamer_write_root.py): vectors of classes member-wise, STL version 10.
    #[test]
    fn bytes_equal_roots() {
        let winner = ClassDef::new("WInner").member("a", t("std::int32_t")).member("b", t("float"));
        let nested = ClassDef::new("WNested")
            .member("in", TypeExpr::Class(Box::new(winner.clone())))
            .member("items", TypeExpr::Collection("std::vector".into(), Box::new(TypeExpr::Class(Box::new(winner)))))
            .member("arr", t("std::array<std::int32_t,3>"));
        let v = json!({"in": {"a": 0, "b": 0.5}, "items": [{"a": 0, "b": 0.0}], "arr": [0, 1, 2]});
        let root: [u8; 64] = [
            64, 0, 0, 60, 0, 0, 74, 20, 156, 132, 64, 0, 0, 14, 0, 0, 110, 205, 0, 167, 0, 0, 0, 0, 63, 0, 0, 0, 64, 0, 0, 20, 64, 10, 0, 0, 110, 205, 0, 167,
            0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2,
        ];
        assert_eq!(serialize(&nested, &Value::from_json(&v)).unwrap(), root);
        assert_eq!(round_trip(&nested, v.clone()).1, v);
        let derived =
            ClassDef::new("WDerived").base(ClassDef::new("WBase").member("d", t("double"))).member("k", t("std::int32_t")).member("name", t("std::string"));
        let root = [64, 0, 0, 35, 0, 0, 203, 82, 242, 131, 64, 0, 0, 14, 0, 0, 1, 84, 86, 77, 63, 248, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 3, 0, 10, 0];
        assert_eq!(serialize(&derived, &Value::from_json(&json!({":_0": {"d": 1.5}, "k": 0, "name": ""}))).unwrap(), root);
        let strings = ClassDef::new("WStrings").member("str", t("std::string")).member("vs", t("std::vector<std::string>"));
        let root = [64, 0, 0, 28, 0, 0, 198, 7, 77, 156, 64, 0, 0, 5, 0, 10, 2, 115, 49, 64, 0, 0, 9, 0, 10, 0, 0, 0, 1, 2, 97, 98];
        assert_eq!(serialize(&strings, &Value::from_json(&json!({"str": "s1", "vs": ["ab"]}))).unwrap(), root);
        let versioned = ClassDef::new("WVersioned").version(3).member("a", t("std::int32_t")).member("v", t("std::vector<float>"));
        let root = [64, 0, 0, 20, 0, 3, 0, 0, 0, 8, 64, 0, 0, 10, 0, 10, 0, 0, 0, 1, 64, 32, 0, 0];
        assert_eq!(serialize(&versioned, &Value::from_json(&json!({"a": 8, "v": [2.5]}))).unwrap(), root);
    }

    #[test]
    fn a_class_with_class_def_writes_its_version() {
        let c = ClassDef::new("CV").version(3).member("a", t("std::int32_t"));
        let (bytes, back) = round_trip(&c, json!({"a": 9}));
        assert_eq!(bytes, vec![0x40, 0, 0, 6, 0, 3, 0, 0, 0, 9]);
        assert_eq!(back, json!({"a": 9}));
    }

    #[test]
    fn refusals_name_the_member() {
        let c = ClassDef::new("M").member("m", t("std::map<std::int32_t,float>"));
        let e = check_streamable(&c).unwrap_err().to_string();
        assert!(e.contains("class M, member 'm'"), "{e}");
        let nested = ClassDef::new("O").member("inner", TypeExpr::Class(Box::new(ClassDef::new("I").member("o", t("std::optional<float>")))));
        let e = check_streamable(&nested).unwrap_err().to_string();
        assert!(e.contains("member 'o'"), "{e}");
        assert!(check_streamable(&ClassDef::new("A").member("a", t("std::array<std::string,2>"))).is_err());
        assert!(check_streamable(&inner()).is_ok());
    }

    #[test]
    fn bad_values_are_errors_naming_the_member() {
        let bad = |v: serde_json::Value| serialize(&inner(), &Value::from_json(&v)).unwrap_err().to_string();
        assert!(bad(json!({"a": "x", "b": 1.0})).contains("Inner.a"));
        assert!(bad(json!({"a": 1 })).contains("missing: b"));
        assert!(bad(json!({"a": 3000000000u64, "b": 1.0})).contains("Inner.a"));
        let v = ClassDef::new("W").member("v", t("std::vector<float>"));
        assert!(serialize(&v, &Value::from_json(&json!({"v": 3}))).unwrap_err().to_string().contains("W.v"));
    }
}
