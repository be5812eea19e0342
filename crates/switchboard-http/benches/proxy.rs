//! What the reverse proxy (`switchboard record --listen --url`) adds per frame, measured in
//! process on 127.0.0.1, with a tap that does what the CLI's recording does: one JSON line per
//! frame, written to a real file and flushed.
//!
//! | bench | one iteration |
//! |---|---|
//! | `http/{json,sse}/direct` | a `tools/call` round trip to an add server |
//! | `http/{json,sse}/via_record` | the same through the tapped reverse proxy (2 frames tapped) |
//!
//! The overhead per round trip is `via_record - direct`. The stdio relay's bench is
//! `switchboard-transport`'s `relay`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use switchboard_http::{HttpConfig, StreamableHttpService, proxy};
use switchboard_server::{Server, ToolError};
use switchboard_transport::{FrameTap, TappedFrame};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};
use tokio::net::TcpListener;

/// One JSON line per frame, flushed: the work of `switchboard record`'s tap.
struct FileTap(Mutex<std::io::BufWriter<std::fs::File>>);

impl FrameTap for FileTap {
    fn frame(&self, f: TappedFrame<'_>) {
        let mut line = json!({"ts_ms": 0.0, "direction": f.direction, "transport": "http", "session": f.session, "frame": f.text}).to_string();
        line.push('\n');
        let mut w = self.0.lock().unwrap();
        w.write_all(line.as_bytes()).unwrap();
        w.flush().unwrap();
    }
}

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

async fn start_server(json_response: bool) -> SocketAddr {
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&add_server()),
        HttpConfig::default().with_json_response(json_response),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(switchboard_http::serve(listener, service));
    addr
}

async fn start_proxy(upstream: SocketAddr, tap: Arc<dyn FrameTap>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{upstream}/mcp");
    tokio::spawn(
        async move { proxy::serve(listener, &url, tap, proxy::ProxyConfig::default()).await },
    );
    addr
}

/// A client session on `addr`: initialized, then one `tools/call` per [`Session::call`].
struct Session {
    client: reqwest::Client,
    url: String,
    id: String,
    next: AtomicI64,
}

impl Session {
    async fn open(addr: SocketAddr) -> Session {
        let client = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .unwrap();
        let url = format!("http://{addr}/mcp");
        let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}});
        let r = Self::post(&client, &url, None, init.to_string()).await;
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        r.bytes().await.unwrap();
        let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
        Self::post(&client, &url, Some(&id), note.to_string())
            .await
            .bytes()
            .await
            .unwrap();
        Session {
            client,
            url,
            id,
            next: AtomicI64::new(1),
        }
    }

    async fn post(
        client: &reqwest::Client,
        url: &str,
        session: Option<&str>,
        body: String,
    ) -> reqwest::Response {
        let mut rb = client
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body);
        if let Some(s) = session {
            rb = rb
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        rb.send().await.unwrap()
    }

    async fn call(&self) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}});
        let bytes = Self::post(&self.client, &self.url, Some(&self.id), body.to_string())
            .await
            .bytes()
            .await
            .unwrap();
        assert!(bytes.len() > 20);
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("sb-proxy-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("record");
    group
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for (mode, json_response) in [("json", true), ("sse", false)] {
        let (direct, proxied) = rt.block_on(async {
            let server = start_server(json_response).await;
            let file = std::fs::File::create(dir.join(format!("{mode}.jsonl"))).unwrap();
            let tap = Arc::new(FileTap(Mutex::new(std::io::BufWriter::new(file))));
            let proxy = start_proxy(server, tap).await;
            (Session::open(server).await, Session::open(proxy).await)
        });
        group.bench_function(format!("http/{mode}/direct"), |b| {
            b.to_async(&rt).iter(|| direct.call());
        });
        group.bench_function(format!("http/{mode}/via_record"), |b| {
            b.to_async(&rt).iter(|| proxied.call());
        });
    }
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, bench);
criterion_main!(benches);
