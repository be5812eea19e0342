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
//!
//! # Layout
//! This module reads a request (checks, authentication, the body, its classification) and hands
//! it to one path; the paths use its helpers and, below them, `classify` and `dispatch`.
//!
//! | module | role |
//! |---|---|
//! | `classify` | a POST body read structurally: ids answered, `initialize`, batch (never `params`) |
//! | `dispatch` | a body handed to its session's engine; the answer as 202, JSON or SSE |
//! | `post_session` | the POST of a session (2025 eras): `initialize` opens one, the rest name theirs |
//! | `post_stateless` | the stateless POST: a session of its own, ended with the answer |
//! | `post_modern` | the 2026-07-28 POST: one request per connection, no session |
//! | `stream` | `GET`: the standalone stream, resumption with `Last-Event-ID` |
//! | `takeover` | with a cluster: relay to the serving node, take-over of a stored session, re-run of a dead node's requests |
//!
//! Modules depend one way: `stream` → `takeover` → `classify`; `post_session`, `post_stateless`
//! → `dispatch` → `classify`; `post_modern` → `classify`.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use axum::body::Body;
use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE};
use http::{HeaderValue, Method, Request, Response, StatusCode};
use switchboard_auth::resource::AuthInfo;
use switchboard_jsonrpc::{Attachment, BoxFuture, Driver, DriverSlot, Peer};
use switchboard_types::{ErrorCode, ErrorObject};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::config::{HttpConfig, SessionBounds};
use crate::headers;
use crate::listener::{self, BodyError, read_body};
use crate::relay::{self, Relay};
use crate::reply::{self, JSON, TRANSPORT_ERROR, refuse};
use crate::security;
use crate::session::{ConnGuard, HttpSessionTransport, Origin, Registry, Session, reap_loop};
use crate::sse::SseBody;

mod classify;
mod dispatch;
mod post_modern;
mod post_session;
mod post_stateless;
mod stream;
mod takeover;

use classify::classify;

/// Creates the engine side of a new session. It starts the role on the transport, ready when
/// [`HttpSessionTransport::resume`] is `Some`: typically
/// `switchboard::server_http::session_factory(&server)` (the facade joins the server role and
/// this crate).
pub type SessionFactory =
    Arc<dyn Fn(HttpSessionTransport) -> Result<Peer, SessionStartError> + Send + Sync>;

/// Why a [`SessionFactory`] started no session. The request that asked for the session is
/// answered 503 with a JSON-RPC error (-32000, reason `session_refused`) whose message is
/// `Service unavailable: ` followed by this error's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionStartError {
    /// The role would not serve the session (for the server role, its `ServerError`: say, a
    /// stored snapshot it cannot resume); its text is the role's error's.
    #[error(transparent)]
    Role(Box<dyn std::error::Error + Send + Sync>),
    /// The process that serves the session could not be started (the stdio bridge's child).
    #[error("cannot start the server: {0}")]
    Spawn(#[source] std::io::Error),
    /// The process started without a piped stdin and stdout.
    #[error("the server's stdin or stdout is missing")]
    MissingPipes,
}

impl SessionStartError {
    /// The role's refusal `error`.
    pub fn role(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        SessionStartError::Role(error.into())
    }
}

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
    /// the other nodes' to take over, and it answers `relay::leaving` instead of serving.
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

impl StreamableHttpService {
    /// A service creating sessions with `factory`.
    pub fn new<F>(factory: F, config: HttpConfig) -> Self
    where
        F: Fn(HttpSessionTransport) -> Result<Peer, SessionStartError> + Send + Sync + 'static,
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
            let relay = Relay::new(&id, config.cluster_secret.clone());
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
    /// ([`crate::Authorization`]).
    pub fn router(&self) -> axum::Router {
        let mut router = axum::Router::new().route_service(&self.inner.config.path, self.clone());
        if let Some(page) = &self.inner.config.metrics
            && page.path != self.inner.config.path
            && page.path.starts_with('/')
        {
            let page = page.clone();
            router = router.route(
                &page.path.clone(),
                axum::routing::get(move || {
                    let page = page.clone();
                    async move {
                        let body = (page.render)();
                        ([(http::header::CONTENT_TYPE, page.content_type)], body)
                    }
                }),
            );
        }
        if let Some(render) = &self.inner.config.server_card {
            router = card_routes(router, &self.inner.config.path, render.clone());
        }
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
    /// is answered 503 `node_leaving` (with `x-switchboard-node-leaving`), never 404 (the session lives on,
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
            return relay::leaving();
        }
        let resp = self.answer(req).await;
        // A request that was being served when the node began to leave: its session ended
        // here, not in the cluster.
        if resp.status() == StatusCode::NOT_FOUND && self.is_leaving() {
            return relay::leaving();
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
            return reply::refused(&refusal);
        }
        if let Some(name) = self.repeated_header(&req) {
            return reply::repeated_header(name);
        }
        // A method the endpoint does not serve is answered here, before anything else: it
        // never reaches authentication, nor the cluster (which would locate, relay or claim
        // the session it names).
        if !matches!(*req.method(), Method::POST | Method::GET | Method::DELETE) {
            return reply::method_not_allowed(
                "GET, POST, DELETE",
                "method_not_allowed",
                Some("HT-1"),
            );
        }
        let auth = match &cfg.authorization {
            Some(a) => {
                let relayed = self
                    .inner
                    .node
                    .as_ref()
                    .is_some_and(|(_, relay)| relay.relayed(&req));
                match a
                    .authenticate(req.method(), req.uri(), req.headers(), relayed)
                    .await
                {
                    Ok(info) => Some(info),
                    Err(resp) => return resp,
                }
            }
            None => None,
        };
        let req = match self.route_in_cluster(req, auth.as_deref()).await {
            Ok(answer) => return answer,
            Err(req) => req,
        };
        let mut resp = match *req.method() {
            Method::POST => self.post(req, auth).await,
            Method::GET => self.get(req, auth).await,
            _ => self.delete(req, auth).await,
        };
        // With DPoP nonces on, every answer hands out the current one (RFC 9449 §9).
        if let Some(n) = cfg.authorization.as_ref().and_then(|a| a.dpop_nonce())
            && let Ok(v) = HeaderValue::from_str(&n)
        {
            resp.headers_mut().insert("dpop-nonce", v);
        }
        resp
    }

    /// The one-value header of the request's era sent more than once (`Mcp-Session-Id`,
    /// `Last-Event-ID`, and `MCP-Protocol-Version` outside a 2026-07-28 POST, whose role
    /// refuses a repeated `Mcp-*` header itself with -32020).
    fn repeated_header(&self, req: &Request<Body>) -> Option<&'static str> {
        let h = req.headers();
        let modern = self.inner.config.modern
            && *req.method() == Method::POST
            && crate::modern::routes_modern(h, headers::session_id(h).is_some());
        let names: &[&'static str] = if modern {
            &[headers::SESSION_ID, headers::LAST_EVENT_ID]
        } else {
            &[
                headers::SESSION_ID,
                headers::LAST_EVENT_ID,
                headers::PROTOCOL_VERSION,
            ]
        };
        security::repeated(h, names)
    }

    fn ensure_reaper(&self) {
        self.inner.reaper.get_or_init(|| {
            let reg = Arc::downgrade(&self.inner.registry);
            let store = self.inner.config.session_store.clone();
            tokio::spawn(reap_loop(reg, self.inner.config.idle_timeout, store));
        });
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
            None => self.take_over(id, version, owner).await?,
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

    /// A new session (not yet registered) with its engine started by the factory.
    #[allow(clippy::result_large_err)] // the error is the ready answer
    fn start_session(&self, id: Arc<str>, origin: Origin) -> Result<Arc<Session>, Response<Body>> {
        let (session, driver) = self.start_session_inline(id, origin)?;
        if let Some(d) = driver {
            // The reader and the writer as one task: the POSTs hand their frames to the engine
            // themselves (`Session::receive`), so the reader is idle but for a take-over's
            // re-run requests.
            tokio::spawn(d);
        }
        Ok(session)
    }

    /// [`Self::start_session`], the engine's [`Driver`] left to the caller to run (`None` when
    /// the factory started no engine on the transport: a relay reads it itself).
    #[allow(clippy::result_large_err)] // the error is the ready answer
    fn start_session_inline(
        &self,
        id: Arc<str>,
        mut origin: Origin,
    ) -> Result<(Arc<Session>, Option<Driver>), Response<Body>> {
        let cfg = &self.inner.config;
        origin.node = self.inner.node.as_ref().map(|(id, _)| id.clone());
        let slot = DriverSlot::new();
        let record = (!origin.ephemeral).then(|| cfg.session_store.clone());
        let (session, transport) = Session::new(
            id,
            cfg.event_store.clone(),
            Arc::downgrade(&self.inner.registry),
            SessionBounds::of(cfg),
            origin,
            record,
            slot.clone(),
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
        let driver = slot.take();
        // The engine reads this transport: a POST may hand it its frames directly.
        session.set_peer(peer, driver.is_some());
        Ok((session, driver))
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
        let attachment = if cfg.forwarded_headers.is_empty() {
            auth.map(|i| i as Attachment)
        } else {
            let forwarded = cfg.forwarded_headers.iter().filter_map(|name| {
                let value = parts.headers.get(name.as_str())?.to_str().ok()?;
                Some((name.as_str(), value))
            });
            Some(Arc::new(switchboard_auth::resource::Arrival::new(auth, forwarded)) as Attachment)
        };
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
        self.post_session(&parts.headers, text, post, attachment, owner)
            .await
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

/// Releases a stateless request's place in the bound.
struct EphemeralSlot<'a>(&'a AtomicUsize);

impl<'a> EphemeralSlot<'a> {
    /// A place among the `max` stateless requests counted by `count`, if one is free.
    fn take(count: &'a AtomicUsize, max: usize) -> Option<Self> {
        if count.fetch_add(1, Ordering::AcqRel) >= max {
            count.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(EphemeralSlot(count))
    }
}

impl Drop for EphemeralSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
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

fn json_response(text: String) -> Response<Body> {
    let mut r = Response::new(Body::from(text));
    r.headers_mut().insert(CONTENT_TYPE, JSON);
    r
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
/// An I/O error of the listener; `InvalidInput` at once for a node of a cluster without a
/// cluster secret ([`HttpConfig::with_cluster_secret`]).
pub async fn serve(listener: TcpListener, service: StreamableHttpService) -> std::io::Result<()> {
    serve_with_shutdown(listener, service, std::future::pending()).await
}

/// Like [`serve`], until `signal` resolves; then every session is ended, no connection is
/// accepted, and this returns once the requests in flight have been answered.
///
/// # Errors
/// An I/O error of the listener; `InvalidInput` at once for a node of a cluster without a
/// cluster secret ([`HttpConfig::with_cluster_secret`]).
pub async fn serve_with_shutdown<F>(
    listener: TcpListener,
    service: StreamableHttpService,
    signal: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    if service.config().cluster.is_some() && service.config().cluster_secret.is_none() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a node of a cluster needs a cluster secret (HttpConfig::with_cluster_secret)",
        ));
    }
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

/// A server card's media type (SEP-2127).
const SERVER_CARD_CONTENT_TYPE: &str = "application/mcp-server-card+json";
/// An AI Catalog's media type.
const AI_CATALOG_CONTENT_TYPE: &str = "application/ai-catalog+json";

/// A card name (`io.github.user/weather`) as an AI Catalog identifier
/// (`urn:air:user.github.io:mcp:weather`: the namespace's domain the right way round).
fn catalog_identifier(name: &str) -> String {
    let (ns, n) = name.split_once('/').unwrap_or(("local", name));
    let publisher: Vec<&str> = ns.split('.').rev().collect();
    format!("urn:air:{}:mcp:{n}", publisher.join("."))
}

/// The server card at `<endpoint>/server-card` (`application/mcp-server-card+json`) and the AI
/// Catalog naming it (`application/ai-catalog+json`) at `/.well-known/ai-catalog.json`, where
/// SEP-2127's draft has hosts publish one, and at `/.well-known/mcp/catalog.json`
/// ([`crate::HttpConfig::with_server_card`]).
fn card_routes(
    router: axum::Router,
    endpoint: &str,
    render: crate::config::ServerCardRender,
) -> axum::Router {
    fn public(content_type: &'static str, value: &serde_json::Value) -> axum::response::Response {
        use axum::response::IntoResponse as _;
        (
            [
                (http::header::CONTENT_TYPE, content_type),
                (http::header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                (http::header::ACCESS_CONTROL_ALLOW_METHODS, "GET"),
                (http::header::ACCESS_CONTROL_ALLOW_HEADERS, "Content-Type"),
            ],
            value.to_string(),
        )
            .into_response()
    }
    let card_path = format!("{}/server-card", endpoint.trim_end_matches('/'));
    let card = render.clone();
    let catalog_path = card_path.clone();
    let catalog = move || {
        let card = render();
        // The card's URL: beside the endpoint its remote names, else its path on this host.
        let url = card["remotes"][0]["url"].as_str().map_or_else(
            || catalog_path.clone(),
            |u| format!("{}/server-card", u.trim_end_matches('/')),
        );
        let name = card["name"].as_str().unwrap_or_default();
        public(
            AI_CATALOG_CONTENT_TYPE,
            &serde_json::json!({
                "specVersion": "1.0",
                "entries": [{
                    "identifier": catalog_identifier(name),
                    "type": SERVER_CARD_CONTENT_TYPE,
                    "url": url,
                }],
            }),
        )
    };
    let again = catalog.clone();
    router
        .route(
            &card_path,
            axum::routing::get(move || {
                let card = card.clone();
                async move { public(SERVER_CARD_CONTENT_TYPE, &card()) }
            }),
        )
        .route(
            "/.well-known/ai-catalog.json",
            axum::routing::get(move || {
                let catalog = catalog.clone();
                async move { catalog() }
            }),
        )
        .route(
            "/.well-known/mcp/catalog.json",
            axum::routing::get(move || {
                let catalog = again.clone();
                async move { catalog() }
            }),
        )
}
