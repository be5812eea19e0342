//! Resumability: SSE event ids and the [`EventStore`] that keeps events for replay (server side).
//!
//! An event id is `<stream>-<seq>`: the number of the stream within its session, then the
//! event's position on that stream. Ids are therefore unique across all streams of a session
//! (`[HT-16]`), and a `Last-Event-ID` names the stream to resume, so that a replay never crosses
//! into another stream (`[HT-17]`). Sequence 0 is the priming event, which carries no message and
//! is not stored.
//!
//! The store is keyed by session id so that one store can serve every session of a server, and
//! so that an external store (Redis, a database) can be shared by several server processes.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

/// The default bound on events kept per stream by [`InMemoryEventStore`].
pub const DEFAULT_EVENTS_PER_STREAM: usize = 256;
/// The default bound on streams kept per session by [`InMemoryEventStore`].
pub const DEFAULT_STREAMS_PER_SESSION: usize = 256;

/// A boxed future borrowed from the store.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An SSE event id: `<stream>-<seq>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventId {
    /// The stream within the session (0 is the standalone GET stream).
    pub stream: u64,
    /// The position on that stream (0 is the priming event).
    pub seq: u64,
}

impl EventId {
    /// An id from its parts.
    pub const fn new(stream: u64, seq: u64) -> Self {
        EventId { stream, seq }
    }
}

impl fmt::Display for EventId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.stream, self.seq)
    }
}

/// A `Last-Event-ID` that is not of the form `<stream>-<seq>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed event id {0:?}")]
pub struct BadEventId(pub String);

impl FromStr for EventId {
    type Err = BadEventId;

    fn from_str(s: &str) -> Result<Self, BadEventId> {
        let bad = || BadEventId(s.chars().take(64).collect());
        let (a, b) = s.trim().split_once('-').ok_or_else(bad)?;
        let digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
        if !digits(a) || !digits(b) {
            return Err(bad());
        }
        Ok(EventId {
            stream: a.parse().map_err(|_| bad())?,
            seq: b.parse().map_err(|_| bad())?,
        })
    }
}

/// One stored event: its id and its data (one JSON-RPC message or batch, compact JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event id.
    pub id: EventId,
    /// The `data:` text.
    pub data: Arc<str>,
}

/// Why a replay failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EventStoreError {
    /// The store knows no such stream for this session (never written, evicted, or ended).
    #[error("unknown stream {stream}")]
    UnknownStream {
        /// The stream number asked for.
        stream: u64,
    },
    /// The store's backend failed.
    #[error("event store: {0}")]
    Backend(String),
}

/// Keeps SSE events so that a client can resume a stream after a disconnect.
///
/// Implementations must keep events in append order per stream and must only return events of
/// the stream that `after` belongs to (`[HT-17]`).
pub trait EventStore: Send + Sync + 'static {
    /// Records one event of `session`. Events of one stream arrive mostly in `seq` order.
    fn append<'a>(
        &'a self,
        session: &'a str,
        event: StoredEvent,
    ) -> StoreFuture<'a, Result<(), EventStoreError>>;

    /// The events of stream `after.stream` whose `seq` is greater than `after.seq`, in `seq` order.
    ///
    /// # Errors
    /// [`EventStoreError::UnknownStream`] when the stream is not (or no longer) known.
    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
    ) -> StoreFuture<'a, Result<Vec<StoredEvent>, EventStoreError>>;

    /// Forgets every event of `session` (called when the session ends).
    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()>;
}

#[derive(Default)]
struct SessionEvents {
    streams: HashMap<u64, VecDeque<StoredEvent>>,
    /// Streams in the order they were first written, for eviction.
    order: VecDeque<u64>,
}

/// The default store: in memory, bounded per stream and per session (the oldest goes first).
pub struct InMemoryEventStore {
    sessions: Mutex<HashMap<Box<str>, SessionEvents>>,
    per_stream: usize,
    per_session: usize,
}

impl fmt::Debug for InMemoryEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryEventStore")
            .field("sessions", &self.session_count())
            .field("per_stream", &self.per_stream)
            .field("per_session", &self.per_session)
            .finish()
    }
}

impl Default for InMemoryEventStore {
    fn default() -> Self {
        InMemoryEventStore::new(DEFAULT_EVENTS_PER_STREAM, DEFAULT_STREAMS_PER_SESSION)
    }
}

impl InMemoryEventStore {
    /// A store keeping at most `per_stream` events per stream and `per_session` streams per
    /// session (each at least 1).
    pub fn new(per_stream: usize, per_session: usize) -> Self {
        InMemoryEventStore {
            sessions: Mutex::default(),
            per_stream: per_stream.max(1),
            per_session: per_session.max(1),
        }
    }

    /// How many sessions have events stored.
    pub fn session_count(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// How many events are stored in all.
    pub fn event_count(&self) -> usize {
        self.sessions
            .lock()
            .map(|s| {
                s.values()
                    .flat_map(|e| e.streams.values())
                    .map(VecDeque::len)
                    .sum()
            })
            .unwrap_or(0)
    }

    fn append_now(&self, session: &str, event: StoredEvent) {
        let Ok(mut sessions) = self.sessions.lock() else {
            return;
        };
        let entry = match sessions.get_mut(session) {
            Some(e) => e,
            None => sessions.entry(session.into()).or_default(),
        };
        let stream = event.id.stream;
        if !entry.streams.contains_key(&stream) {
            if entry.order.len() >= self.per_session {
                if let Some(old) = entry.order.pop_front() {
                    entry.streams.remove(&old);
                }
            }
            entry.order.push_back(stream);
        }
        let events = entry.streams.entry(stream).or_default();
        if events.len() >= self.per_stream {
            events.pop_front();
            tracing::debug!(stream, "event store bound reached; oldest event dropped");
        }
        events.push_back(event);
    }

    fn replay_now(
        &self,
        session: &str,
        after: EventId,
    ) -> Result<Vec<StoredEvent>, EventStoreError> {
        let unknown = EventStoreError::UnknownStream {
            stream: after.stream,
        };
        let sessions = self
            .sessions
            .lock()
            .map_err(|_| EventStoreError::Backend("poisoned lock".into()))?;
        let events = sessions
            .get(session)
            .and_then(|s| s.streams.get(&after.stream))
            .ok_or(unknown)?;
        let mut out: Vec<StoredEvent> = events
            .iter()
            .filter(|e| e.id.seq > after.seq)
            .cloned()
            .collect();
        // Appends of one stream can interleave (queued messages get their ids when a GET
        // stream opens); a replay is always in id order.
        out.sort_by_key(|e| e.id.seq);
        Ok(out)
    }
}

impl EventStore for InMemoryEventStore {
    fn append<'a>(
        &'a self,
        session: &'a str,
        event: StoredEvent,
    ) -> StoreFuture<'a, Result<(), EventStoreError>> {
        self.append_now(session, event);
        Box::pin(std::future::ready(Ok(())))
    }

    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
    ) -> StoreFuture<'a, Result<Vec<StoredEvent>, EventStoreError>> {
        Box::pin(std::future::ready(self.replay_now(session, after)))
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(session);
        }
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn ev(stream: u64, seq: u64) -> StoredEvent {
        StoredEvent {
            id: EventId::new(stream, seq),
            data: Arc::from(format!("{{\"n\":{seq}}}")),
        }
    }

    #[test]
    fn event_ids_round_trip_and_reject_garbage() {
        let id: EventId = "12-34".parse().unwrap();
        assert_eq!(id, EventId::new(12, 34));
        assert_eq!(id.to_string(), "12-34");
        for bad in ["", "12", "-3", "3-", "a-1", "1-b", "1-2-3", "+1-2"] {
            assert!(bad.parse::<EventId>().is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn ht17_replay_stays_on_its_stream_and_is_bounded() {
        let store = InMemoryEventStore::new(3, 2);
        for seq in 1..=5 {
            store.append("s", ev(1, seq)).await.unwrap();
            store.append("s", ev(2, seq)).await.unwrap();
        }
        let got = store.replay_after("s", EventId::new(1, 0)).await.unwrap();
        let ids: Vec<_> = got.iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            vec![EventId::new(1, 3), EventId::new(1, 4), EventId::new(1, 5)]
        );
        let got = store.replay_after("s", EventId::new(2, 4)).await.unwrap();
        assert_eq!(got, vec![ev(2, 5)]);
        // A third stream evicts the oldest one.
        store.append("s", ev(3, 1)).await.unwrap();
        assert!(store.replay_after("s", EventId::new(1, 0)).await.is_err());
        assert!(
            store
                .replay_after("other", EventId::new(2, 0))
                .await
                .is_err()
        );
        store.remove_session("s").await;
        assert_eq!(store.session_count(), 0);
        assert_eq!(store.event_count(), 0);
    }
}
