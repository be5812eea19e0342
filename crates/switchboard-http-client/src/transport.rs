//! [`HttpClientTransport`]: the engine's [`Transport`] over Streamable HTTP (client side), with
//! its halves [`HttpClientSink`] and [`HttpClientSource`], and [`HttpClientHandle`] to ask what
//! was learnt (mode, session id, negotiated version, whether the session expired).
//!
//! Frames are sent in call order; each is its own POST (`[HT-4]`). The sink waits for the answer
//! of `initialize`, of notifications and of responses (202) before taking the next frame. A
//! request's POST does not hold back the requests after it (JSON-RPC orders no requests among
//! themselves, and a session with K calls in flight would otherwise send one a round trip); a
//! notification or response that follows requests waits, up to `send_order_wait` from each
//! request's sending, for their answers to begin, so that a `notifications/cancelled` reaches a
//! prompt server after its request while a slow answer never holds it for long. Replies are
//! read by tasks that feed the source.

use std::collections::VecDeque;
use std::sync::Arc;

use reqwest::Url;
use switchboard_jsonrpc::{
    FrameSink, FrameSource, OutboundFrame, Transport, TransportControl, TransportError,
};
use switchboard_types::{Frame, Message, MessageKind, RequestId};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::DropGuard;

use crate::config::HttpClientConfig;
use crate::post::{self, Outbound};
use crate::redirect;
use crate::shared::{HttpMode, Inbound, Shared, describe, other};
use crate::stream;
use switchboard_types::methods;

/// Why a transport could not be made. No request is made by [`HttpClientTransport::connect`],
/// so these are all local.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// The URL does not parse.
    #[error("invalid MCP endpoint URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why it does not parse.
        reason: String,
    },
    /// The scheme is neither `http` nor `https`.
    #[error("unsupported URL scheme {0:?} (http or https)")]
    UnsupportedScheme(String),
    /// An `https` URL, but the crate was built without the `rustls` feature.
    #[error("https needs switchboard-http-client's `rustls` feature")]
    TlsUnavailable,
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

/// A client transport to one MCP endpoint over Streamable HTTP, falling back to the 2024-11-05
/// HTTP+SSE transport when the server speaks only that (SPEC-NOTES §6.9).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
///
/// let transport = HttpClientTransport::connect("http://127.0.0.1:8080/mcp", HttpClientConfig::default())?;
/// let handle = transport.handle();
/// // let session = client.connect(transport).await?;   // switchboard_client::Client
/// // ...
/// if handle.session_expired() {
///     // The server ended the session ([HT-21]): connect a new transport and initialize again.
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct HttpClientTransport {
    sink: HttpClientSink,
    source: HttpClientSource,
}

impl HttpClientTransport {
    /// A transport to the endpoint `url` (for example `http://127.0.0.1:8080/mcp`). Nothing is
    /// sent until the engine sends its first frame (normally `initialize`).
    ///
    /// # Errors
    /// The URL does not parse or has another scheme than `http`/`https`; `https` without the
    /// `rustls` feature; the HTTP client cannot be built.
    pub fn connect(url: &str, config: HttpClientConfig) -> Result<Self, ConnectError> {
        let parsed = Url::parse(url).map_err(|e| ConnectError::InvalidUrl {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
        match parsed.scheme() {
            "http" => {}
            "https" if cfg!(feature = "rustls") => {}
            "https" => return Err(ConnectError::TlsUnavailable),
            s => return Err(ConnectError::UnsupportedScheme(s.to_owned())),
        }
        // Redirects are followed by `redirect::execute`, on the endpoint's origin only.
        let mut builder = reqwest::Client::builder()
            .default_headers(config.headers.clone())
            .user_agent(config.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none());
        if let Some(t) = config.connect_timeout {
            builder = builder.connect_timeout(t);
        }
        let client = builder
            .build()
            .map_err(|e| ConnectError::Client(describe(&e)))?;
        let (shared, rx) = Shared::new(client, parsed, config);
        Ok(HttpClientTransport {
            sink: HttpClientSink {
                shared: shared.clone(),
                _stop_on_drop: shared.cancel.clone().drop_guard(),
                closed: false,
                unstarted: Unstarted::default(),
            },
            source: HttpClientSource {
                shared,
                rx,
                reported: false,
            },
        })
    }

    /// A handle to what the transport learns as it runs. Take it before handing the transport
    /// to the engine.
    pub fn handle(&self) -> HttpClientHandle {
        HttpClientHandle {
            shared: self.sink.shared.clone(),
        }
    }
}

impl Transport for HttpClientTransport {
    type Sink = HttpClientSink;
    type Source = HttpClientSource;

    fn control(&self) -> Option<Arc<dyn TransportControl>> {
        Some(Arc::new(Control {
            shared: self.sink.shared.clone(),
        }))
    }

    fn split(self) -> (HttpClientSink, HttpClientSource) {
        (self.sink, self.source)
    }
}

/// What the engine tells the transport: which of our requests their callers gave up on.
struct Control {
    shared: Arc<Shared>,
}

impl TransportControl for Control {
    fn request_abandoned(&self, request: &RequestId) {
        self.shared.abandons.abandon(request);
    }

    /// The session id the server issued (`Mcp-Session-Id`), once it has: the name both ends
    /// give the session, which telemetry records as `mcp.session.id`.
    fn session_key(&self) -> Option<Arc<str>> {
        let st = self.shared.state();
        st.session_id
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(Arc::from)
    }
}

/// What a transport has learnt: its mode, the session id, the negotiated version, and whether
/// the server ended the session. Cheap to clone.
#[derive(Debug, Clone)]
pub struct HttpClientHandle {
    shared: Arc<Shared>,
}

impl HttpClientHandle {
    /// The MCP endpoint.
    pub fn url(&self) -> &str {
        self.shared.url.as_str()
    }

    /// Which transport the server speaks (known once `initialize` has been answered).
    pub fn mode(&self) -> HttpMode {
        self.shared.state().mode
    }

    /// The session id the server issued, if any. Treat it as a secret: do not log it.
    pub fn session_id(&self) -> Option<String> {
        let st = self.shared.state();
        st.session_id
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// The protocol version read from the initialize result, sent as `MCP-Protocol-Version`.
    pub fn protocol_version(&self) -> Option<String> {
        let st = self.shared.state();
        st.protocol_version
            .as_ref()
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// Whether the server answered 404 to the session id (`[HT-21]`). The transport has then
    /// failed; the client role decides whether to start over with a new transport and a new
    /// `initialize` (this transport never re-initializes on its own).
    pub fn session_expired(&self) -> bool {
        self.shared.session_expired()
    }

    /// Why the transport failed, once it has.
    pub fn failure(&self) -> Option<String> {
        self.shared.failure().map(str::to_owned)
    }
}

/// The sending half: one POST per frame. Closing it sends `DELETE` with the session id and
/// stops every stream; dropping it stops them too.
#[derive(Debug)]
pub struct HttpClientSink {
    shared: Arc<Shared>,
    _stop_on_drop: DropGuard,
    closed: bool,
    /// Request POSTs whose answers had not begun when last looked at.
    unstarted: Unstarted,
}

/// Request POSTs the sink remembers as not yet answered; past it, the next request waits for
/// the oldest (bounded by `send_order_wait`).
const MAX_UNSTARTED: usize = 1024;

/// Request POSTs whose answers had not begun when last looked at, each with the latest time a
/// following notification or response waits for it (its sending plus `send_order_wait`).
#[derive(Debug, Default)]
struct Unstarted {
    posts: VecDeque<(oneshot::Receiver<()>, tokio::time::Instant)>,
}

impl Unstarted {
    /// Remembers a request POST whose answer has not begun (`begun` fires when it does) and
    /// forgets those that began. At `cap` remembered, the oldest is waited for first, up to
    /// its deadline.
    async fn note(
        &mut self,
        begun: oneshot::Receiver<()>,
        deadline: tokio::time::Instant,
        cap: usize,
    ) {
        self.posts.retain_mut(|(rx, _)| {
            matches!(rx.try_recv(), Err(oneshot::error::TryRecvError::Empty))
        });
        if self.posts.len() >= cap
            && let Some((oldest, until)) = self.posts.pop_front()
        {
            let _ = tokio::time::timeout_at(until, oldest).await;
        }
        self.posts.push_back((begun, deadline));
    }

    /// Waits until every request POST remembered has begun its answer, or its time is up.
    async fn wait_all(&mut self) {
        while let Some((rx, until)) = self.posts.pop_front() {
            let _ = tokio::time::timeout_at(until, rx).await;
        }
    }
}

impl FrameSink for HttpClientSink {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        let shared = &self.shared;
        check_open(shared)?;
        // A modern request is cancelled by closing its response stream, not by a POST
        // (`[D26-77]`); a legacy one by the notification, as before.
        if let Some(id) = &frame.cancels {
            // The request's POST may already be stopped (given up: `request_abandoned`); in the
            // modern era the notification is never sent either way.
            let modern = shared.state().mode == HttpMode::Modern;
            if shared.close_modern_post(id) || modern {
                tracing::debug!("modern request cancelled: its response stream is closed");
                return Ok(());
            }
        }
        let out = classify(shared, frame);
        if !out.is_request {
            self.unstarted.wait_all().await;
        }
        let shared = &self.shared;
        // `initialize` opens a session, also after a modern probe that did not settle the era
        // (the client role falls back to the handshake).
        let opening = matches!(shared.state().mode, HttpMode::Unknown | HttpMode::Modern);
        if out.initialize && opening {
            post::initialize(shared, out).await;
            return check_open(shared);
        }
        // A request POST can be given up by its callers, even while it waits for a slot.
        let watch =
            (out.is_request && !out.ids.is_empty()).then(|| shared.abandons.register(&out.ids));
        let given_up = async {
            match &watch {
                Some(w) => w.given_up.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let permit = tokio::select! {
            biased;
            _ = shared.cancel.cancelled() => return check_open(shared),
            _ = given_up => {
                if let Some(w) = &watch {
                    shared.abandons.finish(w, &out.ids);
                }
                tracing::debug!("a request given up by its caller was not sent");
                return Ok(());
            }
            p = shared.posts.clone().acquire_owned() => p.map_err(|_| TransportError::Closed)?,
        };
        let is_request = out.is_request;
        let initialized = out.initialized_notification;
        let (tx, rx) = oneshot::channel();
        tokio::spawn(post::run(shared.clone(), out, permit, tx, watch));
        if is_request {
            let deadline = tokio::time::Instant::now() + shared.config.send_order_wait;
            self.unstarted.note(rx, deadline, MAX_UNSTARTED).await;
        } else {
            let _ = rx.await;
        }
        if initialized {
            self.start_get_stream();
        }
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        let shared = &self.shared;
        shared.cancel.cancel();
        let (mode, session) = {
            let st = shared.state();
            (st.mode, st.session_id.clone())
        };
        // No session in the modern era: nothing to end.
        if mode == HttpMode::Streamable && session.is_some() && !shared.session_expired() {
            delete_session(shared).await;
        }
        Ok(())
    }
}

impl HttpClientSink {
    /// Opens the standalone GET stream once, after `notifications/initialized` was accepted.
    fn start_get_stream(&self) {
        let shared = &self.shared;
        if !shared.config.get_stream || shared.cancel.is_cancelled() {
            return;
        }
        {
            let mut st = shared.state();
            if st.get_started || st.mode != HttpMode::Streamable || st.session_id.is_none() {
                return;
            }
            st.get_started = true;
        }
        stream::start_get(shared);
    }
}

/// `Err` once the transport has failed (with the reason) or closed.
fn check_open(shared: &Shared) -> Result<(), TransportError> {
    match shared.failure() {
        Some(reason) => Err(other(reason)),
        None if shared.cancel.is_cancelled() => Err(TransportError::Closed),
        None => Ok(()),
    }
}

/// Ends the session on the server (`DELETE` with the session id); a 405 means the server does
/// not let clients end sessions, which is fine.
async fn delete_session(shared: &Shared) {
    let rb = shared.client.delete(shared.url.clone());
    let (rb, _) = shared.session_headers(rb);
    let req = match rb.build() {
        Ok(req) => req,
        Err(e) => return tracing::debug!(error = %describe(&e), "DELETE not built"),
    };
    let sent = redirect::execute(shared, req);
    match tokio::time::timeout(shared.config.response_timeout, sent).await {
        Ok(Ok(Ok(r))) if r.status().is_success() => tracing::debug!("session ended with DELETE"),
        Ok(Ok(Ok(r))) if r.status() == http::StatusCode::METHOD_NOT_ALLOWED => {
            tracing::debug!("the server does not let clients end sessions (405)")
        }
        Ok(Ok(Ok(r))) => tracing::debug!(status = %r.status(), "DELETE of the session refused"),
        Ok(Ok(Err(refused))) => tracing::debug!(why = refused.message(), "DELETE not sent on"),
        Ok(Err(e)) => tracing::debug!(error = %describe(&e), "DELETE of the session failed"),
        Err(_) => tracing::debug!("DELETE of the session got no answer in time"),
    }
}

/// Reads what the POST needs from a frame: the ids of its requests, and whether it is
/// `initialize` or `notifications/initialized`. The engine's own frames carry their id; only
/// batches, frames without an id, and the frames before the GET stream opens are decoded
/// (envelope only, never `params`).
fn classify(shared: &Shared, frame: OutboundFrame) -> Outbound {
    let (opening, init_done) = {
        let st = shared.state();
        (
            // Before the era is known, and for a frame without header lines after a modern
            // answer (the role falling back to the handshake), `initialize` is looked for.
            st.mode == HttpMode::Unknown
                || (st.mode == HttpMode::Modern && frame.headers.is_empty()),
            st.initialized && !st.get_started,
        )
    };
    let is_request = frame.kind == MessageKind::Request;
    let batch = frame.text.trim_start().starts_with('[');
    let decode = batch
        || (is_request && (frame.id.is_none() || opening))
        || (frame.kind == MessageKind::Notification && init_done);
    let mut out = Outbound {
        ids: Vec::new(),
        is_request,
        initialize: false,
        initialized_notification: false,
        text: String::new(),
        headers: frame.headers,
    };
    if !decode {
        out.ids.extend(frame.id.filter(|_| is_request));
        out.text = frame.text;
        return out;
    }
    match Frame::decode(&frame.text) {
        Ok(Frame::Single(Ok(Message::Request(r)))) => {
            out.initialize = r.method == methods::INITIALIZE;
            out.ids.push(r.id);
        }
        Ok(Frame::Single(Ok(Message::Notification(n)))) => {
            out.initialized_notification = n.method == methods::NOTIFICATIONS_INITIALIZED;
        }
        Ok(Frame::Single(Err(e))) if e.answerable => out.ids.extend(e.id),
        Ok(Frame::Batch(items)) => {
            for item in items {
                match item {
                    Ok(Message::Request(r)) => out.ids.push(r.id),
                    Err(e) if e.answerable => out.ids.extend(e.id),
                    _ => {}
                }
            }
            out.is_request |= !out.ids.is_empty();
        }
        _ => {}
    }
    dedup(&mut out.ids);
    out.text = frame.text;
    out
}

fn dedup(ids: &mut Vec<RequestId>) {
    let mut seen = std::collections::HashSet::new();
    ids.retain(|id| seen.insert(id.clone()));
}

/// The receiving half: every message from every POST answer and SSE stream, in order per
/// stream; then, if the transport failed, its reason as a fatal error.
#[derive(Debug)]
pub struct HttpClientSource {
    shared: Arc<Shared>,
    rx: mpsc::Receiver<Inbound>,
    reported: bool,
}

impl FrameSource for HttpClientSource {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        tokio::select! {
            biased;
            m = self.rx.recv() => m.map(|m| Ok(m.text)),
            _ = self.shared.cancel.cancelled() => {
                if let Ok(m) = self.rx.try_recv() {
                    return Some(Ok(m.text));
                }
                match self.shared.failure() {
                    Some(reason) if !self.reported => {
                        self.reported = true;
                        Some(Err(other(reason)))
                    }
                    _ => None,
                }
            }
        }
    }
}

#[cfg(test)]
mod unstarted_tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use tokio::sync::oneshot;
    use tokio::time::Instant;

    use super::Unstarted;

    /// The bound by count: at the cap, the next request waits for the oldest, and no longer
    /// than the oldest's deadline (time paused: the clock moves only when all else waits).
    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_oldest_is_waited_for_until_its_deadline() {
        let mut u = Unstarted::default();
        let start = Instant::now();
        let wait = Duration::from_millis(100);
        let mut keep = Vec::new();
        for _ in 0..2 {
            let (tx, rx) = oneshot::channel::<()>();
            keep.push(tx);
            u.note(rx, Instant::now() + wait, 2).await;
        }
        assert_eq!(Instant::now(), start, "under the cap nothing waits");
        let (_tx3, rx3) = oneshot::channel::<()>();
        u.note(rx3, Instant::now() + wait, 2).await;
        assert_eq!(
            Instant::now() - start,
            wait,
            "the oldest's deadline, no longer"
        );
        assert_eq!(u.posts.len(), 2);
        drop(keep);
    }

    /// Requests whose answers began are forgotten: they neither count toward the cap nor
    /// hold a following notification back.
    #[tokio::test(start_paused = true)]
    async fn begun_answers_are_forgotten_and_the_wait_ends_at_each_deadline() {
        let mut u = Unstarted::default();
        let start = Instant::now();
        let (tx1, rx1) = oneshot::channel::<()>();
        u.note(rx1, start + Duration::from_millis(100), 2).await;
        tx1.send(()).unwrap();
        let (_tx2, rx2) = oneshot::channel::<()>();
        u.note(rx2, start + Duration::from_millis(300), 2).await;
        assert_eq!(u.posts.len(), 1, "the begun one is forgotten");
        let (_tx3, rx3) = oneshot::channel::<()>();
        u.note(rx3, start + Duration::from_millis(200), 2).await;
        assert_eq!(
            Instant::now(),
            start,
            "two unbegun: at the cap, not past it"
        );
        u.wait_all().await;
        assert_eq!(Instant::now() - start, Duration::from_millis(300));
        assert!(u.posts.is_empty());
    }
}
