//! Running one test alone in a child process of this binary, for tests that measure the whole
//! process (its allocations, through `alloc_probe`) and so must not share it with the tests that
//! run beside them. The parent re-runs the binary with `--exact <test> --test-threads=1` and an
//! environment variable naming the test; the child runs the body with the probe enabled. The
//! child's output is shown, its failure fails the test, and a child that ran no test (a wrong
//! name) is a failure too.

use super::alloc_probe;
use std::process::Command;

const CHILD: &str = "RNTUPLE_ISOLATED_TEST";

/// Runs `body` alone in a child process. `module` is the caller's `module_path!()`, `test` its
/// function name.
pub fn run(module: &str, test: &str, body: impl FnOnce()) {
    // Test names leave out the crate: `integration::corruption_sweep` -> `corruption_sweep::<test>`.
    let name = format!("{}::{test}", module.split_once("::").map_or(module, |(_, rest)| rest));
    if std::env::var(CHILD).is_ok_and(|v| v == name) {
        alloc_probe::enable();
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe).args(["--exact", &name, "--test-threads=1", "--nocapture"]).env(CHILD, &name).output().expect("running the test binary again");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprint!("{stderr}");
    assert!(out.status.success(), "{name} failed in its own process ({}):\n{stdout}", out.status);
    assert!(stdout.contains("1 passed"), "{name}: the child process ran no test:\n{stdout}");
}
