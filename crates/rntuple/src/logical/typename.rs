//! C++ type names: parsing into a type tree and normalizing as ROOT does
//! (`int` → `std::int32_t`, `vector<float>` → `std::vector<float>`,
//! `ROOT::RVec<T>` → `ROOT::VecOps::RVec<T>`, `Double32_t` kept as an alias of `double`).
//!
//! ```
//! use rntuple::logical::typename::parse;
//! assert_eq!(parse("vector<int>")?.name(), "std::vector<std::int32_t>");
//! assert_eq!(parse("std::map<Long64_t, ROOT::RVec<double>>")?.name(), "std::map<std::int64_t,ROOT::VecOps::RVec<double>>");
//! // A class name alone says nothing of its members (see `TypeExpr::Class`).
//! assert!(parse("Muon").is_err());
//! # Ok::<(), rntuple::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;

/// A parsed type.
///
/// ```
/// use rntuple::logical::typename::{parse, TypeExpr};
/// use rntuple::logical::Scalar;
/// let t = parse("std::map<int, std::vector<float>>")?;
/// let TypeExpr::Map(name, key, value) = &t else { panic!("not a map: {t:?}") };
/// assert_eq!((name.as_str(), key.name(), value.name()), ("std::map", "std::int32_t".into(), "std::vector<float>".into()));
/// // `Double32_t` is a double that keeps its alias.
/// assert_eq!(parse("Double32_t")?, TypeExpr::Scalar(Scalar::F64, Some("Double32_t".into())));
/// // Untyped records have no type name.
/// assert_eq!(TypeExpr::Record(vec![("pt".into(), parse("float")?)]).name(), "");
/// # Ok::<(), rntuple::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum TypeExpr {
    /// A fundamental type; `alias` is set for `Double32_t`.
    Scalar(Scalar, Option<String>),
    /// `std::string`.
    String,
    /// `std::vector`, `ROOT::VecOps::RVec`, the sets (the name says which).
    Collection(String, Box<TypeExpr>),
    /// The maps: item is `std::pair<K,V>`.
    Map(String, Box<TypeExpr>, Box<TypeExpr>),
    /// `std::optional` / `std::unique_ptr`.
    Optional(String, Box<TypeExpr>),
    /// `std::array<T,N>`.
    Array(Box<TypeExpr>, u64),
    /// `std::bitset<N>`.
    Bitset(u64),
    /// `std::pair` / `std::tuple`.
    Tuple(String, Vec<TypeExpr>),
    /// `std::variant`.
    Variant(Vec<TypeExpr>),
    /// `std::atomic<T>`.
    Atomic(Box<TypeExpr>),
    /// An untyped record (empty type name) with named members: what `#[derive(Record)]` gives a
    /// Rust struct. Never produced by parsing a name. A collection or optional of it is an untyped
    /// collection (empty type name) whose one child `_0` is the record, as ROOT reads them.
    Record(Vec<(String, TypeExpr)>),
    /// A ROOT class (a C++ class or struct that ROOT knows through a dictionary): a record whose
    /// type name is the class name, with its class version, type checksum, base classes and
    /// members. Never produced by parsing a name (a name says nothing of the members).
    Class(Box<ClassDef>),
    /// A C++ enum: a field of the enum's type name over one child `_0` of its underlying integer
    /// type (the scalar), as ROOT stores enums. Never produced by parsing a name.
    Enum(String, Scalar),
}

/// A ROOT class written as a class field: `name` is the field's type name, `version` its type
/// version (ROOT's class version: the `ClassDef` number, 1 for a class with a dictionary and no
/// `ClassDef`), the base classes become subfields `:_0`, `:_1`, … before the members, and the
/// field carries ROOT's type checksum of the class (`TClass::GetCheckSum`), computed from the
/// names as ROOT does unless `checksum` sets it.
///
/// ```
/// use rntuple::logical::typename::{parse, ClassDef, TypeExpr};
/// let base = ClassDef::new("Base").member("fInt", parse("std::int32_t").unwrap());
/// let user = ClassDef::new("User").base(base).member("fString", parse("std::string").unwrap());
/// let t = TypeExpr::Class(Box::new(user));
/// assert_eq!(t.name(), "User");
/// # let TypeExpr::Class(c) = &t else { unreachable!() };
/// assert_eq!(c.version, 1);
/// assert_eq!(c.bases[0].root_checksum(), 6887417); // what ROOT 6.40 writes for `struct Base { std::int32_t fInt; }`
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ClassDef {
    /// The class name, fully qualified without a leading `::` (`Muon`, `ns::Muon`).
    pub name: String,
    /// The class version (the field's type version).
    pub version: u32,
    /// Direct base classes, in declaration order.
    pub bases: Vec<ClassDef>,
    /// Persistent data members: (member name, type), in declaration order.
    pub members: Vec<(String, TypeExpr)>,
    /// The type checksum to write; `None`: [`ClassDef::root_checksum`].
    pub checksum: Option<u32>,
}

impl ClassDef {
    /// A class named `name`, version 1, without bases or members.
    pub fn new(name: impl Into<String>) -> ClassDef {
        ClassDef { name: name.into(), version: 1, bases: Vec::new(), members: Vec::new(), checksum: None }
    }

    /// Sets the class version.
    pub fn version(mut self, version: u32) -> ClassDef {
        self.version = version;
        self
    }

    /// Appends a direct base class.
    pub fn base(mut self, base: ClassDef) -> ClassDef {
        self.bases.push(base);
        self
    }

    /// Appends a direct base class given as a type (what `#[derive(Record)]` has for a
    /// `#[rntuple(base)]` member). A type that is not a class makes a base that the writer refuses,
    /// naming the type.
    pub fn base_expr(self, base: TypeExpr) -> ClassDef {
        match base {
            TypeExpr::Class(c) => self.base(*c),
            other => {
                let what = if other.name().is_empty() { "an untyped record".to_string() } else { other.name() };
                self.base(ClassDef::new(format!("<base class that is not a class: {what}>")))
            }
        }
    }

    /// Appends a data member.
    pub fn member(mut self, name: impl Into<String>, ty: TypeExpr) -> ClassDef {
        self.members.push((name.into(), ty));
        self
    }

    /// Sets the type checksum written instead of the computed one.
    pub fn checksum(mut self, checksum: u32) -> ClassDef {
        self.checksum = Some(checksum);
        self
    }

    /// The type checksum the field carries: the one set, else [`ClassDef::root_checksum`].
    pub fn type_checksum(&self) -> u32 {
        self.checksum.unwrap_or_else(|| self.root_checksum())
    }

    /// ROOT's checksum of the class as `TClass::GetCheckSum` computes it from names: the class
    /// name, each base's name and checksum, each member's name (preceded by a 1 for an enum member)
    /// and its type as ROOT's meta layer spells it (`int`, `unsigned long`, `string`,
    /// `vector<vector<float> >`), each character folded in as `id = id * 3 + c` (mod 2^32).
    /// Checked against ROOT 6.40 for the fundamental types, strings, the std collections,
    /// `std::array`, pairs, tuples, bitsets, enums, nested classes and base classes.
    pub fn root_checksum(&self) -> u32 {
        fn fold(id: u32, s: &str) -> u32 {
            s.bytes().fold(id, |id, c| id.wrapping_mul(3).wrapping_add(c as u32))
        }
        let mut id = fold(0, &self.name);
        for b in &self.bases {
            id = fold(id, &b.name).wrapping_mul(3).wrapping_add(b.type_checksum());
        }
        for (m, t) in &self.members {
            if matches!(t, TypeExpr::Enum(..)) {
                id = id.wrapping_mul(3).wrapping_add(1);
            }
            id = fold(id, m);
            id = fold(id, &t.meta_name());
        }
        id
    }
}

/// How ROOT's meta layer (`TDataMember::GetFullTypeName`, `TClassEdit::ShortType`) spells a
/// scalar in a class checksum.
fn meta_scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::Char => "char",
        Scalar::Byte => "byte",
        Scalar::I8 => "signed char",
        Scalar::U8 => "unsigned char",
        Scalar::I16 => "short",
        Scalar::U16 => "unsigned short",
        Scalar::I32 => "int",
        Scalar::U32 => "unsigned int",
        Scalar::I64 => "long",
        Scalar::U64 => "unsigned long",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
    }
}

fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out
}

/// A fundamental type: its scalar and, for `Double32_t`, the alias ROOT keeps.
fn scalar_name(t: &str) -> Option<(Scalar, Option<String>)> {
    let s = Scalar::from_type_name(t)?;
    Some((s, (t == "Double32_t").then(|| t.to_string())))
}

/// Parses a C++ type name.
///
/// ```
/// use rntuple::logical::typename::{parse, TypeExpr};
/// let t = parse("vector<pair<int, std::string>>").unwrap();
/// assert_eq!(t.name(), "std::vector<std::pair<std::int32_t,std::string>>");
/// ```
pub fn parse(t: &str) -> Result<TypeExpr> {
    // Every level of nesting re-scans its arguments, so the depth bounds the work (and the
    // recursion) to `MAX_TYPE_DEPTH` passes over the name.
    let mut depth = 0usize;
    for c in t.chars() {
        match c {
            '<' => {
                depth += 1;
                if depth > MAX_TYPE_DEPTH {
                    let head: String = t.chars().take(60).collect();
                    return Err(Error::Unsupported(format!("type '{head}...' ({} bytes) is nested more than {MAX_TYPE_DEPTH} template levels deep", t.len())));
                }
            }
            '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    parse_level(t)
}

/// Deepest template nesting of a type name accepted by [`parse`].
pub(crate) const MAX_TYPE_DEPTH: usize = 64;

fn parse_level(t: &str) -> Result<TypeExpr> {
    let collapsed: String = {
        // Keep single spaces only inside multi-word fundamental names.
        let mut s = t.trim().to_string();
        for kw in ["const ", "volatile ", "class ", "struct "] {
            s = s.replace(kw, "");
        }
        s
    };
    let t = collapsed.trim().trim_start_matches("::");
    if let Some((s, alias)) = scalar_name(t) {
        return Ok(TypeExpr::Scalar(s, alias));
    }
    if t == "std::string" || t == "string" {
        return Ok(TypeExpr::String);
    }
    let Some(open) = t.find('<') else {
        return Err(Error::Unsupported(format!("type '{t}' (user classes and enums need a schema with member types)")));
    };
    if !t.ends_with('>') {
        return Err(Error::Invalid(format!("type '{t}': unbalanced template brackets")));
    }
    let head = t[..open].trim().trim_start_matches("std::");
    let args = split_args(&t[open + 1..t.len() - 1]);
    let one = |what: &str| -> Result<TypeExpr> {
        if args.len() != 1 {
            return Err(Error::Invalid(format!("type '{t}': {what} takes one template argument")));
        }
        parse_level(args[0])
    };
    let num =
        |s: &str| -> Result<u64> { s.trim_end_matches(['u', 'U', 'l', 'L']).parse().map_err(|_| Error::Invalid(format!("type '{t}': '{s}' is not a size"))) };
    Ok(match head {
        "vector" => TypeExpr::Collection("std::vector".into(), Box::new(one("std::vector")?)),
        "ROOT::RVec" | "ROOT::VecOps::RVec" | "RVec" => TypeExpr::Collection("ROOT::VecOps::RVec".into(), Box::new(one("RVec")?)),
        "set" | "multiset" | "unordered_set" | "unordered_multiset" => TypeExpr::Collection(format!("std::{head}"), Box::new(one(head)?)),
        "map" | "multimap" | "unordered_map" | "unordered_multimap" => {
            if args.len() != 2 {
                return Err(Error::Invalid(format!("type '{t}': a map takes two template arguments")));
            }
            TypeExpr::Map(format!("std::{head}"), Box::new(parse_level(args[0])?), Box::new(parse_level(args[1])?))
        }
        "optional" | "unique_ptr" => TypeExpr::Optional(format!("std::{head}"), Box::new(one(head)?)),
        "array" => {
            if args.len() != 2 {
                return Err(Error::Invalid(format!("type '{t}': std::array takes a type and a size")));
            }
            TypeExpr::Array(Box::new(parse_level(args[0])?), num(args[1])?)
        }
        "bitset" => TypeExpr::Bitset(num(args[0])?),
        "pair" => {
            if args.len() != 2 {
                return Err(Error::Invalid(format!("type '{t}': std::pair takes two template arguments")));
            }
            TypeExpr::Tuple("std::pair".into(), args.iter().map(|a| parse_level(a)).collect::<Result<_>>()?)
        }
        "tuple" => TypeExpr::Tuple("std::tuple".into(), args.iter().map(|a| parse_level(a)).collect::<Result<_>>()?),
        "variant" => {
            if args.len() > 125 {
                return Err(Error::Unsupported(format!("type '{t}': more than 125 alternatives")));
            }
            TypeExpr::Variant(args.iter().map(|a| parse_level(a)).collect::<Result<_>>()?)
        }
        "atomic" => TypeExpr::Atomic(Box::new(one("std::atomic")?)),
        _ => return Err(Error::Unsupported(format!("type '{t}'"))),
    })
}

impl TypeExpr {
    /// The normalized type name, as ROOT writes it into the field record.
    pub fn name(&self) -> String {
        match self {
            TypeExpr::Scalar(s, _) => s.type_name().into(),
            TypeExpr::String => "std::string".into(),
            TypeExpr::Collection(n, c) | TypeExpr::Optional(n, c) => {
                // Each level names its item once (naming it twice per level took 2^depth steps).
                let item = c.name();
                if item.is_empty() {
                    String::new()
                } else {
                    format!("{n}<{item}>")
                }
            }
            TypeExpr::Map(n, k, v) => format!("{n}<{},{}>", k.name(), v.name()),
            TypeExpr::Array(c, n) => format!("std::array<{},{n}>", c.name()),
            TypeExpr::Bitset(n) => format!("std::bitset<{n}>"),
            TypeExpr::Tuple(n, items) => format!("{n}<{}>", items.iter().map(|i| i.name()).collect::<Vec<_>>().join(",")),
            TypeExpr::Variant(items) => format!("std::variant<{}>", items.iter().map(|i| i.name()).collect::<Vec<_>>().join(",")),
            TypeExpr::Atomic(c) => format!("std::atomic<{}>", c.name()),
            TypeExpr::Record(_) => String::new(),
            TypeExpr::Class(c) => c.name.clone(),
            TypeExpr::Enum(n, _) => n.clone(),
        }
    }

    /// The type as ROOT's meta layer spells a data member's type in a class checksum: without
    /// `std::`, fundamental names (`int`, `long`), `> >` between closing brackets.
    pub(crate) fn meta_name(&self) -> String {
        let tmpl = |head: &str, args: Vec<String>| {
            let close = if args.last().is_some_and(|a| a.ends_with('>')) { " >" } else { ">" };
            format!("{head}<{}{close}", args.join(","))
        };
        let strip = |n: &str| n.trim_start_matches("std::").to_string();
        match self {
            TypeExpr::Scalar(_, Some(alias)) => alias.clone(),
            TypeExpr::Scalar(s, None) => meta_scalar(*s).into(),
            TypeExpr::String => "string".into(),
            TypeExpr::Collection(n, c) | TypeExpr::Optional(n, c) => tmpl(&strip(n), vec![c.meta_name()]),
            TypeExpr::Map(n, k, v) => tmpl(&strip(n), vec![k.meta_name(), v.meta_name()]),
            TypeExpr::Array(c, n) => tmpl("array", vec![c.meta_name(), n.to_string()]),
            TypeExpr::Bitset(n) => format!("bitset<{n}>"),
            TypeExpr::Tuple(n, items) => tmpl(&strip(n), items.iter().map(|i| i.meta_name()).collect()),
            TypeExpr::Variant(items) => tmpl("variant", items.iter().map(|i| i.meta_name()).collect()),
            TypeExpr::Atomic(c) => tmpl("atomic", vec![c.meta_name()]),
            TypeExpr::Record(_) => String::new(),
            TypeExpr::Class(c) => c.name.clone(),
            TypeExpr::Enum(n, _) => n.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_like_root() {
        for (input, want) in [
            ("int", "std::int32_t"),
            ("vector<float>", "std::vector<float>"),
            ("ROOT::RVec<double>", "ROOT::VecOps::RVec<double>"),
            ("std::map<int, std::vector<std::string> >", "std::map<std::int32_t,std::vector<std::string>>"),
            ("std::array<Long64_t, 3>", "std::array<std::int64_t,3>"),
            ("std::variant<int,float,std::string>", "std::variant<std::int32_t,float,std::string>"),
            ("std::tuple<bool, unsigned char, short>", "std::tuple<bool,std::uint8_t,std::int16_t>"),
            ("std::optional<std::pair<int,float>>", "std::optional<std::pair<std::int32_t,float>>"),
            ("std::bitset<42>", "std::bitset<42>"),
            ("std::atomic<unsigned int>", "std::atomic<std::uint32_t>"),
            ("const double", "double"),
            ("Double32_t", "double"),
        ] {
            assert_eq!(parse(input).unwrap().name(), want, "{input}");
        }
        assert_eq!(parse("Double32_t").unwrap(), TypeExpr::Scalar(Scalar::F64, Some("Double32_t".into())));
        assert_eq!(parse("byte").unwrap().name(), "std::byte");
        assert!(parse("MyClass").is_err());
        assert!(parse("std::vector<int").is_err());
        assert!(parse("std::array<int,x>").is_err());
    }

    #[test]
    fn class_checksums_match_root() {
        // Checksums ROOT 6.40 wrote for interpreted classes with these members.
        let p = |t: &str| parse(t).unwrap();
        let c = |name: &str, members: &[(&str, &str)]| members.iter().fold(ClassDef::new(name), |c, (m, t)| c.member(*m, p(t)));
        assert_eq!(c("S1", &[("a", "std::int8_t")]).root_checksum(), 185430915);
        assert_eq!(c("S6", &[("a", "std::int64_t")]).root_checksum(), 85834);
        assert_eq!(c("S7", &[("a", "std::uint64_t")]).root_checksum(), 1700215246);
        assert_eq!(c("S8", &[("a", "bool"), ("b", "char"), ("c", "double"), ("d", "Double32_t")]).root_checksum(), 3556211291);
        let s9 = [("a", "std::map<int,float>"), ("b", "std::array<float,3>"), ("c", "std::pair<int,double>"), ("d", "std::tuple<int,char>")];
        assert_eq!(c("S9", &s9).root_checksum(), 3511683006);
        let s11 = [("b", "std::vector<std::vector<float>>"), ("c", "ROOT::VecOps::RVec<float>"), ("d", "std::set<int>")];
        assert_eq!(c("S11", &s11).root_checksum(), 134930465);
        let s10 = ClassDef::new("S10").member("e", TypeExpr::Enum("EI32".into(), Scalar::I32)).member("p", TypeExpr::Enum("Plain".into(), Scalar::U32));
        assert_eq!(s10.root_checksum(), 1526269394);
        let base = c("Base", &[("fInt", "std::int32_t")]);
        let user = c("User", &[("fString", "std::string"), ("fVariant", "std::variant<std::int32_t,std::string>"), ("fVector", "std::vector<std::int32_t>")])
            .member("fNested", TypeExpr::Class(Box::new(c("Nested", &[("fInt", "std::int32_t")]))));
        assert_eq!(user.base(base).root_checksum(), 1158237394);
        assert_eq!(ClassDef::new("M").checksum(7).type_checksum(), 7);
    }

    #[test]
    fn deep_names_are_linear_and_bounded() {
        let nest = |n: usize| format!("{}float{}", "std::vector<".repeat(n), ">".repeat(n));
        // 60 levels: parsed and named at once (naming was exponential in the depth).
        let t = parse(&nest(60)).unwrap();
        assert_eq!(t.name(), nest(60));
        // Deeper than the limit (and far deeper: no stack overflow): an error naming the limit.
        for n in [65, 10_000] {
            let e = parse(&nest(n)).unwrap_err().to_string();
            assert!(e.contains("nested more than 64"), "{e}");
        }
    }
}
