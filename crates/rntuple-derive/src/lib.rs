//! `#[derive(Record)]` for the `rntuple` crate (use it as `rntuple::Record`).
//!
//! On a struct with named fields it implements `rntuple::write::Entry` (the members are an entry's
//! top-level fields, in declaration order) and `rntuple::write::FieldValue` (an untyped record with
//! those members, usable as a field, a vector item or an optional) for writing, and
//! `rntuple::read::FromEntry` and `rntuple::read::FromValue` (members matched by name) for
//! reading. Every member type must implement `FieldValue` and `FromValue`. Written without `syn` to keep the build light: the struct is read from
//! its tokens (attributes, visibility, name, braces of `name: Type` members).
//!
//! Attributes:
//! * `#[rntuple(class = "Muon", version = 3)]` on the struct: the struct is a ROOT class (a
//!   class field with that type name and class version, default 1, and ROOT's type checksum)
//!   instead of an untyped record. A member marked `#[rntuple(base)]` (itself a derived class) is
//!   a base class: it becomes the subfield `:_0`, `:_1`, … before the other members, whatever its
//!   place in the struct; in values it is the member `:_0`, … . Reading a class is schema
//!   evolution as ROOT does it: members are matched by name, a member the class's on-disk version
//!   lacks is default-constructed (`FromValue::absent`), an on-disk member the struct lacks is
//!   skipped, and numbers convert by ROOT's rules (`rntuple::read::evolution`).
//! * `#[rntuple(streamer)]` on a member of an entry struct whose type is a derived class: the
//!   field is written as ROOT's `RStreamerField` (each entry's object streamed whole by
//!   `TBufferFile`, the class's StreamerInfo records in the file), not split into subfields:
//!
//!   ```text
//!   #[derive(rntuple::Record)]
//!   #[rntuple(class = "Hit")]
//!   struct Hit { x: f32, tags: Vec<i32> }
//!   #[derive(rntuple::Record)]
//!   struct Event { #[rntuple(streamer)] hit: Hit, run: u32 }
//!   // Writer::create_typed::<Event>(...) writes `hit` as an RStreamerField of class Hit.
//!   ```
//! * `#[rntuple(enum = "Color")]` on a fieldless enum with `#[repr(i8|u8|i16|u16|i32|u32|i64|u64)]`
//!   (default `i32`): a field of the C++ enum type `Color` over its integer, as ROOT stores enums.
//!   Reading an integer that is no variant's discriminant is an error naming the field.

use proc_macro::{Delimiter, TokenStream, TokenTree};

/// Implements `Entry`, `FieldValue`, `FromEntry` and `FromValue` for a struct with named fields
/// (an untyped record, or a ROOT class with `#[rntuple(class = "Name", version = N)]`), and
/// `FieldValue` and `FromValue` for a fieldless enum with `#[rntuple(enum = "Name")]`.
#[proc_macro_derive(Record, attributes(rntuple))]
pub fn derive_record(input: TokenStream) -> TokenStream {
    match expand(input) {
        Ok(code) => code.parse().unwrap_or_else(|e| error(&format!("rntuple-derive produced invalid code: {e}"))),
        Err(msg) => error(&msg),
    }
}

fn error(msg: &str) -> TokenStream {
    format!("compile_error!({msg:?});").parse().unwrap_or_default()
}

/// What `#[rntuple(...)]` on the item says.
#[derive(Default)]
struct ItemAttrs {
    class: Option<String>,
    version: Option<u32>,
    enum_name: Option<String>,
    repr: Option<String>,
}

/// Reads the `key = value` pairs of an `#[rntuple(...)]` attribute (and `#[repr(...)]`).
fn item_attr(group: &proc_macro::Group, attrs: &mut ItemAttrs) -> Result<(), String> {
    let inner: Vec<TokenTree> = group.stream().into_iter().collect();
    let (Some(TokenTree::Ident(head)), Some(TokenTree::Group(args))) = (inner.first(), inner.get(1)) else { return Ok(()) };
    let args: Vec<TokenTree> = args.stream().into_iter().collect();
    match head.to_string().as_str() {
        "repr" => {
            if let Some(TokenTree::Ident(r)) = args.iter().find(|t| matches!(t, TokenTree::Ident(r) if INT_REPRS.iter().any(|(n, _)| *n == r.to_string()))) {
                attrs.repr = Some(r.to_string());
            }
            Ok(())
        }
        "rntuple" => {
            for kv in args.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
                if kv.is_empty() {
                    continue;
                }
                let (Some(TokenTree::Ident(k)), Some(TokenTree::Punct(eq)), Some(TokenTree::Literal(v)), None) = (kv.first(), kv.get(1), kv.get(2), kv.get(3))
                else {
                    return Err(format!("#[rntuple(...)]: expected `key = value`, found `{}`", kv.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" ")));
                };
                if eq.as_char() != '=' {
                    return Err(format!("#[rntuple(...)]: expected `=` after `{k}`"));
                }
                let v = v.to_string();
                let string = || -> Result<String, String> {
                    v.strip_prefix('"')
                        .and_then(|s| s.strip_suffix('"'))
                        .map(str::to_string)
                        .ok_or_else(|| format!("#[rntuple({k} = ...)]: expected a string, found {v}"))
                };
                match k.to_string().as_str() {
                    "class" => attrs.class = Some(string()?),
                    "enum" => attrs.enum_name = Some(string()?),
                    "version" => attrs.version = Some(v.parse().map_err(|_| format!("#[rntuple(version = ...)]: expected an unsigned integer, found {v}"))?),
                    other => return Err(format!("#[rntuple(...)]: unknown key `{other}` (class, version, enum)")),
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Integer representations of an enum: Rust type, `Scalar` variant.
const INT_REPRS: &[(&str, &str)] =
    &[("i8", "I8"), ("u8", "U8"), ("i16", "I16"), ("u16", "U16"), ("i32", "I32"), ("u32", "U32"), ("i64", "I64"), ("u64", "U64")];

fn expand(input: TokenStream) -> Result<String, String> {
    let toks: Vec<TokenTree> = input.into_iter().collect();
    let mut i = 0;
    let mut name = None;
    let mut attrs = ItemAttrs::default();
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Punct(p) if p.as_char() == '#' => {
                if let Some(TokenTree::Group(g)) = toks.get(i + 1) {
                    item_attr(g, &mut attrs)?;
                }
                i += 2;
            }
            TokenTree::Ident(id) if id.to_string() == "struct" => {
                match toks.get(i + 1) {
                    Some(TokenTree::Ident(n)) => name = Some(n.to_string()),
                    _ => return Err("#[derive(Record)]: expected a struct name".into()),
                }
                i += 2;
                break;
            }
            TokenTree::Ident(id) if id.to_string() == "enum" => {
                let Some(TokenTree::Ident(n)) = toks.get(i + 1) else { return Err("#[derive(Record)]: expected an enum name".into()) };
                let Some(TokenTree::Group(body)) = toks.get(i + 2) else {
                    return Err(format!("#[derive(Record)] on enum {n}: generic enums are not supported"));
                };
                return expand_enum(&n.to_string(), body, &attrs);
            }
            TokenTree::Ident(id) if id.to_string() == "union" => {
                return Err("#[derive(Record)] supports structs with named fields and fieldless enums only".into());
            }
            _ => i += 1,
        }
    }
    if attrs.enum_name.is_some() {
        return Err("#[rntuple(enum = ...)] goes on an enum".into());
    }
    if attrs.version.is_some() && attrs.class.is_none() {
        return Err("#[rntuple(version = ...)] needs #[rntuple(class = \"Name\")]".into());
    }
    let name = name.ok_or("#[derive(Record)]: no struct found")?;
    let body = match toks.get(i) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => return Err(format!("#[derive(Record)] on {name}: generic structs are not supported")),
        _ => return Err(format!("#[derive(Record)] on {name}: only structs with named fields are supported")),
    };
    let mut fields = parse_fields(body.into_iter().collect())?;
    if fields.is_empty() {
        return Err(format!("#[derive(Record)] on {name}: the struct has no fields"));
    }
    if attrs.class.is_none() && fields.iter().any(|f| f.base) {
        return Err(format!("#[derive(Record)] on {name}: #[rntuple(base)] members need #[rntuple(class = \"Name\")] on the struct"));
    }
    if let Some(f) = fields.iter().find(|f| f.streamer && f.base) {
        return Err(format!("#[derive(Record)] on {name}: member `{}` cannot be both #[rntuple(base)] and #[rntuple(streamer)]", f.name));
    }
    let streamed: Vec<String> = fields.iter().filter(|f| f.streamer).map(|f| format!("{:?}.to_string()", f.name.trim_start_matches("r#"))).collect();
    let streamed = streamed.join(", ");
    // Base classes first (subfields `:_0`, `:_1`, ...), then the members, each group in order.
    fields.sort_by_key(|f| !f.base);
    let key_of = |f: &Field, i: usize| if f.base { format!(":_{i}") } else { f.name.trim_start_matches("r#").to_string() };
    let keys: Vec<String> = fields.iter().enumerate().map(|(i, f)| key_of(f, i)).collect();
    let te = "::rntuple::logical::typename::TypeExpr";
    let list: Vec<String> =
        fields.iter().zip(&keys).map(|(f, k)| format!("({k:?}.to_string(), <{} as ::rntuple::write::FieldValue>::type_expr())", f.ty)).collect();
    let list = list.join(", ");
    let members: String = fields.iter().map(|f| format!("r.member(&self.{})?; ", f.name)).collect();
    let names: Vec<String> = keys.iter().map(|k| format!("{k:?}")).collect();
    let names = names.join(", ");
    let type_expr = match &attrs.class {
        None => format!("{te}::Record(vec![{list}])"),
        Some(class) => {
            let cd = "::rntuple::logical::typename::ClassDef";
            let mut b = format!("{cd}::new({class:?}).version({})", attrs.version.unwrap_or(1));
            for f in &fields {
                let t = format!("<{} as ::rntuple::write::FieldValue>::type_expr()", f.ty);
                if f.base {
                    b += &format!(".base_expr({t})");
                } else {
                    b += &format!(".member({:?}, {t})", f.name.trim_start_matches("r#"));
                }
            }
            format!("{te}::Class(::std::boxed::Box::new({b}))")
        }
    };
    let from: String = fields
        .iter()
        .zip(&keys)
        .map(|(f, k)| {
            let (n, t) = (&f.name, &f.ty);
            let key = format!("{k:?}");
            let mp = format!("&::rntuple::__private::member_path(path, {key})");
            if attrs.class.is_some() {
                // A class member missing on disk (another class version) is default-constructed, as ROOT does.
                format!(
                    "{n}: match ::rntuple::__private::member_opt(v, {key}, path)? {{ \
                     Some(x) => <{t} as ::rntuple::read::FromValue>::from_value(x, {mp})?, \
                     None => <{t} as ::rntuple::read::FromValue>::absent({mp})? }}, "
                )
            } else {
                format!("{n}: <{t} as ::rntuple::read::FromValue>::from_value(::rntuple::__private::member(v, {key}, path)?, {mp})?, ")
            }
        })
        .collect();
    // A class missing on disk as a whole (a member of another class's version) is a class of defaults.
    let absent = if attrs.class.is_some() {
        "fn absent(path: &str) -> ::rntuple::Result<Self> { <Self as ::rntuple::read::FromValue>::from_value(&::rntuple::Value::Record(::std::vec::Vec::new()), path) }"
    } else {
        ""
    };
    let reading = format!(
        "impl ::rntuple::read::FromValue for {name} {{
            fn from_value(v: &::rntuple::Value, path: &str) -> ::rntuple::Result<Self> {{ Ok({name} {{ {from} }}) }}
            {absent}
        }}
        impl ::rntuple::read::FromEntry for {name} {{
            fn field_names() -> ::std::vec::Vec<&'static str> {{ vec![{names}] }}
            fn from_entry(v: &::rntuple::Value) -> ::rntuple::Result<Self> {{ <Self as ::rntuple::read::FromValue>::from_value(v, \"\") }}
        }}"
    );
    Ok(reading
        + &format!(
            "impl ::rntuple::write::FieldValue for {name} {{
            fn type_expr() -> {te} {{ {type_expr} }}
            fn put(&self, w: ::rntuple::write::FieldWriter<'_>) -> ::rntuple::Result<()> {{
                let mut r = w.record()?; {members} r.finish()
            }}
        }}
        impl ::rntuple::write::Entry for {name} {{
            fn fields() -> ::std::vec::Vec<(::std::string::String, {te})> {{ vec![{list}] }}
            fn put_fields(&self, r: &mut ::rntuple::write::RecordWriter<'_>) -> ::rntuple::Result<()> {{
                {members} Ok(())
            }}
            fn streamer_fields() -> ::std::vec::Vec<::std::string::String> {{ vec![{streamed}] }}
        }}"
        ))
}

/// `FieldValue` and `FromValue` for a fieldless enum written as a C++ enum field.
fn expand_enum(name: &str, body: &proc_macro::Group, attrs: &ItemAttrs) -> Result<String, String> {
    let Some(cpp) = &attrs.enum_name else {
        return Err(format!("#[derive(Record)] on enum {name}: name the C++ enum with #[rntuple(enum = \"Name\")]"));
    };
    if attrs.class.is_some() || attrs.version.is_some() {
        return Err(format!("#[derive(Record)] on enum {name}: class and version go on structs"));
    }
    let repr = attrs.repr.clone().unwrap_or_else(|| "i32".into());
    let scalar = INT_REPRS.iter().find(|(r, _)| *r == repr).map(|(_, s)| *s).ok_or_else(|| format!("enum {name}: unsupported repr {repr}"))?;
    // Variants: `Name` or `Name = discriminant`, separated by commas, attributes skipped.
    let toks: Vec<TokenTree> = body.stream().into_iter().collect();
    let mut variants = Vec::new();
    for part in toks.split(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ',')) {
        let mut j = 0;
        while matches!(part.get(j), Some(TokenTree::Punct(p)) if p.as_char() == '#') {
            j += 2;
        }
        match (part.get(j), part.get(j + 1)) {
            (None, _) => {}
            (Some(TokenTree::Ident(v)), None) => variants.push(v.to_string()),
            (Some(TokenTree::Ident(v)), Some(TokenTree::Punct(p))) if p.as_char() == '=' => variants.push(v.to_string()),
            (Some(TokenTree::Ident(v)), Some(_)) => {
                return Err(format!("#[derive(Record)] on enum {name}: variant {v} has fields; only fieldless enums are C++ enums"))
            }
            (Some(t), _) => return Err(format!("#[derive(Record)] on enum {name}: unexpected `{t}`")),
        }
    }
    if variants.is_empty() {
        return Err(format!("#[derive(Record)] on enum {name}: the enum has no variants"));
    }
    let to_int: String = variants.iter().map(|v| format!("{name}::{v} => {name}::{v} as {repr}, ")).collect();
    let from_int: String = variants.iter().map(|v| format!("x if x == {name}::{v} as {repr} => {name}::{v}, ")).collect();
    Ok(format!(
        "impl ::rntuple::write::FieldValue for {name} {{
            fn type_expr() -> ::rntuple::logical::typename::TypeExpr {{
                ::rntuple::logical::typename::TypeExpr::Enum({cpp:?}.to_string(), ::rntuple::logical::Scalar::{scalar})
            }}
            fn put(&self, w: ::rntuple::write::FieldWriter<'_>) -> ::rntuple::Result<()> {{
                let x: {repr} = match self {{ {to_int} }};
                <{repr} as ::rntuple::write::FieldValue>::put(&x, w)
            }}
        }}
        impl ::rntuple::read::FromValue for {name} {{
            fn from_value(v: &::rntuple::Value, path: &str) -> ::rntuple::Result<Self> {{
                let x = <{repr} as ::rntuple::read::FromValue>::from_value(v, path)?;
                Ok(match x {{ {from_int} _ => return Err(::rntuple::Error::Invalid(format!(\"field '{{path}}': {{x}} is no value of enum {name}\"))) }})
            }}
        }}"
    ))
}

/// A struct member: name, type, whether it is a base class (`#[rntuple(base)]`), whether it is
/// a streamer field (`#[rntuple(streamer)]`).
struct Field {
    name: String,
    ty: String,
    base: bool,
    streamer: bool,
}

/// Splits `name: Type, ...` (with attributes and visibility) into members.
fn parse_fields(toks: Vec<TokenTree>) -> Result<Vec<Field>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        // Attributes (`#[rntuple(base)]` marks a base class).
        let (mut base, mut streamer) = (false, false);
        while let Some(TokenTree::Punct(p)) = toks.get(i) {
            if p.as_char() != '#' {
                break;
            }
            if let Some(TokenTree::Group(g)) = toks.get(i + 1) {
                let a: Vec<String> = g.stream().into_iter().map(|t| t.to_string()).collect();
                if a.first().map(String::as_str) == Some("rntuple") {
                    match a.get(1).map(|s| s.replace(' ', "")).as_deref() {
                        Some("(base)") => base = true,
                        Some("(streamer)") => streamer = true,
                        _ => return Err(format!("#[derive(Record)]: unknown member attribute #[{}] (#[rntuple(base)] or #[rntuple(streamer)])", a.join(""))),
                    }
                }
            }
            i += 2;
        }
        // Visibility.
        if let Some(TokenTree::Ident(id)) = toks.get(i) {
            if id.to_string() == "pub" {
                i += 1;
                if let Some(TokenTree::Group(g)) = toks.get(i) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 1;
                    }
                }
            }
        }
        let name = match toks.get(i) {
            Some(TokenTree::Ident(id)) => id.to_string(),
            None => break,
            Some(t) => return Err(format!("#[derive(Record)]: expected a field name, found `{t}`")),
        };
        i += 1;
        match toks.get(i) {
            Some(TokenTree::Punct(p)) if p.as_char() == ':' => i += 1,
            _ => return Err(format!("#[derive(Record)]: expected `:` after field `{name}`")),
        }
        let mut depth = 0i32;
        let mut ty = Vec::new();
        while let Some(t) = toks.get(i) {
            if let TokenTree::Punct(p) = t {
                match p.as_char() {
                    '<' => depth += 1,
                    '>' => depth -= 1,
                    ',' if depth == 0 => break,
                    _ => {}
                }
            }
            ty.push(t.clone());
            i += 1;
        }
        i += 1; // the comma
        let ty: TokenStream = ty.into_iter().collect();
        out.push(Field { name, ty: ty.to_string(), base, streamer });
    }
    Ok(out)
}
