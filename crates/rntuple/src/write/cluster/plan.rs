//! Schema and plan building: a schema of (name, type) becomes field and column descriptors
//! (appended to the dataset's descriptor), one [`Plan`] per field that says how its values are
//! filled, and the columns to buffer them in — ROOT's default column representations for each
//! C++ type, as `RField` maps them.

use crate::error::{Error, Result};
use crate::format::descriptor::*;
use crate::logical::kind::Scalar;
use crate::logical::typename::{parse, ClassDef, TypeExpr};
use crate::primitives::column_type::ColumnType;
use crate::primitives::element::{BufElement, ColumnBuf};
use crate::write::cluster::columns::Column;

/// How a field is filled. Every node counts its elements in the current cluster
/// (`counter`), which gives collections their end offsets and variants their indices.
#[derive(Clone)]
pub(crate) enum Plan {
    Scalar {
        col: usize,
        s: Scalar,
        counter: usize,
    },
    String {
        idx: usize,
        chars: usize,
        counter: usize,
    },
    /// Vectors, RVecs, sets (`Seq`), maps (`Map`: items are pairs), optional/unique_ptr.
    Collection {
        idx: usize,
        child: Box<Plan>,
        kind: CollKind,
        counter: usize,
    },
    /// Pairs and tuples (members `_0`, `_1`, ...) and untyped records (named members).
    Record {
        children: Vec<Plan>,
        names: Vec<String>,
        counter: usize,
    },
    Array {
        n: u64,
        child: Box<Plan>,
        counter: usize,
    },
    Bitset {
        n: u64,
        col: usize,
        counter: usize,
    },
    Variant {
        sw: usize,
        children: Vec<Plan>,
        counter: usize,
    },
    Wrapper {
        child: Box<Plan>,
        counter: usize,
    },
    /// A streamer field: each value's object serialized (`write::streamer::streamed_encode`) into the
    /// bytes of a collection of bytes (an index column and a byte column).
    Streamed {
        idx: usize,
        bytes: usize,
        class: std::sync::Arc<ClassDef>,
        counter: usize,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CollKind {
    Seq,
    Map,
    Optional,
}

impl Plan {
    /// What the field holds, for error messages.
    pub(crate) fn describe(&self) -> &'static str {
        match self {
            Plan::Scalar { s, .. } => s.type_name(),
            Plan::String { .. } => "a string",
            Plan::Collection { .. } => "a collection",
            Plan::Record { .. } => "a record",
            Plan::Array { .. } => "an array",
            Plan::Bitset { .. } => "a bitset",
            Plan::Variant { .. } => "a variant",
            Plan::Wrapper { .. } => "an atomic or enum",
            Plan::Streamed { .. } => "a streamed object",
        }
    }

    pub(crate) fn counter(&self) -> usize {
        match self {
            Plan::Scalar { counter, .. }
            | Plan::String { counter, .. }
            | Plan::Collection { counter, .. }
            | Plan::Record { counter, .. }
            | Plan::Array { counter, .. }
            | Plan::Bitset { counter, .. }
            | Plan::Variant { counter, .. }
            | Plan::Wrapper { counter, .. }
            | Plan::Streamed { counter, .. } => *counter,
        }
    }
}

/// Parses a schema of (field name, C++ type name) into type expressions.
pub(crate) fn parse_field_types(schema: &[(&str, &str)]) -> Result<Vec<(String, TypeExpr)>> {
    schema.iter().map(|(f, t)| Ok((f.to_string(), parse(t).map_err(|e| Error::Invalid(format!("field '{f}': {e}")))?))).collect()
}

/// What [`plan_schema`] makes: the top-level fields' plans, the columns, the number of counters.
pub(crate) type Schema = (Vec<(String, Plan)>, Vec<Column>, usize);

/// Turns a schema into field descriptors (appended to `desc`), plans and columns.
pub(crate) fn plan_schema(desc: &mut Descriptor, schema: &[(String, TypeExpr)], compressed: bool, streamed: &[String]) -> Result<Schema> {
    // Room for a column and a field per top-level field at once (grown by doubling, 100,000 fields' lists
    // held twice what they needed while they grew).
    let mut cols = Vec::with_capacity(schema.len());
    desc.fields.reserve(schema.len());
    desc.columns.reserve(schema.len());
    let mut plans: Vec<(String, Plan)> = Vec::with_capacity(schema.len());
    let mut n_counters = 0usize;
    let mut seen = std::collections::HashSet::with_capacity(schema.len());
    for (fname, te) in schema {
        check_field_name(fname)?;
        if !seen.insert(fname.as_str()) {
            return Err(Error::Invalid(format!("field '{fname}' appears twice in the schema")));
        }
        let plan = plan_field(desc, &mut cols, &mut n_counters, None, fname, te, compressed, Origin { ext: None, mult: Some(1), streamed })?;
        plans.push((fname.to_string(), plan));
    }
    Ok((plans, cols, n_counters))
}

pub(crate) fn check_field_name(name: &str) -> Result<()> {
    crate::format::names::check_name(name, "field")
}

fn scalar_column(s: Scalar, compressed: bool) -> (ColumnType, ColumnBuf) {
    use ColumnType as C;
    let (split, plain, buf) = match s {
        Scalar::Bool => (C::Bit, C::Bit, bool::empty_buf()),
        Scalar::Char => (C::Char, C::Char, u8::empty_buf()),
        Scalar::Byte => (C::Byte, C::Byte, u8::empty_buf()),
        Scalar::I8 => (C::Int8, C::Int8, i8::empty_buf()),
        Scalar::U8 => (C::UInt8, C::UInt8, u8::empty_buf()),
        Scalar::I16 => (C::SplitInt16, C::Int16, i16::empty_buf()),
        Scalar::U16 => (C::SplitUInt16, C::UInt16, u16::empty_buf()),
        Scalar::I32 => (C::SplitInt32, C::Int32, i32::empty_buf()),
        Scalar::U32 => (C::SplitUInt32, C::UInt32, u32::empty_buf()),
        Scalar::I64 => (C::SplitInt64, C::Int64, i64::empty_buf()),
        Scalar::U64 => (C::SplitUInt64, C::UInt64, u64::empty_buf()),
        Scalar::F32 => (C::SplitReal32, C::Real32, f32::empty_buf()),
        Scalar::F64 => (C::SplitReal64, C::Real64, f64::empty_buf()),
    };
    (if compressed { split } else { plain }, buf)
}

/// Where a new field's columns start: `ext` is `Some(entries written so far)` for a field added
/// by late model extension, `mult` the number of column elements per entry for columns without a
/// collection or variant ancestor (`None` below one). Such columns of a late field are deferred:
/// the entries before it read as default values.
/// `streamed` lists the paths of the fields written as streamer fields.
#[derive(Clone, Copy)]
pub(crate) struct Origin<'a> {
    pub ext: Option<u64>,
    pub mult: Option<u64>,
    pub streamed: &'a [String],
}

impl Origin<'_> {
    fn times(self, n: u64) -> Self {
        Origin { mult: self.mult.map(|m| m * n), ..self }
    }
    fn nested(self) -> Self {
        Origin { mult: None, ..self }
    }
    fn first_element(self) -> u64 {
        match (self.ext, self.mult) {
            (Some(n), Some(m)) => n * m,
            _ => 0,
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn plan_field(
    desc: &mut Descriptor,
    cols: &mut Vec<Column>,
    counters: &mut usize,
    parent: Option<u32>,
    name: &str,
    te: &TypeExpr,
    compressed: bool,
    origin: Origin,
) -> Result<Plan> {
    if !origin.streamed.is_empty() {
        let path = match parent {
            Some(p) => format!("{}.{name}", desc.field_path(p)),
            None => name.to_string(),
        };
        if origin.streamed.contains(&path) {
            return plan_streamed(desc, cols, counters, parent, name, &path, te, compressed, origin);
        }
    }
    if let Some(bad) = misplaced_record(te) {
        return Err(Error::Unsupported(format!(
            "field '{name}': an untyped record (derived struct) inside {bad}; records go in fields, vectors and optionals"
        )));
    }
    if let TypeExpr::Array(_, n) | TypeExpr::Bitset(n) = te
        && (*n == 0 || *n > i32::MAX as u64)
    {
        return Err(Error::Unsupported(format!("field '{name}' of type '{}': fixed sizes from 1 to 2^31-1 are supported", te.name())));
    }
    let (role, repetition, alias) = match te {
        TypeExpr::Collection(..) | TypeExpr::Map(..) | TypeExpr::Optional(..) => (Role::Collection, None, String::new()),
        TypeExpr::Tuple(..) | TypeExpr::Record(..) | TypeExpr::Class(..) => (Role::Record, None, String::new()),
        TypeExpr::Variant(..) => (Role::Variant, None, String::new()),
        TypeExpr::Array(_, n) | TypeExpr::Bitset(n) => (Role::Leaf, Some(*n), String::new()),
        TypeExpr::Scalar(_, Some(a)) => (Role::Leaf, None, a.clone()),
        _ => (Role::Leaf, None, String::new()),
    };
    let (type_version, type_checksum) = class_version_checksum(name, te)?;
    let id = push_field(desc, parent, name, &te.name(), role, origin, |f| {
        (f.type_version, f.repetition) = (type_version, repetition);
        f.set_type_alias(alias);
        (f.flags, f.type_checksum) = (if type_checksum.is_some() { 0x04 } else { 0 }, type_checksum);
    });
    let counter = *counters;
    *counters += 1;
    let add_col = |desc: &mut Descriptor, cols: &mut Vec<Column>, ty: ColumnType, buf: ColumnBuf, o: Origin| add_column(desc, cols, id, ty, buf, o);
    let index_type = if compressed { ColumnType::SplitIndex64 } else { ColumnType::Index64 };
    Ok(match te {
        TypeExpr::Scalar(s, alias) => {
            // Double32_t is stored as SplitReal32/Real32, as ROOT does.
            let (ct, buf) = if alias.is_some() {
                (if compressed { ColumnType::SplitReal32 } else { ColumnType::Real32 }, f32::empty_buf())
            } else {
                scalar_column(*s, compressed)
            };
            let col = add_col(desc, cols, ct, buf, origin);
            Plan::Scalar { col, s: if alias.is_some() { Scalar::F32 } else { *s }, counter }
        }
        TypeExpr::String => {
            let idx = add_col(desc, cols, index_type, u64::empty_buf(), origin);
            let chars = add_col(desc, cols, ColumnType::Char, u8::empty_buf(), origin.nested());
            Plan::String { idx, chars, counter }
        }
        TypeExpr::Record(members) => {
            let mut children = Vec::new();
            let mut seen = std::collections::HashSet::with_capacity(members.len());
            for (m, t) in members {
                check_field_name(m).map_err(|e| Error::Invalid(format!("field '{name}': {e}")))?;
                if !seen.insert(m.as_str()) {
                    return Err(Error::Invalid(format!("field '{name}': member '{m}' appears twice")));
                }
                children.push(plan_field(desc, cols, counters, Some(id), m, t, compressed, origin)?);
            }
            Plan::Record { children, names: members.iter().map(|(m, _)| m.clone()).collect(), counter }
        }
        TypeExpr::Collection(_, item) | TypeExpr::Optional(_, item) => {
            let idx = add_col(desc, cols, index_type, u64::empty_buf(), origin);
            let child = plan_field(desc, cols, counters, Some(id), "_0", item, compressed, origin.nested())?;
            let kind = if matches!(te, TypeExpr::Optional(..)) { CollKind::Optional } else { CollKind::Seq };
            Plan::Collection { idx, child: Box::new(child), kind, counter }
        }
        TypeExpr::Map(_, k, v) => {
            let idx = add_col(desc, cols, index_type, u64::empty_buf(), origin);
            let pair = TypeExpr::Tuple("std::pair".into(), vec![(**k).clone(), (**v).clone()]);
            let child = plan_field(desc, cols, counters, Some(id), "_0", &pair, compressed, origin.nested())?;
            Plan::Collection { idx, child: Box::new(child), kind: CollKind::Map, counter }
        }
        TypeExpr::Tuple(_, items) => {
            let mut children = Vec::new();
            for (i, it) in items.iter().enumerate() {
                children.push(plan_field(desc, cols, counters, Some(id), &format!("_{i}"), it, compressed, origin)?);
            }
            Plan::Record { children, names: (0..items.len()).map(|i| format!("_{i}")).collect(), counter }
        }
        TypeExpr::Array(item, n) => {
            let child = plan_field(desc, cols, counters, Some(id), "_0", item, compressed, origin.times(*n))?;
            Plan::Array { n: *n, child: Box::new(child), counter }
        }
        TypeExpr::Bitset(n) => {
            let col = add_col(desc, cols, ColumnType::Bit, bool::empty_buf(), origin.times(*n));
            Plan::Bitset { n: *n, col, counter }
        }
        TypeExpr::Variant(items) => {
            let sw = add_col(desc, cols, ColumnType::Switch, <(u64, u32)>::empty_buf(), origin);
            let mut children = Vec::new();
            for (i, it) in items.iter().enumerate() {
                children.push(plan_field(desc, cols, counters, Some(id), &format!("_{i}"), it, compressed, origin.nested())?);
            }
            Plan::Variant { sw, children, counter }
        }
        TypeExpr::Atomic(item) => {
            let child = plan_field(desc, cols, counters, Some(id), "_0", item, compressed, origin)?;
            Plan::Wrapper { child: Box::new(child), counter }
        }
        TypeExpr::Class(c) => {
            // Base classes first, as subfields `:_0`, `:_1`, ...; then the members.
            let mut children = Vec::new();
            let mut names: Vec<String> = Vec::new();
            for (i, b) in c.bases.iter().enumerate() {
                let bname = format!(":_{i}");
                children.push(plan_field(desc, cols, counters, Some(id), &bname, &TypeExpr::Class(Box::new(b.clone())), compressed, origin)?);
                names.push(bname);
            }
            let mut seen = std::collections::HashSet::with_capacity(c.members.len());
            for (m, t) in &c.members {
                check_field_name(m).map_err(|e| Error::Invalid(format!("field '{name}' (class {}): {e}", c.name)))?;
                if !seen.insert(m.as_str()) {
                    return Err(Error::Invalid(format!("field '{name}' (class {}): member '{m}' appears twice", c.name)));
                }
                if t.name().is_empty() {
                    return Err(Error::Unsupported(format!(
                        "field '{name}' (class {}): member '{m}' is an untyped record or collection; a class member needs a C++ type (a class, not a plain record)",
                        c.name
                    )));
                }
                children.push(plan_field(desc, cols, counters, Some(id), m, t, compressed, origin)?);
                names.push(m.clone());
            }
            Plan::Record { children, names, counter }
        }
        TypeExpr::Enum(_, s) => {
            // ROOT names the integer of an enum over std::int8_t `char` (its meta layer spells the
            // underlying type `Char_t`), stored in a Char column: written the same way.
            let int = if *s == Scalar::I8 { Scalar::Char } else { *s };
            let child = plan_field(desc, cols, counters, Some(id), "_0", &TypeExpr::Scalar(int, None), compressed, origin)?;
            Plan::Wrapper { child: Box::new(child), counter }
        }
    })
}

/// Appends a field under `parent` ([`crate::logical::build::push_field`]) marked as coming from
/// the header extension when `origin` says so, its other properties as `set` leaves them; returns
/// its id.
fn push_field(
    desc: &mut Descriptor,
    parent: Option<u32>,
    name: &str,
    type_name: &str,
    role: Role,
    origin: Origin,
    set: impl FnOnce(&mut FieldDescriptor),
) -> u32 {
    let id = crate::logical::build::push_field(desc, parent, role, name, type_name);
    let f = &mut desc.fields[id as usize];
    f.from_extension = origin.ext.is_some();
    set(f);
    id
}

/// Appends a column of type `ty` to field `id` (its buffer `buf`); returns its index in `cols`.
fn add_column(desc: &mut Descriptor, cols: &mut Vec<Column>, id: u32, ty: ColumnType, buf: ColumnBuf, o: Origin) -> usize {
    let cid = desc.columns.len() as u32;
    let first = o.first_element();
    desc.columns.push(ColumnDescriptor {
        id: cid,
        column_type: ty.to_u16(),
        bits_on_storage: ty.fixed_bits().unwrap_or(0),
        field_id: id,
        flags: if first > 0 { 1 } else { 0 },
        representation: 0,
        first_element: first,
        suppressed_deferred: false,
        value_range: None,
        from_extension: o.ext.is_some(),
    });
    desc.fields[id as usize].columns.push(cid);
    cols.push(Column::new(ty, buf));
    cols.len() - 1
}

/// A streamer field (role `Streamer`, ROOT's `RStreamerField`): the class's name, its version
/// (-1, as ROOT records it, for a class without `ClassDef`) and checksum; an index column and a
/// byte column.
#[allow(clippy::too_many_arguments)]
fn plan_streamed(
    desc: &mut Descriptor,
    cols: &mut Vec<Column>,
    counters: &mut usize,
    parent: Option<u32>,
    name: &str,
    path: &str,
    te: &TypeExpr,
    compressed: bool,
    origin: Origin,
) -> Result<Plan> {
    let TypeExpr::Class(c) = te else {
        let t = if te.name().is_empty() { "an untyped record or collection".to_string() } else { format!("of type '{}'", te.name()) };
        return Err(Error::Invalid(format!("field '{path}' is marked streamer but is {t}: only class fields can be streamer fields")));
    };
    class_version_checksum(path, te)?;
    crate::write::streamer::streamed_encode::check_streamable(c).map_err(|e| Error::Unsupported(format!("streamer field '{path}': {e}")))?;
    let version = if crate::logical::class_streamers::has_class_def(c) { c.version } else { u32::MAX };
    let id = push_field(desc, parent, name, &c.name, Role::Streamer, origin, |f| {
        (f.type_version, f.flags, f.type_checksum) = (version, 0x04, Some(c.type_checksum()));
    });
    let counter = *counters;
    *counters += 1;
    let index_type = if compressed { ColumnType::SplitIndex64 } else { ColumnType::Index64 };
    let idx = add_column(desc, cols, id, index_type, u64::empty_buf(), origin);
    let bytes = add_column(desc, cols, id, ColumnType::Byte, u8::empty_buf(), origin.nested());
    Ok(Plan::Streamed { idx, bytes, class: std::sync::Arc::new((**c).clone()), counter })
}

/// The type version and type checksum of a class field (checking its name); (0, None) for
/// every other field. An enum's underlying type must be an integer.
fn class_version_checksum(field: &str, te: &TypeExpr) -> Result<(u32, Option<u32>)> {
    let check_type_name = |what: &str, n: &str| -> Result<()> {
        let ok = !n.is_empty()
            && !n.starts_with("std::")
            && n.split("::").all(|part| {
                let mut ch = part.chars();
                ch.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        if ok {
            Ok(())
        } else {
            Err(Error::Invalid(format!("field '{field}': '{n}' is not a valid {what} name (a C++ identifier, optionally qualified with '::', outside std::)")))
        }
    };
    match te {
        TypeExpr::Class(c) => {
            check_type_name("class", &c.name)?;
            if c.bases.is_empty() && c.members.is_empty() {
                // ROOT writes empty classes too, but a record without subfields has no entries to
                // count for ROOT or uproot; refuse it rather than write a field nobody reads back.
                return Err(Error::Unsupported(format!("field '{field}': class {} has no members and no base classes", c.name)));
            }
            Ok((c.version, Some(c.type_checksum())))
        }
        TypeExpr::Enum(n, s) => {
            check_type_name("enum", n)?;
            if matches!(s, Scalar::F32 | Scalar::F64 | Scalar::Byte) {
                return Err(Error::Invalid(format!("field '{field}': enum {n} over {}: the underlying type of an enum is an integer", s.type_name())));
            }
            Ok((0, None))
        }
        _ => Ok((0, None)),
    }
}

/// Where an untyped record sits inside a type that needs a C++ name for it (anything but a
/// collection, an optional or another record), the name of that type.
fn misplaced_record(te: &TypeExpr) -> Option<String> {
    let inner: Vec<&TypeExpr> = match te {
        // Untyped collections (empty type name) hold any item, named or not.
        TypeExpr::Collection(_, i) | TypeExpr::Optional(_, i) if i.name().is_empty() => return None,
        TypeExpr::Record(_) | TypeExpr::Scalar(..) | TypeExpr::String | TypeExpr::Bitset(_) | TypeExpr::Enum(..) => return None,
        // Class members are checked one by one when the class is planned.
        TypeExpr::Class(_) => return None,
        TypeExpr::Collection(_, i) | TypeExpr::Optional(_, i) | TypeExpr::Array(i, _) | TypeExpr::Atomic(i) => vec![i],
        TypeExpr::Map(_, k, v) => vec![k, v],
        TypeExpr::Tuple(_, items) | TypeExpr::Variant(items) => items.iter().collect(),
    };
    inner.iter().any(|i| i.name().is_empty()).then(|| te.name())
}

/// The classes of the streamer fields among `plans` (nested ones too), each name once.
pub(crate) fn streamed_classes(plans: &[(String, Plan)]) -> Vec<ClassDef> {
    fn walk(p: &Plan, out: &mut Vec<ClassDef>) {
        match p {
            Plan::Streamed { class, .. } => {
                if !out.iter().any(|c| c.name == class.name) {
                    out.push((**class).clone());
                }
            }
            Plan::Collection { child, .. } | Plan::Array { child, .. } | Plan::Wrapper { child, .. } => walk(child, out),
            Plan::Record { children, .. } | Plan::Variant { children, .. } => children.iter().for_each(|c| walk(c, out)),
            Plan::Scalar { .. } | Plan::String { .. } | Plan::Bitset { .. } => {}
        }
    }
    let mut out = Vec::new();
    plans.iter().for_each(|(_, p)| walk(p, &mut out));
    out
}
