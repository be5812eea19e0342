//! A server facing hostile input: panics in the synchronous part of a request (a completion
//! provider, the tool policy, a tool's handler) and in a notification handler leave the session
//! answering; echoes of 4 MiB names, URIs and values are cut; a 2025-03-26 batch of 20,000
//! invalid entries is answered entry by entry while the log stays small.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::jsonrpc::memory::{self, MemoryTransport};
use switchboard::server::{AllowList, CompletionQuery, CompletionTarget, Server};
use switchboard::types::catalogue::RootsListChanged;
use switchboard::types::error::{ELLIPSIS, MAX_ECHO_BYTES};
use switchboard::types::jsonrpc::MAX_BATCH_ENTRIES;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::methods;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptMessage};
use switchboard::types::resources::{ReadResourceResult, Resource};
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_test_support::logs::count_logs;
use switchboard_tests::RawPeer;

const V: &str = "2025-11-25";

fn server() -> Server {
    Server::builder(Implementation::new("hostile", "1"))
        .tool(
            Tool::new(
                "add",
                json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
            ),
            |_| async { Ok(CallToolResult::text("ok")) },
        )
        .tool(
            Tool::new("panics_at_once", json!({"type": "object"})),
            |_| {
                panic!("bug before the future");
                #[allow(unreachable_code)]
                async {
                    Ok(CallToolResult::text("never"))
                }
            },
        )
        .enable_resources()
        .resource(Resource::new("mem://a", "a"), |_| async {
            Ok(ReadResourceResult::new(Vec::new()))
        })
        .enable_prompts()
        .prompt(Prompt::new("p"), |_| async {
            Ok(GetPromptResult::new(vec![PromptMessage::user_text("p")]))
        })
        .completion(
            CompletionTarget::Prompt("p".into()),
            "x",
            Arc::new(|q: &CompletionQuery| {
                if q.value == "boom" {
                    panic!("bug in a completion provider");
                }
                vec![q.value.clone()]
            }),
        )
        .notification::<RootsListChanged, _>(|_, _| panic!("bug in a notification handler"))
        .build()
        .unwrap()
}

async fn client(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, V);
    c.handshake(V, json!({"roots": {"listChanged": true}}))
        .await;
    c
}

fn short(answer: &Value) -> bool {
    answer.to_string().len() < 4 * MAX_ECHO_BYTES
}

#[tokio::test]
async fn a_panicking_completion_provider_is_32603_and_the_session_lives_on() {
    let mut c = client(&server()).await;
    let complete = |value: &str| json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "x", "value": value}});
    let r = c
        .request(json!(1), methods::COMPLETION_COMPLETE, complete("boom"))
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    c.sync().await;
    let r = c
        .request(json!(2), methods::COMPLETION_COMPLETE, complete("ok"))
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["ok"]));
}

#[tokio::test]
async fn a_panicking_tool_policy_is_32603_and_the_session_lives_on() {
    let s = Server::builder(Implementation::new("policy", "1"))
        .tool(Tool::new("t", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("t"))
        })
        .tool_policy(|c| {
            if c.info.name == "evil" {
                panic!("bug in the policy");
            }
            AllowList::All
        })
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, V);
    let init = |name: &str| json!({"protocolVersion": V, "capabilities": {}, "clientInfo": {"name": name, "version": "1"}});
    let r = c.request(json!(0), methods::INITIALIZE, init("evil")).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    c.sync().await;
    // The lifecycle did not move: a good initialize still works.
    let r = c.request(json!(1), methods::INITIALIZE, init("good")).await;
    assert_eq!(r["result"]["protocolVersion"], V);
}

#[tokio::test]
async fn a_panicking_notification_handler_leaves_the_session_answering() {
    let mut c = client(&server()).await;
    for _ in 0..3 {
        c.notify(methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, Value::Null)
            .await;
    }
    c.sync().await;
}

#[tokio::test]
async fn a_tool_that_panics_before_its_future_is_an_error_result() {
    let mut c = client(&server()).await;
    let r = c
        .request(
            json!(1),
            methods::TOOLS_CALL,
            json!({"name": "panics_at_once", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    c.sync().await;
}

#[tokio::test]
async fn echoes_of_4_mib_names_uris_and_values_are_cut() {
    let mut c = client(&server()).await;
    let huge = "h".repeat(4 << 20);
    let cases = [
        (methods::TOOLS_CALL, json!({"name": huge, "arguments": {}})),
        (methods::RESOURCES_READ, json!({"uri": huge})),
        (methods::PROMPTS_GET, json!({"name": huge})),
        // A string where the schema wants an integer: the validator quotes the value.
        (
            methods::TOOLS_CALL,
            json!({"name": "add", "arguments": {"a": huge}}),
        ),
        // A string where the params type wants an object: the parser quotes the value.
        (
            methods::RESOURCES_READ,
            json!({"uri": {"x": 1}, "_meta": huge}),
        ),
        (methods::TOOLS_CALL, json!({"name": ["x", huge]})),
        (
            methods::COMPLETION_COMPLETE,
            json!({"ref": {"type": huge}, "argument": {"name": "x", "value": ""}}),
        ),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let r = c.request(json!(i), method, params).await;
        assert!(
            r.get("error").is_some() || r["result"]["isError"] == true,
            "{method}: {r}"
        );
        assert!(short(&r), "{method}: {} bytes", r.to_string().len());
    }
    let r = c.request(json!("m"), &huge, Value::Null).await;
    assert_eq!(r["error"]["code"], -32601);
    assert!(r["error"]["message"].as_str().unwrap().ends_with(ELLIPSIS));
    assert!(short(&r));
    c.sync().await;
}

async fn raw_recv(io: &mut MemoryTransport) -> Value {
    let text = tokio::time::timeout(Duration::from_secs(20), io.recv_text())
        .await
        .expect("an answer in time")
        .expect("open");
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_2025_03_26_batch_of_invalid_entries_is_answered_with_a_small_log() {
    let (counter, _guard) = count_logs(tracing::Level::DEBUG);
    let (mut io, b) = memory::pair();
    server().serve(b).unwrap();
    let v = "2025-03-26";
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": methods::INITIALIZE, "params":
        {"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}});
    io.send_text(init.to_string()).await.unwrap();
    assert_eq!(raw_recv(&mut io).await["result"]["protocolVersion"], v);
    let initialized = json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_INITIALIZED});
    io.send_text(initialized.to_string()).await.unwrap();
    // Entries without a method, as in a measured attack (20,000 of them in 300 KB): a full
    // batch is answered entry by entry, a longer one refused whole.
    let batch = |n: usize| {
        let entries: Vec<String> = (0..n).map(|i| format!(r#"{{"id":{i}}}"#)).collect();
        format!("[{}]", entries.join(","))
    };
    io.send_text(batch(MAX_BATCH_ENTRIES)).await.unwrap();
    let answer = raw_recv(&mut io).await;
    let answers = answer.as_array().expect("one array");
    assert_eq!(answers.len(), MAX_BATCH_ENTRIES);
    assert!(answers.iter().all(|a| a["error"]["code"] == -32600));
    io.send_text(batch(20_000)).await.unwrap();
    let answer = raw_recv(&mut io).await;
    assert_eq!(
        answer["error"]["data"]["reason"], "batch_too_large",
        "{answer}"
    );
    let ping = json!({"jsonrpc": "2.0", "id": "p", "method": methods::PING});
    io.send_text(ping.to_string()).await.unwrap();
    assert_eq!(raw_recv(&mut io).await["id"], "p");
    let bytes = counter.bytes();
    assert!(bytes < 64 * 1024, "{bytes} bytes of log");
}
