//! The gateway's own layer on its server, around every client request: the [`Policy`] (a
//! listing keeps only what the caller may use; a use of anything else is refused) and the
//! answer for an item whose upstream is down or was removed (an `isError` result naming the
//! upstream for a call, an error naming it for a get or read: never "unknown tool").

use std::sync::Arc;

use serde_json::Value;
use switchboard_jsonrpc::{BoxFuture, Call, Facts, HandlerResult, Layer, Next};
use switchboard_types::tools::CallToolResult;
use switchboard_types::{ErrorObject, RawJson, methods};

use crate::mirror::Kind;
use crate::policy::{Caller, Policy};
use crate::registry::Registry;

/// The front layer.
pub(crate) struct Front {
    pub(crate) registry: Arc<Registry>,
    /// The policy in force: shared (a reload swaps the `Arc`), never copied per call.
    pub(crate) policy: Arc<std::sync::RwLock<Arc<Policy>>>,
    /// The bound on a forwarded `completion/complete`.
    pub(crate) call_timeout: std::time::Duration,
}

fn caller(facts: &Facts) -> Caller<'_> {
    Caller {
        subject: facts.subject.as_deref(),
        scopes: &facts.scopes,
    }
}

/// The gateway's server's name and version.
pub(crate) fn gateway_info() -> switchboard_types::lifecycle::Implementation {
    switchboard_types::lifecycle::Implementation::new(
        "switchboard-gateway",
        env!("CARGO_PKG_VERSION"),
    )
}

/// A result this layer answers itself (the server adds the 2026-07-28 members to its handlers'
/// results, not to a layer's), in the caller's era: without the upstream's own members
/// (`resultType`, cache hints, its `serverInfo`), and for a 2026-07-28 caller with
/// `resultType` and the gateway's `serverInfo`.
fn answered(facts: &Facts, value: &impl serde::Serialize) -> HandlerResult {
    use switchboard_types::modern::SERVER_INFO_KEY;
    let mut value = serde_json::to_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode the answer: {e}")))?;
    if let Some(o) = value.as_object_mut() {
        for k in ["resultType", "cacheScope", "ttlMs"] {
            o.remove(k);
        }
        if let Some(meta) = o.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove(SERVER_INFO_KEY);
            if meta.is_empty() {
                o.remove("_meta");
            }
        }
        if facts.protocol_version.is_some_and(|v| v.is_modern()) {
            o.insert("resultType".into(), Value::String("complete".into()));
            let meta = o
                .entry("_meta")
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(meta) = meta.as_object_mut() {
                let info = serde_json::to_value(gateway_info()).unwrap_or_default();
                meta.insert(SERVER_INFO_KEY.into(), info);
            }
        }
    }
    raw(&value)
}

fn raw(value: &impl serde::Serialize) -> HandlerResult {
    serde_json::value::to_raw_value(value)
        .map_err(|e| ErrorObject::internal(format!("cannot encode the answer: {e}")))
}

/// Which kind a list or use method is about, with the key of its items in a listing.
fn listed(method: &str) -> Option<(Kind, &'static str, &'static str)> {
    match method {
        methods::TOOLS_LIST => Some((Kind::Tools, "tools", "name")),
        methods::PROMPTS_LIST => Some((Kind::Prompts, "prompts", "name")),
        methods::RESOURCES_LIST => Some((Kind::Resources, "resources", "uri")),
        methods::RESOURCES_TEMPLATES_LIST => {
            Some((Kind::Templates, "resourceTemplates", "uriTemplate"))
        }
        _ => None,
    }
}

fn used(method: &str) -> Option<Kind> {
    match method {
        methods::PROMPTS_GET => Some(Kind::Prompts),
        methods::RESOURCES_READ | methods::RESOURCES_SUBSCRIBE | methods::RESOURCES_UNSUBSCRIBE => {
            Some(Kind::Resources)
        }
        _ => None,
    }
}

impl Front {
    /// Whether the caller may use item `key` of `kind`.
    fn allows(&self, policy: &Policy, facts: &Facts, kind: Kind, key: &str) -> bool {
        if policy.is_open() {
            return true;
        }
        let owner = self.registry.owner(kind, key);
        let upstream = owner.as_ref().map(|o| o.name.as_str());
        let who = caller(facts);
        match (kind, upstream) {
            (Kind::Tools, _) => policy.allows_tool(&who, upstream, key),
            (_, Some(u)) => policy.allows_upstream(&who, u),
            // Nothing of an upstream's: the gateway's own.
            (_, None) => true,
        }
    }

    fn policy(&self) -> Arc<Policy> {
        self.policy
            .read()
            .map(|p| Arc::clone(&p))
            .unwrap_or_default()
    }

    /// A listing's items the caller may not use, taken out.
    fn filter(
        &self,
        facts: &Facts,
        kind: Kind,
        field: &str,
        key: &str,
        raw_result: RawJson,
    ) -> HandlerResult {
        let policy = self.policy();
        if policy.is_open() {
            return Ok(raw_result);
        }
        let Ok(mut result) = serde_json::from_str::<Value>(raw_result.get()) else {
            return Ok(raw_result);
        };
        if let Some(items) = result.get_mut(field).and_then(Value::as_array_mut) {
            items.retain(|item| {
                item.get(key)
                    .and_then(Value::as_str)
                    .is_some_and(|k| self.allows(&policy, facts, kind, k))
            });
        }
        raw(&result)
    }
}

impl Layer for Front {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let method = call.method().to_owned();
        if method == methods::INITIALIZE || method == methods::SERVER_DISCOVER {
            return self.offer(call, next);
        }
        if let Some((kind, field, key)) = listed(&method) {
            let facts = call.facts().clone();
            let registry = self.registry.clone();
            let policy = self.policy.clone();
            let answer = next.run(call);
            return Box::pin(async move {
                let result = answer.await?;
                Front {
                    registry,
                    policy,
                    call_timeout: std::time::Duration::ZERO,
                }
                .filter(&facts, kind, field, key, result)
            });
        }
        if method == methods::TOOLS_CALL {
            let Some(name) = call.target().map(str::to_owned) else {
                return next.run(call);
            };
            if !self.allows(&self.policy(), call.facts(), Kind::Tools, &name) {
                return refused(&name);
            }
            if let Some(text) = self
                .registry
                .owner(Kind::Tools, &name)
                .and_then(|o| o.unavailable())
            {
                let result = answered(call.facts(), &CallToolResult::error(text));
                return Box::pin(async move { result });
            }
            return next.run(call);
        }
        if let Some(kind) = used(&method) {
            let Some(key) = call.target().map(str::to_owned) else {
                return next.run(call);
            };
            if !self.allows(&self.policy(), call.facts(), kind, &key) {
                return refused(&key);
            }

            // A templated URI is not in any listing: its upstream is found by its prefix.
            let owner = self.registry.owner(kind, &key);
            if let Some(text) = owner.as_ref().and_then(|o| o.unavailable()) {
                return Box::pin(async move { Err(ErrorObject::internal(text)) });
            }
            let subscribing = method == methods::RESOURCES_SUBSCRIBE;
            if subscribing || method == methods::RESOURCES_UNSUBSCRIBE {
                let mirror = owner.and_then(|o| self.registry.mirror(&o.name));
                // The server's session number: the key of the client's own upstream sessions.
                let client = call.facts().connection;
                let answer = next.run(call);
                return Box::pin(async move {
                    let result = answer.await?;
                    if let Some(mirror) = mirror {
                        if subscribing {
                            mirror.subscribe_for(client, &key).await.map_err(|e| {
                                ErrorObject::internal(format!(
                                    "upstream `{}` refused the subscription: {e}",
                                    mirror.link.name
                                ))
                            })?;
                        } else {
                            mirror.unsubscribe_for(client, &key).await;
                        }
                    }
                    Ok(result)
                });
            }
        }
        if method == methods::COMPLETION_COMPLETE {
            return self.complete(call);
        }
        if method == methods::SUBSCRIPTIONS_LISTEN {
            return self.listen(call, next);
        }
        next.run(call)
    }
}

impl Front {
    /// `initialize` and `server/discover`: tasks are offered only while an upstream up offers
    /// them (`tasks`).
    fn offer(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let registry = self.registry.clone();
        let answer = next.run(call);
        Box::pin(async move {
            let result = answer.await?;
            let offered = registry.mirrors().iter().any(|m| {
                m.link.is_ready() && m.link.session().is_some_and(|s| crate::tasks::served(&s))
            });
            if offered {
                return Ok(result);
            }
            let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
                return Ok(result);
            };
            crate::tasks::hide_offer(&mut value);
            raw(&value)
        })
    }
}

/// The upstream subscriptions a 2026-07-28 listen stream holds: released (in the background)
/// when the stream ends, however it ends.
struct Held(Vec<(Arc<crate::mirror::Mirror>, String)>);

impl Drop for Held {
    fn drop(&mut self) {
        let held = std::mem::take(&mut self.0);
        if held.is_empty() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for (mirror, uri) in held {
                    mirror.unsubscribe(&uri).await;
                }
            });
        }
    }
}

impl Front {
    /// `subscriptions/listen` (2026-07-28): each resource URI of the filter that is an
    /// upstream's (and the caller may use) is subscribed upstream before the stream opens (so
    /// an update right after the acknowledgement is not missed) and for as long as it is open;
    /// the upstream's `notifications/resources/updated` then reaches the stream with the
    /// gateway's URI through the server. List changes need nothing here: the gateway's own
    /// `list_changed` already reaches every listen stream that asked for it.
    fn listen(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let uris: Vec<String> = call
            .request
            .params
            .as_ref()
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| {
                p.pointer("/notifications/resourceSubscriptions")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
            })
            .unwrap_or_default();
        let policy = self.policy();
        let mut wanted = Vec::new();
        for uri in uris {
            if !self.allows(&policy, call.facts(), Kind::Resources, &uri) {
                continue;
            }
            if let Some(mirror) = self
                .registry
                .owner(Kind::Resources, &uri)
                .and_then(|o| self.registry.mirror(&o.name))
                && !wanted.iter().any(|(_, u)| u == &uri)
            {
                wanted.push((mirror, uri));
            }
        }
        if wanted.is_empty() {
            return next.run(call);
        }
        Box::pin(async move {
            let mut held = Held(Vec::new());
            for (mirror, uri) in wanted {
                match mirror.subscribe(&uri).await {
                    Ok(()) => held.0.push((mirror, uri)),
                    Err(e) => {
                        tracing::warn!(upstream = %mirror.link.name, uri = %uri, error = %e, "a listen stream's resource is not subscribed upstream")
                    }
                }
            }
            let answer = next.run(call).await;
            drop(held);
            answer
        })
    }
}

impl Front {
    /// `completion/complete` of a prompt's or resource template's argument, forwarded to the
    /// item's upstream with the reference rewritten to the upstream's name or URI; no values
    /// when the upstream does not complete (or the item is no upstream's).
    fn complete(&self, call: Call) -> BoxFuture<HandlerResult> {
        let facts = call.facts().clone();
        let none = move || answered(&facts, &serde_json::json!({"completion": {"values": []}}));
        let Some(mut params) = call
            .request
            .params
            .as_ref()
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
        else {
            return Box::pin(async {
                Err(ErrorObject::invalid_params(format!(
                    "{} needs params",
                    methods::COMPLETION_COMPLETE
                )))
            });
        };
        let reference = params.get("ref").cloned().unwrap_or_default();
        let (kind, field) = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => (Kind::Prompts, "name"),
            Some("ref/resource") => (Kind::Templates, "uri"),
            _ => return Box::pin(async move { none() }),
        };
        let Some(key) = reference
            .get(field)
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Box::pin(async move { none() });
        };
        if !self.allows(&self.policy(), call.facts(), kind, &key) {
            return refused(&key);
        }
        let Some(owner) = self.registry.owner(kind, &key) else {
            return Box::pin(async move { none() });
        };
        if let Some(text) = owner.unavailable() {
            return Box::pin(async move { Err(ErrorObject::internal(text)) });
        }
        // On the client's own upstream session when it holds one (what the upstream asks
        // while completing then reaches that client, through one of its calls in flight, and
        // never another), else on the gateway's, whose client the upstream cannot ask. A
        // completion does not open one (a layer has no `Context` to open it with): for a
        // 2026-07-28 client that is no loss, since a completion may not ask the client for
        // input in that revision (`[D26-34]`: only `tools/call`, `prompts/get` and
        // `resources/read` may), so nothing the upstream asks while completing could reach the
        // client on any session, and over HTTP each of its requests is an exchange of its own,
        // so no own session outlives the call that opened it.
        let mirror = self.registry.mirror(&owner.name);
        let own = call
            .facts()
            .connection
            .and_then(|c| mirror.as_ref()?.link.affinity.of(c))
            .and_then(|b| b.session());
        let Some(session) = own.or_else(|| mirror.and_then(|m| m.link.session())) else {
            return Box::pin(async move { none() });
        };
        if session.server_capabilities().completions.is_none() {
            return Box::pin(async move { none() });
        }
        let original = match kind {
            Kind::Prompts if owner.name.is_empty() => Some(key.clone()),
            Kind::Prompts => key
                .strip_prefix(&owner.name)
                .and_then(|r| r.strip_prefix(&self.registry.separator))
                .map(str::to_owned),
            _ => crate::names::upstream_uri(&owner.name, &key),
        };
        let Some(original) = original else {
            return Box::pin(async move { none() });
        };
        params["ref"][field] = Value::String(original);
        // The 2026-07-28 envelope (`io.modelcontextprotocol/*` in `_meta`) is the client's to
        // the gateway; the gateway's client puts its own on what it sends.
        if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
            if meta.is_empty() {
                params.as_object_mut().map(|p| p.remove("_meta"));
            }
        }
        let opts = switchboard_client::RequestOptions::default()
            .with_timeout(self.call_timeout)
            .with_cancel(call.context.cancellation().child_token());
        let facts = call.facts().clone();
        Box::pin(async move {
            let answer: Value = session
                .request(methods::COMPLETION_COMPLETE, params, opts)
                .await
                .map_err(|e| match e {
                    switchboard_client::ClientError::Request(
                        switchboard_jsonrpc::RequestError::Rejected(obj),
                    ) => obj,
                    other => {
                        ErrorObject::internal(format!("upstream `{}` failed: {other}", owner.name))
                    }
                })?;
            answered(&facts, &answer)
        })
    }
}

/// The refusal of an item the caller may not use: -32602, the code of an unknown name, with
/// words that say neither whether it exists nor what others may use.
fn refused(key: &str) -> BoxFuture<HandlerResult> {
    let e = ErrorObject::invalid_params(format!("{key} is not available to this caller"));
    Box::pin(async move { Err(e) })
}

/// With [`GatewayConfig::pass_server_info`](crate::GatewayConfig::pass_server_info): the
/// answer to `initialize` and `server/discover` names the one upstream's server (its
/// `serverInfo` and `instructions`, as its current session declared them) instead of the
/// gateway, so that a host sees the server behind it (`switchboard dev`). With no upstream
/// connected, or more than one, the answer is left as it is.
pub(crate) struct PassServerInfo {
    pub(crate) registry: Arc<Registry>,
}

impl PassServerInfo {
    /// The methods whose answers name the server.
    pub(crate) fn scope() -> switchboard_jsonrpc::Scope {
        switchboard_jsonrpc::Scope::Methods(vec![
            methods::INITIALIZE.into(),
            methods::SERVER_DISCOVER.into(),
        ])
    }
}

impl Layer for PassServerInfo {
    fn handle(&self, call: Call, next: Next) -> BoxFuture<HandlerResult> {
        let registry = self.registry.clone();
        let answer = next.run(call);
        Box::pin(async move {
            let result = answer.await?;
            let mirrors = registry.mirrors();
            let [only] = mirrors.as_slice() else {
                return Ok(result);
            };
            let Some(session) = only.link.session() else {
                return Ok(result);
            };
            let upstream = session.negotiated();
            let Ok(mut value) = serde_json::from_str::<Value>(result.get()) else {
                return Ok(result);
            };
            let Some(o) = value.as_object_mut() else {
                return Ok(result);
            };
            let info = serde_json::to_value(&upstream.server_info).unwrap_or_default();
            if o.contains_key("serverInfo") {
                o.insert("serverInfo".into(), info.clone());
            }
            if let Some(meta) = o.get_mut("_meta").and_then(Value::as_object_mut)
                && meta.contains_key(switchboard_types::modern::SERVER_INFO_KEY)
            {
                meta.insert(switchboard_types::modern::SERVER_INFO_KEY.into(), info);
            }
            match &upstream.instructions {
                Some(text) => o.insert("instructions".into(), Value::String(text.clone())),
                None => o.remove("instructions"),
            };
            raw(&value)
        })
    }
}
