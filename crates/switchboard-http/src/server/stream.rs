//! `GET`: the standalone SSE stream, and the resumption of any stream with `Last-Event-ID`
//! (replayed from the event store a page at a time, then continued while the stream is open).

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http::header::RETRY_AFTER;
use http::{HeaderValue, Request, Response, StatusCode};
use switchboard_auth::resource::AuthInfo;
use switchboard_jsonrpc::Attachment;

use crate::conn::ConnRx;
use crate::event_store::{EventId, EventStoreError, StoredEvent};
use crate::headers;
use crate::reply::{self, TRANSPORT_ERROR, refuse};
use crate::routing::{Attach, RouteError};
use crate::session::Session;
use crate::sse::{self, Replay, SseBody};

use super::StreamableHttpService;

impl StreamableHttpService {
    pub(super) async fn get(
        &self,
        req: Request<Body>,
        auth: Option<Arc<AuthInfo>>,
    ) -> Response<Body> {
        let cfg = &self.inner.config;
        if cfg.stateless {
            return reply::method_not_allowed("POST", "stateless", Some("HT-13"));
        }
        if !cfg.get_stream {
            return reply::method_not_allowed("POST, DELETE", "get_stream_disabled", Some("HT-13"));
        }
        if !headers::get_accept_ok(req.headers()) {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                "Not Acceptable: Accept must include text/event-stream",
                "bad_accept",
                Some("HT-12"),
            );
        }
        if let (Some(a), Some(info)) = (&cfg.authorization, &auth)
            && let Err(resp) = a.authorize_default(info)
        {
            return resp;
        }
        let owner = auth.as_ref().map(|i| i.owner_key());
        let session = match self.session_of(req.headers(), owner.as_deref()).await {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        if let Some(last) = req.headers().get(headers::LAST_EVENT_ID) {
            let parsed = last.to_str().ok().and_then(|s| s.parse::<EventId>().ok());
            return match parsed {
                Some(id) => {
                    self.resume(&session, id, auth.map(|i| i as Attachment))
                        .await
                }
                None => bad_last_event_id(),
            };
        }
        let open = match session.routing.lock() {
            Ok(mut r) => r.attach_standalone(),
            Err(_) => Err(RouteError::Closed),
        };
        tracing::trace!(opened = open.is_ok(), "standalone GET stream");
        match open {
            Ok(open) => {
                let mut preface = VecDeque::with_capacity(open.queued.len() + 1);
                preface.push_back(sse::priming(open.priming, cfg.sse_retry_ms));
                preface.extend(store_queued(&session, open.queued).await);
                let body = SseBody {
                    preface,
                    replay: None,
                    live: Some(open.rx),
                    floor: 0,
                    _guard: None,
                    keep_alive: cfg.keep_alive,
                    close_at: None,
                };
                self.sse_response(&session, open.priming.stream, open.conn, body)
            }
            Err(RouteError::Conflict) => refuse(
                StatusCode::CONFLICT,
                TRANSPORT_ERROR,
                "Conflict: only one standalone SSE stream is allowed per session",
                "get_stream_already_open",
                None,
            ),
            Err(_) => reply::session_not_found(),
        }
    }

    /// `GET` with `Last-Event-ID`: replays the events after it *on its own stream* (`[HT-17]`),
    /// then continues that stream while it is open. The replay is read from the store a page
    /// at a time as the client takes it; replays running at once are bounded (503 beyond).
    pub(super) async fn resume(
        &self,
        session: &Arc<Session>,
        last: EventId,
        auth: Option<Attachment>,
    ) -> Response<Body> {
        let Ok(permit) = self.inner.replays.clone().try_acquire_owned() else {
            tracing::debug!("replay refused: too many running");
            return too_many_replays();
        };
        let inherited = self.inner.node.is_some()
            && last.stream != 0
            && last.stream <= session.adopted_below
            && session
                .routing
                .lock()
                .is_ok_and(|r| !r.is_open(last.stream));
        if inherited && let Some(resp) = self.rerun(session, last, auth).await {
            return resp;
        }
        let attached = match session.routing.lock() {
            Ok(mut r) => r.attach(last.stream).map(|a| (a, r.is_open(last.stream))),
            Err(_) => Err(RouteError::Closed),
        };
        let (attach, open) = match attached {
            Ok(a) => a,
            Err(_) => return reply::session_not_found(),
        };
        tracing::trace!(
            stream = last.stream,
            seq = last.seq,
            live = matches!(attach, Attach::Live { .. }),
            "stream resumed"
        );
        let (conn, rx): (u64, Option<ConnRx>) = match attach {
            Attach::Live { conn, rx, queued } => {
                store_queued(session, queued).await;
                (conn, Some(rx))
            }
            Attach::Ended => (0, None),
        };
        let page = match session
            .store
            .replay_after(&session.id, last, sse::REPLAY_PAGE)
            .await
        {
            Ok(v) => v,
            Err(EventStoreError::UnknownStream { .. }) if open => Vec::new(),
            Err(e) => {
                tracing::debug!(error = %e, "Last-Event-ID cannot be resumed");
                if let Ok(mut r) = session.routing.lock() {
                    r.detach(last.stream, conn);
                }
                return bad_last_event_id();
            }
        };
        // An ended stream with nothing left for this client: the connection is held open
        // (keep-alives only) rather than ended at once (see `Routing::park`).
        let (conn, rx) = match (rx, page.is_empty()) {
            (None, true) => session
                .routing
                .lock()
                .ok()
                .and_then(|mut r| r.park())
                .map_or((conn, None), |(c, rx)| (c, Some(rx))),
            (rx, _) => (conn, rx),
        };
        let after = page.last().map_or(last, |e| e.id);
        // A short page is the whole replay; otherwise the body fetches the rest.
        let replay = (page.len() >= sse::REPLAY_PAGE)
            .then(|| Replay::new(session.store.clone(), session.id.clone(), after, permit));
        let mut preface = VecDeque::with_capacity(page.len() + 1);
        preface.push_back(sse::retry_only(self.inner.config.sse_retry_ms));
        preface.extend(page.iter().map(|e| sse::encode(e.id, &e.data)));
        let body = SseBody {
            preface,
            replay,
            live: rx,
            floor: after.seq,
            _guard: None,
            keep_alive: self.inner.config.keep_alive,
            close_at: None,
        };
        self.sse_response(session, last.stream, conn, body)
    }
}

/// Stores messages that were queued for a GET stream and returns their encoded events.
async fn store_queued(session: &Session, queued: Vec<(EventId, String)>) -> Vec<Bytes> {
    let mut out = Vec::with_capacity(queued.len());
    for (id, text) in queued {
        out.push(sse::encode(id, &text));
        let event = StoredEvent {
            id,
            data: Arc::from(text),
        };
        if let Err(e) = session.store.append(&session.id, event).await {
            crate::throttle::warn_throttled!(error = %e, "event not stored; it cannot be replayed");
        }
    }
    out
}

/// 503 for a replay beyond the bound on replays running at once; the session is untouched.
fn too_many_replays() -> Response<Body> {
    let mut r = refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service unavailable: too many replays running; retry shortly",
        "too_many_replays",
        None,
    );
    r.headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

fn bad_last_event_id() -> Response<Body> {
    refuse(
        StatusCode::BAD_REQUEST,
        TRANSPORT_ERROR,
        "Bad Request: Last-Event-ID names no stream that can be resumed",
        "unknown_last_event_id",
        Some("HT-17"),
    )
}
