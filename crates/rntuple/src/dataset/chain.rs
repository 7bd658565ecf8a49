//! A chain: several RNTuples with the same fields and types read as one sequence of entries, with
//! global entry numbers (ROOT's `RNTupleChainProcessor`). Its inputs are opened when the chain is
//! made, and their schemas compared: an input whose fields or types differ from the first one's is
//! refused naming the file and the field.

use crate::error::{Error, Result};
use crate::ops::select::expand_inputs;
use crate::read::file::RNTupleFile;
use crate::read::reader::Reader;
use crate::value::Value;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_schema::{Field, Schema};
use std::ops::Range;
use std::sync::Arc;

/// One input of a chain: where it comes from, its reader and the global number of its first entry.
pub(crate) struct Part {
    /// The file (path or URL), for messages.
    pub(crate) location: String,
    pub(crate) reader: Arc<Reader>,
    pub(crate) first: u64,
}

/// Several RNTuples with equal schemas as one sequence of entries.
///
/// ```
/// # use rntuple::write::{Writer, WriteOptions};
/// # use rntuple::Value;
/// # let dir = std::env::temp_dir();
/// # let paths: Vec<String> = (0..2).map(|k| dir.join(format!("rntuple-doc-chain-{k}-{}.root", std::process::id())).display().to_string()).collect();
/// # for (k, p) in paths.iter().enumerate() {
/// #     let mut w = Writer::create(p, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
/// #     for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::Int(10 * k as i64 + i))]))?; }
/// #     w.commit()?;
/// # }
/// use rntuple::dataset::Chain;
/// let chain = Chain::open(&paths, None)?; // paths, globs or URLs, optionally `file.root:NTUPLE`
/// assert_eq!(chain.num_entries(), 6);
/// let batch = chain.read_batch(Some(&["x"]), 2, 5)?; // entries of both files, global numbers
/// let x = batch.column(0).as_any().downcast_ref::<rntuple::arrow::array::Int32Array>().unwrap();
/// assert_eq!(x.values().to_vec(), [2, 10, 11]);
/// assert_eq!(chain.parts(0), [0..3, 3..6]); // one range per cluster
/// # for p in &paths { std::fs::remove_file(p)?; }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Chain {
    parts: Vec<Part>,
    num_entries: u64,
    /// Fields some inputs lack read as nulls there ([`Chain::from_readers_allowing_missing`]).
    missing_as_null: bool,
}

/// Splits `"file.root:NTUPLE"` into the file and the RNTuple name; a colon that is part of the path
/// (a URL's scheme or port, a path that exists as written) does not split.
pub(crate) fn split_spec(spec: &str) -> (&str, Option<&str>) {
    if std::path::Path::new(spec).exists() {
        return (spec, None);
    }
    match spec.rfind(".root:") {
        Some(i) if i + 6 < spec.len() => (&spec[..i + 5], Some(&spec[i + 6..])),
        _ => (spec, None),
    }
}

/// Opens the RNTuple `ntuple` of `location` (or its only one when `None`).
pub(crate) fn open_one(location: &str, ntuple: Option<&str>) -> Result<Reader> {
    let file = RNTupleFile::open(location).map_err(|e| e.context(location.to_string()))?;
    let name = match ntuple {
        Some(n) => n.to_string(),
        None => {
            let names = file.names();
            match names.as_slice() {
                [one] => one.clone(),
                [] => return Err(Error::NotFound(format!("{location}: no RNTuple in the file"))),
                _ => return Err(Error::Invalid(format!("{location}: several RNTuples ({}); name one as FILE:NTUPLE", names.join(", ")))),
            }
        }
    };
    file.reader(&name).map_err(|e| e.context(location.to_string()))
}

impl Chain {
    /// Opens every input (paths, globs, URLs; each may end in `:NTUPLE`, else `ntuple` or the file's
    /// only RNTuple) and chains them in order.
    pub fn open(inputs: &[String], ntuple: Option<&str>) -> Result<Chain> {
        let mut specs = Vec::new();
        for spec in inputs {
            let (path, name) = split_spec(spec);
            for p in expand_inputs(&[path.to_string()])? {
                specs.push((p, name.or(ntuple).map(str::to_string)));
            }
        }
        Chain::open_pairs(&specs)
    }

    /// Opens the inputs given as `(location, RNTuple name or None)`, already expanded.
    pub fn open_pairs(inputs: &[(String, Option<String>)]) -> Result<Chain> {
        let readers = inputs.iter().map(|(loc, name)| Ok((loc.clone(), Arc::new(open_one(loc, name.as_deref())?)))).collect::<Result<Vec<_>>>()?;
        Chain::from_readers(readers)
    }

    /// Chains open readers, `(location for messages, reader)`; their schemas must agree.
    pub fn from_readers(readers: Vec<(String, Arc<Reader>)>) -> Result<Chain> {
        Chain::build(readers, false)
    }

    /// [`Chain::open_pairs`], a field that some inputs lack (where the others have it with one type)
    /// read as null in those inputs' entries instead of refusing the inputs (see
    /// [`Chain::from_readers_allowing_missing`]).
    pub fn open_pairs_allowing_missing(inputs: &[(String, Option<String>)]) -> Result<Chain> {
        let readers = inputs.iter().map(|(loc, name)| Ok((loc.clone(), Arc::new(open_one(loc, name.as_deref())?)))).collect::<Result<Vec<_>>>()?;
        Chain::build(readers, true)
    }

    /// [`Chain::from_readers`] over inputs whose fields may differ: the chain's fields are those of
    /// all inputs (the first input's, then each new one in input order), a field an input lacks is
    /// null in its entries (`None` in Python, [`Value::Null`] in values); a field with different
    /// types in two inputs is still refused.
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// use rntuple::dataset::Chain;
    /// # let dir = std::env::temp_dir();
    /// # let paths: Vec<String> = (0..2).map(|k| dir.join(format!("rntuple-doc-chain-missing-{k}-{}.root", std::process::id())).display().to_string()).collect();
    /// # let mut w = Writer::create(&paths[0], "Events", &[("x", "float")], WriteOptions::default())?;
    /// # w.fill(&Value::Record(vec![("x".into(), Value::F32(1.0))]))?;
    /// # w.commit()?;
    /// # let mut w = Writer::create(&paths[1], "Events", &[("x", "float"), ("y", "std::int32_t")], WriteOptions::default())?;
    /// # w.fill(&Value::Record(vec![("x".into(), Value::F32(2.0)), ("y".into(), Value::Int(7))]))?;
    /// # w.commit()?;
    /// let readers = paths.iter().map(|p| Ok((p.clone(), std::sync::Arc::new(rntuple::RNTupleFile::open(p)?.reader("Events")?)))).collect::<rntuple::Result<Vec<_>>>()?;
    /// assert!(Chain::from_readers(readers.clone()).is_err()); // `y` is missing from the first file
    /// let chain = Chain::from_readers_allowing_missing(readers)?;
    /// let v = chain.read_values(Some(&["y"]), 0, 2)?;
    /// assert_eq!(v[0].to_json().to_string(), r#"{"y":null}"#);
    /// assert_eq!(v[1].to_json().to_string(), r#"{"y":7}"#);
    /// # for p in &paths { std::fs::remove_file(p)?; }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_readers_allowing_missing(readers: Vec<(String, Arc<Reader>)>) -> Result<Chain> {
        Chain::build(readers, true)
    }

    fn build(readers: Vec<(String, Arc<Reader>)>, missing_as_null: bool) -> Result<Chain> {
        if readers.is_empty() {
            return Err(Error::Invalid("a chain needs at least one input".into()));
        }
        let mut parts = Vec::with_capacity(readers.len());
        let mut first = 0u64;
        for (location, reader) in readers {
            if missing_as_null {
                super::chain_missing::check_types(parts.iter().map(|p: &Part| (p.location.as_str(), &*p.reader)), &location, &reader)?;
            } else if let Some(p0) = parts.first() {
                check_compatible(p0, &location, &reader)?;
            }
            let n = reader.num_entries();
            parts.push(Part { location, reader, first });
            first = first.checked_add(n).ok_or_else(|| Error::Invalid("a chain of more than 2^64 entries".into()))?;
        }
        Ok(Chain { parts, num_entries: first, missing_as_null })
    }

    /// Sets the decoding threads of every input (see [`Reader::set_threads`]; inputs whose reader
    /// is shared elsewhere keep theirs).
    pub fn set_threads(&mut self, n: usize) {
        for r in self.readers_mut() {
            r.set_threads(n);
        }
    }

    /// Entries of all inputs together.
    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// The RNTuple name of the first input.
    pub fn name(&self) -> &str {
        &self.parts[0].reader.descriptor().name
    }

    /// The location of the first input (for messages).
    pub fn location(&self) -> &str {
        &self.parts[0].location
    }

    /// Every input: `(location, RNTuple name, entries)`.
    pub fn inputs(&self) -> Vec<(String, String, u64)> {
        self.parts.iter().map(|p| (p.location.clone(), p.reader.descriptor().name.clone(), p.reader.num_entries())).collect()
    }

    /// The readable top-level fields of the first input: `(name, ROOT type name)` in schema order.
    pub fn fields(&self) -> Vec<(String, String)> {
        let mut out = fields_of(&self.parts[0].reader);
        if self.missing_as_null {
            for p in &self.parts[1..] {
                for f in fields_of(&p.reader) {
                    if !out.iter().any(|(n, _)| *n == f.0) {
                        out.push(f);
                    }
                }
            }
        }
        out
    }

    /// The inputs' readers, in order.
    fn readers(&self) -> Vec<&Reader> {
        self.parts.iter().map(|p| &*p.reader).collect()
    }

    /// The inputs' readers that no one else holds, to change their settings.
    pub(crate) fn readers_mut(&mut self) -> impl Iterator<Item = &mut Reader> {
        self.parts.iter_mut().filter_map(|p| Arc::get_mut(&mut p.reader))
    }

    pub(crate) fn parts_inner(&self) -> &[Part] {
        &self.parts
    }

    /// Global entry ranges of whole clusters, for parallel iteration: consecutive clusters of one
    /// input joined until a range holds at least `min_entries` entries (0: one range per cluster).
    pub fn parts(&self, min_entries: u64) -> Vec<Range<u64>> {
        let mut out: Vec<Range<u64>> = Vec::new();
        for p in &self.parts {
            let mut open: Option<Range<u64>> = None;
            for c in &p.reader.descriptor().clusters {
                let r = p.first + c.first_entry..p.first + c.first_entry + c.n_entries;
                if r.is_empty() {
                    continue;
                }
                open = match open {
                    Some(o) if o.end - o.start < min_entries.max(1) && o.end == r.start => Some(o.start..r.end),
                    Some(o) => {
                        out.push(o);
                        Some(r)
                    }
                    None => Some(r),
                };
            }
            out.extend(open);
        }
        out
    }

    /// The input holding global entry `entry` and the entry's number within it.
    pub(crate) fn locate(&self, entry: u64) -> Option<(usize, u64)> {
        let k = self.parts.partition_point(|p| p.first <= entry).checked_sub(1)?;
        let p = &self.parts[k];
        (entry - p.first < p.reader.num_entries()).then(|| (k, entry - p.first))
    }

    /// Reads the chosen top-level fields (all when `None`) of global entries `start..stop`.
    pub fn read_batch(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<RecordBatch> {
        if start > stop || stop > self.num_entries {
            return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{}", self.num_entries)));
        }
        let owned: Vec<String>;
        let fields = match fields {
            Some(f) => f.to_vec(),
            None => {
                owned = self.fields().into_iter().map(|(n, _)| n).collect();
                owned.iter().map(String::as_str).collect()
            }
        };
        if start == stop {
            let p = &self.parts[0];
            let b = if self.missing_as_null {
                super::chain_missing::read_with_nulls(&self.readers(), &p.reader, &fields, 0, 0)
            } else {
                p.reader.read_batch(Some(&fields), 0, 0)
            };
            return b.map_err(|e| e.context(p.location.clone()));
        }
        let mut batches = Vec::new();
        for p in &self.parts {
            let (s, e) = (start.max(p.first), stop.min(p.first + p.reader.num_entries()));
            if s < e {
                let b = if self.missing_as_null {
                    super::chain_missing::read_with_nulls(&self.readers(), &p.reader, &fields, s - p.first, e - p.first)
                } else {
                    p.reader.read_batch(Some(&fields), s - p.first, e - p.first)
                };
                batches.push(b.map_err(|e| e.context(p.location.clone()))?);
            }
        }
        concat(&batches, stop - start)
    }

    /// Reads the chosen top-level fields (all when `None`) of global entries `start..stop` as
    /// values, one record per entry, as [`Reader::read_values`] gives them for one file (what
    /// `rntuple dump` prints).
    ///
    /// ```
    /// # use rntuple::write::{Writer, WriteOptions};
    /// # use rntuple::Value;
    /// # let dir = std::env::temp_dir();
    /// # let paths: Vec<String> = (0..2).map(|k| dir.join(format!("rntuple-doc-chain-values-{k}-{}.root", std::process::id())).display().to_string()).collect();
    /// # for (k, p) in paths.iter().enumerate() {
    /// #     let mut w = Writer::create(p, "Events", &[("x", "std::int32_t")], WriteOptions::default())?;
    /// #     for i in 0..3 { w.fill(&Value::Record(vec![("x".into(), Value::Int(10 * k as i64 + i))]))?; }
    /// #     w.commit()?;
    /// # }
    /// let chain = rntuple::dataset::Chain::open(&paths, None)?;
    /// let v: Vec<String> = chain.read_values(None, 2, 4)?.iter().map(|v| v.to_json().to_string()).collect();
    /// assert_eq!(v, [r#"{"x":2}"#, r#"{"x":10}"#]); // the last entry of one file, the first of the next
    /// # for p in &paths { std::fs::remove_file(p)?; }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_values(&self, fields: Option<&[&str]>, start: u64, stop: u64) -> Result<Vec<Value>> {
        if start > stop || stop > self.num_entries {
            return Err(Error::Invalid(format!("entry range {start}:{stop} outside 0:{}", self.num_entries)));
        }
        let mut out = Vec::new();
        for p in &self.parts {
            let (s, e) = (start.max(p.first), stop.min(p.first + p.reader.num_entries()));
            if s < e {
                let v = if self.missing_as_null {
                    let all: Vec<String> = self.fields().into_iter().map(|(n, _)| n).collect();
                    let want: Vec<&str> = fields.map(<[&str]>::to_vec).unwrap_or_else(|| all.iter().map(String::as_str).collect());
                    super::chain_missing::values_with_nulls(&p.reader, &want, s - p.first, e - p.first)
                } else {
                    p.reader.read_values(fields, s - p.first, e - p.first)
                };
                out.extend(v.map_err(|e| e.context(p.location.clone()))?);
            }
        }
        Ok(out)
    }
}

/// The readable top-level fields of a reader: `(name, ROOT type name)`.
pub(crate) fn fields_of(r: &Reader) -> Vec<(String, String)> {
    r.fields().iter().map(|f| (f.name.clone(), r.display_type(f.id))).collect()
}

/// Refuses an input whose readable top-level fields or their types differ from the first input's.
fn check_compatible(first: &Part, location: &str, reader: &Reader) -> Result<()> {
    let a = fields_of(&first.reader);
    let b = fields_of(reader);
    for (name, ty) in &a {
        match b.iter().find(|(n, _)| n == name) {
            None => {
                return Err(Error::Invalid(format!(
                    "chain: {location} has no field '{name}' ({ty}), which {} has; chained RNTuples need the same fields",
                    first.location
                )));
            }
            Some((_, t)) if t != ty => {
                return Err(Error::Invalid(format!("chain: field '{name}' is {t} in {location} but {ty} in {}", first.location)));
            }
            Some(_) => {}
        }
    }
    if let Some((name, ty)) = b.iter().find(|(n, _)| !a.iter().any(|(m, _)| m == n)) {
        return Err(Error::Invalid(format!(
            "chain: {location} has a field '{name}' ({ty}) that {} does not have; chained RNTuples need the same fields",
            first.location
        )));
    }
    Ok(())
}

/// The batches one after the other (columns by position; a column nullable when it is in any).
pub(crate) fn concat(batches: &[RecordBatch], rows: u64) -> Result<RecordBatch> {
    match batches {
        [] => Err(Error::internal("concat of no batches")),
        [one] => Ok(one.clone()),
        _ => {
            let schema0 = batches[0].schema();
            let mut fields = Vec::new();
            let mut columns: Vec<ArrayRef> = Vec::new();
            for (i, f) in schema0.fields().iter().enumerate() {
                let parts: Vec<&dyn arrow_array::Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
                let a = arrow_select::concat::concat(&parts)
                    .map_err(|e| Error::Invalid(format!("chain: field '{}' has different Arrow types in different inputs: {e}", f.name())))?;
                let nullable = batches.iter().any(|b| b.schema().field(i).is_nullable());
                fields.push(Field::new(f.name(), a.data_type().clone(), nullable));
                columns.push(a);
            }
            let opts = RecordBatchOptions::new().with_row_count(Some(rows as usize));
            Ok(RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &opts)?)
        }
    }
}

#[cfg(test)]
mod spec_tests {
    use super::split_spec;

    #[test]
    fn a_spec_splits_at_the_last_root_colon_only() {
        assert_eq!(split_spec("a.root:Events"), ("a.root", Some("Events")));
        assert_eq!(split_spec("a.root:dir/Events"), ("a.root", Some("dir/Events")));
        assert_eq!(split_spec("https://host:8080/a.root"), ("https://host:8080/a.root", None));
        assert_eq!(split_spec("s3://b/a.root:Events"), ("s3://b/a.root", Some("Events")));
        assert_eq!(split_spec("a.root:"), ("a.root:", None));
    }
}
