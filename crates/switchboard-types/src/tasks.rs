//! Tasks (2025-11-25, experimental; SPEC-NOTES §9): `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`, `notifications/tasks/status`, the `task` request param and `CreateTaskResult`.
//!
//! Either side may be the receiver: the client runs tool calls as tasks on the server, the server
//! runs sampling and elicitation as tasks on the client.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::meta::{Cursor, JsonObject, Meta, PaginatedRequestParams};

/// The state of a task (`TaskStatus`). `completed`, `failed` and `cancelled` are terminal (`[TK-10]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed; every task starts here (`[TK-9]`).
    Working,
    /// Waiting for input from the requestor (for example an elicitation).
    InputRequired,
    /// Finished successfully; the result is available.
    Completed,
    /// Finished unsuccessfully (including a tool result with `isError: true`).
    Failed,
    /// Cancelled before completion.
    Cancelled,
}

impl TaskStatus {
    /// The wire string, e.g. `"input_required"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the status is terminal.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// Whether `self → next` is an allowed transition (`[TK-10]`).
    pub const fn can_transition_to(self, next: TaskStatus) -> bool {
        match self {
            TaskStatus::Working => !matches!(next, TaskStatus::Working),
            TaskStatus::InputRequired => !matches!(next, TaskStatus::InputRequired),
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled => false,
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `task` param of a task-augmented request (`TaskMetadata`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMetadata {
    /// Requested retention in milliseconds, counted from creation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<u64>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

pub use crate::meta::RelatedTaskMetadata;

/// Base params of a request that may run as a task (`TaskAugmentedRequestParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAugmentedRequestParams {
    /// Present when the requestor asks for task execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskMetadata>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// A task (`Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Receiver-generated id (`[TK-8]`).
    pub task_id: String,
    /// Current state.
    pub status: TaskStatus,
    /// Human-readable detail on the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 creation time (`[TK-11]`).
    pub created_at: String,
    /// ISO 8601 time of the last update (`[TK-11]`).
    pub last_updated_at: String,
    /// Actual retention in milliseconds; `None` (written as `null`) means unlimited (`[TK-12]`).
    pub ttl: Option<u64>,
    /// Suggested polling interval in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval: Option<u64>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Task {
    /// A task in `status`, created and last updated at `now` (ISO 8601).
    pub fn new(
        task_id: impl Into<String>,
        status: TaskStatus,
        now: impl Into<String>,
        ttl: Option<u64>,
    ) -> Self {
        let now = now.into();
        Task {
            task_id: task_id.into(),
            status,
            status_message: None,
            created_at: now.clone(),
            last_updated_at: now,
            ttl,
            poll_interval: None,
            extra: JsonObject::new(),
        }
    }
}

/// The immediate answer to a task-augmented request (`CreateTaskResult`, `[TK-7]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// The new task.
    pub task: Task,
    /// Result metadata, e.g. `io.modelcontextprotocol/model-immediate-response`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CreateTaskResult {
    /// A result for `task`.
    pub fn new(task: Task) -> Self {
        CreateTaskResult {
            task,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params naming one task: `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequestParams {
    /// The task (`[TK-22]`: this param, not related-task `_meta`, decides which).
    pub task_id: String,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetTaskRequestParams {
    /// Params for `task_id`.
    pub fn new(task_id: impl Into<String>) -> Self {
        GetTaskRequestParams {
            task_id: task_id.into(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `tasks/result`.
pub type GetTaskPayloadRequestParams = GetTaskRequestParams;
/// Params of `tasks/cancel`.
pub type CancelTaskRequestParams = GetTaskRequestParams;
/// Params of `tasks/list`.
pub type ListTasksRequestParams = PaginatedRequestParams;

/// Result of `tasks/get` (`GetTaskResult` = `Result & Task`): the task fields at the top level.
///
/// Unknown members are kept in `task.extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetTaskResult {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl From<Task> for GetTaskResult {
    fn from(task: Task) -> Self {
        GetTaskResult { task, meta: None }
    }
}

/// Result of `tasks/cancel` (`CancelTaskResult` = `Result & Task`), status `cancelled`.
pub type CancelTaskResult = GetTaskResult;

/// Result of `tasks/result` (`GetTaskPayloadResult`): exactly the result the original request
/// would have returned (`[TK-15]`), plus related-task `_meta` (`[TK-21]`).
///
/// Kept as an open object; use [`GetTaskPayloadResult::parse`] to read it as the original
/// request's result type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetTaskPayloadResult {
    /// Result metadata (should carry the related task).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// The members of the original result.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl GetTaskPayloadResult {
    /// Wraps a result of the original request, adding related-task `_meta` for `task_id`.
    ///
    /// # Errors
    /// When `result` does not serialize to a JSON object.
    pub fn wrap<T: Serialize>(result: &T, task_id: &str) -> Result<Self, serde_json::Error> {
        let mut payload: GetTaskPayloadResult =
            serde_json::from_value(serde_json::to_value(result)?)?;
        payload
            .meta
            .get_or_insert_with(Meta::new)
            .set_related_task(task_id);
        Ok(payload)
    }

    /// Reads the payload as the original request's result type `T` (with `_meta`).
    ///
    /// # Errors
    /// When the payload does not match `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_value(serde_json::to_value(self)?)
    }
}

/// Result of `tasks/list` (`ListTasksResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResult {
    /// One page of tasks.
    pub tasks: Vec<Task>,
    /// The cursor of the next page; present whenever more tasks exist (`[TK-18]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Params of `notifications/tasks/status` (`TaskStatusNotificationParams` = `NotificationParams & Task`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStatusNotificationParams {
    /// The task as it is now.
    #[serde(flatten)]
    pub task: Task,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl From<Task> for TaskStatusNotificationParams {
    fn from(task: Task) -> Self {
        TaskStatusNotificationParams { task, meta: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tk_10_terminal_states_never_change() {
        use TaskStatus::*;
        for from in [Completed, Failed, Cancelled] {
            for to in [Working, InputRequired, Completed, Failed, Cancelled] {
                assert!(!from.can_transition_to(to), "{from} -> {to}");
            }
        }
        assert!(Working.can_transition_to(InputRequired));
        assert!(InputRequired.can_transition_to(Working));
        assert!(!Working.can_transition_to(Working));
    }

    #[test]
    fn tk_12_unlimited_ttl_is_null() {
        let task = Task::new("t1", TaskStatus::Working, "2026-01-10T08:00:00Z", None);
        let v = serde_json::to_value(&task).expect("json");
        assert_eq!(v["ttl"], serde_json::Value::Null);
        assert!(v.as_object().is_some_and(|o| o.contains_key("ttl")));
    }
}
