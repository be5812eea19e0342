//! Request headers the endpoint reads (server side): `Accept`, `Content-Type`,
//! `MCP-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID`. Header names ignore case.

use http::HeaderMap;
use http::header::{ACCEPT, CONTENT_TYPE};
use switchboard_transport::headers::{EVENT_STREAM, JSON, media_type};
use switchboard_types::ProtocolVersion;

pub(crate) use switchboard_transport::headers::{LAST_EVENT_ID, PROTOCOL_VERSION, SESSION_ID};

/// The media types named by `Accept` (parameters and `q` ignored; wildcards honoured).
fn accepts(headers: &HeaderMap, ty: &str) -> bool {
    let (main, _) = ty.split_once('/').unwrap_or((ty, ""));
    headers.get_all(ACCEPT).iter().any(|v| {
        v.to_str().unwrap_or("").split(',').any(|item| {
            let media = item.split(';').next().unwrap_or("").trim();
            media.eq_ignore_ascii_case(ty)
                || media == "*/*"
                || media
                    .strip_suffix("/*")
                    .is_some_and(|m| m.eq_ignore_ascii_case(main))
        })
    })
}

/// `[HT-5]`: a POST's `Accept` lists both `application/json` and `text/event-stream`.
pub(crate) fn post_accept_ok(headers: &HeaderMap) -> bool {
    accepts(headers, JSON) && accepts(headers, EVENT_STREAM)
}

/// `[HT-12]`: a GET's `Accept` includes `text/event-stream`.
pub(crate) fn get_accept_ok(headers: &HeaderMap) -> bool {
    accepts(headers, EVENT_STREAM)
}

/// The body is declared as `application/json` (parameters such as `charset` allowed).
pub(crate) fn content_type_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| media_type(v).eq_ignore_ascii_case(JSON))
}

/// The session id sent by the client, when present and readable.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get(SESSION_ID).and_then(|v| v.to_str().ok())
}

/// `[HT-23]`: the `MCP-Protocol-Version` header. `Ok(None)` when absent (the server then assumes
/// 2025-03-26); `Err(value)` for a value that is not a supported revision.
pub(crate) fn protocol_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, String> {
    let Some(v) = headers.get(PROTOCOL_VERSION) else {
        return Ok(None);
    };
    let s = v.to_str().map_err(|_| "<not visible ASCII>".to_owned())?;
    match ProtocolVersion::parse(s.trim()) {
        Some(p) if p.is_supported() => Ok(Some(p)),
        _ => Err(s.chars().take(64).collect()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use http::HeaderValue;

    fn with(name: &'static str, v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(name, HeaderValue::from_static(v));
        h
    }

    #[test]
    fn ht5_accept_needs_both_types() {
        assert!(post_accept_ok(&with(
            "accept",
            "application/json, text/event-stream"
        )));
        assert!(post_accept_ok(&with(
            "accept",
            "text/event-stream;q=0.9, application/json;q=1"
        )));
        assert!(post_accept_ok(&with("accept", "*/*")));
        assert!(!post_accept_ok(&with("accept", "application/json")));
        assert!(!post_accept_ok(&with("accept", "text/event-stream")));
        assert!(!post_accept_ok(&HeaderMap::new()));
        assert!(get_accept_ok(&with("accept", "text/event-stream")));
        assert!(!get_accept_ok(&with("accept", "application/json")));
    }

    #[test]
    fn ht23_protocol_version_header() {
        assert_eq!(protocol_version(&HeaderMap::new()), Ok(None));
        for v in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
            let mut h = HeaderMap::new();
            h.insert(PROTOCOL_VERSION, HeaderValue::from_str(v).unwrap());
            assert!(protocol_version(&h).unwrap().is_some(), "{v}");
        }
        assert!(protocol_version(&with(PROTOCOL_VERSION, "2026-07-28")).is_err());
        assert!(protocol_version(&with(PROTOCOL_VERSION, "1999-01-01")).is_err());
    }

    #[test]
    fn content_type_with_charset() {
        assert!(content_type_json(&with(
            "content-type",
            "application/json; charset=utf-8"
        )));
        assert!(!content_type_json(&with("content-type", "text/plain")));
        assert!(!content_type_json(&HeaderMap::new()));
    }
}
