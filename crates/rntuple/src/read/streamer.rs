//! Streamer fields read as objects: the file's StreamerInfo records, loaded once when first
//! needed, describe the class of a streamer field; each entry's bytes are then deserialized into
//! a record of the class's members (`read::streamed_object`). An entry the records cannot
//! describe (a class with a custom `Streamer`: no record, or bytes the records do not consume
//! exactly) stays raw bytes, as does every entry with [`Reader::set_streamer_objects`]`(false)`.

use super::open::Reader;
use crate::logical::kind::Kind;
use crate::read::streamed_object::{describes, deserialize};
use crate::storage::streamer_info_read::ClassInfo;
use crate::storage::tfile::read_streamer_infos;
use crate::value::Value;

impl Reader {
    /// The file's StreamerInfo records (read on first use; none for a file without them, or whose
    /// record cannot be parsed).
    pub(crate) fn streamer_records(&self) -> &[ClassInfo] {
        self.streamer.records.get_or_init(|| read_streamer_infos(&**self.source()).unwrap_or_default())
    }

    /// How streamer field `field` is read: `None` when it is not a streamer field; `Some(true)`
    /// when the file's StreamerInfo records describe its class (entries become records of the
    /// class's members; an entry they cannot describe stays raw bytes); `Some(false)` for raw
    /// bytes (no record of the class, or [`Reader::set_streamer_objects`]`(false)`).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-streamer_objects-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// # w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
    /// # w.commit()?;
    /// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// assert_eq!(r.streamer_objects(0), None); // "x" is a float, not a streamer field
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn streamer_objects(&self, field: u32) -> Option<bool> {
        if !matches!(self.kind(field), Ok(Kind::Streamer)) {
            return None;
        }
        let class = &self.descriptor().fields[field as usize].type_name;
        Some(!self.streamer.raw && describes(self.streamer_records(), class))
    }

    /// Reads streamer fields as objects (`true`, the default) or as the raw bytes of each entry.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let path = std::env::temp_dir().join(format!("rntuple-doc-set_streamer_objects-{}.root", std::process::id()));
    /// # let mut w = Writer::create(&path, "Events", &[("x", "float")], WriteOptions::default())?;
    /// # w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
    /// # w.commit()?;
    /// let mut r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
    /// r.set_streamer_objects(false); // streamer fields' entries as Value::Bytes
    /// assert_eq!(r.read_values(None, 0, 1)?[0].to_json().to_string(), r#"{"x":1.0}"#);
    /// # std::fs::remove_file(&path)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_streamer_objects(&mut self, on: bool) {
        self.streamer.raw = !on;
    }

    /// One entry of streamer field `field`: its object, or its bytes.
    pub(super) fn streamer_value(&self, field: u32, bytes: &[u8]) -> Value {
        if self.streamer_objects(field) == Some(true) {
            let class = &self.descriptor().fields[field as usize].type_name;
            if let Ok(v) = deserialize(bytes, self.streamer_records(), class) {
                return v;
            }
        }
        Value::Bytes(bytes.to_vec())
    }
}
