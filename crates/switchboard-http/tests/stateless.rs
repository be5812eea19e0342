//! Stateless mode, session take-over from a shared session store, and cancelled requests
//! releasing their POST streams.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use switchboard_test_support::wait;

use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::*;
use switchboard_http::{
    HttpConfig, InMemoryEventStore, InMemorySessionStore, SessionStore, StreamableHttpService,
};

fn with_version(session: Option<&str>, version: &str, body: String) -> Request<Body> {
    post_req(session)
        .header("mcp-protocol-version", version)
        .body(Body::from(body))
        .unwrap()
}

/// The JSON-RPC messages of a response body, JSON or SSE.
async fn messages(resp: http::Response<Body>) -> Vec<Value> {
    let json = resp.headers()["content-type"] == "application/json";
    let text = body_text(resp).await;
    if json {
        return vec![serde_json::from_str(&text).unwrap()];
    }
    parse_sse(&text)
        .into_iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .map(|e| e.json())
        .collect()
}

#[tokio::test]
async fn stateless_mode_serves_each_post_on_its_own_without_session_ids() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default().with_stateless(true));
    // initialize is answered, but no session is created.
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("mcp-session-id").is_none());
    let msgs = messages(resp).await;
    assert_eq!(
        msgs.len(),
        1,
        "no priming event in stateless mode: {msgs:?}"
    );
    assert_eq!(msgs[0]["result"]["protocolVersion"], "2025-11-25");
    // notifications/initialized: 202, nothing to hold.
    let resp = oneshot(&svc, post(None, initialized_body())).await;
    assert_eq!(resp.status(), 202);
    // A call with no session id, straight away: served at the header's revision, with its
    // progress notification on its own stream before the result.
    let resp = oneshot(
        &svc,
        with_version(None, "2025-11-25", call_body(7, "chatty", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let msgs = messages(resp).await;
    let methods: Vec<_> = msgs.iter().map(|m| m["method"].clone()).collect();
    assert_eq!(methods[0], "notifications/progress", "{msgs:?}");
    let last = msgs.last().unwrap();
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done");
    // The client is anonymous and declared nothing: the server sends it no request, and the
    // tool reports that as its own failure.
    let resp = oneshot(
        &svc,
        with_version(None, "2025-11-25", call_body(8, "sample", json!({}))),
    )
    .await;
    let msgs = messages(resp).await;
    assert_eq!(msgs.len(), 1, "no sampling request was sent: {msgs:?}");
    assert_eq!(msgs[0]["result"]["isError"], true, "{msgs:?}");
    // Nothing outlives its POST.
    assert_eq!(svc.session_count(), 0);
    wait::until("every per-request session ended", || {
        server.session_count() == 0
    })
    .await;
}

#[tokio::test]
async fn stateless_json_mode_and_the_refusals_that_apply() {
    let svc = service_for(
        &test_server(),
        HttpConfig::default()
            .with_stateless(true)
            .with_json_response(true),
    );
    let resp = oneshot(
        &svc,
        with_version(None, "2025-06-18", call_body(3, "echo", json!({"x": 1}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["id"], 3);
    assert_eq!(v["result"]["content"][0]["text"], r#"{"x":1}"#);
    // A session id sent anyway is ignored (there are no sessions to find).
    let resp = oneshot(
        &svc,
        with_version(Some("nope"), "2025-11-25", call_body(4, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    // An unsupported revision is still 400.
    let resp = oneshot(
        &svc,
        with_version(None, "1999-01-01", call_body(5, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    // No standalone stream and nothing to delete.
    let get = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        oneshot(&svc, get).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
    let delete = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", "x")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        oneshot(&svc, delete).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn stateless_requests_in_flight_are_bounded_by_max_sessions() {
    let (server, started) = test_server_counting_held();
    let svc = service_for(
        &server,
        HttpConfig::default()
            .with_stateless(true)
            .with_json_response(true)
            .with_max_sessions(1),
    );
    let slow = {
        let svc = svc.clone();
        tokio::spawn(async move {
            oneshot(
                &svc,
                with_version(None, "2025-11-25", call_body(1, "held", json!({"ms": 400}))),
            )
            .await
            .status()
        })
    };
    // In its handler, the slow request holds its place (it answers 400 ms later).
    wait::until("the slow request is in its handler", || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    let resp = oneshot(
        &svc,
        with_version(None, "2025-11-25", call_body(2, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(slow.await.unwrap(), StatusCode::OK);
    // The place is free again.
    let resp = oneshot(
        &svc,
        with_version(None, "2025-11-25", call_body(3, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
}

/// Two nodes behind a load balancer: one session store and one event store between them.
fn two_nodes() -> (
    StreamableHttpService,
    StreamableHttpService,
    Arc<InMemorySessionStore>,
) {
    let sessions = Arc::new(InMemorySessionStore::default());
    let events = Arc::new(InMemoryEventStore::default());
    let config = HttpConfig::default()
        .with_session_store(sessions.clone())
        .with_event_store(events);
    let a = service_for(&test_server(), config.clone());
    let b = service_for(&test_server(), config);
    (a, b, sessions)
}

#[tokio::test]
async fn a_session_created_on_one_node_is_taken_over_by_another_through_the_store() {
    let (a, b, store) = two_nodes();
    let sid = open_session(&a, "2025-11-25").await;
    assert_eq!(store.len(), 1);
    assert!(store.load(&sid).await.unwrap().is_some());
    // Node B never saw this session: it takes it over, ready, and serves the call.
    let resp = oneshot(
        &b,
        with_version(
            Some(&sid),
            "2025-11-25",
            call_body(5, "echo", json!({"n": 5})),
        ),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let msgs = messages(resp).await;
    assert_eq!(
        msgs.last().unwrap()["result"]["content"][0]["text"],
        r#"{"n":5}"#
    );
    assert_eq!(b.session_count(), 1);
    // The client's capabilities came with the record: B may ask it to sample, on the call's
    // own stream.
    let resp = oneshot(
        &b,
        with_version(Some(&sid), "2025-11-25", call_body(6, "sample", json!({}))),
    )
    .await;
    let mut reader = SseReader::new(resp.into_body());
    let mut sampling = None;
    while let Some(e) = reader.next_event(Duration::from_secs(5)).await {
        if e.data.as_deref().is_some_and(|d| !d.is_empty()) {
            sampling = Some(e.json());
            break;
        }
    }
    let sampling = sampling.expect("a sampling request");
    assert_eq!(sampling["method"], "sampling/createMessage");
    // DELETE on B forgets the session everywhere a node would look it up.
    let delete = Request::delete("/mcp")
        .header("host", "localhost")
        .header("mcp-session-id", sid.as_str())
        .body(Body::empty())
        .unwrap();
    assert_eq!(oneshot(&b, delete).await.status(), 200);
    assert!(store.is_empty());
    let c = service_for(
        &test_server(),
        HttpConfig::default().with_session_store(store.clone()),
    );
    let resp = oneshot(
        &c,
        with_version(Some(&sid), "2025-11-25", call_body(7, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn ids_the_store_does_not_know_are_still_404_and_nothing_is_recorded_for_them() {
    let (a, _b, store) = two_nodes();
    let resp = oneshot(
        &a,
        with_version(Some("0123"), "2025-11-25", call_body(1, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert!(store.is_empty());
    assert_eq!(a.session_count(), 0);
}

#[tokio::test]
async fn a_cancelled_request_releases_its_sse_stream_at_once() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(
        &svc,
        with_version(
            Some(&sid),
            "2025-11-25",
            call_body(9, "slow", json!({"ms": 30000})),
        ),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut reader = SseReader::new(resp.into_body());
    let priming = reader.next_event(Duration::from_secs(5)).await.unwrap();
    assert_eq!(priming.data.as_deref(), Some(""));
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "user"}})
    .to_string();
    let resp = oneshot(&svc, with_version(Some(&sid), "2025-11-25", cancel)).await;
    assert_eq!(resp.status(), 202);
    // The stream ends without an answer, long before the handler would have finished.
    assert_eq!(reader.next_event(Duration::from_secs(5)).await, None);
}

#[tokio::test]
async fn a_cancelled_request_in_json_mode_ends_its_post_with_202() {
    let (server, started) = test_server_counting_held();
    let svc = service_for(&server, HttpConfig::default().with_json_response(true));
    let sid = open_session(&svc, "2025-11-25").await;
    let waiting = {
        let svc = svc.clone();
        let sid = sid.clone();
        tokio::spawn(async move {
            let resp = oneshot(
                &svc,
                with_version(
                    Some(&sid),
                    "2025-11-25",
                    call_body(4, "held", json!({"ms": 30000})),
                ),
            )
            .await;
            let status = resp.status();
            let body = resp.into_body().collect().await.unwrap().to_bytes();
            (status, body.len())
        })
    };
    // The request is in its handler before it is cancelled (a cancellation that came first
    // would be for an unknown request, and the 5 s bound below would fail).
    wait::until("the request is in its handler", || {
        started.load(Ordering::SeqCst) == 1
    })
    .await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 4}})
    .to_string();
    let resp = oneshot(&svc, with_version(Some(&sid), "2025-11-25", cancel)).await;
    assert_eq!(resp.status(), 202);
    let (status, len) = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the POST ended promptly")
        .unwrap();
    assert_eq!((status, len), (StatusCode::ACCEPTED, 0));
}

#[tokio::test]
async fn a_quick_sse_answer_leaves_with_the_priming_event_in_one_frame_and_ends_the_body() {
    use axum::body::HttpBody;
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(
        &svc,
        with_version(
            Some(&sid),
            "2025-11-25",
            call_body(3, "echo", json!({"q": 1})),
        ),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let frame = body.frame().await.unwrap().unwrap();
    let text = String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap();
    let events = parse_sse(&text);
    assert_eq!(events.len(), 2, "priming and answer together: {text:?}");
    assert_eq!(events[0].data.as_deref(), Some(""));
    assert_eq!(events[1].json()["id"], 3);
    assert!(
        body.is_end_stream(),
        "the body says it has ended with its last event"
    );
}
