//! What crosses between this transport and the role, with a stand-in role on the bare engine:
//! the snapshot a role hands over is stored verbatim (never parsed), a take-over or a stateless
//! request hands the factory a `Resume`, and a cancellation reported by the engine (not read
//! from the body) ends the cancelled request's stream, in a batch as well.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use http::Request;
use serde_json::json;
use support::*;
use switchboard_http::{
    HttpConfig, HttpSessionTransport, InMemorySessionStore, Resume, SessionStartError,
    SessionStore, StreamableHttpService,
};
use switchboard_jsonrpc::{
    BoxFuture, HandlerResult, Peer, RequestContext, Service, SessionConfig, spawn,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{Notification, Request as RpcRequest, methods};

/// Not JSON: the transport must store it without reading it.
const SNAPSHOT: &str = "opaque snapshot <not json>";

/// A stand-in role: `initialize` hands over [`SNAPSHOT`]; `wait` answers after `ms`
/// milliseconds; anything else answers `{}` at once.
struct StandIn;

impl Service for StandIn {
    fn call(&self, req: RpcRequest, cx: RequestContext) -> BoxFuture<HandlerResult> {
        if req.method == methods::INITIALIZE
            && let Some(control) = cx.peer().transport_control()
        {
            control.save_snapshot(SNAPSHOT);
        }
        let wait = req.method == "wait";
        Box::pin(async move {
            if wait {
                // Not a wait: a request that outlasts the test (a call still running at the handover).
                tokio::time::sleep(Duration::from_secs(30)).await;
            }
            Ok(to_raw(&json!({})).unwrap())
        })
    }

    fn notify(&self, _n: Notification, _peer: &Peer) {}

    fn batch_allowed(&self) -> bool {
        true
    }
}

/// A service over the stand-in role whose factory records each session's `Resume`.
fn stand_in_service(
    config: HttpConfig,
) -> (StreamableHttpService, Arc<Mutex<Vec<Option<Resume>>>>) {
    let seen: Arc<Mutex<Vec<Option<Resume>>>> = Arc::default();
    let record = seen.clone();
    let factory = move |t: HttpSessionTransport| {
        record.lock().unwrap().push(t.resume().cloned());
        Ok(spawn(t, Arc::new(StandIn), SessionConfig::default()))
    };
    (StreamableHttpService::new(factory, config), seen)
}

fn request(session: Option<&str>, version: Option<&str>, body: String) -> Request<Body> {
    let b = post_req(session);
    let b = match version {
        Some(v) => b.header("mcp-protocol-version", v),
        None => b,
    };
    b.body(Body::from(body)).unwrap()
}

fn rpc(id: i64, method: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method}).to_string()
}

#[tokio::test]
async fn the_snapshot_is_stored_verbatim_and_handed_back_on_a_take_over() {
    for json_response in [false, true] {
        let store = Arc::new(InMemorySessionStore::default());
        let config = HttpConfig::default()
            .with_json_response(json_response)
            .with_session_store(store.clone());
        let (a, seen_a) = stand_in_service(config.clone());
        let resp = oneshot(&a, post(None, init_body(1, "2025-06-18"))).await;
        assert_eq!(resp.status(), 200);
        let sid = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = body_text(resp).await;
        assert_eq!(
            *seen_a.lock().unwrap(),
            vec![None],
            "a new session is not resumed"
        );
        let record = store.load(&sid).await.unwrap().expect("recorded");
        assert_eq!(
            record.snapshot.as_deref(),
            Some(SNAPSHOT),
            "json_response={json_response}"
        );
        // Another node takes the session over: its factory is told the revision and the snapshot.
        let (b, seen_b) = stand_in_service(config);
        let resp = oneshot(&b, request(Some(&sid), Some("2025-06-18"), rpc(2, "other"))).await;
        assert_eq!(resp.status(), 200);
        let _ = body_text(resp).await;
        let seen = seen_b.lock().unwrap().clone();
        let resume = seen[0].as_ref().expect("a take-over is resumed");
        assert_eq!(resume.protocol_version.as_deref(), Some("2025-06-18"));
        assert_eq!(resume.snapshot.as_deref(), Some(SNAPSHOT));
    }
}

#[tokio::test]
async fn a_stateless_request_is_resumed_at_its_header_and_initialize_is_not() {
    let (svc, seen) = stand_in_service(HttpConfig::default().with_stateless(true));
    for (version, body) in [
        (None, rpc(1, "other")),
        (Some("2025-11-25"), rpc(2, "other")),
        (None, init_body(3, "2025-11-25")),
    ] {
        let resp = oneshot(&svc, request(None, version, body)).await;
        assert_eq!(resp.status(), 200);
        let _ = body_text(resp).await;
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    let header = |r: &Option<Resume>| r.as_ref().map(|r| r.protocol_version.clone());
    assert_eq!(
        header(&seen[0]),
        Some(None),
        "no header: the role picks the default"
    );
    assert_eq!(header(&seen[1]), Some(Some("2025-11-25".to_owned())));
    assert!(
        seen[..2]
            .iter()
            .all(|r| r.as_ref().unwrap().snapshot.is_none())
    );
    assert_eq!(seen[2], None, "initialize starts a fresh session");
}

#[tokio::test]
async fn a_cancellation_inside_a_batch_ends_the_cancelled_requests_stream() {
    let (svc, _) = stand_in_service(HttpConfig::default());
    let resp = oneshot(&svc, post(None, init_body(1, "2025-03-26"))).await;
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = body_text(resp).await;
    let resp = oneshot(
        &svc,
        request(Some(&sid), Some("2025-03-26"), rpc(7, "wait")),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut reader = SseReader::new(resp.into_body());
    let priming = reader.next_event(Duration::from_secs(5)).await.unwrap();
    assert_eq!(priming.data.as_deref(), Some(""));
    let batch = json!([
        {"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_CANCELLED, "params": {"requestId": 7}},
        {"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_PROGRESS,
         "params": {"progressToken": "t", "progress": 1}}
    ])
    .to_string();
    let resp = oneshot(&svc, request(Some(&sid), Some("2025-03-26"), batch)).await;
    assert_eq!(resp.status(), 202);
    assert_eq!(reader.next_event(Duration::from_secs(5)).await, None);
}

/// A factory's refusal is answered 503 (-32000, `session_refused`) with its text; the refusals
/// of the stdio bridge keep their texts.
#[tokio::test]
async fn a_session_the_factory_refuses_is_answered_503_with_its_text() {
    let service = StreamableHttpService::new(
        |_: HttpSessionTransport| Err(SessionStartError::role("no room for you")),
        HttpConfig::default(),
    );
    let resp = oneshot(&service, post(None, init_body(1, "2025-06-18"))).await;
    assert_eq!(resp.status(), 503);
    let body: serde_json::Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(body["error"]["code"], -32000);
    assert_eq!(
        body["error"]["message"],
        "Service unavailable: no room for you"
    );
    assert_eq!(body["error"]["data"]["reason"], "session_refused");
    assert_eq!(service.session_count(), 0);
    assert_eq!(
        SessionStartError::MissingPipes.to_string(),
        "the server's stdin or stdout is missing"
    );
    let spawn = SessionStartError::Spawn(std::io::Error::new(
        std::io::ErrorKind::NotFound,
        "no such file",
    ));
    assert_eq!(spawn.to_string(), "cannot start the server: no such file");
}
