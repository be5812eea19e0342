//! Client side: [`Client`] (who the client is, what it offers, and the handlers it installs for
//! the server's requests) and [`Client::connect`], the handshake that yields a
//! [`ClientSession`].

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use switchboard_jsonrpc::{
    Peer, RequestContext, RequestError, RequestOptions, SessionConfig, Transport,
};
use switchboard_types::capabilities::ClientCapabilities;
use switchboard_types::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use switchboard_types::error::{echo, echo_value};
use switchboard_types::lifecycle::{Implementation, InitializeRequestParams, InitializeResult};
use switchboard_types::logging::{LoggingLevel, LoggingMessageNotificationParams};
use switchboard_types::modern::DiscoverResult;
use switchboard_types::roots::Root;
use switchboard_types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use switchboard_types::{ErrorCode, ErrorObject, ProtocolVersion};

use crate::era::{DEFAULT_PROBE_TIMEOUT, Era, EraMode};
use crate::error::ClientError;
use crate::exchange::DEFAULT_MAX_INPUT_ROUNDS;
use crate::handlers::{ElicitationModes, Handlers, boxed};
use crate::listen::{DEFAULT_LISTEN_BUFFER, DEFAULT_MAX_LISTENS, Listens};
use crate::probe::{self, Probe, probe};
use crate::router::{NotificationRoute, RequestRoute, Router, builtin_router, task_routes};
use crate::serve_task::{self, ClientTasks};
use crate::service::ClientService;
use crate::session::ClientSession;
pub use crate::session::Negotiated;
use crate::state::{ClientState, Phase, SessionOptions};
use crate::subscription::DEFAULT_MAX_SUBSCRIPTIONS;
use switchboard_jsonrpc::RouteError;
use switchboard_jsonrpc::{typed_notification, typed_request};
use switchboard_tasks::{InMemoryTaskStore, TaskStore};
use switchboard_types::catalogue::{
    Initialize, Initialized, Method, NotificationMethod, RequestMethod,
};

/// Default bound on pages followed by a list-all helper.
pub(crate) const DEFAULT_MAX_PAGES: usize = 1000;

/// An MCP client's identity, offer and handlers. Cheap to clone; one `Client` can
/// [`connect`](Client::connect) any number of sessions, which share its handlers.
#[derive(Clone)]
pub struct Client {
    info: Implementation,
    capabilities: ClientCapabilities,
    offer: ProtocolVersion,
    supported: Vec<ProtocolVersion>,
    config: SessionConfig,
    layers: switchboard_jsonrpc::Layers,
    max_pages: usize,
    max_subscriptions: usize,
    auto_refresh: bool,
    era_mode: EraMode,
    probe_timeout: Duration,
    max_input_rounds: usize,
    tasks_extension: bool,
    /// Whether the MCP Apps extension is declared ([`ClientBuilder::apps`]).
    apps: bool,
    max_listens: usize,
    listen_buffer: usize,
    log_level: Option<LoggingLevel>,
    handlers: Arc<Handlers>,
    router: Arc<Router>,
    /// The first route that could not be added; [`Client::connect`] reports it.
    route_error: Option<RouteError>,
    /// Where the server's task-augmented requests run, when enabled.
    tasks: Option<Arc<ClientTasks>>,
}

/// Builds a [`Client`].
///
/// Installing a handler declares its capability (`sampling`, `elicitation`, `roots` with
/// `listChanged`, `[CP-2]`); a capability given explicitly with [`capabilities`] wins over the
/// one a handler would declare.
///
/// [`capabilities`]: ClientBuilder::capabilities
#[derive(Debug)]
#[must_use]
pub struct ClientBuilder {
    client: Client,
    handlers: Handlers,
    router: Router,
    /// Whether the server's sampling and elicitation may run as tasks, and where they are kept.
    tasks: Option<Option<Arc<dyn TaskStore>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("info", &self.info)
            .field("capabilities", &self.capabilities)
            .field("offer", &self.offer)
            .field("handlers", &self.handlers)
            .field("router", &self.router)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The capabilities to declare explicitly. Members left `None` are filled in by the
    /// installed handlers.
    pub fn capabilities(mut self, caps: ClientCapabilities) -> Self {
        self.client.capabilities = caps;
        self
    }

    /// The revision to offer in `initialize` (default: the latest).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.client.offer = v;
        self
    }

    /// The revisions this client accepts from the server (default: the four stateful ones).
    pub fn supported_versions(mut self, vs: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.client.supported = vs.into_iter().collect();
        self
    }

    /// The engine configuration (bounds, default timeout, frame hook).
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.client.config = config;
        self
    }

    /// Adds middleware around every request this client sends and every request and
    /// notification it handles, inside the layers already added (the first added sees a
    /// request first). See [`Layer`](switchboard_jsonrpc::Layer).
    pub fn layer(self, layer: impl switchboard_jsonrpc::Layer) -> Self {
        self.layer_for(switchboard_jsonrpc::Scope::All, layer)
    }

    /// Adds middleware around the messages of `scope` only (one method, one primitive, one
    /// tool, prompt or resource).
    pub fn layer_for(
        mut self,
        scope: switchboard_jsonrpc::Scope,
        layer: impl switchboard_jsonrpc::Layer,
    ) -> Self {
        self.client.layers = std::mem::take(&mut self.client.layers).layer_for(scope, layer);
        self
    }

    /// Bounds the pages a list-all helper follows (default 1000); a listing
    /// that goes on longer fails with [`ClientError::TooManyPages`].
    pub fn max_pages(mut self, n: usize) -> Self {
        self.client.max_pages = n.max(1);
        self
    }

    /// Bounds the resource subscriptions of one session (default
    /// 1024); one more fails with [`ClientError::TooManySubscriptions`].
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.client.max_subscriptions = n;
        self
    }

    /// Re-lists a cached list in the background when the server says it changed (default off).
    /// Only lists that have been listed before are refreshed.
    pub fn auto_refresh(mut self, on: bool) -> Self {
        self.client.auto_refresh = on;
        self
    }

    /// How the era of a connection is chosen (default [`EraMode::Auto`]: probe with
    /// `server/discover`, fall back to `initialize`). Use [`EraMode::Legacy`] to speak to a
    /// 2025-era server exactly as before (no probe frame).
    pub fn era(mut self, mode: EraMode) -> Self {
        self.client.era_mode = mode;
        self
    }

    /// How long [`EraMode::Auto`] waits for the answer to its `server/discover` probe before
    /// falling back to `initialize` (default 5 s).
    pub fn probe_timeout(mut self, t: Duration) -> Self {
        self.client.probe_timeout = t;
        self
    }

    /// Bounds the input-required rounds of one modern call (default
    /// 10); past it the call fails with
    /// [`ClientError::TooManyInputRounds`].
    pub fn max_input_rounds(mut self, n: usize) -> Self {
        self.client.max_input_rounds = n;
        self
    }

    /// Declares the tasks extension of revision 2026-07-28 (`io.modelcontextprotocol/tasks`)
    /// on every modern request: the server may then answer a `tools/call` with a task, which
    /// the call follows to its end (polling `tasks/get`, answering the task's input requests
    /// with `tasks/update`, `tasks/cancel` when the caller cancels) and returns the tool's
    /// result as from any call. No effect on a 2025 session (its tasks are
    /// [`ClientSession::start_tool_task`](crate::ClientSession::start_tool_task)).
    pub fn tasks_extension(mut self) -> Self {
        self.client.tasks_extension = true;
        self
    }

    /// Declares the MCP Apps extension (`io.modelcontextprotocol/ui`, with the MIME type
    /// `text/html;profile=mcp-app`) in both eras: the server then lists its tools with their
    /// links to views and its app-only tools, which a host without the extension never sees.
    /// Read a view with [`ClientSession::read_app`](crate::ClientSession::read_app).
    pub fn apps(mut self) -> Self {
        self.client.apps = true;
        self
    }

    /// Bounds the listen streams one session holds open (default 16).
    pub fn max_listens(mut self, n: usize) -> Self {
        self.client.max_listens = n;
        self
    }

    /// Bounds the events waiting in one listen stream (default 64);
    /// past it an event is dropped (logged at debug level).
    pub fn listen_buffer(mut self, n: usize) -> Self {
        self.client.listen_buffer = n.max(1);
        self
    }

    /// The log level every modern request asks for (default none: no log lines, `[D26-84]`).
    pub fn log_level(mut self, level: Option<LoggingLevel>) -> Self {
        self.client.log_level = level;
        self
    }

    /// Answers `sampling/createMessage`; declares `sampling`. Requests with `tools` or
    /// `toolChoice` reach the handler only if `sampling.tools` is declared explicitly (`[CP-5]`).
    pub fn sampling<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.sampling = Some(boxed(handler));
        self
    }

    /// Answers `elicitation/create`; declares `elicitation` (form mode only unless
    /// [`elicitation_modes`](ClientBuilder::elicitation_modes) says otherwise). A request in a
    /// mode not declared is answered -32602 without reaching the handler (`[EL-4]`).
    pub fn elicitation<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.handlers.elicitation = Some(boxed(handler));
        self
    }

    /// Which elicitation modes the elicitation handler declares (default: form only). URL mode
    /// exists from 2025-11-25. At least one mode is declared (`[CP-4]`): `(false, false)` means
    /// form.
    pub fn elicitation_modes(mut self, form: bool, url: bool) -> Self {
        self.handlers.elicitation_modes = ElicitationModes {
            form: form || !url,
            url,
        };
        self
    }

    /// Answers `roots/list` with `roots` (each a `file://` URI, `[RO-1]`); declares
    /// `roots.listChanged`, and [`ClientSession::set_roots`] changes the list.
    pub fn roots(mut self, roots: impl IntoIterator<Item = Root>) -> Self {
        self.handlers.roots = Some(roots.into_iter().collect());
        self
    }

    /// Answers `roots/list` from `provider`; declares `roots.listChanged`. Call
    /// [`ClientSession::notify_roots_changed`] when its answer changes (`[RO-2]`).
    pub fn roots_provider<F, Fut>(mut self, provider: F) -> Self
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<Root>, ErrorObject>> + Send + 'static,
    {
        self.handlers.roots_provider = Some(Arc::new(move |cx| Box::pin(provider(cx))));
        self
    }

    /// Receives the server's log lines (`notifications/message`). Runs on the session's
    /// notification path: it should return quickly.
    pub fn on_log(
        mut self,
        f: impl Fn(LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_log = Some(Arc::new(f));
        self
    }

    /// Receives `notifications/elicitation/complete` for URL elicitations this session knows
    /// (accepted URL-mode requests, and those named by a −32042 error); others are ignored
    /// (`[EL-9]`).
    pub fn on_elicitation_complete(
        mut self,
        f: impl Fn(ElicitationCompleteNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.handlers.on_elicitation_complete = Some(Arc::new(f));
        self
    }

    /// Answers the server's request method `M` with `handler`: an extension method
    /// (`acme/confirm`) or a catalogue method the client does not answer itself (the tasks
    /// methods). Params are parsed into `M::Params` before the handler runs (-32602 when they do
    /// not parse; absent params read as `{}`); the result is serialised after. A catalogue
    /// method still needs its capability declared ([`capabilities`](ClientBuilder::capabilities)).
    ///
    /// A method routed twice, or one a client never receives, makes [`Client::connect`] fail
    /// with [`ClientError::Route`] before anything is sent.
    pub fn request<M, F, Fut>(mut self, handler: F) -> Self
    where
        M: RequestMethod,
        F: Fn(M::Params, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, ErrorObject>> + Send + 'static,
    {
        let route = RequestRoute::User(typed_request::<M, RequestContext, F, Fut>(handler));
        if let Err(e) = self.router.add_request(M::NAME, route) {
            self.client.route_error.get_or_insert(e);
        }
        self
    }

    /// Takes the server's notification method `N` with `handler`, inline and in frame order once
    /// the handshake is complete. Params that do not parse are logged and dropped; a panic in
    /// the handler is caught and logged.
    ///
    /// A method routed twice, one a client never receives, or one the client takes itself (list
    /// changes, resource updates, log lines: see [`on_log`](ClientBuilder::on_log) and the
    /// session's waiters) makes [`Client::connect`] fail with [`ClientError::Route`].
    pub fn notification<N, F>(mut self, handler: F) -> Self
    where
        N: NotificationMethod,
        F: Fn(N::Params, &ClientSession) + Send + Sync + 'static,
    {
        let route = NotificationRoute::User(typed_notification::<N, ClientSession, F>(handler));
        if let Err(e) = self.router.add_notification(N::NAME, route) {
            self.client.route_error.get_or_insert(e);
        }
        self
    }

    /// Lets the server run sampling and elicitation as tasks (2025-11-25): declares `tasks`
    /// (`list`, `cancel`, and `requests.sampling.createMessage` / `requests.elicitation.create`
    /// for the handlers installed) unless [`capabilities`](ClientBuilder::capabilities) gives
    /// `tasks` explicitly, and answers `tasks/get`, `tasks/result`, `tasks/list` and
    /// `tasks/cancel` itself (routing one of them with [`request`](ClientBuilder::request)
    /// as well is a route error). A task-augmented request is answered with its task at once
    /// and the handler runs in the background; the tasks of a session stop when it closes.
    pub fn enable_tasks(mut self) -> Self {
        self.tasks.get_or_insert(None);
        self
    }

    /// Where the server's tasks are kept (default: an `InMemoryTaskStore` with its default
    /// bounds, shared by the client's sessions); enables tasks as
    /// [`enable_tasks`](ClientBuilder::enable_tasks) does.
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.tasks = Some(Some(store));
        self
    }

    /// Builds the client.
    pub fn build(mut self) -> Client {
        if let Some(store) = self.tasks.take() {
            let store = store.unwrap_or_else(|| Arc::new(InMemoryTaskStore::default()));
            self.client.tasks = Some(ClientTasks::new(store));
            for (method, f) in task_routes() {
                if let Err(e) = self.router.add_request(method, RequestRoute::Builtin(f)) {
                    self.client.route_error.get_or_insert(e);
                }
            }
        }
        Client {
            handlers: Arc::new(self.handlers),
            router: Arc::new(self.router),
            ..self.client
        }
    }
}

impl Client {
    /// Starts building a client that calls itself `info`.
    pub fn builder(info: Implementation) -> ClientBuilder {
        ClientBuilder {
            client: Client {
                info,
                capabilities: ClientCapabilities::default(),
                offer: ProtocolVersion::LATEST,
                supported: ProtocolVersion::SUPPORTED.to_vec(),
                config: SessionConfig::default().with_name("client"),
                layers: switchboard_jsonrpc::Layers::new(),
                max_pages: DEFAULT_MAX_PAGES,
                max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
                auto_refresh: false,
                era_mode: EraMode::default(),
                probe_timeout: DEFAULT_PROBE_TIMEOUT,
                max_input_rounds: DEFAULT_MAX_INPUT_ROUNDS,
                tasks_extension: false,
                apps: false,
                max_listens: DEFAULT_MAX_LISTENS,
                listen_buffer: DEFAULT_LISTEN_BUFFER,
                log_level: None,
                handlers: Arc::default(),
                router: Arc::new(builtin_router()),
                route_error: None,
                tasks: None,
            },
            handlers: Handlers::default(),
            router: builtin_router(),
            tasks: None,
        }
    }

    /// The capabilities this client declares: the explicit ones, completed by the handlers.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = self.handlers.effective_capabilities(&self.capabilities);
        if self.apps {
            crate::apps::declare(&mut caps);
        }
        if self.tasks.is_some() {
            serve_task::declare(
                &mut caps,
                self.handlers.sampling.is_some(),
                self.handlers.elicitation.is_some(),
            );
        }
        caps
    }

    /// Connects on `transport` and settles the era ([`ClientBuilder::era`]): a modern
    /// connection starts with `server/discover`; a legacy one performs the handshake
    /// (`initialize`, version check, `notifications/initialized`). Must be called inside a Tokio
    /// runtime.
    ///
    /// # Errors
    /// [`ClientError::InvalidRoot`] when a root given to [`ClientBuilder::roots`] is not a
    /// `file://` URI or has a `..` segment (nothing is sent); [`ClientError::UnsupportedVersion`] when the server chose
    /// a revision this client does not support (the session is closed, `[LC-9]`);
    /// [`ClientError::Handshake`] when the server refused `initialize`;
    /// [`ClientError::Discover`] when a pinned or recognised modern server cannot be spoken to;
    /// a request error.
    pub async fn connect<T: Transport>(&self, transport: T) -> Result<ClientSession, ClientError> {
        if let Some(e) = &self.route_error {
            return Err(ClientError::Route(e.clone()));
        }
        if let Some(roots) = &self.handlers.roots {
            crate::session::check_roots(roots)?;
        }
        let capabilities = self.capabilities();
        let state = Arc::new(ClientState::new(
            capabilities.clone(),
            self.handlers.clone(),
            SessionOptions {
                max_pages: self.max_pages,
                auto_refresh: self.auto_refresh,
                max_input_rounds: self.max_input_rounds,
                tasks_extension: self.tasks_extension,
            },
            self.max_subscriptions,
            self.tasks.clone(),
            self.info.clone(),
            Listens::new(self.max_listens, self.listen_buffer),
        ));
        if let Ok(mut s) = state.shared.lock() {
            s.log_level = self.log_level;
        }
        let service = Arc::new(ClientService {
            state: state.clone(),
            router: self.router.clone(),
            session: OnceLock::new(),
        });
        let peer = switchboard_jsonrpc::spawn_layered(
            transport,
            service.clone(),
            self.config.clone(),
            &self.layers,
        );
        let probed = match self.era_mode {
            EraMode::Legacy => Ok(Probe::Legacy),
            EraMode::Auto => {
                let first = ProtocolVersion::MODERN[0];
                probe(&peer, &state, first, true, self.probe_timeout).await
            }
            EraMode::Pin(v) if v.is_modern() => {
                let timeout = self.config.request_timeout.unwrap_or(self.probe_timeout);
                probe(&peer, &state, v, false, timeout).await
            }
            EraMode::Pin(v) => Err(ClientError::Discover(format!(
                "{v} is not a modern revision; pin one of {:?}",
                ProtocolVersion::MODERN.map(ProtocolVersion::as_str)
            ))),
        }
        .inspect_err(|_| peer.close())?;
        if let Probe::Modern { version, result } = probed {
            return modern_session(&service, peer, state, version, *result);
        }
        let params = InitializeRequestParams::new(self.offer, capabilities, self.info.clone());
        let result: InitializeResult = match peer
            .call(Initialize::NAME, Some(&params), RequestOptions::default())
            .await
        {
            Ok(r) => r,
            // The probe's answer came too late: a dual-era server took the connection as modern
            // and refuses the handshake naming its modern revisions. The server is modern after
            // all: discover again at one of them, without falling back.
            Err(RequestError::Rejected(e))
                if self.era_mode == EraMode::Auto
                    && e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
            {
                let offered = probe::supported_of(&e);
                let Some(v) = probe::mutual(&offered) else {
                    peer.close();
                    return Err(ClientError::Handshake(format!(
                        "server refused initialize: {}",
                        e.message
                    )));
                };
                let timeout = self.config.request_timeout.unwrap_or(self.probe_timeout);
                return match probe(&peer, &state, v, false, timeout).await {
                    Ok(Probe::Modern { version, result }) => {
                        modern_session(&service, peer, state, version, *result)
                    }
                    Ok(Probe::Legacy) => {
                        peer.close();
                        Err(ClientError::Discover("no modern answer after all".into()))
                    }
                    Err(e) => {
                        peer.close();
                        Err(e)
                    }
                };
            }
            Err(RequestError::Rejected(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                peer.close();
                return Err(ClientError::Handshake(format!(
                    "server refused initialize: {}{}",
                    echo(&e.message),
                    e.data
                        .map(|d| format!(" ({})", echo_value(&d)))
                        .unwrap_or_default()
                )));
            }
            Err(e) => {
                peer.close();
                return Err(e.into());
            }
        };
        let version = match ProtocolVersion::parse(&result.protocol_version) {
            Some(v) if self.supported.contains(&v) => v,
            _ => {
                peer.close();
                let supported = self
                    .supported
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(ClientError::UnsupportedVersion {
                    chosen: result.protocol_version,
                    supported,
                });
            }
        };
        {
            let mut s = state
                .shared
                .lock()
                .map_err(|_| ClientError::NotReady("client state poisoned"))?;
            if s.phase == Phase::Closed {
                return Err(ClientError::NotReady("session closed during the handshake"));
            }
            s.version = Some(version);
            s.server_caps = Some(result.capabilities.clone());
            s.phase = Phase::Ready;
        }
        let negotiated = Negotiated {
            protocol_version: version,
            capabilities: result.capabilities,
            server_info: result.server_info,
            instructions: result.instructions,
            era: Era::Legacy,
            supported_versions: Vec::new(),
        };
        let session = ClientSession::new(peer.clone(), state, negotiated);
        let _ = service.session.set(session.clone());
        peer.notify::<()>(Initialized::NAME, None).await?;
        Ok(session)
    }
}

/// Settles a modern connection from its discover result.
fn modern_session(
    service: &ClientService,
    peer: Peer,
    state: Arc<ClientState>,
    version: ProtocolVersion,
    result: DiscoverResult,
) -> Result<ClientSession, ClientError> {
    let server_info = result
        .server_info()
        .unwrap_or_else(|| Implementation::new("", ""));
    {
        let mut s = state
            .shared
            .lock()
            .map_err(|_| ClientError::NotReady("client state poisoned"))?;
        if s.phase == Phase::Closed {
            return Err(ClientError::NotReady("session closed during discovery"));
        }
        s.version = Some(version);
        s.server_caps = Some(result.capabilities.clone());
        s.era = Era::Modern;
        s.phase = Phase::Ready;
    }
    let negotiated = Negotiated {
        protocol_version: version,
        capabilities: result.capabilities,
        server_info,
        instructions: result.instructions,
        era: Era::Modern,
        supported_versions: result.supported_versions,
    };
    let session = ClientSession::new(peer, state, negotiated);
    let _ = service.session.set(session.clone());
    Ok(session)
}
