//! `rntuple check`: reads every page of every field and reports what is damaged.

use super::{human, Res};
use crate::progress::progress_bar;
use rntuple::RNTupleFile;

pub(crate) fn check(path: &str, only: Option<&str>, json: bool, progress: bool) -> Res {
    let f = RNTupleFile::open(path)?;
    let names: Vec<String> = match only {
        Some(n) => vec![n.to_string()],
        None => f.names(),
    };
    if names.is_empty() {
        return Err("the file holds no RNTuple".into());
    }
    if !json {
        println!("file: {path}");
    }
    let (mut damaged, mut out) = (0usize, Vec::new());
    for name in &names {
        let r = match f.reader(name) {
            Ok(r) => r,
            Err(e) => {
                damaged += 1;
                if json {
                    out.push(serde_json::json!({"name": name, "error": e.to_string()}));
                } else {
                    println!("RNTuple '{name}': cannot be read: {e}");
                }
                continue;
            }
        };
        let pb = progress_bar(0, "checked", progress);
        let rep = r.check(|done, total| {
            pb.set_length(total);
            pb.set_position(done);
        });
        pb.finish_and_clear();
        damaged += rep.problems.len();
        if json {
            let problems: Vec<serde_json::Value> = rep
                .problems
                .iter()
                .map(|p| serde_json::json!({"field": p.field, "cluster": p.cluster, "first_entry": p.entries.0, "end_entry": p.entries.1, "error": p.error}))
                .collect();
            let skipped: serde_json::Map<String, serde_json::Value> = rep.skipped_fields.iter().map(|(k, v)| (k.clone(), v.clone().into())).collect();
            out.push(serde_json::json!({"name": name, "entries": rep.entries, "clusters": rep.clusters, "fields": rep.fields, "pages": rep.pages,
                "stored_bytes": rep.stored_bytes, "uncompressed_bytes": rep.uncompressed_bytes, "skipped_fields": skipped, "problems": problems}));
        } else {
            let verdict = if rep.problems.is_empty() { "OK".to_string() } else { format!("{} damaged (field, cluster) pairs", rep.problems.len()) };
            let n = |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
            println!(
                "RNTuple '{name}': {}, {}, {}, {} ({} stored, {} uncompressed): {verdict}",
                n(rep.entries as usize, "entry", "entries"),
                n(rep.clusters, "cluster", "clusters"),
                n(rep.fields, "field", "fields"),
                n(rep.pages as usize, "page", "pages"),
                human(rep.stored_bytes),
                human(rep.uncompressed_bytes)
            );
            for (field, why) in &rep.skipped_fields {
                println!("  not checked: field '{field}': {why}");
            }
            for p in &rep.problems {
                println!("  cluster {} (entries {}..{}), field '{}': {}", p.cluster, p.entries.0, p.entries.1, p.field, p.error);
            }
        }
    }
    if json {
        println!("{}", serde_json::json!({"file": path, "ok": damaged == 0, "ntuples": out}));
    }
    if damaged > 0 {
        return Err(format!("{path}: {damaged} problem(s) found").into());
    }
    Ok(())
}
