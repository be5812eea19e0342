//! What every task of one client transport shares: the HTTP client, the endpoint, the session
//! facts learnt on the way (session id, negotiated version, mode), the inbound queue to the
//! engine (bounded by count and by bytes), the POST slots, and how the transport ends (closed,
//! or failed with a reason).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use http::HeaderValue;
use reqwest::{RequestBuilder, Url};
use serde::Deserialize;
use serde_json::json;
use switchboard_jsonrpc::TransportError;
use switchboard_types::{ErrorCode, ErrorObject, Frame, Message, RequestId, Response};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio_util::sync::CancellationToken;

use crate::config::HttpClientConfig;

pub(crate) use switchboard_transport::headers::{PROTOCOL_VERSION, SESSION_ID};

/// Every fatal error for an ended session starts with this text (`[HT-21]`); see
/// [`crate::HttpClientHandle::session_expired`].
pub const SESSION_EXPIRED: &str = "MCP session expired";

/// Which HTTP transport the server turned out to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMode {
    /// Not known yet: `initialize` has not been answered.
    Unknown,
    /// Streamable HTTP (2025-03-26 onward).
    Streamable,
    /// The HTTP+SSE transport (2024-11-05), after the fallback of SPEC-NOTES §6.9.
    HttpSse,
    /// Streamable HTTP in revision 2026-07-28 (SPEC-2026-NOTES §14): no session (no
    /// `MCP-Session-Id`, no GET stream, no `DELETE`), the client role's header lines on every
    /// POST, cancellation by closing the request's response stream.
    Modern,
}

/// Session facts, learnt as frames pass.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) mode: HttpMode,
    /// HTTP+SSE mode: where every message is POSTed.
    pub(crate) http_sse_post: Option<Url>,
    pub(crate) session_id: Option<HeaderValue>,
    pub(crate) protocol_version: Option<HeaderValue>,
    /// The id of the `initialize` request, whose result is peeked at for the version.
    pub(crate) init_id: Option<RequestId>,
    /// Whether the initialize result has been seen.
    pub(crate) initialized: bool,
    /// Whether the standalone GET stream has been started.
    pub(crate) get_started: bool,
}

/// One message queued for the engine, holding its share of the byte budget until taken.
#[derive(Debug)]
pub(crate) struct Inbound {
    pub(crate) text: String,
    _bytes: OwnedSemaphorePermit,
}

/// The shared part of one transport.
pub(crate) struct Shared {
    pub(crate) client: reqwest::Client,
    pub(crate) url: Url,
    pub(crate) config: HttpClientConfig,
    state: Mutex<State>,
    inbound: mpsc::Sender<Inbound>,
    /// The byte budget of the inbound queue (`max_inbound_bytes`), one permit per byte.
    inbound_bytes: Arc<Semaphore>,
    /// POST slots (`max_concurrent_posts`).
    pub(crate) posts: Arc<Semaphore>,
    /// Request POSTs by request id, so that one whose callers all gave up stops.
    pub(crate) abandons: crate::abandon::Abandons,
    /// Cancelled when the transport closes or fails: every task stops.
    pub(crate) cancel: CancellationToken,
    failure: OnceLock<String>,
    session_expired: AtomicBool,
    /// Set while the initialize result has not been seen: inbound frames are peeked at.
    awaiting_init: AtomicBool,
    /// The POSTs of modern requests still being answered, by request id: cancelling a request
    /// closes its response stream (`[D26-77]`). Bounded by `max_concurrent_posts`.
    modern_posts: Mutex<std::collections::HashMap<RequestId, CancellationToken>>,
}

impl std::fmt::Debug for Shared {
    /// Leaves out the session id and the configured headers (`[HT-19]`: the id is a secret).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.state();
        f.debug_struct("Shared")
            .field("url", &self.url.as_str())
            .field("mode", &st.mode)
            .field("has_session", &st.session_id.is_some())
            .field("protocol_version", &st.protocol_version)
            .field("failure", &self.failure())
            .finish_non_exhaustive()
    }
}

/// The part of the initialize result the transport reads (`[HT-22]`).
#[derive(Deserialize)]
struct InitPeek {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
}

impl Shared {
    pub(crate) fn new(
        client: reqwest::Client,
        url: Url,
        config: HttpClientConfig,
    ) -> (Arc<Shared>, mpsc::Receiver<Inbound>) {
        let (tx, rx) = mpsc::channel(config.inbound_queue.max(1));
        let shared = Shared {
            client,
            url,
            inbound_bytes: Arc::new(Semaphore::new(inbound_budget(&config))),
            posts: Arc::new(Semaphore::new(config.max_concurrent_posts.max(1))),
            abandons: crate::abandon::Abandons::default(),
            config,
            state: Mutex::new(State {
                mode: HttpMode::Unknown,
                http_sse_post: None,
                session_id: None,
                protocol_version: None,
                init_id: None,
                initialized: false,
                get_started: false,
            }),
            inbound: tx,
            cancel: CancellationToken::new(),
            failure: OnceLock::new(),
            session_expired: AtomicBool::new(false),
            awaiting_init: AtomicBool::new(false),
            modern_posts: Mutex::new(std::collections::HashMap::new()),
        };
        (Arc::new(shared), rx)
    }

    /// The session facts (a poisoned lock is taken over: the state stays consistent field by
    /// field).
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The fatal reason, once the transport has failed.
    pub(crate) fn failure(&self) -> Option<&str> {
        self.failure.get().map(String::as_str)
    }

    pub(crate) fn session_expired(&self) -> bool {
        self.session_expired.load(Ordering::Acquire)
    }

    /// Fails the transport: the reason is reported once by the source after the messages
    /// already queued, and every task stops.
    pub(crate) fn fail(&self, reason: String) {
        if self.cancel.is_cancelled() && self.failure.get().is_none() {
            // Closed on purpose first: nothing to report.
            return;
        }
        if self.failure.set(reason).is_ok() {
            tracing::warn!(
                reason = self.failure().unwrap_or(""),
                "HTTP client transport failed"
            );
        }
        self.cancel.cancel();
    }

    /// `[HT-21]`: the server answered 404 to a request carrying the session id.
    pub(crate) fn session_gone(&self, what: &str) {
        self.session_expired.store(true, Ordering::Release);
        self.fail(format!(
            "{SESSION_EXPIRED}: the server answered 404 Not Found to {what} carrying the session \
             id (HT-21); start a new session with a new initialize"
        ));
    }

    /// Files the POST of modern requests `ids`: the token ends its exchange when one is
    /// cancelled.
    pub(crate) fn file_modern_post(&self, ids: &[RequestId]) -> CancellationToken {
        let token = self.cancel.child_token();
        if let Ok(mut posts) = self.modern_posts.lock() {
            for id in ids {
                posts.insert(id.clone(), token.clone());
            }
        }
        token
    }

    /// Forgets the POST of modern requests `ids` (answered, failed or cancelled).
    pub(crate) fn forget_modern_post(&self, ids: &[RequestId]) {
        if let Ok(mut posts) = self.modern_posts.lock() {
            for id in ids {
                posts.remove(id);
            }
        }
    }

    /// Closes the response stream of modern request `id` (`[D26-77]`: on Streamable HTTP in
    /// 2026-07-28 that is the cancellation); whether there was one.
    pub(crate) fn close_modern_post(&self, id: &RequestId) -> bool {
        let token = self.modern_posts.lock().ok().and_then(|mut p| p.remove(id));
        match token {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// A modern request's POST was answered with success: the server speaks 2026-07-28 (kept
    /// for [`crate::HttpClientHandle::mode`]), at the revision the request named.
    pub(crate) fn learn_modern(&self, version: Option<&str>) {
        let mut st = self.state();
        if st.mode == HttpMode::Unknown {
            st.mode = HttpMode::Modern;
        }
        if st.mode == HttpMode::Modern
            && let Some(v) = version.and_then(|v| HeaderValue::from_str(v).ok())
        {
            st.protocol_version = Some(v);
        }
    }

    /// Remembers the `initialize` request, so that its result is peeked at.
    pub(crate) fn expect_init_result(&self, id: RequestId) {
        self.state().init_id = Some(id);
        self.awaiting_init.store(true, Ordering::Release);
    }

    /// Hands one inbound frame to the engine, waiting while the queue is full by count or by
    /// bytes; false once the transport has ended.
    pub(crate) async fn deliver(&self, text: String) -> bool {
        if self.awaiting_init.load(Ordering::Acquire) {
            self.peek_init(&text);
        }
        // A message larger than the whole budget takes all of it: it waits for an empty queue.
        let budget = inbound_budget(&self.config);
        let share = u32::try_from(text.len().clamp(1, budget)).unwrap_or(u32::MAX);
        let queued = async {
            let bytes = self
                .inbound_bytes
                .clone()
                .acquire_many_owned(share)
                .await
                .ok()?;
            self.inbound
                .send(Inbound {
                    text,
                    _bytes: bytes,
                })
                .await
                .ok()
        };
        tokio::select! {
            biased;
            r = queued => r.is_some(),
            _ = self.cancel.cancelled() => false,
        }
    }

    /// Learns the negotiated version from the initialize result as it passes.
    fn peek_init(&self, text: &str) {
        let Ok(Frame::Single(Ok(Message::Response(r)))) = Frame::decode(text) else {
            return;
        };
        let mut st = self.state();
        if r.id.is_none() || r.id != st.init_id {
            return;
        }
        self.awaiting_init.store(false, Ordering::Release);
        let Ok(result) = &r.outcome else { return };
        st.initialized = true;
        match serde_json::from_str::<InitPeek>(result.get())
            .ok()
            .and_then(|p| HeaderValue::from_str(&p.protocol_version).ok())
        {
            Some(v) => st.protocol_version = Some(v),
            None => tracing::debug!("initialize result without a readable protocolVersion"),
        }
    }

    /// Answers each of `ids` locally with a -32603 error, so that no caller waits for an answer
    /// the server will not send.
    pub(crate) async fn answer_error(
        &self,
        ids: &[RequestId],
        message: &str,
        data: serde_json::Value,
    ) {
        for id in ids {
            let err = ErrorObject::new(ErrorCode::INTERNAL_ERROR, message).with_data(data.clone());
            let text = Message::Response(Response::error(Some(id.clone()), err)).to_json();
            if !self.deliver(text).await {
                return;
            }
        }
    }

    /// Adds `MCP-Session-Id` and `MCP-Protocol-Version` when known (`[HT-19]`, `[HT-22]`);
    /// returns whether the session id was sent.
    pub(crate) fn session_headers(&self, rb: RequestBuilder) -> (RequestBuilder, bool) {
        let st = self.state();
        let mut rb = rb;
        let sent = st.session_id.is_some();
        if let Some(s) = &st.session_id {
            rb = rb.header(SESSION_ID, s.clone());
        }
        if let Some(v) = &st.protocol_version {
            rb = rb.header(PROTOCOL_VERSION, v.clone());
        }
        (rb, sent)
    }

    /// Records the session id of the initialize answer, when it is one (`[HT-18]`: visible
    /// ASCII only).
    pub(crate) fn learn_session_id(&self, headers: &http::HeaderMap) {
        let Some(v) = headers.get(SESSION_ID) else {
            return;
        };
        let visible = !v.is_empty() && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b));
        if visible {
            self.state().session_id = Some(v.clone());
        } else {
            tracing::warn!("the server's MCP-Session-Id is not visible ASCII (HT-18); ignored");
        }
    }
}

/// The byte budget of the inbound queue, in permits (at least 1, at most `u32::MAX`).
fn inbound_budget(config: &HttpClientConfig) -> usize {
    config.max_inbound_bytes.clamp(1, u32::MAX as usize)
}

/// The `data` of a locally synthesized error for an HTTP status.
pub(crate) fn status_data(status: http::StatusCode) -> serde_json::Value {
    json!({"reason": "http_status", "status": status.as_u16()})
}

/// The message and `data` of a local error for a timeout, named by its option.
pub(crate) fn timeout_error(
    what: &str,
    option: &str,
    after: std::time::Duration,
) -> (String, serde_json::Value) {
    let message = format!("{what} within {after:?} ({option})");
    let ms = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
    let data = json!({"reason": "http_timeout", "timeout": option, "ms": ms});
    (message, data)
}

/// A transport error carrying a reason, for the engine.
pub(crate) fn other(reason: &str) -> TransportError {
    TransportError::Other(reason.to_owned())
}

/// A `reqwest` error with its causes, for messages.
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        let c = cause.to_string();
        if !s.contains(&c) {
            s.push_str(": ");
            s.push_str(&c);
        }
        source = cause.source();
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use super::*;

    fn shared(config: HttpClientConfig) -> (Arc<Shared>, mpsc::Receiver<Inbound>) {
        let url = Url::parse("http://127.0.0.1:1/mcp").unwrap();
        Shared::new(reqwest::Client::new(), url, config)
    }

    /// Whether `deliver(text)` completes at once (the queue had room).
    async fn fits(shared: &Arc<Shared>, text: String) -> Option<tokio::task::JoinHandle<bool>> {
        let s = shared.clone();
        let task = tokio::spawn(async move { s.deliver(text).await });
        tokio::time::sleep(Duration::from_millis(50)).await;
        if task.is_finished() {
            assert!(task.await.unwrap());
            None
        } else {
            Some(task)
        }
    }

    #[tokio::test]
    async fn the_inbound_queue_is_bounded_by_count() {
        let (s, mut rx) = shared(HttpClientConfig::default().with_inbound_queue(2));
        assert!(fits(&s, "a".into()).await.is_none());
        assert!(fits(&s, "b".into()).await.is_none());
        let third = fits(&s, "c".into()).await.expect("the third waits");
        assert_eq!(rx.recv().await.unwrap().text, "a");
        assert!(third.await.unwrap(), "delivered once there is room");
    }

    #[tokio::test]
    async fn the_inbound_queue_is_bounded_by_bytes() {
        let config = HttpClientConfig::default()
            .with_inbound_queue(100)
            .with_max_inbound_bytes(4096);
        let (s, mut rx) = shared(config);
        let chunk = |c: char| c.to_string().repeat(1500);
        assert!(fits(&s, chunk('a')).await.is_none());
        assert!(fits(&s, chunk('b')).await.is_none());
        let third = fits(&s, chunk('c')).await.expect("over 4096 bytes: waits");
        assert!(rx.recv().await.unwrap().text.starts_with('a'));
        assert!(third.await.unwrap());
        // A message larger than the whole budget waits for an empty queue, then passes.
        let big = fits(&s, "d".repeat(10_000))
            .await
            .expect("waits for the queue to empty");
        assert!(rx.recv().await.unwrap().text.starts_with('b'));
        assert!(!big.is_finished());
        assert!(rx.recv().await.unwrap().text.starts_with('c'));
        assert!(big.await.unwrap());
        assert_eq!(rx.recv().await.unwrap().text.len(), 10_000);
    }

    #[tokio::test]
    async fn a_closed_transport_stops_a_waiting_delivery() {
        let (s, _rx) = shared(HttpClientConfig::default().with_inbound_queue(1));
        assert!(fits(&s, "a".into()).await.is_none());
        let waiting = fits(&s, "b".into()).await.expect("waits");
        s.cancel.cancel();
        assert!(!waiting.await.unwrap());
    }
}
