//! Input requests across eras: a 2026-07-28 client of the gateway answers, through its
//! `input_required` rounds, what an upstream asks (a 2025 upstream's `elicitation/create`
//! request, or a 2026-07-28 upstream's input requests, each under the upstream's own key), and
//! a completion answered by the gateway itself is a 2026-07-28 result.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode, InputKey, RequestContext};
use switchboard_gateway::Gateway;
use switchboard_server::{Server, ToolError};
use switchboard_test_support::wait;
use switchboard_types::ProtocolVersion;
use switchboard_types::elicitation::{ElicitRequestParams, ElicitResult};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::{connect, in_memory, obj, one_upstream, text_of};

fn form(message: &str) -> ElicitRequestParams {
    serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    }))
    .expect("params")
}

fn name_of(r: &ElicitResult) -> String {
    serde_json::to_value(r).expect("json")["content"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `who` asks for a name (under the key `user_name`), `two` for a first and a last name in
/// one round (`first`, `last`).
fn asking() -> Server {
    let failed = |e: switchboard_server::ClientRequestError| ToolError::new(e.to_string());
    Server::builder(Implementation::new("asking", "1"))
        .tool(Tool::new("who", obj()), move |call| async move {
            let r = call
                .cx
                .elicit_as("user_name", form("your name?"))
                .await
                .map_err(failed)?;
            Ok(CallToolResult::text(name_of(&r)))
        })
        .tool(Tool::new("two", obj()), move |call| async move {
            let (first, last) = tokio::join!(
                call.cx.elicit_as("first", form("first name?")),
                call.cx.elicit_as("last", form("last name?"))
            );
            let (first, last) = (first.map_err(failed)?, last.map_err(failed)?);
            Ok(CallToolResult::text(format!(
                "{} {}",
                name_of(&first),
                name_of(&last)
            )))
        })
        .build()
        .expect("a server")
}

fn gateway(upstream_era: EraMode) -> Gateway {
    one_upstream(
        "up",
        in_memory(asking(), Arc::default()),
        upstream_era,
        |_| {},
    )
}

/// A 2026-07-28 client that answers each elicitation with its message's first word, recording
/// the key it was asked under.
async fn modern_client(gateway: &Gateway, keys: Arc<Mutex<Vec<String>>>) -> ClientSession {
    let client = Client::builder(Implementation::new("modern", "1"))
        .era(EraMode::Pin(ProtocolVersion::V2026_07_28))
        .elicitation(move |params, cx: RequestContext| {
            let key = cx.attachment_as::<InputKey>().map(|k| k.0.clone());
            keys.lock().expect("lock").push(key.unwrap_or_default());
            let message = serde_json::to_value(&params).expect("json")["message"]
                .as_str()
                .unwrap_or_default()
                .split(' ')
                .next()
                .unwrap_or_default()
                .to_owned();
            async move {
                Ok(serde_json::from_value(
                    json!({"action": "accept", "content": {"name": message}}),
                )
                .expect("a result"))
            }
        })
        .build();
    let session = connect(gateway, client).await;
    assert!(session.protocol_version().is_modern());
    session
}

/// `[D26-42]` a 2025 upstream's `elicitation/create`, asked during a 2026-07-28 client's call,
/// reaches that client as an input request of an `input_required` round; its answer reaches the
/// upstream and the call completes.
#[tokio::test]
async fn a_2026_client_answers_a_2025_upstreams_elicitation_through_input_required() {
    let gateway = gateway(EraMode::Legacy);
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let keys = Arc::new(Mutex::new(Vec::new()));
    let client = modern_client(&gateway, keys.clone()).await;
    let r = client
        .call_tool("up_who", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "your");
    assert_eq!(keys.lock().expect("lock").len(), 1);
}

/// `[D26-42]` a 2026-07-28 upstream's input requests reach the 2026-07-28 client under the
/// upstream's own keys, all of one round at once.
#[tokio::test]
async fn a_2026_upstreams_input_requests_reach_the_client_under_their_own_keys() {
    let gateway = gateway(EraMode::Pin(ProtocolVersion::V2026_07_28));
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let keys = Arc::new(Mutex::new(Vec::new()));
    let client = modern_client(&gateway, keys.clone()).await;
    let r = client
        .call_tool("up_who", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "your");
    assert!(keys.lock().expect("lock").iter().all(|k| k == "user_name"));
    keys.lock().expect("lock").clear();
    let r = client
        .call_tool("up_two", json!({}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "first last");
    let mut asked = keys.lock().expect("lock").clone();
    asked.sort();
    asked.dedup();
    assert_eq!(asked, ["first", "last"]);
}

/// `[D26-20]` `[D26-19]` a completion the gateway answers itself (no upstream completes it) is,
/// on the wire to a 2026-07-28 client, a complete result with the gateway's `serverInfo` (the
/// server adds them to its handlers' results, not to a layer's answer).
#[tokio::test]
async fn a_completion_answered_by_the_gateway_is_a_2026_result_on_the_wire() {
    let gateway = gateway(EraMode::Legacy);
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (mut ours, theirs) = switchboard_jsonrpc::memory::pair();
    gateway.server().serve(theirs).expect("served");
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "completion/complete", "params": {
        "ref": {"type": "ref/prompt", "name": "nobody_greet"},
        "argument": {"name": "a", "value": "x"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    // A 2026-07-28 client's first request on a connection is `server/discover`; the
    // connection's era is decided by it.
    let discover = json!({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    ours.send_text(discover.to_string()).await.expect("sent");
    let _ = ours.recv_text().await.expect("discovered");
    ours.send_text(request.to_string()).await.expect("sent");
    let text = tokio::time::timeout(std::time::Duration::from_secs(30), ours.recv_text())
        .await
        .expect("an answer in time")
        .expect("open");
    let reply: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        reply["result"]["completion"]["values"],
        json!([]),
        "{reply}"
    );
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "switchboard-gateway"
    );
}
