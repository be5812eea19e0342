//! Client side: the input requests of a 2026-07-28 input-required result (SPEC-2026-NOTES §8),
//! answered through the same sampling, elicitation and roots answers that serve a 2025 server's
//! requests (`answer`), each matched by its catalogue marker. A request whose capability this
//! client did not declare is refused (-32021, `[D26-41]`), one it does not serve is -32601; either
//! way the call is abandoned, nothing is answered as something else.
//!
//! Used by `exchange` (the rounds of one request) and `modern_task` (a task's `input_required`).

use std::sync::Arc;

use serde_json::{Map, Value};
use switchboard_jsonrpc::{Peer, RequestContext, RequestError};
use switchboard_types::catalogue::{CreateMessage, Elicit, ListRoots, Method};
use switchboard_types::error::echo;
use switchboard_types::meta::RequestParams;
use switchboard_types::modern::{InputRequest, missing_capability};
use switchboard_types::{ErrorObject, RequestId, methods};
use tokio_util::sync::CancellationToken;

use crate::answer::Answer;
use crate::error::ClientError;
use crate::state::{ClientState, modern_capabilities};

/// What the next round adds to the original params.
pub(crate) struct Retry {
    /// This round's answers, when the result asked for any.
    pub(crate) responses: Option<Map<String, Value>>,
    /// The state to echo, exactly as received.
    pub(crate) state: Option<String>,
}

/// Whether `raw` names an input request this client serves: the requests of the catalogue it
/// answers that revision 2026-07-28 embeds in input-required results (SPEC-2026-NOTES §8.1).
/// Also true when `method` is missing or not a string: a malformed request, not an unknown one.
fn serves(raw: &Value) -> bool {
    const SERVED: [&str; 3] = [Elicit::NAME, CreateMessage::NAME, ListRoots::NAME];
    raw["method"].as_str().is_none_or(|m| SERVED.contains(&m))
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
/// The key of the input request a handler answers, attached to the handler's
/// [`RequestContext`] when the request came in a 2026-07-28 `input_required` result (read it
/// with `cx.attachment_as::<InputKey>()`; absent for a 2025 server's request). A gateway
/// passes it on, so that the input request its own client sees carries the upstream's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputKey(pub String);

/// The error abandoning a call whose input request `key` (of method `embedded`) was refused.
fn refusal<'a>(key: &'a str, embedded: &'a str) -> impl Fn(ErrorObject) -> ClientError + 'a {
    move |error| ClientError::InputRequest {
        key: echo(key).into_owned(),
        method: embedded.to_owned(),
        error: Box::new(error),
    }
}

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
    // Every input request is checked first (a refusal asks nothing), then all are answered at
    // once: a gateway answering through its own client's input requests asks for them all in
    // one round, as the upstream did.
    let mut asked = Vec::new();
    for (key, raw) in requests.into_iter().flatten() {
        let raw = &without_elicitation_id(raw);
        let input: InputRequest = match serde_json::from_value(raw.clone()) {
            Ok(input) => input,
            // `[D26-36]`: an input request is one of the three shapes. A method this client
            // does not serve is not answered as another one: the call is abandoned with
            // -32601, as a 2025 server's request for it would be answered.
            Err(_) if !serves(raw) => {
                let method = raw["method"].as_str().unwrap_or_default();
                return Err(ClientError::InputRequest {
                    key: echo(key).into_owned(),
                    method: echo(method).into_owned(),
                    error: Box::new(ErrorObject::method_not_found(method)),
                });
            }
            Err(e) => {
                return Err(invalid(format!(
                    "input request {}: {}",
                    echo(key),
                    echo(&e.to_string())
                )));
            }
        };
        let embedded = input.method();
        let refuse = refusal(key, embedded);
        if !input.allowed_by(&caps) {
            return Err(refuse(missing_capability(
                format!("{embedded} needs a capability this client did not declare (D26-41)"),
                &input.required_capability(),
            )));
        }
        let cx = RequestContext::detached(id.clone(), peer.unrelated(), cancel.clone())
            .with_attachment(Some(Arc::new(InputKey(key.clone()))));
        let state = state.clone();
        // Typed by the catalogue's markers: a new kind of input request does not compile here
        // until it is answered.
        let answer = match input {
            InputRequest::Elicit(params) => Elicit::answer(state, params, cx),
            InputRequest::CreateMessage(params) => CreateMessage::answer(state, params, cx),
            InputRequest::ListRoots(_) => ListRoots::answer(state, RequestParams::default(), cx),
        };
        asked.push((key, embedded, answer, None));
    }
    std::future::poll_fn(|task| {
        let mut done = true;
        for (_, _, answer, out) in &mut asked {
            if out.is_none() {
                match answer.as_mut().poll(task) {
                    std::task::Poll::Ready(r) => *out = Some(r),
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    let mut responses = Map::new();
    for (key, embedded, _, out) in asked {
        let Some(answer) = out else { continue };
        let answer = answer.map_err(refusal(key, embedded))?;
        let value: Value = serde_json::from_str(answer.get()).map_err(RequestError::from)?;
        responses.insert(key.clone(), value);
    }
    Ok(Retry {
        responses: requests.map(|_| responses),
        state: request_state,
    })
}
