//! The names Streamable HTTP puts in headers (SPEC-NOTES §6), both sides: one set for the server
//! (`switchboard-http`), the client (`switchboard-http-client`) and the checker
//! (`switchboard-check`).
//!
//! Header names ignore case; they are written here in lower case, the form `http::HeaderName`
//! takes from a `&'static str`. The spec spells them `MCP-Session-Id` (`Mcp-Session-Id` in
//! 2025-03-26 and 2025-06-18), `MCP-Protocol-Version` and `Last-Event-ID`.
//!
//! ```
//! use switchboard_transport::headers;
//!
//! assert_eq!(headers::media_type(" Text/Event-Stream ; charset=utf-8"), "Text/Event-Stream");
//! assert!(headers::media_type("text/event-stream").eq_ignore_ascii_case(headers::EVENT_STREAM));
//! ```

/// The session header, `MCP-Session-Id` (`[HT-18]`, `[HT-19]`): issued with the `initialize`
/// answer, then sent with every request of the session. A secret: never log its value.
pub const SESSION_ID: &str = "mcp-session-id";

/// The protocol version header, `MCP-Protocol-Version` (`[HT-22]`, `[HT-23]`; 2025-06-18 onward):
/// the negotiated revision, on every request after `initialize`.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The SSE resumption header, `Last-Event-ID` (`[HT-11]`): the last event id the client saw on
/// the stream it resumes.
pub const LAST_EVENT_ID: &str = "last-event-id";

/// The media type of one JSON-RPC message (or batch) in a body.
pub const JSON: &str = "application/json";

/// The media type of a Server-Sent Events stream ([`crate::codec::sse`]).
pub const EVENT_STREAM: &str = "text/event-stream";

/// The `Accept` of every POST (`[HT-5]`): both kinds of answer.
pub const POST_ACCEPT: &str = "application/json, text/event-stream";

/// The media type of a `Content-Type` value: what comes before any `;` parameter, trimmed. Compare
/// it ignoring ASCII case.
pub fn media_type(content_type: &str) -> &str {
    content_type.split(';').next().unwrap_or("").trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_case_so_that_http_takes_them_as_static_names() {
        for name in [SESSION_ID, PROTOCOL_VERSION, LAST_EVENT_ID] {
            assert_eq!(name, name.to_ascii_lowercase());
        }
        assert_eq!(POST_ACCEPT, format!("{JSON}, {EVENT_STREAM}"));
    }

    #[test]
    fn media_type_drops_parameters_and_spaces() {
        assert_eq!(
            media_type("application/json; charset=utf-8"),
            "application/json"
        );
        assert_eq!(media_type("text/event-stream"), "text/event-stream");
        assert_eq!(media_type(""), "");
        assert_eq!(media_type(" ;x=y"), "");
    }
}
