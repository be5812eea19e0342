//! Revision 2026-07-28 served by the same server as the 2025 era, in memory: every frame we emit
//! is checked against the 2026-07-28 schema by the raw peer (SPEC-2026-NOTES; tests named after
//! the D26 tags they cover).

use serde_json::{Value, json};
use switchboard::jsonrpc::memory;
use switchboard::server::{Context, Server, ToolError};
use switchboard::types::content::{Resource, ResourceContents, TextResourceContents};
use switchboard::types::elicitation::ElicitRequestFormParams;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::logging::LoggingLevel;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptMessage};
use switchboard::types::resources::ReadResourceResult;
use switchboard::types::sampling::CreateMessageRequestParams;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_test_support::wait;
use switchboard_tests::RawPeer;

const V: &str = "2026-07-28";

fn form(message: &str) -> ElicitRequestFormParams {
    serde_json::from_value(json!({"message": message, "requestedSchema":
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}))
    .expect("form")
}

fn fail(e: impl std::fmt::Display) -> ToolError {
    ToolError::new(e.to_string())
}

async fn name_of(cx: &Context, key: &str) -> Result<String, ToolError> {
    let r = cx.elicit_as(key, form("Your name?")).await.map_err(fail)?;
    let content = r
        .content
        .and_then(|c| serde_json::to_value(c).ok())
        .unwrap_or_default();
    Ok(content["name"].as_str().unwrap_or("?").to_owned())
}

fn server() -> Server {
    let obj = json!({"type": "object"});
    Server::builder(Implementation::new("modern", "1"))
        .enable_logging()
        .tool(Tool::new("simple", obj.clone()), |_| async {
            Ok(CallToolResult::text("simple"))
        })
        .tool(Tool::new("greet", obj.clone()), |call| async move {
            let name = name_of(&call.cx, "user_name").await?;
            Ok(CallToolResult::text(format!("Hello, {name}!")))
        })
        .tool(Tool::new("two_steps", obj.clone()), |call| async move {
            let a = name_of(&call.cx, "step1").await?;
            let b = name_of(&call.cx, "step2").await?;
            Ok(CallToolResult::text(format!("{a} then {b}")))
        })
        .tool(Tool::new("all_at_once", obj.clone()), |call| async move {
            let sample: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
                "maxTokens": 10}))
            .map_err(fail)?;
            let (n, s, r) = tokio::join!(
                name_of(&call.cx, "name"),
                call.cx.create_message_as("capital", sample),
                call.cx.list_roots_as("roots")
            );
            let (n, s, r) = (n?, s.map_err(fail)?, r.map_err(fail)?);
            Ok(CallToolResult::text(format!(
                "{n} {} {}",
                serde_json::to_value(&s.content).map_err(fail)?["text"],
                r.roots.len()
            )))
        })
        .tool(Tool::new("needs_sampling", obj.clone()), |call| async move {
            let sample: CreateMessageRequestParams = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 10}))
            .map_err(fail)?;
            call.cx.create_message(sample).await.map_err(fail)?;
            Ok(CallToolResult::text("sampled"))
        })
        .tool(Tool::new("logs", obj.clone()), |call| async move {
            for i in 0..3 {
                let _ = call.cx.log(LoggingLevel::Info, json!(format!("line {i}"))).await;
            }
            Ok(CallToolResult::text("logged"))
        })
        .tool(
            Tool::new(
                "regional",
                json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}),
            ),
            |_| async { Ok(CallToolResult::text("regional")) },
        )
        .tool(Tool::new("needs_url", obj.clone()), |_| async {
            let url: switchboard::types::elicitation::ElicitRequestURLParams =
                serde_json::from_value(json!({"mode": "url", "message": "Sign in",
                    "elicitationId": "e1", "url": "https://example.com/auth"}))
                .map_err(fail)?;
            Err(ToolError::Rpc(switchboard::server::url_elicitation_required(
                "sign in first",
                vec![url],
            )))
        })
        .resource(
            Resource::new("test://static", "static"),
            |read| async move {
                let c = TextResourceContents::new(read.uri, "static text");
                Ok(ReadResourceResult::new(vec![ResourceContents::Text(c)]))
            },
        )
        .prompt(Prompt::new("asks"), |get| async move {
            let name = name_of(&get.cx, "user_context").await.map_err(|e| {
                switchboard::types::ErrorObject::internal(format!("{e:?}"))
            })?;
            Ok(GetPromptResult::new(vec![PromptMessage::user_text(format!("context: {name}"))]))
        })
        .build()
        .expect("server")
}

fn meta(caps: Value) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": V,
           "io.modelcontextprotocol/clientCapabilities": caps,
           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}})
}

fn with_meta(mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta(caps);
    params
}

async fn connect(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    RawPeer::new(a, V)
}

async fn call(c: &mut RawPeer, id: i64, method: &str, params: Value) -> Value {
    c.request(json!(id), method, params).await
}

#[tokio::test]
async fn d26_24_d26_25_d26_90_discover_names_versions_capabilities_and_cache_hints() {
    let s = server();
    let mut c = connect(&s).await;
    let r = call(
        &mut c,
        1,
        "server/discover",
        json!({"_meta": meta(json!({}))}),
    )
    .await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!([V]));
    assert!(result["capabilities"]["tools"].is_object());
    assert!(result["capabilities"].get("tasks").is_none());
    assert_eq!(result["ttlMs"], 0);
    assert_eq!(result["cacheScope"], "private");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "modern"
    );
}

#[tokio::test]
async fn d26_9_d26_11_d26_12_d26_27_the_ladder_in_order() {
    let s = server();
    let mut c = connect(&s).await;
    // An envelope without capabilities: -32602, even for an unknown version.
    let r = call(
        &mut c,
        1,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0"}}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["id"], 1, "D26-3: the error keeps the id");
    // Without clientInfo: served (D26-11).
    let r = call(
        &mut c,
        2,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {}}}),
    )
    .await;
    assert!(r["result"]["tools"].is_array(), "{r}");
    // An unknown version: -32022 with supported and requested.
    let mut m = meta(json!({}));
    m["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let r = call(&mut c, 3, "tools/list", json!({"_meta": m})).await;
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert_eq!(r["error"]["data"]["supported"], json!([V]));
    assert_eq!(r["error"]["data"]["requested"], "v999.0.0");
    // No params at all on a modern connection: -32602.
    let r = call(&mut c, 4, "tools/list", Value::Null).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn d26_60_removed_methods_are_not_found_on_a_modern_connection() {
    let s = server();
    let mut c = connect(&s).await;
    for (id, method) in [
        (1, "initialize"),
        (2, "ping"),
        (3, "logging/setLevel"),
        (4, "resources/subscribe"),
        (5, "resources/unsubscribe"),
        (6, "tasks/result"),
        (7, "tasks/list"),
    ] {
        let r = call(
            &mut c,
            id,
            method,
            with_meta(json!({"uri": "test://static", "level": "info"}), json!({})),
        )
        .await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
    }
    // The connection is modern: an initialize without envelope is no way back to 2025.
    let r = call(
        &mut c,
        8,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "x", "version": "1"}}),
    )
    .await;
    assert_eq!(
        r["error"]["code"], -32022,
        "names the versions served here: {r}"
    );
    assert_eq!(r["error"]["data"]["supported"], json!([V]));
}

#[tokio::test]
async fn d26_19_every_result_says_its_type_and_cacheable_ones_carry_hints() {
    let s = server();
    let mut c = connect(&s).await;
    let r = call(&mut c, 1, "tools/list", with_meta(json!({}), json!({}))).await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["ttlMs"], 0);
    let r = call(
        &mut c,
        2,
        "tools/call",
        with_meta(json!({"name": "simple"}), json!({})),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert!(
        r["result"].get("ttlMs").is_none(),
        "tools/call is not cacheable"
    );
    let r = call(
        &mut c,
        3,
        "resources/read",
        with_meta(json!({"uri": "test://static"}), json!({})),
    )
    .await;
    assert_eq!(r["result"]["cacheScope"], "private", "{r}");
}

#[tokio::test]
async fn d26_98_an_unknown_resource_is_invalid_params_with_its_uri() {
    let s = server();
    let mut c = connect(&s).await;
    let r = call(
        &mut c,
        1,
        "resources/read",
        with_meta(json!({"uri": "test://nope"}), json!({})),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["uri"], "test://nope");
}

#[tokio::test]
async fn d26_35_d26_37_d26_43_an_elicitation_takes_two_rounds() {
    let s = server();
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {}});
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "greet"}), caps.clone()),
    )
    .await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert_eq!(
        result["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"]
        .as_str()
        .expect("a sealed state")
        .to_owned();
    let retry = with_meta(
        json!({"name": "greet", "requestState": state,
               "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}, "extra": 1}}),
        caps.clone(),
    );
    let r = call(&mut c, 2, "tools/call", retry).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Ada!");
    // A wrong key: asked again (a fresh input_required), never a complete result.
    let r = call(
        &mut c,
        3,
        "tools/call",
        with_meta(
            json!({"name": "greet",
        "inputResponses": {"wrong": {"action": "accept", "content": {"name": "Ada"}}}}),
            caps.clone(),
        ),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    // An answer of the wrong shape is asked again too; inputResponses that is not an object is -32602.
    let r = call(
        &mut c,
        4,
        "tools/call",
        with_meta(
            json!({"name": "greet",
        "inputResponses": {"user_name": 12345}}),
            caps.clone(),
        ),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let r = call(
        &mut c,
        5,
        "tools/call",
        with_meta(json!({"name": "greet", "inputResponses": null}), caps),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn d26_38_a_tampered_state_is_an_error() {
    let s = server();
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {}});
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "greet"}), caps.clone()),
    )
    .await;
    let state = r["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    let r = call(
        &mut c,
        2,
        "tools/call",
        with_meta(
            json!({"name": "greet",
        "requestState": format!("{state}-TAMPERED"),
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}}),
            caps.clone(),
        ),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // A state sealed for another tool is no good here either.
    let r = call(
        &mut c,
        3,
        "tools/call",
        with_meta(json!({"name": "two_steps", "requestState": state}), caps),
    )
    .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn multi_round_requests_carry_earlier_answers_in_the_state() {
    let s = server();
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {}});
    let answer = |n: &str| json!({"action": "accept", "content": {"name": n}});
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "two_steps"}), caps.clone()),
    )
    .await;
    assert!(r["result"]["inputRequests"].get("step1").is_some(), "{r}");
    let s1 = r["result"]["requestState"].clone();
    let r = call(
        &mut c,
        2,
        "tools/call",
        with_meta(
            json!({"name": "two_steps", "requestState": s1,
        "inputResponses": {"step1": answer("a")}}),
            caps.clone(),
        ),
    )
    .await;
    assert!(r["result"]["inputRequests"].get("step2").is_some(), "{r}");
    assert!(r["result"]["inputRequests"].get("step1").is_none());
    let s2 = r["result"]["requestState"].clone();
    assert_ne!(s1, s2, "a new state each round");
    let r = call(
        &mut c,
        3,
        "tools/call",
        with_meta(
            json!({"name": "two_steps", "requestState": s2,
        "inputResponses": {"step2": answer("b")}}),
            caps,
        ),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "a then b", "{r}");
}

#[tokio::test]
async fn d26_41_inputs_asked_together_are_in_one_result_and_each_needs_its_capability() {
    let s = server();
    let mut c = connect(&s).await;
    let all = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "all_at_once"}), all.clone()),
    )
    .await;
    let asked = r["result"]["inputRequests"]
        .as_object()
        .expect("asked")
        .clone();
    assert_eq!(asked.len(), 3, "{r}");
    assert_eq!(asked["capital"]["method"], "sampling/createMessage");
    assert_eq!(asked["roots"]["method"], "roots/list");
    let state = r["result"]["requestState"].clone();
    let r = call(&mut c, 2, "tools/call", with_meta(json!({"name": "all_at_once", "requestState": state,
        "inputResponses": {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "capital": {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"},
            "roots": {"roots": [{"uri": "file:///a"}]}}}), all)).await;
    assert_eq!(r["result"]["content"][0]["text"], "Ada \"Paris\" 1", "{r}");
    // Without the sampling capability: -32021 naming it (D26-15), not an input request.
    let r = call(
        &mut c,
        3,
        "tools/call",
        with_meta(
            json!({"name": "needs_sampling"}),
            json!({"elicitation": {}}),
        ),
    )
    .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
}

#[tokio::test]
async fn d26_119_a_url_elicitation_required_error_becomes_an_input_request() {
    let s = server();
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {"url": {}}});
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "needs_url"}), caps),
    )
    .await;
    assert_eq!(
        r["result"]["resultType"], "input_required",
        "never -32042 in 2026: {r}"
    );
    assert_eq!(r["result"]["inputRequests"]["e1"]["params"]["mode"], "url");
    let r = call(
        &mut c,
        2,
        "tools/call",
        with_meta(json!({"name": "needs_url"}), json!({"elicitation": {}})),
    )
    .await;
    assert_eq!(r["error"]["code"], -32021, "form mode only: {r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {"url": {}}})
    );
}

#[tokio::test]
async fn d26_34_prompts_may_ask_too_lists_never_do() {
    let s = server();
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {}});
    let r = call(
        &mut c,
        1,
        "prompts/get",
        with_meta(json!({"name": "asks"}), caps.clone()),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    assert!(r["result"]["inputRequests"].get("user_context").is_some());
    let r = call(&mut c, 2, "prompts/list", with_meta(json!({}), caps)).await;
    assert_eq!(r["result"]["resultType"], "complete");
}

#[tokio::test]
async fn d26_84_no_log_without_a_level_and_only_for_that_request() {
    let s = server();
    let mut c = connect(&s).await;
    let r = call(
        &mut c,
        1,
        "tools/call",
        with_meta(json!({"name": "logs"}), json!({})),
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "logged");
    c.expect_silence(50).await;
    let mut p = with_meta(json!({"name": "logs"}), json!({}));
    p["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    c.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": p}))
        .await;
    let mut logs = 0;
    loop {
        let f = c.recv().await;
        if f.get("id") == Some(&json!(2)) {
            break;
        }
        assert_eq!(f["method"], "notifications/message", "{f}");
        logs += 1;
    }
    assert_eq!(logs, 3);
}

#[tokio::test]
async fn d26_68_d26_70_d26_72_a_listen_is_acknowledged_first_and_tags_what_it_carries() {
    let s = server();
    let mut c = connect(&s).await;
    c.send(json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true, "promptsListChanged": true,
            "resourceSubscriptions": ["test://static"]}}}))
        .await;
    let ack = c.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(ack["params"]["notifications"]["toolsListChanged"], true);
    assert!(
        ack["params"]["notifications"]
            .get("resourceSubscriptions")
            .is_some(),
        "resources.subscribe is declared"
    );
    // Nothing asked for is sent; what is asked for is tagged.
    s.add_tool(Tool::new("late", json!({"type": "object"})), |_| async {
        Ok(CallToolResult::text("late"))
    })
    .expect("add");
    let n = c.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed", "{n}");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(s.resource_updated("test://other"), 0);
    assert_eq!(s.resource_updated("test://static"), 1);
    let n = c.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "test://static");
    // The server ends it: the listen is answered with its result.
    s.close_listen_streams();
    let end = c.recv().await;
    assert_eq!(end["id"], "listen-1", "{end}");
    assert_eq!(
        end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen-1"
    );
    assert_eq!(s.listen_stream_count(), 0);
}

#[tokio::test]
async fn d26_75_a_cancelled_listen_stops_and_is_forgotten() {
    let s = server();
    let mut c = connect(&s).await;
    c.send(
        json!({"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}}),
    )
    .await;
    let _ack = c.recv().await;
    assert_eq!(s.listen_stream_count(), 1);
    c.notify("notifications/cancelled", json!({"requestId": 9}))
        .await;
    wait::until("the cancelled listen forgotten", || {
        s.listen_stream_count() == 0
    })
    .await;
    s.add_tool(Tool::new("late", json!({"type": "object"})), |_| async {
        Ok(CallToolResult::text("late"))
    })
    .expect("add");
    c.expect_silence(50).await;
}

/// A listen's filter is kept while its stream is open, so its params are bounded in bytes (the
/// server's `max_initialize_bytes`, 64 KiB): a 1 MB list of URIs is refused with -32602, no
/// stream is opened, and a small listen still works.
#[tokio::test]
async fn a_listen_over_the_byte_bound_is_refused_and_no_stream_opens() {
    let s = server();
    let mut c = connect(&s).await;
    let uris: Vec<String> = (0..20_000).map(|i| format!("file:///{i:048}")).collect();
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"resourceSubscriptions": uris}}}),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "listen_too_large");
    assert_eq!(s.listen_stream_count(), 0);
    c.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}}),
    )
    .await;
    let ack = c.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(s.listen_stream_count(), 1);
}

#[tokio::test]
async fn d26_120_initialize_opens_a_2025_session_on_the_same_server() {
    let s = server();
    let (a, b) = memory::pair();
    s.serve(b).expect("serve");
    let mut c = RawPeer::new(a, "2025-11-25");
    let init = c.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        init["protocolVersion"], "2025-11-25",
        "initialize never answers 2026-07-28"
    );
    let r = c.request(json!(1), "tools/list", json!({})).await;
    assert!(
        r["result"].get("resultType").is_none(),
        "no 2026 members on a 2025 session: {r}"
    );
    assert!(r["result"].get("ttlMs").is_none());
    let r = c
        .request(json!(2), "tools/list", json!({"_meta": meta(json!({}))}))
        .await;
    assert_eq!(
        r["error"]["code"], -32600,
        "an envelope on a 2025 session: {r}"
    );
    let r = c.request(json!(3), "server/discover", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
}

#[tokio::test]
async fn our_2026_frames_trace_clean() {
    use switchboard::jsonrpc::{Flow, SessionConfig};
    use switchboard_inspect::{Direction, Inspector};
    let rec = switchboard_tests::Recorder::default();
    let s = Server::builder(Implementation::new("traced", "1"))
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .tool(
            Tool::new("greet", json!({"type": "object"})),
            |call| async move {
                let name = name_of(&call.cx, "user_name").await?;
                Ok(CallToolResult::text(format!("Hello, {name}!")))
            },
        )
        .build()
        .expect("server");
    let mut c = connect(&s).await;
    let caps = json!({"elicitation": {}});
    call(
        &mut c,
        1,
        "server/discover",
        json!({"_meta": meta(json!({}))}),
    )
    .await;
    call(&mut c, 2, "tools/list", with_meta(json!({}), json!({}))).await;
    let r = call(
        &mut c,
        3,
        "tools/call",
        with_meta(json!({"name": "greet"}), caps.clone()),
    )
    .await;
    let state = r["result"]["requestState"].clone();
    call(
        &mut c,
        4,
        "tools/call",
        with_meta(
            json!({"name": "greet", "requestState": state,
        "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Ada"}}}}),
            caps,
        ),
    )
    .await;
    c.send(
        json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": {"_meta": meta(json!({})), "notifications": {"toolsListChanged": true}}}),
    )
    .await;
    let _ack = c.recv().await;
    s.add_tool(Tool::new("late", json!({"type": "object"})), |_| async {
        Ok(CallToolResult::text("late"))
    })
    .expect("add");
    let _changed = c.recv().await;
    let frames = rec.frames();
    assert!(frames.len() >= 11, "{frames:?}");
    let mut inspector = Inspector::new();
    for (flow, text) in &frames {
        let direction = match flow {
            Flow::Inbound => Direction::ClientToServer,
            Flow::Outbound => Direction::ServerToClient,
        };
        let report = inspector.observe(direction, text, None);
        assert!(
            report.violations.is_empty(),
            "{text}: {:?}",
            report.violations
        );
    }
}
