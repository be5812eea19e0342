//! A Streamable HTTP reverse proxy that shows every JSON-RPC frame it relays to a [`FrameTap`]
//! (feature `proxy`).
//!
//! * Endpoint: `/mcp`, and the upstream URL's own path when it differs; anything else is 404.
//! * Every request first passes the same `Host` / `Origin` checks as the server (`[HT-2]`,
//!   `[HT-3]`, 403), with allow-lists derived from the address the proxy binds
//!   ([`ProxyConfig::for_bind_address`]): a DNS-rebinding page cannot reach the upstream through
//!   the proxy.
//! * Every method is relayed (POST, GET, DELETE, and whatever else the upstream answers), with
//!   the status, the body and the end-to-end headers both ways (`Mcp-Session-Id`,
//!   `MCP-Protocol-Version`, `Last-Event-ID`, `Content-Type`, `Accept`, `Origin`, credentials...).
//!   Not passed: hop-by-hop headers, `Content-Length` (recomputed), and `Accept-Encoding` (bodies
//!   must stay readable to be tapped).
//! * `Host`: once the client's `Host` has passed the proxy's own check, the upstream gets the
//!   `Host` it expects, the authority of its URL (as any reverse proxy sends); the client's goes
//!   along as `X-Forwarded-Host`. `Origin` is relayed unchanged, so the upstream's own `Origin`
//!   check still sees the browser's origin.
//! * Request bodies are read whole (bounded in bytes and in time: 413, 408), tapped, then sent.
//!   An SSE answer is relayed chunk by chunk as it arrives, never buffered; each complete
//!   `message` event is tapped before the chunk that completes it is passed on. A JSON answer
//!   is read whole (bounded), tapped, then passed on. Requests buffering or awaiting their
//!   answer's headers at once are bounded (503 beyond); an SSE stream frees its place once its
//!   headers are in.
//! * Connections are bounded as the server's are ([`crate::ConnectionLimits`]).
//! * Tapped: each frame of a POST body (client to server, with the request's session id, so
//!   none for `initialize`), of a JSON answer and of each SSE event (server to client, with the
//!   answer's `Mcp-Session-Id`, else the request's). Batches are tapped entry by entry.
//! * An upstream that cannot be reached is answered 502 with a JSON-RPC error body (not tapped:
//!   it is not a server frame).

use std::net::SocketAddr;
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
use switchboard_transport::tap_body;
use switchboard_types::Direction;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::config::DEFAULT_MAX_BODY_BYTES;
use crate::headers::SESSION_ID;
use crate::listener::{self, BodyError, ConnectionLimits, read_body};
use crate::security::{DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS};
use crate::{HttpConfig, reply, security};

/// The default bound on a JSON (non-SSE) answer read whole.
pub(crate) const DEFAULT_MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The default bound on an SSE event tapped (a larger one is still relayed, and noted in the log).
pub(crate) const DEFAULT_MAX_TAPPED_EVENT_BYTES: usize = 16 * 1024 * 1024;
/// The default bound on requests buffering or awaiting their answer at once.
pub(crate) const DEFAULT_MAX_CONCURRENT: usize = 64;

/// How the proxy checks and bounds what it relays.
///
/// | option | default | what it does |
/// |---|---|---|
/// | `allowed_hosts`, `allowed_origins` | loopback (see [`HttpConfig`]) | `Host` / `Origin` allow-lists, 403 otherwise (`None`: any) |
/// | `max_request_bytes` | 4 MiB | a larger request body gets 413 |
/// | `max_answer_bytes` | 16 MiB | a larger JSON answer gets 502 |
/// | `max_tapped_event_bytes` | 16 MiB | a larger SSE event is relayed but not tapped |
/// | `max_concurrent` | 64 | requests buffering or awaiting their answer's headers at once; 503 beyond |
/// | `connection` | [`ConnectionLimits`] | per connection, as the server (the body read timeout gives 408) |
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// Allowed `Host` values (see [`HttpConfig::allowed_hosts`]); `None` disables the check.
    pub allowed_hosts: Option<Vec<String>>,
    /// Allowed `Origin` values (see [`HttpConfig::allowed_origins`]); `None` disables the check.
    pub allowed_origins: Option<Vec<String>>,
    /// The largest request body relayed; more gets 413.
    pub max_request_bytes: usize,
    /// The largest JSON (non-SSE) answer relayed; more gets 502.
    pub max_answer_bytes: usize,
    /// The largest SSE event tapped; a larger one is still relayed.
    pub max_tapped_event_bytes: usize,
    /// Requests buffering (their body, their JSON answer) or awaiting their answer's headers
    /// at once; more get 503.
    pub max_concurrent: usize,
    /// The bounds on each TCP connection.
    pub connection: ConnectionLimits,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            allowed_hosts: Some(DEFAULT_ALLOWED_HOSTS.map(String::from).to_vec()),
            allowed_origins: Some(DEFAULT_ALLOWED_ORIGINS.map(String::from).to_vec()),
            max_request_bytes: DEFAULT_MAX_BODY_BYTES,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            max_tapped_event_bytes: DEFAULT_MAX_TAPPED_EVENT_BYTES,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            connection: ConnectionLimits::default(),
        }
    }
}

impl ProxyConfig {
    /// The default configuration for a proxy bound to `addr`: `Host` and `Origin` as
    /// [`HttpConfig::for_bind_address`] allows them.
    pub fn for_bind_address(addr: SocketAddr) -> Self {
        let http = HttpConfig::for_bind_address(addr);
        ProxyConfig {
            allowed_hosts: http.allowed_hosts,
            allowed_origins: http.allowed_origins,
            ..ProxyConfig::default()
        }
    }

    /// Replaces the `Host` allow-list (`None`: any host).
    pub fn with_allowed_hosts(mut self, hosts: Option<Vec<String>>) -> Self {
        self.allowed_hosts = hosts;
        self
    }

    /// Replaces the `Origin` allow-list (`None`: any origin).
    pub fn with_allowed_origins(mut self, origins: Option<Vec<String>>) -> Self {
        self.allowed_origins = origins;
        self
    }

    /// Sets the request body bound.
    pub fn with_max_request_bytes(mut self, n: usize) -> Self {
        self.max_request_bytes = n;
        self
    }

    /// Sets the JSON answer bound.
    pub fn with_max_answer_bytes(mut self, n: usize) -> Self {
        self.max_answer_bytes = n;
        self
    }

    /// Sets the bound on an SSE event tapped.
    pub fn with_max_tapped_event_bytes(mut self, n: usize) -> Self {
        self.max_tapped_event_bytes = n;
        self
    }

    /// Sets the bound on requests buffering at once (at least 1).
    pub fn with_max_concurrent(mut self, n: usize) -> Self {
        self.max_concurrent = n.max(1);
        self
    }

    /// Replaces the per-connection bounds.
    pub fn with_connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection = limits;
        self
    }
}

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
    /// The `Host` the upstream expects: its URL's authority.
    upstream_host: HeaderValue,
    tap: Arc<dyn FrameTap>,
    config: ProxyConfig,
    /// Places for requests buffering at once.
    places: Arc<Semaphore>,
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

/// The upstream's authority, as its `Host` header.
fn authority(url: &reqwest::Url) -> Result<HeaderValue, ProxyError> {
    let host = url.host_str().unwrap_or_default();
    let text = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    HeaderValue::from_str(&text).map_err(|e| ProxyError::InvalidUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })
}

/// The proxy's router: `/mcp` and the upstream's path, relaying to `upstream`.
///
/// # Errors
/// The upstream URL is not a valid `http://` URL, or the HTTP client cannot be built.
pub fn router(
    upstream: &str,
    tap: Arc<dyn FrameTap>,
    config: ProxyConfig,
) -> Result<axum::Router, ProxyError> {
    let upstream = upstream_url(upstream)?;
    let upstream_host = authority(&upstream)?;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true)
        .build()
        .map_err(|e| ProxyError::Client(e.to_string()))?;
    let path = upstream.path().to_owned();
    let places = Arc::new(Semaphore::new(
        config.max_concurrent.clamp(1, Semaphore::MAX_PERMITS),
    ));
    let state = Arc::new(Proxy {
        client,
        upstream,
        upstream_host,
        tap,
        config,
        places,
    });
    let mut router = axum::Router::new().route("/mcp", axum::routing::any(relay));
    if path != "/mcp" && !path.is_empty() {
        router = router.route(&path, axum::routing::any(relay));
    }
    Ok(router.with_state(state))
}

/// Serves the proxy on `listener` (TCP_NODELAY on every socket, the connection bounds of
/// `config`) until the process ends.
///
/// # Errors
/// A bad upstream URL; an I/O error of the listener.
pub async fn serve(
    listener: TcpListener,
    upstream: &str,
    tap: Arc<dyn FrameTap>,
    config: ProxyConfig,
) -> Result<(), ProxyError> {
    let limits = config.connection.clone();
    let router = router(upstream, tap, config)?;
    listener::run(listener, router, limits, std::future::pending()).await?;
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

/// `X-Forwarded-Host`: the `Host` the client sent, for the upstream's information.
const FORWARDED_HOST: HeaderName = HeaderName::from_static("x-forwarded-host");

/// The request headers to send upstream: the end-to-end ones, with the upstream's own `Host`
/// and the client's as `X-Forwarded-Host`.
fn upstream_headers(incoming: &HeaderMap, upstream_host: &HeaderValue) -> HeaderMap {
    let mut out = HeaderMap::with_capacity(incoming.len() + 1);
    for (name, value) in incoming {
        if hop_by_hop(name)
            || name == header::HOST
            || name == FORWARDED_HOST
            || name == header::CONTENT_LENGTH
            || name == header::ACCEPT_ENCODING
        {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    if let Some(host) = incoming.get(header::HOST) {
        out.insert(FORWARDED_HOST, host.clone());
    }
    out.insert(header::HOST, upstream_host.clone());
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
    let cfg = &proxy.config;
    let uri_host = req.uri().authority().map(|a| a.as_str());
    if let Err(refusal) = security::check(
        req.headers(),
        uri_host,
        cfg.allowed_hosts.as_deref(),
        cfg.allowed_origins.as_deref(),
    ) {
        return reply::refused(&refusal);
    }
    let Ok(place) = proxy.places.clone().try_acquire_owned() else {
        tracing::debug!("request refused: too many requests relayed at once");
        let mut r = gateway_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "Service unavailable: too many requests relayed at once; retry shortly",
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return r;
    };
    let (parts, body) = req.into_parts();
    let body = match read_body(
        body,
        cfg.max_request_bytes,
        cfg.connection.body_read_timeout,
    )
    .await
    {
        Ok(b) => Bytes::from(b),
        Err(BodyError::TooLarge) => return reply::too_large(cfg.max_request_bytes),
        Err(BodyError::TimedOut(limit)) => return reply::body_timeout(limit),
        Err(BodyError::Read) => {
            return gateway_error(
                StatusCode::BAD_REQUEST,
                "Bad Request: the request body could not be read",
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
            Err(_) => crate::throttle::warn_throttled!(
                "a request body that is not UTF-8 was relayed but not tapped"
            ),
        }
    }
    let mut url = proxy.upstream.clone();
    if url.query().is_none() {
        url.set_query(parts.uri.query());
    }
    let mut rb = proxy
        .client
        .request(parts.method.clone(), url)
        .headers(upstream_headers(&parts.headers, &proxy.upstream_host));
    if !body.is_empty() {
        rb = rb.body(body);
    }
    let resp = match rb.send().await {
        Ok(r) => r,
        Err(e) => {
            crate::throttle::warn_throttled!(error = %e, "upstream unreachable");
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
        // A stream may last for hours: it holds a connection, not a place.
        drop(place);
        sse_body(
            resp,
            proxy.tap.clone(),
            answer_session,
            cfg.max_tapped_event_bytes,
        )
    } else {
        match read_whole(resp, cfg.max_answer_bytes).await {
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
                            crate::throttle::warn_throttled!(
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

/// Reads a (non-SSE) answer whole, at most `limit` bytes; the buffer grows as bytes arrive.
async fn read_whole(mut resp: reqwest::Response, limit: usize) -> Result<Bytes, String> {
    let mut buf = bytes::BytesMut::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if buf.len() + chunk.len() > limit {
                    return Err(format!(
                        "Bad Gateway: the upstream answer exceeds {limit} bytes"
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
fn sse_body(
    resp: reqwest::Response,
    tap: Arc<dyn FrameTap>,
    session: Option<String>,
    max_event_bytes: usize,
) -> Body {
    let state = SseRelay {
        resp,
        parser: SseParser::new(max_event_bytes),
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
                            crate::throttle::warn_throttled!(error = %e, "an SSE event was relayed but not tapped")
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
