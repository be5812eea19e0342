//! The Streamable HTTP server's options: [`HttpConfig`].

use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::Duration;

use crate::auth::Authorization;
use crate::event_store::{EventStore, InMemoryEventStore};
use crate::listener::ConnectionLimits;
use crate::security::{DEFAULT_ALLOWED_HOSTS, DEFAULT_ALLOWED_ORIGINS};
use crate::session_store::{InMemorySessionStore, SessionStore};

/// The default MCP endpoint path.
pub(crate) const DEFAULT_PATH: &str = "/mcp";
/// The default listening address: loopback only.
pub const DEFAULT_BIND_ADDR: SocketAddr =
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8080));
/// The default bound on a POST body: 4 MiB.
pub(crate) const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// The default idle timeout of a session: 30 minutes.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The default bound on open sessions.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// The default number of server messages kept for a GET stream that is not open.
pub(crate) const DEFAULT_UNSOLICITED_QUEUE: usize = 128;
/// The default SSE `retry:` value, in milliseconds.
pub(crate) const DEFAULT_SSE_RETRY_MS: u64 = 1000;
/// The default interval of SSE keep-alive comments.
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);
/// The default number of events queued for one SSE connection.
pub(crate) const DEFAULT_STREAM_QUEUE: usize = 256;
/// The default number of POSTed frames queued for the engine.
pub(crate) const DEFAULT_INBOUND_QUEUE: usize = 64;
/// The default bound on POST streams awaited at once per session.
pub(crate) const DEFAULT_MAX_OPEN_STREAMS: usize = 1024;
/// The default bound on bytes queued for one SSE connection.
pub(crate) const DEFAULT_STREAM_QUEUE_BYTES: usize = 4 * 1024 * 1024;
/// The default time an SSE connection may leave its queued events untaken.
pub(crate) const DEFAULT_STREAM_STALL_TIMEOUT: Duration = Duration::from_secs(30);
/// The default bound on bytes of server messages kept for a GET stream that is not open.
pub(crate) const DEFAULT_UNSOLICITED_QUEUE_BYTES: usize = 1024 * 1024;
/// The default bound on a role snapshot kept for the session store.
pub(crate) const DEFAULT_MAX_SNAPSHOT_BYTES: usize = 64 * 1024;
/// The default bound on replays (`GET` with `Last-Event-ID`) running at once.
pub(crate) const DEFAULT_MAX_CONCURRENT_REPLAYS: usize = 64;
/// How the Streamable HTTP server behaves and what it bounds: every option, each bound on by
/// default.
///
/// | option | default | what it does |
/// |---|---|---|
/// | `path` | `/mcp` | the MCP endpoint of [`crate::StreamableHttpService::router`] |
/// | `json_response` | `false` | answer a POSTed request with one `application/json` body instead of an SSE stream |
/// | `stateless` | `false` | no sessions: every POST is served on its own (no `Mcp-Session-Id`; GET and DELETE get 405) |
/// | `session_store` | [`InMemorySessionStore`] (10 000 records) | which sessions exist, so that a node can take over a session it does not hold |
/// | `max_body_bytes` | 4 MiB | a larger POST body gets 413 |
/// | `idle_timeout` | 30 min | a session with no request and no open stream for this long is ended |
/// | `max_sessions` | 10 000 | `initialize` gets 503 when this many sessions are open |
/// | `get_stream` | `true` | whether `GET` opens the standalone SSE stream (`false`: 405, `[HT-13]`) |
/// | `allow_delete` | `true` | whether `DELETE` ends a session (`false`: 405) |
/// | `unsolicited_queue` | 128 | server messages kept for a GET stream that is not open (oldest dropped) |
/// | `sse_retry_ms` | 1000 | the `retry:` field sent at the start of every SSE stream |
/// | `keep_alive` | 15 s | an SSE comment after this much silence on a stream |
/// | `close_sse_after_priming_ms` | off | SEP-1699 polling: close a POST stream this long after it opened; the client resumes with `Last-Event-ID` |
/// | `allowed_hosts` | `localhost`, `127.0.0.1`, `[::1]` (any port) | `Host` allow-list, 403 otherwise (`None`: any) |
/// | `allowed_origins` | `http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*` | `Origin` allow-list when the header is present, 403 otherwise (`None`: any) |
/// | `event_store` | [`InMemoryEventStore`] (256 events per stream) | where SSE events are kept for resumption |
/// | `stream_queue` | 256 | events queued for one SSE connection; a slower client is disconnected and resumes |
/// | `inbound_queue` | 64 | POSTed frames queued for a relay's reader (or a take-over's re-run) before the POST waits |
/// | `max_open_streams` | 1024 | POST streams (or JSON answers) awaited at once per session; beyond, the oldest with no client attached is dropped, else 503 |
/// | `stream_queue_bytes` | 4 MiB | bytes queued for one SSE connection; beyond, the connection is dropped and the client resumes |
/// | `stream_stall_timeout` | 30 s | an SSE connection whose client takes none of its queued events for this long is dropped, and no longer keeps its session alive |
/// | `unsolicited_queue_bytes` | 1 MiB | bytes of server messages kept for a GET stream that is not open (oldest dropped) |
/// | `max_snapshot_bytes` | 64 KiB | a larger role snapshot (the client's `initialize` params) is not kept: a take-over then resumes without it |
/// | `max_concurrent_replays` | 64 | `GET` + `Last-Event-ID` replays running at once; beyond, 503 with `Retry-After` |
/// | `cluster` | off | several nodes sharing the stores ([`crate::Cluster`]) |
/// | `cluster_secret` | none | the secret the nodes of a cluster share ([`HttpConfig::with_cluster_secret`]); a node of a cluster needs one |
/// | `authorization` | off | OAuth 2.1 resource server: protected-resource metadata, bearer tokens on every request, scopes ([`crate::Authorization`]) |
/// | `connection` | [`ConnectionLimits`] | per connection: 1024 connections, 10 s headers, 60 s keep-alive, 30 s body (408), 30 s write |
/// | `server_card` | off | a server card at `<endpoint>/server-card` and the AI Catalog naming it at `/.well-known/ai-catalog.json` and `/.well-known/mcp/catalog.json` ([`HttpConfig::with_server_card`]) |
/// | `metrics` | off | a metrics page (e.g. Prometheus text) at its own path beside the endpoint ([`HttpConfig::with_metrics`]) |
///
/// The event store's own bounds (events and bytes per stream, per session, in all) are those of
/// [`InMemoryEventStore`]; the session store's, those of [`InMemorySessionStore`].
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint path used by [`crate::StreamableHttpService::router`].
    pub path: String,
    /// Answer POSTed requests with one `application/json` response ("JSON-only mode").
    pub json_response: bool,
    /// Stateless mode: no session ids. Each POST is served by a session of its own that starts
    /// ready at the request's `MCP-Protocol-Version` (2025-03-26 when absent) and ends with the
    /// answer; the client is anonymous and declares no capability, so the server sends it no
    /// request. `initialize` is answered (without `Mcp-Session-Id`); GET and DELETE get 405.
    pub stateless: bool,
    /// Serve the modern era (2026-07-28) beside the 2025 one: a POST whose
    /// `MCP-Protocol-Version` names it is served without a session (see the `modern` module).
    /// On by default; off, such a POST is refused as an unsupported revision (400).
    pub modern: bool,
    /// The largest POST body accepted, in bytes; more gets 413. Keep it within the engine's
    /// `SessionConfig::max_frame_bytes` (16 MiB by default): a larger frame is answered by the
    /// engine with an error without id, which no POST can be matched with.
    pub max_body_bytes: usize,
    /// How long a session may sit without requests or open streams; `None`: forever.
    pub idle_timeout: Option<Duration>,
    /// The most sessions open at once; `initialize` gets 503 beyond.
    pub max_sessions: usize,
    /// Whether `GET` opens the standalone SSE stream; `false` answers 405.
    pub get_stream: bool,
    /// Whether `DELETE` ends a session; `false` answers 405.
    pub allow_delete: bool,
    /// Server messages kept while no GET stream is open; the oldest is dropped beyond.
    pub unsolicited_queue: usize,
    /// The `retry:` field (milliseconds) at the start of every SSE stream.
    pub sse_retry_ms: u64,
    /// An SSE comment is sent after this much silence; `None`: never.
    pub keep_alive: Option<Duration>,
    /// SEP-1699 polling: a POST stream is closed this many milliseconds after it opened, before
    /// its response; the client gets the rest with `GET` + `Last-Event-ID`. `None`: off.
    pub close_sse_after_priming_ms: Option<u64>,
    /// Allowed `Host` values: `name` (any port) or `name:port`; `None` disables the check.
    pub allowed_hosts: Option<Vec<String>>,
    /// Allowed `Origin` values: `scheme://host`, `scheme://host:port` or `scheme://host:*`;
    /// `None` disables the check. A request without `Origin` is always allowed.
    pub allowed_origins: Option<Vec<String>>,
    /// Where SSE events are kept for resumption.
    pub event_store: Arc<dyn EventStore>,
    /// Where session records are kept: a request naming a session this service does not hold
    /// is served by taking the session over when the store knows its id.
    pub session_store: Arc<dyn SessionStore>,
    /// Events queued for one SSE connection before a slow client is disconnected.
    pub stream_queue: usize,
    /// POSTed frames queued for the engine before a POST waits: for a session whose factory
    /// started no engine on the transport (a relay such as the stdio bridge reads it itself),
    /// and a take-over's re-run requests. A POST to an engine session hands its frame over in
    /// its own task (`Peer::receive`), bounded by `max_open_streams` and the engine's
    /// `max_in_flight` instead.
    pub inbound_queue: usize,
    /// POST streams (or JSON answers) awaited at once per session. A cancelled request is never
    /// answered, so beyond this bound the oldest target with no client attached is dropped;
    /// when every one has a client, the POST gets 503.
    pub max_open_streams: usize,
    /// Bytes queued for one SSE connection before a slow client is disconnected (an event
    /// larger than this still goes to a connection with nothing queued).
    pub stream_queue_bytes: usize,
    /// An SSE connection whose client has taken none of its queued events for this long is
    /// disconnected; it no longer keeps its session alive. `None`: only the queue bounds apply.
    pub stream_stall_timeout: Option<Duration>,
    /// Bytes of server messages kept while no GET stream is open; the oldest is dropped beyond.
    pub unsolicited_queue_bytes: usize,
    /// The largest role snapshot kept for the session store; a larger one is not kept (a
    /// take-over then resumes the session without it).
    pub max_snapshot_bytes: usize,
    /// Replays (`GET` with `Last-Event-ID`) running at once; beyond, 503 with `Retry-After`.
    pub max_concurrent_replays: usize,
    /// The bounds on each TCP connection, applied by [`crate::serve`] (the body read timeout
    /// also applies to a service mounted elsewhere).
    pub connection: ConnectionLimits,
    /// Authorization (OAuth 2.1 resource server, [`crate::Authorization`]); `None`: every request is
    /// served without credentials.
    pub authorization: Option<Arc<Authorization>>,
    /// The request headers handlers and layers may read
    /// (`Context::header` of the server role), lower-cased; none by default. At most
    /// [`switchboard_auth::resource::MAX_ARRIVAL_HEADERS`] names.
    pub forwarded_headers: Vec<String>,
    /// Several nodes sharing the session and event stores ([`crate::Cluster`]): a request for
    /// a session another live node serves is relayed there. `None`: one node.
    pub cluster: Option<Arc<dyn crate::Cluster>>,
    /// The secret the nodes of the cluster share ([`HttpConfig::with_cluster_secret`]).
    pub(crate) cluster_secret: Option<crate::ClusterSecret>,
    /// A metrics page beside the endpoint ([`HttpConfig::with_metrics`]).
    pub(crate) metrics: Option<MetricsPage>,
    /// The server card beside the endpoint ([`HttpConfig::with_server_card`]).
    pub(crate) server_card: Option<ServerCardRender>,
}

/// What `GET <endpoint>/server-card` answers: the card, made at each request (e.g.
/// `Server::server_card` of the role crate).
pub type ServerCardRender = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// What `GET` at a metrics path answers: the page's text, made at each request.
pub type MetricsRender = Arc<dyn Fn() -> String + Send + Sync>;

/// A metrics page: its path, content type and text ([`HttpConfig::with_metrics`]).
#[derive(Clone)]
pub(crate) struct MetricsPage {
    pub(crate) path: String,
    pub(crate) content_type: &'static str,
    pub(crate) render: MetricsRender,
}

impl fmt::Debug for MetricsPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetricsPage")
            .field("path", &self.path)
            .field("content_type", &self.content_type)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("path", &self.path)
            .field("json_response", &self.json_response)
            .field("stateless", &self.stateless)
            .field("max_body_bytes", &self.max_body_bytes)
            .field("idle_timeout", &self.idle_timeout)
            .field("max_sessions", &self.max_sessions)
            .field("get_stream", &self.get_stream)
            .field("allow_delete", &self.allow_delete)
            .field("unsolicited_queue", &self.unsolicited_queue)
            .field("sse_retry_ms", &self.sse_retry_ms)
            .field("keep_alive", &self.keep_alive)
            .field(
                "close_sse_after_priming_ms",
                &self.close_sse_after_priming_ms,
            )
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("stream_queue", &self.stream_queue)
            .field("inbound_queue", &self.inbound_queue)
            .field("max_open_streams", &self.max_open_streams)
            .field("stream_queue_bytes", &self.stream_queue_bytes)
            .field("stream_stall_timeout", &self.stream_stall_timeout)
            .field("unsolicited_queue_bytes", &self.unsolicited_queue_bytes)
            .field("max_snapshot_bytes", &self.max_snapshot_bytes)
            .field("max_concurrent_replays", &self.max_concurrent_replays)
            .field("connection", &self.connection)
            .field("authorization", &self.authorization)
            .field(
                "cluster",
                &self.cluster.as_ref().map(|c| c.node_id().to_owned()),
            )
            .field("cluster_secret", &self.cluster_secret)
            .field("metrics", &self.metrics)
            .field("server_card", &self.server_card.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            path: DEFAULT_PATH.to_owned(),
            json_response: false,
            stateless: false,
            modern: true,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            idle_timeout: Some(DEFAULT_IDLE_TIMEOUT),
            max_sessions: DEFAULT_MAX_SESSIONS,
            get_stream: true,
            allow_delete: true,
            unsolicited_queue: DEFAULT_UNSOLICITED_QUEUE,
            sse_retry_ms: DEFAULT_SSE_RETRY_MS,
            keep_alive: Some(DEFAULT_KEEP_ALIVE),
            close_sse_after_priming_ms: None,
            allowed_hosts: Some(DEFAULT_ALLOWED_HOSTS.map(String::from).to_vec()),
            allowed_origins: Some(DEFAULT_ALLOWED_ORIGINS.map(String::from).to_vec()),
            event_store: Arc::new(InMemoryEventStore::default()),
            session_store: Arc::new(InMemorySessionStore::default()),
            stream_queue: DEFAULT_STREAM_QUEUE,
            inbound_queue: DEFAULT_INBOUND_QUEUE,
            max_open_streams: DEFAULT_MAX_OPEN_STREAMS,
            stream_queue_bytes: DEFAULT_STREAM_QUEUE_BYTES,
            stream_stall_timeout: Some(DEFAULT_STREAM_STALL_TIMEOUT),
            unsolicited_queue_bytes: DEFAULT_UNSOLICITED_QUEUE_BYTES,
            max_snapshot_bytes: DEFAULT_MAX_SNAPSHOT_BYTES,
            max_concurrent_replays: DEFAULT_MAX_CONCURRENT_REPLAYS,
            connection: ConnectionLimits::default(),
            authorization: None,
            forwarded_headers: Vec::new(),
            cluster: None,
            cluster_secret: None,
            metrics: None,
            server_card: None,
        }
    }
}

impl HttpConfig {
    /// The default configuration for a server bound to `addr`: `Host` and `Origin` must name
    /// loopback (the defaults) or, when `addr` is a specific non-loopback IP, that IP (any port).
    /// An unspecified address (`0.0.0.0`, `[::]`) adds nothing: name the hosts it is reached by
    /// with [`HttpConfig::allow_host`] and [`HttpConfig::allow_origin`].
    pub fn for_bind_address(addr: SocketAddr) -> Self {
        let config = HttpConfig::default();
        let ip = addr.ip();
        if ip.is_loopback() || ip.is_unspecified() {
            return config;
        }
        let host = match ip {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            std::net::IpAddr::V4(v4) => v4.to_string(),
        };
        config
            .allow_host(host.clone())
            .allow_origin(format!("http://{host}:*"))
    }

    /// Sets the endpoint path (a leading `/` is added when missing).
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        let p = path.into();
        self.path = if p.starts_with('/') {
            p
        } else {
            format!("/{p}")
        };
        self
    }

    /// Turns JSON-only mode on or off.
    pub fn with_json_response(mut self, on: bool) -> Self {
        self.json_response = on;
        self
    }

    /// Turns stateless mode on or off (see [`HttpConfig::stateless`]).
    pub fn with_stateless(mut self, on: bool) -> Self {
        self.stateless = on;
        self
    }

    /// Serves as one node of a cluster sharing its stores ([`crate::Cluster`]). Give the
    /// same shared [`crate::SessionStore`] and [`crate::EventStore`] to every node, and the
    /// same secret ([`HttpConfig::with_cluster_secret`]).
    pub fn with_cluster(mut self, cluster: Arc<dyn crate::Cluster>) -> Self {
        self.cluster = Some(cluster);
        self
    }

    /// Sets the secret every node of the cluster shares: the requests this node relays carry
    /// a MAC under it, and a relayed request is believed only with a valid, fresh one
    /// ([`crate::ClusterSecret`]). A node of a cluster needs one:
    /// [`crate::serve`] refuses to start it without, and a service mounted elsewhere then
    /// relays nothing.
    pub fn with_cluster_secret(mut self, secret: crate::ClusterSecret) -> Self {
        self.cluster_secret = Some(secret);
        self
    }

    /// Replaces the session store (share one between the nodes behind a load balancer,
    /// together with one event store).
    pub fn with_session_store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.session_store = store;
        self
    }

    /// Sets the POST body bound.
    pub fn with_max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }

    /// Sets the idle timeout (`None`: sessions never expire).
    pub fn with_idle_timeout(mut self, t: Option<Duration>) -> Self {
        self.idle_timeout = t;
        self
    }

    /// Sets the session bound (at least 1).
    pub fn with_max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// Enables or disables the standalone GET stream.
    pub fn with_get_stream(mut self, on: bool) -> Self {
        self.get_stream = on;
        self
    }

    /// Allows or refuses `DELETE`.
    pub fn with_allow_delete(mut self, on: bool) -> Self {
        self.allow_delete = on;
        self
    }

    /// Sets the bound on messages kept for a GET stream that is not open (at least 1).
    pub fn with_unsolicited_queue(mut self, n: usize) -> Self {
        self.unsolicited_queue = n.max(1);
        self
    }

    /// Sets the SSE `retry:` value in milliseconds.
    pub fn with_sse_retry_ms(mut self, ms: u64) -> Self {
        self.sse_retry_ms = ms;
        self
    }

    /// Sets the keep-alive interval (`None`: no keep-alive comments).
    pub fn with_keep_alive(mut self, every: Option<Duration>) -> Self {
        self.keep_alive = every;
        self
    }

    /// Turns SEP-1699 polling on: POST streams close `ms` milliseconds after their priming event.
    pub fn with_close_sse_after_priming_ms(mut self, ms: Option<u64>) -> Self {
        self.close_sse_after_priming_ms = ms;
        self
    }

    /// Replaces the `Host` allow-list (`None`: any host; not advised for a local server).
    pub fn with_allowed_hosts<I, S>(mut self, hosts: Option<I>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = hosts.map(|h| h.into_iter().map(Into::into).collect());
        self
    }

    /// Adds one allowed `Host` value (`name` or `name:port`).
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        if let Some(h) = &mut self.allowed_hosts {
            h.push(host.into());
        }
        self
    }

    /// Replaces the `Origin` allow-list (`None`: any origin).
    pub fn with_allowed_origins<I, S>(mut self, origins: Option<I>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = origins.map(|o| o.into_iter().map(Into::into).collect());
        self
    }

    /// Adds one allowed `Origin` value (`scheme://host[:port|:*]`).
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        if let Some(o) = &mut self.allowed_origins {
            o.push(origin.into());
        }
        self
    }

    /// Replaces the event store.
    pub fn with_event_store(mut self, store: Arc<dyn EventStore>) -> Self {
        self.event_store = store;
        self
    }

    /// Sets the per-connection event queue (at least 1).
    pub fn with_stream_queue(mut self, n: usize) -> Self {
        self.stream_queue = n.max(1);
        self
    }

    /// Sets the bound on POST streams awaited at once per session (at least 1).
    pub fn with_max_open_streams(mut self, n: usize) -> Self {
        self.max_open_streams = n.max(1);
        self
    }

    /// Sets the queue of POSTed frames waiting for the engine (at least 1).
    pub fn with_inbound_queue(mut self, n: usize) -> Self {
        self.inbound_queue = n.max(1);
        self
    }

    /// Sets the bound on bytes queued for one SSE connection (at least 1).
    pub fn with_stream_queue_bytes(mut self, n: usize) -> Self {
        self.stream_queue_bytes = n.max(1);
        self
    }

    /// Sets the time after which an SSE connection whose client takes nothing is dropped
    /// (`None`: never for that reason).
    pub fn with_stream_stall_timeout(mut self, t: Option<Duration>) -> Self {
        self.stream_stall_timeout = t;
        self
    }

    /// Sets the bound on bytes of server messages kept for a GET stream that is not open.
    pub fn with_unsolicited_queue_bytes(mut self, n: usize) -> Self {
        self.unsolicited_queue_bytes = n.max(1);
        self
    }

    /// Sets the largest role snapshot kept for the session store.
    pub fn with_max_snapshot_bytes(mut self, n: usize) -> Self {
        self.max_snapshot_bytes = n;
        self
    }

    /// Sets the bound on replays running at once (at least 1).
    pub fn with_max_concurrent_replays(mut self, n: usize) -> Self {
        self.max_concurrent_replays = n.max(1);
        self
    }

    /// Turns authorization on (OAuth 2.1 resource server, [`crate::Authorization`]).
    pub fn with_authorization(mut self, authorization: Authorization) -> Self {
        self.authorization = Some(Arc::new(authorization));
        self
    }

    /// Lets handlers and layers read these request headers (an allow-list; names are
    /// case-insensitive, at most [`switchboard_auth::resource::MAX_ARRIVAL_HEADERS`] of them, values of
    /// at most [`switchboard_auth::resource::MAX_ARRIVAL_HEADER_BYTES`]). The `Authorization` header is
    /// never forwarded: the token's validated claims are (`Context::auth`).
    pub fn with_forwarded_headers<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.forwarded_headers = names
            .into_iter()
            .map(|n| n.into().to_ascii_lowercase())
            .filter(|n| n != "authorization" && n != "cookie")
            .take(switchboard_auth::resource::MAX_ARRIVAL_HEADERS)
            .collect();
        self
    }

    /// Answers `GET path` with `render()`'s text as `content_type` (e.g. the Prometheus text
    /// exposition, `text/plain; version=0.0.4`), beside the MCP endpoint in
    /// [`crate::StreamableHttpService::router`]. Off by default. A path equal to the MCP
    /// endpoint's is never served (the endpoint keeps it).
    pub fn with_metrics(
        mut self,
        path: impl Into<String>,
        content_type: &'static str,
        render: MetricsRender,
    ) -> Self {
        self.metrics = Some(MetricsPage {
            path: path.into(),
            content_type,
            render,
        });
        self
    }

    /// Serves a server card (SEP-2127, an experimental extension; off by default): `GET
    /// <endpoint>/server-card` answers `render()`'s JSON as `application/mcp-server-card+json`,
    /// and `GET /.well-known/ai-catalog.json` (also `/.well-known/mcp/catalog.json`) an AI
    /// Catalog whose one entry names that card, all with `Access-Control-Allow-Origin: *` (a
    /// card is public metadata, read by browser clients before they connect). Neither asks for
    /// a session or a token: serve a card only when everything in it is for everyone.
    pub fn with_server_card(mut self, render: ServerCardRender) -> Self {
        self.server_card = Some(render);
        self
    }

    /// Replaces the per-connection bounds.
    pub fn with_connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection = limits;
        self
    }
}

/// The per-session bounds, from [`HttpConfig`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionBounds {
    pub(crate) unsolicited_queue: usize,
    pub(crate) unsolicited_queue_bytes: usize,
    pub(crate) stream_queue: usize,
    pub(crate) stream_queue_bytes: usize,
    pub(crate) stream_stall_timeout: Option<Duration>,
    pub(crate) inbound_queue: usize,
    pub(crate) max_open_streams: usize,
    pub(crate) max_snapshot_bytes: usize,
}

impl SessionBounds {
    /// The bounds `config` sets.
    pub(crate) fn of(config: &HttpConfig) -> Self {
        SessionBounds {
            unsolicited_queue: config.unsolicited_queue,
            unsolicited_queue_bytes: config.unsolicited_queue_bytes,
            stream_queue: config.stream_queue,
            stream_queue_bytes: config.stream_queue_bytes,
            stream_stall_timeout: config.stream_stall_timeout,
            inbound_queue: config.inbound_queue,
            max_open_streams: config.max_open_streams,
            max_snapshot_bytes: config.max_snapshot_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::security::{host_allowed, origin_allowed};

    fn allows(config: &HttpConfig, host: &str, origin: &str) -> (bool, bool) {
        let hosts = config.allowed_hosts.as_deref().unwrap_or_default();
        let origins = config.allowed_origins.as_deref().unwrap_or_default();
        (host_allowed(host, hosts), origin_allowed(origin, origins))
    }

    #[test]
    fn the_default_bind_address_is_loopback() {
        assert!(DEFAULT_BIND_ADDR.ip().is_loopback());
    }

    #[test]
    fn a_loopback_or_unspecified_bind_address_keeps_the_loopback_defaults() {
        let defaults = HttpConfig::default();
        for addr in ["127.0.0.1:0", "[::1]:8080", "0.0.0.0:80", "[::]:9000"] {
            let c = HttpConfig::for_bind_address(addr.parse().expect("an address"));
            assert_eq!(c.allowed_hosts, defaults.allowed_hosts, "{addr}");
            assert_eq!(c.allowed_origins, defaults.allowed_origins, "{addr}");
        }
        let c = HttpConfig::for_bind_address("0.0.0.0:80".parse().expect("an address"));
        assert_eq!(
            allows(&c, "10.0.0.5:80", "http://10.0.0.5:80"),
            (false, false)
        );
    }

    #[test]
    fn a_specific_address_is_allowed_as_host_and_origin_on_any_port() {
        let c = HttpConfig::for_bind_address("10.1.2.3:8080".parse().expect("an address"));
        assert_eq!(
            allows(&c, "10.1.2.3:8080", "http://10.1.2.3:8080"),
            (true, true)
        );
        assert_eq!(allows(&c, "10.1.2.3", "http://10.1.2.3:1234"), (true, true));
        assert_eq!(
            allows(&c, "localhost:8080", "http://localhost:3000"),
            (true, true)
        );
        assert_eq!(
            allows(&c, "10.1.2.4:8080", "http://10.1.2.4:8080"),
            (false, false)
        );
        assert_eq!(
            allows(&c, "10.1.2.3:8080", "https://10.1.2.3:8080"),
            (true, false)
        );
        let c = HttpConfig::for_bind_address("[fd00::1]:8080".parse().expect("an address"));
        assert_eq!(
            allows(&c, "[fd00::1]:8080", "http://[fd00::1]:8080"),
            (true, true)
        );
        assert_eq!(allows(&c, "fd00::1", "http://fd00::1:8080"), (false, false));
    }
}
