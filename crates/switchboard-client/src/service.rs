//! Client side: the engine service. Answers the server's requests (ping; sampling, elicitation
//! and roots through the installed handlers, -32601 for anything undeclared), routes its
//! notifications (list changes, resource updates, log lines, elicitation completions) and guards
//! what the client may send (`[LC-5]`, §3.2).

use std::sync::{Arc, OnceLock};

use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service};
use switchboard_types::catalogue::{
    self, Cancelled, Direction, Discover, ElicitationComplete, Initialize, Initialized,
    LoggingMessage, Method, MethodSpec, Ping, Refusal, ResourceUpdated, Side,
};
use switchboard_types::elicitation::ElicitationCompleteNotificationParams;
use switchboard_types::error::echo;
use switchboard_types::logging::LoggingMessageNotificationParams;
use switchboard_types::prompts::Prompt;
use switchboard_types::resources::{Resource, ResourceTemplate, ResourceUpdatedNotificationParams};
use switchboard_types::tools::Tool;
use switchboard_types::{
    ErrorCode, ErrorObject, Feature, MessageKind, Notification, ProtocolVersion, Request,
};

use crate::cache::ListKind;
use crate::handlers::run_callback;
use crate::listing::note_change;
use crate::router::{NotificationRoute, RequestRoute, Router, parse_notification};
use crate::session::ClientSession;
use crate::state::{ClientState, Phase};

pub(crate) struct ClientService {
    pub(crate) state: Arc<ClientState>,
    pub(crate) router: Arc<Router>,
    /// The session handle, once the handshake has produced it (for notification handlers).
    pub(crate) session: OnceLock<ClientSession>,
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

impl ClientService {
    /// The inbound gate of a catalogue request: declared by this client (-32601 otherwise, as
    /// the spec's roots page says) and present in the negotiated revision.
    fn gate(&self, spec: &MethodSpec) -> Result<(), ErrorObject> {
        let method = spec.name;
        let version = self.state.version();
        match spec.check(
            Direction::ServerToClient,
            None,
            None,
            Some(&self.state.capabilities),
        ) {
            Ok(()) => {}
            Err(Refusal::Undeclared { .. }) => {
                return Err(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("Method not found: {method} (client capability not declared)"),
                )
                .with_data(
                    serde_json::json!({"reason": "capability_not_declared", "method": method}),
                ));
            }
            Err(_) => return Err(ErrorObject::method_not_found(method)),
        }
        if version.is_some_and(|v| !spec.exists_in(v))
            || (version.is_none() && spec.since > ProtocolVersion::V2024_11_05)
        {
            return Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {method} (not in protocol revision {})",
                    version.map_or("(none)", ProtocolVersion::as_str)
                ),
            )
            .with_data(serde_json::json!({"reason": "not_in_revision", "method": method})));
        }
        Ok(())
    }

    /// Takes a notification the client handles itself: list changes, resource updates, log
    /// lines and elicitation completions (cancellation and progress are the engine's).
    fn builtin_notification(&self, n: &Notification, peer: &Peer) {
        let state = &self.state;
        let method = n.method.as_str();
        // A listen's notifications go to its stream (`[D26-73]`); list changes also mark the
        // caches stale below.
        let listened = state.listens.route(n);
        if listened && !ListKind::changes_a_list(method) {
            return;
        }
        for kind in ListKind::changed_by(method) {
            match kind {
                ListKind::Tools => note_change::<Tool>(peer, state),
                ListKind::Resources => note_change::<Resource>(peer, state),
                ListKind::ResourceTemplates => note_change::<ResourceTemplate>(peer, state),
                ListKind::Prompts => note_change::<Prompt>(peer, state),
            }
        }
        if method == ResourceUpdated::NAME {
            if let Some(p) =
                parse_notification::<ResourceUpdatedNotificationParams>(method, n.params.as_ref())
            {
                state.subscriptions.route(p);
            }
        } else if method == LoggingMessage::NAME {
            if let (Some(f), Some(p)) = (
                state.handlers.on_log.clone(),
                parse_notification::<LoggingMessageNotificationParams>(method, n.params.as_ref()),
            ) {
                run_callback(method, move || f(p));
            }
        } else if method == ElicitationComplete::NAME {
            let Some(p) = parse_notification::<ElicitationCompleteNotificationParams>(
                method,
                n.params.as_ref(),
            ) else {
                return;
            };
            // `[EL-9]`: unknown or already-completed ids are ignored.
            if !state.forget_elicitation(&p.elicitation_id) {
                tracing::debug!(id = %echo(&p.elicitation_id), "completion of an unknown elicitation ignored");
                return;
            }
            if let Some(f) = state.handlers.on_elicitation_complete.clone() {
                run_callback(method, move || f(p));
            }
        }
    }
}

impl Service for ClientService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let Some(route) = self.router.request(&req.method) else {
            // Undeclared or unknown: -32601.
            return ready(Err(match catalogue::request(&req.method) {
                Some(spec) => self
                    .gate(spec)
                    .err()
                    .unwrap_or_else(|| ErrorObject::method_not_found(&req.method)),
                None => ErrorObject::method_not_found(&req.method),
            }));
        };
        if let Some(spec) = route.spec
            && let Err(e) = self.gate(spec)
        {
            return ready(Err(e));
        }
        match &route.handler {
            RequestRoute::Builtin(f) => f(self.state.clone(), req, cx),
            RequestRoute::User(h) => h(req.params, cx),
        }
    }

    fn notify(&self, n: Notification, peer: &Peer) {
        match self.router.notification(&n.method).map(|r| &r.handler) {
            Some(NotificationRoute::Builtin) => self.builtin_notification(&n, peer),
            Some(NotificationRoute::User(h)) => match self.session.get() {
                Some(session) => h(n.params.as_ref(), session),
                None => {
                    tracing::debug!(method = %echo(&n.method), "notification before the handshake completed; ignored")
                }
            },
            None => {
                tracing::debug!(method = %echo(&n.method), "server notification without a handler")
            }
        }
    }

    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        let (phase, caps, version) = {
            let s = self
                .state
                .shared
                .lock()
                .map_err(|_| ErrorObject::internal("client state poisoned"))?;
            (s.phase, s.server_caps.clone(), s.version)
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
            Phase::Handshake => match kind {
                MessageKind::Request
                    if method == Initialize::NAME
                        || method == Ping::NAME
                        || method == Discover::NAME =>
                {
                    Ok(())
                }
                MessageKind::Notification
                    if method == Initialized::NAME || method == Cancelled::NAME =>
                {
                    Ok(())
                }
                _ => refuse("the handshake has not completed".into()),
            },
            // Extension methods are not gated; catalogue methods by their entry. 2024-11-05 had
            // `completion/complete` but no capability for it (§8.5): the catalogue knows.
            // The tasks extension of 2026-07-28 names methods that 2025 had as core ones:
            // a client that declared the extension sends them in the modern era.
            Phase::Ready
                if (self.state.options.tasks_extension
                    || self
                        .state
                        .handle_tasks
                        .load(std::sync::atomic::Ordering::Acquire))
                    && version.is_some_and(|v| v.is_modern())
                    && switchboard_types::methods::TASKS_EXTENSION_METHODS.contains(&method) =>
            {
                Ok(())
            }
            Phase::Ready => match catalogue::find(method).map(|spec| {
                spec.check(
                    Direction::ClientToServer,
                    version,
                    caps.as_ref(),
                    Some(&self.state.capabilities),
                )
            }) {
                None | Some(Ok(())) => Ok(()),
                Some(Err(Refusal::Undeclared {
                    capability,
                    side: Some(Side::Server),
                })) => refuse(format!("the server did not declare {}", capability.name())),
                Some(Err(Refusal::Undeclared {
                    capability,
                    side: Some(Side::Client),
                })) => refuse(format!("this client did not declare {}", capability.path())),
                Some(Err(other)) => refuse(other.describe()),
            },
        }
    }

    fn batch_allowed(&self) -> bool {
        self.state
            .version()
            .is_some_and(|v| v.supports(Feature::Batching))
    }

    fn cancellable(&self, method: &str) -> bool {
        method != Initialize::NAME
    }

    fn facts(&self, cx: Option<&RequestContext>) -> switchboard_jsonrpc::Facts {
        let _ = cx;
        let version = self.state.shared.lock().ok().and_then(|s| {
            s.modern_version
                .as_deref()
                .and_then(ProtocolVersion::parse)
                .or(s.version)
        });
        switchboard_jsonrpc::Facts::new("client")
            .with_protocol_version(version)
            .with_connection(self.state.scope)
    }

    fn closed(&self) {
        if let Some(tasks) = &self.state.tasks {
            tasks.session_closed(self.state.scope);
        }
        if let Ok(mut s) = self.state.shared.lock() {
            s.phase = Phase::Closed;
        }
    }
}
