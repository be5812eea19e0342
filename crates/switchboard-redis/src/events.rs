//! [`RedisStore`] as the [`EventStore`]: the SSE events kept for `Last-Event-ID`, one sorted set
//! per stream, bounded per stream and per session (the oldest go first), and the requests kept
//! with a stream for a take-over to run again. Each operation is one Lua script, atomic in
//! Redis. The writes (an event, the requests of a stream) are queued on the store's ordered
//! writer and return once queued: concurrent calls share one pipelined round trip, and an
//! answer never waits for Redis. The reads and the removal wait for the writes queued before
//! them (`writer` says which guarantee that keeps across nodes).
//!
//! Stream numbers are compared as decimal strings (length, then text): they can exceed the
//! 2^53 that Lua's numbers hold exactly.

use std::sync::{Arc, LazyLock};

use redis::Script;
use switchboard_http::StoreFuture;
use switchboard_http::{EventId, EventStore, EventStoreError, StoredEvent};

use crate::connection::{RedisStore, Run, backend, hashed};
use crate::writer::Write;

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
            let mut w = Write::script(
                &APPEND,
                &[
                    &self.key(&["e", &h, &stream]),
                    &self.key(&["es", &h]),
                    &self.key(&["eo", &h]),
                ],
                event.data.len(),
            );
            w.cmd
                .arg(event.id.seq)
                .arg(&*event.data)
                .arg(&stream)
                .arg(c.events_per_stream.max(1))
                .arg(c.stream_bytes)
                .arg(c.session_bytes)
                .arg(c.streams_per_session.max(1))
                .arg(self.ttl_ms())
                .arg(self.key(&["e", &h]))
                .arg(EVENT_OVERHEAD_BYTES);
            // Queued, not awaited: see the module docs (the guarantee kept).
            self.queue(w).await;
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
            self.flush().await;
            let h = hashed(session);
            let (known, members): (i64, Vec<String>) = REPLAY
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
            let mut w = Write::script(
                &KEEP_REQUESTS,
                &[
                    &self.key(&["e", &h, &stream]),
                    &self.key(&["es", &h]),
                    &self.key(&["eo", &h]),
                ],
                body.len(),
            );
            w.cmd
                .arg(body)
                .arg(&stream)
                .arg(self.config().stream_bytes)
                .arg(self.ttl_ms())
                .arg(EVENT_OVERHEAD_BYTES);
            self.queue(w).await;
            Ok(())
        })
    }

    fn kept_requests<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> StoreFuture<'a, Result<Option<Arc<str>>, EventStoreError>> {
        Box::pin(async move {
            self.flush().await;
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
            // After the session's queued writes, or they would bring its keys back.
            self.flush().await;
            let h = hashed(session);
            let r: Result<i64, _> = REMOVE_EVENTS
                .key(self.key(&["es", &h]))
                .key(self.key(&["eo", &h]))
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
/// session's oldest other streams). KEYS: stream set, session's byte hash, session's stream
/// order. ARGV: seq, data, stream, max events per stream, max bytes per stream, max bytes per
/// session, max streams per session, ttl (ms), the session's stream key prefix, the overhead
/// per event. Returns 1 when kept, 0 when the event alone is over a bound (not kept).
///
/// The oldest stream is the first of the order set (stream numbers padded to 20 digits, one
/// score: in number order), so an append past the streams bound costs a few commands, not a
/// scan of every stream of the session; a stream the set lacks (written before it existed) is
/// found by that scan.
static APPEND: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local overhead = tonumber(ARGV[10])
local cost = #ARGV[2] + overhead
if cost > tonumber(ARGV[5]) or cost > tonumber(ARGV[6]) then return 0 end
if redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1] .. ':' .. ARGV[2]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[3], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
local function padded(s) return string.rep('0', 20 - #s) .. s end
redis.call('ZADD', KEYS[3], 0, padded(ARGV[3]))
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
  for _, p in ipairs(redis.call('ZRANGE', KEYS[3], 0, 1)) do
    local s = string.match(p, '^0*(%d+)$')
    if s ~= ARGV[3] then
      if redis.call('HEXISTS', KEYS[2], s) == 1 then oldest = s else redis.call('ZREM', KEYS[3], p) end
      break
    end
  end
  if oldest == nil then
    for _, s in ipairs(redis.call('HKEYS', KEYS[2])) do
      if s ~= '_total' and s ~= ARGV[3] and (oldest == nil or older(s, oldest)) then oldest = s end
    end
  end
  if oldest == nil then break end
  local b = tonumber(redis.call('HGET', KEYS[2], oldest) or '0')
  redis.call('DEL', ARGV[9] .. ':' .. oldest)
  redis.call('HDEL', KEYS[2], oldest)
  redis.call('ZREM', KEYS[3], padded(oldest))
  redis.call('HINCRBY', KEYS[2], '_total', -b)
end
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('PEXPIRE', KEYS[2], ARGV[8])
redis.call('PEXPIRE', KEYS[3], ARGV[8])
return 1
",
    )
});

/// Keeps the requests that opened a stream, at score 0 of its set (never replayed: a replay
/// starts after a sequence number of at least 0). KEYS: stream set, session's byte hash,
/// session's stream order. ARGV: body, stream, max bytes per stream, ttl (ms), the overhead
/// per event. Returns 1 when kept, 0 when over the stream's bound.
static KEEP_REQUESTS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local cost = #ARGV[1] + tonumber(ARGV[5])
if cost > tonumber(ARGV[3]) then return 0 end
if redis.call('ZADD', KEYS[1], 0, '0:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[2], ARGV[2], cost)
  redis.call('HINCRBY', KEYS[2], '_total', cost)
end
redis.call('ZADD', KEYS[3], 0, string.rep('0', 20 - #ARGV[2]) .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1
",
    )
});

/// The events of a stream after a sequence number. KEYS: stream set. ARGV: after, limit.
/// Returns {known, members}: known is 0 when the stream is not kept.
static REPLAY: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, {}} end
return {1, redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'LIMIT', 0, tonumber(ARGV[2]))}
",
    )
});

/// Forgets every event of a session. KEYS: the session's byte hash, its stream order. ARGV:
/// its stream key prefix.
static REMOVE_EVENTS: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
for _, s in ipairs(redis.call('HKEYS', KEYS[1])) do
  if s ~= '_total' then redis.call('DEL', ARGV[1] .. ':' .. s) end
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1
",
    )
});
