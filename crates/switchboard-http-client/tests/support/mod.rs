//! Shared test support: a `switchboard_server::Server` with a few tools, served by the real
//! Streamable HTTP server crate on 127.0.0.1 behind a recording layer (every request's method,
//! headers), and a client with a sampling handler.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

pub mod raw;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession};
use switchboard_http::{HttpConfig, StreamableHttpService};
use switchboard_http_client::{
    HttpClientConfig, HttpClientHandle, HttpClientSink, HttpClientSource, HttpClientTransport,
};
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport};
use switchboard_server::Server;
use switchboard_test_support::server::tool_server;
use switchboard_types::content::TextContent;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard_types::tools::CallToolResult;
use switchboard_types::{MessageKind, RequestId};
use tokio::net::TcpListener;

pub const WAIT: Duration = Duration::from_secs(10);

/// The test server: `echo`, `chatty` (progress and a log before answering), `slow` (sleeps
/// `ms`), `sample` (asks the client for sampling, related to its request); see
/// [`switchboard_test_support::server::tool_server`].
pub fn test_server() -> Server {
    tool_server("http-client-test").build().unwrap()
}

/// One HTTP request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub authorization: Option<String>,
    pub session: Option<String>,
    pub version: Option<String>,
    pub accept: Option<String>,
    pub content_type: Option<String>,
    pub last_event_id: Option<String>,
}

/// A real server on 127.0.0.1 (port 0) recording every request, stopped when dropped.
pub struct Live {
    pub addr: SocketAddr,
    pub url: String,
    pub service: StreamableHttpService,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

impl Live {
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn header(req: &Request, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

pub async fn live(server: &Server, config: HttpConfig) -> Live {
    live_with(server, config, Options::default()).await
}

/// How [`live_with`] misbehaves on purpose.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The first GET stream (one without `Last-Event-ID`) is cut after this many body chunks
    /// (0: before its first byte, so before its priming event), as a dropped connection would be.
    pub cut_first_get: Option<usize>,
    /// Every request carrying a session id is answered with a 307 to this URL.
    pub redirect_sessions_to: Option<String>,
    /// Also serve this path, whose every request is redirected (307) to the endpoint.
    pub moved_from: Option<&'static str>,
    /// Bind this address (a server restarted on the same port) instead of a new port.
    pub addr: Option<SocketAddr>,
}

/// Like [`live`], misbehaving as `options` says.
pub async fn live_with(server: &Server, config: HttpConfig, options: Options) -> Live {
    let cut = Arc::new(Mutex::new(options.cut_first_get));
    let service =
        StreamableHttpService::new(switchboard::server_http::session_factory(server), config);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let record = seen.clone();
    let mut router = service.router();
    if let Some(path) = options.moved_from {
        router = router.route(
            path,
            axum::routing::any(|| async {
                (
                    axum::http::StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, "/mcp")],
                )
            }),
        );
    }
    let elsewhere = options.redirect_sessions_to.clone();
    let router = router.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let record = record.clone();
            let cut = cut.clone();
            let elsewhere = elsewhere.clone();
            async move {
                let keep = if req.method() == "GET" && !req.headers().contains_key("last-event-id")
                {
                    cut.lock().unwrap().take()
                } else {
                    None
                };
                record.lock().unwrap().push(Seen {
                    method: req.method().to_string(),
                    path: req.uri().path().to_owned(),
                    authorization: header(&req, "authorization"),
                    session: header(&req, "mcp-session-id"),
                    version: header(&req, "mcp-protocol-version"),
                    accept: header(&req, "accept"),
                    content_type: header(&req, "content-type"),
                    last_event_id: header(&req, "last-event-id"),
                });
                if let Some(to) = elsewhere.filter(|_| req.headers().contains_key("mcp-session-id"))
                {
                    return Response::builder()
                        .status(307)
                        .header("location", to)
                        .body(Body::empty())
                        .unwrap();
                }
                let resp = next.run(req).await;
                let Some(keep) = keep else {
                    return resp;
                };
                let (parts, body) = resp.into_parts();
                let kept = body.into_data_stream().take(keep);
                Response::from_parts(parts, Body::from_stream(kept))
            }
        },
    ));
    let listener = bind(options.addr).await;
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let closing = service.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router)
            .with_graceful_shutdown(async move {
                let _ = rx.await;
                closing.close_all().await;
            })
            .await;
    });
    Live {
        addr,
        url: format!("http://{addr}/mcp"),
        service,
        seen,
        stop: Some(tx),
    }
}

/// A listener on `addr` (retried while the previous server there is shutting down), or on a
/// new port.
async fn bind(addr: Option<SocketAddr>) -> TcpListener {
    let Some(addr) = addr else {
        return TcpListener::bind("127.0.0.1:0").await.unwrap();
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "rebinding {addr}: {e}"
                );
                // The poll interval of a bounded wait (rebinding the port, which has no event).
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A client that answers sampling with "sampled by the test client".
pub fn client() -> Client {
    Client::builder(Implementation::new("http-client-test-client", "1.0.0"))
        .era(switchboard_client::EraMode::Legacy)
        .sampling(|_, _| async {
            Ok(CreateMessageResult::new(
                "test-model",
                SamplingMessageContentBlock::Text(TextContent::new("sampled by the test client")),
            ))
        })
        .build()
}

/// Connects `client()` to `url`; returns the session and the transport's handle.
pub async fn connect(url: &str, config: HttpClientConfig) -> (ClientSession, HttpClientHandle) {
    let transport = HttpClientTransport::connect(url, config).unwrap();
    let handle = transport.handle();
    let session = tokio::time::timeout(WAIT, client().connect(transport))
        .await
        .expect("handshake in time")
        .expect("handshake");
    (session, handle)
}

/// A client of era `era` over HTTP to `url`, `provider` authorizing every request; the
/// handshake's outcome.
pub async fn connect_authorized(
    url: &str,
    provider: Arc<dyn switchboard_http_client::AuthProvider>,
    era: switchboard_client::EraMode,
) -> Result<ClientSession, switchboard_client::ClientError> {
    let config = HttpClientConfig::default().with_auth(provider);
    let transport = HttpClientTransport::connect(url, config).unwrap();
    Client::builder(Implementation::new("authorized", "1"))
        .era(era)
        .build()
        .connect(transport)
        .await
}

/// The text of a tool result's first content block.
pub fn text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Polls a condition until it holds (20 s at most).
#[allow(unused_imports)]
pub use switchboard_test_support::wait::until as eventually;

/// A transport driven frame by frame, without an engine: what is sent and received is exactly
/// what the test writes and reads.
pub struct RawClient {
    pub sink: HttpClientSink,
    pub source: HttpClientSource,
    pub handle: HttpClientHandle,
}

impl RawClient {
    pub fn new(url: &str, config: HttpClientConfig) -> RawClient {
        let transport = HttpClientTransport::connect(url, config).unwrap();
        let handle = transport.handle();
        let (sink, source) = transport.split();
        RawClient {
            sink,
            source,
            handle,
        }
    }

    /// Sends a `tools/call` request with `id`.
    pub async fn call(&mut self, id: i64) {
        let frame = OutboundFrame {
            text: json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "x", "arguments": {}}})
            .to_string(),
            kind: MessageKind::Request,
            id: Some(RequestId::int(id)),
            related: None,
            headers: Vec::new(),
            cancels: None,
        };
        self.sink.send(frame).await.unwrap();
    }

    /// The next message, as JSON (panics after `WAIT`, on a transport error or at the end).
    pub async fn recv(&mut self) -> Value {
        let text = tokio::time::timeout(WAIT, self.source.recv())
            .await
            .expect("a message in time")
            .expect("not the end")
            .expect("no transport error");
        serde_json::from_str(&text).unwrap()
    }
}

/// Asserts that `v` is a local error for request `id` with the `reason` in its data; returns
/// the error object.
pub fn local_error(v: &Value, id: i64, reason: &str) -> Value {
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert_eq!(v["error"]["data"]["reason"], reason, "{v}");
    v["error"].clone()
}

/// Registers a tool `late` on `server` and asserts that `session` hears of it (its
/// `tools/list_changed` arriving on the GET stream, `how` says which), then closes the session.
pub async fn late_tool_is_announced(server: &Server, session: ClientSession, how: &str) {
    server
        .add_tool(
            switchboard_types::tools::Tool::new("late", json!({"type": "object"})),
            |_| async { Ok(CallToolResult::text("late")) },
        )
        .unwrap();
    let tools = tokio::time::timeout(WAIT, session.tools_changed())
        .await
        .unwrap_or_else(|_| panic!("list_changed {how}"))
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "late"));
    session.close();
}
