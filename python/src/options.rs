//! Write options as Python keyword arguments, by name through the library's option table
//! (`WriteOptions::OPTIONS`), so that every option the library declares is accepted, listed and
//! defaulted here without being named again.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rntuple::write::WriteOptions;
use rntuple::write::{ColumnOptions, FloatRepr, OptionInfo, OptionKind, OptionValue};

use crate::errors::OrRaise;

/// The option names in declaration order (`WRITE_OPTION_NAMES`, error messages).
pub(crate) fn option_names() -> Vec<&'static str> {
    WriteOptions::OPTIONS.iter().map(|o| o.name).collect()
}

/// What an option takes, for the message of a bad value.
fn takes(info: &OptionInfo) -> &'static str {
    match info.kind {
        OptionKind::Bool => "a bool",
        OptionKind::UInt if info.name == "compression" => "a non-negative integer (algorithm * 100 + level)",
        OptionKind::UInt if info.name.ends_with("_size") || info.name.ends_with("_budget") => "a number of bytes",
        OptionKind::UInt => "a non-negative integer",
    }
}

/// Builds `WriteOptions` from keyword arguments: an unknown name or a value of the wrong kind is a
/// `TypeError` naming the option (and what it takes); options that do not fit together are a
/// `ValueError` (`InvalidArgumentError`) from `WriteOptions::validate`.
pub(crate) fn write_options(opts: Option<&Bound<'_, PyDict>>) -> PyResult<WriteOptions> {
    let mut o = WriteOptions::default();
    let Some(d) = opts else { return Ok(o) };
    for (k, v) in d.iter() {
        let k: String = k.extract()?;
        if k == "columns" {
            o.columns = column_options(&v)?;
            continue;
        }
        if k == "projections" {
            o.projections = projections(&v)?;
            continue;
        }
        let Some(info) = WriteOptions::OPTIONS.iter().find(|i| i.name == k) else {
            return Err(PyTypeError::new_err(format!("unknown write option '{k}' (known: {})", option_names().join(", "))));
        };
        let bad = || PyTypeError::new_err(format!("write option '{k}' must be {}, got {v:.60}", takes(info)));
        let value = match info.kind {
            OptionKind::Bool => v.extract().map(OptionValue::Bool),
            OptionKind::UInt => v.extract().map(OptionValue::UInt),
        }
        .map_err(|_| bad())?;
        // The kind matches; what remains is a number too large for the option's type (a
        // `TypeError`, as for any option), or a compression setting of an unknown algorithm (the
        // library's error, as when a writer is made with it).
        if let Err(e) = o.set(&k, value) {
            let too_large = matches!(value, OptionValue::UInt(u) if u > u64::from(u32::MAX));
            return if info.name == "compression" && !too_large { Err::<WriteOptions, _>(e).or_raise(d.py()) } else { Err(bad()) };
        }
    }
    o.validate().or_raise(d.py())?;
    Ok(o)
}

/// Column options from `[(field path, {"half": True} | {"truncate": bits} | {"quantize": (min, max,
/// bits)} | {"streamer": True}), ...]` (what the Python layer makes of `(type, options)` schema entries); a malformed
/// entry is a `TypeError` naming the field.
fn column_options(v: &Bound<'_, PyAny>) -> PyResult<ColumnOptions> {
    let mut out = ColumnOptions::new();
    for item in v.try_iter()? {
        let item = item?;
        let (path, d): (String, Bound<'_, PyDict>) =
            item.extract().map_err(|_| PyTypeError::new_err(format!("column options must be (field path, dict) pairs, got {item:.100}")))?;
        let bad = |what: &str| {
            PyTypeError::new_err(format!(
                "field '{path}': {what}; column options are {{'half': True}}, {{'truncate': bits}}, {{'quantize': (min, max, bits)}} or {{'streamer': True}}"
            ))
        };
        if d.len() != 1 {
            return Err(bad("one column option per field"));
        }
        for (k, val) in d.iter() {
            let k: String = k.extract().map_err(|_| bad("option names are strings"))?;
            let bits = |b: i64| u8::try_from(b).unwrap_or(u8::MAX);
            let repr = match k.as_str() {
                "streamer" => {
                    if val.extract::<bool>().map_err(|_| bad("'streamer' takes True"))? {
                        out.set_streamer(&path);
                    }
                    continue;
                }
                "half" if val.extract::<bool>().map_err(|_| bad("'half' takes True"))? => FloatRepr::Half,
                "half" => continue,
                "truncate" => FloatRepr::Truncated { bits: bits(val.extract().map_err(|_| bad("'truncate' takes a number of bits"))?) },
                "quantize" => {
                    let (min, max, b): (f64, f64, i64) = val.extract().map_err(|_| bad("'quantize' takes (min, max, bits)"))?;
                    FloatRepr::Quantized { min, max, bits: bits(b) }
                }
                other => return Err(bad(&format!("unknown column option '{other}'"))),
            };
            repr.validate().map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("field '{path}': {e}")))?;
            out.set(&path, repr);
        }
    }
    Ok(out)
}

/// The default write options as a dict (ROOT's `RNTupleWriteOptions` defaults).
#[pyfunction]
pub(crate) fn default_write_options(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let o = WriteOptions::default();
    let d = PyDict::new(py);
    for info in WriteOptions::OPTIONS {
        match o.get(info.name) {
            Some(OptionValue::Bool(b)) => d.set_item(info.name, b)?,
            Some(OptionValue::UInt(u)) => d.set_item(info.name, u)?,
            None => {}
        }
    }
    Ok(d)
}

/// Adds `default_write_options` and `WRITE_OPTION_NAMES` to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(default_write_options, m)?)?;
    m.add("WRITE_OPTION_NAMES", option_names())?;
    Ok(())
}

/// The `projections` option: `{name: "collection.member"}` (an `RVec` of the member of the
/// collection's records) or `{name: "collection"}` (its sizes, `RNTupleCardinality`).
fn projections(v: &Bound<'_, PyAny>) -> PyResult<Vec<rntuple::write::Projection>> {
    use rntuple::write::Projection;
    let d = v
        .downcast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("write option 'projections' must be a dict {name: \"collection.member\" or \"collection\"}"))?;
    let mut out = Vec::new();
    for (name, source) in d.iter() {
        let (name, source): (String, String) = (name.extract()?, source.extract()?);
        out.push(match source.split_once('.') {
            Some((c, m)) => Projection::Member { name, collection: c.to_string(), member: m.to_string() },
            None => Projection::Cardinality { name, collection: source },
        });
    }
    Ok(out)
}
