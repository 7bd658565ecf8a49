//! C++ type names: parsing into a type tree and normalizing as ROOT does
//! (`int` → `std::int32_t`, `vector<float>` → `std::vector<float>`,
//! `ROOT::RVec<T>` → `ROOT::VecOps::RVec<T>`, `Double32_t` kept as an alias of `double`).

use crate::error::{Error, Result};
use crate::logical::kind::Scalar;

/// A parsed type.
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
pub const MAX_TYPE_DEPTH: usize = 64;

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
