//! End to end against the real Streamable HTTP server (`switchboard-http` serving a
//! `switchboard_server::Server` on 127.0.0.1): `switchboard_client::Client` over
//! [`HttpClientTransport`].
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Options, WAIT, connect, eventually, live, live_with, test_server, text};
use switchboard_client::RequestOptions;
use switchboard_http::HttpConfig;
use switchboard_http_client::{HttpClientConfig, HttpClientTransport, HttpMode, SESSION_EXPIRED};
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport};
use switchboard_types::{MessageKind, RequestId};

#[tokio::test]
async fn handshake_and_tools_call_with_sse_replies() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, handle) = connect(&live.url, HttpClientConfig::default()).await;
    assert_eq!(handle.mode(), HttpMode::Streamable);
    assert!(handle.session_id().is_some());
    assert_eq!(handle.protocol_version().as_deref(), Some("2025-11-25"));
    let shown = format!("{handle:?}");
    assert!(
        !shown.contains(&handle.session_id().unwrap()),
        "Debug never shows the session id: {shown}"
    );
    let r = session.call_tool("echo", json!({"a": 1})).await.unwrap();
    assert_eq!(text(&r), r#"{"a":1}"#);
    let tools = session.list_tools().await.unwrap();
    assert_eq!(tools.len(), 4);
    session.close();
    session.closed().await;
}

#[tokio::test]
async fn tools_call_with_json_replies_and_sampling_over_the_get_stream() {
    let server = test_server();
    let live = live(&server, HttpConfig::default().with_json_response(true)).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let r = session.call_tool("echo", json!({"b": [2]})).await.unwrap();
    assert_eq!(text(&r), r#"{"b":[2]}"#);
    // In JSON-only mode the server's request travels on the GET stream; its answer is a POST.
    let r = tokio::time::timeout(WAIT, session.call_tool("sample", json!({})))
        .await
        .expect("in time")
        .unwrap();
    assert!(text(&r).contains("sampled by the test client"), "{r:?}");
    session.close();
    session.closed().await;
}

#[tokio::test]
async fn every_request_after_initialize_carries_the_session_and_version_headers() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, handle) = connect(&live.url, HttpClientConfig::default()).await;
    session.call_tool("echo", json!({})).await.unwrap();
    eventually("the GET stream opened", || {
        live.seen().iter().any(|s| s.method == "GET")
    })
    .await;
    session.close();
    session.closed().await;
    let sid = handle.session_id().unwrap();
    let seen = live.seen();
    let first = &seen[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.session, None, "initialize carries no session id");
    for s in &seen {
        if s.method == "POST" {
            assert_eq!(
                s.accept.as_deref(),
                Some("application/json, text/event-stream"),
                "HT-5"
            );
            assert_eq!(s.content_type.as_deref(), Some("application/json"));
        }
    }
    for s in &seen[1..] {
        assert_eq!(s.session.as_deref(), Some(sid.as_str()), "HT-19: {s:?}");
        assert_eq!(s.version.as_deref(), Some("2025-11-25"), "HT-22: {s:?}");
    }
    let get = seen.iter().find(|s| s.method == "GET").unwrap();
    assert_eq!(get.accept.as_deref(), Some("text/event-stream"), "HT-12");
    assert_eq!(
        seen.last().unwrap().method,
        "DELETE",
        "DELETE on close: {seen:?}"
    );
    eventually("the server ended the session", || {
        live.service.session_count() == 0
    })
    .await;
}

#[tokio::test]
async fn a_sampling_request_on_the_post_stream_is_answered() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let r = tokio::time::timeout(WAIT, session.call_tool("sample", json!({})))
        .await
        .expect("in time")
        .unwrap();
    let result: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(result["model"], "test-model");
    assert_eq!(result["content"]["text"], "sampled by the test client");
    session.close();
}

#[tokio::test]
async fn progress_notifications_arrive_before_the_result() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let order: Arc<Mutex<Vec<String>>> = Arc::default();
    let o = order.clone();
    let opts = RequestOptions::default().with_progress(move |u| {
        o.lock().unwrap().push(format!("progress {}", u.progress));
    });
    let r = session
        .call_tool_with("chatty", json!({}), opts)
        .await
        .unwrap();
    order.lock().unwrap().push(format!("result {}", text(&r)));
    assert_eq!(*order.lock().unwrap(), ["progress 1", "result done"]);
    session.close();
}

#[tokio::test]
async fn the_get_stream_carries_list_changed_after_add_tool() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    session.list_tools().await.unwrap();
    eventually("the GET stream opened", || {
        live.seen().iter().any(|s| s.method == "GET")
    })
    .await;
    support::late_tool_is_announced(&server, session, "in time").await;
}

#[tokio::test]
async fn a_dropped_get_stream_is_resumed_with_last_event_id() {
    let server = test_server();
    let cut = Options {
        cut_first_get: Some(1),
        ..Options::default()
    };
    let live = live_with(&server, HttpConfig::default().with_sse_retry_ms(100), cut).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    eventually("the GET stream was resumed", || {
        live.seen()
            .iter()
            .any(|s| s.method == "GET" && s.last_event_id.is_some())
    })
    .await;
    let resumed = live
        .seen()
        .into_iter()
        .find(|s| s.method == "GET" && s.last_event_id.is_some())
        .unwrap();
    assert!(
        resumed.last_event_id.as_deref().unwrap().starts_with("0-"),
        "the standalone stream's priming id: {resumed:?}"
    );
    support::late_tool_is_announced(&server, session, "on the resumed stream").await;
}

#[tokio::test]
async fn sec_sh_8_a_session_ended_by_the_server_is_a_fatal_error_that_says_so() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, handle) = connect(&live.url, HttpClientConfig::default()).await;
    let sid = handle.session_id().unwrap();
    live.service.close_all().await;
    let r = session.call_tool("echo", json!({})).await;
    assert!(r.is_err(), "{r:?}");
    tokio::time::timeout(WAIT, session.closed())
        .await
        .expect("the session closes");
    let reason = session.peer().close_reason().unwrap_or_default();
    assert!(reason.contains(SESSION_EXPIRED), "{reason}");
    assert!(
        reason.contains("404") && reason.contains("initialize"),
        "{reason}"
    );
    assert!(handle.session_expired());
    // SEC-SH-8: the reason (logged and shown) does not carry the session id, and the id is
    // never sent again: no DELETE for a session the server already ended, nor anything else.
    assert!(!reason.contains(&sid), "{reason}");
    assert!(live.seen().iter().all(|s| s.method != "DELETE"));
    let sent = live.seen().len();
    // A silence check: nothing more may be sent in this time (no event to wait for).
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(live.seen().len(), sent, "{:?}", live.seen());
}

#[tokio::test]
async fn sep1699_a_post_stream_closed_early_is_resumed_with_last_event_id() {
    let server = test_server();
    let config = HttpConfig::default()
        .with_close_sse_after_priming_ms(Some(100))
        .with_sse_retry_ms(200);
    let live = live(&server, config).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let started = Instant::now();
    let r = tokio::time::timeout(WAIT, session.call_tool("slow", json!({"ms": 600})))
        .await
        .expect("in time")
        .unwrap();
    assert_eq!(text(&r), "slept 600");
    assert!(started.elapsed() >= Duration::from_millis(600));
    let resumed: Vec<_> = live
        .seen()
        .into_iter()
        .filter(|s| s.method == "GET" && s.last_event_id.is_some())
        .collect();
    assert!(
        !resumed.is_empty(),
        "a GET with Last-Event-ID: {:?}",
        live.seen()
    );
    // The POST stream of the call is stream 2 or later (1 is initialize's); its priming id.
    assert!(
        resumed.iter().any(|s| s
            .last_event_id
            .as_deref()
            .is_some_and(|l| l.ends_with("-0"))),
        "{resumed:?}"
    );
    session.close();
}

#[tokio::test]
async fn concurrent_calls_run_concurrently() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let session = Arc::new(session);
    let started = Instant::now();
    let calls: Vec<_> = (0..8)
        .map(|_| {
            let s = session.clone();
            tokio::spawn(async move { s.call_tool("slow", json!({"ms": 400})).await })
        })
        .collect();
    for c in calls {
        assert_eq!(text(&c.await.unwrap().unwrap()), "slept 400");
    }
    assert!(
        started.elapsed() < Duration::from_millis(8 * 400),
        "{:?}",
        started.elapsed()
    );
    session.close();
}

fn request(id: i64, method: &str) -> OutboundFrame {
    OutboundFrame {
        text: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}})
        .to_string(),
        kind: MessageKind::Request,
        id: Some(RequestId::int(id)),
        related: None,
        headers: Vec::new(),
        cancels: None,
    }
}

#[tokio::test]
async fn an_http_error_to_a_request_is_answered_locally_with_its_status() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    // A foreign Origin: the server answers 403 to everything (HT-3).
    let config = HttpClientConfig::default().with_header(
        http::header::ORIGIN,
        http::HeaderValue::from_static("http://evil.example"),
    );
    let (mut sink, mut source) = HttpClientTransport::connect(&live.url, config)
        .unwrap()
        .split();
    sink.send(request(7, "initialize")).await.unwrap();
    let text = tokio::time::timeout(WAIT, source.recv())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(
        v["error"]["data"],
        json!({"reason": "http_status", "status": 403})
    );
    assert!(
        v["error"]["message"].as_str().unwrap().contains("403"),
        "{v}"
    );
}

#[tokio::test]
async fn a_request_the_server_refuses_mid_body_fails_alone() {
    let server = test_server();
    let live = live(
        &server,
        HttpConfig::default().with_max_body_bytes(64 * 1024),
    )
    .await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    let big = "x".repeat(8 * 1024 * 1024);
    let r = session.call_tool("echo", json!({"big": big})).await;
    let e = r.expect_err("413 or a broken-off POST");
    let e = e.to_string();
    assert!(e.contains("413") || e.contains("broke off"), "{e}");
    let r = session
        .call_tool("echo", json!({"small": 1}))
        .await
        .unwrap();
    assert_eq!(text(&r), r#"{"small":1}"#, "the session lives on");
    session.close();
}

#[tokio::test]
async fn a_network_failure_is_fatal_with_the_reason() {
    // A listener that drops every connection it accepts, unanswered: the POST fails on the
    // network. (A port freed by dropping its listener could be taken by another test's server
    // before the client connects: seen while another test suite ran on the machine.)
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((conn, _)) = listener.accept().await {
            drop(conn);
        }
    });
    let transport =
        HttpClientTransport::connect(&format!("http://{addr}/mcp"), HttpClientConfig::default())
            .unwrap();
    let handle = transport.handle();
    let r = tokio::time::timeout(WAIT, support::client().connect(transport))
        .await
        .expect("fails in time");
    let e = r.expect_err("no server");
    let failure = handle.failure().unwrap();
    assert!(
        failure.contains("POST initialize") && failure.contains(&addr.to_string()),
        "{failure}"
    );
    assert!(e.to_string().contains("POST initialize"), "{e}");
    assert!(!handle.session_expired());
}

#[tokio::test]
async fn without_a_get_stream_405_is_fine() {
    let server = test_server();
    let live = live(&server, HttpConfig::default().with_get_stream(false)).await;
    let (session, _) = connect(&live.url, HttpClientConfig::default()).await;
    eventually("the GET was tried", || {
        live.seen().iter().any(|s| s.method == "GET")
    })
    .await;
    // A silence check: the refused GET must not be retried in this time (no event to wait for).
    tokio::time::sleep(Duration::from_millis(100)).await;
    let r = session.call_tool("echo", json!({"c": 3})).await.unwrap();
    assert_eq!(text(&r), r#"{"c":3}"#);
    assert_eq!(
        live.seen().iter().filter(|s| s.method == "GET").count(),
        1,
        "no retry after 405"
    );
    session.close();
}
