//! Sessions (server side): the per-client state behind an `Mcp-Session-Id`, the
//! [`HttpSessionTransport`] the engine runs on, and the registry with its idle reaper.
//!
//! Data flow of one session:
//!
//! ```text
//! POST body ─► inbound queue ─► HttpSource ─► engine ─► HttpSink ─► Routing::plan
//!           ─► EventStore::append ─► Routing::deliver ─► the SSE connection (or JSON answer)
//! ```
//!
//! A session holds no task of its own: the engine's reader and writer tasks are the only ones,
//! and one reaper task per service ends idle sessions. Ending a session drops every map entry,
//! closes every channel and the engine [`Peer`], and forgets its stored events.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use switchboard_jsonrpc::Queue;
use switchboard_jsonrpc::{
    Attachment, DriverSlot, FrameSink, FrameSource, OutboundFrame, Peer, Transport,
    TransportControl, TransportError,
};
use switchboard_types::{MessageKind, RequestId};
use tokio::time::Instant;

use crate::config::SessionBounds;
use crate::event_store::{EventStore, StoredEvent};
use crate::routing::{self, Plan, Routing};
use crate::session_store::{SessionRecord, SessionStore, SessionStoreError};
use crate::sse;

/// The engine's transport for one HTTP session: POSTed frames in, routed frames out.
///
/// The session factory passes it to the engine (`Server::serve`, or `Server::serve_resumed`
/// when [`HttpSessionTransport::resume`] says so); it splits into an [`HttpSink`] and an
/// [`HttpSource`].
pub struct HttpSessionTransport {
    session: Arc<Session>,
    resume: Option<Resume>,
    driver: DriverSlot,
}

/// How a session that does not begin with its own `initialize` on this node is to start: a
/// stateless request (each POST is served on its own), or a session taken over from the
/// [`SessionStore`]. The session factory hands it to the role, which reads it; this crate only
/// carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Resume {
    /// The request's `MCP-Protocol-Version` header (checked to name a supported revision);
    /// `None` when the request carried none.
    pub protocol_version: Option<String>,
    /// The snapshot the role handed over when the session's handshake completed
    /// ([`TransportControl::save_snapshot`]), as the session store keeps it. `None` for a
    /// stateless request, and for a session whose role handed over none.
    pub snapshot: Option<Arc<str>>,
    /// Set for a request of the modern era (2026-07-28): its `Mcp-*` headers (lower-cased
    /// names; `None` for a value that is not visible ASCII), for the role to check against the
    /// body. Such a connection has no session and no handshake.
    pub modern: Option<Vec<(String, Option<String>)>>,
}

impl fmt::Debug for HttpSessionTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSessionTransport")
            .finish_non_exhaustive()
    }
}

impl HttpSessionTransport {
    /// The session id this transport serves. Treat it as a secret: do not log it (`[SEC-SH-8]`).
    pub fn session_id(&self) -> &str {
        &self.session.id
    }

    /// `Some` when the session starts without a handshake of its own (a stateless request, a
    /// session taken over from the session store): the role must start it ready, as the
    /// [`Resume`] describes. `None`: the session begins with the client's `initialize`.
    pub fn resume(&self) -> Option<&Resume> {
        self.resume.as_ref()
    }
}

/// The sending half: routes each outbound frame to its stream.
pub struct HttpSink {
    session: Arc<Session>,
}

impl fmt::Debug for HttpSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSink").finish_non_exhaustive()
    }
}

/// The receiving half: the frames POSTed to this session, in arrival order.
pub struct HttpSource {
    session: Arc<Session>,
    /// The attachment of the frame last returned, until the engine takes it.
    attachment: Option<Attachment>,
}

impl fmt::Debug for HttpSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpSource").finish_non_exhaustive()
    }
}

impl Transport for HttpSessionTransport {
    type Sink = HttpSink;
    type Source = HttpSource;

    fn control(&self) -> Option<Arc<dyn TransportControl>> {
        Some(Arc::new(Control(Arc::downgrade(&self.session))))
    }

    fn driver_slot(&self) -> Option<DriverSlot> {
        Some(self.driver.clone())
    }

    fn split(self) -> (HttpSink, HttpSource) {
        (
            HttpSink {
                session: self.session.clone(),
            },
            HttpSource {
                session: self.session,
                attachment: None,
            },
        )
    }
}

impl FrameSink for HttpSink {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        self.session.route(frame).await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.session.terminate().await;
        Ok(())
    }
}

impl FrameSource for HttpSource {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        let (text, attachment) = self.session.inbound.pop().await?;
        self.attachment = attachment;
        Some(Ok(text))
    }

    fn take_attachment(&mut self) -> Option<Attachment> {
        self.attachment.take()
    }
}

/// How a session begins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Origin {
    /// Established elsewhere: the role starts it ready (stateless, or taken over from the store).
    pub(crate) resume: Option<Resume>,
    /// The session store already holds the session's record (taken over).
    pub(crate) stored: bool,
    /// Serves one POST and ends with it (stateless mode): nothing is stored, no resumption.
    pub(crate) ephemeral: bool,
    /// The first stream number: 0 for a new session; a time-derived base for a session taken
    /// over, so that its event ids never collide with those the previous node stored.
    pub(crate) stream_base: u64,
    /// The subject the session is bound to (authorization on), from the opening request or the
    /// stored record.
    pub(crate) owner: Option<Arc<str>>,
    /// With a [`crate::Cluster`], this node's id: the record names it as the session's server.
    pub(crate) node: Option<Arc<str>>,
}

/// What the engine and the role may ask of the HTTP transport. Holds the session weakly: the
/// engine, which holds this, is itself held by the session.
struct Control(Weak<Session>);

impl TransportControl for Control {
    /// Closes the POST SSE connection that will carry `request`'s answer; the stream goes on
    /// in the event store and the client resumes it with `Last-Event-ID` (SEP-1699).
    fn close_stream(&self, request: &RequestId) -> bool {
        self.0.upgrade().is_some_and(|s| {
            s.routing
                .lock()
                .map(|mut r| r.close_connection_of(request))
                .unwrap_or(false)
        })
    }

    /// The client cancelled `request`, which will never be answered: its stream ends now (a
    /// JSON waiter is told by its channel closing and answers 202).
    fn request_cancelled(&self, request: &RequestId) {
        if let Some(s) = self.0.upgrade()
            && let Ok(mut r) = s.routing.lock()
        {
            r.cancel(request);
        }
    }

    /// Keeps the role's snapshot for the session store (never parsed here).
    fn save_snapshot(&self, snapshot: &str) {
        if let Some(s) = self.0.upgrade() {
            s.save_snapshot(snapshot);
        }
    }

    /// The session id, which every node serving this session shares; none for a stateless
    /// request (it has no session).
    fn session_key(&self) -> Option<Arc<str>> {
        self.0
            .upgrade()
            .filter(|s| !s.ephemeral)
            .map(|s| s.id.clone())
    }
}

/// A session's record in the [`SessionStore`], kept in step with the role's snapshot.
///
/// The POST that creates the session writes the record before the client learns the session
/// id; the role hands its snapshot over while answering `initialize`, and the sink writes it
/// before the next frame leaves (so before the client sees that answer). Either may come first:
/// whichever writes second writes the snapshot.
struct RecordSlot {
    store: Arc<dyn SessionStore>,
    /// The latest snapshot the role handed over.
    snapshot: Mutex<Option<Arc<str>>>,
    /// Set when `snapshot` changed since the store was last written.
    dirty: AtomicBool,
    /// What the store holds: `None` until the record is first written.
    written: tokio::sync::Mutex<Option<Option<Arc<str>>>>,
    /// The node serving the session, written into its record (with a [`crate::Cluster`]).
    node: Option<Arc<str>>,
}

/// One session's state.
pub(crate) struct Session {
    pub(crate) id: Arc<str>,
    pub(crate) routing: Mutex<Routing>,
    /// POSTed frames waiting for the engine (bounded; no storage while the session is idle).
    inbound: Queue<(String, Option<Attachment>)>,
    /// Who opened the session, when authorization is on (`AuthInfo::owner_key`): every later
    /// request must come from the same subject (`[SEC-SH-5]`).
    pub(crate) owner: Option<Arc<str>>,
    peer: OnceLock<Peer>,
    last_active: Mutex<Instant>,
    pub(crate) store: Arc<dyn EventStore>,
    registry: Weak<Registry>,
    terminated: AtomicBool,
    /// The engine reads this session's transport ([`Session::set_peer`]).
    direct: AtomicBool,
    /// Serves one POST only (stateless mode).
    pub(crate) ephemeral: bool,
    /// The session's record (`None` for ephemeral sessions).
    record: Option<RecordSlot>,
    /// The largest role snapshot kept.
    max_snapshot_bytes: usize,
    /// For a session taken over: streams numbered up to this one (but the standalone one) were
    /// opened by the node that served it before; 0 otherwise.
    pub(crate) adopted_below: u64,
    /// Requests run again after a take-over ([`crate::Cluster`]): the progress each token had
    /// reached before; the re-run's progress notifications up to it are not sent again.
    /// Boxed when first set: most sessions are never taken over (this keeps `Session` in a
    /// smaller allocation class).
    progress_floors: Mutex<Option<Box<ProgressFloors>>>,
}

/// The progress each re-run request's token reached before a take-over, at most
/// [`MAX_PROGRESS_FLOORS`] of them: a floor goes once passed, and past the bound a token gets
/// none (its repeated progress values are sent again, which the spec allows a client to see).
#[derive(Debug, Default)]
struct ProgressFloors(HashMap<String, f64>);

impl ProgressFloors {
    /// Keeps `floors`, as many as the bound leaves room for.
    fn extend(&mut self, floors: HashMap<String, f64>) {
        for (token, floor) in floors {
            if self.0.len() >= MAX_PROGRESS_FLOORS && !self.0.contains_key(&token) {
                continue;
            }
            self.0.insert(token, floor);
        }
    }

    /// Whether `progress` for `token` was sent before the take-over; a floor passed goes.
    fn seen(&mut self, token: &str, progress: f64) -> bool {
        match self.0.get(token) {
            Some(floor) if progress <= *floor => true,
            Some(_) => {
                self.0.remove(token);
                false
            }
            None => false,
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Session {
    /// A new session and the transport to hand to the factory, which offers the engine
    /// `driver` (see [`Transport::driver_slot`]).
    pub(crate) fn new(
        id: Arc<str>,
        store: Arc<dyn EventStore>,
        registry: Weak<Registry>,
        bounds: SessionBounds,
        origin: Origin,
        record: Option<Arc<dyn SessionStore>>,
        driver: DriverSlot,
    ) -> (Arc<Session>, HttpSessionTransport) {
        let record = record.map(|store| {
            // A session taken over is recorded already, with the snapshot it resumes from.
            let stored = origin
                .resume
                .as_ref()
                .and_then(|r| r.snapshot.clone())
                .filter(|_| origin.stored);
            RecordSlot {
                store,
                snapshot: Mutex::new(stored.clone()),
                dirty: AtomicBool::new(false),
                written: tokio::sync::Mutex::new(origin.stored.then_some(stored)),
                node: origin.node.clone(),
            }
        });
        let session = Arc::new(Session {
            id,
            routing: Mutex::new(Routing::new(&bounds, origin.stream_base)),
            inbound: Queue::new(bounds.inbound_queue),
            peer: OnceLock::new(),
            last_active: Mutex::new(Instant::now()),
            store,
            registry,
            terminated: AtomicBool::new(false),
            direct: AtomicBool::new(false),
            ephemeral: origin.ephemeral,
            owner: origin.owner.clone(),
            record,
            max_snapshot_bytes: bounds.max_snapshot_bytes,
            adopted_below: if origin.stored { origin.stream_base } else { 0 },
            progress_floors: Mutex::default(),
        });
        let transport = HttpSessionTransport {
            session: session.clone(),
            resume: origin.resume,
            driver,
        };
        (session, transport)
    }

    /// The engine's handle; `direct` when the engine reads this session's transport (a
    /// POST may then hand it its frames itself, [`Session::receive`]).
    pub(crate) fn set_peer(&self, peer: Peer, direct: bool) {
        if self.peer.set(peer).is_ok() {
            self.direct.store(direct, Ordering::Release);
        }
    }

    pub(crate) fn touch(&self) {
        if let Ok(mut t) = self.last_active.lock() {
            *t = Instant::now();
        }
    }

    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated.load(Ordering::Acquire) || self.peer.get().is_some_and(Peer::is_closed)
    }

    fn idle_for(&self) -> Duration {
        self.last_active
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    /// Hands a POSTed frame to the engine in the POST's own task ([`Peer::receive`]): a request
    /// answered at once is decoded, handled and its answer queued without waking the engine's
    /// reader. `false` when the session has ended.
    pub(crate) async fn receive(&self, text: String, attachment: Option<Attachment>) -> bool {
        match self.peer.get() {
            Some(_) if self.terminated.load(Ordering::Acquire) => false,
            Some(peer) if self.direct.load(Ordering::Acquire) => {
                peer.receive(text, attachment).await
            }
            _ => self.forward(text, attachment).await,
        }
    }

    /// Hands a POSTed frame to the engine. `false` when the session has ended.
    pub(crate) async fn forward(&self, text: String, attachment: Option<Attachment>) -> bool {
        self.inbound.push((text, attachment)).await.is_ok()
    }

    /// Keeps the role's snapshot; the sink writes it to the store before the next frame. A
    /// snapshot over the bound is not kept (nor is an older one): cut JSON would be no
    /// snapshot at all, and a take-over resumes the session without one.
    fn save_snapshot(&self, snapshot: &str) {
        let Some(slot) = &self.record else {
            return; // An ephemeral session is never resumed.
        };
        let kept = if snapshot.len() > self.max_snapshot_bytes {
            crate::throttle::warn_throttled!(
                bytes = snapshot.len(),
                limit = self.max_snapshot_bytes,
                "session snapshot over the bound; not kept (a take-over resumes without it)"
            );
            None
        } else {
            Some(Arc::from(snapshot))
        };
        if let Ok(mut s) = slot.snapshot.lock() {
            *s = kept;
        }
        slot.dirty.store(true, Ordering::Release);
    }

    /// Writes the session's record to the session store: `create` for the POST that created
    /// the session (the first write); otherwise only when the record exists and the snapshot
    /// changed since.
    ///
    /// # Errors
    /// The store refused the record (full, unreachable).
    pub(crate) async fn write_record(&self, create: bool) -> Result<(), SessionStoreError> {
        let Some(slot) = &self.record else {
            return Ok(());
        };
        let mut written = slot.written.lock().await;
        if (written.is_none() && !create) || self.terminated.load(Ordering::Acquire) {
            return Ok(());
        }
        let snapshot = slot.snapshot.lock().map(|s| s.clone()).unwrap_or(None);
        if written.as_ref() == Some(&snapshot) {
            return Ok(());
        }
        let record = SessionRecord {
            id: self.id.clone(),
            snapshot: snapshot.clone(),
            owner: self.owner.clone(),
            node: slot.node.clone(),
        };
        slot.store.create(record).await?;
        *written = Some(snapshot);
        Ok(())
    }

    /// Notes the progress each token reached on a stream this node runs again.
    pub(crate) fn set_progress_floors(&self, floors: HashMap<String, f64>) {
        if let Ok(mut f) = self.progress_floors.lock() {
            f.get_or_insert_default().extend(floors);
        }
    }

    /// Whether `frame` is a progress notification a re-run request already sent (at or below
    /// the progress its token reached before the take-over).
    fn progress_seen(&self, frame: &OutboundFrame) -> bool {
        if frame.kind != MessageKind::Notification {
            return false;
        }
        let Ok(mut floors) = self.progress_floors.lock() else {
            return false;
        };
        let Some(floors) = floors.as_mut().filter(|f| !f.is_empty()) else {
            return false;
        };
        let Some((token, progress)) = progress_of(&frame.text) else {
            return false;
        };
        floors.seen(&token, progress)
    }

    /// Routes one outbound frame: plan, store, deliver.
    async fn route(&self, frame: OutboundFrame) -> Result<(), TransportError> {
        if self.progress_seen(&frame) {
            return Ok(());
        }
        if let Some(slot) = &self.record
            && slot.dirty.load(Ordering::Acquire)
            && slot.dirty.swap(false, Ordering::AcqRel)
            && let Err(e) = self.write_record(false).await
        {
            crate::throttle::warn_throttled!(error = %e, "session snapshot not stored; a take-over will not know the client");
        }
        let answered = routing::answered_ids(&frame);
        let plan = match self.routing.lock() {
            Ok(mut r) => r.plan_with(&frame, &answered),
            Err(_) => return Err(TransportError::Closed),
        };
        match plan {
            Plan::Drop(why) => {
                if self.terminated.load(Ordering::Acquire) {
                    return Err(TransportError::Closed);
                }
                crate::throttle::warn_throttled!(kind = %frame.kind, id = %crate::throttle::shown_id(frame.id.as_ref()), reason = why, "outbound frame dropped: no stream takes it");
            }
            Plan::Queued => {}
            Plan::Json(tx) => {
                let _ = tx.send(frame.text);
            }
            Plan::Sse { id, last } => {
                let bytes = sse::encode(id, &frame.text);
                if !self.ephemeral {
                    let event = StoredEvent {
                        id,
                        data: Arc::from(frame.text),
                    };
                    if let Err(e) = self.store.append(&self.id, event).await {
                        crate::throttle::warn_throttled!(error = %e, "event not stored; it cannot be replayed");
                    }
                }
                if let Ok(mut r) = self.routing.lock() {
                    r.deliver(id, last, bytes);
                }
            }
        }
        Ok(())
    }

    /// Ends the session: out of the registry, every stream ended, the engine closed, events
    /// forgotten. Idempotent.
    pub(crate) async fn terminate(&self) {
        self.end(true).await;
    }

    /// Ends the session here and, when `forget`, in the stores too; a node of a cluster that
    /// shuts down leaves its sessions' records and events for the node that takes them over.
    async fn end(&self, forget: bool) {
        if self.terminated.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(reg) = self.registry.upgrade() {
            reg.remove(&self.id);
        }
        if let Ok(mut r) = self.routing.lock() {
            r.close_all();
        }
        self.inbound.close();
        if let Some(p) = self.peer.get() {
            p.close();
        }
        if !forget {
            tracing::debug!("HTTP session left to the cluster");
            return;
        }
        if !self.ephemeral {
            self.store.remove_session(&self.id).await;
        }
        if let Some(slot) = &self.record {
            // Under the record's lock: a snapshot write in progress finishes first, and none
            // starts after (the session is marked terminated).
            let _written = slot.written.lock().await;
            slot.store
                .remove_served_by(&self.id, slot.node.as_deref())
                .await;
        }
        tracing::debug!("HTTP session ended");
    }
}

impl Session {
    /// Ends a session that was never registered (it lost a race or met a bound): its engine
    /// and channels close; the registry and the session store are not touched.
    pub(crate) fn discard(&self) {
        self.terminated.store(true, Ordering::Release);
        if let Ok(mut r) = self.routing.lock() {
            r.close_all();
        }
        self.inbound.close();
        if let Some(p) = self.peer.get() {
            p.close();
        }
    }
}

/// Detaches an SSE connection from its stream when the response body is dropped.
pub(crate) struct ConnGuard {
    pub(crate) session: Weak<Session>,
    pub(crate) stream: u64,
    pub(crate) conn: u64,
    /// Stateless mode: the one-POST session, ended with its stream.
    pub(crate) ephemeral: Option<Arc<Session>>,
}

impl Drop for ConnGuard {
    fn drop(&mut self) {
        if let Some(s) = self.ephemeral.take() {
            end_ephemeral(s);
            return;
        }
        if let Some(s) = self.session.upgrade() {
            tracing::trace!(
                stream = self.stream,
                conn = self.conn,
                "SSE connection ended"
            );
            if let Ok(mut r) = s.routing.lock() {
                r.detach(self.stream, self.conn);
            }
            s.touch();
        }
    }
}

/// Ends a stateless request's session: its stream is done (answered, or the client left, which
/// cancels the handler).
pub(crate) fn end_ephemeral(session: Arc<Session>) {
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        handle.spawn(async move { session.terminate().await });
    }
}

/// The progress token (as JSON text) and the progress of a `notifications/progress` frame.
pub(crate) fn progress_of(text: &str) -> Option<(String, f64)> {
    if !text.contains(switchboard_types::methods::NOTIFICATIONS_PROGRESS) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if v.get("method")?.as_str()? != switchboard_types::methods::NOTIFICATIONS_PROGRESS {
        return None;
    }
    let params = v.get("params")?;
    Some((
        params.get("progressToken")?.to_string(),
        params.get("progress")?.as_f64()?,
    ))
}

/// The most progress floors a session keeps (see [`Session::set_progress_floors`]).
const MAX_PROGRESS_FLOORS: usize = 1024;

/// All open sessions of one service.
pub(crate) struct Registry {
    sessions: Mutex<HashMap<Arc<str>, Arc<Session>>>,
    pub(crate) max: usize,
}

impl Registry {
    pub(crate) fn new(max: usize) -> Self {
        Registry {
            sessions: Mutex::default(),
            max,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// Inserts a session unless the bound is reached; when a session with the same id is
    /// already there (two requests taking over one session at once), that one is returned and
    /// kept.
    pub(crate) fn insert(&self, s: Arc<Session>) -> Result<Arc<Session>, ()> {
        let Ok(mut map) = self.sessions.lock() else {
            return Err(());
        };
        if let Some(existing) = map.get(&s.id) {
            return Ok(existing.clone());
        }
        if map.len() >= self.max {
            return Err(());
        }
        map.insert(s.id.clone(), s.clone());
        Ok(s)
    }

    fn remove(&self, id: &str) {
        if let Ok(mut map) = self.sessions.lock() {
            map.remove(id);
        }
    }

    fn all(&self) -> Vec<Arc<Session>> {
        self.sessions
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Ends sessions whose engine closed, and sessions idle for longer than `idle` (no request
    /// and no open stream). Returns how many ended.
    pub(crate) async fn reap(&self, idle: Option<Duration>) -> usize {
        let mut n = 0;
        let now = Instant::now();
        for s in self.all() {
            let live = s.routing.lock().map(|mut r| r.sweep(now)).unwrap_or(false);
            let expired = idle.is_some_and(|t| !live && s.idle_for() >= t);
            if s.is_terminated() || expired {
                if expired {
                    tracing::debug!("idle HTTP session reaped");
                }
                s.terminate().await;
                n += 1;
            }
        }
        n
    }

    /// The ids of the sessions this node serves and stores (not ephemeral, not ended).
    fn stored_ids(&self) -> Vec<Arc<str>> {
        self.sessions
            .lock()
            .map(|m| {
                m.values()
                    .filter(|s| s.record.is_some() && !s.is_terminated())
                    .map(|s| s.id.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ends every session; with `keep_records`, their records and events stay in the stores
    /// (a node of a cluster shutting down: another node takes them over).
    pub(crate) async fn close_all(&self, keep_records: bool) {
        for s in self.all() {
            s.end(!keep_records).await;
        }
    }
}

/// Runs the reaper until the registry is dropped. After each round the session store is told
/// which sessions this node still serves ([`SessionStore::keep_alive`]), so that a shared
/// store's records outlive no node and expire with none that serves them.
pub(crate) async fn reap_loop(
    registry: Weak<Registry>,
    idle: Option<Duration>,
    store: Arc<dyn SessionStore>,
) {
    let period = idle
        .map(|t| (t / 4).clamp(Duration::from_millis(10), Duration::from_secs(30)))
        .unwrap_or(Duration::from_secs(30));
    loop {
        tokio::time::sleep(period).await;
        let Some(reg) = registry.upgrade() else {
            return;
        };
        reg.reap(idle).await;
        let ids = reg.stored_ids();
        drop(reg);
        if !ids.is_empty() {
            store.keep_alive(&ids).await;
        }
    }
}

/// A new session id: 128 bits from the operating system's CSPRNG, as 32 lowercase hex digits
/// (visible ASCII, `[HT-18]`, `[SEC-SH-3]`).
///
/// # Errors
/// When the operating system's random source fails.
pub(crate) fn new_session_id() -> Result<Arc<str>, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    let mut s = String::with_capacity(32);
    for b in bytes {
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    Ok(Arc::from(s))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn ht18_session_ids_are_visible_ascii_and_distinct() {
        let a = new_session_id().unwrap();
        let b = new_session_id().unwrap();
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| (0x21..=0x7e).contains(&c)));
        assert_ne!(a, b);
    }

    #[test]
    fn progress_is_read_from_progress_notifications_only() {
        let p = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3}}"#;
        assert_eq!(progress_of(p), Some((r#""t""#.to_owned(), 3.0)));
        let other = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"notifications/progress"}}"#;
        assert_eq!(progress_of(other), None);
    }

    #[test]
    fn progress_floors_are_bounded_and_go_once_passed() {
        let mut f = ProgressFloors::default();
        let many = |from: usize, n: usize| -> HashMap<String, f64> {
            (from..from + n).map(|i| (format!("t{i}"), 5.0)).collect()
        };
        f.extend(many(0, MAX_PROGRESS_FLOORS - 1));
        f.extend(many(MAX_PROGRESS_FLOORS - 1, 10));
        assert_eq!(
            f.0.len(),
            MAX_PROGRESS_FLOORS,
            "filled up to the bound, no further"
        );
        // A token past the bound has no floor: its progress is sent.
        let kept: Vec<String> = f.0.keys().cloned().collect();
        let dropped = (0..MAX_PROGRESS_FLOORS + 9)
            .map(|i| format!("t{i}"))
            .find(|t| !kept.contains(t))
            .unwrap();
        assert!(!f.seen(&dropped, 1.0));
        // A kept token's values up to its floor are not sent again; the first past it is, and
        // its floor goes.
        let token = kept[0].clone();
        assert!(f.seen(&token, 5.0));
        assert!(!f.seen(&token, 6.0));
        assert!(!f.seen(&token, 1.0), "a floor passed is gone");
        assert_eq!(f.0.len(), MAX_PROGRESS_FLOORS - 1);
        // Room freed is room for a new floor; a token already kept may be raised when full.
        f.extend(many(5000, 2));
        assert_eq!(f.0.len(), MAX_PROGRESS_FLOORS);
        f.extend(HashMap::from([(kept[1].clone(), 9.0)]));
        assert!(f.seen(&kept[1], 8.0));
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod size_tests {
    /// Every HTTP session keeps one `Session` (in an `Arc`, 16 bytes more): at 752 bytes or
    /// less it takes jemalloc's 768-byte class, past it the 896-byte one.
    #[test]
    fn an_http_session_fits_its_allocation_class() {
        let size = std::mem::size_of::<super::Session>();
        assert!(size <= 752, "Session is {size} bytes");
    }
}
