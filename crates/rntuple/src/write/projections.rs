//! Projected fields: top-level fields that own no columns and read those of other fields, as ROOT's
//! `RNTupleImporter` adds over the collections it makes of a TTree's `nMuon` + `Muon_*` branches:
//! `Muon_pt` (`ROOT::VecOps::RVec<float>`, the collection's offsets and its records' `Muon_pt`
//! member) and `nMuon` (`ROOT::RNTupleCardinality<std::uint32_t>`, the collection's sizes).
//!
//! ```
//! use rntuple::logical::typename::{parse, TypeExpr};
//! use rntuple::write::Projection;
//! use rntuple::write::{WriteOptions, Writer};
//! use rntuple::Value;
//! let path = std::env::temp_dir().join("rntuple-doc-projections.root");
//! let muon = TypeExpr::Record(vec![("Muon_pt".into(), parse("float")?)]);
//! let schema = [("_collection0".to_string(), TypeExpr::Collection("std::vector".into(), Box::new(muon)))];
//! let projections = vec![
//!     Projection::Member { name: "Muon_pt".into(), collection: "_collection0".into(), member: "Muon_pt".into() },
//!     Projection::Cardinality { name: "nMuon".into(), collection: "_collection0".into() },
//! ];
//! let mut w = Writer::create_with_types(&path, "Events", &schema, WriteOptions { projections, ..Default::default() })?;
//! let mu = |pt: f32| Value::Record(vec![("Muon_pt".into(), Value::F32(pt))]);
//! w.fill(&Value::Record(vec![("_collection0".into(), Value::List(vec![mu(30.5), mu(4.0)]))]))?;
//! w.commit()?;
//! let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
//! let v = r.read_values(Some(&["Muon_pt", "nMuon"]), 0, 1)?;
//! assert_eq!(v[0].to_json().to_string(), r#"{"Muon_pt":[30.5,4.0],"nMuon":2}"#);
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::format::descriptor::{AliasColumn, Descriptor, FieldDescriptor, Role};

/// A projected top-level field over a top-level collection of records.
///
/// ```
/// use rntuple::write::{Projection, Writer, WriteOptions};
/// use rntuple::Value;
/// let path = std::env::temp_dir().join(format!("rntuple-doc-Projection-{}.root", std::process::id()));
/// let projections = vec![Projection::Cardinality { name: "nJet".into(), collection: "Jet_pt".into() }];
/// let mut w = Writer::create(&path, "Events", &[("Jet_pt", "std::vector<float>")], WriteOptions { projections, ..Default::default() })?;
/// w.fill(&Value::Record(vec![("Jet_pt".into(), Value::List(vec![Value::F32(30.0), Value::F32(12.5)]))]))?;
/// w.commit()?;
/// let r = rntuple::RNTupleFile::open(&path)?.reader("Events")?;
/// assert_eq!(r.read_values(Some(&["nJet"]), 0, 1)?[0].to_json().to_string(), r#"{"nJet":2}"#);
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Projection {
    /// `name` reads the member `member` of the records of `collection`, as
    /// `ROOT::VecOps::RVec<T>` (`T` the member's type).
    Member {
        /// The projected field's name.
        name: String,
        /// The top-level collection of records.
        collection: String,
        /// The member of its records.
        member: String,
    },
    /// `name` reads the number of elements of `collection`, as
    /// `ROOT::RNTupleCardinality<std::uint32_t>`.
    Cardinality {
        /// The projected field's name.
        name: String,
        /// The top-level collection.
        collection: String,
    },
}

/// Flag of a projected field.
const PROJECTED: u16 = 0x02;

/// Adds the projected fields to `desc` (after the schema's fields, with alias columns).
pub(crate) fn add_projections(desc: &mut Descriptor, projections: &[Projection]) -> Result<()> {
    for p in projections {
        let (name, collection) = match p {
            Projection::Member { name, collection, .. } | Projection::Cardinality { name, collection } => (name, collection),
        };
        let bad = |why: String| Error::Invalid(format!("projected field '{name}': {why}"));
        if desc.fields.iter().any(|f| f.parent.is_none() && f.name == *name) {
            return Err(bad("a top-level field of that name exists".into()));
        }
        let c = desc
            .fields
            .iter()
            .find(|f| f.parent.is_none() && f.name == *collection && f.projection_source.is_none())
            .ok_or_else(|| bad(format!("no top-level field '{collection}'")))?;
        let offsets = match (&c.role, c.columns.as_slice()) {
            (Role::Collection, [o]) => *o,
            _ => return Err(bad(format!("'{collection}' is not a collection"))),
        };
        let coll_id = c.id;
        let base = |id: u32, name: &str, type_name: String, role: Role, parent: Option<u32>, source: u32, columns: Vec<u32>| FieldDescriptor {
            id,
            field_version: 0,
            type_version: 0,
            parent,
            role,
            flags: PROJECTED,
            name: name.to_string(),
            type_name,
            extras: None,
            repetition: None,
            projection_source: Some(source),
            type_checksum: None,
            children: Vec::new(),
            columns,
            from_extension: false,
        };
        let id = desc.fields.len() as u32;
        match p {
            Projection::Cardinality { .. } => {
                desc.fields.push(base(id, name, "ROOT::RNTupleCardinality<std::uint32_t>".into(), Role::Leaf, None, coll_id, vec![offsets]));
                desc.aliases.push(AliasColumn { physical: offsets, field_id: id });
            }
            Projection::Member { member, .. } => {
                let item = c.children.first().and_then(|&i| desc.fields.get(i as usize)).filter(|f| f.role == Role::Record);
                let item = item.ok_or_else(|| bad(format!("the elements of '{collection}' are not records")))?;
                let m = item
                    .children
                    .iter()
                    .filter_map(|&i| desc.fields.get(i as usize))
                    .find(|f| f.name == *member)
                    .ok_or_else(|| bad(format!("the records of '{collection}' have no member '{member}'")))?;
                if !m.children.is_empty() || m.columns.is_empty() {
                    return Err(bad(format!("'{collection}.{member}' is not a leaf field with columns")));
                }
                let (m_id, m_type, m_alias, m_role, m_columns) = (m.id, m.type_name.clone(), m.type_alias().to_string(), m.role, m.columns.clone());
                let mut parent = base(id, name, format!("ROOT::VecOps::RVec<{m_type}>"), Role::Collection, None, coll_id, vec![offsets]);
                parent.children = vec![id + 1];
                let mut child = base(id + 1, "_0", m_type, m_role, Some(id), m_id, m_columns.clone());
                child.set_type_alias(m_alias);
                desc.fields.push(parent);
                desc.fields.push(child);
                desc.aliases.push(AliasColumn { physical: offsets, field_id: id });
                for col in m_columns {
                    desc.aliases.push(AliasColumn { physical: col, field_id: id + 1 });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::typename::{parse, TypeExpr};
    use crate::write::{WriteOptions, Writer};

    fn try_with(p: Projection) -> String {
        let path = std::env::temp_dir().join(format!("rntuple-projection-errors-{}.root", std::process::id()));
        let muon = TypeExpr::Record(vec![("pt".into(), parse("float").unwrap())]);
        let schema = [
            ("mu".to_string(), TypeExpr::Collection("std::vector".into(), Box::new(muon))),
            ("x".to_string(), parse("float").unwrap()),
            ("v".to_string(), parse("std::vector<float>").unwrap()),
        ];
        match Writer::create_with_types(&path, "T", &schema, WriteOptions { projections: vec![p], ..Default::default() }) {
            Ok(w) => {
                w.abort();
                String::new()
            }
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn refusals_name_the_field_and_why() {
        let m = |name: &str, c: &str, member: &str| Projection::Member { name: name.into(), collection: c.into(), member: member.into() };
        assert!(try_with(m("pt", "nope", "pt")).contains("projected field 'pt': no top-level field 'nope'"));
        assert!(try_with(m("pt", "x", "pt")).contains("'x' is not a collection"));
        assert!(try_with(m("pt", "v", "pt")).contains("the elements of 'v' are not records"));
        assert!(try_with(m("pt", "mu", "eta")).contains("the records of 'mu' have no member 'eta'"));
        assert!(try_with(m("x", "mu", "pt")).contains("a top-level field of that name exists"));
        assert_eq!(try_with(m("mu_pt", "mu", "pt")), "");
        assert_eq!(try_with(Projection::Cardinality { name: "nv".into(), collection: "v".into() }), "");
    }
}
