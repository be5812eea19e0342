//! The `tools/call` error lattice (seed 000, aligned with the spec, SPEC-NOTES §11.6).

use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::{AllowList, RegistryError, Server, ServerError, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::RawPeer;

fn server() -> Server {
    Server::builder(Implementation::new("tools", "1"))
        .tool(Tool::new("ok", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("fine"))
        })
        .tool(Tool::new("fails", json!({"type": "object"})), |_| async {
            Err(ToolError::new("division by zero"))
        })
        .tool(Tool::new("panics", json!({"type": "object"})), |_| async {
            panic!("bug in tool")
        })
        .tool(Tool::new("secret", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("s"))
        })
        .tool_policy(|c| {
            if c.info.name == "admin" {
                AllowList::All
            } else {
                AllowList::all_except(["secret"])
            }
        })
        .build()
        .unwrap()
}

async fn client(s: &Server, name: &str) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.request(json!(0), "initialize", json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":name,"version":"1"}}))
        .await;
    c.notify("notifications/initialized", Value::Null).await;
    c.sync().await;
    c
}

fn call(name: &str) -> Value {
    json!({"name": name, "arguments": {}})
}

#[tokio::test]
async fn unknown_tool_is_32602_spec_wins_over_seed_000_32601() {
    let mut c = client(&server(), "u").await;
    let r = c.request(json!(1), "tools/call", call("nope")).await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["reason"], "unknown_tool");
}

#[tokio::test]
async fn tool_outside_allow_list_is_32600_and_not_listed() {
    let s = server();
    let mut c = client(&s, "user").await;
    let r = c.request(json!(1), "tools/call", call("secret")).await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["error"]["data"]["reason"], "tool_not_permitted");
    let names: Vec<Value> = c.request(json!(2), "tools/list", json!({})).await["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(names, vec![json!("fails"), json!("ok"), json!("panics")]);
    // The policy is per session: another client sees and may call it.
    let mut admin = client(&s, "admin").await;
    let r = admin.request(json!(1), "tools/call", call("secret")).await;
    assert_eq!(r["result"]["content"][0]["text"], "s");
}

#[tokio::test]
async fn tool_error_is_an_is_error_result_not_a_protocol_error() {
    let mut c = client(&server(), "u").await;
    let r = c.request(json!(1), "tools/call", call("fails")).await;
    assert_eq!(
        r["result"],
        json!({"content": [{"type": "text", "text": "division by zero"}], "isError": true})
    );
}

#[tokio::test]
async fn tool_panic_is_an_is_error_result_and_session_lives_on() {
    let mut c = client(&server(), "u").await;
    let r = c.request(json!(1), "tools/call", call("panics")).await;
    assert_eq!(r["result"]["isError"], true);
    let r = c.request(json!(2), "tools/call", call("ok")).await;
    assert_eq!(r["result"]["content"][0]["text"], "fine");
}

#[tokio::test]
async fn tools_call_without_name_is_32602() {
    let mut c = client(&server(), "u").await;
    let r = c
        .request(json!(1), "tools/call", json!({"arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["reason"], "invalid_params");
}

#[test]
fn duplicate_tool_names_fail_at_registration() {
    let r = Server::builder(Implementation::new("d", "1"))
        .tool(Tool::new("x", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("1"))
        })
        .tool(Tool::new("x", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("2"))
        })
        .build();
    assert!(matches!(
        r,
        Err(ServerError::Registry(RegistryError::Duplicate { .. }))
    ));
}

#[tokio::test]
async fn runtime_registration_and_removal() {
    let s = server();
    let mut c = client(&s, "u").await;
    assert!(
        s.add_tool(Tool::new("ok", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("dup"))
        })
        .is_err()
    );
    s.add_tool(Tool::new("new", json!({"type": "object"})), |_| async {
        Ok(CallToolResult::text("new"))
    })
    .unwrap();
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    s.remove_tool("new").unwrap();
    assert_eq!(c.recv().await["method"], "notifications/tools/list_changed");
    let r = c.request(json!(1), "tools/call", call("new")).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(s.remove_tool("new").is_err());
}

#[tokio::test]
async fn a_session_tool_named_like_a_server_tool_is_the_one_listed_and_called() {
    let s = server();
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    session
        .add_tool(
            Tool::new("ok", json!({"type": "object"})).with_description("this session's"),
            |_| async { Ok(CallToolResult::text("session")) },
        )
        .await
        .unwrap();
    let listed = c.request(json!(1), "tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let oks: Vec<&Value> = tools.iter().filter(|t| t["name"] == "ok").collect();
    assert_eq!(oks.len(), 1, "{listed}");
    assert_eq!(oks[0]["description"], "this session's");
    let r = c.request(json!(2), "tools/call", call("ok")).await;
    assert_eq!(r["result"]["content"][0]["text"], "session");
}
