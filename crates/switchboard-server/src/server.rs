//! [`Server`]: what the server offers (info, capabilities, tools, policies), shared by all its
//! sessions; [`ServerSession`]: one connected client.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use switchboard_jsonrpc::{Peer, SessionConfig, Transport, WeakPeer};
use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::{ServerCapabilities, ToolsCapability};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::tools::{CallToolResult, Tool};

use crate::era::{Era, Stateful};
use crate::lifecycle::{LifecycleState, Strictness};
use crate::service::{ServerService, SessionState};
use crate::tool::{
    AllowList, ClientIdentity, RegisteredTool, RegistryError, ToolCall, ToolError, ToolPolicy,
    ToolRegistry,
};

/// Default bound on concurrent sessions of one server.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// A server-level error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// A registration failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The session bound is reached; the new connection is refused.
    #[error("too many sessions (limit {limit})")]
    TooManySessions {
        /// The bound.
        limit: usize,
    },
}

pub(crate) struct SessionEntry {
    pub(crate) peer: WeakPeer,
    pub(crate) state: Arc<SessionState>,
    pub(crate) runtime: tokio::runtime::Handle,
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) strictness: Strictness,
    pub(crate) era: Arc<dyn Era>,
    pub(crate) tools: RwLock<ToolRegistry>,
    pub(crate) policy: Option<ToolPolicy>,
    pub(crate) sessions: Mutex<HashMap<u64, SessionEntry>>,
    pub(crate) next_session: AtomicU64,
    pub(crate) max_sessions: usize,
    pub(crate) config: SessionConfig,
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
    tools_enabled: bool,
    versions: Vec<ProtocolVersion>,
    strictness: Strictness,
    tools: ToolRegistry,
    policy: Option<ToolPolicy>,
    errors: Vec<RegistryError>,
    max_sessions: usize,
    config: SessionConfig,
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

    /// Declares `tools` (with `listChanged`) even when no tool is registered yet.
    pub fn enable_tools(mut self) -> Self {
        self.tools_enabled = true;
        self
    }

    /// The revisions served, in any order (default: all four stateful revisions).
    pub fn versions(mut self, versions: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.versions = versions.into_iter().filter(|v| v.is_supported()).collect();
        self
    }

    /// How strictly `notifications/initialized` is awaited (default: strict).
    pub fn strictness(mut self, s: Strictness) -> Self {
        self.strictness = s;
        self
    }

    /// Registers a tool. A duplicate name fails [`ServerBuilder::build`].
    pub fn tool<F, Fut>(mut self, tool: Tool, handler: F) -> Self
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        if let Err(e) = self.tools.insert(RegisteredTool::new(tool, handler)) {
            self.errors.push(e);
        }
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

    /// Bounds the number of concurrent sessions.
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// The engine configuration of each session (bounds, timeouts, frame hook).
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.config = config;
        self
    }

    /// Builds the server.
    ///
    /// # Errors
    /// The first registration error (a duplicate name).
    pub fn build(self) -> Result<Server, ServerError> {
        if let Some(e) = self.errors.into_iter().next() {
            return Err(e.into());
        }
        let capabilities = self.capabilities.unwrap_or_else(|| {
            let mut caps = ServerCapabilities::default();
            if self.tools_enabled || !self.tools.is_empty() {
                caps.tools = Some(ToolsCapability {
                    list_changed: Some(true),
                    ..Default::default()
                });
            }
            caps
        });
        let versions = if self.versions.is_empty() {
            ProtocolVersion::SUPPORTED.to_vec()
        } else {
            self.versions
        };
        Ok(Server {
            inner: Arc::new(ServerInner {
                info: self.info,
                instructions: self.instructions,
                capabilities,
                versions,
                strictness: self.strictness,
                era: Arc::new(Stateful),
                tools: RwLock::new(self.tools),
                policy: self.policy,
                sessions: Mutex::default(),
                next_session: AtomicU64::new(1),
                max_sessions: self.max_sessions,
                config: self.config,
            }),
        })
    }
}

impl Server {
    /// Starts building a server that calls itself `info`.
    pub fn builder(info: Implementation) -> ServerBuilder {
        ServerBuilder {
            info,
            instructions: None,
            capabilities: None,
            tools_enabled: false,
            versions: Vec::new(),
            strictness: Strictness::default(),
            tools: ToolRegistry::default(),
            policy: None,
            errors: Vec::new(),
            max_sessions: DEFAULT_MAX_SESSIONS,
            config: SessionConfig::default().with_name("server"),
        }
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
        self.inner.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }

    /// Serves one client on `transport`. Must be called inside a Tokio runtime.
    ///
    /// # Errors
    /// [`ServerError::TooManySessions`] when the session bound is reached.
    pub fn serve<T: Transport>(&self, transport: T) -> Result<ServerSession, ServerError> {
        let id = self.inner.next_session.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(SessionState::new(id));
        {
            let sessions = self
                .inner
                .sessions
                .lock()
                .map_err(|_| ServerError::TooManySessions { limit: 0 })?;
            if sessions.len() >= self.inner.max_sessions {
                return Err(ServerError::TooManySessions {
                    limit: self.inner.max_sessions,
                });
            }
        }
        let service = Arc::new(ServerService::new(self.inner.clone(), state.clone()));
        let peer = switchboard_jsonrpc::spawn(transport, service, self.inner.config.clone());
        if let Ok(mut sessions) = self.inner.sessions.lock() {
            sessions.insert(
                id,
                SessionEntry {
                    peer: peer.downgrade(),
                    state: state.clone(),
                    runtime: tokio::runtime::Handle::current(),
                },
            );
        }
        Ok(ServerSession { peer, state })
    }

    /// Registers a tool at run time; every ready session is sent `notifications/tools/list_changed`
    /// when `tools.listChanged` was declared.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] when the name is taken.
    pub fn add_tool<F, Fut>(&self, tool: Tool, handler: F) -> Result<(), ServerError>
    where
        F: Fn(ToolCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        self.inner
            .tools
            .write()
            .map_err(|_| poisoned())?
            .insert(RegisteredTool::new(tool, handler))?;
        self.broadcast("notifications/tools/list_changed");
        Ok(())
    }

    /// Removes a tool at run time, notifying sessions as [`Server::add_tool`] does.
    ///
    /// # Errors
    /// [`RegistryError::NotFound`] when no tool has this name.
    pub fn remove_tool(&self, name: &str) -> Result<(), ServerError> {
        self.inner
            .tools
            .write()
            .map_err(|_| poisoned())?
            .remove(name)?;
        self.broadcast("notifications/tools/list_changed");
        Ok(())
    }

    /// Sends a parameterless notification to every ready session that may receive it.
    fn broadcast(&self, method: &'static str) {
        let Ok(sessions) = self.inner.sessions.lock() else {
            return;
        };
        for entry in sessions.values() {
            if entry.state.lifecycle() != LifecycleState::Ready {
                continue;
            }
            if let Some(peer) = entry.peer.upgrade() {
                entry.runtime.spawn(async move {
                    if let Err(e) = peer.notify::<()>(method, None).await {
                        tracing::debug!(%method, error = %e, "notification not sent");
                    }
                });
            }
        }
    }
}

fn poisoned() -> ServerError {
    ServerError::Registry(RegistryError::NotFound {
        kind: "registry",
        name: "poisoned lock".into(),
    })
}

/// One connected client.
#[derive(Debug, Clone)]
pub struct ServerSession {
    peer: Peer,
    state: Arc<SessionState>,
}

impl ServerSession {
    /// The engine handle: send requests and notifications to the client.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Where the session is in its lifecycle.
    pub fn lifecycle(&self) -> LifecycleState {
        self.state.lifecycle()
    }

    /// The negotiated revision, once `initialize` was answered.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.state.version()
    }

    /// The client, once it has sent `initialize`.
    pub fn client(&self) -> Option<ClientIdentity> {
        self.state.client()
    }

    /// Resolves when the session has closed.
    pub async fn closed(&self) {
        self.peer.closed().await
    }

    /// Closes the session.
    pub fn close(&self) {
        self.peer.close()
    }
}
