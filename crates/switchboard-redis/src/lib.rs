//! # switchboard-redis
//!
//! Redis behind the Streamable HTTP server of `switchboard-http`, so that several server
//! processes behind a load balancer serve one endpoint:
//!
//! * [`RedisStore`] is a [`SessionStore`] (which sessions exist, the role's snapshot, the
//!   subject a session is bound to, the node serving it) and an [`EventStore`] (the SSE events
//!   kept for `Last-Event-ID`, replayed by whichever node a client reconnects to);
//! * [`RedisTaskStore`] is a `switchboard_tasks::TaskStore`: a session's tasks outlive the node
//!   that created them (a task whose node died reads `failed`, saying so);
//! * [`RedisCluster`] is the [`Cluster`]: this node announces itself (its id and the URL the
//!   other nodes reach it at) for as long as it runs, and finds the node serving a session in
//!   one round trip.
//!
//! ```text
//! let store = RedisStore::connect("redis://127.0.0.1:6379/0", RedisConfig::default()).await?;
//! let cluster = RedisCluster::join(store.clone(), None, "http://10.0.0.5:8080/mcp").await?;
//! let config = switchboard_redis::apply(HttpConfig::for_bind_address(addr), &store, cluster);
//! ```
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
//! | `P:node:ID` | string | a live node's endpoint URL (expires unless renewed) |
//!
//! # Bounds
//! Sessions in all ([`RedisConfig::max_sessions`], like the in-memory store); per stream,
//! events and bytes; per session, streams and bytes (the oldest go first, as in memory). Every
//! key expires ([`RedisConfig::session_ttl`]) unless the node serving its session renews it
//! (the idle reaper's [`SessionStore::keep_alive`]): a store outlives no session.
//!
//! # Round trips
//! One per session created, per SSE event stored, per replayed page, per request naming a
//! session this node does not hold ([`Cluster::locate`]), and one per reaper round for all
//! the sessions a node serves. [`RedisStore::round_trips`] counts them.
//!
//! # Security
//! [`RedisStore::connect`] pings the server before it returns: a node that cannot
//! authenticate (a URL without the password the server requires, or a wrong one) refuses to
//! start. Credentials go in the URL (`redis://:PASSWORD@host:port/db`, or
//! `redis://USER:PASSWORD@…` with ACLs) and are never logged.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::ConnectionManager;
use redis::{AsyncConnectionConfig, Script};
use sha2::{Digest, Sha256};
use switchboard_http::event_store::{
    DEFAULT_EVENTS_PER_STREAM, DEFAULT_SESSION_BYTES, DEFAULT_STREAM_BYTES,
    DEFAULT_STREAMS_PER_SESSION, EVENT_OVERHEAD_BYTES, StoreFuture,
};
use switchboard_http::session_store::DEFAULT_MAX_STORED_SESSIONS;
use switchboard_http::{
    Claim, Cluster, EventId, EventStore, EventStoreError, HttpConfig, Location, SessionRecord,
    SessionStore, SessionStoreError, StoredEvent,
};

mod scripts;
mod tasks;

pub use tasks::RedisTaskStore;

/// The default key prefix.
pub const DEFAULT_PREFIX: &str = "switchboard";
/// The default life of a record nobody renews: the in-memory idle timeout, plus a margin for
/// the reaper's period.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(31 * 60);
/// The default life of a node's announcement: a node that stops renewing it is taken for gone
/// this long after (sooner when it refuses connections).
pub const DEFAULT_NODE_TTL: Duration = Duration::from_secs(10);
/// How many sessions one keep-alive script renews.
const KEEP_ALIVE_CHUNK: usize = 1000;
/// The default bound on one command's wait for Redis.
pub const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// What a [`RedisStore`] keeps, and for how long.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    /// Every key starts with `PREFIX:` (several deployments can share one Redis).
    pub prefix: String,
    /// How long a record lives unless renewed.
    pub session_ttl: Duration,
    /// The most sessions kept at once (`create` fails beyond, and the session is refused).
    pub max_sessions: usize,
    /// The most events kept per stream (the oldest go first).
    pub events_per_stream: usize,
    /// The most bytes kept per stream (each event costs its data plus
    /// [`EVENT_OVERHEAD_BYTES`]).
    pub stream_bytes: usize,
    /// The most streams kept per session (the oldest go first).
    pub streams_per_session: usize,
    /// The most bytes kept per session, over all its streams (the oldest streams go first).
    pub session_bytes: usize,
    /// How long a node's announcement lives unless renewed (renewed at a third of it).
    pub node_ttl: Duration,
    /// How long one command may wait for Redis before it fails.
    pub response_timeout: Duration,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            prefix: DEFAULT_PREFIX.to_owned(),
            session_ttl: DEFAULT_SESSION_TTL,
            max_sessions: DEFAULT_MAX_STORED_SESSIONS,
            events_per_stream: DEFAULT_EVENTS_PER_STREAM,
            stream_bytes: DEFAULT_STREAM_BYTES,
            streams_per_session: DEFAULT_STREAMS_PER_SESSION,
            session_bytes: DEFAULT_SESSION_BYTES,
            node_ttl: DEFAULT_NODE_TTL,
            response_timeout: DEFAULT_RESPONSE_TIMEOUT,
        }
    }
}

/// Why the store could not be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// The URL is not a Redis URL.
    #[error("not a Redis URL ({0}); give redis://[:PASSWORD@]HOST:PORT[/DB]")]
    Url(String),
    /// Redis did not answer, or refused this client (authentication).
    #[error("Redis at {at} refused or did not answer: {why}")]
    Unreachable {
        /// The host and port (never the credentials).
        at: String,
        /// What Redis or the connection said.
        why: String,
    },
}

/// Sessions and SSE events in Redis; cheap to clone (one multiplexed connection, shared).
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<Inner>,
}

struct Inner {
    conn: ConnectionManager,
    config: RedisConfig,
    round_trips: AtomicU64,
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.inner.config.prefix)
            .field("round_trips", &self.round_trips())
            .finish_non_exhaustive()
    }
}

/// The store's name for a session: never the id itself (a secret).
fn hashed(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn backend(e: &redis::RedisError) -> String {
    format!("redis: {e}")
}

impl RedisStore {
    /// Connects to the Redis at `url` (`redis://[USER][:PASSWORD@]HOST:PORT[/DB]`) and checks
    /// that it answers this client: a server that requires a password this URL lacks or gets
    /// wrong is refused here, before the node serves anything.
    ///
    /// # Errors
    /// A malformed URL, or a Redis that cannot be reached or refuses the client.
    pub async fn connect(url: &str, config: RedisConfig) -> Result<RedisStore, RedisStoreError> {
        let client = redis::Client::open(url).map_err(|e| RedisStoreError::Url(e.to_string()))?;
        let at = format!("{}", client.get_connection_info().addr());
        let unreachable = |e: redis::RedisError| RedisStoreError::Unreachable {
            at: at.clone(),
            why: e.to_string(),
        };
        // The first connection is checked by hand: the manager would retry a refused
        // password forever in the background.
        let probe = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(config.response_timeout));
        let mut first = client
            .get_multiplexed_async_connection_with_config(&probe)
            .await
            .map_err(unreachable)?;
        let _: String = redis::cmd("PING")
            .query_async(&mut first)
            .await
            .map_err(unreachable)?;
        drop(first);
        let manager = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(5)))
            .set_response_timeout(Some(config.response_timeout))
            .set_max_delay(Duration::from_secs(2))
            .set_number_of_retries(6);
        let conn = client
            .get_connection_manager_with_config(manager)
            .await
            .map_err(unreachable)?;
        Ok(RedisStore {
            inner: Arc::new(Inner {
                conn,
                config,
                round_trips: AtomicU64::new(0),
            }),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RedisConfig {
        &self.inner.config
    }

    /// How many round trips to Redis this store made so far.
    pub fn round_trips(&self) -> u64 {
        self.inner.round_trips.load(Ordering::Relaxed)
    }

    fn key(&self, parts: &[&str]) -> String {
        let mut k = self.inner.config.prefix.clone();
        for p in parts {
            k.push(':');
            k.push_str(p);
        }
        k
    }

    fn conn(&self) -> ConnectionManager {
        self.inner.round_trips.fetch_add(1, Ordering::Relaxed);
        self.inner.conn.clone()
    }

    fn ttl_ms(&self) -> u64 {
        millis(self.inner.config.session_ttl)
    }
}

/// Whether a failed command may succeed on a new connection (Redis restarted, the connection
/// broke): the multiplexed connection reconnects after such a failure, and the command is
/// sent once more. A command that timed out is not sent again: Redis may have run it (a script
/// that appends must not append twice), and the caller's wait is bounded by one timeout.
fn retryable(e: &redis::RedisError) -> bool {
    !e.is_timeout() && (e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal())
}

/// Bounds one attempt by the configured response timeout, whatever the connection is doing
/// (waiting for an answer, or reconnecting while Redis does not answer).
async fn bounded<T>(
    store: &RedisStore,
    attempt: impl std::future::Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    let limit = store.inner.config.response_timeout;
    match tokio::time::timeout(limit, attempt).await {
        Ok(r) => r,
        Err(_) => Err(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("no answer from Redis within {limit:?} (response_timeout)"),
        ))),
    }
}

/// Runs a script or a command on the store's connection, once more on a fresh connection when
/// the first attempt met a broken one.
trait Run {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T>;
}

impl Run for redis::ScriptInvocation<'_> {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T> {
        match bounded(store, self.invoke_async(&mut store.conn())).await {
            Err(e) if retryable(&e) => bounded(store, self.invoke_async(&mut store.conn())).await,
            r => r,
        }
    }
}

impl Run for redis::Cmd {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T> {
        match bounded(store, self.query_async(&mut store.conn())).await {
            Err(e) if retryable(&e) => bounded(store, self.query_async(&mut store.conn())).await,
            r => r,
        }
    }
}

/// The fields of a session hash, as a record.
fn record_of(id: &str, fields: Vec<(String, String)>) -> Option<SessionRecord> {
    if fields.is_empty() {
        return None;
    }
    let mut record = SessionRecord {
        id: Arc::from(id),
        snapshot: None,
        owner: None,
        node: None,
    };
    for (k, v) in fields {
        let v = Some(Arc::from(v.as_str()));
        match k.as_str() {
            "snapshot" => record.snapshot = v,
            "owner" => record.owner = v,
            "node" => record.node = v,
            _ => {}
        }
    }
    Some(record)
}

impl SessionStore for RedisStore {
    fn create(&self, record: SessionRecord) -> StoreFuture<'_, Result<(), SessionStoreError>> {
        Box::pin(async move {
            let h = hashed(&record.id);
            let opt = |v: &Option<Arc<str>>| v.as_deref().unwrap_or("").to_owned();
            let status: i64 = Script::new(scripts::CREATE)
                .key(self.key(&["s", &h]))
                .key(self.key(&["sessions"]))
                .arg(&h)
                .arg(now_ms())
                .arg(self.ttl_ms())
                .arg(self.inner.config.max_sessions)
                .arg(opt(&record.snapshot))
                .arg(opt(&record.owner))
                .arg(opt(&record.node))
                .run(self)
                .await
                .map_err(|e| SessionStoreError::Backend(backend(&e)))?;
            if status == 0 {
                return Err(SessionStoreError::Full {
                    limit: self.inner.config.max_sessions,
                });
            }
            Ok(())
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Option<SessionRecord>, SessionStoreError>> {
        Box::pin(async move {
            let fields: Vec<(String, String)> = redis::cmd("HGETALL")
                .arg(self.key(&["s", &hashed(id)]))
                .run(self)
                .await
                .map_err(|e| SessionStoreError::Backend(backend(&e)))?;
            Ok(record_of(id, fields))
        })
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, ()> {
        self.remove_served_by(id, None)
    }

    fn remove_served_by<'a>(&'a self, id: &'a str, node: Option<&'a str>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let h = hashed(id);
            let r: Result<i64, _> = Script::new(scripts::REMOVE)
                .key(self.key(&["s", &h]))
                .key(self.key(&["sessions"]))
                .arg(&h)
                .arg(node.unwrap_or(""))
                .run(self)
                .await;
            if let Err(e) = r {
                tracing::warn!(error = %e, "session record not removed from Redis (it expires)");
            }
        })
    }

    fn claim<'a>(
        &'a self,
        id: &'a str,
        expected: Option<&'a str>,
        node: &'a str,
    ) -> StoreFuture<'a, Result<Claim, SessionStoreError>> {
        Box::pin(async move {
            let h = hashed(id);
            let (status, fields): (i64, Vec<(String, String)>) = Script::new(scripts::CLAIM)
                .key(self.key(&["s", &h]))
                .key(self.key(&["sessions"]))
                .arg(&h)
                .arg(expected.unwrap_or(""))
                .arg(node)
                .arg(now_ms())
                .arg(self.ttl_ms())
                .run(self)
                .await
                .map_err(|e| SessionStoreError::Backend(backend(&e)))?;
            Ok(match (status, record_of(id, fields)) {
                (1, Some(r)) => Claim::Won(r),
                (2, Some(r)) => Claim::Lost(r),
                _ => Claim::Gone,
            })
        })
    }

    fn keep_alive<'a>(&'a self, ids: &'a [Arc<str>]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let expiry = now_ms().saturating_add(self.ttl_ms());
            // One script per chunk of sessions: a round trip per reaper round, not per session.
            for chunk in ids.chunks(KEEP_ALIVE_CHUNK) {
                let script = Script::new(scripts::KEEP_ALIVE);
                let mut call = script.key(self.key(&["sessions"]));
                call.arg(self.ttl_ms())
                    .arg(expiry)
                    .arg(&self.inner.config.prefix);
                for id in chunk {
                    call.arg(hashed(id));
                }
                let r: Result<i64, _> = call.run(self).await;
                if let Err(e) = r {
                    tracing::warn!(error = %e, "session records not renewed in Redis");
                }
            }
        })
    }
}

impl EventStore for RedisStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        event: StoredEvent,
    ) -> StoreFuture<'a, Result<(), EventStoreError>> {
        Box::pin(async move {
            let h = hashed(session);
            let c = &self.inner.config;
            let stream = event.id.stream.to_string();
            let _: i64 = Script::new(scripts::APPEND)
                .key(self.key(&["e", &h, &stream]))
                .key(self.key(&["es", &h]))
                .arg(event.id.seq)
                .arg(&*event.data)
                .arg(&stream)
                .arg(c.events_per_stream.max(1))
                .arg(c.stream_bytes)
                .arg(c.session_bytes)
                .arg(c.streams_per_session.max(1))
                .arg(self.ttl_ms())
                .arg(self.key(&["e", &h]))
                .arg(EVENT_OVERHEAD_BYTES)
                .run(self)
                .await
                .map_err(|e| EventStoreError::Backend(backend(&e)))?;
            Ok(())
        })
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<StoredEvent>, EventStoreError>> {
        Box::pin(async move {
            let h = hashed(session);
            let (known, members): (i64, Vec<String>) = Script::new(scripts::REPLAY)
                .key(self.key(&["e", &h, &after.stream.to_string()]))
                .arg(after.seq)
                .arg(limit.max(1))
                .run(self)
                .await
                .map_err(|e| EventStoreError::Backend(backend(&e)))?;
            if known == 0 {
                return Err(EventStoreError::UnknownStream {
                    stream: after.stream,
                });
            }
            let mut out = Vec::with_capacity(members.len());
            for m in members {
                let Some((seq, data)) = m.split_once(':') else {
                    continue;
                };
                let Ok(seq) = seq.parse::<u64>() else {
                    continue;
                };
                out.push(StoredEvent {
                    id: EventId::new(after.stream, seq),
                    data: Arc::from(data),
                });
            }
            Ok(out)
        })
    }

    fn keep_requests<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        body: &'a str,
    ) -> StoreFuture<'a, Result<(), EventStoreError>> {
        Box::pin(async move {
            let h = hashed(session);
            let stream = stream.to_string();
            let _: i64 = Script::new(scripts::KEEP_REQUESTS)
                .key(self.key(&["e", &h, &stream]))
                .key(self.key(&["es", &h]))
                .arg(body)
                .arg(&stream)
                .arg(self.inner.config.stream_bytes)
                .arg(self.ttl_ms())
                .arg(EVENT_OVERHEAD_BYTES)
                .run(self)
                .await
                .map_err(|e| EventStoreError::Backend(backend(&e)))?;
            Ok(())
        })
    }

    fn kept_requests<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> StoreFuture<'a, Result<Option<Arc<str>>, EventStoreError>> {
        Box::pin(async move {
            let key = self.key(&["e", &hashed(session), &stream.to_string()]);
            let found: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                .arg(key)
                .arg(0)
                .arg(0)
                .run(self)
                .await
                .map_err(|e| EventStoreError::Backend(backend(&e)))?;
            Ok(found
                .first()
                .and_then(|m| m.strip_prefix("0:"))
                .map(Arc::from))
        })
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let h = hashed(session);
            let r: Result<i64, _> = Script::new(scripts::REMOVE_EVENTS)
                .key(self.key(&["es", &h]))
                .arg(self.key(&["e", &h]))
                .run(self)
                .await;
            if let Err(e) = r {
                tracing::warn!(error = %e, "session events not removed from Redis (they expire)");
            }
        })
    }
}

/// This node as one of a cluster sharing a [`RedisStore`]: announced while it runs.
pub struct RedisCluster {
    store: RedisStore,
    node: String,
    heartbeat: tokio::task::JoinHandle<()>,
}

impl fmt::Debug for RedisCluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisCluster")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

/// A node id: 64 random bits in hex.
fn random_node_id() -> String {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return format!("node-{}", std::process::id());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

impl RedisCluster {
    /// Announces this node (id `node`, random when `None`; reached by the other nodes at
    /// `url`, its endpoint's full URL) and keeps announcing it until dropped.
    ///
    /// # Errors
    /// The first announcement failed.
    pub async fn join(
        store: RedisStore,
        node: Option<String>,
        url: &str,
    ) -> Result<Arc<RedisCluster>, RedisStoreError> {
        let node = node.unwrap_or_else(random_node_id);
        let key = store.key(&["node", &node]);
        let ttl = store.inner.config.node_ttl;
        announce(&store, &key, url, ttl)
            .await
            .map_err(|e| RedisStoreError::Unreachable {
                at: "the store".into(),
                why: e.to_string(),
            })?;
        let heartbeat = {
            let store = store.clone();
            let url = url.to_owned();
            tokio::spawn(async move {
                let period = (ttl / 3).max(Duration::from_millis(100));
                loop {
                    tokio::time::sleep(period).await;
                    if let Err(e) = announce(&store, &key, &url, ttl).await {
                        tracing::warn!(error = %e, "node announcement not renewed in Redis");
                    }
                }
            })
        };
        tracing::info!(node = %node, url = %url, "joined the cluster");
        Ok(Arc::new(RedisCluster {
            store,
            node,
            heartbeat,
        }))
    }

    /// Withdraws this node's announcement now (other nodes take its sessions over at their
    /// next request instead of after the announcement expires).
    pub async fn leave(&self) {
        self.heartbeat.abort();
        let r: Result<i64, _> = redis::cmd("DEL")
            .arg(self.store.key(&["node", &self.node]))
            .run(&self.store)
            .await;
        if let Err(e) = r {
            tracing::warn!(error = %e, "node announcement not withdrawn");
        }
    }
}

async fn announce(
    store: &RedisStore,
    key: &str,
    url: &str,
    ttl: Duration,
) -> redis::RedisResult<()> {
    redis::cmd("SET")
        .arg(key)
        .arg(url)
        .arg("PX")
        .arg(millis(ttl))
        .run(store)
        .await
}

impl Cluster for RedisCluster {
    fn node_id(&self) -> &str {
        &self.node
    }

    fn locate<'a>(
        &'a self,
        session: &'a str,
    ) -> StoreFuture<'a, Result<Location, SessionStoreError>> {
        Box::pin(async move {
            let h = hashed(session);
            let found: Vec<String> = Script::new(scripts::LOCATE)
                .key(self.store.key(&["s", &h]))
                .arg(self.store.key(&["node"]))
                .run(&self.store)
                .await
                .map_err(|e| SessionStoreError::Backend(backend(&e)))?;
            Ok(match found.as_slice() {
                [] => Location::Unknown,
                [none] if none.is_empty() => Location::Orphan { node: None },
                [node] if *node == self.node => Location::Here,
                [node] => Location::Orphan {
                    node: Some(Arc::from(node.as_str())),
                },
                [node, _] if *node == self.node => Location::Here,
                [node, url, ..] => Location::Remote {
                    node: Arc::from(node.as_str()),
                    url: Arc::from(url.as_str()),
                },
            })
        })
    }
}

/// `config` with `store` as its session and event store and `cluster` as its cluster.
pub fn apply(config: HttpConfig, store: &RedisStore, cluster: Arc<RedisCluster>) -> HttpConfig {
    config
        .with_session_store(Arc::new(store.clone()))
        .with_event_store(Arc::new(store.clone()))
        .with_cluster(cluster)
}
