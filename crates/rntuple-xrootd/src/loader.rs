//! Loads the XrdCl shim at run time: the shared object build.rs compiled, whose bytes this crate
//! holds, is handed to the dynamic loader on the first `root://` request, which then finds XrdCl
//! (`libXrdCl.so.3`, the shim's dependency) as for any program: `LD_LIBRARY_PATH`, the system's
//! directories. `RNTUPLE_XRDCL_LIB`, when set, names an XrdCl library loaded first (a conda or
//! CVMFS installation outside the search path). Without XrdCl every request fails with
//! [`missing`]'s message; nothing else of the program needs it.
//!
//! The one unsafe layer of the loading: `dlopen`/`dlsym` and the function pointers they give.
//! Invariants: the shim is loaded once and never unloaded (the pointers in [`Api`] live for the
//! process); each pointer is the symbol of the shim's `extern "C"` function of the same name, whose
//! C signature the field's type spells (src/shim.cpp, src/shim_write.cpp).

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::io::Write;
use std::os::fd::FromRawFd;
use std::sync::OnceLock;

/// The shim's bytes (build.rs built them for this target).
static SHIM: &[u8] = include_bytes!(env!("RNTUPLE_XRDCL_SHIM"));

/// The shim's opaque read handle.
#[repr(C)]
pub struct RxrdFile {
    _private: [u8; 0],
}

/// The shim's opaque write handle.
#[repr(C)]
pub struct RxrdWFile {
    _private: [u8; 0],
}

// The C signatures of the shim's functions (src/shim.cpp, src/shim_write.cpp).
type FnSettings = unsafe extern "C" fn(c_int, c_int, c_int, c_int, c_int);
type FnOpen = unsafe extern "C" fn(*const c_char, u16, *mut *mut RxrdFile, *mut u64, *mut c_char, usize) -> c_int;
type FnRead = unsafe extern "C" fn(*mut RxrdFile, u64, u32, *mut c_void, *mut u32, u16, *mut c_char, usize) -> c_int;
type FnReadv = unsafe extern "C" fn(*mut RxrdFile, u32, *const u64, *const u32, *const *mut c_void, u16, *mut u64, *mut c_char, usize) -> c_int;
type FnClose = unsafe extern "C" fn(*mut RxrdFile, u16);
type FnCreate = unsafe extern "C" fn(*const c_char, u16, *mut *mut RxrdWFile, *mut c_char, usize) -> c_int;
type FnWrite = unsafe extern "C" fn(*mut RxrdWFile, u64, u32, *const c_void, u16, *mut c_char, usize) -> c_int;
type FnWclose = unsafe extern "C" fn(*mut RxrdWFile, u16, *mut c_char, usize) -> c_int;
type FnMv = unsafe extern "C" fn(*const c_char, *const c_char, u16, *mut c_char, usize) -> c_int;
type FnRm = unsafe extern "C" fn(*const c_char, u16, *mut c_char, usize) -> c_int;

/// The shim's functions (src/shim.cpp and src/shim_write.cpp say what each does).
pub struct Api {
    pub settings: FnSettings,
    pub open: FnOpen,
    pub read: FnRead,
    pub readv: FnReadv,
    pub close: FnClose,
    pub create: FnCreate,
    pub write: FnWrite,
    pub wclose: FnWclose,
    pub mv: FnMv,
    pub rm: FnRm,
}

static API: OnceLock<Result<Api, String>> = OnceLock::new();

/// The shim's functions, loading it (and XrdCl) on the first call; the same answer (or message)
/// after that.
pub fn api() -> Result<&'static Api, String> {
    API.get_or_init(load).as_ref().map_err(String::clone)
}

/// What a `root://` request says when XrdCl cannot be loaded: the loader's reason and how to get it.
pub fn missing(reason: &str) -> String {
    format!(
        "root:// needs XRootD's client library, libXrdCl.so.3, which could not be loaded ({reason}); install it \
         (Debian/Ubuntu: apt-get install libxrdcl3; EL8/EL9: dnf install xrootd-client-libs; conda: conda install -c conda-forge xrootd), \
         put its directory in LD_LIBRARY_PATH, or name the library in RNTUPLE_XRDCL_LIB"
    )
}

fn dlerror_text() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message valid until the next dl* call on this thread.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        return "no reason given".into();
    }
    // SAFETY: non-null, NUL-terminated (above).
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn dlopen(path: &str, flags: c_int) -> Result<*mut c_void, String> {
    let c = CString::new(path).map_err(|_| format!("the path {path:?} holds a NUL byte"))?;
    // SAFETY: a valid C string; the handle is never closed (see the module's invariants).
    let h = unsafe { libc::dlopen(c.as_ptr(), flags) };
    if h.is_null() {
        return Err(dlerror_text());
    }
    Ok(h)
}

/// The shim's bytes in a file the loader can open: an anonymous memory file (`memfd_create`), or a
/// temporary file where that is refused. The second value is a path to remove after loading.
fn shim_file() -> Result<(std::fs::File, String, Option<std::path::PathBuf>), String> {
    // SAFETY: a NUL-terminated name and a flag; the descriptor returned is owned by the File below.
    let fd = unsafe { libc::memfd_create(c"rntuple-xrdcl-shim".as_ptr(), libc::MFD_CLOEXEC) };
    if fd >= 0 {
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
        f.write_all(SHIM).map_err(|e| format!("writing the XrdCl shim to memory: {e}"))?;
        return Ok((f, format!("/proc/self/fd/{fd}"), None));
    }
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let path = std::env::temp_dir().join(format!("rntuple-xrdcl-shim-{}-{nanos}.so", std::process::id()));
    // A new name only (O_EXCL): never through a link another user planted in a shared temporary directory.
    let mut f =
        std::fs::OpenOptions::new().write(true).create_new(true).open(&path).map_err(|e| format!("writing the XrdCl shim to {}: {e}", path.display()))?;
    f.write_all(SHIM).map_err(|e| format!("writing the XrdCl shim to {}: {e}", path.display()))?;
    let shown = path.display().to_string();
    Ok((f, shown, Some(path)))
}

fn load() -> Result<Api, String> {
    if let Some(lib) = std::env::var_os("RNTUPLE_XRDCL_LIB") {
        let lib = lib.to_string_lossy().into_owned();
        dlopen(&lib, libc::RTLD_NOW | libc::RTLD_GLOBAL).map_err(|e| missing(&format!("RNTUPLE_XRDCL_LIB={lib}: {e}")))?;
    }
    let (file, path, remove) = shim_file()?;
    let handle = dlopen(&path, libc::RTLD_NOW | libc::RTLD_LOCAL);
    drop(file);
    if let Some(p) = remove {
        let _ = std::fs::remove_file(p);
    }
    let handle = handle.map_err(|e| missing(&e))?;
    let sym = |name: &CStr| -> Result<*mut c_void, String> {
        // SAFETY: a live handle from dlopen and a NUL-terminated name.
        let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
        if p.is_null() {
            Err(format!("the XrdCl shim has no symbol {name:?}"))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol is the shim's extern "C" function of that name with the signature of
    // the field it fills (see the module's invariants); function and data pointers have one size here.
    unsafe {
        Ok(Api {
            settings: std::mem::transmute::<*mut c_void, FnSettings>(sym(c"rxrd_settings")?),
            open: std::mem::transmute::<*mut c_void, FnOpen>(sym(c"rxrd_open")?),
            read: std::mem::transmute::<*mut c_void, FnRead>(sym(c"rxrd_read")?),
            readv: std::mem::transmute::<*mut c_void, FnReadv>(sym(c"rxrd_readv")?),
            close: std::mem::transmute::<*mut c_void, FnClose>(sym(c"rxrd_close")?),
            create: std::mem::transmute::<*mut c_void, FnCreate>(sym(c"rxrd_create")?),
            write: std::mem::transmute::<*mut c_void, FnWrite>(sym(c"rxrd_write")?),
            wclose: std::mem::transmute::<*mut c_void, FnWclose>(sym(c"rxrd_wclose")?),
            mv: std::mem::transmute::<*mut c_void, FnMv>(sym(c"rxrd_mv")?),
            rm: std::mem::transmute::<*mut c_void, FnRm>(sym(c"rxrd_rm")?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shim_is_a_shared_object_that_needs_xrdcl() {
        assert_eq!(&SHIM[..4], b"\x7fELF");
        let needle = b"libXrdCl.so.3";
        assert!(SHIM.windows(needle.len()).any(|w| w == needle), "the shim's dependencies name libXrdCl.so.3");
    }

    #[test]
    fn the_message_says_what_to_install() {
        let m = missing("libXrdCl.so.3: cannot open shared object file");
        assert!(m.contains("libXrdCl.so.3") && m.contains("xrootd-client-libs") && m.contains("RNTUPLE_XRDCL_LIB"), "{m}");
    }
}
