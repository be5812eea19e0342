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
pub(crate) const DEFAULT_EVENTS_PER_STREAM: usize = 256;
/// The default bound on streams kept per session by [`InMemoryEventStore`].
pub(crate) const DEFAULT_STREAMS_PER_SESSION: usize = 256;
/// The default bound on bytes kept per stream by [`InMemoryEventStore`].
pub(crate) const DEFAULT_STREAM_BYTES: usize = 8 * 1024 * 1024;
/// The default bound on bytes kept per session by [`InMemoryEventStore`].
pub(crate) const DEFAULT_SESSION_BYTES: usize = 16 * 1024 * 1024;
/// The default bound on bytes kept in all by [`InMemoryEventStore`].
pub(crate) const DEFAULT_TOTAL_BYTES: usize = 256 * 1024 * 1024;
/// What one event costs beyond its data, in the byte bounds of [`InMemoryEventStore`] (so that
/// many tiny events count too).
pub(crate) const EVENT_OVERHEAD_BYTES: usize = 64;

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
/// Implementations must return events of one stream in `seq` order, and only events of the
/// stream that `after` belongs to (`[HT-17]`). A replay asks for a page at a time (`limit`
/// events), the next page once the previous one is written to the client, so an
/// implementation should find the first event after `after` without reading the whole stream.
///
/// The server stores an event before it hands it to the client (and the requests of a stream
/// before the client learns of it). A store may return from [`EventStore::append`] and
/// [`EventStore::keep_requests`] once the write is ordered ahead of every later call on the same
/// store, before its backend confirms it: [`EventStore::replay_after`],
/// [`EventStore::kept_requests`] and [`EventStore::remove_session`] then see it (a remote store
/// queues its writes on one ordered connection and makes its reads wait for the writes queued
/// before them). A store shared by several nodes documents when another node sees a write
/// (`switchboard-redis`: once the node that made it has left the cluster, or Redis has run it).
pub trait EventStore: Send + Sync + 'static {
    /// Records one event of `session`. Events of one stream arrive mostly in `seq` order.
    ///
    /// # Errors
    /// The store's backend failed (a store that returns before its backend confirms reports
    /// a later failure itself).
    fn append<'a>(
        &'a self,
        session: &'a str,
        event: StoredEvent,
    ) -> StoreFuture<'a, Result<(), EventStoreError>>;

    /// The first `limit` events of stream `after.stream` whose `seq` is greater than
    /// `after.seq`, in `seq` order (fewer when the stream has no more).
    ///
    /// # Errors
    /// [`EventStoreError::UnknownStream`] when the stream is not (or no longer) known.
    fn replay_after<'a>(
        &'a self,
        session: &'a str,
        after: EventId,
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<StoredEvent>, EventStoreError>>;

    /// Forgets every event of `session` (called when the session ends).
    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()>;

    /// Keeps the body of the POST that opened `stream` (the requests it carries), with the
    /// stream's events and for as long as them. A store shared by the nodes of a cluster keeps
    /// it so that a node taking the session over after its node died can run the requests
    /// again ([`crate::Cluster`]); the default keeps nothing (one node has no such need).
    ///
    /// # Errors
    /// The store's backend failed.
    fn keep_requests<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        body: &'a str,
    ) -> StoreFuture<'a, Result<(), EventStoreError>> {
        let _ = (session, stream, body);
        Box::pin(async { Ok(()) })
    }

    /// The body [`EventStore::keep_requests`] kept for `stream`, if any.
    ///
    /// # Errors
    /// The store's backend failed.
    fn kept_requests<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
    ) -> StoreFuture<'a, Result<Option<Arc<str>>, EventStoreError>> {
        let _ = (session, stream);
        Box::pin(async { Ok(None) })
    }
}

/// One stream's events, in `seq` order, and their bytes.
struct StreamEvents {
    events: VecDeque<StoredEvent>,
    bytes: usize,
    /// Which creation of this stream number this is (stale eviction entries name an older one).
    generation: u64,
}

#[derive(Default)]
struct SessionEvents {
    /// The session's streams in the order they were first written (the order of eviction, and
    /// of their generations). A list rather than a map: an idle session usually has one stream,
    /// which a map would keep in room for four. A busy one has up to the per-session bound
    /// (256): the stream written to is looked for from the newest end, the oldest leaves from
    /// the front, and a (stream, generation) pair is found by binary search.
    streams: VecDeque<(u64, StreamEvents)>,
    bytes: usize,
    /// The highest stream number written: a higher one is new without a look (POST streams
    /// are numbered upwards, so each new one would otherwise scan the whole list).
    highest: u64,
}

impl SessionEvents {
    fn get(&self, stream: u64) -> Option<&StreamEvents> {
        if stream > self.highest {
            return None;
        }
        self.streams
            .iter()
            .rev()
            .find(|(s, _)| *s == stream)
            .map(|(_, e)| e)
    }

    /// Whether this creation of `stream` is still kept (generations increase along the list).
    fn holds(&self, stream: u64, generation: u64) -> bool {
        let at = self
            .streams
            .partition_point(|(_, e)| e.generation < generation);
        self.streams
            .get(at)
            .is_some_and(|(s, e)| *s == stream && e.generation == generation)
    }

    /// Forgets `stream`; returns its bytes.
    fn remove_stream(&mut self, stream: u64) -> Option<usize> {
        let at = self.streams.iter().position(|(s, _)| *s == stream)?;
        let (_, gone) = self.streams.remove(at)?;
        self.bytes -= gone.bytes;
        Some(gone.bytes)
    }
}

/// Everything the store keeps, under one lock.
#[derive(Default)]
struct Stored {
    sessions: HashMap<Arc<str>, SessionEvents>,
    /// Bytes kept in all.
    total: usize,
    /// Streams of every session in the order they were created, for eviction in all. Entries
    /// of streams already gone are skipped, and swept out when they outnumber the live ones.
    order: VecDeque<(Arc<str>, u64, u64)>,
    /// Streams kept in all.
    streams: usize,
    next_generation: u64,
}

impl Stored {
    /// Forgets the oldest stream of any session other than `keep`; `false` when there is none.
    fn evict_oldest(&mut self, keep: (&str, u64)) -> bool {
        let mut kept = None;
        let evicted = loop {
            let Some((session, stream, generation)) = self.order.pop_front() else {
                break false;
            };
            if (&*session, stream) == keep {
                kept = Some((session, stream, generation));
                continue;
            }
            let Some(entry) = self.sessions.get_mut(&*session) else {
                continue;
            };
            if !entry.holds(stream, generation) {
                continue;
            }
            if let Some(bytes) = entry.remove_stream(stream) {
                self.total -= bytes;
                self.streams -= 1;
            }
            if entry.streams.is_empty() {
                self.sessions.remove(&*session);
            }
            break true;
        };
        if let Some(k) = kept {
            self.order.push_front(k);
        }
        evicted
    }

    /// Drops the eviction entries of streams that are gone once they are most of the queue.
    fn sweep_order(&mut self) {
        if self.order.len() <= 2 * self.streams + 64 {
            return;
        }
        let sessions = &self.sessions;
        self.order.retain(|(session, stream, generation)| {
            sessions
                .get(&**session)
                .is_some_and(|e| e.holds(*stream, *generation))
        });
    }
}

/// The bounds of an [`InMemoryEventStore`].
#[derive(Debug, Clone, Copy)]
struct Limits {
    per_stream: usize,
    per_session: usize,
    stream_bytes: usize,
    session_bytes: usize,
    total_bytes: usize,
}

/// The default store: in memory, bounded per stream (events and bytes), per session (streams
/// and bytes) and in all (bytes). Beyond a bound the oldest goes first: the oldest events of
/// the stream, then the session's oldest streams, then the oldest streams of any session. An
/// event larger than a byte bound is not kept (it cannot be replayed). An event's size is its
/// data plus 64 bytes (so that many tiny events count too).
///
/// Defaults ([`Default`]): 256 events per stream, 256 streams per session, 8 MiB per stream,
/// 16 MiB per session, 256 MiB in all.
pub struct InMemoryEventStore {
    stored: Mutex<Stored>,
    limits: Limits,
}

impl fmt::Debug for InMemoryEventStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryEventStore")
            .field("sessions", &self.session_count())
            .field("limits", &self.limits)
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
    /// session (each at least 1), with the default byte bounds.
    pub fn new(per_stream: usize, per_session: usize) -> Self {
        InMemoryEventStore {
            stored: Mutex::default(),
            limits: Limits {
                per_stream: per_stream.max(1),
                per_session: per_session.max(1),
                stream_bytes: DEFAULT_STREAM_BYTES,
                session_bytes: DEFAULT_SESSION_BYTES,
                total_bytes: DEFAULT_TOTAL_BYTES,
            },
        }
    }

    /// Sets the bound on bytes kept per stream (default 8 MiB).
    pub fn with_max_stream_bytes(mut self, n: usize) -> Self {
        self.limits.stream_bytes = n;
        self
    }

    /// Sets the bound on bytes kept per session (default 16 MiB).
    pub fn with_max_session_bytes(mut self, n: usize) -> Self {
        self.limits.session_bytes = n;
        self
    }

    /// Sets the bound on bytes kept in all (default 256 MiB).
    pub fn with_max_total_bytes(mut self, n: usize) -> Self {
        self.limits.total_bytes = n;
        self
    }

    /// How many sessions have events stored.
    pub fn session_count(&self) -> usize {
        self.stored.lock().map(|s| s.sessions.len()).unwrap_or(0)
    }

    /// How many events are stored in all.
    pub fn event_count(&self) -> usize {
        self.stored
            .lock()
            .map(|s| {
                s.sessions
                    .values()
                    .flat_map(|e| e.streams.iter().map(|(_, s)| s))
                    .map(|s| s.events.len())
                    .sum()
            })
            .unwrap_or(0)
    }

    /// How many bytes are stored in all (data plus 64 bytes per event).
    pub fn byte_count(&self) -> usize {
        self.stored.lock().map(|s| s.total).unwrap_or(0)
    }

    fn append_now(&self, session: &str, event: StoredEvent) {
        let l = self.limits;
        let size = event.data.len() + EVENT_OVERHEAD_BYTES;
        if size > l.stream_bytes.min(l.session_bytes).min(l.total_bytes) {
            tracing::debug!(
                bytes = size,
                "event larger than the event store's byte bound; not kept"
            );
            return;
        }
        let Ok(mut guard) = self.stored.lock() else {
            return;
        };
        let stored = &mut *guard;
        let stream = event.id.stream;
        // In all: the oldest streams of any session go first, never the one written to.
        while stored.total + size > l.total_bytes && stored.evict_oldest((session, stream)) {}
        let key = match stored.sessions.get_key_value(session) {
            Some((k, _)) => k.clone(),
            None => Arc::from(session),
        };
        let entry = stored.sessions.entry(key.clone()).or_default();
        if entry.get(stream).is_none() {
            if entry.streams.len() >= l.per_session
                && let Some((_, gone)) = entry.streams.pop_front()
            {
                let bytes = gone.bytes;
                entry.bytes -= bytes;
                stored.total -= bytes;
                stored.streams -= 1;
            }
            let generation = stored.next_generation;
            stored.next_generation += 1;
            // Room for one stream and one event at first (most POST streams carry one
            // answer); both grow as usual past that.
            if entry.streams.capacity() == 0 {
                entry.streams.reserve_exact(1);
            }
            entry.streams.push_back((
                stream,
                StreamEvents {
                    events: VecDeque::with_capacity(1),
                    bytes: 0,
                    generation,
                },
            ));
            entry.highest = entry.highest.max(stream);
            stored.order.push_back((key, stream, generation));
            stored.streams += 1;
        }
        // The session's bytes: its oldest other streams go first.
        while entry.bytes + size > l.session_bytes {
            let Some(old) = entry.streams.iter().map(|(s, _)| *s).find(|s| *s != stream) else {
                break;
            };
            if let Some(bytes) = entry.remove_stream(old) {
                stored.total -= bytes;
                stored.streams -= 1;
            }
        }
        // The stream itself: its oldest events go, for its own bounds and whatever is still
        // over.
        let SessionEvents { streams, bytes, .. } = entry;
        let Some(events) = streams
            .iter_mut()
            .rev()
            .find(|(s, _)| *s == stream)
            .map(|(_, e)| e)
        else {
            return;
        };
        let mut dropped = 0usize;
        while events.events.len() >= l.per_stream
            || events.bytes + size > l.stream_bytes
            || *bytes + size > l.session_bytes
            || stored.total + size > l.total_bytes
        {
            let Some(old) = events.events.pop_front() else {
                break;
            };
            let n = old.data.len() + EVENT_OVERHEAD_BYTES;
            events.bytes -= n;
            *bytes -= n;
            stored.total -= n;
            dropped += 1;
        }
        if dropped > 0 {
            tracing::debug!(
                stream,
                dropped,
                "event store bound reached; oldest events dropped"
            );
        }
        // Appends of one stream can interleave (queued messages get their ids when a GET
        // stream opens): each event goes to its place, so that a replay is in id order.
        let seq = event.id.seq;
        if events.events.back().is_none_or(|b| b.id.seq < seq) {
            events.events.push_back(event);
        } else {
            let at = events.events.partition_point(|e| e.id.seq < seq);
            events.events.insert(at, event);
        }
        events.bytes += size;
        *bytes += size;
        stored.total += size;
        stored.sweep_order();
    }

    fn replay_now(
        &self,
        session: &str,
        after: EventId,
        limit: usize,
    ) -> Result<Vec<StoredEvent>, EventStoreError> {
        let unknown = EventStoreError::UnknownStream {
            stream: after.stream,
        };
        let stored = self
            .stored
            .lock()
            .map_err(|_| EventStoreError::Backend("poisoned lock".into()))?;
        let events = &stored
            .sessions
            .get(session)
            .and_then(|s| s.get(after.stream))
            .ok_or(unknown)?
            .events;
        let from = events.partition_point(|e| e.id.seq <= after.seq);
        Ok(events.range(from..).take(limit).cloned().collect())
    }

    fn remove_now(&self, session: &str) {
        if let Ok(mut stored) = self.stored.lock()
            && let Some(gone) = stored.sessions.remove(session)
        {
            stored.total -= gone.bytes;
            stored.streams -= gone.streams.len();
            stored.sweep_order();
        }
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
        limit: usize,
    ) -> StoreFuture<'a, Result<Vec<StoredEvent>, EventStoreError>> {
        Box::pin(std::future::ready(self.replay_now(session, after, limit)))
    }

    fn remove_session<'a>(&'a self, session: &'a str) -> StoreFuture<'a, ()> {
        self.remove_now(session);
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
        let got = store
            .replay_after("s", EventId::new(1, 0), 64)
            .await
            .unwrap();
        let ids: Vec<_> = got.iter().map(|e| e.id).collect();
        assert_eq!(
            ids,
            vec![EventId::new(1, 3), EventId::new(1, 4), EventId::new(1, 5)]
        );
        let got = store
            .replay_after("s", EventId::new(2, 4), 64)
            .await
            .unwrap();
        assert_eq!(got, vec![ev(2, 5)]);
        // A third stream evicts the oldest one.
        store.append("s", ev(3, 1)).await.unwrap();
        assert!(
            store
                .replay_after("s", EventId::new(1, 0), 64)
                .await
                .is_err()
        );
        assert!(
            store
                .replay_after("other", EventId::new(2, 0), 64)
                .await
                .is_err()
        );
        store.remove_session("s").await;
        assert_eq!(store.session_count(), 0);
        assert_eq!(store.event_count(), 0);
    }

    /// Many streams per session, sessions interleaved, a stream number created again after its
    /// eviction: the per-session bound keeps the newest, eviction in all takes the oldest stream
    /// of any session (by creation), and the eviction queue stays bounded.
    #[tokio::test]
    async fn busy_sessions_keep_their_newest_streams_and_evict_oldest_first() {
        let store =
            InMemoryEventStore::new(8, 4).with_max_total_bytes(20 * (EVENT_OVERHEAD_BYTES + 8));
        for stream in 1..=300u64 {
            for session in ["a", "b"] {
                store.append(session, ev(stream, 1)).await.unwrap();
            }
            // The standalone stream is written to between the others.
            store.append("a", ev(0, stream)).await.unwrap();
        }
        // "a" holds stream 0 and its three newest others; "b" its four newest.
        for stream in [0, 298, 299, 300] {
            assert!(kept(&store, "a", stream).await, "a/{stream}");
        }
        assert!(!kept(&store, "a", 297).await);
        for stream in 297..=300 {
            assert!(kept(&store, "b", stream).await, "b/{stream}");
        }
        assert!(!kept(&store, "b", 1).await);
        let order_len = store.stored.lock().unwrap().order.len();
        assert!(
            order_len <= 2 * 8 + 64,
            "{order_len} eviction entries for 8 streams"
        );
    }

    /// Eviction in all takes the oldest stream by creation, whatever its session, never the one
    /// written to, and a stream number created again after its eviction counts as new.
    #[tokio::test]
    async fn eviction_in_all_goes_by_creation_across_sessions() {
        let event = EVENT_OVERHEAD_BYTES + 8;
        let store = InMemoryEventStore::new(8, 256).with_max_total_bytes(6 * event);
        for stream in 1..=3 {
            store.append("a", sized(stream, 1, 8)).await.unwrap();
            store.append("b", sized(stream, 1, 8)).await.unwrap();
        }
        store.append("c", sized(1, 1, 8)).await.unwrap();
        assert!(!kept(&store, "a", 1).await, "the oldest stream went");
        assert!(kept(&store, "b", 1).await);
        store.append("b", sized(1, 2, 8)).await.unwrap();
        assert!(kept(&store, "b", 1).await, "never the stream written to");
        assert!(!kept(&store, "a", 2).await);
        store.append("a", sized(1, 5, 8)).await.unwrap();
        assert!(kept(&store, "a", 1).await, "created again");
        assert!(!kept(&store, "b", 1).await, "still the oldest by creation");
        assert!(kept(&store, "b", 2).await);
        // Two events went with "b" 1: room for one more, then "b" 2 is the oldest.
        store.append("c", sized(2, 1, 8)).await.unwrap();
        assert!(kept(&store, "b", 2).await);
        store.append("c", sized(3, 1, 8)).await.unwrap();
        assert!(!kept(&store, "b", 2).await);
        assert!(kept(&store, "a", 3).await && kept(&store, "a", 1).await);
        assert_eq!(store.byte_count(), 6 * event);
    }

    /// Whether `session` still keeps stream `stream` (a replay of it is not refused).
    async fn kept(store: &InMemoryEventStore, session: &str, stream: u64) -> bool {
        store
            .replay_after(session, EventId::new(stream, 0), 64)
            .await
            .is_ok()
    }

    fn sized(stream: u64, seq: u64, data_bytes: usize) -> StoredEvent {
        StoredEvent {
            id: EventId::new(stream, seq),
            data: Arc::from("x".repeat(data_bytes)),
        }
    }

    fn seqs(events: &[StoredEvent]) -> Vec<u64> {
        events.iter().map(|e| e.id.seq).collect()
    }

    #[tokio::test]
    async fn a_replay_is_read_a_page_at_a_time_in_id_order() {
        let store = InMemoryEventStore::default();
        // Out of order, as queued messages can be.
        for seq in [1, 2, 5, 3, 4, 6, 7] {
            store.append("s", ev(0, seq)).await.unwrap();
        }
        let page = store
            .replay_after("s", EventId::new(0, 0), 3)
            .await
            .unwrap();
        assert_eq!(seqs(&page), [1, 2, 3]);
        let page = store
            .replay_after("s", EventId::new(0, 3), 3)
            .await
            .unwrap();
        assert_eq!(seqs(&page), [4, 5, 6]);
        let page = store
            .replay_after("s", EventId::new(0, 6), 3)
            .await
            .unwrap();
        assert_eq!(seqs(&page), [7]);
        let page = store
            .replay_after("s", EventId::new(0, 7), 3)
            .await
            .unwrap();
        assert!(page.is_empty());
    }

    #[tokio::test]
    async fn bytes_are_bounded_per_stream_per_session_and_in_all() {
        let o = EVENT_OVERHEAD_BYTES;
        // Per stream: 3 events of 100 bytes fit in 3 * (100 + o), a fourth pushes the first out.
        let store = InMemoryEventStore::default().with_max_stream_bytes(3 * (100 + o));
        for seq in 1..=4 {
            store.append("s", sized(1, seq, 100)).await.unwrap();
        }
        let kept = store
            .replay_after("s", EventId::new(1, 0), 64)
            .await
            .unwrap();
        assert_eq!(seqs(&kept), [2, 3, 4]);
        assert_eq!(store.byte_count(), 3 * (100 + o));
        // An event over a bound is not kept at all, and nothing is evicted for it.
        store.append("s", sized(1, 5, 1000)).await.unwrap();
        assert_eq!(store.event_count(), 3);

        // Per session: the session's oldest other streams go first.
        let store = InMemoryEventStore::default().with_max_session_bytes(4 * (100 + o));
        for stream in 1..=3 {
            store.append("s", sized(stream, 1, 100)).await.unwrap();
            store.append("s", sized(stream, 2, 100)).await.unwrap();
        }
        assert!(
            store
                .replay_after("s", EventId::new(1, 0), 64)
                .await
                .is_err()
        );
        assert_eq!(store.event_count(), 4);
        assert_eq!(store.byte_count(), 4 * (100 + o));

        // In all: the oldest streams of any session go first.
        let store = InMemoryEventStore::default().with_max_total_bytes(4 * (100 + o));
        store.append("a", sized(1, 1, 100)).await.unwrap();
        store.append("b", sized(1, 1, 100)).await.unwrap();
        store.append("a", sized(2, 1, 100)).await.unwrap();
        store.append("b", sized(2, 1, 100)).await.unwrap();
        store.append("c", sized(1, 1, 100)).await.unwrap();
        assert!(
            store
                .replay_after("a", EventId::new(1, 0), 64)
                .await
                .is_err()
        );
        assert_eq!(store.event_count(), 4);
        store.append("c", sized(1, 2, 100)).await.unwrap();
        assert!(
            store
                .replay_after("b", EventId::new(1, 0), 64)
                .await
                .is_err()
        );
        // One stream alone over the bound in all: its own oldest events go.
        for seq in 3..=8 {
            store.append("c", sized(1, seq, 100)).await.unwrap();
        }
        let kept = store
            .replay_after("c", EventId::new(1, 0), 64)
            .await
            .unwrap();
        assert_eq!(seqs(&kept), [5, 6, 7, 8]);
        assert_eq!(store.byte_count(), 4 * (100 + o));
        assert_eq!(store.session_count(), 1, "emptied sessions are forgotten");
        store.remove_session("c").await;
        assert_eq!((store.byte_count(), store.event_count()), (0, 0));
    }

    #[tokio::test]
    async fn eviction_entries_of_ended_sessions_do_not_pile_up() {
        let store = InMemoryEventStore::default();
        for n in 0..10_000u64 {
            let session = format!("s{n}");
            store.append(&session, ev(1, 1)).await.unwrap();
            store.remove_session(&session).await;
        }
        let order = store.stored.lock().unwrap().order.len();
        assert!(order <= 64 + 2, "{order} entries left");
    }
}
