//! Requests on one session are not held back by one another, and what follows them still keeps
//! its place: with `send_order_wait` far longer than the test, four calls whose answers never
//! begin all reach the server at once (before, each waited for the one before it to begin its
//! answer, so K calls in flight on one session went out a round trip apart), while a
//! notification sent after a request waits until that request's answer began (so that, say, a
//! `notifications/cancelled` never overtakes its request).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::raw::{self, Reply};
use support::{WAIT, client, eventually};
use switchboard_client::ClientSession;
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::methods;

/// When the answer to a `late` call begins: this long after the server received it.
const LATE: Duration = Duration::from_millis(300);

#[derive(Default)]
struct Times {
    late_received: Option<Instant>,
    notified: Option<Instant>,
}

/// Answers `initialize`, accepts notifications, never answers `tools/call slow`, and begins the
/// answer to `tools/call late` only after [`LATE`]; notes when that call and a
/// `notifications/cancelled` arrive.
async fn server(times: Arc<Mutex<Times>>) -> raw::RawServer {
    raw::raw(move |req| {
        let Ok(v) = serde_json::from_str::<Value>(&req.body) else {
            return Reply::close(raw::status(400, "Bad Request"));
        };
        let Some(id) = v.get("id").and_then(Value::as_i64) else {
            if v["method"] == methods::NOTIFICATIONS_CANCELLED {
                times.lock().unwrap().notified = Some(Instant::now());
            }
            return Reply::close(raw::status(202, "Accepted"));
        };
        match v["method"].as_str() {
            Some(methods::INITIALIZE) => Reply::close(raw::json(&raw::result(
                id,
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "pipelining", "version": "1"}}),
            ))),
            Some(methods::TOOLS_CALL) if v["params"]["name"] == "late" => {
                times.lock().unwrap().late_received = Some(Instant::now());
                Reply::never().then(LATE, raw::sse_head())
            }
            _ => Reply::never(),
        }
    })
    .await
}

async fn connect(url: &str) -> ClientSession {
    let config = HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
        .with_send_order_wait(Duration::from_secs(120))
        .with_post_header_timeout(Duration::from_secs(300));
    let transport = HttpClientTransport::connect(url, config).unwrap();
    tokio::time::timeout(WAIT, client().connect(transport))
        .await
        .expect("handshake in time")
        .expect("handshake")
}

#[tokio::test]
async fn ht_4_requests_in_flight_on_one_session_go_out_together() {
    let srv = server(Arc::default()).await;
    let session = connect(&srv.url).await;
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let s = session.clone();
            tokio::spawn(async move { s.call_tool("slow", json!({})).await })
        })
        .collect();
    eventually("four calls at the server while none is answered", || {
        srv.count("POST") >= 5 // initialize's POST, then the four calls
    })
    .await;
    let posted = srv
        .seen()
        .iter()
        .filter(|r| r.body.contains("\"slow\""))
        .count();
    assert_eq!(posted, 4);
    for c in calls {
        c.abort();
    }
}

#[tokio::test]
async fn a_notification_after_a_request_waits_for_its_answer_to_begin() {
    let times: Arc<Mutex<Times>> = Arc::default();
    let srv = server(times.clone()).await;
    let session = connect(&srv.url).await;
    let s = session.clone();
    let call = tokio::spawn(async move { s.call_tool("late", json!({})).await });
    eventually("the late call at the server", || {
        times.lock().unwrap().late_received.is_some()
    })
    .await;
    cancel_nothing(&session).await;
    eventually("the notification at the server", || {
        times.lock().unwrap().notified.is_some()
    })
    .await;
    let t = times.lock().unwrap();
    let gap = t.notified.unwrap() - t.late_received.unwrap();
    assert!(
        gap >= LATE,
        "the notification came {gap:?} after the request"
    );
    call.abort();
}

/// The wait is bounded in time: a notification after a request whose answer never begins goes
/// once `send_order_wait` has passed since that request.
#[tokio::test]
async fn a_notification_waits_no_longer_than_the_send_order_wait() {
    let times: Arc<Mutex<Times>> = Arc::default();
    let srv = server(times.clone()).await;
    let wait = Duration::from_millis(300);
    let config = HttpClientConfig::default()
        .with_get_stream(false)
        .with_http_sse_fallback(false)
        .with_send_order_wait(wait)
        .with_post_header_timeout(Duration::from_secs(300));
    let transport = HttpClientTransport::connect(&srv.url, config).unwrap();
    let session = tokio::time::timeout(WAIT, client().connect(transport))
        .await
        .expect("handshake in time")
        .expect("handshake");
    let s = session.clone();
    let call = tokio::spawn(async move { s.call_tool("slow", json!({})).await });
    eventually("the slow call at the server", || {
        srv.seen().iter().any(|r| r.body.contains("\"slow\""))
    })
    .await;
    let sent = Instant::now();
    cancel_nothing(&session).await;
    eventually(
        "the notification at the server, the slow answer still not begun",
        || times.lock().unwrap().notified.is_some(),
    )
    .await;
    assert!(sent.elapsed() < WAIT, "held for {:?}", sent.elapsed());
    call.abort();
}

/// Sends a `notifications/cancelled` naming no request in flight: a notification whose arrival
/// the test server notes, and which changes nothing.
async fn cancel_nothing(session: &switchboard_client::ClientSession) {
    session
        .peer()
        .notify(
            methods::NOTIFICATIONS_CANCELLED,
            Some(&json!({"requestId": "not-in-flight"})),
        )
        .await
        .expect("notified");
}
