//! The task store seam: what a receiver keeps per task, behind a trait that an external store
//! (shared by several server processes) can implement. Either role.
//!
//! Every operation that names a task is scoped to an [`Owner`] (`[TK-23]`: a task belongs to the
//! requestor that created it; another owner gets "not found", never the task), except the
//! receiver's own progress reports ([`TaskStore::set_status`], [`TaskStore::finish`]), which
//! come from the work the receiver runs.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::value::RawValue;
use switchboard_types::tasks::{Task, TaskStatus};
use switchboard_types::{ErrorCode, ErrorObject};

/// A boxed future returned by [`TaskStore`] methods.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The requestor a task is bound to: a session, or an authorization subject once there is one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Owner(Arc<str>);

impl Owner {
    /// An owner named `key` (never shown to other owners).
    pub fn new(key: impl Into<Arc<str>>) -> Self {
        Owner(key.into())
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What the request a task ran ended with (`[TK-15]`: `tasks/result` returns exactly this).
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The request's result, as raw JSON.
    Result(Arc<RawValue>),
    /// The JSON-RPC error the request raised.
    Error(ErrorObject),
    /// The task was cancelled before it finished (`[TK-19]`); it has no result.
    Cancelled,
}

impl PartialEq for Outcome {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Outcome::Result(a), Outcome::Result(b)) => a.get() == b.get(),
            (Outcome::Error(a), Outcome::Error(b)) => a == b,
            (Outcome::Cancelled, Outcome::Cancelled) => true,
            _ => false,
        }
    }
}

impl Outcome {
    /// The bytes this outcome keeps in a store.
    pub fn size(&self) -> usize {
        match self {
            Outcome::Result(r) => r.get().len(),
            Outcome::Error(e) => {
                e.message.len() + e.data.as_ref().map_or(0, |d| d.to_string().len())
            }
            Outcome::Cancelled => 0,
        }
    }
}

/// Why a task operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// No task with this id for this owner (unknown, expired, purged, or another owner's).
    #[error("unknown task")]
    NotFound,
    /// `tasks/cancel` on a task that already finished (`[TK-14]`).
    #[error("task {status} is terminal")]
    Terminal {
        /// Its final status.
        status: TaskStatus,
    },
    /// A status change the status machine does not allow (`[TK-10]`).
    #[error("task cannot go from {from} to {to}")]
    IllegalTransition {
        /// The current status.
        from: TaskStatus,
        /// The status asked for.
        to: TaskStatus,
    },
    /// A bound is reached: all tasks, this owner's tasks, or result bytes.
    #[error("too many tasks ({what} limit {limit})")]
    Full {
        /// Which bound.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A `tasks/list` cursor this store did not issue.
    #[error("invalid cursor")]
    InvalidCursor,
    /// Task ids could not be generated (no system randomness).
    #[error("no randomness for a task id: {0}")]
    Randomness(String),
    /// A backend failure, described.
    #[error("task store: {0}")]
    Backend(String),
}

impl TaskError {
    /// The wire error for this failure (SPEC-NOTES §9.9): -32602 for an unknown task, a
    /// terminal one being cancelled or a bad cursor; -32603 otherwise.
    pub fn to_error_object(&self) -> ErrorObject {
        let (code, reason) = match self {
            TaskError::NotFound => (ErrorCode::INVALID_PARAMS, "unknown_task"),
            TaskError::Terminal { .. } => (ErrorCode::INVALID_PARAMS, "task_terminal"),
            TaskError::InvalidCursor => (ErrorCode::INVALID_PARAMS, "invalid_cursor"),
            TaskError::IllegalTransition { .. } => {
                (ErrorCode::INTERNAL_ERROR, "illegal_task_transition")
            }
            TaskError::Full { .. } => (ErrorCode::INTERNAL_ERROR, "too_many_tasks"),
            TaskError::Randomness(_) | TaskError::Backend(_) => {
                (ErrorCode::INTERNAL_ERROR, "task_store")
            }
        };
        ErrorObject::new(code, self.to_string()).with_data(serde_json::json!({"reason": reason}))
    }
}

/// The error a task ends with when its outcome is over the store's bound on result bytes
/// (`limit`): -32603, reason `task_result_too_large`. Every store answers it the same way.
pub fn result_too_large(limit: usize) -> ErrorObject {
    ErrorObject::internal("the task's result is too large to keep")
        .with_data(serde_json::json!({"reason": "task_result_too_large", "limit": limit}))
}

/// One page of tasks and the cursor of the next page, if any.
pub type TaskPage = (Vec<Task>, Option<String>);

/// Where a receiver keeps its tasks.
///
/// Implementations keep the status machine (`[TK-9]`, `[TK-10]`): a task starts `working`, a
/// terminal task never changes, a cancelled task stays cancelled even when its work finishes
/// later (`[TK-19]`).
pub trait TaskStore: Send + Sync + fmt::Debug + 'static {
    /// Creates a task for `owner` in `working` with a new unguessable id (`[TK-8]`, `[TK-24]`).
    /// `ttl` is the retention the requestor asked for; the store may change it and reports
    /// the one it keeps (`[TK-12]`).
    ///
    /// # Errors
    /// [`TaskError::Full`] at a bound; [`TaskError::Randomness`].
    fn create<'a>(
        &'a self,
        owner: &'a Owner,
        ttl: Option<u64>,
    ) -> StoreFuture<'a, Result<Task, TaskError>>;

    /// The task `id` of `owner`.
    ///
    /// # Errors
    /// [`TaskError::NotFound`].
    fn get<'a>(&'a self, owner: &'a Owner, id: &'a str)
    -> StoreFuture<'a, Result<Task, TaskError>>;

    /// Moves task `id` to `status` (`working` ↔ `input_required`), with a message.
    ///
    /// # Errors
    /// [`TaskError::NotFound`]; [`TaskError::IllegalTransition`] (a terminal task, or a
    /// terminal status: use [`finish`](TaskStore::finish) or [`cancel`](TaskStore::cancel)).
    fn set_status<'a>(
        &'a self,
        id: &'a str,
        status: TaskStatus,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>>;

    /// Sets the status message of task `id`, a task still running (`working` or
    /// `input_required`), its status unchanged: what its work says it is doing (`[TK-20]`: the
    /// `statusMessage` of `tasks/get` and of the status notifications). The default keeps
    /// nothing and answers [`TaskError::Backend`]: a store that cannot keep a message apart from
    /// a status change says so.
    ///
    /// # Errors
    /// [`TaskError::NotFound`]; [`TaskError::Terminal`] for a task that finished.
    fn set_message<'a>(
        &'a self,
        id: &'a str,
        message: Option<String>,
    ) -> StoreFuture<'a, Result<Task, TaskError>> {
        let _ = (id, message);
        Box::pin(std::future::ready(Err(TaskError::Backend(
            "this task store keeps no status message apart from a status".into(),
        ))))
    }

    /// Records what the work ended with: `completed` for a result, `failed` for an error or
    /// a tool result with `isError` (`failed` is then asked for explicitly). A task already
    /// cancelled stays cancelled and the outcome is dropped (`[TK-19]`).
    ///
    /// # Errors
    /// [`TaskError::NotFound`]; [`TaskError::IllegalTransition`] when it already finished.
    fn finish<'a>(
        &'a self,
        id: &'a str,
        outcome: Outcome,
        failed: bool,
    ) -> StoreFuture<'a, Result<Task, TaskError>>;

    /// Cancels task `id` of `owner`: its status is `cancelled` when this returns
    /// (`[TK-19]`), and a waiting [`result`](TaskStore::result) gets [`Outcome::Cancelled`].
    ///
    /// # Errors
    /// [`TaskError::NotFound`]; [`TaskError::Terminal`] (`[TK-14]`).
    fn cancel<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<Task, TaskError>>;

    /// One page of `owner`'s tasks, oldest first, and the cursor of the next page
    /// (`[TK-18]`: every task the owner can get is listed).
    ///
    /// # Errors
    /// [`TaskError::InvalidCursor`].
    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        page: usize,
    ) -> StoreFuture<'a, Result<TaskPage, TaskError>>;

    /// Waits until task `id` of `owner` is terminal (`[TK-16]`), then returns it with its
    /// outcome (`[TK-15]`).
    ///
    /// # Errors
    /// [`TaskError::NotFound`], also when the task expires while waiting.
    fn result<'a>(
        &'a self,
        owner: &'a Owner,
        id: &'a str,
    ) -> StoreFuture<'a, Result<(Task, Outcome), TaskError>>;
}

/// A new task id: 128 random bits, hex (`[TK-8]`, `[TK-24]`).
///
/// # Errors
/// [`TaskError::Randomness`] when the system has no randomness to give.
pub fn new_task_id() -> Result<String, TaskError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| TaskError::Randomness(e.to_string()))?;
    let mut id = String::with_capacity(37);
    id.push_str("tsk_");
    for b in bytes {
        id.push_str(&format!("{b:02x}"));
    }
    Ok(id)
}
