//! `rntuple import-json`: writes an RNTuple from entries in the JSON form of `dump`.

use super::select::field_list;
use super::Res;

#[allow(clippy::too_many_arguments)]
pub(crate) fn import_json(
    file: &str,
    ntuple: &str,
    schema: &str,
    input: &str,
    compression: rntuple::write::Compression,
    late: Option<&str>,
    late_at: usize,
    checkpoint_clusters: u64,
    columns: rntuple::write::ColumnOptions,
) -> Res {
    use rntuple::write::{WriteOptions, Writer};
    let schema: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(schema).map_err(|e| format!("--schema must be a JSON object of field name -> type name: {e}"))?;
    let fields: Vec<(String, String)> = schema
        .iter()
        .map(|(k, v)| v.as_str().map(|t| (k.clone(), t.to_string())).ok_or_else(|| format!("--schema: the type of '{k}' must be a string")))
        .collect::<Result<_, _>>()?;
    let text = if input == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        std::fs::read_to_string(input).map_err(|e| format!("reading {input}: {e}"))?
    };
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text).map_err(|e| format!("the input must be a JSON array of entries: {e}"))?;
    let late: Vec<&str> = late.map(field_list).unwrap_or_default();
    for l in &late {
        if !fields.iter().any(|(n, _)| n == l) {
            return Err(format!("--late-fields: '{l}' is not in the schema").into());
        }
    }
    let pairs: Vec<(&str, &str)> = fields.iter().filter(|(n, _)| !late.contains(&n.as_str())).map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut w = Writer::create(file, ntuple, &pairs, WriteOptions { compression, checkpoint_clusters, columns, ..super::write_defaults() })?;
    // A bad entry leaves no output (the writer is aborted: a dropped writer would commit).
    if let Err(e) = fill_entries(&mut w, &entries, &fields, &late, late_at) {
        w.abort();
        return Err(e);
    }
    w.commit()?;
    Ok(())
}

fn fill_entries(w: &mut rntuple::write::Writer, entries: &[serde_json::Value], fields: &[(String, String)], late: &[&str], late_at: usize) -> Res {
    for (i, e) in entries.iter().enumerate() {
        if i == late_at {
            for (n, t) in fields.iter().filter(|(n, _)| late.contains(&n.as_str())) {
                w.add_field(n, t)?;
            }
        }
        let mut v = rntuple::Value::from_json(e);
        if i < late_at {
            if let rntuple::Value::Record(m) = &mut v {
                m.retain(|(k, _)| !late.contains(&k.as_str()));
            }
        }
        w.fill(&v).map_err(|err| format!("entry {i}: {err}"))?;
    }
    Ok(())
}
