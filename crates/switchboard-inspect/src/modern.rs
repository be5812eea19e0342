//! Revision 2026-07-28 frames (SPEC-2026-NOTES): which requests are modern (their `_meta` names
//! the protocol version), what each one declared, and the D26 rules a trace can judge from the
//! frames alone. State is bounded: the open requests' facts live with the inspector's open
//! requests; the request states issued and the listen streams open are capped at
//! 4096 each (the oldest forgotten first).

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};
use switchboard_types::methods;
use switchboard_types::modern::{
    self as wire, CLIENT_CAPABILITIES_KEY, LOG_LEVEL_KEY, PROTOCOL_VERSION_KEY, SUBSCRIPTION_ID_KEY,
};

use crate::violation::Violation;

/// How many issued request states and open listen streams a trace remembers.
pub(crate) const MAX_MODERN_STATE: usize = 4096;

/// What a modern request said of itself, kept while it is open.
#[derive(Debug, Clone, Default)]
pub(crate) struct RequestFacts {
    /// The request's declared client capabilities.
    pub(crate) capabilities: Value,
    /// Whether it asked for logs.
    pub(crate) log_level: bool,
}

/// The modern era as a trace sees it.
#[derive(Default)]
pub(crate) struct ModernTracker {
    /// A request carrying the envelope was seen (and no `initialize`): the session is modern.
    pub(crate) active: bool,
    /// The server's capabilities from its `server/discover` result.
    pub(crate) server_caps: Option<Value>,
    /// Request states the server issued (`[D26-43]`: a retry echoes one exactly).
    issued: HashSet<String>,
    issued_order: VecDeque<String>,
    /// Listen streams by subscription id, and whether their acknowledgement was seen.
    listens: HashMap<String, bool>,
    listens_order: VecDeque<String>,
}

fn v(tag: &'static str, reason: impl Into<String>) -> Violation {
    Violation {
        tag,
        reason: reason.into(),
    }
}

/// Whether a request's params claim the modern era (its `_meta` names the protocol version).
pub(crate) fn claims(obj: &Map<String, Value>) -> bool {
    obj.get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .is_some()
}

impl ModernTracker {
    /// A client request of a modern session: its envelope (`[D26-8]`), the state it echoes
    /// (`[D26-43]`), the listen it opens. Returns the facts to keep while it is open.
    pub(crate) fn request(
        &mut self,
        method: &str,
        id: &Value,
        obj: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) -> RequestFacts {
        let params = obj.get("params");
        let meta = params.and_then(|p| p.get("_meta"));
        let version = meta.and_then(|m| m.get(PROTOCOL_VERSION_KEY));
        let caps = meta.and_then(|m| m.get(CLIENT_CAPABILITIES_KEY));
        if version.is_none() || caps.is_none() {
            out.push(v(
                "D26-8",
                format!(
                    "{method} lacks {} in params._meta",
                    if version.is_none() {
                        PROTOCOL_VERSION_KEY
                    } else {
                        CLIENT_CAPABILITIES_KEY
                    }
                ),
            ));
        }
        if let Some(spec) = switchboard_types::catalogue::request(method) {
            // The tasks extension brings `tasks/get` and `tasks/cancel` back (`[D26-137]`).
            if !spec.exists_in(switchboard_types::ProtocolVersion::V2026_07_28)
                && !methods::TASKS_EXTENSION_METHODS.contains(&method)
            {
                out.push(v(
                    "D26-60",
                    format!("{method} does not exist in 2026-07-28 (answered -32601)"),
                ));
            }
        }
        if let Some(state) = params.and_then(|p| p.get("requestState")) {
            match state.as_str() {
                Some(s) if self.issued.contains(s) => {}
                _ => out.push(v(
                    "D26-43",
                    "requestState is not one the server issued (it must be echoed byte for byte)",
                )),
            }
        }
        if method == methods::SUBSCRIPTIONS_LISTEN {
            self.remember_listen(id.to_string());
        }
        RequestFacts {
            capabilities: caps.cloned().unwrap_or(Value::Null),
            log_level: meta.and_then(|m| m.get(LOG_LEVEL_KEY)).is_some(),
        }
    }

    fn remember_listen(&mut self, key: String) {
        if self.listens.len() >= MAX_MODERN_STATE
            && let Some(old) = self.listens_order.pop_front()
        {
            self.listens.remove(&old);
        }
        if self.listens.insert(key.clone(), false).is_none() {
            self.listens_order.push_back(key);
        }
    }

    fn remember_state(&mut self, state: &str) {
        if self.issued.len() >= MAX_MODERN_STATE
            && let Some(old) = self.issued_order.pop_front()
        {
            self.issued.remove(&old);
        }
        if self.issued.insert(state.to_owned()) {
            self.issued_order.push_back(state.to_owned());
        }
    }

    /// The server's answer to a modern request of `method`: `resultType` (`[D26-19]`), the
    /// caching hints (`[D26-90]`..`[D26-92]`), input-required results (`[D26-34]`, `[D26-37]`,
    /// `[D26-41]`).
    pub(crate) fn result(
        &mut self,
        method: &str,
        facts: &RequestFacts,
        result: &Value,
        out: &mut Vec<Violation>,
    ) {
        let Some(obj) = result.as_object() else {
            out.push(v("D26-4", "a result that is not an object"));
            return;
        };
        let result_type = obj.get("resultType").and_then(Value::as_str);
        match result_type {
            None => out.push(v("D26-19", format!("{method} result without resultType"))),
            Some("input_required") => self.input_required(method, facts, obj, out),
            Some(_) => {
                if switchboard_types::catalogue::is_cacheable(method) {
                    let ttl_ok = obj.get("ttlMs").is_some_and(|t| t.as_u64().is_some());
                    let scope_ok = matches!(
                        obj.get("cacheScope").and_then(Value::as_str),
                        Some("public" | "private")
                    );
                    if !ttl_ok || !scope_ok {
                        out.push(v(
                            "D26-90",
                            format!("{method} result without valid ttlMs and cacheScope"),
                        ));
                    }
                }
            }
        }
        if method == methods::SERVER_DISCOVER {
            self.server_caps = obj.get("capabilities").cloned();
        }
    }

    fn input_required(
        &mut self,
        method: &str,
        facts: &RequestFacts,
        obj: &Map<String, Value>,
        out: &mut Vec<Violation>,
    ) {
        if !switchboard_types::catalogue::may_require_input(method) {
            out.push(v(
                "D26-34",
                format!("input_required answers {method}, which may not ask for input"),
            ));
        }
        let requests = obj.get("inputRequests").and_then(Value::as_object);
        let state = obj.get("requestState").and_then(Value::as_str);
        if requests.is_none() && state.is_none() {
            out.push(v(
                "D26-37",
                "input_required with neither inputRequests nor requestState",
            ));
        }
        if obj.contains_key("ttlMs") || obj.contains_key("cacheScope") {
            out.push(v("D26-92", "caching hints on an input_required result"));
        }
        if let Some(s) = state {
            self.remember_state(s);
        }
        let caps: switchboard_types::ClientCapabilities =
            serde_json::from_value(facts.capabilities.clone()).unwrap_or_default();
        for (key, request) in requests.into_iter().flatten() {
            match serde_json::from_value::<wire::InputRequest>(request.clone()) {
                Ok(r) if !r.allowed_by(&caps) => out.push(v(
                    "D26-41",
                    format!(
                        "input request {key} ({}) needs a capability the request did not declare",
                        r.method()
                    ),
                )),
                Ok(_) => {}
                Err(e) => out.push(v(
                    "D26-36",
                    format!("input request {key} is malformed: {e}"),
                )),
            }
        }
    }

    /// A server notification in a modern session: listen streams (`[D26-70]`, `[D26-72]`),
    /// logs only for requests that asked (`[D26-84]`).
    pub(crate) fn notification(
        &mut self,
        method: &str,
        params: Option<&Value>,
        any_open_asked_for_logs: bool,
        out: &mut Vec<Violation>,
    ) {
        let sub = params
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(SUBSCRIPTION_ID_KEY))
            .map(Value::to_string);
        match method {
            methods::NOTIFICATIONS_MESSAGE if !any_open_asked_for_logs => out.push(v(
                "D26-84",
                "notifications/message while no open request asked for logs",
            )),
            methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => match sub {
                Some(s) => {
                    if let Some(acked) = self.listens.get_mut(&s) {
                        *acked = true;
                    }
                }
                None => out.push(v("D26-72", "acknowledgement without a subscription id")),
            },
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED
            | methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED
            | methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED
            | methods::NOTIFICATIONS_RESOURCES_UPDATED => match sub {
                None => out.push(v(
                    "D26-72",
                    format!("{method} outside a listen stream (no subscription id)"),
                )),
                Some(s) => {
                    if self.listens.get(&s) == Some(&false) {
                        out.push(v(
                            "D26-70",
                            format!("{method} before the acknowledgement of listen {s}"),
                        ));
                    }
                }
            },
            _ => {}
        }
    }

    /// A listen stream ended (its request answered or cancelled).
    pub(crate) fn closed(&mut self, id: &Value) {
        self.listens.remove(&id.to_string());
    }
}
