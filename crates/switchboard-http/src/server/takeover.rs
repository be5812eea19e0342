//! The cluster take-over, server side ([`crate::Cluster`]): a request naming a session this
//! node does not hold is relayed to the node serving it, or the session is claimed and taken
//! over here (the role resumes it from its stored snapshot); a stream whose node died with its
//! requests unanswered runs them again here.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Body;
use http::{Request, Response};
use switchboard_auth::resource::AuthInfo;
use switchboard_jsonrpc::Attachment;

use crate::event_store::{EventId, StoredEvent};
use crate::headers;
use crate::relay;
use crate::reply;
use crate::routing::Attach;
use crate::session::{Origin, Resume, Session};
use crate::sse::{self, SseBody};

use super::classify::classify;
use super::{StreamableHttpService, too_many_sessions, unavailable};

impl StreamableHttpService {
    /// With a cluster, a request naming a session this node does not hold goes to the node
    /// serving it ([`crate::Cluster`]); `Err` hands the request back to be served here.
    /// `auth` is the caller's (authorization on): another subject's session is never claimed
    /// for it.
    pub(super) async fn route_in_cluster(
        &self,
        req: Request<Body>,
        auth: Option<&AuthInfo>,
    ) -> Result<Response<Body>, Request<Body>> {
        let (Some(cluster), Some((_, relay))) = (&self.inner.config.cluster, &self.inner.node)
        else {
            return Err(req);
        };
        let id = match headers::session_id(req.headers()) {
            Some(id) if !self.inner.config.stateless && self.inner.registry.get(id).is_none() => {
                id.to_owned()
            }
            _ => return Err(req),
        };
        let owner = auth.map(AuthInfo::owner_key);
        relay::route(
            cluster.as_ref(),
            relay,
            &self.inner.config,
            &id,
            owner.as_deref(),
            req,
        )
        .await
    }

    /// Starts a local session for an id the session store knows (another node created it, or
    /// this node dropped its engine): the factory is asked to resume it at the request's
    /// revision with the stored snapshot. 404 when the store does not know the id, or (with
    /// `owner`, the caller's owner key) when the session is bound to another subject: a
    /// request that is refused takes nothing over (`[SEC-SH-6]`).
    pub(super) async fn take_over(
        &self,
        id: &str,
        version: Option<String>,
        owner: Option<&str>,
    ) -> Result<Arc<Session>, Response<Body>> {
        let record = match self.inner.config.session_store.load(id).await {
            Ok(Some(r)) if owner.is_none() || r.owner.as_deref() == owner => r,
            Ok(_) => return Err(reply::session_not_found()),
            Err(e) => {
                crate::throttle::warn_throttled!(error = %e, "session store unreachable");
                return Err(unavailable(&e.to_string(), "session_store_failed"));
            }
        };
        let origin = Origin {
            resume: Some(Resume {
                modern: None,
                protocol_version: version,
                snapshot: record.snapshot.clone(),
            }),
            stored: true,
            ephemeral: false,
            stream_base: take_over_stream_base(),
            owner: record.owner.clone(),
            node: None,
        };
        let session = self.start_session(record.id, origin)?;
        match self.inner.registry.insert(session.clone()) {
            Ok(winner) if Arc::ptr_eq(&winner, &session) => {
                self.ensure_reaper();
                tracing::debug!("HTTP session taken over from the session store");
                Ok(session)
            }
            // Another request took it over first: serve on that one.
            Ok(winner) => {
                session.discard();
                Ok(winner)
            }
            Err(()) => {
                session.discard();
                Err(too_many_sessions())
            }
        }
    }

    /// Resumes a stream that the node serving the session before opened and died with
    /// ([`crate::Cluster`]): when its requests were kept and none of them was answered, they
    /// run again here. The client gets the events it missed, then the re-run's, numbered on
    /// after the last stored one, without the progress it had already been told of. `None`:
    /// nothing to run again (the stream is replayed as it stands).
    pub(super) async fn rerun(
        &self,
        session: &Arc<Session>,
        last: EventId,
        auth: Option<Attachment>,
    ) -> Option<Response<Body>> {
        let body = session
            .store
            .kept_requests(&session.id, last.stream)
            .await
            .ok()??;
        let post = classify(&body)
            .ok()
            .filter(|p| p.answered && !p.ids.is_empty())?;
        let mut events = Vec::new();
        let mut after = EventId::new(last.stream, 0);
        loop {
            let page = session
                .store
                .replay_after(&session.id, after, sse::REPLAY_PAGE)
                .await
                .ok()?;
            let done = page.len() < sse::REPLAY_PAGE;
            after = page.last().map_or(after, |e| e.id);
            events.extend(page);
            if done {
                break;
            }
        }
        let facts = StreamFacts::of(&events);
        if post.ids.iter().any(|id| facts.answered.contains(id)) {
            return None;
        }
        let adopted = session.routing.lock().ok().and_then(|mut r| {
            r.adopt(last.stream, post.ids, after.seq).ok()?;
            match r.attach(last.stream) {
                Ok(Attach::Live { conn, rx, .. }) => Some((conn, rx)),
                _ => None,
            }
        });
        let (conn, rx) = adopted?;
        session.set_progress_floors(facts.progress);
        tracing::info!(
            stream = last.stream,
            "requests of a node that died run again here"
        );
        if !session.forward(body.to_string(), auth).await {
            if let Ok(mut r) = session.routing.lock() {
                r.unregister(last.stream);
            }
            return Some(reply::session_not_found());
        }
        let mut preface = VecDeque::with_capacity(events.len() + 1);
        preface.push_back(sse::retry_only(self.inner.config.sse_retry_ms));
        preface.extend(
            events
                .iter()
                .filter(|e| e.id.seq > last.seq)
                .map(|e| sse::encode(e.id, &e.data)),
        );
        let sse_body = SseBody {
            preface,
            replay: None,
            live: Some(rx),
            floor: after.seq,
            _guard: None,
            keep_alive: self.inner.config.keep_alive,
            close_at: None,
        };
        Some(self.sse_response(session, last.stream, conn, sse_body))
    }
}

/// A stream-number base for a session taken over: the time in milliseconds, shifted so that
/// up to 65 536 streams of the previous holder fit below it.
fn take_over_stream_base() -> u64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| u64::try_from(d.as_millis()).unwrap_or(1));
    ms << 16
}

/// What the events of a stream say about its requests: which were answered, and the progress
/// each token reached.
#[derive(Debug, Default)]
struct StreamFacts {
    answered: std::collections::HashSet<switchboard_types::RequestId>,
    progress: std::collections::HashMap<String, f64>,
}

impl StreamFacts {
    /// Reads the stored events of one stream.
    fn of(events: &[StoredEvent]) -> Self {
        use switchboard_types::{Frame, Message};
        let mut facts = StreamFacts::default();
        for e in events {
            if let Some((token, p)) = crate::session::progress_of(&e.data) {
                let floor = facts.progress.entry(token).or_insert(p);
                *floor = floor.max(p);
                continue;
            }
            let messages = match Frame::decode(&e.data) {
                Ok(Frame::Single(m)) => vec![m],
                Ok(Frame::Batch(items)) => items,
                Err(_) => continue,
            };
            for m in messages.into_iter().flatten() {
                if let Message::Response(r) = m
                    && let Some(id) = r.id
                {
                    facts.answered.insert(id);
                }
            }
        }
        facts
    }
}
