//! The HTTP+SSE fallback (SPEC-NOTES §6.9) against a tiny 2024-11-05 HTTP+SSE server written here:
//! `GET /sse` opens the stream (first event `endpoint`, then `message` events), `POST
//! /messages?sessionId=N` takes every client message (202). A POST to `/sse` gets 405, which is
//! what sends the client to the old transport.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::json;
use support::{WAIT, connect, test_server, text};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport, HttpMode};
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, TransportError};
use switchboard_server::Server;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The engine's frames, to the SSE stream.
struct SseSink(mpsc::Sender<String>);
/// The POSTed messages, to the engine.
struct SseSource(mpsc::Receiver<String>);

impl FrameSink for SseSink {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        self.0
            .send(frame.text)
            .await
            .map_err(|_| TransportError::Closed)
    }
}

impl FrameSource for SseSource {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        self.0.recv().await.map(Ok)
    }
}

struct SseServer {
    server: Server,
    sessions: Mutex<HashMap<u64, mpsc::Sender<String>>>,
    next: AtomicU64,
    /// Ends every SSE stream.
    kill: CancellationToken,
    posts: AtomicU64,
}

async fn sse(State(st): State<Arc<SseServer>>) -> Response {
    let id = st.next.fetch_add(1, Ordering::Relaxed);
    let (in_tx, in_rx) = mpsc::channel::<String>(64);
    let (out_tx, out_rx) = mpsc::channel::<String>(64);
    st.sessions.lock().unwrap().insert(id, in_tx);
    st.server
        .serve((SseSink(out_tx), SseSource(in_rx)))
        .unwrap();
    let first = format!("event: endpoint\ndata: /messages?sessionId={id}\n\n");
    let kill = st.kill.clone();
    let events = futures::stream::unfold(
        (Some(first), out_rx, kill),
        |(first, mut rx, kill)| async move {
            if let Some(f) = first {
                return Some((Ok::<_, Infallible>(Bytes::from(f)), (None, rx, kill)));
            }
            let text = tokio::select! {
                t = rx.recv() => t?,
                _ = kill.cancelled() => return None,
            };
            let event = format!("event: message\ndata: {text}\n\n");
            Some((Ok(Bytes::from(event)), (None, rx, kill)))
        },
    );
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(events))
        .unwrap()
}

async fn messages(State(st): State<Arc<SseServer>>, uri: Uri, body: String) -> StatusCode {
    st.posts.fetch_add(1, Ordering::Relaxed);
    let id = uri
        .query()
        .and_then(|q| q.strip_prefix("sessionId="))
        .and_then(|n| n.parse::<u64>().ok());
    let tx = id.and_then(|id| st.sessions.lock().unwrap().get(&id).cloned());
    match tx {
        Some(tx) if tx.send(body).await.is_ok() => StatusCode::ACCEPTED,
        _ => StatusCode::NOT_FOUND,
    }
}

async fn http_sse_server() -> (String, Arc<SseServer>) {
    let st = Arc::new(SseServer {
        server: test_server(),
        sessions: Mutex::default(),
        next: AtomicU64::new(0),
        kill: CancellationToken::new(),
        posts: AtomicU64::new(0),
    });
    let app = axum::Router::new()
        .route("/sse", get(sse))
        .route("/messages", post(messages))
        .with_state(st.clone());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/sse"), st)
}

#[tokio::test]
async fn a_405_to_initialize_falls_back_to_http_sse() {
    let (url, st) = http_sse_server().await;
    let (session, handle) = connect(&url, HttpClientConfig::default()).await;
    assert_eq!(handle.mode(), HttpMode::HttpSse);
    assert_eq!(handle.session_id(), None);
    let r = session.call_tool("echo", json!({"x": "y"})).await.unwrap();
    assert_eq!(text(&r), r#"{"x":"y"}"#);
    // A server request on the HTTP+SSE stream, answered with a POST to the endpoint.
    let r = tokio::time::timeout(WAIT, session.call_tool("sample", json!({})))
        .await
        .expect("in time")
        .unwrap();
    assert!(text(&r).contains("sampled by the test client"));
    // initialize, initialized, two calls, one sampling answer: all POSTed to the endpoint.
    assert_eq!(st.posts.load(Ordering::Relaxed), 5);
    session.close();
    session.closed().await;
}

#[tokio::test]
async fn the_http_sse_stream_closing_is_fatal() {
    let (url, st) = http_sse_server().await;
    let (session, _) = connect(&url, HttpClientConfig::default()).await;
    st.kill.cancel();
    tokio::time::timeout(WAIT, session.closed())
        .await
        .expect("the session closes");
    let reason = session.peer().close_reason().unwrap_or_default();
    assert!(reason.contains("HTTP+SSE stream"), "{reason}");
}

#[tokio::test]
async fn without_the_fallback_the_405_is_the_callers_error() {
    let (url, _st) = http_sse_server().await;
    let transport = HttpClientTransport::connect(
        &url,
        HttpClientConfig::default().with_http_sse_fallback(false),
    )
    .unwrap();
    let r = tokio::time::timeout(WAIT, support::client().connect(transport))
        .await
        .expect("in time");
    let e = r.expect_err("no Streamable HTTP server here");
    assert!(e.to_string().contains("405"), "{e}");
}
