//! [`RedisStore`] as the [`EventStore`]: the SSE events kept for `Last-Event-ID`, one sorted set
//! per stream, bounded per stream and per session (the oldest go first), and the requests kept
//! with a stream for a take-over to run again. Each operation is one Lua script: one round trip,
//! atomic in Redis.
//!
//! Stream numbers are compared as decimal strings (length, then text): they can exceed the
//! 2^53 that Lua's numbers hold exactly.

use std::sync::Arc;

use redis::Script;
use switchboard_http::StoreFuture;
use switchboard_http::{EventId, EventStore, EventStoreError, StoredEvent};

use crate::connection::{RedisStore, Run, backend, hashed};

/// What one event costs beyond its data in the byte bounds (so that many tiny events count
/// too): 64 bytes, as in the in-memory store.
pub(crate) const EVENT_OVERHEAD_BYTES: usize = 64;

impl EventStore for RedisStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        event: StoredEvent,
    ) -> StoreFuture<'a, Result<(), EventStoreError>> {
        Box::pin(async move {
            let h = hashed(session);
            let c = self.config();
            let stream = event.id.stream.to_string();
            let _: i64 = Script::new(APPEND)
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
            let (known, members): (i64, Vec<String>) = Script::new(REPLAY)
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
            let _: i64 = Script::new(KEEP_REQUESTS)
                .key(self.key(&["e", &h, &stream]))
                .key(self.key(&["es", &h]))
                .arg(body)
                .arg(&stream)
                .arg(self.config().stream_bytes)
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
            let r: Result<i64, _> = Script::new(REMOVE_EVENTS)
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

/// Appends one event and applies the bounds (oldest events of the stream first, then the
/// session's oldest other streams). KEYS: stream set, session's byte hash. ARGV: seq, data,
/// stream, max events per stream, max bytes per stream, max bytes per session, max streams
/// per session, ttl (ms), the session's stream key prefix, the overhead per event.
/// Returns 1 when kept, 0 when the event alone is over a bound (not kept).
const APPEND: &str = r"
local overhead = tonumber(ARGV[10])
local cost = #ARGV[2] + overhead
if cost > tonumber(ARGV[5]) or cost > tonumber(ARGV[6]) then return 0 end
if redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':' .. ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
while true do
  local n = redis.call('ZCOUNT', KEYS[1], '(0', '+inf')
  local b = tonumber(redis.call('HGET', KEYS[2], ARGV[3]) or '0')
  if n <= tonumber(ARGV[4]) and b <= tonumber(ARGV[5]) then break end
  -- The oldest event (score 0 is the stream's requests, which stay while the stream does).
  local first = redis.call('ZRANGEBYSCORE', KEYS[1], '(0', '+inf', 'LIMIT', 0, 1)
  if #first == 0 then break end
  redis.call('ZREM', KEYS[1], first[1])
  local c = #first[1] - string.find(first[1], ':', 1, true) + overhead
  redis.call('HINCRBY', KEYS[2], ARGV[3], -c)
  redis.call('HINCRBY', KEYS[2], '_total', -c)
end
local function older(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end
while true do
  local total = tonumber(redis.call('HGET', KEYS[2], '_total') or '0')
  local streams = redis.call('HLEN', KEYS[2]) - 1
  if total <= tonumber(ARGV[6]) and streams <= tonumber(ARGV[7]) then break end
  local oldest = nil
  for _, s in ipairs(redis.call('HKEYS', KEYS[2])) do
    if s ~= '_total' and s ~= ARGV[3] and (oldest == nil or older(s, oldest)) then oldest = s end
  end
  if oldest == nil then break end
  local b = tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  redis.call('DEL', ARGV[9] .. ':' .. oldest)
  redis.call('HDEL', KEYS[2], oldest)
  redis.call('HINCRBY', KEYS[2], '_total', -b)
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
return 1
";

/// Keeps the requests that opened a stream, at score 0 of its set (never replayed: a replay
/// starts after a sequence number of at least 0). KEYS: stream set, session's byte hash.
/// ARGV: body, stream, max bytes per stream, ttl (ms), the overhead per event.
/// Returns 1 when kept, 0 when over the stream's bound.
const KEEP_REQUESTS: &str = r"
local cost = #ARGV[1] + tonumber(ARGV[5])
if cost > tonumber(ARGV[3]) then return 0 end
if redis.call('ZADD', KEYS[1], 0, '0:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[2], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
";

/// The events of a stream after a sequence number. KEYS: stream set. ARGV: after, limit.
/// Returns {known, members}: known is 0 when the stream is not kept.
const REPLAY: &str = r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
return {1, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))}
";

/// Forgets every event of a session. KEYS: the session's byte hash. ARGV: its stream key
/// prefix.
const REMOVE_EVENTS: &str = r"
for _, s in ipairs(redis.call('HKEYS', KEYS[1])) do
  if s ~= '_total' then redis.call('DEL', ARGV[1] .. ':' .. s) end
end
redis.call('DEL', KEYS[1])
return 1
";
