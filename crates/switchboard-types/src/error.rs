//! The wire error object `{code, message, data?}` and the error codes MCP uses (SPEC-NOTES §2.3).
//!
//! This is data, not a Rust error type: each crate above keeps its own `thiserror` enum.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON-RPC error code. Open: peers send codes we do not know, so this is a newtype, not an enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// -32700: the bytes were not valid JSON.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: valid JSON, but not a valid request (also: not initialized, a batch where none is allowed).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: unknown method, or a capability the receiver did not declare.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: the method exists but its params are wrong (also: unknown tool or prompt name).
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: an unexpected failure inside the receiver.
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32002: `resources/read` of an unknown URI (revisions up to 2025-11-25).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32042: the request needs URL-mode elicitations first (2025-11-25).
    pub const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
    /// -32020: HTTP headers disagree with the body, or a required one is missing (2026-07-28).
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021: the request needs a client capability it did not declare (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022: the request's protocol version is not served (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
    /// -1: the user rejected a sampling request (the spec's example code).
    pub const USER_REJECTED: ErrorCode = ErrorCode(-1);

    /// The standard name of a known code, for traces.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::PARSE_ERROR => "Parse error",
            Self::INVALID_REQUEST => "Invalid Request",
            Self::METHOD_NOT_FOUND => "Method not found",
            Self::INVALID_PARAMS => "Invalid params",
            Self::INTERNAL_ERROR => "Internal error",
            Self::RESOURCE_NOT_FOUND => "Resource not found",
            Self::URL_ELICITATION_REQUIRED => "URL elicitation required",
            Self::HEADER_MISMATCH => "Header mismatch",
            Self::MISSING_REQUIRED_CLIENT_CAPABILITY => "Missing required client capability",
            Self::UNSUPPORTED_PROTOCOL_VERSION => "Unsupported protocol version",
            Self::USER_REJECTED => "User rejected",
            _ => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{} ({name})", self.0),
            None => write!(f, "{}", self.0),
        }
    }
}

/// The `error` member of an error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (`[JR-8]`: an integer).
    pub code: ErrorCode,
    /// A short, single-sentence description.
    pub message: String,
    /// Machine-readable detail: a `reason` and, where it applies, the field or the spec tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Adds machine-readable `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// -32700 Parse error.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(ErrorCode::PARSE_ERROR, "Parse error")
            .with_data(serde_json::json!({"reason": "invalid_json", "detail": detail.to_string()}))
    }

    /// -32600 Invalid Request, with a machine-readable `reason`.
    pub fn invalid_request(message: impl Into<String>, reason: &str) -> Self {
        Self::new(ErrorCode::INVALID_REQUEST, message)
            .with_data(serde_json::json!({"reason": reason}))
    }

    /// -32601 Method not found. The method is echoed through [`echo`].
    pub fn method_not_found(method: &str) -> Self {
        let method = echo(method);
        Self::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
        .with_data(serde_json::json!({"reason": "method_not_found", "method": method}))
    }

    /// -32602 Invalid params.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INVALID_PARAMS, message)
            .with_data(serde_json::json!({"reason": "invalid_params"}))
    }

    /// -32603 Internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::INTERNAL_ERROR, message)
            .with_data(serde_json::json!({"reason": "internal_error"}))
    }
}

/// The longest piece of peer-supplied text (a method name, URI, tool or prompt name, a request
/// id, a parse or validation detail) that an error's `message` or `data` echoes back, in bytes.
/// Longer text is cut by [`echo`], so that an answer never grows with what the peer sent.
pub const MAX_ECHO_BYTES: usize = 256;

/// The ellipsis that ends text cut by [`clip`] and [`echo`].
pub const ELLIPSIS: char = '\u{2026}';

/// `text` cut to at most `max` bytes at a character boundary, with [`ELLIPSIS`] appended when
/// anything was cut (the ellipsis adds its 3 bytes). Borrowed when nothing is cut.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + ELLIPSIS.len_utf8());
    cut.push_str(&text[..end]);
    cut.push(ELLIPSIS);
    Cow::Owned(cut)
}

/// Peer-supplied `text` as an error may echo it: at most [`MAX_ECHO_BYTES`] bytes, then
/// [`ELLIPSIS`]. Every error that names what the peer sent goes through this.
pub fn echo(text: &str) -> Cow<'_, str> {
    clip(text, MAX_ECHO_BYTES)
}

/// A peer-supplied JSON value as an error's `data` may echo it: the value itself when its
/// compact text fits in [`MAX_ECHO_BYTES`], else that text cut by [`echo`] (a string).
pub fn echo_value(value: &Value) -> Value {
    let text = value.to_string();
    if text.len() <= MAX_ECHO_BYTES {
        value.clone()
    } else {
        Value::String(echo(&text).into_owned())
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorObject {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echoes_are_cut_at_a_character_boundary_with_an_ellipsis() {
        assert!(matches!(echo("tools/list"), Cow::Borrowed("tools/list")));
        let long = "\u{e9}".repeat(MAX_ECHO_BYTES); // Two bytes each.
        let cut = echo(&long);
        assert!(cut.ends_with(ELLIPSIS));
        assert!(cut.len() <= MAX_ECHO_BYTES + ELLIPSIS.len_utf8());
        assert_eq!(clip("abcdef", 3), "abc\u{2026}");
        assert_eq!(clip("a\u{e9}b", 2), "a\u{2026}", "never inside a character");
        assert_eq!(
            echo_value(&serde_json::json!({"a": 1})),
            serde_json::json!({"a": 1})
        );
        let big = serde_json::json!({"type": "x".repeat(4 << 20)});
        let shown = echo_value(&big);
        assert!(
            shown
                .as_str()
                .is_some_and(|s| s.len() <= MAX_ECHO_BYTES + 3)
        );
    }

    #[test]
    fn a_4_mib_method_name_is_not_echoed_whole() {
        let name = "m".repeat(4 << 20);
        let e = ErrorObject::method_not_found(&name);
        let text = serde_json::to_string(&e).unwrap_or_default();
        assert!(
            text.len() < 2 * MAX_ECHO_BYTES + 200,
            "{} bytes",
            text.len()
        );
        assert!(e.message.ends_with(ELLIPSIS));
    }
}
