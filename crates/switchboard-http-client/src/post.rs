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
//! | a network failure (cannot connect; no awaited answer in time) | fatal, with the reason |
//! | the exchange breaks after connecting (e.g. a refused oversized body) | the frame's requests get a local -32603 with `data: {reason: "http_send_failed"}`; fatal for a frame without requests |
//!
//! `initialize` is special: its answer carries the session id, and a 400, 404 or 405 to it starts
//! the legacy fallback (SPEC-NOTES §6.9).

use std::collections::HashSet;
use std::sync::Arc;

use http::StatusCode;
use http::header::{ACCEPT, CONTENT_TYPE};
use reqwest::Url;
use serde_json::json;
use switchboard_transport::headers;
use switchboard_types::{Message, RequestId};
use tokio::sync::{OwnedSemaphorePermit, oneshot};

use crate::legacy;
use crate::shared::{HttpMode, Shared, describe, status_data};
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
}

/// Sends one frame and handles its answer; `started` fires once the answer has begun (status and
/// headers handled). Holds its POST slot until the answer is fully read.
pub(crate) async fn run(
    shared: Arc<Shared>,
    out: Outbound,
    _permit: OwnedSemaphorePermit,
    started: oneshot::Sender<()>,
) {
    let (url, legacy) = {
        let st = shared.state();
        match (&st.mode, &st.legacy_post) {
            (HttpMode::Legacy, Some(u)) => (u.clone(), true),
            _ => (shared.url.clone(), false),
        }
    };
    let (rb, sent_session) = request(&shared, &url, &out.text, legacy);
    let send = async {
        if out.is_request {
            rb.send().await.map_err(SendError::Http)
        } else {
            match tokio::time::timeout(shared.config.response_timeout, rb.send()).await {
                Ok(r) => r.map_err(SendError::Http),
                Err(_) => Err(SendError::Timeout),
            }
        }
    };
    let resp = tokio::select! {
        biased;
        _ = shared.cancel.cancelled() => return,
        r = send => r,
    };
    match resp {
        Ok(resp) => answer(&shared, out, resp, sent_session, legacy, started).await,
        // Connected, but the exchange broke (typically the server refusing an oversized body by
        // closing the connection mid-write): this POST's requests fail, the transport lives on.
        Err(SendError::Http(e)) if !e.is_connect() && !e.is_timeout() && !out.ids.is_empty() => {
            let _ = started.send(());
            let reason = describe(&e);
            tracing::warn!(%url, reason, "POST broke off; its requests fail");
            let message = format!("the POST carrying the request broke off: {reason}");
            let data = json!({"reason": "http_send_failed"});
            shared.answer_error(&out.ids, &message, data).await;
        }
        Err(SendError::Http(e)) => {
            shared.fail(format!("POST to {url} failed: {}", describe(&e)));
        }
        Err(SendError::Timeout) => shared.fail(format!(
            "POST to {url}: no answer within {:?}",
            shared.config.response_timeout
        )),
    }
}

/// Why a POST got no answer.
enum SendError {
    /// The HTTP exchange failed.
    Http(reqwest::Error),
    /// An awaited answer did not come in time.
    Timeout,
}

/// The POST request: `Accept` lists both types (`[HT-5]`), the body is JSON, and the session
/// headers ride along (Streamable HTTP only). Returns whether the session id was sent.
fn request(
    shared: &Shared,
    url: &Url,
    text: &str,
    legacy: bool,
) -> (reqwest::RequestBuilder, bool) {
    let rb = shared
        .client
        .post(url.clone())
        .header(ACCEPT, headers::POST_ACCEPT)
        .header(CONTENT_TYPE, headers::JSON)
        .body(text.to_owned());
    if legacy {
        (rb, false)
    } else {
        shared.session_headers(rb)
    }
}

/// Handles a POST's answer.
async fn answer(
    shared: &Arc<Shared>,
    out: Outbound,
    mut resp: reqwest::Response,
    sent_session: bool,
    legacy: bool,
    started: oneshot::Sender<()>,
) {
    let status = resp.status();
    if status == StatusCode::NOT_FOUND && sent_session {
        let _ = started.send(());
        shared.session_gone("a POST");
        return;
    }
    if !status.is_success() {
        let body = read_body(&mut resp, ERROR_BODY_LIMIT).await.ok().flatten();
        let _ = started.send(());
        reject(shared, &out, status, body.as_deref()).await;
        return;
    }
    if legacy {
        // The legacy transport answers on its SSE stream; the POST only says "accepted".
        let _ = started.send(());
        return;
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
    match read_body(&mut resp, limit).await {
        Ok(Some(body)) if body.trim().is_empty() => {}
        Ok(Some(body)) => {
            let _ = shared.deliver(body).await;
        }
        Ok(None) => {
            let message = format!("the server's JSON answer exceeds {limit} bytes");
            let data = json!({"reason": "response_too_large", "limit": limit});
            shared.answer_error(&out.ids, &message, data).await;
        }
        Err(e) => shared.fail(format!(
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
    let detail = server
        .as_ref()
        .map(|(_, e)| format!(": {}", e.message))
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
/// 400, 404 or 405 starts the legacy fallback. A network failure is fatal.
pub(crate) async fn initialize(shared: &Arc<Shared>, out: Outbound) {
    if let Some(id) = out.ids.first() {
        shared.expect_init_result(id.clone());
    }
    let (rb, _) = request(shared, &shared.url, &out.text, false);
    let sent = tokio::time::timeout(shared.config.response_timeout, rb.send());
    let resp = tokio::select! {
        biased;
        _ = shared.cancel.cancelled() => return,
        r = sent => r,
    };
    let resp = match resp {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            return shared.fail(format!(
                "POST initialize to {} failed: {}",
                shared.url,
                describe(&e)
            ));
        }
        Err(_) => {
            return shared.fail(format!(
                "POST initialize to {}: no answer within {:?}",
                shared.url, shared.config.response_timeout
            ));
        }
    };
    let status = resp.status();
    let legacy_status = matches!(
        status,
        StatusCode::BAD_REQUEST | StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED
    );
    if legacy_status && shared.config.legacy_fallback {
        match legacy::open(shared).await {
            Ok(()) => return post_legacy_initialize(shared, out).await,
            Err(why) => tracing::debug!(%status, why, "no legacy HTTP+SSE server either"),
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
        answer(&shared2, out, resp, false, false, tx).await;
        drop(permit)
    });
    let _ = rx.await;
}

/// Legacy mode is on: `initialize` goes to the endpoint the server named.
async fn post_legacy_initialize(shared: &Arc<Shared>, out: Outbound) {
    let Ok(permit) = shared.posts.clone().acquire_owned().await else {
        return;
    };
    let (tx, rx) = oneshot::channel();
    tokio::spawn(run(shared.clone(), out, permit, tx));
    let _ = rx.await;
}
