//! Grid credentials found the way grid tools find them: a WLCG bearer token from `BEARER_TOKEN`,
//! else the file named by `BEARER_TOKEN_FILE`, else `$XDG_RUNTIME_DIR/bt_u<uid>`, else
//! `/tmp/bt_u<uid>` (the WLCG Bearer Token Discovery rules). Only where a token comes from is
//! ever shown in a message, never the token.
//!
//! ```
//! use rntuple::storage::credentials::token_from;
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
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(f) = env("BEARER_TOKEN_FILE").filter(|f| !f.is_empty()) {
        files.push(f.into());
    }
    if let Some(d) = env("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        files.push(PathBuf::from(d).join(format!("bt_u{uid}")));
    }
    files.push(PathBuf::from(format!("/tmp/bt_u{uid}")));
    files.into_iter().find_map(|f| {
        // A token is a few kB at most: a larger file is no token file.
        let meta = std::fs::metadata(&f).ok()?;
        if !meta.is_file() || meta.len() > 64 << 10 {
            return None;
        }
        let t = std::fs::read_to_string(&f).ok()?.trim().to_string();
        (!t.is_empty()).then(|| Token { token: t, origin: format!("the file {}", f.display()) })
    })
}

/// What a refused request tried, for its error message: where the token came from, or that
/// there was none and where one was looked for.
pub fn tried() -> String {
    match bearer_token() {
        Some(t) => format!("the bearer token from {}", t.origin),
        None => "no credential: no bearer token in BEARER_TOKEN, BEARER_TOKEN_FILE, $XDG_RUNTIME_DIR/bt_u<uid> or /tmp/bt_u<uid>".into(),
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
        assert!(t.origin.contains(&f));
        let t = token_from(env(vec![("BEARER_TOKEN_FILE", "/nonexistent/x".into()), ("XDG_RUNTIME_DIR", d.clone())]), 4242).unwrap();
        assert_eq!(t.token, "from-xdg");
        assert!(!format!("{t:?}").contains("from-xdg"), "the token shows in Debug");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
