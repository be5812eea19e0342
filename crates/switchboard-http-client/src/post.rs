//! One POST per outbound frame (client side, `[HT-4]`), and what its answer means
//! (`[HT-7]`..`[HT-10]`, SPEC-NOTES §6.10):
//!
//! | answer | what happens |
//! |---|---|
//! | 202 (or any 2xx without a body) | nothing more |
//! | 200 `application/json` | the body (one message or a batch) goes to the engine |
//! | 200 `text/event-stream` | every event's message goes to the engine, in order; resumed on a drop |
//! | 404 to a request carrying the session id | the session is gone: fatal (`[HT-21]`) |
//! | any other 4xx / 5xx | each request in the frame gets a local -32603 with `data: {reason: "http_status", status}`, or the server's own error when it names the request |
//! | a redirect | followed on the endpoint's origin only (see `redirect`); one not followed: the frame's requests get a local -32603 with `data: {reason: "redirect_refused", status, location}` |
//! | no headers within `post_header_timeout`, a JSON body not ended within `post_timeout`, no connection within `connect_timeout` | the frame's requests get a local -32603 with `data: {reason: "http_timeout", timeout, ms}`; the slot is freed |
//! | a network failure (cannot connect; no awaited answer to a frame without requests within `response_timeout`) | fatal, with the reason |
//! | the exchange breaks after connecting (e.g. a refused oversized body) | the frame's requests get a local -32603 with `data: {reason: "http_send_failed"}` (`http_read_failed` when the body breaks off); fatal for a frame without requests |
//!
//! `initialize` is special: its answer carries the session id, and a 400, 404 or 405 to it starts
//! the HTTP+SSE fallback (SPEC-NOTES §6.9).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;
use serde_json::json;
use switchboard_transport::headers;
use switchboard_types::error::echo;
use switchboard_types::{Message, RequestId, Response};
use tokio::sync::{OwnedSemaphorePermit, oneshot};
use tokio::time::Instant;

use crate::abandon::PostWatch;
use crate::http_sse;
use crate::redirect::{self, Refused};
use crate::shared::{HttpMode, PROTOCOL_VERSION, Shared, describe, status_data, timeout_error};
use crate::stream::{self, StreamKind, is_event_stream, media_type};
use switchboard_transport::codec::sse::SseParser;

/// The most of an error body read to find the server's JSON-RPC error.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// One frame to POST, classified.
#[derive(Debug)]
pub(crate) struct Outbound {
    /// The frame's JSON text.
    pub(crate) text: String,
    /// The requests in it that expect an answer.
    pub(crate) ids: Vec<RequestId>,
    /// Whether the frame is (or holds) a request: its answer may take long.
    pub(crate) is_request: bool,
    /// Whether it is the `initialize` request.
    pub(crate) initialize: bool,
    /// Whether it is `notifications/initialized` (after which the GET stream opens).
    pub(crate) initialized_notification: bool,
    /// The header lines the role handed over with the frame: a modern (2026-07-28) frame has
    /// them, and then no session headers.
    pub(crate) headers: Vec<(String, String)>,
}

impl Outbound {
    /// Whether this is a modern frame (it carries the role's header lines).
    pub(crate) fn is_modern(&self) -> bool {
        !self.headers.is_empty()
    }

    /// The revision a modern frame names in `MCP-Protocol-Version`.
    fn modern_version(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(PROTOCOL_VERSION))
            .map(|(_, v)| v.as_str())
    }
}

/// The time budget of one POST's answer: from `begun`, the headers within `header`, the whole of
/// an answer that does not stream within `whole`; each named by its option for messages.
#[derive(Debug, Clone, Copy)]
struct Budget {
    begun: Instant,
    header: (Duration, &'static str),
    whole: (Duration, &'static str),
}

impl Budget {
    /// A request's POST may take as long as its handler (a JSON answer starts when the result is
    /// ready); a frame the sender waits for (a notification, a response) gets `response_timeout`.
    fn for_post(shared: &Shared, is_request: bool) -> Budget {
        let c = &shared.config;
        let (header, whole) = if is_request {
            (
                (c.post_header_timeout, "post_header_timeout"),
                (c.post_timeout, "post_timeout"),
            )
        } else {
            let t = (c.response_timeout, "response_timeout");
            (t, t)
        };
        Budget {
            begun: Instant::now(),
            header,
            whole,
        }
    }

    /// `initialize`: the sender waits for it, so `response_timeout` bounds all of it.
    fn for_initialize(shared: &Shared) -> Budget {
        let t = (shared.config.response_timeout, "response_timeout");
        Budget {
            begun: Instant::now(),
            header: t,
            whole: t,
        }
    }

    fn deadline(&self) -> Instant {
        self.begun + self.whole.0
    }
}

/// Sends one frame and handles its answer; `started` fires once the answer has begun (status and
/// headers handled). Holds its POST slot until the answer is fully read, until a timeout fails
/// the frame's requests, or until every caller of its requests has given up (`watch`): then the
/// answer is dropped unread (its connection closes) and the slot freed.
pub(crate) async fn run(
    shared: Arc<Shared>,
    out: Outbound,
    permit: OwnedSemaphorePermit,
    started: oneshot::Sender<()>,
    watch: Option<Arc<PostWatch>>,
) {
    // A modern request: closing its response stream cancels it (`[D26-77]`).
    let modern = out.is_modern() && out.is_request && !out.ids.is_empty();
    if watch.is_none() && !modern {
        return exchange(shared, out, permit, started).await;
    }
    let ids = out.ids.clone();
    let closed = modern.then(|| shared.file_modern_post(&ids));
    let given_up = watch.as_ref().map(|w| w.given_up.clone());
    let ended = |t: Option<tokio_util::sync::CancellationToken>| async move {
        match t {
            Some(t) => t.cancelled().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        biased;
        _ = ended(given_up) => {
            tracing::debug!("a POST given up by the callers of its requests; its answer is dropped");
        }
        _ = ended(closed) => {}
        _ = exchange(shared.clone(), out, permit, started) => {}
    }
    if let Some(watch) = &watch {
        shared.abandons.finish(watch, &ids);
    }
    if modern {
        shared.forget_modern_post(&ids);
    }
}

/// [`run`] without a watch: the exchange itself.
async fn exchange(
    shared: Arc<Shared>,
    out: Outbound,
    _permit: OwnedSemaphorePermit,
    started: oneshot::Sender<()>,
) {
    let (url, http_sse) = {
        let st = shared.state();
        match (&st.mode, &st.http_sse_post) {
            (HttpMode::HttpSse, Some(u)) => (u.clone(), true),
            _ => (shared.url.clone(), false),
        }
    };
    let (rb, sent_session) = request(&shared, &url, &out, http_sse);
    let budget = Budget::for_post(&shared, out.is_request);
    let resp = tokio::select! {
        biased;
        _ = shared.cancel.cancelled() => return,
        r = send(&shared, rb, budget.header.0) => r,
    };
    let resp = match resp {
        Ok(resp) => {
            return answer(&shared, out, resp, sent_session, http_sse, started, budget).await;
        }
        Err(e) => e,
    };
    let _ = started.send(());
    match resp {
        SendError::Refused(r) if out.ids.is_empty() => {
            tracing::warn!(
                why = r.message(),
                "a notification or response was not delivered"
            );
        }
        SendError::Refused(r) => shared.answer_error(&out.ids, &r.message(), r.data()).await,
        // The server took the POST and said nothing in time: this POST's requests fail, its slot
        // is freed, the transport lives on.
        SendError::Timeout if out.is_request => {
            let (option_time, option) = budget.header;
            let what = format!("no answer to the POST to {url}");
            let (message, data) = timeout_error(&what, option, option_time);
            tracing::warn!(message, "POST timed out; its requests fail");
            shared.answer_error(&out.ids, &message, data).await;
        }
        SendError::Timeout => shared.fail(format!(
            "POST to {url}: no answer within {:?} (response_timeout)",
            shared.config.response_timeout
        )),
        SendError::Http(e) if e.is_connect() && e.is_timeout() && !out.ids.is_empty() => {
            let connect = shared.config.connect_timeout.unwrap_or_default();
            let what = format!("no connection to {url}");
            let (message, data) = timeout_error(&what, "connect_timeout", connect);
            tracing::warn!(message, "POST could not connect in time; its requests fail");
            shared.answer_error(&out.ids, &message, data).await;
        }
        // Connected, but the exchange broke (typically the server refusing an oversized body by
        // closing the connection mid-write): this POST's requests fail, the transport lives on.
        SendError::Http(e) if !e.is_connect() && !e.is_timeout() && !out.ids.is_empty() => {
            let reason = describe(&e);
            tracing::warn!(%url, reason, "POST broke off; its requests fail");
            let message = format!("the POST carrying the request broke off: {reason}");
            let data = json!({"reason": "http_send_failed"});
            shared.answer_error(&out.ids, &message, data).await;
        }
        SendError::Http(e) => {
            shared.fail(format!("POST to {url} failed: {}", describe(&e)));
        }
    }
}

/// Why a POST got no answer to handle.
enum SendError {
    /// The HTTP exchange failed.
    Http(reqwest::Error),
    /// A redirect that was not followed.
    Refused(Refused),
    /// The answer's headers did not come in time.
    Timeout,
}

/// Sends a request (following same-origin redirects) and waits up to `limit` for its answer's
/// status and headers.
async fn send(
    shared: &Shared,
    rb: reqwest::RequestBuilder,
    limit: Duration,
) -> Result<reqwest::Response, SendError> {
    let req = rb.build().map_err(SendError::Http)?;
    match tokio::time::timeout(limit, redirect::execute(shared, req)).await {
        Err(_) => Err(SendError::Timeout),
        Ok(Err(e)) => Err(SendError::Http(e)),
        Ok(Ok(Err(refused))) => Err(SendError::Refused(refused)),
        Ok(Ok(Ok(resp))) => Ok(resp),
    }
}

/// The POST request: `Accept` lists both types (`[HT-5]`), the body is JSON, and the session
/// headers ride along (Streamable HTTP only). A modern frame carries the role's header lines
/// instead (`[D26-57]`: `MCP-Protocol-Version`, `Mcp-Method`, ...) and never a session id.
/// Returns whether the session id was sent.
fn request(
    shared: &Shared,
    url: &Url,
    out: &Outbound,
    http_sse: bool,
) -> (reqwest::RequestBuilder, bool) {
    let mut rb = shared
        .client
        .post(url.clone())
        .header(ACCEPT, headers::POST_ACCEPT)
        .header(CONTENT_TYPE, headers::JSON)
        .body(out.text.clone());
    if out.is_modern() {
        for (name, value) in &out.headers {
            match (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                (Ok(n), Ok(v)) => rb = rb.header(n, v),
                _ => tracing::warn!(header = %name, "header line not valid HTTP; left out"),
            }
        }
        return (rb, false);
    }
    if http_sse {
        (rb, false)
    } else {
        shared.session_headers(rb)
    }
}

/// Handles a POST's answer; a body that does not stream must end within the budget.
async fn answer(
    shared: &Arc<Shared>,
    out: Outbound,
    mut resp: reqwest::Response,
    sent_session: bool,
    http_sse: bool,
    started: oneshot::Sender<()>,
    budget: Budget,
) {
    let status = resp.status();
    if status == StatusCode::NOT_FOUND && sent_session {
        let _ = started.send(());
        shared.session_gone("a POST");
        return;
    }
    if !status.is_success() {
        let read =
            tokio::time::timeout_at(budget.deadline(), read_body(&mut resp, ERROR_BODY_LIMIT));
        let body = read.await.ok().and_then(Result::ok).flatten();
        let _ = started.send(());
        reject(shared, &out, status, body.as_deref()).await;
        return;
    }
    if http_sse {
        // The HTTP+SSE transport answers on its SSE stream; the POST only says "accepted".
        let _ = started.send(());
        return;
    }
    if out.is_modern() {
        shared.learn_modern(out.modern_version());
    }
    if is_event_stream(&resp) {
        let _ = started.send(());
        let parser = SseParser::new(shared.config.max_event_bytes);
        let open: HashSet<RequestId> = out.ids.iter().cloned().collect();
        stream::read(shared.clone(), Some(resp), parser, StreamKind::Post(open)).await;
        return;
    }
    let json = media_type(&resp).eq_ignore_ascii_case(headers::JSON);
    let _ = started.send(());
    if !json {
        if status != StatusCode::ACCEPTED && resp.content_length().is_some_and(|n| n > 0) {
            tracing::warn!(%status, content_type = media_type(&resp), "unexpected POST answer");
        }
        if !out.ids.is_empty() {
            let message = format!(
                "the server answered the request with HTTP {status} and no JSON or SSE body"
            );
            let data = json!({"reason": "unexpected_content_type", "status": status.as_u16()});
            shared.answer_error(&out.ids, &message, data).await;
        }
        return;
    }
    let limit = shared.config.max_event_bytes;
    let read = tokio::time::timeout_at(budget.deadline(), read_body(&mut resp, limit));
    match read.await {
        Ok(Ok(Some(body))) if body.trim().is_empty() => {}
        Ok(Ok(Some(body))) => {
            let _ = shared.deliver(body).await;
        }
        Ok(Ok(None)) => {
            let message =
                format!("the server's JSON answer exceeds {limit} bytes (max_event_bytes)");
            let data = json!({"reason": "response_too_large", "limit": limit});
            shared.answer_error(&out.ids, &message, data).await;
        }
        // The body stalled: the POST's requests fail, its slot is freed.
        Err(_) if !out.ids.is_empty() => {
            let (after, option) = budget.whole;
            let what = format!("the JSON answer from {} did not end", shared.url);
            let (message, data) = timeout_error(&what, option, after);
            tracing::warn!(message, "JSON answer timed out; its requests fail");
            shared.answer_error(&out.ids, &message, data).await;
        }
        Err(_) => {
            tracing::warn!("the JSON answer to a notification or response did not end in time")
        }
        // The body broke off: the POST's requests fail, the transport lives on.
        Ok(Err(e)) if !out.ids.is_empty() => {
            let message = format!("reading the JSON answer from {} failed: {e}", shared.url);
            let data = json!({"reason": "http_read_failed"});
            shared.answer_error(&out.ids, &message, data).await;
        }
        Ok(Err(e)) => shared.fail(format!(
            "reading the answer from {} failed: {e}",
            shared.url
        )),
    }
}

/// A 4xx / 5xx: each request in the frame gets an error, so that no caller waits. When the
/// server's body is a JSON-RPC error naming the request, it is passed on as it is.
async fn reject(shared: &Shared, out: &Outbound, status: StatusCode, body: Option<&str>) {
    let server = body.and_then(|b| match Message::decode(b) {
        Ok(Message::Response(r)) => r.outcome.err().map(|e| (r.id, e)),
        _ => None,
    });
    if out.ids.is_empty() {
        match (body, &server) {
            (Some(text), Some(_)) if out.is_request => {
                // A frame whose ids could not be read (a raw sender's malformed text): what the
                // server said is all the sender can get.
                let _ = shared.deliver(text.to_owned()).await;
            }
            _ => tracing::warn!(%status, "the server refused a notification or response"),
        }
        return;
    }
    // §14.5: a modern server's 400 names what is wrong in a JSON-RPC error (-32020, -32021,
    // -32022, -32602); when it could not name the request, the one request of the POST is it.
    if let (true, [id], Some((None, e))) = (out.is_modern(), out.ids.as_slice(), &server) {
        let text = Message::Response(Response::error(Some(id.clone()), e.clone())).to_json();
        let _ = shared.deliver(text).await;
        return;
    }
    // The server's message, quoted in our own error: cut, like every echo.
    let detail = server
        .as_ref()
        .map(|(_, e)| format!(": {}", echo(&e.message)))
        .unwrap_or_default();
    let message = format!("HTTP {status} from the server{detail}");
    for id in &out.ids {
        match (&server, body) {
            (Some((Some(named), _)), Some(text)) if named == id => {
                let _ = shared.deliver(text.to_owned()).await;
            }
            _ => {
                shared
                    .answer_error(std::slice::from_ref(id), &message, status_data(status))
                    .await
            }
        }
    }
}

/// Reads a whole body as text, bounded: `Ok(None)` when it exceeds `limit`.
async fn read_body(resp: &mut reqwest::Response, limit: usize) -> Result<Option<String>, String> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Ok(None);
    }
    let mut buf = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| describe(&e))? {
        if buf.len() + chunk.len() > limit {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// POSTs `initialize` and waits for the answer to begin: it carries the session id, and a
/// 400, 404 or 405 starts the HTTP+SSE fallback. A network failure is fatal.
pub(crate) async fn initialize(shared: &Arc<Shared>, out: Outbound) {
    if let Some(id) = out.ids.first() {
        shared.expect_init_result(id.clone());
    }
    let (rb, _) = request(shared, &shared.url, &out, false);
    let budget = Budget::for_initialize(shared);
    let resp = tokio::select! {
        biased;
        _ = shared.cancel.cancelled() => return,
        r = send(shared, rb, budget.header.0) => r,
    };
    let url = &shared.url;
    let resp = match resp {
        Ok(r) => r,
        Err(SendError::Http(e)) => {
            let hint = if e.is_connect() && e.is_timeout() {
                " (connect_timeout)"
            } else {
                ""
            };
            return shared.fail(format!(
                "POST initialize to {url} failed: {}{hint}",
                describe(&e)
            ));
        }
        Err(SendError::Timeout) => {
            return shared.fail(format!(
                "POST initialize to {url}: no answer within {:?} (response_timeout)",
                shared.config.response_timeout
            ));
        }
        Err(SendError::Refused(r)) => {
            return shared.fail(format!("POST initialize to {url}: {}", r.message()));
        }
    };
    let status = resp.status();
    let fallback_status = matches!(
        status,
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    );
    if fallback_status && shared.config.http_sse_fallback {
        match http_sse::open(shared).await {
            Ok(()) => return post_http_sse_initialize(shared, out).await,
            Err(why) => tracing::debug!(%status, why, "no HTTP+SSE server either"),
        }
    }
    if status.is_success() {
        shared.learn_session_id(resp.headers());
        shared.state().mode = HttpMode::Streamable;
    }
    let (tx, rx) = oneshot::channel();
    let shared2 = shared.clone();
    let Ok(permit) = shared.posts.clone().acquire_owned().await else {
        return;
    };
    tokio::spawn(async move {
        answer(&shared2, out, resp, false, false, tx, budget).await;
        drop(permit)
    });
    let _ = rx.await;
}

/// HTTP+SSE mode is on: `initialize` goes to the endpoint the server named.
async fn post_http_sse_initialize(shared: &Arc<Shared>, out: Outbound) {
    let Ok(permit) = shared.posts.clone().acquire_owned().await else {
        return;
    };
    let (tx, rx) = oneshot::channel();
    tokio::spawn(run(shared.clone(), out, permit, tx, None));
    let _ = rx.await;
}
