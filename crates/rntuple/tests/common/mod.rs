//! Shared helpers of the integration tests: where the test data is.

#![allow(dead_code)]

use std::path::PathBuf;

/// The shared test data directory (`RNTUPLE_TESTDATA`, default `../shared/testdata` beside the
/// repository). Returns `None` (after saying so loudly) when absent, and panics under `CI=true`.
pub fn testdata() -> Option<PathBuf> {
    let dir =
        std::env::var_os("RNTUPLE_TESTDATA").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata"));
    if dir.join("rntuple").is_dir() {
        return Some(dir);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("test data directory {} is missing (CI=true: this is a failure)", dir.display());
    }
    eprintln!("\n*** SKIPPING: test data directory {} not found; set RNTUPLE_TESTDATA ***\n", dir.display());
    None
}

/// Every `.root` file in a subdirectory of the test data, sorted.
pub fn root_files(sub: &str) -> Vec<PathBuf> {
    let Some(d) = testdata() else { return Vec::new() };
    let mut v: Vec<PathBuf> = std::fs::read_dir(d.join(sub))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "root")).collect())
        .unwrap_or_default();
    v.sort();
    v
}
