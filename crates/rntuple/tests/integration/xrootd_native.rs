//! `root://` URLs read by the core (`RNTupleFile::open`) through XrdCl, against Debian's XRootD
//! server started here on a loopback port: every shared test file gives the values of the local
//! read, and a missing file is a not-found error naming the URL.
//!
//! Needs the `xrootd` binary (xrootd-server; `RNTUPLE_XROOTD` names another) and a build with the
//! XRootD client: without them the test says so loudly and returns, unless missing pieces must fail
//! (`CI=true` or `RNTUPLE_TESTDATA` set: `make test` installs both).

use crate::common::{root_files, testdata, testdata_required};
use rntuple::RNTupleFile;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An XRootD server serving a directory read-only; stopped (killed) on drop.
struct Server {
    child: Child,
    dir: PathBuf,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn xrootd_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RNTUPLE_XROOTD") {
        return Some(p.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).chain([PathBuf::from("/usr/bin")]).map(|d| d.join("xrootd")).find(|p| p.is_file())
}

fn unavailable(what: &str) {
    if testdata_required() {
        panic!("{what} (CI=true or RNTUPLE_TESTDATA set: this is a failure, not a skip)");
    }
    eprintln!("\n*** SKIPPING the XRootD test: {what} ***\n");
}

fn start(bin: &Path, root: &Path) -> Server {
    // SAFETY: geteuid has no preconditions.
    let as_root = unsafe { libc::geteuid() } == 0;
    let mut last = String::new();
    for attempt in 0..5 {
        let port = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap();
        let dir = std::env::temp_dir().join(format!("rntuple-it-xrootd-{}-{attempt}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        if as_root {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let conf = dir.join("xrootd.cfg");
        let d = dir.display();
        std::fs::write(&conf, format!("all.export / r/o\noss.localroot {}\nall.adminpath {d}/admin\nall.pidpath {d}\nxrd.port {port}\n", root.display()))
            .unwrap();
        let mut cmd = Command::new(bin);
        cmd.arg("-c").arg(&conf).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        if as_root {
            cmd.args(["-R", "nobody"]);
        }
        let child = cmd.spawn().unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
        let mut server = Server { child, dir, port };
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(15) {
            if let Ok(Some(_)) = server.child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = server.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                last = err;
                break;
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return server;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("xrootd did not start in 5 attempts: {last}");
}

/// Entries compared: all of an RNTuple up to this many, else the first and the last half of it
/// (a shared file holds 10^8 entries of one integer in 11 kB).
const WINDOW: u64 = 4000;

/// Every RNTuple of a file as JSON lines: names, entries and the values of its entries (all, or
/// the first and last `WINDOW / 2`).
fn content(f: &RNTupleFile) -> Vec<String> {
    let mut out = Vec::new();
    for name in f.names() {
        let r = f.reader(&name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let n = r.num_entries();
        out.push(format!("{name}: {n} entries"));
        let windows = if n <= WINDOW { vec![(0, n)] } else { vec![(0, WINDOW / 2), (n - WINDOW / 2, n)] };
        for (a, b) in windows {
            let values = r.read_values(None, a, b).unwrap_or_else(|e| panic!("{name} [{a}, {b}): {e}"));
            out.extend(values.iter().map(|v| v.to_json().to_string()));
        }
    }
    out
}

#[test]
fn every_shared_file_over_root_urls_equals_the_local_read() {
    let Some(data) = testdata() else { return };
    if !rntuple_xrootd_available() {
        return unavailable("this build has no XRootD client (libxrootd-client-dev was not found when it was built)");
    }
    let Some(bin) = xrootd_binary() else { return unavailable("no xrootd binary (apt-get install xrootd-server, or set RNTUPLE_XROOTD)") };
    let server = start(&bin, &data);
    let mut files: Vec<PathBuf> = root_files("rntuple");
    files.extend(root_files("v1-older"));
    assert!(files.len() >= 40, "{} shared files", files.len());
    let mut read = 0;
    for path in &files {
        let rel = path.strip_prefix(&data).unwrap().display().to_string();
        let url = format!("root://127.0.0.1:{}//{rel}", server.port);
        eprintln!("xrootd_native: {url}");
        let local = match RNTupleFile::open(path) {
            Ok(f) => content(&f),
            Err(_) => continue, // a shared file the local reader refuses is not this test's concern
        };
        let remote = RNTupleFile::open(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert_eq!(content(&remote), local, "{url}");
        let (requests, bytes) = remote.io_counts().unwrap();
        assert!(requests >= 1 && bytes > 0, "{url}: {requests} requests, {bytes} bytes");
        read += 1;
    }
    assert!(read >= 40, "only {read} files compared");
    let missing = format!("root://127.0.0.1:{}//rntuple/no-such-file.root", server.port);
    let e = RNTupleFile::open(&missing).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains(&missing) && e.contains("no such file"), "{e}");
}

fn rntuple_xrootd_available() -> bool {
    // A build without the client refuses every root:// URL with this message.
    let e = RNTupleFile::open("root://127.0.0.1:1//probe.root").err().map(|e| e.to_string()).unwrap_or_default();
    !e.contains("no XRootD client") && !e.contains("`xrootd` feature is off")
}
