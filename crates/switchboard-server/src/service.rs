//! The server's [`Service`] for one session: lifecycle gating, negotiation, capability gates and
//! dispatch to the primitives. Runs on the engine; never sees bytes.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use switchboard_jsonrpc::{BoxFuture, HandlerResult, Peer, RequestContext, Service, SessionConfig};
use switchboard_types::ProtocolVersion;
use switchboard_types::capabilities::ServerCapabilities;
use switchboard_types::completion::{CompleteRequestParams, CompleteResult, Reference};
use switchboard_types::jsonrpc::{empty_object, to_raw};
use switchboard_types::lifecycle::Implementation;
use switchboard_types::lifecycle::{InitializeRequestParams, InitializeResult};
use switchboard_types::logging::SetLevelRequestParams;
use switchboard_types::meta::PaginatedRequestParams;
use switchboard_types::prompts::{GetPromptRequestParams, ListPromptsResult};
use switchboard_types::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams,
    SubscribeRequestParams,
};
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, Tool};
use switchboard_types::{ErrorCode, ErrorObject, Feature, MessageKind, Notification, Request};

use switchboard_types::catalogue::{
    self, CallTool, CancelTask, Cancelled, Complete, Direction, Discover, GetPrompt, GetTask,
    GetTaskPayload, Initialize, Initialized, ListPrompts, ListResourceTemplates, ListResources,
    ListTasks, ListTools, Method, MethodSpec, Ping, Progress, ReadResource, Refusal, SetLevel,
    Subscribe, SubscriptionsListen, Unsubscribe,
};

use crate::announce::Audience;
use crate::completion::{CompletionQuery, CompletionRegistry, CompletionTarget};
use crate::context::{Context, resource_not_found};
use crate::era::Era;
use crate::gate;
use crate::lifecycle::Strictness;
use crate::lifecycle::{LifecycleEvent, LifecycleState};
use crate::pagination::Paginator;
use crate::policy::ToolPolicy;
use crate::prompt::PromptRegistry;
use crate::prompt::{self, PromptGet};
use crate::resource::ResourceRead;
use crate::resource::ResourceRegistry;
use crate::router::{Builtin, NotificationRoute, RequestRoute, Router};
use crate::session::{ServerSession, SessionState};
use crate::task::{self, TaskMethod, Tasks};
use crate::tool::ToolRegistry;
use crate::tool::{self, AllowList, ClientIdentity, RegisteredTool, ToolCall};
use switchboard_jsonrpc::router::invalid_params;
use switchboard_jsonrpc::throttle::shown;
use switchboard_types::error::{echo, echo_value};
use switchboard_types::tasks::CreateTaskResult;

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) versions: Vec<ProtocolVersion>,
    pub(crate) strictness: Strictness,
    pub(crate) era: Arc<dyn Era>,
    pub(crate) router: Router<ServerService>,
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) tools: RwLock<ToolRegistry>,
    pub(crate) resources: RwLock<ResourceRegistry>,
    pub(crate) prompts: RwLock<PromptRegistry>,
    pub(crate) completions: RwLock<CompletionRegistry>,
    pub(crate) policy: Option<ToolPolicy>,
    pub(crate) paginator: Paginator,
    /// The open sessions and listen streams: who hears of a change.
    pub(crate) audience: Arc<Audience>,
    pub(crate) max_sessions: usize,
    pub(crate) max_subscriptions: usize,
    pub(crate) max_subscription_bytes: usize,
    pub(crate) max_session_tools: usize,
    /// Bytes of `initialize` params a session accepts (`ServerBuilder::max_initialize_bytes`).
    pub(crate) max_initialize_bytes: usize,
    pub(crate) config: SessionConfig,
    /// The modern revisions served per request (2026-07-28).
    pub(crate) modern_versions: Vec<ProtocolVersion>,
    /// Seals the `requestState` of multi round-trip requests.
    pub(crate) sealer: crate::modern::seal::Sealer,
    /// The caching hints put on cacheable modern results.
    pub(crate) cache: switchboard_types::modern::CacheHints,
    /// The envelope of the last modern request, by its `_meta` text.
    pub(crate) envelopes: crate::modern::params::EnvelopeCache,
    /// What the server adds to its modern results (computed once).
    pub(crate) results: crate::modern::finish::ResultMembers,
    /// The modern tasks whose work runs here (the tasks extension).
    pub(crate) modern_tasks: crate::modern::tasks::ModernTasks,
    /// The scopes requests need when a transport authorizes them (`ServerBuilder::require_scopes`
    /// and the per-primitive declarations), for that transport to enforce.
    pub(crate) scopes: switchboard_auth::resource::ScopePolicy,
    /// The client identity the last session declared, shared by every session that declares
    /// the same (see [`ServerInner::share_client`]).
    pub(crate) last_client: Mutex<Option<Arc<ClientIdentity>>>,
}

impl ServerInner {
    /// The identity a session keeps for its client: the one the previous session kept when the
    /// client declared the same (name, version, capabilities, everything), so that many
    /// sessions of one kind of client share one copy, about a kilobyte each would hold idle.
    pub(crate) fn share_client(&self, client: ClientIdentity) -> Arc<ClientIdentity> {
        let Ok(mut last) = self.last_client.lock() else {
            return Arc::new(client);
        };
        if let Some(known) = last.as_ref()
            && known.info == client.info
            && known.capabilities == client.capabilities
        {
            return known.clone();
        }
        let shared = Arc::new(client);
        *last = Some(shared.clone());
        shared
    }
}

pub(crate) struct ServerService {
    pub(crate) server: Arc<ServerInner>,
    pub(crate) state: Arc<SessionState>,
    /// Set for a request served by the modern front door.
    pub(crate) modern: Option<Arc<crate::modern::ModernCall>>,
}

fn ready(r: HandlerResult) -> BoxFuture<HandlerResult> {
    Box::pin(std::future::ready(r))
}

fn ok<T: Serialize>(value: &T) -> HandlerResult {
    to_raw(value).map_err(|e| ErrorObject::internal(format!("result serialization failed: {e}")))
}

fn poisoned() -> ErrorObject {
    ErrorObject::internal("server state poisoned")
}

/// -32602 (`reason`, with the limit) when the request's params are longer than `limit` bytes
/// of JSON: for the requests whose params a session keeps while it lives (`initialize`, a
/// `subscriptions/listen` filter).
pub(crate) fn params_within(req: &Request, limit: usize, reason: &str) -> Result<(), ErrorObject> {
    let bytes = req.params.as_ref().map_or(0, |p| p.get().len());
    if bytes <= limit {
        return Ok(());
    }
    Err(ErrorObject::new(
        ErrorCode::INVALID_PARAMS,
        format!(
            "{} params of {bytes} bytes: at most {limit} are accepted",
            req.method
        ),
    )
    .with_data(serde_json::json!({"reason": reason, "limit": limit})))
}

/// Parses required params; a failure is -32602 naming what is wrong.
pub(crate) fn parse<T: DeserializeOwned>(req: &Request) -> Result<T, ErrorObject> {
    let text = req.params.as_ref().map_or("null", |p| p.get());
    serde_json::from_str(text).map_err(|e| invalid_params(&req.method, &e))
}

/// Parses params that may be absent altogether.
fn parse_optional<T: DeserializeOwned + Default>(req: &Request) -> Result<T, ErrorObject> {
    match &req.params {
        None => Ok(T::default()),
        Some(p) => serde_json::from_str(p.get()).map_err(|e| invalid_params(&req.method, &e)),
    }
}

impl ServerService {
    pub(crate) fn new(server: Arc<ServerInner>, state: Arc<SessionState>) -> Self {
        ServerService {
            server,
            state,
            modern: None,
        }
    }

    /// This service serving one modern request.
    pub(crate) fn with_modern(&self, call: Arc<crate::modern::ModernCall>) -> Self {
        ServerService {
            server: self.server.clone(),
            state: self.state.clone(),
            modern: Some(call),
        }
    }

    /// The revision the request being served speaks.
    fn version(&self) -> Option<ProtocolVersion> {
        match &self.modern {
            Some(_) => Some(ProtocolVersion::V2026_07_28),
            None => self.state.version(),
        }
    }

    /// Whether the client of the request being served may see and call tool `name`.
    fn allows(&self, name: &str) -> bool {
        match &self.modern {
            Some(call) => call.allow.allows(name),
            None => self.state.allows(name),
        }
    }

    pub(crate) fn context(&self, cx: RequestContext) -> Context {
        let session = ServerSession {
            state: self.state.clone(),
            peer: cx.peer().unrelated(),
            max_session_tools: self.server.max_session_tools,
        };
        Context {
            request: cx,
            session,
            task: None,
            modern: self.modern.clone(),
            audience: self.server.audience.clone(),
        }
    }

    /// `initialize`: negotiate, move the lifecycle, decide the allow-list. Runs synchronously in
    /// frame order, so a request right behind it sees the new state.
    fn initialize(&self, req: &Request) -> HandlerResult {
        params_within(
            req,
            self.server.max_initialize_bytes,
            "initialize_too_large",
        )?;
        let params: InitializeRequestParams = parse(req)?;
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
        self.state.decide_era(crate::modern::ConnEra::Legacy);
        if let Some(p) = &req.params {
            self.state.handshake_completed(p.get());
        }
        if version.as_str() != params.protocol_version {
            tracing::info!(offered = %shown(&params.protocol_version), chosen = %version, "protocol version counter-offer");
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
        req: &Request,
    ) -> Result<crate::pagination::Page<T>, ErrorObject> {
        let params: PaginatedRequestParams = parse_optional(req)?;
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

    fn list_tools(&self, req: &Request) -> HandlerResult {
        let page = self.page(ListTools::NAME, &self.visible_tools()?, req)?;
        let legacy = self.modern.is_none();
        let tools =
            page.items
                .iter()
                .map(|t| {
                    // 2025 revisions allow only an object `outputSchema`; a tool whose schema is
                    // another is listed without it (its results carry the value as text).
                    if legacy
                        && t.tool.output_schema.as_ref().is_some_and(|s| {
                            s.get("type").and_then(|v| v.as_str()) != Some("object")
                        })
                    {
                        let mut owned = t.tool.clone();
                        owned.output_schema = None;
                        Cow::Owned(owned)
                    } else {
                        Cow::Borrowed(&t.tool)
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

    fn call_tool(&self, req: &Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: CallToolRequestParams = match parse(req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
        let tool = match self.find_tool(&params.name) {
            Ok(Some(t)) => t,
            Ok(None) => return ready(Err(tool::unknown_tool(&params.name))),
            Err(e) => return ready(Err(e)),
        };
        if !self.allows(&params.name) {
            return ready(Err(tool::tool_not_permitted(&params.name)));
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
            if let Err(e) = crate::modern::tasks::plan(&self.server, call, support, &params.name) {
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
        let legacy = self.modern.is_none();
        Box::pin(async move {
            let result = run_checked(&tool, call).await?;
            ok(&if legacy { result.for_legacy() } else { result })
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
    fn task_request(
        &self,
        req: Request,
        cx: RequestContext,
        method: TaskMethod,
    ) -> BoxFuture<HandlerResult> {
        let page = self.server.paginator.page_size();
        task::request(
            self.server.tasks.clone(),
            self.state.task_owner(),
            page,
            req,
            cx,
            method,
        )
    }

    fn list_resources(&self, req: &Request) -> HandlerResult {
        let registry = self.server.resources.read().map_err(|_| poisoned())?;
        let page = self.page(ListResources::NAME, registry.resources(), req)?;
        ok(&ListResourcesResult {
            resources: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn list_templates(&self, req: &Request) -> HandlerResult {
        let templates = self
            .server
            .resources
            .read()
            .map_err(|_| poisoned())?
            .templates();
        let page = self.page(ListResourceTemplates::NAME, &templates, req)?;
        ok(&ListResourceTemplatesResult {
            resource_templates: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn read_resource(&self, req: &Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: ReadResourceRequestParams = match parse(req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
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

    fn subscribe(&self, req: &Request, on: bool) -> HandlerResult {
        let params: SubscribeRequestParams = parse(req)?;
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

    fn list_prompts(&self, req: &Request) -> HandlerResult {
        let prompts = self.server.prompts.read().map_err(|_| poisoned())?.list();
        let page = self.page(ListPrompts::NAME, &prompts, req)?;
        ok(&ListPromptsResult {
            prompts: page.items,
            next_cursor: page.next_cursor,
            ..Default::default()
        })
    }

    fn get_prompt(&self, req: &Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        let params: GetPromptRequestParams = match parse(req) {
            Ok(p) => p,
            Err(e) => return ready(Err(e)),
        };
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

    fn set_level(&self, req: &Request) -> HandlerResult {
        let params: SetLevelRequestParams = parse(req)?;
        self.state.data.lock().map_err(|_| poisoned())?.log_level = Some(params.level);
        Ok(empty_object())
    }

    fn complete(&self, req: &Request) -> HandlerResult {
        let params: CompleteRequestParams = parse(req)?;
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

/// The requests the server serves itself, one route per catalogue method.
pub(crate) fn builtin_requests() -> [(&'static str, Builtin<ServerService>); 19] {
    [
        (Discover::NAME, |s, _, _| ready(s.discover())),
        (SubscriptionsListen::NAME, |s, r, cx| s.listen(r, cx)),
        (Initialize::NAME, |s, r, _| ready(s.initialize(&r))),
        (Ping::NAME, |_, _, _| ready(Ok(empty_object()))),
        (ListTools::NAME, |s, r, _| ready(s.list_tools(&r))),
        (CallTool::NAME, |s, r, cx| s.call_tool(&r, cx)),
        (ListResources::NAME, |s, r, _| ready(s.list_resources(&r))),
        (ListResourceTemplates::NAME, |s, r, _| {
            ready(s.list_templates(&r))
        }),
        (ReadResource::NAME, |s, r, cx| s.read_resource(&r, cx)),
        (Subscribe::NAME, |s, r, _| ready(s.subscribe(&r, true))),
        (Unsubscribe::NAME, |s, r, _| ready(s.subscribe(&r, false))),
        (ListPrompts::NAME, |s, r, _| ready(s.list_prompts(&r))),
        (GetPrompt::NAME, |s, r, cx| s.get_prompt(&r, cx)),
        (SetLevel::NAME, |s, r, _| ready(s.set_level(&r))),
        (Complete::NAME, |s, r, _| ready(s.complete(&r))),
        (GetTask::NAME, |s, r, cx| {
            s.task_request(r, cx, TaskMethod::Get)
        }),
        (GetTaskPayload::NAME, |s, r, cx| {
            s.task_request(r, cx, TaskMethod::Result)
        }),
        (ListTasks::NAME, |s, r, cx| {
            s.task_request(r, cx, TaskMethod::List)
        }),
        (CancelTask::NAME, |s, r, cx| {
            s.task_request(r, cx, TaskMethod::Cancel)
        }),
    ]
}

/// The notifications the server (its lifecycle) or the engine takes itself.
pub(crate) fn builtin_notifications() -> [&'static str; 3] {
    [Initialized::NAME, Cancelled::NAME, Progress::NAME]
}

impl ServerService {
    /// The inbound gate of a routed catalogue method: it must exist in the negotiated revision
    /// and the capability it needs must be one this server declared (-32601 otherwise).
    pub(crate) fn gate_capability(
        &self,
        spec: &MethodSpec,
        method: &str,
        version: Option<ProtocolVersion>,
    ) -> Result<(), ErrorObject> {
        if let Some(v) = version
            && !spec.exists_in(v)
        {
            let method = echo(method);
            return Err(ErrorObject::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method} (not in protocol revision {v})"),
            )
            .with_data(serde_json::json!({"reason": "not_in_revision", "method": method})));
        }
        match spec.check(
            Direction::ClientToServer,
            None,
            Some(&self.server.capabilities),
            None,
        ) {
            Ok(()) => Ok(()),
            Err(Refusal::Undeclared { capability, .. }) => {
                Err(gate::undeclared(method, capability.name()))
            }
            Err(_) => Err(ErrorObject::method_not_found(method)),
        }
    }

    fn handle(&self, peer: &Peer) -> ServerSession {
        ServerSession {
            state: self.state.clone(),
            peer: peer.unrelated(),
            max_session_tools: self.server.max_session_tools,
        }
    }
}

impl Service for ServerService {
    fn call(&self, req: Request, cx: RequestContext) -> BoxFuture<HandlerResult> {
        use crate::modern::ConnEra;
        // The era: what opened the connection, or this request when nothing has yet
        // (`[D26-120]`: only the protocol version key in `_meta` claims the modern era).
        let claims = || {
            req.params
                .as_ref()
                .is_some_and(|p| switchboard_types::modern::RequestEnvelope::claimed_by(p.get()))
        };
        match self.state.era() {
            ConnEra::Modern => return self.modern_call(req, cx),
            ConnEra::Undecided
                if !self.server.modern_versions.is_empty()
                    && claims()
                    && self.state.decide_era(ConnEra::Modern) == ConnEra::Modern =>
            {
                return self.modern_call(req, cx);
            }
            // A method only the modern era has, without the envelope that would open it.
            ConnEra::Undecided
                if catalogue::request(&req.method)
                    .is_some_and(|s| s.since >= ProtocolVersion::V2026_07_28) =>
            {
                return ready(Err(
                    switchboard_types::modern::EnvelopeError::NoMeta.to_error_object()
                ));
            }
            ConnEra::Legacy if claims() => {
                return ready(Err(ErrorObject::invalid_request(
                    "a request carrying a 2026-07-28 envelope on a session opened by initialize",
                    "era_mismatch",
                )));
            }
            _ => {}
        }
        // One lock for both: this runs for every request.
        let (state, version) = self.state.lifecycle_and_version();
        let entry = self.server.router.request(&req.method);
        // A catalogue request the server does not route still counts as known to the lifecycle
        // gate: before the handshake it is -32600, like every other MCP request.
        let known = entry.is_some() || catalogue::request(&req.method).is_some();
        if let Err(e) =
            self.server
                .era
                .gate_request(state, &req.method, known, self.server.strictness)
        {
            return ready(Err(e));
        }
        let Some(entry) = entry else {
            return ready(Err(match catalogue::request(&req.method) {
                Some(spec) => match self.gate_capability(spec, &req.method, version) {
                    Err(e) => e,
                    Ok(()) => ErrorObject::method_not_found(&req.method),
                },
                None => ErrorObject::method_not_found(&req.method),
            }));
        };
        if let Some(spec) = entry.spec
            && let Err(e) = self.gate_capability(spec, &req.method, version)
        {
            return ready(Err(e));
        }
        match &entry.handler {
            RequestRoute::Builtin(f) => f(self, req, cx),
            RequestRoute::User(h) => h(req.params, self.context(cx)),
        }
    }

    fn notify(&self, n: Notification, peer: &Peer) {
        let method = n.method.as_str();
        if method == Initialized::NAME {
            let Ok(mut d) = self.state.data.lock() else {
                return;
            };
            match d.lifecycle.apply(LifecycleEvent::Initialized) {
                Ok(next) => d.lifecycle = next,
                Err(e) => {
                    if peer.log_throttle().admit("server") {
                        tracing::warn!(session = self.state.id, error = %e, "notifications/initialized out of place; ignored")
                    }
                }
            }
            return;
        }
        let route = self.server.router.notification(method).map(|e| &e.handler);
        if let Some(NotificationRoute::Builtin) = route {
            return;
        }
        if self.state.lifecycle() != LifecycleState::Ready {
            if peer.log_throttle().admit("server") {
                tracing::warn!(
                    session = self.state.id,
                    method = %shown(method),
                    "notification before the handshake completed; ignored"
                );
            }
            return;
        }
        match route {
            Some(NotificationRoute::User(h)) => h(n.params.as_ref(), &self.handle(peer)),
            _ => tracing::debug!(
                session = self.state.id,
                method = %shown(method),
                "notification without a handler ignored"
            ),
        }
    }

    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        if self.state.era() == crate::modern::ConnEra::Modern {
            // 2026-07-28: no server requests (`[D26-1]`); notifications of this revision only.
            // The server's own capabilities gate what it sends (`[D26-86]`: logs need `logging`).
            let allowed = kind == MessageKind::Notification
                && catalogue::notification(method).is_none_or(|s| {
                    s.check(
                        Direction::ServerToClient,
                        Some(ProtocolVersion::V2026_07_28),
                        Some(&self.server.capabilities),
                        None,
                    )
                    .is_ok()
                });
            return if allowed {
                Ok(())
            } else {
                Err(ErrorObject::invalid_request(
                    format!("{method} may not be sent in protocol revision 2026-07-28"),
                    "not_in_revision",
                ))
            };
        }
        let (state, version, client) = {
            let d = self.state.data.lock().map_err(|_| poisoned())?;
            (d.lifecycle, d.version, d.client.clone())
        };
        self.server.era.gate_outbound(state, kind, method)?;
        match (version, client) {
            (Some(v), Some(c)) => {
                gate::server_may_send(method, &self.server.capabilities, &c.capabilities, v)
            }
            _ => Ok(()),
        }
    }

    fn batch_allowed(&self) -> bool {
        self.server
            .era
            .batch_allowed(self.state.lifecycle(), self.state.version())
    }

    fn cancellable(&self, method: &str) -> bool {
        method != Initialize::NAME
    }

    fn allowed_in_batch(&self, method: &str) -> bool {
        method != Initialize::NAME
    }

    fn closed(&self) {
        self.server.tasks.session_closed(self.state.id);
        if let Ok(mut d) = self.state.data.lock() {
            d.lifecycle = LifecycleState::Closed;
            d.subscriptions.clear();
            d.subscription_bytes = 0;
        }
        if let Ok(mut sessions) = self.server.audience.sessions.lock() {
            sessions.remove(&self.state.id);
        }
    }
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
