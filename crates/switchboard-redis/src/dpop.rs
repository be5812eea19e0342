//! (feature `dpop`) [`RedisReplayStore`]: the DPoP proofs seen by every node of a cluster, so
//! that a proof replayed to another node is refused too (RFC 9449 §11.1).
//!
//! One sorted set, `P:dpop`, holds each proof's key (a fixed-size hash of its key thumbprint and
//! `jti`, never the proof) scored by the end of its window; one Lua script per proof drops the
//! expired members, answers whether the key was seen, and adds it: one round trip, atomic. The
//! set is bounded ([`RedisReplayStore::with_max_entries`]): full of proofs still in their
//! window, it refuses new ones (the request is answered 503, never let through unchecked), and
//! the set itself expires when its last proof's window closes.

use redis::Script;
use switchboard_auth::resource::dpop::{ReplayError, ReplayFuture, ReplayStore};

use crate::connection::{RedisStore, Run, backend, now_ms};

/// The default most proofs remembered across the cluster.
pub(crate) const DEFAULT_REPLAY_ENTRIES: usize = 1_000_000;
/// The longest key accepted (the verifier's keys are 43 characters).
pub(crate) const MAX_REPLAY_KEY_BYTES: usize = 128;

/// DPoP proofs seen, shared by the nodes through Redis. Give the same one (over the same
/// Redis and prefix) to every node's `DpopConfig::with_replay_store`.
#[derive(Debug, Clone)]
pub struct RedisReplayStore {
    store: RedisStore,
    max_entries: usize,
}

impl RedisReplayStore {
    /// The replay store in `store`'s Redis, under its prefix, bounded by 1,000,000 proofs.
    /// Keys over 128 bytes are refused (the verifier's are 43).
    pub fn new(store: RedisStore) -> Self {
        Self {
            store,
            max_entries: DEFAULT_REPLAY_ENTRIES,
        }
    }

    /// Bounds the proofs remembered (at least one).
    pub fn with_max_entries(mut self, max: usize) -> Self {
        self.max_entries = max.max(1);
        self
    }
}

/// KEYS[1] the set; ARGV: key, now (s), expiry (s), max entries. 1: first use; 0: a replay;
/// -1: full.
const FIRST_USE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
if seen then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], math.floor(tonumber(last[2])) + 1)
return 1
";

impl ReplayStore for RedisReplayStore {
    fn first_use(&self, key: &str, expires_at: u64) -> ReplayFuture<'_> {
        let key = key.to_owned();
        Box::pin(async move {
            if key.is_empty() || key.len() > MAX_REPLAY_KEY_BYTES {
                return Err(ReplayError(format!(
                    "a replay key must be 1 to {MAX_REPLAY_KEY_BYTES} bytes"
                )));
            }
            let status: i64 = Script::new(FIRST_USE)
                .key(self.store.key(&["dpop"]))
                .arg(&key)
                .arg(now_ms() / 1000)
                .arg(expires_at)
                .arg(self.max_entries)
                .run(&self.store)
                .await
                .map_err(|e| ReplayError(backend(&e)))?;
            match status {
                1 => Ok(true),
                0 => Ok(false),
                _ => Err(ReplayError(format!(
                    "full ({} proofs in their window)",
                    self.max_entries
                ))),
            }
        })
    }
}
