//! The C++ type names and fundamental types of objects streamed by ROOT's `TBufferFile`
//! (`read::streamer::streamed_object`): a collection's type name parsed into its template and arguments
//! (`map<int,vector<float> >`), and the fundamental types as streamed.
//!
//! ```
//! use rntuple::logical::streamed_types::{basic_from_name, Basic, Stl, TypeName};
//! let t = TypeName::parse("map<int,vector<float> >").unwrap();
//! assert_eq!((t.name.as_str(), t.args.len(), t.args[1].name.as_str()), ("map", 2, "vector"));
//! assert_eq!((t.stl(), t.args[1].stl()), (Some(Stl::Map), Some(Stl::Sequence)));
//! assert_eq!(t.args[1].args[0].full, "float");
//! assert!(TypeName::parse("vector<int").is_err());
//! assert_eq!(basic_from_name("Double32_t"), Some(Basic::Double32));
//! ```

use crate::logical::kind::Scalar;

/// Most nested template arguments parsed.
const MAX_TYPE_DEPTH: usize = 32;

/// Fundamental types as streamed: a scalar of the field tree's ([`Scalar`], one owner of the
/// fundamental types), or one of the two reduced-precision floats that exist only as streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Basic {
    /// A fundamental type streamed as its full in-memory value (`char` and `std::byte` as the
    /// signed and unsigned 8-bit integers they are).
    Scalar(Scalar),
    /// `Double32_t` (without a range: a float on the wire).
    Double32,
    /// `Float16_t` (without a range: 12 mantissa bits).
    Float16,
}

/// The fundamental type of a C++ type name, if it is one.
pub fn basic_from_name(n: &str) -> Option<Basic> {
    match n {
        "Double32_t" => Some(Basic::Double32),
        "Float16_t" => Some(Basic::Float16),
        _ => Scalar::from_type_name(n).map(Basic::Scalar),
    }
}

/// A parsed C++ type name: template name, arguments, pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeName {
    /// The name without template arguments (`vector`, `std::map`, `MyClass`).
    pub name: String,
    /// The template arguments.
    pub args: Vec<TypeName>,
    /// Whether it is a pointer.
    pub pointer: bool,
    /// The whole name without the pointer's `*` and a `const`.
    pub full: String,
}

/// What kind of collection a template is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stl {
    /// vector, list, deque, set, RVec...: items.
    Sequence,
    /// map, multimap, unordered maps: keys and values.
    Map,
}

impl TypeName {
    /// Parses a C++ type name.
    pub fn parse(s: &str) -> std::result::Result<TypeName, String> {
        parse_at(s, 0)
    }

    /// The collection kind, when the name is a standard collection.
    pub fn stl(&self) -> Option<Stl> {
        let n = self.name.trim_start_matches("std::");
        match n {
            "vector" | "list" | "deque" | "set" | "multiset" | "unordered_set" | "unordered_multiset" | "forward_list" | "ROOT::VecOps::RVec" | "ROOT::RVec" | "RVec" => {
                (self.args.len() == 1 || (n == "vector" && self.args.len() == 2)).then_some(Stl::Sequence)
            }
            "map" | "multimap" | "unordered_map" | "unordered_multimap" => (self.args.len() >= 2).then_some(Stl::Map),
            _ => None,
        }
    }
}

fn parse_at(s: &str, depth: usize) -> std::result::Result<TypeName, String> {
    if depth > MAX_TYPE_DEPTH {
        return Err(format!("type name nested more than {MAX_TYPE_DEPTH} levels deep"));
    }
    let mut t = s.trim();
    t = t.strip_prefix("const ").unwrap_or(t).trim();
    let pointer = t.ends_with('*');
    let full = t.trim_end_matches('*').trim().to_string();
    let Some(open) = full.find('<') else {
        return Ok(TypeName { name: full.clone(), args: Vec::new(), pointer, full });
    };
    let close = full.rfind('>').filter(|&c| c > open).ok_or_else(|| format!("type name '{s}' without its closing '>'"))?;
    let inner = &full[open + 1..close];
    let mut args = Vec::new();
    let (mut level, mut from) = (0i32, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '<' => level += 1,
            '>' => level -= 1,
            ',' if level == 0 => {
                args.push(parse_at(&inner[from..i], depth + 1)?);
                from = i + 1;
            }
            _ => {}
        }
        if level < 0 {
            return Err(format!("type name '{s}' has unbalanced '<' and '>'"));
        }
    }
    if level != 0 {
        return Err(format!("type name '{s}' has unbalanced '<' and '>'"));
    }
    args.push(parse_at(&inner[from..], depth + 1)?);
    Ok(TypeName { name: full[..open].trim().to_string(), args, pointer, full })
}
