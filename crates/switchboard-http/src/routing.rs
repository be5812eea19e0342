//! Which stream each outbound frame travels on (server side): the session's routing table.
//!
//! Every POST that carries requests opens a *target*: an SSE stream (numbered from 1) or, in
//! JSON-only mode, a one-shot JSON answer. The table maps each in-flight request id to its
//! target. Stream 0 is the standalone GET stream.
//!
//! | outbound frame | goes to |
//! |---|---|
//! | response with id | the target that registered the id; the stream ends with its last response |
//! | batch array (no id) | the target of the ids inside it (read with `Frame::decode`, never params) |
//! | error without id | the oldest batch POST still waiting (single bodies that yield such errors are refused by the endpoint before they reach the engine) |
//! | request / notification related to a request on an open SSE target | that stream, before the response |
//! | any other request / notification | the standalone stream, or a bounded queue until it opens |
//!
//! A message goes to exactly one stream (`[HT-15]`); responses never go to the standalone stream
//! (`[HT-14]`). Routing is split in two phases so that the event store sees every event before a
//! live connection does: [`Routing::plan`] assigns the stream and sequence number, the caller
//! appends the event to the store, then [`Routing::deliver`] hands it to the live connection.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use switchboard_jsonrpc::OutboundFrame;
use switchboard_types::{Frame, Message, MessageKind, RequestId};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::config::SessionBounds;
use crate::conn::{Conn, ConnRx, Live, Slow};
use crate::event_store::EventId;

/// The ids of the responses an id-less answer carries (a batch's array; none for anything
/// else), read without the routing lock: the array can be long.
pub(crate) fn answered_ids(frame: &OutboundFrame) -> Vec<RequestId> {
    let answer = matches!(frame.kind, MessageKind::Result | MessageKind::Error);
    if !answer || frame.id.is_some() {
        return Vec::new();
    }
    match Frame::decode(&frame.text) {
        Ok(Frame::Batch(items)) => items
            .into_iter()
            .filter_map(|m| match m {
                Ok(Message::Response(r)) => r.id,
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The standalone GET stream's number.
pub(crate) const STANDALONE: u64 = 0;

enum Target {
    Sse {
        ids: Vec<RequestId>,
        seq: u64,
        conn: Option<Conn>,
    },
    Json {
        ids: Vec<RequestId>,
        tx: Option<oneshot::Sender<String>>,
    },
}

impl Target {
    /// Whether a client is still attached (an SSE connection, or a waiting JSON POST).
    fn is_live(&self) -> bool {
        match self {
            Target::Sse { conn, .. } => conn.as_ref().is_some_and(Conn::is_live),
            Target::Json { tx, .. } => tx.as_ref().is_some_and(|t| !t.is_closed()),
        }
    }

    fn ids_mut(&mut self) -> &mut Vec<RequestId> {
        match self {
            Target::Sse { ids, .. } | Target::Json { ids, .. } => ids,
        }
    }
}

/// What to do with one outbound frame.
#[derive(Debug)]
pub(crate) enum Plan {
    /// Nothing can take it (reason for the log).
    Drop(&'static str),
    /// No GET stream is open: kept (without an id) until one opens.
    Queued,
    /// The JSON answer of a POST in JSON-only mode.
    Json(oneshot::Sender<String>),
    /// An SSE event; `last` ends its stream.
    Sse {
        /// The event id (stream and sequence).
        id: EventId,
        /// Whether this is the stream's final event.
        last: bool,
    },
}

/// A POST's registration.
#[derive(Debug)]
pub(crate) enum Registration {
    /// An SSE stream, already attached to the POST's connection.
    Sse { stream: u64, conn: u64, rx: ConnRx },
    /// A JSON answer.
    Json {
        stream: u64,
        rx: oneshot::Receiver<String>,
    },
}

/// Why a registration or an attach failed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RouteError {
    /// The session has ended.
    Closed,
    /// This request id is already in flight on this session.
    Duplicate(RequestId),
    /// A standalone GET stream is already open (409).
    Conflict,
    /// The bound on open POST streams is reached and every one has a client attached.
    TooManyStreams,
}

/// A fresh standalone GET stream.
#[derive(Debug)]
pub(crate) struct StandaloneOpen {
    pub(crate) conn: u64,
    pub(crate) rx: ConnRx,
    /// The id of the priming event (never stored).
    pub(crate) priming: EventId,
    /// Messages queued while no stream was open, with their new ids.
    pub(crate) queued: Vec<(EventId, String)>,
}

/// The result of attaching to an existing stream with `Last-Event-ID`.
#[derive(Debug)]
pub(crate) enum Attach {
    /// The stream is open: replay, then the queued messages (ids just given), then continue
    /// with this connection.
    Live {
        conn: u64,
        rx: ConnRx,
        queued: Vec<(EventId, String)>,
    },
    /// The stream has ended: replay only.
    Ended,
}

/// A session's routing table.
pub(crate) struct Routing {
    by_request: HashMap<RequestId, u64>,
    targets: HashMap<u64, Target>,
    /// Batch POSTs that may be answered by an error without id, oldest first.
    idless: VecDeque<u64>,
    standalone_seq: u64,
    standalone_conn: Option<Conn>,
    /// Unsolicited messages kept while no GET stream is open (bounded, oldest dropped); they get
    /// their event ids when a stream opens.
    undelivered: VecDeque<String>,
    /// The bytes of `undelivered`.
    undelivered_bytes: usize,
    unsolicited_cap: usize,
    unsolicited_bytes: usize,
    stream_queue: usize,
    stream_queue_bytes: usize,
    stall: Option<Duration>,
    max_targets: usize,
    next_stream: u64,
    next_conn: u64,
    closed: bool,
    /// Connections resuming a stream that had ended with nothing left to replay: held open
    /// (keep-alives only) until the client leaves or the session ends, as the official
    /// TypeScript server does, because a client that resumes such a stream and sees it end
    /// at once resumes again without a `Last-Event-ID` (the TypeScript SDK does, after an
    /// error response). Bounded: beyond [`MAX_PARKED`], the oldest is ended.
    parked: VecDeque<Conn>,
}

/// The most connections a session holds parked (see `Routing::parked`).
pub(crate) const MAX_PARKED: usize = 8;

impl Routing {
    /// A table whose streams are numbered from `base + 1` and whose standalone events from
    /// `base + 1` (`base` is 0 for a new session).
    pub(crate) fn new(bounds: &SessionBounds, base: u64) -> Self {
        Routing {
            by_request: HashMap::new(),
            targets: HashMap::new(),
            idless: VecDeque::new(),
            standalone_seq: base,
            standalone_conn: None,
            undelivered: VecDeque::new(),
            undelivered_bytes: 0,
            unsolicited_cap: bounds.unsolicited_queue.max(1),
            unsolicited_bytes: bounds.unsolicited_queue_bytes.max(1),
            stream_queue: bounds.stream_queue.max(1),
            stream_queue_bytes: bounds.stream_queue_bytes.max(1),
            stall: bounds.stream_stall_timeout,
            max_targets: bounds.max_open_streams.max(1),
            next_stream: STANDALONE + 1 + base,
            next_conn: 1,
            closed: false,
            parked: VecDeque::new(),
        }
    }

    fn conn(&mut self) -> (Conn, ConnRx) {
        let id = self.next_conn;
        self.next_conn += 1;
        Conn::open(id, self.stream_queue)
    }

    /// Opens a target for a POST carrying `ids` (and, for a batch, possibly id-less answers).
    /// The ids are distinct (the endpoint refuses a batch repeating one before it takes the
    /// lock); here each is looked up once among the requests in flight.
    pub(crate) fn register(
        &mut self,
        ids: Vec<RequestId>,
        json: bool,
        batch: bool,
    ) -> Result<Registration, RouteError> {
        if self.closed {
            return Err(RouteError::Closed);
        }
        if let Some(id) = ids.iter().find(|id| self.by_request.contains_key(*id)) {
            return Err(RouteError::Duplicate(id.clone()));
        }
        if self.targets.len() >= self.max_targets {
            // A request that was cancelled is never answered: its target waits for nobody once
            // the client has gone. Under pressure, the oldest such target goes first.
            let abandoned = self
                .targets
                .iter()
                .filter(|(_, t)| !t.is_live())
                .map(|(k, _)| *k)
                .min();
            match abandoned {
                Some(old) => {
                    crate::throttle::warn_throttled!(
                        limit = self.max_targets,
                        "open POST streams at the bound: the oldest one without a client is dropped"
                    );
                    self.unregister(old);
                }
                None => return Err(RouteError::TooManyStreams),
            }
        }
        let stream = self.next_stream;
        self.next_stream += 1;
        for id in &ids {
            self.by_request.insert(id.clone(), stream);
        }
        if batch {
            self.idless.push_back(stream);
        }
        if json {
            let (tx, rx) = oneshot::channel();
            let target = Target::Json { ids, tx: Some(tx) };
            self.targets.insert(stream, target);
            return Ok(Registration::Json { stream, rx });
        }
        let (conn, rx) = self.conn();
        let id = conn.id;
        let target = Target::Sse {
            ids,
            seq: 0,
            conn: Some(conn),
        };
        self.targets.insert(stream, target);
        Ok(Registration::Sse {
            stream,
            conn: id,
            rx,
        })
    }

    /// Opens, under its own number, a stream that another node opened and could not finish
    /// (it died): its requests `ids` run again here, and their events continue its sequence
    /// after `seq`. No connection is attached yet ([`Routing::attach`] attaches the client's).
    pub(crate) fn adopt(
        &mut self,
        stream: u64,
        ids: Vec<RequestId>,
        seq: u64,
    ) -> Result<(), RouteError> {
        if self.closed {
            return Err(RouteError::Closed);
        }
        if let Some(id) = ids.iter().find(|id| self.by_request.contains_key(*id)) {
            return Err(RouteError::Duplicate(id.clone()));
        }
        if stream == STANDALONE || self.targets.contains_key(&stream) {
            return Err(RouteError::Conflict);
        }
        if self.targets.len() >= self.max_targets {
            return Err(RouteError::TooManyStreams);
        }
        for id in &ids {
            self.by_request.insert(id.clone(), stream);
        }
        self.targets.insert(
            stream,
            Target::Sse {
                ids,
                seq,
                conn: None,
            },
        );
        Ok(())
    }

    /// Forgets a target whose frame never reached the engine.
    pub(crate) fn unregister(&mut self, stream: u64) {
        if let Some(mut t) = self.targets.remove(&stream) {
            for id in t.ids_mut().drain(..) {
                self.by_request.remove(&id);
            }
        }
        self.idless.retain(|s| *s != stream);
        self.release_if_idle();
    }

    /// Phase 1: decides where `frame` goes and gives it its event id.
    #[cfg(test)]
    pub(crate) fn plan(&mut self, frame: &OutboundFrame) -> Plan {
        let answered = answered_ids(frame);
        self.plan_with(frame, &answered)
    }

    /// Phase 1, with the ids an id-less answer (a batch's) carries, read from its text by
    /// [`answered_ids`] before the table is locked.
    pub(crate) fn plan_with(&mut self, frame: &OutboundFrame, answered: &[RequestId]) -> Plan {
        if self.closed {
            return Plan::Drop("session closed");
        }
        match frame.kind {
            MessageKind::Result | MessageKind::Error => self.plan_response(frame, answered),
            MessageKind::Request | MessageKind::Notification => {
                if let Some(stream) = frame.related.as_ref().and_then(|r| self.by_request.get(r))
                    && let Some(Target::Sse { seq, .. }) = self.targets.get_mut(stream)
                {
                    *seq += 1;
                    return Plan::Sse {
                        id: EventId::new(*stream, *seq),
                        last: false,
                    };
                }
                if !self.standalone_conn.as_ref().is_some_and(Conn::is_live) {
                    self.queue_unsolicited(frame.text.clone());
                    return Plan::Queued;
                }
                self.standalone_seq += 1;
                Plan::Sse {
                    id: EventId::new(STANDALONE, self.standalone_seq),
                    last: false,
                }
            }
        }
    }

    fn plan_response(&mut self, frame: &OutboundFrame, answered: &[RequestId]) -> Plan {
        let stream = match &frame.id {
            Some(id) => match self.by_request.remove(id) {
                Some(s) => {
                    if let Some(t) = self.targets.get_mut(&s) {
                        t.ids_mut().retain(|x| x != id);
                    }
                    s
                }
                None => return Plan::Drop("response to no open request"),
            },
            None => match self.batch_target(answered) {
                Some(s) => s,
                None => return Plan::Drop("answer without id and no batch waiting"),
            },
        };
        self.idless.retain(|s| *s != stream);
        let Some(target) = self.targets.get_mut(&stream) else {
            return Plan::Drop("stream gone");
        };
        match target {
            Target::Json { ids, tx } => {
                if !ids.is_empty() {
                    return Plan::Drop("partial answer in JSON mode");
                }
                let tx = tx.take();
                self.targets.remove(&stream);
                self.release_if_idle();
                match tx {
                    Some(tx) => Plan::Json(tx),
                    None => Plan::Drop("JSON answer already sent"),
                }
            }
            Target::Sse { ids, seq, .. } => {
                *seq += 1;
                Plan::Sse {
                    id: EventId::new(stream, *seq),
                    last: ids.is_empty(),
                }
            }
        }
    }

    /// The target of an id-less answer: the batch whose ids the array carries, or else the
    /// oldest batch waiting. Every id of that target is released: a batch is answered once.
    fn batch_target(&mut self, answered: &[RequestId]) -> Option<u64> {
        let found = answered
            .iter()
            .find_map(|id| self.by_request.get(id).copied());
        let stream = match found {
            Some(s) => s,
            None => self.idless.pop_front()?,
        };
        if let Some(t) = self.targets.get_mut(&stream) {
            for id in t.ids_mut().drain(..) {
                self.by_request.remove(&id);
            }
        }
        Some(stream)
    }

    /// Phase 2: hands an event to its stream's live connection, or keeps it for a later one.
    /// A connection that does not keep up (its queue full in events or bytes, or stalled) is
    /// dropped: its client resumes with `Last-Event-ID`.
    pub(crate) fn deliver(&mut self, id: EventId, last: bool, bytes: Bytes) {
        if self.closed {
            return;
        }
        let (max_bytes, stall) = (self.stream_queue_bytes, self.stall);
        let live = Live {
            seq: id.seq,
            bytes,
            last,
        };
        if id.stream == STANDALONE {
            let Some(c) = self.standalone_conn.as_mut() else {
                return;
            };
            if let Err(why) = c.offer(live, max_bytes, stall) {
                self.standalone_conn = None;
                if let Slow::TooSlow(reason) = why {
                    crate::throttle::warn_throttled!(
                        reason,
                        "standalone SSE connection too slow; detached (it may resume with Last-Event-ID)"
                    );
                }
            }
            return;
        }
        let Some(Target::Sse { conn, .. }) = self.targets.get_mut(&id.stream) else {
            return;
        };
        if let Some(c) = conn
            && let Err(why) = c.offer(live, max_bytes, stall)
        {
            *conn = None;
            if let Slow::TooSlow(reason) = why {
                crate::throttle::warn_throttled!(
                    stream = id.stream,
                    reason,
                    "SSE client too slow; connection dropped (it may resume with Last-Event-ID)"
                );
            }
        }
        if last {
            // Dropping the target drops its sender: the connection's body ends once drained.
            self.targets.remove(&id.stream);
            self.release_if_idle();
        }
    }

    /// Gives back the tables' storage once no request is in flight: an idle session holds
    /// none (the next POST allocates again).
    fn release_if_idle(&mut self) {
        if !self.targets.is_empty() || !self.by_request.is_empty() {
            return;
        }
        if self.targets.capacity() > 0 {
            self.targets = HashMap::new();
        }
        if self.by_request.capacity() > 0 {
            self.by_request = HashMap::new();
        }
        if self.idless.is_empty() && self.idless.capacity() > 0 {
            self.idless = VecDeque::new();
        }
    }

    /// Attaches a new connection to an existing stream (resumption with `Last-Event-ID`).
    pub(crate) fn attach(&mut self, stream: u64) -> Result<Attach, RouteError> {
        if self.closed {
            return Err(RouteError::Closed);
        }
        if stream == STANDALONE {
            let (conn, rx) = self.conn();
            let id = conn.id;
            self.standalone_conn = Some(conn);
            let queued = self.take_queued();
            return Ok(Attach::Live {
                conn: id,
                rx,
                queued,
            });
        }
        let (new, rx) = self.conn();
        match self.targets.get_mut(&stream) {
            Some(Target::Sse { conn, .. }) => {
                let id = new.id;
                *conn = Some(new);
                Ok(Attach::Live {
                    conn: id,
                    rx,
                    queued: Vec::new(),
                })
            }
            _ => Ok(Attach::Ended),
        }
    }

    /// A connection for a resumption of an ended stream with nothing to replay, held open (see
    /// `Routing::parked`); `None` once the session has ended.
    pub(crate) fn park(&mut self) -> Option<(u64, ConnRx)> {
        if self.closed {
            return None;
        }
        self.parked.retain(Conn::is_live);
        if self.parked.len() >= MAX_PARKED {
            self.parked.pop_front();
        }
        let (conn, rx) = self.conn();
        let id = conn.id;
        self.parked.push_back(conn);
        Some((id, rx))
    }

    /// Opens the standalone stream for a fresh GET: its connection, the priming event's id and
    /// the queued messages with the ids they now get.
    pub(crate) fn attach_standalone(&mut self) -> Result<StandaloneOpen, RouteError> {
        if self.closed {
            return Err(RouteError::Closed);
        }
        if self.standalone_conn.as_ref().is_some_and(Conn::is_live) {
            return Err(RouteError::Conflict);
        }
        let (conn, rx) = self.conn();
        let id = conn.id;
        self.standalone_conn = Some(conn);
        self.standalone_seq += 1;
        let priming = EventId::new(STANDALONE, self.standalone_seq);
        let queued = self.take_queued();
        Ok(StandaloneOpen {
            conn: id,
            rx,
            priming,
            queued,
        })
    }

    fn queue_unsolicited(&mut self, text: String) {
        if text.len() > self.unsolicited_bytes {
            crate::throttle::warn_throttled!(
                limit = self.unsolicited_bytes,
                bytes = text.len(),
                "no GET stream open: a server message larger than the queue's byte bound dropped"
            );
            return;
        }
        let mut dropped = 0usize;
        while self.undelivered.len() >= self.unsolicited_cap
            || self.undelivered_bytes + text.len() > self.unsolicited_bytes
        {
            let Some(old) = self.undelivered.pop_front() else {
                break;
            };
            self.undelivered_bytes -= old.len();
            dropped += 1;
        }
        if dropped > 0 {
            crate::throttle::warn_throttled!(
                limit = self.unsolicited_cap,
                limit_bytes = self.unsolicited_bytes,
                dropped,
                "no GET stream open: oldest queued server messages dropped"
            );
        }
        self.undelivered_bytes += text.len();
        self.undelivered.push_back(text);
    }

    fn take_queued(&mut self) -> Vec<(EventId, String)> {
        self.undelivered_bytes = 0;
        let mut out = Vec::with_capacity(self.undelivered.len());
        while let Some(text) = self.undelivered.pop_front() {
            self.standalone_seq += 1;
            out.push((EventId::new(STANDALONE, self.standalone_seq), text));
        }
        out
    }

    /// Detaches connection `conn` from `stream` if it is still the one attached.
    pub(crate) fn detach(&mut self, stream: u64, conn: u64) {
        let slot = if stream == STANDALONE {
            &mut self.standalone_conn
        } else {
            match self.targets.get_mut(&stream) {
                Some(Target::Sse { conn, .. }) => conn,
                _ => return,
            }
        };
        if slot.as_ref().is_some_and(|c| c.id == conn) {
            *slot = None;
        }
    }

    /// Closes the connection of the SSE stream that will carry `request`'s answer, keeping the
    /// stream itself: later events are stored for a `Last-Event-ID` resumption (SEP-1699).
    /// Returns whether a connection was closed.
    pub(crate) fn close_connection_of(&mut self, request: &RequestId) -> bool {
        let Some(stream) = self.by_request.get(request) else {
            return false;
        };
        match self.targets.get_mut(stream) {
            Some(Target::Sse { conn, .. }) => conn.take().is_some(),
            _ => false,
        }
    }

    /// The client cancelled `request` (`notifications/cancelled`): it will never be answered,
    /// so its stream ends now unless other requests of the same batch still wait on it (a JSON
    /// waiter is told by its channel closing). Returns whether a stream ended.
    pub(crate) fn cancel(&mut self, request: &RequestId) -> bool {
        let Some(stream) = self.by_request.remove(request) else {
            return false;
        };
        let Some(target) = self.targets.get_mut(&stream) else {
            return false;
        };
        target.ids_mut().retain(|x| x != request);
        if !target.ids_mut().is_empty() || self.idless.contains(&stream) {
            return false;
        }
        self.targets.remove(&stream);
        self.release_if_idle();
        true
    }

    /// Whether the stream is known and still open.
    pub(crate) fn is_open(&self, stream: u64) -> bool {
        stream == STANDALONE || self.targets.contains_key(&stream)
    }

    /// Whether any SSE connection is attached (the session is then not idle). Connections
    /// whose client has stalled are dropped first: they keep nothing alive.
    pub(crate) fn sweep(&mut self, now: Instant) -> bool {
        let stall = self.stall;
        if self
            .standalone_conn
            .as_mut()
            .is_some_and(|c| !c.is_live() || c.stalled(now, stall))
        {
            tracing::debug!("standalone SSE connection gone or stalled; detached");
            self.standalone_conn = None;
        }
        self.parked.retain(Conn::is_live);
        let mut live = self.standalone_conn.is_some();
        for target in self.targets.values_mut() {
            match target {
                Target::Sse { conn, .. } => {
                    if conn.as_mut().is_some_and(|c| c.stalled(now, stall)) {
                        tracing::debug!("SSE connection stalled; detached");
                        *conn = None;
                    }
                    live |= conn.as_ref().is_some_and(Conn::is_live);
                }
                Target::Json { .. } => live |= target.is_live(),
            }
        }
        live
    }

    /// Ends everything: every connection's body ends, every JSON waiter is told.
    pub(crate) fn close_all(&mut self) {
        self.closed = true;
        self.by_request.clear();
        self.targets.clear();
        self.idless.clear();
        self.standalone_conn = None;
        self.undelivered.clear();
        self.undelivered_bytes = 0;
        self.parked.clear();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use tokio::sync::mpsc;

    fn frame(
        kind: MessageKind,
        id: Option<i64>,
        related: Option<i64>,
        text: &str,
    ) -> OutboundFrame {
        OutboundFrame {
            text: text.to_owned(),
            kind,
            id: id.map(RequestId::int),
            related: related.map(RequestId::int),
            headers: Vec::new(),
            cancels: None,
        }
    }

    fn bounds(unsolicited: usize, queue: usize, targets: usize) -> SessionBounds {
        SessionBounds {
            unsolicited_queue: unsolicited,
            unsolicited_queue_bytes: 1 << 20,
            stream_queue: queue,
            stream_queue_bytes: 1 << 20,
            stream_stall_timeout: Some(Duration::from_secs(30)),
            inbound_queue: 8,
            max_open_streams: targets,
            max_snapshot_bytes: 1 << 16,
        }
    }

    fn sse(p: Plan) -> (EventId, bool) {
        match p {
            Plan::Sse { id, last } => (id, last),
            other => panic!("expected SSE, got {other:?}"),
        }
    }

    #[test]
    fn an_answered_session_keeps_no_table_storage() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let Registration::Sse { stream, .. } =
            r.register(vec![RequestId::int(1)], false, false).unwrap()
        else {
            panic!()
        };
        let resp = frame(MessageKind::Result, Some(1), None, "{}");
        let (id, last) = sse(r.plan(&resp));
        assert!(last);
        r.deliver(id, last, Bytes::from_static(b"x"));
        assert!(!r.is_open(stream));
        let Registration::Json { .. } = r.register(vec![RequestId::int(2)], true, false).unwrap()
        else {
            panic!()
        };
        let resp = frame(MessageKind::Result, Some(2), None, "{}");
        assert!(matches!(r.plan(&resp), Plan::Json(_)));
        assert_eq!(
            (r.targets.capacity(), r.by_request.capacity()),
            (0, 0),
            "an idle session's tables hold no storage"
        );
    }

    #[test]
    fn ht15_related_then_response_then_standalone() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let Registration::Sse { stream, .. } =
            r.register(vec![RequestId::int(7)], false, false).unwrap()
        else {
            panic!()
        };
        let n = frame(MessageKind::Notification, None, Some(7), "{}");
        assert_eq!(sse(r.plan(&n)), (EventId::new(stream, 1), false));
        let resp = frame(MessageKind::Result, Some(7), None, "{}");
        assert_eq!(sse(r.plan(&resp)), (EventId::new(stream, 2), true));
        // After the response, a late related message goes to the standalone stream (queued
        // while no GET stream is open).
        assert!(matches!(r.plan(&n), Plan::Queued));
        // A second answer to the same id is dropped, never sent to the GET stream (HT-14).
        assert!(matches!(r.plan(&resp), Plan::Drop(_)));
    }

    #[test]
    fn duplicates_and_undelivered_bound() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        r.register(vec![RequestId::int(1)], false, false).unwrap();
        assert_eq!(
            r.register(vec![RequestId::int(1)], false, false)
                .unwrap_err(),
            RouteError::Duplicate(RequestId::int(1))
        );
        for i in 1..=3 {
            let n = frame(MessageKind::Notification, None, None, &i.to_string());
            assert!(matches!(r.plan(&n), Plan::Queued));
        }
        let open = r.attach_standalone().unwrap();
        assert_eq!(open.priming, EventId::new(STANDALONE, 1));
        assert_eq!(
            open.queued,
            vec![
                (EventId::new(STANDALONE, 2), "2".to_owned()),
                (EventId::new(STANDALONE, 3), "3".to_owned())
            ]
        );
        assert_eq!(r.attach_standalone().unwrap_err(), RouteError::Conflict);
        let n = frame(MessageKind::Notification, None, None, "4");
        assert_eq!(sse(r.plan(&n)), (EventId::new(STANDALONE, 4), false));
    }

    #[test]
    fn open_streams_are_bounded_abandoned_ones_go_first() {
        let mut r = Routing::new(&bounds(2, 8, 2), 0);
        let a = r.register(vec![RequestId::int(1)], false, false).unwrap();
        let _b = r.register(vec![RequestId::int(2)], false, false).unwrap();
        // Both have a client attached: no room.
        assert_eq!(
            r.register(vec![RequestId::int(3)], false, false)
                .unwrap_err(),
            RouteError::TooManyStreams
        );
        // The first client goes away (its request was cancelled, say): it makes room.
        drop(a);
        r.register(vec![RequestId::int(3)], false, false).unwrap();
        assert!(!r.by_request.contains_key(&RequestId::int(1)));
        assert_eq!(r.targets.len(), 2);
    }

    #[test]
    fn parked_connections_are_bounded_and_end_with_the_session() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let mut first = r.park().unwrap().1;
        let mut held: Vec<ConnRx> = (1..MAX_PARKED).map(|_| r.park().unwrap().1).collect();
        assert_eq!(
            first.rx.try_recv().unwrap_err(),
            mpsc::error::TryRecvError::Empty,
            "held open while under the bound"
        );
        // One more than the bound: the oldest is ended.
        held.push(r.park().unwrap().1);
        assert_eq!(
            first.rx.try_recv().unwrap_err(),
            mpsc::error::TryRecvError::Disconnected
        );
        // A parked connection whose client left frees its place.
        drop(held.remove(0));
        r.sweep(Instant::now());
        assert_eq!(r.parked.len(), MAX_PARKED - 1);
        r.close_all();
        for mut h in held {
            assert_eq!(
                h.rx.try_recv().unwrap_err(),
                mpsc::error::TryRecvError::Disconnected
            );
        }
        assert!(r.park().is_none(), "nothing is parked on an ended session");
    }

    #[test]
    fn sep1699_closing_a_connection_keeps_the_stream() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let Registration::Sse { stream, mut rx, .. } =
            r.register(vec![RequestId::int(4)], false, false).unwrap()
        else {
            panic!()
        };
        assert!(r.close_connection_of(&RequestId::int(4)));
        assert!(!r.close_connection_of(&RequestId::int(4)), "already closed");
        assert!(
            !r.close_connection_of(&RequestId::int(5)),
            "no such request"
        );
        assert!(
            rx.rx.try_recv().is_err(),
            "the connection's channel is closed"
        );
        // The response still gets its event id on the same stream, for the resumption.
        let resp = frame(MessageKind::Result, Some(4), None, "{}");
        assert_eq!(sse(r.plan(&resp)), (EventId::new(stream, 1), true));
    }

    #[test]
    fn batch_answers_go_to_their_post() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let Registration::Json { stream: a, .. } = r
            .register(vec![RequestId::int(1), RequestId::int(2)], true, true)
            .unwrap()
        else {
            panic!()
        };
        let Registration::Json { stream: b, .. } =
            r.register(vec![RequestId::int(3)], true, true).unwrap()
        else {
            panic!()
        };
        let arr = r#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#;
        assert!(matches!(
            r.plan(&frame(MessageKind::Result, None, None, arr)),
            Plan::Json(_)
        ));
        assert!(!r.targets.contains_key(&b));
        // An id-less error goes to the oldest batch still waiting.
        let err = r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"no"}}"#;
        assert!(matches!(
            r.plan(&frame(MessageKind::Error, None, None, err)),
            Plan::Json(_)
        ));
        assert!(!r.targets.contains_key(&a));
        assert!(r.by_request.is_empty());
    }

    #[test]
    fn unsolicited_messages_are_bounded_in_bytes_too() {
        let mut b = bounds(100, 8, 16);
        b.unsolicited_queue_bytes = 10;
        let mut r = Routing::new(&b, 0);
        for text in ["aaaa", "bbbb", "cccc"] {
            let n = frame(MessageKind::Notification, None, None, text);
            assert!(matches!(r.plan(&n), Plan::Queued));
        }
        // Over the bound alone: dropped, the queue untouched.
        let big = frame(MessageKind::Notification, None, None, "0123456789x");
        assert!(matches!(r.plan(&big), Plan::Queued));
        let open = r.attach_standalone().unwrap();
        let texts: Vec<_> = open.queued.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            ["bbbb", "cccc"],
            "12 bytes do not fit in 10: the oldest went"
        );
        assert_eq!(r.undelivered_bytes, 0);
    }

    #[test]
    fn a_connection_is_dropped_when_its_queued_bytes_reach_the_bound() {
        let mut b = bounds(2, 100, 16);
        b.stream_queue_bytes = 100;
        let mut r = Routing::new(&b, 0);
        let Registration::Sse { stream, mut rx, .. } =
            r.register(vec![RequestId::int(1)], false, false).unwrap()
        else {
            panic!()
        };
        let event = |r: &mut Routing| {
            let n = frame(MessageKind::Notification, None, Some(1), "{}");
            let (id, last) = sse(r.plan(&n));
            r.deliver(id, last, Bytes::from(vec![b'x'; 40]));
        };
        event(&mut r);
        event(&mut r);
        // The body takes one: room again.
        let taken = rx.rx.try_recv().unwrap();
        rx.took(&taken);
        event(&mut r);
        assert!(r.sweep(Instant::now()), "80 bytes queued: still attached");
        // 120 bytes would be queued: the client is too slow, the connection goes.
        event(&mut r);
        assert!(!r.sweep(Instant::now()));
        assert!(r.is_open(stream), "the stream goes on for a resumption");
        // An event over the bound still goes to a connection with nothing queued.
        let Registration::Sse { mut rx, .. } =
            r.register(vec![RequestId::int(2)], false, false).unwrap()
        else {
            panic!()
        };
        let n = frame(MessageKind::Notification, None, Some(2), "{}");
        let (id, last) = sse(r.plan(&n));
        r.deliver(id, last, Bytes::from(vec![b'x'; 500]));
        assert_eq!(rx.rx.try_recv().unwrap().bytes.len(), 500);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_whose_client_takes_nothing_stalls_and_keeps_nothing_alive() {
        let mut r = Routing::new(&bounds(2, 8, 16), 0);
        let open = r.attach_standalone().unwrap();
        let mut rx = open.rx;
        let notify = |r: &mut Routing| {
            let n = frame(MessageKind::Notification, None, None, "{}");
            let (id, last) = sse(r.plan(&n));
            r.deliver(id, last, Bytes::from_static(b"data"));
        };
        notify(&mut r);
        assert!(r.sweep(Instant::now()));
        tokio::time::advance(Duration::from_secs(20)).await;
        // The client takes the event: it reads, however slowly.
        let l = rx.rx.try_recv().unwrap();
        rx.took(&l);
        notify(&mut r);
        assert!(r.sweep(Instant::now()));
        tokio::time::advance(Duration::from_secs(20)).await;
        assert!(
            r.sweep(Instant::now()),
            "20 s without taking: not yet stalled"
        );
        tokio::time::advance(Duration::from_secs(11)).await;
        assert!(!r.sweep(Instant::now()), "31 s without taking: stalled");
        // Detached: later messages wait for the next GET stream.
        let n = frame(MessageKind::Notification, None, None, "{}");
        assert!(matches!(r.plan(&n), Plan::Queued));
        // An idle connection with nothing queued is never stalled.
        let _open = r.attach_standalone().unwrap();
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert!(r.sweep(Instant::now()));
    }
}
