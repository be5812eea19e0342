//! Server side: tools run as tasks (2025-11-25, SEP-1686; SPEC-NOTES §9). A task-augmented
//! `tools/call` is answered at once with a `CreateTaskResult`; the same tool handler then runs
//! in the background and its outcome is kept in the server's [`TaskStore`] for `tasks/result`.
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` are answered from the store,
//! scoped to the session that created the task (`[TK-23]`).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use switchboard_jsonrpc::Peer;
use switchboard_tasks::{Outcome, Owner, TaskStore};
use switchboard_types::catalogue::{Method, TaskStatus};
use switchboard_types::meta::{Meta, PaginatedRequestParams};
use switchboard_types::tasks::{GetTaskRequestParams, GetTaskResult, ListTasksResult};
use switchboard_types::tasks::{Task, TaskStatusNotificationParams};
use switchboard_types::tools::TaskSupport;
use switchboard_types::{ErrorCode, ErrorObject};
use tokio::task::AbortHandle;

/// The server's tasks: the store, and the work still running (to stop it on cancel).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    running: Mutex<HashMap<String, (u64, AbortHandle)>>,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks").field("store", &self.store).finish()
    }
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>) -> Self {
        Tasks {
            store,
            running: Mutex::default(),
        }
    }

    /// Remembers the work of task `id` of `session`, to stop it on cancel or when the session
    /// ends. Bounded by the store: a task exists before its work is spawned.
    pub(crate) fn started(&self, id: String, session: u64, work: AbortHandle) {
        if let Ok(mut r) = self.running.lock() {
            r.insert(id, (session, work));
        }
    }

    /// Forgets the work of task `id` (it finished).
    pub(crate) fn finished(&self, id: &str) {
        if let Ok(mut r) = self.running.lock() {
            r.remove(id);
        }
    }

    /// Stops the work of task `id` (`[TK-19]`: the receiver SHOULD try to stop it).
    pub(crate) fn stop(&self, id: &str) {
        if let Some((_, work)) = self.running.lock().ok().and_then(|mut r| r.remove(id)) {
            work.abort();
        }
    }

    /// Stops every task of a session that ended: nobody can ask for their results any more.
    pub(crate) fn session_closed(&self, session: u64) {
        if let Ok(mut r) = self.running.lock() {
            r.retain(|_, (s, work)| {
                if *s == session {
                    work.abort();
                }
                *s != session
            });
        }
    }
}

/// The owner of a session's tasks.
pub(crate) fn owner(session: u64) -> Owner {
    Owner::new(format!("session-{session}"))
}

/// How a `tools/call` runs, given whether tasks were negotiated for tools, whether the call
/// asked for a task, and the tool's support (`[TK-2]`, `[TK-5]`, `[TK-6]`).
///
/// # Errors
/// -32601 for a task the tool forbids, or a plain call to a tool that requires one.
pub(crate) fn as_task(
    negotiated: bool,
    asked: bool,
    support: TaskSupport,
    tool: &str,
) -> Result<bool, ErrorObject> {
    if !negotiated {
        // `[TK-6]`: without task support for tools/call the `task` field is ignored.
        return Ok(false);
    }
    match (asked, support) {
        (true, TaskSupport::Forbidden) => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("tool {tool} cannot run as a task"),
        )
        .with_data(serde_json::json!({"reason": "task_forbidden", "tool": tool, "spec": "TK-2"}))),
        (false, TaskSupport::Required) => Err(ErrorObject::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("tool {tool} must be called as a task"),
        )
        .with_data(serde_json::json!({"reason": "task_required", "tool": tool, "spec": "TK-5"}))),
        (asked, _) => Ok(asked),
    }
}

/// Sends `notifications/tasks/status` with the whole task (optional for the requestor to use,
/// `[TK-20]`; no related-task `_meta`, `[TK-22]`). A refusal or a closed session is only logged.
pub(crate) async fn notify_status(peer: &Peer, task: Task) {
    let params = TaskStatusNotificationParams::from(task);
    if let Err(e) = peer.notify(TaskStatus::NAME, Some(&params)).await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
}

/// Adds `_meta["io.modelcontextprotocol/related-task"] = {taskId}` to a JSON object (`[TK-13]`,
/// `[TK-21]`), keeping any other `_meta` member; anything but an object is left as it is.
pub(crate) fn tag_related(value: &mut serde_json::Value, task_id: &str) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    let mut meta: Meta = obj
        .get("_meta")
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or_else(Meta::new);
    meta.set_related_task(task_id);
    if let Ok(meta) = serde_json::to_value(meta) {
        obj.insert("_meta".into(), meta);
    }
}

/// `tasks/get`.
pub(crate) async fn get(
    store: &dyn TaskStore,
    owner: &Owner,
    p: GetTaskRequestParams,
) -> Result<GetTaskResult, ErrorObject> {
    let task = store
        .get(owner, &p.task_id)
        .await
        .map_err(|e| e.to_error_object())?;
    Ok(GetTaskResult::from(task))
}

/// `tasks/cancel`: `cancelled` before the reply, then the work is stopped.
pub(crate) async fn cancel(
    tasks: &Tasks,
    owner: &Owner,
    p: GetTaskRequestParams,
) -> Result<GetTaskResult, ErrorObject> {
    let task = tasks
        .store
        .cancel(owner, &p.task_id)
        .await
        .map_err(|e| e.to_error_object())?;
    tasks.stop(&p.task_id);
    Ok(GetTaskResult::from(task))
}

/// `tasks/list`: this session's tasks, a page at a time.
pub(crate) async fn list(
    store: &dyn TaskStore,
    owner: &Owner,
    p: PaginatedRequestParams,
    page: usize,
) -> Result<ListTasksResult, ErrorObject> {
    let (tasks, next_cursor) = store
        .list(owner, p.cursor.as_deref(), page)
        .await
        .map_err(|e| e.to_error_object())?;
    Ok(ListTasksResult {
        tasks,
        next_cursor,
        ..Default::default()
    })
}

/// `tasks/result`: waits until the task is terminal (`[TK-16]`), then answers exactly what the
/// call would have (`[TK-15]`), with the related-task `_meta` on a result (`[TK-21]`).
pub(crate) async fn result(
    store: &dyn TaskStore,
    owner: &Owner,
    p: GetTaskRequestParams,
) -> Result<serde_json::Value, ErrorObject> {
    let (task, outcome) = store
        .result(owner, &p.task_id)
        .await
        .map_err(|e| e.to_error_object())?;
    match outcome {
        Outcome::Result(raw) => {
            let mut value: serde_json::Value = serde_json::from_str(raw.get())
                .map_err(|e| ErrorObject::internal(format!("stored result unreadable: {e}")))?;
            tag_related(&mut value, &task.task_id);
            Ok(value)
        }
        Outcome::Error(e) => Err(e),
        Outcome::Cancelled => Err(ErrorObject::new(
            ErrorCode::INVALID_REQUEST,
            format!("task {} was cancelled and has no result", task.task_id),
        )
        .with_data(serde_json::json!({"reason": "task_cancelled", "taskId": task.task_id}))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tk_2_tk_5_tk_6_support_decides_how_a_call_runs() {
        use TaskSupport::*;
        assert_eq!(as_task(false, true, Forbidden, "t"), Ok(false), "TK-6");
        assert_eq!(as_task(false, false, Required, "t"), Ok(false), "TK-6");
        assert!(as_task(true, true, Forbidden, "t").is_err(), "TK-2");
        assert!(as_task(true, false, Required, "t").is_err(), "TK-5");
        assert_eq!(as_task(true, true, Optional, "t"), Ok(true));
        assert_eq!(as_task(true, false, Optional, "t"), Ok(false));
        assert_eq!(as_task(true, true, Required, "t"), Ok(true));
    }
}
