//! `tools/call` round trips over a real 127.0.0.1 socket: a hyper HTTP/1.1 client against
//! `switchboard serve`'s stack (`Server` + `StreamableHttpService`), with 1 and 32 calls in
//! flight (one keep-alive connection per call in flight), answered on an SSE stream (the
//! default) or as one JSON body (`json_response`).
//!
//! | bench | what one iteration is |
//! |---|---|
//! | `tools_call/sse/1`, `tools_call/json/1` | one call, one connection |
//! | `tools_call/sse/32`, `tools_call/json/32` | 32 calls at once on 32 connections |
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use switchboard_http::{HttpConfig, StreamableHttpService};
use switchboard_server::{Server, ToolError};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

fn add_server() -> Server {
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
    Server::builder(Implementation::new("bench", "0.1.0"))
        .tool(
            Tool::new("add", schema).with_description("Add two numbers"),
            |call| async move {
                let n = |k: &str| call.arguments.get(k).and_then(Value::as_i64);
                match (n("a"), n("b")) {
                    (Some(a), Some(b)) => Ok(CallToolResult::text((a + b).to_string())),
                    _ => Err(ToolError::new("a and b must be integers")),
                }
            },
        )
        .build()
        .unwrap()
}

async fn start(json_response: bool) -> SocketAddr {
    let server = add_server();
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&server),
        HttpConfig::default().with_json_response(json_response),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(switchboard_http::serve(listener, service));
    addr
}

async fn connect(addr: SocketAddr) -> SendRequest<Full<Bytes>> {
    let tcp = TcpStream::connect(addr).await.unwrap();
    tcp.set_nodelay(true).unwrap();
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .unwrap();
    tokio::spawn(conn);
    sender
}

fn post(addr: SocketAddr, session: Option<&str>, body: String) -> Request<Full<Bytes>> {
    let b = Request::post("/mcp")
        .header("host", addr.to_string())
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25");
    let b = match session {
        Some(s) => b.header("mcp-session-id", s),
        None => b,
    };
    b.body(Full::new(Bytes::from(body))).unwrap()
}

/// Sends one request and reads the whole answer (an SSE stream ends after the response).
async fn roundtrip(conn: &mut SendRequest<Full<Bytes>>, req: Request<Full<Bytes>>) -> Bytes {
    conn.ready().await.unwrap();
    let resp = conn.send_request(req).await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    resp.into_body().collect().await.unwrap().to_bytes()
}

struct Client {
    addr: SocketAddr,
    session: String,
    conns: Vec<Mutex<SendRequest<Full<Bytes>>>>,
    next_id: AtomicI64,
}

async fn client(addr: SocketAddr, conns: usize) -> Arc<Client> {
    let mut c = connect(addr).await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}})
    .to_string();
    c.ready().await.unwrap();
    let resp = c.send_request(post(addr, None, init)).await.unwrap();
    let session = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = resp.into_body().collect().await.unwrap();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let _ = roundtrip(&mut c, post(addr, Some(&session), note)).await;
    let mut all = vec![Mutex::new(c)];
    for _ in 1..conns {
        all.push(Mutex::new(connect(addr).await));
    }
    Arc::new(Client {
        addr,
        session,
        conns: all,
        next_id: AtomicI64::new(1),
    })
}

async fn call(c: &Client, i: usize) {
    let id = c.next_id.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": id, "b": 1}}})
    .to_string();
    let mut conn = c.conns[i].lock().await;
    let answer = roundtrip(&mut conn, post(c.addr, Some(&c.session), body)).await;
    debug_assert!(std::str::from_utf8(&answer).unwrap().contains("\"result\""));
}

fn bench(cr: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = cr.benchmark_group("tools_call");
    for (mode, json_response) in [("sse", false), ("json", true)] {
        let addr = rt.block_on(start(json_response));
        for in_flight in [1usize, 32] {
            let c = rt.block_on(client(addr, in_flight));
            group.throughput(Throughput::Elements(in_flight as u64));
            group.bench_function(format!("{mode}/{in_flight}"), |b| {
                b.to_async(&rt).iter(|| {
                    let c = c.clone();
                    async move {
                        let calls = (0..in_flight).map(|i| {
                            let c = c.clone();
                            tokio::spawn(async move { call(&c, i).await })
                        });
                        for t in futures::future::join_all(calls).await {
                            t.unwrap();
                        }
                    }
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
