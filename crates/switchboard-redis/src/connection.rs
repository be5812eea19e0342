//! The store's handle on Redis, shared by the three stores (sessions, events, the cluster) and
//! the task store: [`RedisStore`] (one multiplexed connection that reconnects by itself), its
//! [`RedisConfig`], key names, and [`Run`], which bounds every command and script by the
//! response timeout and sends it once more after a broken connection.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::AsyncConnectionConfig;
use redis::aio::ConnectionManager;
use sha2::{Digest, Sha256};

use crate::writer::{self, Link, Queue, Write, bounded, retryable};

/// The default key prefix.
pub(crate) const DEFAULT_PREFIX: &str = "switchboard";
/// The default life of a record nobody renews: the in-memory idle timeout, plus a margin for
/// the reaper's period.
pub(crate) const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(31 * 60);
/// The default life of a node's announcement: a node that stops renewing it is taken for gone
/// this long after (sooner when it refuses connections).
pub(crate) const DEFAULT_NODE_TTL: Duration = Duration::from_secs(10);
/// How many sessions one keep-alive script renews.
pub(crate) const KEEP_ALIVE_CHUNK: usize = 1000;
/// The default bound on one command's wait for Redis.
pub(crate) const DEFAULT_RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);
// The default bounds on what is kept are the in-memory stores' (`InMemorySessionStore`,
// `InMemoryEventStore`).
/// The default bound on sessions kept in all.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 10_000;
/// The default bound on events kept per stream.
pub(crate) const DEFAULT_EVENTS_PER_STREAM: usize = 256;
/// The default bound on bytes kept per stream.
pub(crate) const DEFAULT_STREAM_BYTES: usize = 8 * 1024 * 1024;
/// The default bound on streams kept per session.
pub(crate) const DEFAULT_STREAMS_PER_SESSION: usize = 256;
/// The default bound on bytes kept per session.
pub(crate) const DEFAULT_SESSION_BYTES: usize = 16 * 1024 * 1024;

/// What a [`RedisStore`] keeps, and for how long.
#[derive(Debug, Clone)]
pub struct RedisConfig {
    /// Every key starts with `PREFIX:` (several deployments can share one Redis); default
    /// `switchboard`.
    pub prefix: String,
    /// How long a record lives unless renewed; default 31 minutes (the in-memory idle timeout,
    /// plus a margin for the reaper's period).
    pub session_ttl: Duration,
    /// The most sessions kept at once (`create` fails beyond, and the session is refused);
    /// default 10,000.
    pub max_sessions: usize,
    /// The most events kept per stream (the oldest go first); default 256.
    pub events_per_stream: usize,
    /// The most bytes kept per stream (each event costs its data plus 64 bytes); default 8 MiB.
    pub stream_bytes: usize,
    /// The most streams kept per session (the oldest go first); default 256.
    pub streams_per_session: usize,
    /// The most bytes kept per session, over all its streams (the oldest streams go first);
    /// default 16 MiB.
    pub session_bytes: usize,
    /// How long a node's announcement lives unless renewed (renewed at a third of it); default
    /// 10 s.
    pub node_ttl: Duration,
    /// How long one command may wait for Redis before it fails; default 5 s.
    pub response_timeout: Duration,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            prefix: DEFAULT_PREFIX.to_owned(),
            session_ttl: DEFAULT_SESSION_TTL,
            max_sessions: DEFAULT_MAX_SESSIONS,
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
    link: Arc<Link>,
    config: RedisConfig,
    /// The event writes, sent in order by one task (`writer`).
    writes: Arc<Queue>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The writer sends what is queued, then ends.
        self.writes.close();
    }
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
pub(crate) fn hashed(id: &str) -> String {
    let digest = Sha256::digest(id.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub(crate) fn backend(e: &redis::RedisError) -> String {
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
        let link = Arc::new(Link::new(conn, config.response_timeout));
        let writes = Arc::new(Queue::new(
            writer::QUEUE_MAX_BYTES,
            writer::BATCH_MAX_WRITES,
            writer::BATCH_MAX_BYTES,
        ));
        tokio::spawn(writer::send(writes.clone(), link.clone()));
        Ok(RedisStore {
            inner: Arc::new(Inner {
                link,
                config,
                writes,
            }),
        })
    }

    /// Waits until Redis has answered every event write this store queued so far (they are
    /// queued and sent in order, and a call appending an event returns once it is queued:
    /// [`EventStore::append`](switchboard_http::EventStore::append)). Bounded by three response
    /// timeouts and a second.
    pub async fn flush(&self) {
        let limit = writer::settle_limit(self.inner.config.response_timeout);
        if tokio::time::timeout(limit, self.inner.writes.settled())
            .await
            .is_err()
        {
            tracing::warn!("Redis did not answer the queued event writes in time");
        }
    }

    /// Queues one event write (see [`RedisStore::flush`]).
    pub(crate) async fn queue(&self, w: Write) {
        self.inner.writes.push(w).await;
    }

    /// The configuration.
    pub fn config(&self) -> &RedisConfig {
        &self.inner.config
    }

    /// How many round trips to Redis this store made so far.
    pub fn round_trips(&self) -> u64 {
        self.inner.link.round_trips()
    }

    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut k = self.inner.config.prefix.clone();
        for p in parts {
            k.push(':');
            k.push_str(p);
        }
        k
    }

    pub(crate) fn conn(&self) -> ConnectionManager {
        self.inner.link.conn()
    }

    pub(crate) fn ttl_ms(&self) -> u64 {
        millis(self.inner.config.session_ttl)
    }
}

/// Runs a script or a command on the store's connection, once more on a fresh connection when
/// the first attempt met a broken one.
pub(crate) trait Run {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T>;
}

impl Run for redis::ScriptInvocation<'_> {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T> {
        match bounded(&store.inner.link, self.invoke_async(&mut store.conn())).await {
            Err(e) if retryable(&e) => {
                bounded(&store.inner.link, self.invoke_async(&mut store.conn())).await
            }
            r => r,
        }
    }
}

impl Run for redis::Cmd {
    async fn run<T: redis::FromRedisValue>(&self, store: &RedisStore) -> redis::RedisResult<T> {
        match bounded(&store.inner.link, self.query_async(&mut store.conn())).await {
            Err(e) if retryable(&e) => {
                bounded(&store.inner.link, self.query_async(&mut store.conn())).await
            }
            r => r,
        }
    }
}
