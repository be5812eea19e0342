//! [`Context`]: what a handler (tool, resource, prompt, completion) knows and can do beyond its
//! params: progress, cancellation, logging, and requests to the client (sampling, elicitation,
//! roots), each refused locally when the client did not declare the capability.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{
    ProgressError, ProgressUpdate, RequestContext, RequestError, RequestOptions,
};
use switchboard_types::elicitation::{ElicitRequestParams, ElicitResult};
use switchboard_types::error::clip;

use crate::modern::tasks::MAX_TASK_MESSAGE_BYTES;
use switchboard_types::logging::LoggingLevel;
use switchboard_types::roots::ListRootsResult;
use switchboard_types::sampling::{CreateMessageRequestParams, CreateMessageResult};
use switchboard_types::{ErrorCode, ErrorObject, Feature, RequestId};

use tokio_util::sync::CancellationToken;

use crate::announce::{Audience, send_resource_updated};
use crate::session::{ServerSession, SessionError, log_via};
use crate::task::TaskLink;
use switchboard_types::methods;

/// The context of one request being handled.
#[derive(Clone)]
pub struct Context {
    pub(crate) request: RequestContext,
    pub(crate) session: ServerSession,
    /// Set when the request runs as a task: requests to the client then move the task to
    /// `input_required` and carry its related-task `_meta` (`[TK-13]`).
    pub(crate) task: Option<TaskLink>,
    /// Set for a request of the modern era: requests for client input are answered from the
    /// request's own input responses (see [`crate::modern`]).
    pub(crate) modern: Option<Arc<crate::modern::ModernCall>>,
    /// Everyone who hears of a server-side change (see [`crate::announce`]).
    pub(crate) audience: Arc<Audience>,
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("request", &self.request.id())
            .field("session", &self.session.id())
            .finish()
    }
}

/// Why a request to the client did not produce a result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientRequestError {
    /// Not sent: the client did not declare what this request needs (`[LC-5]`, `[CP-5]`, `[CP-6]`).
    #[error("not sent: {0}")]
    NotDeclared(String),
    /// The request failed (the client's error, a timeout, a closed session).
    #[error(transparent)]
    Request(#[from] RequestError),
}

impl Context {
    /// The id of the request being handled.
    pub fn request_id(&self) -> &RequestId {
        self.request.id()
    }

    /// The engine's request context.
    pub fn request(&self) -> &RequestContext {
        &self.request
    }

    /// The caller's validated access-token claims (subject, scopes, client, issuer), when the
    /// transport authenticated the request (Streamable HTTP with authorization on); `None`
    /// otherwise. The token itself is never available: it is not passed on (`[AU-23]`).
    pub fn auth(&self) -> Option<&switchboard_auth::resource::AuthInfo> {
        crate::arrival::auth_of(&self.request)
    }

    /// The authorization subject the request runs as (the token's `sub`, or its client for a
    /// client-credentials grant); `None` without authorization (stdio, open HTTP).
    pub fn subject(&self) -> Option<&str> {
        self.auth().map(|a| a.subject.as_str())
    }

    /// The OAuth client the caller's token was issued to, when it says.
    pub fn client_id(&self) -> Option<&str> {
        self.auth().and_then(|a| a.client_id.as_deref())
    }

    /// The scopes the caller's token grants; empty without authorization.
    pub fn scopes(&self) -> Vec<&str> {
        self.auth()
            .map(|a| a.scopes.iter().collect())
            .unwrap_or_default()
    }

    /// The transport's session id (`Mcp-Session-Id` of a 2025-era Streamable HTTP session);
    /// `None` over stdio and for a 2026-07-28 request, which has no session.
    pub fn session_id(&self) -> Option<std::sync::Arc<str>> {
        if self.modern.is_some() {
            return None;
        }
        self.session.state.session_key()
    }

    /// A request header the HTTP transport was told to forward
    /// (`HttpConfig::with_forwarded_headers`), by case-insensitive name; `None` when it was not
    /// sent, not forwarded, or the transport is not HTTP.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.request
            .attachment_as::<switchboard_auth::resource::Arrival>()?
            .header(name)
    }

    /// Everything the transport learnt about how the request arrived (token claims and
    /// forwarded headers), when it was HTTP with either configured.
    pub fn arrival(&self) -> Option<&switchboard_auth::resource::Arrival> {
        self.request
            .attachment_as::<switchboard_auth::resource::Arrival>()
    }

    /// The session this request arrived on.
    pub fn session(&self) -> &ServerSession {
        &self.session
    }

    /// Announces that resource `uri` changed, to every subscriber of this server in every era
    /// and on every transport, as [`Server::resource_updated`](crate::Server::resource_updated)
    /// does: each session subscribed to it (`resources/subscribe`) and each
    /// `subscriptions/listen` stream whose filter names it. When this request's own session
    /// subscribed, its `notifications/resources/updated` is sent before this returns, so its
    /// client has it before the handler's answer. Returns how many were reached.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let (reached, own) = self.audience.resource_updated(uri, Some(self.session.id()));
        if own {
            send_resource_updated(self.session.peer(), uri).await;
        }
        reached
    }

    /// Cancelled when the client cancels this request; the handler's future is dropped then too.
    pub fn cancellation(&self) -> &CancellationToken {
        self.request.cancellation()
    }

    /// The progress token the client asked progress under, if any.
    pub fn progress_token(&self) -> Option<&RequestId> {
        self.request.progress_token()
    }

    /// Reports progress (strictly increasing, never after the response).
    ///
    /// # Errors
    /// See [`ProgressError`]; nothing is sent then.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> Result<(), ProgressError> {
        let mut u = ProgressUpdate::new(progress);
        if let Some(t) = total {
            u = u.with_total(t);
        }
        if let Some(m) = message {
            u = u.with_message(m);
        }
        self.request.report_progress(u).await
    }

    /// Sends `notifications/message` related to this request, filtered by the client's level.
    ///
    /// # Errors
    /// Refused locally (no `logging` capability), or the session is closed.
    pub async fn log(
        &self,
        level: LoggingLevel,
        data: serde_json::Value,
    ) -> Result<bool, SessionError> {
        if let Some(call) = &self.modern {
            // 2026-07-28: only at or above the level this request asked for, and nothing when
            // it asked for none (`[D26-84]`).
            let Some(threshold) = call.envelope.log_level else {
                return Ok(false);
            };
            return log_via(self.request.peer(), Some(threshold), level, None, data).await;
        }
        log_via(
            self.request.peer(),
            self.session.log_level(),
            level,
            None,
            data,
        )
        .await
    }

    /// Runs the rest of this tool call as a task when it may become one, and returns whether
    /// it runs as a task now. In 2026-07-28 (the tasks extension) a call of a tool that
    /// supports tasks, from a request that declared the extension, is answered here with a
    /// `CreateTaskResult` and the handler goes on in the background; its asks for client input
    /// before this point were input-required rounds, those after it make the task
    /// `input_required`. The call also becomes a task, without this, the first time the handler
    /// waits for something else (see the server's `modern::tasks`). In a 2025-era session this
    /// only reports whether the client asked for a task.
    pub async fn run_as_task(&self) -> bool {
        match &self.modern {
            Some(call) => crate::modern::tasks::start_here(call).await,
            None => self.task.is_some(),
        }
    }

    /// Keeps this tool call from becoming a task when its handler waits: from now on only
    /// [`run_as_task`](Self::run_as_task) makes it one, and returns whether it still may. For a
    /// handler whose waits are not yet the task's work: one that forwards the call elsewhere
    /// and learns only later whether what it waits for asks the client for input first (each
    /// ask an input-required round, `[D26-34]`) or runs on (then it calls `run_as_task`).
    /// A call of a tool that requires a task and ends without `run_as_task` is still answered
    /// with a task, already ended. In 2026-07-28 only (the tasks extension); in a 2025-era
    /// session the client decided before the handler ran, and this only reports whether it
    /// asked for a task.
    pub fn defer_task(&self) -> bool {
        match &self.modern {
            Some(call) => crate::modern::tasks::defer(call),
            None => self.task.is_some(),
        }
    }

    /// The time to live the client asked for the task this call runs as (`task.ttl` of a
    /// 2025-11-25 task-augmented `tools/call`, in milliseconds); `None` when it asked for none
    /// or the call runs as no such task (a 2026-07-28 client asks for no time to live).
    pub fn task_ttl(&self) -> Option<u64> {
        self.task.as_ref().and_then(|t| t.ttl)
    }

    /// Sets the status message of the task this call runs as (`statusMessage`, what its work
    /// is doing), its status unchanged, and tells the client (a 2025 session's status
    /// notification, a 2026-07-28 listen stream's `notifications/tasks`). Returns whether it
    /// was kept: `false` when the call runs as no task (yet), the task ended, or the task store
    /// keeps no message apart from a status.
    ///
    /// A message over 1 KiB is kept cut to it, at a character boundary, with an ellipsis (a
    /// gateway relays its upstreams' messages here).
    pub async fn set_task_message(&self, message: Option<&str>) -> bool {
        let message = message.map(|m| clip(m, MAX_TASK_MESSAGE_BYTES).into_owned());
        match (&self.modern, &self.task) {
            (Some(call), _) => crate::modern::tasks::set_message(call, message).await,
            (None, Some(link)) => link.set_message(self.request.peer(), message).await,
            (None, None) => false,
        }
    }

    /// Whether this request belongs to the modern era (2026-07-28).
    pub fn is_modern(&self) -> bool {
        self.modern.is_some()
    }

    /// The revision this request speaks.
    pub fn protocol_version(&self) -> Option<switchboard_types::ProtocolVersion> {
        match &self.modern {
            Some(_) => Some(switchboard_types::ProtocolVersion::V2026_07_28),
            None => self.session.protocol_version(),
        }
    }

    /// The client capabilities in force for this request: the session's (2025 era) or the
    /// request's own (`[D26-13]`).
    pub fn client_capabilities(&self) -> switchboard_types::capabilities::ClientCapabilities {
        self.client_caps().unwrap_or_default()
    }

    /// Asks the client for input: a request to it in a 2025-era session, an input request of an
    /// `input_required` result in 2026-07-28 (under `key`, or one generated from the method).
    async fn ask_for<P: Serialize, R: DeserializeOwned>(
        &self,
        key: Option<&str>,
        method: &str,
        params: Option<&P>,
        input: impl FnOnce() -> switchboard_types::modern::InputRequest,
    ) -> Result<R, ClientRequestError> {
        let Some(call) = &self.modern else {
            return self.ask(method, params).await;
        };
        crate::modern::ask(call, key, input())
            .await
            .ok_or_else(|| {
                ClientRequestError::NotDeclared(format!(
                    "{method}: in 2026-07-28 only tools/call, prompts/get and resources/read may ask the client for input"
                ))
            })
    }

    pub(crate) async fn ask<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<&P>,
    ) -> Result<R, ClientRequestError> {
        let Some(link) = &self.task else {
            return Ok(self
                .request
                .peer()
                .call(method, params, RequestOptions::default())
                .await?);
        };
        let value = match params {
            Some(p) => serde_json::to_value(p).map_err(RequestError::from)?,
            None => serde_json::json!({}),
        };
        Ok(link.ask(self.request.peer(), method, value).await?)
    }

    pub(crate) fn client_caps(
        &self,
    ) -> Option<switchboard_types::capabilities::ClientCapabilities> {
        match &self.modern {
            Some(call) => Some(call.capabilities().clone()),
            None => self.session.client().map(|c| c.capabilities),
        }
    }

    /// Asks the client to sample the model (`sampling/createMessage`).
    ///
    /// # Errors
    /// [`ClientRequestError::NotDeclared`] when the client lacks `sampling`, or lacks
    /// `sampling.tools` while `tools`/`toolChoice` are set (`[CP-5]`); or the request failed.
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        self.create_message_keyed(None, params).await
    }

    /// [`Context::create_message`], with the key its input request has in a 2026-07-28
    /// `input_required` result (ignored in a 2025-era session).
    ///
    /// # Errors
    /// As [`Context::create_message`].
    pub async fn create_message_as(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        self.create_message_keyed(Some(key), params).await
    }

    async fn create_message_keyed(
        &self,
        key: Option<&str>,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ClientRequestError> {
        if self.modern.is_some() {
            // The modern front door answers -32021 for what the request did not declare.
            let p = params.clone();
            return self
                .ask_for(
                    key,
                    methods::SAMPLING_CREATE_MESSAGE,
                    Some(&params),
                    move || switchboard_types::modern::InputRequest::CreateMessage(p),
                )
                .await;
        }
        self.check_sampling(&params)?;
        self.ask(methods::SAMPLING_CREATE_MESSAGE, Some(&params))
            .await
    }

    /// What [`create_message`](Context::create_message) checks before it sends in a 2025-era
    /// session.
    pub(crate) fn check_sampling(
        &self,
        params: &CreateMessageRequestParams,
    ) -> Result<(), ClientRequestError> {
        let caps = self.client_caps().unwrap_or_default();
        if caps.sampling.is_none() {
            return Err(ClientRequestError::NotDeclared(
                "client capability sampling".into(),
            ));
        }
        if (params.tools.is_some() || params.tool_choice.is_some())
            && !caps.supports_sampling_tools()
        {
            return Err(ClientRequestError::NotDeclared(
                "client capability sampling.tools (CP-5)".into(),
            ));
        }
        Ok(())
    }

    /// Asks the user for input (`elicitation/create`), form or URL mode.
    ///
    /// What stays the server author's to get right (SPEC-NOTES §10.1.6, SECURITY-NOTES §8):
    /// form mode never asks for passwords, API keys, tokens or payment data, URL mode does
    /// (`[EL-2]`); a URL carries no secret or personal data and is not pre-authenticated
    /// (`[EL-13]`); the page behind it confirms, from the server's own login rather than from
    /// anything in the URL, that whoever completes it is the user who caused it (`[EL-15]`); URL
    /// mode never authorizes the client to this server (`[EL-6]`), and credentials obtained
    /// through it stay on the server, never sent to the client (`[EL-7]`). The caller's
    /// identity is [`Context::auth`]'s subject, never anything the client says about itself.
    ///
    /// # Errors
    /// [`ClientRequestError::NotDeclared`] when the client did not declare this mode (`[CP-6]`) or
    /// the revision has no elicitation; or the request failed.
    pub async fn elicit(
        &self,
        params: impl Into<ElicitRequestParams>,
    ) -> Result<ElicitResult, ClientRequestError> {
        self.elicit_keyed(None, params.into()).await
    }

    /// [`Context::elicit`], with the key its input request has in a 2026-07-28
    /// `input_required` result (ignored in a 2025-era session).
    ///
    /// # Errors
    /// As [`Context::elicit`].
    pub async fn elicit_as(
        &self,
        key: &str,
        params: impl Into<ElicitRequestParams>,
    ) -> Result<ElicitResult, ClientRequestError> {
        self.elicit_keyed(Some(key), params.into()).await
    }

    async fn elicit_keyed(
        &self,
        key: Option<&str>,
        params: ElicitRequestParams,
    ) -> Result<ElicitResult, ClientRequestError> {
        if self.modern.is_some() {
            let p = params.clone();
            return self
                .ask_for(key, methods::ELICITATION_CREATE, Some(&params), move || {
                    switchboard_types::modern::InputRequest::Elicit(p)
                })
                .await;
        }
        self.check_elicitation(&params)?;
        self.ask(methods::ELICITATION_CREATE, Some(&params)).await
    }

    /// What [`elicit`](Context::elicit) checks before it sends in a 2025-era session.
    pub(crate) fn check_elicitation(
        &self,
        params: &ElicitRequestParams,
    ) -> Result<(), ClientRequestError> {
        let caps = self.client_caps().unwrap_or_default();
        let version = self.session.protocol_version();
        if !version.is_some_and(|v| v.supports(Feature::Elicitation)) {
            return Err(ClientRequestError::NotDeclared(
                "a revision with elicitation (2025-06-18+)".into(),
            ));
        }
        match params {
            ElicitRequestParams::Form(_) if !caps.supports_form_elicitation() => {
                return Err(ClientRequestError::NotDeclared(
                    "client capability elicitation (form)".into(),
                ));
            }
            ElicitRequestParams::Url(_)
                if !caps.supports_url_elicitation()
                    || !version.is_some_and(|v| v.supports(Feature::UrlElicitation)) =>
            {
                return Err(ClientRequestError::NotDeclared(
                    "client capability elicitation.url".into(),
                ));
            }
            _ => {}
        }
        Ok(())
    }

    /// Asks the client for its roots (`roots/list`).
    ///
    /// # Errors
    /// [`ClientRequestError::NotDeclared`] when the client lacks `roots`; or the request failed.
    pub async fn list_roots(&self) -> Result<ListRootsResult, ClientRequestError> {
        self.list_roots_keyed(None).await
    }

    /// [`Context::list_roots`], with the key its input request has in a 2026-07-28
    /// `input_required` result (ignored in a 2025-era session).
    ///
    /// # Errors
    /// As [`Context::list_roots`].
    pub async fn list_roots_as(&self, key: &str) -> Result<ListRootsResult, ClientRequestError> {
        self.list_roots_keyed(Some(key)).await
    }

    async fn list_roots_keyed(
        &self,
        key: Option<&str>,
    ) -> Result<ListRootsResult, ClientRequestError> {
        if self.modern.is_some() {
            return self
                .ask_for::<(), _>(key, methods::ROOTS_LIST, None, || {
                    switchboard_types::modern::InputRequest::ListRoots(Default::default())
                })
                .await;
        }
        if self.client_caps().unwrap_or_default().roots.is_none() {
            return Err(ClientRequestError::NotDeclared(
                "client capability roots".into(),
            ));
        }
        self.ask::<(), _>(methods::ROOTS_LIST, None).await
    }

    /// Closes the stream that will carry this request's answer, when the transport has one
    /// (Streamable HTTP: the POST's SSE stream), so the client resumes with `Last-Event-ID`
    /// (SEP-1699 polling). Returns whether a stream was closed.
    pub fn close_stream(&self) -> bool {
        self.request
            .peer()
            .transport_control()
            .is_some_and(|c| c.close_stream(self.request.id()))
    }

    /// Tells the client a URL-mode elicitation has finished (`notifications/elicitation/complete`).
    ///
    /// # Errors
    /// Refused locally when the client lacks `elicitation.url`, or the session is closed.
    pub async fn complete_elicitation(&self, elicitation_id: &str) -> Result<(), RequestError> {
        let params = switchboard_types::elicitation::ElicitationCompleteNotificationParams::new(
            elicitation_id,
        );
        self.request
            .peer()
            .notify(methods::NOTIFICATIONS_ELICITATION_COMPLETE, Some(&params))
            .await
    }
}

/// The -32042 error: the request needs these URL-mode elicitations first (`[EL-10]`).
pub fn url_elicitation_required(
    message: impl Into<String>,
    elicitations: Vec<switchboard_types::elicitation::ElicitRequestURLParams>,
) -> ErrorObject {
    if elicitations.is_empty() {
        return ErrorObject::internal("url_elicitation_required needs at least one elicitation");
    }
    switchboard_types::elicitation::URLElicitationRequiredErrorData::new(elicitations)
        .into_error(message)
}

/// -32602 for an unknown resource (2026-07-28, `[D26-98]`), with `data.uri` cut by
/// [`echo`](switchboard_types::error::echo).
pub fn resource_not_found_modern(uri: &str) -> ErrorObject {
    let uri = switchboard_types::error::echo(uri);
    ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!("Resource not found: {uri}"),
    )
    .with_data(serde_json::json!({"reason": "resource_not_found", "uri": uri}))
}

/// -32002 for an unknown resource (revisions up to 2025-11-25); the URI is cut by
/// [`echo`](switchboard_types::error::echo).
pub fn resource_not_found(uri: &str) -> ErrorObject {
    let uri = switchboard_types::error::echo(uri);
    ErrorObject::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("Resource not found: {uri}"),
    )
    .with_data(serde_json::json!({"reason": "resource_not_found", "uri": uri}))
}
