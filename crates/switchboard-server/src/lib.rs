//! # switchboard-server
//!
//! The MCP server role on the Switchboard engine. Accepts any [`switchboard_jsonrpc::Transport`];
//! never sees bytes.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `server` | [`Server`] (shared by sessions) and its builder |
//! | `session` | [`ServerSession`]: one connected client: its identity, extensions, subscriptions, log level |
//! | `resume` | [`Resumption`]: a session whose handshake happened elsewhere; the snapshot handed to the transport |
//! | `context` | [`Context`]: progress, cancellation, logging, sampling, elicitation, roots |
//! | `policy` | who the client is and which tools it may see ([`AllowList`]) |
//! | `error` | registration and session errors |
//! | `task` | tools run as tasks: `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` |
//! | `client_task` | [`ClientTask`]: sampling and elicitation run as tasks on the client |
//! | `tool` | tool registry, allow-lists, the `tools/call` error lattice, schema validation |
//! | [`typed`] | typed tools: `inputSchema` / `outputSchema` from Rust types (schemars) |
//! | [`register`] | what the attribute macros generate code against: [`Register`], [`Json`], [`Args`] |
//! | `resource` | resources and RFC 6570 templates |
//! | `prompt` | prompts and argument checks |
//! | `apps` | MCP Apps: [`AppView`] (`ui://` views and their `_meta.ui`), what a host with or without the extension sees of linked tools |
//! | `completion` | completion providers |
//! | `pagination` | opaque, tamper-evident cursors |
//! | `uri_template` | RFC 6570 `{var}` / `{+var}` expansion and matching |
//! | `lifecycle` | the handshake state machine and its strictness ([`LifecycleState`], [`Strictness`]) |
//! | `era` | which era a connection speaks, and the 2025 era's rules (negotiation, lifecycle and batch gates) |
//! | `gate` | capability gates in both directions |
//! | `modern` | revision 2026-07-28: the envelope, headers ([`HttpFacts`]), sealed state, input rounds, listen streams, the tasks extension |
//! | `arrival` | the caller's token claims in a request's context, alone or in an `Arrival` |
//! | `announce` | who hears of a change: the open sessions and listen streams, one path for every era |
//! | `router` | the method table: built-in routes (typed by their catalogue marker) and the user's |
//! | `service` | the engine: one session's `Service` (the era of the connection, the gates, the dispatch); the 2026-07-28 front door |
//! | `builtin` | the built-in handlers and their route table |
//!
//! Modules depend one way: `completion`, `error`, `gate`, `lifecycle`, `pagination`, `policy`,
//! `schema`, `task`, `uri_template` ← `era`, `modern` ← `resume` ← `session` ← `announce` ←
//! `context` ← `client_task`, `router`, `tool` ← `prompt`, `resource`, `typed` ← `service` ←
//! `apps` ← `builtin` ← `server` ← `register`.

pub(crate) mod announce;
mod apps;
mod arrival;
pub(crate) mod builtin;
mod card;
mod client_task;
mod completion;
mod context;
pub(crate) mod era;
mod error;
pub(crate) mod gate;
pub(crate) mod lifecycle;
mod modern;
// Public only for the fuzz targets (feature `fuzzing`, not in the facade).
#[cfg(feature = "fuzzing")]
pub mod pagination;
#[cfg(not(feature = "fuzzing"))]
#[allow(unreachable_pub)]
mod pagination;
mod policy;
mod prompt;
pub mod register;
mod resource;
mod resume;
pub(crate) mod router;
pub(crate) mod schema;
mod server;
pub(crate) mod service;
mod session;
pub(crate) mod task;
mod tool;
pub mod typed;
mod uri_template;

pub use apps::{AppError, AppView};
pub use card::{SERVER_CARD_SCHEMA, is_server_card_name};
pub use client_task::ClientTask;
pub use completion::{CompletionProvider, CompletionQuery, CompletionTarget, prefix_matches};
pub use context::{
    ClientRequestError, Context, resource_not_found, resource_not_found_modern,
    url_elicitation_required,
};
pub use lifecycle::{LifecycleState, Strictness};
pub use modern::HttpFacts;
pub use policy::{AllowList, ClientIdentity};
pub use prompt::PromptGet;
pub use register::{
    Args, IntoPromptResult, IntoResourceResult, IntoToolResult, Json, Register, RegisterShared,
};
pub use resource::ResourceRead;
pub use resume::Resumption;
pub use server::{ListChangeHold, Server, ServerBuilder, ServerError, WeakServer};
pub use session::{ServerSession, SessionError};
pub use switchboard_jsonrpc::RouteError;
/// The task store [`ServerBuilder::task_store`] takes, and the in-memory one it uses by default
/// (from `switchboard-tasks`, re-exported so that a server needs no other crate).
pub use switchboard_tasks::{InMemoryTaskStore, TaskLimits, TaskStore};
pub use tool::{RegisteredTool, RegistryError, ToolCall, ToolError};
pub use uri_template::{TemplateError, UriTemplate};
