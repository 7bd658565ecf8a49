//! Classes for the untyped records that sit where ROOT needs a C++ type name.
//!
//! An untyped record (empty type name, named members) is a field of its own at the top level, in a
//! record and as the item of an untyped collection or optional. Inside a `std::variant`, a
//! `std::array`, a `std::tuple`/`std::pair`, a map or a class member, ROOT builds the field from
//! the parent's type name, which has no way to spell an untyped record: ROOT 6.40 refuses such a
//! file, and writing the record as a `std::tuple` of its members loses the member names. Here such
//! a record becomes a class of its own, named after where it sits: its members keep their names,
//! the file carries its StreamerInfo record as for any class, and ROOT reads it as an emulated class
//! in a `std::array` (no declaration needed) and in a `std::variant` once the class is declared
//! (as for any class in a variant: ROOT 6.40 instantiates the variant through its interpreter);
//! uproot and this crate read it as a record. A tuple holding a record becomes what uproot writes
//! for it, an untyped record of members `_0`, `_1`, ..., which ROOT reads as it is and this crate
//! and uproot read back as a tuple.

use super::typename::{ClassDef, TypeExpr};

/// `te` (the type of the field at `path`) with every untyped record that ROOT cannot read where it
/// sits turned into a class named `Rec_<path>_<hash>`: the path with `.` and other characters
/// outside C++ identifiers as `_`, the hash (8 hex digits) of the record's members and their types,
/// so that two different records never share a name in one file. Untyped collections and
/// optionals inside such a place become `std::vector`/`std::optional` of the class.
pub(crate) fn name_records(te: &TypeExpr, path: &str) -> TypeExpr {
    walk(te, path, false)
}

/// `named`: the parent spells this type in its own type name.
fn walk(te: &TypeExpr, path: &str, named: bool) -> TypeExpr {
    let item = |t: &TypeExpr, n: bool| Box::new(walk(t, &format!("{path}._0"), n));
    match te {
        TypeExpr::Record(members) => {
            let members: Vec<(String, TypeExpr)> = members.iter().map(|(m, t)| (m.clone(), walk(t, &format!("{path}.{m}"), named))).collect();
            if !named {
                return TypeExpr::Record(members);
            }
            let mut c = ClassDef::new(class_name(path, &members));
            for (m, t) in members {
                c = c.member(m, t);
            }
            TypeExpr::Class(Box::new(c))
        }
        // An untyped collection or optional (empty name) holds an untyped record as a field of
        // its own, unless the collection itself must be spelled.
        TypeExpr::Collection(n, i) => TypeExpr::Collection(n.clone(), item(i, named || !i.name().is_empty())),
        TypeExpr::Optional(n, i) => TypeExpr::Optional(n.clone(), item(i, named || !i.name().is_empty())),
        TypeExpr::Array(i, n) => TypeExpr::Array(item(i, true), *n),
        TypeExpr::Atomic(i) => TypeExpr::Atomic(item(i, true)),
        TypeExpr::Map(n, k, v) => {
            TypeExpr::Map(n.clone(), Box::new(walk(k, &format!("{path}._0._0"), true)), Box::new(walk(v, &format!("{path}._0._1"), true)))
        }
        TypeExpr::Tuple(n, items) => {
            let named_items: Vec<TypeExpr> = items.iter().enumerate().map(|(i, t)| walk(t, &format!("{path}._{i}"), true)).collect();
            if named || named_items == *items {
                return TypeExpr::Tuple(n.clone(), named_items);
            }
            // As uproot writes a tuple that holds records: an untyped record of members `_0`, `_1`,
            // ... (ROOT cannot instantiate std::tuple over a class it has no declaration of).
            TypeExpr::Record(items.iter().enumerate().map(|(i, t)| (format!("_{i}"), walk(t, &format!("{path}._{i}"), false))).collect())
        }
        TypeExpr::Variant(items) => TypeExpr::Variant(items.iter().enumerate().map(|(i, t)| walk(t, &format!("{path}._{i}"), true)).collect()),
        TypeExpr::Class(c) => {
            let mut out = ClassDef { members: Vec::with_capacity(c.members.len()), ..(**c).clone() };
            out.members = c.members.iter().map(|(m, t)| (m.clone(), walk(t, &format!("{path}.{m}"), true))).collect();
            TypeExpr::Class(Box::new(out))
        }
        TypeExpr::Scalar(..) | TypeExpr::String | TypeExpr::Bitset(_) | TypeExpr::Enum(..) => te.clone(),
    }
}

/// `Rec_<path as an identifier>_<FNV-1a of the members' names and types>`.
fn class_name(path: &str, members: &[(String, TypeExpr)]) -> String {
    let ident: String = path.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    let mut h: u32 = 0x811c_9dc5;
    for (m, t) in members {
        for b in m.bytes().chain([b':']).chain(format!("{t:?}").bytes()).chain([b';']) {
            h = (h ^ b as u32).wrapping_mul(0x0100_0193);
        }
    }
    format!("Rec_{ident}_{h:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logical::typename::parse;

    fn rec(members: &[(&str, &str)]) -> TypeExpr {
        TypeExpr::Record(members.iter().map(|(m, t)| (m.to_string(), parse(t).unwrap())).collect())
    }

    fn class(t: &TypeExpr) -> &ClassDef {
        match t {
            TypeExpr::Class(c) => c,
            other => panic!("not a class: {other:?}"),
        }
    }

    #[test]
    fn records_where_root_needs_a_name_become_classes() {
        let r = rec(&[("x", "float"), ("y", "std::string")]);
        let arr = name_records(&TypeExpr::Array(Box::new(r.clone()), 3), "a.b");
        let TypeExpr::Array(item, 3) = &arr else { panic!("{arr:?}") };
        let c = class(item);
        assert!(c.name.starts_with("Rec_a_b__0_"), "{}", c.name);
        assert_eq!(c.members, vec![("x".to_string(), parse("float").unwrap()), ("y".to_string(), parse("std::string").unwrap())]);
        assert_eq!(arr.name(), format!("std::array<{},3>", c.name));

        // A tuple of a record: uproot's untyped record of `_0`, `_1` at the top; inside a variant, a
        // std::tuple of a class.
        let tup = TypeExpr::Tuple("std::tuple".into(), vec![parse("std::int16_t").unwrap(), r.clone()]);
        assert_eq!(name_records(&tup, "t"), TypeExpr::Record(vec![("_0".into(), parse("std::int16_t").unwrap()), ("_1".into(), r.clone())]));
        let v = name_records(&TypeExpr::Variant(vec![tup, parse("float").unwrap()]), "t");
        let TypeExpr::Variant(alts) = &v else { panic!() };
        let TypeExpr::Tuple(_, items) = &alts[0] else { panic!("{v:?}") };
        assert!(class(&items[1]).name.starts_with("Rec_t__0__1_"));
        // A tuple of type names stays one.
        let plain = parse("std::tuple<std::int16_t,float>").unwrap();
        assert_eq!(name_records(&plain, "p"), plain);
    }

    #[test]
    fn nested_records_and_collections_inside_a_class_get_names_too() {
        // variant< {inner: {z: int}, list: [ {w: double} ]} , float >
        let inner = rec(&[("z", "std::int32_t")]);
        let listed = TypeExpr::Collection("std::vector".into(), Box::new(rec(&[("w", "double")])));
        let outer = TypeExpr::Record(vec![("inner".into(), inner), ("list".into(), listed)]);
        let v = name_records(&TypeExpr::Variant(vec![outer, parse("float").unwrap()]), "v");
        let TypeExpr::Variant(alts) = &v else { panic!() };
        let c = class(&alts[0]);
        assert!(class(&c.members[0].1).name.starts_with("Rec_v__0_inner_"));
        let TypeExpr::Collection(n, item) = &c.members[1].1 else { panic!() };
        assert_eq!(n, "std::vector");
        assert!(class(item).name.starts_with("Rec_v__0_list__0_"));
        assert!(!v.name().is_empty() && !v.name().contains("<>"));
    }

    #[test]
    fn records_with_a_place_stay_untyped_and_names_differ_by_members() {
        let listed = TypeExpr::Collection("std::vector".into(), Box::new(rec(&[("w", "double")])));
        assert_eq!(name_records(&listed, "l"), listed);
        let opt = TypeExpr::Optional("std::optional".into(), Box::new(rec(&[("w", "double")])));
        assert_eq!(name_records(&opt, "o"), opt);
        let a = name_records(&TypeExpr::Array(Box::new(rec(&[("w", "double")])), 2), "f");
        let b = name_records(&TypeExpr::Array(Box::new(rec(&[("w", "float")])), 2), "f");
        assert_ne!(a.name(), b.name());
        assert_eq!(a, name_records(&TypeExpr::Array(Box::new(rec(&[("w", "double")])), 2), "f"));
    }
}
