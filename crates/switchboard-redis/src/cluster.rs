//! [`RedisCluster`], the [`Cluster`]: this node announces itself (its id and the URL the other
//! nodes reach it at, a key that expires unless renewed) for as long as it runs, and finds the
//! node serving a session in one round trip; [`apply`] puts a store and a cluster in an
//! `HttpConfig`.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::Script;
use switchboard_http::StoreFuture;
use switchboard_http::{Cluster, HttpConfig, Location, SessionStoreError};

use crate::connection::{RedisStore, RedisStoreError, Run, backend, hashed, millis};

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
        let ttl = store.config().node_ttl;
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
        // The events this node queued reach Redis before another node may take its sessions
        // over (the announcement goes last, on the same connection).
        self.store.flush().await;
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
            let found: Vec<String> = Script::new(LOCATE)
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

/// `config` with `store` as its session and event store and `cluster` as its cluster. Give it
/// the cluster's secret too ([`HttpConfig::with_cluster_secret`]): without one, the node does
/// not start.
pub fn apply(config: HttpConfig, store: &RedisStore, cluster: Arc<RedisCluster>) -> HttpConfig {
    config
        .with_session_store(Arc::new(store.clone()))
        .with_event_store(Arc::new(store.clone()))
        .with_cluster(cluster)
}

/// Where a session is served. KEYS: record hash. ARGV: node key prefix (`P:node`).
/// Returns {} (no session), {''} (no node), {node} (a node not announced), {node, url}.
const LOCATE: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local n = redis.call('HGET', KEYS[1], 'node')
if not n then return {''} end
local url = redis.call('GET', ARGV[1] .. ':' .. n)
if not url then return {n} end
return {n, url}
";
