//! Request/response shape of the endpoint, through `tower::ServiceExt::oneshot` (no socket).
//! Test names carry the SPEC-NOTES tags they cover.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;
use switchboard_test_support::wait;

use axum::body::Body;
use http::{Request, StatusCode};
use serde_json::{Value, json};
use support::*;
use switchboard_http::{HttpConfig, InMemoryEventStore};

fn error_of(text: &str) -> Value {
    let v: Value = serde_json::from_str(text).unwrap();
    assert_eq!(v["jsonrpc"], "2.0");
    assert!(v.get("id").is_none(), "error bodies carry no id: {text}");
    v["error"].clone()
}

#[tokio::test]
async fn ht18_initialize_creates_a_session_and_answers_on_sse() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(sid.len() >= 32, "128 bits as hex");
    assert!(sid.bytes().all(|c| (0x21..=0x7e).contains(&c)));
    let events = parse_sse(&body_text(resp).await);
    assert_eq!(events.len(), 2, "{events:?}");
    // Priming event: an id, retry, empty data.
    assert_eq!(events[0].id.as_deref(), Some("1-0"));
    assert_eq!(events[0].retry, Some(1000));
    assert_eq!(events[0].data.as_deref(), Some(""));
    assert_eq!(events[1].id.as_deref(), Some("1-1"));
    let v = events[1].json();
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(svc.session_count(), 1);
    // A second initialize makes a second, different session.
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    assert_ne!(resp.headers()["mcp-session-id"].to_str().unwrap(), sid);
    assert_eq!(svc.session_count(), 2);
}

#[tokio::test]
async fn ht9_json_only_mode_answers_with_one_json_body() {
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_json_response(true),
    );
    let resp = oneshot(&svc, post(None, init_body(1, "2025-06-18"))).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert!(resp.headers().contains_key("mcp-session-id"));
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(
        &svc,
        post(Some(&sid), call_body(5, "echo", json!({"x": 1}))),
    )
    .await;
    assert_eq!(resp.headers()["content-type"], "application/json");
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(v["id"], 5);
    assert_eq!(v["result"]["content"][0]["text"], "{\"x\":1}");
}

/// `[HT-18]`: the session id goes out on the response carrying the InitializeResult. An
/// `initialize` answered with an error (bad params, a lifecycle refusal) opens no session: its
/// answer has no `Mcp-Session-Id`, nothing is kept, and the id of such an answer is unknown
/// afterwards. (Before, a session was opened and its id given for a refused `initialize`; it
/// lived until the idle timeout.) Both answer modes; a good `initialize` still opens one.
#[tokio::test]
async fn ht18_an_initialize_answered_with_an_error_opens_no_session() {
    let bad_params = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}}})
    .to_string();
    let bad_info = json!({"jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": 7}})
    .to_string();
    for json_mode in [false, true] {
        let store = Arc::new(InMemoryEventStore::default());
        let svc = service_for(
            &test_server(),
            HttpConfig::default()
                .with_json_response(json_mode)
                .with_event_store(store.clone()),
        );
        for body in [&bad_params, &bad_info] {
            let resp = oneshot(&svc, post(None, body.clone())).await;
            assert_eq!(resp.status(), 200, "a JSON-RPC error, on the HTTP answer");
            assert!(
                !resp.headers().contains_key("mcp-session-id"),
                "no session id for a refused initialize (json mode {json_mode})"
            );
            let text = body_text(resp).await;
            let answer = if json_mode {
                serde_json::from_str::<Value>(&text).unwrap()
            } else {
                parse_sse(&text).last().unwrap().json()
            };
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert_eq!(
                svc.session_count(),
                0,
                "nothing opened (json mode {json_mode})"
            );
            assert_eq!(store.session_count(), 0, "nothing kept");
        }
        // The good one still opens a session, with its id.
        let sid = open_session(&svc, "2025-11-25").await;
        assert_eq!(svc.session_count(), 1);
        let resp = oneshot(&svc, post(Some(&sid), call_body(3, "echo", json!({})))).await;
        assert_eq!(resp.status(), 200);
    }
}
#[tokio::test]
async fn ht19_request_without_session_header_is_400() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let _ = open_session(&svc, "2025-11-25").await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let resp = oneshot(&svc, post(None, body)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let e = error_of(&body_text(resp).await);
    assert_eq!(e["data"]["reason"], "missing_session_id");
}

#[tokio::test]
async fn ht20_unknown_session_is_404_and_header_name_ignores_case() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let resp = oneshot(
        &svc,
        post(Some("0123456789abcdef0123456789abcdef"), body.clone()),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(error_of(&body_text(resp).await)["code"], -32001);
    let req = post_req(None)
        .header("MCP-SESSION-ID", &sid)
        .body(Body::from(body))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), 200);
    let events = parse_sse(&body_text(resp).await);
    assert_eq!(events.last().unwrap().json()["id"], 2);
}

#[tokio::test]
async fn ht20_sec_sh_7_delete_ends_the_session_then_404_and_the_map_shrinks() {
    let store = Arc::new(InMemoryEventStore::default());
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_event_store(store.clone()),
    );
    let sid = open_session(&svc, "2025-11-25").await;
    let other = open_session(&svc, "2025-11-25").await;
    assert_eq!(svc.session_count(), 2);
    assert_eq!(store.session_count(), 2);
    let del = |s: &str| {
        Request::delete("/mcp")
            .header("host", "localhost")
            .header("mcp-session-id", s)
            .body(Body::empty())
            .unwrap()
    };
    let resp = oneshot(&svc, del(&sid)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(svc.session_count(), 1);
    assert_eq!(store.session_count(), 1, "stored events are freed");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let resp = oneshot(&svc, post(Some(&sid), body)).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        oneshot(&svc, del(&sid)).await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(oneshot(&svc, del(&other)).await.status(), StatusCode::OK);
    assert_eq!(svc.session_count(), 0);
    // DELETE can be refused.
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_allow_delete(false),
    );
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(&svc, del(&sid)).await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn ht23_protocol_version_header_any_supported_value_is_accepted() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let list = |id: i64, v: Option<&str>| {
        let b = post_req(Some(&sid));
        let b = match v {
            Some(v) => b.header("mcp-protocol-version", v),
            None => b,
        };
        b.body(Body::from(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string(),
        ))
        .unwrap()
    };
    for (i, v) in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
        .into_iter()
        .enumerate()
    {
        let resp = oneshot(&svc, list(i as i64 + 10, Some(v))).await;
        assert_eq!(resp.status(), 200, "{v}");
        let _ = body_text(resp).await;
    }
    let resp = oneshot(&svc, list(20, None)).await;
    assert_eq!(resp.status(), 200);
    let _ = body_text(resp).await;
    for bad in ["2099-01-01", "latest"] {
        let resp = oneshot(&svc, list(21, Some(bad))).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{bad}");
        let e = error_of(&body_text(resp).await);
        assert_eq!(e["data"]["tag"], "HT-23");
    }
    // 2026-07-28 names the modern era: the request is served as a modern one (the session id
    // is ignored, SPEC-2026-NOTES §14.3), which wants its envelope: 400 with -32602.
    let resp = oneshot(&svc, list(22, Some("2026-07-28"))).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(resp).await).unwrap();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(22), json!(-32602))
    );
}

#[tokio::test]
async fn ht5_ht12_accept_headers_are_checked_406() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json")
        .header("content-type", "application/json")
        .body(Body::from(init_body(1, "2025-11-25")))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::NOT_ACCEPTABLE);
    assert_eq!(error_of(&body_text(resp).await)["data"]["tag"], "HT-5");
    assert_eq!(svc.session_count(), 0);
    let sid = open_session(&svc, "2025-11-25").await;
    let req = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "application/json")
        .header("mcp-session-id", &sid)
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        oneshot(&svc, req).await.status(),
        StatusCode::NOT_ACCEPTABLE
    );
}

#[tokio::test]
async fn post_body_must_be_json_415() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "text/plain")
        .body(Body::from(init_body(1, "2025-11-25")))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let _ = error_of(&body_text(resp).await);
}

#[tokio::test]
async fn body_over_the_bound_is_413() {
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_max_body_bytes(512),
    );
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "x".repeat(600), "version": "1"}}})
    .to_string();
    // Without Content-Length: the streaming read stops at the bound.
    let resp = oneshot(&svc, post(None, big.clone())).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        error_of(&body_text(resp).await)["data"]["reason"],
        "body_too_large"
    );
    // With Content-Length: refused before reading.
    let req = post_req(None)
        .header("content-length", big.len())
        .body(Body::from(big))
        .unwrap();
    assert_eq!(
        oneshot(&svc, req).await.status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
    assert_eq!(svc.session_count(), 0);
}

#[tokio::test]
async fn ht2_ht3_sec_loc_7_host_and_origin_are_checked_403() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let with = |host: &str, origin: Option<&str>| {
        let b = Request::post("/mcp")
            .header("host", host)
            .header("accept", ACCEPT_BOTH)
            .header("content-type", "application/json");
        let b = match origin {
            Some(o) => b.header("origin", o),
            None => b,
        };
        b.body(Body::from(init_body(1, "2025-11-25"))).unwrap()
    };
    // The conformance suite's DNS-rebinding scenario: forged Host and Origin.
    let resp = oneshot(
        &svc,
        with("evil.example.com", Some("http://evil.example.com")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    // Good host, bad origin: 403 with a JSON-RPC error body without id.
    let resp = oneshot(
        &svc,
        with("localhost:3000", Some("http://evil.example.com")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let e = error_of(&body_text(resp).await);
    assert_eq!(e["data"]["reason"], "origin_not_allowed");
    assert_eq!(e["data"]["tag"], "HT-3");
    let resp = oneshot(&svc, with("evil.example.com:3000", None)).await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(svc.session_count(), 0);
    // Allowed: matching host and origin, or no origin at all.
    for (host, origin) in [
        ("127.0.0.1:3000", Some("http://127.0.0.1:3000")),
        ("localhost", None),
        ("[::1]:8080", Some("http://[::1]:8080")),
    ] {
        let resp = oneshot(&svc, with(host, origin)).await;
        assert_eq!(resp.status(), StatusCode::OK, "{host} {origin:?}");
    }
    // Configurable lists.
    let svc = service_for(
        &test_server(),
        HttpConfig::default()
            .allow_host("mcp.example.com")
            .allow_origin("https://app.example.com"),
    );
    let resp = oneshot(
        &svc,
        with("mcp.example.com", Some("https://app.example.com")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let svc = service_for(
        &test_server(),
        HttpConfig::default()
            .with_allowed_hosts(None::<Vec<String>>)
            .with_allowed_origins(None::<Vec<String>>),
    );
    let resp = oneshot(
        &svc,
        with("anything.example", Some("http://anything.example")),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn ht13_get_stream_disabled_is_405_and_other_methods_405() {
    let svc = service_for(&test_server(), HttpConfig::default().with_get_stream(false));
    let sid = open_session(&svc, "2025-11-25").await;
    let req = Request::get("/mcp")
        .header("host", "localhost")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .body(Body::empty())
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(resp.headers()["allow"], "POST, DELETE");
    let req = Request::put("/mcp")
        .header("host", "localhost")
        .body(Body::empty())
        .unwrap();
    assert_eq!(
        oneshot(&svc, req).await.status(),
        StatusCode::METHOD_NOT_ALLOWED
    );
}

#[tokio::test]
async fn ht7_notifications_and_responses_get_202_empty() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = body_text(resp).await;
    let resp = oneshot(&svc, post(Some(&sid), initialized_body())).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
    assert_eq!(body_text(resp).await, "");
    // A response to a request the server never sent is accepted too (the engine logs it).
    let resp = json!({"jsonrpc": "2.0", "id": 999, "result": {}}).to_string();
    let resp = oneshot(&svc, post(Some(&sid), resp)).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn ht8_bodies_without_an_answerable_id_are_400_with_an_idless_error() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let cases = [
        ("{not json", -32700),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#,
            -32600,
        ),
        (
            r#"{"jsonrpc":"1.0","method":"notifications/initialized"}"#,
            -32600,
        ),
        ("[]", -32600),
        ("42", -32600),
    ];
    for (body, code) in cases {
        let resp = oneshot(&svc, post(Some(&sid), body)).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(error_of(&body_text(resp).await)["code"], code, "{body}");
    }
    // A request whose id can be read is the engine's to answer: with that id, on its stream.
    let body = r#"{"jsonrpc":"1.0","id":77,"method":"tools/list"}"#;
    let resp = oneshot(&svc, post(Some(&sid), body)).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let events = parse_sse(&body_text(resp).await);
    let v = events.last().unwrap().json();
    assert_eq!(v["id"], 77);
    assert_eq!(v["error"]["code"], -32600);
}

#[tokio::test]
async fn ht16_post_stream_carries_related_messages_then_the_response_then_ends() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(&svc, post(Some(&sid), call_body(7, "chatty", json!({})))).await;
    assert_eq!(resp.status(), 200);
    // The body ends after the response: reading it to the end terminates.
    let events = parse_sse(&body_text(resp).await);
    let methods: Vec<Value> = events[1..]
        .iter()
        .map(|e| e.json().get("method").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        methods,
        vec![
            json!("notifications/progress"),
            json!("notifications/message"),
            Value::Null
        ]
    );
    assert_eq!(events[1].json()["params"]["progressToken"], "p7");
    let last = events.last().unwrap().json();
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done");
    // One stream, ids in order, unique.
    let ids: Vec<(u64, u64)> = events.iter().map(SseEvent::stream_seq).collect();
    let stream = ids[0].0;
    assert_eq!(
        ids,
        vec![(stream, 0), (stream, 1), (stream, 2), (stream, 3)]
    );
}

#[tokio::test]
async fn jr9_batches_pass_through_only_without_initialize() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let batch = format!("[{}]", init_body(1, "2025-03-26"));
    let resp = oneshot(&svc, post(None, batch)).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        error_of(&body_text(resp).await)["data"]["reason"],
        "initialize_in_batch"
    );
    assert_eq!(svc.session_count(), 0);

    // 2025-03-26: a batch of requests is answered with one array, on the POST's stream.
    let sid = open_session(&svc, "2025-03-26").await;
    let batch = json!([
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}},
        {"jsonrpc": "2.0", "id": "two", "method": "ping"}
    ])
    .to_string();
    let resp = oneshot(&svc, post(Some(&sid), batch.clone())).await;
    assert_eq!(resp.status(), 200);
    let events = parse_sse(&body_text(resp).await);
    let arr = events.last().unwrap().json();
    let mut ids: Vec<String> = arr
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, vec!["\"two\"", "1"]);
    // A batch of notifications only: 202.
    let notes =
        json!([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]).to_string();
    assert_eq!(
        oneshot(&svc, post(Some(&sid), notes)).await.status(),
        StatusCode::ACCEPTED
    );

    // 2025-11-25: the engine refuses the batch with an error without id, and it still reaches
    // the POST that sent it.
    let sid = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(&svc, post(Some(&sid), batch)).await;
    let events = parse_sse(&body_text(resp).await);
    let v = events.last().unwrap().json();
    assert_eq!(v["error"]["code"], -32600);
    assert!(v.get("id").is_none());
}

#[tokio::test]
async fn session_bound_503_on_initialize_when_full() {
    let svc = service_for(&test_server(), HttpConfig::default().with_max_sessions(2));
    let _a = open_session(&svc, "2025-11-25").await;
    let _b = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(!resp.headers().contains_key("mcp-session-id"));
    assert_eq!(
        error_of(&body_text(resp).await)["data"]["reason"],
        "too_many_sessions"
    );
    assert_eq!(svc.session_count(), 2);
}

#[tokio::test]
async fn idle_sessions_are_reaped_and_free_their_memory() {
    let store = Arc::new(InMemoryEventStore::default());
    let server = test_server();
    let svc = service_for(
        &server,
        HttpConfig::default()
            .with_idle_timeout(Some(Duration::from_millis(150)))
            .with_event_store(store.clone()),
    );
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(open_session(&svc, "2025-11-25").await);
    }
    assert_eq!(svc.session_count(), 3);
    assert_eq!(server.session_count(), 3);
    assert!(store.event_count() > 0);
    // The reaper ends them after 150 ms idle (it looks every 37 ms); waited for, not slept on,
    // so that a stalled machine cannot fail the test.
    wait::until("the reaper ended idle sessions", || {
        svc.session_count() == 0
    })
    .await;
    assert_eq!(store.session_count(), 0);
    assert_eq!(store.event_count(), 0);
    // The engine sessions are closed too (the server's own map shrinks).
    wait::until("the engine sessions are closed", || {
        server.session_count() == 0
    })
    .await;
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let resp = oneshot(&svc, post(Some(&ids[0]), body)).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn duplicate_in_flight_request_id_is_refused() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let first = oneshot(
        &svc,
        post(Some(&sid), call_body(3, "slow", json!({"ms": 300}))),
    )
    .await;
    assert_eq!(first.status(), 200);
    let again = oneshot(&svc, post(Some(&sid), call_body(3, "echo", json!({})))).await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST);
    let v: Value = serde_json::from_str(&body_text(again).await).unwrap();
    assert_eq!(v["id"], 3);
    assert_eq!(v["error"]["data"]["reason"], "duplicate_request_id");
    let events = parse_sse(&body_text(first).await);
    assert_eq!(
        events.last().unwrap().json()["result"]["content"][0]["text"],
        "slept 300"
    );
}

#[tokio::test]
async fn the_service_mounts_with_nest_service() {
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_json_response(true),
    );
    let app = axum::Router::new().nest_service("/api/mcp", svc.clone());
    let req = Request::post("/api/mcp")
        .header("host", "localhost")
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .body(Body::from(init_body(1, "2025-11-25")))
        .unwrap();
    let resp = tower::ServiceExt::oneshot(app, req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().contains_key("mcp-session-id"));
    // `router()` serves the configured path.
    let app = svc.router();
    let req = Request::post("/mcp")
        .header("host", "localhost")
        .header("accept", ACCEPT_BOTH)
        .header("content-type", "application/json")
        .body(Body::from(init_body(1, "2025-11-25")))
        .unwrap();
    let resp = tower::ServiceExt::oneshot(app, req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(svc.session_count(), 2);
}

/// A session store whose backend is down: every call fails.
struct DownStore;

impl switchboard_http::SessionStore for DownStore {
    fn create(
        &self,
        _record: switchboard_http::SessionRecord,
    ) -> switchboard_http::StoreFuture<'_, Result<(), switchboard_http::SessionStoreError>> {
        Box::pin(async {
            Err(switchboard_http::SessionStoreError::Backend(
                "connection refused".into(),
            ))
        })
    }

    fn load<'a>(
        &'a self,
        _id: &'a str,
    ) -> switchboard_http::StoreFuture<
        'a,
        Result<Option<switchboard_http::SessionRecord>, switchboard_http::SessionStoreError>,
    > {
        Box::pin(async {
            Err(switchboard_http::SessionStoreError::Backend(
                "connection refused".into(),
            ))
        })
    }

    fn remove<'a>(&'a self, _id: &'a str) -> switchboard_http::StoreFuture<'a, ()> {
        Box::pin(async {})
    }
}

#[tokio::test]
async fn a_session_store_that_fails_gets_503_and_no_session_is_kept() {
    let svc = service_for(
        &test_server(),
        HttpConfig::default().with_session_store(Arc::new(DownStore)),
    );
    // A new session cannot be recorded: refused, nothing kept, no id handed out.
    let resp = oneshot(&svc, post(None, init_body(1, "2025-11-25"))).await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(!resp.headers().contains_key("mcp-session-id"));
    let err = error_of(&body_text(resp).await);
    assert_eq!(err["data"]["reason"], "session_store_failed");
    assert_eq!(svc.session_count(), 0);
    // An id this node does not hold cannot be looked up: 503 too, not 404 (the session may
    // well exist; the client should retry rather than start over).
    let resp = oneshot(
        &svc,
        post(
            Some("0123456789abcdef0123456789abcdef"),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        ),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(svc.session_count(), 0);
}

/// Finding 9 of issue 25: two `Host` headers were accepted (the first one checked), where
/// RFC 9112 §3.2 requires 400: a proxy reading the other one sees another request.
#[tokio::test]
async fn finding_9_two_host_headers_are_refused_400() {
    let node = live(&test_server(), HttpConfig::default()).await;
    let me = node.addr;
    let init = init_body(1, "2025-11-25");
    for second in ["evil.example", "localhost", &me.to_string()] {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {me}\r\nHost: {second}\r\nAccept: {ACCEPT_BOTH}\r\nContent-Type: application/json"
        );
        let (status, answer) = raw_exchange(me, &head, &init).await;
        assert_eq!(status, 400, "second Host {second}: {answer}");
        assert!(answer.contains("repeated_header"), "{answer}");
    }
    assert_eq!(node.service.session_count(), 0);
    // One Host: served.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {me}\r\nAccept: {ACCEPT_BOTH}\r\nContent-Type: application/json"
    );
    assert_eq!(raw_exchange(me, &head, &init).await.0, 200);
}

/// Issue 25 (beside finding 9): `Origin`, `Mcp-Session-Id` and `MCP-Protocol-Version` each
/// name one value; sent twice, only the first was read. Two of any of them: 400.
#[tokio::test]
async fn finding_9_two_origin_session_or_version_headers_are_refused_400() {
    let svc = service_for(&test_server(), HttpConfig::default());
    let sid = open_session(&svc, "2025-11-25").await;
    let other = open_session(&svc, "2025-11-25").await;
    let cases: [(&str, &str, &str); 3] = [
        ("origin", "http://localhost:3000", "http://evil.example"),
        ("mcp-session-id", &sid, &other),
        ("mcp-protocol-version", "2025-11-25", "2025-06-18"),
    ];
    for (name, first, second) in cases {
        let mut req = post(Some(&sid), call_body(2, "echo", json!({})));
        req.headers_mut()
            .insert(name, http::HeaderValue::from_str(first).unwrap());
        req.headers_mut()
            .append(name, http::HeaderValue::from_str(second).unwrap());
        let resp = oneshot(&svc, req).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "two {name}");
        let e = error_of(&body_text(resp).await);
        assert_eq!(e["data"]["reason"], "repeated_header", "two {name}");
    }
}
