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
use std::time::Duration;

use axum::body::Body;
use bytes::{BufMut, Bytes, BytesMut};
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

/// Encodes one event: `id:` then the data, one `data:` line per line of text.
pub(crate) fn encode(id: EventId, data: &str) -> Bytes {
    let mut b = BytesMut::with_capacity(data.len() + 32);
    b.put_slice(b"id: ");
    b.put_slice(id.to_string().as_bytes());
    b.put_slice(b"\n");
    // Frames are compact JSON without raw newlines; split anyway so that no input can break
    // the framing.
    for line in data.split(['\n', '\r']) {
        b.put_slice(b"data: ");
        b.put_slice(line.as_bytes());
        b.put_slice(b"\n");
    }
    b.put_slice(b"\n");
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

/// Everything one SSE connection's body needs.
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

impl SseBody {
    /// The next body frame: everything that is ready now, in order, as one write.
    async fn next(&mut self) -> Option<Bytes> {
        let first = match self.preface.pop_front() {
            Some(b) => b,
            None => self.next_live().await?,
        };
        let mut gathered: Option<BytesMut> = None;
        while gathered.as_ref().map_or(first.len(), BytesMut::len) < COALESCE_LIMIT {
            let Some(more) = self.preface.pop_front().or_else(|| self.try_live()) else {
                break;
            };
            gathered
                .get_or_insert_with(|| BytesMut::from(&first[..]))
                .extend_from_slice(&more);
        }
        Some(gathered.map_or(first, BytesMut::freeze))
    }

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

    /// Waits for the next live event, a keep-alive, or the polling close.
    async fn next_live(&mut self) -> Option<Bytes> {
        if let Some(b) = self.try_live() {
            return Some(b);
        }
        let rx = self.live.as_mut()?;
        loop {
            let keep_alive = self.keep_alive;
            let silence = async move {
                match keep_alive {
                    Some(d) => tokio::time::sleep(d).await,
                    None => std::future::pending().await,
                }
            };
            let close_at = self.close_at;
            let close = async move {
                match close_at {
                    Some(t) => tokio::time::sleep_until(t).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                m = rx.recv() => match m {
                    Some(l) if l.seq <= self.floor => continue,
                    Some(l) => return Some(l.bytes),
                    None => return None,
                },
                _ = close => {
                    tracing::debug!("SSE stream closed early (polling); the client resumes with Last-Event-ID");
                    self.live = None;
                    return None;
                }
                _ = silence => return Some(Bytes::from_static(KEEP_ALIVE)),
            }
        }
    }

    /// The HTTP body.
    pub(crate) fn into_body(self) -> Body {
        let stream = futures::stream::unfold(self, |mut s| async move {
            let item = s.next().await?;
            Some((Ok::<_, Infallible>(item), s))
        });
        Body::from_stream(stream)
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
