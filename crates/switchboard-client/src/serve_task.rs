//! Client side as the receiver: the server's `sampling/createMessage` and `elicitation/create`
//! run as tasks (2025-11-25, SEP-1686; SPEC-NOTES §9) when this client declared
//! `tasks.requests.sampling.createMessage` / `tasks.requests.elicitation.create`
//! ([`ClientBuilder::enable_tasks`](crate::ClientBuilder::enable_tasks)).
//!
//! A task-augmented request is answered at once with a `CreateTaskResult` (`[TK-7]`); the
//! installed handler runs in the background and its outcome is kept in the client's
//! [`TaskStore`] (the same store and status machine as the server's), for the server's
//! `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel`, each scoped to the session
//! that created the task (`[TK-23]`). `notifications/tasks/status` goes out when a task ends
//! or is cancelled. A request whose type this client did not declare for tasks is handled as a
//! plain request, its `task` ignored (`[TK-6]`).

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::invalid_params;
use switchboard_jsonrpc::{HandlerResult, Peer, RequestContext};
use switchboard_tasks::serve::{self, Running};
use switchboard_tasks::{Outcome, Owner, TaskStore};
use switchboard_types::capabilities::{
    ClientCapabilities, ClientTaskRequests, ClientTasksCapability, ElicitationTaskRequests,
    SamplingTaskRequests,
};
use switchboard_types::catalogue::{Method, TaskStatus as TaskStatusChanged};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::meta::{EmptyObject, PaginatedRequestParams};
use switchboard_types::tasks::{
    CreateTaskResult, GetTaskRequestParams, Task, TaskMetadata, TaskStatus,
    TaskStatusNotificationParams,
};
use switchboard_types::{ErrorObject, Feature, ProtocolVersion, Request};

/// The page size of the client's `tasks/list` answers.
pub(crate) const TASK_LIST_PAGE: usize = 100;

/// The client's tasks, shared by the sessions of one [`Client`](crate::Client): the store and
/// the handlers still running (to stop them on `tasks/cancel` or when their session closes).
pub(crate) struct ClientTasks {
    pub(crate) store: Arc<dyn TaskStore>,
    running: Running<RequestContext>,
}

impl fmt::Debug for ClientTasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTasks")
            .field("store", &self.store)
            .field("running", &self.running)
            .finish()
    }
}

/// Numbers the sessions of every client of the process: each session's tasks have their own
/// owner.
static NEXT_SCOPE: AtomicU64 = AtomicU64::new(1);

/// A new scope (owner key) for a session.
pub(crate) fn new_scope() -> u64 {
    NEXT_SCOPE.fetch_add(1, Ordering::Relaxed)
}

fn owner(scope: u64) -> Owner {
    Owner::new(format!("session-{scope}"))
}

/// Which request a task would run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskKind {
    /// `sampling/createMessage`.
    Sampling,
    /// `elicitation/create`.
    Elicitation,
}

impl ClientTasks {
    pub(crate) fn new(store: Arc<dyn TaskStore>) -> Arc<Self> {
        Arc::new(ClientTasks {
            store,
            running: Running::default(),
        })
    }

    /// Stops the tasks of a session that closed.
    pub(crate) fn session_closed(&self, scope: u64) {
        self.running.scope_closed(scope);
    }
}

/// The `tasks` capability a client with task support declares: `list`, `cancel`, and each
/// request type it has a handler for. An explicit `tasks` capability wins.
pub(crate) fn declare(caps: &mut ClientCapabilities, sampling: bool, elicitation: bool) {
    if caps.tasks.is_some() || !(sampling || elicitation) {
        return;
    }
    caps.tasks = Some(ClientTasksCapability {
        list: Some(EmptyObject::default()),
        cancel: Some(EmptyObject::default()),
        requests: Some(ClientTaskRequests {
            sampling: sampling.then(|| SamplingTaskRequests {
                create_message: Some(EmptyObject::default()),
                ..Default::default()
            }),
            elicitation: elicitation.then(|| ElicitationTaskRequests {
                create: Some(EmptyObject::default()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
}

/// Whether a request of `kind` asking for a task runs as one: this client declared the request
/// type (`capabilities`) and the negotiated revision has tasks.
pub(crate) fn runs_as_task(
    capabilities: &ClientCapabilities,
    version: Option<ProtocolVersion>,
    kind: TaskKind,
) -> bool {
    let requests = capabilities
        .tasks
        .as_ref()
        .and_then(|t| t.requests.as_ref());
    let declared = match kind {
        TaskKind::Sampling => requests
            .and_then(|r| r.sampling.as_ref())
            .is_some_and(|s| s.create_message.is_some()),
        TaskKind::Elicitation => requests
            .and_then(|r| r.elicitation.as_ref())
            .is_some_and(|e| e.create.is_some()),
    };
    declared && version.is_some_and(|v| v.supports(Feature::Tasks))
}

/// Runs `work` (the handler's answer to the request `cx`) as a task of session `scope`: answers
/// the `CreateTaskResult` at once (`[TK-7]`) and keeps the request's progress token until the
/// task ends (`[TK-17]`). The caller has checked [`runs_as_task`]; a request that did not ask
/// for a task, or that this client does not run as one, is answered by `work` itself
/// (`[TK-6]`).
pub(crate) async fn run<W>(
    tasks: &Arc<ClientTasks>,
    scope: u64,
    task: &TaskMetadata,
    cx: &RequestContext,
    work: W,
) -> HandlerResult
where
    W: Future<Output = HandlerResult> + Send + 'static,
{
    let created = tasks
        .store
        .create(&owner(scope), task.ttl)
        .await
        .map_err(|e| e.to_error_object())?;
    let id = created.task_id.clone();
    cx.keep_progress().await;
    let peer = cx.peer().unrelated();
    let (go, registered) = tokio::sync::oneshot::channel::<()>();
    let handle = {
        let tasks = tasks.clone();
        let id = id.clone();
        let progress = cx.clone();
        tokio::spawn(async move {
            let _ = registered.await;
            let (outcome, failed) = match work.await {
                Ok(raw) => (Outcome::Result(Arc::from(raw)), false),
                Err(e) => (Outcome::Error(e), true),
            };
            progress.end_progress().await;
            match tasks.store.finish(&id, outcome, failed).await {
                Ok(done) => notify_status(&peer, done).await,
                Err(e) => tracing::debug!(task = %id, error = %e, "task outcome not stored"),
            }
            tasks.running.finished(&id);
        })
    };
    tasks
        .running
        .started(id.clone(), scope, handle.abort_handle(), cx.clone());
    // A `tasks/cancel` that came before the work was registered stops it now.
    if let Ok(t) = tasks.store.get(&owner(scope), &id).await
        && t.status == TaskStatus::Cancelled
        && let Some(call) = tasks.running.stop(&id)
    {
        call.end_progress().await;
    }
    let _ = go.send(());
    encode(&CreateTaskResult::new(created))
}

/// Sends `notifications/tasks/status` (`[TK-20]`: the server may ignore it). A refusal or a
/// closed session is only logged.
async fn notify_status(peer: &Peer, task: Task) {
    let params = TaskStatusNotificationParams::from(task);
    if let Err(e) = peer.notify(TaskStatusChanged::NAME, Some(&params)).await {
        tracing::debug!(error = %e, "task status notification not sent");
    }
}

fn parse<T: DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    let text = req.params.as_ref().map_or("null", |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(&req.method, &e))
}

fn encode<T: serde::Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result not serializable: {e}")))
}

/// The answer to one of the task methods (`tasks/get`, `tasks/result`, `tasks/list`,
/// `tasks/cancel`) for session `scope`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TaskMethod {
    /// `tasks/get`.
    Get,
    /// `tasks/result`: blocks until the task is terminal (`[TK-16]`).
    Result,
    /// `tasks/list`: [`TASK_LIST_PAGE`] tasks at a time.
    List,
    /// `tasks/cancel`: `cancelled` before the reply, then the handler is stopped (`[TK-19]`).
    Cancel,
}

/// Answers `method` for session `scope` from `tasks`.
pub(crate) async fn answer(
    tasks: &ClientTasks,
    scope: u64,
    method: TaskMethod,
    req: &Request,
    cx: &RequestContext,
) -> HandlerResult {
    let store = &*tasks.store;
    let owner = owner(scope);
    match method {
        TaskMethod::Get => encode(&serve::get(store, &owner, &parse(req)?).await?),
        TaskMethod::Result => encode(&serve::result(store, &owner, &parse(req)?).await?),
        TaskMethod::List => {
            let p: PaginatedRequestParams = match &req.params {
                None => PaginatedRequestParams::default(),
                Some(_) => parse(req)?,
            };
            encode(&serve::list(store, &owner, &p, TASK_LIST_PAGE).await?)
        }
        TaskMethod::Cancel => {
            let p: GetTaskRequestParams = parse(req)?;
            let cancelled = serve::cancel(store, &owner, &p).await?;
            if let Some(call) = tasks.running.stop(&p.task_id) {
                call.end_progress().await;
            }
            notify_status(&cx.peer().unrelated(), cancelled.task.clone()).await;
            encode(&cancelled)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_task_list_page_is_100_tasks() {
        // `tests/tests/e2e/tasks_client.rs` `tk_18_the_clients_task_list_comes_in_pages` counts on it.
        assert_eq!(super::TASK_LIST_PAGE, 100);
    }
}
