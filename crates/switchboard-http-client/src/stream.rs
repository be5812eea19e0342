//! SSE streams (client side): reading a POST's stream or the standalone GET stream into the
//! engine, and resuming either with `GET` + `Last-Event-ID` after the server's `retry` delay
//! (`[HT-11]`, SPEC-NOTES §6.5) when it drops early. The HTTP+SSE transport's stream is read here
//! too, without resumption.
//!
//! | stream | ends when | on a drop |
//! |---|---|---|
//! | POST | every request it carried is answered | resume with `Last-Event-ID`; none to send, or attempts exhausted: each open request gets a local -32603 |
//! | GET | the transport closes | resume with `Last-Event-ID` (a fresh GET without one); 405: no GET stream |
//! | http+sse | the transport closes | fatal: the 2024-11-05 stream cannot be resumed |
//!
//! Reconnection attempts are bounded (`max_reconnect_attempts`, consecutive; a connection that
//! delivers an event resets the count; and `max_resumptions` in all for a POST stream, so that a
//! server closing every connection after an event cannot keep a POST's slot for ever), and so
//! is the wait before each: the server's `retry:`
//! clamped to `min_retry..=max_retry`. When they run out on network errors, the transport fails
//! with the last error (on timeouts and HTTP statuses only the stream is given up); a 404 while
//! resuming means the session is gone (`[HT-21]`). A resuming GET follows same-origin redirects
//! only (`redirect`) and gets `response_timeout` for its headers.
//!
//! A POST stream silent for `sse_idle_timeout` (no byte at all: keep-alive comments count, and
//! so do progress notifications) is given up: its open requests get a local error. The GET and
//! HTTP+SSE streams may stay silent as long as the server likes. An event over `max_event_bytes`
//! is discarded (the parser skips it) and the stream goes on; but an event still going on past
//! [`SKIP_FACTOR`] times that bound (at least [`SKIP_FLOOR`]) is one that may never end (a hostile server's endless
//! answer): the connection is closed, as if it had dropped (issue 25, `serve --hostile
//! endless-answer`). A POST stream that ends without its response says so.

use std::collections::HashSet;
use std::sync::Arc;

use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use serde_json::json;
use switchboard_transport::headers::{self, LAST_EVENT_ID};
use switchboard_types::{Frame, Message, RequestId, Response};

use crate::redirect;
use crate::shared::{Shared, describe, timeout_error};
use switchboard_transport::codec::sse::SseParser;

/// The longest event id sent back as `Last-Event-ID`: a server's id may be as long as an event
/// (`max_event_bytes`), and a header that size would be refused by any server anyway. A POST
/// stream with a longer id is not resumed; the GET stream opens afresh without it.
const MAX_LAST_EVENT_ID: usize = 4096;

/// The id to resume with: the last event id, unless it is over `MAX_LAST_EVENT_ID`.
fn resume_id(parser: &SseParser) -> Option<&str> {
    parser
        .last_event_id()
        .filter(|l| l.len() <= MAX_LAST_EVENT_ID)
}

/// Which stream is read, and what it still owes.
#[derive(Debug)]
pub(crate) enum StreamKind {
    /// A POST's stream: the requests it carried that are not answered yet.
    Post(HashSet<RequestId>),
    /// The standalone GET stream.
    Get,
    /// The HTTP+SSE stream.
    HttpSse,
}

impl StreamKind {
    fn name(&self) -> &'static str {
        match self {
            StreamKind::Post(_) => "POST",
            StreamKind::Get => "GET",
            StreamKind::HttpSse => "http+sse",
        }
    }

    /// Notes the responses in `text` (POST streams only).
    fn observe(&mut self, text: &str) {
        let StreamKind::Post(open) = self else { return };
        if open.is_empty() {
            return;
        }
        match Frame::decode(text) {
            Ok(Frame::Single(Ok(Message::Response(r)))) => {
                if let Some(id) = r.id {
                    open.remove(&id);
                }
            }
            Ok(Frame::Batch(items)) => {
                for item in items {
                    if let Ok(Message::Response(Response { id: Some(id), .. })) = item {
                        open.remove(&id);
                    }
                }
            }
            _ => {}
        }
    }

    /// Whether the stream owes nothing more.
    fn finished(&self) -> bool {
        matches!(self, StreamKind::Post(open) if open.is_empty())
    }
}

/// How one connection ended.
enum Pump {
    /// Nothing more to read: the stream is finished or the transport has ended.
    Done,
    /// The body ended (cleanly, or with the error given); `progressed` if it delivered events.
    Ended {
        progressed: bool,
        error: Option<String>,
    },
    /// A POST stream sent nothing for `sse_idle_timeout`.
    Idle,
}

/// Why the last reconnection failed.
enum Failed {
    /// A network error: fatal once the attempts run out.
    Network(String),
    /// An HTTP status, or no headers in time: the stream alone is lost.
    Answer(String),
}

/// Why a stream cannot be resumed.
enum GiveUp {
    /// The failure is the transport's (network): fatal.
    Fatal(String),
    /// The stream alone is lost: its open requests are answered locally.
    Stream {
        message: String,
        data: serde_json::Value,
    },
}

/// Reads an SSE stream to its end, resuming it as needed. `first` is the open connection, or
/// `None` to open the GET stream.
pub(crate) async fn read(
    shared: Arc<Shared>,
    first: Option<reqwest::Response>,
    mut parser: SseParser,
    mut kind: StreamKind,
) {
    let mut attempts = Attempts::default();
    let mut opening = first.is_none();
    let mut next = first;
    let mut discarded = 0_usize;
    loop {
        let resp = match next.take() {
            Some(r) => r,
            None => match reconnect(&shared, &mut parser, &kind, &mut attempts, opening).await {
                Ok(Some(r)) => r,
                Ok(None) => return,
                Err(g) => return give_up(&shared, &kind, g.noting(discarded, &shared)).await,
            },
        };
        opening = false;
        match pump(&shared, &mut parser, resp, &mut kind, &mut discarded).await {
            Pump::Done => return,
            Pump::Idle => {
                let after = shared.config.sse_idle_timeout;
                let what = format!("the SSE answer from {} sent nothing", shared.url);
                let (message, data) = timeout_error(&what, "sse_idle_timeout", after);
                let g = GiveUp::Stream { message, data };
                return give_up(&shared, &kind, g.noting(discarded, &shared)).await;
            }
            Pump::Ended { progressed, error } => {
                if progressed {
                    attempts.consecutive = 0;
                }
                if shared.cancel.is_cancelled() || kind.finished() {
                    return;
                }
                let why = error.unwrap_or_else(|| "ended".to_owned());
                tracing::debug!(stream = kind.name(), why, "SSE connection dropped");
                if matches!(kind, StreamKind::HttpSse) {
                    shared.fail(format!(
                        "the HTTP+SSE stream from {} closed ({why})",
                        shared.url
                    ));
                    return;
                }
                parser.reconnect();
                if matches!(kind, StreamKind::Post(_))
                    && parser
                        .last_event_id()
                        .is_some_and(|l| l.len() > MAX_LAST_EVENT_ID)
                {
                    let g = GiveUp::Stream {
                        message: format!(
                            "the server's SSE stream ended before the response and its event \
                             id is over {MAX_LAST_EVENT_ID} bytes; not sent back to resume"
                        ),
                        data: json!({"reason": "event_id_too_long", "limit": MAX_LAST_EVENT_ID}),
                    };
                    return give_up(&shared, &kind, g.noting(discarded, &shared)).await;
                }
                if matches!(kind, StreamKind::Post(_)) && resume_id(&parser).is_none() {
                    let g = GiveUp::Stream {
                        message: "the server's SSE stream ended before the response and gave \
                                  no event id to resume with"
                            .to_owned(),
                        data: json!({"reason": "stream_ended"}),
                    };
                    return give_up(&shared, &kind, g.noting(discarded, &shared)).await;
                }
            }
        }
    }
}

impl GiveUp {
    /// Says, in a stream's give-up, that events over the bound were discarded (one of them may
    /// have been the awaited response).
    fn noting(self, discarded: usize, shared: &Shared) -> GiveUp {
        match self {
            GiveUp::Stream { message, mut data } if discarded > 0 => {
                let limit = shared.config.max_event_bytes;
                if let Some(map) = data.as_object_mut() {
                    map.insert("discarded_events".to_owned(), json!(discarded));
                }
                GiveUp::Stream {
                    message: format!(
                        "{message}; {discarded} SSE event(s) over {limit} bytes were discarded \
                         (max_event_bytes)"
                    ),
                    data,
                }
            }
            other => other,
        }
    }
}

/// How many times `max_event_bytes` of one discarded event (and at least [`SKIP_FLOOR`]
/// bytes) are read past before the connection is closed.
pub(crate) const SKIP_FACTOR: usize = 4;

/// The fewest bytes of one discarded event read before the connection is closed.
pub(crate) const SKIP_FLOOR: usize = 64 << 20;

/// Reads one connection's events into the engine; a POST stream silent for `sse_idle_timeout`
/// ends with [`Pump::Idle`].
async fn pump(
    shared: &Shared,
    parser: &mut SseParser,
    mut resp: reqwest::Response,
    kind: &mut StreamKind,
    discarded: &mut usize,
) -> Pump {
    let idle = matches!(kind, StreamKind::Post(_)).then_some(shared.config.sse_idle_timeout);
    let mut progressed = false;
    // Bytes read since an event began to be discarded, while it is.
    let mut skipping: Option<usize> = None;
    let skip_limit = shared
        .config
        .max_event_bytes
        .saturating_mul(SKIP_FACTOR)
        .max(SKIP_FLOOR);
    loop {
        while let Some(item) = parser.next() {
            match item {
                Ok(ev) => {
                    progressed = true;
                    skipping = None;
                    if ev.data.is_empty() || ev.event != "message" {
                        // The priming event, or a type this transport does not use.
                        continue;
                    }
                    kind.observe(&ev.data);
                    if !shared.deliver(ev.data).await {
                        return Pump::Done;
                    }
                    if kind.finished() {
                        return Pump::Done;
                    }
                }
                // Every SSE error is about one event, which the parser has skipped.
                Err(e) => {
                    *discarded += 1;
                    skipping = Some(0);
                    tracing::warn!(stream = kind.name(), error = %e, "SSE event discarded");
                }
            }
        }
        let next = async {
            match idle {
                Some(after) => tokio::time::timeout(after, resp.chunk()).await.ok(),
                None => Some(resp.chunk().await),
            }
        };
        let chunk = tokio::select! {
            biased;
            _ = shared.cancel.cancelled() => return Pump::Done,
            c = next => match c {
                Some(c) => c,
                None => return Pump::Idle,
            },
        };
        match chunk {
            Ok(Some(bytes)) => {
                if let Some(skipped) = skipping.as_mut() {
                    *skipped = skipped.saturating_add(bytes.len());
                    if *skipped > skip_limit {
                        return Pump::Ended {
                            progressed,
                            error: Some(format!(
                                "an SSE event went on past {skip_limit} bytes; connection closed"
                            )),
                        };
                    }
                }
                parser.push(&bytes)
            }
            Ok(None) => {
                return Pump::Ended {
                    progressed,
                    error: None,
                };
            }
            Err(e) => {
                return Pump::Ended {
                    progressed,
                    error: Some(describe(&e)),
                };
            }
        }
    }
}

/// The reconnections of one stream.
#[derive(Debug, Default)]
struct Attempts {
    /// Failed in a row (a connection that delivers an event resets it).
    consecutive: u32,
    /// In all (bounded for POST streams only: the GET stream lives as long as the session).
    total: u32,
}

/// Waits the server's `retry` and reconnects with `GET` + `Last-Event-ID`, as often as allowed;
/// `opening` (the first GET of the standalone stream) goes at once. `Ok(None)`: stop quietly
/// (closed, or no GET stream on this server).
async fn reconnect(
    shared: &Shared,
    parser: &mut SseParser,
    kind: &StreamKind,
    attempts: &mut Attempts,
    opening: bool,
) -> Result<Option<reqwest::Response>, GiveUp> {
    let max = shared.config.max_reconnect_attempts;
    let max_total = shared.config.max_resumptions;
    let mut wait = !opening;
    let mut last_error = None;
    loop {
        if wait {
            if attempts.consecutive >= max {
                return Err(exhausted(shared, kind, last_error));
            }
            if matches!(kind, StreamKind::Post(_)) && attempts.total >= max_total {
                return Err(GiveUp::Stream {
                    message: format!(
                        "the SSE stream was resumed {max_total} times without bringing the \
                         response (max_resumptions)"
                    ),
                    data: json!({"reason": "resumptions_exhausted", "resumptions": max_total}),
                });
            }
            attempts.consecutive += 1;
            attempts.total += 1;
            let delay = shared.config.reconnect_delay(parser.retry());
            tokio::select! {
                biased;
                _ = shared.cancel.cancelled() => return Ok(None),
                _ = tokio::time::sleep(delay) => {}
            }
        }
        wait = true;
        let last = resume_id(parser).map(str::to_owned);
        let rb = shared
            .client
            .get(shared.url.clone())
            .header(ACCEPT, headers::EVENT_STREAM);
        let (mut rb, sent_session) = shared.session_headers(rb);
        if let Some(l) = &last {
            rb = rb.header(LAST_EVENT_ID, l.as_str());
        }
        let limit = shared.config.response_timeout;
        let sent = async {
            let req = rb.build()?;
            redirect::execute(shared, req).await
        };
        let resp = tokio::select! {
            biased;
            _ = shared.cancel.cancelled() => return Ok(None),
            r = tokio::time::timeout(limit, sent) => r,
        };
        let resp = match resp {
            Ok(Ok(Ok(r))) => r,
            Ok(Ok(Err(refused))) => {
                return Err(GiveUp::Stream {
                    message: format!("the SSE stream could not be resumed: {}", refused.message()),
                    data: refused.data(),
                });
            }
            Ok(Err(e)) => {
                tracing::debug!(stream = kind.name(), error = %describe(&e), "SSE reconnection failed");
                last_error = Some(Failed::Network(describe(&e)));
                continue;
            }
            Err(_) => {
                tracing::debug!(stream = kind.name(), "SSE reconnection: no answer in time");
                last_error = Some(Failed::Answer(format!(
                    "no answer within {limit:?} (response_timeout)"
                )));
                continue;
            }
        };
        let status = resp.status();
        if status == StatusCode::OK && is_event_stream(&resp) {
            tracing::debug!(stream = kind.name(), last_event_id = ?last, "SSE stream (re)opened");
            return Ok(Some(resp));
        }
        if status == StatusCode::NOT_FOUND && sent_session {
            shared.session_gone("a GET");
            return Ok(None);
        }
        match (kind, status) {
            (StreamKind::Get, StatusCode::METHOD_NOT_ALLOWED) => {
                tracing::debug!("the server offers no GET stream (405)");
                return Ok(None);
            }
            // Transient: the old connection is not yet seen closed, or the server is busy.
            (_, StatusCode::CONFLICT | StatusCode::TOO_MANY_REQUESTS)
            | (_, StatusCode::SERVICE_UNAVAILABLE | StatusCode::BAD_GATEWAY) => {
                last_error = Some(Failed::Answer(format!("HTTP {status}")));
            }
            (StreamKind::Get, _) => {
                tracing::warn!(%status, "the GET stream cannot be (re)opened; going on without it");
                return Ok(None);
            }
            _ => {
                return Err(GiveUp::Stream {
                    message: format!(
                        "the SSE stream could not be resumed: HTTP {status} to GET with \
                         Last-Event-ID"
                    ),
                    data: crate::shared::status_data(status),
                });
            }
        }
    }
}

fn exhausted(shared: &Shared, kind: &StreamKind, last_error: Option<Failed>) -> GiveUp {
    let n = shared.config.max_reconnect_attempts;
    let other = match last_error {
        Some(Failed::Network(e)) => {
            return GiveUp::Fatal(format!(
                "the {} SSE stream from {} was lost and {n} reconnections failed: {e}",
                kind.name(),
                shared.url
            ));
        }
        Some(Failed::Answer(e)) => Some(e),
        None => None,
    };
    GiveUp::Stream {
        message: format!(
            "the SSE stream was lost and {n} reconnections did not bring the response{}",
            other.map(|e| format!(" (last: {e})")).unwrap_or_default()
        ),
        data: json!({"reason": "reconnect_attempts_exhausted", "attempts": n}),
    }
}

async fn give_up(shared: &Shared, kind: &StreamKind, g: GiveUp) {
    match g {
        GiveUp::Fatal(reason) => shared.fail(reason),
        GiveUp::Stream { message, data } => match kind {
            StreamKind::Post(open) => {
                let ids: Vec<RequestId> = open.iter().cloned().collect();
                tracing::warn!(open = ids.len(), message, "POST stream given up");
                shared.answer_error(&ids, &message, data).await;
            }
            _ => tracing::warn!(message, "GET stream given up; going on without it"),
        },
    }
}

/// Whether a response is an SSE stream.
pub(crate) fn is_event_stream(resp: &reqwest::Response) -> bool {
    media_type(resp).eq_ignore_ascii_case(headers::EVENT_STREAM)
}

/// The media type of a response, without parameters.
pub(crate) fn media_type(resp: &reqwest::Response) -> &str {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map_or("", headers::media_type)
}

/// Starts the standalone GET stream (`[HT-12]`) in its own task.
pub(crate) fn start_get(shared: &Arc<Shared>) {
    let parser = SseParser::new(shared.config.max_event_bytes);
    tokio::spawn(read(shared.clone(), None, parser, StreamKind::Get));
}
