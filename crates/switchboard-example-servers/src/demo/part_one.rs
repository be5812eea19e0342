//! Part one of the demo: the worked session against the demo server, recorded frame by frame.
//!
//! 1. handshake (`initialize` offering 2025-06-18, `notifications/initialized`);
//! 2. `tools/list`;
//! 3. `add` 2 + 3 → `"5"`;
//! 4. `delete_db`, which exists but is outside this client's allow-list → -32600;
//! 5. the server registers `subtract` → `notifications/tools/list_changed` → the client re-lists.
//!
//! A tool outside a client's allow-list is not listed to that client, so `tools/list` shows
//! `add` and `weather`, not `delete_db`; calling a tool that does not exist at all would be
//! -32602.

use serde_json::json;
use switchboard::client::{Client, ClientError};
use switchboard::jsonrpc::SessionConfig;
use switchboard::types::ProtocolVersion;
use switchboard::types::capabilities::{ClientCapabilities, ElicitationCapability};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::methods;
use switchboard::types::tools::CallToolResult;

use super::host::{Host, HostedServer};
use super::trace::{DemoError, Recorder, TraceFrame};
use crate::Example;

/// The titles of the steps.
pub const STEPS: [&str; 6] = [
    "handshake: initialize (offering 2025-06-18) and its result",
    "notifications/initialized: the session is live (no answer)",
    "tools/list: the tools this client may use",
    "tools/call add {x:2, y:3} → \"5\"",
    "tools/call delete_db: exists, but not on this client's allow-list → -32600",
    "server registers subtract → notifications/tools/list_changed → client re-lists",
];

/// `connect` sends initialized right after the initialize result: that frame is step 2.
fn step_of(method: Option<&str>) -> Option<usize> {
    (method == Some(methods::NOTIFICATIONS_INITIALIZED)).then_some(2)
}

/// Runs the worked session on `host` and returns every frame, in wire order, with its step.
///
/// # Errors
/// A [`DemoError`] when any step does not behave as the scenario expects.
pub async fn run(host: &impl Host) -> Result<Vec<TraceFrame>, DemoError> {
    let recorder = Recorder::new(1);
    let client = Client::builder(Implementation::new(
        "demo-client",
        env!("CARGO_PKG_VERSION"),
    ))
    .era(switchboard::client::EraMode::Legacy)
    .capabilities(ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..Default::default()
    })
    .protocol_version(ProtocolVersion::V2025_06_18)
    .session_config(SessionConfig::default().with_frame_hook(recorder.hook(step_of)))
    .build();

    // Steps 1 and 2: `connect` sends initialize, checks the answer, then sends initialized.
    let (session, hosted) = host.connect(Example::Demo, &client).await?;

    recorder.set_step(3);
    let tools = session.list_tools().await.map_err(DemoError::Client)?;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    if names != ["add", "weather"] {
        return Err(DemoError::Unexpected(format!("tools/list gave {names:?}")));
    }

    recorder.set_step(4);
    let sum = session
        .call_tool("add", json!({"x": 2, "y": 3}))
        .await
        .map_err(DemoError::Client)?;
    if sum != CallToolResult::text("5") {
        return Err(DemoError::Unexpected(format!("add gave {sum:?}")));
    }

    recorder.set_step(5);
    match session.call_tool("delete_db", json!({})).await {
        Err(ClientError::Request(e)) if e.as_rejection().is_some_and(|o| o.code.0 == -32600) => {}
        other => return Err(DemoError::Unexpected(format!("delete_db gave {other:?}"))),
    }

    recorder.set_step(6);
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
    Ok(recorder.frames())
}
