//! Client side: the client's own answers to the server's requests (`ping`,
//! `sampling/createMessage`, `elicitation/create`, `roots/list`), with the checks the spec puts on
//! the client before a handler runs: `[EL-1]` (no `mode` means form), `[EL-4]` (an undeclared
//! mode gets -32602), `[EL-5]` (a URL-mode URL that is no absolute http(s) URL gets -32602),
//! `[CP-5]` (sampling with tools needs `sampling.tools`), `[SA-2]` / `[SA-3]` (the tool loop's
//! message shape, -32602); a roots provider's roots are checked as the builder's are (`[RO-1]`,
//! `[RO-3]`, -32603 when one is refused).
//!
//! Each answer is keyed by its catalogue marker ([`Answer`] on [`CreateMessage`], [`Elicit`],
//! [`ListRoots`], [`Ping`]) and takes that marker's typed params: the same answer serves a 2025
//! server's request (routed by `router`) and a 2026-07-28 input request (`inputs`).

use std::collections::HashSet;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::catalogue::{CreateMessage, Elicit, ListRoots, Ping, RequestMethod};
use switchboard_types::elicitation::{ElicitAction, ElicitRequestParams};
use switchboard_types::error::echo;
use switchboard_types::jsonrpc::{empty_object, to_raw};
use switchboard_types::roots::ListRootsResult;
use switchboard_types::sampling::{
    CreateMessageRequestParams, SamplingMessage, SamplingMessageContentBlock,
};
use switchboard_types::tasks::TaskMetadata;
use switchboard_types::{ErrorCode, ErrorObject, Feature, Request, Role};

use crate::serve_task::{self, TaskKind};
use crate::state::ClientState;

/// A server-to-client request this client answers itself: its params, read as its catalogue
/// marker types them, and its answer.
pub(crate) trait Answer: RequestMethod {
    /// The request's params; -32602 when they do not fit [`RequestMethod::Params`].
    fn params(req: &Request) -> Result<Self::Params, ErrorObject> {
        parse(req)
    }

    /// The answer (the result, or the task that will produce it).
    fn answer(
        state: Arc<ClientState>,
        params: Self::Params,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult>;
}

impl Answer for Ping {
    /// `ping` reads no params (`_meta` is the engine's): any are accepted.
    fn params(_: &Request) -> Result<Self::Params, ErrorObject> {
        Ok(Self::Params::default())
    }

    fn answer(_: Arc<ClientState>, _: Self::Params, _: RequestContext) -> BoxFuture<HandlerResult> {
        Box::pin(std::future::ready(Ok(empty_object())))
    }
}

impl Answer for CreateMessage {
    fn answer(
        state: Arc<ClientState>,
        params: CreateMessageRequestParams,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        Box::pin(async move { sampling(&state, params, cx).await })
    }
}

impl Answer for Elicit {
    fn answer(
        state: Arc<ClientState>,
        params: ElicitRequestParams,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        Box::pin(async move { elicitation(&state, params, cx).await })
    }
}

impl Answer for ListRoots {
    /// `roots/list` reads no params (`_meta` is the engine's): any are accepted.
    fn params(_: &Request) -> Result<Self::Params, ErrorObject> {
        Ok(Self::Params::default())
    }

    fn answer(
        state: Arc<ClientState>,
        _: Self::Params,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        Box::pin(async move { roots(&state, cx).await })
    }
}

/// Parses a request's params (absent: `{}`); -32602 when they do not fit.
fn parse<P: DeserializeOwned>(req: &Request) -> Result<P, ErrorObject> {
    let text = req.params.as_ref().map_or("{}", |p| p.get());
    // The parser's message may quote the peer's text (a string of the wrong type, an unknown
    // variant): the error echoes it cut, and so does the method name.
    serde_json::from_str(text).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "invalid params for {}: {}",
            echo(&req.method),
            echo(&e.to_string())
        ))
    })
}

fn encode<R: Serialize>(r: &R) -> HandlerResult {
    to_raw(r).map_err(|e| ErrorObject::internal(format!("result not serializable: {e}")))
}

fn invalid(message: impl Into<String>, reason: &str, tag: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::INVALID_PARAMS, message)
        .with_data(json!({"reason": reason, "spec": tag}))
}

/// `sampling/createMessage`, after `[CP-5]` and `[SA-2]` / `[SA-3]`.
async fn sampling(
    state: &ClientState,
    params: CreateMessageRequestParams,
    cx: RequestContext,
) -> HandlerResult {
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
    let task = params.task.clone();
    let work = {
        let cx = cx.clone();
        async move { encode(&handler(params, cx).await?) }
    };
    maybe_as_task(state, TaskKind::Sampling, task.as_ref(), &cx, work).await
}

/// Runs `work` as a task when the request asked for one and this client runs requests of
/// `kind` as tasks; otherwise as a plain request (`[TK-6]`).
async fn maybe_as_task<W>(
    state: &ClientState,
    kind: TaskKind,
    task: Option<&TaskMetadata>,
    cx: &RequestContext,
    work: W,
) -> HandlerResult
where
    W: std::future::Future<Output = HandlerResult> + Send + 'static,
{
    match (task, &state.tasks) {
        (Some(task), Some(tasks))
            if serve_task::runs_as_task(&state.capabilities, state.version(), kind) =>
        {
            serve_task::run(tasks, state.scope, task, cx, work).await
        }
        _ => work.await,
    }
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
                format!(
                    "message {i}: tool_use {:?} is not answered by the next message",
                    echo(missing)
                ),
                "tool_use_unanswered",
                "SA-3",
            ));
        }
    }
    Ok(())
}

/// `elicitation/create`, after `[EL-1]` and `[EL-4]`.
async fn elicitation(
    state: &Arc<ClientState>,
    params: ElicitRequestParams,
    cx: RequestContext,
) -> HandlerResult {
    let version = state.version();
    // `[EL-1]`: no `mode` parsed as form. `[EL-4]`: an undeclared mode gets -32602.
    let (mode, declared) = match &params {
        ElicitRequestParams::Form(_) => ("form", state.capabilities.supports_form_elicitation()),
        ElicitRequestParams::Url(_) => (
            "url",
            state.capabilities.supports_url_elicitation()
                && version.is_some_and(|v| v.supports(Feature::UrlElicitation) || v.is_modern()),
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
    // `[EL-5]`, `[SEC-URL-4]`: a URL the host would be asked to open is checked first; a bad
    // one never reaches the handler.
    if let ElicitRequestParams::Url(u) = &params
        && let Some(why) = u.url_problem()
    {
        return Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("the elicitation URL is refused: {why}"),
        )
        .with_data(json!({"reason": "elicitation_url_invalid", "spec": "EL-5"})));
    }
    let Some(handler) = state.handlers.elicitation.clone() else {
        return Err(ErrorObject::internal(
            "no handler installed for elicitation/create",
        ));
    };
    // 2026-07-28 URL elicitations have no id (nothing announces their completion): none is
    // remembered.
    let url_id = match &params {
        ElicitRequestParams::Url(u) if !u.elicitation_id.is_empty() => {
            Some(u.elicitation_id.clone())
        }
        _ => None,
    };
    // Remembered before the handler runs, so a completion that races the answer is recognised.
    if let Some(id) = &url_id {
        state.remember_elicitation(id.clone());
    }
    let task = params.task().cloned();
    let work = {
        let cx = cx.clone();
        let state = state.clone();
        async move {
            let result = handler(params, cx).await;
            if let Some(id) = &url_id
                && !matches!(&result, Ok(r) if r.action == ElicitAction::Accept)
            {
                state.forget_elicitation(id);
            }
            encode(&result?)
        }
    };
    maybe_as_task(state, TaskKind::Elicitation, task.as_ref(), &cx, work).await
}

/// `roots/list`: the provider's roots, or the client's own list.
async fn roots(state: &ClientState, cx: RequestContext) -> HandlerResult {
    let roots = match state.handlers.roots_provider.clone() {
        // `[RO-1]`, `[RO-3]`, `[SEC-RES-1]`: the provider's roots are held to the rules the
        // builder's are; a bad one is not sent, nor any other.
        Some(provider) => {
            let roots = provider(cx).await?;
            if let Some((root, why)) = crate::handlers::refused_root(&roots) {
                return Err(ErrorObject::internal(format!(
                    "the roots provider gave a refused root {:?}: {why}",
                    echo(&root.uri)
                )));
            }
            roots
        }
        None => state.roots(),
    };
    encode(&ListRootsResult::new(roots))
}
