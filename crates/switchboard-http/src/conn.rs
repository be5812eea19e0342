//! One live SSE connection's queue, between a session's routing table and the connection's
//! response body: the routing holds the sending end ([`Conn`]), the body the receiving end
//! ([`ConnRx`]). The queue is bounded in events (the channel) and in bytes (the [`Backlog`],
//! which the body counts down as it takes events); a connection whose body takes nothing for
//! the stall timeout is dropped by the routing ([`Slow`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// One live event for a connection: its position on the stream and its encoded bytes.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    pub(crate) seq: u64,
    pub(crate) bytes: Bytes,
    /// The stream's final event (the answer that ends it).
    pub(crate) last: bool,
}

/// What is queued for one connection and not yet taken by its body, shared by the router (which
/// adds) and the body (which takes).
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    /// Bytes queued.
    pub(crate) bytes: AtomicUsize,
    /// Events taken so far (the router watches it move).
    pub(crate) taken: AtomicU64,
}

/// The body's end of a connection's queue.
#[derive(Debug)]
pub(crate) struct ConnRx {
    pub(crate) rx: mpsc::Receiver<Live>,
    pub(crate) backlog: Arc<Backlog>,
}

impl ConnRx {
    /// Notes one event taken off the queue.
    pub(crate) fn took(&self, live: &Live) {
        self.backlog
            .bytes
            .fetch_sub(live.bytes.len(), Ordering::Relaxed);
        self.backlog.taken.fetch_add(1, Ordering::Relaxed);
    }
}

/// A live SSE connection attached to a stream.
///
/// Its queue is bounded in events (the channel) and in bytes (the [`Backlog`], which the
/// response body decrements as it takes events). A connection whose body takes none of its
/// queued events for the stall timeout is *stalled*: its client does not read.
pub(crate) struct Conn {
    pub(crate) id: u64,
    tx: mpsc::Sender<Live>,
    backlog: Arc<Backlog>,
    /// The body's `taken` count when it was last seen to move, and since when it has not.
    seen: u64,
    since: Option<Instant>,
}

impl Conn {
    /// A connection numbered `id` and the body's end of its queue, which holds at most `queue`
    /// events.
    pub(crate) fn open(id: u64, queue: usize) -> (Conn, ConnRx) {
        let (tx, rx) = mpsc::channel(queue);
        let backlog = Arc::new(Backlog::default());
        let conn = Conn {
            id,
            tx,
            backlog: backlog.clone(),
            seen: 0,
            since: None,
        };
        (conn, ConnRx { rx, backlog })
    }

    /// Whether the body still takes events (its client is connected).
    pub(crate) fn is_live(&self) -> bool {
        !self.tx.is_closed()
    }

    /// Whether events have waited for this connection's client longer than `stall`.
    pub(crate) fn stalled(&mut self, now: Instant, stall: Option<Duration>) -> bool {
        let Some(stall) = stall else {
            return false;
        };
        if self.backlog.bytes.load(Ordering::Relaxed) == 0 {
            self.since = None;
            return false;
        }
        let taken = self.backlog.taken.load(Ordering::Relaxed);
        match self.since {
            Some(since) if taken == self.seen => now.duration_since(since) >= stall,
            _ => {
                self.seen = taken;
                self.since = Some(now);
                false
            }
        }
    }

    /// Queues one event, or says why the connection must be dropped.
    pub(crate) fn offer(
        &mut self,
        live: Live,
        max_bytes: usize,
        stall: Option<Duration>,
    ) -> Result<(), Slow> {
        let len = live.bytes.len();
        let queued = self.backlog.bytes.load(Ordering::Relaxed);
        if queued > 0 {
            // An event larger than the bound still goes to a connection with nothing queued.
            if queued.saturating_add(len) > max_bytes {
                return Err(Slow::TooSlow(
                    "bytes queued for the connection at the bound",
                ));
            }
            if self.stalled(Instant::now(), stall) {
                return Err(Slow::TooSlow(
                    "the client took no event within the stall timeout",
                ));
            }
        } else {
            self.since = None;
        }
        // Counted before it is sent: the body may take it at once.
        self.backlog.bytes.fetch_add(len, Ordering::Relaxed);
        match self.tx.try_send(live) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.backlog.bytes.fetch_sub(len, Ordering::Relaxed);
                Err(match e {
                    mpsc::error::TrySendError::Full(_) => {
                        Slow::TooSlow("events queued for the connection at the bound")
                    }
                    mpsc::error::TrySendError::Closed(_) => Slow::Gone,
                })
            }
        }
    }
}

/// Why an event could not be queued for a connection.
pub(crate) enum Slow {
    /// The client went away.
    Gone,
    /// The client does not keep up (reason for the log).
    TooSlow(&'static str),
}
