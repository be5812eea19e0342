//! What a receiver does with its store on the wire, the same for both roles: the answers to
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` (scoped to the requestor's
//! [`Owner`], `[TK-23]`), the related-task `_meta` (`[TK-13]`, `[TK-21]`), the registry of work
//! still running (to stop it on cancel or when its session ends), and the polling interval a
//! requestor keeps to.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use switchboard_types::meta::{Meta, PaginatedRequestParams};
use switchboard_types::tasks::{GetTaskRequestParams, GetTaskResult, ListTasksResult, Task};
use switchboard_types::{ErrorCode, ErrorObject};
use tokio::task::AbortHandle;

use crate::store::{Outcome, Owner, TaskStore};

/// The shortest polling interval a requestor keeps to, whatever the receiver suggests.
pub(crate) const MIN_POLL_INTERVAL: Duration = Duration::from_millis(50);
/// The longest polling interval a requestor keeps to.
pub(crate) const MAX_POLL_INTERVAL: Duration = Duration::from_secs(30);

/// How long a requestor waits before it polls `task` again: its `pollInterval` (one second when
/// absent), kept within 50 ms and 30 s.
pub fn poll_every(task: &Task) -> Duration {
    Duration::from_millis(task.poll_interval.unwrap_or(1_000))
        .clamp(MIN_POLL_INTERVAL, MAX_POLL_INTERVAL)
}

/// The work of the tasks still running, by task id: the session (or other scope) that created
/// it, the handle that stops it, and what the role keeps with it (`T`, handed back on stop).
///
/// Bounded by the store: a task exists before its work is registered, and its entry leaves when
/// the work ends, is stopped, or its scope ends.
pub struct Running<T> {
    work: Mutex<HashMap<String, (u64, AbortHandle, T)>>,
}

impl<T> Default for Running<T> {
    fn default() -> Self {
        Running {
            work: Mutex::default(),
        }
    }
}

impl<T> fmt::Debug for Running<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("tasks", &self.len())
            .finish()
    }
}

impl<T> Running<T> {
    /// Remembers the work of task `id`, created in `scope`.
    pub fn started(&self, id: String, scope: u64, work: AbortHandle, keep: T) {
        if let Ok(mut r) = self.work.lock() {
            r.insert(id, (scope, work, keep));
        }
    }

    /// Forgets the work of task `id` (it ended by itself); hands back what was kept with it.
    pub fn finished(&self, id: &str) -> Option<T> {
        self.work
            .lock()
            .ok()
            .and_then(|mut r| r.remove(id))
            .map(|(_, _, keep)| keep)
    }

    /// Stops the work of task `id` (`[TK-19]`: the receiver SHOULD try to stop it); hands back
    /// what was kept with it.
    pub fn stop(&self, id: &str) -> Option<T> {
        let (_, work, keep) = self.work.lock().ok().and_then(|mut r| r.remove(id))?;
        work.abort();
        Some(keep)
    }

    /// Stops every task of `scope` (its session ended: nobody can ask for their results).
    pub fn scope_closed(&self, scope: u64) {
        if let Ok(mut r) = self.work.lock() {
            r.retain(|_, (s, work, _)| {
                if *s == scope {
                    work.abort();
                }
                *s != scope
            });
        }
    }

    /// How many tasks are running.
    pub fn len(&self) -> usize {
        self.work.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Whether no task is running.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Adds `_meta["io.modelcontextprotocol/related-task"] = {taskId}` to a JSON object (`[TK-13]`,
/// `[TK-21]`), keeping any other `_meta` member; anything but an object is left as it is.
pub fn tag_related(value: &mut serde_json::Value, task_id: &str) {
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
///
/// # Errors
/// -32602 for a task `owner` does not have (SPEC-NOTES §9.9).
pub async fn get(
    store: &dyn TaskStore,
    owner: &Owner,
    p: &GetTaskRequestParams,
) -> Result<GetTaskResult, ErrorObject> {
    let task = store
        .get(owner, &p.task_id)
        .await
        .map_err(|e| e.to_error_object())?;
    Ok(GetTaskResult::from(task))
}

/// `tasks/cancel`: the task is `cancelled` in the store when this returns (`[TK-19]`); the
/// caller stops its work.
///
/// # Errors
/// -32602 for an unknown task or one already terminal (`[TK-14]`).
pub async fn cancel(
    store: &dyn TaskStore,
    owner: &Owner,
    p: &GetTaskRequestParams,
) -> Result<GetTaskResult, ErrorObject> {
    let task = store
        .cancel(owner, &p.task_id)
        .await
        .map_err(|e| e.to_error_object())?;
    Ok(GetTaskResult::from(task))
}

/// `tasks/list`: `owner`'s tasks, a page at a time (`[TK-18]`).
///
/// # Errors
/// -32602 for a cursor the store did not issue.
pub async fn list(
    store: &dyn TaskStore,
    owner: &Owner,
    p: &PaginatedRequestParams,
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
/// request would have (`[TK-15]`), with the related-task `_meta` on a result (`[TK-21]`). A
/// cancelled task has no result: -32600 with the reason `task_cancelled`.
///
/// # Errors
/// The request's own error; -32602 for an unknown task (also one that expires while waiting).
pub async fn result(
    store: &dyn TaskStore,
    owner: &Owner,
    p: &GetTaskRequestParams,
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
    fn tk_13_related_task_meta_keeps_other_members() {
        let mut v = serde_json::json!({"content": [], "_meta": {"a": 1}});
        tag_related(&mut v, "tsk_1");
        assert_eq!(v["_meta"]["a"], 1);
        assert_eq!(
            v["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            "tsk_1"
        );
        let mut not_obj = serde_json::json!([1]);
        tag_related(&mut not_obj, "tsk_1");
        assert_eq!(not_obj, serde_json::json!([1]));
    }

    #[test]
    fn polling_interval_is_clamped() {
        let mut t = Task::new(
            "t",
            switchboard_types::tasks::TaskStatus::Working,
            "x",
            None,
        );
        t.poll_interval = Some(1);
        assert_eq!(poll_every(&t), MIN_POLL_INTERVAL);
        t.poll_interval = Some(10_000_000);
        assert_eq!(poll_every(&t), MAX_POLL_INTERVAL);
        t.poll_interval = None;
        assert_eq!(poll_every(&t), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn running_work_stops_by_id_and_by_scope() {
        let r: Running<u8> = Running::default();
        let a = tokio::spawn(std::future::pending::<()>());
        let b = tokio::spawn(std::future::pending::<()>());
        let c = tokio::spawn(std::future::pending::<()>());
        r.started("a".into(), 1, a.abort_handle(), 7);
        r.started("b".into(), 1, b.abort_handle(), 8);
        r.started("c".into(), 2, c.abort_handle(), 9);
        assert_eq!(r.stop("a"), Some(7));
        assert!(a.await.unwrap_err().is_cancelled());
        r.scope_closed(1);
        assert!(b.await.unwrap_err().is_cancelled());
        assert_eq!(r.len(), 1);
        assert_eq!(r.finished("c"), Some(9));
        assert!(r.is_empty());
        c.abort();
    }
}
