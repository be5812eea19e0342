//! Client side: [`ClientSession`], one initialized connection to a server, with a typed call for
//! every server method, the list caches, resource subscriptions and the client's roots.
//!
//! | server method | call |
//! |---|---|
//! | `ping` | [`ClientSession::ping`] |
//! | `tools/list` | [`list_tools_page`](ClientSession::list_tools_page), [`list_tools`](ClientSession::list_tools) |
//! | `tools/call` | [`call_tool`](ClientSession::call_tool), [`call_tool_with`](ClientSession::call_tool_with) |
//! | `resources/list` | [`list_resources_page`](ClientSession::list_resources_page), [`list_resources`](ClientSession::list_resources) |
//! | `resources/templates/list` | [`list_resource_templates_page`](ClientSession::list_resource_templates_page), [`list_resource_templates`](ClientSession::list_resource_templates) |
//! | `resources/read` | [`read_resource`](ClientSession::read_resource) |
//! | `resources/subscribe`, `resources/unsubscribe` | [`subscribe`](ClientSession::subscribe), [`unsubscribe`](ClientSession::unsubscribe) |
//! | `prompts/list` | [`list_prompts_page`](ClientSession::list_prompts_page), [`list_prompts`](ClientSession::list_prompts) |
//! | `prompts/get` | [`get_prompt`](ClientSession::get_prompt) |
//! | `logging/setLevel` | [`set_level`](ClientSession::set_level) |
//! | `completion/complete` | [`complete`](ClientSession::complete), [`complete_with_context`](ClientSession::complete_with_context) |
//! | any | [`request`](ClientSession::request) |
//!
//! A call for a capability the server did not declare fails locally with
//! [`RequestError::NotAllowed`](switchboard_jsonrpc::RequestError::NotAllowed) and sends nothing.
//! Every call except [`request`](ClientSession::request) and
//! [`call_tool_with`](ClientSession::call_tool_with) uses the session's default timeout.

use std::fmt;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{Peer, RequestError, RequestOptions};
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::completion::{
    CompleteContext, CompleteRequestParams, CompleteResult, Reference,
};
use switchboard_types::jsonrpc::to_raw;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::logging::{LoggingLevel, SetLevelRequestParams};
use switchboard_types::meta::{EmptyResult, OrderedMap};
use switchboard_types::modern::{SubscriptionFilter, SubscriptionsListenRequestParams};
use switchboard_types::prompts::{
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, Prompt,
};
use switchboard_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceRequestParams, ResourceTemplate, ResourceUpdatedNotificationParams,
};
use switchboard_types::roots::Root;
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, Tool};
use switchboard_types::{Feature, ProtocolVersion, RequestId};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::cache::ListKind;
use crate::era::Era;
use crate::error::ClientError;
use crate::exchange;
use crate::listen::ListenStream;
use crate::listing::{Listed, changed, list_all, list_page, relist_tools};
use crate::state::{ClientState, Phase};
use crate::subscription::SubscriptionId;
use switchboard_types::methods;

/// What the handshake (legacy) or `server/discover` (modern) settled.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Negotiated {
    /// The revision both sides use.
    pub protocol_version: ProtocolVersion,
    /// What the server declared.
    pub capabilities: ServerCapabilities,
    /// Who the server is (a modern server that names itself nowhere: an empty name).
    pub server_info: Implementation,
    /// The server's instructions, if any.
    pub instructions: Option<String>,
    /// The era of the connection.
    pub era: Era,
    /// The modern revisions the server serves per request (empty for a legacy connection).
    pub supported_versions: Vec<String>,
}

/// One connection to a server, in either era. Cheap to clone; clones share the session.
#[derive(Clone)]
pub struct ClientSession {
    peer: Peer,
    state: Arc<ClientState>,
    /// Shared by the handle's clones: a clone costs reference counts, not a copy of the
    /// server's capabilities and identity (a gateway clones its upstream's session per call).
    negotiated: Arc<Negotiated>,
    /// This handle's log level for modern requests (`None`: the session-wide one).
    log_level: Option<Option<LoggingLevel>>,
    /// Set when this handle declares the tasks extension on its own: told each task a call
    /// becomes.
    tasks: Option<exchange::TaskStarted>,
}

impl fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSession")
            .field("negotiated", &self.negotiated)
            .finish()
    }
}

/// `[RO-1]`: every root is a `file://` URI; `[RO-3]`: none climbs out with a `..` segment.
pub(crate) fn check_roots(roots: &[Root]) -> Result<(), ClientError> {
    match crate::handlers::refused_root(roots) {
        Some((r, reason)) => Err(ClientError::InvalidRoot {
            uri: r.uri.clone(),
            reason,
        }),
        None => Ok(()),
    }
}

impl ClientSession {
    pub(crate) fn new(peer: Peer, state: Arc<ClientState>, negotiated: Negotiated) -> Self {
        ClientSession {
            peer,
            state,
            negotiated: Arc::new(negotiated),
            log_level: None,
            tasks: None,
        }
    }

    /// The engine handle and the shared state, for the modules that extend the session.
    pub(crate) fn parts(&self) -> (&Peer, &Arc<ClientState>) {
        (&self.peer, &self.state)
    }

    /// This handle's log level override (see [`with_log_level`](ClientSession::with_log_level)).
    pub(crate) fn log_level_override(&self) -> Option<Option<LoggingLevel>> {
        self.log_level
    }

    /// The era of the connection.
    pub fn era(&self) -> Era {
        self.negotiated.era
    }

    /// A handle to the same session whose modern requests ask for log lines from `level`
    /// (`None`: none), whatever the session-wide level is (`[D26-84]`: the level travels in each
    /// request's envelope). On a legacy connection the level is session-wide: use
    /// [`set_level`](ClientSession::set_level).
    pub fn with_log_level(&self, level: Option<LoggingLevel>) -> ClientSession {
        ClientSession {
            log_level: Some(level),
            ..self.clone()
        }
    }

    /// A handle to the same session whose requests declare the tasks extension of 2026-07-28
    /// (`io.modelcontextprotocol/tasks`) whether or not the client was built with
    /// [`ClientBuilder::tasks_extension`](crate::ClientBuilder::tasks_extension): the server may
    /// then answer this handle's `tools/call` with a task, which the call follows to its end as
    /// such a client's would. `started` is called with the task's id once the server answered
    /// with it, before it is followed (a relay that must become a task itself then, say). On a
    /// legacy connection nothing changes (2025 tasks are asked for with
    /// [`start_tool_task`](ClientSession::start_tool_task)).
    pub fn with_tasks_extension(
        &self,
        started: impl Fn(&str) + Send + Sync + 'static,
    ) -> ClientSession {
        self.state
            .handle_tasks
            .store(true, std::sync::atomic::Ordering::Release);
        ClientSession {
            tasks: Some(Arc::new(started)),
            ..self.clone()
        }
    }

    /// What the handshake settled.
    pub fn negotiated(&self) -> &Negotiated {
        &self.negotiated
    }

    /// The negotiated revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.negotiated.protocol_version
    }

    /// What the server declared.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.negotiated.capabilities
    }

    /// What this client declared (explicit capabilities completed by its handlers).
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.state.capabilities
    }

    /// The bound on pages a list-all helper follows.
    pub(crate) fn max_pages(&self) -> usize {
        self.state.options.max_pages
    }

    /// The engine handle, for raw requests.
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Whether the session is still open.
    pub fn is_open(&self) -> bool {
        self.state.phase() == Phase::Ready
    }

    /// Closes the session: waiting calls fail with a closed-session error.
    pub fn close(&self) {
        self.peer.close();
    }

    /// Resolves when the session has closed.
    pub async fn closed(&self) {
        self.peer.closed().await;
    }

    /// Sends any request with per-call options (timeout, progress callback, timeout reset on
    /// progress with a hard maximum, cancellation token) and parses its result. `params` that
    /// serialize to `null` (such as `()`) are left out.
    ///
    /// # Errors
    /// A request error: the server's error, a timeout or cancellation (both send
    /// `notifications/cancelled`), a closed session, a local refusal (no frame sent), or a result
    /// that does not parse as `R`.
    pub async fn request<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: P,
        opts: RequestOptions,
    ) -> Result<R, ClientError> {
        let params = to_raw(&params).map_err(switchboard_jsonrpc::RequestError::from)?;
        let params = (params.get() != "null").then_some(params);
        let raw = exchange::call(
            &self.peer,
            &self.state,
            method,
            params,
            opts,
            self.log_level,
            Some(relist_tools),
            self.tasks.as_ref(),
        )
        .await
        .map_err(|e| self.noted(e))?;
        exchange::parse_result(method, &raw)
    }

    pub(crate) async fn send<P: Serialize, R: DeserializeOwned>(
        &self,
        method: &str,
        params: &P,
        opts: RequestOptions,
    ) -> Result<R, ClientError> {
        let params = to_raw(params).map_err(switchboard_jsonrpc::RequestError::from)?;
        let raw = exchange::call(
            &self.peer,
            &self.state,
            method,
            Some(params),
            opts,
            self.log_level,
            Some(relist_tools),
            self.tasks.as_ref(),
        )
        .await
        .map_err(|e| self.noted(e))?;
        exchange::parse_result(method, &raw)
    }

    /// Remembers the URL elicitations a −32042 error names, so their completion is recognised.
    fn noted(&self, e: ClientError) -> ClientError {
        if let Some(data) = e.url_elicitations() {
            for el in data.elicitations {
                self.state.remember_elicitation(el.elicitation_id);
            }
        }
        e
    }

    /// `ping`.
    ///
    /// # Errors
    /// A request error.
    pub async fn ping(&self) -> Result<(), ClientError> {
        let _: serde_json::Value = self
            .peer
            .call::<(), _>(methods::PING, None, RequestOptions::default())
            .await?;
        Ok(())
    }

    /// The change generation of a cached list: how many `list_changed` notifications for it have
    /// arrived.
    pub fn list_generation(&self, kind: ListKind) -> u64 {
        let lists = &self.state.lists;
        match kind {
            ListKind::Tools => lists.tools.generation(),
            ListKind::Resources => lists.resources.generation(),
            ListKind::ResourceTemplates => lists.templates.generation(),
            ListKind::Prompts => lists.prompts.generation(),
        }
    }

    async fn list<T: Listed>(&self) -> Result<Vec<T>, ClientError> {
        list_all::<T>(&self.peer, &self.state).await
    }

    async fn changed<T: Listed>(&self) -> Result<Vec<T>, ClientError> {
        changed::<T>(&self.peer, &self.state).await
    }

    // ----- tools -------------------------------------------------------------------------------

    /// One page of `tools/list`; `cursor` is a `nextCursor` exactly as received (`[UT-12]`).
    ///
    /// # Errors
    /// A request error.
    pub async fn list_tools_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListToolsResult, ClientError> {
        list_page::<Tool>(&self.peer, &self.state, cursor).await
    }

    /// Every tool, following `nextCursor` (bounded); refreshes the tool cache.
    ///
    /// # Errors
    /// A request error, or [`ClientError::TooManyPages`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list().await
    }

    /// The cached tool list (from the last complete listing).
    pub fn cached_tools(&self) -> Option<Vec<Tool>> {
        self.state.lists.tools.items()
    }

    /// Waits for `notifications/tools/list_changed` not yet reflected in the cache, then returns
    /// the re-listed tools: the cache is fresh on return.
    ///
    /// # Errors
    /// A closed session, or a request error while re-listing.
    pub async fn tools_changed(&self) -> Result<Vec<Tool>, ClientError> {
        self.changed().await
    }

    /// `tools/call` with the default options.
    ///
    /// # Errors
    /// As [`ClientSession::call_tool_with`].
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, RequestOptions::default())
            .await
    }

    /// `tools/call` with per-call options. When the cached tool list has this tool with an
    /// `outputSchema` (2025-06-18+), the result's `structuredContent` is validated against it
    /// (`[SF-7]`). A tool's own failure is not an error: it is a result with `is_error`.
    ///
    /// # Errors
    /// A request error: the server's -32602 for an unknown tool, a timeout, a cancellation.
    /// [`ClientError::InvalidStructuredContent`] when `structuredContent` is missing or does not
    /// conform; [`ClientError::InvalidOutputSchema`] when the tool's schema cannot be compiled.
    /// [`ClientError::TaskRequired`], nothing sent, when the cached tool list says the tool must
    /// run as a task (`[TK-4]`).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: serde_json::Value,
        opts: RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.check_plain_call(name)?;
        let params = CallToolRequestParams::new(name).with_arguments(arguments);
        let result: CallToolResult = self.send(methods::TOOLS_CALL, &params, opts).await?;
        if !self.protocol_version().supports(Feature::StructuredContent) {
            return Ok(result);
        }
        let tool = self
            .cached_tools()
            .and_then(|tools| tools.into_iter().find(|t| t.name == name));
        match tool {
            Some(tool) => self.state.validators.check(&tool, result),
            None => Ok(result),
        }
    }

    // ----- resources ---------------------------------------------------------------------------

    /// One page of `resources/list`.
    ///
    /// # Errors
    /// A request error.
    pub async fn list_resources_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourcesResult, ClientError> {
        list_page::<Resource>(&self.peer, &self.state, cursor).await
    }

    /// Every resource, following `nextCursor` (bounded); refreshes the resource cache.
    ///
    /// # Errors
    /// A request error, or [`ClientError::TooManyPages`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list().await
    }

    /// The cached resource list.
    pub fn cached_resources(&self) -> Option<Vec<Resource>> {
        self.state.lists.resources.items()
    }

    /// Waits for `notifications/resources/list_changed` not yet reflected in the resource
    /// cache, then returns the re-listed resources.
    ///
    /// # Errors
    /// A closed session, or a request error while re-listing.
    pub async fn resources_changed(&self) -> Result<Vec<Resource>, ClientError> {
        self.changed().await
    }

    /// One page of `resources/templates/list`.
    ///
    /// # Errors
    /// A request error.
    pub async fn list_resource_templates_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        list_page::<ResourceTemplate>(&self.peer, &self.state, cursor).await
    }

    /// Every resource template, following `nextCursor` (bounded); refreshes the template cache.
    ///
    /// # Errors
    /// A request error, or [`ClientError::TooManyPages`].
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list().await
    }

    /// The cached resource-template list.
    pub fn cached_resource_templates(&self) -> Option<Vec<ResourceTemplate>> {
        self.state.lists.templates.items()
    }

    /// Waits for `notifications/resources/list_changed` not yet reflected in the template
    /// cache, then returns the re-listed templates.
    ///
    /// # Errors
    /// A closed session, or a request error while re-listing.
    pub async fn resource_templates_changed(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.changed().await
    }

    /// `resources/read`.
    ///
    /// # Errors
    /// A request error, e.g. the server's error for an unknown resource (-32602 in 2026-07-28,
    /// -32002 before: [`ClientError::is_resource_not_found`] reads both).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.send(
            methods::RESOURCES_READ,
            &ResourceRequestParams::new(uri),
            RequestOptions::default(),
        )
        .await
    }

    /// Calls `callback` with each `notifications/resources/updated` for `uri` (or a sub-resource
    /// of it). The URI's first subscription sends `resources/subscribe`; later ones only add a
    /// callback.
    ///
    /// # Errors
    /// [`ClientError::TooManySubscriptions`] at the bound; a request error (the server did not
    /// declare `resources.subscribe`, or refused). Nothing stays registered on error.
    pub async fn subscribe(
        &self,
        uri: &str,
        callback: impl Fn(ResourceUpdatedNotificationParams) + Send + Sync + 'static,
    ) -> Result<SubscriptionId, ClientError> {
        let (id, first) = self.state.subscriptions.add(uri, Arc::new(callback))?;
        if first {
            // Removes the registration if the request fails or the caller stops waiting.
            let mut guard = Unregister {
                state: &self.state,
                id: Some(id),
            };
            let _: EmptyResult = self
                .send(
                    methods::RESOURCES_SUBSCRIBE,
                    &ResourceRequestParams::new(uri),
                    RequestOptions::default(),
                )
                .await?;
            guard.id = None;
        }
        Ok(id)
    }

    /// Removes a subscription. The URI's last subscription sends `resources/unsubscribe`.
    ///
    /// # Errors
    /// [`ClientError::UnknownSubscription`]; a request error from `resources/unsubscribe` (the
    /// callback is removed anyway).
    pub async fn unsubscribe(&self, id: SubscriptionId) -> Result<(), ClientError> {
        let (uri, last) = self.state.subscriptions.remove(id)?;
        if last {
            let _: EmptyResult = self
                .send(
                    methods::RESOURCES_UNSUBSCRIBE,
                    &ResourceRequestParams::new(uri),
                    RequestOptions::default(),
                )
                .await?;
        }
        Ok(())
    }

    /// How many subscriptions this session holds.
    pub fn subscription_count(&self) -> usize {
        self.state.subscriptions.len()
    }

    /// Whether `uri` has a subscription.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.state.subscriptions.is_subscribed(uri)
    }

    // ----- prompts -----------------------------------------------------------------------------

    /// One page of `prompts/list`.
    ///
    /// # Errors
    /// A request error.
    pub async fn list_prompts_page(
        &self,
        cursor: Option<String>,
    ) -> Result<ListPromptsResult, ClientError> {
        list_page::<Prompt>(&self.peer, &self.state, cursor).await
    }

    /// Every prompt, following `nextCursor` (bounded); refreshes the prompt cache.
    ///
    /// # Errors
    /// A request error, or [`ClientError::TooManyPages`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list().await
    }

    /// The cached prompt list.
    pub fn cached_prompts(&self) -> Option<Vec<Prompt>> {
        self.state.lists.prompts.items()
    }

    /// Waits for `notifications/prompts/list_changed` not yet reflected in the cache, then
    /// returns the re-listed prompts.
    ///
    /// # Errors
    /// A closed session, or a request error while re-listing.
    pub async fn prompts_changed(&self) -> Result<Vec<Prompt>, ClientError> {
        self.changed().await
    }

    /// `prompts/get` with string arguments (left out when there are none).
    ///
    /// # Errors
    /// A request error, e.g. the server's -32602 for an unknown prompt or a missing argument.
    pub async fn get_prompt<K: Into<String>, V: Into<String>>(
        &self,
        name: &str,
        arguments: impl IntoIterator<Item = (K, V)>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = string_map(arguments);
        self.send(methods::PROMPTS_GET, &params, RequestOptions::default())
            .await
    }

    // ----- logging and completion --------------------------------------------------------------

    /// `logging/setLevel`: the server sends log lines at `level` and above, to the callback
    /// installed with [`ClientBuilder::on_log`](crate::ClientBuilder::on_log). On a modern
    /// connection nothing is sent: every later request names `level` in its envelope (see
    /// [`with_log_level`](ClientSession::with_log_level) for one request's level).
    ///
    /// # Errors
    /// A request error (the server did not declare `logging`).
    pub async fn set_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.era() == Era::Modern {
            if let Ok(mut s) = self.state.shared.lock() {
                s.log_level = Some(level);
            }
            return Ok(());
        }
        let _: EmptyResult = self
            .send(
                methods::LOGGING_SET_LEVEL,
                &SetLevelRequestParams::new(level),
                RequestOptions::default(),
            )
            .await?;
        Ok(())
    }

    /// `completion/complete` for the argument `argument` of `reference`, typed so far as `value`.
    ///
    /// # Errors
    /// A request error (the server did not declare `completions`, 2025-03-26+).
    pub async fn complete(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, ClientError> {
        self.complete_with_context(
            reference,
            argument,
            value,
            std::iter::empty::<(String, String)>(),
        )
        .await
    }

    /// `completion/complete` with `context.arguments`: arguments already resolved. The context
    /// exists from 2025-06-18 and is left out for an older revision.
    ///
    /// # Errors
    /// As [`ClientSession::complete`].
    pub async fn complete_with_context<K: Into<String>, V: Into<String>>(
        &self,
        reference: Reference,
        argument: &str,
        value: &str,
        context: impl IntoIterator<Item = (K, V)>,
    ) -> Result<CompleteResult, ClientError> {
        let mut params = CompleteRequestParams::new(reference, argument, value);
        if self.protocol_version().supports(Feature::CompletionContext) {
            params.context = string_map(context).map(|arguments| CompleteContext {
                arguments: Some(arguments),
                ..Default::default()
            });
        }
        self.send(
            methods::COMPLETION_COMPLETE,
            &params,
            RequestOptions::default(),
        )
        .await
    }

    // ----- roots -------------------------------------------------------------------------------

    /// The roots `roots/list` answers with (when no provider is installed).
    pub fn roots(&self) -> Vec<Root> {
        self.state.roots()
    }

    /// Replaces the roots and, when this client declared `roots.listChanged`, sends
    /// `notifications/roots/list_changed` (`[RO-2]`). Returns whether it was sent.
    ///
    /// # Errors
    /// [`ClientError::InvalidRoot`] for a root that is not a `file://` URI (`[RO-1]`) or has a
    /// `..` segment (`[RO-3]`); nothing is changed then. A closed session.
    pub async fn set_roots(
        &self,
        roots: impl IntoIterator<Item = Root>,
    ) -> Result<bool, ClientError> {
        let roots: Vec<Root> = roots.into_iter().collect();
        check_roots(&roots)?;
        self.state.set_roots(roots);
        self.notify_roots_changed().await
    }

    /// Sends `notifications/roots/list_changed` when this client declared `roots.listChanged`
    /// (`[RO-2]`), for a roots provider whose answer changed. Returns whether it was sent.
    ///
    /// # Errors
    /// A closed session.
    pub async fn notify_roots_changed(&self) -> Result<bool, ClientError> {
        if !self.state.declares_roots_list_changed() {
            return Ok(false);
        }
        self.peer
            .notify::<()>(methods::NOTIFICATIONS_ROOTS_LIST_CHANGED, None)
            .await?;
        Ok(true)
    }
}

/// Drops a subscription registration unless disarmed.
struct Unregister<'a> {
    state: &'a ClientState,
    id: Option<SubscriptionId>,
}

impl Drop for Unregister<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let _ = self.state.subscriptions.remove(id);
        }
    }
}

fn string_map<K: Into<String>, V: Into<String>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Option<OrderedMap<String>> {
    let mut map = OrderedMap::new();
    for (k, v) in pairs {
        map.insert(k, v.into());
    }
    (!map.is_empty()).then_some(map)
}

impl ClientSession {
    /// `subscriptions/listen` with `filter` (`[D26-67]`: only what it opts in to): returns once
    /// the server has acknowledged it, with the stream of its notifications. Modern connections
    /// only; the listen is not bounded in time, and ends when the stream is dropped.
    ///
    /// # Errors
    /// [`ClientError::TooManyListens`] at the bound; a local refusal on a legacy connection
    /// (the method is not in its revision); the server's error; a listen that ended before it
    /// was acknowledged; no acknowledgement within the session's default request timeout.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<ListenStream, ClientError> {
        let (peer, state) = self.parts();
        let listens = &state.listens;
        if listens.len() >= listens.limit {
            return Err(ClientError::TooManyListens {
                limit: listens.limit,
            });
        }
        let (events_tx, events) = mpsc::channel(listens.buffer);
        let (ack_tx, ack) = oneshot::channel();
        let id_slot: Arc<Mutex<Option<RequestId>>> = Arc::default();
        let registration = Mutex::new(Some((ack_tx, events_tx)));
        let state2 = state.clone();
        let slot = id_slot.clone();
        let cancel = CancellationToken::new();
        let opts = RequestOptions::default()
            .without_timeout()
            .with_cancel(cancel.clone())
            .on_id(move |id| {
                if let Ok(mut s) = slot.lock() {
                    *s = Some(id.clone());
                }
                if let Some((ack, events)) = registration.lock().ok().and_then(|mut r| r.take()) {
                    state2.listens.insert(id.clone(), ack, events);
                }
            });
        let params = SubscriptionsListenRequestParams {
            notifications: filter,
            meta: None,
        };
        let params = to_raw(&params).map_err(RequestError::from)?;
        let ended: Arc<Mutex<Option<ClientError>>> = Arc::default();
        let (done_tx, mut done) = oneshot::channel::<()>();
        {
            let peer = peer.clone();
            let state = state.clone();
            let ended = ended.clone();
            let id_slot = id_slot.clone();
            let log_level = self.log_level_override();
            tokio::spawn(async move {
                let r = exchange::call(
                    &peer,
                    &state,
                    methods::SUBSCRIPTIONS_LISTEN,
                    Some(params),
                    opts,
                    log_level,
                    None,
                    None,
                )
                .await;
                if let Err(e) = r
                    && let Ok(mut slot) = ended.lock()
                {
                    *slot = Some(e);
                }
                if let Some(id) = id_slot.lock().ok().and_then(|s| s.clone()) {
                    state.listens.remove(&id);
                }
                drop(done_tx);
            });
        }
        let guard = cancel.drop_guard();
        let wait = peer.config().request_timeout;
        let mut finished = false;
        let acknowledged = tokio::select! {
            a = ack => a.ok(),
            _ = &mut done => {
                finished = true;
                None
            }
            _ = async {
                match wait {
                    Some(t) => tokio::time::sleep(t).await,
                    None => std::future::pending().await,
                }
            } => None,
        };
        let Some(acknowledged) = acknowledged else {
            if !finished {
                // Give the request's task a moment to record why it ended.
                let _ = tokio::time::timeout(std::time::Duration::from_millis(100), done).await;
            }
            let why = ended.lock().ok().and_then(|mut e| e.take());
            return Err(why.unwrap_or_else(|| match (finished, wait) {
                // No acknowledgement within the request timeout: the request is cancelled
                // (the guard below drops) and the caller learns it timed out.
                (false, Some(after)) => ClientError::Request(RequestError::Timeout {
                    method: methods::SUBSCRIPTIONS_LISTEN.to_owned(),
                    after,
                }),
                _ => ClientError::NotReady("subscriptions/listen was not acknowledged"),
            }));
        };
        let id = id_slot
            .lock()
            .ok()
            .and_then(|s| s.clone())
            .unwrap_or_else(|| RequestId::int(0));
        Ok(ListenStream {
            id,
            acknowledged,
            events,
            ended,
            _cancel: guard,
        })
    }
}
