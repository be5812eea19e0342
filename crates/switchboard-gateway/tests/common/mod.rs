//! Helpers shared by the in-memory gateway tests: upstream servers, in-memory connectors and a
//! client of the gateway.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_client::{Client, ClientError, ClientSession, EraMode};
use switchboard_gateway::{
    Connector, Gateway, GatewayConfig, Limits, UpstreamConfig, UpstreamKind,
};
use switchboard_server::{Server, ServerSession, ToolError};
use switchboard_test_support::wait;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::prompts::{GetPromptResult, Prompt, PromptMessage};
use switchboard_types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use switchboard_types::tools::{CallToolResult, Tool};

/// An upstream tool's elicitation through the gateway: asks the client "your name?" (a form
/// with one string field) and returns the name it gave, if any.
pub(crate) async fn elicit_name(
    cx: &switchboard_server::Context,
) -> Result<Option<String>, ToolError> {
    let params: switchboard_types::elicitation::ElicitRequestParams =
        serde_json::from_value(json!({
            "mode": "form",
            "message": "your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
        }))
        .expect("params");
    let r = cx
        .elicit(params)
        .await
        .map_err(|e| ToolError::new(e.to_string()))?;
    let r = serde_json::to_value(r).expect("a result");
    Ok(r.pointer("/content/name")
        .and_then(Value::as_str)
        .map(str::to_owned))
}

pub(crate) fn obj() -> Value {
    json!({"type": "object"})
}

pub(crate) fn text_of(v: &impl serde::Serialize) -> String {
    let v = serde_json::to_value(v).expect("serialises");
    v.pointer("/content/0/text")
        .or_else(|| v.pointer("/contents/0/text"))
        .or_else(|| v.pointer("/messages/0/content/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn read_text(uri: &str, body: String) -> ReadResourceResult {
    serde_json::from_value(json!({"contents": [{"uri": uri, "text": body}]})).expect("a result")
}

/// An upstream server: `add`, `hang` (answers only when cancelled), a resource, a template and
/// a prompt, each saying which upstream `tag` answered.
pub(crate) fn upstream(tag: &'static str) -> Server {
    Server::builder(Implementation::new(tag, "1"))
        .tool(
            Tool::new("add", json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})),
            move |call| async move {
                let a = call.arguments.get("a").and_then(Value::as_i64).unwrap_or(0);
                let b = call.arguments.get("b").and_then(Value::as_i64).unwrap_or(0);
                Ok(CallToolResult::text(format!("{tag}: {}", a + b)))
            },
        )
        .tool(Tool::new("hang", obj()), |call| async move {
            call.cx.cancellation().cancelled().await;
            Err(ToolError::new("cancelled"))
        })
        .tool(Tool::new("slow_progress", obj()), |call| async move {
            for i in 1..=3 {
                let _ = call.cx.progress(f64::from(i), Some(3.0), None).await;
            }
            Ok(CallToolResult::text("done"))
        })
        .resource(Resource::new("test://static-text", "static"), move |r| async move {
            Ok(read_text(&r.uri, format!("{tag} static")))
        })
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "template"),
            move |r| async move {
                let id = r.vars.get("id").cloned().unwrap_or_default();
                Ok(read_text(&r.uri, format!("{tag} template {id}")))
            },
        )
        .prompt(Prompt::new("greet"), move |_| async move {
            let m: PromptMessage = serde_json::from_value(
                json!({"role": "user", "content": {"type": "text", "text": format!("hello from {tag}")}}),
            )
            .expect("a message");
            Ok(GetPromptResult::new(vec![m]))
        })
        .build()
        .expect("a server")
}

/// A connector serving `server` in memory; each session it opens is kept in `sessions`, so a
/// test can end one (the upstream "dies") and count restarts.
pub(crate) fn in_memory(server: Server, sessions: Arc<Mutex<Vec<ServerSession>>>) -> Connector {
    Arc::new(move |client: Client| {
        let server = server.clone();
        let sessions = sessions.clone();
        Box::pin(async move {
            let (ours, theirs) = switchboard_jsonrpc::memory::pair();
            let session = server
                .serve(theirs)
                .map_err(|e| ClientError::Handshake(e.to_string()))?;
            sessions.lock().expect("lock").push(session);
            client.connect(ours).await
        })
    })
}

pub(crate) struct Setup {
    pub(crate) gateway: Gateway,
    pub(crate) calc: Server,
    pub(crate) calc_sessions: Arc<Mutex<Vec<ServerSession>>>,
}

pub(crate) fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.backoff_initial = Duration::from_millis(10);
    limits.backoff_max = Duration::from_millis(50);
    limits
}

pub(crate) fn start(era: EraMode, limits: Limits) -> Setup {
    start_with(era, limits, |_| {})
}

/// As [`start`], with the configuration edited by `edit` before the gateway starts.
pub(crate) fn start_with(
    era: EraMode,
    limits: Limits,
    edit: impl FnOnce(&mut GatewayConfig),
) -> Setup {
    let calc = upstream("calc");
    let calc_sessions = Arc::new(Mutex::new(Vec::new()));
    let mut config = GatewayConfig::default();
    config.limits = limits;
    config.upstreams = vec![
        UpstreamConfig::new(
            "calc",
            UpstreamKind::Custom(in_memory(calc.clone(), calc_sessions.clone())),
        )
        .with_era(era),
        UpstreamConfig::new(
            "text",
            UpstreamKind::Custom(in_memory(upstream("text"), Arc::default())),
        )
        .with_era(era),
    ];
    edit(&mut config);
    let gateway = Gateway::start(config).expect("a gateway");
    Setup {
        gateway,
        calc,
        calc_sessions,
    }
}

pub(crate) async fn front(gateway: &Gateway, era: EraMode) -> ClientSession {
    let (ours, theirs) = switchboard_jsonrpc::memory::pair();
    gateway.server().serve(theirs).expect("served");
    Client::builder(Implementation::new("front", "1"))
        .era(era)
        .build()
        .connect(ours)
        .await
        .expect("connected to the gateway")
}

pub(crate) async fn both_up(gateway: &Gateway) {
    wait::until("both upstreams are up", || {
        gateway.is_up("calc") == Some(true) && gateway.is_up("text") == Some(true)
    })
    .await;
}

pub(crate) fn names(tools: &[Tool]) -> Vec<String> {
    let mut n: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    n.sort();
    n
}

/// A gateway with one upstream `name` reached through `connector` on `era`, with the tests'
/// short backoff ([`limits`]); `edit` changes the upstream's configuration before the start.
pub(crate) fn one_upstream(
    name: &str,
    connector: Connector,
    era: EraMode,
    edit: impl FnOnce(&mut GatewayConfig),
) -> Gateway {
    let mut config = GatewayConfig::default();
    config.limits = limits();
    config.upstreams =
        vec![UpstreamConfig::new(name, UpstreamKind::Custom(connector)).with_era(era)];
    edit(&mut config);
    Gateway::start(config).expect("a gateway")
}

/// A client built by `client`, connected to the gateway in memory.
pub(crate) async fn connect(gateway: &Gateway, client: Client) -> ClientSession {
    let (ours, theirs) = switchboard_jsonrpc::memory::pair();
    gateway.server().serve(theirs).expect("served");
    client
        .connect(ours)
        .await
        .expect("connected to the gateway")
}
