//! Revision 2026-07-28 on Streamable HTTP (SPEC-2026-NOTES §14): no sessions, headers checked
//! against the body, statuses that follow the error code, JSON or SSE, beside 2025 sessions on
//! the same endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;
use switchboard_test_support::wait;

use axum::body::Body;
use http::{Request, StatusCode};
use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;

const V: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V,
           "io.modelcontextprotocol/clientCapabilities": {}})
}

/// A modern POST with the standard headers derived from `body` (unless overridden).
fn modern(body: Value, extra: &[(&str, &str)]) -> Request<Body> {
    let method = body["method"].as_str().unwrap_or_default().to_owned();
    let mut b = post_req(None)
        .header("mcp-protocol-version", V)
        .header("mcp-method", method);
    if let Some(name) = body["params"]["name"].as_str() {
        b = b.header("mcp-name", name);
    }
    for (k, v) in extra {
        b = b.header(*k, *v);
    }
    b.body(Body::from(body.to_string())).unwrap()
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn json_of(resp: http::Response<Body>) -> Value {
    assert_eq!(resp.headers()["content-type"], "application/json");
    serde_json::from_str(&body_text(resp).await).unwrap()
}

#[tokio::test]
async fn d26_50_d26_55_a_request_is_answered_without_a_session_in_json() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    let resp = oneshot(&svc, modern(request(1, "server/discover", json!({})), &[])).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        resp.headers().get("mcp-session-id").is_none(),
        "no session in this era"
    );
    let v = json_of(resp).await;
    assert_eq!(v["result"]["supportedVersions"], json!([V]));
    let resp = oneshot(
        &svc,
        modern(
            request(
                2,
                "tools/call",
                json!({"name": "echo", "arguments": {"a": 1}}),
            ),
            &[],
        ),
    )
    .await;
    let v = json_of(resp).await;
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"][0]["text"], "{\"a\":1}");
    assert_eq!(svc.session_count(), 0, "nothing is kept");
}

#[tokio::test]
async fn d26_10_d26_28_d26_58_d26_60_statuses_follow_the_ladder() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    // No envelope: 400 + -32602.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    let resp = oneshot(&svc, modern(body, &[])).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v = json_of(resp).await;
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(1), json!(-32602))
    );
    // Header and body disagree on the version: -32020, before the version is looked at.
    let mut body = request(2, "tools/list", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let resp = oneshot(&svc, modern(body, &[])).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(resp).await["error"]["code"], -32020);
    // Both name an unknown version: -32022.
    let mut body = request(3, "tools/list", json!({}));
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let req = post_req(None)
        .header("mcp-protocol-version", "v999.0.0")
        .header("mcp-method", "tools/list")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v = json_of(resp).await;
    assert_eq!(v["error"]["code"], -32022);
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    // A removed method: 404 + -32601.
    let resp = oneshot(&svc, modern(request(4, "ping", json!({})), &[])).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    assert_eq!(json_of(resp).await["error"]["code"], -32601);
    // Mcp-Method missing, or different: -32020.
    let body = request(5, "tools/list", json!({}));
    let req = post_req(None)
        .header("mcp-protocol-version", V)
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(resp).await["error"]["code"], -32020);
    // Mcp-Name different from params.name: -32020; with surrounding spaces: fine.
    let call = request(6, "tools/call", json!({"name": "echo"}));
    let req = post_req(None)
        .header("mcp-protocol-version", V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "other")
        .body(Body::from(call.to_string()))
        .unwrap();
    assert_eq!(
        json_of(oneshot(&svc, req).await).await["error"]["code"],
        -32020
    );
    let req = post_req(None)
        .header("MCP-Protocol-Version", V)
        .header("MCP-METHOD", "tools/call")
        .header("Mcp-Name", "  echo  ")
        .body(Body::from(call.to_string()))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::OK);
    // A notification: 202, nothing held.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let resp = oneshot(&svc, modern(note, &[])).await;
    assert_eq!(resp.status(), StatusCode::ACCEPTED);
}

#[tokio::test]
async fn d26_56_notifications_first_make_an_sse_answer_that_carries_them_before_the_result() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    let mut body = request(7, "tools/call", json!({"name": "chatty"}));
    body["params"]["_meta"]["progressToken"] = json!("p");
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let resp = oneshot(&svc, modern(body, &[])).await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    let text = body_text(resp).await;
    let msgs: Vec<Value> = parse_sse(&text)
        .into_iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .map(|e| e.json())
        .collect();
    let methods: Vec<&str> = msgs.iter().filter_map(|m| m["method"].as_str()).collect();
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/message"],
        "{msgs:?}"
    );
    assert_eq!(msgs.last().unwrap()["id"], 7);
    // Without a log level the same call logs nothing (D26-84) and needs no stream.
    let resp = oneshot(
        &svc,
        modern(request(8, "tools/call", json!({"name": "chatty"})), &[]),
    )
    .await;
    assert_eq!(resp.headers()["content-type"], "application/json");
}

#[tokio::test]
async fn d26_15_d26_16_a_handler_needing_an_undeclared_capability_is_400() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    let resp = oneshot(
        &svc,
        modern(request(9, "tools/call", json!({"name": "sample"})), &[]),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    let v = json_of(resp).await;
    assert_eq!(v["error"]["code"], -32021);
    assert_eq!(
        v["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn d26_120_a_2025_session_and_modern_requests_share_the_endpoint() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    let session = open_session(&svc, "2025-11-25").await;
    let resp = oneshot(&svc, modern(request(1, "tools/list", json!({})), &[])).await;
    assert_eq!(json_of(resp).await["result"]["resultType"], "complete");
    let req = post_req(Some(&session))
        .header("mcp-protocol-version", "2025-11-25")
        .body(Body::from(call_body(2, "echo", json!({}))))
        .unwrap();
    let resp = oneshot(&svc, req).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let text = body_text(resp).await;
    assert!(
        !text.contains("resultType"),
        "no 2026 member on a 2025 session: {text}"
    );
    assert_eq!(svc.session_count(), 1, "only the 2025 session is kept");
}

#[tokio::test]
async fn d26_71_d26_77_a_listen_streams_until_the_client_goes_away() {
    let server = test_server();
    let live = live(&server, HttpConfig::default()).await;
    let body = request(
        11,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut req = wire_post(live.addr, None, body.to_string());
    let h = req.headers_mut();
    h.insert("mcp-protocol-version", V.parse().unwrap());
    h.insert("mcp-method", "subscriptions/listen".parse().unwrap());
    let resp = send(live.addr, req).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let mut events = SseReader::new(resp.into_body());
    let ack = events
        .next_event(Duration::from_secs(5))
        .await
        .expect("the acknowledgement at once");
    assert_eq!(
        ack.json()["method"],
        "notifications/subscriptions/acknowledged"
    );
    server
        .add_tool(
            switchboard_types::Tool::new("late", json!({"type": "object"})),
            |_| async { Ok(switchboard_types::CallToolResult::text("late")) },
        )
        .unwrap();
    let n = events
        .next_event(Duration::from_secs(5))
        .await
        .expect("the change");
    assert_eq!(n.json()["method"], "notifications/tools/list_changed");
    assert_eq!(
        n.json()["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        11
    );
    assert_eq!(server.listen_stream_count(), 1);
    drop(events);
    wait::until("the listen stream is forgotten", || {
        server.listen_stream_count() == 0
    })
    .await;
    assert_eq!(
        server.listen_stream_count(),
        0,
        "closing the stream ends the listen"
    );
}

/// Finding 8 of issue 25: of a repeated `Mcp-Method`, `Mcp-Name` or `MCP-Protocol-Version`,
/// only the first was compared with the body, so an intermediary routing on another copy saw
/// another request. A repeated one is a malformed header: 400 with -32020 (`[D26-58]`), even
/// when both copies agree with the body. (`Mcp-Param-*`: the role's unit test.)
#[tokio::test]
async fn finding_8_a_repeated_mcp_header_is_refused_400_header_mismatch() {
    let server = test_server();
    let svc = service_for(&server, HttpConfig::default());
    let call = || request(1, "tools/call", json!({"name": "echo", "arguments": {}}));
    for (name, second) in [
        ("mcp-method", "tools/list"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "other"),
        ("mcp-name", "echo"),
        ("mcp-protocol-version", V),
    ] {
        let mut req = modern(call(), &[]);
        req.headers_mut()
            .append(name, http::HeaderValue::from_static(second));
        let resp = oneshot(&svc, req).await;
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST, "{name}: {second}");
        let v = json_of(resp).await;
        assert_eq!(v["error"]["code"], -32020, "{name}: {second}: {v}");
    }
    // One of each: served.
    let resp = oneshot(&svc, modern(call(), &[])).await;
    assert_eq!(resp.status(), StatusCode::OK);
}
