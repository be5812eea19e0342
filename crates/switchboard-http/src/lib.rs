//! # switchboard-http
//!
//! The MCP Streamable HTTP transport, server side (SPEC-NOTES §6, revisions 2025-03-26 onward):
//! one endpoint that takes `POST`, `GET` and `DELETE`, keeps sessions, and routes every message
//! the engine sends to the right SSE stream.
//!
//! The crate knows no MCP role: it takes a *session factory* that starts the engine on a
//! [`HttpSessionTransport`] and returns its [`switchboard_jsonrpc::Peer`]. A session that does
//! not begin with its own `initialize` (a stateless request, a session taken over from the
//! [`SessionStore`]) carries a [`Resume`] for the factory to hand to the role. The facade
//! (`switchboard`, features `server` and `http-server`) supplies the factory for
//! `switchboard-server`:
//!
//! ```text
//! let service = StreamableHttpService::new(
//!     switchboard::server_http::session_factory(&server),
//!     HttpConfig::default(),
//! );
//! switchboard_http::serve(TcpListener::bind("127.0.0.1:8080").await?, service).await
//! ```
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `server` | [`StreamableHttpService`] (a `tower::Service`, [`StreamableHttpService::router`]), [`serve`]; one submodule per POST path (session, stateless, 2026-07-28), `GET` streams, the cluster take-over |
//! | `auth` | [`Authorization`]: the endpoint as an OAuth 2.1 resource server (metadata, bearer tokens, scopes, sessions bound to their subject) |
//! | `config` | [`HttpConfig`]: every option and bound, with defaults; [`ConnectionLimits`] |
//! | `session` | [`HttpSessionTransport`] (the engine's transport), sessions, the idle reaper |
//! | `session_store` | [`SessionStore`] and [`InMemorySessionStore`]: which sessions exist, for a take-over |
//! | `cluster` | [`Cluster`]: several nodes sharing the stores (the trait, where a session is served); [`ClusterSecret`], which authenticates the requests nodes relay to each other |
//! | `relay` | a session's requests relayed to the node serving it, or the session claimed when that node is gone |
//! | `event_store` | [`EventStore`] and [`InMemoryEventStore`]: SSE events kept for `Last-Event-ID` |
//! | `stdio_bridge` | [`stdio_bridge()`]: a stdio server exposed over this endpoint, one child per session, every frame shown to a tap |
//! | `proxy` | (feature `proxy`) a Streamable HTTP reverse proxy, every frame shown to a tap |
//! | `listener` | the accept loop: connection bound (503), header, keep-alive and write timeouts |
//! | `routing` | which stream each outbound frame goes on |
//! | `conn` | one live SSE connection's queue, bounded in events and bytes, between the routing and the body |
//! | `sse` | event encoding, the SSE response body (priming, replay, keep-alive, polling close) |
//! | `security` | `Host` / `Origin` allow-lists (DNS-rebinding protection); a one-value header sent twice |
//! | `headers` | `Accept`, `Content-Type`, `MCP-Session-Id`, `MCP-Protocol-Version`, `Last-Event-ID` |
//! | `throttle` | warnings a client can cause at will, at most one per second per call site |
//! | `modern` | the 2026-07-28 era's request facts: which POST is modern, its headers, its status |
//! | `reply` | the ready answers (refusals as JSON-RPC error bodies) |
//!
//! Modules depend one way, in layers (each uses only layers below it): `stdio_bridge`, `proxy`
//! · `server` · `relay`, `session` · `routing`, `sse` · `conn`, `config` · `auth`, `listener`,
//! `cluster` · `reply`, `session_store`, `modern` · `security`, `event_store`, `headers`,
//! `throttle`.
//!
//! # Guarantees
//! * A POSTed request's stream carries, in order, the server's requests and notifications
//!   related to it, then its response, then ends. Responses never go to the GET stream.
//! * Every message goes on exactly one stream; event ids (`<stream>-<seq>`) are unique in a
//!   session, and a resumption replays only the stream its `Last-Event-ID` names.
//! * Connections, sessions, bodies, queued messages, stored events and snapshots are bounded, in
//!   count and in bytes, and so is the time a client may take to send or to read; an ended
//!   session leaves nothing behind. `docs/BOUNDS.md` lists every bound with its default.
//! * The transport never reads `params`: messages are classified with `Frame::decode`. A
//!   cancelled request's stream ends when the engine reports the cancellation
//!   ([`switchboard_jsonrpc::TransportControl::request_cancelled`]); the session store keeps
//!   the role's snapshot verbatim ([`switchboard_jsonrpc::TransportControl::save_snapshot`]).
//! * The relays ([`stdio_bridge()`], `proxy`) pass every frame on unchanged; their tap sees it first.

mod auth;
mod cluster;
mod config;
mod conn;
mod event_store;
mod headers;
mod listener;
mod modern;
#[cfg(feature = "proxy")]
pub mod proxy;
mod relay;
mod reply;
mod routing;
mod secret;
mod security;
mod server;
mod session;
mod session_store;
mod sse;
mod stdio_bridge;
mod throttle;

pub use auth::{Authorization, AuthorizationError};
pub use cluster::{Cluster, ClusterSecret, Location};
pub use config::{DEFAULT_BIND_ADDR, HttpConfig, MetricsRender, ServerCardRender};
pub use event_store::{
    BadEventId, EventId, EventStore, EventStoreError, InMemoryEventStore, StoreFuture, StoredEvent,
};
pub use listener::ConnectionLimits;
pub use secret::DeploymentSecret;
pub use server::{
    SessionFactory, SessionStartError, StreamableHttpService, serve, serve_with_shutdown,
};
pub use session::{HttpSessionTransport, HttpSink, HttpSource, Resume};
pub use session_store::{
    Claim, InMemorySessionStore, SessionRecord, SessionStore, SessionStoreError,
};
pub use stdio_bridge::service as stdio_bridge;
