//! What `switchboard record` adds per frame, measured in process on 127.0.0.1 (the recording is
//! written to a real file, flushed per frame, as the CLI does).
//!
//! | bench | one iteration |
//! |---|---|
//! | `http/{json,sse}/direct` | a `tools/call` round trip to the add server (`switchboard-http`) |
//! | `http/{json,sse}/via_record` | the same through the recording reverse proxy (2 frames recorded) |
//! | `stdio/direct` | one frame line written to a pipe and read back |
//! | `stdio/via_record` | the same through the stdio relay (1 frame recorded) |
//!
//! The overhead per round trip is `via_record - direct` (two frames for HTTP, one for stdio).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use switchboard::http::{HttpConfig, StreamableHttpService};
use switchboard_cli::record::{Recording, http_proxy, stdio};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

async fn start_server(json_response: bool) -> SocketAddr {
    let server = switchboard_cli::examples::add_server(Default::default()).unwrap();
    let service = StreamableHttpService::new(
        server.session_factory(),
        HttpConfig::default().with_json_response(json_response),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(switchboard::http::serve(listener, service));
    addr
}

async fn start_proxy(upstream: SocketAddr, rec: Recording) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{upstream}/mcp");
    tokio::spawn(async move { http_proxy::serve(listener, &url, rec).await });
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
    let dir = std::env::temp_dir().join(format!("sb-record-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut group = c.benchmark_group("record");
    group
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    for (mode, json_response) in [("json", true), ("sse", false)] {
        let (direct, proxied) = rt.block_on(async {
            let server = start_server(json_response).await;
            let rec = Recording::create(dir.join(format!("{mode}.jsonl")).to_str().unwrap())
                .await
                .unwrap();
            let proxy = start_proxy(server, rec).await;
            (Session::open(server).await, Session::open(proxy).await)
        });
        group.bench_function(format!("http/{mode}/direct"), |b| {
            b.to_async(&rt).iter(|| direct.call());
        });
        group.bench_function(format!("http/{mode}/via_record"), |b| {
            b.to_async(&rt).iter(|| proxied.call());
        });
    }
    let frame = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}
"#;
    // Direct: a frame through one pipe.
    let (mut w, r) = tokio::io::duplex(64 * 1024);
    let mut r = BufReader::new(r);
    let mut line = Vec::new();
    group.bench_function("stdio/direct", |b| {
        b.iter(|| {
            line.clear();
            rt.block_on(async {
                w.write_all(frame).await.unwrap();
                w.flush().await.unwrap();
                r.read_until(b'\n', &mut line).await.unwrap();
            });
        });
    });
    // Through the relay: pipe, relay (recording), pipe.
    let (mut w, relay_in) = tokio::io::duplex(64 * 1024);
    let (relay_out, r) = tokio::io::duplex(64 * 1024);
    let rec = rt.block_on(Recording::create(dir.join("stdio.jsonl").to_str().unwrap()));
    rt.spawn(stdio::relay(relay_in, relay_out, rec.unwrap(), "c2s"));
    let mut r = BufReader::new(r);
    group.bench_function("stdio/via_record", |b| {
        b.iter(|| {
            line.clear();
            rt.block_on(async {
                w.write_all(frame).await.unwrap();
                w.flush().await.unwrap();
                r.read_until(b'\n', &mut line).await.unwrap();
            });
        });
    });
    group.finish();
    std::fs::remove_dir_all(&dir).ok();
}

criterion_group!(benches, bench);
criterion_main!(benches);
