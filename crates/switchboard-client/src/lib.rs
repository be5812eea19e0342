//! # switchboard-client
//!
//! The MCP client role on the Switchboard engine, for both eras: revision 2026-07-28 (no
//! handshake; every request carries its envelope) and the 2025 era (revision 2025-11-25,
//! degrading by the negotiated revision down to 2024-11-05), with one typed API. Accepts any
//! [`switchboard_jsonrpc::Transport`]; never sees bytes.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `client` | [`Client`] / [`ClientBuilder`]: identity, offer, handlers; the era probe or the handshake |
//! | `era` | [`Era`] and [`EraMode`] (legacy, auto, pinned modern) |
//! | `probe` | the `server/discover` probe that settles the era |
//! | `exchange` | one request in either era: the modern envelope, header lines, `resultType`, the input-required (MRTR) loop |
//! | `inputs` | the input requests of an input-required result, answered by catalogue marker (-32601 for one the client does not serve) |
//! | `modern_task` | the tasks extension of 2026-07-28: a `tools/call` answered with a task is followed to its end (`tasks/get`, `tasks/update`, `tasks/cancel`) |
//! | `listen` | [`ListenStream`]: the events of a `subscriptions/listen`, demultiplexed by subscription id |
//! | `session` | [`ClientSession`]: a typed call per server method (`subscriptions/listen` included), caches, subscriptions, roots |
//! | `cache` | [`ListKind`]: the list caches and their change generations |
//! | `listing` | list-all with a page bound, change waiters, auto-refresh |
//! | `state` | the per-session state shared by the engine service and the session handle |
//! | `subscription` | [`SubscriptionId`]: resource subscriptions and update routing (bounded) |
//! | `handlers` | the handlers a client installs for the server's requests and notifications; the check every root passes (`[RO-1]`, `[RO-3]`) |
//! | `answer` | the client's own answers (ping, sampling, elicitation, roots), each on its catalogue marker with its typed params |
//! | `router` | the method table: the built-in answers routed by marker, the task routes, user routes |
//! | `service` | the engine service: gates and routes server requests and notifications (-32601 without a route), guards sends |
//! | `validation` | `structuredContent` checked against the tool's `outputSchema` (`[SF-7]`) |
//! | `task` | tools called as tasks: start, get, wait, result, cancel, list |
//! | `serve_task` | the server's sampling and elicitation run as tasks on this client; `tasks/*` answered |
//! | `apps` | MCP Apps: the extension declared, a view read and checked as a [`UiResource`] |
//! | `error` | [`ClientError`] |
//!
//! Modules depend one way: `era`, `handlers`, `serve_task` ← `subscription` ← `error` ← `cache`,
//! `validation`, `listen` ← `state` ← `answer` ← `inputs` ← `modern_task` ← `exchange` ←
//! `listing`, `probe` ← `session` ← `apps`, `task`, `router` ← `service` ← `client`.
//!
//! The modules are private and the public surface is re-exported here; the bounds' defaults
//! are documented on the builder methods that set them.
//!
//! # Features
//! * Per-call options ([`RequestOptions`]): timeout, progress callback, timeout reset on progress
//!   with a hard maximum, and a cancellation token (cancelling sends `notifications/cancelled`).
//! * Handlers are async closures returning `Result<result, ErrorObject>`; installing one
//!   declares its capability. A panicking handler is answered -32603; the session lives on.
//! * Nothing is sent for a capability the server did not declare, nor before the handshake.

mod answer;
mod apps;
mod cache;
mod client;
mod era;
mod error;
mod exchange;
mod handlers;
mod inputs;
mod listen;
mod listing;
mod modern_task;
#[cfg(feature = "pack")]
pub mod pack;
mod params;
mod probe;
mod router;
mod serve_task;
mod service;
mod session;
mod state;
mod subscription;
mod task;
mod validation;

pub use apps::UiResource;
pub use cache::ListKind;
pub use client::{Client, ClientBuilder, Negotiated};
pub use era::{Era, EraMode, ParseEraModeError};
pub use error::ClientError;
pub use handlers::HandlerFuture;
pub use inputs::InputKey;
pub use listen::{ListenEvent, ListenStream};
pub use params::{ParamsError, params_from_pairs};
pub use session::ClientSession;
pub use subscription::{ResourceUpdateCallback, SubscriptionId};
pub use switchboard_jsonrpc::{ProgressUpdate, ProgressWatch, RequestContext, RequestOptions};
pub use switchboard_tasks::{InMemoryTaskStore, TaskLimits, TaskStore};
pub use tokio_util::sync::CancellationToken;
