//! A Streamable HTTP reverse proxy that shows every JSON-RPC frame it relays to a [`FrameTap`]
//! (feature `proxy`).
//!
//! * Endpoint: `/mcp`, and the upstream URL's own path when it differs; anything else is 404.
//! * Every method is relayed (POST, GET, DELETE, and whatever else the upstream answers), with
//!   the status, the body and the end-to-end headers both ways (`Mcp-Session-Id`,
//!   `MCP-Protocol-Version`, `Last-Event-ID`, `Content-Type`, `Accept`, `Origin`, credentials...).
//!   Not passed: hop-by-hop headers, `Host` (the upstream's own), `Content-Length` (recomputed),
//!   and `Accept-Encoding` (bodies must stay readable to be tapped).
//! * Request bodies are read whole (bounded), tapped, then sent. An SSE answer is relayed chunk
//!   by chunk as it arrives, never buffered; each complete `message` event is tapped before the
//!   chunk that completes it is passed on. A JSON answer is read whole, tapped, then passed on.
//! * Tapped: each frame of a POST body (client to server, with the request's session id, so
//!   none for `initialize`), of a JSON answer and of each SSE event (server to client, with the
//!   answer's `Mcp-Session-Id`, else the request's). Batches are tapped entry by entry.
//! * An upstream that cannot be reached is answered 502 with a JSON-RPC error body (not tapped:
//!   it is not a server frame).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use bytes::Bytes;
use http::StatusCode;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use switchboard_transport::FrameTap;
use switchboard_transport::SseParser;
use switchboard_transport::headers::{EVENT_STREAM, JSON, media_type as bare_media_type};
use switchboard_transport::relay::tap_body;
use switchboard_types::Direction;
use tokio::net::TcpListener;

use crate::headers::SESSION_ID;

/// The largest request body accepted, and the largest JSON answer relayed.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// The largest SSE event tapped (a larger one is still relayed, and noted in the log).
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Why the proxy cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// The upstream URL does not parse.
    #[error("invalid upstream URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The upstream URL is not `http://` (the proxy has no TLS).
    #[error("unsupported upstream URL scheme {0:?} (http only)")]
    UnsupportedScheme(String),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
    /// The listener failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The proxy's shared state.
struct Proxy {
    client: reqwest::Client,
    upstream: reqwest::Url,
    tap: Arc<dyn FrameTap>,
}

/// Checks the upstream URL: `http://` only (the proxy has no TLS).
///
/// # Errors
/// The URL does not parse or is not `http://`.
pub fn upstream_url(url: &str) -> Result<reqwest::Url, ProxyError> {
    let parsed = reqwest::Url::parse(url).map_err(|e| ProxyError::InvalidUrl {
        url: url.to_owned(),
        reason: e.to_string(),
    })?;
    if parsed.scheme() != "http" {
        return Err(ProxyError::UnsupportedScheme(parsed.scheme().to_owned()));
    }
    Ok(parsed)
}

/// The proxy's router: `/mcp` and the upstream's path, relaying to `upstream`.
///
/// # Errors
/// The upstream URL is not a valid `http://` URL, or the HTTP client cannot be built.
pub fn router(upstream: &str, tap: Arc<dyn FrameTap>) -> Result<axum::Router, ProxyError> {
    let upstream = upstream_url(upstream)?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .build()
        .map_err(|e| ProxyError::Client(e.to_string()))?;
    let path = upstream.path().to_owned();
    let state = Arc::new(Proxy {
        client,
        upstream,
        tap,
    });
    let mut router = axum::Router::new().route("/mcp", axum::routing::any(relay));
    if path != "/mcp" && !path.is_empty() {
        router = router.route(&path, axum::routing::any(relay));
    }
    Ok(router.with_state(state))
}

/// Serves the proxy on `listener` (TCP_NODELAY on every socket) until the process ends.
///
/// # Errors
/// A bad upstream URL; an I/O error of the listener.
pub async fn serve(
    listener: TcpListener,
    upstream: &str,
    tap: Arc<dyn FrameTap>,
) -> Result<(), ProxyError> {
    use axum::serve::ListenerExt;
    let router = router(upstream, tap)?;
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router).await?;
    Ok(())
}

/// Hop-by-hop headers (RFC 9110 §7.6.1), never relayed.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
    )
}

/// The request headers to send upstream.
fn upstream_headers(incoming: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(incoming.len());
    for (name, value) in incoming {
        if hop_by_hop(name)
            || name == header::HOST
            || name == header::CONTENT_LENGTH
            || name == header::ACCEPT_ENCODING
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    media_type(headers).eq_ignore_ascii_case(EVENT_STREAM)
}

fn media_type(headers: &HeaderMap) -> &str {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(bare_media_type)
        .unwrap_or("")
}

/// The proxy's own error answer: a JSON-RPC error object without id.
fn gateway_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "error": {"code": -32000, "message": message},
    })
    .to_string();
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(JSON));
    r
}

/// Relays one HTTP request upstream and its answer back, tapping the frames.
async fn relay(State(proxy): State<Arc<Proxy>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return gateway_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body could not be read or is too large",
            );
        }
    };
    let session = session_of(&parts.headers);
    if !body.is_empty() {
        match std::str::from_utf8(&body) {
            Ok(text) => tap_body(
                &*proxy.tap,
                Direction::ClientToServer,
                session.as_deref(),
                text,
            ),
            Err(_) => tracing::warn!("a request body that is not UTF-8 was relayed but not tapped"),
        }
    }
    let mut url = proxy.upstream.clone();
    if url.query().is_none() {
        url.set_query(parts.uri.query());
    }
    let mut rb = proxy
        .client
        .request(parts.method.clone(), url)
        .headers(upstream_headers(&parts.headers));
    if !body.is_empty() {
        rb = rb.body(body);
    }
    let resp = match rb.send().await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "upstream unreachable");
            return gateway_error(
                StatusCode::BAD_GATEWAY,
                &format!("Bad Gateway: the upstream MCP server could not be reached ({e})"),
            );
        }
    };
    let status = resp.status();
    let mut headers = HeaderMap::with_capacity(resp.headers().len());
    for (name, value) in resp.headers() {
        if !hop_by_hop(name) && name != header::CONTENT_LENGTH {
            headers.append(name.clone(), value.clone());
        }
    }
    let answer_session = session_of(&headers).or(session);
    let body = if is_event_stream(&headers) {
        sse_body(resp, proxy.tap.clone(), answer_session)
    } else {
        match read_whole(resp).await {
            Ok(bytes) => {
                if media_type(&headers).eq_ignore_ascii_case(JSON) {
                    match std::str::from_utf8(&bytes) {
                        Ok(text) => tap_body(
                            &*proxy.tap,
                            Direction::ServerToClient,
                            answer_session.as_deref(),
                            text,
                        ),
                        Err(_) => {
                            tracing::warn!(
                                "a JSON answer that is not UTF-8 was relayed but not tapped"
                            )
                        }
                    }
                }
                Body::from(bytes)
            }
            Err(why) => return gateway_error(StatusCode::BAD_GATEWAY, &why),
        }
    };
    let mut out = Response::new(body);
    *out.status_mut() = status;
    *out.headers_mut() = headers;
    out
}

/// Reads a (non-SSE) answer whole, bounded by [`MAX_BODY_BYTES`].
async fn read_whole(mut resp: reqwest::Response) -> Result<Bytes, String> {
    let mut buf = bytes::BytesMut::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if buf.len() + chunk.len() > MAX_BODY_BYTES {
                    return Err(format!(
                        "Bad Gateway: the upstream answer exceeds {MAX_BODY_BYTES} bytes"
                    ));
                }
                buf.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(buf.freeze()),
            Err(e) => {
                return Err(format!(
                    "Bad Gateway: reading the upstream answer failed ({e})"
                ));
            }
        }
    }
}

/// The state of one relayed SSE stream.
struct SseRelay {
    resp: reqwest::Response,
    parser: SseParser,
    tap: Arc<dyn FrameTap>,
    session: Option<String>,
}

/// An SSE answer relayed chunk by chunk; every complete `message` event is tapped before the
/// chunk that completes it goes on. Dropping the body (the client went away) drops the upstream
/// connection.
fn sse_body(resp: reqwest::Response, tap: Arc<dyn FrameTap>, session: Option<String>) -> Body {
    let state = SseRelay {
        resp,
        parser: SseParser::new(MAX_EVENT_BYTES),
        tap,
        session,
    };
    let stream = futures::stream::unfold(Some(state), |state| async move {
        let mut st = state?;
        match st.resp.chunk().await {
            Ok(Some(chunk)) => {
                st.parser.push(&chunk);
                while let Some(event) = st.parser.next() {
                    match event {
                        Ok(ev) if ev.event == "message" && !ev.data.is_empty() => tap_body(
                            &*st.tap,
                            Direction::ServerToClient,
                            st.session.as_deref(),
                            &ev.data,
                        ),
                        Ok(_) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "an SSE event was relayed but not tapped")
                        }
                    }
                }
                Some((Ok::<Bytes, std::io::Error>(chunk), Some(st)))
            }
            Ok(None) => None,
            Err(e) => Some((Err(std::io::Error::other(e)), None)),
        }
    });
    Body::from_stream(stream)
}
