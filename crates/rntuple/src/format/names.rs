//! The format's rule for RNTuple and field names: non-empty, and none of `.`, `/`, `\`, space or
//! an ASCII control character (newline, tab, ...). ROOT refuses such names when it writes; this
//! writer refuses them too, so that every file it writes is one ROOT accepts.
//!
//! ```
//! use rntuple::format::names::check_name;
//! assert!(check_name("Jet_pt", "field").is_ok());
//! let e = check_name("Jet.pt", "field").unwrap_err().to_string();
//! assert!(e.contains("'.'"), "{e}");
//! ```

use crate::error::{Error, Result};

/// Checks `name` against the format's naming rule; `what` says what is named ("field",
/// "RNTuple") for the message, which states the rule.
pub fn check_name(name: &str, what: &str) -> Result<()> {
    let bad = if name.is_empty() {
        Some("is empty".to_string())
    } else if let Some(c) = name.chars().find(|c| matches!(c, '.' | '/' | '\\' | ' ')) {
        Some(format!("contains '{c}'"))
    } else {
        name.chars().find(|c| c.is_ascii_control()).map(|c| format!("contains the control character {:?}", c))
    };
    match bad {
        Some(why) => Err(Error::Invalid(format!("{what} name {name:?} {why}: names must be non-empty, without '.', '/', '\\', spaces or control characters"))),
        None => Ok(()),
    }
}

/// Checks the path of an RNTuple in a file, `dir/sub/name` (directories, then the RNTuple's
/// name, each by the naming rule); returns the directory path (empty at the top) and the name.
///
/// ```
/// use rntuple::format::names::check_path;
/// assert_eq!(check_path("d1/d2/Events", "RNTuple").unwrap(), ("d1/d2", "Events"));
/// assert_eq!(check_path("Events", "RNTuple").unwrap(), ("", "Events"));
/// assert!(check_path("d1//Events", "RNTuple").is_err());
/// ```
pub fn check_path<'a>(path: &'a str, what: &str) -> Result<(&'a str, &'a str)> {
    let Some((dir, name)) = path.rsplit_once('/') else {
        check_name(path, what)?;
        return Ok(("", path));
    };
    for part in dir.split('/') {
        check_name(part, "directory").map_err(|e| Error::Invalid(format!("{what} path {path:?}: {e}")))?;
    }
    check_name(name, what)?;
    Ok((dir, name))
}

#[cfg(test)]
mod tests {
    use super::{check_name, check_path};

    #[test]
    fn paths() {
        assert_eq!(check_path("a/b/E", "RNTuple").unwrap(), ("a/b", "E"));
        for bad in ["/E", "a//E", "a/", "a b/E", "a/.E", "a.b/E"] {
            assert!(check_path(bad, "RNTuple").is_err(), "{bad}");
        }
    }

    #[test]
    fn the_rule() {
        for ok in ["x", "_0", "Muon_pt", "événement", "a-b+c"] {
            assert!(check_name(ok, "field").is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("", "is empty"),
            ("a.b", "'.'"),
            ("dir/Events", "'/'"),
            ("a b", "' '"),
            ("a\\b", "'\\'"),
            ("a\nb", "control"),
            ("t\tab", "control"),
            ("x\u{7f}", "control"),
        ] {
            let e = check_name(bad, "field").unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("names must be"), "{bad:?}: {e}");
        }
    }
}
