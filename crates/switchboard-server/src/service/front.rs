//! The modern front door (revision 2026-07-28): a request on a modern connection climbs the
//! validation ladder (`[D26-12]`: envelope, headers, version, method), runs its route with the
//! request's modern facts ([`ModernCall`]), and its outcome becomes this revision's result: an
//! input-required round, a task (the tasks extension), or the handler's result with the members
//! this revision adds. Also the tasks extension's own routes (`tasks/get`, `tasks/update`,
//! `tasks/cancel`), which replace the 2025 task methods in this era.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value};
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::catalogue;
use switchboard_types::error::echo;
use switchboard_types::methods;
use switchboard_types::modern::{self as wire, InputRequiredResult, TASKS_EXTENSION};
use switchboard_types::{ErrorCode, ErrorObject, ProtocolVersion, Request, ServerCapabilities};

use super::{ServerInner, ServerService, ok};
use crate::modern::mrtr::{Stopped, Suspendable};
use crate::modern::params::{self, FrontParams};
use crate::modern::{ModernCall, seal, tasks};
use crate::policy::{AllowList, ClientIdentity};
use crate::router::{RequestRoute, ready};

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

impl ServerInner {
    /// `_meta` holding `serverInfo` (`[D26-19]` results SHOULD identify the server).
    pub(crate) fn server_info_meta(&self) -> Map<String, Value> {
        self.results.server_info()
    }

    /// The modern revisions served, as strings.
    pub(crate) fn modern_version_names(&self) -> Vec<&'static str> {
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
        owner: &str,
        e: ErrorObject,
        caps: &switchboard_types::ClientCapabilities,
    ) -> HandlerResult {
        if e.code == ErrorCode::RESOURCE_NOT_FOUND {
            let mut e = e;
            e.code = ErrorCode::INVALID_PARAMS;
            return Err(e);
        }
        if e.code == ErrorCode::URL_ELICITATION_REQUIRED
            && switchboard_types::catalogue::may_require_input(method)
        {
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
                let state = self.sealer.seal(method, target, owner, BTreeMap::new())?;
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
        // The caller a sealed requestState is bound to (issue 25, finding 7).
        let owner = crate::arrival::auth_of(&cx)
            .map(|a| a.owner_key())
            .unwrap_or_default();
        let prepared = match self.modern_prepare(&req, &owner) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
        let (route, call, target) = prepared;
        call.task.set_owner(tasks::owner_of(&cx));
        let view = self.with_modern(call.clone());
        let method = req.method.clone();
        let fut = match route {
            RequestRoute::Builtin(f) => f.as_ref()(&view, req, cx),
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
                            match server.modern_error(
                                &method,
                                &target,
                                &owner,
                                e,
                                call.capabilities(),
                            ) {
                                // An input-required result: a round before any task.
                                Ok(asked) => return Ok(asked),
                                Err(e) => Err(e),
                            }
                        }
                    };
                    if let Some(answer) =
                        tasks::settle_required(&server.modern_tasks, &call, &outcome).await
                    {
                        return answer;
                    }
                    match outcome {
                        Ok(raw) if call.written.load(Ordering::Relaxed) => Ok(raw),
                        Ok(raw) => server.finish(&method, raw.get()),
                        Err(e) => Err(e),
                    }
                }
                Err(Stopped::Working) => {
                    tasks::detach(server.modern_tasks.clone(), call, running.into_inner()).await
                }
                Err(Stopped::MissingCapability(required)) => Err(wire::missing_capability(
                    format!(
                        "{} needs a client capability this request did not declare",
                        echo(&method)
                    ),
                    &required,
                )),
                Err(Stopped::InputRequired { asked, carried }) => {
                    let state = server.sealer.seal(&method, &target, &owner, carried)?;
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
        owner: &str,
    ) -> Result<(RequestRoute<ServerService>, Arc<ModernCall>, String), ErrorObject> {
        let server = &self.server;
        // 1. The envelope, read with the few other members the front door needs in one pass.
        let params = match &req.params {
            None => return Err(wire::EnvelopeError::NoParams.to_error_object()),
            Some(p) => FrontParams::read(p).ok_or_else(|| params_not_object(&req.method))?,
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
        let route = match route(&req.method, &server.capabilities) {
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
        let may_require_input = switchboard_types::catalogue::may_require_input(&req.method);
        let target = params.target();
        let mut answers = BTreeMap::new();
        if may_require_input {
            match params.request_state {
                None => {}
                Some(raw) => match params::as_str(raw) {
                    Some(s) => answers = server.sealer.open(&s, &req.method, &target, owner)?,
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
}

/// The route of a tasks-extension method in the modern era, when the server offers the
/// extension (`[D26-137]`: `tasks/result` and `tasks/list` have none, so they are -32601).
pub(crate) fn route(
    method: &str,
    caps: &ServerCapabilities,
) -> Option<crate::router::Builtin<ServerService>> {
    if !tasks::offered(caps) {
        return None;
    }
    let method = match method {
        methods::TASKS_GET => methods::TASKS_GET,
        methods::TASKS_UPDATE => methods::TASKS_UPDATE,
        methods::TASKS_CANCEL => methods::TASKS_CANCEL,
        _ => return None,
    };
    Some(std::sync::Arc::new(move |s: &ServerService, r, cx| {
        s.modern_task_request(r, cx, method)
    }))
}

impl ServerService {
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (`[D26-133]`..`[D26-139]`).
    fn modern_task_request(
        &self,
        req: Request,
        cx: RequestContext,
        method: &'static str,
    ) -> BoxFuture<HandlerResult> {
        let hub = self.server.modern_tasks.clone();
        let owner = tasks::owner_of(&cx);
        let declares = self
            .modern
            .as_ref()
            .is_some_and(|c| tasks::declared(c.capabilities()));
        Box::pin(async move {
            if !declares {
                return Err(tasks::extension_required(format!(
                    "{method} needs the {TASKS_EXTENSION} extension in this request's capabilities"
                )));
            }
            let params: Map<String, Value> = crate::router::parse(&req)?;
            tasks::serve(&hub, &owner, method, &params).await
        })
    }
}
