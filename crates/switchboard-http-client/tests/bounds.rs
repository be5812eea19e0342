//! Every buffer the client keeps, crossed: an SSE event and a JSON body over `max_event_bytes`
//! (the POSTs in flight are crossed in `timeouts.rs`, the inbound queue's count and bytes in the
//! crate's unit tests). The request concerned gets a clear error; the session goes on.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::raw::{self, Reply, result, sse_head};
use support::{RawClient, local_error};
use switchboard_http_client::HttpClientConfig;

const NOTE: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;

fn config() -> HttpClientConfig {
    HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
        .with_max_event_bytes(1024)
}

/// The answer to request `id`, padded to about `size` bytes.
fn padded(id: i64, size: usize) -> String {
    result(id, json!({"pad": "x".repeat(size)}))
}

#[tokio::test]
async fn an_sse_event_over_the_bound_is_discarded_and_its_request_fails_clearly() {
    let srv = raw::raw(|req| {
        let id = req.rpc_id().unwrap_or(0);
        let mut bytes = sse_head();
        let answer = if id >= 100 {
            padded(id, 10)
        } else {
            padded(id, 4096)
        };
        bytes.extend_from_slice(format!("data: {answer}\n\ndata: {NOTE}\n\n").as_bytes());
        Reply::close(bytes)
    })
    .await;
    let mut c = RawClient::new(&srv.url, config());
    c.call(1).await;
    assert_eq!(
        c.recv().await["method"],
        "notifications/message",
        "the stream goes on past the discarded event"
    );
    let e = local_error(&c.recv().await, 1, "stream_ended");
    assert_eq!(e["data"]["discarded_events"], 1);
    assert!(
        e["message"].as_str().unwrap().contains("max_event_bytes"),
        "{e}"
    );
    c.call(100).await;
    assert_eq!(c.recv().await["id"], 100);
}

/// An event that never ends (`serve --hostile endless-answer`): the client stops reading it
/// once it has gone on past four times the bound (at least 64 MiB), and the request fails
/// clearly, instead of reading for as long as the server writes.
#[tokio::test]
async fn an_sse_event_that_never_ends_is_not_read_for_ever() {
    let srv = raw::raw(|req| {
        let id = req.rpc_id().unwrap_or(0);
        if id >= 100 {
            let mut bytes = sse_head();
            bytes.extend_from_slice(format!("data: {}\n\n", padded(id, 10)).as_bytes());
            return Reply::close(bytes);
        }
        let mut bytes = sse_head();
        bytes.extend_from_slice(b"data: ");
        bytes.extend_from_slice(&vec![b'x'; 65 << 20]);
        // Then nothing more, the connection held open: a client still reading waits for ever.
        Reply::hang(bytes)
    })
    .await;
    let mut c = RawClient::new(&srv.url, config());
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "stream_ended");
    assert_eq!(e["data"]["discarded_events"], 1, "{e}");
    c.call(100).await;
    assert_eq!(c.recv().await["id"], 100);
}

#[tokio::test]
async fn a_json_body_over_the_bound_fails_its_request() {
    let srv = raw::raw(|req| {
        let id = req.rpc_id().unwrap_or(0);
        let size = if id >= 100 { 10 } else { 4096 };
        Reply::close(raw::json(&padded(id, size)))
    })
    .await;
    let mut c = RawClient::new(&srv.url, config());
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "response_too_large");
    assert_eq!(e["data"]["limit"], 1024);
    c.call(100).await;
    assert_eq!(c.recv().await["id"], 100);
}

/// A 400 carrying a JSON-RPC error (naming no request) whose message is `len` bytes.
fn refusal(len: usize) -> Reply {
    let body = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32600, "message": "m".repeat(len)}})
    .to_string();
    Reply::close(
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

#[tokio::test]
async fn an_error_body_over_64_kib_is_not_read_and_the_status_alone_is_reported() {
    let srv = raw::raw(|req| {
        if req.rpc_id() == Some(1) {
            refusal(70_000)
        } else {
            refusal(10)
        }
    })
    .await;
    let mut c = RawClient::new(&srv.url, config());
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "http_status");
    assert_eq!(e["message"], "HTTP 400 Bad Request from the server", "{e}");
    // Under the bound, the server's message is quoted.
    c.call(2).await;
    let e = local_error(&c.recv().await, 2, "http_status");
    assert_eq!(
        e["message"], "HTTP 400 Bad Request from the server: mmmmmmmmmm",
        "{e}"
    );
}

#[tokio::test]
async fn a_refusal_quoting_a_long_server_message_is_echoed_cut() {
    // A 400 whose JSON-RPC error (naming no request) carries a 60,000-byte message: the
    // request's local error quotes 256 bytes of it.
    let srv = raw::raw(|_| refusal(60_000)).await;
    let mut c = RawClient::new(&srv.url, config());
    c.call(1).await;
    let e = local_error(&c.recv().await, 1, "http_status");
    let message = e["message"].as_str().unwrap();
    assert!(message.starts_with("HTTP 400"), "{message}");
    assert!(message.len() < 400, "{} bytes", message.len());
}
