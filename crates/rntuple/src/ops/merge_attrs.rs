//! Attribute sets (ROOT 6.38+) carried through merge and skim: each set of each input is read,
//! its ranges moved to where the input's entries went in the output (`_rangeStart` shifted, as
//! ROOT's merger shifts it; clipped to the entries a skim keeps), and written as a set of the
//! output's RNTuple. Sets of one name must have the same schema in every input.
//!
//! ```
//! use rntuple::ops::merge::merge;
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let dir = std::env::temp_dir();
//! let inputs: Vec<_> = (0..2).map(|k| dir.join(format!("rntuple-doc-merge-attrs-{k}.root"))).collect();
//! for (k, p) in inputs.iter().enumerate() {
//!     let mut w = Writer::create(p, "Events", &[("x", "float")], WriteOptions::default())?;
//!     let runs = w.attributes("runs", &[("run", "std::int32_t")])?;
//!     for i in 0..5 {
//!         w.fill(&Value::Record(vec![("x".into(), Value::F32(i as f32))]))?;
//!     }
//!     runs.commit_range(0, 5, &Value::Record(vec![("run".into(), Value::Int(k as i64))]))?;
//!     w.commit()?;
//! }
//! let out = dir.join("rntuple-doc-merge-attrs-out.root");
//! merge(&inputs, "Events", &out, WriteOptions::default())?;
//! let r = rntuple::RNTupleFile::open(&out)?.reader("Events")?;
//! let e = r.attribute_set("runs")?.entries()?;
//! assert_eq!((e[1].range_start, e[1].range_len), (5, 5));
//! assert_eq!(e[1].values.to_json().to_string(), r#"{"run":1}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::descriptor_types::field_type;
use crate::logical::typename::TypeExpr;
use crate::read::attributes::AttributeEntry;
use crate::read::reader::Reader;
use crate::value::Value;
use crate::write::sink::Dataset;
use crate::write::{WriteOptions, Writer};

/// The attribute sets gathered from the inputs, in order of first appearance.
#[derive(Default)]
pub(crate) struct AttributeSets {
    sets: Vec<Gathered>,
}

struct Gathered {
    name: String,
    /// The user fields (`_userData`'s members).
    schema: Vec<(String, TypeExpr)>,
    /// Where the schema came from (for errors).
    from: String,
    entries: Vec<AttributeEntry>,
}

impl AttributeSets {
    /// Adds the sets of `r` (the input `path`) whose main entries `[start, stop)` went to the
    /// output from entry `to` on: ranges are clipped to `[start, stop)` and moved; a range that
    /// lies wholly outside is dropped. A merge passes `(0, u64::MAX)`: every range, shifted by `to`.
    pub fn gather(&mut self, r: &Reader, path: &str, start: u64, stop: u64, to: u64) -> Result<()> {
        self.gather_mapped(r, path, |range_start, range_len| {
            let end = range_start.saturating_add(range_len);
            let (a, b) = (range_start.clamp(start, stop), end.clamp(start, stop));
            let keep = if range_len == 0 { (start..=stop).contains(&range_start) } else { end > start && range_start < stop };
            if keep {
                vec![(to + (a - start), b - a)]
            } else {
                Vec::new()
            }
        })
    }

    /// Adds the sets of `r` (the input `path`) with each entry's range `(start, len)` of the
    /// input's entries replaced by the output ranges `place` gives (several when the entries went
    /// to several places, each becoming an entry with the same values; none drops the entry).
    pub fn gather_mapped(&mut self, r: &Reader, path: &str, mut place: impl FnMut(u64, u64) -> Vec<(u64, u64)>) -> Result<()> {
        for link in r.attribute_sets() {
            let name = link.name.clone();
            let ctx = |e: Error| e.context(format!("{path}: attribute set '{name}'"));
            let set = r.open_attribute_set(link).map_err(ctx)?;
            let schema = user_schema(set.reader()).map_err(ctx)?;
            let k = match self.sets.iter().position(|g| g.name == name) {
                Some(k) => {
                    let g = &self.sets[k];
                    if format!("{:?}", g.schema) != format!("{schema:?}") {
                        return Err(Error::Invalid(format!(
                            "{path}: attribute set '{name}' has the fields {}, but {} in {}",
                            describe(&schema),
                            describe(&g.schema),
                            g.from
                        )));
                    }
                    k
                }
                None => {
                    self.sets.push(Gathered { name: name.clone(), schema, from: path.to_string(), entries: Vec::new() });
                    self.sets.len() - 1
                }
            };
            for e in set.entries().map_err(ctx)? {
                for (range_start, range_len) in place(e.range_start, e.range_len) {
                    self.sets[k].entries.push(AttributeEntry { range_start, range_len, values: e.values.clone() });
                }
            }
        }
        Ok(())
    }

    /// How many sets were found.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Writes every set into the file of `ds` and links it from its footer (call before
    /// committing `ds`).
    pub fn write_into(&self, ds: &mut Dataset, opts: &WriteOptions) -> Result<()> {
        if self.sets.is_empty() {
            return Ok(());
        }
        let file = ds.shared_file()?;
        let main = ds.name().to_string();
        let opts = WriteOptions { checkpoint_clusters: 0, ..opts.clone() };
        for g in &self.sets {
            let full = crate::write::attributes::attribute_schema(&g.schema)?;
            let mut w = Writer::build(&g.name, &full, opts.clone(), |desc, o| Dataset::create_attribute_set(&file, &main, desc, o))?;
            for e in &g.entries {
                w.fill(&row(e))?;
            }
            ds.desc.attribute_sets.push(crate::write::attributes::link(g.name.clone(), w.commit_attribute_set()?)?);
        }
        Ok(())
    }

    /// Adds every set to `w` (a writer of the output) with its entries.
    pub fn write_with(&self, w: &mut Writer) -> Result<()> {
        for g in &self.sets {
            let set = w.attributes_with_types(&g.name, &g.schema)?;
            for e in &g.entries {
                set.commit_range(e.range_start, e.range_start + e.range_len, &e.values)?;
            }
        }
        Ok(())
    }
}

fn row(e: &AttributeEntry) -> Value {
    Value::Record(vec![
        ("_rangeStart".into(), Value::UInt(e.range_start)),
        ("_rangeLen".into(), Value::UInt(e.range_len)),
        ("_userData".into(), e.values.clone()),
    ])
}

fn describe(schema: &[(String, TypeExpr)]) -> String {
    let parts: Vec<String> = schema.iter().map(|(n, t)| format!("{n}: {}", t.name())).collect();
    format!("{{{}}}", parts.join(", "))
}

/// The user fields of an attribute set's RNTuple: the members of its `_userData` record.
fn user_schema(r: &Reader) -> Result<Vec<(String, TypeExpr)>> {
    let d = r.descriptor();
    let user =
        d.top_level_fields().into_iter().find(|&id| d.fields[id as usize].name == "_userData").ok_or_else(|| Error::Invalid("no field '_userData'".into()))?;
    d.fields[user as usize].children.iter().map(|&c| Ok((d.fields.get(c as usize).map(|f| f.name.clone()).unwrap_or_default(), field_type(d, c, 1)?))).collect()
}
