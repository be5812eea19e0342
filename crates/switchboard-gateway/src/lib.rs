//! # switchboard-gateway
//!
//! Many MCP servers behind one: a [`Gateway`] is the two roles joined (DESIGN-NOTES item 10),
//! built from Switchboard's own client (one session per upstream) and server (one
//! [`Server`] for the gateway's clients, both eras from one builder), not a special relay.
//!
//! Each upstream (a stdio command, restarted when it exits with a bounded backoff; a Streamable
//! HTTP URL with an optional bearer token; or a connector of the library user's) is served under
//! its prefix: its tools and prompts as `NAME_tool` (FastMCP's convention; the separator is
//! configurable, an upstream named `""` is mounted without a prefix), its resources and
//! resource templates with the name after the URI's scheme (`test://x` of `files` is
//! `test://files/x`), rewritten back when a client reads one. Calls, gets and reads are
//! forwarded with the client's cancellation and (for calls) its progress; an upstream's
//! `list_changed` becomes the gateway's own. An upstream that is down is left out of the lists
//! (with a log line); a call caught by its going down is an `isError` result naming it, never
//! a hang (every forwarded request is bounded by [`Limits::call_timeout`]).
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `config` | [`GatewayConfig`] and its TOML form, [`UpstreamConfig`], [`Limits`], [`ConfigError`] |
//! | `names` | prefixed names within the tool-name rules; URIs rewritten both ways |
//! | `mirror` | one upstream's items on the gateway's server, and the handlers that forward to it |
//! | `upstream` | one upstream's life: connect, list, follow changes, restart with backoff |
//!
//! Modules depend one way: `names` ← `config` ← `mirror` ← `upstream` ← the crate root.
//!
//! Not yet: policy and authentication on the front, audit, `search_tools`, configuration
//! reload, resource subscriptions, completion, logging, sampling, elicitation and roots from an
//! upstream, tasks, and pagination beyond the server's own cursors.

mod config;
mod mirror;
mod names;
mod upstream;

use std::sync::Arc;

use switchboard_client::CancellationToken;
use switchboard_server::{Server, ServerError};
use switchboard_types::capabilities::{
    PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use switchboard_types::lifecycle::Implementation;

pub use config::{
    ConfigError, Connector, GatewayConfig, Limits, TokenSource, UpstreamConfig, UpstreamKind,
};

/// Why a gateway did not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The configuration breaks a rule.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The gateway's server could not be built.
    #[error(transparent)]
    Server(#[from] ServerError),
}

/// A running gateway: its server (serve it on any transport, as many sessions as wanted) and
/// one supervising task per upstream. Dropping it stops the upstreams.
#[derive(Debug)]
pub struct Gateway {
    server: Server,
    upstreams: Vec<(String, Arc<mirror::Link>)>,
    stop: CancellationToken,
}

impl Gateway {
    /// Builds the gateway's server and starts connecting to every upstream (in the background:
    /// the gateway serves at once, each upstream's items appearing as it comes up). Must be
    /// called within a tokio runtime.
    ///
    /// # Errors
    /// The configuration breaks a rule ([`GatewayConfig::validate`]).
    pub fn start(config: GatewayConfig) -> Result<Gateway, GatewayError> {
        config.validate()?;
        let caps = ServerCapabilities {
            tools: Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            prompts: Some(PromptsCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            // No `subscribe`: upstreams' resource updates are not forwarded yet.
            resources: Some(ResourcesCapability {
                list_changed: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        let server = Server::builder(Implementation::new(
            "switchboard-gateway",
            env!("CARGO_PKG_VERSION"),
        ))
        .capabilities(caps)
        .build()?;
        let stop = CancellationToken::new();
        let mut upstreams = Vec::new();
        for up in config.upstreams {
            let link = Arc::new(mirror::Link::new(up.name.clone()));
            let mirror = Arc::new(mirror::Mirror::new(
                link.clone(),
                &server,
                config.separator.clone(),
                config.limits.clone(),
            ));
            upstreams.push((up.name.clone(), link));
            tokio::spawn(upstream::supervise(
                up,
                mirror,
                config.limits.clone(),
                stop.child_token(),
            ));
        }
        Ok(Gateway {
            server,
            upstreams,
            stop,
        })
    }

    /// The gateway's server: `gateway.server().serve(transport)` for each client.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Whether upstream `name` is up (connected and listed); `None` for no such upstream.
    pub fn is_up(&self, name: &str) -> Option<bool> {
        self.upstreams
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, link)| link.is_ready())
    }

    /// Stops every upstream (child processes end with their sessions).
    pub fn shutdown(&self) {
        self.stop.cancel();
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
