//! Grid credentials on HTTPS and S3 requests, found by [`super::credentials`]:
//!
//! * `https://`: the bearer token goes out as `Authorization: Bearer` (by `http_checks`, on
//!   requests to `https://` only, as gfal2/davix do: never over plain `http://`, and reqwest drops
//!   it on a redirect to another host); the X.509 proxy is the TLS client identity; the CA
//!   directory's certificates are trusted besides the system's roots.
//! * `s3://`: requests are signed with the AWS keys (`object_store`); the CA directory is
//!   trusted; no token, no client certificate.
//! * `http://`: nothing (a token is never sent in clear).
//!
//! A refusal (401, 403) becomes one line naming the status and the credential tried, never its
//! value ([`refusal`]).

use super::credentials::{self, Token, X509Proxy};
use crate::error::{Error, Result};
use object_store::client::HttpClient;
use object_store::{ClientConfigKey, ClientOptions};
use std::collections::HashSet;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// A credential or CA file larger than this is not one (a CA bundle is ~1 kB per certificate).
const FILE_LIMIT: u64 = 1 << 20;
/// Files looked at in a CA directory (IGTF's bundle has a few hundred).
const DIR_LIMIT: usize = 20_000;

/// What requests to one store present, and how a refusal names it.
pub(crate) struct HttpCredentials {
    /// The bearer token sent with every request (`https://` stores only).
    pub(crate) bearer: Option<Token>,
    identity: Option<reqwest::Identity>,
    roots: Vec<reqwest::Certificate>,
    /// For a refusal's message: what was presented, or "no credential: ...".
    pub(crate) tried: String,
    /// For a TLS failure's message: which CA certificates were trusted.
    trusted: String,
}

impl std::fmt::Debug for HttpCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HttpCredentials({}, {} extra CA certificates)", self.tried, self.roots.len())
    }
}

/// A local file's bytes, refused when larger than [`FILE_LIMIT`].
fn read_small(path: &Path, what: &str) -> Result<Vec<u8>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(format!("reading {what}"), e))?;
    let mut buf = Vec::new();
    f.take(FILE_LIMIT + 1).read_to_end(&mut buf).map_err(|e| Error::io(format!("reading {what}"), e))?;
    if buf.len() as u64 > FILE_LIMIT {
        return Err(Error::Invalid(format!("{what}: larger than {FILE_LIMIT} bytes, not a credential file")));
    }
    Ok(buf)
}

/// The proxy file as a TLS client identity: its certificates (the proxy's first, then the chain)
/// and its private key (PKCS#1, PKCS#8 or SEC1), in any order.
fn identity(proxy: &X509Proxy) -> Result<reqwest::Identity> {
    let what = format!("the X.509 proxy {}", proxy.origin);
    let pem = read_small(&proxy.path, &what)?;
    reqwest::Identity::from_pem(&pem).map_err(|e| Error::Invalid(format!("{what}: not a certificate and its private key in PEM ({e})")))
}

/// The distinct CA certificates of the PEM files of `dir` (hash links and `.pem` files alike; CRLs,
/// signing policies and other files skipped), each checked as a trust anchor: one a TLS library
/// would refuse is left out rather than failing every request.
fn ca_certificates(dir: &Path, origin: &str) -> Result<Vec<reqwest::Certificate>> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(format!("listing the CA directory {origin}"), e))?;
    let mut names: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).take(DIR_LIMIT).collect();
    names.sort();
    let mut seen = HashSet::new();
    let mut certs = Vec::new();
    for path in names {
        let skip = path.extension().and_then(|e| e.to_str()).is_some_and(|e| matches!(e, "signing_policy" | "namespaces" | "crl_url" | "info") || is_crl(e));
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if skip || !meta.is_file() || meta.len() > FILE_LIMIT {
            continue;
        }
        let Ok(pem) = read_small(&path, "a CA certificate") else { continue };
        for der in <pki_types::CertificateDer<'_> as pki_types::pem::PemObject>::pem_slice_iter(&pem).filter_map(|c| c.ok()) {
            if webpki::anchor_from_trusted_cert(&der).is_ok()
                && seen.insert(der.to_vec())
                && let Ok(c) = reqwest::Certificate::from_der(&der)
            {
                certs.push(c);
            }
        }
    }
    Ok(certs)
}

/// A CRL's extension in a hashed CA directory (`.r0`, `.r1`, ...).
fn is_crl(ext: &str) -> bool {
    ext.len() > 1 && ext.starts_with('r') && ext[1..].bytes().all(|b| b.is_ascii_digit())
}

impl HttpCredentials {
    /// The credentials of this process for a store reached by `scheme` (`http`, `https`, `s3`).
    /// A proxy or CA directory named by a variable that cannot be read is an error naming it.
    pub(crate) fn for_scheme(scheme: &str) -> Result<Self> {
        let (roots, trusted) = match (scheme, credentials::ca_dir()) {
            ("http", _) => (Vec::new(), String::new()),
            (_, None) => (Vec::new(), "the system's CA certificates (no X509_CERT_DIR, no /etc/grid-security/certificates)".into()),
            (_, Some((dir, origin))) => {
                let roots = ca_certificates(&dir, &origin)?;
                let n = roots.len();
                let trusted = format!("the system's CA certificates and {n} certificate{} from {origin}", if n == 1 { "" } else { "s" });
                (roots, trusted)
            }
        };
        match scheme {
            "https" => {
                let (bearer, proxy) = (credentials::bearer_token(), credentials::x509_proxy());
                let identity = proxy.as_ref().map(identity).transpose()?;
                let tried = credentials::https_tried(bearer.as_ref(), proxy.as_ref());
                Ok(HttpCredentials { bearer, identity, roots, tried, trusted })
            }
            "s3" => Ok(HttpCredentials { bearer: None, identity: None, roots, tried: s3_tried(|k| std::env::var(k).ok()), trusted }),
            _ => {
                let tried = match credentials::bearer_token() {
                    Some(t) => format!("no credential: a bearer token ({}) is only sent to https:// URLs", t.origin),
                    None => format!("no credential: plain http:// (and no bearer token in {})", credentials::TOKEN_PLACES),
                };
                Ok(HttpCredentials { bearer: None, identity: None, roots, tried, trusted })
            }
        }
    }

    /// The message of a request failed for a credential: a refusal (see [`refusal`]), or a TLS
    /// certificate failure with what was trusted and presented appended; `None` for others.
    pub(crate) fn explain(&self, e: &object_store::Error) -> Option<String> {
        if let Some(msg) = refusal(e, &self.tried) {
            return Some(msg);
        }
        let text = e.to_string();
        let tls = ["certificate", "CertificateRequired", "HandshakeFailure"].iter().any(|w| text.contains(w));
        (tls && !self.trusted.is_empty()).then(|| format!("{text} (trusted {}; presented {})", self.trusted, self.tried))
    }

    /// The HTTP client for `options`: `object_store`'s own when there is nothing to add, else a
    /// reqwest client built as `object_store` builds it (HTTP/1.1, no compression, the timeouts,
    /// `http://` only when allowed) with the client identity and the extra CA certificates.
    pub(crate) fn client(&self, options: &ClientOptions, connect: Duration, timeout: Duration) -> object_store::Result<HttpClient> {
        use object_store::client::HttpConnector;
        if self.identity.is_none() && self.roots.is_empty() {
            return object_store::client::ReqwestConnector::default().connect(options);
        }
        let allow_http = options.get_config_value(&ClientConfigKey::AllowHttp).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        let mut b = reqwest::Client::builder()
            .user_agent(concat!("rntuple/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(connect)
            .timeout(timeout)
            .http1_only()
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .https_only(!allow_http);
        for c in &self.roots {
            b = b.add_root_certificate(c.clone());
        }
        if let Some(id) = &self.identity {
            b = b.identity(id.clone());
        }
        let client = b
            .build()
            .map_err(|e| object_store::Error::Generic { store: "HTTP", source: format!("building the TLS client with {}: {e}", self.tried).into() })?;
        Ok(HttpClient::new(client))
    }

    /// A reqwest client builder that presents these credentials' TLS client identity and trusts
    /// the extra CA certificates, for requests made without `object_store` (the WebDAV uploads of
    /// `storage::remote::webdav_upload`); the caller sets the rest and adds the bearer token itself.
    pub(crate) fn reqwest_builder(&self) -> reqwest::ClientBuilder {
        let mut b = reqwest::Client::builder();
        for c in &self.roots {
            b = b.add_root_certificate(c.clone());
        }
        if let Some(id) = &self.identity {
            b = b.identity(id.clone());
        }
        b
    }

    /// What was trusted, for a TLS failure's message (empty for `http://`).
    pub(crate) fn trusted(&self) -> &str {
        &self.trusted
    }
}

/// What an S3 request is signed with, for a refusal's message (the key's variable, never its value).
fn s3_tried(env: impl Fn(&str) -> Option<String>) -> String {
    let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
    if env("AWS_SKIP_SIGNATURE").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        "no credential: unsigned requests (AWS_SKIP_SIGNATURE)".into()
    } else if set("AWS_ACCESS_KEY_ID") {
        let token = if set("AWS_SESSION_TOKEN") { " with AWS_SESSION_TOKEN" } else { "" };
        format!("the S3 key from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY{token}")
    } else if let Some(f) = env("AWS_WEB_IDENTITY_TOKEN_FILE").filter(|f| !f.is_empty()) {
        format!("the web identity token AWS_WEB_IDENTITY_TOKEN_FILE={f}")
    } else {
        "no credential: no AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the instance's metadata service was asked)".into()
    }
}

/// A refused request's one-line description ("the server answered 401 Unauthorized; tried ..."),
/// or `None` when `e` is no refusal. An S3 error page's `<Code>` is kept; other error pages, which
/// might echo what was sent, are not.
pub(crate) fn refusal(e: &object_store::Error, tried: &str) -> Option<String> {
    let status = match e {
        object_store::Error::Unauthenticated { .. } => "401 Unauthorized",
        object_store::Error::PermissionDenied { .. } => "403 Forbidden",
        _ => return None,
    };
    let text = e.to_string();
    let code = text
        .split_once("<Code>")
        .and_then(|(_, r)| r.split_once("</Code>"))
        .map(|(c, _)| c.trim())
        .filter(|c| !c.is_empty() && c.len() < 64 && c.chars().all(|ch| ch.is_ascii_alphanumeric()));
    let code = code.map(|c| format!(" ({c})")).unwrap_or_default();
    Some(format!("the server answered {status}{code}; tried {tried}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_names_the_variables_never_the_values() {
        let env = |vars: &'static [(&'static str, &'static str)]| move |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        let t = s3_tried(env(&[("AWS_ACCESS_KEY_ID", "AKIAXXX"), ("AWS_SECRET_ACCESS_KEY", "s3cr3t"), ("AWS_SESSION_TOKEN", "tok")]));
        assert_eq!(t, "the S3 key from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY with AWS_SESSION_TOKEN");
        assert!(s3_tried(env(&[])).starts_with("no credential: no AWS_ACCESS_KEY_ID"));
        assert!(s3_tried(env(&[("AWS_SKIP_SIGNATURE", "true")])).contains("unsigned"));
    }

    #[test]
    fn a_refusal_keeps_the_s3_code_and_drops_the_page() {
        let page = "<Error><Code>InvalidAccessKeyId</Code><Message>secret-ish</Message></Error>";
        let e = object_store::Error::PermissionDenied { path: "k".into(), source: page.into() };
        assert_eq!(refusal(&e, "X").as_deref(), Some("the server answered 403 Forbidden (InvalidAccessKeyId); tried X"));
        let e = object_store::Error::Unauthenticated { path: "k".into(), source: "<html>Bearer abc</html>".into() };
        assert_eq!(refusal(&e, "Y").as_deref(), Some("the server answered 401 Unauthorized; tried Y"));
        assert!(refusal(&object_store::Error::NotImplemented, "Z").is_none());
    }
}
