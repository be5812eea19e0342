//! [`Server`]: what the server offers (info, capabilities, tools, resources, prompts,
//! completions, policies), shared by all its sessions; [`ServerSession`]: one connected client.

use std::fmt;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use switchboard_auth::resource::{ScopePolicy, ScopedItem};

use switchboard_jsonrpc::{SessionConfig, Transport};
use switchboard_types::ErrorObject;
use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::{
    ClientCapabilities, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use switchboard_types::catalogue::{NotificationMethod, RequestMethod};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::meta::EmptyObject;
use switchboard_types::prompts::{GetPromptResult, Prompt};
use switchboard_types::resources::{ReadResourceResult, Resource, ResourceTemplate};
use switchboard_types::tools::{CallToolResult, Tool};

use crate::announce::{Audience, List, OpenSession};
use crate::builtin::{builtin_notifications, builtin_requests};
use crate::completion::{CompletionProvider, CompletionRegistry, CompletionTarget};
use crate::context::Context;
use crate::era::Stateful;
use crate::lifecycle::Strictness;
use crate::modern::hub::TaskHub;
use crate::pagination::{DEFAULT_PAGE_SIZE, Paginator};
use crate::prompt::{PromptGet, PromptRegistry};
use crate::resource::{ResourceError, ResourceRead, ResourceRegistry};
use crate::resume::Resumption;
use crate::router::{NotificationRoute, RequestRoute, Router, builtin_router};
use crate::service::{ServerInner, ServerService};
use crate::session::{
    DEFAULT_MAX_INITIALIZE_BYTES, DEFAULT_MAX_SESSION_TOOLS, DEFAULT_MAX_SUBSCRIPTION_BYTES,
    DEFAULT_MAX_SUBSCRIPTIONS, ServerSession, SessionState,
};
use crate::task::Tasks;
use crate::tool::{
    AllowList, ClientIdentity, RegisteredTool, RegistryError, ToolCall, ToolError, ToolPolicy,
    ToolRegistry,
};
use switchboard_jsonrpc::{RouteError, typed_notification, typed_request};
use switchboard_tasks::{InMemoryTaskStore, TaskStore};
use switchboard_types::capabilities::{
    ServerTaskRequests, ServerTasksCapability, ToolsTaskRequests,
};
use switchboard_types::tools::TaskSupport;

/// How a session starts.
#[allow(clippy::large_enum_variant)] // one per session, moved once
enum Start {
    /// With the client's `initialize` (or, for 2026-07-28, its first request).
    Fresh,
    /// Ready: its handshake happened elsewhere.
    Resumed(ProtocolVersion, Option<ClientIdentity>),
    /// Routed to the modern era by its transport, with the request's HTTP headers.
    Modern(Option<crate::modern::HttpFacts>),
}

/// Default bound on concurrent sessions of one server.
pub(crate) const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// A server-level error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A registration failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A resource registration failed.
    #[error(transparent)]
    Resource(#[from] ResourceError),
    /// A method route could not be registered (a duplicate, or a method servers never receive).
    #[error(transparent)]
    Route(#[from] RouteError),
    /// An MCP App view or a tool's link to one could not be registered.
    #[error(transparent)]
    App(#[from] crate::apps::AppError),
    /// The session bound is reached; the new connection is refused.
    #[error("too many sessions (limit {limit})")]
    TooManySessions {
        /// The bound.
        limit: usize,
    },
    /// A session to resume names a revision this server does not serve (the value, cut to
    /// 64 characters).
    #[error("cannot resume a session at revision {0:?}")]
    UnsupportedRevision(String),
}

/// An MCP server: cheap to clone, shared by all its sessions.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.inner.info.name)
            .field("sessions", &self.session_count())
            .finish()
    }
}

/// Builds a [`Server`].
#[must_use]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    capabilities: Option<ServerCapabilities>,
    enable: Enabled,
    versions: Vec<ProtocolVersion>,
    strictness: Strictness,
    tools: ToolRegistry,
    resources: ResourceRegistry,
    prompts: PromptRegistry,
    completions: CompletionRegistry,
    policy: Option<ToolPolicy>,
    router: Router<ServerService>,
    task_store: Option<Arc<dyn TaskStore>>,
    errors: Vec<ServerError>,
    page_size: usize,
    max_sessions: usize,
    max_subscriptions: usize,
    max_subscription_bytes: usize,
    max_session_tools: usize,
    max_initialize_bytes: usize,
    config: SessionConfig,
    layers: switchboard_jsonrpc::Layers,
    modern_versions: Option<Vec<ProtocolVersion>>,
    state_key: Option<[u8; 32]>,
    state_ttl: std::time::Duration,
    cache: switchboard_types::modern::CacheHints,
    max_listeners: usize,
    scopes: ScopePolicy,
    extensions: Vec<(String, serde_json::Value)>,
}

#[derive(Default)]
struct Enabled {
    tools: bool,
    resources: bool,
    prompts: bool,
    logging: bool,
    completions: bool,
    tasks: bool,
}

impl fmt::Debug for ServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerBuilder")
            .field("info", &self.info.name)
            .finish()
    }
}

impl ServerBuilder {
    /// Sets `instructions`, returned by `initialize`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// Replaces the capabilities derived from what is registered.
    pub fn capabilities(mut self, caps: ServerCapabilities) -> Self {
        self.capabilities = Some(caps);
        self
    }

    /// Declares the extension `id` with its settings object (`{}` for none) under
    /// `capabilities.extensions`, in both eras (`initialize` and `server/discover`), whether the
    /// capabilities are derived or set with [`ServerBuilder::capabilities`]. The extension's
    /// methods are routed with [`ServerBuilder::request`]. Declared twice, the last settings win.
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        let id = id.into();
        self.extensions.retain(|(k, _)| *k != id);
        self.extensions.push((id, settings));
        self
    }

    /// Declares `tools` (with `listChanged`) even when no tool is registered yet.
    pub fn enable_tools(mut self) -> Self {
        self.enable.tools = true;
        self
    }

    /// Declares `resources` (with `subscribe` and `listChanged`) even when none is registered yet.
    pub fn enable_resources(mut self) -> Self {
        self.enable.resources = true;
        self
    }

    /// Declares `prompts` (with `listChanged`) even when none is registered yet.
    pub fn enable_prompts(mut self) -> Self {
        self.enable.prompts = true;
        self
    }

    /// Declares `logging`: the server sends `notifications/message` and serves `logging/setLevel`.
    pub fn enable_logging(mut self) -> Self {
        self.enable.logging = true;
        self
    }

    /// Declares `completions` even when no provider is registered yet.
    pub fn enable_completions(mut self) -> Self {
        self.enable.completions = true;
        self
    }

    /// Declares `tasks` (`list`, `cancel`, `requests.tools.call`: tools may run as tasks,
    /// 2025-11-25) even when no registered tool supports tasks yet.
    pub fn enable_tasks(mut self) -> Self {
        self.enable.tasks = true;
        self
    }

    /// Where tasks are kept (default: an [`InMemoryTaskStore`] with its default bounds).
    pub fn task_store(mut self, store: Arc<dyn TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// The revisions served, in any order (default: all of them: the four stateful revisions
    /// through `initialize`, and 2026-07-28 per request). A list without a modern revision
    /// serves no modern request (they get -32022); one with only modern revisions answers
    /// `initialize` with the newest stateful revision still, as the spec's counter-offer.
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        let all: Vec<ProtocolVersion> = versions.into_iter().collect();
        self.versions = all.iter().copied().filter(|v| v.is_supported()).collect();
        self.modern_versions = Some(all.into_iter().filter(|v| v.is_modern()).collect());
        self
    }

    /// The secret every replica of this server shares: the `requestState` of multi round-trip
    /// requests (2026-07-28, `[D26-38]`) is sealed, and pagination cursors are signed, under
    /// keys derived from it. Every node behind one load balancer must be given the same one
    /// (keep it out of the command line: an environment variable or a file). The default is a
    /// random key per server, so a state or a page-2 cursor is only good on the server, and in
    /// the process, that issued it (issue 25, finding 6).
    pub fn shared_key(mut self, key: [u8; 32]) -> Self {
        self.state_key = Some(key);
        self
    }

    /// How long a sealed `requestState` stays good (default 10 minutes).
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.state_ttl = ttl;
        self
    }

    /// The caching hints put on cacheable 2026-07-28 results whose handler set none (default:
    /// `ttlMs` 0, `cacheScope` private).
    pub fn cache_hints(mut self, hints: switchboard_types::modern::CacheHints) -> Self {
        self.cache = hints;
        self
    }

    /// The bound on `subscriptions/listen` streams open at once (default 1,024).
    pub fn max_listen_streams(mut self, n: usize) -> Self {
        self.max_listeners = n;
        self
    }

    /// How strictly `notifications/initialized` is awaited (default: strict).
    pub fn strictness(mut self, s: Strictness) -> Self {
        self.strictness = s;
        self
    }

    /// Registers a raw-JSON tool: its `inputSchema` is kept verbatim and arguments are validated
    /// against it. A duplicate name or an invalid schema fails [`ServerBuilder::build`].
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        if let Err(e) = RegisteredTool::new(tool, handler).and_then(|t| self.tools.insert(t)) {
            self.errors.push(e.into());
        }
        self
    }

    /// Registers an already-built tool (see [`crate::typed`] for typed tools).
    pub fn registered_tool(mut self, tool: Result<RegisteredTool, RegistryError>) -> Self {
        if let Err(e) = tool.and_then(|t| self.tools.insert(t)) {
            self.errors.push(e.into());
        }
        self
    }

    /// Registers a resource with its reader.
    pub fn resource<F, Fut>(mut self, resource: Resource, reader: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        if let Err(e) = self.resources.insert(resource, reader) {
            self.errors.push(e.into());
        }
        self
    }

    /// Registers an MCP App view ([`AppView`](crate::AppView)) and declares the extension
    /// `io.modelcontextprotocol/ui`: the view is listed and read as a resource, with its
    /// `_meta.ui` on both. A URI that is not a plain `ui://host/path`, or a document over
    /// 2 MiB, fails [`ServerBuilder::build`], as does a tool whose `_meta.ui.resourceUri` names
    /// no registered view.
    pub fn app(mut self, view: crate::AppView) -> Self {
        match crate::apps::into_resource(view) {
            Ok((resource, contents)) => self.resource(resource, move |read| {
                std::future::ready(Ok(contents.read(read.uri)))
            }),
            Err(e) => {
                self.errors.push(e.into());
                self
            }
        }
    }

    /// Registers a resource template (RFC 6570) with its reader.
    pub fn resource_template<F, Fut>(mut self, template: ResourceTemplate, reader: F) -> Self
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        if let Err(e) = self.resources.insert_template(template, reader) {
            self.errors.push(e.into());
        }
        self
    }

    /// Registers a prompt with its handler; required arguments are checked before it runs.
    pub fn prompt<F, Fut>(mut self, prompt: Prompt, handler: F) -> Self
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        if let Err(e) = self.prompts.insert(prompt, handler) {
            self.errors.push(e.into());
        }
        self
    }

    /// Registers a completion provider for `argument` of `target`.
    pub fn completion(
        mut self,
        target: CompletionTarget,
        argument: impl Into<String>,
        provider: CompletionProvider,
    ) -> Self {
        self.completions.insert(target, argument, provider);
        self
    }

    /// Routes the request method `M` to `handler`: an extension method (`acme/echo`) or a
    /// catalogue method the server does not serve itself. Params are parsed into `M::Params`
    /// before the handler runs (-32602 when they do not parse; absent params read as `{}`), and
    /// the result is serialised after. A catalogue method is gated like the built-in ones (its
    /// capability must be declared; before the handshake only `initialize` and `ping` pass).
    ///
    /// A method registered twice, or one a server never receives, fails [`ServerBuilder::build`].
    ///
    /// ```
    /// use serde::{Deserialize, Serialize};
    /// use switchboard_server::Server;
    /// use switchboard_types::catalogue::{Method, RequestMethod};
    /// use switchboard_types::Implementation;
    ///
    /// /// `acme/echo`: returns its text.
    /// struct Echo;
    /// impl Method for Echo {
    ///     const NAME: &'static str = "acme/echo";
    /// }
    /// #[derive(Serialize, Deserialize)]
    /// struct Text {
    ///     text: String,
    /// }
    /// impl RequestMethod for Echo {
    ///     type Params = Text;
    ///     type Result = Text;
    /// }
    ///
    /// let server = Server::builder(Implementation::new("acme", "1.0"))
    ///     .request::<Echo, _, _>(|params: Text, _cx| async move { Ok(params) })
    ///     .build()
    ///     .expect("one route per method");
    /// # let _ = server;
    /// ```
    pub fn request<M, F, Fut>(mut self, handler: F) -> Self
    where
        M: RequestMethod,
        F: Fn(M::Params, Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<M::Result, ErrorObject>> + Send + 'static,
    {
        let route = RequestRoute::User(typed_request::<M, Context, F, Fut>(handler));
        if let Err(e) = self.router.add_request(M::NAME, route) {
            self.errors.push(e.into());
        }
        self
    }

    /// Routes the notification method `N` to `handler`, which runs inline, in frame order, once
    /// the handshake is complete (spawn a task for long work). Params that do not parse into
    /// `N::Params` are logged and dropped; a panic in the handler is caught and logged.
    ///
    /// A method registered twice, or one a server never receives (or takes itself:
    /// `notifications/initialized`, cancellation, progress), fails [`ServerBuilder::build`].
    pub fn notification<N, F>(mut self, handler: F) -> Self
    where
        N: NotificationMethod,
        F: Fn(N::Params, &ServerSession) + Send + Sync + 'static,
    {
        let route = NotificationRoute::User(typed_notification::<N, ServerSession, F>(handler));
        if let Err(e) = self.router.add_notification(N::NAME, route) {
            self.errors.push(e.into());
        }
        self
    }

    /// Every request needs `scopes` when a transport authorizes requests (OAuth 2.1; see
    /// [`Server::scope_policy`]).
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes = std::mem::take(&mut self.scopes).require_default(scopes);
        self
    }

    /// Calls of tool `name` also need `scopes` (403 `insufficient_scope` otherwise, for a
    /// step-up).
    pub fn tool_scopes(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.scopes = std::mem::take(&mut self.scopes).require(ScopedItem::Tool, name, scopes);
        self
    }

    /// Gets of prompt `name` also need `scopes`.
    pub fn prompt_scopes(
        mut self,
        name: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.scopes = std::mem::take(&mut self.scopes).require(ScopedItem::Prompt, name, scopes);
        self
    }

    /// Reads of (and subscriptions to) the resource `uri` also need `scopes`.
    pub fn resource_scopes(
        mut self,
        uri: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.scopes = std::mem::take(&mut self.scopes).require(ScopedItem::Resource, uri, scopes);
        self
    }

    /// Sets the per-session allow-list policy; it sees `clientInfo` and capabilities.
    pub fn tool_policy(
        mut self,
        policy: impl Fn(&ClientIdentity) -> AllowList + Send + Sync + 'static,
    ) -> Self {
        self.policy = Some(Arc::new(policy));
        self
    }

    /// The page size of every list method (default 100).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// Bounds the number of concurrent sessions.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// Bounds resource subscriptions per session.
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.max_subscriptions = n;
        self
    }

    /// Bounds the bytes of the URIs one session is subscribed to (default 256 KiB); a subscription past it is refused with
    /// -32600 (`reason: "subscriptions_too_large"`).
    pub fn max_subscription_bytes(mut self, n: usize) -> Self {
        self.max_subscription_bytes = n;
        self
    }

    /// Bounds tools registered for one session (default 256).
    pub fn max_session_tools(mut self, n: usize) -> Self {
        self.max_session_tools = n;
        self
    }

    /// Bounds the `initialize` params a session accepts, in bytes of JSON text (default
    /// 64 KiB). The client's identity and capabilities are kept
    /// for the session's life; a longer `initialize` is refused with -32602
    /// (`reason: "initialize_too_large"`) and the session stays uninitialized. The same bound
    /// applies to a 2026-07-28 `subscriptions/listen`, whose filter is kept while its stream is
    /// open (`reason: "listen_too_large"`).
    pub fn max_initialize_bytes(mut self, n: usize) -> Self {
        self.max_initialize_bytes = n;
        self
    }

    /// The engine configuration of each session (bounds, timeouts, frame hook).
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds middleware around every request and notification this server handles and every
    /// request it sends, in both eras and over every transport, inside the layers already
    /// added (the first added sees a request first). See [`Layer`](switchboard_jsonrpc::Layer).
    pub fn layer(self, layer: impl switchboard_jsonrpc::Layer) -> Self {
        self.layer_for(switchboard_jsonrpc::Scope::All, layer)
    }

    /// Adds middleware around the messages of `scope` only: one method, one primitive, one
    /// tool (`Scope::tool("add")`), prompt or resource.
    pub fn layer_for(
        mut self,
        scope: switchboard_jsonrpc::Scope,
        layer: impl switchboard_jsonrpc::Layer,
    ) -> Self {
        self.layers = std::mem::take(&mut self.layers).layer_for(scope, layer);
        self
    }

    fn derived_capabilities(&self) -> ServerCapabilities {
        let mut caps = ServerCapabilities::default();
        if self.enable.tools || !self.tools.is_empty() {
            caps.tools = Some(ToolsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if self.enable.resources || !self.resources.is_empty() {
            caps.resources = Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if self.enable.prompts || !self.prompts.is_empty() {
            caps.prompts = Some(PromptsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        if self.enable.logging {
            caps.logging = Some(EmptyObject::default());
        }
        if self.enable.completions || !self.completions.is_empty() {
            caps.completions = Some(EmptyObject::default());
        }
        let task_tools = self
            .tools
            .iter()
            .any(|t| t.tool.task_support() != TaskSupport::Forbidden);
        if self.enable.tasks || task_tools {
            caps.tasks = Some(ServerTasksCapability {
                list: Some(EmptyObject::default()),
                cancel: Some(EmptyObject::default()),
                requests: Some(ServerTaskRequests {
                    tools: Some(ToolsTaskRequests {
                        call: Some(EmptyObject::default()),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        caps
    }

    /// Builds the server.
    ///
    /// # Errors
    /// The first registration error (a duplicate name, an invalid schema or template).
    pub fn build(mut self) -> Result<Server, ServerError> {
        if !self.errors.is_empty() {
            return Err(self.errors.swap_remove(0));
        }
        let views = crate::apps::views(self.resources.resources());
        crate::apps::check_links(&views, self.tools.iter().map(|t| &t.tool))?;
        let mut capabilities = self
            .capabilities
            .take()
            .unwrap_or_else(|| self.derived_capabilities());
        if !views.is_empty() {
            crate::apps::declare(&mut capabilities);
        }
        if !self.extensions.is_empty() {
            let declared = capabilities
                .extra
                .entry("extensions")
                .or_insert_with(|| serde_json::Value::Object(Default::default()));
            if let serde_json::Value::Object(map) = declared {
                for (id, settings) in std::mem::take(&mut self.extensions) {
                    map.insert(id, settings);
                }
            }
        }
        let versions = if self.versions.is_empty() {
            ProtocolVersion::SUPPORTED.to_vec()
        } else {
            self.versions
        };
        let results = Arc::new(crate::modern::finish::ResultMembers::new(
            &self.info, self.cache,
        ));
        let tasks = Tasks::new(
            self.task_store
                .unwrap_or_else(|| Arc::new(InMemoryTaskStore::default())),
        );
        let audience = Arc::new(Audience::new(self.max_listeners));
        let modern_tasks = Arc::new(TaskHub {
            store: tasks.store.clone(),
            work: Default::default(),
            listeners: audience.listeners.clone(),
            results: results.clone(),
        });
        // The schemas registration left for later are compiled off the path of the first
        // answers (`initialize` does not wait for them).
        crate::schema::warm(
            self.tools
                .iter()
                .flat_map(RegisteredTool::pending_schemas)
                .collect(),
        );
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                capabilities,
                versions,
                strictness: self.strictness,
                era: Stateful,
                router: self.router,
                tasks,
                tools: RwLock::new(self.tools),
                resources: RwLock::new(self.resources),
                prompts: RwLock::new(self.prompts),
                completions: RwLock::new(self.completions),
                policy: self.policy,
                paginator: match self.state_key {
                    Some(key) => Paginator::with_key(self.page_size, &key),
                    None => Paginator::new(self.page_size),
                },
                audience,
                max_sessions: self.max_sessions,
                max_subscriptions: self.max_subscriptions,
                max_subscription_bytes: self.max_subscription_bytes,
                max_session_tools: self.max_session_tools,
                max_initialize_bytes: self.max_initialize_bytes,
                config: self.config,
                layers: self.layers,
                modern_versions: self
                    .modern_versions
                    .unwrap_or_else(|| ProtocolVersion::MODERN.to_vec()),
                sealer: crate::modern::seal::Sealer::new(self.state_key, self.state_ttl),
                cache: self.cache,
                results,
                envelopes: Default::default(),
                modern_tasks,
                scopes: self.scopes,
                last_client: Mutex::default(),
            }),
        })
    }
}

/// A handle to a [`Server`] that does not keep it alive: for handlers that change the server
/// they belong to (a tool that adds tools), without a reference cycle.
#[derive(Clone)]
pub struct WeakServer(std::sync::Weak<ServerInner>);

impl fmt::Debug for WeakServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeakServer").finish_non_exhaustive()
    }
}

impl WeakServer {
    /// The server, while it lives.
    pub fn upgrade(&self) -> Option<Server> {
        self.0.upgrade().map(|inner| Server { inner })
    }
}

impl Server {
    /// A handle that does not keep the server alive.
    pub fn downgrade(&self) -> WeakServer {
        WeakServer(Arc::downgrade(&self.inner))
    }

    /// Starts building a server that calls itself `info`.
    pub fn builder(info: Implementation) -> ServerBuilder {
        ServerBuilder {
            info,
            instructions: None,
            capabilities: None,
            enable: Enabled::default(),
            versions: Vec::new(),
            strictness: Strictness::default(),
            tools: ToolRegistry::default(),
            resources: ResourceRegistry::default(),
            prompts: PromptRegistry::default(),
            completions: CompletionRegistry::default(),
            policy: None,
            router: builtin_router(builtin_requests(), builtin_notifications()),
            task_store: None,
            errors: Vec::new(),
            page_size: DEFAULT_PAGE_SIZE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            max_subscription_bytes: DEFAULT_MAX_SUBSCRIPTION_BYTES,
            max_session_tools: DEFAULT_MAX_SESSION_TOOLS,
            max_initialize_bytes: DEFAULT_MAX_INITIALIZE_BYTES,
            config: SessionConfig::default().with_name("server"),
            layers: switchboard_jsonrpc::Layers::new(),
            modern_versions: None,
            state_key: None,
            state_ttl: crate::modern::seal::DEFAULT_STATE_TTL,
            cache: crate::modern::DEFAULT_CACHE_HINTS,
            max_listeners: crate::modern::listen::DEFAULT_MAX_LISTENERS,
            scopes: ScopePolicy::new(),
            extensions: Vec::new(),
        }
    }

    /// The OAuth scopes requests need, as declared on the builder
    /// ([`ServerBuilder::require_scopes`], [`ServerBuilder::tool_scopes`], ...). A transport
    /// that authorizes requests enforces them: Streamable HTTP answers a token without them
    /// with 403 `insufficient_scope` (hand this policy to its `Authorization`).
    pub fn scope_policy(&self) -> &ScopePolicy {
        &self.inner.scopes
    }

    /// The capabilities this server declares.
    pub fn capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// The server's `serverInfo`.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// How many sessions are open.
    pub fn session_count(&self) -> usize {
        self.inner
            .audience
            .sessions
            .lock()
            .map(|s| s.len())
            .unwrap_or(0)
    }

    /// Serves one client on `transport`; the session begins with the client's `initialize`.
    /// Must be called inside a Tokio runtime.
    ///
    /// # Errors
    /// [`ServerError::TooManySessions`] when the session bound is reached.
    pub fn serve<T: Transport>(&self, transport: T) -> Result<ServerSession, ServerError> {
        self.start(transport, Start::Fresh)
    }

    /// Serves one client whose handshake happened elsewhere (see [`Resumption`](crate::Resumption)): the
    /// session starts ready at the revision `resumption` names, with the client its snapshot
    /// describes and the allow-list the policy gives that client. Streamable HTTP calls this
    /// (through the facade's session factory) for a stateless request and for a session taken
    /// over from its session store. Must be called inside a Tokio runtime.
    ///
    /// # Errors
    /// [`ServerError::UnsupportedRevision`] when the revision is not served;
    /// [`ServerError::TooManySessions`] when the session bound is reached.
    pub fn serve_resumed<T: Transport>(
        &self,
        transport: T,
        resumption: &Resumption,
    ) -> Result<ServerSession, ServerError> {
        if let Some(http) = &resumption.modern {
            return self.start(transport, Start::Modern(http.clone()));
        }
        let (version, client) = resumption
            .read()
            .map_err(ServerError::UnsupportedRevision)?;
        self.start(transport, Start::Resumed(version, client))
    }

    fn start<T: Transport>(&self, transport: T, how: Start) -> Result<ServerSession, ServerError> {
        // The map is held from the bound's check to the session's entry: two sessions starting
        // at once cannot both take the last place, and no message of this session is handled
        // before it is in the map (a `resources/updated` sent right after the session's
        // `resources/subscribe` was answered would otherwise find no session to notify while
        // this thread waited for a core). The engine's end (`closed`) takes the map too, so it
        // follows the entry.
        let mut sessions = self
            .inner
            .audience
            .sessions
            .lock()
            .map_err(|_| poisoned())?;
        if sessions.len() >= self.inner.max_sessions {
            return Err(ServerError::TooManySessions {
                limit: self.inner.max_sessions,
            });
        }
        let id = self
            .inner
            .audience
            .next_session
            .fetch_add(1, Ordering::Relaxed);
        let mut state = SessionState::new(id, transport.control());
        let resumed = match how {
            Start::Fresh => None,
            Start::Modern(http) => {
                state = state.modern(http);
                None
            }
            Start::Resumed(version, client) => Some((version, client)),
        };
        let state = Arc::new(state);
        if let Some((version, client)) = resumed {
            self.establish(&state, version, client);
        }
        let service = Arc::new(ServerService::new(self.inner.clone(), state.clone()));
        let peer = switchboard_jsonrpc::spawn_layered(
            transport,
            service,
            self.inner.config.clone(),
            &self.inner.layers,
        );
        let entry = OpenSession {
            peer: peer.downgrade(),
            state: state.clone(),
            runtime: tokio::runtime::Handle::current(),
        };
        sessions.insert(id, entry);
        drop(sessions);
        Ok(ServerSession {
            state,
            peer,
            max_session_tools: self.inner.max_session_tools,
        })
    }

    /// Moves a resumed session to ready: the revision in force, the client (anonymous and
    /// declaring nothing when unknown), and the allow-list the policy gives that client.
    fn establish(
        &self,
        state: &SessionState,
        version: ProtocolVersion,
        client: Option<ClientIdentity>,
    ) {
        let allow = match &self.inner.policy {
            None => AllowList::All,
            Some(policy) => policy(client.as_ref().unwrap_or(&ClientIdentity {
                info: Implementation::new("", ""),
                capabilities: ClientCapabilities::default(),
            })),
        };
        state.establish(version, client.map(|c| self.inner.share_client(c)), allow);
    }

    /// Registers a tool at run time; every ready session is sent `notifications/tools/list_changed`.
    ///
    /// # Errors
    /// A duplicate name or an invalid schema.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F) -> Result<(), ServerError>
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let tool = RegisteredTool::new(tool, handler)?;
        self.inner
            .tools
            .write()
            .map_err(|_| poisoned())?
            .insert(tool)?;
        self.inner.audience.list_changed(List::Tools);
        Ok(())
    }

    /// Holds the run-time list changes' announcements back while the returned guard lives:
    /// when the last guard drops, each list that changed meanwhile (tools, prompts, resources)
    /// is announced once, so that a burst of [`Server::add_tool`]s and removals (a gateway
    /// mirroring an upstream) is one `list_changed` per list, not one per item.
    pub fn hold_list_changes(&self) -> ListChangeHold {
        self.inner.audience.hold();
        ListChangeHold {
            audience: self.inner.audience.clone(),
        }
    }

    /// Removes a tool at run time, notifying sessions as [`Server::add_tool`] does.
    ///
    /// # Errors
    /// No tool has this name.
    pub fn remove_tool(&self, name: &str) -> Result<(), ServerError> {
        self.inner
            .tools
            .write()
            .map_err(|_| poisoned())?
            .remove(name)?;
        self.inner.audience.list_changed(List::Tools);
        Ok(())
    }

    /// Changes the resource registry, then tells every ready session its list changed.
    fn edit_resources<T, E>(
        &self,
        edit: impl FnOnce(&mut crate::resource::ResourceRegistry) -> Result<T, E>,
    ) -> Result<(), ServerError>
    where
        ServerError: From<E>,
    {
        edit(&mut *self.inner.resources.write().map_err(|_| poisoned())?)?;
        self.inner.audience.list_changed(List::Resources);
        Ok(())
    }

    /// Registers a resource at run time; ready sessions get `notifications/resources/list_changed`.
    ///
    /// # Errors
    /// A duplicate URI.
    pub fn add_resource<F, Fut>(&self, resource: Resource, reader: F) -> Result<(), ServerError>
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.edit_resources(|r| r.insert(resource, reader))
    }

    /// Removes a resource at run time, notifying sessions.
    ///
    /// # Errors
    /// No resource has this URI.
    pub fn remove_resource(&self, uri: &str) -> Result<(), ServerError> {
        self.edit_resources(|r| r.remove(uri))
    }

    /// Registers a resource template (RFC 6570) at run time; ready sessions get
    /// `notifications/resources/list_changed`.
    ///
    /// # Errors
    /// A duplicate template, or one that does not parse.
    pub fn add_resource_template<F, Fut>(
        &self,
        template: ResourceTemplate,
        reader: F,
    ) -> Result<(), ServerError>
    where
        F: Fn(ResourceRead) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ReadResourceResult, ErrorObject>> + Send + 'static,
    {
        self.edit_resources(|r| r.insert_template(template, reader))
    }

    /// Removes a resource template at run time, notifying sessions.
    ///
    /// # Errors
    /// No template has this `uriTemplate`.
    pub fn remove_resource_template(&self, uri_template: &str) -> Result<(), ServerError> {
        self.edit_resources(|r| r.remove_template(uri_template))
    }

    /// Registers a prompt at run time; ready sessions get `notifications/prompts/list_changed`.
    ///
    /// # Errors
    /// A duplicate name.
    pub fn add_prompt<F, Fut>(&self, prompt: Prompt, handler: F) -> Result<(), ServerError>
    where
        F: Fn(PromptGet) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ErrorObject>> + Send + 'static,
    {
        self.inner
            .prompts
            .write()
            .map_err(|_| poisoned())?
            .insert(prompt, handler)?;
        self.inner.audience.list_changed(List::Prompts);
        Ok(())
    }

    /// Removes a prompt at run time, notifying sessions.
    ///
    /// # Errors
    /// No prompt has this name.
    pub fn remove_prompt(&self, name: &str) -> Result<(), ServerError> {
        self.inner
            .prompts
            .write()
            .map_err(|_| poisoned())?
            .remove(name)?;
        self.inner.audience.list_changed(List::Prompts);
        Ok(())
    }

    /// Announces that resource `uri` changed, to every subscriber of every era and transport:
    /// `notifications/resources/updated` to each session subscribed to it
    /// (`resources/subscribe`, 2024-11-05 to 2025-11-25) and each `subscriptions/listen` stream
    /// whose filter names it (2026-07-28). Returns how many were reached. A handler announces
    /// the same with [`Context::resource_updated`](crate::Context::resource_updated).
    pub fn resource_updated(&self, uri: &str) -> usize {
        self.inner.audience.resource_updated(uri, None).0
    }

    /// Ends every open `subscriptions/listen` stream (2026-07-28): each listen is answered
    /// with its result, as a server going away should (`[D26-75]`).
    pub fn close_listen_streams(&self) {
        self.inner.audience.listeners.close_all();
    }

    /// How many `subscriptions/listen` streams are open.
    pub fn listen_stream_count(&self) -> usize {
        self.inner.audience.listeners.count()
    }
}

fn poisoned() -> ServerError {
    ServerError::Registry(RegistryError::NotFound {
        kind: "registry",
        name: "poisoned lock".into(),
    })
}

/// The open sessions (for tests and tools that inspect a server).
impl Server {
    /// A handle to every open session.
    pub fn sessions(&self) -> Vec<ServerSession> {
        let Ok(sessions) = self.inner.audience.sessions.lock() else {
            return Vec::new();
        };
        sessions
            .values()
            .filter_map(|e| {
                e.peer.upgrade().map(|peer| ServerSession {
                    state: e.state.clone(),
                    peer,
                    max_session_tools: self.inner.max_session_tools,
                })
            })
            .collect()
    }
}

/// Holds a server's list-change announcements back ([`Server::hold_list_changes`]); dropping
/// it announces what changed once the last hold is gone.
#[must_use = "the changes are announced when the hold drops"]
pub struct ListChangeHold {
    audience: Arc<Audience>,
}

impl std::fmt::Debug for ListChangeHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ListChangeHold")
    }
}

impl Drop for ListChangeHold {
    fn drop(&mut self) {
        self.audience.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d26_29_an_extension_is_declared_over_derived_or_given_capabilities() {
        let id = "io.modelcontextprotocol/skills";
        let derived = Server::builder(Implementation::new("s", "1"))
            .enable_resources()
            .extension(id, serde_json::json!({"directoryRead": false}))
            .extension(id, serde_json::json!({"directoryRead": true}))
            .build()
            .expect("built");
        assert_eq!(
            derived.capabilities().extra["extensions"],
            serde_json::json!({id: {"directoryRead": true}}),
            "declared once, the last settings"
        );
        assert!(derived.capabilities().resources.is_some());
        // Capabilities set by hand keep their own extensions and gain the declared one.
        let mut given = ServerCapabilities::default();
        given
            .extra
            .insert("extensions".into(), serde_json::json!({"acme/x": {}}));
        let server = Server::builder(Implementation::new("s", "1"))
            .capabilities(given)
            .extension(id, serde_json::json!({}))
            .build()
            .expect("built");
        assert_eq!(
            server.capabilities().extra["extensions"],
            serde_json::json!({"acme/x": {}, id: {}})
        );
    }
}
