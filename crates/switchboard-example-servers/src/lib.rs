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
//! | `hostile` | (feature `hostile`) a malicious server for testing clients: `switchboard serve --hostile SCENARIO` |
//!
//! [`Example`] names the servers and [`build`] builds one.

pub mod add;
pub mod bench;
pub mod demo;
pub mod everything;
mod everything_modern;
pub mod everything_skills;
#[cfg(feature = "hostile")]
pub mod hostile;

use std::sync::Arc;

use switchboard::jsonrpc::SessionConfig;
use switchboard::server::{Server, ServerBuilder, ServerError, TaskStore};

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
    build_deployed(
        example,
        bench::BenchLists::default(),
        config,
        &Deployment::default(),
    )
}

/// What a deployment gives an example server beyond its engine configuration: where its tasks
/// are kept, the key its replicas share, a layer, the skills it publishes.
#[derive(Clone, Default)]
pub struct Deployment {
    /// The task store (a store shared by several nodes); `None`: in memory.
    pub tasks: Option<Arc<dyn TaskStore>>,
    /// The key every replica shares, which seals `requestState` and signs pagination cursors
    /// ([`ServerBuilder::shared_key`]); `None`: random per process.
    pub shared_key: Option<[u8; 32]>,
    /// A layer around every request the server handles and sends (telemetry, say); `None`: none.
    pub layer: Option<Arc<dyn switchboard::jsonrpc::Layer>>,
    /// The skills the server publishes (the skills extension, SEP-2640; `switchboard serve
    /// --skills [DIR]`: [`everything_skills::skills`] or a folder); `None`: none, and the
    /// example's contract unchanged.
    pub skills: Option<switchboard::skills::SkillSet>,
}

impl std::fmt::Debug for Deployment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deployment")
            .field("tasks", &self.tasks.is_some())
            .field("shared_key", &self.shared_key.map(|_| "<set>"))
            .field("layer", &self.layer.is_some())
            .field("skills", &self.skills)
            .finish()
    }
}

impl Deployment {
    /// `b` with this deployment's task store and shared key.
    pub(crate) fn apply(&self, mut b: ServerBuilder) -> ServerBuilder {
        if let Some(store) = &self.tasks {
            b = b.task_store(store.clone());
        }
        if let Some(key) = self.shared_key {
            b = b.shared_key(key);
        }
        if let Some(layer) = &self.layer {
            b = b.layer(layer.clone());
        }
        if let Some(set) = &self.skills {
            b = switchboard::skills::SkillsExt::skills(b, set);
        }
        b
    }
}

/// Builds an example server for `deployment` (its task store and shared key); `lists` are the
/// bench example's further tools and resources (ignored by the others).
///
/// # Errors
/// A registration error (none with these fixed definitions).
pub fn build_deployed(
    example: Example,
    lists: bench::BenchLists,
    config: SessionConfig,
    deployment: &Deployment,
) -> Result<Server, ServerError> {
    match example {
        Example::Everything => everything::everything_server_deployed(config, deployment),
        Example::Add => add::add_server(config, deployment),
        Example::Bench => bench::bench_server(config, lists, deployment),
        Example::Demo => demo::demo_server(config, deployment),
    }
}
