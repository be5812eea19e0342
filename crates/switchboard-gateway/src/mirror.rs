//! What the gateway's server serves of one upstream: the upstream's tools, prompts, resources
//! and resource templates registered on the gateway's [`Server`] under their prefixed names and
//! URIs (each change a `list_changed` to the gateway's clients, through the server's one path
//! for announcements), and the handlers that forward a call, a get or a read to the upstream's
//! current session.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use switchboard_client::{
    ClientError, ClientSession, Era, ListenEvent, ProgressUpdate, RequestOptions,
};
use switchboard_jsonrpc::RequestError;
use switchboard_server::{
    PromptGet, ResourceRead, Server, ServerError, ServerSession, ToolCall, ToolError, WeakServer,
};
use switchboard_types::ErrorObject;
use switchboard_types::methods;
use switchboard_types::modern::SubscriptionFilter;
use switchboard_types::prompts::{GetPromptResult, Prompt};
use switchboard_types::resources::{
    ReadResourceResult, Resource, ResourceTemplate, ResourceUpdatedNotificationParams,
};
use switchboard_types::tools::{CallToolRequestParams, CallToolResult, TaskSupport, Tool};

use crate::affinity::{Affinity, InFlight};
use crate::config::{Limits, UpstreamConfig};
use crate::names;

/// One upstream as the handlers see it: its name and its session while it is up.
pub(crate) struct Link {
    /// The upstream's name (its prefix).
    pub(crate) name: String,
    /// How it is reached (for the clients' own sessions).
    config: UpstreamConfig,
    /// Between the prefix and a name (for the tools of a client's own session).
    separator: String,
    /// The sessions of their own of the clients that may be asked for input.
    pub(crate) affinity: Arc<Affinity>,
    session: RwLock<Option<ClientSession>>,
    /// Up and listed (the session alone is set before the first listing, so that calls work as
    /// soon as an item is served).
    ready: std::sync::atomic::AtomicBool,
    /// Set once the first attempt to bring the upstream up has ended, either way.
    attempted: tokio::sync::watch::Sender<bool>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("name", &self.name)
            .field("up", &self.is_ready())
            .finish()
    }
}

impl Link {
    pub(crate) fn new(config: UpstreamConfig, separator: String) -> Self {
        Link {
            name: config.name.clone(),
            config,
            separator,
            affinity: Arc::default(),
            session: RwLock::new(None),
            ready: Default::default(),
            attempted: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The session while the upstream is up.
    pub(crate) fn session(&self) -> Option<ClientSession> {
        self.session.read().ok().and_then(|s| s.clone())
    }

    pub(crate) fn set(&self, session: Option<ClientSession>) {
        if session.is_none() {
            self.set_ready(false);
        }
        if let Ok(mut slot) = self.session.write() {
            *slot = session;
        }
    }

    /// Records that the first attempt to bring the upstream up has ended.
    pub(crate) fn set_attempted(&self) {
        self.attempted.send_replace(true);
    }

    /// Waits until the first attempt to bring the upstream up has ended.
    pub(crate) async fn attempted(&self) {
        let mut rx = self.attempted.subscribe();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Whether the upstream has a session (without taking a copy of it).
    pub(crate) fn is_up(&self) -> bool {
        self.session.read().is_ok_and(|s| s.is_some())
    }

    /// Whether the upstream is up and listed.
    pub(crate) fn is_ready(&self) -> bool {
        self.ready.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub(crate) fn set_ready(&self, ready: bool) {
        self.ready.store(ready, std::sync::atomic::Ordering::SeqCst);
    }

    /// The session a forwarded request of `cx` goes on: the client's own (with the guard that
    /// keeps its call in flight) when it gets one, else the shared one; `None` when down.
    async fn session_for(
        self: &Arc<Self>,
        cx: &switchboard_server::Context,
        limits: &Limits,
    ) -> Option<(ClientSession, Option<InFlight>)> {
        let shared = self.session()?;
        self.session_with(shared, cx, limits).await
    }

    /// [`Link::session_for`] with the shared session already taken (a call reads it once).
    async fn session_with(
        self: &Arc<Self>,
        shared: ClientSession,
        cx: &switchboard_server::Context,
        limits: &Limits,
    ) -> Option<(ClientSession, Option<InFlight>)> {
        if !self.config.own_sessions || !crate::affinity::wants_own_session(cx) {
            // The common case, decided at once: nothing boxed, nothing awaited.
            return Some((shared, None));
        }
        self.own_session(shared, cx, limits).await
    }

    /// [`Link::session_for`] for a client that gets a session of its own. (Boxed: the follower
    /// it starts serves tools whose handlers come back here.)
    fn own_session<'a>(
        self: &'a Arc<Self>,
        shared: ClientSession,
        cx: &'a switchboard_server::Context,
        limits: &'a Limits,
    ) -> futures::future::BoxFuture<'a, Option<(ClientSession, Option<InFlight>)>> {
        Box::pin(self.own_session_inner(shared, cx, limits))
    }

    async fn own_session_inner(
        self: &Arc<Self>,
        shared: ClientSession,
        cx: &switchboard_server::Context,
        limits: &Limits,
    ) -> Option<(ClientSession, Option<InFlight>)> {
        let bound = tokio::time::timeout(
            limits.connect_timeout,
            self.affinity
                .bound(&self.config, cx, limits.max_affinity_sessions),
        )
        .await
        .ok()
        .flatten();
        match bound.and_then(|b| b.session().map(|s| (s, b))) {
            Some((session, bound)) => {
                // A 2025 client sees the tools of its own session (the 2026-07-28 era has no
                // session to hold them: its lists are the gateway's).
                if !cx.is_modern() && bound.start_following() {
                    let (link, own, limits) = (self.clone(), session.clone(), limits.clone());
                    let front = bound.front().clone();
                    let follow: futures::future::BoxFuture<'static, ()> =
                        Box::pin(follow_own_tools(link, own, front, limits));
                    tokio::spawn(follow);
                }
                Some((session, Some(bound.enter(cx))))
            }
            None => Some((shared, None)),
        }
    }

    fn down(&self) -> String {
        format!("upstream `{}` is down", self.name)
    }

    fn failed(&self, e: &ClientError) -> String {
        format!("upstream `{}` failed: {e}", self.name)
    }
}

/// The upstream's error as the gateway's client should see it: the upstream's own JSON-RPC
/// error as it is, anything else (closed, lost, timed out) -32603 naming the upstream.
fn rpc_error(link: &Link, e: &ClientError) -> ErrorObject {
    match e {
        ClientError::Request(RequestError::Rejected(obj)) => obj.clone(),
        other => ErrorObject::internal(link.failed(other)),
    }
}

/// The keys and definitions registered for one upstream, by kind.
#[derive(Default)]
struct Mirrored {
    /// Removed from the gateway for good (a reload): nothing is registered any more, so that
    /// a late listing of the stopped upstream cannot take keys its successor holds.
    retired: bool,
    tools: HashMap<String, Value>,
    prompts: HashMap<String, Value>,
    resources: HashMap<String, Value>,
    templates: HashMap<String, Value>,
    /// The tools as `search_tools` reads them, built on the first search after a change.
    searchable: Option<Arc<Vec<Searchable>>>,
}

/// A served tool as `search_tools` reads it: its gateway name, its name and description
/// lowercased (once per list change, not per query), and its entry in a search's answer
/// (name, input schema and description).
pub(crate) struct Searchable {
    pub(crate) name: String,
    pub(crate) text: String,
    pub(crate) entry: Value,
}

impl Searchable {
    fn of(def: &Value) -> Self {
        let name = def["name"].as_str().unwrap_or_default();
        let text = format!(
            "{} {}",
            name.to_lowercase(),
            def["description"]
                .as_str()
                .unwrap_or_default()
                .to_lowercase()
        );
        let mut entry = json!({"name": name, "inputSchema": def["inputSchema"]});
        if let Some(d) = def.get("description") {
            entry["description"] = d.clone();
        }
        Searchable {
            name: name.to_owned(),
            text,
            entry,
        }
    }
}

/// Which of the four lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Tools,
    Prompts,
    Resources,
    Templates,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Prompts => "prompts",
            Kind::Resources => "resources",
            Kind::Templates => "resource templates",
        }
    }
}

/// One upstream's items on the gateway's server.
pub(crate) struct Mirror {
    pub(crate) link: Arc<Link>,
    server: WeakServer,
    separator: String,
    limits: Limits,
    mirrored: Mutex<Mirrored>,
    /// The resource subscriptions the gateway's clients hold on this upstream.
    subscriptions: crate::subscribe::Subscriptions,
    /// The keys of the last listing of each kind, kept while the upstream is down: a call to
    /// one of them is then answered "down" naming the upstream, not "unknown".
    known: Mutex<Known>,
    /// The gateway's index of every upstream's keys, this one's kept with `known`.
    owners: Arc<Owners>,
}

/// Which upstreams last listed each gateway key, by kind: shared by every mirror of one
/// gateway and kept in step with their listings ([`Mirror::apply`]) and retirement, so that
/// finding an item's upstream is one lookup, not one per upstream.
#[derive(Default)]
pub(crate) struct Owners(RwLock<[HashMap<String, Vec<Arc<Link>>>; 4]>);

impl Owners {
    fn slot(kind: Kind) -> usize {
        match kind {
            Kind::Tools => 0,
            Kind::Prompts => 1,
            Kind::Resources => 2,
            Kind::Templates => 3,
        }
    }

    /// `f` of the links of the upstreams whose last listing of `kind` had `key` (most often
    /// one; several only when upstreams mounted without a prefix list the same name).
    pub(crate) fn with<R>(&self, kind: Kind, key: &str, f: impl FnOnce(&[Arc<Link>]) -> R) -> R {
        match self.0.read() {
            Ok(maps) => f(maps[Self::slot(kind)]
                .get(key)
                .map_or(&[][..], Vec::as_slice)),
            Err(_) => f(&[]),
        }
    }

    /// `link`'s keys of `kind` are now `new` instead of `old`.
    fn replace(&self, kind: Kind, link: &Arc<Link>, old: &HashSet<String>, new: &HashSet<String>) {
        let Ok(mut maps) = self.0.write() else {
            return;
        };
        let map = &mut maps[Self::slot(kind)];
        for key in old.difference(new) {
            if let Some(links) = map.get_mut(key) {
                links.retain(|l| !Arc::ptr_eq(l, link));
                if links.is_empty() {
                    map.remove(key);
                }
            }
        }
        for key in new.difference(old) {
            let links = map.entry(key.clone()).or_default();
            if !links.iter().any(|l| Arc::ptr_eq(l, link)) {
                links.push(link.clone());
            }
        }
    }
}

/// The gateway keys an upstream last listed, by kind.
#[derive(Default)]
struct Known {
    tools: HashSet<String>,
    prompts: HashSet<String>,
    resources: HashSet<String>,
    templates: HashSet<String>,
}

impl Known {
    fn of(&mut self, kind: Kind) -> &mut HashSet<String> {
        match kind {
            Kind::Tools => &mut self.tools,
            Kind::Prompts => &mut self.prompts,
            Kind::Resources => &mut self.resources,
            Kind::Templates => &mut self.templates,
        }
    }
}

impl Mirror {
    pub(crate) fn new(
        link: Arc<Link>,
        server: &Server,
        separator: String,
        limits: Limits,
        owners: Arc<Owners>,
    ) -> Self {
        Mirror {
            owners,
            link,
            server: server.downgrade(),
            separator,
            limits,
            mirrored: Mutex::default(),
            known: Mutex::default(),
            subscriptions: Default::default(),
        }
    }

    /// How many items of `kind` are registered.
    pub(crate) fn count(&self, kind: Kind) -> usize {
        self.mirrored.lock().map_or(0, |m| match kind {
            Kind::Tools => m.tools.len(),
            Kind::Prompts => m.prompts.len(),
            Kind::Resources => m.resources.len(),
            Kind::Templates => m.templates.len(),
        })
    }

    /// Removes everything of this upstream from the gateway's lists (what it last listed is
    /// still known, for [`Mirror::knows`]).
    pub(crate) fn clear(&self) {
        self.clear_and(false);
    }

    /// Clears this upstream's items for good (it was removed from the configuration): its
    /// keys leave the gateway's index too (a successor of the same name lists its own).
    pub(crate) fn retire(&self) {
        self.link.set(None);
        if let Ok(mut mirrored) = self.mirrored.lock() {
            mirrored.retired = true;
            if let Ok(mut known) = self.known.lock() {
                let none = HashSet::new();
                for kind in [Kind::Tools, Kind::Prompts, Kind::Resources, Kind::Templates] {
                    let old = std::mem::take(known.of(kind));
                    self.owners.replace(kind, &self.link, &old, &none);
                }
            }
        }
        self.clear_and(true);
    }

    fn clear_and(&self, retire: bool) {
        let Some(server) = self.server.upgrade() else {
            return;
        };
        let _hold = server.hold_list_changes();
        let Ok(mut mirrored) = self.mirrored.lock() else {
            return;
        };
        mirrored.retired |= retire;
        mirrored.searchable = None;
        for key in std::mem::take(&mut mirrored.tools).into_keys() {
            let _ = server.remove_tool(&key);
        }
        for key in std::mem::take(&mut mirrored.prompts).into_keys() {
            let _ = server.remove_prompt(&key);
        }
        for key in std::mem::take(&mut mirrored.resources).into_keys() {
            let _ = server.remove_resource(&key);
        }
        for key in std::mem::take(&mut mirrored.templates).into_keys() {
            let _ = server.remove_resource_template(&key);
        }
    }

    /// Holds the gateway's list-change announcements back while the guard lives (a burst of
    /// changes is one `list_changed` per list).
    pub(crate) fn hold_list_changes(&self) -> Option<switchboard_server::ListChangeHold> {
        self.server.upgrade().map(|s| s.hold_list_changes())
    }

    /// A client subscribed to `gateway_uri` (one of this upstream's).
    pub(crate) async fn subscribe(&self, gateway_uri: &str) -> Result<(), ClientError> {
        self.subscriptions
            .add(
                &self.link.name,
                self.link.session(),
                &self.server,
                gateway_uri,
            )
            .await
    }

    /// Client session `client` ([`ServerSession::id`](switchboard_server::ServerSession::id))
    /// subscribed to `gateway_uri`: on its own upstream session when it holds one (the
    /// upstream's updates there go to that client only), else on the gateway's.
    pub(crate) async fn subscribe_for(
        &self,
        client: Option<u64>,
        gateway_uri: &str,
    ) -> Result<(), ClientError> {
        let Some(bound) = client.and_then(|c| self.link.affinity.of(c)) else {
            return self.subscribe(gateway_uri).await;
        };
        let (Some(own), Some(original)) = (
            bound.session(),
            names::upstream_uri(&self.link.name, gateway_uri),
        ) else {
            return self.subscribe(gateway_uri).await;
        };
        let front = bound.front().clone();
        let served = gateway_uri.to_owned();
        let id = own
            .subscribe(&original, move |_| {
                let (front, uri) = (front.clone(), served.clone());
                tokio::spawn(async move {
                    let params = ResourceUpdatedNotificationParams::new(uri);
                    let _ = front
                        .peer()
                        .notify(methods::NOTIFICATIONS_RESOURCES_UPDATED, Some(&params))
                        .await;
                });
            })
            .await?;
        bound.subscribed(gateway_uri, id);
        Ok(())
    }

    /// Client session `client` unsubscribed from `gateway_uri` (on the session it subscribed
    /// on).
    pub(crate) async fn unsubscribe_for(&self, client: Option<u64>, gateway_uri: &str) {
        if let Some(bound) = client.and_then(|c| self.link.affinity.of(c))
            && let Some(id) = bound.take_subscription(gateway_uri)
        {
            if let Some(own) = bound.session()
                && let Err(e) = own.unsubscribe(id).await
            {
                tracing::debug!(uri = %gateway_uri, error = %e, "upstream unsubscribe failed");
            }
            return;
        }
        self.unsubscribe(gateway_uri).await;
    }

    /// A client unsubscribed from `gateway_uri`.
    pub(crate) async fn unsubscribe(&self, gateway_uri: &str) {
        self.subscriptions
            .remove(self.link.session(), gateway_uri)
            .await;
    }

    /// Subscribes a new session of the upstream to what the clients are subscribed to.
    pub(crate) async fn renew_subscriptions(&self, session: &ClientSession) {
        self.subscriptions
            .renew(&self.link.name, session, &self.server)
            .await;
    }

    /// This upstream's registered tools as `search_tools` reads them, by name.
    pub(crate) fn searchable(&self) -> Arc<Vec<Searchable>> {
        let Ok(mut m) = self.mirrored.lock() else {
            return Arc::default();
        };
        if let Some(s) = &m.searchable {
            return s.clone();
        }
        let mut defs: Vec<&Value> = m.tools.values().collect();
        defs.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let built: Arc<Vec<Searchable>> = Arc::new(defs.into_iter().map(Searchable::of).collect());
        m.searchable = Some(built.clone());
        built
    }

    /// The first `max_items` of `items`, with a warning when some are left out.
    fn bounded<T>(&self, kind: Kind, mut items: Vec<T>) -> Vec<T> {
        if items.len() > self.limits.max_items {
            tracing::warn!(
                upstream = %self.link.name,
                listed = items.len(),
                max_items = self.limits.max_items,
                "upstream lists more {} than the bound; the rest are left out",
                kind.noun()
            );
            items.truncate(self.limits.max_items);
        }
        items
    }

    fn skipped(&self, kind: Kind, key: &str, why: &str) {
        tracing::warn!(upstream = %self.link.name, item = %key, "{} left out: {why}", kind.noun());
    }

    /// Makes the registered tools those of `tools`: the new and changed ones added, the gone
    /// ones removed (each change announced by the server).
    pub(crate) fn sync_tools(&self, tools: Vec<Tool>) {
        let mut desired = Vec::new();
        let session = self.link.session();
        for tool in self.bounded(Kind::Tools, tools) {
            let key = tool.name.clone();
            match served_tool(&self.link.name, &self.separator, tool, session.as_ref()) {
                Ok(served) => desired.push(served),
                Err(why) => self.skipped(Kind::Tools, &key, why),
            }
        }
        let Some(server) = self.server.upgrade() else {
            return;
        };
        self.apply(
            Kind::Tools,
            desired,
            |key| server.remove_tool(key),
            |tool, original| {
                let (link, limits) = (self.link.clone(), self.limits.clone());
                server.add_tool(tool, move |call| {
                    forward_call(link.clone(), original.clone(), call, limits.clone())
                })
            },
        );
    }

    /// As [`Mirror::sync_tools`], for prompts.
    pub(crate) fn sync_prompts(&self, prompts: Vec<Prompt>) {
        let mut desired = Vec::new();
        for prompt in self.bounded(Kind::Prompts, prompts) {
            let Some(name) = names::prefixed_name(&self.link.name, &self.separator, &prompt.name)
            else {
                self.skipped(
                    Kind::Prompts,
                    &prompt.name,
                    "its prefixed name breaks the name rules",
                );
                continue;
            };
            let original = prompt.name.clone();
            let mut served = prompt;
            served.name = name.clone();
            desired.push((name, served, original));
        }
        let Some(server) = self.server.upgrade() else {
            return;
        };
        self.apply(
            Kind::Prompts,
            desired,
            |key| server.remove_prompt(key),
            |prompt, original| {
                let (link, limits) = (self.link.clone(), self.limits.clone());
                server.add_prompt(prompt, move |get| {
                    forward_get(link.clone(), original.clone(), get, limits.clone())
                })
            },
        );
    }

    /// As [`Mirror::sync_tools`], for resources (their URIs rewritten).
    pub(crate) fn sync_resources(&self, resources: Vec<Resource>) {
        let mut desired = Vec::new();
        for resource in self.bounded(Kind::Resources, resources) {
            let Some(uri) = names::prefixed_uri(&self.link.name, &resource.uri) else {
                self.skipped(Kind::Resources, &resource.uri, "its URI has no scheme");
                continue;
            };
            let original = resource.uri.clone();
            let mut served = resource;
            served.uri = uri.clone();
            desired.push((uri, served, original));
        }
        let Some(server) = self.server.upgrade() else {
            return;
        };
        self.apply(
            Kind::Resources,
            desired,
            |key| server.remove_resource(key),
            |resource, original| {
                let (link, limits) = (self.link.clone(), self.limits.clone());
                server.add_resource(resource, move |read| {
                    forward_read(link.clone(), Some(original.clone()), read, limits.clone())
                })
            },
        );
    }

    /// As [`Mirror::sync_tools`], for resource templates (their URI templates rewritten; a read
    /// through one has its URI rewritten back).
    pub(crate) fn sync_templates(&self, templates: Vec<ResourceTemplate>) {
        let mut desired = Vec::new();
        for template in self.bounded(Kind::Templates, templates) {
            let Some(uri) = names::prefixed_uri(&self.link.name, &template.uri_template) else {
                self.skipped(
                    Kind::Templates,
                    &template.uri_template,
                    "it has no literal scheme",
                );
                continue;
            };
            let original = template.uri_template.clone();
            let mut served = template;
            served.uri_template = uri.clone();
            desired.push((uri, served, original));
        }
        let Some(server) = self.server.upgrade() else {
            return;
        };
        self.apply(
            Kind::Templates,
            desired,
            |key| server.remove_resource_template(key),
            |template, _original| {
                let (link, limits) = (self.link.clone(), self.limits.clone());
                server.add_resource_template(template, move |read| {
                    forward_read(link.clone(), None, read, limits.clone())
                })
            },
        );
    }

    /// Removes the registered items of `kind` that are gone or changed, then adds the new and
    /// changed ones. A key another upstream holds is left out with a warning.
    fn apply<T: Serialize>(
        &self,
        kind: Kind,
        desired: Vec<(String, T, String)>,
        remove: impl Fn(&str) -> Result<(), ServerError>,
        add: impl Fn(T, String) -> Result<(), ServerError>,
    ) {
        let _hold = self.hold_list_changes();
        let Ok(mut mirrored) = self.mirrored.lock() else {
            return;
        };
        if mirrored.retired {
            return;
        }
        // What it listed is known (and indexed) even when a key is not served here.
        if let Ok(mut known) = self.known.lock() {
            let keys: HashSet<String> = desired.iter().map(|(k, ..)| k.clone()).collect();
            let old = std::mem::replace(known.of(kind), keys);
            self.owners.replace(kind, &self.link, &old, known.of(kind));
        }
        if kind == Kind::Tools {
            mirrored.searchable = None;
        }
        let current = match kind {
            Kind::Tools => &mut mirrored.tools,
            Kind::Prompts => &mut mirrored.prompts,
            Kind::Resources => &mut mirrored.resources,
            Kind::Templates => &mut mirrored.templates,
        };
        let desired: Vec<(String, Value, T, String)> = desired
            .into_iter()
            .map(|(key, item, original)| {
                let def = serde_json::to_value(&item).unwrap_or(Value::Null);
                (key, def, item, original)
            })
            .collect();
        let keep: HashMap<&str, &Value> =
            desired.iter().map(|(k, d, ..)| (k.as_str(), d)).collect();
        let stale: Vec<String> = current
            .iter()
            .filter(|(k, d)| keep.get(k.as_str()) != Some(d))
            .map(|(k, _)| k.clone())
            .collect();
        for key in stale {
            if let Err(e) = remove(&key) {
                tracing::debug!(upstream = %self.link.name, item = %key, error = %e, "not removed");
            }
            current.remove(&key);
        }
        for (key, def, item, original) in desired {
            if current.contains_key(&key) {
                continue;
            }
            match add(item, original) {
                Ok(()) => {
                    current.insert(key, def);
                }
                Err(e) => self.skipped(kind, &key, &e.to_string()),
            }
        }
    }
}

/// A tool as the gateway serves it: its prefixed name, its definition under that name (run
/// as a plain call), and its upstream name; or why it is left out.
fn served_tool(
    upstream: &str,
    separator: &str,
    tool: Tool,
    tasks: Option<&ClientSession>,
) -> Result<(String, Tool, String), &'static str> {
    let support = crate::tasks::served_support(tasks, &tool);
    if support.is_none() && tool.task_support() == TaskSupport::Required {
        return Err("it runs only as a task, and its upstream does not offer tasks");
    }
    let name = names::prefixed_name(upstream, separator, &tool.name)
        .ok_or("its prefixed name breaks the tool-name rules")?;
    let original = tool.name.clone();
    let mut served = tool;
    served.name = name.clone();
    // Its `execution` as the upstream declared it when the gateway serves the upstream's tasks
    // (a 2026-07-28 upstream's tools declare none: `tasks::served_support`).
    match support {
        None => served.execution = None,
        Some(s) if s != served.task_support() => served = served.with_task_support(s),
        Some(_) => {}
    }
    Ok((name, served, original))
}

/// Follows the tool list of a client's own upstream session while both sessions live: each
/// tool it lists that the gateway's shared session does not (or lists otherwise) is a tool of
/// that client's session only ([`ServerSession::add_tool`], which tells that client its list
/// changed), taken away when the upstream no longer lists it or the own session ends. So a
/// client whose calls change its upstream's tools (a stdio upstream is one process per
/// session) sees the change, and no other client does.
async fn follow_own_tools(
    link: Arc<Link>,
    own: ClientSession,
    front: ServerSession,
    limits: Limits,
) {
    let Some(caps) = own.server_capabilities().tools.clone() else {
        return;
    };
    let follows = caps.list_changed == Some(true);
    let mut added: HashMap<String, Value> = HashMap::new();
    let mut listed = own.list_tools().await;
    let mut listen = None;
    loop {
        match listed {
            Ok(tools) => sync_own_tools(&link, &front, tools, &mut added, &limits).await,
            Err(e) => {
                tracing::debug!(upstream = %link.name, error = %e, "a client's own tool list was not read");
                if !own.is_open() {
                    break;
                }
            }
        }
        if !follows {
            tokio::select! {
                () = own.closed() => {}
                () = front.closed() => {}
            }
            break;
        }
        let changed = async {
            if own.era() == Era::Legacy {
                return own.tools_changed().await.ok();
            }
            if listen.is_none() {
                let filter = SubscriptionFilter {
                    tools_list_changed: Some(true),
                    ..Default::default()
                };
                listen = own.listen(filter).await.ok();
            }
            let stream = listen.as_mut()?;
            while let Some(event) = stream.next().await {
                if matches!(event, ListenEvent::ToolsListChanged) {
                    return own.list_tools().await.ok();
                }
            }
            None
        };
        listed = tokio::select! {
            r = changed => match r {
                Some(tools) => Ok(tools),
                None => break,
            },
            () = front.closed() => break,
        };
    }
    for name in added.keys() {
        let _ = front.remove_tool(name).await;
    }
}

/// Makes the client's session tools those of `tools` that the shared session does not list
/// as they are.
async fn sync_own_tools(
    link: &Arc<Link>,
    front: &ServerSession,
    tools: Vec<Tool>,
    added: &mut HashMap<String, Value>,
    limits: &Limits,
) {
    let shared: HashMap<String, Value> = link
        .session()
        .and_then(|s| s.cached_tools())
        .unwrap_or_default()
        .into_iter()
        .map(|t| {
            (
                t.name.clone(),
                serde_json::to_value(&t).unwrap_or(Value::Null),
            )
        })
        .collect();
    let mut own = HashMap::new();
    let shared_session = link.session();
    for tool in tools.into_iter().take(limits.max_items) {
        let def = serde_json::to_value(&tool).unwrap_or(Value::Null);
        if shared.get(&tool.name) == Some(&def) {
            continue;
        }
        if let Ok((name, served, original)) =
            served_tool(&link.name, &link.separator, tool, shared_session.as_ref())
        {
            own.insert(name, (def, served, original));
        }
    }
    let gone: Vec<String> = added
        .iter()
        .filter(|(name, def)| own.get(*name).map(|(d, ..)| d) != Some(*def))
        .map(|(name, _)| name.clone())
        .collect();
    for name in gone {
        added.remove(&name);
        if !own.contains_key(&name) {
            let _ = front.remove_tool(&name).await;
        }
    }
    for (name, (def, served, original)) in own {
        if added.contains_key(&name) {
            continue;
        }
        let (l, lim) = (link.clone(), limits.clone());
        // Boxed: the handler's future holds `session_for`'s, which starts this follower.
        let handler = move |call: ToolCall| -> futures::future::BoxFuture<
            'static,
            Result<CallToolResult, ToolError>,
        > {
            Box::pin(forward_call(l.clone(), original.clone(), call, lim.clone()))
        };
        match front.add_tool(served, handler).await {
            Ok(()) => {
                added.insert(name, def);
            }
            Err(e) => {
                tracing::warn!(upstream = %link.name, tool = %name, error = %e, "a tool of a client's own session is not served to it")
            }
        }
    }
}

/// Request options for a forwarded request: the bound, and the client's cancellation passed on
/// (a cancelled client request cancels the upstream's, which is told `notifications/cancelled`).
/// The request's own token, not a child of it: the client's request only watches the token it is
/// given, never cancels it, and a child costs a lock of the parent's node to make and to drop.
fn options(cx: &switchboard_server::Context, timeout: Duration) -> RequestOptions {
    RequestOptions::default()
        .with_timeout(timeout)
        .with_cancel(cx.cancellation().clone())
}

/// `tools/call` of `name` on the upstream. Its progress goes to the client that asked for
/// progress; its failure to answer (down, closed, timed out) is an `isError` result naming it.
async fn forward_call(
    link: Arc<Link>,
    name: String,
    call: ToolCall,
    limits: Limits,
) -> Result<CallToolResult, ToolError> {
    let cx = call.cx;
    // A 2026-07-28 upstream decides whether the call becomes a task (`tasks::call_modern`):
    // until it answers with one, the gateway's call is not a task (its waits, from the first,
    // are for the upstream, whose asks for input are the client's input-required rounds).
    // The shared session is read once (a lock and a clone), for all three uses below.
    let Some(shared) = link.session() else {
        return Ok(CallToolResult::error(link.down()));
    };
    let deferred = shared.era() == switchboard_client::Era::Modern && cx.defer_task();
    // A task of the gateway's (the client asked for one, or the tool requires one) runs on the
    // upstream as a task of its own when the upstream offers tasks for the tool (`tasks`).
    let support = crate::tasks::support_of(&shared, &name);
    let Some((session, in_flight)) = link.session_with(shared, &cx, &limits).await else {
        return Ok(CallToolResult::error(link.down()));
    };
    let mut opts = options(&cx, limits.call_timeout);
    let mut params =
        CallToolRequestParams::new(&name).with_arguments(Value::Object(call.arguments));
    let modern_up = session.era() == switchboard_client::Era::Modern;
    let as_task = support != TaskSupport::Forbidden
        && if modern_up {
            deferred
        } else {
            support == TaskSupport::Required || cx.run_as_task().await
        };
    if !as_task && cx.progress_token().is_none() {
        // The common call: no progress to report, no task to follow, so nothing to wait for
        // but the answer (no watch channels, no select over them).
        let result =
            Box::pin(session.request::<_, CallToolResult>(methods::TOOLS_CALL, params, opts)).await;
        if let Some(in_flight) = &in_flight {
            in_flight.flush().await;
        }
        return answer_of(&link, &name, result);
    }
    let upstream_task = as_task && !modern_up;
    // Progress: the engine's callback is synchronous, so it keeps the latest update in a watch
    // (nothing queues: updates that come faster than the client is told are coalesced into
    // the latest, which carries the later value) and this task reports it on the client's
    // request.
    // On the client's own session the client's token is passed on as it is (no other client
    // shares the session, so no token can collide); on the shared one, each request gets a
    // token of the gateway's session.
    let (tx, mut rx) = tokio::sync::watch::channel::<Option<ProgressUpdate>>(None);
    let mut _watch = None;
    let task_progress = upstream_task.then(|| {
        let tx = tx.clone();
        move |u| {
            tx.send_replace(Some(u));
        }
    });
    if upstream_task {
        // The upstream task's progress, under a token of the gateway's session there, for
        // the task's whole life (the gateway's task keeps its client's token as long).
    } else if let Some(token) = cx.progress_token() {
        let verbatim = in_flight.as_ref().and_then(|_| {
            let tx = tx.clone();
            let watch = session.peer().watch_progress(token.clone(), move |u| {
                tx.send_replace(Some(u));
            });
            watch.ok()
        });
        match verbatim {
            Some(watch) => {
                _watch = Some(watch);
                let mut meta = params.meta.take().unwrap_or_default();
                meta.0.insert("progressToken".into(), token.to_value());
                params.meta = Some(meta);
            }
            None => {
                opts = opts.with_progress(move |u| {
                    tx.send_replace(Some(u));
                });
            }
        }
    } else {
        drop(tx);
    }
    let mut started = None;
    let mut _stop = None;
    // The upstream task's status messages, shown on the gateway's task (`[TK-20]`).
    let (message_tx, mut message_rx) = tokio::sync::watch::channel::<Option<String>>(None);
    let forwarded: futures::future::BoxFuture<'_, Result<CallToolResult, ClientError>> =
        if as_task && modern_up {
            let (call, on_task, stop) = crate::tasks::call_modern(&session, params, opts);
            started = Some(on_task);
            _stop = Some(stop);
            Box::pin(async move {
                call.await.unwrap_or_else(|e| {
                    Err(ClientError::Request(RequestError::ConnectionLost(format!(
                        "the forwarded call ended: {e}"
                    ))))
                })
            })
        } else if let Some(on_progress) = task_progress {
            // A 2026-07-28 request's cancellation ends with its exchange, which ends when the
            // call becomes a task: the task's end is its work being dropped (`tasks/cancel`).
            let cancel = if cx.is_modern() {
                switchboard_client::CancellationToken::new()
            } else {
                cx.cancellation().clone()
            };
            // The wait is the task's: no call timeout (an upstream that goes away ends it).
            let opts = RequestOptions::default()
                .without_timeout()
                .with_cancel(cancel.child_token());
            Box::pin(crate::tasks::call(
                session.clone(),
                params,
                cx.task_ttl(),
                opts,
                cancel,
                on_progress,
                move |m| {
                    message_tx.send_replace(m);
                },
            ))
        } else {
            Box::pin(session.request::<_, CallToolResult>(methods::TOOLS_CALL, params, opts))
        };
    tokio::pin!(forwarded);
    let report = |u: Option<ProgressUpdate>| {
        let cx = &cx;
        async move {
            if let Some(u) = u {
                let _ = cx.progress(u.progress, u.total, u.message.as_deref()).await;
            }
        }
    };
    let became_task = async {
        match started.as_mut() {
            Some(rx) => rx.await.is_ok(),
            None => std::future::pending().await,
        }
    };
    tokio::pin!(became_task);
    let mut is_task = false;
    let result = loop {
        tokio::select! {
            biased;
            Ok(()) = rx.changed() => {
                let latest = rx.borrow_and_update().clone();
                report(latest).await;
            }
            Ok(()) = message_rx.changed() => {
                let message = message_rx.borrow_and_update().clone();
                cx.set_task_message(message.as_deref()).await;
            }
            true = &mut became_task, if !is_task => {
                // The upstream made the call its task: so does the gateway (the rest of this
                // handler is the gateway's task's work).
                is_task = true;
                cx.run_as_task().await;
            }
            r = &mut forwarded => break r,
        }
    };
    // An update that came with the answer is reported before it, as are its log lines.
    if rx.has_changed().unwrap_or(false) {
        let latest = rx.borrow_and_update().clone();
        report(latest).await;
    }
    if let Some(in_flight) = &in_flight {
        in_flight.flush().await;
    }
    answer_of(&link, &name, result)
}

/// The client's answer to a forwarded `tools/call` from the upstream's.
fn answer_of(
    link: &Link,
    name: &str,
    result: Result<CallToolResult, ClientError>,
) -> Result<CallToolResult, ToolError> {
    match result {
        Ok(r) => Ok(with_gateway_uris(&link.name, neutral_call(r))),
        Err(ClientError::Request(RequestError::Rejected(obj))) => Err(ToolError::Rpc(obj)),
        Err(e) => {
            tracing::warn!(upstream = %link.name, tool = %name, error = %e, "forwarded call failed");
            Ok(CallToolResult::error(link.failed(&e)))
        }
    }
}

/// `prompts/get` of `name` on the upstream.
async fn forward_get(
    link: Arc<Link>,
    name: String,
    get: PromptGet,
    limits: Limits,
) -> Result<GetPromptResult, ErrorObject> {
    let Some((session, _in_flight)) = link.session_for(&get.cx, &limits).await else {
        return Err(ErrorObject::internal(link.down()));
    };
    let params = json!({"name": name, "arguments": get.arguments});
    session
        .request(
            methods::PROMPTS_GET,
            params,
            options(&get.cx, limits.call_timeout),
        )
        .await
        .map(neutral)
        .map_err(|e| rpc_error(&link, &e))
}

/// `resources/read` on the upstream: of `original` for a listed resource, else of the
/// requested URI rewritten back (a templated one). The contents' URIs come back rewritten.
async fn forward_read(
    link: Arc<Link>,
    original: Option<String>,
    read: ResourceRead,
    limits: Limits,
) -> Result<ReadResourceResult, ErrorObject> {
    let Some((session, _in_flight)) = link.session_for(&read.cx, &limits).await else {
        return Err(ErrorObject::internal(link.down()));
    };
    let timeout = limits.call_timeout;
    let uri = match original {
        Some(uri) => uri,
        None => names::upstream_uri(&link.name, &read.uri).ok_or_else(|| {
            ErrorObject::internal(format!(
                "{} is not a URI of upstream `{}`",
                read.uri, link.name
            ))
        })?,
    };
    let mut result: ReadResourceResult = session
        .request(
            methods::RESOURCES_READ,
            json!({"uri": uri}),
            options(&read.cx, timeout),
        )
        .await
        .map(neutral)
        .map_err(|e| rpc_error(&link, &e))?;
    for contents in &mut result.contents {
        let uri = match contents {
            switchboard_types::content::ResourceContents::Text(t) => &mut t.uri,
            switchboard_types::content::ResourceContents::Blob(b) => &mut b.uri,
        };
        if let Some(served) = names::prefixed_uri(&link.name, uri) {
            *uri = served;
        }
    }
    Ok(result)
}

/// A tool result with the URIs of its resource links and embedded resources rewritten to the
/// gateway's (so that a client can read them through the gateway). In place, on the typed
/// result (a call's hot path: no JSON value built).
fn with_gateway_uris(upstream: &str, mut result: CallToolResult) -> CallToolResult {
    use switchboard_types::ContentBlock;
    use switchboard_types::content::ResourceContents;
    if upstream.is_empty() {
        return result;
    }
    let rewrite = |uri: &mut String| {
        if let Some(served) = names::prefixed_uri(upstream, uri) {
            *uri = served;
        }
    };
    for block in &mut result.content {
        match block {
            ContentBlock::ResourceLink(link) => rewrite(&mut link.resource.uri),
            ContentBlock::Resource(embedded) => match &mut embedded.resource {
                ResourceContents::Text(t) => rewrite(&mut t.uri),
                ResourceContents::Blob(b) => rewrite(&mut b.uri),
            },
            // (A block of either type that does not parse as one fails the whole result: an
            // unknown block is never a link or a resource.)
            _ => {}
        }
    }
    result
}

/// [`neutral`] for a tool result, in place on the typed result (a call's hot path): the
/// upstream's own members are among its unknown ones, its `serverInfo` in its `_meta`.
fn neutral_call(mut result: CallToolResult) -> CallToolResult {
    let mut changed = false;
    for key in UPSTREAM_ONLY {
        changed |= result.extra.remove(key).is_some();
    }
    if let Some(meta) = result.meta.as_mut() {
        changed |= meta.0.remove(UPSTREAM_META).is_some();
    }
    // As `neutral`: a `_meta` left empty goes when anything was taken out.
    if changed && result.meta.as_ref().is_some_and(|m| m.0.is_empty()) {
        result.meta = None;
    }
    result
}

/// Members of a 2026-07-28 result that are the upstream's own answer to the gateway's client,
/// not the gateway's to its clients: the cache hints (the gateway's server sets its own), the
/// result type, and the upstream's `serverInfo` in `_meta`.
const UPSTREAM_ONLY: [&str; 3] = ["cacheScope", "ttlMs", "resultType"];
const UPSTREAM_META: &str = "io.modelcontextprotocol/serverInfo";

/// A forwarded result without what is the upstream's own ([`UPSTREAM_ONLY`]): the gateway's
/// server answers each client in its own era.
fn neutral<T: Serialize + serde::de::DeserializeOwned>(result: T) -> T {
    let Ok(mut value) = serde_json::to_value(&result) else {
        return result;
    };
    let Some(object) = value.as_object_mut() else {
        return result;
    };
    let mut changed = false;
    for key in UPSTREAM_ONLY {
        changed |= object.remove(key).is_some();
    }
    if let Some(meta) = object.get_mut("_meta").and_then(Value::as_object_mut) {
        changed |= meta.remove(UPSTREAM_META).is_some();
        if meta.is_empty() {
            object.remove("_meta");
        }
    }
    if !changed {
        return result;
    }
    serde_json::from_value(value).unwrap_or(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_result_loses_the_upstreams_cache_hints_and_server_info() {
        let r: ReadResourceResult = serde_json::from_value(json!({
            "contents": [{"uri": "test://x", "text": "x"}],
            "cacheScope": "private", "ttlMs": 0, "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}, "keep": 1}
        }))
        .expect("a result");
        let v = serde_json::to_value(neutral(r)).expect("json");
        assert_eq!(
            v,
            json!({"contents": [{"uri": "test://x", "text": "x"}], "_meta": {"keep": 1}})
        );
    }

    /// The rewrite of the URIs as it was, on the result's JSON: the typed one must agree.
    fn uris_on_json(upstream: &str, result: &CallToolResult) -> Value {
        let mut value = serde_json::to_value(result).expect("json");
        if let Some(blocks) = value.get_mut("content").and_then(Value::as_array_mut) {
            for block in blocks {
                let slot = match block.get("type").and_then(Value::as_str) {
                    Some("resource_link") => block.get_mut("uri"),
                    Some("resource") => block.get_mut("resource").and_then(|r| r.get_mut("uri")),
                    _ => None,
                };
                if let Some(slot) = slot
                    && let Some(uri) = slot.as_str().and_then(|u| names::prefixed_uri(upstream, u))
                {
                    *slot = Value::String(uri);
                }
            }
        }
        value
    }

    #[test]
    fn a_tool_result_is_rewritten_in_place_as_on_its_json() {
        let results = [
            json!({"content": [{"type": "text", "text": "3"}]}),
            json!({"content": [{"type": "text", "text": "3"}], "_meta": {}}),
            json!({"content": [], "isError": false, "structuredContent": {"sum": 3}, "other": 1}),
            json!({
                "content": [
                    {"type": "resource_link", "uri": "test://a", "name": "a"},
                    {"type": "resource", "resource": {"uri": "file:///b", "text": "b"}},
                    {"type": "resource", "resource": {"uri": "test://c", "blob": "AA=="}},
                    {"type": "resource_link", "uri": "no-scheme", "name": "d"},
                    {"type": "later", "uri": "test://f"}
                ],
                "cacheScope": "private", "ttlMs": 0, "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}}
            }),
            json!({
                "content": [],
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "1"}, "keep": 1}
            }),
        ];
        for (i, raw) in results.into_iter().enumerate() {
            let r: CallToolResult = serde_json::from_value(raw).expect("a result");
            let expected = uris_on_json("files", &neutral(r.clone()));
            let typed = serde_json::to_value(with_gateway_uris("files", neutral_call(r.clone())))
                .expect("json");
            assert_eq!(typed, expected, "result {i}");
            // Mounted without a prefix: only the upstream's own members go.
            let bare =
                serde_json::to_value(with_gateway_uris("", neutral_call(r.clone()))).expect("json");
            assert_eq!(
                bare,
                serde_json::to_value(neutral(r)).expect("json"),
                "result {i}"
            );
        }
    }

    #[test]
    fn the_owners_index_follows_each_upstreams_listings() {
        let link = |name: &str| {
            Arc::new(Link::new(
                UpstreamConfig::new(name, crate::config::UpstreamKind::Stdio("true".into())),
                "_".into(),
            ))
        };
        let (a, b) = (link("a"), link("b"));
        let set = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect::<HashSet<_>>();
        let names = |owners: &Owners, kind, key: &str| {
            owners.with(kind, key, |links| {
                links.iter().map(|l| l.name.clone()).collect::<Vec<_>>()
            })
        };
        let owners = Owners::default();
        owners.replace(Kind::Tools, &a, &set(&[]), &set(&["x", "y"]));
        owners.replace(Kind::Tools, &b, &set(&[]), &set(&["y"]));
        assert_eq!(names(&owners, Kind::Tools, "x"), ["a"]);
        assert_eq!(names(&owners, Kind::Tools, "y"), ["a", "b"]);
        assert!(names(&owners, Kind::Prompts, "x").is_empty(), "by kind");
        // A new listing of `a` without `y`: `y` is `b`'s only.
        owners.replace(Kind::Tools, &a, &set(&["x", "y"]), &set(&["x", "z"]));
        assert_eq!(names(&owners, Kind::Tools, "y"), ["b"]);
        assert_eq!(names(&owners, Kind::Tools, "z"), ["a"]);
        // `a` retired: nothing of it is left.
        owners.replace(Kind::Tools, &a, &set(&["x", "z"]), &set(&[]));
        assert!(names(&owners, Kind::Tools, "x").is_empty());
        assert!(
            !owners.0.read().expect("lock")[0].contains_key("x"),
            "no empty entry"
        );
    }
}
