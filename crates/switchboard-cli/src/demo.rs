//! The embedded demo: seed 000's worked session, run in memory and recorded frame by frame.
//!
//! 1. handshake (`initialize` offering 2025-06-18, `notifications/initialized`);
//! 2. `tools/list`;
//! 3. `add` 2 + 3 → `"5"`;
//! 4. `delete_db`, which exists but is outside this client's allow-list → -32600;
//! 5. the server registers `subtract` → `notifications/tools/list_changed` → the client re-lists.
//!
//! Where seed 000 differs from the spec, the spec wins: an unknown tool is -32602, not -32601;
//! and (issue 3) a tool outside a client's allow-list is not listed to that client, so
//! `tools/list` shows `add` and `weather`, not `delete_db`.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard::client::{Client, ClientError};
use switchboard::jsonrpc::{Flow, FrameHook, SessionConfig};
use switchboard::server::{AllowList, Server, ServerError, ToolCall, ToolError};
use switchboard::types::ProtocolVersion;
use switchboard::types::capabilities::{ClientCapabilities, ElicitationCapability};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};

use crate::demo_wire::Wire;
use crate::examples::Example;

/// One recorded frame, from the client's point of view.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceFrame {
    /// The step of the scenario the frame belongs to (1-based).
    pub step: usize,
    /// `Outbound`: client → server; `Inbound`: server → client.
    pub direction: Flow,
    /// The exact JSON text on the wire.
    pub text: String,
}

/// The titles of the scenario's steps.
pub const STEPS: [&str; 6] = [
    "handshake: initialize (offering 2025-06-18) and its result",
    "notifications/initialized: the session is live (no answer)",
    "tools/list: the tools this client may use",
    "tools/call add {x:2, y:3} → \"5\"",
    "tools/call delete_db: exists, but not on this client's allow-list → -32600",
    "server registers subtract → notifications/tools/list_changed → client re-lists",
];

fn number_arg(call: &ToolCall, key: &str) -> Result<serde_json::Number, ToolError> {
    match call.arguments.get(key) {
        Some(Value::Number(n)) => Ok(n.clone()),
        Some(_) => Err(ToolError::new(format!("argument '{key}' must be a number"))),
        None => Err(ToolError::new(format!("missing argument '{key}'"))),
    }
}

/// `op` over the number arguments named `keys`: exact for integers (an overflow is a tool
/// error), floating point otherwise. Shared by the demo's tools and the benchmark's `add`.
pub(crate) fn arith(
    call: &ToolCall,
    keys: [&str; 2],
    op: fn(i64, i64) -> Option<i64>,
    fop: fn(f64, f64) -> f64,
) -> Result<CallToolResult, ToolError> {
    let (x, y) = (number_arg(call, keys[0])?, number_arg(call, keys[1])?);
    let text = match (x.as_i64(), y.as_i64()) {
        (Some(a), Some(b)) => op(a, b)
            .map(|r| r.to_string())
            .ok_or_else(|| ToolError::new("integer overflow"))?,
        _ => fop(
            x.as_f64().unwrap_or(f64::NAN),
            y.as_f64().unwrap_or(f64::NAN),
        )
        .to_string(),
    };
    Ok(CallToolResult::text(text))
}

fn xy_schema() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]})
}

/// The `subtract` tool the scenario registers at step 6.
pub fn subtract_tool() -> Tool {
    Tool::new("subtract", xy_schema()).with_description("Subtract y from x")
}

/// The embedded default server: `add`, `weather` and `delete_db`; `delete_db` is allowed only to a
/// client that calls itself `switchboard-admin`.
///
/// # Errors
/// A registration error (none with these fixed names).
pub fn demo_server(config: SessionConfig) -> Result<Server, ServerError> {
    Server::builder(Implementation::new("switchboard-demo", env!("CARGO_PKG_VERSION")))
        .session_config(config.with_name("server"))
        .tool(Tool::new("add", xy_schema()).with_description("Add two numbers"), |call| async move {
            arith(&call, ["x", "y"], i64::checked_add, |a, b| a + b)
        })
        .tool(
            Tool::new(
                "weather",
                json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            )
            .with_description("Current weather for a city (canned data)"),
            |call| async move {
                let city = call.arguments.get("city").and_then(Value::as_str).ok_or_else(|| ToolError::new("missing argument 'city'"))?;
                Ok(CallToolResult::text(format!("Sunny, 22°C in {city}")))
            },
        )
        .tool(
            Tool::new("delete_db", json!({"type": "object"})).with_description("Delete the database (administrators only)"),
            |_call| async move { Ok(CallToolResult::text("database deleted")) },
        )
        .tool_policy(|client| {
            if client.info.name == "switchboard-admin" { AllowList::All } else { AllowList::all_except(["delete_db"]) }
        })
        .build()
}

/// Why the demo failed.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The server could not be built or started.
    #[error("demo server: {0}")]
    Server(ServerError),
    /// A client call failed unexpectedly.
    #[error("demo client: {0}")]
    Client(ClientError),
    /// The session did not go as the scenario expects.
    #[error("demo: {0}")]
    Unexpected(String),
}

/// Runs the worked session on `wire` and returns every frame, in wire order, with its step.
///
/// # Errors
/// A [`DemoError`] when any step does not behave as the scenario expects.
pub async fn run(wire: Wire) -> Result<Vec<TraceFrame>, DemoError> {
    let frames: Arc<Mutex<Vec<TraceFrame>>> = Arc::default();
    let step = Arc::new(std::sync::atomic::AtomicUsize::new(1));
    let hook = {
        let frames = frames.clone();
        let step = step.clone();
        FrameHook::new(move |e| {
            // `connect` sends initialized right after the initialize result: that is step 2.
            let step = match e.method {
                Some("notifications/initialized") => 2,
                _ => step.load(std::sync::atomic::Ordering::SeqCst),
            };
            if let Ok(mut f) = frames.lock() {
                f.push(TraceFrame {
                    step,
                    direction: e.direction,
                    text: e.text.to_owned(),
                });
            }
        })
    };
    let set_step = |n: usize| step.store(n, std::sync::atomic::Ordering::SeqCst);

    let client = Client::builder(Implementation::new(
        "demo-client",
        env!("CARGO_PKG_VERSION"),
    ))
    .capabilities(ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..Default::default()
    })
    .protocol_version(ProtocolVersion::V2025_06_18)
    .session_config(SessionConfig::default().with_frame_hook(hook))
    .build();

    // Steps 1 and 2: `connect` sends initialize, checks the answer, then sends initialized.
    let (session, hosted) = crate::demo_wire::connect(
        wire,
        Example::Demo,
        || demo_server(SessionConfig::default()).map_err(DemoError::Server),
        &client,
    )
    .await?;

    set_step(3);
    let tools = session.list_tools().await.map_err(DemoError::Client)?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    if names != ["add", "weather"] {
        return Err(DemoError::Unexpected(format!("tools/list gave {names:?}")));
    }

    set_step(4);
    let sum = session
        .call_tool("add", json!({"x": 2, "y": 3}))
        .await
        .map_err(DemoError::Client)?;
    if sum != CallToolResult::text("5") {
        return Err(DemoError::Unexpected(format!("add gave {sum:?}")));
    }

    set_step(5);
    match session.call_tool("delete_db", json!({})).await {
        Err(ClientError::Request(e)) if e.as_rejection().is_some_and(|o| o.code.0 == -32600) => {}
        other => return Err(DemoError::Unexpected(format!("delete_db gave {other:?}"))),
    }

    set_step(6);
    let changed = session.tools_changed();
    hosted.add_subtract().await?;
    let tools = changed.await.map_err(DemoError::Client)?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    if names != ["add", "subtract", "weather"] {
        return Err(DemoError::Unexpected(format!(
            "re-listed tools gave {names:?}"
        )));
    }
    session.close();
    session.closed().await;
    drop(hosted);
    let frames = frames.lock().map(|f| f.clone()).unwrap_or_default();
    Ok(frames)
}

/// Renders the trace as annotated text: a heading per step, one line per frame, and under each
/// frame what the inspector (switchboard-inspect) says of it.
pub fn render(frames: &[TraceFrame]) -> String {
    let mut out = String::new();
    let mut current = 0;
    let mut inspector = switchboard_inspect::Inspector::new();
    for f in frames {
        let dir = match f.direction {
            Flow::Outbound => switchboard_inspect::Direction::ClientToServer,
            Flow::Inbound => switchboard_inspect::Direction::ServerToClient,
        };
        let r = inspector.observe(dir, &f.text, None).clone();
        if f.step != current {
            current = f.step;
            let title = STEPS
                .get(current - 1)
                .or_else(|| crate::demo_more::STEPS.get(current - 1 - STEPS.len()))
                .copied()
                .unwrap_or("");
            out.push_str(&format!("\n# step {current}: {title}\n"));
        }
        let arrow = match f.direction {
            Flow::Outbound => "client → server",
            Flow::Inbound => "server → client",
        };
        out.push_str(&format!("  {arrow}  {}\n", f.text));
        out.push_str(&format!("      {}\n", annotation(&r)));
    }
    let s = inspector.summary();
    out.push_str(&format!(
        "\n# summary: {} frames, {} violations, lifecycle share {:.2}\n",
        s.frames, s.violations, s.lifecycle_share
    ));
    out
}

fn annotation(r: &switchboard_inspect::FrameReport) -> String {
    let mut parts = vec![r.kind.as_str().to_owned()];
    if let Some(m) = &r.method {
        parts.push(m.clone());
    }
    if let Some(p) = r.primitive {
        parts.push(format!("primitive={p}"));
    }
    parts.push(format!("phase={}", format!("{:?}", r.phase).to_lowercase()));
    if let Some(c) = &r.capability {
        let n = match r.negotiated {
            Some(true) => " (negotiated)",
            Some(false) => " (NOT negotiated)",
            None => "",
        };
        parts.push(format!("capability={c}{n}"));
    }
    if let Some(i) = r.refers_to {
        let verb = match r.kind {
            switchboard_inspect::Kind::Response | switchboard_inspect::Kind::Error => "answers",
            _ => "refers to",
        };
        parts.push(format!("{verb} #{i}"));
    }
    for v in &r.violations {
        parts.push(format!("VIOLATION {v}"));
    }
    format!("[#{}] {}", r.index, parts.join(" · "))
}
