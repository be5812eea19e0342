//! A scripted server over the in-memory transport, shared by the client's integration tests:
//! it answers each frame the client sends with the frames a script returns, and records them.
#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession};
use switchboard_jsonrpc::memory::{MemoryTransport, pair};
use switchboard_types::elicitation::{ElicitAction, ElicitResult};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::roots::Root;

pub(crate) const V: &str = "2026-07-28";

/// Every frame the scripted server received, as JSON.
pub(crate) type Seen = Arc<Mutex<Vec<Value>>>;

/// Starts a server that answers each frame with the frames `script` returns.
pub(crate) fn server(
    mut transport: MemoryTransport,
    mut script: impl FnMut(&Value) -> Vec<Value> + Send + 'static,
) -> Seen {
    let seen: Seen = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(text) = transport.recv_text().await {
            let frame: Value = serde_json::from_str(&text).unwrap();
            log.lock().unwrap().push(frame.clone());
            for out in script(&frame) {
                if transport.send_text(out.to_string()).await.is_err() {
                    return;
                }
            }
        }
    });
    seen
}

pub(crate) fn result(frame: &Value, result: Value) -> Vec<Value> {
    vec![json!({"jsonrpc": "2.0", "id": frame["id"], "result": result})]
}

pub(crate) fn error(frame: &Value, code: i64, data: Value) -> Vec<Value> {
    vec![
        json!({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": code, "message": "no", "data": data}}),
    ]
}

pub(crate) fn discover() -> Value {
    json!({"resultType": "complete", "supportedVersions": [V], "ttlMs": 0, "cacheScope": "private",
        "capabilities": {"tools": {}, "resources": {"subscribe": true, "listChanged": true}, "prompts": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}}})
}

pub(crate) fn initialize_result() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
        "serverInfo": {"name": "legacy", "version": "1"}})
}

/// A modern server answering `server/discover` and `tools/list`, and `tools/call` with `call`.
pub(crate) fn modern(
    transport: MemoryTransport,
    mut call: impl FnMut(&Value) -> Vec<Value> + Send + 'static,
) -> Seen {
    server(transport, move |f| match f["method"].as_str() {
        Some("server/discover") => result(f, discover()),
        Some("tools/list") => result(
            f,
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                {"name": "t", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"}}}},
                {"name": "bad", "inputSchema": {"type": "object", "properties": {
                    "n": {"type": "number", "x-mcp-header": "N"}}}}]}),
        ),
        Some(_) if f.get("id").is_some() => call(f),
        _ => vec![],
    })
}

/// A session of [`client`] pinned to the 2025 era over `transport`.
pub(crate) async fn legacy_session(transport: MemoryTransport) -> ClientSession {
    client()
        .era(switchboard_client::EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .unwrap()
}

pub(crate) fn client() -> switchboard_client::ClientBuilder {
    Client::builder(Implementation::new("modern-test", "1"))
        .elicitation(|p, _| async move {
            let message = match p {
                switchboard_types::elicitation::ElicitRequestParams::Form(f) => f.message,
                switchboard_types::elicitation::ElicitRequestParams::Url(u) => u.message,
            };
            let mut r = ElicitResult::new(ElicitAction::Accept);
            r.content = Some(serde_json::from_value(json!({"answer": message})).unwrap());
            Ok(r)
        })
        .roots([Root::new("file:///work")])
}

pub(crate) fn requests<'a>(seen: &'a [Value], method: &str) -> Vec<&'a Value> {
    seen.iter().filter(|f| f["method"] == method).collect()
}

pub(crate) async fn modern_session(
    call: impl FnMut(&Value) -> Vec<Value> + Send + 'static,
) -> (ClientSession, Seen) {
    let (a, b) = pair();
    let seen = modern(b, call);
    let session = client().build().connect(a).await.unwrap();
    (session, seen)
}
