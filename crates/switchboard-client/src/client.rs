//! [`Client`]: who the client is and what it supports; [`ClientSession`]: one connected,
//! initialized server, with a typed call per server method.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions, SessionConfig, Transport};
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::lifecycle::{Implementation, InitializeRequestParams, InitializeResult};
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool};
use switchboard_types::{ErrorCode, ProtocolVersion};

use crate::error::ClientError;
use crate::service::{ClientService, ClientState, Phase};

/// Default bound on pages followed by a list-all helper.
pub const DEFAULT_MAX_PAGES: usize = 1000;

/// An MCP client's identity and offer.
#[derive(Debug, Clone)]
pub struct Client {
    info: Implementation,
    capabilities: ClientCapabilities,
    offer: ProtocolVersion,
    supported: Vec<ProtocolVersion>,
    config: SessionConfig,
    max_pages: usize,
}

/// Builds a [`Client`].
#[derive(Debug)]
#[must_use]
pub struct ClientBuilder(Client);

impl ClientBuilder {
    /// The capabilities to declare.
    pub fn capabilities(mut self, caps: ClientCapabilities) -> Self {
        self.0.capabilities = caps;
        self
    }

    /// The revision to offer in `initialize` (default: the latest).
    pub fn protocol_version(mut self, v: ProtocolVersion) -> Self {
        self.0.offer = v;
        self
    }

    /// The revisions this client accepts from the server (default: the four stateful ones).
    pub fn supported_versions(mut self, vs: impl IntoIterator<Item = ProtocolVersion>) -> Self {
        self.0.supported = vs.into_iter().collect();
        self
    }

    /// The engine configuration (bounds, timeouts, frame hook).
    pub fn session_config(mut self, config: SessionConfig) -> Self {
        self.0.config = config;
        self
    }

    /// Bounds the pages a list-all helper follows.
    pub fn max_pages(mut self, n: usize) -> Self {
        self.0.max_pages = n.max(1);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Client {
        self.0
    }
}

/// What the handshake settled.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Negotiated {
    /// The revision both sides use.
    pub protocol_version: ProtocolVersion,
    /// What the server declared.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// The server's instructions, if any.
    pub instructions: Option<String>,
}

impl Client {
    /// Starts building a client that calls itself `info`.
    pub fn builder(info: Implementation) -> ClientBuilder {
        ClientBuilder(Client {
            info,
            capabilities: ClientCapabilities::default(),
            offer: ProtocolVersion::LATEST,
            supported: ProtocolVersion::SUPPORTED.to_vec(),
            config: SessionConfig::default().with_name("client"),
            max_pages: DEFAULT_MAX_PAGES,
        })
    }

    /// Connects on `transport` and performs the handshake: `initialize`, version check,
    /// `notifications/initialized`. Must be called inside a Tokio runtime.
    ///
    /// # Errors
    /// [`ClientError::UnsupportedVersion`] when the server chose a revision this client does not
    /// support (the session is closed, `[LC-9]`); a request error, or a malformed result.
    pub async fn connect<T: Transport>(&self, transport: T) -> Result<ClientSession, ClientError> {
        let state = Arc::new(ClientState::new(self.capabilities.clone()));
        let peer = switchboard_jsonrpc::spawn(
            transport,
            Arc::new(ClientService {
                state: state.clone(),
            }),
            self.config.clone(),
        );
        let params =
            InitializeRequestParams::new(self.offer, self.capabilities.clone(), self.info.clone());
        let result: InitializeResult = match peer
            .call("initialize", Some(&params), RequestOptions::default())
            .await
        {
            Ok(r) => r,
            Err(RequestError::Rejected(e)) if e.code == ErrorCode::INVALID_PARAMS => {
                peer.close();
                return Err(ClientError::Handshake(format!(
                    "server refused initialize: {}{}",
                    e.message,
                    e.data.map(|d| format!(" ({d})")).unwrap_or_default()
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
            s.version = Some(version);
            s.server_caps = Some(result.capabilities.clone());
            s.phase = Phase::Ready;
        }
        peer.notify::<()>("notifications/initialized", None).await?;
        let negotiated = Negotiated {
            protocol_version: version,
            capabilities: result.capabilities,
            server_info: result.server_info,
            instructions: result.instructions,
        };
        Ok(ClientSession {
            peer,
            state,
            negotiated,
            tools: Arc::new(Mutex::new(None)),
            tools_seen: Arc::new(AtomicU64::new(0)),
            max_pages: self.max_pages,
        })
    }
}

/// One initialized connection to a server.
#[derive(Clone)]
pub struct ClientSession {
    peer: Peer,
    state: Arc<ClientState>,
    negotiated: Negotiated,
    tools: Arc<Mutex<Option<Vec<Tool>>>>,
    /// The list-changed generation the tool cache reflects.
    tools_seen: Arc<AtomicU64>,
    max_pages: usize,
}

impl fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSession")
            .field("negotiated", &self.negotiated)
            .finish()
    }
}

impl ClientSession {
    /// What the handshake settled.
    pub fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// The negotiated revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.negotiated.protocol_version
    }

    /// The engine handle, for raw requests.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Whether the session is still open.
    pub fn is_open(&self) -> bool {
        self.state.phase() == Phase::Ready
    }

    /// Closes the session.
    pub fn close(&self) {
        self.peer.close();
    }

    async fn call<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<R, ClientError> {
        Ok(self
            .peer
            .call(method, Some(params), RequestOptions::default())
            .await?)
    }

    /// `ping`.
    ///
    /// # Errors
    /// A request error.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let _: serde_json::Value = self
            .peer
            .call::<(), _>("ping", None, RequestOptions::default())
            .await?;
        Ok(())
    }

    /// One page of `tools/list`.
    ///
    /// # Errors
    /// A request error.
    pub async fn list_tools_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListToolsResult, ClientError> {
        let params = PaginatedRequestParams {
            cursor,
            ..Default::default()
        };
        self.call("tools/list", &params).await
    }

    /// Every tool, following `nextCursor` (bounded); refreshes the tool cache.
    ///
    /// # Errors
    /// A request error, or more pages than the bound.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        // Mark the current change generation as seen before listing, so a change that arrives
        // while listing triggers another refresh.
        self.tools_seen
            .store(*self.state.tools_changed.borrow(), Ordering::SeqCst);
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..self.max_pages {
            let page = self.list_tools_page(cursor).await?;
            all.extend(page.tools);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => {
                    if let Ok(mut cache) = self.tools.lock() {
                        *cache = Some(all.clone());
                    }
                    return Ok(all);
                }
            }
        }
        Err(ClientError::TooManyPages {
            method: "tools/list",
            pages: self.max_pages,
        })
    }

    /// The cached tool list (from the last [`ClientSession::list_tools`]).
    pub fn cached_tools(&self) -> Option<Vec<Tool>> {
        self.tools.lock().ok().and_then(|c| c.clone())
    }

    /// Waits for `notifications/tools/list_changed`, then re-lists: the cache is fresh on return.
    ///
    /// # Errors
    /// A closed session, or a request error while re-listing.
    pub async fn tools_changed(&self) -> Result<Vec<Tool>, ClientError> {
        let mut rx = self.state.tools_changed.subscribe();
        loop {
            if *rx.borrow_and_update() > self.tools_seen.load(Ordering::SeqCst) {
                break;
            }
            tokio::select! {
                r = rx.changed() => r.map_err(|_| ClientError::NotReady("session closed"))?,
                _ = self.peer.closed() => return Err(ClientError::NotReady("session closed")),
            }
        }
        self.list_tools().await
    }

    /// `tools/call`.
    ///
    /// # Errors
    /// A request error: the server's -32602 for an unknown tool, -32600 for a tool this client may
    /// not use. A tool's own failure is not an error: it is a result with `is_error`.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, ClientError> {
        let params = CallToolRequestParams::new(name).with_arguments(arguments);
        self.call("tools/call", &params).await
    }
}
