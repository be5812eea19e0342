//! [`join`]: a node joined to a cluster in one call, its HTTP configuration keeping sessions
//! and event history in the shared Redis (what `switchboard serve --store` and
//! `switchboard gateway --store` do).

use std::sync::Arc;
use std::time::Duration;

use switchboard_http::{ClusterSecret, HttpConfig};

use crate::cluster::{RedisCluster, apply};
use crate::connection::{RedisConfig, RedisStore, RedisStoreError};

/// Joins the cluster sharing the Redis at `url` as the node `node` (random when `None`),
/// announced at `advertise` (the URL the other nodes reach its endpoint at), and returns
/// `config` with the store and the cluster in it (its session and event stores, its cluster) and the requests relayed between
/// nodes authenticated by `relay`, the joined cluster and the store. Records live as long as
/// `config`'s idle timeout plus a minute; its `max_sessions` bounds them.
///
/// # Errors
/// The URL is not a Redis URL, or Redis refused or did not answer.
pub async fn join(
    url: &str,
    advertise: &str,
    node: Option<String>,
    config: HttpConfig,
    relay: ClusterSecret,
) -> Result<(HttpConfig, Arc<RedisCluster>, RedisStore), RedisStoreError> {
    let records = RedisConfig {
        session_ttl: config.idle_timeout.unwrap_or_default() + Duration::from_secs(60),
        max_sessions: config.max_sessions,
        ..RedisConfig::default()
    };
    let store = RedisStore::connect(url, records).await?;
    let cluster = RedisCluster::join(store.clone(), node, advertise).await?;
    let config = apply(config, &store, cluster.clone()).with_cluster_secret(relay);
    Ok((config, cluster, store))
}
