//! Client side of the tasks extension of revision 2026-07-28 (`io.modelcontextprotocol/tasks`,
//! SEP-2663; SPEC-2026-NOTES §16). A client built with
//! [`ClientBuilder::tasks_extension`](crate::ClientBuilder::tasks_extension) declares the
//! extension on each request; a `tools/call` the server answers with a task (`resultType:
//! "task"`) is then driven here until it ends, so the caller gets the tool's result as from any
//! other call:
//!
//! * `tasks/get` every `pollIntervalMs` (clamped to the client's bounds, 50 ms to 5 s,
//!   `[D26-143]`);
//! * `input_required`: the task's `inputRequests` are answered through the same sampling,
//!   elicitation and roots handlers as any input request, each key once (`[D26-138]`), and sent
//!   with `tasks/update`;
//! * `completed`: its `result` is the call's result (an `isError` result included); `failed`: its
//!   `error` is the call's error, exactly as the server would have answered (`[D26-135]`);
//!   `cancelled`: [`ClientError::TaskCancelled`];
//! * the caller's cancellation sends `tasks/cancel` (never `notifications/cancelled`,
//!   `[D26-140]`) and ends the call as cancelled.
//!
//! A task result to any other method is an invalid response (`[D26-131]`).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_types::error::echo;
use switchboard_types::http_headers;
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::{ErrorObject, RawJson, RequestId, methods};

use crate::error::ClientError;
use crate::inputs::answer_inputs;
use crate::state::ClientState;

/// The shortest wait between two `tasks/get` of one task.
pub(crate) const MIN_TASK_POLL: Duration = Duration::from_millis(50);
/// The longest wait between two `tasks/get` of one task (a server asking for more is polled
/// this often).
pub(crate) const MAX_TASK_POLL: Duration = Duration::from_secs(5);
/// The wait when the server suggests none.
const DEFAULT_TASK_POLL: Duration = Duration::from_millis(250);

/// What one request of the task surface needs: the envelope and the revision.
struct Surface<'a> {
    peer: &'a Peer,
    meta: &'a Map<String, Value>,
    version: &'a str,
    opts: &'a RequestOptions,
}

impl Surface<'_> {
    /// Sends `method` (`tasks/get`, `tasks/update`, `tasks/cancel`) for `task_id` with `extra`
    /// params, the envelope and the `Mcp-Name` header the task surface needs (`[D26-141]`).
    async fn send(
        &self,
        method: &str,
        task_id: &str,
        extra: Map<String, Value>,
    ) -> Result<Map<String, Value>, ClientError> {
        let mut p = extra;
        p.insert("taskId".into(), Value::String(task_id.to_owned()));
        p.insert("_meta".into(), Value::Object(self.meta.clone()));
        let mut o = RequestOptions::default();
        o.timeout = self.opts.timeout;
        o.headers = http_headers::request_headers(method, &p, self.version, &[]);
        let raw = self
            .peer
            .request(method, Some(to_raw(&p).map_err(RequestError::from)?), o)
            .await?;
        let mut result: Map<String, Value> =
            serde_json::from_str(raw.get()).map_err(RequestError::from)?;
        match result.remove("resultType") {
            None => {}
            Some(Value::String(t)) if t == "complete" => {}
            Some(other) => {
                return Err(ClientError::UnexpectedResultType {
                    method: method.to_owned(),
                    result_type: echo(&other.to_string()).into_owned(),
                });
            }
        }
        Ok(result)
    }
}

/// The poll interval a task suggests, within the client's bounds.
fn poll_interval(task: &Map<String, Value>) -> Duration {
    task.get("pollIntervalMs")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_TASK_POLL, Duration::from_millis)
        .clamp(MIN_TASK_POLL, MAX_TASK_POLL)
}

fn invalid(problem: impl Into<String>) -> ClientError {
    ClientError::InvalidTask(problem.into())
}

/// Drives the task a `tools/call` was answered with (`created`, a `CreateTaskResult`) until it
/// ends; returns the tool's result.
pub(crate) async fn drive(
    peer: &Peer,
    state: &Arc<ClientState>,
    created: Map<String, Value>,
    meta: &Map<String, Value>,
    version: &str,
    opts: &RequestOptions,
) -> Result<RawJson, ClientError> {
    let Some(Value::String(task_id)) = created.get("taskId") else {
        return Err(invalid("a task result without a string taskId"));
    };
    let task_id = task_id.clone();
    let surface = Surface {
        peer,
        meta,
        version,
        opts,
    };
    let cancel = opts.cancel.clone().unwrap_or_default();
    let mut answered: HashSet<String> = HashSet::new();
    let mut rounds = 0;
    let mut current = created;
    loop {
        let status = current
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match status.as_str() {
            "completed" => {
                let Some(Value::Object(mut result)) = current.remove("result") else {
                    return Err(invalid("a completed task without its result"));
                };
                // The original result, as the call would have returned it.
                result.remove("resultType");
                return Ok(to_raw(&result).map_err(RequestError::from)?);
            }
            "failed" => {
                let error: ErrorObject = current
                    .remove("error")
                    .and_then(|e| serde_json::from_value(e).ok())
                    .ok_or_else(|| invalid("a failed task without a JSON-RPC error"))?;
                return Err(RequestError::Rejected(error).into());
            }
            "cancelled" => return Err(ClientError::TaskCancelled(task_id)),
            "input_required" => {
                // Only the keys not answered yet: a poll repeats every outstanding request.
                let fresh: Map<String, Value> = match current.get("inputRequests") {
                    Some(Value::Object(m)) => m
                        .iter()
                        .filter(|(k, _)| !answered.contains(*k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                    _ => Map::new(),
                };
                if !fresh.is_empty() {
                    rounds += 1;
                    if rounds > state.options.max_input_rounds {
                        let _ = surface
                            .send(methods::TASKS_CANCEL, &task_id, Map::new())
                            .await;
                        return Err(ClientError::TooManyInputRounds {
                            method: methods::TOOLS_CALL.to_owned(),
                            rounds: state.options.max_input_rounds,
                        });
                    }
                    let mut asked = Map::new();
                    asked.insert("inputRequests".into(), Value::Object(fresh.clone()));
                    let id = RequestId::string(format!("task-{task_id}"));
                    let retry =
                        answer_inputs(peer, state, methods::TOOLS_CALL, &asked, id, cancel.clone())
                            .await?;
                    answered.extend(fresh.keys().cloned());
                    let mut update = Map::new();
                    update.insert(
                        "inputResponses".into(),
                        Value::Object(retry.responses.unwrap_or_default()),
                    );
                    surface
                        .send(methods::TASKS_UPDATE, &task_id, update)
                        .await?;
                }
            }
            "working" => {}
            other => {
                return Err(invalid(format!(
                    "task status {} is not one of the extension's",
                    echo(other)
                )));
            }
        }
        let wait = poll_interval(&current);
        tokio::select! {
            () = cancel.cancelled() => {
                // Cooperative: the server may still finish the task; the caller has given up.
                let _ = surface.send(methods::TASKS_CANCEL, &task_id, Map::new()).await;
                return Err(ClientError::TaskCancelled(task_id));
            }
            () = tokio::time::sleep(wait) => {}
        }
        current = surface
            .send(methods::TASKS_GET, &task_id, Map::new())
            .await?;
        if current.get("taskId") != Some(&json!(task_id)) {
            return Err(invalid("tasks/get answered for another task"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(poll: Value) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("pollIntervalMs".into(), poll);
        m
    }

    #[test]
    fn d26_143_the_poll_interval_is_clamped_to_the_clients_bounds() {
        assert_eq!(poll_interval(&task(json!(1_000))), Duration::from_secs(1));
        assert_eq!(
            poll_interval(&task(json!(0))),
            MIN_TASK_POLL,
            "a server asking for a busy loop"
        );
        assert_eq!(
            poll_interval(&task(json!(86_400_000))),
            MAX_TASK_POLL,
            "a day is capped"
        );
        assert_eq!(poll_interval(&task(json!("soon"))), DEFAULT_TASK_POLL);
        assert_eq!(poll_interval(&Map::new()), DEFAULT_TASK_POLL);
    }
}
