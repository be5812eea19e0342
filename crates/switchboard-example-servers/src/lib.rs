//! # switchboard-example-servers
//!
//! The example servers that `switchboard serve --example NAME` runs, and the two sessions that
//! `switchboard demo` plays against them. A library so that the CLI and the tests run exactly the
//! same servers.
//!
//! | module | what |
//! |---|---|
//! | [`everything`] | the everything server: every MCP feature, as the interop and conformance runs expect it |
//! | [`add`] | one tool, `add`: the benchmark target |
//! | [`mod@bench`] | `add`, `blob` (a large answer), and N further tools and resources: the benchmark's other rows |
//! | [`demo`] | the demo's server (`add`, `weather`, `delete_db`), and the demo's two client sessions |
//!
//! [`Example`] names the servers and [`build`] builds one.

pub mod add;
pub mod bench;
pub mod demo;
pub mod everything;
mod everything_modern;

use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerError};

/// The example servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Example {
    /// Every MCP feature: tools of every content type, resources with templates and
    /// subscriptions, prompts, completion, logging, progress, sampling, elicitation and roots.
    Everything,
    /// One tool, `add` ({a: number, b: number} → a text block with the sum): the benchmark target.
    Add,
    /// The benchmark's second server: `add`, `blob` ({bytes: integer} → one text block of that
    /// many bytes), and with `switchboard serve --tools N --resources N` that many further tools
    /// and resources.
    Bench,
    /// The demo's server: `add`, `weather`, `delete_db` (administrators only); SIGUSR1 registers
    /// `subtract`, as the operator does in `switchboard demo`.
    Demo,
}

impl Example {
    /// The name `switchboard serve --example` takes.
    pub fn name(self) -> &'static str {
        match self {
            Example::Everything => "everything",
            Example::Add => "add",
            Example::Bench => "bench",
            Example::Demo => "demo",
        }
    }
}

/// Builds an example server.
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn build(example: Example, config: SessionConfig) -> Result<Server, ServerError> {
    build_with_tasks(example, config, None)
}

/// Builds an example server whose tasks (the everything server's) are kept in `tasks` (a store
/// shared by several nodes); `None`: in memory.
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn build_with_tasks(
    example: Example,
    config: SessionConfig,
    tasks: Option<std::sync::Arc<dyn switchboard::server::TaskStore>>,
) -> Result<Server, ServerError> {
    match example {
        Example::Everything => everything::everything_server_with_tasks(config, tasks),
        Example::Add => add::add_server(config),
        Example::Bench => bench::bench_server(config, bench::BenchLists::default()),
        Example::Demo => demo::demo_server(config),
    }
}
