//! [`StreamableHttpService`]: the MCP endpoint as a `tower::Service` (server side), plus
//! [`serve`] to run it on a TCP listener.
//!
//! | method | what it does |
//! |---|---|
//! | `POST` | one JSON-RPC message (or a 2025-03-26 batch) in; 202, or one JSON answer, or an SSE stream |
//! | `GET` | opens the standalone SSE stream, or resumes any stream with `Last-Event-ID` |
//! | `DELETE` | ends the session |
//!
//! Every request first passes the `Host` / `Origin` checks (403). Error bodies are JSON-RPC error
//! objects without `id`. A body must arrive whole within the body read timeout (408) and within
//! the body bound (413); a replay beyond the bound on replays running at once gets 503.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use switchboard_auth::resource::AuthInfo;
use switchboard_jsonrpc::{Attachment, BoxFuture, Peer};
use switchboard_types::error::echo;
use switchboard_types::{ErrorCode, ErrorObject, Frame, Message, RequestId, methods};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::cluster::{self, Relay};
use crate::config::{HttpConfig, SessionBounds};
use crate::conn::ConnRx;
use crate::event_store::{EventId, EventStoreError, StoredEvent};
use crate::headers;
use crate::listener::{self, BodyError, read_body};
use crate::reply::{self, JSON, TRANSPORT_ERROR, refuse};
use crate::routing::{Attach, Registration, RouteError};
use crate::security;
use crate::session::{
    ConnGuard, HttpSessionTransport, Origin, Registry, Resume, Session, new_session_id, reap_loop,
};
use crate::sse::{self, Replay, SseBody};

/// How long a POST waits for the first event of its SSE stream before the headers and the
/// priming event go out alone.
const FIRST_EVENT_WAIT: Duration = Duration::from_millis(1);

/// Creates the engine side of a new session. It starts the role on the transport, ready when
/// [`HttpSessionTransport::resume`] is `Some`: typically
/// `switchboard::server_http::session_factory(&server)` (the facade joins the server role and
/// this crate).
pub type SessionFactory = Arc<dyn Fn(HttpSessionTransport) -> Result<Peer, String> + Send + Sync>;

/// The Streamable HTTP endpoint. Cheap to clone; every clone serves the same sessions.
///
/// Mount it with `Router::nest_service("/mcp", service)` or `route_service`, or use
/// [`StreamableHttpService::router`]. It answers on whatever path it is mounted at.
#[derive(Clone)]
pub struct StreamableHttpService {
    inner: Arc<Inner>,
}

struct Inner {
    config: HttpConfig,
    factory: SessionFactory,
    registry: Arc<Registry>,
    reaper: OnceLock<()>,
    /// Stateless requests being served (bounded by `max_sessions`).
    ephemeral: AtomicUsize,
    /// Places for replays running at once.
    replays: Arc<Semaphore>,
    /// With a cluster: this node's id and its relay to the other nodes.
    node: Option<(Arc<str>, Relay)>,
    /// A node of a cluster leaving ([`StreamableHttpService::close_all`]): its sessions are
    /// the other nodes' to take over, and it answers [`cluster::leaving`] instead of serving.
    leaving: AtomicBool,
}

impl fmt::Debug for StreamableHttpService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamableHttpService")
            .field("config", &self.inner.config)
            .field("sessions", &self.session_count())
            .finish()
    }
}

/// What a POST body holds, read structurally (envelopes only: `params` are never read).
struct Post {
    /// Ids the engine will answer.
    ids: Vec<RequestId>,
    /// The body is a single `initialize` request.
    initialize: bool,
    /// The body is a batch.
    batch: bool,
    /// The engine will answer (requests, or answerable invalid entries).
    answered: bool,
}

impl StreamableHttpService {
    /// A service creating sessions with `factory`.
    pub fn new<F>(factory: F, config: HttpConfig) -> Self
    where
        F: Fn(HttpSessionTransport) -> Result<Peer, String> + Send + Sync + 'static,
    {
        Self::from_factory(Arc::new(factory), config)
    }

    /// A service creating sessions with an already shared factory.
    pub fn from_factory(factory: SessionFactory, config: HttpConfig) -> Self {
        let registry = Arc::new(Registry::new(config.max_sessions.max(1)));
        let replays = Arc::new(Semaphore::new(
            config
                .max_concurrent_replays
                .clamp(1, Semaphore::MAX_PERMITS),
        ));
        let node = config.cluster.as_ref().map(|c| {
            let id: Arc<str> = Arc::from(c.node_id());
            let relay = Relay::new(&id);
            (id, relay)
        });
        StreamableHttpService {
            inner: Arc::new(Inner {
                node,
                config,
                factory,
                registry,
                reaper: OnceLock::new(),
                ephemeral: AtomicUsize::new(0),
                replays,
                leaving: AtomicBool::new(false),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &HttpConfig {
        &self.inner.config
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner.registry.len()
    }

    /// An `axum::Router` serving this endpoint at [`HttpConfig::path`].
    /// With authorization on, the protected-resource metadata is served beside it
    /// ([`crate::auth`]).
    pub fn router(&self) -> axum::Router {
        let router = axum::Router::new().route_service(&self.inner.config.path, self.clone());
        match &self.inner.config.authorization {
            Some(auth) if auth.metadata_path() != self.inner.config.path => {
                let auth = auth.clone();
                router.route(
                    auth.metadata_path().to_owned().as_str(),
                    axum::routing::get(move || {
                        let auth = auth.clone();
                        async move { auth.metadata_response() }
                    }),
                )
            }
            _ => router,
        }
    }

    /// Ends idle sessions now (the reaper task does this periodically); returns how many ended.
    pub async fn reap_idle(&self) -> usize {
        self.inner
            .registry
            .reap(self.inner.config.idle_timeout)
            .await
    }

    /// Ends every session (for shutdown). A node of a cluster leaves their records and events
    /// in the shared stores: the other nodes take them over. From then on such a node serves
    /// nothing: every request it is still sent, and every request its sessions were serving,
    /// is answered 503 `node_leaving` (with [`cluster::LEAVING`]), never 404 (the session lives on,
    /// on another node); a node relaying to it takes the session over at once.
    pub async fn close_all(&self) {
        let leave = self.inner.node.is_some();
        if leave {
            self.inner.leaving.store(true, Ordering::Release);
        }
        self.inner.registry.close_all(leave).await;
    }

    fn is_leaving(&self) -> bool {
        self.inner.leaving.load(Ordering::Acquire)
    }

    /// Answers one HTTP request.
    pub async fn handle(&self, req: Request<Body>) -> Response<Body> {
        if self.is_leaving() {
            return cluster::leaving();
        }
        let resp = self.answer(req).await;
        // A request that was being served when the node began to leave: its session ended
        // here, not in the cluster.
        if resp.status() == StatusCode::NOT_FOUND && self.is_leaving() {
            return cluster::leaving();
        }
        resp
    }

    async fn answer(&self, req: Request<Body>) -> Response<Body> {
        let cfg = &self.inner.config;
        let uri_host = req.uri().authority().map(|a| a.as_str());
        if let Err(refusal) = security::check(
            req.headers(),
            uri_host,
            cfg.allowed_hosts.as_deref(),
            cfg.allowed_origins.as_deref(),
        ) {
            return reply::forbidden(&refusal);
        }
        let auth = match &cfg.authorization {
            Some(a) if matches!(*req.method(), Method::POST | Method::GET | Method::DELETE) => {
                match a.authenticate(req.uri(), req.headers()).await {
                    Ok(info) => Some(info),
                    Err(resp) => return resp,
                }
            }
            _ => None,
        };
        let req = match self.route_in_cluster(req).await {
            Ok(answer) => return answer,
            Err(req) => req,
        };
        match *req.method() {
            Method::POST => self.post(req, auth).await,
            Method::GET => self.get(req, auth).await,
            Method::DELETE => self.delete(req, auth).await,
            _ => reply::method_not_allowed("GET, POST, DELETE", "method_not_allowed", Some("HT-1")),
        }
    }

    fn ensure_reaper(&self) {
        self.inner.reaper.get_or_init(|| {
            let reg = Arc::downgrade(&self.inner.registry);
            let store = self.inner.config.session_store.clone();
            tokio::spawn(reap_loop(reg, self.inner.config.idle_timeout, store));
        });
    }

    /// With a cluster, a request naming a session this node does not hold goes to the node
    /// serving it ([`crate::cluster`]); `Err` hands the request back to be served here.
    async fn route_in_cluster(&self, req: Request<Body>) -> Result<Response<Body>, Request<Body>> {
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
        cluster::route(cluster.as_ref(), relay, &self.inner.config, &id, req).await
    }

    /// The session named by the request, or the answer to send instead (400, 404). A session
    /// this service does not hold but the session store knows is taken over.
    /// With authorization on, `owner` is the caller's owner key: a session bound to another
    /// subject is answered as unknown (404) and left untouched (`[SEC-SH-6]`).
    async fn session_of(
        &self,
        req_headers: &http::HeaderMap,
        owner: Option<&str>,
    ) -> Result<Arc<Session>, Response<Body>> {
        let Some(id) = headers::session_id(req_headers) else {
            return Err(reply::session_required());
        };
        let version = match headers::protocol_version(req_headers) {
            Ok(v) => v.map(|v| v.as_str().to_owned()),
            Err(v) => return Err(reply::bad_protocol_version(&v)),
        };
        let session = match self.inner.registry.get(id) {
            Some(s) => s,
            None => self.take_over(id, version).await?,
        };
        if session.is_terminated() {
            return Err(reply::session_not_found());
        }
        if owner.is_some() && session.owner.as_deref() != owner {
            tracing::info!("a session was named by another subject than its owner; refused");
            return Err(reply::session_not_found());
        }
        session.touch();
        Ok(session)
    }

    /// Starts a local session for an id the session store knows (another node created it, or
    /// this node dropped its engine): the factory is asked to resume it at the request's
    /// revision with the stored snapshot. 404 when the store does not know the id.
    async fn take_over(
        &self,
        id: &str,
        version: Option<String>,
    ) -> Result<Arc<Session>, Response<Body>> {
        let record = match self.inner.config.session_store.load(id).await {
            Ok(Some(r)) => r,
            Ok(None) => return Err(reply::session_not_found()),
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

    /// A new session (not yet registered) with its engine started by the factory.
    #[allow(clippy::result_large_err)] // the error is the ready answer
    fn start_session(
        &self,
        id: Arc<str>,
        mut origin: Origin,
    ) -> Result<Arc<Session>, Response<Body>> {
        let cfg = &self.inner.config;
        origin.node = self.inner.node.as_ref().map(|(id, _)| id.clone());
        let record = (!origin.ephemeral).then(|| cfg.session_store.clone());
        let (session, transport) = Session::new(
            id,
            cfg.event_store.clone(),
            Arc::downgrade(&self.inner.registry),
            SessionBounds::of(cfg),
            origin,
            record,
        );
        let peer = (self.inner.factory)(transport).map_err(|e| {
            crate::throttle::warn_throttled!(error = %e, "session factory refused a session");
            refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                TRANSPORT_ERROR,
                format!("Service unavailable: {e}"),
                "session_refused",
                None,
            )
        })?;
        session.set_peer(peer);
        Ok(session)
    }

    /// A new session for an `initialize` POST, registered locally; it goes into the session
    /// store once its `initialize` has been answered.
    #[allow(clippy::result_large_err)] // the error is the ready answer
    fn create_session(&self, owner: Option<Arc<str>>) -> Result<Arc<Session>, Response<Body>> {
        if self.inner.registry.len() >= self.inner.registry.max {
            return Err(too_many_sessions());
        }
        let id = new_session_id().map_err(|e| {
            tracing::error!(error = %e, "no random session id");
            internal("no session id could be generated")
        })?;
        let origin = Origin {
            owner,
            ..Origin::default()
        };
        let session = self.start_session(id, origin)?;
        if self.inner.registry.insert(session.clone()).is_err() {
            session.discard();
            return Err(too_many_sessions());
        }
        self.ensure_reaper();
        tracing::debug!(sessions = self.session_count(), "HTTP session created");
        Ok(session)
    }

    async fn post(&self, req: Request<Body>, auth: Option<Arc<AuthInfo>>) -> Response<Body> {
        let cfg = &self.inner.config;
        let (parts, body) = req.into_parts();
        if !headers::post_accept_ok(&parts.headers) {
            return refuse(
                StatusCode::NOT_ACCEPTABLE,
                TRANSPORT_ERROR,
                "Not Acceptable: Accept must list application/json and text/event-stream",
                "bad_accept",
                Some("HT-5"),
            );
        }
        if !headers::content_type_json(&parts.headers) {
            return refuse(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                TRANSPORT_ERROR,
                "Unsupported Media Type: Content-Type must be application/json",
                "bad_content_type",
                None,
            );
        }
        let declared = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > cfg.max_body_bytes as u64) {
            return reply::too_large(cfg.max_body_bytes);
        }
        let read = read_body(body, cfg.max_body_bytes, cfg.connection.body_read_timeout).await;
        let bytes = match read {
            Ok(b) => b,
            Err(BodyError::TooLarge) => return reply::too_large(cfg.max_body_bytes),
            Err(BodyError::TimedOut(limit)) => return reply::body_timeout(limit),
            Err(BodyError::Read) => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    TRANSPORT_ERROR,
                    "Bad Request: the body could not be read",
                    "body_read_failed",
                    None,
                );
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            return reply::error_body(
                StatusCode::BAD_REQUEST,
                None,
                ErrorObject::parse_error("the body is not valid UTF-8"),
            );
        };
        let post = match classify(&text) {
            Ok(p) => p,
            Err(resp) => return resp,
        };
        if let (Some(a), Some(info)) = (&cfg.authorization, &auth)
            && let Err(resp) = a.authorize(info, &text)
        {
            return resp;
        }
        let owner = auth.as_ref().map(|i| Arc::<str>::from(i.owner_key()));
        let attachment = auth.map(|i| i as Attachment);
        let has_session_header = headers::session_id(&parts.headers).is_some();
        if cfg.modern && crate::modern::routes_modern(&parts.headers, has_session_header) {
            return self
                .post_modern(&parts.headers, text, post, attachment)
                .await;
        }
        if cfg.stateless {
            return self
                .post_stateless(&parts.headers, text, post, attachment)
                .await;
        }
        let (session, created) = if post.initialize && !has_session_header {
            match self.create_session(owner) {
                Ok(s) => (s, true),
                Err(resp) => return resp,
            }
        } else {
            match self.session_of(&parts.headers, owner.as_deref()).await {
                Ok(s) => (s, false),
                Err(resp) => return resp,
            }
        };
        let mut resp = self.dispatch(&session, text, post, attachment).await;
        if created {
            // An `initialize` answered with an error opens no session: the client is given no
            // id, and nothing is kept (the session id goes out only with an InitializeResult).
            let refused = resp.extensions().get::<InitializeRefused>().is_some();
            if !resp.status().is_success() || refused {
                session.terminate().await;
            } else if let Err(e) = session.write_record(true).await {
                crate::throttle::warn_throttled!(error = %e, "session not recorded; refused");
                session.terminate().await;
                return unavailable(&e.to_string(), "session_store_failed");
            } else if let Ok(v) = HeaderValue::from_str(&session.id) {
                resp.headers_mut().insert(headers::SESSION_ID, v);
            }
        }
        resp
    }

    /// Stateless mode: the POST is served by a session of its own that starts ready (or, for
    /// `initialize`, is answered by a fresh one) and ends with the answer. No session id is
    /// given or required; there is nothing to resume.
    async fn post_stateless(
        &self,
        req_headers: &http::HeaderMap,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
    ) -> Response<Body> {
        let version = match headers::protocol_version(req_headers) {
            Ok(v) => v.map(|v| v.as_str().to_owned()),
            Err(v) => return reply::bad_protocol_version(&v),
        };
        if !post.answered {
            // Notifications and responses concern no session here: nothing is waiting for them.
            return reply::accepted();
        }
        let max = self.inner.registry.max;
        if self.inner.ephemeral.fetch_add(1, Ordering::AcqRel) >= max {
            self.inner.ephemeral.fetch_sub(1, Ordering::AcqRel);
            return too_many_sessions();
        }
        let _slot = EphemeralSlot(&self.inner.ephemeral);
        let origin = Origin {
            resume: (!post.initialize).then_some(Resume {
                modern: None,
                protocol_version: version,
                snapshot: None,
            }),
            stored: false,
            ephemeral: true,
            stream_base: 0,
            owner: None,
            node: None,
        };
        let session = match self.start_session(Arc::from(""), origin) {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        let resp = self.dispatch(&session, text, post, attachment).await;
        if resp.headers().get(CONTENT_TYPE) != Some(&HeaderValue::from_static("text/event-stream"))
        {
            // Answered (JSON, 202 or an error): the session is done. An SSE answer ends it
            // when its stream ends (the `ConnGuard`).
            session.terminate().await;
        }
        resp
    }

    /// A request of the modern era (see [`crate::modern`]): a connection of its own, no session;
    /// JSON with the status of its error code when the answer comes first, SSE otherwise.
    async fn post_modern(
        &self,
        req_headers: &http::HeaderMap,
        text: String,
        post: Post,
        attachment: Option<Attachment>,
    ) -> Response<Body> {
        if !post.answered {
            // Notifications concern no session in this era (`[D26-54]`).
            return reply::accepted();
        }
        let max = self.inner.registry.max;
        if self.inner.ephemeral.fetch_add(1, Ordering::AcqRel) >= max {
            self.inner.ephemeral.fetch_sub(1, Ordering::AcqRel);
            return too_many_sessions();
        }
        let _slot = EphemeralSlot(&self.inner.ephemeral);
        let version = req_headers
            .get(headers::PROTOCOL_VERSION)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_owned());
        let origin = Origin {
            resume: Some(Resume {
                protocol_version: version,
                snapshot: None,
                modern: Some(crate::modern::mcp_headers(req_headers)),
            }),
            stored: false,
            ephemeral: true,
            stream_base: 0,
            owner: None,
            node: None,
        };
        let session = match self.start_session(Arc::from(""), origin) {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        let registered = match session.routing.lock() {
            Ok(mut r) => r.register(post.ids, false, post.batch),
            Err(_) => Err(RouteError::Closed),
        };
        let Ok(Registration::Sse {
            stream,
            conn,
            mut rx,
        }) = registered
        else {
            session.terminate().await;
            return internal("the request could not be registered");
        };
        if !session.forward(text, attachment).await {
            session.terminate().await;
            return internal("the request could not be handed to the server");
        }
        let Some(first) = rx.rx.recv().await else {
            // Ended without an answer (the server went away).
            session.terminate().await;
            return internal("the server ended the request without an answer");
        };
        rx.took(&first);
        if first.last {
            session.terminate().await;
            let answer = crate::modern::data_of(&first.bytes)
                .unwrap_or_default()
                .to_owned();
            let status = crate::modern::status_for(&answer);
            let mut resp = json_response(answer);
            *resp.status_mut() = status;
            return resp;
        }
        let body = SseBody {
            preface: VecDeque::from([first.bytes.clone()]),
            replay: None,
            live: Some(rx),
            floor: first.seq,
            _guard: None,
            keep_alive: self.inner.config.keep_alive,
            close_at: None,
        };
        let mut resp = self.sse_response(&session, stream, conn, body);
        resp.headers_mut()
            .insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }

    /// Hands the body to the engine and builds the answer: 202, JSON or SSE.
    async fn dispatch(
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
            if !session.forward(text, attachment).await {
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
        if !session.forward(text, attachment).await {
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

    /// The SSE answer carrying `body`, detached from its stream when dropped.
    fn sse_response(
        &self,
        session: &Arc<Session>,
        stream: u64,
        conn: u64,
        mut body: SseBody,
    ) -> Response<Body> {
        body._guard = Some(Box::new(ConnGuard {
            session: Arc::downgrade(session),
            stream,
            conn,
            ephemeral: session.ephemeral.then(|| session.clone()),
        }));
        let mut r = Response::new(body.into_body());
        let h = r.headers_mut();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        h.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        r
    }

    async fn get(&self, req: Request<Body>, auth: Option<Arc<AuthInfo>>) -> Response<Body> {
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
    async fn resume(
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

    /// Resumes a stream that the node serving the session before opened and died with
    /// ([`crate::cluster`]): when its requests were kept and none of them was answered, they
    /// run again here. The client gets the events it missed, then the re-run's, numbered on
    /// after the last stored one, without the progress it had already been told of. `None`:
    /// nothing to run again (the stream is replayed as it stands).
    async fn rerun(
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
        let facts = cluster::StreamFacts::of(&events);
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

    async fn delete(&self, req: Request<Body>, auth: Option<Arc<AuthInfo>>) -> Response<Body> {
        if self.inner.config.stateless {
            return reply::method_not_allowed("POST", "stateless", None);
        }
        if !self.inner.config.allow_delete {
            return reply::method_not_allowed("GET, POST", "delete_disabled", None);
        }
        if let (Some(a), Some(info)) = (&self.inner.config.authorization, &auth)
            && let Err(resp) = a.authorize_default(info)
        {
            return resp;
        }
        let owner = auth.map(|i| i.owner_key());
        let session = match self.session_of(req.headers(), owner.as_deref()).await {
            Ok(s) => s,
            Err(resp) => return resp,
        };
        session.terminate().await;
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::OK;
        r
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

/// Reads a POST body structurally: which ids will be answered, whether it is `initialize`
/// (the method name only; `params` stay unread).
/// Bodies the engine would answer without an id, or not at all, are refused here (400).
#[allow(clippy::result_large_err)] // the error is the ready answer
fn classify(text: &str) -> Result<Post, Response<Body>> {
    let bad = |e: &ErrorObject| reply::error_body(StatusCode::BAD_REQUEST, None, e.clone());
    let single = |ids: Vec<RequestId>, initialize: bool| Post {
        answered: !ids.is_empty(),
        ids,
        initialize,
        batch: false,
    };
    match Frame::decode(text) {
        Err(e) => Err(bad(&e.error)),
        Ok(Frame::Single(Err(e))) => match (&e.id, e.answerable) {
            (Some(id), true) => Ok(single(vec![id.clone()], false)),
            _ => Err(bad(&e.error)),
        },
        Ok(Frame::Single(Ok(Message::Request(r)))) => {
            let initialize = r.method == methods::INITIALIZE;
            Ok(single(vec![r.id], initialize))
        }
        Ok(Frame::Single(Ok(_))) => Ok(single(Vec::new(), false)),
        Ok(Frame::Batch(items)) => {
            let mut post = Post {
                ids: Vec::new(),
                initialize: false,
                batch: true,
                answered: false,
            };
            for item in items {
                match item {
                    Ok(Message::Request(r)) if r.method == methods::INITIALIZE => {
                        return Err(bad(&ErrorObject::invalid_request(
                            "initialize must not be sent in a batch",
                            "initialize_in_batch",
                        )));
                    }
                    Ok(Message::Request(r)) => {
                        post.ids.push(r.id);
                        post.answered = true;
                    }
                    Err(e) if e.answerable => {
                        post.ids.extend(e.id);
                        post.answered = true;
                    }
                    _ => {}
                }
            }
            if let Some(id) = repeated_id(&post.ids) {
                let err = ErrorObject::invalid_request(
                    format!(
                        "request id {} appears more than once in the batch",
                        echo(&id.to_string())
                    ),
                    "duplicate_request_id",
                );
                return Err(reply::error_body(StatusCode::BAD_REQUEST, Some(id), err));
            }
            Ok(post)
        }
    }
}

/// The first id that appears twice among `ids`, found in one pass (a batch may hold thousands).
fn repeated_id(ids: &[RequestId]) -> Option<RequestId> {
    if ids.len() < 2 {
        return None;
    }
    let mut seen = HashSet::with_capacity(ids.len());
    ids.iter().find(|id| !seen.insert(*id)).cloned()
}

/// Releases a stateless request's place in the bound.
struct EphemeralSlot<'a>(&'a AtomicUsize);

impl Drop for EphemeralSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
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

fn too_many_sessions() -> Response<Body> {
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        "Service unavailable: too many sessions",
        "too_many_sessions",
        None,
    )
}

fn unavailable(why: &str, reason: &'static str) -> Response<Body> {
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        TRANSPORT_ERROR,
        format!("Service unavailable: {why}"),
        reason,
        None,
    )
}

/// Marks the answer to an `initialize` that is a JSON-RPC error (for the POST creating the
/// session: no session is opened).
#[derive(Clone, Copy)]
struct InitializeRefused;

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

fn json_response(text: String) -> Response<Body> {
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(CONTENT_TYPE, JSON);
    r
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

fn internal(message: &str) -> Response<Body> {
    reply::error_body(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, message),
    )
}

impl<B> tower::Service<Request<B>> for StreamableHttpService
where
    B: axum::body::HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        let req = req.map(Body::new);
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

/// Serves `service` on `listener` until the process ends, within the per-connection bounds of
/// its configuration ([`HttpConfig::connection`]: connections at once, header, keep-alive,
/// body and write timeouts); `TCP_NODELAY` is set on every accepted socket. Bind the listener
/// to loopback (`127.0.0.1`) for a local server.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve(listener: TcpListener, service: StreamableHttpService) -> std::io::Result<()> {
    serve_with_shutdown(listener, service, std::future::pending()).await
}

/// Like [`serve`], until `signal` resolves; then every session is ended, no connection is
/// accepted, and this returns once the requests in flight have been answered.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve_with_shutdown<F>(
    listener: TcpListener,
    service: StreamableHttpService,
    signal: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    let router = service.router();
    // Open SSE streams would hold a graceful shutdown forever: end the sessions first.
    let closing = service.clone();
    let signal = async move {
        signal.await;
        closing.close_all().await;
    };
    let limits = service.config().connection.clone();
    let result = listener::run(listener, router, limits, signal).await;
    service.close_all().await;
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_repeated_id_is_found_in_one_pass() {
        let ids: Vec<RequestId> = (0..20_000).map(RequestId::int).collect();
        assert_eq!(repeated_id(&ids), None);
        let mut again = ids.clone();
        again.push(RequestId::int(19_999));
        assert_eq!(repeated_id(&again), Some(RequestId::int(19_999)));
        assert_eq!(repeated_id(&[RequestId::int(1)]), None);
    }
}
