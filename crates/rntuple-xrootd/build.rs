//! Builds the C++ shim over XrdCl (src/shim.cpp, src/shim_write.cpp) into a shared object of its
//! own when XrdCl's headers are found, and sets `cfg(xrdcl)`; otherwise the crate builds without a
//! client (`available()` is false).
//!
//! The shim is not linked into this crate: its bytes are (`include_bytes!`, `RNTUPLE_XRDCL_SHIM`),
//! and src/loader.rs loads them at the first `root://` request, when XrdCl (`libXrdCl.so.3`) is
//! looked up as any shared library is. A program built here therefore starts and reads every
//! other URL where XrdCl is not installed (a wheel, a relocatable tarball), and says what is
//! missing at a `root://` request. XrdCl's interface is C++ (std::string), so the shim is compiled
//! by the system's C++ compiler against the C++ runtime XrdCl uses (`RNTUPLE_XRDCL_CXX`, default
//! `c++`), never by `CXX` (a cross or zig compiler a wheel build sets for the Rust crates' C code).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(xrdcl)");
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-changed=src/shim_write.cpp");
    println!("cargo:rerun-if-env-changed=XROOTD_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=XROOTD_LIB_DIR");
    println!("cargo:rerun-if-env-changed=RNTUPLE_NO_XROOTD");
    println!("cargo:rerun-if-env-changed=RNTUPLE_XRDCL_CXX");
    if std::env::var_os("RNTUPLE_NO_XROOTD").is_some() {
        return;
    }
    let candidates: Vec<PathBuf> = match std::env::var_os("XROOTD_INCLUDE_DIR") {
        Some(d) => vec![PathBuf::from(d)],
        None => vec!["/usr/include/xrootd".into(), "/usr/local/include/xrootd".into(), "/opt/xrootd/include/xrootd".into()],
    };
    let Some(include) = candidates.into_iter().find(|d| d.join("XrdCl/XrdClFile.hh").is_file()) else {
        println!(
            "cargo:warning=rntuple-xrootd: XrdCl headers not found (install libxrootd-client-dev or set XROOTD_INCLUDE_DIR): root:// URLs will be refused"
        );
        return;
    };
    println!("cargo:rerun-if-changed={}", include.join("XrdCl/XrdClFile.hh").display());
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("librntuple_xrdcl_shim.so");
    let cxx = std::env::var("RNTUPLE_XRDCL_CXX").unwrap_or_else(|_| "c++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(["-std=c++14", "-O2", "-fPIC", "-shared", "-w", "-Wl,--as-needed", "-Wl,-z,defs"]).arg("-I").arg(&include);
    cmd.args(["src/shim.cpp", "src/shim_write.cpp", "-o"]).arg(&out);
    if let Some(lib) = std::env::var_os("XROOTD_LIB_DIR") {
        cmd.arg("-L").arg(PathBuf::from(lib));
    }
    // The C++ runtime linked statically into the shim would clash with XrdCl's own: both dynamic.
    cmd.args(["-lXrdCl", "-lXrdUtils"]);
    match cmd.status() {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("rntuple-xrootd: building the XrdCl shim with {cxx} failed ({s}): set RNTUPLE_NO_XROOTD=1 to build without root://"),
        Err(e) => panic!("rntuple-xrootd: cannot run the C++ compiler {cxx}: {e} (set RNTUPLE_XRDCL_CXX, or RNTUPLE_NO_XROOTD=1)"),
    }
    println!("cargo:rustc-env=RNTUPLE_XRDCL_SHIM={}", out.display());
    println!("cargo:rustc-cfg=xrdcl");
}
