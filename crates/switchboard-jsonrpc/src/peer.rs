//! The cheap-to-clone [`Peer`] handle: send requests and notifications to the other side.
//!
//! Outbound ids come from a counter owned by the session; the pending map routes each response
//! to its caller by id, in any order. A response whose id matches nothing is logged and dropped.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{
    ErrorObject, Message, MessageKind, Notification, RawJson, Request, RequestId, Response,
};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::SessionConfig;
use crate::error::RequestError;
use crate::framelog::{Flow, FrameEvent};
use crate::progress::{ProgressCallback, ProgressUpdate};
use crate::transport::OutboundFrame;
use switchboard_types::methods;

/// Options for one outbound request.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    /// Overrides the session's default timeout; `Some(None)` waits forever.
    pub timeout: Option<Option<Duration>>,
    /// Receives the peer's progress notifications; setting it adds `_meta.progressToken`.
    pub on_progress: Option<ProgressCallback>,
    /// Each progress notification restarts the timeout, up to `max_total`.
    pub reset_timeout_on_progress: bool,
    /// A hard ceiling on the whole wait, even with progress resets.
    pub max_total: Option<Duration>,
    /// Cancels the request: the engine sends `notifications/cancelled` and stops waiting.
    pub cancel: Option<CancellationToken>,
    /// Header lines to send with the request's frame (opaque to the engine; see
    /// [`OutboundFrame::headers`]).
    pub headers: Vec<(String, String)>,
    /// Told the request's id once it is chosen, before the frame is queued (so that a caller can
    /// file what the peer will say about the request, such as notifications naming it, before
    /// anything can arrive).
    pub on_id: Option<IdCallback>,
}

/// Receives the id chosen for an outbound request (see [`RequestOptions::on_id`]).
pub type IdCallback = Arc<dyn Fn(&RequestId) + Send + Sync>;

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("on_progress", &self.on_progress.is_some())
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("max_total", &self.max_total)
            .field("headers", &self.headers.len())
            .field("on_id", &self.on_id.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// Sets the timeout.
    pub fn with_timeout(mut self, t: Duration) -> Self {
        self.timeout = Some(Some(t));
        self
    }

    /// Waits without a timeout.
    pub fn without_timeout(mut self) -> Self {
        self.timeout = Some(None);
        self
    }

    /// Asks for progress, delivered to `f`.
    pub fn with_progress(mut self, f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Restarts the timeout on each progress notification, never past `max_total`.
    pub fn reset_on_progress(mut self, max_total: Duration) -> Self {
        self.reset_timeout_on_progress = true;
        self.max_total = Some(max_total);
        self
    }

    /// Ties the request to a cancellation token.
    pub fn with_cancel(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Adds a header line to send with the request's frame.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Calls `f` with the request's id once it is chosen, before the frame is queued.
    pub fn on_id(mut self, f: impl Fn(&RequestId) + Send + Sync + 'static) -> Self {
        self.on_id = Some(Arc::new(f));
        self
    }
}

/// What the handle asks of the role before one of our messages goes out: the outbound half of
/// the role's `Service` (the session wraps the service in it), so that the handle does not
/// depend on the inbound side.
pub(crate) trait SendRules: Send + Sync {
    /// Whether we may send a message of this kind and method now.
    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject>;
    /// Whether a request of ours with this method may be cancelled.
    fn cancellable(&self, method: &str) -> bool;
    /// What the role knows of the session, for the layers around our requests.
    fn facts(&self) -> crate::facts::Facts;
    /// The layers around our requests (and the frames' observers); `None` when no layer is
    /// installed. Kept here, not in the session's state, so a session without layers pays
    /// nothing for them.
    fn outbound(&self) -> Option<&dyn Outbound>;
    /// Handles one inbound frame as the session's reader does ([`Peer::receive`]); returns an
    /// answer the outbound queue had no room for.
    fn receive(
        &self,
        peer: &Peer,
        text: String,
        attachment: Option<&crate::transport::Attachment>,
    ) -> Option<OutboundFrame>;
}

/// The middleware around our requests, as the handle runs it (the session installs it when
/// layers are given): the send goes through it, and its last step is [`Peer::request_direct`].
pub(crate) trait Outbound: Send + Sync {
    /// Runs the request through the layers, then sends it.
    fn send(
        &self,
        peer: Peer,
        method: &str,
        params: Option<RawJson>,
        options: RequestOptions,
        facts: crate::facts::Facts,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<RawJson, RequestError>> + Send + 'static>,
    >;

    /// Tells the layers that one frame crossed side `side`'s transport.
    fn frame(&self, side: &'static str, event: &crate::framelog::FrameEvent<'_>);
}

pub(crate) struct PendingEntry {
    pub(crate) tx: oneshot::Sender<Result<RawJson, ErrorObject>>,
    pub(crate) method: Arc<str>,
    pub(crate) progress: Option<ProgressCallback>,
    pub(crate) last_progress: Option<f64>,
    pub(crate) activity: Arc<Notify>,
}

pub(crate) struct InflightEntry {
    pub(crate) cancel: CancellationToken,
    pub(crate) cancellable: bool,
}

/// How many recently cancelled or timed-out ids are remembered, so a late answer is recognised
/// (and dropped quietly) rather than reported as an orphan.
const RECENT_CANCELLED: usize = 64;

/// The ids of our requests given up lately (cancelled or timed out), the oldest forgotten past
/// [`RECENT_CANCELLED`].
#[derive(Debug, Default)]
pub(crate) struct RecentIds(VecDeque<RequestId>);

impl RecentIds {
    fn remember(&mut self, id: RequestId) {
        if self.0.len() == RECENT_CANCELLED {
            self.0.pop_front();
        }
        self.0.push_back(id);
    }

    fn contains(&self, id: &RequestId) -> bool {
        self.0.contains(id)
    }
}

pub(crate) struct Inner {
    pub(crate) config: SessionConfig,
    /// What the role decides of our own sends (the role's `Service`, as the session gives it).
    pub(crate) rules: Arc<dyn SendRules>,
    /// Frames waiting for the writer (bounded; allocates nothing while a session is idle).
    pub(crate) out: crate::queue::Queue<OutboundFrame>,
    pub(crate) next_id: AtomicI64,
    pub(crate) pending: Mutex<HashMap<RequestId, PendingEntry>>,
    pub(crate) recently_cancelled: Mutex<RecentIds>,
    pub(crate) inflight: Mutex<HashMap<RequestId, InflightEntry>>,
    pub(crate) shutdown: CancellationToken,
    pub(crate) closed: AtomicBool,
    /// Why the transport failed, when it did (set before `shutdown` is cancelled).
    /// A boxed `str` (not a `String`): with it `Inner` fits a smaller allocation class.
    pub(crate) close_reason: Mutex<Option<Box<str>>>,
    /// Signalled each time a peer request leaves the in-flight map.
    pub(crate) inflight_done: Notify,
    /// Set once the writer has flushed every queued frame and closed the transport (a flag
    /// and a `Notify`, which allocate nothing, where a second cancellation token would).
    pub(crate) flushed: AtomicBool,
    /// Signalled when `flushed` is set.
    pub(crate) flushed_signal: Notify,
    /// What the transport lets handlers control, if anything.
    pub(crate) control: Option<Arc<dyn crate::transport::TransportControl>>,
    /// The budget of log lines the peer's input may cause.
    pub(crate) log: crate::throttle::LogThrottle,
    /// Progress tokens watched apart from a pending request ([`Peer::watch_progress`]).
    pub(crate) watched: Mutex<HashMap<RequestId, Watched>>,
}

/// A progress token watched apart from a pending request, and what it last reported.
pub(crate) struct Watched {
    pub(crate) progress: ProgressCallback,
    pub(crate) last: Option<f64>,
}

/// Watches a progress token while it lives ([`Peer::watch_progress`]); dropping it stops the
/// watch.
#[must_use = "the watch ends when this is dropped"]
pub struct ProgressWatch {
    inner: Weak<Inner>,
    token: RequestId,
}

impl fmt::Debug for ProgressWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressWatch")
            .field("token", &self.token)
            .finish()
    }
}

impl ProgressWatch {
    /// The token watched.
    pub fn token(&self) -> &RequestId {
        &self.token
    }
}

impl Drop for ProgressWatch {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade()
            && let Ok(mut w) = inner.watched.lock()
        {
            w.remove(&self.token);
        }
    }
}

/// A handle to one session: sends to the peer. Cheap to clone.
#[derive(Clone)]
pub struct Peer {
    pub(crate) inner: Arc<Inner>,
    pub(crate) related: Option<RequestId>,
}

/// A weak handle that does not keep the session alive.
#[derive(Clone)]
pub struct WeakPeer(Weak<Inner>);

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("name", &self.inner.config.name)
            .field("related", &self.related)
            .finish()
    }
}

impl fmt::Debug for WeakPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WeakPeer(..)")
    }
}

impl WeakPeer {
    /// The peer, while its session is alive.
    pub fn upgrade(&self) -> Option<Peer> {
        self.0.upgrade().map(|inner| Peer {
            inner,
            related: None,
        })
    }
}

/// Removes the pending entry if the caller stops waiting, and tells the peer.
struct PendingGuard<'a> {
    peer: &'a Peer,
    id: RequestId,
    cancellable: bool,
    armed: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let removed = self.peer.inner.take_pending(&self.id).is_some();
            if removed {
                self.peer.inner.abandoned(&self.id);
            }
            if removed && self.cancellable {
                self.peer
                    .send_cancelled_now(&self.id, "request dropped by the caller");
            }
        }
    }
}

impl Inner {
    /// The error for a caller whose session ended: [`RequestError::ConnectionLost`] with the
    /// transport's reason, or [`RequestError::Closed`].
    pub(crate) fn closed_error(&self) -> RequestError {
        match self.close_reason.lock().ok().and_then(|r| r.clone()) {
            Some(reason) => RequestError::ConnectionLost(reason.into()),
            None => RequestError::Closed,
        }
    }

    pub(crate) fn take_pending(&self, id: &RequestId) -> Option<PendingEntry> {
        self.pending.lock().ok()?.remove(id)
    }

    /// Tells the transport that the caller of our request `id` gave up on it.
    pub(crate) fn abandoned(&self, id: &RequestId) {
        if let Some(control) = &self.control {
            control.request_abandoned(id);
        }
    }

    pub(crate) fn remember_cancelled(&self, id: RequestId) {
        if let Ok(mut q) = self.recently_cancelled.lock() {
            q.remember(id);
        }
    }

    pub(crate) fn was_cancelled(&self, id: &RequestId) -> bool {
        self.recently_cancelled
            .lock()
            .map(|q| q.contains(id))
            .unwrap_or(false)
    }

    /// Serializes, logs and queues one message.
    pub(crate) fn frame(&self, msg: &Message, related: Option<&RequestId>) -> OutboundFrame {
        let text = msg.to_json();
        let outbound = self.rules.outbound();
        if self.config.frame_hook.is_some() || outbound.is_some() {
            let event = FrameEvent {
                direction: Flow::Outbound,
                kind: Some(msg.kind()),
                id: msg.id(),
                method: msg.method(),
                text: &text,
                invalid: None,
                batch: false,
            };
            if let Some(hook) = &self.config.frame_hook {
                hook.call(&event);
            }
            if let Some(layers) = outbound {
                layers.frame(self.config.name, &event);
            }
        }
        OutboundFrame::new(text, msg.kind(), msg.id().cloned(), related.cloned())
    }

    pub(crate) async fn send_message(
        &self,
        msg: &Message,
        related: Option<&RequestId>,
    ) -> Result<(), RequestError> {
        self.send_frame(self.frame(msg, related)).await
    }

    /// Queues a frame already built (with its header lines or cancellation marker).
    pub(crate) async fn send_frame(&self, frame: OutboundFrame) -> Result<(), RequestError> {
        if self.shutdown.is_cancelled() {
            return Err(RequestError::Closed);
        }
        self.out.push(frame).await.map_err(|_| RequestError::Closed)
    }

    pub(crate) fn try_send_message(
        &self,
        msg: &Message,
        related: Option<&RequestId>,
        cancels: Option<&RequestId>,
    ) {
        if self.shutdown.is_cancelled() {
            return;
        }
        let mut frame = self.frame(msg, related);
        frame.cancels = cancels.cloned();
        if self.out.try_push(frame).is_err() {
            tracing::debug!(
                side = self.config.name,
                "outbound queue full or closed; frame dropped"
            );
        }
    }
}

impl Peer {
    /// A weak handle.
    pub fn downgrade(&self) -> WeakPeer {
        WeakPeer(Arc::downgrade(&self.inner))
    }

    /// The same peer, with sends no longer marked as related to a request.
    pub fn unrelated(&self) -> Peer {
        Peer {
            inner: self.inner.clone(),
            related: None,
        }
    }

    /// The request this handle's sends relate to.
    pub fn related(&self) -> Option<&RequestId> {
        self.related.as_ref()
    }

    /// The session's configuration.
    pub fn config(&self) -> &SessionConfig {
        &self.inner.config
    }

    /// Why the connection was lost, when the transport failed (e.g. the exit status of a child).
    pub fn close_reason(&self) -> Option<String> {
        self.inner
            .close_reason
            .lock()
            .ok()
            .and_then(|r| r.as_deref().map(str::to_owned))
    }

    /// The session's budget of log lines caused by the peer's input. A role checks it before
    /// logging anything the peer can repeat at will (`if peer.log_throttle().admit(..)`).
    pub fn log_throttle(&self) -> &crate::throttle::LogThrottle {
        &self.inner.log
    }

    /// Transport-specific controls (e.g. closing an SSE stream early), when the transport has any.
    pub fn transport_control(&self) -> Option<&Arc<dyn crate::transport::TransportControl>> {
        self.inner.control.as_ref()
    }

    /// Whether the session has closed.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Resolves when the session has closed and every frame queued before that was written to
    /// the transport (so a process may exit right after).
    pub async fn closed(&self) {
        self.inner.shutdown.cancelled().await;
        loop {
            let signalled = self.inner.flushed_signal.notified();
            if self.inner.flushed.load(Ordering::Acquire) {
                return;
            }
            signalled.await;
        }
    }

    /// Closes the session: queued frames are flushed, the transport is closed, in-flight handlers
    /// are dropped and waiting callers get [`RequestError::Closed`].
    pub fn close(&self) {
        self.inner.shutdown.cancel();
    }

    /// How many of our requests are waiting for answers.
    pub fn pending_count(&self) -> usize {
        self.inner.pending.lock().map(|p| p.len()).unwrap_or(0)
    }

    /// How many of the peer's requests are being handled.
    pub fn in_flight_count(&self) -> usize {
        self.inner.inflight.lock().map(|p| p.len()).unwrap_or(0)
    }

    /// Delivers the peer's progress notifications for `token` to `f` until the returned watch
    /// is dropped, whether or not a request of ours is waiting under that token: for work that
    /// outlives its request, such as a task whose creation was answered at once (MCP
    /// 2025-11-25: the token stays valid for the task's life). The caller puts `token` in the
    /// request's `_meta.progressToken` itself; progress that does not increase is dropped
    /// (`[UT-6]`). Watches count against `max_pending`.
    ///
    /// # Errors
    /// [`RequestError::NotAllowed`] when `token` is already watched or is the id of a pending
    /// request; [`RequestError::TooManyPending`] at the bound.
    pub fn watch_progress(
        &self,
        token: RequestId,
        f: impl Fn(ProgressUpdate) + Send + Sync + 'static,
    ) -> Result<ProgressWatch, RequestError> {
        let in_use = || {
            RequestError::NotAllowed(ErrorObject::invalid_params("progress token already in use"))
        };
        if self
            .inner
            .pending
            .lock()
            .map_err(|_| RequestError::Closed)?
            .contains_key(&token)
        {
            return Err(in_use());
        }
        let mut watched = self
            .inner
            .watched
            .lock()
            .map_err(|_| RequestError::Closed)?;
        if watched.contains_key(&token) {
            return Err(in_use());
        }
        if watched.len() >= self.inner.config.max_pending {
            return Err(RequestError::TooManyPending {
                limit: self.inner.config.max_pending,
            });
        }
        watched.insert(
            token.clone(),
            Watched {
                progress: Arc::new(f),
                last: None,
            },
        );
        Ok(ProgressWatch {
            inner: Arc::downgrade(&self.inner),
            token,
        })
    }

    /// Sends a request and waits for its result, as raw JSON.
    ///
    /// # Errors
    /// See [`RequestError`]: the peer's error, a timeout, cancellation, a closed session, a local
    /// refusal (no frame sent), or too many pending requests.
    pub async fn request(
        &self,
        method: &str,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<RawJson, RequestError> {
        let Some(outbound) = self.inner.rules.outbound() else {
            return self.request_direct(method, params, opts).await;
        };
        let mut facts = self.inner.rules.facts();
        facts.side = self.inner.config.name;
        self.fill_session_id(&mut facts);
        outbound
            .send(self.clone(), method, params, opts, facts)
            .await
    }

    /// Gives `facts` the transport's name for the session when the role named none (a client
    /// over Streamable HTTP learns its session id from the transport, not from the handshake).
    pub(crate) fn fill_session_id(&self, facts: &mut crate::facts::Facts) {
        if facts.session_id.is_none() {
            facts.session_id = self.inner.control.as_ref().and_then(|c| c.session_key());
        }
    }

    /// [`Peer::request`] past the layers: what the last layer's `next` does.
    pub(crate) async fn request_direct(
        &self,
        method: &str,
        params: Option<RawJson>,
        opts: RequestOptions,
    ) -> Result<RawJson, RequestError> {
        let inner = &self.inner;
        inner
            .rules
            .check_outbound(MessageKind::Request, method)
            .map_err(RequestError::NotAllowed)?;
        if self.is_closed() {
            return Err(inner.closed_error());
        }
        let id = RequestId::int(inner.next_id.fetch_add(1, Ordering::Relaxed));
        if let Some(f) = &opts.on_id {
            f(&id);
        }
        let params = match (&opts.on_progress, params) {
            (Some(_), p) => Some(with_progress_token(p, &id)?),
            (None, p) => p,
        };
        let activity = Arc::new(Notify::new());
        let (tx, rx) = oneshot::channel();
        {
            let mut pending = inner.pending.lock().map_err(|_| RequestError::Closed)?;
            if pending.len() >= inner.config.max_pending {
                return Err(RequestError::TooManyPending {
                    limit: inner.config.max_pending,
                });
            }
            pending.insert(
                id.clone(),
                PendingEntry {
                    tx,
                    method: Arc::from(method),
                    progress: opts.on_progress.clone(),
                    last_progress: None,
                    activity: activity.clone(),
                },
            );
        }
        let cancellable = inner.rules.cancellable(method);
        let mut guard = PendingGuard {
            peer: self,
            id: id.clone(),
            cancellable,
            armed: true,
        };
        let msg = Message::Request(Request {
            id: id.clone(),
            method: method.to_owned(),
            params,
        });
        let mut frame = inner.frame(&msg, self.related.as_ref());
        frame.headers = opts.headers.clone();
        if let Err(e) = inner.send_frame(frame).await {
            guard.armed = false;
            inner.take_pending(&id);
            return Err(e);
        }
        let timeout = opts.timeout.unwrap_or(inner.config.request_timeout);
        let started = Instant::now();
        let hard_deadline = opts.max_total.map(|m| started + m);
        let mut deadline = timeout.map(|t| started + t);
        if let (Some(d), Some(h)) = (deadline, hard_deadline) {
            deadline = Some(d.min(h));
        }
        let cancel = opts.cancel.clone().unwrap_or_default();
        let mut rx = rx;
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                answer = &mut rx => {
                    guard.armed = false;
                    return match answer {
                        Ok(Ok(result)) => Ok(result),
                        Ok(Err(e)) => Err(RequestError::Rejected(e)),
                        Err(_) => Err(inner.closed_error()),
                    };
                }
                _ = sleep => {
                    guard.armed = false;
                    let removed = inner.take_pending(&id).is_some();
                    if removed {
                        inner.abandoned(&id);
                    }
                    if removed && cancellable {
                        inner.remember_cancelled(id.clone());
                        let _ = self.send_cancelled(&id, "timeout").await;
                    }
                    return Err(RequestError::Timeout { method: method.to_owned(), after: started.elapsed() });
                }
                _ = activity.notified(), if opts.reset_timeout_on_progress => {
                    if let Some(t) = timeout {
                        let next = Instant::now() + t;
                        deadline = Some(hard_deadline.map_or(next, |h| next.min(h)));
                    }
                }
                _ = cancel.cancelled() => {
                    guard.armed = false;
                    let removed = inner.take_pending(&id).is_some();
                    if removed {
                        inner.abandoned(&id);
                    }
                    if removed && cancellable {
                        inner.remember_cancelled(id.clone());
                        let _ = self.send_cancelled(&id, "cancelled by the caller").await;
                    }
                    return Err(RequestError::Cancelled);
                }
                _ = inner.shutdown.cancelled() => {
                    guard.armed = false;
                    inner.take_pending(&id);
                    return Err(inner.closed_error());
                }
            }
        }
    }

    /// Sends a request with typed params and parses the result.
    ///
    /// # Errors
    /// As [`Peer::request`], plus [`RequestError::Serde`] when the result does not parse as `R`.
    pub async fn call<P: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<&P>,
        opts: RequestOptions,
    ) -> Result<R, RequestError> {
        let params = params.map(to_raw).transpose()?;
        let raw = self.request(method, params, opts).await?;
        // The parser's message may quote the peer's text: cut, like every echo.
        serde_json::from_str(raw.get()).map_err(|e| {
            let e = switchboard_types::error::echo(&e.to_string()).into_owned();
            RequestError::Serde(format!("result of {method}: {e}"))
        })
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// [`RequestError::NotAllowed`] when the role refuses it (no frame sent), or a closed session.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<(), RequestError> {
        self.inner
            .rules
            .check_outbound(MessageKind::Notification, method)
            .map_err(RequestError::NotAllowed)?;
        let n = Notification::new(method, params)?;
        self.inner
            .send_message(&Message::Notification(n), self.related.as_ref())
            .await
    }

    pub(crate) async fn notify_unchecked<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), RequestError> {
        let n = Notification::new(method, Some(params))?;
        self.inner
            .send_message(&Message::Notification(n), self.related.as_ref())
            .await
    }

    /// Sends an already-built message as is, with no capability check: for tests and tools that
    /// must put an exact frame on the wire.
    ///
    /// # Errors
    /// A closed session.
    pub async fn send_raw(&self, msg: &Message) -> Result<(), RequestError> {
        self.inner.send_message(msg, self.related.as_ref()).await
    }

    /// Sends `notifications/cancelled` for our request `id`, the frame marked with the id it
    /// cancels (see [`OutboundFrame::cancels`]).
    async fn send_cancelled(&self, id: &RequestId, reason: &str) -> Result<(), RequestError> {
        let params = serde_json::json!({"requestId": id, "reason": reason});
        let n = Notification::new(methods::NOTIFICATIONS_CANCELLED, Some(&params))?;
        let mut frame = self
            .inner
            .frame(&Message::Notification(n), self.related.as_ref());
        frame.cancels = Some(id.clone());
        self.inner.send_frame(frame).await
    }

    fn send_cancelled_now(&self, id: &RequestId, reason: &str) {
        self.inner.remember_cancelled(id.clone());
        let params = serde_json::json!({"requestId": id, "reason": reason});
        if let Ok(n) = Notification::new(methods::NOTIFICATIONS_CANCELLED, Some(&params)) {
            self.inner
                .try_send_message(&Message::Notification(n), self.related.as_ref(), Some(id));
        }
    }

    /// Queues a response without waiting. When the outbound queue is full, the frame is handed
    /// back: the reader queues it before it reads on, so a peer that does not read its answers
    /// is slowed down instead of piling them up.
    pub(crate) fn answer(&self, response: Response) -> Option<OutboundFrame> {
        let msg = Message::Response(response);
        if self.inner.shutdown.is_cancelled() {
            return None;
        }
        let frame = self.inner.frame(&msg, None);
        match self.inner.out.try_push(frame) {
            Err(crate::queue::PushError::Full(frame)) => Some(frame),
            _ => None,
        }
    }

    pub(crate) async fn respond(&self, response: Response) {
        let msg = Message::Response(response);
        if self.inner.send_message(&msg, None).await.is_err() {
            tracing::debug!(
                side = self.inner.config.name,
                "response not sent: session closed"
            );
        }
    }
}

/// Adds `_meta.progressToken` to params (creating the object when absent).
fn with_progress_token(
    params: Option<RawJson>,
    token: &RequestId,
) -> Result<RawJson, RequestError> {
    let mut obj: serde_json::Map<String, serde_json::Value> = match params {
        Some(p) => serde_json::from_str(p.get())?,
        None => serde_json::Map::new(),
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    match meta {
        serde_json::Value::Object(m) => {
            m.insert("progressToken".into(), token.to_value());
        }
        _ => return Err(RequestError::Serde("params._meta is not an object".into())),
    }
    Ok(to_raw(&obj)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recently_cancelled_ids_are_bounded_and_the_oldest_forgotten() {
        let mut r = RecentIds::default();
        for i in 0..=RECENT_CANCELLED as i64 {
            r.remember(RequestId::int(i));
        }
        assert_eq!(r.0.len(), RECENT_CANCELLED);
        // The first is forgotten (its late answer would be reported as an orphan); the others
        // are still recognised.
        assert!(!r.contains(&RequestId::int(0)));
        assert!(r.contains(&RequestId::int(1)));
        assert!(r.contains(&RequestId::int(RECENT_CANCELLED as i64)));
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod size_tests {
    /// Every session keeps one `Inner` (in an `Arc`, 16 bytes more): at 624 bytes or less it
    /// takes jemalloc's 640-byte class, past it the 768-byte one. Measured on the idle-session
    /// benchmark row (docs/PERF-NOTES.md).
    #[test]
    fn the_engine_state_of_a_session_fits_its_allocation_class() {
        let size = std::mem::size_of::<super::Inner>();
        assert!(size <= 624, "Inner is {size} bytes");
    }
}
