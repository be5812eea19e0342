//! Client side: one request to the server, in either era. Every typed call of
//! [`ClientSession`](crate::ClientSession) goes through [`call`].
//!
//! Legacy: the request goes out as it is. Modern (2026-07-28, SPEC-2026-NOTES §3, §4, §8, §14.2):
//! * the envelope is merged into `params._meta` (`[D26-8]`): revision, capabilities, identity,
//!   log level;
//! * the HTTP header lines the request needs are computed from its body and handed to the
//!   transport with the frame (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`
//!   from the cached tool list, `[D26-57]`, `[D26-62]`); a -32020 to `tools/call` re-lists the
//!   tools once (with the [`Relist`] the caller hands down: the listing is `listing`'s, above
//!   this module) and retries, as the spec advises;
//! * `resultType` is read (and taken out of a complete result, so that typed results look the
//!   same in both eras): missing means complete (`[D26-20]`), an unknown one is an invalid
//!   response (`[D26-21]`);
//! * an input-required result (`[D26-34]`) is answered by `inputs`, through the same sampling,
//!   elicitation and roots answers that serve a 2025 server's requests, and the request is sent
//!   again with a new id (`[D26-45]`), this round's `inputResponses` only, and `requestState`
//!   echoed exactly or left out (`[D26-42]`..`[D26-44]`); nothing of a chain reaches another
//!   request (`[D26-46]`). The rounds are bounded.

use std::sync::{Arc, Mutex};

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_types::catalogue::may_require_input;
use switchboard_types::error::echo;
use switchboard_types::http_headers::{self, ParamHeader};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::modern::ResultType;
use switchboard_types::{ErrorCode, RawJson, RequestId, methods};

use crate::error::ClientError;
use crate::inputs::{Retry, answer_inputs};
use crate::modern_task;
use crate::state::ClientState;

/// Parses the result of `method`; the parser's message may quote the server's text, so it is
/// cut like every echo.
pub(crate) fn parse_result<R: serde::de::DeserializeOwned>(
    method: &str,
    raw: &RawJson,
) -> Result<R, ClientError> {
    serde_json::from_str(raw.get()).map_err(|e| {
        let e = echo(&e.to_string()).into_owned();
        RequestError::Serde(format!("result of {method}: {e}")).into()
    })
}

/// The default bound on input-required rounds of one call.
pub(crate) const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// Re-lists the tools into the cache, as a -32020 to a modern `tools/call` asks. The listing is
/// `listing`'s, above this module: the caller hands it down.
/// Told the id of the task a `tools/call` became (a handle's
/// [`with_tasks_extension`](crate::ClientSession::with_tasks_extension)).
pub(crate) type TaskStarted = Arc<dyn Fn(&str) + Send + Sync>;

pub(crate) type Relist =
    for<'a> fn(
        &'a Peer,
        &'a Arc<ClientState>,
    ) -> Pin<Box<dyn Future<Output = Result<(), ClientError>> + Send + 'a>>;

/// Sends `method` with `params` (raw JSON text; `None` for none) in the connection's era and
/// returns the final result. `log_level` overrides the session-wide level of a modern request
/// (`Some(None)`: no log lines). `relist`: how a modern `tools/call` refreshes the tool list
/// after -32020 before trying once more (`None`: the error is returned; only `tools/call` uses
/// it). `tasks`: this handle declares the tasks extension and is told of each task a call
/// becomes ([`ClientSession::with_tasks_extension`](crate::ClientSession::with_tasks_extension)).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn call(
    peer: &Peer,
    state: &Arc<ClientState>,
    method: &str,
    params: Option<RawJson>,
    opts: RequestOptions,
    log_level: Option<Option<LoggingLevel>>,
    relist: Option<Relist>,
    tasks: Option<&TaskStarted>,
) -> Result<RawJson, ClientError> {
    let Some(envelope) = state.envelope(log_level, tasks.is_some()) else {
        return Ok(peer.request(method, params, opts).await?);
    };
    let base: Map<String, Value> = match &params {
        Some(p) => serde_json::from_str(p.get()).map_err(|e| {
            RequestError::Serde(format!("params of {method} are not an object: {e}"))
        })?,
        None => Map::new(),
    };
    let version = envelope.protocol_version.clone();
    let meta = envelope.to_meta();
    let mut param_headers = tool_headers(state, method, &base);
    let mut relisted = false;
    let mut retry: Option<Retry> = None;
    let max_rounds = state.options.max_input_rounds;
    let mut round = 0;
    loop {
        let mut p = base.clone();
        let mut m = match p.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        m.extend(meta.clone());
        p.insert("_meta".into(), Value::Object(m));
        if let Some(r) = &retry {
            if let Some(responses) = &r.responses {
                p.insert("inputResponses".into(), Value::Object(responses.clone()));
            }
            if let Some(s) = &r.state {
                p.insert("requestState".into(), Value::String(s.clone()));
            }
        }
        let mut o = opts.clone();
        o.headers.extend(http_headers::request_headers(
            method,
            &p,
            &version,
            &param_headers,
        ));
        let sent_id: Arc<Mutex<Option<RequestId>>> = Arc::default();
        let user_on_id = o.on_id.take();
        let slot = sent_id.clone();
        o = o.on_id(move |id| {
            if let Ok(mut s) = slot.lock() {
                *s = Some(id.clone());
            }
            if let Some(f) = &user_on_id {
                f(id);
            }
        });
        let raw = match peer
            .request(method, Some(to_raw(&p).map_err(RequestError::from)?), o)
            .await
        {
            Ok(raw) => raw,
            Err(RequestError::Rejected(e))
                if e.code == ErrorCode::HEADER_MISMATCH
                    && method == methods::TOOLS_CALL
                    && !relisted
                    && relist.is_some() =>
            {
                // The tool list may be stale: re-list, recompute the headers, try once more.
                relisted = true;
                if let Some(relist) = relist {
                    relist(peer, state).await?;
                }
                param_headers = tool_headers(state, method, &base);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let mut result: Map<String, Value> = match serde_json::from_str(raw.get()) {
            Ok(r) => r,
            Err(_) => return Ok(raw),
        };
        match ResultType::of(&result) {
            // `resultType` is the protocol's, read here: the typed result is the same in both
            // eras.
            ResultType::Complete if result.remove("resultType").is_some() => {
                return Ok(to_raw(&result).map_err(RequestError::from)?);
            }
            ResultType::Complete => return Ok(raw),
            ResultType::InputRequired if may_require_input(method) => {
                round += 1;
                if round > max_rounds {
                    return Err(ClientError::TooManyInputRounds {
                        method: method.to_owned(),
                        rounds: max_rounds,
                    });
                }
                let id = sent_id
                    .lock()
                    .ok()
                    .and_then(|s| s.clone())
                    .unwrap_or_else(|| RequestId::int(0));
                let cancel = opts.cancel.clone().unwrap_or_default();
                retry = Some(answer_inputs(peer, state, method, &result, id, cancel).await?);
            }
            // The tasks extension: only `tools/call` makes tasks (`[D26-131]`), and only for a
            // client that declared the extension.
            ResultType::Task
                if method == methods::TOOLS_CALL
                    && (state.options.tasks_extension || tasks.is_some()) =>
            {
                if let (Some(started), Some(Value::String(id))) = (tasks, result.get("taskId")) {
                    started(id);
                }
                return modern_task::drive(peer, state, result, &meta, &version, &opts).await;
            }
            other => {
                return Err(ClientError::UnexpectedResultType {
                    method: method.to_owned(),
                    result_type: echo(other.as_str()).into_owned(),
                });
            }
        }
    }
}

/// The `Mcp-Param-*` annotations of the tool a `tools/call` names, from the cached tool list.
fn tool_headers(
    state: &ClientState,
    method: &str,
    params: &Map<String, Value>,
) -> Vec<ParamHeader> {
    if method != methods::TOOLS_CALL {
        return Vec::new();
    }
    let Some(Value::String(name)) = params.get("name") else {
        return Vec::new();
    };
    state
        .lists
        .tools
        .items()
        .and_then(|tools| tools.into_iter().find(|t| &t.name == name))
        .and_then(|t| http_headers::param_headers(&t.input_schema).ok())
        .unwrap_or_default()
}
