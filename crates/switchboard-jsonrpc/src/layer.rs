//! Middleware: ordered, composable [`Layer`]s around every request and notification a side
//! handles and every request it sends, on both roles and every transport.
//!
//! A layer sees a [`Call`] (the request, its [`RequestContext`] and the session's [`Facts`]) and a
//! [`Next`] that runs the rest of the chain and then the role itself. It may go on, go on with a
//! rewritten request, change the answer, or answer by itself (short-circuit) without the role
//! ever seeing the request. The same shape wraps our own requests ([`Layer::send`]) and filters
//! the peer's notifications ([`Layer::notification`]).
//!
//! Layers run in the order they were added: the first one added sees a request first and its
//! answer last (tower's `ServiceBuilder` order). Each is applied to every method or to a
//! [`Scope`] (a method, a primitive, one tool, prompt or resource). With no layer installed the
//! engine takes none of this path: nothing is allocated and nothing is parsed.
//!
//! Call `next.run(call)` before the first `.await` of your future when you go on: the role's
//! synchronous part (the lifecycle) then keeps frame order. A layer that awaits first (a
//! semaphore, say) gives that up for the request it holds, which only matters for the handshake.

use std::fmt;
use std::sync::{Arc, OnceLock};

use switchboard_types::catalogue::{self, Primitive, TargetKind};
use switchboard_types::{Notification, RawJson, Request};

use crate::error::RequestError;
use crate::facts::Facts;
use crate::peer::{Peer, RequestOptions};
use crate::service::{BoxFuture, HandlerResult, RequestContext, Service};

/// One piece of cross-cutting behaviour: every hook has a default that goes on unchanged, so a
/// layer implements only what it cares about.
pub trait Layer: Send + Sync + 'static {
    /// Around one request the peer sent us. Go on with `next.run(call)`; answer by returning
    /// an error (or a result) without calling it.
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        next.run(call)
    }

    /// One notification the peer sent us, in frame order. `false` stops it here: the role
    /// (and the layers after this one) never see it.
    fn notification(&self, notification: &Notification, facts: &Facts) -> bool {
        let _ = (notification, facts);
        true
    }

    /// Around one request we send. Go on with `next.run(call)` (the params may be rewritten,
    /// e.g. to carry trace context in `_meta`); fail it by returning an error without calling it.
    fn send(&self, call: Outgoing, next: SendNext) -> BoxFuture<Result<RawJson, RequestError>> {
        next.run(call)
    }

    /// Told once when a session of side `side` starts, and once ([`Layer::session_closed`])
    /// when it has ended: a connection, a 2025 session, or one 2026-07-28 exchange. Every
    /// layer is told, whatever its scope.
    fn session_opened(&self, side: &'static str) {
        let _ = side;
    }

    /// Told once when a session of side `side` has ended (see [`Layer::session_opened`]).
    fn session_closed(&self, side: &'static str) {
        let _ = side;
    }

    /// One frame crossed side `side`'s transport, in either direction, before any params
    /// were parsed (what a [`FrameHook`](crate::FrameHook) sees). Called synchronously on the
    /// engine's path: keep it cheap. Every layer is told, whatever its scope.
    fn frame(&self, side: &'static str, event: &crate::framelog::FrameEvent<'_>) {
        let _ = (side, event);
    }
}

/// A shared layer is a layer: one instance in several chains (a limit across roles, one
/// telemetry for many servers).
impl<L: Layer + ?Sized> Layer for Arc<L> {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        (**self).handle(call, next)
    }

    fn notification(&self, notification: &Notification, facts: &Facts) -> bool {
        (**self).notification(notification, facts)
    }

    fn send(&self, call: Outgoing, next: SendNext) -> BoxFuture<Result<RawJson, RequestError>> {
        (**self).send(call, next)
    }

    fn session_opened(&self, side: &'static str) {
        (**self).session_opened(side)
    }

    fn session_closed(&self, side: &'static str) {
        (**self).session_closed(side)
    }

    fn frame(&self, side: &'static str, event: &crate::framelog::FrameEvent<'_>) {
        (**self).frame(side, event)
    }
}

/// Which messages a layer applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scope {
    /// Every message.
    All,
    /// These methods.
    Methods(Vec<String>),
    /// Every method of one part of the protocol (all tool methods, all resource methods, ...).
    Primitive(Primitive),
    /// One target of one method: a tool by name (`tools/call`), a prompt by name
    /// (`prompts/get`), a resource by URI (`resources/read`).
    Target {
        /// The method.
        method: &'static str,
        /// The tool or prompt name, or the resource URI.
        target: String,
    },
}

impl Scope {
    /// One method.
    pub fn method(name: impl Into<String>) -> Self {
        Scope::Methods(vec![name.into()])
    }

    /// Calls of one tool.
    pub fn tool(name: impl Into<String>) -> Self {
        Scope::Target {
            method: switchboard_types::methods::TOOLS_CALL,
            target: name.into(),
        }
    }

    /// Every tool method (listing and calls of every tool).
    pub fn tools() -> Self {
        Scope::Primitive(Primitive::Tools)
    }

    /// Gets of one prompt.
    pub fn prompt(name: impl Into<String>) -> Self {
        Scope::Target {
            method: switchboard_types::methods::PROMPTS_GET,
            target: name.into(),
        }
    }

    /// Reads of one resource.
    pub fn resource(uri: impl Into<String>) -> Self {
        Scope::Target {
            method: switchboard_types::methods::RESOURCES_READ,
            target: uri.into(),
        }
    }

    /// Whether a message with `method` (and the target `target` gives, parsed only when this
    /// scope needs it) is in scope.
    pub fn matches(&self, method: &str, target: impl FnOnce() -> Option<String>) -> bool {
        match self {
            Scope::All => true,
            Scope::Methods(m) => m.iter().any(|x| x == method),
            Scope::Primitive(p) => catalogue::request(method)
                .or_else(|| catalogue::notification(method))
                .is_some_and(|s| s.primitive == *p),
            Scope::Target {
                method: m,
                target: t,
            } => *m == method && target().as_deref() == Some(t.as_str()),
        }
    }
}

struct Entry {
    scope: Scope,
    layer: Arc<dyn Layer>,
}

/// An ordered list of layers, each with its scope. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Layers {
    entries: Arc<[Arc<Entry>]>,
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.scope))
            .finish()
    }
}

impl Layers {
    /// No layer.
    pub fn new() -> Self {
        Layers::default()
    }

    /// Adds `layer` around every message, inside the layers already added.
    pub fn layer(self, layer: impl Layer) -> Self {
        self.layer_for(Scope::All, layer)
    }

    /// Adds `layer` around the messages of `scope` only, inside the layers already added.
    pub fn layer_for(self, scope: Scope, layer: impl Layer) -> Self {
        self.push(scope, Arc::new(layer))
    }

    /// Adds a shared layer (one instance in several chains, e.g. a limit across roles).
    pub fn push(self, scope: Scope, layer: Arc<dyn Layer>) -> Self {
        let mut v: Vec<Arc<Entry>> = self.entries.iter().cloned().collect();
        v.push(Arc::new(Entry { scope, layer }));
        Layers { entries: v.into() }
    }

    /// Appends every layer of `other`, inside these.
    pub fn extend(self, other: &Layers) -> Self {
        let mut v: Vec<Arc<Entry>> = self.entries.iter().cloned().collect();
        v.extend(other.entries.iter().cloned());
        Layers { entries: v.into() }
    }

    /// Whether there is no layer.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// How many layers there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Tells every layer that one frame crossed the transport.
    pub(crate) fn frame(&self, side: &'static str, event: &crate::framelog::FrameEvent<'_>) {
        for e in self.entries.iter() {
            e.layer.frame(side, event);
        }
    }

    /// Tells every layer that a session started.
    pub(crate) fn session_opened(&self, side: &'static str) {
        for e in self.entries.iter() {
            e.layer.session_opened(side);
        }
    }

    /// The index of the first entry at or after `from` whose scope takes `method`.
    fn next_for(
        &self,
        from: usize,
        method: &str,
        target: &dyn Fn() -> Option<String>,
    ) -> Option<usize> {
        (from..self.entries.len()).find(|&i| self.entries[i].scope.matches(method, target))
    }
}

/// The target a request names (`params.name` of a tool call or prompt get, `params.uri` of a
/// resource request), as the catalogue describes it.
pub(crate) fn target_of(method: &str, params: Option<&RawJson>) -> Option<String> {
    let kind = catalogue::request(method)?.target?;
    let params = params?;
    #[derive(serde::Deserialize)]
    struct Named {
        name: Option<String>,
        uri: Option<String>,
    }
    let named: Named = serde_json::from_str(params.get()).ok()?;
    match kind {
        TargetKind::Name(_) => named.name,
        TargetKind::Uri => named.uri,
    }
}

/// One request the peer sent, as a layer sees it.
pub struct Call {
    /// The request: method, id and params (still raw JSON). A layer may rewrite the params.
    pub request: Request,
    /// Its context: id, peer handle, cancellation, progress, what the transport attached.
    pub context: RequestContext,
    facts: Arc<Facts>,
    target: OnceLock<Option<String>>,
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("method", &self.request.method)
            .field("id", &self.request.id)
            .field("facts", &self.facts)
            .finish_non_exhaustive()
    }
}

impl Call {
    /// The method.
    pub fn method(&self) -> &str {
        &self.request.method
    }

    /// The session's facts.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The tool or prompt name, or the resource URI, the request names (parsed once, on first
    /// use). `None` for methods without a target.
    pub fn target(&self) -> Option<&str> {
        self.target
            .get_or_init(|| target_of(&self.request.method, self.request.params.as_ref()))
            .as_deref()
    }

    /// Replaces the params (a rewriting layer); the target is parsed again if asked.
    pub fn set_params(&mut self, params: Option<RawJson>) {
        self.request.params = params;
        self.target = OnceLock::new();
    }
}

/// The rest of the chain after a layer, then the role.
#[derive(Clone)]
pub struct Next {
    layers: Layers,
    index: usize,
    service: Arc<dyn Service>,
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl Next {
    /// Runs the rest of the chain on `call` and returns the answer to come.
    pub fn run(self, call: Call) -> BoxFuture<HandlerResult> {
        let method = call.request.method.clone();
        let found = self
            .layers
            .next_for(self.index, &method, &|| call.target().map(str::to_owned));
        match found {
            Some(i) => {
                let layer = self.layers.entries[i].layer.clone();
                let next = Next {
                    layers: self.layers,
                    index: i + 1,
                    service: self.service,
                };
                layer.handle(call, next)
            }
            None => self.service.call(call.request, call.context),
        }
    }
}

/// One request we are about to send, as a layer sees it.
pub struct Outgoing {
    /// The method.
    pub method: String,
    /// The params; a layer may rewrite them (e.g. add trace context to `_meta`).
    pub params: Option<RawJson>,
    /// How it is sent (timeout, progress, cancellation, headers).
    pub options: RequestOptions,
    facts: Arc<Facts>,
}

impl fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outgoing")
            .field("method", &self.method)
            .field("facts", &self.facts)
            .finish_non_exhaustive()
    }
}

impl Outgoing {
    /// The session's facts.
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The tool or prompt name, or the resource URI, the request names.
    pub fn target(&self) -> Option<String> {
        target_of(&self.method, self.params.as_ref())
    }
}

/// The rest of the outbound chain after a layer, then the send itself.
#[derive(Clone)]
pub struct SendNext {
    layers: Layers,
    index: usize,
    peer: Peer,
}

impl fmt::Debug for SendNext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendNext")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl SendNext {
    /// Runs the rest of the chain and sends `call`; resolves to its result.
    pub fn run(self, call: Outgoing) -> BoxFuture<Result<RawJson, RequestError>> {
        let found = self
            .layers
            .next_for(self.index, &call.method, &|| call.target());
        match found {
            Some(i) => {
                let layer = self.layers.entries[i].layer.clone();
                let next = SendNext {
                    layers: self.layers,
                    index: i + 1,
                    peer: self.peer,
                };
                layer.send(call, next)
            }
            None => {
                let peer = self.peer;
                Box::pin(async move {
                    peer.request_direct(&call.method, call.params, call.options)
                        .await
                })
            }
        }
    }
}

/// The layers as the [`Peer`] handle runs them around our requests.
pub(crate) struct OutboundLayers(pub(crate) Layers);

impl crate::peer::Outbound for OutboundLayers {
    fn send(
        &self,
        peer: Peer,
        method: &str,
        params: Option<RawJson>,
        options: RequestOptions,
        facts: Facts,
    ) -> BoxFuture<Result<RawJson, RequestError>> {
        let call = Outgoing {
            method: method.to_owned(),
            params,
            options,
            facts: Arc::new(facts),
        };
        SendNext {
            layers: self.0.clone(),
            index: 0,
            peer,
        }
        .run(call)
    }

    fn frame(&self, side: &'static str, event: &crate::framelog::FrameEvent<'_>) {
        self.0.frame(side, event);
    }
}

/// The role's service with the layers around it: what the session runs when any is installed.
pub(crate) struct Layered {
    pub(crate) service: Arc<dyn Service>,
    pub(crate) layers: Layers,
    pub(crate) side: &'static str,
}

impl Layered {
    fn facts(&self, cx: Option<&RequestContext>) -> Facts {
        let mut facts = self.service.facts(cx);
        facts.side = self.side;
        facts
    }
}

impl Service for Layered {
    fn call(&self, request: Request, context: RequestContext) -> BoxFuture<HandlerResult> {
        let mut facts = self.facts(Some(&context));
        context.peer.fill_session_id(&mut facts);
        let facts = Arc::new(facts);
        let call = Call {
            request,
            context,
            facts,
            target: OnceLock::new(),
        };
        Next {
            layers: self.layers.clone(),
            index: 0,
            service: self.service.clone(),
        }
        .run(call)
    }

    fn notify(&self, notification: Notification, peer: &Peer) {
        let mut facts = None;
        let mut from = 0;
        let target = || None;
        while let Some(i) = self.layers.next_for(from, &notification.method, &target) {
            let facts = facts.get_or_insert_with(|| {
                let mut f = self.facts(None);
                peer.fill_session_id(&mut f);
                f
            });
            if !self.layers.entries[i]
                .layer
                .notification(&notification, facts)
            {
                return;
            }
            from = i + 1;
        }
        self.service.notify(notification, peer)
    }

    fn check_outbound(
        &self,
        kind: switchboard_types::MessageKind,
        method: &str,
    ) -> Result<(), switchboard_types::ErrorObject> {
        self.service.check_outbound(kind, method)
    }

    fn batch_allowed(&self) -> bool {
        self.service.batch_allowed()
    }

    fn cancellable(&self, method: &str) -> bool {
        self.service.cancellable(method)
    }

    fn allowed_in_batch(&self, method: &str) -> bool {
        self.service.allowed_in_batch(method)
    }

    fn facts(&self, cx: Option<&RequestContext>) -> Facts {
        Layered::facts(self, cx)
    }

    fn closed(&self) {
        self.service.closed();
        for e in self.layers.entries.iter() {
            e.layer.session_closed(self.side);
        }
    }
}
