//! `#[derive(Record)]` for the `rntuple` crate (use it as `rntuple::Record`).
//!
//! On a struct with named fields it implements `rntuple::write::Entry` (the members are an entry's
//! top-level fields, in declaration order) and `rntuple::write::FieldValue` (an untyped record with
//! those members, usable as a field, a vector item or an optional) for writing, and
//! `rntuple::read::FromEntry` and `rntuple::read::FromValue` (members matched by name) for
//! reading. Every member type must implement `FieldValue` and `FromValue`. Written without `syn` to keep the build light: the struct is read from
//! its tokens (attributes, visibility, name, braces of `name: Type` members).

use proc_macro::{Delimiter, TokenStream, TokenTree};

/// Implements `Entry`, `FieldValue`, `FromEntry` and `FromValue` for a struct with named fields.
#[proc_macro_derive(Record)]
pub fn derive_record(input: TokenStream) -> TokenStream {
    match expand(input) {
        Ok(code) => code.parse().unwrap_or_else(|e| error(&format!("rntuple-derive produced invalid code: {e}"))),
        Err(msg) => error(&msg),
    }
}

fn error(msg: &str) -> TokenStream {
    format!("compile_error!({msg:?});").parse().unwrap_or_default()
}

fn expand(input: TokenStream) -> Result<String, String> {
    let toks: Vec<TokenTree> = input.into_iter().collect();
    let mut i = 0;
    let mut name = None;
    while i < toks.len() {
        match &toks[i] {
            TokenTree::Ident(id) if id.to_string() == "struct" => {
                match toks.get(i + 1) {
                    Some(TokenTree::Ident(n)) => name = Some(n.to_string()),
                    _ => return Err("#[derive(Record)]: expected a struct name".into()),
                }
                i += 2;
                break;
            }
            TokenTree::Ident(id) if id.to_string() == "enum" || id.to_string() == "union" => {
                return Err("#[derive(Record)] supports structs with named fields only".into());
            }
            _ => i += 1,
        }
    }
    let name = name.ok_or("#[derive(Record)]: no struct found")?;
    let body = match toks.get(i) {
        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => g.stream(),
        Some(TokenTree::Punct(p)) if p.as_char() == '<' => return Err(format!("#[derive(Record)] on {name}: generic structs are not supported")),
        _ => return Err(format!("#[derive(Record)] on {name}: only structs with named fields are supported")),
    };
    let fields = parse_fields(body.into_iter().collect())?;
    if fields.is_empty() {
        return Err(format!("#[derive(Record)] on {name}: the struct has no fields"));
    }
    let te = "::rntuple::logical::typename::TypeExpr";
    let list: Vec<String> =
        fields.iter().map(|(n, t)| format!("({:?}.to_string(), <{t} as ::rntuple::write::FieldValue>::type_expr())", n.trim_start_matches("r#"))).collect();
    let list = list.join(", ");
    let members: String = fields.iter().map(|(n, _)| format!("r.member(&self.{n})?; ")).collect();
    let names: Vec<String> = fields.iter().map(|(n, _)| format!("{:?}", n.trim_start_matches("r#"))).collect();
    let names = names.join(", ");
    let from: String = fields
        .iter()
        .map(|(n, t)| {
            let key = format!("{:?}", n.trim_start_matches("r#"));
            format!(
                "{n}: <{t} as ::rntuple::read::FromValue>::from_value(::rntuple::read::typed::member(v, {key}, path)?, &::rntuple::read::typed::member_path(path, {key}))?, "
            )
        })
        .collect();
    let reading = format!(
        "impl ::rntuple::read::FromValue for {name} {{
            fn from_value(v: &::rntuple::Value, path: &str) -> ::rntuple::Result<Self> {{ Ok({name} {{ {from} }}) }}
        }}
        impl ::rntuple::read::FromEntry for {name} {{
            fn field_names() -> ::std::vec::Vec<&'static str> {{ vec![{names}] }}
            fn from_entry(v: &::rntuple::Value) -> ::rntuple::Result<Self> {{ <Self as ::rntuple::read::FromValue>::from_value(v, \"\") }}
        }}"
    );
    Ok(reading
        + &format!(
            "impl ::rntuple::write::FieldValue for {name} {{
            fn type_expr() -> {te} {{ {te}::Record(vec![{list}]) }}
            fn put(&self, w: ::rntuple::write::FieldWriter<'_>) -> ::rntuple::Result<()> {{
                let mut r = w.record()?; {members} r.finish()
            }}
        }}
        impl ::rntuple::write::Entry for {name} {{
            fn fields() -> ::std::vec::Vec<(::std::string::String, {te})> {{ vec![{list}] }}
            fn put_fields(&self, r: &mut ::rntuple::write::RecordWriter<'_>) -> ::rntuple::Result<()> {{
                {members} Ok(())
            }}
        }}"
        ))
}

/// Splits `name: Type, ...` (with attributes and visibility) into (name, type) pairs.
fn parse_fields(toks: Vec<TokenTree>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        // Attributes.
        while let Some(TokenTree::Punct(p)) = toks.get(i) {
            if p.as_char() != '#' {
                break;
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
        out.push((name, ty.to_string()));
    }
    Ok(out)
}
