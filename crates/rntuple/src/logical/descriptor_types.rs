//! The type expressions of fields read from a descriptor: what re-encoding writes a field as
//! (its type name, or a class, enum or template rebuilt from its subfields), and the classes a
//! schema uses (for the StreamerInfo record of the file).

use crate::error::{Error, Result};
use crate::format::descriptor::{Descriptor, Role};
use crate::logical::typename::{self, ClassDef, TypeExpr};

/// The type a field is written with when re-encoding: its type name (its alias, for
/// `Double32_t`); a name that does not parse (a class, an enum, a template of them) is rebuilt
/// from the field's subfields: a class from its record (bases `:_N`, members, type version and
/// checksum), an enum from its integer `_0`, a template from its items. Untyped records and
/// collections (empty type names) are the record of their members / a vector of their item.
pub(crate) fn field_type(d: &Descriptor, id: u32, depth: usize) -> Result<TypeExpr> {
    let f = d.fields.get(id as usize).ok_or_else(|| Error::Invalid(format!("no field {id}")))?;
    if depth > 64 {
        return Err(Error::Invalid(format!("field '{}' nests deeper than 64 levels", d.field_path(id))));
    }
    if f.role == Role::Streamer {
        return Err(Error::Unsupported(format!("field '{}' is a streamer field ({}), which this writer cannot write", d.field_path(id), f.type_name)));
    }
    let name = if f.type_alias().is_empty() { f.type_name.as_str() } else { f.type_alias() };
    // A cardinality (a projection of a collection's offsets) is written as its integer.
    let name = name.strip_prefix("ROOT::RNTupleCardinality<").and_then(|t| t.strip_suffix('>')).unwrap_or(name);
    let parsed = if name.is_empty() { None } else { Some(typename::parse(name)) };
    let err = match parsed {
        Some(Ok(t)) => return Ok(t),
        Some(Err(e)) => Error::Unsupported(format!("field '{}' of type '{name}': {e}", d.field_path(id))),
        None => Error::Unsupported(format!("field '{}' has no type name and is not an untyped record or collection", d.field_path(id))),
    };
    let sub = |c: &u32| field_type(d, *c, depth + 1);
    let subs = || f.children.iter().map(sub).collect::<Result<Vec<_>>>();
    let first = || f.children.first().ok_or_else(|| Error::Invalid(format!("field '{}' of type '{name}' has no subfield", d.field_path(id)))).and_then(sub);
    let head = name.split('<').next().unwrap_or_default();
    let std_head = if head.contains("::") { head.to_string() } else { format!("std::{head}") };
    Ok(match (f.role, head.trim_start_matches("std::")) {
        (Role::Record, "") => TypeExpr::Record(f.children.iter().map(|c| sub(c).map(|t| (d.fields[*c as usize].name.clone(), t))).collect::<Result<_>>()?),
        (Role::Collection, "") if f.children.len() == 1 => TypeExpr::Collection("std::vector".into(), Box::new(first()?)),
        (Role::Record, "pair" | "tuple") => TypeExpr::Tuple(std_head, subs()?),
        (Role::Record, _) => {
            let mut c = ClassDef { name: f.type_name.clone(), version: f.type_version, bases: Vec::new(), members: Vec::new(), checksum: f.type_checksum };
            for id in &f.children {
                // (`sub` found the field.)
                let t = sub(id)?;
                let m = &d.fields[*id as usize].name;
                match t {
                    TypeExpr::Class(b) if m.starts_with(":_") => c.bases.push(*b),
                    _ if m.starts_with(":_") => return Err(Error::Invalid(format!("base class '{}' of '{name}' is not a class", d.field_path(*id)))),
                    t => c.members.push((m.clone(), t)),
                }
            }
            TypeExpr::Class(Box::new(c))
        }
        (Role::Collection, "map" | "multimap" | "unordered_map" | "unordered_multimap") => match first()? {
            TypeExpr::Tuple(_, kv) if kv.len() == 2 => {
                let [k, v]: [TypeExpr; 2] = kv.try_into().map_err(|_| err)?;
                TypeExpr::Map(std_head, Box::new(k), Box::new(v))
            }
            _ => return Err(err),
        },
        (Role::Collection, "optional" | "unique_ptr") => TypeExpr::Optional(std_head, Box::new(first()?)),
        (Role::Collection, _) => TypeExpr::Collection(std_head, Box::new(first()?)),
        (Role::Variant, _) => TypeExpr::Variant(subs()?),
        (Role::Leaf, "array") => TypeExpr::Array(Box::new(first()?), f.repetition.ok_or(err)?),
        (Role::Leaf, "atomic") => TypeExpr::Atomic(Box::new(first()?)),
        (Role::Leaf, _) if !name.contains('<') && f.children.len() == 1 => match first()? {
            TypeExpr::Scalar(s, _) => TypeExpr::Enum(name.to_string(), s),
            _ => return Err(err),
        },
        _ => return Err(err),
    })
}

/// The classes of the class fields of `d` (outermost ones: [`crate::logical::class_streamers`]
/// adds the classes they use), each name once; fields whose type cannot be rebuilt are left out.
pub(crate) fn descriptor_classes(d: &Descriptor) -> Vec<ClassDef> {
    fn walk(t: TypeExpr, out: &mut Vec<ClassDef>) {
        match t {
            TypeExpr::Class(c) if !out.iter().any(|o| o.name == c.name) => out.push(*c),
            TypeExpr::Collection(_, c) | TypeExpr::Optional(_, c) | TypeExpr::Array(c, _) | TypeExpr::Atomic(c) => walk(*c, out),
            TypeExpr::Map(_, k, v) => {
                walk(*k, out);
                walk(*v, out);
            }
            TypeExpr::Tuple(_, items) | TypeExpr::Variant(items) => items.into_iter().for_each(|i| walk(i, out)),
            TypeExpr::Record(members) => members.into_iter().for_each(|(_, m)| walk(m, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for f in d.fields.iter().filter(|f| f.parent.is_none() && f.projection_source.is_none()) {
        // Only fields with a class somewhere below: their names do not parse.
        if !f.type_name.is_empty() && typename::parse(&f.type_name).is_ok() {
            continue;
        }
        if let Ok(t) = field_type(d, f.id, 0) {
            walk(t, &mut out);
        }
    }
    out
}
