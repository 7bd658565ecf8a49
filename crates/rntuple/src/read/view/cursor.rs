//! What every view's cursor does (the [`Cursor`] trait), and the lookups they share: the cluster
//! of an entry, a field's type name for messages.

use crate::error::{Error, Result};
use crate::read::open::Reader;

/// How a view reads a field's entries: made for a field path, asked for one entry at a time.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let path = std::env::temp_dir().join(format!("rntuple-doc-Cursor-{}.root", std::process::id()));
/// # let schema = [("x", "float"), ("v", "std::vector<float>"), ("s", "std::string")];
/// # let mut w = Writer::create(&path, "Events", &schema, WriteOptions::default())?;
/// # for i in 0..4usize {
/// #     let v = Value::List(vec![Value::F32(1.5); i]);
/// #     w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32)), ("v".into(), v), ("s".into(), Value::String("ab".repeat(i)))]))?;
/// # }
/// # w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// use rntuple::read::view::{Cursor, ScalarCursor};
/// let mut c = ScalarCursor::<f32>::open(&r, "x")?;
/// assert_eq!(c.get(&r, 3)?, 3.0);
/// assert_eq!((c.pages_decoded(), c.cached_bytes()), (1, 16));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Cursor: Sized {
    /// What one entry reads as (`f32`, `&[f32]`, `&str`).
    type Out<'a>
    where
        Self: 'a;
    /// The cursor of the field at dotted path `path`; an error if the field cannot read as this.
    fn open(r: &Reader, path: &str) -> Result<Self>;
    /// Entry `entry` (global); an error past the end.
    fn get<'a>(&'a mut self, r: &Reader, entry: u64) -> Result<Self::Out<'a>>;
    /// Pages decoded so far (each page touched counts once while it stays cached).
    fn pages_decoded(&self) -> u64;
    /// Bytes of decoded pages held.
    fn cached_bytes(&self) -> usize;
    /// The page cache's budget in bytes.
    fn set_budget(&mut self, bytes: usize);
}

/// The cluster holding global entry `entry` and the entry's index within it.
#[inline]
pub(crate) fn cluster_of(r: &Reader, entry: u64, what: &str) -> Result<(usize, u64)> {
    let cl = &r.desc.clusters;
    let k = cl.partition_point(|c| c.first_entry.saturating_add(c.n_entries) <= entry);
    match cl.get(k) {
        Some(c) if entry >= c.first_entry => Ok((k, entry - c.first_entry)),
        _ => Err(Error::Invalid(format!("{what}: entry {entry} is past the end ({} entries)", r.num_entries()))),
    }
}

/// The ROOT type name of the field at `path`, for messages.
pub(crate) fn type_of(r: &Reader, path: &str) -> String {
    match r.desc.field_by_path(path) {
        Some(id) => r.display_type(id),
        None => "no such field".into(),
    }
}
