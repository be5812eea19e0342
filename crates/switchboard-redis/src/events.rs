//! [`RedisStore`] as the [`EventStore`]: the SSE events kept for `Last-Event-ID`, one sorted set
//! per stream, bounded per stream and per session (the oldest go first), and the requests kept
//! with a stream for a take-over to run again. Each operation is atomic in Redis (a Lua script).
//! The writes (an event, the requests of a stream) are queued on the store's ordered writer and
//! return once queued: concurrent calls share one round trip and one run of the batch script
//! (`batch`, which holds their Lua), and an answer never waits for Redis. The reads and the removal wait for the writes queued before
//! them (`writer` says which guarantee that keeps across nodes).
//!
//! Stream numbers are compared as decimal strings (length, then text): they can exceed the
//! 2^53 that Lua's numbers hold exactly.

use std::sync::{Arc, LazyLock};

use redis::Script;
use switchboard_http::StoreFuture;
use switchboard_http::{EventId, EventStore, EventStoreError, StoredEvent};

use crate::batch;
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
            let mut w = Write::new(
                batch::APPEND,
                &[
                    &self.key(&["e", &h, &stream]),
                    &self.key(&["es", &h]),
                    &self.key(&["eo", &h]),
                ],
                event.data.len(),
            );
            w.arg(event.id.seq)
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
            let mut w = Write::new(
                batch::KEEP_REQUESTS,
                &[
                    &self.key(&["e", &h, &stream]),
                    &self.key(&["es", &h]),
                    &self.key(&["eo", &h]),
                ],
                body.len(),
            );
            w.arg(body)
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
