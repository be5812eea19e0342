//! Server-Sent Events (server side): event encoding and the response body of one SSE connection.
//!
//! A connection's body is a *preface* (the priming event, the first page of a replay, buffered
//! messages), then the rest of a replay page by page (each fetched from the event store once
//! the previous one is written, so a replay never holds more than a page), then live events
//! from the session's router. Live events already sent in the replay (a replay that raced with
//! the router) are skipped by sequence number. After `keep_alive` of silence a comment line is
//! sent; with polling on, the body ends at `close_at`. Every live event taken is counted off
//! the connection's [`Backlog`], so the router can bound what waits for a slow client.
//!
//! The priming event is written by hand rather than with `axum::response::sse::Event`, whose
//! encoder emits no `data:` line for empty data: SPEC-NOTES §6.2 asks for an id *and* an empty
//! `data` line.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use bytes::{Bytes, BytesMut};
use http_body::Frame;
use switchboard_transport::codec;
use tokio::sync::{OwnedSemaphorePermit, mpsc};
use tokio::time::Instant;

use crate::conn::ConnRx;
use crate::event_store::{EventId, EventStore, EventStoreError, StoreFuture, StoredEvent};

/// Events fetched from the store at a time by a replay.
pub(crate) const REPLAY_PAGE: usize = 64;

/// The comment sent after a stretch of silence.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// The rest of a replay: the pages after `after`, fetched one at a time. It holds its place
/// among the replays running at once until it has caught up.
pub(crate) struct Replay {
    store: Arc<dyn EventStore>,
    session: Arc<str>,
    after: EventId,
    fetch: Option<StoreFuture<'static, Result<Vec<StoredEvent>, EventStoreError>>>,
    _permit: OwnedSemaphorePermit,
}

impl Replay {
    /// The replay of `session`'s events after `after`.
    pub(crate) fn new(
        store: Arc<dyn EventStore>,
        session: Arc<str>,
        after: EventId,
        permit: OwnedSemaphorePermit,
    ) -> Self {
        Replay {
            store,
            session,
            after,
            fetch: None,
            _permit: permit,
        }
    }
}

/// Encodes one event: `id:` then the data, one `data:` line per line of text
/// ([`switchboard_transport::codec::sse::encode`], the encoder the parser is tested against).
pub(crate) fn encode(id: EventId, data: &str) -> Bytes {
    let mut b = BytesMut::new();
    codec::sse::encode(id, data, &mut b);
    b.freeze()
}

/// The priming event: an id, the `retry:` field and an empty `data:` line.
pub(crate) fn priming(id: EventId, retry_ms: u64) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"))
}

/// A `retry:`-only event, sent first on a resumed stream.
pub(crate) fn retry_only(retry_ms: u64) -> Bytes {
    Bytes::from(format!("retry: {retry_ms}\n\n"))
}

/// Everything one SSE connection's body needs. It is the response body itself
/// ([`http_body::Body`]): each frame carries everything ready at that moment, and the body says
/// it has ended as soon as its last event is out, so that HTTP/1.1 writes the last chunk and the
/// end of the chunked body together (one write, one segment) instead of in two.
pub(crate) struct SseBody {
    /// Sent first, in order.
    pub(crate) preface: VecDeque<Bytes>,
    /// The rest of a replay, sent before any live event.
    pub(crate) replay: Option<Replay>,
    /// Live events from the router; `None` once the stream has nothing more to send.
    pub(crate) live: Option<ConnRx>,
    /// Live events at or below this sequence number were already sent in the preface.
    pub(crate) floor: u64,
    /// Dropped with the body: the session's guard, which detaches the connection from its
    /// stream.
    pub(crate) _guard: Option<Box<dyn Send + Sync>>,
    /// Silence after which a comment is sent.
    pub(crate) keep_alive: Option<Duration>,
    /// SEP-1699 polling: the body ends at this instant.
    pub(crate) close_at: Option<Instant>,
}

/// The most bytes gathered into one body frame when several events are ready at once.
const COALESCE_LIMIT: usize = 64 * 1024;

/// The timers of a waiting body, made on first use.
struct Timers {
    silence: Option<Pin<Box<tokio::time::Sleep>>>,
    close: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Timers {
    /// Nothing to send now: the polling close, or a keep-alive comment after the silence.
    fn poll(
        &mut self,
        body: &mut SseBody,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if let Some(at) = body.close_at {
            let close = self
                .close
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            if close.as_mut().poll(cx).is_ready() {
                tracing::debug!(
                    "SSE stream closed early (polling); the client resumes with Last-Event-ID"
                );
                body.live = None;
                body.replay = None;
                return Poll::Ready(None);
            }
        }
        if let Some(every) = body.keep_alive {
            let silence = self
                .silence
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(every)));
            if silence.as_mut().poll(cx).is_ready() {
                self.silence = None;
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))));
            }
        }
        Poll::Pending
    }
}

/// [`SseBody`] with its timers: what `into_body` hands to the HTTP server.
struct SseStream {
    inner: SseBody,
    timers: Timers,
}

impl SseBody {
    /// A live event that is ready now, if any (none while a replay is under way). Notices a
    /// finished stream.
    fn try_live(&mut self) -> Option<Bytes> {
        if self.replay.is_some() {
            return None;
        }
        let live = self.live.as_mut()?;
        loop {
            match live.rx.try_recv() {
                Ok(l) => {
                    live.took(&l);
                    if l.seq > self.floor {
                        return Some(l.bytes);
                    }
                }
                Err(mpsc::error::TryRecvError::Empty) => return None,
                Err(mpsc::error::TryRecvError::Disconnected) => {
                    self.live = None;
                    return None;
                }
            }
        }
    }

    /// Everything ready now (preface first, then live events), as one buffer.
    fn gather(&mut self, first: Option<Bytes>) -> Option<Bytes> {
        let first = first
            .or_else(|| self.preface.pop_front())
            .or_else(|| self.try_live())?;
        let mut gathered: Option<BytesMut> = None;
        while gathered.as_ref().map_or(first.len(), BytesMut::len) < COALESCE_LIMIT {
            let Some(more) = self.preface.pop_front().or_else(|| self.try_live()) else {
                break;
            };
            gathered
                .get_or_insert_with(|| BytesMut::from(&first[..]))
                .extend_from_slice(&more);
        }
        // One more look, so that a stream whose last event is in hand ends with it.
        if self.preface.is_empty()
            && self.replay.is_none()
            && self
                .live
                .as_ref()
                .is_some_and(|l| l.rx.is_closed() && l.rx.is_empty())
        {
            self.live = None;
        }
        Some(gathered.map_or(first, BytesMut::freeze))
    }

    /// Fetches the replay's next page into the preface. `Ready` once the page is in (or the
    /// replay is over); a store that fails ends the stream, which the client resumes.
    fn poll_replay(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(replay) = self.replay.as_mut() else {
            return Poll::Ready(());
        };
        let fetch = replay.fetch.get_or_insert_with(|| {
            let (store, session, after) =
                (replay.store.clone(), replay.session.clone(), replay.after);
            Box::pin(async move { store.replay_after(&session, after, REPLAY_PAGE).await })
        });
        let Poll::Ready(page) = fetch.as_mut().poll(cx) else {
            return Poll::Pending;
        };
        replay.fetch = None;
        match page {
            Ok(events) => {
                let done = events.len() < REPLAY_PAGE;
                if let Some(last) = events.last() {
                    replay.after = last.id;
                    self.floor = self.floor.max(last.id.seq);
                }
                self.preface
                    .extend(events.iter().map(|e| encode(e.id, &e.data)));
                if done {
                    self.replay = None;
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "replay cut short; the client resumes");
                self.replay = None;
                self.live = None;
            }
        }
        Poll::Ready(())
    }

    /// The HTTP body.
    pub(crate) fn into_body(self) -> Body {
        Body::new(SseStream {
            inner: self,
            timers: Timers {
                silence: None,
                close: None,
            },
        })
    }
}

impl HttpBody for SseStream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let body = &mut this.inner;
        loop {
            if let Some(b) = body.gather(None) {
                this.timers.silence = None;
                return Poll::Ready(Some(Ok(Frame::data(b))));
            }
            if body.replay.is_none() {
                break;
            }
            if body.poll_replay(cx).is_pending() {
                return this.timers.poll(&mut this.inner, cx);
            }
        }
        loop {
            let Some(live) = body.live.as_mut() else {
                return Poll::Ready(None);
            };
            match live.rx.poll_recv(cx) {
                Poll::Ready(Some(l)) => {
                    live.took(&l);
                    if l.seq <= body.floor {
                        continue;
                    }
                    this.timers.silence = None;
                    let b = body.gather(Some(l.bytes));
                    return Poll::Ready(b.map(|b| Ok(Frame::data(b))));
                }
                Poll::Ready(None) => {
                    body.live = None;
                    return Poll::Ready(None);
                }
                Poll::Pending => break,
            }
        }
        this.timers.poll(&mut this.inner, cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.preface.is_empty() && self.inner.replay.is_none() && self.inner.live.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priming_has_id_retry_and_empty_data() {
        assert_eq!(
            &priming(EventId::new(3, 0), 1000)[..],
            b"id: 3-0\nretry: 1000\ndata: \n\n"
        );
        assert_eq!(
            &encode(EventId::new(3, 1), "{\"a\":1}")[..],
            b"id: 3-1\ndata: {\"a\":1}\n\n"
        );
        assert_eq!(
            &encode(EventId::new(0, 2), "a\nb")[..],
            b"id: 0-2\ndata: a\ndata: b\n\n"
        );
    }
}
