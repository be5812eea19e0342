//! Handing a POST body to its session's engine and building the answer (202, one JSON answer,
//! or an SSE stream), for the session-bound and the stateless POST alike.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use http::{Response, StatusCode};
use switchboard_jsonrpc::Attachment;
use switchboard_types::error::echo;
use switchboard_types::{ErrorObject, Frame, Message};
use tokio::time::Instant;

use crate::event_store::EventId;
use crate::reply::{self, TRANSPORT_ERROR, refuse};
use crate::routing::{Registration, RouteError};
use crate::session::Session;
use crate::sse::{self, SseBody};

use super::classify::Post;
use super::{StreamableHttpService, json_response};

/// How long a POST waits for the first event of its SSE stream before the headers and the
/// priming event go out alone.
const FIRST_EVENT_WAIT: Duration = Duration::from_millis(1);

/// Marks the answer to an `initialize` that is a JSON-RPC error (for the POST creating the
/// session: no session is opened).
#[derive(Clone, Copy)]
pub(super) struct InitializeRefused;

/// How long the POST creating a session waits for the `initialize` answer before its headers
/// go out (the role answers it at once; past this, the stream goes out and the answer follows).
const INITIALIZE_ANSWER_WAIT: Duration = Duration::from_secs(10);

/// Whether a single answer's text is an error response.
fn is_error_answer(text: &str) -> bool {
    matches!(
        Frame::decode(text),
        Ok(Frame::Single(Ok(Message::Response(r)))) if r.outcome.is_err()
    )
}

/// Whether an encoded SSE event carries an error response (read back with the SSE parser).
fn is_error_event(event: &[u8]) -> bool {
    let mut parser = switchboard_transport::SseParser::new(event.len());
    parser.push(event);
    parser.finish();
    matches!(parser.next(), Some(Ok(e)) if is_error_answer(&e.data))
}

impl StreamableHttpService {
    /// Hands the body to the engine and builds the answer: 202, JSON or SSE.
    pub(super) async fn dispatch(
        &self,
        session: &Arc<Session>,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
    ) -> Response<Body> {
        let cfg = &self.inner.config;
        if !post.answered {
            // A cancellation among them reaches the engine, which tells the routing
            // (`TransportControl::request_cancelled`) to end the cancelled request's stream.
            if !session.receive(text, attachment).await {
                return reply::session_not_found();
            }
            return reply::accepted();
        }
        let registered = match session.routing.lock() {
            Ok(mut r) => r.register(post.ids, cfg.json_response, post.batch),
            Err(_) => Err(RouteError::Closed),
        };
        let registration = match registered {
            Ok(r) => r,
            Err(RouteError::Duplicate(id)) => {
                let err = ErrorObject::invalid_request(
                    format!(
                        "request id {} is already in flight on this session",
                        echo(&id.to_string())
                    ),
                    "duplicate_request_id",
                );
                return reply::error_body(StatusCode::BAD_REQUEST, Some(id), err);
            }
            Err(RouteError::TooManyStreams) => {
                return refuse(
                    StatusCode::SERVICE_UNAVAILABLE,
                    TRANSPORT_ERROR,
                    "Service unavailable: too many open streams on this session",
                    "too_many_open_streams",
                    None,
                );
            }
            Err(_) => return reply::session_not_found(),
        };
        let stream = match &registration {
            Registration::Sse { stream, .. } | Registration::Json { stream, .. } => *stream,
        };
        // In a cluster, the requests of a stream the client may resume are kept with it (below):
        // if this node dies before answering, the node the client resumes on runs them again.
        let kept = (self.inner.node.is_some()
            && !session.ephemeral
            && matches!(registration, Registration::Sse { .. }))
        .then(|| text.clone());
        if !session.receive(text, attachment).await {
            if let Ok(mut r) = session.routing.lock() {
                r.unregister(stream);
            }
            return reply::session_not_found();
        }
        // The answer to an `initialize` is waited for (it is prompt), so that an error there
        // can be told apart before the session's id goes out.
        let initialize = post.initialize;
        match registration {
            Registration::Json { rx, .. } => match rx.await {
                Ok(answer) => {
                    let refused = initialize && is_error_answer(&answer);
                    let mut r = json_response(answer);
                    if refused {
                        r.extensions_mut().insert(InitializeRefused);
                    }
                    r
                }
                // Cancelled by the client: nothing will come, the POST ends without a body.
                Err(_) if !session.is_terminated() => reply::accepted(),
                Err(_) => reply::session_not_found(),
            },
            Registration::Sse {
                stream,
                conn,
                mut rx,
            } => {
                // A stateless stream cannot be resumed: no priming event, no event ids to keep.
                let mut preface = if session.ephemeral {
                    VecDeque::new()
                } else {
                    VecDeque::from([sse::priming(EventId::new(stream, 0), cfg.sse_retry_ms)])
                };
                let mut floor = 0;
                let mut answered = false;
                let mut refused = false;
                if cfg.close_sse_after_priming_ms.is_none() || initialize {
                    // A quick answer leaves with the headers and the priming event, and the
                    // body ends with it: one write instead of two. A slow one costs the
                    // priming event this short wait.
                    let wait = if initialize {
                        INITIALIZE_ANSWER_WAIT
                    } else {
                        FIRST_EVENT_WAIT
                    };
                    if let Ok(Some(first)) = tokio::time::timeout(wait, rx.rx.recv()).await {
                        rx.took(&first);
                        floor = first.seq;
                        answered = first.last;
                        refused = initialize && first.last && is_error_event(&first.bytes);
                        preface.push_back(first.bytes);
                    }
                }
                // Kept before the client learns of the stream, unless the answer is already in
                // hand (the stored answer is then all a resumption needs): a round trip to a
                // shared store for the slow requests only.
                if let Some(body) = kept.filter(|_| !answered)
                    && let Err(e) = session
                        .store
                        .keep_requests(&session.id, stream, &body)
                        .await
                {
                    crate::throttle::warn_throttled!(error = %e, "requests not kept; a take-over cannot run them again");
                }
                let close_at = cfg
                    .close_sse_after_priming_ms
                    .map(|ms| Instant::now() + Duration::from_millis(ms));
                let body = SseBody {
                    preface,
                    replay: None,
                    live: Some(rx),
                    floor,
                    _guard: None,
                    keep_alive: cfg.keep_alive,
                    close_at,
                };
                let mut r = self.sse_response(session, stream, conn, body);
                if refused {
                    r.extensions_mut().insert(InitializeRefused);
                }
                r
            }
        }
    }
}
