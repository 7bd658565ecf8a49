//! Whole-file operations: merge (hadd for RNTuples: pages copied), skim (fields, an entry range and
//! a selection, into a new file), check (read every page). Reports come back as JSON text in the
//! caller's buffer (the CLI's `--json` reports).

use crate::options::options_of;
use crate::read::pick_ntuple;
use crate::status::{guard, CError};
use crate::strings::{opt_str_arg, put, str_arg, str_list_arg, write_str};
use rntuple::ops::skim::{EntryRange, SkimRequest};
use rntuple::RNTupleFile;
use std::ffi::c_char;

/// Writes a JSON report into the caller's buffer, if one was given (`buf` null and `cap` 0: no report).
pub(crate) unsafe fn report(v: serde_json::Value, buf: *mut c_char, cap: usize, len: *mut usize) -> Result<(), CError> {
    if buf.is_null() && cap == 0 && len.is_null() {
        return Ok(());
    }
    unsafe { write_str(&v.to_string(), buf, cap, len) }
}

/// Merges `inputs[0..n_inputs]` (paths, URLs) into `output`, RNTuple `ntuple` (null: the first
/// input's only one) of equal schemas, copying pages (options 0: the defaults). The report
/// (`entries`, `clusters`, `pages`, `page_bytes`, `file_bytes`) goes into `report` as JSON when
/// given (null and 0: none).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_merge(
    inputs: *const *const c_char,
    n_inputs: usize,
    ntuple: *const c_char,
    output: *const c_char,
    options: u64,
    report_buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> i32 {
    guard("rntuple_merge", || {
        let ins = unsafe { str_list_arg(inputs, n_inputs, "inputs") }?;
        let first = ins.first().ok_or_else(|| CError::invalid("no input"))?;
        let output = unsafe { str_arg(output, "output") }?;
        let name = match unsafe { opt_str_arg(ntuple, "ntuple") }? {
            Some(n) => n.to_string(),
            None => pick_ntuple(&RNTupleFile::open(first)?, None)?,
        };
        let s = rntuple::ops::merge::merge(&ins, &name, output, options_of(options)?)?;
        let v = serde_json::json!({"entries": s.entries, "clusters": s.clusters, "pages": s.pages, "page_bytes": s.page_bytes, "file_bytes": s.file_bytes});
        unsafe { report(v, report_buf, cap, len) }
    })
}

/// Skims `inputs[0..n_inputs]` (paths, globs, URLs) into `output`: the top-level fields
/// `fields[0..n_fields]` (all when `fields` is null), the entries `[start, stop)` (0 and
/// `UINT64_MAX`: all; one input without a selection only) for which `where_expr` (null: all;
/// the CLI's `--where` language, `nMuon >= 2 && Muon_pt[0] > 20`) holds. Clusters kept whole are
/// copied, the rest re-encoded. The report (the CLI's `skim --json`) goes into `report` when given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_skim(
    inputs: *const *const c_char,
    n_inputs: usize,
    ntuple: *const c_char,
    output: *const c_char,
    fields: *const *const c_char,
    n_fields: usize,
    where_expr: *const c_char,
    start: u64,
    stop: u64,
    options: u64,
    report_buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> i32 {
    guard("rntuple_skim", || {
        let ins = unsafe { str_list_arg(inputs, n_inputs, "inputs") }?;
        if ins.is_empty() {
            return Err(CError::invalid("no input"));
        }
        let output = unsafe { str_arg(output, "output") }?;
        let fields = unsafe { crate::read::projection(fields, n_fields) }?;
        let req = SkimRequest {
            inputs: ins.iter().map(|s| s.to_string()).collect(),
            ntuple: unsafe { opt_str_arg(ntuple, "ntuple") }?.map(str::to_string),
            fields: fields.map(|v| v.iter().map(|s| s.to_string()).collect()),
            entries: (start != 0 || stop != u64::MAX).then_some(EntryRange::Clamped(start, stop)),
            where_: unsafe { opt_str_arg(where_expr, "where_expr") }?.map(str::to_string),
            ..Default::default()
        };
        let r = rntuple::ops::skim::run(&req, output, options_of(options)?, &|_, _| {})?;
        unsafe { report(r.to_json(), report_buf, cap, len) }
    })
}

/// Reads every page of every readable field of RNTuple `ntuple` (null: the only one) of `path`,
/// as `rntuple check` does. `*problems` receives the number of (field, cluster) units that could
/// not be read (0: the file is sound; the call itself succeeds either way). The report (`entries`,
/// `clusters`, `fields`, `pages`, `stored_bytes`, `uncompressed_bytes`, `skipped_fields`, `problems`
/// with `field`, `cluster`, `first_entry`, `end_entry`, `error`) goes into `report` when given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rntuple_check(
    path: *const c_char,
    ntuple: *const c_char,
    problems: *mut u64,
    report_buf: *mut c_char,
    cap: usize,
    len: *mut usize,
) -> i32 {
    guard("rntuple_check", || {
        crate::strings::need(problems, "problems")?;
        let path = unsafe { str_arg(path, "path") }?;
        let f = RNTupleFile::open(path)?;
        let name = pick_ntuple(&f, unsafe { opt_str_arg(ntuple, "ntuple") }?)?;
        let c = f.reader(&name)?.check(|_, _| {});
        unsafe { put(problems, c.problems.len() as u64, "problems") }?;
        let v = serde_json::json!({
            "entries": c.entries, "clusters": c.clusters, "fields": c.fields, "pages": c.pages,
            "stored_bytes": c.stored_bytes, "uncompressed_bytes": c.uncompressed_bytes,
            "skipped_fields": c.skipped_fields.iter().map(|(f, why)| serde_json::json!({"field": f, "reason": why})).collect::<Vec<_>>(),
            "problems": c.problems.iter().map(|p| serde_json::json!({
                "field": p.field, "cluster": p.cluster, "first_entry": p.entries.0, "end_entry": p.entries.1, "error": p.error,
            })).collect::<Vec<_>>(),
        });
        unsafe { report(v, report_buf, cap, len) }
    })
}
