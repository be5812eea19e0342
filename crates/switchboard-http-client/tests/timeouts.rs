//! Timeouts, each crossed against a hand-written server on 127.0.0.1: the request of the POST
//! gets a local error naming the timeout, the POST's slot is freed, and the next call works.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;
use support::raw::{self, Reply, json, result, sse_head};
use support::{RawClient, local_error};
use switchboard_http_client::HttpClientConfig;

const SHORT: Duration = Duration::from_millis(300);

/// No GET stream, no fallback: only the POSTs under test reach the server.
fn config() -> HttpClientConfig {
    HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
}

/// Requests with an id of 100 or more are answered at once; the others get `stall`.
async fn server(stall: impl Fn(i64) -> Reply + Send + Sync + 'static) -> raw::RawServer {
    raw::raw(move |req| match req.rpc_id() {
        Some(id) if id >= 100 => Reply::close(json(&result(id, json!({"ok": id})))),
        Some(id) => stall(id),
        None => Reply::close(raw::status(202, "Accepted")),
    })
    .await
}

#[tokio::test]
async fn a_post_never_answered_fails_after_the_header_timeout_and_frees_its_slot() {
    let srv = server(|_| Reply::never()).await;
    let config = config()
        .with_post_header_timeout(SHORT)
        .with_max_concurrent_posts(1);
    let mut c = RawClient::new(&srv.url, config);
    let started = Instant::now();
    c.call(1).await;
    // One slot: the second POST waits until the first one's timeout frees it.
    c.call(2).await;
    assert!(
        started.elapsed() >= SHORT - Duration::from_millis(50),
        "the second POST waited for the slot: {:?}",
        started.elapsed()
    );
    let e = local_error(&c.recv().await, 1, "http_timeout");
    assert_eq!(e["data"]["timeout"], "post_header_timeout");
    assert_eq!(e["data"]["ms"], 300);
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("post_header_timeout") && message.contains("no answer"),
        "{message}"
    );
    c.call(100).await;
    local_error(&c.recv().await, 2, "http_timeout");
    let ok = c.recv().await;
    assert_eq!(ok["result"]["ok"], 100, "the session goes on: {ok}");
    assert!(c.handle.failure().is_none());
}

#[tokio::test]
async fn a_json_answer_stalled_mid_body_fails_after_the_post_timeout() {
    let srv = server(|id| {
        let body = result(id, json!({"big": "x".repeat(100)}));
        let whole = json(&body);
        // The head and half the body, then nothing.
        Reply::hang(whole[..whole.len() - body.len() / 2].to_vec())
    })
    .await;
    let config = config().with_post_timeout(SHORT);
    let mut c = RawClient::new(&srv.url, config);
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "http_timeout");
    assert_eq!(e["data"]["timeout"], "post_timeout");
    assert!(
        e["message"].as_str().unwrap().contains("did not end"),
        "{e}"
    );
    c.call(100).await;
    assert_eq!(c.recv().await["result"]["ok"], 100);
}

#[tokio::test]
async fn an_sse_answer_silent_past_the_idle_timeout_fails_its_request() {
    let srv = server(|_| {
        let mut head = sse_head();
        head.extend_from_slice(b"id: 1-0\ndata: \n\n");
        Reply::hang(head)
    })
    .await;
    let config = config().with_sse_idle_timeout(SHORT);
    let mut c = RawClient::new(&srv.url, config);
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "http_timeout");
    assert_eq!(e["data"]["timeout"], "sse_idle_timeout");
    c.call(100).await;
    assert_eq!(c.recv().await["result"]["ok"], 100);
}

#[tokio::test]
async fn progress_and_keep_alives_keep_an_sse_answer_alive() {
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#;
    let srv = server(move |id| {
        let step = Duration::from_millis(150);
        let mut reply = Reply::close(sse_head());
        for i in 0..4 {
            let event = if i % 2 == 0 {
                format!("data: {progress}\n\n")
            } else {
                ": keep-alive\n\n".to_owned()
            };
            reply = reply.then(step, event);
        }
        reply.then(
            step,
            format!("data: {}\n\n", result(id, json!({"done": true}))),
        )
    })
    .await;
    // Each gap (150 ms) is under the idle bound; the whole answer (750 ms) is over it.
    let config = config().with_sse_idle_timeout(SHORT);
    let mut c = RawClient::new(&srv.url, config);
    c.call(1).await;
    assert_eq!(c.recv().await["method"], "notifications/progress");
    assert_eq!(c.recv().await["method"], "notifications/progress");
    assert_eq!(c.recv().await["result"]["done"], true);
}

#[tokio::test]
async fn a_connection_not_accepted_in_time_fails_its_request_and_the_next_call_works() {
    // A listener whose accept queue is full: the kernel drops new connection attempts, so
    // connecting hangs until the connect timeout.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let listener = socket.listen(1).unwrap();
    let addr = listener.local_addr().unwrap();
    let mut fillers = Vec::new();
    loop {
        let attempt = tokio::net::TcpStream::connect(addr);
        match tokio::time::timeout(Duration::from_millis(200), attempt).await {
            Ok(s) => fillers.push(s.unwrap()),
            Err(_) => break,
        }
        assert!(fillers.len() < 64, "the accept queue never filled");
    }
    let config = config().with_connect_timeout(Some(SHORT));
    let mut c = RawClient::new(&format!("http://{addr}/mcp"), config);
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "http_timeout");
    assert_eq!(e["data"]["timeout"], "connect_timeout");
    assert!(c.handle.failure().is_none(), "the transport lives on");
    // The server starts accepting: the next call connects and is answered.
    let _srv = raw::serve(listener, |req| {
        let id = req.rpc_id().unwrap_or(0);
        Reply::close(json(&result(id, json!({"ok": id}))))
    });
    drop(fillers);
    c.call(100).await;
    assert_eq!(c.recv().await["result"]["ok"], 100);
}
