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
    let (types, streamed) = super::json_schema::parse_schema(schema)?;
    let mut columns = columns;
    for f in &streamed {
        columns.set_streamer(f);
    }
    // Late fields are added by type name.
    let fields: Vec<(String, String)> = types.iter().map(|(n, t)| (n.clone(), t.name())).collect();
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
    for (n, t) in &types {
        if late.contains(&n.as_str()) && matches!(t, rntuple::logical::typename::TypeExpr::Class(_)) {
            return Err(format!("--late-fields: '{n}' is a class given as a JSON object; late fields are given by type name").into());
        }
    }
    let early: Vec<(String, rntuple::logical::typename::TypeExpr)> = types.into_iter().filter(|(n, _)| !late.contains(&n.as_str())).collect();
    let mut w = Writer::create_with_types(file, ntuple, &early, WriteOptions { compression, checkpoint_clusters, columns, ..super::write_defaults() })?;
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
