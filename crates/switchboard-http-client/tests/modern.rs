//! Streamable HTTP in revision 2026-07-28 (SPEC-2026-NOTES §14), our client role over this
//! transport against a hand-written modern server: no session (an issued `MCP-Session-Id` is
//! never sent back, no GET stream, no DELETE), the headers mirrored from each body, -32022 in a
//! 400 body without an id read as the request's answer (§14.5), cancellation by closing the
//! response stream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::raw::{RawRequest, Reply, json as json_reply, raw, sse_head};
use switchboard_client::{CancellationToken, Client, EraMode, RequestOptions};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport, HttpMode};
use switchboard_types::ProtocolVersion;
use switchboard_types::lifecycle::Implementation;

const V: &str = "2026-07-28";

fn body(r: &RawRequest) -> Value {
    serde_json::from_str(&r.body).unwrap_or(Value::Null)
}

/// A JSON answer that also (wrongly, for this era) issues a session id.
fn answer(r: &RawRequest, result: Value) -> Reply {
    let text = json!({"jsonrpc": "2.0", "id": body(r)["id"], "result": result}).to_string();
    Reply::close(
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s-1\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        )
        .into_bytes(),
    )
}

fn bad_request(error: Value) -> Reply {
    let text = json!({"jsonrpc": "2.0", "id": null, "error": error}).to_string();
    Reply::close(
        format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{text}",
            text.len()
        )
        .into_bytes(),
    )
}

fn discover() -> Value {
    json!({"resultType": "complete", "supportedVersions": [V], "ttlMs": 0, "cacheScope": "private",
        "capabilities": {"tools": {}}})
}

fn modern_server(r: &RawRequest) -> Reply {
    let b = body(r);
    match b["method"].as_str() {
        Some("server/discover") => answer(r, discover()),
        Some("tools/list") => answer(
            r,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                {"name": "t", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "n": {"type": "integer", "x-mcp-header": "N"}}}}]}),
        ),
        Some("tools/call") if b["params"]["name"] == "slow" => Reply::hang(sse_head()),
        Some("tools/call") => answer(r, json!({"resultType": "complete", "content": []})),
        _ => Reply::close(support::raw::status(202, "Accepted")),
    }
}

fn client() -> Client {
    Client::builder(Implementation::new("http-modern", "1")).build()
}

#[tokio::test]
async fn d26_57_a_modern_session_sends_the_mirrored_headers_and_no_session() {
    let server = raw(modern_server).await;
    let transport = HttpClientTransport::connect(&server.url, HttpClientConfig::default()).unwrap();
    let handle = transport.handle();
    let session = client().connect(transport).await.unwrap();
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(handle.mode(), HttpMode::Modern);
    assert_eq!(handle.protocol_version().as_deref(), Some(V));
    assert_eq!(
        handle.session_id(),
        None,
        "an issued session id is not kept"
    );
    session.list_tools().await.unwrap();
    session
        .call_tool("t", json!({"region": " eu ", "n": 7}))
        .await
        .unwrap();
    session.close();
    tokio::time::timeout(Duration::from_secs(5), session.closed())
        .await
        .unwrap();
    // A silence check: no GET and no DELETE may follow the close (no event to wait for).
    tokio::time::sleep(Duration::from_millis(100)).await;
    let seen = server.seen();
    assert!(
        seen.iter().all(|r| r.method == "POST"),
        "no GET stream, no DELETE"
    );
    for r in &seen {
        let b = body(r);
        assert_eq!(r.header("mcp-session-id"), None, "[D26-57] no session id");
        assert_eq!(r.header("mcp-protocol-version"), Some(V));
        assert_eq!(
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], V,
            "the header equals the body's version"
        );
        assert_eq!(r.header("mcp-method"), b["method"].as_str());
    }
    let call = seen
        .iter()
        .find(|r| body(r)["method"] == "tools/call")
        .unwrap();
    assert_eq!(call.header("mcp-name"), Some("t"));
    assert_eq!(call.header("mcp-param-region"), Some("=?base64?IGV1IA==?="));
    assert_eq!(call.header("mcp-param-n"), Some("7"));
    assert_eq!(
        seen.iter()
            .filter(|r| body(r)["method"] == "tools/list")
            .filter_map(|r| r.header("mcp-name"))
            .count(),
        0,
        "no Mcp-Name on tools/list"
    );
}

#[tokio::test]
async fn d26_27_an_id_less_32022_in_a_400_body_is_the_probe_s_answer() {
    let first = std::sync::atomic::AtomicBool::new(true);
    let server = raw(move |r| {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            return bad_request(
                json!({"code": -32022, "message": "Unsupported protocol version",
                "data": {"supported": [V], "requested": V}}),
            );
        }
        modern_server(r)
    })
    .await;
    let transport = HttpClientTransport::connect(&server.url, HttpClientConfig::default()).unwrap();
    let session = client().connect(transport).await.unwrap();
    assert_eq!(session.protocol_version(), ProtocolVersion::V2026_07_28);
    let discovers = server
        .seen()
        .iter()
        .filter(|r| body(r)["method"] == "server/discover")
        .count();
    assert_eq!(
        discovers, 2,
        "retried once at a revision from data.supported"
    );
}

#[tokio::test]
async fn d26_121_a_legacy_http_server_gets_initialize_after_the_probe() {
    let server = raw(|r| {
        let b = body(r);
        match b["method"].as_str() {
            Some("server/discover") => bad_request(json!({"code": -32000,
                "message": "Bad Request: No valid session ID provided"})),
            Some("initialize") => json_reply_for(
                r,
                json!({"protocolVersion": "2025-11-25",
                "capabilities": {}, "serverInfo": {"name": "old", "version": "1"}}),
            ),
            _ => Reply::close(support::raw::status(202, "Accepted")),
        }
    })
    .await;
    let transport = HttpClientTransport::connect(
        &server.url,
        HttpClientConfig::default().with_get_stream(false),
    )
    .unwrap();
    let handle = transport.handle();
    let session = client().connect(transport).await.unwrap();
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(handle.mode(), HttpMode::Streamable);
    let methods: Vec<Value> = server
        .seen()
        .iter()
        .map(|r| body(r)["method"].clone())
        .collect();
    assert_eq!(methods[0], "server/discover");
    assert_eq!(methods[1], "initialize");
}

fn json_reply_for(r: &RawRequest, result: Value) -> Reply {
    Reply::close(json_reply(
        &json!({"jsonrpc": "2.0", "id": body(r)["id"], "result": result}).to_string(),
    ))
}

#[tokio::test]
async fn d26_77_cancelling_a_modern_request_closes_its_stream_and_posts_nothing() {
    let server = raw(modern_server).await;
    let transport = HttpClientTransport::connect(&server.url, HttpClientConfig::default()).unwrap();
    let session = Client::builder(Implementation::new("http-modern", "1"))
        .era(EraMode::Pin(ProtocolVersion::V2026_07_28))
        .build()
        .connect(transport)
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let seen = server.seen.clone();
    tokio::spawn(async move {
        // The call hangs once the server has it (its stream open): cancelled then.
        support::eventually("the call reached the server", || {
            let seen = seen.lock().unwrap();
            seen.iter().any(|r| body(r)["params"]["name"] == "slow")
        })
        .await;
        c.cancel();
    });
    let e = session
        .call_tool_with(
            "slow",
            json!({}),
            RequestOptions::default().with_cancel(cancel),
        )
        .await
        .unwrap_err();
    assert!(e.code().is_none(), "a local cancellation: {e}");
    // A silence check: no cancellation may be posted in this time (no event to wait for).
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancels = server
        .seen()
        .iter()
        .filter(|r| body(r)["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancels, 0, "[D26-77] the stream is closed instead");
    // The session goes on.
    session.call_tool("t", json!({})).await.unwrap();
}

#[tokio::test]
async fn a_probe_answered_with_something_else_still_leaves_room_for_the_handshake() {
    let server = raw(|r| {
        let b = body(r);
        match b["method"].as_str() {
            // A 2xx that is no discover result: the probe falls back.
            Some("server/discover") => answer(r, json!({"hello": "world"})),
            Some("initialize") => answer(
                r,
                json!({"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}),
            ),
            Some("tools/list") => json_reply_for(r, json!({"tools": []})),
            _ => Reply::close(support::raw::status(202, "Accepted")),
        }
    })
    .await;
    let transport = HttpClientTransport::connect(
        &server.url,
        HttpClientConfig::default().with_get_stream(false),
    )
    .unwrap();
    let handle = transport.handle();
    let session = client().connect(transport).await.unwrap();
    assert_eq!(session.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(handle.mode(), HttpMode::Streamable);
    assert_eq!(
        handle.session_id().as_deref(),
        Some("s-1"),
        "the session of initialize"
    );
    session.list_tools().await.unwrap();
    let list = server
        .seen()
        .into_iter()
        .find(|r| body(r)["method"] == "tools/list")
        .unwrap();
    assert_eq!(list.header("mcp-session-id"), Some("s-1"));
    assert_eq!(
        list.header("mcp-method"),
        None,
        "a legacy request has no Mcp-Method"
    );
}
