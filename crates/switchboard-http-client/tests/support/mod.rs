//! Shared test support: a `switchboard_server::Server` with a few tools, served by the real
//! Streamable HTTP server crate on 127.0.0.1 behind a recording layer (every request's method,
//! headers), and a client with a sampling handler.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
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
use switchboard_http_client::{HttpClientConfig, HttpClientHandle, HttpClientTransport};
use switchboard_server::{Server, ToolError};
use switchboard_types::LoggingLevel;
use switchboard_types::content::TextContent;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::sampling::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard_types::tools::{CallToolResult, Tool};
use tokio::net::TcpListener;

pub const WAIT: Duration = Duration::from_secs(10);

/// The test server: `echo`, `chatty` (progress and a log before answering), `slow` (sleeps
/// `ms`), `sample` (asks the client for sampling, related to its request).
pub fn test_server() -> Server {
    let obj = json!({"type": "object"});
    Server::builder(Implementation::new("http-client-test", "0.1.0"))
        .enable_logging()
        .tool(
            Tool::new("echo", obj.clone()).with_description("echoes its arguments"),
            |call| async move {
                Ok(CallToolResult::text(
                    serde_json::to_string(&call.arguments).unwrap(),
                ))
            },
        )
        .tool(
            Tool::new("chatty", obj.clone()).with_description("progress and a log first"),
            |call| async move {
                call.cx
                    .progress(1.0, Some(2.0), Some("half way"))
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                call.cx
                    .log(LoggingLevel::Info, json!("working"))
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(CallToolResult::text("done"))
            },
        )
        .tool(
            Tool::new("slow", obj.clone()).with_description("sleeps ms milliseconds"),
            |call| async move {
                let ms = call
                    .arguments
                    .get("ms")
                    .and_then(Value::as_u64)
                    .unwrap_or(100);
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(CallToolResult::text(format!("slept {ms}")))
            },
        )
        .tool(
            Tool::new("sample", obj).with_description("asks the client to sample"),
            |call| async move {
                let params =
                    CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
                let r = call
                    .cx
                    .create_message(params)
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?;
                Ok(CallToolResult::text(serde_json::to_string(&r).unwrap()))
            },
        )
        .build()
        .unwrap()
}

/// One HTTP request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
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
    live_with(server, config, false).await
}

/// Like [`live`]; with `cut_first_get`, the first GET stream's connection is closed after its
/// first body chunk (the priming event), as a dropped connection would be.
pub async fn live_with(server: &Server, config: HttpConfig, cut_first_get: bool) -> Live {
    let cut = Arc::new(AtomicBool::new(cut_first_get));
    let service =
        StreamableHttpService::new(switchboard::server_http::session_factory(server), config);
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let record = seen.clone();
    let router = service.router().layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let record = record.clone();
            let cut = cut.clone();
            async move {
                let first_get = req.method() == "GET"
                    && !req.headers().contains_key("last-event-id")
                    && cut.swap(false, Ordering::AcqRel);
                record.lock().unwrap().push(Seen {
                    method: req.method().to_string(),
                    session: header(&req, "mcp-session-id"),
                    version: header(&req, "mcp-protocol-version"),
                    accept: header(&req, "accept"),
                    content_type: header(&req, "content-type"),
                    last_event_id: header(&req, "last-event-id"),
                });
                let resp = next.run(req).await;
                if !first_get {
                    return resp;
                }
                let (parts, body) = resp.into_parts();
                let one = body.into_data_stream().take(1);
                Response::from_parts(parts, Body::from_stream(one))
            }
        },
    ));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
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

/// A client that answers sampling with "sampled by the test client".
pub fn client() -> Client {
    Client::builder(Implementation::new("http-client-test-client", "1.0.0"))
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

/// The text of a tool result's first content block.
pub fn text(result: &CallToolResult) -> String {
    let v = serde_json::to_value(result).unwrap();
    v["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until `cond` holds (polling), or panics after `WAIT`.
pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !cond() {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
