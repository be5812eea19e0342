//! The method catalogue: one typed description per MCP method (SPEC-NOTES §1.1, §1.2).
//!
//! Applies to both sides. Each entry says what a method is called, whether it is a request or a
//! notification, which side sends it, the primitive it belongs to, the capability that gates it
//! (and whose declaration counts), the revisions it exists in, and, for requests, how it names
//! its target. Each method also has a marker type ([`CallTool`], [`ToolListChanged`], ...)
//! implementing [`RequestMethod`] or [`NotificationMethod`], which ties the name to its params
//! and result types.
//!
//! Everything that depends on a method's identity is derived from here: the capability gates in
//! both directions ([`MethodSpec::check`]), the inspector's primitive and capability columns, the
//! routers' built-in tables and `switchboard call`'s argument mapping. A method that exists in no
//! entry is an extension method: it has no gate and no revision bounds.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::completion::{CompleteRequestParams, CompleteResult};
use crate::elicitation::{
    ElicitRequestParams, ElicitResult, ElicitationCompleteNotificationParams,
};
use crate::lifecycle::{
    CancelledNotificationParams, InitializeRequestParams, InitializeResult,
    ProgressNotificationParams,
};
use crate::logging::{LoggingMessageNotificationParams, SetLevelRequestParams};
use crate::meta::{EmptyResult, NotificationParams, PaginatedRequestParams, RequestParams};
use crate::methods as m;
use crate::modern::{
    DiscoverResult, SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
};
use crate::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use crate::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, ResourceRequestParams,
    ResourceUpdatedNotificationParams,
};
use crate::roots::ListRootsResult;
use crate::sampling::{CreateMessageRequestParams, CreateMessageResult};
use crate::tasks::{
    CancelTaskResult, GetTaskPayloadResult, GetTaskRequestParams, GetTaskResult, ListTasksResult,
    TaskStatusNotificationParams,
};
use crate::tools::{CallToolRequestParams, CallToolResult, ListToolsResult};
use crate::version::ProtocolVersion;

/// Which way a message travels on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Direction {
    /// Client → server.
    #[serde(rename = "c2s")]
    ClientToServer,
    /// Server → client.
    #[serde(rename = "s2c")]
    ServerToClient,
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }

    /// `c2s` or `s2c`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "c2s",
            Direction::ServerToClient => "s2c",
        }
    }

    /// The side that sends in this direction.
    pub fn sender(self) -> Side {
        match self {
            Direction::ClientToServer => Side::Client,
            Direction::ServerToClient => Side::Server,
        }
    }

    /// The side that receives in this direction.
    pub fn receiver(self) -> Side {
        self.sender().other()
    }
}

/// One of the two roles of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The client (the host's connector).
    Client,
    /// The server.
    Server,
}

impl Side {
    /// The other side.
    pub fn other(self) -> Self {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// `client` or `server`.
    pub fn as_str(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }

    /// The direction in which this side sends.
    pub fn sending(self) -> Direction {
        match self {
            Side::Client => Direction::ClientToServer,
            Side::Server => Direction::ServerToClient,
        }
    }
}

/// Whether a method is a request (answered) or a notification (never answered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodKind {
    /// A request: has an `id`, gets exactly one response.
    Request,
    /// A notification: no `id` key, no response.
    Notification,
}

/// Which side may send a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sender {
    /// Client → server only.
    Client,
    /// Server → client only.
    Server,
    /// Either side (`ping`, cancellation, progress, tasks).
    Either,
}

impl Sender {
    /// Whether a message of this method may travel in `direction`.
    pub fn sends(self, direction: Direction) -> bool {
        match self {
            Sender::Either => true,
            Sender::Client => direction == Direction::ClientToServer,
            Sender::Server => direction == Direction::ServerToClient,
        }
    }
}

/// The part of the protocol a method belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Primitive {
    /// `initialize`, `notifications/initialized`.
    Lifecycle,
    /// `ping`, cancellation, progress.
    Utility,
    /// Tools (server).
    Tools,
    /// Resources (server).
    Resources,
    /// Prompts (server).
    Prompts,
    /// Logging (server).
    Logging,
    /// Argument completion (server).
    Completion,
    /// Sampling (client).
    Sampling,
    /// Roots (client).
    Roots,
    /// Elicitation (client).
    Elicitation,
    /// Tasks (either side, 2025-11-25; the tasks extension from 2026-07-28).
    Tasks,
    /// Skills (server, the skills extension `io.modelcontextprotocol/skills`).
    Skills,
}

impl Primitive {
    /// The lowercase name used in traces (`tools`, `utility`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Primitive::Lifecycle => "lifecycle",
            Primitive::Utility => "utility",
            Primitive::Tools => "tools",
            Primitive::Resources => "resources",
            Primitive::Prompts => "prompts",
            Primitive::Logging => "logging",
            Primitive::Completion => "completion",
            Primitive::Sampling => "sampling",
            Primitive::Roots => "roots",
            Primitive::Elicitation => "elicitation",
            Primitive::Tasks => "tasks",
            Primitive::Skills => "skills",
        }
    }
}

/// A declared capability (or sub-capability) that can gate a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// Server `tools`.
    Tools,
    /// Server `tools.listChanged`.
    ToolsListChanged,
    /// Server `resources`.
    Resources,
    /// Server `resources.subscribe`.
    ResourcesSubscribe,
    /// Server `resources.listChanged`.
    ResourcesListChanged,
    /// Server `prompts`.
    Prompts,
    /// Server `prompts.listChanged`.
    PromptsListChanged,
    /// Server `logging`.
    Logging,
    /// Server `completions` (2025-03-26+; 2024-11-05 served completion without a capability).
    Completions,
    /// Client `sampling`.
    Sampling,
    /// Client `roots`.
    Roots,
    /// Client `roots.listChanged`.
    RootsListChanged,
    /// Client `elicitation` (2025-06-18+).
    Elicitation,
    /// Client `elicitation.url` (2025-11-25).
    ElicitationUrl,
    /// `tasks`, on either side (2025-11-25).
    Tasks,
    /// `tasks.list`.
    TasksList,
    /// `tasks.cancel`.
    TasksCancel,
}

impl Capability {
    /// The dotted path inside a capabilities object, e.g. `tools.listChanged`.
    pub fn path(self) -> &'static str {
        match self {
            Capability::Tools => "tools",
            Capability::ToolsListChanged => "tools.listChanged",
            Capability::Resources => "resources",
            Capability::ResourcesSubscribe => "resources.subscribe",
            Capability::ResourcesListChanged => "resources.listChanged",
            Capability::Prompts => "prompts",
            Capability::PromptsListChanged => "prompts.listChanged",
            Capability::Logging => "logging",
            Capability::Completions => "completions",
            Capability::Sampling => "sampling",
            Capability::Roots => "roots",
            Capability::RootsListChanged => "roots.listChanged",
            Capability::Elicitation => "elicitation",
            Capability::ElicitationUrl => "elicitation.url",
            Capability::Tasks => "tasks",
            Capability::TasksList => "tasks.list",
            Capability::TasksCancel => "tasks.cancel",
        }
    }

    /// The top-level capability name, e.g. `tools` for `tools.listChanged`.
    pub fn name(self) -> &'static str {
        let path = self.path();
        path.split('.').next().unwrap_or(path)
    }

    /// The first revision that defines this capability. Before it the gate does not apply.
    pub fn since(self) -> ProtocolVersion {
        match self {
            Capability::Completions => ProtocolVersion::V2025_03_26,
            Capability::Elicitation => ProtocolVersion::V2025_06_18,
            Capability::ElicitationUrl
            | Capability::Tasks
            | Capability::TasksList
            | Capability::TasksCancel => ProtocolVersion::V2025_11_25,
            _ => ProtocolVersion::V2024_11_05,
        }
    }
}

impl ServerCapabilities {
    /// Whether these server capabilities declare `capability` (false for a client-only one).
    pub fn declares(&self, capability: Capability) -> bool {
        let flag = |b: Option<bool>| b == Some(true);
        match capability {
            Capability::Tools => self.tools.is_some(),
            Capability::ToolsListChanged => flag(self.tools.as_ref().and_then(|t| t.list_changed)),
            Capability::Resources => self.resources.is_some(),
            Capability::ResourcesSubscribe => self.supports_resource_subscribe(),
            Capability::ResourcesListChanged => {
                flag(self.resources.as_ref().and_then(|r| r.list_changed))
            }
            Capability::Prompts => self.prompts.is_some(),
            Capability::PromptsListChanged => {
                flag(self.prompts.as_ref().and_then(|p| p.list_changed))
            }
            Capability::Logging => self.logging.is_some(),
            Capability::Completions => self.completions.is_some(),
            Capability::Tasks => self.tasks.is_some(),
            Capability::TasksList => self.tasks.as_ref().is_some_and(|t| t.list.is_some()),
            Capability::TasksCancel => self.tasks.as_ref().is_some_and(|t| t.cancel.is_some()),
            Capability::Sampling
            | Capability::Roots
            | Capability::RootsListChanged
            | Capability::Elicitation
            | Capability::ElicitationUrl => false,
        }
    }
}

impl ClientCapabilities {
    /// Whether these client capabilities declare `capability` (false for a server-only one).
    pub fn declares(&self, capability: Capability) -> bool {
        match capability {
            Capability::Sampling => self.sampling.is_some(),
            Capability::Roots => self.roots.is_some(),
            Capability::RootsListChanged => self
                .roots
                .as_ref()
                .and_then(|r| r.list_changed)
                .unwrap_or(false),
            Capability::Elicitation => self.elicitation.is_some(),
            Capability::ElicitationUrl => self.supports_url_elicitation(),
            Capability::Tasks => self.tasks.is_some(),
            Capability::TasksList => self.tasks.as_ref().is_some_and(|t| t.list.is_some()),
            Capability::TasksCancel => self.tasks.as_ref().is_some_and(|t| t.cancel.is_some()),
            Capability::Tools
            | Capability::ToolsListChanged
            | Capability::Resources
            | Capability::ResourcesSubscribe
            | Capability::ResourcesListChanged
            | Capability::Prompts
            | Capability::PromptsListChanged
            | Capability::Logging
            | Capability::Completions => false,
        }
    }
}

/// Whose declaration of a capability opens a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Whose {
    /// The receiver's: a request the receiver said it serves (`tools/call` needs the server's
    /// `tools`; `sampling/createMessage` the client's `sampling`).
    Receiver,
    /// The sender's: a notification the sender said it emits (`notifications/tools/list_changed`
    /// needs the server's `tools.listChanged`).
    Sender,
    /// Either side's (`notifications/tasks/status`).
    Either,
}

/// The capability that gates a method, and whose declaration counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Gate {
    /// The capability.
    pub capability: Capability,
    /// Whose declaration counts.
    pub whose: Whose,
}

/// How a request names the thing it acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetKind {
    /// `params.name` (a tool or a prompt), with `params.arguments` of the given kind.
    Name(Arguments),
    /// `params.uri` (a resource).
    Uri,
}

/// The shape of a named target's `arguments` map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arguments {
    /// Any JSON values (tool arguments).
    Json,
    /// Strings only (prompt arguments).
    Strings,
}

/// The description of one MCP method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct MethodSpec {
    /// The method name on the wire.
    pub name: &'static str,
    /// Request or notification.
    pub kind: MethodKind,
    /// Which side sends it.
    pub sender: Sender,
    /// The part of the protocol it belongs to.
    pub primitive: Primitive,
    /// The capability that must be declared for it to be sent, if any.
    pub gate: Option<Gate>,
    /// The first revision that has it.
    pub since: ProtocolVersion,
    /// The first revision that no longer has it, if any.
    pub until: Option<ProtocolVersion>,
    /// How a request names its target, if it has one.
    pub target: Option<TargetKind>,
    /// For a paginated list request: the result member holding the items.
    pub list_member: Option<&'static str>,
    /// For a request: the name of its result type, which is also the name of its definition in
    /// the official schema (`ListToolsResult`, `EmptyResult`).
    pub result_type: Option<&'static str>,
    /// For a request: whether its complete results carry caching hints (`ttlMs`, `cacheScope`)
    /// in 2026-07-28 (`[D26-90]`). Never on an input-required result (`[D26-92]`).
    pub cacheable: bool,
    /// For a request: whether a 2026-07-28 server may answer it with an input-required result
    /// (`[D26-34]`: `tools/call`, `prompts/get`, `resources/read` only).
    pub may_require_input: bool,
    /// For a method of an extension rather than of the core: the extension's identifier
    /// (`io.modelcontextprotocol/skills`). Only the rows of [`EXTENSIONS`] have one.
    pub extension: Option<&'static str>,
}

/// Why a method may not be sent (see [`MethodSpec::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The negotiated revision does not have the method.
    NotInRevision(ProtocolVersion),
    /// It does not travel in this direction.
    WrongDirection(Direction),
    /// A capability is missing: which, and on which side (`None`: on neither side).
    Undeclared {
        /// The missing capability.
        capability: Capability,
        /// Whose declaration was missing; `None` when either side's would have done.
        side: Option<Side>,
    },
}

impl Refusal {
    /// A short human text, e.g. `client capability sampling`.
    pub fn describe(&self) -> String {
        match self {
            Refusal::NotInRevision(v) => format!("not in protocol revision {v}"),
            Refusal::WrongDirection(d) => format!("not sent {}", d.as_str()),
            Refusal::Undeclared {
                capability,
                side: Some(side),
            } => format!("{} capability {}", side.as_str(), capability.path()),
            Refusal::Undeclared {
                capability,
                side: None,
            } => format!("capability {}", capability.path()),
        }
    }
}

impl MethodSpec {
    /// Whether the method exists in revision `version`.
    pub fn exists_in(&self, version: ProtocolVersion) -> bool {
        version >= self.since && self.until.is_none_or(|u| version < u)
    }

    /// The params member a 2026-07-28 request mirrors into the `Mcp-Name` header: its
    /// target's, `name` for a [`TargetKind::Name`] (`tools/call`, `prompts/get`), `uri` for a
    /// [`TargetKind::Uri`] (`resources/read`). `None` for a method without a target or without
    /// 2026-07-28 (`resources/subscribe`).
    pub fn name_field(&self) -> Option<&'static str> {
        if !self.exists_in(ProtocolVersion::V2026_07_28) {
            return None;
        }
        match self.target? {
            TargetKind::Name(_) => Some("name"),
            TargetKind::Uri => Some("uri"),
        }
    }

    /// Whether this is a request.
    pub fn is_request(&self) -> bool {
        self.kind == MethodKind::Request
    }

    /// The side whose declaration gates the method when it travels in `direction`, with the
    /// capability; `None` for an ungated method or one gated by either side.
    pub fn gate_side(&self, direction: Direction) -> Option<(Side, Capability)> {
        let gate = self.gate?;
        match gate.whose {
            Whose::Receiver => Some((direction.receiver(), gate.capability)),
            Whose::Sender => Some((direction.sender(), gate.capability)),
            Whose::Either => None,
        }
    }

    /// Decides whether the method may travel in `direction` under `version`, given both sides'
    /// declared capabilities (`None` for a side whose capabilities are not known: that side's
    /// gates are not checked).
    ///
    /// # Errors
    /// The first reason it may not: wrong direction, not in the revision, or a capability that
    /// was not declared. A capability newer than `version` does not gate (2024-11-05 served
    /// `completion/complete` without one).
    pub fn check(
        &self,
        direction: Direction,
        version: Option<ProtocolVersion>,
        server: Option<&ServerCapabilities>,
        client: Option<&ClientCapabilities>,
    ) -> Result<(), Refusal> {
        if !self.sender.sends(direction) {
            return Err(Refusal::WrongDirection(direction));
        }
        if let Some(v) = version
            && !self.exists_in(v)
        {
            return Err(Refusal::NotInRevision(v));
        }
        let Some(gate) = self.gate else {
            return Ok(());
        };
        if version.is_some_and(|v| v < gate.capability.since()) {
            return Ok(());
        }
        let declared_by = |side: Side| -> Option<bool> {
            match side {
                Side::Server => server.map(|c| c.declares(gate.capability)),
                Side::Client => client.map(|c| c.declares(gate.capability)),
            }
        };
        let (ok, side) = match gate.whose {
            Whose::Either => {
                let s = declared_by(Side::Server);
                let c = declared_by(Side::Client);
                if s.is_none() && c.is_none() {
                    return Ok(());
                }
                (s == Some(true) || c == Some(true), None)
            }
            _ => {
                let side = match gate.whose {
                    Whose::Receiver => direction.receiver(),
                    _ => direction.sender(),
                };
                (declared_by(side) != Some(false), Some(side))
            }
        };
        if ok {
            Ok(())
        } else {
            Err(Refusal::Undeclared {
                capability: gate.capability,
                side,
            })
        }
    }
}

/// A method's marker type: its name and its catalogue entry.
///
/// Extension methods implement this (and [`RequestMethod`] or [`NotificationMethod`]) on a type
/// of their own; their [`Method::SPEC`] is `None`.
pub trait Method: Send + Sync + 'static {
    /// The method name on the wire.
    const NAME: &'static str;
    /// The catalogue entry, for MCP methods.
    const SPEC: Option<&'static MethodSpec> = None;
}

/// A request method: the types of its params and result.
pub trait RequestMethod: Method {
    /// The params (absent params are read as `{}`).
    type Params: Serialize + DeserializeOwned + Send + 'static;
    /// The result.
    type Result: Serialize + DeserializeOwned + Send + 'static;
}

/// A notification method: the type of its params.
pub trait NotificationMethod: Method {
    /// The params (absent params are read as `{}`).
    type Params: Serialize + DeserializeOwned + Send + 'static;
}

/// Something done for each catalogue method with its marker type ([`visit_all`], [`visit`]).
pub trait MethodVisitor {
    /// One request method.
    fn request<M: RequestMethod>(&mut self);
    /// One notification method.
    fn notification<M: NotificationMethod>(&mut self);
}

const fn spec(
    name: &'static str,
    kind: MethodKind,
    sender: Sender,
    primitive: Primitive,
    gate: Option<Gate>,
) -> MethodSpec {
    MethodSpec {
        name,
        kind,
        sender,
        primitive,
        gate,
        since: ProtocolVersion::V2024_11_05,
        until: None,
        target: None,
        list_member: None,
        result_type: None,
        cacheable: false,
        may_require_input: false,
        extension: None,
    }
}

const fn by(capability: Capability, whose: Whose) -> Option<Gate> {
    Some(Gate { capability, whose })
}

impl MethodSpec {
    const fn since(mut self, v: ProtocolVersion) -> Self {
        self.since = v;
        self
    }
    const fn until(mut self, v: ProtocolVersion) -> Self {
        self.until = Some(v);
        self
    }
    const fn target(mut self, t: TargetKind) -> Self {
        self.target = Some(t);
        self
    }
    const fn list(mut self, member: &'static str) -> Self {
        self.list_member = Some(member);
        self
    }
    const fn result(mut self, name: &'static str) -> Self {
        self.result_type = Some(name);
        self
    }
    const fn cacheable(mut self) -> Self {
        self.cacheable = true;
        self
    }
    const fn may_ask(mut self) -> Self {
        self.may_require_input = true;
        self
    }
    const fn of(mut self, extension: &'static str) -> Self {
        self.extension = Some(extension);
        self
    }
}

macro_rules! methods {
    ($(
        $(#[$doc:meta])*
        $kind:ident $marker:ident = $spec:expr, params $params:ty $(, result $result:ty)?;
    )*) => {
        /// Every core method of 2024-11-05 to 2026-07-28, requests first, in schema order.
        pub static CATALOGUE: &[MethodSpec] = &[$($marker::DEFINITION),*];

        /// Calls `visitor` once for every catalogue method with its marker type, in the order of
        /// [`CATALOGUE`]: whatever must hold for each method's types (a route, a fuzz target, a
        /// round trip) reads them from here, so that a new row reaches it without an edit.
        pub fn visit_all<V: MethodVisitor>(visitor: &mut V) {
            $(methods!(@visit $kind $marker, visitor);)*
        }

        /// Calls `visitor` with the marker type of the catalogue method named `name`; false when
        /// no row has that name (an extension method).
        pub fn visit<V: MethodVisitor>(name: &str, visitor: &mut V) -> bool {
            $(
                if name == $marker::DEFINITION.name {
                    methods!(@visit $kind $marker, visitor);
                    return true;
                }
            )*
            false
        }

        $(
            $(#[$doc])*
            #[derive(Debug, Clone, Copy, Default)]
            pub struct $marker;

            impl $marker {
                const DEFINITION: MethodSpec = methods!(@def $spec $(, $result)?);
            }

            impl Method for $marker {
                const NAME: &'static str = $marker::DEFINITION.name;
                const SPEC: Option<&'static MethodSpec> = Some(&$marker::DEFINITION);
            }

            methods!(@impl $kind $marker, $params $(, $result)?);
        )*
    };
    (@def $spec:expr, $result:ty) => {
        $spec.result(stringify!($result))
    };
    (@def $spec:expr) => {
        $spec
    };
    (@impl request $marker:ident, $params:ty, $result:ty) => {
        impl RequestMethod for $marker {
            type Params = $params;
            type Result = $result;
        }
    };
    (@visit request $marker:ident, $visitor:ident) => {
        $visitor.request::<$marker>()
    };
    (@visit notification $marker:ident, $visitor:ident) => {
        $visitor.notification::<$marker>()
    };
    (@impl notification $marker:ident, $params:ty) => {
        impl NotificationMethod for $marker {
            type Params = $params;
        }
    };
}

use Capability as C;
use MethodKind::{Notification as N, Request as R};
use Primitive as P;
use ProtocolVersion::{V2025_06_18, V2025_11_25, V2026_07_28};
use Whose::{Either as EitherSide, Receiver as Recv, Sender as Send_};

methods! {
    /// `initialize`: opens a session (C→S).
    request Initialize = spec(m::INITIALIZE, R, Sender::Client, P::Lifecycle, None).until(V2026_07_28),
        params InitializeRequestParams, result InitializeResult;
    /// `ping` (either way).
    request Ping = spec(m::PING, R, Sender::Either, P::Utility, None).until(V2026_07_28),
        params RequestParams, result EmptyResult;
    /// `resources/list` (C→S).
    request ListResources = spec(m::RESOURCES_LIST, R, Sender::Client, P::Resources, by(C::Resources, Recv)).list("resources").cacheable(),
        params PaginatedRequestParams, result ListResourcesResult;
    /// `resources/templates/list` (C→S).
    request ListResourceTemplates = spec(m::RESOURCES_TEMPLATES_LIST, R, Sender::Client, P::Resources, by(C::Resources, Recv)).list("resourceTemplates").cacheable(),
        params PaginatedRequestParams, result ListResourceTemplatesResult;
    /// `resources/read` (C→S).
    request ReadResource = spec(m::RESOURCES_READ, R, Sender::Client, P::Resources, by(C::Resources, Recv)).target(TargetKind::Uri).cacheable().may_ask(),
        params ResourceRequestParams, result ReadResourceResult;
    /// `resources/subscribe` (C→S).
    request Subscribe = spec(m::RESOURCES_SUBSCRIBE, R, Sender::Client, P::Resources, by(C::ResourcesSubscribe, Recv)).target(TargetKind::Uri).until(V2026_07_28),
        params ResourceRequestParams, result EmptyResult;
    /// `resources/unsubscribe` (C→S).
    request Unsubscribe = spec(m::RESOURCES_UNSUBSCRIBE, R, Sender::Client, P::Resources, by(C::ResourcesSubscribe, Recv)).target(TargetKind::Uri).until(V2026_07_28),
        params ResourceRequestParams, result EmptyResult;
    /// `prompts/list` (C→S).
    request ListPrompts = spec(m::PROMPTS_LIST, R, Sender::Client, P::Prompts, by(C::Prompts, Recv)).list("prompts").cacheable(),
        params PaginatedRequestParams, result ListPromptsResult;
    /// `prompts/get` (C→S).
    request GetPrompt = spec(m::PROMPTS_GET, R, Sender::Client, P::Prompts, by(C::Prompts, Recv)).target(TargetKind::Name(Arguments::Strings)).may_ask(),
        params GetPromptRequestParams, result GetPromptResult;
    /// `tools/list` (C→S).
    request ListTools = spec(m::TOOLS_LIST, R, Sender::Client, P::Tools, by(C::Tools, Recv)).list("tools").cacheable(),
        params PaginatedRequestParams, result ListToolsResult;
    /// `tools/call` (C→S).
    request CallTool = spec(m::TOOLS_CALL, R, Sender::Client, P::Tools, by(C::Tools, Recv)).target(TargetKind::Name(Arguments::Json)).may_ask(),
        params CallToolRequestParams, result CallToolResult;
    /// `logging/setLevel` (C→S).
    request SetLevel = spec(m::LOGGING_SET_LEVEL, R, Sender::Client, P::Logging, by(C::Logging, Recv)).until(V2026_07_28),
        params SetLevelRequestParams, result EmptyResult;
    /// `completion/complete` (C→S).
    request Complete = spec(m::COMPLETION_COMPLETE, R, Sender::Client, P::Completion, by(C::Completions, Recv)),
        params CompleteRequestParams, result CompleteResult;
    /// `sampling/createMessage` (S→C; embedded in input-required results from 2026-07-28).
    request CreateMessage = spec(m::SAMPLING_CREATE_MESSAGE, R, Sender::Server, P::Sampling, by(C::Sampling, Recv)).until(V2026_07_28),
        params CreateMessageRequestParams, result CreateMessageResult;
    /// `roots/list` (S→C; embedded in input-required results from 2026-07-28).
    request ListRoots = spec(m::ROOTS_LIST, R, Sender::Server, P::Roots, by(C::Roots, Recv)).until(V2026_07_28),
        params RequestParams, result ListRootsResult;
    /// `elicitation/create` (S→C, 2025-06-18; embedded in input-required results from 2026-07-28).
    request Elicit = spec(m::ELICITATION_CREATE, R, Sender::Server, P::Elicitation, by(C::Elicitation, Recv)).since(V2025_06_18).until(V2026_07_28),
        params ElicitRequestParams, result ElicitResult;
    /// `tasks/get` (requestor → receiver, 2025-11-25; an extension method from 2026-07-28).
    request GetTask = spec(m::TASKS_GET, R, Sender::Either, P::Tasks, by(C::Tasks, Recv)).since(V2025_11_25).until(V2026_07_28),
        params GetTaskRequestParams, result GetTaskResult;
    /// `tasks/result` (requestor → receiver, 2025-11-25).
    request GetTaskPayload = spec(m::TASKS_RESULT, R, Sender::Either, P::Tasks, by(C::Tasks, Recv)).since(V2025_11_25).until(V2026_07_28),
        params GetTaskRequestParams, result GetTaskPayloadResult;
    /// `tasks/list` (requestor → receiver, 2025-11-25).
    request ListTasks = spec(m::TASKS_LIST, R, Sender::Either, P::Tasks, by(C::TasksList, Recv)).since(V2025_11_25).until(V2026_07_28).list("tasks"),
        params PaginatedRequestParams, result ListTasksResult;
    /// `tasks/cancel` (requestor → receiver, 2025-11-25; an extension method from 2026-07-28).
    request CancelTask = spec(m::TASKS_CANCEL, R, Sender::Either, P::Tasks, by(C::TasksCancel, Recv)).since(V2025_11_25).until(V2026_07_28),
        params GetTaskRequestParams, result CancelTaskResult;
    /// `server/discover` (C→S, 2026-07-28): versions and capabilities, the era probe.
    request Discover = spec(m::SERVER_DISCOVER, R, Sender::Client, P::Lifecycle, None).since(V2026_07_28).cacheable(),
        params RequestParams, result DiscoverResult;
    /// `subscriptions/listen` (C→S, 2026-07-28): a stream of the change notifications asked for.
    request SubscriptionsListen = spec(m::SUBSCRIPTIONS_LISTEN, R, Sender::Client, P::Utility, None).since(V2026_07_28),
        params SubscriptionsListenRequestParams, result SubscriptionsListenResult;

    /// `notifications/initialized` (C→S).
    notification Initialized = spec(m::NOTIFICATIONS_INITIALIZED, N, Sender::Client, P::Lifecycle, None).until(V2026_07_28),
        params NotificationParams;
    /// `notifications/cancelled` (either way).
    notification Cancelled = spec(m::NOTIFICATIONS_CANCELLED, N, Sender::Either, P::Utility, None),
        params CancelledNotificationParams;
    /// `notifications/progress` (either way).
    notification Progress = spec(m::NOTIFICATIONS_PROGRESS, N, Sender::Either, P::Utility, None),
        params ProgressNotificationParams;
    /// `notifications/message`: a log line (S→C).
    notification LoggingMessage = spec(m::NOTIFICATIONS_MESSAGE, N, Sender::Server, P::Logging, by(C::Logging, Send_)),
        params LoggingMessageNotificationParams;
    /// `notifications/resources/list_changed` (S→C).
    notification ResourceListChanged = spec(m::NOTIFICATIONS_RESOURCES_LIST_CHANGED, N, Sender::Server, P::Resources, by(C::ResourcesListChanged, Send_)),
        params NotificationParams;
    /// `notifications/resources/updated` (S→C).
    notification ResourceUpdated = spec(m::NOTIFICATIONS_RESOURCES_UPDATED, N, Sender::Server, P::Resources, by(C::ResourcesSubscribe, Send_)),
        params ResourceUpdatedNotificationParams;
    /// `notifications/prompts/list_changed` (S→C).
    notification PromptListChanged = spec(m::NOTIFICATIONS_PROMPTS_LIST_CHANGED, N, Sender::Server, P::Prompts, by(C::PromptsListChanged, Send_)),
        params NotificationParams;
    /// `notifications/tools/list_changed` (S→C).
    notification ToolListChanged = spec(m::NOTIFICATIONS_TOOLS_LIST_CHANGED, N, Sender::Server, P::Tools, by(C::ToolsListChanged, Send_)),
        params NotificationParams;
    /// `notifications/roots/list_changed` (C→S).
    notification RootsListChanged = spec(m::NOTIFICATIONS_ROOTS_LIST_CHANGED, N, Sender::Client, P::Roots, by(C::RootsListChanged, Send_)).until(V2026_07_28),
        params NotificationParams;
    /// `notifications/elicitation/complete` (S→C, 2025-11-25): a URL elicitation finished.
    notification ElicitationComplete = spec(m::NOTIFICATIONS_ELICITATION_COMPLETE, N, Sender::Server, P::Elicitation, by(C::ElicitationUrl, Recv)).since(V2025_11_25).until(V2026_07_28),
        params ElicitationCompleteNotificationParams;
    /// `notifications/tasks/status` (receiver → requestor, 2025-11-25).
    notification TaskStatus = spec(m::NOTIFICATIONS_TASKS_STATUS, N, Sender::Either, P::Tasks, by(C::Tasks, EitherSide)).since(V2025_11_25).until(V2026_07_28),
        params TaskStatusNotificationParams;
    /// `notifications/subscriptions/acknowledged` (S→C, 2026-07-28): the first message of a listen.
    notification SubscriptionsAcknowledged = spec(m::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, N, Sender::Server, P::Utility, None).since(V2026_07_28),
        params SubscriptionsAcknowledgedNotificationParams;
}

/// The identifier of the skills extension (SEP-2640); the skills crate names it too.
const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The methods of the extensions we know that no core revision defines, described as the core
/// ones are (sender, primitive, target, list member, result type) and naming their extension.
///
/// They stay out of [`CATALOGUE`] and of [`find`]: no capability gates them and no revision
/// bounds them, so the routers and the gates treat them as the extension methods they are.
/// What only describes a method (the inspector's primitive column, `switchboard check`, the
/// fuzz targets, the HTTP `Mcp-Name` header) reads [`describe`], which knows both. The tasks
/// extension also brings back `tasks/get` and `tasks/cancel`, which keep their core rows.
pub static EXTENSIONS: &[MethodSpec] = &[
    spec(m::TASKS_UPDATE, R, Sender::Client, P::Tasks, None)
        .since(V2026_07_28)
        .result("EmptyResult")
        .of(crate::modern::TASKS_EXTENSION),
    spec(m::NOTIFICATIONS_TASKS, N, Sender::Server, P::Tasks, None)
        .since(V2026_07_28)
        .of(crate::modern::TASKS_EXTENSION),
    spec(m::SKILLS_LIST, R, Sender::Client, P::Skills, None)
        .list("skills")
        .result("ListSkillsResult")
        .of(SKILLS_EXTENSION),
    spec(m::SKILLS_GET, R, Sender::Client, P::Skills, None)
        .target(TargetKind::Uri)
        .result("GetSkillResult")
        .of(SKILLS_EXTENSION),
    spec(
        m::RESOURCES_DIRECTORY_READ,
        R,
        Sender::Client,
        P::Skills,
        None,
    )
    .target(TargetKind::Uri)
    .list("resources")
    .result("ReadDirectoryResult")
    .of(SKILLS_EXTENSION),
];

/// The catalogue entry for `method`; `None` for a method no revision up to 2026-07-28 defines
/// (an extension method, or a typo).
pub fn find(method: &str) -> Option<&'static MethodSpec> {
    CATALOGUE.iter().find(|s| s.name == method)
}

/// The description of `method`, core ([`CATALOGUE`]) or of a known extension ([`EXTENSIONS`]);
/// `None` for a method nobody defines.
pub fn describe(method: &str) -> Option<&'static MethodSpec> {
    find(method).or_else(|| EXTENSIONS.iter().find(|s| s.name == method))
}

/// Whether results of `method` carry caching hints (`[D26-90]`): its entry's `cacheable`.
pub fn is_cacheable(method: &str) -> bool {
    request(method).is_some_and(|s| s.cacheable)
}

/// Whether `method` may be answered with an input-required result (`[D26-34]`): its entry's
/// `may_require_input`.
pub fn may_require_input(method: &str) -> bool {
    request(method).is_some_and(|s| s.may_require_input)
}

/// The catalogue entry for a request `method`.
pub fn request(method: &str) -> Option<&'static MethodSpec> {
    find(method).filter(|s| s.kind == MethodKind::Request)
}

/// The catalogue entry for a notification `method`.
pub fn notification(method: &str) -> Option<&'static MethodSpec> {
    find(method).filter(|s| s.kind == MethodKind::Notification)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::{ElicitationCapability, ToolsCapability};

    #[test]
    fn every_entry_is_found_by_its_name_and_names_are_unique() {
        for s in CATALOGUE {
            assert_eq!(find(s.name), Some(s));
        }
        assert_eq!(CATALOGUE.len(), m::REQUESTS.len() + m::NOTIFICATIONS.len());
        assert_eq!(<CallTool as Method>::NAME, "tools/call");
        assert_eq!(<CallTool as Method>::SPEC.map(|s| s.kind), Some(R));
        assert!(find("acme/echo").is_none());
    }

    #[test]
    fn extension_rows_describe_every_known_extension_method_and_no_core_one() {
        for s in EXTENSIONS {
            assert!(!m::is_known(s.name), "{}", s.name);
            assert!(find(s.name).is_none(), "{}: also a core row", s.name);
            assert_eq!(describe(s.name), Some(s));
            assert!(s.extension.is_some() && s.gate.is_none());
        }
        let skills = [m::SKILLS_LIST, m::SKILLS_GET, m::RESOURCES_DIRECTORY_READ];
        let known = m::TASKS_EXTENSION_METHODS.iter().chain(&skills);
        for name in known {
            assert!(describe(name).is_some(), "{name}: no description");
        }
        assert_eq!(
            describe(m::SKILLS_LIST).map(|s| s.primitive),
            Some(P::Skills)
        );
        assert_eq!(describe(m::TOOLS_CALL), find(m::TOOLS_CALL));
        assert!(describe("acme/echo").is_none());
    }

    /// Records what the visitor was called with.
    #[derive(Default)]
    struct Seen(Vec<(&'static str, MethodKind)>);

    impl MethodVisitor for Seen {
        fn request<M: RequestMethod>(&mut self) {
            self.0.push((M::NAME, R));
        }
        fn notification<M: NotificationMethod>(&mut self) {
            self.0.push((M::NAME, N));
        }
    }

    #[test]
    fn the_visitor_meets_every_row_once_with_its_kind_and_finds_each_by_name() {
        let mut all = Seen::default();
        visit_all(&mut all);
        let rows: Vec<_> = CATALOGUE.iter().map(|s| (s.name, s.kind)).collect();
        assert_eq!(all.0, rows);
        for s in CATALOGUE {
            let mut one = Seen::default();
            assert!(visit(s.name, &mut one));
            assert_eq!(one.0, vec![(s.name, s.kind)]);
        }
        let mut none = Seen::default();
        assert!(!visit("acme/echo", &mut none));
        assert!(none.0.is_empty());
    }

    /// The per-method facts of 2026-07-28 are where SPEC-2026-NOTES puts them: caching hints
    /// on the results of discover, the four lists and `resources/read` (`[D26-90]`);
    /// input-required results for `tools/call`, `prompts/get` and `resources/read` only
    /// (`[D26-34]`); the `Mcp-Name` member from the target.
    #[test]
    fn d26_90_d26_34_cacheable_input_required_and_name_field_per_method() {
        let with = |f: fn(&MethodSpec) -> bool| {
            let mut v: Vec<_> = CATALOGUE.iter().filter(|s| f(s)).map(|s| s.name).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(
            with(|s| s.cacheable),
            [
                m::PROMPTS_LIST,
                m::RESOURCES_LIST,
                m::RESOURCES_READ,
                m::RESOURCES_TEMPLATES_LIST,
                m::SERVER_DISCOVER,
                m::TOOLS_LIST,
            ]
        );
        assert_eq!(
            with(|s| s.may_require_input),
            [m::PROMPTS_GET, m::RESOURCES_READ, m::TOOLS_CALL]
        );
        assert!(is_cacheable(m::TOOLS_LIST) && !is_cacheable(m::TOOLS_CALL));
        assert!(!is_cacheable("acme/echo") && !may_require_input("acme/echo"));
        assert!(may_require_input(m::PROMPTS_GET) && !may_require_input(m::PROMPTS_LIST));
        let named: Vec<_> = CATALOGUE
            .iter()
            .filter_map(|s| Some((s.name, s.name_field()?)))
            .collect();
        assert_eq!(
            named,
            [
                (m::RESOURCES_READ, "uri"),
                (m::PROMPTS_GET, "name"),
                (m::TOOLS_CALL, "name"),
            ]
        );
    }

    #[test]
    fn cp_1_gates_follow_the_receivers_declaration() {
        let mut server = ServerCapabilities::default();
        let client = ClientCapabilities::default();
        let v = Some(ProtocolVersion::V2025_11_25);
        let c2s = Direction::ClientToServer;
        let call = find(m::TOOLS_CALL).unwrap();
        assert_eq!(
            call.check(c2s, v, Some(&server), Some(&client)),
            Err(Refusal::Undeclared {
                capability: C::Tools,
                side: Some(Side::Server)
            })
        );
        server.tools = Some(ToolsCapability::default());
        assert_eq!(call.check(c2s, v, Some(&server), Some(&client)), Ok(()));
        assert!(
            call.check(Direction::ServerToClient, v, Some(&server), None)
                .is_err(),
            "tools/call never travels s2c"
        );
        let changed = find(m::NOTIFICATIONS_TOOLS_LIST_CHANGED).unwrap();
        assert!(
            changed
                .check(Direction::ServerToClient, v, Some(&server), Some(&client))
                .is_err(),
            "tools without listChanged"
        );
    }

    #[test]
    fn lc_5_revision_and_capability_age_decide_too() {
        let client = ClientCapabilities {
            elicitation: Some(ElicitationCapability::default()),
            ..Default::default()
        };
        let s2c = Direction::ServerToClient;
        let elicit = find(m::ELICITATION_CREATE).unwrap();
        assert!(
            elicit
                .check(s2c, Some(ProtocolVersion::V2025_06_18), None, Some(&client))
                .is_ok()
        );
        assert_eq!(
            elicit.check(s2c, Some(ProtocolVersion::V2025_03_26), None, Some(&client)),
            Err(Refusal::NotInRevision(ProtocolVersion::V2025_03_26))
        );
        // 2024-11-05 had `completion/complete` but no `completions` capability (§8.5).
        let complete = find(m::COMPLETION_COMPLETE).unwrap();
        let none = ServerCapabilities::default();
        let c2s = Direction::ClientToServer;
        assert!(
            complete
                .check(c2s, Some(ProtocolVersion::V2024_11_05), Some(&none), None)
                .is_ok()
        );
        assert!(
            complete
                .check(c2s, Some(ProtocolVersion::V2025_03_26), Some(&none), None)
                .is_err()
        );
    }
}
