//! The servers `switchboard serve --example NAME` runs.

use serde_json::json;
use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerError};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::Tool;

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
        |call| async move { crate::demo::arith(&call, ["a", "b"], i64::checked_add, |a, b| a + b) },
    )
    .build()
}
