//! Client side: one request to the server, in either era. Every typed call of
//! [`ClientSession`](crate::ClientSession) goes through [`call`].
//!
//! Legacy: the request goes out as it is. Modern (2026-07-28, SPEC-2026-NOTES §3, §4, §8, §14.2):
//! * the envelope is merged into `params._meta` (`[D26-8]`): revision, capabilities, identity,
//!   log level;
//! * the HTTP header lines the request needs are computed from its body and handed to the
//!   transport with the frame (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`
//!   from the cached tool list, `[D26-57]`, `[D26-62]`); a -32020 to `tools/call` re-lists the
//!   tools once and retries, as the spec advises;
//! * `resultType` is read (and taken out of a complete result, so that typed results look the
//!   same in both eras): missing means complete (`[D26-20]`), an unknown one is an invalid
//!   response (`[D26-21]`);
//! * an input-required result (`[D26-34]`) is answered through the same sampling, elicitation
//!   and roots handlers that answer a 2025 server's requests, and the request is sent again with
//!   a new id (`[D26-45]`), this round's `inputResponses` only, and `requestState` echoed exactly
//!   or left out (`[D26-42]`..`[D26-44]`); nothing of a chain reaches another request
//!   (`[D26-46]`). The rounds are bounded.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use switchboard_jsonrpc::{Peer, RequestContext, RequestError, RequestOptions};
use switchboard_types::error::echo;
use switchboard_types::http_headers::{self, ParamHeader};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::modern::{InputRequest, ResultType, may_require_input, missing_capability};
use switchboard_types::tools::Tool;
use switchboard_types::{ErrorCode, ErrorObject, RawJson, Request, RequestId, methods};
use tokio_util::sync::CancellationToken;

use crate::error::ClientError;
use crate::listing::list_all;
use crate::router;
use crate::state::{ClientState, modern_capabilities};

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
pub const DEFAULT_MAX_INPUT_ROUNDS: usize = 10;

/// Sends `method` with `params` (raw JSON text; `None` for none) in the connection's era and
/// returns the final result. `log_level` overrides the session-wide level of a modern request
/// (`Some(None)`: no log lines).
pub(crate) async fn call(
    peer: &Peer,
    state: &Arc<ClientState>,
    method: &str,
    params: Option<RawJson>,
    opts: RequestOptions,
    log_level: Option<Option<LoggingLevel>>,
) -> Result<RawJson, ClientError> {
    let Some(envelope) = state.envelope(log_level) else {
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
                    && !relisted =>
            {
                // The tool list may be stale: re-list, recompute the headers, try once more.
                relisted = true;
                Box::pin(list_all::<Tool>(peer, state)).await?;
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
            ResultType::Task if method == methods::TOOLS_CALL && state.options.tasks_extension => {
                return crate::modern_task::drive(peer, state, result, &meta, &version, &opts)
                    .await;
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

/// What the next round adds to the original params.
pub(crate) struct Retry {
    /// This round's answers, when the result asked for any.
    pub(crate) responses: Option<Map<String, Value>>,
    /// The state to echo, exactly as received.
    pub(crate) state: Option<String>,
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

/// A URL-mode elicitation of 2026-07-28 has no `elicitationId` (the retry, not a notification,
/// tells the server the user is done): the handler sees an empty one.
fn without_elicitation_id(request: &Value) -> Value {
    let mut request = request.clone();
    let url_mode =
        request["method"] == methods::ELICITATION_CREATE && request["params"]["mode"] == "url";
    if let Some(Value::Object(params)) = request.get_mut("params").filter(|_| url_mode) {
        params
            .entry("elicitationId")
            .or_insert_with(|| Value::String(String::new()));
    }
    request
}

/// Answers the input requests of an input-required result with the installed handlers.
pub(crate) async fn answer_inputs(
    peer: &Peer,
    state: &Arc<ClientState>,
    method: &str,
    result: &Map<String, Value>,
    id: RequestId,
    cancel: CancellationToken,
) -> Result<Retry, ClientError> {
    let invalid = |problem: String| ClientError::InvalidInputRequired {
        method: method.to_owned(),
        problem,
    };
    let request_state = match result.get("requestState") {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(invalid("requestState is not a string".into())),
    };
    let requests = match result.get("inputRequests") {
        None => None,
        Some(Value::Object(m)) => Some(m),
        Some(_) => return Err(invalid("inputRequests is not an object".into())),
    };
    if requests.is_none() && request_state.is_none() {
        return Err(invalid(
            "neither inputRequests nor requestState (D26-37)".into(),
        ));
    }
    let caps = modern_capabilities(&state.capabilities);
    let mut responses = Map::new();
    for (key, raw) in requests.into_iter().flatten() {
        let raw = &without_elicitation_id(raw);
        let input: InputRequest = serde_json::from_value(raw.clone()).map_err(|e| {
            invalid(format!(
                "input request {}: {}",
                echo(key),
                echo(&e.to_string())
            ))
        })?;
        let embedded = input.method();
        let refuse = |error: ErrorObject| ClientError::InputRequest {
            key: echo(key).into_owned(),
            method: embedded.to_owned(),
            error: Box::new(error),
        };
        if !input.allowed_by(&caps) {
            return Err(refuse(missing_capability(
                format!("{embedded} needs a capability this client did not declare (D26-41)"),
                &input.required_capability(),
            )));
        }
        let params = raw.get("params").cloned().unwrap_or_else(|| json!({}));
        let request = Request {
            id: id.clone(),
            method: embedded.to_owned(),
            params: Some(to_raw(&params).map_err(RequestError::from)?),
        };
        let cx = RequestContext::detached(id.clone(), peer.unrelated(), cancel.clone());
        let answer = match embedded {
            methods::ELICITATION_CREATE => router::elicitation(state, &request, cx).await,
            methods::SAMPLING_CREATE_MESSAGE => router::sampling(state, &request, cx).await,
            _ => router::roots(state, cx).await,
        };
        let answer = answer.map_err(refuse)?;
        let value: Value = serde_json::from_str(answer.get()).map_err(RequestError::from)?;
        responses.insert(key.clone(), value);
    }
    Ok(Retry {
        responses: requests.map(|_| responses),
        state: request_state,
    })
}
