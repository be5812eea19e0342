//! Shared by the `client_*` tests: connects our [`Client`] to a server played by hand with
//! [`RawPeer`] (which schema-checks every frame the client emits), and small frame helpers.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard::client::{Client, ClientBuilder, ClientSession};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::types::lifecycle::Implementation;
use switchboard_example_servers::everything::everything_server;
use switchboard_tests::{RawPeer, Recorder};

/// A client builder with the test's identity.
pub fn builder() -> ClientBuilder {
    Client::builder(Implementation::new("client-test", "1"))
        .era(switchboard::client::EraMode::Legacy)
}

/// Connects `client` to a hand-played server that answers `initialize` with `version` and
/// `capabilities`; returns the session, the fake server and the client's `initialize` params.
pub async fn connect_with(
    client: Client,
    version: &str,
    capabilities: Value,
) -> (ClientSession, RawPeer, Value) {
    let (a, b) = memory::pair();
    let mut fake = RawPeer::new(b, version);
    let task = tokio::spawn(async move { client.connect(a).await });
    let init = fake.recv().await;
    assert_eq!(init["method"], "initialize");
    fake.send(json!({"jsonrpc": "2.0", "id": init["id"], "result": {
        "protocolVersion": version, "capabilities": capabilities,
        "serverInfo": {"name": "fake-server", "version": "1"}}}))
        .await;
    assert_eq!(
        fake.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    );
    let session = task.await.expect("join").expect("connected");
    (session, fake, init["params"].clone())
}

/// [`connect_with`] for a client built from `builder`.
pub async fn connect(
    builder: ClientBuilder,
    version: &str,
    capabilities: Value,
) -> (ClientSession, RawPeer) {
    let (s, f, _) = connect_with(builder.build(), version, capabilities).await;
    (s, f)
}

/// Every server capability, with list changes and subscriptions.
pub fn all_server_caps() -> Value {
    json!({"tools": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true},
        "prompts": {"listChanged": true}, "logging": {}, "completions": {}})
}

/// Receives the next frame and checks it is exactly the request `method` with `params` (absent
/// when `Value::Null`); returns its id.
pub async fn expect_request(fake: &mut RawPeer, method: &str, params: Value) -> Value {
    let got = fake.recv().await;
    let mut want = json!({"jsonrpc": "2.0", "id": got["id"], "method": method});
    if !params.is_null() {
        want["params"] = params;
    }
    assert_eq!(got, want, "request frame");
    assert!(
        got["id"].is_i64() || got["id"].is_string(),
        "JR-3: string or integer id"
    );
    got["id"].clone()
}

/// Answers request `id` with `result`.
pub async fn reply(fake: &mut RawPeer, id: &Value, result: Value) {
    fake.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
        .await;
}

/// Answers request `id` with an error.
pub async fn reply_error(fake: &mut RawPeer, id: &Value, code: i64, message: &str) {
    fake.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
        .await;
}

/// Expects a request `method` with `params` and answers it with `result`.
pub async fn serve(fake: &mut RawPeer, method: &str, params: Value, result: Value) {
    let id = expect_request(fake, method, params).await;
    reply(fake, &id, result).await;
}

/// Runs `call` on a clone of `client` while the fake server serves the one request it makes:
/// `method` with `params` (absent when `Value::Null`), answered with `result`. Returns what the
/// call returned.
pub async fn served<T, Fut>(
    client: &ClientSession,
    fake: &mut RawPeer,
    call: impl FnOnce(ClientSession) -> Fut,
    method: &str,
    params: Value,
    result: Value,
) -> T
where
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let task = tokio::spawn(call(client.clone()));
    serve(fake, method, params, result).await;
    task.await.expect("join")
}

/// The client's `tools/list` served by the fake server with `tools`; returns the listed tools.
pub async fn tools_listed(
    client: &ClientSession,
    fake: &mut RawPeer,
    tools: Value,
) -> Vec<switchboard::types::tools::Tool> {
    served(
        client,
        fake,
        |c| async move { c.list_tools().await },
        "tools/list",
        json!({}),
        json!({"tools": tools}),
    )
    .await
    .expect("listed")
}

/// A client session with the everything server, in memory: every frame recorded, every log
/// message's data kept (a string as it is, anything else as JSON).
pub struct Everything {
    pub c: ClientSession,
    pub rec: Recorder,
    pub logs: Arc<Mutex<Vec<String>>>,
}

/// Connects `client` (its handlers set by the test) to the everything server in memory.
pub async fn connect_everything(client: ClientBuilder) -> Everything {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let rec = Recorder::default();
    let logs: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = logs.clone();
    let c = client
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .on_log(move |m| {
            let data = m
                .data
                .as_str()
                .map_or_else(|| m.data.to_string(), str::to_owned);
            sink.lock().unwrap().push(data);
        })
        .build()
        .connect(a)
        .await
        .unwrap();
    Everything { c, rec, logs }
}
