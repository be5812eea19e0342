//! Tasks through the gateway, both eras. The gateway's own server runs a client's task (a
//! 2025-11-25 task-augmented `tools/call`, or a 2026-07-28 call that becomes a task under the
//! tasks extension): the task and its id are the gateway's, kept in its server's task store
//! under the client's owner, so two upstreams' task ids never meet and a client never names
//! another client's task; `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel` (and the
//! 2026-07-28 `tasks/update`) are answered by that server, and its `notifications/tasks/status`
//! go to the client that created the task. The task's work is the forwarded call, run on the
//! upstream as a task of the gateway's session there when the upstream offers tasks for the
//! tool (a 2025 upstream's): the task is started, its result collected with `tasks/result`,
//! and cancelled when the gateway's task is (or its work is dropped). Input the upstream's task
//! asks for reaches the creating client through the gateway's task (`input_required`).
//!
//! A 2026-07-28 upstream decides which calls become tasks (`[D26-130]`), and the gateway
//! follows it: a call that may become the gateway's task is sent with the tasks extension
//! declared, and becomes the gateway's task only when the upstream answers it with one (the
//! handler defers its task until then, `Context::defer_task`), so input the upstream asks for
//! before are the client's input-required rounds, then a task (SEP-2663's composition with
//! multi round-trip requests); the upstream's task is followed by the gateway's client. A 2025
//! upstream cannot compose so: it creates the task before its tool runs, and nothing on its
//! wire says whether the task will ask for input before its work or never, so a 2026-07-28
//! client's call of such a tool becomes the gateway's task as soon as it waits for the upstream.
//!
//! The gateway's capabilities offer tasks only as far as its upstreams do: without an upstream
//! up that offers them (a 2025 upstream's `tasks`, a 2026-07-28 upstream's extension),
//! `initialize` and `server/discover` are answered without them, and a tool is served with
//! task support only when its upstream offers tasks ([`served_support`]).

use serde_json::Value;
use switchboard_client::{ClientError, ClientSession, Era, ProgressUpdate, RequestOptions};
use switchboard_types::capabilities::ServerCapabilities;
use switchboard_types::meta::RELATED_TASK_KEY;
use switchboard_types::methods;
use switchboard_types::modern::TASKS_EXTENSION;
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, TaskSupport, Tool};

/// Whether a server with `caps` runs tools as tasks: the 2025 `tasks.requests.tools.call`, or
/// the 2026-07-28 tasks extension in its discover capabilities.
pub(crate) fn offered(caps: &ServerCapabilities) -> bool {
    caps.supports_task_tool_calls()
        || caps
            .extra
            .get("extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some_and(Value::is_object)
}

/// The task support the gateway serves `tool` with, given the upstream session it comes
/// from (`None`: served without `execution`, as a plain tool), when the upstream offers tasks:
/// on a 2025 upstream, what the tool declares; on a 2026-07-28 upstream, whose tools declare
/// nothing (the server decides which calls become tasks, `[D26-130]`), `optional`: a call that
/// may become the gateway's task is sent with the tasks extension declared and becomes the
/// gateway's task when, and only when, the upstream answers it with one (see
/// [`call_modern`]), so a plain call stays plain, with its progress, and input the upstream
/// asks for before are the client's input-required rounds.
pub(crate) fn served_support(session: Option<&ClientSession>, tool: &Tool) -> Option<TaskSupport> {
    let session = session?;
    if !offered(session.server_capabilities()) {
        return None;
    }
    Some(if session.era() == Era::Modern {
        TaskSupport::Optional
    } else {
        tool.task_support()
    })
}

/// Whether the gateway serves the tasks of upstream `session`'s tools (see [`served_support`]).
pub(crate) fn served(session: &ClientSession) -> bool {
    offered(session.server_capabilities())
}

/// The task support tool `name` (its upstream name) is served with, from upstream `session`'s
/// cached list.
pub(crate) fn support_of(session: &ClientSession, name: &str) -> TaskSupport {
    // Without tasks offered no tool is served with them: the cached list (cloned whole when
    // read) is not looked at.
    if !served(session) {
        return TaskSupport::Forbidden;
    }
    session
        .cached_tools()
        .and_then(|tools| tools.into_iter().find(|t| t.name == name))
        .and_then(|t| served_support(Some(session), &t))
        .unwrap_or(TaskSupport::Forbidden)
}

/// Cancels the upstream's task unless it ended: the gateway's task was cancelled (its work
/// dropped) or the client's request was.
struct Running {
    session: ClientSession,
    id: String,
    ended: bool,
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let (session, id) = (self.session.clone(), std::mem::take(&mut self.id));
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = session.cancel_task(&id).await {
                    tracing::debug!(task = %id, error = %e, "the upstream's task was not cancelled");
                }
            });
        }
    }
}

/// Runs `tools/call` of `params` on 2025 upstream `session` as a task of the gateway's
/// session there, and returns the tool's result: the task is started with the time to live the
/// client asked for the gateway's task (`ttl`, `[TK-12]`: the upstream may keep it shorter)
/// and its progress goes to `on_progress` while it runs, its status messages to `on_message`
/// (polled); its result is collected with
/// `tasks/result` (which waits until it ends), and it is cancelled upstream when `cancel`
/// fires or this future is dropped. (A 2026-07-28 upstream's calls go through
/// [`call_modern`]; one that comes here is sent as any other.)
pub(crate) async fn call(
    session: ClientSession,
    params: CallToolRequestParams,
    ttl: Option<u64>,
    opts: RequestOptions,
    cancel: switchboard_client::CancellationToken,
    on_progress: impl Fn(ProgressUpdate) + Send + Sync + 'static,
    on_message: impl Fn(Option<String>),
) -> Result<CallToolResult, ClientError> {
    if session.era() == Era::Modern {
        return session
            .request::<_, CallToolResult>(methods::TOOLS_CALL, params, opts)
            .await;
    }
    let arguments = params
        .arguments
        .map_or(Value::Object(Default::default()), Value::Object);
    let (task, _watch) = session
        .start_tool_task_with_progress(&params.name, arguments, ttl, on_progress)
        .await?;
    let mut running = Running {
        session: session.clone(),
        id: task.task_id.clone(),
        ended: false,
    };
    let result = tokio::select! {
        r = session.tool_task_result(&task.task_id) => r,
        () = cancel.cancelled() => return Err(ClientError::TaskCancelled(
            format!("the gateway's task running {} was cancelled", params.name),
        )),
        never = follow_message(&session, task.clone(), on_message) => match never {},
    };
    running.ended = true;
    result.map(without_related_task)
}

/// Polls the upstream's `task` (`tasks/get` every `pollInterval` it asks for, kept within
/// the requestors' bounds, [`poll_every`](switchboard_tasks::serve::poll_every)) while `tasks/result` waits, and tells `on_message` each new status message
/// (`[TK-20]`), for the gateway's task to show. Never ends: it stops polling once the task is
/// terminal or cannot be read.
async fn follow_message(
    session: &ClientSession,
    mut task: switchboard_types::tasks::Task,
    on_message: impl Fn(Option<String>),
) -> std::convert::Infallible {
    let mut shown = None;
    loop {
        if task.status_message != shown {
            shown.clone_from(&task.status_message);
            on_message(shown.clone());
        }
        if task.status.is_terminal() {
            break;
        }
        tokio::time::sleep(switchboard_tasks::serve::poll_every(&task)).await;
        match session.get_task(&task.task_id).await {
            Ok(t) => task = t,
            Err(_) => break,
        }
    }
    std::future::pending().await
}

/// A result without the upstream's related-task `_meta` (its task id is the upstream's; the
/// gateway's server tags what it answers with its own).
fn without_related_task(mut result: CallToolResult) -> CallToolResult {
    if let Some(meta) = result.meta.as_mut() {
        meta.0.remove(RELATED_TASK_KEY);
        if meta.0.is_empty() {
            result.meta = None;
        }
    }
    result
}

/// A `tools/call` on a 2026-07-28 upstream for a call of the gateway's that may become a task
/// (the gateway's client asked for one, or its 2026-07-28 request declared the tasks extension
/// and the handler deferred the task, `Context::defer_task`). It is sent on a handle of
/// `session` that declares the extension, so the upstream decides (`[D26-130]`): its
/// input-required rounds are answered by the gateway's client handlers (the client's own
/// rounds, while the gateway's call is not a task), and when it answers with a task the
/// returned receiver fires (the gateway's call becomes its task then, `Context::run_as_task`)
/// and the gateway's client follows that task to its end, its input requests answered the
/// same way (the gateway's task asks its client). The call runs on a task of its own that the
/// returned guard cancels when dropped (the gateway's task cancelled, its work dropped): the
/// upstream's task is then cancelled with `tasks/cancel` (`[D26-140]`).
pub(crate) fn call_modern(
    session: &ClientSession,
    params: CallToolRequestParams,
    opts: RequestOptions,
) -> (
    tokio::task::JoinHandle<Result<CallToolResult, ClientError>>,
    tokio::sync::oneshot::Receiver<()>,
    StopOnDrop,
) {
    let stop = switchboard_client::CancellationToken::new();
    let (tx, started) = tokio::sync::oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let handle = session.with_tasks_extension(move |_| {
        if let Some(tx) = tx.lock().ok().and_then(|mut t| t.take()) {
            let _ = tx.send(());
        }
    });
    let opts = opts.without_timeout().with_cancel(stop.clone());
    let call = tokio::spawn(async move {
        handle
            .request::<_, CallToolResult>(methods::TOOLS_CALL, params, opts)
            .await
            .map(without_related_task)
    });
    (call, started, StopOnDrop(stop))
}

/// Cancels its token when dropped ([`call_modern`]'s guard).
pub(crate) struct StopOnDrop(switchboard_client::CancellationToken);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Takes the offer of tasks out of an `initialize` or `server/discover` result (`tasks`, and
/// the tasks extension), for a gateway none of whose upstreams up offers them.
pub(crate) fn hide_offer(result: &mut Value) {
    let Some(caps) = result
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    caps.remove("tasks");
    if let Some(ext) = caps.get_mut("extensions").and_then(Value::as_object_mut) {
        ext.remove(TASKS_EXTENSION);
        if ext.is_empty() {
            caps.remove("extensions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_offer_of_tasks_is_taken_out_of_both_eras_capabilities() {
        let mut legacy = json!({"capabilities": {"tools": {}, "tasks": {"list": {}}}});
        hide_offer(&mut legacy);
        assert_eq!(legacy, json!({"capabilities": {"tools": {}}}));
        let mut modern = json!({"capabilities": {"extensions": {TASKS_EXTENSION: {}, "x": {}}}});
        hide_offer(&mut modern);
        assert_eq!(modern, json!({"capabilities": {"extensions": {"x": {}}}}));
    }

    #[test]
    fn both_eras_offers_of_tasks_are_seen() {
        let none = ServerCapabilities::default();
        assert!(!offered(&none));
        let modern: ServerCapabilities =
            serde_json::from_value(json!({"extensions": {TASKS_EXTENSION: {}}})).expect("caps");
        assert!(offered(&modern));
        let legacy: ServerCapabilities =
            serde_json::from_value(json!({"tasks": {"requests": {"tools": {"call": {}}}}}))
                .expect("caps");
        assert!(offered(&legacy));
    }
}
