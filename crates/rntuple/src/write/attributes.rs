//! Writing attribute sets (ROOT 6.38+'s experimental RNTuple attributes): values that annotate
//! ranges of a main RNTuple's entries (a run number, a provenance tag, a calibration), stored as
//! an RNTuple of their own in the same file, with the fields `_rangeStart` and `_rangeLen`
//! (`std::uint64_t`) and the untyped record `_userData` holding the user's fields, as ROOT's
//! `RNTupleAttrSetWriter` writes them; its anchor is a `ROOT::RNTuple` key the directory does not
//! list, linked from the main RNTuple's footer (see [`crate::read::attributes`] for reading).
//!
//! [`crate::write::Writer::attributes`] creates a set; its [`AttributeSetWriter`] is a handle
//! that stays usable while the main writer fills, and the main writer commits the set (first, so
//! that its footer can link it) when it is committed.

use crate::error::{Error, Result};
use crate::format::cursor::Locator;
use crate::format::descriptor::AttributeSetLink;
use crate::logical::typename::{parse, TypeExpr};
use crate::value::Value;
use crate::write::cluster::plan::parse_field_types;
use crate::write::options::WriteOptions;
use crate::write::sink::Dataset;
use crate::write::writer::{LinkedSet, Writer};
use std::sync::{Arc, Mutex};

/// Version of the attribute schema written (ROOT 6.40's: 1.0).
pub const ATTRIBUTE_SCHEMA_VERSION: (u16, u16) = (1, 0);

/// The link a main RNTuple's footer holds to the committed attribute set `name` whose hidden
/// anchor is at `anchor` (what the set's writer and merge's copy of a set both link).
pub(crate) fn link(name: String, anchor: Locator) -> Result<AttributeSetLink> {
    let anchor_length = u32::try_from(anchor.size).map_err(|_| Error::internal("an anchor larger than 4 GiB"))?;
    Ok(AttributeSetLink { schema_major: ATTRIBUTE_SCHEMA_VERSION.0, schema_minor: ATTRIBUTE_SCHEMA_VERSION.1, anchor_length, anchor, name })
}

/// The RNTuple schema of an attribute set whose user fields are `user`.
pub(crate) fn attribute_schema(user: &[(String, TypeExpr)]) -> Result<Vec<(String, TypeExpr)>> {
    let index = parse("std::uint64_t").map_err(|e| Error::internal(format!("{e}")))?;
    Ok(vec![("_rangeStart".into(), index.clone()), ("_rangeLen".into(), index), ("_userData".into(), TypeExpr::Record(user.to_vec()))])
}

/// Checks an attribute set's name: non-empty, not reserved (`__` starts ROOT's internal ones).
pub(crate) fn check_set_name(name: &str, taken: &[String]) -> Result<()> {
    if name.is_empty() || name.starts_with("__") {
        return Err(Error::Invalid(format!("attribute set name '{name}': names must be non-empty and not start with '__' (reserved)")));
    }
    if taken.iter().any(|t| t == name) {
        return Err(Error::Invalid(format!("an attribute set '{name}' exists already")));
    }
    Ok(())
}

impl Writer {
    /// Creates the attribute set `name` of this RNTuple with the given (field name, C++ type
    /// name) schema (ROOT's `CreateAttributeSet`, experimental in ROOT 6.38+): an RNTuple of its
    /// own in the same file, linked from this RNTuple's footer, whose entries annotate ranges of
    /// this RNTuple's entries (see [`AttributeSetWriter`](crate::write::AttributeSetWriter)). The returned handle fills it
    /// while this writer fills; the set is committed with this writer. The file's RNTuple is then
    /// written in format 1.0.2.0 (as ROOT 6.40 writes it), which ROOT 6.38+ and uproot 5.7 read.
    pub fn attributes(&mut self, name: &str, schema: &[(&str, &str)]) -> Result<AttributeSetWriter> {
        self.attributes_with_types(name, &parse_field_types(schema)?)
    }

    /// [`Writer::attributes`] from a schema of parsed type expressions.
    pub fn attributes_with_types(&mut self, name: &str, schema: &[(String, TypeExpr)]) -> Result<AttributeSetWriter> {
        let (ds, opts, attrs) = self.parts();
        if ds.is_committed() {
            return Err(Error::Invalid("the RNTuple was committed already".into()));
        }
        let taken: Vec<String> = attrs.iter().map(|a| a.name()).collect();
        check_set_name(name, &taken)?;
        let full = attribute_schema(schema)?;
        // The set's own options: the main writer's, without checkpoints (it is committed with it).
        let opts = WriteOptions { checkpoint_clusters: 0, ..opts.clone() };
        let file = ds.shared_file()?;
        let main = ds.name().to_string();
        let w = Writer::build(name, &full, opts, |desc, opts| Dataset::create_attribute_set(&file, &main, desc, opts))?;
        let slot = Arc::new(Mutex::new(AttributeSlot { name: name.to_string(), writer: Some(w) }));
        attrs.push(Box::new(slot.clone()));
        Ok(AttributeSetWriter { slot })
    }
}

/// The state shared by an [`AttributeSetWriter`] and its main writer.
pub(crate) struct AttributeSlot {
    pub name: String,
    /// The set's writer, until the main writer commits (or aborts) it.
    pub writer: Option<Writer>,
}

impl LinkedSet for Arc<Mutex<AttributeSlot>> {
    fn name(&self) -> String {
        self.lock().map(|g| g.name.clone()).unwrap_or_default()
    }

    /// Commits the set (its last cluster, page list, footer and hidden anchor).
    fn commit(&self) -> Result<AttributeSetLink> {
        let mut g = self.lock().map_err(|_| Error::internal("an attribute set's lock is poisoned"))?;
        let name = g.name.clone();
        let w = g.writer.take().ok_or_else(|| Error::Invalid(format!("attribute set '{name}' was committed or aborted already")))?;
        link(name, w.commit_attribute_set()?)
    }

    fn abort(&self) {
        if let Ok(mut g) = self.lock()
            && let Some(w) = g.writer.take()
        {
            w.abort();
        }
    }
}

/// A handle for writing one attribute set (from [`crate::write::Writer::attributes`]); `Send`,
/// usable while the main writer fills. The set is committed with its main writer.
///
/// ```
/// use rntuple::write::{Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-AttributeSetWriter-{}.root", std::process::id()));
/// let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
/// let calib = w.attributes("calibration", &[("version", "std::string")])?;
/// # for i in 0..4 { w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?; }
/// let v2 = Value::Record(vec![("version".into(), Value::String("v2".into()))]);
/// calib.commit_range(0, 4, &v2)?;
/// assert!(calib.commit_range(3, 2, &v2).is_err()); // a range cannot end before it starts
/// assert_eq!((calib.name(), calib.num_entries()), ("calibration".to_string(), 1));
/// w.commit()?;
/// assert!(calib.commit_range(0, 1, &v2).is_err()); // committed with its RNTuple
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.attribute_set("calibration")?.entries_for(2)?[0].values, v2);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AttributeSetWriter {
    pub(crate) slot: Arc<Mutex<AttributeSlot>>,
}

impl AttributeSetWriter {
    fn with<R>(&self, f: impl FnOnce(&mut Writer) -> Result<R>) -> Result<R> {
        let mut g = self.slot.lock().map_err(|_| Error::internal("an attribute set's lock is poisoned"))?;
        let name = g.name.clone();
        let w = g.writer.as_mut().ok_or_else(|| Error::Invalid(format!("attribute set '{name}' was committed (with its RNTuple) or aborted already")))?;
        f(w)
    }

    /// The set's name.
    pub fn name(&self) -> String {
        self.slot.lock().map(|g| g.name.clone()).unwrap_or_default()
    }

    /// Associates `values` (a [`Value::Record`] of the set's fields) with the main entries
    /// `[start, stop)`: one attribute entry (ROOT's `BeginRange` at `start`, `CommitRange` at
    /// `stop`). Ranges may be empty, overlap and come in any order.
    pub fn commit_range(&self, start: u64, stop: u64, values: &Value) -> Result<()> {
        if stop < start {
            return Err(Error::Invalid(format!("attribute range [{start}, {stop}) ends before it starts")));
        }
        let entry = Value::Record(vec![
            ("_rangeStart".into(), Value::UInt(start)),
            ("_rangeLen".into(), Value::UInt(stop - start)),
            ("_userData".into(), values.clone()),
        ]);
        self.with(|w| w.fill(&entry))
    }

    /// Attribute entries written so far.
    pub fn num_entries(&self) -> u64 {
        self.with(|w| Ok(w.num_entries())).unwrap_or(0)
    }
}
