//! Server features beyond the everything contract: typed tools, argument validation by revision,
//! output-schema enforcement, URL elicitation, list_changed for every list, completion context.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::{CompletionTarget, Server, ToolError, typed, url_elicitation_required};
use switchboard::types::elicitation::ElicitRequestURLParams;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptMessage};
use switchboard::types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::RawPeer;

#[derive(Deserialize, JsonSchema)]
struct Add {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

fn server() -> Server {
    Server::builder(Implementation::new("features", "1"))
        .registered_tool(typed::tool("add", "Add two integers", |x: Add, _cx| async move {
            Ok(CallToolResult::text((x.a + x.b).to_string()))
        }))
        .registered_tool(typed::tool_with_output("sum", "Sum as structured output", |x: Add, _cx| async move {
            Ok(Sum { sum: x.a + x.b })
        }))
        .tool(
            Tool::new("liar", json!({"type": "object"})).with_output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
            |_| async { Ok(CallToolResult::structured(json!({"n": "not a number"}))) },
        )
        .tool(Tool::new("needs_link", json!({"type": "object"})), |_| async {
            Err(ToolError::Rpc(url_elicitation_required(
                "Link your account first.",
                vec![ElicitRequestURLParams::new("Connect the CRM", "el-1", "https://example.test/link?e=el-1")],
            )))
        })
        .tool(Tool::new("url_elicit", json!({"type": "object"})), |call| async move {
            let r = call.cx.elicit(ElicitRequestURLParams::new("Open this", "el-2", "https://example.test/x")).await;
            match r {
                Ok(r) => {
                    call.cx.complete_elicitation("el-2").await.map_err(|e| ToolError::new(e.to_string()))?;
                    Ok(CallToolResult::text(format!("{:?}", r.action)))
                }
                Err(e) => Err(ToolError::new(e.to_string())),
            }
        })
        .enable_resources()
        .enable_prompts()
        .completion(
            CompletionTarget::Prompt("p".into()),
            "b",
            std::sync::Arc::new(|q: &switchboard::server::CompletionQuery| {
                let a = q.context.get("a").cloned().unwrap_or_default();
                vec![format!("{a}-{}", q.value)]
            }),
        )
        .prompt(Prompt::new("p"), |_| async { Ok(GetPromptResult::new(vec![PromptMessage::user_text("p")])) })
        .build()
        .unwrap()
}

async fn client(s: &Server, version: &str, caps: Value) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, version);
    c.handshake(version, caps).await;
    c
}

fn call(name: &str, args: Value) -> Value {
    json!({"name": name, "arguments": args})
}

#[tokio::test]
async fn sc_typed_tool_schema_comes_from_the_rust_type() {
    let mut c = client(&server(), "2025-11-25", json!({})).await;
    let r = c.request(json!(1), "tools/list", json!({})).await;
    let add = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap()
        .clone();
    assert_eq!(add["inputSchema"]["type"], "object", "SF-6");
    assert_eq!(
        add["inputSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema",
        "SC: 2020-12 dialect"
    );
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(
        add["inputSchema"]["properties"]["a"]["description"],
        "The first addend."
    );
    let sum = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "sum")
        .unwrap()
        .clone();
    assert_eq!(sum["outputSchema"]["properties"]["sum"]["type"], "integer");
    assert_eq!(
        c.request(json!(2), "tools/call", call("add", json!({"a": 2, "b": 3})))
            .await["result"]["content"][0]["text"],
        "5"
    );
    let r = c
        .request(json!(3), "tools/call", call("sum", json!({"a": 2, "b": 3})))
        .await;
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(
        r["result"]["content"][0]["text"], r#"{"sum":5}"#,
        "a text block beside structuredContent"
    );
}

#[tokio::test]
async fn sf_9_sec_tool_1_invalid_arguments_are_an_is_error_result_naming_the_field_in_2025_11_25() {
    let mut c = client(&server(), "2025-11-25", json!({})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            call("add", json!({"a": "two", "b": 3})),
        )
        .await;
    assert_eq!(r["result"]["isError"], true);
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("/a") && text.contains("integer"), "{text}");
}

#[tokio::test]
async fn invalid_arguments_are_32602_before_2025_11_25() {
    for v in ["2024-11-05", "2025-03-26", "2025-06-18"] {
        let mut c = client(&server(), v, json!({})).await;
        let r = c
            .request(json!(1), "tools/call", call("add", json!({"a": 1})))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{v}: {r}");
        assert_eq!(r["error"]["data"]["reason"], "invalid_arguments");
    }
}

#[tokio::test]
async fn sf_7_structured_content_breaking_output_schema_is_32603() {
    let mut c = client(&server(), "2025-11-25", json!({})).await;
    let r = c
        .request(json!(1), "tools/call", call("liar", json!({})))
        .await;
    assert_eq!(r["error"]["code"], -32603);
    assert_eq!(r["error"]["data"]["reason"], "invalid_structured_content");
}

#[tokio::test]
async fn el_10_url_elicitation_required_is_32042_with_the_elicitations() {
    let mut c = client(&server(), "2025-11-25", json!({})).await;
    let r = c
        .request(json!(1), "tools/call", call("needs_link", json!({})))
        .await;
    assert_eq!(r["error"]["code"], -32042);
    assert_eq!(
        r["error"]["data"]["elicitations"][0],
        json!({"mode": "url", "message": "Connect the CRM", "elicitationId": "el-1", "url": "https://example.test/link?e=el-1"})
    );
}

#[tokio::test]
async fn el_8_url_mode_elicitation_then_complete_notification() {
    let mut c = client(&server(), "2025-11-25", json!({"elicitation": {"url": {}}})).await;
    c.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call("url_elicit", json!({}))})).await;
    let req = c.recv().await;
    assert_eq!(req["params"]["mode"], "url");
    c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}))
        .await;
    let n = c.recv().await;
    assert_eq!(
        n,
        json!({"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "el-2"}})
    );
    assert_eq!(
        c.recv_id(&json!(1)).await["result"]["content"][0]["text"],
        "Accept"
    );
}

#[tokio::test]
async fn cp_6_url_mode_is_not_sent_to_a_form_only_client() {
    let mut c = client(&server(), "2025-11-25", json!({"elicitation": {}})).await;
    let r = c
        .request(json!(1), "tools/call", call("url_elicit", json!({})))
        .await;
    assert_eq!(
        r["result"]["isError"], true,
        "refused locally, reported by the tool: {r}"
    );
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("elicitation.url")
    );
}

#[tokio::test]
async fn list_changed_for_resources_and_prompts() {
    let s = server();
    let mut c = client(&s, "2025-11-25", json!({})).await;
    s.add_resource(Resource::new("x://1", "one"), |r| async move {
        Ok(ReadResourceResult::new(vec![
            switchboard::types::content::TextResourceContents::new(r.uri, "1").into(),
        ]))
    })
    .unwrap();
    assert_eq!(
        c.recv().await["method"],
        "notifications/resources/list_changed"
    );
    s.add_prompt(Prompt::new("q"), |_| async {
        Ok(GetPromptResult::new(vec![]))
    })
    .unwrap();
    assert_eq!(
        c.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    s.remove_prompt("q").unwrap();
    assert_eq!(
        c.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    assert_eq!(s.resource_updated("x://1"), 0, "nobody subscribed");
    c.request(json!(1), "resources/subscribe", json!({"uri": "x://1"}))
        .await;
    assert_eq!(s.resource_updated("x://1"), 1);
    assert_eq!(c.recv().await["params"]["uri"], "x://1");
}

#[tokio::test]
async fn completion_sees_context_arguments() {
    let mut c = client(&server(), "2025-11-25", json!({})).await;
    let r = c
        .request(
            json!(1),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "b", "value": "x"}, "context": {"arguments": {"a": "A"}}}),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["A-x"]));
}

#[tokio::test]
async fn bound_subscriptions_per_session() {
    let s = Server::builder(Implementation::new("s", "1"))
        .max_subscriptions(1)
        .resource(Resource::new("x://1", "1"), |_| async {
            Ok(ReadResourceResult::new(vec![]))
        })
        .resource(Resource::new("x://2", "2"), |_| async {
            Ok(ReadResourceResult::new(vec![]))
        })
        .build()
        .unwrap();
    let mut c = client(&s, "2025-11-25", json!({})).await;
    assert_eq!(
        c.request(json!(1), "resources/subscribe", json!({"uri": "x://1"}))
            .await["result"],
        json!({})
    );
    let r = c
        .request(json!(2), "resources/subscribe", json!({"uri": "x://2"}))
        .await;
    assert_eq!(r["error"]["data"]["reason"], "too_many_subscriptions");
    assert_eq!(
        c.request(json!(3), "resources/subscribe", json!({"uri": "x://1"}))
            .await["result"],
        json!({}),
        "re-subscribing is free"
    );
    assert_eq!(
        c.request(json!(4), "resources/subscribe", json!({"uri": "x://none"}))
            .await["error"]["code"],
        -32002
    );
}

/// A server with one resource template (`x://{name}`), and a bound on subscribed bytes if given.
fn template_server(max_subscription_bytes: Option<usize>) -> Server {
    let mut b = Server::builder(Implementation::new("s", "1"));
    if let Some(n) = max_subscription_bytes {
        b = b.max_subscription_bytes(n);
    }
    b.resource_template(ResourceTemplate::new("x://{name}", "x"), |_| async {
        Ok(ReadResourceResult::new(vec![]))
    })
    .build()
    .unwrap()
}

/// A template matches URIs as long as a body, so a session's subscriptions are bounded in bytes
/// as well as in number; unsubscribing gives the bytes back.
#[tokio::test]
async fn bound_subscription_bytes_per_session() {
    let s = template_server(Some(1000));
    let mut c = client(&s, "2025-11-25", json!({})).await;
    let uri = |n: usize| format!("x://{}", "a".repeat(n));
    let r = c
        .request(json!(1), "resources/subscribe", json!({"uri": uri(600)}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    let r = c
        .request(json!(2), "resources/subscribe", json!({"uri": uri(500)}))
        .await;
    assert_eq!(
        r["error"]["data"]["reason"], "subscriptions_too_large",
        "{r}"
    );
    assert_eq!(r["error"]["data"]["limit"], 1000);
    let r = c
        .request(json!(3), "resources/subscribe", json!({"uri": uri(600)}))
        .await;
    assert_eq!(r["result"], json!({}), "re-subscribing costs nothing");
    let r = c
        .request(json!(4), "resources/unsubscribe", json!({"uri": uri(600)}))
        .await;
    assert_eq!(r["result"], json!({}));
    let r = c
        .request(json!(5), "resources/subscribe", json!({"uri": uri(500)}))
        .await;
    assert_eq!(r["result"], json!({}), "the bytes came back: {r}");
    // The default bound (256 KiB) refuses a subscription to a URI of a megabyte.
    let s = template_server(None);
    let mut c = client(&s, "2025-11-25", json!({})).await;
    let r = c
        .request(
            json!(1),
            "resources/subscribe",
            json!({"uri": uri(1 << 20)}),
        )
        .await;
    assert_eq!(
        r["error"]["data"]["reason"], "subscriptions_too_large",
        "{r}"
    );
}

#[tokio::test]
async fn bound_session_tools() {
    let s = Server::builder(Implementation::new("s", "1"))
        .max_session_tools(1)
        .enable_tools()
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    session
        .add_tool(Tool::new("t1", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("1"))
        })
        .await
        .unwrap();
    assert!(
        session
            .add_tool(Tool::new("t2", json!({"type": "object"})), |_| async {
                Ok(CallToolResult::text("2"))
            })
            .await
            .is_err()
    );
    session
        .add_tool(Tool::new("t1", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("1b"))
        })
        .await
        .unwrap();
}

#[test]
fn invalid_tool_schema_fails_registration() {
    let r = Server::builder(Implementation::new("s", "1"))
        .tool(
            Tool::new(
                "bad",
                json!({"type": "object", "properties": {"a": {"type": 5}}}),
            ),
            |_| async { Ok(CallToolResult::text("")) },
        )
        .build();
    assert!(r.is_err());
}
