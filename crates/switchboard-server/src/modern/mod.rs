//! The modern era (revision 2026-07-28): the second front door of the same server.
//!
//! A connection's era is decided by what opens it (`ConnEra`, `[D26-120]`): `initialize`
//! opens a 2025-era session (the legacy front door in `service`); a request whose `_meta`
//! carries the protocol version opens a modern connection, on which every request stands alone
//! (`[D26-5]`). A Streamable HTTP request routed to the modern era arrives on a connection of its
//! own that is modern from the start, with its `Mcp-*` headers ([`HttpFacts`]).
//!
//! Each modern request climbs the validation ladder (`[D26-12]`): envelope (-32602), headers
//! (-32020), version (-32022), method (-32601, also for the methods this revision removed); then
//! the same handlers as in a 2025 session run, with a context that answers their requests for
//! client input from the request's `inputResponses` and sealed `requestState`
//! (`mrtr`); what they return gets the members this revision adds (`resultType`,
//! `_meta.serverInfo`, caching hints on cacheable results).

pub(crate) mod finish;
pub mod headers;
pub(crate) mod listen;
pub(crate) mod mrtr;
pub(crate) mod params;
pub(crate) mod seal;
pub(crate) mod tasks;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::catalogue::{self, Method, SubscriptionsAcknowledged};
use switchboard_types::error::echo;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::methods;
use switchboard_types::modern::{
    self as wire, CacheHints, DiscoverResult, InputRequiredResult, ResultType,
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
};
use switchboard_types::{ErrorCode, ErrorObject, ProtocolVersion, Request, ServerCapabilities};

pub use headers::HttpFacts;
pub use listen::{DEFAULT_MAX_LISTENERS, LISTENER_QUEUE};
pub(crate) use mrtr::{Asked, ModernCall};
pub use seal::{DEFAULT_STATE_TTL, MAX_STATE_BYTES};

use crate::policy::{AllowList, ClientIdentity};
use crate::router::RequestRoute;
use crate::service::{ServerInner, ServerService};
use mrtr::{Stopped, Suspendable};
use params::FrontParams;

/// Which era a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub(crate) enum ConnEra {
    /// Nothing has opened it yet.
    #[default]
    Undecided = 0,
    /// `initialize` opened it (or it resumed a 2025-era session).
    Legacy = 1,
    /// A modern request opened it, or its transport routed it to the modern era.
    Modern = 2,
}

impl ConnEra {
    pub(crate) fn from_u8(v: u8) -> Self {
        match v {
            1 => ConnEra::Legacy,
            2 => ConnEra::Modern,
            _ => ConnEra::Undecided,
        }
    }
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

fn ok<T: serde::Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
}

/// -32602 for params that are not an object at all.
fn params_not_object(method: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!(
            "Invalid params for {}: params must be an object carrying _meta",
            echo(method)
        ),
    )
    .with_data(serde_json::json!({"reason": "invalid_envelope", "spec": "D26-9"}))
}

/// The server's capabilities as this revision has them: no `tasks`, the tasks extension
/// instead when tools may run as tasks (`[D26-137]`).
pub(crate) fn capabilities(caps: &ServerCapabilities) -> ServerCapabilities {
    let mut modern = caps.clone();
    modern.tasks = None;
    tasks::advertise(&mut modern, tasks::offered(caps));
    modern
}

impl ServerInner {
    /// `_meta` holding `serverInfo` (`[D26-19]` results SHOULD identify the server).
    pub(crate) fn server_info_meta(&self) -> Map<String, Value> {
        self.results.server_info()
    }

    /// The modern revisions served, as strings.
    fn modern_version_names(&self) -> Vec<&'static str> {
        self.modern_versions.iter().map(|v| v.as_str()).collect()
    }

    /// A handler's error as this revision has it (`[D26-118]`, `[D26-119]`): the retired
    /// resource-not-found code becomes -32602, and a URL elicitation required (-32042) becomes an
    /// input-required result asking for those URLs (the client retries once the user has been
    /// there; the handler knows from its own store whether the step is done).
    fn modern_error(
        &self,
        method: &str,
        target: &str,
        e: ErrorObject,
        caps: &switchboard_types::ClientCapabilities,
    ) -> HandlerResult {
        if e.code == ErrorCode::RESOURCE_NOT_FOUND {
            let mut e = e;
            e.code = ErrorCode::INVALID_PARAMS;
            return Err(e);
        }
        if e.code == ErrorCode::URL_ELICITATION_REQUIRED && wire::may_require_input(method) {
            let data = e.data.clone().and_then(|d| {
                serde_json::from_value::<
                    switchboard_types::elicitation::URLElicitationRequiredErrorData,
                >(d)
                .ok()
            });
            if let Some(data) = data.filter(|d| !d.elicitations.is_empty()) {
                let asked: BTreeMap<String, wire::InputRequest> = data
                    .elicitations
                    .into_iter()
                    .map(|u| {
                        (
                            u.elicitation_id.clone(),
                            wire::InputRequest::Elicit(u.into()),
                        )
                    })
                    .collect();
                if let Some(r) = asked.values().find(|r| !r.allowed_by(caps)) {
                    return Err(wire::missing_capability(
                        format!("{} needs URL-mode elicitation", echo(method)),
                        &r.required_capability(),
                    ));
                }
                let state = self.sealer.seal(method, target, BTreeMap::new())?;
                let mut result = InputRequiredResult::new(asked, Some(state));
                result.meta = Some(self.server_info_meta());
                return ok(&result);
            }
            return Err(ErrorObject::internal("a URL elicitation was required")
                .with_data(serde_json::json!({"reason": "url_elicitation_required"})));
        }
        Err(e)
    }

    /// A handler's result with the members this revision adds (see [`finish`]).
    fn finish(&self, method: &str, raw: &str) -> HandlerResult {
        self.results.finish(method, raw)
    }
}

impl ServerService {
    /// The modern front door (see the module docs).
    pub(crate) fn modern_call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let prepared = match self.modern_prepare(&req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
        let (route, call, target) = prepared;
        call.task.set_owner(tasks::owner_of(&cx));
        let view = self.with_modern(call.clone());
        let method = req.method.clone();
        let fut = match route {
            RequestRoute::Builtin(f) => f(&view, req, cx),
            RequestRoute::User(h) => h(req.params, view.context(cx)),
        };
        let server = self.server.clone();
        Box::pin(async move {
            let mut running = Suspendable::new(fut, call.clone());
            let stopped = (&mut running).await;
            match stopped {
                Ok(outcome) => {
                    let outcome = match outcome {
                        Ok(raw) => Ok(raw),
                        Err(e) => {
                            match server.modern_error(&method, &target, e, call.capabilities()) {
                                // An input-required result: a round before any task.
                                Ok(asked) => return Ok(asked),
                                Err(e) => Err(e),
                            }
                        }
                    };
                    if let Some(answer) = tasks::settle_required(&server, &call, &outcome).await {
                        return answer;
                    }
                    match outcome {
                        Ok(raw) => server.finish(&method, raw.get()),
                        Err(e) => Err(e),
                    }
                }
                Err(Stopped::Working) => tasks::detach(server, call, running.into_inner()).await,
                Err(Stopped::MissingCapability(required)) => Err(wire::missing_capability(
                    format!(
                        "{} needs a client capability this request did not declare",
                        echo(&method)
                    ),
                    &required,
                )),
                Err(Stopped::InputRequired { asked, carried }) => {
                    let state = server.sealer.seal(&method, &target, carried)?;
                    let mut result = InputRequiredResult::new(asked, Some(state));
                    result.meta = Some(server.server_info_meta());
                    ok(&result)
                }
            }
        })
    }

    /// The validation ladder (`[D26-12]`), then the request's modern facts.
    #[allow(clippy::type_complexity)]
    fn modern_prepare(
        &self,
        req: &Request,
    ) -> Result<(RequestRoute<ServerService>, Arc<ModernCall>, String), ErrorObject> {
        let server = &self.server;
        // 1. The envelope, read with the few other members the front door needs in one pass.
        let params = match &req.params {
            None => return Err(wire::EnvelopeError::NoParams.to_error_object()),
            Some(p) => FrontParams::read(p.get()).ok_or_else(|| params_not_object(&req.method))?,
        };
        let envelope = match server.envelopes.read(params.meta) {
            Ok(e) => e,
            // A 2025 client's `initialize` on a modern connection: name the versions served
            // here, the one thing such a client can act on (SPEC-2026-NOTES §6).
            Err(_) if req.method == methods::INITIALIZE => {
                let offered = params.str_member("protocolVersion").unwrap_or_default();
                return Err(wire::unsupported_version(
                    &offered,
                    &server.modern_version_names(),
                ));
            }
            Err(e) => return Err(e.to_error_object()),
        };
        // 2. The HTTP headers against the body.
        if let Some(http) = self.state.http_facts() {
            http.check_envelope(&envelope.protocol_version, &req.method)?;
            http.check_name(&req.method, |member| params.str_member(member))?;
        }
        // 3. The revision.
        let served = ProtocolVersion::parse(&envelope.protocol_version)
            .filter(|v| server.modern_versions.contains(v));
        if served.is_none() {
            return Err(wire::unsupported_version(
                &envelope.protocol_version,
                &server.modern_version_names(),
            ));
        }
        let version = served.unwrap_or(ProtocolVersion::V2026_07_28);
        // 4. The method: one this revision has and this server serves (the tasks extension's
        // when the server offers it).
        let route = match tasks::route(&req.method, &server.capabilities) {
            Some(f) => RequestRoute::Builtin(f),
            None => {
                let entry = server.router.request(&req.method);
                let in_revision =
                    catalogue::request(&req.method).is_none_or(|s| s.exists_in(version));
                let Some(entry) = entry.filter(|_| in_revision) else {
                    return Err(ErrorObject::method_not_found(&req.method));
                };
                if let Some(spec) = entry.spec {
                    self.gate_capability(spec, &req.method, Some(version))?;
                }
                entry.handler.clone()
            }
        };
        // 5. The answers gathered in earlier rounds and this one.
        let may_require_input = wire::may_require_input(&req.method);
        let target = params.target();
        let mut answers = BTreeMap::new();
        if may_require_input {
            match params.request_state {
                None => {}
                Some(raw) => match params::as_str(raw) {
                    Some(s) => answers = server.sealer.open(&s, &req.method, &target)?,
                    None => return Err(seal::bad_state("not a string")),
                },
            }
            match params.input_responses {
                None => {}
                Some(raw) => match params::as_object(raw) {
                    Some(responses) => answers.extend(responses),
                    None => {
                        return Err(ErrorObject::new(
                            ErrorCode::INVALID_PARAMS,
                            "Invalid params: inputResponses must be an object",
                        )
                        .with_data(serde_json::json!({"reason": "invalid_input_responses"})));
                    }
                },
            }
        }
        let allow = match &server.policy {
            None => AllowList::All,
            Some(policy) => policy(&ClientIdentity {
                info: envelope
                    .client_info
                    .clone()
                    .unwrap_or_else(|| switchboard_types::Implementation::new("", "")),
                capabilities: envelope.client_capabilities.clone(),
            }),
        };
        let call = Arc::new(ModernCall::new(envelope, may_require_input, answers, allow));
        Ok((route, call, target))
    }

    /// `server/discover` (`[D26-24]`, `[D26-25]`).
    pub(crate) fn discover(&self) -> HandlerResult {
        let server = &self.server;
        ok(&DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: server
                .modern_version_names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            capabilities: capabilities(&server.capabilities),
            instructions: server.instructions.clone(),
            cache: server.cache,
            meta: Some(server.server_info_meta()),
            extra: Map::new(),
        })
    }

    /// `subscriptions/listen` (`[D26-67]`..`[D26-76]`): the acknowledgement first, then the
    /// events asked for, each tagged with this request's id, until the client goes away or the
    /// server closes its listen streams (the request is then answered).
    pub(crate) fn listen(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        // The filter is kept as long as the stream is open: bounded in bytes like a session's
        // `initialize` params (URI and task-id lists could otherwise be a body's worth each).
        if let Err(e) = crate::service::params_within(
            &req,
            self.server.max_initialize_bytes,
            "listen_too_large",
        ) {
            return ready(Err(e));
        }
        let params: SubscriptionsListenRequestParams = match crate::service::parse(&req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
        if let Err(e) = tasks::check_listen(self.modern.as_deref(), &params.notifications) {
            return ready(Err(e));
        }
        let agreed = listen::agreed(&params.notifications, &self.server.capabilities);
        let owner = tasks::owner_of(&cx);
        let Some(mut listening) = self.server.audience.listeners.open(agreed.clone(), owner) else {
            return ready(Err(ErrorObject::internal("too many open listen streams")
                .with_data(serde_json::json!({"reason": "too_many_listen_streams"}))));
        };
        Box::pin(async move {
            let meta = wire::subscription_meta(cx.id());
            let ack = SubscriptionsAcknowledgedNotificationParams {
                notifications: agreed,
                meta: Some(meta.clone()),
            };
            cx.peer()
                .notify(SubscriptionsAcknowledged::NAME, Some(&ack))
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
            while let Some(event) = listening.events.recv().await {
                let (method, mut params) = match event {
                    listen::Event::ToolsListChanged => {
                        (methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, Map::new())
                    }
                    listen::Event::PromptsListChanged => {
                        (methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED, Map::new())
                    }
                    listen::Event::ResourcesListChanged => {
                        (methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED, Map::new())
                    }
                    listen::Event::ResourceUpdated(uri) => {
                        let mut p = Map::new();
                        p.insert("uri".into(), Value::String(uri));
                        (methods::NOTIFICATIONS_RESOURCES_UPDATED, p)
                    }
                    listen::Event::Task(_, _, task) => (
                        methods::NOTIFICATIONS_TASKS,
                        serde_json::from_str(&task).unwrap_or_default(),
                    ),
                };
                params.insert("_meta".into(), Value::Object(meta.clone()));
                if cx.peer().notify(method, Some(&params)).await.is_err() {
                    break;
                }
            }
            ok(&serde_json::json!({"_meta": meta}))
        })
    }
}

/// The cache hints a server puts on its cacheable results unless a handler set its own.
pub const DEFAULT_CACHE_HINTS: CacheHints = CacheHints {
    ttl_ms: 0,
    cache_scope: wire::CacheScope::Private,
};

/// What a handler's ask found, for the context (see [`mrtr`]).
pub(crate) async fn ask<R: serde::de::DeserializeOwned>(
    call: &ModernCall,
    key: Option<&str>,
    request: wire::InputRequest,
) -> Option<R> {
    if call.task.is_running() {
        return tasks::ask(call, key, request).await;
    }
    match call.ask::<R>(key, request) {
        Asked::Answer(r) => Some(r),
        // The front door drops this future once the handler's poll ends.
        Asked::Suspend => std::future::pending().await,
        Asked::NotHere => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;
    use switchboard_types::Implementation;
    use switchboard_types::tools::{CallToolResult, TaskSupport, Tool};

    use super::*;

    /// A listed tool carries only members of the 2026-07-28 `Tool`: 2025's `execution` stays in
    /// 2025 sessions.
    #[tokio::test]
    async fn modern_tools_list_drops_the_2025_execution_member() {
        let server = crate::Server::builder(Implementation::new("listing", "1"))
            .tool(
                Tool::new("maybe_task", json!({"type": "object"}))
                    .with_task_support(TaskSupport::Optional),
                |_| async { Ok(CallToolResult::text("done")) },
            )
            .build()
            .unwrap();
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        server.serve(ours).unwrap();
        let list = json!({"jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_LIST,
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}});
        theirs.send_text(list.to_string()).await.unwrap();
        let reply: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        let tool = &reply["result"]["tools"][0];
        assert_eq!(tool["name"], "maybe_task", "{reply}");
        assert!(tool.get("execution").is_none(), "{reply}");
        assert_eq!(reply["result"]["resultType"], "complete");
    }
}
