//! Reading an RNTuple for conversion: its Arrow schema (the same for every batch) and its
//! clusters as entry ranges.

use crate::error::{Error, Result};
use crate::logical::kind::Kind;
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use arrow_array::RecordBatch;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use std::path::Path;
use std::sync::Arc;

/// An RNTuple opened for conversion.
pub(crate) struct Source {
    pub reader: Reader,
    /// Every top-level field, in schema order.
    pub fields: Vec<String>,
    /// The Arrow schema of the batches (nullable where the field is optional or a variant).
    pub schema: SchemaRef,
}

impl Source {
    /// Opens the RNTuple `name` of a file (the only one when `name` is `None`). Fields that
    /// cannot be read are an error naming them.
    pub fn open(path: &Path, name: Option<&str>) -> Result<Source> {
        let file = RNTupleFile::open(path)?;
        let name = match name {
            Some(n) => n.to_string(),
            None => {
                let names = file.names();
                match names.as_slice() {
                    [one] => one.clone(),
                    [] => return Err(Error::NotFound(format!("'{}' holds no RNTuple", path.display()))),
                    _ => return Err(Error::Invalid(format!("'{}' holds several RNTuples ({}); choose one", path.display(), names.join(", ")))),
                }
            }
        };
        let reader = file.reader(&name)?;
        let skipped = reader.skipped_fields();
        if !skipped.is_empty() {
            let list: Vec<String> = skipped.iter().map(|(f, why)| format!("'{f}' ({why})")).collect();
            return Err(Error::Unsupported(format!("RNTuple '{name}': field(s) that cannot be read: {}", list.join(", "))));
        }
        let mut fields = Vec::new();
        let mut arrow_fields = Vec::new();
        for f in reader.fields() {
            let dt = reader.arrow_type(f.id)?;
            let nullable = matches!(reader.kind(f.id), Ok(Kind::Optional | Kind::Variant)) || dt == DataType::Null;
            fields.push(f.name.clone());
            arrow_fields.push(Field::new(f.name.clone(), dt, nullable));
        }
        Ok(Source { reader, fields, schema: Arc::new(Schema::new(arrow_fields)) })
    }

    /// The clusters as (first entry, number of entries).
    pub fn clusters(&self) -> Vec<(u64, u64)> {
        self.reader.descriptor().clusters.iter().map(|c| (c.first_entry, c.n_entries)).collect()
    }

    /// Entries `start..stop` as a batch of [`Source::schema`].
    pub fn batch(&self, start: u64, stop: u64) -> Result<RecordBatch> {
        let names: Vec<&str> = self.fields.iter().map(|s| s.as_str()).collect();
        let b = self.reader.read_batch(Some(&names), start, stop)?;
        let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(b.num_rows()));
        Ok(RecordBatch::try_new_with_options(self.schema.clone(), b.columns().to_vec(), &opts)?)
    }
}
