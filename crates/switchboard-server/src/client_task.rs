//! Server side as the requestor: sampling and elicitation run as tasks on the client
//! (2025-11-25, SEP-1686; SPEC-NOTES §9). A handler asks with
//! [`Context::start_message_task`] or [`Context::start_elicitation_task`] and gets a
//! [`ClientTask`]: the client answered with the task at once (`[TK-7]`), and the handle polls
//! it (`tasks/get` at its `pollInterval`), collects its result (`tasks/result`) or cancels it.
//! [`Context::create_message_as_task`] and [`Context::elicit_as_task`] do all of it in one call.
//!
//! Nothing is sent when the client did not declare the matching `tasks.requests.*` entry or the
//! revision has no tasks (the client-side counterparts of `[TK-1]` / `[TK-2]`).

use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_tasks::serve::poll_every;
use switchboard_types::elicitation::{ElicitRequestParams, ElicitResult};
use switchboard_types::methods;
use switchboard_types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use switchboard_types::tasks::{
    CreateTaskResult, GetTaskRequestParams, GetTaskResult, Task, TaskMetadata,
};
use switchboard_types::{Feature, JsonObject};

use crate::context::{ClientRequestError, Context};

/// A request running as a task on the client, with the type of its result (`R`:
/// [`CreateMessageResult`] or [`ElicitResult`]).
pub struct ClientTask<R> {
    peer: Peer,
    task: Task,
    result: PhantomData<fn() -> R>,
}

impl<R> fmt::Debug for ClientTask<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientTask")
            .field("task", &self.task)
            .finish()
    }
}

impl<R: DeserializeOwned> ClientTask<R> {
    /// The task as last seen: as created, or as the last [`get`](ClientTask::get) returned.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The task's id.
    pub fn id(&self) -> &str {
        &self.task.task_id
    }

    /// `tasks/get`: the task as the client has it now.
    ///
    /// # Errors
    /// A request error (-32602 for a task the client no longer has).
    pub async fn get(&mut self) -> Result<&Task, ClientRequestError> {
        let r: GetTaskResult = self
            .peer
            .call(
                methods::TASKS_GET,
                Some(&GetTaskRequestParams::new(self.id())),
                RequestOptions::default(),
            )
            .await?;
        self.task = r.task;
        Ok(&self.task)
    }

    /// Polls `tasks/get` at the task's `pollInterval` (clamped, see
    /// [`switchboard_tasks::serve::poll_every`]) until it is terminal.
    ///
    /// # Errors
    /// A request error.
    pub async fn wait(&mut self) -> Result<&Task, ClientRequestError> {
        while !self.task.status.is_terminal() {
            tokio::time::sleep(poll_every(&self.task)).await;
            self.get().await?;
        }
        Ok(&self.task)
    }

    /// `tasks/result`: waits until the task is terminal (`[TK-16]`) and returns what the
    /// request would have (`[TK-15]`). No request timeout applies: the wait is as long as the
    /// task.
    ///
    /// # Errors
    /// The request's own error, or a request error.
    pub async fn result(&self) -> Result<R, ClientRequestError> {
        Ok(self
            .peer
            .call(
                methods::TASKS_RESULT,
                Some(&GetTaskRequestParams::new(self.id())),
                RequestOptions::default().without_timeout(),
            )
            .await?)
    }

    /// Polls until the task is terminal ([`wait`](ClientTask::wait)), then collects its result.
    ///
    /// # Errors
    /// As [`wait`](ClientTask::wait) and [`result`](ClientTask::result).
    pub async fn finish(mut self) -> Result<R, ClientRequestError> {
        self.wait().await?;
        self.result().await
    }

    /// `tasks/cancel`: the task, `cancelled` (`[TK-19]`).
    ///
    /// # Errors
    /// Refused locally when the client did not declare `tasks.cancel`; a request error
    /// (-32602 for a task that already finished, `[TK-14]`).
    pub async fn cancel(&mut self) -> Result<&Task, ClientRequestError> {
        let r: GetTaskResult = self
            .peer
            .call(
                methods::TASKS_CANCEL,
                Some(&GetTaskRequestParams::new(self.id())),
                RequestOptions::default(),
            )
            .await?;
        self.task = r.task;
        Ok(&self.task)
    }
}

/// Which `tasks.requests` entry of the client a request needs.
#[derive(Clone, Copy)]
enum Kind {
    Sampling,
    Elicitation,
}

impl Context {
    /// Whether the client declared that `kind` may run as a task, in a revision with tasks.
    fn client_runs_as_task(&self, kind: Kind) -> Result<(), ClientRequestError> {
        let requests = self
            .client_caps()
            .and_then(|c| c.tasks)
            .and_then(|t| t.requests);
        let (declared, what) = match kind {
            Kind::Sampling => (
                requests
                    .as_ref()
                    .and_then(|r| r.sampling.as_ref())
                    .is_some_and(|s| s.create_message.is_some()),
                "client capability tasks.requests.sampling.createMessage",
            ),
            Kind::Elicitation => (
                requests
                    .as_ref()
                    .and_then(|r| r.elicitation.as_ref())
                    .is_some_and(|e| e.create.is_some()),
                "client capability tasks.requests.elicitation.create",
            ),
        };
        let tasks_revision = self
            .session
            .protocol_version()
            .is_some_and(|v| v.supports(Feature::Tasks));
        if declared && tasks_revision {
            Ok(())
        } else {
            Err(ClientRequestError::NotDeclared(what.into()))
        }
    }

    /// The peer that polls a task on the client: related to this request, or, when this
    /// request itself runs as a task, to its open `tasks/result` (else unrelated).
    fn towards_client(&self) -> Peer {
        match &self.task {
            Some(link) => link.towards_client(self.request.peer()),
            None => self.request.peer().clone(),
        }
    }

    async fn start_task<P: serde::Serialize, R>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<ClientTask<R>, ClientRequestError> {
        let created: serde_json::Value = self.ask(method, Some(params)).await?;
        // `[TK-6]`: a client that did not take the task answered the request itself.
        let created: CreateTaskResult = serde_json::from_value(created).map_err(|e| {
            RequestError::Serde(format!(
                "the client answered {method} without creating a task: {e}"
            ))
        })?;
        Ok(ClientTask {
            peer: self.towards_client(),
            task: created.task,
            result: PhantomData,
        })
    }

    /// Asks the client to sample the model as a task (`sampling/createMessage` with `task`,
    /// `ttl` the retention asked for) and returns the task at once.
    ///
    /// # Errors
    /// [`ClientRequestError::NotDeclared`], nothing sent, when the client lacks what
    /// [`create_message`](Context::create_message) needs, or did not declare
    /// `tasks.requests.sampling.createMessage`, or the revision has no tasks; a request error,
    /// also when the client answered without creating a task.
    pub async fn start_message_task(
        &self,
        mut params: CreateMessageRequestParams,
        ttl: Option<u64>,
    ) -> Result<ClientTask<CreateMessageResult>, ClientRequestError> {
        self.check_sampling(&params)?;
        self.client_runs_as_task(Kind::Sampling)?;
        params.task = Some(task_metadata(ttl));
        self.start_task(methods::SAMPLING_CREATE_MESSAGE, &params)
            .await
    }

    /// Asks the user for input as a task (`elicitation/create` with `task`) and returns the
    /// task at once.
    ///
    /// # Errors
    /// [`ClientRequestError::NotDeclared`], nothing sent, when the client lacks what
    /// [`elicit`](Context::elicit) needs, or did not declare
    /// `tasks.requests.elicitation.create`, or the revision has no tasks; a request error.
    pub async fn start_elicitation_task(
        &self,
        params: impl Into<ElicitRequestParams>,
        ttl: Option<u64>,
    ) -> Result<ClientTask<ElicitResult>, ClientRequestError> {
        let mut params = params.into();
        self.check_elicitation(&params)?;
        self.client_runs_as_task(Kind::Elicitation)?;
        let task = Some(task_metadata(ttl));
        match &mut params {
            ElicitRequestParams::Form(f) => f.task = task,
            ElicitRequestParams::Url(u) => u.task = task,
        }
        self.start_task(methods::ELICITATION_CREATE, &params).await
    }

    /// [`start_message_task`](Context::start_message_task), then polls the task until it is
    /// terminal and collects its result.
    ///
    /// # Errors
    /// As [`start_message_task`](Context::start_message_task) and [`ClientTask::finish`].
    pub async fn create_message_as_task(
        &self,
        params: CreateMessageRequestParams,
        ttl: Option<u64>,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        self.start_message_task(params, ttl).await?.finish().await
    }

    /// [`start_elicitation_task`](Context::start_elicitation_task), then polls the task until
    /// it is terminal and collects its result.
    ///
    /// # Errors
    /// As [`start_elicitation_task`](Context::start_elicitation_task) and
    /// [`ClientTask::finish`].
    pub async fn elicit_as_task(
        &self,
        params: impl Into<ElicitRequestParams>,
        ttl: Option<u64>,
    ) -> Result<ElicitResult, ClientRequestError> {
        self.start_elicitation_task(params, ttl)
            .await?
            .finish()
            .await
    }
}

fn task_metadata(ttl: Option<u64>) -> TaskMetadata {
    TaskMetadata {
        ttl,
        extra: JsonObject::new(),
    }
}
