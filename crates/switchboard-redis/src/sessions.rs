//! [`RedisStore`] as the [`SessionStore`]: which sessions exist, the role's snapshot, the subject
//! a session is bound to and the node serving it, one hash per session plus an index scored by
//! expiry (the session bound). Each operation is one Lua script: one round trip, atomic in Redis.

use std::sync::Arc;

use redis::Script;
use switchboard_http::StoreFuture;
use switchboard_http::{Claim, SessionRecord, SessionStore, SessionStoreError};

use crate::connection::{KEEP_ALIVE_CHUNK, RedisStore, Run, backend, hashed, now_ms};

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
            let status: i64 = Script::new(CREATE)
                .key(self.key(&["s", &h]))
                .key(self.key(&["sessions"]))
                .arg(&h)
                .arg(now_ms())
                .arg(self.ttl_ms())
                .arg(self.config().max_sessions)
                .arg(opt(&record.snapshot))
                .arg(opt(&record.owner))
                .arg(opt(&record.node))
                .run(self)
                .await
                .map_err(|e| SessionStoreError::Backend(backend(&e)))?;
            if status == 0 {
                return Err(SessionStoreError::Full {
                    limit: self.config().max_sessions,
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
            let r: Result<i64, _> = Script::new(REMOVE)
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
            let (status, fields): (i64, Vec<(String, String)>) = Script::new(CLAIM)
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
                let script = Script::new(KEEP_ALIVE);
                let mut call = script.key(self.key(&["sessions"]));
                call.arg(self.ttl_ms())
                    .arg(expiry)
                    .arg(&self.config().prefix);
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

/// Creates or replaces a session record, unless the session bound is reached.
/// KEYS: record hash, sessions index. ARGV: hashed id, now (ms), ttl (ms), max sessions,
/// snapshot, owner, node (empty: none). Returns 1, or 0 when full.
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', '1')
if ARGV[5] ~= '' then redis.call('HSET', KEYS[1], 'snapshot', ARGV[5]) end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'owner', ARGV[6]) end
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'node', ARGV[7]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
return 1
";

/// Removes a record, only if it names the given node (empty: any).
/// KEYS: record hash, sessions index. ARGV: hashed id, node. Returns 1 when removed.
const REMOVE: &str = r"
if ARGV[2] ~= '' then
  local n = redis.call('HGET', KEYS[1], 'node')
  if n and n ~= ARGV[2] then return 0 end
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
";

/// Moves a session to a node if its record names the expected node (empty: none) or that
/// node already. KEYS: record hash, sessions index. ARGV: hashed id, expected, node, now (ms),
/// ttl (ms). Returns {status, fields}: 0 gone, 1 won, 2 lost.
const CLAIM: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
local n = redis.call('HGET', KEYS[1], 'node') or ''
if n == ARGV[2] or n == ARGV[3] then
  redis.call('HSET', KEYS[1], 'node', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + tonumber(ARGV[5]), ARGV[1])
  return {1, redis.call('HGETALL', KEYS[1])}
end
return {2, redis.call('HGETALL', KEYS[1])}
";

/// Renews the records and events of the sessions a node serves.
/// KEYS: sessions index. ARGV: ttl (ms), expiry (ms), key prefix, then hashed ids.
/// Returns how many records were still there.
const KEEP_ALIVE: &str = r"
local alive = 0
for i = 4, #ARGV do
  local h = ARGV[i]
  if redis.call('PEXPIRE', ARGV[3] .. ':s:' .. h, ARGV[1]) == 1 then
    redis.call('ZADD', KEYS[1], ARGV[2], h)
    alive = alive + 1
  end
  local es = ARGV[3] .. ':es:' .. h
  redis.call('PEXPIRE', ARGV[3] .. ':eo:' .. h, ARGV[1])
  if redis.call('PEXPIRE', es, ARGV[1]) == 1 then
    for _, s in ipairs(redis.call('HKEYS', es)) do
      if s ~= '_total' then redis.call('PEXPIRE', ARGV[3] .. ':e:' .. h .. ':' .. s, ARGV[1]) end
    end
  end
end
return alive
";
