//! Server-Sent Events (server side): event encoding and the response body of one SSE connection.
//!
//! A connection's body is a *preface* (the priming event, replayed events, buffered messages)
//! followed by live events from the session's router. Live events already sent in the preface
//! (a replay that raced with the router) are skipped by sequence number. After
//! `keep_alive` of silence a comment line is sent; with polling on, the body ends at `close_at`.
//!
//! The priming event is written by hand rather than with `axum::response::sse::Event`, whose
//! encoder emits no `data:` line for empty data: SPEC-NOTES §6.2 asks for an id *and* an empty
//! `data` line.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use bytes::{Bytes, BytesMut};
use http_body::Frame;
use switchboard_transport::codec;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::event_store::EventId;
use crate::session::ConnGuard;

/// The comment sent after a stretch of silence.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// One live event for a connection: its position on the stream and its encoded bytes.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) seq: u64,
    pub(crate) bytes: Bytes,
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
    /// Live events from the router; `None` once the stream has nothing more to send.
    pub(crate) live: Option<mpsc::Receiver<Live>>,
    /// Live events at or below this sequence number were already sent in the preface.
    pub(crate) floor: u64,
    /// Detaches the connection from its stream when the body is dropped.
    pub(crate) _guard: Option<ConnGuard>,
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

/// [`SseBody`] with its timers: what `into_body` hands to the HTTP server.
struct SseStream {
    inner: SseBody,
    timers: Timers,
}

impl SseBody {
    /// A live event that is ready now, if any. Notices a finished stream.
    fn try_live(&mut self) -> Option<Bytes> {
        let rx = self.live.as_mut()?;
        loop {
            match rx.try_recv() {
                Ok(l) if l.seq <= self.floor => continue,
                Ok(l) => return Some(l.bytes),
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
            && self
                .live
                .as_ref()
                .is_some_and(|rx| rx.is_closed() && rx.is_empty())
        {
            self.live = None;
        }
        Some(gathered.map_or(first, BytesMut::freeze))
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
        if let Some(b) = body.gather(None) {
            this.timers.silence = None;
            return Poll::Ready(Some(Ok(Frame::data(b))));
        }
        loop {
            let Some(rx) = body.live.as_mut() else {
                return Poll::Ready(None);
            };
            match rx.poll_recv(cx) {
                Poll::Ready(Some(l)) if l.seq <= body.floor => continue,
                Poll::Ready(Some(l)) => {
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
        if let Some(at) = body.close_at {
            let close = this
                .timers
                .close
                .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
            if close.as_mut().poll(cx).is_ready() {
                tracing::debug!(
                    "SSE stream closed early (polling); the client resumes with Last-Event-ID"
                );
                body.live = None;
                return Poll::Ready(None);
            }
        }
        if let Some(every) = body.keep_alive {
            let silence = this
                .timers
                .silence
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(every)));
            if silence.as_mut().poll(cx).is_ready() {
                this.timers.silence = None;
                return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(KEEP_ALIVE)))));
            }
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.preface.is_empty() && self.inner.live.is_none()
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
