//! The server's engine: [`ServerInner`] (what every session shares) and [`ServerService`], the
//! [`Service`] of one session: the era of the connection, the lifecycle and capability gates,
//! and the dispatch through the route table to the built-in handlers ([`crate::builtin`]) or
//! the user's. The modern era's front door is [`front`]. Runs on the engine; never sees bytes.

mod front;

use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service, SessionConfig};
use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::ServerCapabilities;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::{ErrorCode, ErrorObject, MessageKind, Notification, Request};

use switchboard_types::catalogue::{
    self, Direction, Initialize, Initialized, Method, MethodSpec, Refusal,
};

use crate::announce::Audience;
use crate::completion::CompletionRegistry;
use crate::context::Context;
use crate::era::Stateful;
use crate::gate;
use crate::lifecycle::Strictness;
use crate::lifecycle::{LifecycleEvent, LifecycleState};
use crate::pagination::Paginator;
use crate::policy::ToolPolicy;
use crate::prompt::PromptRegistry;
use crate::resource::ResourceRegistry;
use crate::router::{NotificationRoute, RequestRoute, Router, ready};
use crate::session::{ServerSession, SessionState};
use crate::task::Tasks;
use crate::tool::ClientIdentity;
use crate::tool::ToolRegistry;
use switchboard_types::error::echo;

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) strictness: Strictness,
    pub(crate) era: Stateful,
    pub(crate) router: Router<ServerService>,
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) tools: RwLock<ToolRegistry>,
    pub(crate) resources: RwLock<ResourceRegistry>,
    pub(crate) prompts: RwLock<PromptRegistry>,
    pub(crate) completions: RwLock<CompletionRegistry>,
    pub(crate) policy: Option<ToolPolicy>,
    pub(crate) paginator: Paginator,
    /// The open sessions and listen streams: who hears of a change.
    pub(crate) audience: Arc<Audience>,
    pub(crate) max_sessions: usize,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_subscription_bytes: usize,
    pub(crate) max_session_tools: usize,
    /// Bytes of `initialize` params a session accepts (`ServerBuilder::max_initialize_bytes`).
    pub(crate) max_initialize_bytes: usize,
    pub(crate) config: SessionConfig,
    /// The middleware around every session's messages (`ServerBuilder::layer`).
    pub(crate) layers: switchboard_jsonrpc::Layers,
    /// The modern revisions served per request (2026-07-28).
    pub(crate) modern_versions: Vec<ProtocolVersion>,
    /// Seals the `requestState` of multi round-trip requests.
    pub(crate) sealer: crate::modern::seal::Sealer,
    /// The caching hints put on cacheable modern results.
    pub(crate) cache: switchboard_types::modern::CacheHints,
    /// The envelope of the last modern request, by its `_meta` text.
    pub(crate) envelopes: crate::modern::params::EnvelopeCache,
    /// What the server adds to its modern results (computed once).
    pub(crate) results: Arc<crate::modern::finish::ResultMembers>,
    /// The modern tasks whose work runs here (the tasks extension), with what they need.
    pub(crate) modern_tasks: Arc<crate::modern::hub::TaskHub>,
    /// The scopes requests need when a transport authorizes them (`ServerBuilder::require_scopes`
    /// and the per-primitive declarations), for that transport to enforce.
    pub(crate) scopes: switchboard_auth::resource::ScopePolicy,
    /// The client identity the last session declared, shared by every session that declares
    /// the same (see [`ServerInner::share_client`]).
    pub(crate) last_client: Mutex<Option<Arc<ClientIdentity>>>,
}

impl ServerInner {
    /// The identity a session keeps for its client: the one the previous session kept when the
    /// client declared the same (name, version, capabilities, everything), so that many
    /// sessions of one kind of client share one copy, about a kilobyte each would hold idle.
    pub(crate) fn share_client(&self, client: ClientIdentity) -> Arc<ClientIdentity> {
        let Ok(mut last) = self.last_client.lock() else {
            return Arc::new(client);
        };
        if let Some(known) = last.as_ref()
            && known.info == client.info
            && known.capabilities == client.capabilities
        {
            return known.clone();
        }
        let shared = Arc::new(client);
        *last = Some(shared.clone());
        shared
    }
}

pub(crate) struct ServerService {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) state: Arc<SessionState>,
    /// Set for a request served by the modern front door.
    pub(crate) modern: Option<Arc<crate::modern::ModernCall>>,
}

pub(crate) fn ok<T: Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
}

pub(crate) fn poisoned() -> ErrorObject {
    ErrorObject::internal("server state poisoned")
}

impl ServerService {
    pub(crate) fn new(server: Arc<ServerInner>, state: Arc<SessionState>) -> Self {
        ServerService {
            server,
            state,
            modern: None,
        }
    }

    /// This service serving one modern request.
    pub(crate) fn with_modern(&self, call: Arc<crate::modern::ModernCall>) -> Self {
        ServerService {
            server: self.server.clone(),
            state: self.state.clone(),
            modern: Some(call),
        }
    }

    /// The revision the request being served speaks.
    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        match &self.modern {
            Some(_) => Some(ProtocolVersion::V2026_07_28),
            None => self.state.version(),
        }
    }

    /// Whether the client of the request being served may see and call tool `name`.
    pub(crate) fn allows(&self, name: &str) -> bool {
        match &self.modern {
            Some(call) => call.allow.allows(name),
            None => self.state.allows(name),
        }
    }

    pub(crate) fn context(&self, cx: RequestContext) -> Context {
        let session = ServerSession {
            state: self.state.clone(),
            peer: cx.peer().unrelated(),
            max_session_tools: self.server.max_session_tools,
        };
        Context {
            request: cx,
            session,
            task: None,
            modern: self.modern.clone(),
            audience: self.server.audience.clone(),
        }
    }
}

impl ServerService {
    /// The inbound gate of a routed catalogue method: it must exist in the negotiated revision
    /// and the capability it needs must be one this server declared (-32601 otherwise).
    pub(crate) fn gate_capability(
        &self,
        spec: &MethodSpec,
        method: &str,
        version: Option<ProtocolVersion>,
    ) -> Result<(), ErrorObject> {
        if let Some(v) = version
            && !spec.exists_in(v)
        {
            let method = echo(method);
            return Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method} (not in protocol revision {v})"),
            )
            .with_data(serde_json::json!({"reason": "not_in_revision", "method": method})));
        }
        match spec.check(
            Direction::ClientToServer,
            None,
            Some(&self.server.capabilities),
            None,
        ) {
            Ok(()) => Ok(()),
            Err(Refusal::Undeclared { capability, .. }) => {
                Err(gate::undeclared(method, capability.name()))
            }
            Err(_) => Err(ErrorObject::method_not_found(method)),
        }
    }

    fn handle(&self, peer: &Peer) -> ServerSession {
        ServerSession {
            state: self.state.clone(),
            peer: peer.unrelated(),
            max_session_tools: self.server.max_session_tools,
        }
    }
}

impl Service for ServerService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        use crate::era::ConnEra;
        // The era: what opened the connection, or this request when nothing has yet
        // (`[D26-120]`: only the protocol version key in `_meta` claims the modern era).
        let claims = || {
            req.params
                .as_ref()
                .is_some_and(|p| switchboard_types::modern::RequestEnvelope::claimed_by(p.get()))
        };
        match self.state.era() {
            ConnEra::Modern => return self.modern_call(req, cx),
            ConnEra::Undecided
                if !self.server.modern_versions.is_empty()
                    && claims()
                    && self.state.decide_era(ConnEra::Modern) == ConnEra::Modern =>
            {
                return self.modern_call(req, cx);
            }
            // A method only the modern era has, without the envelope that would open it.
            ConnEra::Undecided
                if catalogue::request(&req.method)
                    .is_some_and(|s| s.since >= ProtocolVersion::V2026_07_28) =>
            {
                return ready(Err(
                    switchboard_types::modern::EnvelopeError::NoMeta.to_error_object()
                ));
            }
            ConnEra::Legacy if claims() => {
                return ready(Err(ErrorObject::invalid_request(
                    "a request carrying a 2026-07-28 envelope on a session opened by initialize",
                    "era_mismatch",
                )));
            }
            _ => {}
        }
        // One lock for both: this runs for every request.
        let (state, version) = self.state.lifecycle_and_version();
        let entry = self.server.router.request(&req.method);
        // A catalogue request the server does not route still counts as known to the lifecycle
        // gate: before the handshake it is -32600, like every other MCP request.
        let known = entry.is_some() || catalogue::request(&req.method).is_some();
        if let Err(e) =
            self.server
                .era
                .gate_request(state, &req.method, known, self.server.strictness)
        {
            return ready(Err(e));
        }
        let Some(entry) = entry else {
            return ready(Err(match catalogue::request(&req.method) {
                Some(spec) => match self.gate_capability(spec, &req.method, version) {
                    Err(e) => e,
                    Ok(()) => ErrorObject::method_not_found(&req.method),
                },
                None => ErrorObject::method_not_found(&req.method),
            }));
        };
        if let Some(spec) = entry.spec
            && let Err(e) = self.gate_capability(spec, &req.method, version)
        {
            return ready(Err(e));
        }
        match &entry.handler {
            RequestRoute::Builtin(f) => f(self, req, cx),
            RequestRoute::User(h) => h(req.params, self.context(cx)),
        }
    }

    fn notify(&self, n: Notification, peer: &Peer) {
        let method = n.method.as_str();
        if method == Initialized::NAME {
            let Ok(mut d) = self.state.data.lock() else {
                return;
            };
            match d.lifecycle.apply(LifecycleEvent::Initialized) {
                Ok(next) => d.lifecycle = next,
                Err(e) => {
                    if peer.log_throttle().admit("server") {
                        tracing::warn!(session = self.state.id, error = %e, "notifications/initialized out of place; ignored")
                    }
                }
            }
            return;
        }
        let route = self.server.router.notification(method).map(|e| &e.handler);
        if let Some(NotificationRoute::Builtin) = route {
            return;
        }
        if self.state.lifecycle() != LifecycleState::Ready {
            if peer.log_throttle().admit("server") {
                tracing::warn!(
                    session = self.state.id,
                    method = %echo(method),
                    "notification before the handshake completed; ignored"
                );
            }
            return;
        }
        match route {
            Some(NotificationRoute::User(h)) => h(n.params.as_ref(), &self.handle(peer)),
            _ => tracing::debug!(
                session = self.state.id,
                method = %echo(method),
                "notification without a handler ignored"
            ),
        }
    }

    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        if self.state.era() == crate::era::ConnEra::Modern {
            // 2026-07-28: no server requests (`[D26-1]`); notifications of this revision only.
            // The server's own capabilities gate what it sends (`[D26-86]`: logs need `logging`).
            let allowed = kind == MessageKind::Notification
                && catalogue::notification(method).is_none_or(|s| {
                    s.check(
                        Direction::ServerToClient,
                        Some(ProtocolVersion::V2026_07_28),
                        Some(&self.server.capabilities),
                        None,
                    )
                    .is_ok()
                });
            return if allowed {
                Ok(())
            } else {
                Err(ErrorObject::invalid_request(
                    format!("{method} may not be sent in protocol revision 2026-07-28"),
                    "not_in_revision",
                ))
            };
        }
        let (state, version, client) = {
            let d = self.state.data.lock().map_err(|_| poisoned())?;
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
        self.server
            .era
            .batch_allowed(self.state.lifecycle(), self.state.version())
    }

    fn cancellable(&self, method: &str) -> bool {
        method != Initialize::NAME
    }

    fn allowed_in_batch(&self, method: &str) -> bool {
        method != Initialize::NAME
    }

    fn facts(&self, cx: Option<&RequestContext>) -> switchboard_jsonrpc::Facts {
        let modern = self.modern.is_some() || self.state.era() == crate::era::ConnEra::Modern;
        let mut facts = switchboard_jsonrpc::Facts::new("server").with_connection(self.state.id);
        if modern {
            facts = facts.with_protocol_version(Some(ProtocolVersion::V2026_07_28));
        } else {
            let (version, client) = self.state.version_and_client_name();
            facts = facts.with_protocol_version(version).with_peer_name(client);
            if let Some(id) = self.state.session_key() {
                facts = facts.with_session_id(id);
            }
        }
        if let Some(auth) = cx.and_then(crate::arrival::auth_of) {
            facts = facts.with_caller(
                Some(Arc::from(auth.subject.as_str())),
                auth.client_id.as_deref().map(Arc::from),
                auth.scopes.iter().map(str::to_owned).collect(),
            );
        }
        facts
    }

    fn closed(&self) {
        self.server.tasks.session_closed(self.state.id);
        if let Ok(mut d) = self.state.data.lock() {
            d.lifecycle = d
                .lifecycle
                .apply(LifecycleEvent::Close)
                .unwrap_or(LifecycleState::Closed);
            d.subscriptions.clear();
            d.subscription_bytes = 0;
        }
        if let Ok(mut sessions) = self.server.audience.sessions.lock() {
            sessions.remove(&self.state.id);
        }
    }
}
