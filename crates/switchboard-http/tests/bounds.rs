//! Every bound of the endpoint crossed on 127.0.0.1 by a client that behaves as an attacker
//! would: a stalled body, headers that never end, idle connections, too many connections, a
//! GET stream never read, replays at once, a huge snapshot, a batch repeating an id. Each time
//! the offender gets the right answer (408, 413, 503) or is disconnected within the bound, the
//! server keeps serving everyone else, and the session survives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::*;
use switchboard_http::{
    ConnectionLimits, HttpConfig, HttpSessionTransport, InMemorySessionStore, SessionStore,
    StreamableHttpService,
};
use switchboard_jsonrpc::{
    BoxFuture, HandlerResult, Peer, RequestContext, Service, SessionConfig, spawn,
};
use switchboard_types::jsonrpc::{MAX_BATCH_ENTRIES, to_raw};
use switchboard_types::{Notification, Request as RpcRequest, methods};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A server on 127.0.0.1 for `service`, stopped when the returned sender is dropped.
async fn serve(service: StreamableHttpService) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = switchboard_http::serve_with_shutdown(listener, service, async move {
            let _ = rx.await;
        })
        .await;
    });
    (addr, tx)
}

/// The head of a POST to `/mcp` with every header the endpoint asks for.
fn post_head(addr: SocketAddr, session: Option<&str>, extra: &str) -> String {
    let session = session.map_or(String::new(), |s| format!("mcp-session-id: {s}\r\n"));
    format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: {ACCEPT_BOTH}\r\ncontent-type: application/json\r\n{session}{extra}\r\n"
    )
}

/// Reads an HTTP answer's head (up to the blank line) within `wait`.
async fn read_head(tcp: &mut TcpStream, wait: Duration) -> String {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    tokio::time::timeout(wait, async {
        while !head.ends_with(b"\r\n\r\n") {
            if tcp.read(&mut byte).await.unwrap() == 0 {
                break;
            }
            head.push(byte[0]);
        }
    })
    .await
    .expect("no answer in time");
    String::from_utf8(head).unwrap()
}

/// Reads (and drops) until the server closes the connection; `None` if it is still open after
/// `wait`, else how long it took.
async fn closed_within(tcp: &mut TcpStream, wait: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = vec![0u8; 64 * 1024];
    tokio::time::timeout(wait, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
    .map(|()| start.elapsed())
}

/// One `tools/call` of `echo` on a fresh connection: the server still serves.
async fn still_served(addr: SocketAddr, sid: &str) {
    let resp = send(
        addr,
        wire_post(addr, Some(sid), call_body(9, "echo", json!({"ok": 1}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(body.to_vec()).unwrap();
    assert!(text.contains(r#"\"ok\":1"#), "{text}");
}

fn limits() -> ConnectionLimits {
    ConnectionLimits::default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_bodies_get_408_and_are_closed_while_everyone_else_is_served() {
    let config = HttpConfig::default()
        .with_connection_limits(limits().with_body_read_timeout(Some(Duration::from_millis(500))));
    let server = live(&test_server(), config).await;
    let addr = server.addr;
    let sid = wire_session(addr).await;
    // 40 connections declare 1 MiB, send 256 KiB and stop.
    let declared = 1024 * 1024;
    let mut stalled = Vec::new();
    for _ in 0..40 {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let head = post_head(addr, Some(&sid), &format!("content-length: {declared}\r\n"));
        tcp.write_all(head.as_bytes()).await.unwrap();
        tcp.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":""#)
            .await
            .unwrap();
        tcp.write_all(&vec![b'a'; 256 * 1024]).await.unwrap();
        stalled.push(tcp);
    }
    let started = Instant::now();
    still_served(addr, &sid).await;
    for tcp in &mut stalled {
        let head = read_head(tcp, Duration::from_secs(5)).await;
        assert!(head.starts_with("HTTP/1.1 408"), "{head}");
        assert!(
            head.to_ascii_lowercase().contains("connection: close"),
            "{head}"
        );
        assert!(closed_within(tcp, Duration::from_secs(2)).await.is_some());
    }
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    still_served(addr, &sid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_over_the_bound_gets_413_declared_or_streamed() {
    let config = HttpConfig::default().with_max_body_bytes(64 * 1024);
    let server = live(&test_server(), config).await;
    let addr = server.addr;
    let sid = wire_session(addr).await;
    // Declared too large: refused before any byte of the body is read.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let head = post_head(addr, Some(&sid), "content-length: 104857600\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    let head = read_head(&mut tcp, Duration::from_secs(5)).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(
        closed_within(&mut tcp, Duration::from_secs(2))
            .await
            .is_some()
    );
    // Streamed (chunked, no length): refused once the bound is crossed.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let head = post_head(addr, Some(&sid), "transfer-encoding: chunked\r\n");
    tcp.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..10 {
        let chunk = vec![b' '; 16 * 1024];
        let framed = [
            format!("{:x}\r\n", chunk.len()).into_bytes(),
            chunk,
            b"\r\n".to_vec(),
        ];
        if tcp.write_all(&framed.concat()).await.is_err() {
            break;
        }
    }
    let head = read_head(&mut tcp, Duration::from_secs(5)).await;
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(
        closed_within(&mut tcp, Duration::from_secs(2))
            .await
            .is_some()
    );
    still_served(addr, &sid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_that_never_end_are_cut_at_the_header_timeout() {
    let config = HttpConfig::default().with_connection_limits(
        limits()
            .with_header_read_timeout(Some(Duration::from_millis(300)))
            .with_keep_alive_timeout(Some(Duration::from_secs(30))),
    );
    let server = live(&test_server(), config).await;
    let addr = server.addr;
    let sid = wire_session(addr).await;
    let mut slow = Vec::new();
    for _ in 0..10 {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(format!("POST /mcp HTTP/1.1\r\nhost: {addr}\r\nx-slow: ").as_bytes())
            .await
            .unwrap();
        slow.push(tcp);
    }
    still_served(addr, &sid).await;
    for tcp in &mut slow {
        let took = closed_within(tcp, Duration::from_secs(3))
            .await
            .expect("closed");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    still_served(addr, &sid).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_close_at_the_keep_alive_timeout_and_requests_in_flight_do_not() {
    let config = HttpConfig::default()
        .with_json_response(true)
        .with_keep_alive(None)
        .with_connection_limits(
            limits()
                .with_keep_alive_timeout(Some(Duration::from_millis(300)))
                .with_header_read_timeout(Some(Duration::from_secs(30))),
        );
    let server = live(&test_server(), config).await;
    let addr = server.addr;
    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    let took = closed_within(&mut silent, Duration::from_secs(3))
        .await
        .expect("closed");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // A connection idle after its answer.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    let body = init_body(1, "2025-11-25");
    let head = post_head(addr, None, &format!("content-length: {}\r\n", body.len()));
    tcp.write_all(format!("{head}{body}").as_bytes())
        .await
        .unwrap();
    let head = read_head(&mut tcp, Duration::from_secs(5)).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let sid = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .to_owned();
    let took = closed_within(&mut tcp, Duration::from_secs(3))
        .await
        .expect("closed");
    assert!(took < Duration::from_secs(2), "{took:?}");
    let resp = send(addr, wire_post(addr, Some(&sid), initialized_body())).await;
    assert_eq!(resp.status(), 202);
    // A request in flight longer than the keep-alive timeout is answered.
    let resp = send(
        addr,
        wire_post(addr, Some(&sid), call_body(2, "slow", json!({"ms": 900}))),
    )
    .await;
    let text = resp.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("slept 900"), "{text}");
    // So is an SSE stream with nothing to say (keep-alive comments off).
    let resp = send(addr, wire_get(addr, &sid, None)).await;
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let first = body.frame().await.unwrap().unwrap();
    assert!(first.is_data(), "the priming event");
    let waited = tokio::time::timeout(Duration::from_millis(1200), body.frame()).await;
    assert!(waited.is_err(), "the stream is still open: {waited:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_bound_get_503_and_the_others_are_served() {
    let config = HttpConfig::default().with_connection_limits(limits().with_max_connections(3));
    let server = live(&test_server(), config).await;
    let addr = server.addr;
    let sid = wire_session(addr).await;
    // Three connections held, each known to be served (the connections of `wire_session` are
    // released once the server has seen them close: until then a new one may be refused).
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(served_connection(addr, &sid).await);
    }
    let mut extra = TcpStream::connect(addr).await.unwrap();
    let head = ping_on(&mut extra, addr, &sid).await;
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(head.contains("retry-after: 1"), "{head}");
    let mut rest = String::new();
    extra.read_to_string(&mut rest).await.unwrap();
    assert!(rest.contains("too_many_connections"), "{rest}");
    // One held connection serves a request; another leaves and makes room.
    let mut first = held.pop().unwrap();
    let head = ping_on(&mut first, addr, &sid).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    drop(first);
    let _room = served_connection(addr, &sid).await;
}

/// Sends a ping on `tcp` and returns the answer's head; a 200's body is read as well, so the
/// connection is ready for the next request.
async fn ping_on(tcp: &mut TcpStream, addr: SocketAddr, sid: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": methods::PING}).to_string();
    let head = post_head(
        addr,
        Some(sid),
        &format!("content-length: {}\r\n", body.len()),
    );
    tcp.write_all(format!("{head}{body}").as_bytes())
        .await
        .unwrap();
    let head = read_head(tcp, Duration::from_secs(5)).await;
    if !head.starts_with("HTTP/1.1 200") {
        return head;
    }
    match head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
    {
        Some(len) => {
            let mut rest = vec![0u8; len.trim().parse().unwrap()];
            tcp.read_exact(&mut rest).await.unwrap();
        }
        // A chunked stream: up to its last chunk.
        None => {
            let mut rest = Vec::new();
            let mut byte = [0u8; 1];
            while !rest.ends_with(b"\r\n0\r\n\r\n") {
                assert_eq!(tcp.read(&mut byte).await.unwrap(), 1, "the stream's end");
                rest.push(byte[0]);
            }
        }
    }
    head
}

/// A new connection that a ping shows to be served (one refused with 503 is retried: the
/// server releases a closed connection's place once it has seen it close).
async fn served_connection(addr: SocketAddr, sid: &str) -> TcpStream {
    let deadline = switchboard_test_support::wait::Deadline::new("a connection served");
    loop {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        if ping_on(&mut tcp, addr, sid)
            .await
            .starts_with("HTTP/1.1 200")
        {
            return tcp;
        }
        deadline.tick().await;
    }
}

/// A stand-in role answering `{}` to everything; the test sends notifications through its
/// peers.
struct Quiet;

impl Service for Quiet {
    fn call(&self, _req: RpcRequest, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        Box::pin(async { Ok(to_raw(&json!({})).unwrap()) })
    }

    fn notify(&self, _n: Notification, _peer: &Peer) {}
}

/// A service over [`Quiet`] that keeps each session's peer.
fn quiet_service(config: HttpConfig) -> (StreamableHttpService, Arc<Mutex<Vec<Peer>>>) {
    let peers: Arc<Mutex<Vec<Peer>>> = Arc::default();
    let keep = peers.clone();
    let factory = move |t: HttpSessionTransport| {
        let peer = spawn(t, Arc::new(Quiet), SessionConfig::default());
        keep.lock().unwrap().push(peer.clone());
        Ok(peer)
    };
    (StreamableHttpService::new(factory, config), peers)
}

async fn log(peer: &Peer, data: &str) {
    let params = json!({"level": "info", "data": data});
    let _ = peer
        .notify(methods::NOTIFICATIONS_MESSAGE, Some(&params))
        .await;
}

/// Initializes a session of `service` on `addr`; returns its id.
async fn quiet_session(addr: SocketAddr) -> String {
    let resp = send(addr, wire_post(addr, None, init_body(1, "2025-11-25"))).await;
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = resp.into_body().collect().await.unwrap();
    sid
}

/// Opens the GET stream of `sid` from a client that never reads (a small receive buffer, so
/// that the server's socket fills quickly).
async fn unread_get(addr: SocketAddr, sid: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut tcp = socket.connect(addr).await.unwrap();
    let head = format!(
        "GET /mcp HTTP/1.1\r\nhost: {addr}\r\naccept: text/event-stream\r\nmcp-session-id: {sid}\r\n\r\n"
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    // The stream is open once its answer's head arrives: waited for with `peek`, which leaves
    // the bytes in the (small) receive buffer, as a client that reads nothing would.
    let mut first = [0u8; 1];
    tokio::time::timeout(Duration::from_secs(5), tcp.peek(&mut first))
        .await
        .expect("the GET stream's answer within 5 s")
        .unwrap();
    tcp
}

/// More than the socket buffers hold (4 MiB at most here), paced so that a client reading
/// would keep up.
async fn flood(peer: &Peer) {
    let chunk = "x".repeat(32 * 1024);
    for _ in 0..400 {
        log(peer, &chunk).await;
        // Pacing, not waiting: the sender's rate is part of the scenario.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_stream_never_read_stops_keeping_its_session_alive() {
    let config = HttpConfig::default()
        .with_idle_timeout(Some(Duration::from_millis(300)))
        .with_stream_stall_timeout(Some(Duration::from_millis(300)));
    let (service, peers) = quiet_service(config);
    let (addr, _stop) = serve(service.clone()).await;
    let sid = quiet_session(addr).await;
    let _reader = unread_get(addr, &sid).await;
    let peer = peers.lock().unwrap()[0].clone();
    flood(&peer).await;
    // The stream (dropped as stalled, or as too slow) no longer counts as live: the idle
    // session is reaped although the client is still connected.
    switchboard_test_support::wait::until("the session expired", || service.session_count() == 0)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reads_nothing_is_disconnected_at_the_write_timeout() {
    // No other bound can end this stream: no stall timeout, room for every event.
    let config = HttpConfig::default()
        .with_stream_stall_timeout(None)
        .with_stream_queue(100_000)
        .with_stream_queue_bytes(64 * 1024 * 1024)
        .with_connection_limits(limits().with_write_timeout(Some(Duration::from_millis(500))));
    let (service, peers) = quiet_service(config);
    let (addr, _stop) = serve(service.clone()).await;
    let sid = quiet_session(addr).await;
    let mut reader = unread_get(addr, &sid).await;
    let peer = peers.lock().unwrap()[0].clone();
    flood(&peer).await;
    // Past the write timeout the server has closed the connection: reading now finds its end
    // (the stream itself would never end, and the keep-alive timeout is 60 s).
    // Not a wait: the client reads nothing for 3 s (six write timeouts: a loaded machine may
    // run the server's blocked write late); reading sooner would unblock the writes.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        closed_within(&mut reader, Duration::from_secs(5))
            .await
            .is_some(),
        "the connection was closed"
    );
    // The session outlives its connection: the client may resume.
    assert_eq!(service.session_count(), 1);
    let resp = send(addr, wire_get(addr, &sid, Some("0-1"))).await;
    assert_eq!(resp.status(), 200);
}

fn get_req(session: &str, last_event_id: Option<&str>) -> Request<Body> {
    let b = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session);
    let b = match last_event_id {
        Some(l) => b.header("last-event-id", l),
        None => b,
    };
    b.body(Body::empty()).unwrap()
}

#[tokio::test]
async fn replays_come_a_page_at_a_time_and_too_many_at_once_get_503() {
    let config = HttpConfig::default().with_max_concurrent_replays(1);
    let (service, peers) = quiet_service(config);
    let resp = oneshot(&service, post(None, init_body(1, "2025-11-25"))).await;
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = body_text(resp).await;
    // 150 events on the GET stream (ids 0-2 ..= 0-151), kept by the store.
    let get = oneshot(&service, get_req(&sid, None)).await;
    assert_eq!(get.status(), 200);
    let peer = peers.lock().unwrap()[0].clone();
    for n in 0..150 {
        log(&peer, &n.to_string()).await;
    }
    let mut live = SseReader::new(get.into_body());
    let mut last = (0, 0);
    while last != (0, 151) {
        last = live.next_event(WAIT).await.unwrap().stream_seq();
    }
    drop(live);
    // A replay of more than one page holds its place until it has caught up.
    let first = oneshot(&service, get_req(&sid, Some("0-1"))).await;
    assert_eq!(first.status(), 200);
    let busy = oneshot(&service, get_req(&sid, Some("0-1"))).await;
    assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(busy.headers()["retry-after"], "1");
    let v: Value = serde_json::from_str(&body_text(busy).await).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "too_many_replays");
    // The session is untouched.
    let ping = json!({"jsonrpc": "2.0", "id": 5, "method": methods::PING}).to_string();
    assert_eq!(
        oneshot(&service, post(Some(&sid), ping)).await.status(),
        200
    );
    // Every event once, in order.
    let mut reader = SseReader::new(first.into_body());
    let retry = reader.next_event(WAIT).await.unwrap();
    assert_eq!(retry.retry, Some(1000));
    for n in 0..150u64 {
        let e = reader.next_event(WAIT).await.unwrap();
        assert_eq!(e.stream_seq(), (0, n + 2));
        assert_eq!(e.json()["params"]["data"], n.to_string());
    }
    // Caught up: the place is free while the stream goes on live. A second resumption of the
    // same stream takes it over (the first connection ends), replays, then goes on live.
    let again = oneshot(&service, get_req(&sid, Some("0-140"))).await;
    assert_eq!(again.status(), 200);
    assert_eq!(reader.next_event(WAIT).await, None);
    log(&peer, "live").await;
    let mut reader = SseReader::new(again.into_body());
    let _retry = reader.next_event(WAIT).await.unwrap();
    for seq in 141..=152 {
        assert_eq!(
            reader.next_event(WAIT).await.unwrap().stream_seq(),
            (0, seq)
        );
    }
}

#[tokio::test]
async fn a_huge_initialize_is_served_but_its_snapshot_is_not_kept() {
    let store = Arc::new(InMemorySessionStore::default());
    // The snapshot's bound is set below the server's own bound on `initialize` params
    // (64 KiB, past which `initialize` is refused and no session opens).
    let config = HttpConfig::default()
        .with_json_response(true)
        .with_session_store(store.clone())
        .with_max_snapshot_bytes(16 * 1024);
    let service = service_for(&test_server(), config);
    let open = |name: String| {
        json!({"jsonrpc": "2.0", "id": 1, "method": methods::INITIALIZE, "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": name, "version": "1.0.0"}
        }})
        .to_string()
    };
    let mut ids = Vec::new();
    for name in ["small".to_owned(), "n".repeat(32 * 1024)] {
        let resp = oneshot(&service, post(None, open(name))).await;
        assert_eq!(resp.status(), 200);
        ids.push(
            resp.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
        let _ = body_text(resp).await;
        let sid = ids.last().unwrap();
        let _ = oneshot(&service, post(Some(sid), initialized_body())).await;
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": methods::TOOLS_LIST}).to_string();
        assert_eq!(oneshot(&service, post(Some(sid), list)).await.status(), 200);
    }
    let small = store.load(&ids[0]).await.unwrap().unwrap();
    assert!(small.snapshot.is_some_and(|s| s.contains("small")));
    let huge = store
        .load(&ids[1])
        .await
        .unwrap()
        .expect("the session is recorded");
    assert_eq!(huge.snapshot, None, "a snapshot over the bound is not kept");
}

#[tokio::test]
async fn a_batch_repeating_an_id_is_refused_in_one_pass() {
    let service = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&service, "2025-03-26").await;
    let last = MAX_BATCH_ENTRIES - 2;
    let mut batch: Vec<Value> = (0..=last)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": methods::PING}))
        .collect();
    batch.push(json!({"jsonrpc": "2.0", "id": last, "method": methods::PING}));
    let body = Value::Array(batch).to_string();
    let started = Instant::now();
    let resp = oneshot(&service, post(Some(&sid), body)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["id"], last);
    assert_eq!(v["error"]["data"]["reason"], "duplicate_request_id");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let ping = json!({"jsonrpc": "2.0", "id": 1, "method": methods::PING}).to_string();
    assert_eq!(
        oneshot(&service, post(Some(&sid), ping)).await.status(),
        200
    );
}

/// A batch past the entry bound is refused whole (400, one -32600 without id) before the session
/// sees any of it: two million `1` in a 4 MB body were answered with 258 MB of errors before.
#[tokio::test]
async fn a_batch_over_the_entry_bound_is_refused_with_400() {
    let service = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&service, "2025-03-26").await;
    let pings: Vec<Value> = (0..=MAX_BATCH_ENTRIES)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": methods::PING}))
        .collect();
    let ones = format!("[{}]", vec!["1"; 2_000_000].join(","));
    for body in [Value::Array(pings).to_string(), ones] {
        let resp = oneshot(&service, post(Some(&sid), body)).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert_eq!(v["error"]["code"], -32600);
        assert_eq!(v["error"]["data"]["reason"], "batch_too_large");
    }
    let full: Vec<Value> = (0..MAX_BATCH_ENTRIES)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": methods::PING}))
        .collect();
    let resp = oneshot(&service, post(Some(&sid), Value::Array(full).to_string())).await;
    assert_eq!(resp.status(), 200, "a batch at the bound is served");
}

#[tokio::test]
async fn refusals_quoting_a_1_mib_id_or_header_echo_it_cut() {
    // `held` says when it starts, then sleeps 2 s.
    let started = Arc::new(tokio::sync::Notify::new());
    let start = started.clone();
    let server = switchboard_test_support::server::tool_server("held-test")
        .tool(
            switchboard_types::tools::Tool::new("held", json!({"type": "object"}))
                .with_description("says it started, then sleeps 2 s"),
            move |call| {
                start.notify_one();
                switchboard_test_support::server::slow(call, 2000)
            },
        )
        .build()
        .unwrap();
    let service = service_for(&server, HttpConfig::default());
    let sid = open_session(&service, "2025-03-26").await;
    let id = "i".repeat(1 << 20);
    // The message says which id; the answer's `id` is the id itself, as JSON-RPC requires.
    let message_of = |v: &Value| v["error"]["message"].as_str().unwrap().len();
    let ping = json!({"jsonrpc": "2.0", "id": id, "method": methods::PING});
    let batch = Value::Array(vec![ping.clone(), ping.clone()]).to_string();
    let resp = oneshot(&service, post(Some(&sid), batch)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "duplicate_request_id");
    assert!(message_of(&v) < 400, "{} bytes", message_of(&v));
    // The same id while a request carrying it is in flight.
    let slow = json!({"jsonrpc": "2.0", "id": id, "method": methods::TOOLS_CALL,
        "params": {"name": "held"}})
    .to_string();
    let svc = service.clone();
    let req = post(Some(&sid), slow);
    let first = tokio::spawn(async move { oneshot(&svc, req).await });
    tokio::time::timeout(switchboard_test_support::wait::DEADLINE, started.notified())
        .await
        .expect("the held call started");
    let resp = oneshot(&service, post(Some(&sid), ping.to_string())).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["error"]["data"]["reason"], "duplicate_request_id");
    assert!(message_of(&v) < 400, "{} bytes", message_of(&v));
    assert_eq!(first.await.unwrap().status(), 200);
    // A 64 KiB protocol version header.
    let req = post_req(Some(&sid))
        .header("mcp-protocol-version", "v".repeat(64 << 10))
        .body(Body::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": methods::PING}).to_string(),
        ))
        .unwrap();
    let resp = oneshot(&service, req).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert!(message_of(&v) < 400, "{} bytes", message_of(&v));
}

/// A stand-in role that answers every request with an error, `after` it was received.
struct Late {
    after: Duration,
}

impl Service for Late {
    fn call(&self, _req: RpcRequest, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        let after = self.after;
        Box::pin(async move {
            // Not a wait: the handler answers late on purpose (the delay is the scenario).
            tokio::time::sleep(after).await;
            Err(switchboard_types::ErrorObject::new(
                switchboard_types::ErrorCode::INVALID_PARAMS,
                "refused late",
            ))
        })
    }

    fn notify(&self, _n: Notification, _peer: &Peer) {}
}

/// The POST creating a session waits for the `initialize` answer 10 s at most (so that an
/// error there opens no session); past it, the headers go out with the session id and the
/// answer follows on the stream, as for any slow request. Time is paused: the clock moves
/// only when everything waits.
#[tokio::test(start_paused = true)]
async fn an_initialize_answer_past_the_wait_follows_on_the_open_stream() {
    let factory = |t: HttpSessionTransport| {
        let role = Late {
            after: Duration::from_secs(15),
        };
        Ok(spawn(t, Arc::new(role), SessionConfig::default()))
    };
    let service = StreamableHttpService::new(factory, HttpConfig::default());
    let start = Instant::now();
    let resp = oneshot(&service, post(None, init_body(1, "2025-11-25"))).await;
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(10) && waited < Duration::from_secs(15),
        "headers after the 10 s wait, before the answer: {waited:?}"
    );
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers().contains_key("mcp-session-id"),
        "the answer not in hand: the session is opened as for any slow start"
    );
    let events = parse_sse(&body_text(resp).await);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(15),
        "the answer came on the stream"
    );
    assert_eq!(
        events.last().unwrap().json()["error"]["message"],
        "refused late"
    );
}
