//! The `--schema` of `import-json`: a JSON object of field name -> type, in field order. A type is
//! a ROOT type name (`"float"`, `"std::vector<std::int32_t>"`), or a class as an object:
//!
//! ```json
//! {"hit": {"class": "Hit", "version": 1, "streamer": true,
//!          "bases": [{"class": "Base", "members": {"d": "double"}}],
//!          "members": {"x": "float", "in": {"class": "Inner", "members": {"a": "int"}},
//!                      "all": {"vector": {"class": "Inner", "members": {"a": "int"}}}}}}
//! ```
//!
//! `version` defaults to 1 (a class without `ClassDef`); `{"vector": type}` is a `std::vector` of
//! any type (classes too); `"streamer": true` on a top-level field's class writes the field as
//! ROOT's `RStreamerField` (as `--streamer FIELD` does).

use rntuple::logical::typename::{parse, ClassDef, TypeExpr};

/// The schema's fields as (name, type) and the fields marked `"streamer": true`.
pub(crate) type Schema = (Vec<(String, TypeExpr)>, Vec<String>);

/// Parses `--schema`; errors name the field.
pub(crate) fn parse_schema(text: &str) -> Result<Schema, String> {
    let schema: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("--schema must be a JSON object of field name -> type name or class: {e}"))?;
    let mut fields = Vec::with_capacity(schema.len());
    let mut streamed = Vec::new();
    for (name, t) in &schema {
        if t.get("streamer").and_then(|s| s.as_bool()) == Some(true) {
            streamed.push(name.clone());
        }
        fields.push((name.clone(), type_of(t, 0).map_err(|e| format!("--schema: field '{name}': {e}"))?));
    }
    Ok((fields, streamed))
}

fn type_of(t: &serde_json::Value, depth: usize) -> Result<TypeExpr, String> {
    if depth > 32 {
        return Err("types nested more than 32 levels deep".into());
    }
    match t {
        serde_json::Value::String(s) => parse(s).map_err(|e| e.to_string()),
        serde_json::Value::Object(o) if o.contains_key("vector") => {
            let item = type_of(&o["vector"], depth + 1)?;
            Ok(TypeExpr::Collection("std::vector".into(), Box::new(item)))
        }
        serde_json::Value::Object(o) => class_of(o, depth).map(|c| TypeExpr::Class(Box::new(c))),
        other => Err(format!("a type is a ROOT type name, {{\"class\": ...}} or {{\"vector\": type}}, got {other}")),
    }
}

fn class_of(o: &serde_json::Map<String, serde_json::Value>, depth: usize) -> Result<ClassDef, String> {
    for k in o.keys() {
        if !matches!(k.as_str(), "class" | "version" | "bases" | "members" | "streamer") {
            return Err(format!("unknown key '{k}' in a class (class, version, bases, members, streamer)"));
        }
    }
    let name = o.get("class").and_then(|c| c.as_str()).ok_or("a class object needs \"class\": its name")?;
    let version = match o.get("version") {
        None => 1,
        Some(v) => v.as_u64().and_then(|v| u32::try_from(v).ok()).ok_or_else(|| format!("class {name}: \"version\" must be an unsigned integer"))?,
    };
    let mut c = ClassDef::new(name).version(version);
    for b in o.get("bases").and_then(|b| b.as_array()).map(Vec::as_slice).unwrap_or_default() {
        match b {
            serde_json::Value::Object(bo) => c = c.base(class_of(bo, depth + 1)?),
            _ => return Err(format!("class {name}: a base is a class object")),
        }
    }
    let members = o.get("members").and_then(|m| m.as_object()).ok_or_else(|| format!("class {name}: \"members\" must be an object of member name -> type"))?;
    for (m, t) in members {
        c = c.member(m, type_of(t, depth + 1).map_err(|e| format!("class {name}, member '{m}': {e}"))?);
    }
    Ok(c)
}
