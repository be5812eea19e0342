//! The tasks extension of revision 2026-07-28 (`io.modelcontextprotocol/tasks`, SEP-2663;
//! SPEC-2026-NOTES §16): `tools/call` answered with a `CreateTaskResult`, then `tasks/get`,
//! `tasks/update` and `tasks/cancel`, on the server's [`TaskStore`] and its status machine.
//!
//! **When a call becomes a task.** The server decides (`[D26-130]`): a call of a tool whose
//! `execution.taskSupport` is `optional` or `required`, from a request whose own
//! `clientCapabilities` declare the extension, runs in the foreground like any modern request
//! and becomes a task the first time its handler waits for something other than client input
//! (a sleep, IO, [`Context::run_as_task`](crate::Context::run_as_task)), or, when the handler
//! deferred that ([`Context::defer_task`](crate::Context::defer_task)), only where it calls
//! `run_as_task` (a forwarded call, say, whose waits are for another server). A call that finishes
//! at once is answered directly (the spec's immediate-result shortcut), except for a tool that
//! requires a task, whose result is then kept in a task that is already `completed`. Input the
//! handler asks for *before* that point is a multi round-trip round (`input_required` result,
//! [`super::mrtr`]); input asked for *after* it makes the task `input_required` with those
//! `inputRequests`, and the handler waits until `tasks/update` brings the answers.
//!
//! **Whose task.** There is no session in this era. Every task a modern request creates belongs
//! to one owner, [`MODERN_OWNER`], which no 2025-era session shares (their owners are per
//! session), so neither era reaches the other's tasks. Within the modern era the task id is the
//! capability: 128 random bits (`[D26-136]`, `[TK-24]`), never listed (`tasks/list` does not
//! exist), so only the client that received it (or one it handed the id to) can name it.
//! When the transport authenticated the request, the owner is that subject instead
//! ([`owner_of`]), for `tasks/*` and for the `notifications/tasks` a listen stream carries.
//!
//! **Where the state lives.** Status, result and error are in the store (so `tasks/get` reads
//! them wherever the store is shared). The outstanding input requests of a running task and the
//! handle that stops its work are kept by this process ([`ModernTasks`]), where the handler
//! that waits for the answers runs; both are bounded by the store's task bound, since a task
//! exists before its work is spawned.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_tasks::{Outcome, Owner, TaskError};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::methods;
use switchboard_types::modern::{InputRequest, SubscriptionFilter, TASKS_EXTENSION};
use switchboard_types::tasks::{Task, TaskStatus};
use switchboard_types::tools::TaskSupport;
use switchboard_types::{ClientCapabilities, ErrorCode, ErrorObject, ServerCapabilities};
use tokio::sync::oneshot;

use super::hub::{MODERN_OWNER, Plan, Running, TaskHub};
use super::listen::Event;
use super::mrtr::ModernCall;

/// The owner of the tasks a modern request creates or names: [`MODERN_OWNER`], or, when the
/// transport authenticated the request, that owner and the caller's subject together, so that
/// one subject's tasks are "not found" for every other (`[SEC-TK-1]`).
pub(crate) fn owner_of(cx: &RequestContext) -> Owner {
    match crate::arrival::auth_of(cx) {
        Some(auth) => Owner::new(format!("{MODERN_OWNER}|{}", auth.owner_key())),
        None => Owner::new(MODERN_OWNER),
    }
}

/// Whether the server offers the extension: it may run tools as tasks (a tool supports tasks,
/// or tasks were enabled). Discover then lists the extension instead of `tasks` (`[D26-137]`).
pub(crate) fn offered(caps: &ServerCapabilities) -> bool {
    caps.supports_task_tool_calls()
}

/// Whether a request's capabilities declare the extension (`[D26-130]`; a legacy `tasks`
/// capability does not count, `[D26-137]`).
pub(crate) fn declared(caps: &ClientCapabilities) -> bool {
    caps.extra
        .get("extensions")
        .and_then(|e| e.get(TASKS_EXTENSION))
        .is_some_and(Value::is_object)
}

/// The server's discover capabilities gain `extensions["io.modelcontextprotocol/tasks"]`.
pub(crate) fn advertise(caps: &mut ServerCapabilities, offered: bool) {
    if !offered {
        return;
    }
    let extensions = caps
        .extra
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = extensions {
        m.entry(TASKS_EXTENSION)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// -32021 naming the extension (`[D26-132]`, `[D26-142]`).
pub(crate) fn extension_required(message: impl Into<String>) -> ErrorObject {
    let mut required = ClientCapabilities::default();
    required.extra.insert(
        "extensions".into(),
        serde_json::json!({ TASKS_EXTENSION: {} }),
    );
    switchboard_types::modern::missing_capability(message, &required)
}

/// Decides, before the handler runs, whether a `tools/call` may become a task.
///
/// # Errors
/// -32021 when the tool requires a task and the request did not declare the extension
/// (`[D26-132]`).
pub(crate) fn plan(
    caps: &ServerCapabilities,
    call: &ModernCall,
    support: TaskSupport,
    tool: &str,
) -> Result<(), ErrorObject> {
    if support == TaskSupport::Forbidden || !offered(caps) {
        return Ok(());
    }
    if !declared(call.capabilities()) {
        if support == TaskSupport::Required {
            return Err(extension_required(format!(
                "tool {} runs only as a task: declare the {TASKS_EXTENSION} extension",
                switchboard_types::error::echo(tool)
            )));
        }
        return Ok(());
    }
    let _ = call.task.plan.set(Plan {
        required: support == TaskSupport::Required,
    });
    Ok(())
}

/// The flat task members of this revision (`ttlMs`, `pollIntervalMs`; no `requestState`).
fn task_members(task: &Task) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("taskId".into(), Value::String(task.task_id.clone()));
    m.insert("status".into(), Value::String(task.status.as_str().into()));
    if let Some(msg) = &task.status_message {
        m.insert("statusMessage".into(), Value::String(msg.clone()));
    }
    m.insert("createdAt".into(), Value::String(task.created_at.clone()));
    m.insert(
        "lastUpdatedAt".into(),
        Value::String(task.last_updated_at.clone()),
    );
    m.insert("ttlMs".into(), task.ttl.map_or(Value::Null, Value::from));
    if let Some(p) = task.poll_interval {
        m.insert("pollIntervalMs".into(), Value::from(p));
    }
    m
}

/// The `DetailedTask` of `task` (`[D26-135]`): its members and the one its status adds.
async fn detailed(server: &TaskHub, owner: &Owner, task: Task) -> Map<String, Value> {
    let mut m = task_members(&task);
    match task.status {
        TaskStatus::InputRequired => {
            m.insert(
                "inputRequests".into(),
                Value::Object(server.work.requests(&task.task_id)),
            );
        }
        TaskStatus::Completed | TaskStatus::Failed => {
            match server.store.result(owner, &task.task_id).await {
                Ok((_, Outcome::Result(raw))) => {
                    if let Ok(v) = serde_json::from_str::<Value>(raw.get()) {
                        m.insert("result".into(), v);
                    }
                }
                Ok((_, Outcome::Error(e))) => {
                    if let Ok(v) = serde_json::to_value(&e) {
                        m.insert("error".into(), v);
                    }
                }
                _ => {}
            }
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    m
}

/// Tells open listen streams that asked for task `id` its state (`notifications/tasks`).
async fn publish(server: &TaskHub, owner: &Owner, id: &str) {
    if server.listeners.count() == 0 {
        return;
    }
    if let Ok(task) = server.store.get(owner, id).await {
        let body = Value::Object(detailed(server, owner, task).await).to_string();
        server
            .listeners
            .publish(&Event::Task(owner.clone(), id.to_owned(), body));
    }
}

/// Moves task `id` to `status` (input wanted or not) and tells the listeners.
async fn set_status(server: &TaskHub, owner: &Owner, id: &str, status: TaskStatus) {
    let message = (status == TaskStatus::InputRequired)
        .then(|| "waiting for the client's input (tasks/update)".to_owned());
    if server.store.set_status(id, status, message).await.is_ok() {
        publish(server, owner, id).await;
    }
}

/// A handler's ask for client input inside a running task: the task becomes `input_required`
/// with it, and the ask waits for the answer `tasks/update` brings. An answer of the wrong
/// shape is asked for again under a new key. `None` when the request's capabilities do not
/// cover the ask (`[D26-41]`) or the task ended.
pub(crate) async fn ask<R: DeserializeOwned>(
    call: &ModernCall,
    key: Option<&str>,
    request: InputRequest,
) -> Option<R> {
    let running = call.task.running()?.clone();
    if !request.allowed_by(call.capabilities()) {
        return None;
    }
    let server = &running.server;
    let base = key.map_or_else(|| request.method().replace('/', "-"), str::to_owned);
    loop {
        let rx = {
            let mut inputs = server.work.inputs.lock().ok()?;
            let task = inputs.entry(running.id.clone()).or_default();
            let mut key = base.clone();
            let mut n = 1;
            while task.issued.contains(&key) {
                n += 1;
                key = format!("{base}-{n}");
            }
            task.issued.insert(key.clone());
            let (tx, rx) = oneshot::channel();
            task.outstanding.insert(key, (request.clone(), tx));
            rx
        };
        set_status(
            server,
            &running.owner,
            &running.id,
            TaskStatus::InputRequired,
        )
        .await;
        let answer = rx.await.ok()?;
        if let Ok(r) = serde_json::from_value::<R>(answer) {
            return Some(r);
        }
    }
}

/// A future that is pending once (waking itself), so that the request's front door sees its
/// handler wait and runs the rest as a task.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The most bytes of a task's status message
/// [`Context::set_task_message`](crate::Context::set_task_message) keeps (a gateway relays its
/// upstreams' messages there): longer ones are cut, with an ellipsis.
pub(crate) const MAX_TASK_MESSAGE_BYTES: usize = 1024;

/// [`Context::set_task_message`](crate::Context::set_task_message) for a modern request.
pub(crate) async fn set_message(call: &ModernCall, message: Option<String>) -> bool {
    let Some(running) = call.task.running() else {
        return false;
    };
    let server = &running.server;
    match server.store.set_message(&running.id, message).await {
        Ok(_) => {
            publish(server, &running.owner, &running.id).await;
            true
        }
        Err(e) => {
            tracing::debug!(task = %running.id, error = %e, "task status message not kept");
            false
        }
    }
}

/// [`Context::defer_task`](crate::Context::defer_task) for a modern request.
pub(crate) fn defer(call: &ModernCall) -> bool {
    call.task
        .deferred
        .store(true, std::sync::atomic::Ordering::Release);
    call.task.may_start()
}

/// [`Context::run_as_task`](crate::Context::run_as_task) for a modern request.
pub(crate) async fn start_here(call: &ModernCall) -> bool {
    call.task
        .deferred
        .store(false, std::sync::atomic::Ordering::Release);
    if call.task.may_start() {
        YieldOnce(false).await;
    }
    call.task.running().is_some()
}

/// Answers a modern `tools/call` whose handler waits with a new task (`[D26-134]`: once the
/// task is in the store), and runs the rest of the handler in the background.
pub(crate) async fn detach(
    server: Arc<TaskHub>,
    call: Arc<ModernCall>,
    work: Pin<Box<BoxFuture<HandlerResult>>>,
) -> HandlerResult {
    let owner = call.task.owner();
    let task = create(&server, &owner).await?;
    let id = task.task_id.clone();
    let _ = call.task.running.set(Arc::new(Running {
        id: id.clone(),
        owner: owner.clone(),
        server: server.clone(),
    }));
    {
        // Held while the work is spawned, so that the work forgets its handle only after it
        // was kept.
        let mut running = server.work.work.lock().unwrap_or_else(|p| p.into_inner());
        let handle = {
            let server = server.clone();
            let id = id.clone();
            tokio::spawn(async move {
                let outcome = work.await;
                settle(&server, &owner, &id, outcome).await;
            })
        };
        running.insert(id, handle.abort_handle());
    }
    created(&server, &task)
}

/// A call of a tool that requires a task, finished in the foreground: its outcome is kept in a
/// task (`completed` or `failed`) and the call is answered with that task. `None` when the
/// call may be answered directly.
pub(crate) async fn settle_required(
    server: &Arc<TaskHub>,
    call: &ModernCall,
    outcome: &HandlerResult,
) -> Option<HandlerResult> {
    if !call.task.plan.get().is_some_and(|p| p.required) {
        return None;
    }
    let owner = call.task.owner();
    let task = match create(server, &owner).await {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    settle(server, &owner, &task.task_id, outcome.clone()).await;
    let task = server
        .store
        .get(&owner, &task.task_id)
        .await
        .unwrap_or(task);
    Some(created(server, &task))
}

async fn create(server: &TaskHub, owner: &Owner) -> Result<Task, ErrorObject> {
    server
        .store
        .create(owner, None)
        .await
        .map_err(|e| e.to_error_object())
}

/// The `CreateTaskResult` (`[D26-133]`: `resultType` task, flat task members).
fn created(server: &TaskHub, task: &Task) -> HandlerResult {
    let mut m = task_members(task);
    m.insert("resultType".into(), Value::String("task".into()));
    m.insert("_meta".into(), Value::Object(server.results.server_info()));
    to_raw(&m).map_err(|e| ErrorObject::internal(e.to_string()))
}

/// Keeps what the handler ended with (`[D26-135]`: a tool result, `isError` included, is
/// `completed`; only a JSON-RPC error is `failed`), exactly as the call would have answered.
async fn settle(server: &TaskHub, owner: &Owner, id: &str, outcome: HandlerResult) {
    let (outcome, failed) = match outcome {
        Ok(raw) => match server.results.finish(methods::TOOLS_CALL, raw.get()) {
            Ok(done) => (Outcome::Result(Arc::from(done)), false),
            Err(e) => (Outcome::Error(e), true),
        },
        Err(e) => (Outcome::Error(retired(e)), true),
    };
    match server.store.finish(id, outcome, failed).await {
        Ok(_) => publish(server, owner, id).await,
        Err(e) => tracing::debug!(task = %id, error = %e, "task outcome not stored"),
    }
    server.work.forget(id);
}

/// A handler's error as a task keeps it in this revision (`[D26-118]`, `[D26-119]`): the retired
/// resource-not-found code becomes -32602; a URL elicitation required (-32042), which a task
/// cannot turn into an input-required round, becomes -32603.
fn retired(e: ErrorObject) -> ErrorObject {
    match e.code {
        ErrorCode::RESOURCE_NOT_FOUND => ErrorObject {
            code: ErrorCode::INVALID_PARAMS,
            ..e
        },
        ErrorCode::URL_ELICITATION_REQUIRED => {
            ErrorObject::internal("a URL elicitation was required inside a task")
                .with_data(serde_json::json!({"reason": "url_elicitation_required"}))
        }
        _ => e,
    }
}

/// The `taskId` of a tasks request (-32602 when missing).
fn task_id(params: &Map<String, Value>, method: &str) -> Result<String, ErrorObject> {
    match params.get("taskId") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid params for {method}: taskId must be a string"),
        )
        .with_data(serde_json::json!({"reason": "invalid_params", "field": "taskId"}))),
    }
}

fn not_found(e: &TaskError) -> ErrorObject {
    e.to_error_object()
}

/// Serves `tasks/get`, `tasks/update` or `tasks/cancel` of the tasks extension for `owner`
/// (`[D26-133]`..`[D26-139]`), its params parsed.
pub(crate) async fn serve(
    server: &TaskHub,
    owner: &Owner,
    method: &str,
    params: &Map<String, Value>,
) -> HandlerResult {
    let id = task_id(params, method)?;
    let store = &server.store;
    let empty = || to_raw(&Map::new()).map_err(|e| ErrorObject::internal(e.to_string()));
    match method {
        methods::TASKS_GET => {
            let task = store.get(owner, &id).await.map_err(|e| not_found(&e))?;
            to_raw(&detailed(server, owner, task).await)
                .map_err(|e| ErrorObject::internal(e.to_string()))
        }
        methods::TASKS_UPDATE => {
            let task = store.get(owner, &id).await.map_err(|e| not_found(&e))?;
            let responses = match params.get("inputResponses") {
                Some(Value::Object(m)) => m.clone(),
                _ => {
                    return Err(ErrorObject::new(
                        ErrorCode::INVALID_PARAMS,
                        "Invalid params for tasks/update: inputResponses must be an object",
                    )
                    .with_data(serde_json::json!({"reason": "invalid_input_responses"})));
                }
            };
            let (answered, none_left) = server.work.answer(&id, &responses);
            // The new state shows on the next tasks/get (`[D26-139]`).
            if answered && none_left && task.status == TaskStatus::InputRequired {
                set_status(server, owner, &id, TaskStatus::Working).await;
            }
            empty()
        }
        _ => {
            match store.cancel(owner, &id).await {
                Ok(_) => {
                    server.work.stop(&id);
                    publish(server, owner, &id).await;
                }
                // A terminal task is acknowledged all the same (`[D26-139]`).
                Err(TaskError::Terminal { .. }) => {}
                Err(e) => return Err(not_found(&e)),
            }
            empty()
        }
    }
}

/// -32021 for a listen filter naming tasks from a request without the extension (`[D26-142]`).
pub(crate) fn check_listen(
    call: Option<&ModernCall>,
    filter: &SubscriptionFilter,
) -> Result<(), ErrorObject> {
    if filter.extra.contains_key("taskIds") && !call.is_some_and(|c| declared(c.capabilities())) {
        return Err(extension_required(
            "a listen filter with taskIds needs the tasks extension",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_tasks::{InMemoryTaskStore, TaskLimits};
    use switchboard_types::Implementation;
    use switchboard_types::tools::{CallToolResult, Tool};

    /// `[D26-34]` `[D26-130]` composition with multi round-trip requests
    /// (`tasks-mrtr-composition`): a handler that deferred the task waits (as a call forwarded
    /// elsewhere does) and stays the request's, so its ask is an input-required round, not a
    /// task; on the next round it has its answer and becomes a task where it says so.
    #[tokio::test]
    async fn d26_34_a_deferred_call_asks_in_rounds_then_becomes_a_task_where_it_says() {
        let server = crate::Server::builder(Implementation::new("deferred", "1"))
            .tool(
                Tool::new("greet_later", serde_json::json!({"type": "object"}))
                    .with_task_support(TaskSupport::Required),
                |call| async move {
                    assert!(call.cx.defer_task(), "the call may become a task");
                    // A wait that is not the task's work yet.
                    tokio::task::yield_now().await;
                    let name = call
                        .cx
                        .list_roots_as("who")
                        .await
                        .map_err(|e| crate::ToolError::new(e.to_string()))?;
                    assert!(call.cx.run_as_task().await, "a task from here");
                    Ok(CallToolResult::text(format!("{} roots", name.roots.len())))
                },
            )
            .build()
            .unwrap();
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        server.serve(ours).unwrap();
        let call = |id: u32, extra: Value| {
            let mut params = serde_json::json!({"name": "greet_later", "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"roots": {}, "extensions": {TASKS_EXTENSION: {}}}}});
            if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
                p.extend(e);
            }
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": methods::TOOLS_CALL, "params": params})
                .to_string()
        };
        theirs
            .send_text(call(1, serde_json::json!({})))
            .await
            .unwrap();
        let first: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        assert_eq!(first["result"]["resultType"], "input_required", "{first}");
        assert!(first["result"].get("taskId").is_none(), "{first}");
        assert!(
            first["result"]["inputRequests"].get("who").is_some(),
            "{first}"
        );
        let mut again =
            serde_json::json!({"inputResponses": {"who": {"roots": [{"uri": "file:///a"}]}}});
        if let Some(state) = first["result"].get("requestState") {
            again["requestState"] = state.clone();
        }
        theirs.send_text(call(2, again)).await.unwrap();
        let second: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        assert_eq!(second["result"]["resultType"], "task", "{second}");
        assert!(second["result"].get("requestState").is_none(), "{second}");
        let id = second["result"]["taskId"].as_str().unwrap().to_owned();
        let get = |n: u32| {
            serde_json::json!({"jsonrpc": "2.0", "id": n, "method": methods::TASKS_GET,
                "params": {"taskId": id, "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}}})
            .to_string()
        };
        let mut n = 3;
        let done = loop {
            theirs.send_text(get(n)).await.unwrap();
            let got: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
            if got["result"]["status"] == "completed" {
                break got;
            }
            assert_eq!(got["result"]["status"], "working", "{got}");
            n += 1;
            tokio::task::yield_now().await;
        };
        assert_eq!(
            done["result"]["result"]["content"][0]["text"], "1 roots",
            "{done}"
        );
    }

    /// The status message a running task's handler sets to `message`, as `tasks/get` shows it
    /// (its status unchanged; before the call is a task there is none to set).
    async fn shown_status_message(message: &'static str) -> Value {
        let server = crate::Server::builder(Implementation::new("messages", "1"))
            .tool(
                Tool::new("report", serde_json::json!({"type": "object"}))
                    .with_task_support(TaskSupport::Optional),
                move |call| async move {
                    assert!(!call.cx.set_task_message(Some("too early")).await);
                    assert!(call.cx.run_as_task().await);
                    assert!(call.cx.set_task_message(Some(message)).await);
                    std::future::pending::<()>().await;
                    Ok(CallToolResult::text("never"))
                },
            )
            .build()
            .unwrap();
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        server.serve(ours).unwrap();
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}});
        let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_CALL,
            "params": {"name": "report", "_meta": meta}});
        theirs.send_text(call.to_string()).await.unwrap();
        let created: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        let id = created["result"]["taskId"].as_str().unwrap().to_owned();
        let mut n = 2;
        loop {
            let get = serde_json::json!({"jsonrpc": "2.0", "id": n, "method": methods::TASKS_GET,
                "params": {"taskId": id, "_meta": meta}});
            theirs.send_text(get.to_string()).await.unwrap();
            let got: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
            assert_eq!(got["result"]["status"], "working", "{got}");
            if !got["result"]["statusMessage"].is_null() {
                return got["result"]["statusMessage"].clone();
            }
            n += 1;
            assert!(n < 10_000, "the status message never showed");
            tokio::task::yield_now().await;
        }
    }

    /// `[D26-135]`: the status message a running task's handler sets shows on `tasks/get`,
    /// with its status unchanged; before the call is a task there is none to set.
    #[tokio::test]
    async fn d26_135_a_tasks_status_message_is_set_by_its_handler() {
        assert_eq!(shown_status_message("halfway").await, "halfway");
    }

    /// A status message is bounded by bytes: one over `MAX_TASK_MESSAGE_BYTES` (a gateway relays
    /// an upstream's) is kept cut at a character boundary, with an ellipsis.
    #[tokio::test]
    async fn a_tasks_status_message_over_its_byte_bound_is_cut() {
        let long: &'static str = "é".repeat(MAX_TASK_MESSAGE_BYTES).leak();
        let shown = shown_status_message(long).await;
        let shown = shown.as_str().unwrap();
        assert!(shown.len() <= MAX_TASK_MESSAGE_BYTES + 3, "{}", shown.len());
        assert!(shown.len() > MAX_TASK_MESSAGE_BYTES - 4, "{}", shown.len());
        assert!(shown.ends_with('\u{2026}'));
        // Exactly at the bound: kept whole.
        let at: &'static str = "a".repeat(MAX_TASK_MESSAGE_BYTES).leak();
        assert_eq!(shown_status_message(at).await, at);
    }

    #[tokio::test]
    async fn the_modern_owner_is_bounded_like_any_requestor() {
        let limits = TaskLimits::default().with_max_tasks_per_owner(1);
        let server = crate::Server::builder(Implementation::new("bounded", "1"))
            .task_store(Arc::new(InMemoryTaskStore::new(limits)))
            .tool(
                Tool::new("slow", serde_json::json!({"type": "object"}))
                    .with_task_support(TaskSupport::Optional),
                |_| async {
                    tokio::time::sleep(std::time::Duration::from_secs(60)).await;
                    Ok(CallToolResult::text("late"))
                },
            )
            .build()
            .unwrap();
        let (ours, mut theirs) = switchboard_jsonrpc::memory::pair();
        server.serve(ours).unwrap();
        let call = |id: u32| {
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": methods::TOOLS_CALL,
                "params": {"name": "slow", "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}}})
            .to_string()
        };
        theirs.send_text(call(1)).await.unwrap();
        let first: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        assert_eq!(first["result"]["resultType"], "task", "{first}");
        theirs.send_text(call(2)).await.unwrap();
        let second: Value = serde_json::from_str(&theirs.recv_text().await.unwrap()).unwrap();
        assert_eq!(second["error"]["code"], -32603, "{second}");
        assert_eq!(second["error"]["data"]["reason"], "too_many_tasks");
    }
}
