//! # switchboard-redis
//!
//! Redis behind the Streamable HTTP server of `switchboard-http`, so that several server
//! processes behind a load balancer serve one endpoint:
//!
//! * [`RedisStore`] is a [`SessionStore`](switchboard_http::SessionStore) (which sessions exist, the role's snapshot, the
//!   subject a session is bound to, the node serving it) and an [`EventStore`](switchboard_http::EventStore) (the SSE events
//!   kept for `Last-Event-ID`, replayed by whichever node a client reconnects to);
//! * `RedisTaskStore` (feature `tasks`) is a `switchboard_tasks::TaskStore`: a session's tasks
//!   outlive the node that created them (a task whose node died reads `failed`, saying so);
//! * `RedisReplayStore` (feature `dpop`) is a DPoP replay store
//!   (`switchboard_auth::resource::dpop::ReplayStore`): a proof used on one node is refused on
//!   every other;
//! * [`RedisCluster`] is the [`Cluster`](switchboard_http::Cluster): this node announces itself (its id and the URL the
//!   other nodes reach it at) for as long as it runs, and finds the node serving a session in
//!   one round trip.
//!
//! ```text
//! let secret = ClusterSecret::new(secret_bytes).context("32 bytes at least")?; // the same on every node
//! let (config, cluster, store) = switchboard_redis::join(
//!     "redis://127.0.0.1:6379/0", "http://10.0.0.5:8080/mcp", None,
//!     HttpConfig::for_bind_address(addr), secret,
//! ).await?;
//! ```
//!
//! Every node needs the same [`ClusterSecret`](switchboard_http::ClusterSecret): the
//! requests nodes relay to each other are authenticated with it, and `switchboard_http::serve`
//! refuses to start a node of a cluster without one. Redis itself is trusted: whoever may
//! write to it may announce a node and receive the requests relayed to it (protect it with a
//! password or ACL, and keep it on a private network).
//!
//! # Layering
//! A store behind `switchboard-http`: the session, event and cluster stores use its traits and
//! no MCP type. `RedisTaskStore` is the exception, behind the cargo feature `tasks` (off by
//! default): it implements `switchboard_tasks::TaskStore` over MCP task types
//! (`switchboard-types`), for the CLI's `serve --store redis://`.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | `writer` | the connection shared with the ordered writer's task: event writes queued, sent as pipelines, one at a time, each one run of the batch script; every command bounded and retried once |
//! | `batch` | the batch script: a pipeline's event writes (append, keep requests) in one `EVALSHA` |
//! | `connection` | [`RedisStore`], [`RedisConfig`]: the connection, key names |
//! | `sessions` | [`RedisStore`] as the `SessionStore`, with its Lua scripts |
//! | `events` | [`RedisStore`] as the `EventStore`, with its Lua scripts |
//! | `cluster` | [`RedisCluster`], the `Cluster`; [`apply`] |
//! | `node` | [`join`]: a node joined to a cluster, its `HttpConfig` keeping sessions in the store |
//! | `tasks` | (feature `tasks`) `RedisTaskStore` |
//! | `dpop` | (feature `dpop`) `RedisReplayStore`, with its Lua script |
//!
//! Modules depend one way: `sessions`, `events`, `cluster`, `tasks`, `dpop` → `connection` →
//! `writer` → `batch` (and `events` → `batch`, for its operations' names).
//!
//! # Keys
//! Every key starts with [`RedisConfig::prefix`]. A session id is a secret (it is the only
//! credential of an unauthenticated session), so no key holds one: sessions are named by the
//! first 128 bits of the SHA-256 of their id, in hex.
//!
//! | key | type | holds |
//! |---|---|---|
//! | `P:s:H` | hash | `snapshot`, `owner` (the authorization subject), `node` |
//! | `P:sessions` | sorted set | every `H`, scored by its expiry (for the session bound) |
//! | `P:e:H:N` | sorted set | stream `N`'s events, scored by sequence, member `seq:data` |
//! | `P:es:H` | hash | bytes kept per stream of the session, and `_total` |
//! | `P:eo:H` | sorted set | the session's streams, padded to 20 digits, one score (oldest first) |
//! | `P:node:ID` | string | a live node's endpoint URL (expires unless renewed) |
//! | `P:dpop` | sorted set | (feature `dpop`) the DPoP proofs seen (a hash of key and `jti`), scored by the end of their window |
//!
//! # Bounds
//! Sessions in all ([`RedisConfig::max_sessions`], like the in-memory store); per stream,
//! events and bytes; per session, streams and bytes (the oldest go first, as in memory). Every
//! key expires ([`RedisConfig::session_ttl`]) unless the node serving its session renews it
//! (the idle reaper's [`SessionStore::keep_alive`](switchboard_http::SessionStore::keep_alive)): a store outlives no session.
//!
//! # Round trips
//! One per session created, per replayed page, per request naming a session this node does
//! not hold and has not located in the last two seconds ([`Cluster::locate`](switchboard_http::Cluster::locate)), and one per reaper round for all
//! the sessions a node serves. The SSE events stored (and the requests kept with a stream)
//! share one: the writes queued while one pipeline is out go as the next (at most 128 writes
//! and 1 MiB, one run of one script), and the call waits for none. [`RedisStore::round_trips`] counts them.
//!
//! # Security
//! [`RedisStore::connect`] pings the server before it returns: a node that cannot
//! authenticate (a URL without the password the server requires, or a wrong one) refuses to
//! start. Credentials go in the URL (`redis://:PASSWORD@host:port/db`, or
//! `redis://USER:PASSWORD@…` with ACLs) and are never logged.

mod batch;
mod cluster;
mod connection;
#[cfg(feature = "dpop")]
mod dpop;
mod events;
mod node;
mod sessions;
#[cfg(feature = "tasks")]
mod tasks;
mod writer;

pub use cluster::{RedisCluster, apply};
pub use connection::{RedisConfig, RedisStore, RedisStoreError};
#[cfg(feature = "dpop")]
pub use dpop::RedisReplayStore;
pub use node::join;
#[cfg(feature = "tasks")]
pub use tasks::RedisTaskStore;
