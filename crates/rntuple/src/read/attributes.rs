//! Reading attribute sets (format 1.0.1.0+, ROOT 6.38+, experimental): each set linked from an
//! RNTuple's footer is an RNTuple of its own in the same file, found through an anchor that the
//! directory does not list. Its entries are `(_rangeStart, _rangeLen, _userData)`: the values of
//! the user's fields (the record `_userData`) that annotate the main entries
//! `[_rangeStart, _rangeStart + _rangeLen)`.
//!
//! ```
//! use rntuple::write::{Writer, WriteOptions};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join("rntuple-doc-attributes.root");
//! let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
//! let mut prov = w.attributes("provenance", &[("run", "std::int32_t")])?;
//! for i in 0..10 {
//!     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?;
//! }
//! prov.commit_range(0, 10, &Value::Record(vec![("run".into(), Value::Int(7))]))?;
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! assert_eq!(r.attribute_set_names(), ["provenance"]);
//! let set = r.attribute_set("provenance")?;
//! let e = &set.entries()?[0];
//! assert_eq!((e.range_start, e.range_len), (0, 10));
//! assert_eq!(e.values.to_json().to_string(), r#"{"run":7}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::format::anchor::{parse_anchor, AnchorStatus};
use crate::format::descriptor::AttributeSetLink;
use crate::format::envelope::MAX_ATTRIBUTE_ANCHOR;
use crate::read::attribute_budget::{AttributeSet, MetadataBound};
use crate::read::open::{METADATA_FILE_RATIO, METADATA_TOTAL_FLOOR};
use crate::read::reader::Reader;
use crate::value::Value;

/// Names of the meta fields of attribute schema 1.x, in order.
pub const ATTRIBUTE_META_FIELDS: [&str; 3] = ["_rangeStart", "_rangeLen", "_userData"];

/// One entry of an attribute set: the range of main entries it annotates and its values.
///
/// ```
/// use rntuple::read::AttributeEntry;
/// use rntuple::Value;
/// let e = AttributeEntry { range_start: 10, range_len: 5, values: Value::Record(vec![("run".into(), Value::Int(7))]) };
/// assert!(e.contains(10) && e.contains(14));
/// assert!(!e.contains(9) && !e.contains(15));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeEntry {
    /// First main entry of the range.
    pub range_start: u64,
    /// Number of main entries in the range (may be 0).
    pub range_len: u64,
    /// The user's fields, a [`Value::Record`] in schema order.
    pub values: Value,
}

impl AttributeEntry {
    /// Whether the range holds main entry `entry`.
    pub fn contains(&self, entry: u64) -> bool {
        entry >= self.range_start && entry - self.range_start < self.range_len
    }
}

/// An attribute set opened from its main RNTuple's reader ([`Reader::attribute_set`]).
///
/// ```
/// use rntuple::write::{Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-AttributeSetReader-{}.root", std::process::id()));
/// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// let runs = w.attributes("runs", &[("run", "std::int32_t")])?;
/// # for i in 0..10 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// runs.commit_range(0, 6, &Value::Record(vec![("run".into(), Value::Int(1))]))?;
/// runs.commit_range(6, 10, &Value::Record(vec![("run".into(), Value::Int(2))]))?;
/// w.commit()?;
/// let set = rntuple::RNTupleFile::open(&path)?.reader("Events")?.attribute_set("runs")?;
/// assert_eq!((set.name(), set.num_entries(), set.link().schema_major), ("runs", 2, 1));
/// assert_eq!(set.entries_for(7)?[0].values.to_json().to_string(), r#"{"run":2}"#);
/// assert_eq!((set.entries_in(0, 1)?[0].range_start, set.entries()?[0].range_len), (0, 6));
/// assert_eq!(set.into_reader().fields()[0].name, "_rangeStart");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AttributeSetReader {
    link: AttributeSetLink,
    reader: Reader,
}

impl Reader {
    /// The attribute sets linked from this RNTuple's footer (empty before format 1.0.1.0).
    pub fn attribute_sets(&self) -> &[AttributeSetLink] {
        &self.desc.attribute_sets
    }

    /// The names of the linked attribute sets, in footer order.
    pub fn attribute_set_names(&self) -> Vec<String> {
        self.desc.attribute_sets.iter().map(|a| a.name.clone()).collect()
    }

    /// Opens the attribute set `name`: reads its anchor where the link points (bounded and
    /// checksummed: a bad link is an error naming the set and the offset), then its RNTuple, whose
    /// schema must start with the meta fields of attribute schema 1.
    pub fn attribute_set(&self, name: &str) -> Result<AttributeSetReader> {
        let link = self.desc.attribute_sets.iter().find(|a| a.name == name).ok_or_else(|| {
            let names = self.desc.attribute_sets.iter().take(20).map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ");
            let more = self.desc.attribute_sets.len().saturating_sub(20);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            Error::NotFound(format!("RNTuple '{}' has no attribute set '{name}' (it has: [{names}]{more})", self.desc.name))
        })?;
        self.open_attribute_set(link)
    }

    /// Opens the attribute set of `link` (one of [`Reader::attribute_sets`]) as
    /// [`Reader::attribute_set`] does, without looking it up by name: opening every set of a
    /// footer that links many costs one open each, not a search through the links each.
    ///
    /// ```
    /// use rntuple::write::{Writer, WriteOptions};
    /// use rntuple::Value;
    /// let path = std::env::temp_dir().join(format!("rntuple-doc-open_attribute_set-{}.root", std::process::id()));
    /// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// let runs = w.attributes("runs", &[("run", "std::int32_t")])?;
    /// w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
    /// runs.commit_range(0, 1, &Value::Record(vec![("run".into(), Value::Int(7))]))?;
    /// w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// let sets: Vec<u64> = r.attribute_sets().iter().map(|l| r.open_attribute_set(l).map(|s| s.num_entries())).collect::<Result<_, _>>()?;
    /// assert_eq!(sets, [1]);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open_attribute_set(&self, link: &AttributeSetLink) -> Result<AttributeSetReader> {
        let link = link.clone();
        let name = link.name.as_str();
        let what = |msg: String| Error::corrupt(format!("attribute set '{name}' of RNTuple '{}': {msg}", self.desc.name), link.anchor.offset);
        if link.schema_major != 1 {
            return Err(Error::Unsupported(format!(
                "attribute set '{name}' has attribute schema version {}.{}; this reader knows version 1",
                link.schema_major, link.schema_minor
            )));
        }
        let size = link.anchor.size;
        let len = u64::from(link.anchor_length);
        if size == 0 || size > u64::from(MAX_ATTRIBUTE_ANCHOR) || size > len {
            return Err(what(format!("anchor locator of {size} bytes for an anchor of {len} bytes")));
        }
        let src = &self.page_source.src;
        let end = link.anchor.offset.checked_add(size).filter(|&e| e <= src.len());
        if end.is_none() {
            return Err(what(format!("anchor at offset {} + {size} bytes lies beyond the end of the file ({} bytes)", link.anchor.offset, src.len())));
        }
        let mut stored = vec![0u8; size as usize];
        src.read_exact_at(link.anchor.offset, &mut stored)?;
        let bytes =
            if size == len { stored } else { crate::format::compression::decompress(&stored, len as usize, "attribute set anchor", link.anchor.offset)? };
        let anchor = match parse_anchor(&bytes, "ROOT::RNTuple", link.anchor.offset) {
            AnchorStatus::Ok(a) => a,
            AnchorStatus::Legacy(m) | AnchorStatus::Broken(m) => return Err(what(m)),
        };
        let reader = Reader::open(src.clone(), anchor).map_err(|e| e.context(format!("attribute set '{name}' of RNTuple '{}'", self.desc.name)))?;
        let lists = reader
            .desc
            .cluster_groups
            .iter()
            .fold((0u64, 0u64), |(s, l), g| (s.saturating_add(g.page_list.locator.size), l.saturating_add(g.page_list.length)));
        let set = AttributeSet { ntuple: &self.desc.name, name, offset: link.anchor.offset, anchor_size: size, anchor: &reader.anchor, page_lists: lists };
        let bound = MetadataBound { floor: METADATA_TOTAL_FLOOR, ratio: METADATA_FILE_RATIO };
        self.attribute_budget.lock().map_err(|_| Error::internal("the attribute budget's lock is poisoned"))?.charge(
            &set,
            self.page_source.src.len(),
            &bound,
        )?;
        let top: Vec<&str> = reader.desc.top_level_fields().iter().filter_map(|&i| reader.desc.fields.get(i as usize)).map(|f| f.name.as_str()).collect();
        if top.len() < 3 || top[..3] != ATTRIBUTE_META_FIELDS {
            return Err(what(format!("its RNTuple's fields are {top:?}, not {ATTRIBUTE_META_FIELDS:?} as attribute schema 1 says")));
        }
        check_meta_kinds(&reader).map_err(what)?;
        Ok(AttributeSetReader { link, reader })
    }
}

impl AttributeSetReader {
    /// The set's name.
    pub fn name(&self) -> &str {
        &self.link.name
    }

    /// The link from the main RNTuple's footer.
    pub fn link(&self) -> &AttributeSetLink {
        &self.link
    }

    /// The attribute RNTuple itself (its fields: the meta fields, then the user's in
    /// `_userData`).
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The attribute RNTuple's reader, owned.
    pub fn into_reader(self) -> Reader {
        self.reader
    }

    /// Number of attribute entries (ranges).
    pub fn num_entries(&self) -> u64 {
        self.reader.num_entries()
    }

    /// The attribute entries `[start, stop)`: ranges and values.
    pub fn entries_in(&self, start: u64, stop: u64) -> Result<Vec<AttributeEntry>> {
        let rows = self.reader.read_values(Some(&ATTRIBUTE_META_FIELDS), start, stop)?;
        rows.into_iter().enumerate().map(|(i, row)| entry_of(row, start + i as u64, &self.link.name)).collect()
    }

    /// Every attribute entry, in order.
    pub fn entries(&self) -> Result<Vec<AttributeEntry>> {
        self.entries_in(0, self.num_entries())
    }

    /// The attribute entries whose range holds main entry `entry` (ROOT's `GetAttributes(entry)`).
    pub fn entries_for(&self, entry: u64) -> Result<Vec<AttributeEntry>> {
        Ok(self.entries()?.into_iter().filter(|e| e.contains(entry)).collect())
    }
}

fn entry_of(row: Value, index: u64, set: &str) -> Result<AttributeEntry> {
    let bad = || Error::corrupt(format!("attribute set '{set}': entry {index} does not hold (_rangeStart, _rangeLen, _userData)"), 0);
    let Value::Record(mut members) = row else { return Err(bad()) };
    if members.len() != 3 {
        return Err(bad());
    }
    let values = std::mem::replace(&mut members[2].1, Value::Null);
    let int = |v: &Value| match *v {
        Value::UInt(u) => Some(u),
        Value::Int(i) => u64::try_from(i).ok(),
        _ => None,
    };
    let (Some(range_start), Some(range_len)) = (int(&members[0].1), int(&members[1].1)) else { return Err(bad()) };
    Ok(AttributeEntry { range_start, range_len, values })
}

/// Checks the kinds of an attribute RNTuple's meta fields (its first three top-level fields):
/// `_rangeStart` and `_rangeLen` integers, `_userData` a record. A set whose `_rangeStart` is a
/// string is refused when opened, not when a value fails to convert.
fn check_meta_kinds(r: &Reader) -> std::result::Result<(), String> {
    use crate::logical::kind::{Kind, Scalar::*};
    for (i, &id) in r.desc.top_level_fields().iter().take(3).enumerate() {
        let f = r.desc.fields.get(id as usize).ok_or_else(|| format!("no field {id}"))?;
        let kind = r.kinds.get(id as usize).and_then(|k| k.as_ref().ok());
        let fits = matches!((i, kind), (0 | 1, Some(Kind::Scalar(I8 | U8 | I16 | U16 | I32 | U32 | I64 | U64))) | (2, Some(Kind::Record)));
        if !fits {
            let want = if i == 2 { "a record" } else { "an integer" };
            return Err(format!("its field '{}' is of type '{}', not {want} as attribute schema 1 says", f.name, f.type_name));
        }
    }
    Ok(())
}
