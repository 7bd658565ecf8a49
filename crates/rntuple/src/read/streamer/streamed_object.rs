//! Deserializes an object streamed by ROOT's `TBufferFile` (one entry of a streamer field) by the
//! `TStreamerInfo` records of its file (`storage::container::streamer_info_read`) into a [`Value`]: a record
//! of the class's members (base classes under `:_0`, `:_1`, ...), as ROOT's `ReadClassBuffer`
//! reads it: each class's version header (with a checksum for a class without `ClassDef`),
//! fundamental types big-endian, `Double32_t`/`Float16_t` with their ranges and bits, fixed arrays,
//! strings, nested classes, pointers (class tags, null tags, references to objects already read),
//! `TObject`/`TNamed`, and collections (`read::streamer::streamed_stl`) object-wise or member-wise.
//! Pure: bytes and records in, a value out; depth and every count are bounded by the bytes.
//!
//! ```
//! use rntuple::read::streamer::streamed_object::deserialize;
//! use rntuple::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo};
//! let member = |name: &str, ty: i32, type_name: &str| ElementInfo {
//!     class: ElementClass::BasicType, name: name.into(), title: String::new(), ty, size: 4,
//!     array_length: 0, dims: vec![], type_name: type_name.into(), base_version: 0, stl_type: 0,
//!     ctype: 0, count_name: String::new(), range: None,
//! };
//! let infos = [ClassInfo { name: "P".into(), version: 2, checksum: 1, elements: vec![member("x", 3, "int"), member("y", 5, "float")] }];
//! // Byte count 10, version 2, x = 7, y = 1.5.
//! let bytes = [0x40, 0, 0, 10, 0, 2, 0, 0, 0, 7, 0x3F, 0xC0, 0, 0];
//! let v = deserialize(&bytes, &infos, "P")?;
//! assert_eq!(v.to_json().to_string(), r#"{"x":7,"y":1.5}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;
use crate::logical::streamed_types::{basic_from_name, Basic, TypeName};
use crate::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo, Range};
use crate::storage::container::tbuffer::{TBuf, Tag};
use crate::value::Value;
use std::collections::HashMap;

/// Deepest nesting of classes and collections read (a class that contains itself ends here).
pub const MAX_DEPTH: usize = 64;

/// Deserializes `bytes`, one object of class `class` streamed by `TBufferFile`, by `infos`; all
/// bytes must be consumed.
pub fn deserialize(bytes: &[u8], infos: &[ClassInfo], class: &str) -> Result<Value> {
    let budget = bytes.len().saturating_mul(8).saturating_add(4096);
    let mut d = Deserializer { r: TBuf::new(bytes, 0, "streamed object"), infos, depth: 0, objects: HashMap::new(), budget };
    let v = d.class(class)?;
    if d.r.remaining() != 0 {
        return Err(d.r.err(format!("{} bytes left after the object of class {class}", d.r.remaining())));
    }
    Ok(v)
}

/// Whether `infos` describe `class` (a record of its name).
pub fn describes(infos: &[ClassInfo], class: &str) -> bool {
    infos.iter().any(|i| i.name == class)
}

/// The state of one deserialization.
pub(crate) struct Deserializer<'a> {
    pub(crate) r: TBuf<'a>,
    infos: &'a [ClassInfo],
    depth: usize,
    /// Map offset -> the object read there (None while it is being read).
    objects: HashMap<u32, Option<Value>>,
    /// Values that references to objects read before may still copy (a few shared objects must
    /// not make the output exceed the bytes many times over).
    budget: usize,
}

impl<'a> Deserializer<'a> {
    /// Enters one level of nesting.
    pub(crate) fn enter(&mut self, what: &str) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.r.err(format!("{what} nested more than {MAX_DEPTH} levels deep (a class that contains itself?)")));
        }
        Ok(())
    }
    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// The record of `class` (version `version`, or with `checksum` when not 0).
    pub(crate) fn info(&self, class: &str, version: u16, checksum: Option<u32>) -> Result<&'a ClassInfo> {
        let mut of_class = self.infos.iter().filter(|i| i.name == class || strip_std(&i.name) == strip_std(class));
        let all: Vec<&ClassInfo> = of_class.by_ref().collect();
        let found = match checksum {
            Some(c) => all.iter().find(|i| i.checksum == c),
            None => all.iter().find(|i| i.version == i32::from(version)),
        };
        found.or(all.first()).copied().ok_or_else(|| self.r.err(format!("no StreamerInfo record describes class {class}")))
    }

    /// An object of `class` by value: its version header, then its members.
    pub(crate) fn class(&mut self, class: &str) -> Result<Value> {
        match class {
            "TObject" => return self.tobject(),
            "TNamed" => return self.tnamed(),
            "TString" | "string" | "std::string" => return Ok(Value::String(self.r.tstring()?)),
            _ => {}
        }
        self.enter(class)?;
        let start = self.r.pos();
        let h = self.r.version_header().map_err(|e| e.context(format!("the version of class {class}")))?;
        let checksum = if h.version == 0 && h.count >= 6 { Some(self.r.u32()?) } else { None };
        let info = self.info(class, h.version, checksum)?;
        let v = self.members(info).map_err(|e| e.context(format!("class {class} (streamed at byte {start})")))?;
        if let Some(end) = h.end
            && self.r.pos() != end
        {
            return Err(self.r.err(format!("class {class}: its byte count ends at byte {end}, its members at {}", self.r.pos())));
        }
        self.leave();
        // A std::pair as a list, as everywhere else.
        Ok(match v {
            Value::Record(m) if class.starts_with("pair<") || class.starts_with("std::pair<") => Value::List(m.into_iter().map(|(_, x)| x).collect()),
            v => v,
        })
    }

    /// The members of `info` (bases as `:_0`, `:_1`, ...) of one object.
    fn members(&mut self, info: &ClassInfo) -> Result<Value> {
        let mut out: Vec<(String, Value)> = Vec::with_capacity(info.elements.len());
        let mut bases = 0;
        for e in &info.elements {
            let v = self.element(e, &out).map_err(|err| err.context(format!("member {} ({})", e.name, e.type_name)))?;
            let name = if e.class == ElementClass::Base {
                bases += 1;
                format!(":_{}", bases - 1)
            } else {
                e.name.clone()
            };
            out.push((name, v));
        }
        Ok(Value::Record(out))
    }

    /// One element of one object; `before` holds the members read before it (for counters).
    pub(crate) fn element(&mut self, e: &ElementInfo, before: &[(String, Value)]) -> Result<Value> {
        let ty = streamed_type(e);
        match e.class {
            ElementClass::Base => return self.class(&e.name),
            ElementClass::Stl | ElementClass::StlString => return self.stl_members(e, 1)?.pop().ok_or_else(|| Error::internal("one collection read")),
            _ => {}
        }
        let n = usize::try_from(e.array_length).unwrap_or(0);
        match ty {
            1..=19 => self.basic(ty, e.range),
            21..=39 => {
                let items = self.repeat(n, 1, |d| d.basic(ty - 20, e.range))?;
                Ok(shape(items, &e.dims))
            }
            41..=59 => {
                let count = counter(before, &e.count_name).ok_or_else(|| self.r.err(format!("no counter member {} before", e.count_name)))?;
                let is_array = self.r.u8()?;
                if is_array == 0 {
                    return Ok(Value::List(Vec::new()));
                }
                let at = self.r.pos();
                let count = self.r.check_count(count, 1, "array length", at)?;
                self.repeat(count, 1, |d| d.basic(ty - 40, e.range)).map(Value::List)
            }
            61 | 62 | 63 | 68 | 66 | 67 => self.class(class_of(&e.type_name)),
            81 | 82 | 83 | 88 => self.repeat(n, 2, |d| d.class(class_of(&e.type_name))).map(|v| shape(v, &e.dims)),
            64 | 69 => self.pointer(class_of(&e.type_name)),
            84 | 89 => self.repeat(n, 4, |d| d.pointer(class_of(&e.type_name))).map(|v| shape(v, &e.dims)),
            65 => Ok(Value::String(self.r.tstring()?)),
            85 => self.repeat(n, 1, |d| Ok(Value::String(d.r.tstring()?))).map(|v| shape(v, &e.dims)),
            501 => self.stream_loop(e, before),
            _ => Err(self.r.err(format!("element type {ty} ({:?}) is not supported", e.class))),
        }
    }

    /// `n` items read by `f`, each at least `min_bytes` long.
    pub(crate) fn repeat(&mut self, n: usize, min_bytes: usize, mut f: impl FnMut(&mut Self) -> Result<Value>) -> Result<Vec<Value>> {
        let at = self.r.pos();
        let n = self.r.check_count(n as i64, min_bytes, "array length", at)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            out.push(f(self)?);
        }
        Ok(out)
    }

    /// A fundamental value of basic type code `ty` (1 to 19).
    pub(crate) fn basic(&mut self, ty: i32, range: Option<Range>) -> Result<Value> {
        if ty == CHAR_STAR {
            // char*: a length, then the characters.
            let at = self.r.pos();
            let n = self.r.i32()?;
            if n <= 0 {
                return Ok(Value::String(String::new()));
            }
            self.r.check_count(i64::from(n), 1, "char* length", at)?;
            return Ok(Value::String(String::from_utf8_lossy(self.r.take(n as usize)?).into_owned()));
        }
        let b = basic_of_code(ty).ok_or_else(|| self.r.err(format!("basic type code {ty} is not supported")))?;
        self.read_basic(b, range)
    }

    /// A value of basic type `b` (a `Double32_t`/`Float16_t` by `range`).
    pub(crate) fn read_basic(&mut self, b: Basic, range: Option<Range>) -> Result<Value> {
        let r = &mut self.r;
        Ok(match b {
            Basic::Scalar(s) => match s {
                Scalar::Bool => Value::Bool(r.u8()? != 0),
                Scalar::Char | Scalar::I8 => Value::Int(i64::from(r.u8()? as i8)),
                Scalar::Byte | Scalar::U8 => Value::UInt(u64::from(r.u8()?)),
                Scalar::I16 => Value::Int(i64::from(r.u16()? as i16)),
                Scalar::U16 => Value::UInt(u64::from(r.u16()?)),
                Scalar::I32 => Value::Int(i64::from(r.i32()?)),
                Scalar::U32 => Value::UInt(u64::from(r.u32()?)),
                Scalar::I64 => Value::Int(r.u64()? as i64),
                Scalar::U64 => Value::UInt(r.u64()?),
                Scalar::F32 => Value::F32(f32::from_bits(r.u32()?)),
                Scalar::F64 => Value::F64(f64::from_bits(r.u64()?)),
            },
            Basic::Double32 => Value::F64(reduced(r, range, false)?),
            Basic::Float16 => Value::F32(reduced(r, range, true)? as f32),
        })
    }

    /// A pointer: null, a reference to an object read before, or a new object after its tag.
    pub(crate) fn pointer(&mut self, class: &str) -> Result<Value> {
        match self.r.object_tag()? {
            Tag::Null => Ok(Value::Null),
            Tag::Object(offset) => match self.objects.get(&offset) {
                Some(Some(v)) => {
                    let n = nodes(v);
                    if n > self.budget {
                        return Err(self.r.err(format!("references to objects read before copy more values than the bytes justify ({n} more)")));
                    }
                    self.budget -= n;
                    Ok(v.clone())
                }
                Some(None) => Err(self.r.err(format!("reference to the object at offset {offset}, which contains it (a cycle)"))),
                None => Err(self.r.err(format!("reference to offset {offset}, where no object was read"))),
            },
            Tag::New { class: actual, offset, end } => {
                let _ = class; // the declared class; the tag names the actual (derived) one
                self.objects.insert(offset, None);
                let v = self.class(&actual)?;
                if let Some(end) = end
                    && self.r.pos() != end
                {
                    return Err(self.r.err(format!("object of class {actual}: its byte count ends at byte {end}")));
                }
                self.objects.insert(offset, Some(v.clone()));
                Ok(v)
            }
        }
    }

    /// A `TObject`: unique id and bits.
    fn tobject(&mut self) -> Result<Value> {
        self.r.version_header()?;
        let id = self.r.u32()?;
        let bits = self.r.u32()?;
        if bits & (1 << 4) != 0 {
            self.r.u16()?;
        }
        Ok(Value::Record(vec![("fUniqueID".into(), Value::UInt(u64::from(id))), ("fBits".into(), Value::UInt(u64::from(bits)))]))
    }

    /// A `TNamed`: its `TObject` members, name and title.
    fn tnamed(&mut self) -> Result<Value> {
        let h = self.r.version_header()?;
        let Value::Record(mut m) = self.tobject()? else { return Err(Error::internal("TObject is a record")) };
        m.push(("fName".into(), Value::String(self.r.tstring()?)));
        m.push(("fTitle".into(), Value::String(self.r.tstring()?)));
        if let Some(end) = h.end {
            self.r.seek_end(end, "TNamed")?;
        }
        Ok(Value::Record(m))
    }

    /// `TStreamerLoop`: a version header, then (when the pointer is set) counter objects.
    fn stream_loop(&mut self, e: &ElementInfo, before: &[(String, Value)]) -> Result<Value> {
        let h = self.r.version_header()?;
        let count = counter(before, &e.count_name).ok_or_else(|| self.r.err(format!("no counter member {} before", e.count_name)))?;
        let is_array = self.r.u8()?;
        let v = if is_array == 0 { Vec::new() } else { self.repeat(usize::try_from(count).unwrap_or(usize::MAX), 2, |d| d.class(class_of(&e.type_name)))? };
        if let Some(end) = h.end {
            self.r.seek_end(end, "TStreamerLoop")?;
        }
        Ok(Value::List(v))
    }

    /// A value of the type named `t` inside a collection (no collection header; classes have theirs).
    pub(crate) fn typed(&mut self, t: &TypeName) -> Result<Value> {
        if let Some(b) = basic_from_name(&t.name) {
            return self.read_basic(b, None);
        }
        match t.name.as_str() {
            "string" | "std::string" | "TString" => Ok(Value::String(self.r.tstring()?)),
            _ if t.pointer => self.pointer(&t.name),
            _ if t.stl().is_some() => self.collection_body(t),
            "pair" | "std::pair" if t.args.len() == 2 && self.info(&t.full, 0, None).is_err() => {
                let (a, b) = (&t.args[0], &t.args[1]);
                Ok(Value::List(vec![self.typed(a)?, self.typed(b)?]))
            }
            _ => self.class(&t.full),
        }
    }
}

/// The type code an element is streamed by: ROOT records a `std::array` (and some fixed arrays)
/// of a fundamental type with the type's own code and an array length, and streams it as the
/// array (`kOffsetL` + code).
pub(crate) fn streamed_type(e: &ElementInfo) -> i32 {
    if (1..=19).contains(&e.ty) && e.array_length > 0 {
        e.ty + 20
    } else {
        e.ty
    }
}

/// The type code of `char*` (a string: its length, then its characters).
pub(crate) const CHAR_STAR: i32 = 7;

/// The fundamental type of `TStreamerInfo` type code `ty` (1 to 19, `char*` aside).
pub(crate) fn basic_of_code(ty: i32) -> Option<Basic> {
    Some(match ty {
        1 => Basic::Scalar(Scalar::I8),
        2 => Basic::Scalar(Scalar::I16),
        3 | 6 => Basic::Scalar(Scalar::I32),
        4 | 16 => Basic::Scalar(Scalar::I64),
        5 => Basic::Scalar(Scalar::F32),
        8 => Basic::Scalar(Scalar::F64),
        9 => Basic::Double32,
        11 => Basic::Scalar(Scalar::U8),
        12 => Basic::Scalar(Scalar::U16),
        13 | 15 => Basic::Scalar(Scalar::U32),
        14 | 17 => Basic::Scalar(Scalar::U64),
        18 => Basic::Scalar(Scalar::Bool),
        19 => Basic::Float16,
        _ => return None,
    })
}

/// ROOT's `ReadWithFactor` / `ReadWithNbits` / a float of a `Double32_t` (`half`: `Float16_t`).
fn reduced(r: &mut TBuf, range: Option<Range>, half: bool) -> Result<f64> {
    let (xmin, factor) = range.map_or((0.0, 0.0), |g| (g.xmin, g.factor));
    if factor != 0.0 {
        let a = r.u32()?;
        let v = f64::from(a) / factor + xmin;
        return Ok(if half { f64::from(v as f32) } else { v });
    }
    let mut nbits = xmin as u32;
    if half && nbits == 0 {
        nbits = 12;
    }
    if nbits == 0 {
        return Ok(f64::from(f32::from_bits(r.u32()?)));
    }
    let exp = r.u8()?;
    let man = r.u16()?;
    let mut bits = u32::from(exp) << 23;
    bits |= (u32::from(man) & ((1u32 << (nbits + 1)) - 1)) << (23u32.saturating_sub(nbits));
    let mut v = f32::from_bits(bits);
    if (1u32 << (nbits + 1)) & u32::from(man) != 0 {
        v = -v;
    }
    Ok(f64::from(v))
}

/// The number of values in `v` (itself included).
fn nodes(v: &Value) -> usize {
    match v {
        Value::List(items) => 1 + items.iter().map(nodes).sum::<usize>(),
        Value::Record(members) => 1 + members.iter().map(|(_, m)| nodes(m)).sum::<usize>(),
        _ => 1,
    }
}

/// A pointer's or array's class name without `*` and `const`.
pub(crate) fn class_of(type_name: &str) -> &str {
    type_name.trim_end_matches('*').trim().trim_start_matches("const ").trim()
}

fn strip_std(n: &str) -> String {
    n.replace("std::", "").replace(' ', "")
}

/// The value of the integer member `name` among those read before.
fn counter(before: &[(String, Value)], name: &str) -> Option<i64> {
    before.iter().rev().find(|(n, _)| n == name).and_then(|(_, v)| match v {
        Value::Int(i) => Some(*i),
        Value::UInt(u) => i64::try_from(*u).ok(),
        _ => None,
    })
}

/// Nests a flat array by its dimensions (outermost first).
pub(crate) fn shape(items: Vec<Value>, dims: &[i32]) -> Value {
    if dims.len() <= 1 {
        return Value::List(items);
    }
    let inner: usize = dims[1..].iter().map(|&d| usize::try_from(d).unwrap_or(1).max(1)).product();
    let mut out = Vec::new();
    let mut it = items.into_iter().peekable();
    while it.peek().is_some() {
        let chunk: Vec<Value> = it.by_ref().take(inner).collect();
        out.push(shape(chunk, &dims[1..]));
    }
    Value::List(out)
}

#[cfg(test)]
#[path = "streamed_object_tests.rs"]
mod tests;
