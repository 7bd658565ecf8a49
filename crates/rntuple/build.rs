//! Test support only: probes whether the temporary directory's file system accepts `O_DIRECT`.
//! Where it does not (tmpfs on older kernels, some overlay and network file systems), the
//! integration tests are compiled with `--cfg rntuple_no_direct_io`, which marks the direct-I/O
//! stress test `#[ignore]` with the reason, so that `cargo test` counts it as ignored instead of
//! passing without having run (tests/integration/parallel_stress.rs). Nothing of the library depends on it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(rntuple_no_direct_io)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TMPDIR");
    if !direct_io_supported() {
        // No cargo warning: the library's users would see it on every build; the ignored test
        // names the reason when the tests run.
        println!("cargo::rustc-cfg=rntuple_no_direct_io");
    }
}

#[cfg(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64")))]
fn direct_io_supported() -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    // The build script has no libc dependency: the flag's value on the two architectures probed.
    const O_DIRECT: i32 = if cfg!(target_arch = "x86_64") { 0o40000 } else { 0o200000 };
    let path = std::env::temp_dir().join(format!("rntuple-build-direct-io-probe-{}", std::process::id()));
    let ok = std::fs::OpenOptions::new().write(true).create(true).truncate(true).custom_flags(O_DIRECT).open(&path).is_ok();
    std::fs::remove_file(&path).ok();
    ok
}

/// Elsewhere not probed: the test runs, and fails loudly if `O_DIRECT` is refused.
#[cfg(not(all(target_os = "linux", any(target_arch = "x86_64", target_arch = "aarch64"))))]
fn direct_io_supported() -> bool {
    true
}
