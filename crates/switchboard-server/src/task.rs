//! Server side: tools run as tasks (2025-11-25, SEP-1686; SPEC-NOTES §9). A task-augmented
//! `tools/call` is answered at once with a `CreateTaskResult`; the same tool handler then runs
//! in the background and its outcome is kept in the server's [`TaskStore`] for `tasks/result`.
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` are answered from the store,
//! scoped to the session that created the task (`[TK-23]`).
//!
//! While a task waits for the client's input (`input_required`), its requests to the client
//! relate to an open `tasks/result` of that task when there is one, so that Streamable HTTP
//! sends them on that request's SSE stream; otherwise they are unrelated (the standalone
//! stream). The progress token of the creating call stays valid until the task is terminal
//! (`[TK-17]`).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{
    BoxFuture, HandlerResult, Peer, RequestContext, RequestError, RequestOptions,
};
use switchboard_tasks::serve::{self, Running};
use switchboard_tasks::{Outcome, Owner, TaskStore};
use switchboard_types::catalogue::{Method, TaskStatus as TaskStatusChanged};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::tasks::GetTaskRequestParams;
use switchboard_types::tasks::{Task, TaskStatus, TaskStatusNotificationParams};
use switchboard_types::tools::TaskSupport;
use switchboard_types::{ErrorCode, ErrorObject};

pub(crate) use switchboard_tasks::serve::tag_related;

/// One of the four task methods, with its params.
#[derive(Debug)]
pub(crate) enum TaskMethod {
    /// `tasks/get`.
    Get(GetTaskRequestParams),
    /// `tasks/result`.
    Result(GetTaskRequestParams),
    /// `tasks/list`.
    List(PaginatedRequestParams),
    /// `tasks/cancel`.
    Cancel(GetTaskRequestParams),
}

/// The server's tasks: the store, the work still running (to stop it on cancel, with the
/// creating call's context to end its progress token), and the `tasks/result` requests open
/// per task (where a waiting task's requests to the client go).
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    running: Running<RequestContext>,
    results: Mutex<HashMap<String, Vec<(u64, Peer)>>>,
    next_waiter: AtomicU64,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks")
            .field("store", &self.store)
            .field("running", &self.running)
            .finish()
    }
}

/// The task a request runs as, as its [`Context`](crate::Context) knows it.
#[derive(Clone)]
pub(crate) struct TaskLink {
    pub(crate) id: String,
    /// The time to live the client asked for.
    pub(crate) ttl: Option<u64>,
    pub(crate) tasks: Arc<Tasks>,
}

/// Removes a `tasks/result` request from its task's open list when it ends (answered, cancelled
/// or dropped with its session).
struct OpenResult<'a> {
    tasks: &'a Tasks,
    id: String,
    n: u64,
}

impl Drop for OpenResult<'_> {
    fn drop(&mut self) {
        if let Ok(mut r) = self.tasks.results.lock()
            && let Some(list) = r.get_mut(&self.id)
        {
            list.retain(|(n, _)| *n != self.n);
            if list.is_empty() {
                r.remove(&self.id);
            }
        }
    }
}

impl Tasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>) -> Arc<Self> {
        Arc::new(Tasks {
            store,
            running: Running::default(),
            results: Mutex::default(),
            next_waiter: AtomicU64::new(0),
        })
    }

    /// Stops every task of a session that ended: nobody can ask for their results any more.
    pub(crate) fn session_closed(&self, session: u64) {
        self.running.scope_closed(session);
    }

    /// The peer a waiting task's messages to the client go through: related to the latest
    /// open `tasks/result` of the task when there is one, otherwise unrelated.
    fn towards_client(&self, id: &str, fallback: &Peer) -> Peer {
        self.results
            .lock()
            .ok()
            .and_then(|r| r.get(id).and_then(|l| l.last().map(|(_, p)| p.clone())))
            .unwrap_or_else(|| fallback.unrelated())
    }

    fn open_result(&self, id: &str, peer: Peer) -> OpenResult<'_> {
        let n = self.next_waiter.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut r) = self.results.lock() {
            r.entry(id.to_owned()).or_default().push((n, peer));
        }
        OpenResult {
            tasks: self,
            id: id.to_owned(),
            n,
        }
    }

    /// Creates a task for `session`'s call `rc` and runs `work` in the background (`[TK-7]`):
    /// `work` gets the task's [`TaskLink`] and returns the call's outcome and whether it failed.
    /// The call's progress token stays valid until the outcome is stored.
    ///
    /// # Errors
    /// The store's refusal (a bound reached).
    pub(crate) async fn spawn<F, Fut>(
        self: &Arc<Self>,
        session: u64,
        owner: Owner,
        ttl: Option<u64>,
        rc: RequestContext,
        work: F,
    ) -> Result<Task, ErrorObject>
    where
        F: FnOnce(TaskLink) -> Fut,
        Fut: Future<Output = (Outcome, bool)> + Send + 'static,
    {
        let created = self
            .store
            .create(&owner, ttl)
            .await
            .map_err(|e| e.to_error_object())?;
        let id = created.task_id.clone();
        rc.keep_progress().await;
        let peer = rc.peer().unrelated();
        let run = work(TaskLink {
            id: id.clone(),
            ttl,
            tasks: self.clone(),
        });
        let tasks = self.clone();
        let task_id = id.clone();
        let progress = rc.clone();
        // The work starts once it is registered, so that it never ends before it is known.
        let (go, registered) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            let _ = registered.await;
            let (outcome, failed) = run.await;
            // Progress stops at the terminal status: ended before the status is stored.
            progress.end_progress().await;
            match tasks.store.finish(&task_id, outcome, failed).await {
                Ok(done) => notify_status(&peer, done).await,
                Err(e) => tracing::debug!(task = %task_id, error = %e, "task outcome not stored"),
            }
            tasks.running.finished(&task_id);
        });
        self.running
            .started(id.clone(), session, handle.abort_handle(), rc);
        // A `tasks/cancel` that came before the work was registered stops it now.
        if let Ok(t) = self.store.get(&owner, &id).await
            && t.status == TaskStatus::Cancelled
            && let Some(call) = self.running.stop(&id)
        {
            call.end_progress().await;
        }
        let _ = go.send(());
        Ok(created)
    }
}

impl TaskLink {
    /// The peer the task's messages to the client go through now (see [`Tasks`]).
    pub(crate) fn towards_client(&self, fallback: &Peer) -> Peer {
        self.tasks.towards_client(&self.id, fallback)
    }

    /// Sets the task's status message (its status unchanged) and tells the client
    /// (`notifications/tasks/status`); whether the store kept it.
    pub(crate) async fn set_message(&self, fallback: &Peer, message: Option<String>) -> bool {
        match self.tasks.store.set_message(&self.id, message).await {
            Ok(t) => {
                notify_status(&self.towards_client(fallback).unrelated(), t).await;
                true
            }
            Err(e) => {
                tracing::debug!(task = %self.id, error = %e, "task status message not kept");
                false
            }
        }
    }

    /// Sends a request to the client on behalf of the task: the task is `input_required` while
    /// the client answers, and the request carries the task's id (`[TK-13]`). The call that
    /// created the task was answered long ago, so the request goes with an open `tasks/result`
    /// of the task, or unrelated.
    pub(crate) async fn ask<R: DeserializeOwned>(
        &self,
        fallback: &Peer,
        method: &str,
        mut params: serde_json::Value,
    ) -> Result<R, RequestError> {
        tag_related(&mut params, &self.id);
        let store = &self.tasks.store;
        let peer = self.tasks.towards_client(&self.id, fallback);
        let waiting = format!("waiting for the client's answer to {method}");
        if let Ok(t) = store
            .set_status(&self.id, TaskStatus::InputRequired, Some(waiting))
            .await
        {
            notify_status(&peer, t).await;
        }
        let answer = peer
            .call(method, Some(&params), RequestOptions::default())
            .await;
        if let Ok(t) = store.set_status(&self.id, TaskStatus::Working, None).await {
            notify_status(&peer.unrelated(), t).await;
        }
        answer
    }
}

/// The owner of a session's tasks.
pub(crate) fn owner(session: u64) -> Owner {
    Owner::new(format!("session-{session}"))
}

/// What a tool call run as a task ended with, for the store: its result (`failed` when it is an
/// `isError` result) or its error.
pub(crate) fn outcome_of<T: serde::Serialize>(
    r: Result<T, ErrorObject>,
    is_error: impl FnOnce(&T) -> bool,
) -> (Outcome, bool) {
    match r {
        Ok(result) => match to_raw(&result) {
            Ok(raw) => (Outcome::Result(Arc::from(raw)), is_error(&result)),
            Err(e) => (Outcome::Error(ErrorObject::internal(e.to_string())), true),
        },
        Err(e) => (Outcome::Error(e), true),
    }
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
    if let Err(e) = peer.notify(TaskStatusChanged::NAME, Some(&params)).await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
}

fn encode<T: serde::Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
}

/// `tasks/get`, `tasks/result`, `tasks/list` (pages of `page`), `tasks/cancel`, scoped to
/// `owner` (the session's).
pub(crate) fn request(
    tasks: Arc<Tasks>,
    owner: Owner,
    page: usize,
    cx: RequestContext,
    method: TaskMethod,
) -> BoxFuture<HandlerResult> {
    Box::pin(async move {
        let store = &*tasks.store;
        match method {
            TaskMethod::Get(p) => encode(&serve::get(store, &owner, &p).await?),
            TaskMethod::Result(p) => {
                // Only the owner's open results receive its task's requests.
                serve::get(store, &owner, &p).await?;
                let _open = tasks.open_result(&p.task_id, cx.peer().clone());
                encode(&serve::result(store, &owner, &p).await?)
            }
            TaskMethod::List(p) => encode(&serve::list(store, &owner, &p, page).await?),
            TaskMethod::Cancel(p) => {
                let cancelled = serve::cancel(store, &owner, &p).await?;
                if let Some(call) = tasks.running.stop(&p.task_id) {
                    call.end_progress().await;
                }
                notify_status(&cx.peer().unrelated(), cancelled.task.clone()).await;
                encode(&cancelled)
            }
        }
    })
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
