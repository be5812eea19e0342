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
    /// Seed 000's server of the demo: `add`, `weather`, `delete_db` (administrators only);
    /// SIGUSR1 registers `subtract` (the operator's action of the demo's step 6).
    Demo,
}

/// Builds an example server.
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn build(example: Example, config: SessionConfig) -> Result<Server, ServerError> {
    match example {
        Example::Everything => crate::everything::everything_server(config),
        Example::Add => add_server(config),
        Example::Demo => crate::demo::demo_server(config),
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

/// The operator's action of the demo (`serve --example demo`): each SIGUSR1 registers
/// `subtract` (once; later signals find it there and are ignored).
///
/// # Errors
/// The signal handler cannot be installed.
pub fn add_subtract_on_sigusr1(server: &Server) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut usr1 = signal(SignalKind::user_defined1())?;
    let server = server.clone();
    tokio::spawn(async move {
        while usr1.recv().await.is_some() {
            let added = server.add_tool(crate::demo::subtract_tool(), |call| async move {
                crate::demo::arith(&call, ["x", "y"], i64::checked_sub, |a, b| a - b)
            });
            tracing::info!(ok = added.is_ok(), "SIGUSR1: subtract registered");
        }
    });
    Ok(())
}
