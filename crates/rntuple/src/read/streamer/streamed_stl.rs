//! Collections in objects streamed by ROOT's `TBufferFile` (`read::streamer::streamed_object`): a
//! `std::string` member, and `std::vector`/`list`/`deque`/`set`/`map`... of anything (nested
//! collections, classes, pairs, pointers) as `TStreamerSTL` elements stream them: a version
//! header, then the size and the items (object-wise), or (`kStreamedMemberWise` in the version)
//! the items' class version and checksum, the size, then each member of all items in turn.
//!
//! ```
//! use rntuple::read::streamer::streamed_object::deserialize;
//! use rntuple::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo};
//! let v = ElementInfo {
//!     class: ElementClass::Stl, name: "v".into(), title: String::new(), ty: 500, size: 24,
//!     array_length: 0, dims: vec![], type_name: "vector<short>".into(), base_version: 0,
//!     stl_type: 1, ctype: 2, count_name: String::new(), range: None,
//! };
//! let infos = [ClassInfo { name: "C".into(), version: 3, checksum: 0, elements: vec![v] }];
//! // C (byte count 16, version 3), its vector (byte count 10, version 9): 2 items, 5 and -1.
//! let bytes = [0x40, 0, 0, 16, 0, 3, 0x40, 0, 0, 10, 0, 9, 0, 0, 0, 2, 0, 5, 0xFF, 0xFF];
//! assert_eq!(deserialize(&bytes, &infos, "C")?.to_json().to_string(), r#"{"v":[5,-1]}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::Result;
use crate::logical::streamed_types::{Stl, TypeName};
use crate::read::streamer::streamed_object::{class_of, Deserializer};
use crate::storage::container::streamer_info_read::{ClassInfo, ElementClass, ElementInfo};
use crate::storage::container::tbuffer::MEMBER_WISE;
use crate::value::Value;

impl Deserializer<'_> {
    /// A `TStreamerSTL` (or `TStreamerSTLstring`) member of `narr` objects (more than one when
    /// their class is streamed member-wise): one version header, then the member of each object.
    pub(crate) fn stl_members(&mut self, e: &ElementInfo, narr: usize) -> Result<Vec<Value>> {
        if e.ty == 365 {
            return self.repeat(narr, 1, |d| Ok(Value::String(d.r.tstring()?)));
        }
        if !e.dims.is_empty() {
            return Err(self.r.err("arrays of collections are not supported"));
        }
        self.enter(&e.type_name)?;
        let h = self.r.version_header()?;
        let v = if e.class == ElementClass::StlString || e.stl_type == 365 {
            self.repeat(narr, 1, |d| Ok(Value::String(d.r.tstring()?)))?
        } else {
            let t = TypeName::parse(&e.type_name).map_err(|m| self.r.err(m))?;
            if t.stl().is_none() {
                return Err(self.r.err(format!("collection type {} is not supported", e.type_name)));
            }
            if h.version & MEMBER_WISE != 0 {
                // The items' class version (and checksum) once, then each object's items.
                let version = self.r.u16()?;
                let checksum = if version == 0 { Some(self.r.u32()?) } else { None };
                self.repeat(narr, 4, |d| d.member_wise_collection(&t, version, checksum))?
            } else {
                self.repeat(narr, 4, |d| d.collection_body(&t))?
            }
        };
        if let Some(end) = h.end
            && self.r.pos() != end
        {
            return Err(self.r.err(format!("collection {}: its byte count ends at byte {end}", e.type_name)));
        }
        self.leave();
        Ok(v)
    }

    /// A collection's size and items, object-wise: maps as lists of `[key, value]`.
    pub(crate) fn collection_body(&mut self, t: &TypeName) -> Result<Value> {
        self.enter(&t.full)?;
        let n = self.r.count(1, "collection size")?;
        let mut out = Vec::with_capacity(n);
        match t.stl() {
            Some(Stl::Map) => {
                for _ in 0..n {
                    let k = self.typed(&t.args[0])?;
                    let v = self.typed(&t.args[1])?;
                    out.push(Value::List(vec![k, v]));
                }
            }
            _ => {
                for _ in 0..n {
                    out.push(self.typed(&t.args[0])?);
                }
            }
        }
        self.leave();
        Ok(Value::List(out))
    }

    /// The items of one collection streamed member-wise (after the items' class version and
    /// checksum): the size, then each member of all items in turn (a map's keys, then its values).
    fn member_wise_collection(&mut self, t: &TypeName, version: u16, checksum: Option<u32>) -> Result<Value> {
        let item = &t.args[0];
        let n = self.r.count(1, "collection size")?;
        let pair = if t.stl() == Some(Stl::Map) {
            Some((&t.args[0], &t.args[1]))
        } else if (item.name == "pair" || item.name == "std::pair") && item.args.len() == 2 {
            Some((&item.args[0], &item.args[1]))
        } else {
            None
        };
        if let Some((k, v)) = pair {
            // The pair's record streams its members (a string or collection with its header); without
            // one, the keys' and values' bare forms.
            let names = [format!("pair<const {},{}>", k.full, v.full), format!("pair<{},{}>", k.full, v.full)];
            if let Some(info) = names.iter().find_map(|name| self.info(name, version, checksum).ok()) {
                let objects = self.member_wise(info, n)?;
                return Ok(Value::List(objects.into_iter().map(|o| Value::List(o.into_iter().map(|(_, m)| m).collect())).collect()));
            }
            let keys = self.repeat(n, 1, |d| d.typed(k))?;
            let values = self.repeat(n, 1, |d| d.typed(v))?;
            return Ok(Value::List(keys.into_iter().zip(values).map(|(k, v)| Value::List(vec![k, v])).collect()));
        }
        let info = self.info(&item.full, version, checksum)?;
        let objects = self.member_wise(info, n)?;
        Ok(Value::List(objects.into_iter().map(Value::Record).collect()))
    }

    /// The members of `n` objects of `info`, each member of all objects in turn (bases too, by
    /// their own records, without version headers).
    fn member_wise(&mut self, info: &ClassInfo, n: usize) -> Result<Vec<Vec<(String, Value)>>> {
        if n == 0 {
            return Ok(Vec::new()); // ROOT streams nothing, not even the members' headers
        }
        self.enter(&info.name)?;
        let at = self.r.pos();
        let n = self.r.check_count(n as i64, 1, "collection size", at)?;
        let mut objects: Vec<Vec<(String, Value)>> = vec![Vec::new(); n];
        let mut bases = 0;
        for e in &info.elements {
            if e.class == ElementClass::Base && e.name != "TObject" && e.name != "TNamed" {
                let base = self.info(class_of(&e.name), u16::try_from(e.base_version).unwrap_or(0), None)?;
                let members = self.member_wise(base, n)?;
                for (o, m) in objects.iter_mut().zip(members) {
                    o.push((format!(":_{bases}"), Value::Record(m)));
                }
                bases += 1;
                continue;
            }
            let name = if e.class == ElementClass::Base {
                bases += 1;
                format!(":_{}", bases - 1)
            } else {
                e.name.clone()
            };
            let context = |err: crate::error::Error| err.context(format!("member {} of class {} (member-wise)", e.name, info.name));
            if matches!(e.class, ElementClass::Stl | ElementClass::StlString) {
                // One header for the collections of all objects.
                let values = self.stl_members(e, n).map_err(context)?;
                for (o, v) in objects.iter_mut().zip(values) {
                    o.push((name.clone(), v));
                }
                continue;
            }
            for o in objects.iter_mut() {
                let v = self.element(e, o).map_err(context)?;
                o.push((name.clone(), v));
            }
        }
        self.leave();
        Ok(objects)
    }
}
