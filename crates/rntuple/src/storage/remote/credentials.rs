//! Grid credentials found the way grid tools find them: a WLCG bearer token from `BEARER_TOKEN`,
//! else the file named by `BEARER_TOKEN_FILE`, else `$XDG_RUNTIME_DIR/bt_u<uid>`, else
//! `/tmp/bt_u<uid>` (the WLCG Bearer Token Discovery rules); an X.509 proxy (certificate, key and
//! chain in one PEM file) at `X509_USER_PROXY`, else `/tmp/x509up_u<uid>`; the grid's CA
//! certificates in `X509_CERT_DIR`, else `/etc/grid-security/certificates`. Only where a
//! credential comes from is ever shown in a message, never the token or the key.
//!
//! ```
//! use rntuple::storage::remote::credentials::token_from;
//! let env = |k: &str| (k == "BEARER_TOKEN").then(|| " abc.def \n".to_string());
//! let t = token_from(env, 1000).unwrap();
//! assert_eq!((t.token.as_str(), t.origin.as_str()), ("abc.def", "the variable BEARER_TOKEN"));
//! assert!(token_from(|_| None, u32::MAX).is_none() || std::path::Path::new(&format!("/tmp/bt_u{}", u32::MAX)).exists());
//! ```

use std::path::PathBuf;

/// A bearer token and where it was found.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The token, surrounding white space removed.
    pub token: String,
    /// Where it was found ("the variable BEARER_TOKEN", "the file /tmp/bt_u1000", ...).
    pub origin: String,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Token(from {})", self.origin)
    }
}

/// The token of this process's environment and user, if there is one.
pub fn bearer_token() -> Option<Token> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    token_from(|k| std::env::var(k).ok(), uid)
}

/// The discovery rules over an environment `env` and a user id: the first place that holds a
/// non-empty token wins.
pub fn token_from(env: impl Fn(&str) -> Option<String>, uid: u32) -> Option<Token> {
    if let Some(t) = env("BEARER_TOKEN").map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
        return Some(Token { token: t, origin: "the variable BEARER_TOKEN".into() });
    }
    // (the file, how it is named in messages)
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    if let Some(f) = env("BEARER_TOKEN_FILE").filter(|f| !f.is_empty()) {
        files.push((f.clone().into(), format!("BEARER_TOKEN_FILE={f}")));
    }
    if let Some(d) = env("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        let f = PathBuf::from(d).join(format!("bt_u{uid}"));
        let name = format!("the file {} ($XDG_RUNTIME_DIR/bt_u<uid>)", f.display());
        files.push((f, name));
    }
    let f = PathBuf::from(format!("/tmp/bt_u{uid}"));
    let name = format!("the file {}", f.display());
    files.push((f, name));
    files.into_iter().find_map(|(f, origin)| {
        // A token is a few kB at most: a larger file is no token file.
        let meta = std::fs::metadata(&f).ok()?;
        if !meta.is_file() || meta.len() > 64 << 10 {
            return None;
        }
        let t = std::fs::read_to_string(&f).ok()?.trim().to_string();
        (!t.is_empty()).then_some(Token { token: t, origin })
    })
}

/// Where a bearer token is looked for, for a message saying none was found.
pub const TOKEN_PLACES: &str = "BEARER_TOKEN, BEARER_TOKEN_FILE, $XDG_RUNTIME_DIR/bt_u<uid> or /tmp/bt_u<uid>";

/// A file holding an X.509 client credential (a grid proxy: certificate, private key and the
/// chain, PEM, in one file) and how it is named in messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct X509Proxy {
    /// The file.
    pub path: PathBuf,
    /// Where it was found ("X509_USER_PROXY=/path", "/tmp/x509up_u1000").
    pub origin: String,
}

/// The X.509 proxy of an environment `env` and a user id, as grid tools find it: the file named by
/// `X509_USER_PROXY` when set (whether or not it exists: a missing file is the reader's error to
/// report), else `/tmp/x509up_u<uid>` when that is a file.
///
/// ```
/// use rntuple::storage::remote::credentials::x509_proxy_from;
/// let p = x509_proxy_from(|k: &str| (k == "X509_USER_PROXY").then(|| "/p/x509".to_string()), 1000).unwrap();
/// assert_eq!((p.path.to_str(), p.origin.as_str()), (Some("/p/x509"), "X509_USER_PROXY=/p/x509"));
/// ```
pub fn x509_proxy_from(env: impl Fn(&str) -> Option<String>, uid: u32) -> Option<X509Proxy> {
    if let Some(p) = env("X509_USER_PROXY").filter(|p| !p.is_empty()) {
        return Some(X509Proxy { origin: format!("X509_USER_PROXY={p}"), path: p.into() });
    }
    let p = PathBuf::from(format!("/tmp/x509up_u{uid}"));
    p.is_file().then(|| X509Proxy { origin: p.display().to_string(), path: p })
}

/// The CA directory of an environment `env`: `X509_CERT_DIR` when set (with how it is named),
/// else `/etc/grid-security/certificates` when that is a directory.
///
/// ```
/// use rntuple::storage::remote::credentials::ca_dir_from;
/// let (dir, origin) = ca_dir_from(|k: &str| (k == "X509_CERT_DIR").then(|| "/cas".to_string())).unwrap();
/// assert_eq!((dir.to_str(), origin.as_str()), (Some("/cas"), "X509_CERT_DIR=/cas"));
/// ```
pub fn ca_dir_from(env: impl Fn(&str) -> Option<String>) -> Option<(PathBuf, String)> {
    if let Some(d) = env("X509_CERT_DIR").filter(|d| !d.is_empty()) {
        return Some((d.clone().into(), format!("X509_CERT_DIR={d}")));
    }
    let d = PathBuf::from("/etc/grid-security/certificates");
    d.is_dir().then(|| (d.clone(), d.display().to_string()))
}

/// This process's environment and user: [`x509_proxy_from`].
pub fn x509_proxy() -> Option<X509Proxy> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    x509_proxy_from(|k| std::env::var(k).ok(), uid)
}

/// This process's environment: [`ca_dir_from`].
pub fn ca_dir() -> Option<(PathBuf, String)> {
    ca_dir_from(|k| std::env::var(k).ok())
}

/// What an `https://` request presents, for a refusal's message: the bearer token's and the X.509
/// proxy's origins, or "no credential: ..." with where they were looked for.
///
/// ```
/// use rntuple::storage::remote::credentials::{https_tried, Token};
/// let t = Token { token: "secret".into(), origin: "BEARER_TOKEN_FILE=/t".into() };
/// assert!(https_tried(Some(&t), None).starts_with("the bearer token from BEARER_TOKEN_FILE=/t (no X.509 proxy"));
/// assert!(https_tried(None, None).starts_with("no credential: no bearer token in BEARER_TOKEN"));
/// ```
pub fn https_tried(token: Option<&Token>, proxy: Option<&X509Proxy>) -> String {
    match (token, proxy) {
        (Some(t), Some(p)) => format!("the bearer token from {} and the X.509 proxy {}", t.origin, p.origin),
        (Some(t), None) => format!("the bearer token from {} (no X.509 proxy in X509_USER_PROXY or /tmp/x509up_u<uid>)", t.origin),
        (None, Some(p)) => format!("the X.509 proxy {} (no bearer token in {TOKEN_PLACES})", p.origin),
        (None, None) => format!("no credential: no bearer token in {TOKEN_PLACES}, no X.509 proxy in X509_USER_PROXY or /tmp/x509up_u<uid>"),
    }
}

/// What a refused request tried, for its error message: where the token came from, or that
/// there was none and where one was looked for.
pub fn tried() -> String {
    match bearer_token() {
        Some(t) => format!("the bearer token from {}", t.origin),
        None => format!("no credential: no bearer token in {TOKEN_PLACES}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_follows_the_wlcg_order_and_skips_empty_places() {
        let dir = std::env::temp_dir().join(format!("rntuple-bt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("token");
        std::fs::write(&file, "from-file\n").unwrap();
        std::fs::write(dir.join("bt_u4242"), "from-xdg").unwrap();
        let f = file.display().to_string();
        let d = dir.display().to_string();
        let env = |vars: Vec<(&'static str, String)>| move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        let t = token_from(env(vec![("BEARER_TOKEN", "  ".into()), ("BEARER_TOKEN_FILE", f.clone())]), 4242).unwrap();
        assert_eq!(t.token, "from-file");
        assert_eq!(t.origin, format!("BEARER_TOKEN_FILE={f}"));
        let t = token_from(env(vec![("BEARER_TOKEN_FILE", "/nonexistent/x".into()), ("XDG_RUNTIME_DIR", d.clone())]), 4242).unwrap();
        assert_eq!(t.token, "from-xdg");
        assert!(!format!("{t:?}").contains("from-xdg"), "the token shows in Debug");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
