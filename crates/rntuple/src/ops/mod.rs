//! Operations on whole datasets that read one file and write another: merging and skimming.
//! They sit above both the reader and the writer (which do not know each other) and trade in the
//! writer's currency, the relocatable sealed cluster. A skim goes through [`skim::run`], which
//! picks its engine: `skim_one` (one input, no selection) or `select`. And `read_selected`: a
//! read with a selection pushed into it, clusters where no entry passes left unread.
//!
//! ```
//! use rntuple::ops::{merge, skim};
//! use rntuple::write::WriteOptions;
//! # let dir = std::env::temp_dir();
//! # let a = dir.join(format!("rntuple-doc-ops-a-{}.root", std::process::id()));
//! # let b = dir.join(format!("rntuple-doc-ops-b-{}.root", std::process::id()));
//! # let out = dir.join(format!("rntuple-doc-ops-out-{}.root", std::process::id()));
//! # for p in [&a, &b] {
//! #     let mut w = rntuple::write::Writer::create(p, "Events", &[("x", "std::int32_t")], Default::default())?;
//! #     for i in 0..3 { w.fill(&rntuple::Value::Record(vec![("x".into(), rntuple::Value::Int(i))]))?; }
//! #     w.commit()?;
//! # }
//! # let skimmed = dir.join(format!("rntuple-doc-ops-skimmed-{}.root", std::process::id()));
//! // Two inputs of three entries each (x = 0, 1, 2) merged, then the entries with x >= 2 kept.
//! assert_eq!(merge::merge(&[&a, &b], "Events", &out, WriteOptions::default())?.entries, 6);
//! let req = skim::SkimRequest { inputs: vec![out.display().to_string()], where_: Some("x >= 2".into()), ..Default::default() };
//! let report = skim::run(&req, &skimmed, WriteOptions::default(), &|_, _| {})?;
//! assert_eq!(report.to_json()["entries"], 2);
//! # std::fs::remove_file(&skimmed)?;
//! # for p in [&a, &b, &out] { std::fs::remove_file(p)?; }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod merge;
pub(crate) mod merge_attrs;
mod merge_cluster;
mod merge_schema;
mod merge_union;
mod page_copy;
crate::unstable_mod! {
    read_selected
}
crate::unstable_mod! {
    select
}
pub(crate) mod select_attrs;
pub mod skim;
mod skim_missing;
mod skim_one;
