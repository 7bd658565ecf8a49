//! Shared helpers of the integration tests: where the test data is.

#![allow(dead_code)]

use std::path::PathBuf;

/// Whether missing test data must fail the tests: `CI=true`, or `RNTUPLE_TESTDATA` set (it then
/// names a directory that should hold the data; `make test` always sets it).
pub fn testdata_required() -> bool {
    std::env::var("CI").as_deref() == Ok("true") || std::env::var_os("RNTUPLE_TESTDATA").is_some_and(|v| !v.is_empty())
}

/// The shared test data directory (`RNTUPLE_TESTDATA`, default `../shared/testdata` beside the
/// repository). Panics when it is absent and [`testdata_required`]; otherwise returns `None`
/// after saying so loudly (a plain `cargo test` on a machine without the data).
pub fn testdata() -> Option<PathBuf> {
    let dir = std::env::var_os("RNTUPLE_TESTDATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/testdata"));
    if dir.join("rntuple").is_dir() {
        return Some(dir);
    }
    if testdata_required() {
        panic!("test data directory {} is missing or has no rntuple/ (RNTUPLE_TESTDATA is set or CI=true: this is a failure, not a skip)", dir.display());
    }
    eprintln!("\n*** SKIPPING: test data directory {} not found; set RNTUPLE_TESTDATA ***\n", dir.display());
    None
}

/// Every `.root` file in a subdirectory of the test data, sorted. Empty only when the test data is
/// absent and not required; a present test data directory without `.root` files in `sub` panics.
pub fn root_files(sub: &str) -> Vec<PathBuf> {
    let Some(d) = testdata() else { return Vec::new() };
    let mut v: Vec<PathBuf> = std::fs::read_dir(d.join(sub))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "root")).collect())
        .unwrap_or_default();
    assert!(!v.is_empty(), "no .root files in {} (the test data is incomplete)", d.join(sub).display());
    v.sort();
    v
}

/// A small deterministic generator (SplitMix64) for the randomized tests: the same seed gives the same
/// schemas, values and damage on every machine.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Uniform in `0..n` as an index (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}
