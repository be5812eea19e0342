//! The server's [`Service`] for one session: lifecycle gating, negotiation, capability gates and
//! dispatch to the primitives. Runs on the engine; never sees bytes.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service};
use switchboard_types::jsonrpc::{empty_object, to_raw};
use switchboard_types::lifecycle::{InitializeRequestParams, InitializeResult};
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::tools::{CallToolRequestParams, ListToolsResult};
use switchboard_types::{ErrorObject, MessageKind, Notification, ProtocolVersion, Request};

use crate::gate;
use crate::lifecycle::{LifecycleEvent, LifecycleState};
use crate::server::ServerInner;
use crate::tool::{self, AllowList, ClientIdentity, ToolCall};

struct SessionData {
    lifecycle: LifecycleState,
    version: Option<ProtocolVersion>,
    client: Option<ClientIdentity>,
    allow: AllowList,
}

/// The per-session state the service and the [`crate::ServerSession`] handle share.
pub(crate) struct SessionState {
    pub(crate) id: u64,
    data: Mutex<SessionData>,
}

impl SessionState {
    pub(crate) fn new(id: u64) -> Self {
        SessionState {
            id,
            data: Mutex::new(SessionData {
                lifecycle: LifecycleState::AwaitingInitialize,
                version: None,
                client: None,
                allow: AllowList::All,
            }),
        }
    }

    pub(crate) fn lifecycle(&self) -> LifecycleState {
        self.data
            .lock()
            .map(|d| d.lifecycle)
            .unwrap_or(LifecycleState::Closed)
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        self.data.lock().ok().and_then(|d| d.version)
    }

    pub(crate) fn client(&self) -> Option<ClientIdentity> {
        self.data.lock().ok().and_then(|d| d.client.clone())
    }

    fn allows(&self, tool: &str) -> bool {
        self.data
            .lock()
            .map(|d| d.allow.allows(tool))
            .unwrap_or(false)
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("id", &self.id)
            .field("lifecycle", &self.lifecycle())
            .finish()
    }
}

pub(crate) struct ServerService {
    server: Arc<ServerInner>,
    state: Arc<SessionState>,
}

impl ServerService {
    pub(crate) fn new(server: Arc<ServerInner>, state: Arc<SessionState>) -> Self {
        ServerService { server, state }
    }

    /// `initialize`: negotiate, move the lifecycle, decide the allow-list. Runs synchronously in
    /// frame order, so a request right behind it sees the new state.
    fn initialize(&self, req: &Request) -> HandlerResult {
        let params: InitializeRequestParams = parse(req)?;
        let version = self
            .server
            .era
            .negotiate(&params.protocol_version, &self.server.versions);
        let identity = ClientIdentity {
            info: params.client_info,
            capabilities: params.capabilities,
        };
        let allow = self
            .server
            .policy
            .as_ref()
            .map_or(AllowList::All, |p| p(&identity));
        {
            let mut d = self
                .state
                .data
                .lock()
                .map_err(|_| ErrorObject::internal("session state poisoned"))?;
            d.lifecycle = d.lifecycle.apply(LifecycleEvent::Initialize).map_err(|_| {
                ErrorObject::invalid_request(
                    "initialize was already received",
                    "already_initialized",
                )
            })?;
            d.version = Some(version);
            d.client = Some(identity);
            d.allow = allow;
        }
        if version.as_str() != params.protocol_version {
            tracing::info!(offered = %params.protocol_version, chosen = %version, "protocol version counter-offer");
        }
        let mut result = InitializeResult::new(
            version,
            self.server.capabilities.clone(),
            self.server.info.clone(),
        );
        result.instructions = self.server.instructions.clone();
        ok(&result)
    }

    fn list_tools(&self, req: &Request) -> HandlerResult {
        let _params: PaginatedRequestParams = parse_optional(req)?;
        let registry = self
            .server
            .tools
            .read()
            .map_err(|_| ErrorObject::internal("tool registry poisoned"))?;
        let tools = registry
            .iter()
            .filter(|t| self.state.allows(&t.tool.name))
            .map(|t| t.tool.clone())
            .collect();
        ok(&ListToolsResult::new(tools))
    }

    fn call_tool(&self, req: &Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: CallToolRequestParams = match parse(req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
        let tool = match self.server.tools.read() {
            Ok(r) => r.get(&params.name).cloned(),
            Err(_) => return ready(Err(ErrorObject::internal("tool registry poisoned"))),
        };
        let Some(tool) = tool else {
            return ready(Err(tool::unknown_tool(&params.name)));
        };
        if !self.state.allows(&params.name) {
            return ready(Err(tool::tool_not_permitted(&params.name)));
        }
        let call = ToolCall {
            name: params.name,
            arguments: params.arguments.unwrap_or_default(),
            cx,
        };
        Box::pin(async move { ok(&tool.run(call).await) })
    }
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

fn ok<T: Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
}

/// Parses required params; a failure is -32602 naming what is wrong.
fn parse<T: DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    let text = req.params.as_ref().map_or("null", |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(&req.method, &e))
}

/// Parses params that may be absent altogether.
fn parse_optional<T: DeserializeOwned + Default>(req: &Request) -> Result<T, ErrorObject> {
    match &req.params {
        None => Ok(T::default()),
        Some(p) => serde_json::from_str(p.get()).map_err(|e| invalid_params(&req.method, &e)),
    }
}

fn invalid_params(method: &str, e: &serde_json::Error) -> ErrorObject {
    ErrorObject::new(
        switchboard_types::ErrorCode::INVALID_PARAMS,
        format!("Invalid params for {method}: {e}"),
    )
    .with_data(
        serde_json::json!({"reason": "invalid_params", "method": method, "detail": e.to_string()}),
    )
}

impl Service for ServerService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let state = self.state.lifecycle();
        let declared = gate::server_declares(&self.server.capabilities, &req.method);
        if let Err(e) = self.server.era.gate_request(
            state,
            &req.method,
            declared.is_some(),
            self.server.strictness,
        ) {
            return ready(Err(e));
        }
        if declared == Some(false) {
            return ready(Err(gate::undeclared(
                &req.method,
                gate::capability_of(&req.method),
            )));
        }
        match req.method.as_str() {
            "initialize" => ready(self.initialize(&req)),
            "ping" => ready(Ok(empty_object())),
            "tools/list" => ready(self.list_tools(&req)),
            "tools/call" => self.call_tool(&req, cx),
            m => ready(Err(ErrorObject::method_not_found(m))),
        }
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        match n.method.as_str() {
            "notifications/initialized" => {
                let Ok(mut d) = self.state.data.lock() else {
                    return;
                };
                match d.lifecycle.apply(LifecycleEvent::Initialized) {
                    Ok(next) => d.lifecycle = next,
                    Err(e) => {
                        tracing::warn!(session = self.state.id, error = %e, "notifications/initialized out of place; ignored")
                    }
                }
            }
            "notifications/cancelled" | "notifications/progress" => {}
            m => {
                if self.state.lifecycle() != LifecycleState::Ready {
                    tracing::warn!(
                        session = self.state.id,
                        method = m,
                        "notification before the handshake completed; ignored"
                    );
                } else {
                    tracing::debug!(
                        session = self.state.id,
                        method = m,
                        "notification without a handler ignored"
                    );
                }
            }
        }
    }

    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        let (state, version, client) = {
            let d = self
                .state
                .data
                .lock()
                .map_err(|_| ErrorObject::internal("session state poisoned"))?;
            (d.lifecycle, d.version, d.client.clone())
        };
        self.server.era.gate_outbound(state, kind, method)?;
        match (version, client) {
            (Some(v), Some(c)) => {
                gate::server_may_send(method, &self.server.capabilities, &c.capabilities, v)
            }
            _ => Ok(()),
        }
    }

    fn batch_allowed(&self) -> bool {
        let (state, version) = (self.state.lifecycle(), self.state.version());
        self.server.era.batch_allowed(state, version)
    }

    fn cancellable(&self, method: &str) -> bool {
        method != "initialize"
    }

    fn allowed_in_batch(&self, method: &str) -> bool {
        method != "initialize"
    }

    fn closed(&self) {
        if let Ok(mut d) = self.state.data.lock() {
            d.lifecycle = LifecycleState::Closed;
        }
        if let Ok(mut sessions) = self.server.sessions.lock() {
            sessions.remove(&self.state.id);
        }
    }
}
