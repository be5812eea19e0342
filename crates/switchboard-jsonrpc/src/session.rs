//! The session: one reader loop and one writer task per connection.
//!
//! Data flows one way: frame text → [`Frame::decode`] → request / notification / response →
//! dispatch → handler → result → frame. The reader never waits on a handler: each request runs as
//! its own task, so a slow request never delays another. Responses are routed to waiting callers
//! by id, in any order.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::join_all;
use serde::Deserialize;
use switchboard_types::jsonrpc::batch_to_json;
use switchboard_types::{
    DecodeError, ErrorCode, ErrorObject, Frame, Message, MessageKind, Notification, Request,
    RequestId, Response,
};
use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::config::SessionConfig;
use crate::framelog::{Flow, FrameEvent};
use crate::layer::{Layered, Layers, OutboundLayers};
use crate::peer::{InflightEntry, Inner, Outbound, Peer, SendRules};
use crate::service::{
    BoxFuture, ProgressSlot, ProgressState, ProgressUpdate, RequestContext, Service,
};
use crate::throttle::shown;
use crate::transport::{
    Attachment, Driver, FrameSink, FrameSource, OutboundFrame, Transport, TransportError,
};
use switchboard_types::error::echo;
use switchboard_types::methods;

/// Starts a session on `transport`, answering the peer with `service`. Must be called inside a
/// Tokio runtime. Returns the handle used to talk to the peer.
pub fn spawn<T: Transport>(transport: T, service: Arc<dyn Service>, config: SessionConfig) -> Peer {
    spawn_layered(transport, service, config, &Layers::new())
}

/// [`spawn`] with middleware: `layers` around every request and notification the peer sends and
/// every request sent through the returned handle. With no layer this is [`spawn`] exactly.
pub fn spawn_layered<T: Transport>(
    transport: T,
    service: Arc<dyn Service>,
    config: SessionConfig,
    layers: &Layers,
) -> Peer {
    let control = transport.control();
    let slot = transport.driver_slot();
    let (sink, source) = transport.split();
    // Middleware, when installed, wraps the role once here; without it nothing changes.
    let (service, outbound): (Arc<dyn Service>, Option<Arc<dyn Outbound>>) = if layers.is_empty() {
        (service, None)
    } else {
        layers.session_opened(config.name);
        (
            Arc::new(Layered {
                service,
                layers: layers.clone(),
                side: config.name,
            }),
            Some(Arc::new(OutboundLayers(layers.clone()))),
        )
    };
    let inner = new_inner(control, service.clone(), config, outbound);
    let peer = Peer {
        inner: inner.clone(),
        related: None,
    };
    let writer = write_loop(sink, inner.clone());
    let reader = read_loop(source, peer.clone(), service);
    match slot {
        // One future, run where the transport chooses (see `Transport::driver_slot`); a slot
        // already holding a driver takes no other, and that one goes on as a task.
        Some(slot) => {
            let _ = slot.put(Driver::new(async move {
                tokio::join!(reader, writer);
            }));
        }
        None => {
            tokio::spawn(writer);
            tokio::spawn(reader);
        }
    }
    peer
}

/// The session's shared state, before its tasks start.
fn new_inner(
    control: Option<Arc<dyn crate::transport::TransportControl>>,
    service: Arc<dyn Service>,
    config: SessionConfig,
    outbound: Option<Arc<dyn Outbound>>,
) -> Arc<Inner> {
    let config_log_rate = config.log_lines_per_second;
    Arc::new(Inner {
        out: crate::queue::Queue::new(config.outbound_queue),
        config,
        rules: Arc::new(ServiceRules { service, outbound }),
        next_id: AtomicI64::new(1),
        pending: Mutex::default(),
        recently_cancelled: Mutex::default(),
        watched: Mutex::default(),
        inflight: Mutex::default(),
        shutdown: CancellationToken::new(),
        closed: AtomicBool::new(false),
        close_reason: Mutex::new(None),
        inflight_done: tokio::sync::Notify::new(),
        flushed: AtomicBool::new(false),
        flushed_signal: tokio::sync::Notify::new(),
        control,
        log: crate::throttle::LogThrottle::new(config_log_rate),
    })
}

/// The role's service as the [`Peer`] handle sees it: the rules for our own sends.
struct ServiceRules {
    service: Arc<dyn Service>,
    outbound: Option<Arc<dyn Outbound>>,
}

impl SendRules for ServiceRules {
    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        self.service.check_outbound(kind, method)
    }

    fn cancellable(&self, method: &str) -> bool {
        self.service.cancellable(method)
    }

    fn facts(&self) -> crate::facts::Facts {
        self.service.facts(None)
    }

    fn outbound(&self) -> Option<&dyn Outbound> {
        self.outbound.as_deref()
    }

    fn receive(
        &self,
        peer: &Peer,
        text: String,
        attachment: Option<&Attachment>,
    ) -> Option<OutboundFrame> {
        on_frame(peer, &*self.service, text, attachment)
    }
}

impl Peer {
    /// Handles one frame the transport received in the caller's task, as the session's reader
    /// would: decoded, dispatched, and a request whose handler is ready at once answered
    /// (queued for the writer) before this returns; any other runs as a task of its own. For a
    /// transport whose frames arrive on tasks of their own (Streamable HTTP: each POST's), so
    /// that such a request crosses no task on its way in. Frames handed over this way are
    /// ordered neither against each other nor against those the reader reads (a transport
    /// whose frames have an order hands them to its [`FrameSource`]). When the outbound queue
    /// is full, this waits for room, as the reader does. Returns `false` when the session has
    /// closed (the frame is not handled).
    pub async fn receive(&self, text: String, attachment: Option<Attachment>) -> bool {
        let inner = &self.inner;
        if self.is_closed() || inner.shutdown.is_cancelled() {
            return false;
        }
        match inner.rules.receive(self, text, attachment.as_ref()) {
            Some(frame) => queue_backlog(self, frame).await,
            None => true,
        }
    }
}

/// Queues an answer that found the outbound queue full, once there is room; `false` when the
/// session closed first (the answer is dropped with it).
async fn queue_backlog(peer: &Peer, frame: OutboundFrame) -> bool {
    tokio::select! {
        biased;
        _ = peer.inner.shutdown.cancelled() => false,
        _ = peer.inner.out.push(frame) => true,
    }
}

/// A request's answer to come: the response, or nothing when the request was cancelled.
type Answer = BoxFuture<Option<(Peer, Response)>>;

/// The most frames handed to the transport in one [`FrameSink::send_batch`].
const WRITE_BATCH: usize = 64;

async fn write_loop<S: FrameSink>(mut sink: S, inner: Arc<Inner>) {
    let shutdown = inner.shutdown.clone();
    let name = inner.config.name;
    // Everything queued goes out together: one write for many answers under load.
    let mut batch: Vec<OutboundFrame> = Vec::new();
    loop {
        tokio::select! {
            biased;
            n = inner.out.pop_into(&mut batch, WRITE_BATCH) => {
                if n == 0 {
                    break;
                }
                // Boxed: the transport's send is the largest future this loop awaits, and
                // inline it would sit in the task of every idle session.
                let sent = Box::pin(sink.send_batch(&mut batch)).await;
                if inner.out.is_empty() {
                    // Quiet again: an idle session keeps no batch storage.
                    batch = Vec::new();
                } else {
                    batch.clear();
                }
                if let Err(e) = sent {
                    tracing::debug!(side = name, error = %e, "transport send failed; closing");
                    // Waiting callers learn why (e.g. the child process exited).
                    if let Ok(mut r) = inner.close_reason.lock() {
                        r.get_or_insert_with(|| e.to_string().into());
                    }
                    shutdown.cancel();
                    break;
                }
            }
            _ = shutdown.cancelled() => {
                // Flush what is already queued, then close.
                while let Some(f) = inner.out.try_pop() {
                    if Box::pin(sink.send(f)).await.is_err() {
                        break;
                    }
                }
                break;
            }
        }
    }
    inner.out.close();
    let _ = Box::pin(sink.close()).await;
    inner.flushed.store(true, Ordering::Release);
    inner.flushed_signal.notify_waiters();
}

async fn read_loop<S: FrameSource>(mut source: S, peer: Peer, service: Arc<dyn Service>) {
    let shutdown = peer.inner.shutdown.clone();
    loop {
        let next = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            next = source.recv() => next,
        };
        let backlog = match next {
            None => {
                // A clean end of input: let requests already being handled finish (bounded by
                // `eof_grace`) so that `printf frames | server` still gets every answer.
                Box::pin(drain(&peer)).await;
                break;
            }
            Some(Ok(text)) => {
                let attachment = source.take_attachment();
                on_frame(&peer, &*service, text, attachment.as_ref())
            }
            Some(Err(e)) if e.is_recoverable() => on_bad_frame(&peer, &e),
            Some(Err(e)) => {
                tracing::debug!(side = peer.inner.config.name, error = %e, "transport failed; closing");
                if let Ok(mut r) = peer.inner.close_reason.lock() {
                    *r = Some(e.to_string().into());
                }
                break;
            }
        };
        if let Some(frame) = backlog {
            // The outbound queue is full: the answer waits for room, and so does the next read.
            // Boxed, as is the wait at the end of input: neither may grow the task every
            // idle session keeps.
            if !Box::pin(queue_backlog(&peer, frame)).await {
                break;
            }
        }
    }
    finish(&peer, &*service);
}

/// Waits until no peer request is in flight, or `eof_grace` has passed.
async fn drain(peer: &Peer) {
    let deadline = tokio::time::Instant::now() + peer.inner.config.eof_grace;
    loop {
        let notified = peer.inner.inflight_done.notified();
        if peer.in_flight_count() == 0 {
            return;
        }
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep_until(deadline) => {
                tracing::debug!(side = peer.inner.config.name, left = peer.in_flight_count(), "end of input: handlers still running are dropped");
                return;
            }
            _ = peer.inner.shutdown.cancelled() => return,
        }
    }
}

/// Closes the session: stops the writer after a flush, drops handlers, fails waiting callers.
fn finish(peer: &Peer, svc: &dyn Service) {
    let inner = &peer.inner;
    inner.closed.store(true, Ordering::Release);
    inner.shutdown.cancel();
    if let Ok(mut inflight) = inner.inflight.lock() {
        for (_, e) in inflight.drain() {
            e.cancel.cancel();
        }
    }
    if let Ok(mut pending) = inner.pending.lock() {
        pending.clear();
    }
    inner.log.flush(inner.config.name);
    svc.closed();
}

/// Logs a line about the peer's input at `level`, within the session's [`LogThrottle`] budget.
/// Peer-supplied text in the fields goes through [`shown`].
///
/// [`LogThrottle`]: crate::throttle::LogThrottle
macro_rules! peer_log {
    ($peer:expr, $level:ident, $($arg:tt)+) => {
        if tracing::enabled!(tracing::Level::$level)
            && $peer.inner.log.admit($peer.inner.config.name)
        {
            tracing::event!(tracing::Level::$level, $($arg)+);
        }
    };
}

/// A frame's text as a log line shows it (cut), with its full length in bytes.
fn frame_fields(text: &str) -> (std::borrow::Cow<'_, str>, usize) {
    (shown(text), text.len())
}

/// A request id as a log line shows it (a string id can be as long as the frame allows).
fn id_shown(id: &RequestId) -> String {
    shown(&id.to_string()).into_owned()
}

fn on_bad_frame(peer: &Peer, e: &TransportError) -> Option<OutboundFrame> {
    let err = match e {
        TransportError::FrameTooLarge { limit } => {
            ErrorObject::new(ErrorCode::INVALID_REQUEST, "frame too large")
                .with_data(serde_json::json!({"reason": "frame_too_large", "limit": limit}))
        }
        _ => ErrorObject::parse_error("frame is not valid UTF-8"),
    };
    peer_log!(peer, WARN, side = peer.inner.config.name, error = %e, "bad frame discarded");
    answer_idless(peer, Response::error(None, err))
}

/// Queues an answer that carries no id (the frame's id was unreadable) when there is room, and
/// drops it otherwise: nobody can be waiting for it, and a peer that floods us with garbage
/// while it reads nothing back must not stall the reader (both sides would wait on each other).
fn answer_idless(peer: &Peer, response: Response) -> Option<OutboundFrame> {
    if peer.answer(response).is_some() {
        peer_log!(
            peer,
            DEBUG,
            side = peer.inner.config.name,
            "outbound queue full: an answer without id dropped"
        );
    }
    None
}

fn log_inbound(
    peer: &Peer,
    msg: Option<&Message>,
    text: &str,
    invalid: Option<&ErrorObject>,
    batch: bool,
) {
    let (config, layers) = (&peer.inner.config, peer.inner.rules.outbound());
    if config.frame_hook.is_some() || layers.is_some() {
        let event = FrameEvent {
            direction: Flow::Inbound,
            kind: msg.map(Message::kind),
            id: msg.and_then(Message::id),
            method: msg.and_then(Message::method),
            text,
            invalid,
            batch,
        };
        if let Some(hook) = &config.frame_hook {
            hook.call(&event);
        }
        if let Some(layers) = layers {
            layers.frame(config.name, &event);
        }
    }
}

/// Handles one frame. Returns an answer that did not fit in the outbound queue: the reader
/// queues it before it reads on.
fn on_frame(
    peer: &Peer,
    svc: &dyn Service,
    text: String,
    att: Option<&Attachment>,
) -> Option<OutboundFrame> {
    let inner = &peer.inner;
    if text.len() > inner.config.max_frame_bytes {
        let err = ErrorObject::new(ErrorCode::INVALID_REQUEST, "frame too large").with_data(
            serde_json::json!({"reason": "frame_too_large", "limit": inner.config.max_frame_bytes}),
        );
        log_inbound(peer, None, "", Some(&err), false);
        peer_log!(
            peer,
            WARN,
            side = inner.config.name,
            bytes = text.len(),
            "frame over the size bound discarded"
        );
        return answer_idless(peer, Response::error(None, err));
    }
    match Frame::decode(&text) {
        Err(e) => on_decode_error(peer, &text, &e, false),
        Ok(Frame::Single(Err(e))) => on_decode_error(peer, &text, &e, false),
        Ok(Frame::Single(Ok(msg))) => {
            log_inbound(peer, Some(&msg), &text, None, false);
            let mut fut = dispatch(peer, svc, msg, &text, att)?;
            // A handler that is ready at once (ping, lists, `initialize`) is answered inline:
            // no task, and its answer is queued before the next frame is read, so answers to
            // synchronous requests keep frame order. Anything else runs as its own task (at
            // most `max_in_flight` of them: over the bound a request is answered at once).
            match (&mut fut).now_or_never() {
                Some(Some((p, r))) => p.answer(r),
                Some(None) => None,
                None => {
                    tokio::spawn(async move {
                        if let Some((p, r)) = fut.await {
                            p.respond(r).await;
                        }
                    });
                    None
                }
            }
        }
        Ok(Frame::Batch(items)) => on_batch(peer, svc, &text, items, att),
    }
}

/// A frame (or, in a batch, an entry) that is not a valid message. Outside a batch the answer,
/// when it gets one, is queued here; a batch entry's answer goes into the batch's array.
fn on_decode_error(peer: &Peer, text: &str, e: &DecodeError, batch: bool) -> Option<OutboundFrame> {
    log_inbound(peer, None, text, Some(&e.error), batch);
    if batch {
        return None; // The batch logs its invalid entries once, as one line.
    }
    if e.answerable {
        peer_log!(peer, DEBUG, side = peer.inner.config.name, error = %e.error, "invalid frame answered");
        let response = Response::error(e.id.clone(), e.error.clone());
        match e.id {
            Some(_) => peer.answer(response),
            None => answer_idless(peer, response),
        }
    } else {
        let (frame, bytes) = frame_fields(text);
        peer_log!(peer, WARN, side = peer.inner.config.name, error = %e.error, %frame, bytes, "invalid notification or response dropped");
        None
    }
}

/// A batch (JSON-RPC array): allowed only when the role says so (2025-03-26, `[JR-12]`); its
/// requests are answered together in one array, its notifications not at all.
///
/// Every entry is dispatched before any handler is polled, so an id repeated inside the batch
/// meets the first one in the in-flight map (-32600): one hash lookup per entry, no pairwise
/// comparison. When every answer is ready at once, the array is queued here (in frame order,
/// with backpressure like a single answer); otherwise one task waits for the rest.
fn on_batch(
    peer: &Peer,
    svc: &dyn Service,
    text: &str,
    items: Vec<Result<Message, DecodeError>>,
    att: Option<&Attachment>,
) -> Option<OutboundFrame> {
    if !svc.batch_allowed() {
        let err = ErrorObject::invalid_request(
            "batches are not accepted by the negotiated protocol revision",
            "batch_not_allowed",
        );
        log_inbound(peer, None, text, Some(&err), true);
        return answer_idless(peer, Response::error(None, err));
    }
    let entries = items.len();
    let mut invalid = 0usize;
    let mut dropped = 0usize;
    let mut futures: Vec<Answer> = Vec::new();
    let mut immediate: Vec<Response> = Vec::new();
    for item in items {
        match item {
            Err(e) => {
                invalid += 1;
                on_decode_error(peer, text, &e, true);
                if e.answerable {
                    immediate.push(Response::error(e.id.clone(), e.error.clone()));
                } else {
                    dropped += 1;
                }
            }
            Ok(Message::Request(r)) if !svc.allowed_in_batch(&r.method) => {
                let err = ErrorObject::invalid_request(
                    format!("{} must not be sent in a batch", echo(&r.method)),
                    "not_allowed_in_batch",
                );
                log_inbound(
                    peer,
                    Some(&Message::Request(r.clone())),
                    text,
                    Some(&err),
                    true,
                );
                immediate.push(Response::error(Some(r.id), err));
            }
            Ok(msg) => {
                log_inbound(peer, Some(&msg), text, None, true);
                if let Some(f) = dispatch(peer, svc, msg, text, att) {
                    futures.push(f);
                }
            }
        }
    }
    if invalid > 0 {
        // One line for the whole batch, however many of its entries are bad.
        let (frame, bytes) = frame_fields(text);
        if dropped > 0 {
            peer_log!(peer, WARN, side = peer.inner.config.name, invalid, dropped, entries, %frame, bytes, "batch with invalid entries; invalid notifications and responses dropped");
        } else {
            peer_log!(peer, DEBUG, side = peer.inner.config.name, invalid, entries, %frame, bytes, "batch with invalid entries answered");
        }
    }
    if futures.is_empty() && immediate.is_empty() {
        return None; // A batch of notifications and responses gets no reply.
    }
    // Poll each handler once, in frame order; ready answers need no task.
    let mut answers: Vec<Option<Response>> = Vec::with_capacity(futures.len());
    let mut waiting: Vec<(usize, Answer)> = Vec::new();
    for mut fut in futures {
        match (&mut fut).now_or_never() {
            Some(answer) => answers.push(answer.map(|(_, r)| r)),
            None => {
                waiting.push((answers.len(), fut));
                answers.push(None);
            }
        }
    }
    if waiting.is_empty() {
        let frame = batch_frame(peer, immediate, answers)?;
        return match peer.inner.out.try_push(frame) {
            Err(crate::queue::PushError::Full(frame)) => Some(frame),
            _ => None,
        };
    }
    let peer = peer.clone();
    tokio::spawn(async move {
        let (slots, futures): (Vec<usize>, Vec<_>) = waiting.into_iter().unzip();
        for (slot, answer) in slots.into_iter().zip(join_all(futures).await) {
            answers[slot] = answer.map(|(_, r)| r);
        }
        if let Some(frame) = batch_frame(&peer, immediate, answers) {
            let _ = peer.inner.out.push(frame).await;
        }
    });
    None
}

/// The answer to a batch: one array, the entries' own errors first, then the requests' answers
/// in frame order; `None` when nothing is to be answered (every request was cancelled).
fn batch_frame(
    peer: &Peer,
    immediate: Vec<Response>,
    answers: Vec<Option<Response>>,
) -> Option<OutboundFrame> {
    let messages: Vec<Message> = immediate
        .into_iter()
        .chain(answers.into_iter().flatten())
        .map(Message::Response)
        .collect();
    if messages.is_empty() {
        return None;
    }
    let frame = OutboundFrame::new(batch_to_json(&messages), MessageKind::Result, None, None);
    let (config, layers) = (&peer.inner.config, peer.inner.rules.outbound());
    if config.frame_hook.is_some() || layers.is_some() {
        let event = FrameEvent {
            direction: Flow::Outbound,
            kind: Some(frame.kind),
            id: None,
            method: None,
            text: &frame.text,
            invalid: None,
            batch: true,
        };
        if let Some(hook) = &config.frame_hook {
            hook.call(&event);
        }
        if let Some(layers) = layers {
            layers.frame(config.name, &event);
        }
    }
    Some(frame)
}

/// Dispatches one message. For a request, returns the future that yields its response (or
/// nothing, when it was cancelled).
fn dispatch(
    peer: &Peer,
    svc: &dyn Service,
    msg: Message,
    text: &str,
    att: Option<&Attachment>,
) -> Option<Answer> {
    match msg {
        Message::Request(r) => Some(on_request(peer, svc, r, att.cloned())),
        Message::Notification(n) => {
            on_notification(peer, svc, n);
            None
        }
        Message::Response(r) => {
            on_response(peer, r, text);
            None
        }
    }
}

fn on_request(
    peer: &Peer,
    svc: &dyn Service,
    req: Request,
    attachment: Option<Attachment>,
) -> Answer {
    let inner = &peer.inner;
    let cancel = inner.shutdown.child_token();
    {
        let Ok(mut inflight) = inner.inflight.lock() else {
            return Box::pin(async { None });
        };
        if inflight.contains_key(&req.id) {
            let err = ErrorObject::invalid_request(
                format!(
                    "request id {} is already in flight",
                    echo(&req.id.to_string())
                ),
                "duplicate_request_id",
            );
            let r = Response::error(Some(req.id), err);
            let p = peer.clone();
            return Box::pin(async move { Some((p, r)) });
        }
        if inflight.len() >= inner.config.max_in_flight {
            let err = ErrorObject::new(ErrorCode::INTERNAL_ERROR, "too many requests in flight")
                .with_data(serde_json::json!({"reason": "too_many_requests", "limit": inner.config.max_in_flight}));
            let r = Response::error(Some(req.id), err);
            let p = peer.clone();
            return Box::pin(async move { Some((p, r)) });
        }
        let cancellable = svc.cancellable(&req.method);
        inflight.insert(
            req.id.clone(),
            InflightEntry {
                cancel: cancel.clone(),
                cancellable,
            },
        );
    }
    let progress = req
        .params
        .as_ref()
        .and_then(|p| progress_token_of(p.get()))
        .map(|token| ProgressSlot {
            token,
            state: Arc::new(AsyncMutex::new(ProgressState::default())),
        });
    let id = req.id.clone();
    let cx = RequestContext {
        id: id.clone(),
        peer: Peer {
            inner: inner.clone(),
            related: Some(id.clone()),
        },
        cancel: cancel.clone(),
        progress: progress.clone(),
        attachment,
    };
    let method: String = echo(&req.method).into_owned();
    // The role's synchronous part (lifecycle, policies, input checks, completion providers) can
    // panic as well as the future it returns: both become -32603.
    // Both arms are held inline in the answer's future: no second box around the handler's.
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| svc.call(req, cx))) {
        Ok(fut) => futures::future::Either::Left(AssertUnwindSafe(fut).catch_unwind()),
        Err(panic) => futures::future::Either::Right(std::future::ready(Err(panic))),
    };
    let peer = peer.clone();
    Box::pin(async move {
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => None,
            r = fut => Some(r),
        };
        // No progress may follow the response (`[UT-7]`), unless the handler kept the token
        // for work that outlives it; that work ends it.
        if let Some(p) = &progress {
            let mut state = p.state.lock().await;
            state.answered = true;
            if !state.kept {
                state.done = true;
            }
        }
        if let Ok(mut inflight) = peer.inner.inflight.lock() {
            inflight.remove(&id);
            if inflight.is_empty() && inflight.capacity() > 0 {
                // An idle session keeps no table.
                *inflight = std::collections::HashMap::new();
            }
        }
        peer.inner.inflight_done.notify_waiters();
        let response = match outcome? {
            Ok(Ok(result)) => Response::result(id, result),
            Ok(Err(e)) => Response::error(Some(id), e),
            Err(panic) => {
                let what = panic_message(&panic);
                peer_log!(peer, ERROR, side = peer.inner.config.name, %method, panic = %shown(&what), "request handler panicked");
                Response::error(
                    Some(id),
                    ErrorObject::new(
                        ErrorCode::INTERNAL_ERROR,
                        "Internal error: the handler failed",
                    )
                    .with_data(serde_json::json!({"reason": "handler_panicked", "method": method})),
                )
            }
        };
        Some((peer, response))
    })
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

fn progress_token_of(params: &str) -> Option<RequestId> {
    if !params.contains("\"progressToken\"") {
        return None;
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken")]
        progress_token: Option<RequestId>,
    }
    #[derive(Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: Option<Meta>,
    }
    serde_json::from_str::<P>(params).ok()?.meta?.progress_token
}

fn on_notification(peer: &Peer, svc: &dyn Service, n: Notification) {
    match n.method.as_str() {
        methods::NOTIFICATIONS_CANCELLED => on_cancelled(peer, &n),
        methods::NOTIFICATIONS_PROGRESS => on_progress(peer, &n),
        _ => {}
    }
    // The role sees every notification, the cross-cutting ones included (for its own records).
    // A panic in it is the role's bug, not the session's end.
    let method = n.method.clone();
    let delivered = std::panic::catch_unwind(AssertUnwindSafe(|| svc.notify(n, peer)));
    if let Err(panic) = delivered {
        let what = panic_message(&panic);
        peer_log!(peer, ERROR, side = peer.inner.config.name, method = %shown(&method), panic = %shown(&what), "notification handler panicked; the session goes on");
    }
}

fn on_cancelled(peer: &Peer, n: &Notification) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: Option<RequestId>,
    }
    let Some(id) = n
        .params
        .as_ref()
        .and_then(|p| serde_json::from_str::<Cancelled>(p.get()).ok())
        .and_then(|c| c.request_id)
    else {
        peer_log!(
            peer,
            DEBUG,
            side = peer.inner.config.name,
            "malformed cancellation ignored"
        );
        return;
    };
    let cancelled = {
        let Ok(inflight) = peer.inner.inflight.lock() else {
            return;
        };
        match inflight.get(&id) {
            Some(e) if e.cancellable => {
                tracing::debug!(side = peer.inner.config.name, id = %id_shown(&id), "request cancelled by the peer");
                e.cancel.cancel();
                true
            }
            Some(_) => {
                peer_log!(peer, WARN, side = peer.inner.config.name, id = %id_shown(&id), "cancellation of a request that cannot be cancelled ignored");
                false
            }
            None => {
                peer_log!(peer, DEBUG, side = peer.inner.config.name, id = %id_shown(&id), "cancellation of an unknown or finished request ignored");
                false
            }
        }
    };
    // The request will never be answered: the transport may end what waits for its answer.
    if let (true, Some(control)) = (cancelled, &peer.inner.control) {
        control.request_cancelled(&id);
    }
}

fn on_progress(peer: &Peer, n: &Notification) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Progress {
        progress_token: RequestId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    }
    let Some(p) = n
        .params
        .as_ref()
        .and_then(|p| serde_json::from_str::<Progress>(p.get()).ok())
    else {
        peer_log!(
            peer,
            DEBUG,
            side = peer.inner.config.name,
            "malformed progress ignored"
        );
        return;
    };
    // A watched token is the caller's own choice (a gateway passing a client's token on), so
    // it keeps its progress even when a request sent later got the same number as its id.
    if peer
        .inner
        .watched
        .lock()
        .is_ok_and(|w| w.contains_key(&p.progress_token))
    {
        on_watched_progress(peer, p.progress_token, p.progress, p.total, p.message);
        return;
    }
    let callback = {
        let Ok(mut pending) = peer.inner.pending.lock() else {
            return;
        };
        let Some(entry) = pending.get_mut(&p.progress_token) else {
            drop(pending);
            on_watched_progress(peer, p.progress_token, p.progress, p.total, p.message);
            return;
        };
        if entry
            .last_progress
            .is_some_and(|last| p.progress.partial_cmp(&last) != Some(std::cmp::Ordering::Greater))
        {
            peer_log!(peer, WARN, side = peer.inner.config.name, token = %id_shown(&p.progress_token), "progress that does not increase dropped");
            return;
        }
        entry.last_progress = Some(p.progress);
        entry.activity.notify_one();
        entry.progress.clone()
    };
    if let Some(cb) = callback {
        cb(ProgressUpdate {
            progress: p.progress,
            total: p.total,
            message: p.message,
        });
    }
}

/// Progress for a token watched apart from a pending request ([`Peer::watch_progress`]).
fn on_watched_progress(
    peer: &Peer,
    token: RequestId,
    progress: f64,
    total: Option<f64>,
    message: Option<String>,
) {
    let callback = {
        let Ok(mut watched) = peer.inner.watched.lock() else {
            return;
        };
        let Some(w) = watched.get_mut(&token) else {
            peer_log!(peer, DEBUG, side = peer.inner.config.name, token = %id_shown(&token), "progress for no active request dropped");
            return;
        };
        if w.last
            .is_some_and(|last| progress.partial_cmp(&last) != Some(std::cmp::Ordering::Greater))
        {
            peer_log!(peer, WARN, side = peer.inner.config.name, token = %id_shown(&token), "progress that does not increase dropped");
            return;
        }
        w.last = Some(progress);
        w.progress.clone()
    };
    callback(ProgressUpdate {
        progress,
        total,
        message,
    });
}

fn on_response(peer: &Peer, r: Response, text: &str) {
    let inner = &peer.inner;
    let Some(id) = r.id.clone() else {
        let (frame, bytes) = frame_fields(text);
        match &r.outcome {
            Err(e) => {
                let error = shown(&e.to_string()).into_owned();
                peer_log!(peer, WARN, side = inner.config.name, %error, %frame, bytes, "error response without id")
            }
            Ok(_) => {
                peer_log!(peer, WARN, side = inner.config.name, %frame, bytes, "result without id dropped")
            }
        }
        return;
    };
    match inner.take_pending(&id) {
        Some(entry) => {
            tracing::trace!(side = inner.config.name, %id, method = %entry.method, "response routed");
            let _ = entry.tx.send(r.outcome);
        }
        None if inner.was_cancelled(&id) => {
            peer_log!(peer, DEBUG, side = inner.config.name, %id, "late answer to a cancelled request dropped");
        }
        None => {
            let (frame, bytes) = frame_fields(text);
            peer_log!(peer, WARN, side = inner.config.name, id = %id_shown(&id), %frame, bytes, "orphan response: no request with this id is waiting; dropped");
        }
    }
}

/// Wraps a service for tests that need none: answers every request with -32601.
#[derive(Debug, Default)]
pub struct NullService;

impl Service for NullService {
    fn call(
        &self,
        request: Request,
        _cx: RequestContext,
    ) -> BoxFuture<crate::service::HandlerResult> {
        let m = request.method;
        Box::pin(async move { Err(ErrorObject::method_not_found(&m)) })
    }

    fn notify(&self, _notification: Notification, _peer: &Peer) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every idle session keeps its reader and writer tasks, futures inline: what they await
    /// rarely, or what is large (the transport's send and close), is boxed so that it does not
    /// set their size (about 300 bytes each here). A bound on memory, not on time.
    #[test]
    fn the_tasks_an_idle_session_keeps_stay_small() {
        let (a, _b) = crate::memory::pair();
        let control = a.control();
        let (sink, source) = a.split();
        let service: Arc<dyn Service> = Arc::new(NullService);
        let inner = new_inner(control, service.clone(), SessionConfig::default(), None);
        let peer = Peer {
            inner: inner.clone(),
            related: None,
        };
        let writer = write_loop(sink, inner);
        let reader = read_loop(source, peer, service);
        let (w, r) = (
            std::mem::size_of_val(&writer),
            std::mem::size_of_val(&reader),
        );
        assert!(w <= 384 && r <= 384, "writer {w} bytes, reader {r} bytes");
    }
}
