//! The client's engine service: answers the server's requests and reacts to its notifications.

use std::sync::{Arc, Mutex};

use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service};
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::jsonrpc::empty_object;
use switchboard_types::{
    ErrorCode, ErrorObject, MessageKind, Notification, ProtocolVersion, Request,
};
use tokio::sync::watch;

/// Where the client is in its lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// `initialize` not yet answered.
    Handshake,
    /// The handshake is complete.
    Ready,
    /// The session has closed.
    Closed,
}

pub(crate) struct Shared {
    pub(crate) phase: Phase,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) server_caps: Option<ServerCapabilities>,
}

/// State shared by the service and the session handle.
pub(crate) struct ClientState {
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) shared: Mutex<Shared>,
    /// Bumped each time the server says its tool list changed.
    pub(crate) tools_changed: watch::Sender<u64>,
}

impl ClientState {
    pub(crate) fn new(capabilities: ClientCapabilities) -> Self {
        ClientState {
            capabilities,
            shared: Mutex::new(Shared {
                phase: Phase::Handshake,
                version: None,
                server_caps: None,
            }),
            tools_changed: watch::channel(0).0,
        }
    }

    pub(crate) fn phase(&self) -> Phase {
        self.shared.lock().map(|s| s.phase).unwrap_or(Phase::Closed)
    }
}

pub(crate) struct ClientService {
    pub(crate) state: Arc<ClientState>,
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

impl Service for ClientService {
    fn call(&self, req: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        if req.method == "ping" {
            return ready(Ok(empty_object()));
        }
        match self.state.capabilities.declares_method(&req.method) {
            // Undeclared or unknown: -32601, as the spec's roots page says.
            None => ready(Err(ErrorObject::method_not_found(&req.method))),
            Some(false) => ready(Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {} (client capability not declared)",
                    req.method
                ),
            )
            .with_data(
                serde_json::json!({"reason": "capability_not_declared", "method": req.method}),
            ))),
            Some(true) => ready(Err(ErrorObject::internal(format!(
                "no handler installed for {}",
                req.method
            )))),
        }
    }

    fn notify(&self, n: Notification, _peer: &Peer) {
        match n.method.as_str() {
            "notifications/tools/list_changed" => {
                self.state.tools_changed.send_modify(|g| *g += 1);
            }
            "notifications/cancelled" | "notifications/progress" => {}
            m => tracing::debug!(method = m, "server notification without a handler"),
        }
    }

    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        let (phase, caps) = {
            let s = self
                .state
                .shared
                .lock()
                .map_err(|_| ErrorObject::internal("client state poisoned"))?;
            (s.phase, s.server_caps.clone())
        };
        let refuse = |what: String| {
            Err(ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!("{method} not sent: {what}"),
            )
            .with_data(
                serde_json::json!({"reason": "capability_not_negotiated", "method": method}),
            ))
        };
        match phase {
            Phase::Closed => refuse("the session is closed".into()),
            // Before the server has answered `initialize`: only `initialize` and `ping` (§3.2).
            Phase::Handshake => match (kind, method) {
                (MessageKind::Request, "initialize" | "ping") => Ok(()),
                (
                    MessageKind::Notification,
                    "notifications/initialized" | "notifications/cancelled",
                ) => Ok(()),
                _ => refuse("the handshake has not completed".into()),
            },
            Phase::Ready => {
                if kind == MessageKind::Request {
                    if let Some(false) = caps.as_ref().and_then(|c| c.declares_method(method)) {
                        let cap = switchboard_types::gates::capability_of(method);
                        return refuse(format!("the server did not declare {cap}"));
                    }
                }
                if method == "notifications/roots/list_changed"
                    && self
                        .state
                        .capabilities
                        .roots
                        .as_ref()
                        .and_then(|r| r.list_changed)
                        != Some(true)
                {
                    return refuse("this client did not declare roots.listChanged".into());
                }
                Ok(())
            }
        }
    }

    fn batch_allowed(&self) -> bool {
        let s = self.state.shared.lock();
        s.ok()
            .and_then(|s| s.version)
            .is_some_and(|v| v.supports(switchboard_types::Feature::Batching))
    }

    fn cancellable(&self, method: &str) -> bool {
        method != "initialize"
    }

    fn closed(&self) {
        if let Ok(mut s) = self.state.shared.lock() {
            s.phase = Phase::Closed;
        }
    }
}
