//! Client side: the engine service. Answers the server's requests (ping; sampling, elicitation
//! and roots through the installed handlers, -32601 for anything undeclared), routes its
//! notifications (list changes, resource updates, log lines, elicitation completions) and guards
//! what the client may send (`[LC-5]`, §3.2).

use std::sync::Arc;

use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service};
use switchboard_types::elicitation::ElicitationCompleteNotificationParams;
use switchboard_types::jsonrpc::empty_object;
use switchboard_types::logging::LoggingMessageNotificationParams;
use switchboard_types::prompts::Prompt;
use switchboard_types::resources::{Resource, ResourceTemplate, ResourceUpdatedNotificationParams};
use switchboard_types::tools::Tool;
use switchboard_types::{
    ErrorCode, ErrorObject, Feature, MessageKind, Notification, ProtocolVersion, Request,
};

use crate::cache::{ListKind, note_change};
use crate::handlers::{dispatch, parse_notification, run_callback};
use crate::state::{ClientState, Phase};

pub(crate) struct ClientService {
    pub(crate) state: Arc<ClientState>,
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

/// The revision that introduced a server-to-client request, when it is not the baseline.
fn introduced_in(method: &str) -> Option<Feature> {
    match method {
        "elicitation/create" => Some(Feature::Elicitation),
        m if m.starts_with("tasks/") => Some(Feature::Tasks),
        _ => None,
    }
}

impl Service for ClientService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        if req.method == "ping" {
            return ready(Ok(empty_object()));
        }
        let version = self.state.version();
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
            // Declared, but the negotiated revision does not have the method.
            Some(true)
                if introduced_in(&req.method)
                    .is_some_and(|f| !version.is_some_and(|v| v.supports(f))) =>
            {
                ready(Err(ErrorObject::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!(
                        "Method not found: {} (not in protocol revision {})",
                        req.method,
                        version.map_or("(none)", ProtocolVersion::as_str)
                    ),
                )
                .with_data(
                    serde_json::json!({"reason": "not_in_revision", "method": req.method}),
                )))
            }
            Some(true) => dispatch(self.state.clone(), req, cx),
        }
    }

    fn notify(&self, n: Notification, peer: &Peer) {
        let state = &self.state;
        let method = n.method.as_str();
        for kind in ListKind::changed_by(method) {
            match kind {
                ListKind::Tools => note_change::<Tool>(peer, state),
                ListKind::Resources => note_change::<Resource>(peer, state),
                ListKind::ResourceTemplates => note_change::<ResourceTemplate>(peer, state),
                ListKind::Prompts => note_change::<Prompt>(peer, state),
            }
        }
        match method {
            "notifications/tools/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/prompts/list_changed" => {}
            "notifications/resources/updated" => {
                if let Some(p) = parse_notification::<ResourceUpdatedNotificationParams>(
                    method,
                    n.params.as_ref(),
                ) {
                    state.subscriptions.route(p);
                }
            }
            "notifications/message" => {
                if let (Some(f), Some(p)) = (
                    state.handlers.on_log.clone(),
                    parse_notification::<LoggingMessageNotificationParams>(
                        method,
                        n.params.as_ref(),
                    ),
                ) {
                    run_callback(method, move || f(p));
                }
            }
            "notifications/elicitation/complete" => {
                let Some(p) = parse_notification::<ElicitationCompleteNotificationParams>(
                    method,
                    n.params.as_ref(),
                ) else {
                    return;
                };
                // `[EL-9]`: unknown or already-completed ids are ignored.
                if !state.forget_elicitation(&p.elicitation_id) {
                    tracing::debug!(id = %p.elicitation_id, "completion of an unknown elicitation ignored");
                    return;
                }
                if let Some(f) = state.handlers.on_elicitation_complete.clone() {
                    run_callback(method, move || f(p));
                }
            }
            "notifications/cancelled" | "notifications/progress" => {}
            m => tracing::debug!(method = m, "server notification without a handler"),
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
            Phase::Handshake => match (kind, method) {
                (MessageKind::Request, "initialize" | "ping") => Ok(()),
                (
                    MessageKind::Notification,
                    "notifications/initialized" | "notifications/cancelled",
                ) => Ok(()),
                _ => refuse("the handshake has not completed".into()),
            },
            Phase::Ready => {
                // 2024-11-05 had `completion/complete` but no capability for it (§8.5).
                let ungated = method == "completion/complete"
                    && !version.is_some_and(|v| v.supports(Feature::CompletionsCapability));
                if kind == MessageKind::Request && !ungated {
                    if let Some(false) = caps.as_ref().and_then(|c| c.declares_method(method)) {
                        let cap = switchboard_types::gates::capability_of(method);
                        return refuse(format!("the server did not declare {cap}"));
                    }
                }
                if method == "notifications/roots/list_changed"
                    && !self.state.declares_roots_list_changed()
                {
                    return refuse("this client did not declare roots.listChanged".into());
                }
                Ok(())
            }
        }
    }

    fn batch_allowed(&self) -> bool {
        self.state
            .version()
            .is_some_and(|v| v.supports(Feature::Batching))
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
