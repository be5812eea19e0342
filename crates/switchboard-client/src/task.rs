//! Client side: calling tools as tasks (2025-11-25, SEP-1686; SPEC-NOTES §9). A task-augmented
//! call returns the task at once; the result is collected later with
//! [`ClientSession::tool_task_result`], or after polling with [`ClientSession::wait_task`].

use std::sync::atomic::{AtomicU64, Ordering};

use switchboard_jsonrpc::{ProgressUpdate, ProgressWatch, RequestOptions};
use switchboard_types::RequestId;
use switchboard_types::meta::Meta;
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::methods;
use switchboard_types::tasks::{
    CreateTaskResult, GetTaskRequestParams, GetTaskResult, ListTasksResult, Task, TaskMetadata,
};
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, TaskSupport};
use switchboard_types::{Feature, JsonObject};

use crate::error::ClientError;
use crate::session::ClientSession;

/// Numbers the progress tokens of tool tasks (strings, so they never meet the engine's integer
/// request ids).
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

impl ClientSession {
    /// Calls tool `name` as a task and returns the task at once (`[TK-7]`), `working`.
    ///
    /// # Errors
    /// [`ClientError::TaskRefused`] without sending anything when the server did not declare
    /// `tasks.requests.tools.call` or the revision has no tasks (`[TK-1]`), or when the cached
    /// tool list says the tool forbids tasks (`[TK-2]`); a request error.
    pub async fn start_tool_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<u64>,
    ) -> Result<Task, ClientError> {
        self.start_task(name, arguments, ttl, None).await
    }

    /// [`start_tool_task`](ClientSession::start_tool_task) with a progress token: the server's
    /// progress for the task reaches `on_progress` for the task's whole life (MCP 2025-11-25:
    /// the token stays valid after the `CreateTaskResult`, until the task is terminal), as long
    /// as the returned [`ProgressWatch`] is kept. Drop it once the task is terminal.
    ///
    /// # Errors
    /// As [`start_tool_task`](ClientSession::start_tool_task);
    /// [`RequestError::TooManyPending`](switchboard_jsonrpc::RequestError::TooManyPending) when
    /// the session watches too many tokens.
    pub async fn start_tool_task_with_progress(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<u64>,
        on_progress: impl Fn(ProgressUpdate) + Send + Sync + 'static,
    ) -> Result<(Task, ProgressWatch), ClientError> {
        let n = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
        let token = RequestId::string(format!("task-progress-{n}"));
        let watch = self
            .peer()
            .watch_progress(token.clone(), on_progress)
            .map_err(ClientError::from)?;
        let task = self.start_task(name, arguments, ttl, Some(token)).await?;
        Ok((task, watch))
    }

    async fn start_task(
        &self,
        name: &str,
        arguments: serde_json::Value,
        ttl: Option<u64>,
        progress_token: Option<RequestId>,
    ) -> Result<Task, ClientError> {
        let declared = self
            .server_capabilities()
            .tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.call.is_some());
        if !declared || !self.protocol_version().supports(Feature::Tasks) {
            return Err(ClientError::TaskRefused(format!(
                "the server did not declare tasks for tools/call (TK-1), so {name} cannot run as a task"
            )));
        }
        let forbidden = self.cached_tools().is_some_and(|tools| {
            tools
                .iter()
                .any(|t| t.name == name && t.task_support() == TaskSupport::Forbidden)
        });
        if forbidden {
            return Err(ClientError::TaskRefused(format!(
                "tool {name} does not support tasks (TK-2)"
            )));
        }
        let mut params = CallToolRequestParams::new(name).with_arguments(arguments);
        params.task = Some(TaskMetadata {
            ttl,
            extra: JsonObject::new(),
        });
        if let Some(token) = progress_token {
            params
                .meta
                .get_or_insert_with(Meta::new)
                .set_progress_token(token);
        }
        let created: CreateTaskResult = self
            .send(methods::TOOLS_CALL, &params, RequestOptions::default())
            .await?;
        Ok(created.task)
    }

    /// `[TK-4]`: a tool that requires a task is never called plainly, when the cached tool list
    /// says so and the server declared tasks for `tools/call`.
    pub(crate) fn check_plain_call(&self, name: &str) -> Result<(), ClientError> {
        if !self.server_capabilities().supports_task_tool_calls()
            || !self.protocol_version().supports(Feature::Tasks)
        {
            return Ok(());
        }
        let required = self.cached_tools().is_some_and(|tools| {
            tools
                .iter()
                .any(|t| t.name == name && t.task_support() == TaskSupport::Required)
        });
        if required {
            return Err(ClientError::TaskRequired(format!(
                "tool {name} must be called as a task (TK-4)"
            )));
        }
        Ok(())
    }

    /// `tasks/get`: the task as the server has it now.
    ///
    /// # Errors
    /// A request error (-32602 for an unknown or expired task).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let r: GetTaskResult = self
            .send(
                methods::TASKS_GET,
                &GetTaskRequestParams::new(task_id),
                RequestOptions::default(),
            )
            .await?;
        Ok(r.task)
    }

    /// `tasks/cancel`: the task, `cancelled`.
    ///
    /// # Errors
    /// A request error (-32602 for a task that already finished, `[TK-14]`).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, ClientError> {
        let r: GetTaskResult = self
            .send(
                methods::TASKS_CANCEL,
                &GetTaskRequestParams::new(task_id),
                RequestOptions::default(),
            )
            .await?;
        Ok(r.task)
    }

    /// Every task of this session, following `nextCursor` (bounded by the client's page limit).
    ///
    /// # Errors
    /// A request error, or [`ClientError::TooManyPages`].
    pub async fn list_tasks(&self) -> Result<Vec<Task>, ClientError> {
        let mut all = Vec::new();
        let mut cursor = None;
        for _ in 0..self.max_pages() {
            let params = PaginatedRequestParams {
                cursor,
                ..Default::default()
            };
            let page: ListTasksResult = self
                .send(methods::TASKS_LIST, &params, RequestOptions::default())
                .await?;
            all.extend(page.tasks);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
        Err(ClientError::TooManyPages {
            method: methods::TASKS_LIST,
            pages: self.max_pages(),
        })
    }

    /// `tasks/result` for a tool task: waits until the task is terminal (`[TK-16]`) and
    /// returns exactly what the call would have (`[TK-15]`), with the related-task `_meta`.
    /// No request timeout applies: the wait is as long as the task.
    ///
    /// # Errors
    /// The call's own JSON-RPC error, or a request error.
    pub async fn tool_task_result(&self, task_id: &str) -> Result<CallToolResult, ClientError> {
        self.send(
            methods::TASKS_RESULT,
            &GetTaskRequestParams::new(task_id),
            RequestOptions::default().without_timeout(),
        )
        .await
    }

    /// Polls `tasks/get` at the task's `pollInterval` (kept within 50 ms and 30 s, see
    /// [`poll_every`](switchboard_tasks::serve::poll_every)) until it is terminal or
    /// `input_required`, and returns it.
    ///
    /// # Errors
    /// A request error.
    pub async fn wait_task(&self, task_id: &str) -> Result<Task, ClientError> {
        loop {
            let task = self.get_task(task_id).await?;
            if task.status.is_terminal()
                || task.status == switchboard_types::tasks::TaskStatus::InputRequired
            {
                return Ok(task);
            }
            tokio::time::sleep(switchboard_tasks::serve::poll_every(&task)).await;
        }
    }
}
