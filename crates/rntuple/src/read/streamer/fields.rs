//! Streamer fields read as objects: the file's StreamerInfo records, loaded once when first
//! needed, describe the class of a streamer field; each entry's bytes are then deserialized into
//! a record of the class's members (`read::streamer::streamed_object`). An entry the records cannot
//! describe (a class with a custom `Streamer`: no record, or bytes the records do not consume
//! exactly) stays raw bytes, as does every entry with [`Reader::set_streamer_objects`]`(false)`.
//! In Arrow (`read_batch`, the Arrow streams, Python's arrays) a described class is a struct of
//! its members (`read::streamer::streamed_arrow`); an entry the records cannot describe is then an error
//! that says how to read the field as bytes.

use crate::read::open::Reader;
use crate::error::{Error, Result};
use crate::logical::kind::Kind;
use crate::read::streamer::streamed_arrow::{object_array, object_type};
use crate::read::streamer::streamed_object::{describes, deserialize};
use crate::storage::container::streamer_info_read::ClassInfo;
use crate::storage::container::tfile::read_streamer_infos;
use crate::value::Value;
use arrow_array::{Array, ArrayRef, LargeBinaryArray};
use arrow_schema::DataType;

impl Reader {
    /// The file's StreamerInfo records (read on first use; none for a file without them, or whose
    /// record cannot be parsed).
    pub(crate) fn streamer_records(&self) -> &[ClassInfo] {
        self.streamer.records.get_or_init(|| read_streamer_infos(&**self.source()).unwrap_or_default())
    }

    /// How streamer field `field` is read: `None` when it is not a streamer field; `Some(true)`
    /// when the file's StreamerInfo records describe its class (entries become records of the
    /// class's members; an entry they cannot describe stays raw bytes); `Some(false)` for raw
    /// bytes (no record of the class, a first entry the record does not describe: a class with
    /// a custom `Streamer`, or [`Reader::set_streamer_objects`]`(false)`).
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
        Some(!self.streamer.raw && describes(self.streamer_records(), class) && self.first_entry_described(field))
    }

    /// Whether the first entry of top-level streamer field `field` deserializes by the file's
    /// records (ROOT also records a class whose custom `Streamer` writes other bytes); probed once.
    /// A nested streamer field, an empty one, or one whose first entry cannot be read passes.
    fn first_entry_described(&self, field: u32) -> bool {
        let f = &self.descriptor().fields[field as usize];
        if f.parent.is_some() || self.num_entries() == 0 {
            return true;
        }
        let cached = self.streamer.probed.lock().ok().and_then(|m| m.get(&field).copied());
        if let Some(known) = cached {
            return known;
        }
        let ok = match self.read_batch_as(Some(&[f.name.as_str()]), 0, 1, false) {
            Ok(batch) => match batch.column(0).as_any().downcast_ref::<LargeBinaryArray>() {
                Some(b) if b.len() == 1 && !b.is_null(0) => deserialize(b.value(0), self.streamer_records(), &f.type_name).is_ok(),
                _ => true,
            },
            Err(_) => true,
        };
        if let Ok(mut m) = self.streamer.probed.lock() {
            m.insert(field, ok);
        }
        ok
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

    /// Whether streamer fields are read as objects (not switched off).
    pub(crate) fn streamer_objects_on(&self) -> bool {
        !self.streamer.raw
    }

    /// The Arrow type of streamer field `field` read as objects: `None` when its entries stay
    /// bytes (no record of its class, objects switched off, or a class without an Arrow type,
    /// such as one that contains itself).
    pub(crate) fn streamer_arrow_type(&self, field: u32) -> Option<DataType> {
        if self.streamer_objects(field) != Some(true) {
            return None;
        }
        object_type(self.streamer_records(), &self.descriptor().fields[field as usize].type_name).ok()
    }

    /// The objects of the entries `bytes` of streamer field `field`, as an array of type `t`.
    pub(crate) fn streamer_objects_array(&self, field: u32, bytes: &LargeBinaryArray, t: &DataType) -> Result<ArrayRef> {
        let f = &self.descriptor().fields[field as usize];
        let mut values = Vec::with_capacity(bytes.len());
        for row in 0..bytes.len() {
            if bytes.is_null(row) {
                values.push(crate::value::Value::Null);
                continue;
            }
            let v = deserialize(bytes.value(row), self.streamer_records(), &f.type_name).map_err(|e| {
                Error::Invalid(format!(
                    "streamer field '{}' (class {}), entry {row} of this read, does not match the file's StreamerInfo records ({e}); \
                     a class with a custom Streamer is read as raw bytes with Reader::set_streamer_objects(false) (Python: rntuple.open(path, streamer_objects=False))",
                    f.name, f.type_name
                ))
            })?;
            values.push(v);
        }
        let refs: Vec<&crate::value::Value> = values.iter().collect();
        object_array(&refs, t).map_err(|e| e.context(format!("streamer field '{}'", f.name)))
    }

    /// One entry of streamer field `field`: its object, or its bytes.
    pub(crate) fn streamer_value(&self, field: u32, bytes: &[u8]) -> Value {
        if self.streamer_objects(field) == Some(true) {
            let class = &self.descriptor().fields[field as usize].type_name;
            if let Ok(v) = deserialize(bytes, self.streamer_records(), class) {
                return v;
            }
        }
        Value::Bytes(bytes.to_vec())
    }
}
