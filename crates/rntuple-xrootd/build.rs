//! Compiles the C++ shim over XrdCl (src/shim.cpp) when XrdCl's headers are found, and sets
//! `cfg(xrdcl)`; otherwise the crate builds without a client (`available()` is false).

use std::path::PathBuf;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(xrdcl)");
    println!("cargo:rerun-if-changed=src/shim.cpp");
    println!("cargo:rerun-if-changed=src/shim_write.cpp");
    println!("cargo:rerun-if-env-changed=XROOTD_INCLUDE_DIR");
    println!("cargo:rerun-if-env-changed=XROOTD_LIB_DIR");
    println!("cargo:rerun-if-env-changed=RNTUPLE_NO_XROOTD");
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
    cc::Build::new().cpp(true).std("c++14").include(&include).file("src/shim.cpp").file("src/shim_write.cpp").warnings(false).compile("rntuple_xrdcl_shim");
    if let Some(lib) = std::env::var_os("XROOTD_LIB_DIR") {
        println!("cargo:rustc-link-search=native={}", PathBuf::from(lib).display());
    }
    println!("cargo:rustc-link-lib=dylib=XrdCl");
    println!("cargo:rustc-cfg=xrdcl");
}
