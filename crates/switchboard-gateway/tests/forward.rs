//! Requests and log lines from an upstream during a client's call reach that client only:
//! sampling, elicitation, roots and logging, with two clients calling at once (the hostile
//! case: client B never sees, and so can never answer, what client A's call caused).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_gateway::{Gateway, GatewayConfig};
use switchboard_server::Server;
use switchboard_test_support::wait;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use switchboard_types::resources::ResourceTemplate;
use switchboard_types::sampling::CreateMessageResult;
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::{connect, in_memory, one_upstream, text_of};

/// An upstream whose `ask` logs a line, asks the client for a sampled message naming `who`,
/// and answers with what the client said; `elicit` asks for a form; `roots` lists the roots.
fn asking() -> Server {
    Server::builder(Implementation::new("asking", "1"))
        .tool(Tool::new("ask", json!({"type": "object"})), |call| async move {
            let who = call.arguments.get("who").and_then(Value::as_str).unwrap_or("?").to_owned();
            let _ = call.cx.log(LoggingLevel::Info, json!(format!("asking for {who}"))).await;
            let params = serde_json::from_value(json!({
                "messages": [{"role": "user", "content": {"type": "text", "text": format!("for {who}")}}],
                "maxTokens": 10
            }))
            .expect("params");
            let r = call
                .cx
                .create_message(params)
                .await
                .map_err(|e| switchboard_server::ToolError::new(e.to_string()))?;
            let r = serde_json::to_value(r).expect("a result");
            Ok(CallToolResult::text(
                r.pointer("/content/text").and_then(Value::as_str).unwrap_or_default(),
            ))
        })
        .tool(Tool::new("elicit", json!({"type": "object"})), |call| async move {
            let name = common::elicit_name(&call.cx).await?;
            Ok(CallToolResult::text(name.unwrap_or_default()))
        })
        .tool(Tool::new("roots", json!({"type": "object"})), |call| async move {
            let r = call
                .cx
                .list_roots()
                .await
                .map_err(|e| switchboard_server::ToolError::new(e.to_string()))?;
            Ok(CallToolResult::text(r.roots[0].uri.clone()))
        })
        .prompt(
            {
                let mut p = Prompt::new("ask");
                p.arguments = Some(vec![PromptArgument::new("who")]);
                p
            },
            |get| async move {
                let who = get.arguments.get("who").cloned().unwrap_or_default();
                let text = sample(&get.cx, &who)
                    .await
                    .map_err(switchboard_types::ErrorObject::internal)?;
                let m: PromptMessage = serde_json::from_value(
                    json!({"role": "user", "content": {"type": "text", "text": text}}),
                )
                .expect("a message");
                Ok(GetPromptResult::new(vec![m]))
            },
        )
        .resource_template(
            ResourceTemplate::new("test://ask/{who}", "ask"),
            |read| async move {
                let who = read.vars.get("who").cloned().unwrap_or_default();
                let text = sample(&read.cx, &who)
                    .await
                    .map_err(switchboard_types::ErrorObject::internal)?;
                Ok(common::read_text(&read.uri, text))
            },
        )
        .enable_logging()
        .build()
        .expect("a server")
}

/// Asks the client of `cx` for a sampled message naming `who`; returns its text.
async fn sample(cx: &switchboard_server::Context, who: &str) -> Result<String, String> {
    let params = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": format!("for {who}")}}],
        "maxTokens": 10
    }))
    .expect("params");
    let r = cx.create_message(params).await.map_err(|e| e.to_string())?;
    let r = serde_json::to_value(r).expect("a result");
    Ok(r.pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned())
}

/// What one client of the gateway saw.
#[derive(Default)]
struct Seen {
    sampled: Vec<String>,
    logs: Vec<String>,
}

/// A client of the gateway named `name` that answers sampling with `sampled by NAME`,
/// elicitation with its name and roots with `file:///NAME`; `hold` keeps its sampling answer
/// until it is notified.
async fn client_of(
    gateway: &Gateway,
    name: &'static str,
    seen: Arc<Mutex<Seen>>,
    hold: Option<Arc<tokio::sync::Notify>>,
) -> ClientSession {
    let sampled = seen.clone();
    let client = Client::builder(Implementation::new(name, "1"))
        .era(EraMode::Legacy)
        .sampling(move |params, _| {
            let sampled = sampled.clone();
            let hold = hold.clone();
            async move {
                let text = serde_json::to_value(&params.messages[0]).expect("a message")["content"]
                    ["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                sampled.lock().expect("lock").sampled.push(text);
                if let Some(hold) = hold {
                    hold.notified().await;
                }
                let r: CreateMessageResult = serde_json::from_value(json!({
                    "role": "assistant", "model": "test",
                    "content": {"type": "text", "text": format!("sampled by {name}")}
                }))
                .expect("a result");
                Ok(r)
            }
        })
        .elicitation(move |_, _| async move {
            Ok(
                serde_json::from_value(json!({"action": "accept", "content": {"name": name}}))
                    .expect("a result"),
            )
        })
        .roots([serde_json::from_value(json!({"uri": format!("file:///{name}")})).expect("a root")])
        .on_log(move |line| {
            seen.lock()
                .expect("lock")
                .logs
                .push(line.data.as_str().unwrap_or_default().to_owned());
        })
        .build();
    connect(gateway, client).await
}

fn gateway() -> Gateway {
    gateway_with(|_| {})
}

/// [`gateway`], its configuration changed by `edit` before the start.
fn gateway_with(edit: impl FnOnce(&mut GatewayConfig)) -> Gateway {
    one_upstream(
        "up",
        in_memory(asking(), Arc::default()),
        EraMode::Legacy,
        edit,
    )
}

/// `[SEC]` hostile clients: while A's sampling request waits for A, B calls the same tool; each
/// client is asked only what its own call caused, and each call gets its own client's answer.
#[tokio::test]
async fn sampling_and_log_lines_reach_only_the_client_whose_call_caused_them() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (seen_a, seen_b) = (
        Arc::new(Mutex::new(Seen::default())),
        Arc::new(Mutex::new(Seen::default())),
    );
    let hold = Arc::new(tokio::sync::Notify::new());
    let a = client_of(&gateway, "A", seen_a.clone(), Some(hold.clone())).await;
    let b = client_of(&gateway, "B", seen_b.clone(), None).await;
    a.set_level(LoggingLevel::Debug).await.expect("setLevel");
    b.set_level(LoggingLevel::Debug).await.expect("setLevel");
    a.list_tools().await.expect("tools");
    let a_call = tokio::spawn({
        let a = a.clone();
        async move { a.call_tool("up_ask", json!({"who": "A"})).await }
    });
    wait::until("A is asked", || {
        seen_a.lock().expect("lock").sampled.len() == 1
    })
    .await;
    // A's request is pending at A; B calls now, and is asked only about its own call.
    let r = b
        .call_tool("up_ask", json!({"who": "B"}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "sampled by B");
    hold.notify_one();
    let r = a_call.await.expect("joined").expect("a result");
    assert_eq!(text_of(&r), "sampled by A");
    assert_eq!(seen_a.lock().expect("lock").sampled, ["for A"]);
    assert_eq!(seen_b.lock().expect("lock").sampled, ["for B"]);
    wait::until("each log line at its client", || {
        seen_a.lock().expect("lock").logs.len() == 1 && seen_b.lock().expect("lock").logs.len() == 1
    })
    .await;
    assert_eq!(seen_a.lock().expect("lock").logs, ["asking for A"]);
    assert_eq!(seen_b.lock().expect("lock").logs, ["asking for B"]);
    assert_eq!(gateway.own_sessions("up"), Some(2));
    // A's session ends: its upstream session is closed and forgotten.
    a.close();
    wait::until("A's own session closed", || {
        gateway.own_sessions("up") == Some(1)
    })
    .await;
}

#[tokio::test]
async fn elicitation_and_roots_are_asked_of_the_calling_client() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let a = client_of(&gateway, "A", Arc::default(), None).await;
    let b = client_of(&gateway, "B", Arc::default(), None).await;
    for (client, name) in [(&a, "A"), (&b, "B")] {
        let r = client
            .call_tool("up_elicit", json!({}))
            .await
            .expect("a result");
        assert_eq!(text_of(&r), name);
        let r = client
            .call_tool("up_roots", json!({}))
            .await
            .expect("a result");
        assert_eq!(text_of(&r), format!("file:///{name}"));
    }
}

/// Bound: sessions of their own per upstream (`max_affinity_sessions`): past it a client
/// shares the gateway's session, whose client the upstream cannot ask (the call fails, to
/// that client only).
#[tokio::test]
async fn past_max_affinity_sessions_a_client_shares_the_gateways_session() {
    let gateway = gateway_with(|c| c.limits.max_affinity_sessions = 1);
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let a = client_of(&gateway, "A", Arc::default(), None).await;
    let b = client_of(&gateway, "B", Arc::default(), None).await;
    let r = a
        .call_tool("up_ask", json!({"who": "A"}))
        .await
        .expect("a result");
    assert_eq!(text_of(&r), "sampled by A");
    let r = b.call_tool("up_ask", json!({"who": "B"})).await;
    let failed = match r {
        Ok(r) => r.is_error == Some(true),
        Err(_) => true,
    };
    assert!(failed, "B, past the bound, cannot be asked");
    assert_eq!(gateway.own_sessions("up"), Some(1));
}

/// `client_sessions = "shared"`: no client gets a session of its own; the upstream cannot ask
/// anyone (the call fails), and never asks the wrong client.
#[tokio::test]
async fn with_shared_client_sessions_the_upstream_asks_no_client() {
    let gateway = gateway_with(|c| {
        c.upstreams = std::mem::take(&mut c.upstreams)
            .into_iter()
            .map(|u| u.with_own_sessions(false))
            .collect();
    });
    gateway.ready().await;
    let seen = Arc::new(Mutex::new(Seen::default()));
    let a = client_of(&gateway, "A", seen.clone(), None).await;
    let failed = match a.call_tool("up_ask", json!({"who": "A"})).await {
        Ok(r) => r.is_error == Some(true),
        Err(_) => true,
    };
    assert!(failed);
    assert!(seen.lock().expect("lock").sampled.is_empty());
    assert_eq!(gateway.own_sessions("up"), Some(0));
}

/// `[SEC]` hostile clients, for prompts and resources: a `prompts/get` or `resources/read` goes
/// through the client's own upstream session, so the sampling it causes upstream is asked of
/// that client alone, while another client's get or read of the same item is asked of that one.
#[tokio::test]
async fn a_get_or_read_asks_only_the_client_that_made_it() {
    let gateway = gateway();
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let (seen_a, seen_b) = (
        Arc::new(Mutex::new(Seen::default())),
        Arc::new(Mutex::new(Seen::default())),
    );
    let hold = Arc::new(tokio::sync::Notify::new());
    let a = client_of(&gateway, "A", seen_a.clone(), Some(hold.clone())).await;
    let b = client_of(&gateway, "B", seen_b.clone(), None).await;
    let a_get = tokio::spawn({
        let a = a.clone();
        async move { a.get_prompt("up_ask", [("who", "A")]).await }
    });
    wait::until("A is asked", || {
        seen_a.lock().expect("lock").sampled.len() == 1
    })
    .await;
    // A's request waits at A; B's get and read are asked of B alone.
    let r = b
        .get_prompt("up_ask", [("who", "B")])
        .await
        .expect("B's prompt");
    assert_eq!(text_of(&r), "sampled by B");
    let r = b.read_resource("test://up/ask/B").await.expect("B's read");
    assert_eq!(text_of(&r), "sampled by B");
    hold.notify_one();
    let r = a_get.await.expect("joined").expect("A's prompt");
    assert_eq!(text_of(&r), "sampled by A");
    let a_read = tokio::spawn({
        let a = a.clone();
        async move { a.read_resource("test://up/ask/A").await }
    });
    wait::until("A is asked again", || {
        seen_a.lock().expect("lock").sampled.len() == 2
    })
    .await;
    hold.notify_one();
    let r = a_read.await.expect("joined").expect("A's read");
    assert_eq!(text_of(&r), "sampled by A");
    assert_eq!(seen_a.lock().expect("lock").sampled, ["for A", "for A"]);
    assert_eq!(seen_b.lock().expect("lock").sampled, ["for B", "for B"]);
    assert_eq!(gateway.own_sessions("up"), Some(2));
}
