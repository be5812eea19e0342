//! The benchmark server: one tool, `add`, and the arithmetic it shares with the demo's server.

use serde_json::{Value, json};
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerError, ToolCall, ToolError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};

use crate::Deployment;

/// The benchmark server: only `add` ({a: number, b: number} → a text block with the sum), for
/// `deployment`.
///
/// # Errors
/// A registration error (none here).
pub fn add_server(config: SessionConfig, deployment: &Deployment) -> Result<Server, ServerError> {
    let schema = json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]});
    deployment
        .apply(Server::builder(Implementation::new(
            "switchboard-add",
            env!("CARGO_PKG_VERSION"),
        )))
        .session_config(config.with_name("server"))
        .tool(
            Tool::new("add", schema).with_description("Add two numbers"),
            |call| async move { arith(&call, ["a", "b"], i64::checked_add, |a, b| a + b) },
        )
        .build()
}

fn number_arg(call: &ToolCall, key: &str) -> Result<serde_json::Number, ToolError> {
    match call.arguments.get(key) {
        Some(Value::Number(n)) => Ok(n.clone()),
        Some(_) => Err(ToolError::new(format!("argument '{key}' must be a number"))),
        None => Err(ToolError::new(format!("missing argument '{key}'"))),
    }
}

/// `op` over the number arguments named `keys`: exact for integers (an overflow is a tool
/// error), floating point otherwise. Shared by `add` here and the demo's tools.
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
