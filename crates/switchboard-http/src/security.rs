//! DNS-rebinding protection (server side): `Host` and `Origin` allow-lists (`[HT-2]`, `[HT-3]`).
//!
//! * `Host` patterns are `name` (any port) or `name:port`, compared case-insensitively. IPv6
//!   literals keep their brackets: `[::1]`.
//! * `Origin` patterns are `scheme://host`, `scheme://host:port` or `scheme://host:*` (any port or
//!   none). An absent `Origin` (a non-browser client) is allowed; a present one must match.
//! * Either header sent twice is refused (400, RFC 9112 §3.2 for `Host`): a proxy or a browser
//!   reading the other copy would see another request than the one checked.

use http::HeaderMap;
use http::header::{HOST, ORIGIN};

/// The `Host` values allowed by default (any port).
pub(crate) const DEFAULT_ALLOWED_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];
/// The `Origin` values allowed by default (`*` stands for any port).
pub(crate) const DEFAULT_ALLOWED_ORIGINS: [&str; 3] =
    ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The `Host` header is missing or not allowed.
    Host(String),
    /// The `Origin` header is not allowed.
    Origin(String),
    /// A header that names one value was sent more than once (400).
    Repeated(&'static str),
}

/// The first of `names` that `headers` carries more than once.
pub(crate) fn repeated(headers: &HeaderMap, names: &[&'static str]) -> Option<&'static str> {
    names
        .iter()
        .copied()
        .find(|name| headers.get_all(*name).iter().nth(1).is_some())
}

/// Splits `host[:port]` (with `[v6]` literals) into a lowercase host and an optional port.
fn split_host_port(s: &str) -> Option<(String, Option<&str>)> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Some(rest) = s.strip_prefix('[') {
        let end = rest.find(']')?;
        let host = format!("[{}]", &rest[..end]).to_ascii_lowercase();
        let after = &rest[end + 1..];
        return match after.strip_prefix(':') {
            Some(p) if is_port(p) => Some((host, Some(p))),
            None if after.is_empty() => Some((host, None)),
            _ => None,
        };
    }
    match s.rsplit_once(':') {
        Some((h, p)) if is_port(p) && !h.contains(':') => Some((h.to_ascii_lowercase(), Some(p))),
        Some(_) => None,
        None => Some((s.to_ascii_lowercase(), None)),
    }
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `host` (a `Host` header value) matches one of `patterns`.
pub(crate) fn host_allowed(host: &str, patterns: &[String]) -> bool {
    let Some((name, port)) = split_host_port(host) else {
        return false;
    };
    patterns.iter().any(|p| match split_host_port(p) {
        Some((pn, None)) => pn == name,
        Some((pn, Some(pp))) => pn == name && port == Some(pp),
        None => false,
    })
}

/// Whether `origin` (an `Origin` header value) matches one of `patterns`.
pub(crate) fn origin_allowed(origin: &str, patterns: &[String]) -> bool {
    let Some((scheme, rest)) = origin.trim().split_once("://") else {
        return false;
    };
    if rest.contains('/') {
        return false;
    }
    let Some((name, port)) = split_host_port(rest) else {
        return false;
    };
    patterns.iter().any(|p| {
        let Some((ps, prest)) = p.split_once("://") else {
            return false;
        };
        if !ps.eq_ignore_ascii_case(scheme) {
            return false;
        }
        if let Some(phost) = prest.strip_suffix(":*") {
            return split_host_port(phost).is_some_and(|(pn, pp)| pp.is_none() && pn == name);
        }
        split_host_port(prest).is_some_and(|(pn, pp)| pn == name && pp == port)
    })
}

/// Checks `Host` and `Origin` against the allow-lists (`None` disables a check); either one
/// sent twice is refused, whatever the lists.
pub(crate) fn check(
    headers: &HeaderMap,
    uri_host: Option<&str>,
    hosts: Option<&[String]>,
    origins: Option<&[String]>,
) -> Result<(), Refusal> {
    if let Some(name) = repeated(headers, &["host", "origin"]) {
        return Err(Refusal::Repeated(name));
    }
    if let Some(allowed) = hosts {
        let host = match headers.get(HOST) {
            Some(v) => v.to_str().ok(),
            None => uri_host,
        };
        match host {
            Some(h) if host_allowed(h, allowed) => {}
            Some(h) => return Err(Refusal::Host(h.chars().take(200).collect())),
            None => return Err(Refusal::Host(String::new())),
        }
    }
    if let (Some(allowed), Some(origin)) = (origins, headers.get(ORIGIN)) {
        let o = origin.to_str().unwrap_or("");
        if !origin_allowed(o, allowed) {
            return Err(Refusal::Origin(o.chars().take(200).collect()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        DEFAULT_ALLOWED_HOSTS.map(String::from).to_vec()
    }

    fn origins() -> Vec<String> {
        DEFAULT_ALLOWED_ORIGINS.map(String::from).to_vec()
    }

    #[test]
    fn ht2_default_hosts() {
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST:1",
            "127.0.0.1",
            "127.0.0.1:3000",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(host_allowed(ok, &hosts()), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:8080",
            "localhost.evil.com",
            "127.0.0.2:80",
            "[::2]:1",
            "localhost:abc",
            "",
            "::1",
        ] {
            assert!(!host_allowed(bad, &hosts()), "{bad}");
        }
        let exact = vec!["example.com:8443".to_owned()];
        assert!(host_allowed("example.com:8443", &exact));
        assert!(!host_allowed("example.com:8444", &exact));
        assert!(!host_allowed("example.com", &exact));
    }

    #[test]
    fn ht3_default_origins() {
        for ok in [
            "http://localhost:5173",
            "http://localhost",
            "http://127.0.0.1:1",
            "http://[::1]:8080",
            "HTTP://LOCALHOST:3",
        ] {
            assert!(origin_allowed(ok, &origins()), "{ok}");
        }
        for bad in [
            "http://evil.example.com",
            "https://localhost:5173",
            "http://localhost.evil.com",
            "null",
            "http://localhost:5173/path",
            "",
        ] {
            assert!(!origin_allowed(bad, &origins()), "{bad}");
        }
        let exact = vec!["https://app.example.com".to_owned()];
        assert!(origin_allowed("https://app.example.com", &exact));
        assert!(!origin_allowed("https://app.example.com:444", &exact));
    }
}
