//! # switchboard-gateway
//!
//! Many MCP servers behind one: a [`Gateway`] is the two roles joined (DESIGN-NOTES item 10),
//! built from Switchboard's own client (one session per upstream) and server (one
//! [`Server`] for the gateway's clients, both eras from one builder), not a special relay.
//!
//! Each upstream (a stdio command, restarted when it exits with a bounded backoff; a Streamable
//! HTTP URL with an optional bearer token or, with the `oauth` feature, the gateway's own
//! OAuth client credentials; or a connector of the library user's) is served under
//! its prefix: its tools and prompts as `NAME_tool` (FastMCP's convention; the separator is
//! configurable, an upstream named `""` is mounted without a prefix), its resources and
//! resource templates with the name after the URI's scheme (`test://x` of `files` is
//! `test://files/x`), rewritten back when a client reads one. Calls, gets and reads are
//! forwarded with the client's cancellation and (for calls) its progress; an upstream's
//! `list_changed` becomes the gateway's own. An upstream that is down is left out of the lists
//! (with a log line), and a call to one of its tools is at once an `isError` result naming it
//! (never "unknown tool", never a hang: every forwarded request is bounded by
//! [`Limits::call_timeout`]).
//!
//! One [`Policy`] (ordered allow/deny [`Rule`]s on upstreams and tools, matching the token's
//! subject and scopes; its TOML form is on [`Policy`]) decides what each caller sees and
//! may use: a listing keeps only what the caller may use, anything else is refused. With an
//! `audit_log`, the middleware's [`Audit`](switchboard_middleware::Audit) writes one line per
//! client request. The gateway never passes a client's token to an upstream: each upstream
//! gets only the credential its configuration names. With `search_tools`, a tool of that name
//! finds tools by words of their names and descriptions. [`Gateway::reload`] applies a new
//! configuration without dropping a session.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `config` | [`GatewayConfig`] and its TOML form, [`UpstreamConfig`], [`Limits`], [`ConfigError`] |
//! | `names` | prefixed names within the tool-name rules; URIs rewritten both ways |
//! | `policy` | [`Policy`], [`Rule`], [`Effect`]: who may use what |
//! | `mirror` | one upstream's items on the gateway's server, and the handlers that forward to it |
//! | `registry` | the configured upstreams (and removed ones): whose is a name or URI, is it up |
//! | `front` | the gateway's layer: listings filtered, refusals, "down" answers, completion, listen streams' subscriptions |
//! | `search` | the `search_tools` tool |
//! | `subscribe` | resource subscriptions forwarded, updates rewritten back |
//! | `affinity` | clients' own upstream sessions: an upstream's requests and log lines reach the client that caused them |
//! | `tasks` | a gateway task's work run as the upstream's task; tasks offered only as far as the upstreams offer them |
//! | `connect` | reaching an upstream: the gateway's client over stdio, Streamable HTTP (its bearer token) or a connector |
//! | `upstream` | one upstream's life: connect, list, follow changes, restart with backoff |
//!
//! Modules depend one way: `names` ← `policy` ← `config` ← `connect` ← `affinity`, `tasks` ← `mirror` ←
//! `registry` ← `front`, `search`, `upstream` ← the crate root.
//!
//! An upstream's sampling, elicitation and roots requests and log lines during a client's call
//! reach that client and no other (the `affinity` module says how).
//!
//! Resource subscriptions and `completion/complete` are forwarded with names and URIs rewritten
//! both ways, as are the URIs of resource links and embedded resources in tool results.
//!
//! A client with upstream sessions of its own is served everything of its upstream from them:
//! the tools its session lists (and their `list_changed`), its resource subscriptions and
//! their updates, and its progress token as it sent it. A 2026-07-28 client's
//! `subscriptions/listen` naming a gateway URI subscribes the upstream while the stream is
//! open, and an upstream's input requests reach such a client as `input_required` rounds
//! (under the upstream's own keys when it speaks 2026-07-28).
//!
//! Tasks, both eras (`tasks`): a client's task-augmented call (2025-11-25) or a 2026-07-28 call
//! that becomes a task under the tasks extension is a task of the gateway's server, under an
//! id it mints and the client's owner, run on an upstream that offers tasks as the
//! upstream's own task (cancelled there when the gateway's is); `tasks/*` are the gateway's
//! server's, and its status notifications go to the client that created the task. A
//! 2026-07-28 upstream that offers the tasks extension decides which calls become tasks: the
//! gateway's call becomes its task when the upstream's does, input the upstream asks for
//! before are the client's input-required rounds. Tasks are offered only while an upstream
//! that offers them is up.
//!
//! Not yet: pagination beyond the server's own cursors.

mod affinity;
mod config;
mod connect;
mod front;
mod mirror;
mod names;
mod policy;
mod registry;
mod search;
mod subscribe;
mod tasks;
mod upstream;
mod watch;

use std::sync::{Arc, RwLock};

use switchboard_client::CancellationToken;
use switchboard_server::{Server, ServerError};
use switchboard_types::capabilities::{
    PromptsCapability, ResourcesCapability, ServerCapabilities, ServerTaskRequests,
    ServerTasksCapability, ToolsCapability, ToolsTaskRequests,
};

pub use config::{
    ClientCredentials, ConfigError, Connector, GatewayConfig, Limits, TokenSource, UpstreamConfig,
    UpstreamKind,
};
pub use policy::{Effect, Policy, Rule};
pub use watch::reload_on_change;

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
    /// An upstream could not be restarted ([`Gateway::restart`]).
    #[error("upstream `{name}` was not restarted: {reason}")]
    Restart {
        /// The upstream's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The audit log cannot be opened.
    #[error("the audit log {path}: {error}")]
    Audit {
        /// The log's path.
        path: std::path::PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// Restarts of one upstream asked for and not yet taken up (each caller waits its turn).
const RESTARTS_QUEUED: usize = 4;

/// A running gateway: its server (serve it on any transport, as many sessions as wanted) and
/// one supervising task per upstream. Dropping it stops the upstreams.
pub struct Gateway {
    server: Server,
    registry: Arc<registry::Registry>,
    policy: Arc<RwLock<Arc<Policy>>>,
    limits: Limits,
    stop: CancellationToken,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("upstreams", &self.registry.names())
            .finish_non_exhaustive()
    }
}

impl Gateway {
    /// Builds the gateway's server and starts connecting to every upstream (in the background:
    /// the gateway serves at once, each upstream's items appearing as it comes up). Must be
    /// called within a tokio runtime.
    ///
    /// # Errors
    /// The configuration breaks a rule ([`GatewayConfig::validate`]), or the audit log cannot
    /// be opened.
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
            resources: Some(ResourcesCapability {
                list_changed: Some(true),
                subscribe: Some(true),
                ..Default::default()
            }),
            completions: Some(Default::default()),
            // Upstreams' log lines reach the client whose call caused them (`affinity`).
            logging: Some(Default::default()),
            // Tools run as the gateway's tasks (`tasks`); offered only while an upstream up
            // offers them (the front layer takes the offer out otherwise).
            tasks: Some(ServerTasksCapability {
                list: Some(Default::default()),
                cancel: Some(Default::default()),
                requests: Some(ServerTaskRequests {
                    tools: Some(ToolsTaskRequests {
                        call: Some(Default::default()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let registry = Arc::new(registry::Registry::new(config.separator.clone()));
        let policy = Arc::new(RwLock::new(Arc::new(config.policy.clone())));
        let mut builder = Server::builder(front::gateway_info()).capabilities(caps);
        if let Some(n) = config.page_size {
            builder = builder.page_size(n);
        }
        if let Some(key) = config.shared_key {
            builder = builder.shared_key(key);
        }
        if let Some(hook) = config.frame_hook.clone() {
            builder = builder.session_config(
                switchboard_jsonrpc::SessionConfig::default().with_frame_hook(hook),
            );
        }
        // The audit log sees every request first (refusals included), then the policy.
        if let Some(path) = &config.audit_log {
            let audit = switchboard_middleware::Audit::to_file(path).map_err(|error| {
                GatewayError::Audit {
                    path: path.clone(),
                    error,
                }
            })?;
            builder = builder.layer(audit);
        }
        builder = builder.layer(front::Front {
            registry: registry.clone(),
            policy: policy.clone(),
            call_timeout: config.limits.call_timeout,
        });
        if config.pass_server_info {
            builder = builder.layer_for(
                front::PassServerInfo::scope(),
                front::PassServerInfo {
                    registry: registry.clone(),
                },
            );
        }
        if config.search_tools {
            let (registry, policy) = (registry.clone(), policy.clone());
            builder = builder.tool(search::definition(), move |call| {
                search::search(registry.clone(), policy.clone(), call)
            });
        }
        let server = builder.build()?;
        let gateway = Gateway {
            server,
            registry,
            policy,
            limits: config.limits.clone(),
            stop: CancellationToken::new(),
        };
        for up in config.upstreams {
            gateway.add_upstream(up);
        }
        Ok(gateway)
    }

    /// Starts serving upstream `up` (its supervisor connects in the background).
    fn add_upstream(&self, up: UpstreamConfig) {
        let link = Arc::new(mirror::Link::new(
            up.clone(),
            self.registry.separator.clone(),
        ));
        let mirror = Arc::new(mirror::Mirror::new(
            link,
            &self.server,
            self.registry.separator.clone(),
            self.limits.clone(),
            self.registry.owners.clone(),
        ));
        let stop = self.stop.child_token();
        let (restart, restarts) = tokio::sync::mpsc::channel(RESTARTS_QUEUED);
        self.registry.add(registry::Entry {
            mirror: mirror.clone(),
            stop: stop.clone(),
            config: up.clone(),
            restart,
        });
        tokio::spawn(upstream::supervise(
            up,
            mirror,
            self.limits.clone(),
            stop,
            restarts,
        ));
    }

    /// Applies a new configuration without dropping a session: upstreams no longer named are
    /// stopped (their items leave the lists, a call to one is an error result saying it was
    /// removed), new ones are started, changed ones (another command, URL, token source or
    /// era) restarted; the policy is replaced. The separator, the bounds, the audit log and
    /// `search_tools` are kept from the start (a warning names what differs).
    ///
    /// # Errors
    /// The new configuration breaks a rule; nothing is changed.
    pub fn reload(&self, config: GatewayConfig) -> Result<Reloaded, GatewayError> {
        config.validate()?;
        if config.separator != self.registry.separator || config.limits != self.limits {
            tracing::warn!("the separator and the bounds take effect on a restart only");
        }
        if let Ok(mut p) = self.policy.write() {
            *p = Arc::new(config.policy.clone());
        }
        let mut report = Reloaded::default();
        let wanted: Vec<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
        for name in self.registry.names() {
            if !wanted.contains(&name.as_str()) && self.registry.remove(&name) {
                report.removed.push(name);
            }
        }
        for up in config.upstreams {
            match self.registry.config_of(&up.name) {
                Some(old) if config::same_upstream(&old, &up) => continue,
                Some(_) => {
                    self.registry.remove(&up.name);
                    report.restarted.push(up.name.clone());
                }
                None => report.added.push(up.name.clone()),
            }
            self.add_upstream(up);
        }
        tracing::info!(added = ?report.added, removed = ?report.removed, restarted = ?report.restarted, "configuration reloaded");
        Ok(report)
    }

    /// Restarts upstream `name` in place (a new build of a stdio server, say): a new
    /// connection is made in the era the current one settled on and listed while the current
    /// one still serves, then replaces it; the gateway's clients get a `list_changed` for each
    /// list whose items changed, and nothing else (their sessions go on). An upstream that is
    /// down is connected at once, without waiting out the backoff. Returns once the new
    /// connection serves.
    ///
    /// # Errors
    /// No upstream `name`, or the new connection failed (the current one, if up, serves on).
    pub async fn restart(&self, name: &str) -> Result<(), GatewayError> {
        let failed = |reason: String| GatewayError::Restart {
            name: name.to_owned(),
            reason,
        };
        let sender = self
            .registry
            .restarter(name)
            .ok_or_else(|| failed("no such upstream".into()))?;
        let (reply, answer) = tokio::sync::oneshot::channel();
        sender
            .send(reply)
            .await
            .map_err(|_| failed("the upstream was stopped".into()))?;
        answer
            .await
            .map_err(|_| failed("the upstream was stopped".into()))?
            .map_err(failed)
    }

    /// The gateway's server: `gateway.server().serve(transport)` for each client.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The configuration upstream `name` runs with.
    pub fn upstream_config(&self, name: &str) -> Option<UpstreamConfig> {
        self.registry.config_of(name)
    }

    /// Waits until every upstream's first connection attempt has ended (up and listed, or
    /// failed: each is bounded by [`Limits::connect_timeout`]), so that a client served after
    /// it finds every upstream that could come up already listed.
    pub async fn ready(&self) {
        for mirror in self.registry.mirrors() {
            mirror.link.attempted().await;
        }
    }

    /// Whether upstream `name` is up (connected and listed); `None` for no such upstream.
    pub fn is_up(&self, name: &str) -> Option<bool> {
        self.registry.mirror(name).map(|m| m.link.is_ready())
    }

    /// How many of the gateway's clients hold a session of their own on upstream `name`
    /// (clients that can be asked for sampling, elicitation or roots, or asked for log lines).
    pub fn own_sessions(&self, name: &str) -> Option<usize> {
        self.registry.mirror(name).map(|m| m.link.affinity.len())
    }

    /// Stops every upstream (child processes end with their sessions).
    pub fn shutdown(&self) {
        self.stop.cancel();
        self.registry.stop_all();
    }
}

/// What [`Gateway::reload`] changed, by upstream name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reloaded {
    /// Upstreams started.
    pub added: Vec<String>,
    /// Upstreams stopped.
    pub removed: Vec<String>,
    /// Upstreams whose configuration changed, restarted.
    pub restarted: Vec<String>,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown();
    }
}
