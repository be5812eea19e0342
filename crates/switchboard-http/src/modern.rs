//! The modern era on Streamable HTTP (revision 2026-07-28, SPEC-2026-NOTES §14): no sessions.
//! A POST whose `MCP-Protocol-Version` header names a revision without a handshake is served on
//! a connection of its own that the role starts in the modern era, with the request's `Mcp-*`
//! headers handed over untouched for the role to check against the body (this crate never reads
//! `params`). The answer is JSON when the final response comes first, with the status the
//! revision gives its error code (`[D26-10]`, `[D26-16]`, `[D26-28]`, `[D26-58]`, `[D26-60]`);
//! it is an SSE stream when a notification comes first (progress, logs, a listen's
//! acknowledgement), flushed as each event is ready.

use http::{HeaderMap, StatusCode};
use switchboard_types::{ErrorCode, ProtocolVersion};

use crate::headers::PROTOCOL_VERSION;

/// The most `Mcp-*` headers handed to the role from one request.
pub(crate) const MAX_MCP_HEADERS: usize = 64;
/// The longest `Mcp-*` header value handed to the role (longer ones are passed as malformed).
pub(crate) const MAX_MCP_HEADER_BYTES: usize = 8 * 1024;

/// Whether a POST belongs to the modern era: its `MCP-Protocol-Version` names a revision
/// without a handshake, or (with no session to belong to) one this server does not know, which
/// the modern era answers with -32022 naming what it serves.
pub(crate) fn routes_modern(headers: &HeaderMap, has_session: bool) -> bool {
    let Some(v) = headers.get(PROTOCOL_VERSION) else {
        return false;
    };
    let Ok(v) = v.to_str() else {
        return !has_session;
    };
    match ProtocolVersion::parse(v.trim()) {
        Some(p) => p.is_modern(),
        None => !has_session,
    }
}

/// The request's `Mcp-*` headers (lower-cased names; a value that is not visible ASCII, or too
/// long, as `None`): at most [`MAX_MCP_HEADERS`] names, and of a repeated one its first two
/// values, so that the role sees the repetition and refuses it.
pub(crate) fn mcp_headers(headers: &HeaderMap) -> Vec<(String, Option<String>)> {
    headers
        .keys()
        .filter(|name| name.as_str().starts_with("mcp-"))
        .take(MAX_MCP_HEADERS)
        .flat_map(|name| {
            headers.get_all(name).iter().take(2).map(move |value| {
                let v = value
                    .to_str()
                    .ok()
                    .filter(|v| v.len() <= MAX_MCP_HEADER_BYTES)
                    .map(str::to_owned);
                (name.as_str().to_owned(), v)
            })
        })
        .collect()
}

/// The HTTP status of a JSON answer (SPEC-2026-NOTES §14.4): 400 for the envelope, header,
/// version, capability and malformed-request errors and for invalid params, 404 for an unknown
/// method, 200 otherwise.
pub(crate) fn status_for(answer: &str) -> StatusCode {
    /// The one member read: `error.code` (the rest is skipped unparsed into values).
    #[derive(serde::Deserialize)]
    struct Answer {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: i64,
    }
    // A frame without the word holds no error member: most answers are results, and this
    // spares them a second parse.
    if !answer.contains("\"error\"") {
        return StatusCode::OK;
    }
    let code = serde_json::from_str::<Answer>(answer)
        .ok()
        .and_then(|a| a.error.map(|e| e.code));
    match code.map(ErrorCode) {
        Some(ErrorCode::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        Some(
            ErrorCode::PARSE_ERROR
            | ErrorCode::INVALID_REQUEST
            | ErrorCode::INVALID_PARAMS
            | ErrorCode::HEADER_MISMATCH
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// The data of one encoded SSE event (our own encoder's output: one `data:` line, since frame
/// text holds no raw line break).
pub(crate) fn data_of(event: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(event).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use http::HeaderValue;

    #[test]
    fn d26_120_the_header_decides_the_era() {
        let mut h = HeaderMap::new();
        assert!(
            !routes_modern(&h, false),
            "no header: 2025 (or stateless 2025-03-26)"
        );
        h.insert(PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        assert!(!routes_modern(&h, false));
        h.insert(PROTOCOL_VERSION, HeaderValue::from_static("2026-07-28"));
        assert!(routes_modern(&h, true));
        h.insert(PROTOCOL_VERSION, HeaderValue::from_static("v999.0.0"));
        assert!(
            routes_modern(&h, false),
            "unknown, no session: the modern era says -32022"
        );
        assert!(
            !routes_modern(&h, true),
            "unknown on a session: the session's era says 400"
        );
    }

    #[test]
    fn d26_10_d26_60_statuses_follow_the_error_code() {
        let e = |code: i32| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{code},"message":"m"}}}}"#)
        };
        assert_eq!(status_for(&e(-32601)), StatusCode::NOT_FOUND);
        for c in [-32602, -32020, -32021, -32022, -32600] {
            assert_eq!(status_for(&e(c)), StatusCode::BAD_REQUEST, "{c}");
        }
        assert_eq!(status_for(&e(-32603)), StatusCode::OK);
        assert_eq!(
            status_for(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            StatusCode::OK
        );
        // Results that name the word are still results.
        for result in [
            r#"{"jsonrpc":"2.0","id":"error","result":{"error":{"code":-32601}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"error\": -32601"}]}}"#,
        ] {
            assert_eq!(status_for(result), StatusCode::OK, "{result}");
        }
        // The error member after the id, whatever the id says.
        let named = r#"{"jsonrpc":"2.0","id":"result","error":{"code":-32601,"message":"m"}}"#;
        assert_eq!(status_for(named), StatusCode::NOT_FOUND);
    }

    #[test]
    fn mcp_headers_are_bounded_in_count_and_size() {
        let mut h = HeaderMap::new();
        for i in 0..100 {
            h.insert(
                http::HeaderName::try_from(format!("mcp-param-p{i}")).unwrap(),
                HeaderValue::from_static("v"),
            );
        }
        h.insert(
            "mcp-name",
            HeaderValue::try_from("x".repeat(MAX_MCP_HEADER_BYTES + 1)).unwrap(),
        );
        h.insert("x-other", HeaderValue::from_static("v"));
        let got = mcp_headers(&h);
        assert_eq!(got.len(), MAX_MCP_HEADERS);
        assert!(got.iter().all(|(n, _)| n.starts_with("mcp-")));
        // A repeated name is handed over with two values, even at the bound.
        let mut h = HeaderMap::new();
        for i in 0..MAX_MCP_HEADERS - 1 {
            h.insert(
                http::HeaderName::try_from(format!("mcp-param-p{i}")).unwrap(),
                HeaderValue::from_static("v"),
            );
        }
        for v in ["tools/call", "tools/list", "x"] {
            h.append("mcp-method", HeaderValue::from_static(v));
        }
        let got = mcp_headers(&h);
        let methods: Vec<_> = got.iter().filter(|(n, _)| n == "mcp-method").collect();
        assert_eq!(methods.len(), 2, "{got:?}");
        assert_eq!(data_of(b"id: 1\ndata: {\"a\":1}\n\n"), Some("{\"a\":1}"));
    }
}
