//! The servers `switchboard serve --example NAME` runs.

use serde_json::{Value, json};
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerError, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};

/// The example servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Example {
    /// Every MCP feature (../shared/conformance/EVERYTHING-SERVER.md).
    Everything,
    /// One tool, `add` ({a: number, b: number} → a text block with the sum): the benchmark target.
    Add,
}

/// Builds an example server.
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn build(example: Example, config: SessionConfig) -> Result<Server, ServerError> {
    match example {
        Example::Everything => crate::everything::everything_server(config),
        Example::Add => add_server(config),
    }
}

/// The benchmark server: only `add`.
///
/// # Errors
/// A registration error (none here).
pub fn add_server(config: SessionConfig) -> Result<Server, ServerError> {
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
    Server::builder(Implementation::new(
        "switchboard-add",
        env!("CARGO_PKG_VERSION"),
    ))
    .session_config(config.with_name("server"))
    .tool(
        Tool::new("add", schema).with_description("Add two numbers"),
        |call| async move {
            let num = |k: &str| match call.arguments.get(k) {
                Some(Value::Number(n)) => Ok(n.clone()),
                _ => Err(ToolError::new(format!("argument '{k}' must be a number"))),
            };
            let (a, b) = (num("a")?, num("b")?);
            let sum = match (a.as_i64(), b.as_i64()) {
                (Some(x), Some(y)) => x
                    .checked_add(y)
                    .map(|s| s.to_string())
                    .ok_or_else(|| ToolError::new("overflow"))?,
                _ => (a.as_f64().unwrap_or(f64::NAN) + b.as_f64().unwrap_or(f64::NAN)).to_string(),
            };
            Ok(CallToolResult::text(sum))
        },
    )
    .build()
}
