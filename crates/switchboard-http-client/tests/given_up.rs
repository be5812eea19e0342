//! Callers that give up (a timeout, a cancellation, a dropped future) free their POST's slot at
//! once: against a server that never answers `tools/call`, with a single POST slot, three calls
//! given up in three ways leave the slot free, and the next call is answered.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::raw::{self, Reply};
use support::{WAIT, client};
use switchboard_client::ClientError;
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_jsonrpc::{RequestError, RequestOptions};
use switchboard_types::methods;
use tokio_util::sync::CancellationToken;

const GIVE_UP: Duration = Duration::from_millis(200);

/// Answers `initialize`, accepts notifications, answers `tools/call` of the tool `quick` and
/// never answers any other call.
async fn server() -> raw::RawServer {
    raw::raw(|req| {
        let Ok(v) = serde_json::from_str::<Value>(&req.body) else {
            return Reply::close(raw::status(400, "Bad Request"));
        };
        let Some(id) = v.get("id").and_then(Value::as_i64) else {
            return Reply::close(raw::status(202, "Accepted"));
        };
        match v["method"].as_str() {
            Some(methods::INITIALIZE) => Reply::close(raw::json(&raw::result(
                id,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "never", "version": "1"}}),
            ))),
            Some(methods::TOOLS_CALL) if v["params"]["name"] == "quick" => Reply::close(raw::json(
                &raw::result(id, json!({"content": [{"type": "text", "text": "quick"}]})),
            )),
            _ => Reply::never(),
        }
    })
    .await
}

#[tokio::test]
async fn callers_that_give_up_free_the_post_slot_and_the_next_call_is_answered() {
    let srv = server().await;
    // One slot, and header timeouts far longer than the test: only giving up can free it.
    let config = HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
        .with_max_concurrent_posts(1)
        .with_post_header_timeout(Duration::from_secs(300));
    let transport = HttpClientTransport::connect(&srv.url, config).unwrap();
    let handle = transport.handle();
    let session = tokio::time::timeout(WAIT, client().connect(transport))
        .await
        .expect("handshake in time")
        .expect("handshake");
    let stall = || json!({});

    // 1: the call's own timeout.
    let r = session
        .call_tool_with(
            "stall",
            stall(),
            RequestOptions::default().with_timeout(GIVE_UP),
        )
        .await;
    let e = r.expect_err("timed out");
    assert!(
        matches!(e, ClientError::Request(RequestError::Timeout { .. })),
        "{e}"
    );

    // 2: the caller cancels.
    let token = CancellationToken::new();
    let s = session.clone();
    let t = token.clone();
    let call = tokio::spawn(async move {
        s.call_tool_with("stall", json!({}), RequestOptions::default().with_cancel(t))
            .await
    });
    // Not a wait: the call stays outstanding past the give-up time (the scenario).
    tokio::time::sleep(GIVE_UP).await;
    token.cancel();
    let e = tokio::time::timeout(WAIT, call)
        .await
        .expect("the cancelled call returns")
        .unwrap()
        .expect_err("cancelled");
    assert!(
        matches!(e, ClientError::Request(RequestError::Cancelled)),
        "{e}"
    );

    // 3: the caller's future is dropped.
    let dropped = tokio::time::timeout(GIVE_UP, session.call_tool("stall", stall())).await;
    assert!(dropped.is_err(), "still waiting when dropped");

    // The slot is free: the next call is answered at once.
    let ok = tokio::time::timeout(
        Duration::from_secs(5),
        session.call_tool("quick", json!({})),
    )
    .await
    .expect("answered well before any HTTP timeout")
    .expect("a result");
    assert_eq!(
        serde_json::to_value(&ok).unwrap()["content"][0]["text"],
        "quick"
    );
    assert!(handle.failure().is_none(), "the transport lives on");
    // Each call given up was cancelled with the server (a POST each, through the freed slot).
    let cancellations = srv
        .seen()
        .iter()
        .filter(|r| r.body.contains(methods::NOTIFICATIONS_CANCELLED))
        .count();
    assert_eq!(cancellations, 3);
}
