//! The server's built-in handlers: the answers to the catalogue requests it serves itself
//! (`initialize`, `tools/*`, `resources/*`, `prompts/*`, `logging/setLevel`,
//! `completion/complete`, `tasks/*`, `server/discover`, `subscriptions/listen`), and the route
//! table that names each by its catalogue marker ([`builtin_requests`]). The engine that
//! gates and dispatches to them is [`crate::service`].

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use switchboard_jsonrpc::{BoxFuture, HandlerResult, RequestContext};
use switchboard_types::completion::{CompleteRequestParams, CompleteResult, Reference};
use switchboard_types::jsonrpc::empty_object;
use switchboard_types::lifecycle::{InitializeRequestParams, InitializeResult};
use switchboard_types::logging::SetLevelRequestParams;
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::prompts::{GetPromptRequestParams, ListPromptsResult};
use switchboard_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    SubscribeRequestParams,
};
use switchboard_types::tools::{CallToolResult, Tool};
use switchboard_types::{ErrorCode, ErrorObject, Feature, Request};

use switchboard_types::catalogue::{
    CallTool, CancelTask, Cancelled, Complete, Discover, GetPrompt, GetTask, GetTaskPayload,
    Initialize, Initialized, ListPrompts, ListResourceTemplates, ListResources, ListTasks,
    ListTools, Method, Ping, Progress, ReadResource, SetLevel, Subscribe,
    SubscriptionsAcknowledged, SubscriptionsListen, Unsubscribe,
};

use crate::apps;
use crate::completion::{CompletionQuery, CompletionTarget};
use crate::context::resource_not_found;
use crate::lifecycle::LifecycleEvent;
use crate::modern::{capabilities, listen, tasks};
use crate::prompt::{self, PromptGet};
use crate::resource::ResourceRead;
use crate::router::{Builtin, Builtins, params_within, ready};
use crate::service::{ServerService, ok, poisoned};
use crate::task::{self, TaskMethod};
use crate::tool::{self, AllowList, ClientIdentity, RegisteredTool, ToolCall};
use serde_json::{Map, Value};
use switchboard_types::error::{echo, echo_value};
use switchboard_types::methods;
use switchboard_types::modern::{
    self as wire, DiscoverResult, ResultType, SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
};
use switchboard_types::tasks::CreateTaskResult;

impl ServerService {
    /// `initialize`: negotiate, move the lifecycle, decide the allow-list. Runs synchronously in
    /// frame order, so a request right behind it sees the new state.
    fn initialize(&self, params: InitializeRequestParams, req: &Request) -> HandlerResult {
        let version = self
            .server
            .era
            .negotiate(&params.protocol_version, &self.server.versions);
        let identity = ClientIdentity {
            info: params.client_info,
            capabilities: params.capabilities,
        };
        let allow = self
            .server
            .policy
            .as_ref()
            .map_or(AllowList::All, |p| p(&identity));
        {
            let mut d = self.state.data.lock().map_err(|_| poisoned())?;
            d.lifecycle = d.lifecycle.apply(LifecycleEvent::Initialize).map_err(|_| {
                ErrorObject::invalid_request(
                    "initialize was already received",
                    "already_initialized",
                )
            })?;
            d.version = Some(version);
            d.client = Some(self.server.share_client(identity));
            d.allow = allow;
        }
        self.state.decide_era(crate::era::ConnEra::Legacy);
        if let Some(p) = &req.params {
            self.state.handshake_completed(p.get());
        }
        if version.as_str() != params.protocol_version {
            tracing::info!(offered = %echo(&params.protocol_version), chosen = %version, "protocol version counter-offer");
        }
        let mut caps = self.server.capabilities.clone();
        if !version.supports(Feature::Tasks) {
            caps.tasks = None; // Never send 2025-11-25-only members to an older client (§3.3).
        }
        let mut result = InitializeResult::new(version, caps, self.server.info.clone());
        result.instructions = self.server.instructions.clone();
        ok(&result)
    }

    fn page<T: Clone>(
        &self,
        list: &str,
        items: &[T],
        params: &PaginatedRequestParams,
    ) -> Result<crate::pagination::Page<T>, ErrorObject> {
        self.server
            .paginator
            .page(list, items, params.cursor.as_deref())
    }

    /// Every tool this client may see: server-wide and this session's, in name order (a
    /// session tool in place of a server tool of its name). Shared, not copied.
    fn visible_tools(&self) -> Result<Vec<Arc<RegisteredTool>>, ErrorObject> {
        let mut tools: Vec<Arc<RegisteredTool>> = tool::session_tools(&self.state);
        {
            let registry = self.server.tools.read().map_err(|_| poisoned())?;
            tools.extend(registry.shared().cloned());
        }
        tools.retain(|t| self.allows(&t.tool.name));
        // Stable: of two tools with one name, the session's (first) is kept.
        tools.sort_by(|a, b| a.tool.name.cmp(&b.tool.name));
        tools.dedup_by(|a, b| a.tool.name == b.tool.name);
        Ok(tools)
    }

    fn list_tools(&self, params: &PaginatedRequestParams) -> HandlerResult {
        let mut visible = self.visible_tools()?;
        // MCP Apps: a host without the extension sees plain tools, no app-only one (`[AP-8]`).
        let plain_host = visible.iter().any(|t| apps::linked(&t.tool)) && !self.host_has_apps();
        if plain_host {
            visible.retain(|t| !apps::app_only(&t.tool));
        }
        let page = self.page(ListTools::NAME, &visible, params)?;
        let legacy = self.modern.is_none();
        let tools =
            page.items
                .iter()
                .map(|t| {
                    let tool = if plain_host {
                        apps::strip_links(&t.tool)
                    } else {
                        Cow::Borrowed(&t.tool)
                    };
                    // 2025 revisions allow only an object `outputSchema`; a tool whose schema is
                    // another is listed without it (its results carry the value as text).
                    if legacy
                        && tool.output_schema.as_ref().is_some_and(|s| {
                            s.get("type").and_then(|v| v.as_str()) != Some("object")
                        })
                    {
                        let mut owned = tool.into_owned();
                        owned.output_schema = None;
                        Cow::Owned(owned)
                    } else {
                        tool
                    }
                })
                .collect();
        ok(&ToolsPage {
            tools,
            next_cursor: page.next_cursor,
        })
    }

    fn find_tool(&self, name: &str) -> Result<Option<Arc<RegisteredTool>>, ErrorObject> {
        if let Some(t) = tool::session_tool(&self.state, name) {
            return Ok(Some(t));
        }
        Ok(self
            .server
            .tools
            .read()
            .map_err(|_| poisoned())?
            .get_shared(name))
    }

    fn call_tool(&self, params: CallParams, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let tool = match self.find_tool(&params.name) {
            Ok(Some(t)) => t,
            Ok(None) => return ready(Err(tool::unknown_tool(&params.name))),
            Err(e) => return ready(Err(e)),
        };
        if !self.allows(&params.name) {
            return ready(Err(tool::tool_not_permitted(&params.name)));
        }
        if apps::app_only(&tool.tool) && !self.host_has_apps() {
            let modern = self.modern.is_some();
            return ready(Err(apps::app_only_refused(&params.name, modern)));
        }
        // Validated in place as a JSON value, then handed to the tool without a copy.
        let arguments = serde_json::Value::Object(params.arguments.unwrap_or_default());
        if let Err(why) = tool.check_input(&arguments) {
            // A schema violation can quote the peer's value: both echoes are cut.
            let msg = format!(
                "Invalid arguments for tool {}: {}",
                echo(&params.name),
                echo(&why)
            );
            // 2025-11-25 (SEP-1303): a result the model can read; earlier revisions: -32602.
            return if self
                .version()
                .is_some_and(|v| v.supports(Feature::ToolInputErrorsAsResults))
            {
                ready(ok(&CallToolResult::error(msg)))
            } else {
                ready(Err(ErrorObject::new(ErrorCode::INVALID_PARAMS, msg)
                    .with_data(
                        serde_json::json!({"reason": "invalid_arguments", "tool": echo(&params.name)}),
                    )))
            };
        }
        let serde_json::Value::Object(arguments) = arguments else {
            return ready(Err(ErrorObject::internal("arguments are an object")));
        };
        if let (Some(_), Some(http)) = (&self.modern, self.state.http_facts())
            && let Err(e) = http.check_params(&tool.tool.input_schema, &arguments)
        {
            return ready(Err(e));
        }
        if let Some(call) = &self.modern {
            // 2026-07-28: whether the call may become a task (the tasks extension).
            let support = tool.tool.task_support();
            if let Err(e) =
                crate::modern::tasks::plan(&self.server.capabilities, call, support, &params.name)
            {
                return ready(Err(e));
            }
        }
        let run_as_task = match task::as_task(
            self.tasks_for_tools(),
            // In 2026-07-28 a legacy `task` member is ignored (`[D26-137]`).
            params.task.is_some() && self.modern.is_none(),
            tool.tool.task_support(),
            &params.name,
        ) {
            Ok(t) => t,
            Err(e) => return ready(Err(e)),
        };
        let ttl = params.task.as_ref().and_then(|t| t.ttl);
        let call = ToolCall {
            name: params.name,
            arguments,
            cx: self.context(cx),
        };
        if run_as_task {
            return self.start_task(tool, call, ttl);
        }
        // 2026-07-28: the result written with the members this revision adds, when it can be.
        let modern = self
            .modern
            .as_ref()
            .map(|c| (c.clone(), self.server.results.clone()));
        Box::pin(async move {
            let result = run_checked(&tool, call).await?;
            let Some((call, members)) = modern else {
                return ok(&result.for_legacy());
            };
            if let Some(text) = members.written(
                methods::TOOLS_CALL,
                &result,
                crate::modern::finish::plain(&result),
            ) {
                call.written
                    .store(true, std::sync::atomic::Ordering::Relaxed);
                return Ok(text);
            }
            ok(&result)
        })
    }

    /// Whether tools may run as tasks in this session: the server declared
    /// `tasks.requests.tools.call` and the negotiated revision has tasks (`[TK-1]`).
    fn tasks_for_tools(&self) -> bool {
        self.server
            .capabilities
            .tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.call.is_some())
            && self
                .state
                .version()
                .is_some_and(|v| v.supports(Feature::Tasks))
    }

    /// Answers a task-augmented call with its new task at once (`[TK-7]`) and runs the tool in
    /// the background; its outcome goes to the store for `tasks/result`.
    fn start_task(
        &self,
        tool: Arc<RegisteredTool>,
        call: ToolCall,
        ttl: Option<u64>,
    ) -> BoxFuture<HandlerResult> {
        let tasks = self.server.tasks.clone();
        let session = self.state.id;
        let owner = self.state.task_owner();
        Box::pin(async move {
            let rc = call.cx.request().clone();
            let created = tasks
                .spawn(session, owner, ttl, rc, move |link| {
                    let mut call = call;
                    call.cx.task = Some(link);
                    async move {
                        // Tasks of this kind are 2025 ones: the result as 2025 allows it.
                        let result = run_checked(&tool, call)
                            .await
                            .map(CallToolResult::for_legacy);
                        task::outcome_of(result, CallToolResult::is_error)
                    }
                })
                .await?;
            ok(&CreateTaskResult::new(created))
        })
    }

    /// `tasks/get`, `tasks/result`, `tasks/list`, `tasks/cancel`, scoped to this session.
    fn task_request(&self, cx: RequestContext, method: TaskMethod) -> BoxFuture<HandlerResult> {
        let page = self.server.paginator.page_size();
        task::request(
            self.server.tasks.clone(),
            self.state.task_owner(),
            page,
            cx,
            method,
        )
    }

    fn list_resources(&self, params: &PaginatedRequestParams) -> HandlerResult {
        let registry = self.server.resources.read().map_err(|_| poisoned())?;
        let page = self.page(ListResources::NAME, registry.resources(), params)?;
        ok(&ListResourcesResult {
            resources: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn list_templates(&self, params: &PaginatedRequestParams) -> HandlerResult {
        let templates = self
            .server
            .resources
            .read()
            .map_err(|_| poisoned())?
            .templates();
        let page = self.page(ListResourceTemplates::NAME, &templates, params)?;
        ok(&ListResourceTemplatesResult {
            resource_templates: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        let resolved = match self.server.resources.read() {
            Ok(r) => r.resolve(&params.uri),
            Err(_) => return ready(Err(poisoned())),
        };
        let Some((reader, vars)) = resolved else {
            return ready(Err(match &self.modern {
                // 2026-07-28: -32602 with `data.uri`, never -32002 (`[D26-98]`).
                Some(_) => crate::context::resource_not_found_modern(&params.uri),
                None => resource_not_found(&params.uri),
            }));
        };
        let read = ResourceRead {
            uri: params.uri,
            vars,
            cx: self.context(cx),
        };
        Box::pin(async move { ok(&reader(read).await?) })
    }

    fn subscribe(&self, params: SubscribeRequestParams, on: bool) -> HandlerResult {
        if on
            && self
                .server
                .resources
                .read()
                .map_err(|_| poisoned())?
                .resolve(&params.uri)
                .is_none()
        {
            return Err(resource_not_found(&params.uri));
        }
        let mut d = self.state.data.lock().map_err(|_| poisoned())?;
        if on {
            if !d.subscriptions.contains(&params.uri)
                && d.subscriptions.len() >= self.server.max_subscriptions
            {
                return Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "too many subscriptions").with_data(
                    serde_json::json!({"reason": "too_many_subscriptions", "limit": self.server.max_subscriptions}),
                ));
            }
            if !d.subscriptions.contains(&params.uri)
                && d.subscription_bytes + params.uri.len() > self.server.max_subscription_bytes
            {
                let limit = self.server.max_subscription_bytes;
                return Err(ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("subscriptions past {limit} bytes of URIs"),
                )
                .with_data(
                    serde_json::json!({"reason": "subscriptions_too_large", "limit": limit}),
                ));
            }
            let len = params.uri.len();
            if d.subscriptions.insert(params.uri) {
                d.subscription_bytes += len;
            }
        } else if d.subscriptions.remove(&params.uri) {
            d.subscription_bytes -= params.uri.len();
        }
        Ok(empty_object())
    }

    fn list_prompts(&self, params: &PaginatedRequestParams) -> HandlerResult {
        let prompts = self.server.prompts.read().map_err(|_| poisoned())?.list();
        let page = self.page(ListPrompts::NAME, &prompts, params)?;
        ok(&ListPromptsResult {
            prompts: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        let entry = match self.server.prompts.read() {
            Ok(r) => r.get(&params.name),
            Err(_) => return ready(Err(poisoned())),
        };
        let Some(entry) = entry else {
            return ready(Err(prompt::unknown_prompt(&params.name)));
        };
        let arguments: BTreeMap<String, String> = params
            .arguments
            .map(|a| a.0.into_iter().collect())
            .unwrap_or_default();
        if let Err(e) = prompt::check_arguments(&entry.prompt, &arguments) {
            return ready(Err(e));
        }
        let get = PromptGet {
            name: params.name,
            arguments,
            cx: self.context(cx),
        };
        Box::pin(async move { ok(&(entry.handler)(get).await?) })
    }

    fn set_level(&self, params: SetLevelRequestParams) -> HandlerResult {
        self.state.data.lock().map_err(|_| poisoned())?.log_level = Some(params.level);
        Ok(empty_object())
    }

    fn complete(&self, params: CompleteRequestParams) -> HandlerResult {
        let target = match &params.r#ref {
            Reference::Prompt(p) => {
                if !self
                    .server
                    .prompts
                    .read()
                    .map_err(|_| poisoned())?
                    .contains(&p.name)
                {
                    return Err(prompt::unknown_prompt(&p.name));
                }
                CompletionTarget::Prompt(p.name.clone())
            }
            Reference::Resource(r) => CompletionTarget::ResourceTemplate(r.uri.clone()),
            Reference::Unknown(v) => {
                return Err(ErrorObject::new(
                    ErrorCode::INVALID_PARAMS,
                    "Unknown completion reference type",
                )
                .with_data(
                    serde_json::json!({"reason": "unknown_reference", "ref": echo_value(v)}),
                ));
            }
        };
        let context = params
            .context
            .and_then(|c| c.arguments)
            .map(|a| a.0.into_iter().collect())
            .unwrap_or_default();
        let query = CompletionQuery {
            value: params.argument.value,
            context,
        };
        let completions = self.server.completions.read().map_err(|_| poisoned())?;
        let mut result = CompleteResult::new(Vec::new());
        if let Some((values, total)) = completions.complete(target, &params.argument.name, &query) {
            result.completion.has_more = Some(total > values.len());
            result.completion.total = Some(total as u64);
            result.completion.values = values;
        }
        ok(&result)
    }
}

impl ServerService {
    /// `server/discover` (`[D26-24]`, `[D26-25]`).
    pub(crate) fn discover(&self) -> HandlerResult {
        let server = &self.server;
        ok(&DiscoverResult {
            result_type: ResultType::Complete,
            supported_versions: server
                .modern_version_names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            capabilities: capabilities(&server.capabilities),
            instructions: server.instructions.clone(),
            cache: server.cache,
            meta: Some(server.server_info_meta()),
            extra: Map::new(),
        })
    }

    /// `subscriptions/listen` (`[D26-67]`..`[D26-76]`): the acknowledgement first, then the
    /// events asked for, each tagged with this request's id, until the client goes away or the
    /// server closes its listen streams (the request is then answered).
    ///
    /// The filter is kept as long as the stream is open: its params were bounded in bytes like
    /// a session's `initialize` params before they were parsed (URI and task-id lists could
    /// otherwise be a body's worth each).
    pub(crate) fn listen(
        &self,
        params: SubscriptionsListenRequestParams,
        cx: RequestContext,
    ) -> BoxFuture<HandlerResult> {
        if let Err(e) = tasks::check_listen(self.modern.as_deref(), &params.notifications) {
            return ready(Err(e));
        }
        let caps = &self.server.capabilities;
        let agreed = listen::agreed(&params.notifications, caps, tasks::offered(caps));
        let owner = tasks::owner_of(&cx);
        let Some(mut listening) = self.server.audience.listeners.open(agreed.clone(), owner) else {
            return ready(Err(ErrorObject::internal("too many open listen streams")
                .with_data(serde_json::json!({"reason": "too_many_listen_streams"}))));
        };
        Box::pin(async move {
            let meta = wire::subscription_meta(cx.id());
            let ack = SubscriptionsAcknowledgedNotificationParams {
                notifications: agreed,
                meta: Some(meta.clone()),
            };
            cx.peer()
                .notify(SubscriptionsAcknowledged::NAME, Some(&ack))
                .await
                .map_err(|e| ErrorObject::internal(e.to_string()))?;
            while let Some(event) = listening.events.recv().await {
                let (method, mut params) = match event {
                    listen::Event::ToolsListChanged => {
                        (methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, Map::new())
                    }
                    listen::Event::PromptsListChanged => {
                        (methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED, Map::new())
                    }
                    listen::Event::ResourcesListChanged => {
                        (methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED, Map::new())
                    }
                    listen::Event::ResourceUpdated(uri) => {
                        let mut p = Map::new();
                        p.insert("uri".into(), Value::String(uri));
                        (methods::NOTIFICATIONS_RESOURCES_UPDATED, p)
                    }
                    listen::Event::Task(_, _, task) => (
                        methods::NOTIFICATIONS_TASKS,
                        serde_json::from_str(&task).unwrap_or_default(),
                    ),
                };
                params.insert("_meta".into(), Value::Object(meta.clone()));
                if cx.peer().notify(method, Some(&params)).await.is_err() {
                    break;
                }
            }
            ok(&serde_json::json!({"_meta": meta}))
        })
    }
}

/// Runs a tool and checks its result against its `outputSchema`: the server's own bug (SF-7)
/// is never sent as a result that breaks the schema. Plain calls and tasks both end here.
async fn run_checked(tool: &RegisteredTool, call: ToolCall) -> Result<CallToolResult, ErrorObject> {
    let result = tool.run(call).await?;
    // The call was routed by this name: the tool's own.
    let name = &tool.tool.name;
    if let Err(why) = tool.check_output(&result) {
        tracing::error!(tool = %name, %why, "structuredContent does not match outputSchema");
        return Err(ErrorObject::internal(format!(
            "tool {name} produced output that does not match its outputSchema"
        ))
        .with_data(
            serde_json::json!({"reason": "invalid_structured_content", "tool": name, "spec": "SF-7"}),
        ));
    }
    Ok(result)
}

/// The requests the server serves itself, each routed by its catalogue marker (see
/// [`Builtins`]).
pub(crate) fn builtin_requests() -> Vec<(&'static str, Builtin<ServerService>)> {
    Builtins::<ServerService>::new()
        .unparsed::<Discover>(|s, _, _| ready(s.discover()))
        .bounded::<SubscriptionsListen>(
            |s, r| params_within(r, s.server.max_initialize_bytes, "listen_too_large"),
            |s, p, _, cx| s.listen(p, cx),
        )
        .bounded::<Initialize>(
            |s, r| params_within(r, s.server.max_initialize_bytes, "initialize_too_large"),
            |s, p, r, _| ready(s.initialize(p, &r)),
        )
        .unparsed::<Ping>(|_, _, _| ready(Ok(empty_object())))
        .request::<ListTools>(|s, p, _, _| ready(s.list_tools(&p)))
        .request_as::<CallTool, CallParams>(|s, p, _, cx| s.call_tool(p, cx))
        .request::<ListResources>(|s, p, _, _| ready(s.list_resources(&p)))
        .request::<ListResourceTemplates>(|s, p, _, _| ready(s.list_templates(&p)))
        .request::<ReadResource>(|s, p, _, cx| s.read_resource(p, cx))
        .request::<Subscribe>(|s, p, _, _| ready(s.subscribe(p, true)))
        .request::<Unsubscribe>(|s, p, _, _| ready(s.subscribe(p, false)))
        .request::<ListPrompts>(|s, p, _, _| ready(s.list_prompts(&p)))
        .request::<GetPrompt>(|s, p, _, cx| s.get_prompt(p, cx))
        .request::<SetLevel>(|s, p, _, _| ready(s.set_level(p)))
        .request::<Complete>(|s, p, _, _| ready(s.complete(p)))
        .request::<GetTask>(|s, p, _, cx| s.task_request(cx, TaskMethod::Get(p)))
        .request::<GetTaskPayload>(|s, p, _, cx| s.task_request(cx, TaskMethod::Result(p)))
        .request::<ListTasks>(|s, p, _, cx| s.task_request(cx, TaskMethod::List(p)))
        .request::<CancelTask>(|s, p, _, cx| s.task_request(cx, TaskMethod::Cancel(p)))
        .into_routes()
}

/// The notifications the server (its lifecycle) or the engine takes itself.
pub(crate) fn builtin_notifications() -> [&'static str; 3] {
    [Initialized::NAME, Cancelled::NAME, Progress::NAME]
}

/// One page of `tools/list` as `ListToolsResult` writes it (no `_meta`, no other members),
/// written from the registered tools without copying them.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ToolsPage<'a> {
    tools: Vec<Cow<'a, Tool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_cursor: Option<String>,
}

/// The params of `tools/call` as the server reads them (see [`read::CallToolRequestParams`]).
pub(crate) use read::CallToolRequestParams as CallParams;

mod read {
    use super::checked;
    use crate::router::ReadAs;
    use switchboard_types::catalogue::CallTool;

    /// `switchboard_types::tools::CallToolRequestParams` with its checks and errors (the same
    /// members, types and name, which serde's errors quote), but `_meta` only checked, not
    /// built: the call does not read it (the engine takes a progress token from the text, the
    /// modern front door its envelope), and in 2026-07-28 every request carries one.
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub(crate) struct CallToolRequestParams {
        pub(crate) name: String,
        #[serde(default)]
        pub(crate) arguments: Option<switchboard_types::JsonObject>,
        #[serde(default)]
        pub(crate) task: Option<switchboard_types::tasks::TaskMetadata>,
        #[serde(rename = "_meta", default)]
        _meta: Option<checked::Object>,
        #[serde(flatten)]
        _extra: switchboard_types::JsonObject,
    }

    impl ReadAs<CallTool> for CallToolRequestParams {}
}

/// JSON read as `serde_json` reads it into a `Map<String, Value>` or a `Value`, with the same
/// checks (escapes, number ranges) and errors, keeping nothing.
mod checked {
    use std::fmt;

    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

    /// The key by which `serde_json` marks a raw value inside a map; `Value` reads a map that
    /// starts with it as the JSON text its value holds.
    const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

    /// What a `Map<String, Value>` reads.
    pub(crate) struct Object;

    /// What a `Value` reads.
    struct Any;

    /// A key of a map (a `String`), compared with [`RAW_VALUE_TOKEN`].
    struct Key(bool);

    impl<'de> de::Deserialize<'de> for Object {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Object;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a map")
                }
                fn visit_unit<E: de::Error>(self) -> Result<Object, E> {
                    Ok(Object)
                }
                fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object, A::Error> {
                    while map.next_entry::<Key, Any>()?.is_some() {}
                    Ok(Object)
                }
            }
            d.deserialize_map(V)
        }
    }

    impl<'de> de::Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a string key")
                }
                fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                    Ok(Key(s == RAW_VALUE_TOKEN))
                }
            }
            d.deserialize_str(V)
        }
    }

    impl<'de> de::Deserialize<'de> for Any {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(AnyVisitor)
        }
    }

    /// The text of a raw value, as `serde_json` reads it (a string).
    struct RawText(String);

    impl<'de> de::Deserialize<'de> for RawText {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl Visitor<'_> for V {
                type Value = RawText;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("raw value")
                }
                fn visit_str<E: de::Error>(self, s: &str) -> Result<RawText, E> {
                    Ok(RawText(s.to_owned()))
                }
            }
            d.deserialize_str(V)
        }
    }

    struct AnyVisitor;

    impl<'de> Visitor<'de> for AnyVisitor {
        type Value = Any;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any valid JSON value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_str<E>(self, _: &str) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_none<E>(self) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Any, D::Error> {
            de::Deserialize::deserialize(d)
        }
        fn visit_unit<E>(self) -> Result<Any, E> {
            Ok(Any)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Any, A::Error> {
            while seq.next_element::<Any>()?.is_some() {}
            Ok(Any)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Any, A::Error> {
            // As `Value` reads a map: one that starts with the raw-value key is the JSON text
            // its value holds, read as a value (and nothing after it).
            match map.next_key::<Key>()? {
                None => Ok(Any),
                Some(Key(true)) => {
                    let RawText(text) = map.next_value()?;
                    serde_json::from_str::<serde_json::Value>(&text).map_err(de::Error::custom)?;
                    Ok(Any)
                }
                Some(Key(false)) => {
                    map.next_value::<Any>()?;
                    while map.next_entry::<Key, Any>()?.is_some() {}
                    Ok(Any)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::builtin_router;
    use switchboard_types::catalogue;
    use switchboard_types::catalogue::{
        CATALOGUE, MethodKind, RootsListChanged, Sender, TaskStatus as TaskStatusChanged,
    };

    /// Catalogue methods the server receives and deliberately leaves to the user's own routes
    /// ([`ServerBuilder::notification`](crate::ServerBuilder::notification)): what they call
    /// for is the application's decision, not the protocol's.
    const LEFT_TO_USER: &[&str] = &[
        // The client's roots changed: a server that uses roots asks again (`roots/list`).
        RootsListChanged::NAME,
        // The status of a task the client runs for us (sampling, elicitation): `ClientTask`
        // polls `tasks/get`; an application that wants the push routes it.
        TaskStatusChanged::NAME,
    ];

    /// `tools/call` params read as the server reads them take and refuse what
    /// `CallToolRequestParams` does, with the same errors, and give the same members.
    #[test]
    fn call_params_read_as_call_tool_request_params() {
        use switchboard_types::tools::CallToolRequestParams;
        let texts = [
            r#"{"name":"add","arguments":{"a":1,"b":2}}"#,
            r#"{"name":"add","arguments":{"a":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#,
            r#"{"name":"add","_meta":null}"#,
            r#"{"name":"add","_meta":{}}"#,
            r#"{"name":"add","_meta":5}"#,
            r#"{"name":"add","_meta":[]}"#,
            r#"{"name":"add","_meta":"x"}"#,
            r#"{"name":"add","_meta":{"a":[1,2.5,-3,true,null,{"b":"\u0041"}]}}"#,
            r#"{"name":"add","_meta":{"a":1e400}}"#,
            r#"{"name":"add","_meta":{"a":"\ud800"}}"#,
            r#"{"name":"add","_meta":{"\ud800":1}}"#,
            r#"{"name":"add","_meta":{"a":1,"a":2}}"#,
            r#"{"name":"add","_meta":{},"_meta":{}}"#,
            r#"{"name":"add","_meta":{"$serde_json::private::RawValue":1}}"#,
            r#"{"name":"add","_meta":{"a":{"$serde_json::private::RawValue":"[1,2]"}}}"#,
            r#"{"name":"add","_meta":{"a":{"$serde_json::private::RawValue":"[1,"}}}"#,
            r#"{"name":"add","_meta":{"a":{"$serde_json::private::RawValue":7}}}"#,
            r#"{"name":"add","_meta":{"a":{"$serde_json::private::RawValue":"1","b":2}}}"#,
            r#"{"name":"add","_meta":{"a":{"b":1,"$serde_json::private::RawValue":"1"}}}"#,
            r#"{"name":"add","task":{"ttl":5},"x":{"y":[1]}}"#,
            r#"{"name":"add","task":{"ttl":-5}}"#,
            r#"{"name":"add","x":1e400}"#,
            r#"{"arguments":{}}"#,
            r#"{"name":7}"#,
            r#"{"name":"add","arguments":[]}"#,
            r#"{"name":"add","name":"b"}"#,
            r#"[]"#,
            r#"["add"]"#,
            r#"null"#,
            r#"{"name":"add","_meta":{"a":1}"#,
        ];
        for text in texts {
            let ours = serde_json::from_str::<CallParams>(text);
            let theirs = serde_json::from_str::<CallToolRequestParams>(text);
            match (ours, theirs) {
                (Ok(o), Ok(t)) => {
                    assert_eq!(o.name, t.name, "{text}");
                    assert_eq!(o.arguments, t.arguments, "{text}");
                    assert_eq!(o.task, t.task, "{text}");
                }
                (Err(o), Err(t)) => assert_eq!(o.to_string(), t.to_string(), "{text}"),
                (o, t) => panic!("{text}: {:?} against {:?}", o.is_ok(), t.is_ok()),
            }
        }
    }

    /// Walks the catalogue against the server's route table: every request or notification a
    /// server receives (sender client or either, in any revision) is routed by the server or
    /// left to the user on purpose, and every built-in route names a catalogue row that a
    /// server receives. A method added to the catalogue without a route, or a route removed,
    /// fails here.
    #[test]
    fn every_method_the_server_receives_is_routed_and_every_route_is_a_row() {
        let router = builtin_router(builtin_requests(), builtin_notifications());
        for spec in CATALOGUE.iter().filter(|s| s.sender != Sender::Server) {
            let routed = match spec.kind {
                MethodKind::Request => router.request(spec.name).is_some(),
                MethodKind::Notification => router.notification(spec.name).is_some(),
            };
            let left = LEFT_TO_USER.contains(&spec.name);
            assert!(
                routed != left,
                "{}: routed {routed}, left to the user {left}: exactly one must hold",
                spec.name
            );
        }
        for (name, _) in builtin_requests() {
            let spec = catalogue::request(name).unwrap_or_else(|| panic!("{name}: no row"));
            assert_ne!(spec.sender, Sender::Server, "{name} is not ours to receive");
        }
        for name in builtin_notifications() {
            let spec = catalogue::notification(name).unwrap_or_else(|| panic!("{name}: no row"));
            assert_ne!(spec.sender, Sender::Server, "{name} is not ours to receive");
        }
        for name in LEFT_TO_USER {
            assert!(catalogue::find(name).is_some(), "{name}: no row");
        }
    }
}
