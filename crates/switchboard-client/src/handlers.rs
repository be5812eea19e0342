//! Client side: the handlers a client installs for the server's requests (`sampling/createMessage`,
//! `elicitation/create`, `roots/list`) and its callbacks for server notifications
//! (`notifications/message`, `notifications/elicitation/complete`), and how requests reach them.
//!
//! Handlers are async closures returning `Result<result type, ErrorObject>`; an `Err` is sent as
//! the wire error, and a panic becomes -32603 (the engine catches it; the session lives on).
//! The checks the spec puts on the client happen here, before a handler runs: `[EL-1]` (no
//! `mode` means form), `[EL-4]` (an undeclared mode gets -32602), `[CP-5]` (sampling with tools
//! needs `sampling.tools`), `[SA-2]` / `[SA-3]` (the tool loop's message shape, -32602).

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::capabilities::{ClientCapabilities, ElicitationCapability, RootsCapability};
use switchboard_types::elicitation::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::logging::LoggingMessageNotificationParams;
use switchboard_types::meta::EmptyObject;
use switchboard_types::roots::{ListRootsResult, Root};
use switchboard_types::sampling::{
    CreateMessageRequestParams, CreateMessageResult, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard_types::{ErrorCode, ErrorObject, Feature, RawJson, Request, Role};

use crate::state::ClientState;

/// What a request handler returns: the typed result, or the wire error to answer with.
pub type HandlerFuture<R> = BoxFuture<Result<R, ErrorObject>>;

pub(crate) type SamplingFn = Arc<
    dyn Fn(CreateMessageRequestParams, RequestContext) -> HandlerFuture<CreateMessageResult>
        + Send
        + Sync,
>;
pub(crate) type ElicitationFn =
    Arc<dyn Fn(ElicitRequestParams, RequestContext) -> HandlerFuture<ElicitResult> + Send + Sync>;
pub(crate) type RootsFn = Arc<dyn Fn(RequestContext) -> HandlerFuture<Vec<Root>> + Send + Sync>;
pub(crate) type LogFn = Arc<dyn Fn(LoggingMessageNotificationParams) + Send + Sync>;
pub(crate) type ElicitationCompleteFn =
    Arc<dyn Fn(ElicitationCompleteNotificationParams) + Send + Sync>;

/// Boxes an async closure of one argument plus the request context.
pub(crate) fn boxed<P, R, F, Fut>(
    f: F,
) -> Arc<dyn Fn(P, RequestContext) -> HandlerFuture<R> + Send + Sync>
where
    F: Fn(P, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, ErrorObject>> + Send + 'static,
    P: 'static,
    R: 'static,
{
    Arc::new(move |p, cx| Box::pin(f(p, cx)))
}

/// Which elicitation modes a client with an elicitation handler declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ElicitationModes {
    pub(crate) form: bool,
    pub(crate) url: bool,
}

/// Everything installed on the builder for the server's requests and notifications.
#[derive(Clone)]
pub(crate) struct Handlers {
    pub(crate) sampling: Option<SamplingFn>,
    pub(crate) elicitation: Option<ElicitationFn>,
    pub(crate) elicitation_modes: ElicitationModes,
    pub(crate) roots_provider: Option<RootsFn>,
    /// `Some` when the builder was given a root list.
    pub(crate) roots: Option<Vec<Root>>,
    pub(crate) on_log: Option<LogFn>,
    pub(crate) on_elicitation_complete: Option<ElicitationCompleteFn>,
}

impl Default for Handlers {
    fn default() -> Self {
        Handlers {
            sampling: None,
            elicitation: None,
            elicitation_modes: ElicitationModes {
                form: true,
                url: false,
            },
            roots_provider: None,
            roots: None,
            on_log: None,
            on_elicitation_complete: None,
        }
    }
}

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("elicitation_modes", &self.elicitation_modes)
            .field("roots_provider", &self.roots_provider.is_some())
            .field("roots", &self.roots)
            .field("on_log", &self.on_log.is_some())
            .field(
                "on_elicitation_complete",
                &self.on_elicitation_complete.is_some(),
            )
            .finish()
    }
}

impl Handlers {
    /// The capabilities the installed handlers declare; `explicit` members win (`[CP-2]`).
    pub(crate) fn effective_capabilities(
        &self,
        explicit: &ClientCapabilities,
    ) -> ClientCapabilities {
        let mut caps = explicit.clone();
        if caps.sampling.is_none() && self.sampling.is_some() {
            caps.sampling = Some(Default::default());
        }
        if caps.elicitation.is_none() && self.elicitation.is_some() {
            let ElicitationModes { form, url } = self.elicitation_modes;
            // `{}` alone means form only (`[CP-4]`), and is the only shape 2025-06-18 knows.
            caps.elicitation = Some(if url {
                ElicitationCapability {
                    form: form.then(EmptyObject::default),
                    url: Some(EmptyObject::default()),
                    ..Default::default()
                }
            } else {
                ElicitationCapability::default()
            });
        }
        if caps.roots.is_none() && (self.roots_provider.is_some() || self.roots.is_some()) {
            caps.roots = Some(RootsCapability {
                list_changed: Some(true),
                ..Default::default()
            });
        }
        caps
    }
}

/// URL-mode elicitation ids the server may still complete (`[EL-9]`: others are ignored).
#[derive(Debug, Default)]
pub(crate) struct PendingElicitations {
    order: VecDeque<String>,
    ids: HashSet<String>,
}

/// How many URL elicitation ids are remembered; the oldest is forgotten first.
const MAX_PENDING_ELICITATIONS: usize = 256;

impl PendingElicitations {
    pub(crate) fn insert(&mut self, id: String) {
        if self.ids.contains(&id) {
            return;
        }
        if self.order.len() == MAX_PENDING_ELICITATIONS {
            if let Some(old) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
        self.ids.insert(id.clone());
        self.order.push_back(id);
    }

    /// Forgets `id`; whether it was pending.
    pub(crate) fn remove(&mut self, id: &str) -> bool {
        if self.ids.remove(id) {
            self.order.retain(|i| i != id);
            true
        } else {
            false
        }
    }
}

fn parse<P: DeserializeOwned>(req: &Request) -> Result<P, ErrorObject> {
    let text = req.params.as_ref().map_or("{}", |p| p.get());
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params for {}: {e}", req.method)))
}

fn encode<R: Serialize>(r: &R) -> HandlerResult {
    to_raw(r).map_err(|e| ErrorObject::internal(format!("result not serializable: {e}")))
}

fn invalid(message: impl Into<String>, reason: &str, tag: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
        .with_data(json!({"reason": reason, "spec": tag}))
}

/// Answers one server request whose capability the client declared.
pub(crate) fn dispatch(
    state: Arc<ClientState>,
    req: Request,
    cx: RequestContext,
) -> BoxFuture<HandlerResult> {
    Box::pin(async move {
        match req.method.as_str() {
            "sampling/createMessage" => sampling(&state, &req, cx).await,
            "elicitation/create" => elicitation(&state, &req, cx).await,
            "roots/list" => roots(&state, cx).await,
            m => Err(ErrorObject::internal(format!(
                "no handler installed for {m}"
            ))),
        }
    })
}

async fn sampling(state: &ClientState, req: &Request, cx: RequestContext) -> HandlerResult {
    let params: CreateMessageRequestParams = parse(req)?;
    if params.tools.is_some() || params.tool_choice.is_some() {
        let allowed = state.capabilities.supports_sampling_tools()
            && state
                .version()
                .is_some_and(|v| v.supports(Feature::SamplingTools));
        if !allowed {
            return Err(invalid(
                "sampling with tools or toolChoice, but this client did not declare sampling.tools",
                "sampling_tools_not_declared",
                "CP-5",
            ));
        }
    }
    check_tool_loop(&params.messages)?;
    let Some(handler) = state.handlers.sampling.clone() else {
        return Err(ErrorObject::internal(
            "no handler installed for sampling/createMessage",
        ));
    };
    encode(&handler(params, cx).await?)
}

/// `[SA-2]` / `[SA-3]`: a user message with tool results holds only tool results, and every
/// assistant `tool_use` is answered by the very next message, made of tool results only.
fn check_tool_loop(messages: &[SamplingMessage]) -> Result<(), ErrorObject> {
    for (i, m) in messages.iter().enumerate() {
        let blocks = m.content.as_slice();
        let results = blocks
            .iter()
            .filter(|b| matches!(b, SamplingMessageContentBlock::ToolResult(_)))
            .count();
        if results > 0 && (results != blocks.len() || m.role != Role::User) {
            return Err(invalid(
                format!("message {i}: tool results must make up a whole user message"),
                "tool_results_mixed",
                "SA-2",
            ));
        }
        let uses: Vec<&str> = blocks
            .iter()
            .filter_map(|b| match b {
                SamplingMessageContentBlock::ToolUse(u) => Some(u.id.as_str()),
                _ => None,
            })
            .collect();
        if uses.is_empty() {
            continue;
        }
        let answered: HashSet<&str> = messages
            .get(i + 1)
            .map(|next| {
                next.content
                    .as_slice()
                    .iter()
                    .filter_map(|b| match b {
                        SamplingMessageContentBlock::ToolResult(r) => Some(r.tool_use_id.as_str()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        if let Some(missing) = uses.iter().find(|id| !answered.contains(*id)) {
            return Err(invalid(
                format!("message {i}: tool_use {missing:?} is not answered by the next message"),
                "tool_use_unanswered",
                "SA-3",
            ));
        }
    }
    Ok(())
}

async fn elicitation(state: &ClientState, req: &Request, cx: RequestContext) -> HandlerResult {
    let params: ElicitRequestParams = parse(req)?;
    let version = state.version();
    // `[EL-1]`: no `mode` parsed as form. `[EL-4]`: an undeclared mode gets -32602.
    let (mode, declared) = match &params {
        ElicitRequestParams::Form(_) => ("form", state.capabilities.supports_form_elicitation()),
        ElicitRequestParams::Url(_) => (
            "url",
            state.capabilities.supports_url_elicitation()
                && version.is_some_and(|v| v.supports(Feature::UrlElicitation)),
        ),
    };
    if !declared {
        return Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("elicitation mode {mode:?} was not declared by this client"),
        )
        .with_data(
            json!({"reason": "elicitation_mode_not_declared", "mode": mode, "spec": "EL-4"}),
        ));
    }
    let Some(handler) = state.handlers.elicitation.clone() else {
        return Err(ErrorObject::internal(
            "no handler installed for elicitation/create",
        ));
    };
    let url_id = match &params {
        ElicitRequestParams::Url(u) => Some(u.elicitation_id.clone()),
        ElicitRequestParams::Form(_) => None,
    };
    // Remembered before the handler runs, so a completion that races the answer is recognised.
    if let Some(id) = &url_id {
        state.remember_elicitation(id.clone());
    }
    let result = handler(params, cx).await;
    if let Some(id) = &url_id {
        if !matches!(&result, Ok(r) if r.action == ElicitAction::Accept) {
            state.forget_elicitation(id);
        }
    }
    encode(&result?)
}

async fn roots(state: &ClientState, cx: RequestContext) -> HandlerResult {
    let roots = match state.handlers.roots_provider.clone() {
        Some(provider) => provider(cx).await?,
        None => state.roots(),
    };
    encode(&ListRootsResult::new(roots))
}

/// Parses notification params, logging (not answering, `[JR-11]`) when they are malformed.
pub(crate) fn parse_notification<P: DeserializeOwned>(
    method: &str,
    params: Option<&RawJson>,
) -> Option<P> {
    let text = params.map_or("{}", |p| p.get());
    match serde_json::from_str(text) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::debug!(method, error = %e, "malformed notification ignored");
            None
        }
    }
}

/// Runs a user callback; a panic is logged, never allowed to end the session loop.
pub(crate) fn run_callback(what: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        tracing::error!(callback = what, "client callback panicked");
    }
}
