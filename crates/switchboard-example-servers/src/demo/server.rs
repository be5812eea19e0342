//! The demo's server: `add`, `weather` and `delete_db`, with `delete_db` only for
//! administrators; and `subtract`, which the operator registers while a session runs.

use serde_json::{Value, json};
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{AllowList, Server, ServerError, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};

use crate::add::arith;

fn xy_schema() -> Value {
    json!({"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}}, "required": ["x", "y"]})
}

/// The `subtract` tool the operator registers in step 6 of the demo.
pub fn subtract_tool() -> Tool {
    Tool::new("subtract", xy_schema()).with_description("Subtract y from x")
}

/// The demo's server: `add`, `weather` and `delete_db`; `delete_db` is allowed only to a client
/// that calls itself `switchboard-admin`.
///
/// # Errors
/// A registration error (none with these fixed names).
pub fn demo_server(
    config: SessionConfig,
    deployment: &crate::Deployment,
) -> Result<Server, ServerError> {
    deployment
        .apply(Server::builder(Implementation::new("switchboard-demo", env!("CARGO_PKG_VERSION"))))
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

/// The operator's action: registers `subtract` on a running server (every session is told
/// with `notifications/tools/list_changed`).
///
/// # Errors
/// `subtract` is already registered.
pub fn add_subtract(server: &Server) -> Result<(), ServerError> {
    server.add_tool(subtract_tool(), |call| async move {
        arith(&call, ["x", "y"], i64::checked_sub, |a, b| a - b)
    })
}

/// The operator's action for a server in another process (`switchboard serve --example demo`):
/// each SIGUSR1 registers `subtract` (once; later signals find it there and are ignored).
///
/// # Errors
/// The signal handler cannot be installed.
#[cfg(unix)]
pub fn subtract_on_sigusr1(server: &Server) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut usr1 = signal(SignalKind::user_defined1())?;
    let server = server.clone();
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let added = add_subtract(&server);
            tracing::info!(ok = added.is_ok(), "SIGUSR1: subtract registered");
        }
    });
    Ok(())
}
