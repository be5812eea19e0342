//! HTTP answers the endpoint builds itself (server side): 202, and every 4xx/5xx with a JSON-RPC
//! error body without `id` (SPEC-NOTES §6.10), whose `data` carries a machine-readable `reason`
//! and, where one applies, the spec `tag`.

use std::time::Duration;

use axum::body::Body;
use http::header::{ALLOW, CONNECTION, CONTENT_TYPE};
use http::{HeaderValue, Response, StatusCode};
use switchboard_types::{ErrorCode, ErrorObject, Message, RequestId};

use crate::security::Refusal;

/// -32000: a transport-level refusal (headers, body, bounds).
pub(crate) const TRANSPORT_ERROR: ErrorCode = ErrorCode(-32000);
/// -32001: the session is unknown or has ended.
pub(crate) const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);

/// The JSON content type.
pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");

/// A response with a JSON-RPC error body.
pub(crate) fn error_body(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> Response<Body> {
    let text = Message::Response(switchboard_types::Response::error(id, error)).to_json();
    let mut r = Response::new(Body::from(text));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, JSON);
    r
}

/// A refusal: `status` with an id-less JSON-RPC error (`code`, `message`, `data.reason`, `data.tag`).
pub(crate) fn refuse(
    status: StatusCode,
    code: ErrorCode,
    message: impl Into<String>,
    reason: &str,
    tag: Option<&str>,
) -> Response<Body> {
    let mut data = serde_json::json!({ "reason": reason });
    if let (Some(t), Some(obj)) = (tag, data.as_object_mut()) {
        obj.insert("tag".into(), t.into());
    }
    error_body(
        status,
        None,
        ErrorObject::new(code, message).with_data(data),
    )
}

/// 202 Accepted with an empty body (`[HT-7]`).
pub(crate) fn accepted() -> Response<Body> {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::ACCEPTED;
    r
}

/// 405 with the `Allow` header.
pub(crate) fn method_not_allowed(
    allow: &'static str,
    reason: &str,
    tag: Option<&str>,
) -> Response<Body> {
    let mut r = refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        TRANSPORT_ERROR,
        "Method not allowed",
        reason,
        tag,
    );
    r.headers_mut()
        .insert(ALLOW, HeaderValue::from_static(allow));
    r
}

/// 404 for an unknown or ended session (`[HT-20]`).
pub(crate) fn session_not_found() -> Response<Body> {
    refuse(
        StatusCode::NOT_FOUND,
        SESSION_NOT_FOUND,
        "Session not found",
        "unknown_session",
        Some("HT-20"),
    )
}

/// 400 for a request without the session header.
pub(crate) fn session_required() -> Response<Body> {
    refuse(
        StatusCode::BAD_REQUEST,
        TRANSPORT_ERROR,
        "Bad Request: the MCP-Session-Id header is required",
        "missing_session_id",
        Some("HT-19"),
    )
}

/// 400 for an unsupported `MCP-Protocol-Version`.
pub(crate) fn bad_protocol_version(value: &str) -> Response<Body> {
    refuse(
        StatusCode::BAD_REQUEST,
        TRANSPORT_ERROR,
        format!(
            "Bad Request: unsupported MCP-Protocol-Version {:?}",
            switchboard_types::error::echo(value)
        ),
        "unsupported_protocol_version",
        Some("HT-23"),
    )
}

/// 413. The rest of the body is not read, so the connection closes after the answer.
pub(crate) fn too_large(limit: usize) -> Response<Body> {
    let mut r = refuse(
        StatusCode::PAYLOAD_TOO_LARGE,
        TRANSPORT_ERROR,
        format!("Payload Too Large: the body exceeds {limit} bytes"),
        "body_too_large",
        None,
    );
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

/// 408 for a body that did not arrive in time; the connection closes after the answer.
pub(crate) fn body_timeout(limit: Duration) -> Response<Body> {
    tracing::debug!(?limit, "request body not received in time");
    let mut r = refuse(
        StatusCode::REQUEST_TIMEOUT,
        TRANSPORT_ERROR,
        format!(
            "Request Timeout: the body did not arrive within {} ms",
            limit.as_millis()
        ),
        "body_timeout",
        None,
    );
    r.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

/// 403 for a `Host` or `Origin` outside the allow-lists (DNS-rebinding protection), 400 for
/// either one sent twice.
pub(crate) fn refused(refusal: &Refusal) -> Response<Body> {
    let (message, reason) = match refusal {
        Refusal::Host(_) => ("Forbidden: Host not allowed", "host_not_allowed"),
        Refusal::Origin(_) => ("Forbidden: Origin not allowed", "origin_not_allowed"),
        Refusal::Repeated(name) => return repeated_header(name),
    };
    crate::throttle::warn_throttled!(?refusal, "request refused (DNS-rebinding protection)");
    refuse(
        StatusCode::FORBIDDEN,
        TRANSPORT_ERROR,
        message,
        reason,
        Some("HT-3"),
    )
}

/// 400: a header that names one value (`Host`, `Origin`, `Mcp-Session-Id`, ...) was sent
/// more than once; which copy counts is ambiguous, so none does.
pub(crate) fn repeated_header(name: &str) -> Response<Body> {
    refuse(
        StatusCode::BAD_REQUEST,
        TRANSPORT_ERROR,
        format!("Bad Request: more than one {name} header"),
        "repeated_header",
        None,
    )
}
