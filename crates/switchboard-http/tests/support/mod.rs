//! Shared test support: a small `switchboard_server::Server`, request builders for `oneshot`,
//! a real 127.0.0.1 server with a hyper client, and an SSE event reader.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use switchboard_http::{HttpConfig, StreamableHttpService};
use switchboard_server::Server;
use switchboard_test_support::server::tool_server;
use switchboard_types::tools::{CallToolResult, Tool};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

pub const ACCEPT_BOTH: &str = "application/json, text/event-stream";

/// The test server: `echo`, `chatty` (progress + log before answering), `slow` (sleeps `ms`),
/// `sample` (asks the client for sampling, related to its request) from
/// [`switchboard_test_support::server::tool_server`], and `reconnect` (closes its own SSE stream,
/// then answers).
pub fn test_server() -> Server {
    test_server_builder().build().unwrap()
}

/// [`test_server`] with one tool more, `held`: it counts each call as it starts, then sleeps
/// `ms` (100 when absent). A test waits for the count instead of sleeping while a request gets
/// into its handler.
pub fn test_server_counting_held() -> (Server, Arc<AtomicUsize>) {
    let started = Arc::new(AtomicUsize::new(0));
    let count = started.clone();
    let server = test_server_builder()
        .tool(
            Tool::new("held", json!({"type": "object"})).with_description("counted, then slow"),
            move |call| {
                count.fetch_add(1, Ordering::SeqCst);
                switchboard_test_support::server::slow(call, 100)
            },
        )
        .build()
        .unwrap();
    (server, started)
}

fn test_server_builder() -> switchboard_server::ServerBuilder {
    tool_server("http-test").tool(
        Tool::new("reconnect", json!({"type": "object"}))
            .with_description("closes its SSE stream, then answers (SEP-1699)"),
        |call| async move {
            let closed = call.cx.close_stream();
            // Not a wait: the tool answers after a pause, once its stream is closed (the scenario).
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(CallToolResult::text(format!("closed={closed}")))
        },
    )
}

/// A service over `server` with `config`.
pub fn service_for(server: &Server, config: HttpConfig) -> StreamableHttpService {
    StreamableHttpService::new(switchboard::server_http::session_factory(server), config)
}

pub fn init_body(id: i64, version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version,
        "capabilities": {"sampling": {}},
        "clientInfo": {"name": "http-test-client", "version": "1.0.0"}
    }})
    .to_string()
}

pub fn initialized_body() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string()
}

pub fn call_body(id: i64, tool: &str, args: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": args, "_meta": {"progressToken": format!("p{id}")}
    }})
    .to_string()
}

/// A POST request to `/mcp` with the right headers (`Host: localhost`).
pub fn post_req(session: Option<&str>) -> http::request::Builder {
    let b = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json");
    match session {
        Some(s) => b.header("mcp-session-id", s),
        None => b,
    }
}

pub fn post(session: Option<&str>, body: impl Into<String>) -> Request<Body> {
    let body: String = body.into();
    post_req(session).body(Body::from(body)).unwrap()
}

pub async fn oneshot(svc: &StreamableHttpService, req: Request<Body>) -> Response<Body> {
    svc.clone().oneshot(req).await.unwrap()
}

pub async fn body_text(resp: Response<Body>) -> String {
    let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .unwrap();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// Initializes a session (2025-11-25 unless given) and sends `notifications/initialized`.
pub async fn open_session(svc: &StreamableHttpService, version: &str) -> String {
    let resp = oneshot(svc, post(None, init_body(0, version))).await;
    assert_eq!(resp.status(), 200);
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .expect("session id")
        .to_str()
        .unwrap()
        .to_owned();
    let _ = body_text(resp).await;
    let resp = oneshot(svc, post(Some(&sid), initialized_body())).await;
    assert_eq!(resp.status(), 202);
    sid
}

/// One parsed SSE event (or comment).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SseEvent {
    pub id: Option<String>,
    pub data: Option<String>,
    pub retry: Option<u64>,
    pub comment: bool,
}

impl SseEvent {
    pub fn json(&self) -> Value {
        serde_json::from_str(self.data.as_deref().unwrap_or("null")).unwrap()
    }

    /// `(stream, seq)` of the event id.
    pub fn stream_seq(&self) -> (u64, u64) {
        let id = self.id.as_deref().unwrap();
        let (a, b) = id.split_once('-').unwrap();
        (a.parse().unwrap(), b.parse().unwrap())
    }
}

pub fn parse_block(block: &str) -> SseEvent {
    let mut ev = SseEvent::default();
    let mut data: Vec<&str> = Vec::new();
    for line in block.lines() {
        if line.starts_with(':') {
            ev.comment = true;
        } else if let Some(v) = line.strip_prefix("id:") {
            ev.id = Some(v.trim_start().to_owned());
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
        } else if let Some(v) = line.strip_prefix("retry:") {
            ev.retry = Some(v.trim().parse().unwrap());
        }
    }
    if !data.is_empty() {
        ev.data = Some(data.join("\n"));
    }
    ev
}

/// Parses a whole SSE body (without comments).
pub fn parse_sse(text: &str) -> Vec<SseEvent> {
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(parse_block)
        .filter(|e| !e.comment)
        .collect()
}

/// Reads SSE events from a streaming body, one at a time.
pub struct SseReader<B> {
    body: B,
    buf: String,
}

impl<B> SseReader<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Debug,
{
    pub fn new(body: B) -> Self {
        SseReader {
            body,
            buf: String::new(),
        }
    }

    /// The next event or comment; `None` at the end of the body. Panics after `wait`.
    pub async fn next(&mut self, wait: Duration) -> Option<SseEvent> {
        tokio::time::timeout(wait, self.next_inner())
            .await
            .expect("timed out waiting for an SSE event")
    }

    /// Like `next`, skipping comments.
    pub async fn next_event(&mut self, wait: Duration) -> Option<SseEvent> {
        loop {
            let e = self.next(wait).await?;
            if !e.comment {
                return Some(e);
            }
        }
    }

    async fn next_inner(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(i) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..i + 2).collect();
                return Some(parse_block(&block));
            }
            match self.body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        self.buf.push_str(std::str::from_utf8(&d).unwrap());
                    }
                }
                Some(Err(e)) => panic!("body error: {e:?}"),
                None => return None,
            }
        }
    }
}

/// A real server on 127.0.0.1 (port 0), stopped when dropped.
pub struct Live {
    pub addr: SocketAddr,
    pub service: StreamableHttpService,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    served: Option<tokio::task::JoinHandle<()>>,
}

impl Live {
    /// Shuts the server down and waits until it has: its sessions ended, its listener closed.
    #[allow(dead_code)]
    pub async fn stop(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(served) = self.served.take() {
            served.await.unwrap();
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

pub async fn live(server: &Server, config: HttpConfig) -> Live {
    let service = service_for(server, config);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let svc = service.clone();
    let served = tokio::spawn(async move {
        let _ = switchboard_http::serve_with_shutdown(listener, svc, async move {
            let _ = rx.await;
        })
        .await;
    });
    Live {
        addr,
        service,
        stop: Some(tx),
        served: Some(served),
    }
}

/// Sends one request on a fresh HTTP/1.1 connection.
pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Response<Incoming> {
    let stream = TcpStream::connect(addr).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    sender.send_request(req).await.unwrap()
}

pub fn wire_post(addr: SocketAddr, session: Option<&str>, body: String) -> Request<Full<Bytes>> {
    let b = Request::post("/mcp")
        .header("host", addr.to_string())
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json");
    let b = match session {
        Some(s) => b.header("mcp-session-id", s),
        None => b,
    };
    b.body(Full::new(Bytes::from(body))).unwrap()
}

pub fn wire_get(
    addr: SocketAddr,
    session: &str,
    last_event_id: Option<&str>,
) -> Request<Full<Bytes>> {
    let b = Request::get("/mcp")
        .header("host", addr.to_string())
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25");
    let b = match last_event_id {
        Some(l) => b.header("last-event-id", l),
        None => b,
    };
    b.body(Full::new(Bytes::new())).unwrap()
}

/// Initializes a session over the wire; returns its id.
pub async fn wire_session(addr: SocketAddr) -> String {
    let resp = send(addr, wire_post(addr, None, init_body(0, "2025-11-25"))).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = resp.into_body().collect().await.unwrap();
    let resp = send(addr, wire_post(addr, Some(&sid), initialized_body())).await;
    assert_eq!(resp.status(), 202);
    sid
}

/// Sends `head` (request line and headers, `\r\n` line ends, without the blank line) and
/// `body` on a raw TCP connection; returns the status code and the whole answer as text.
pub async fn raw_exchange(addr: SocketAddr, head: &str, body: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(WAIT, s.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

pub const WAIT: Duration = Duration::from_secs(5);
