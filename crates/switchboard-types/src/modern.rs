//! Revision 2026-07-28, the modern era (SPEC-2026-NOTES): the per-request `_meta` envelope,
//! `resultType`, input-required results (multi round-trip requests), `server/discover`, caching
//! hints, `subscriptions/listen`, and the three new error codes.
//!
//! Applies to both sides. There is no handshake in this era: every request names its revision,
//! the client's capabilities and (optionally) the client and a log level in `params._meta`
//! ([`RequestEnvelope`]); every result carries `resultType`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::elicitation::ElicitRequestParams;
use crate::error::{ErrorCode, ErrorObject, echo};
use crate::id::RequestId;
use crate::lifecycle::Implementation;
use crate::logging::LoggingLevel;
use crate::meta::JsonObject;
use crate::methods;
use crate::sampling::CreateMessageRequestParams;

/// `_meta` key: the revision a request speaks (required on every modern request).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's identity (optional, `[D26-11]`).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the lowest log level the client wants for this request (absent: no logs).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// Result `_meta` key: the server's identity.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// Notification and listen-result `_meta` key: the id of the `subscriptions/listen` request.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// The tasks extension's identifier (SEP-2663), under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What a modern request says about itself in `params._meta` (SPEC-2026-NOTES §3.1).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestEnvelope {
    /// The revision the request speaks, as sent (it may be one nobody serves).
    pub protocol_version: String,
    /// The client's capabilities for this request only (`[D26-13]`).
    pub client_capabilities: ClientCapabilities,
    /// The client's self-reported identity.
    pub client_info: Option<Implementation>,
    /// The level from which the client wants `notifications/message` (`None`: no logs, `[D26-84]`).
    pub log_level: Option<LoggingLevel>,
}

/// Why a request's envelope is not acceptable (-32602, `[D26-9]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EnvelopeError {
    /// The request has no `params` object.
    #[error("the request has no params object")]
    NoParams,
    /// `params._meta` is missing or not an object.
    #[error("params._meta is missing")]
    NoMeta,
    /// A required key is missing.
    #[error("params._meta[\"{0}\"] is missing")]
    Missing(&'static str),
    /// A key holds a value of the wrong shape.
    #[error("params._meta[\"{key}\"] is invalid: {why}")]
    Invalid {
        /// The key.
        key: &'static str,
        /// What is wrong, cut to the echo bound.
        why: String,
    },
}

impl EnvelopeError {
    /// The wire error (-32602 with `data.reason` and the key).
    pub fn to_error_object(&self) -> ErrorObject {
        let key = match self {
            EnvelopeError::Missing(k) | EnvelopeError::Invalid { key: k, .. } => Some(*k),
            _ => None,
        };
        ErrorObject::new(
            ErrorCode::INVALID_PARAMS,
            format!("Invalid request envelope: {self}"),
        )
        .with_data(serde_json::json!({"reason": "invalid_envelope", "key": key, "spec": "D26-9"}))
    }
}

/// Whether `text` contains [`PROTOCOL_VERSION_KEY`], as `str::contains` says, found from the
/// key's one `/`: a search for one byte (`memchr`) instead of building a substring searcher per
/// call, which costs more than the whole test on a request's params.
fn mentions_protocol_version_key(text: &str) -> bool {
    let Some((head, tail)) = PROTOCOL_VERSION_KEY.split_once('/') else {
        return text.contains(PROTOCOL_VERSION_KEY);
    };
    text.match_indices('/')
        .any(|(at, _)| text[..at].ends_with(head) && text[at + 1..].starts_with(tail))
}

impl RequestEnvelope {
    /// An envelope for `version` with `capabilities`.
    pub fn new(version: impl Into<String>, capabilities: ClientCapabilities) -> Self {
        RequestEnvelope {
            protocol_version: version.into(),
            client_capabilities: capabilities,
            client_info: None,
            log_level: None,
        }
    }

    /// Whether `params` (raw JSON text) claims the modern era: its `_meta` holds the protocol
    /// version key. Only that key counts (a legacy request may carry `_meta.progressToken`); a
    /// half-built envelope still claims it, so that it gets the precise -32602.
    pub fn claimed_by(params: &str) -> bool {
        // The cheap test first: almost every legacy request is decided by it.
        if !mentions_protocol_version_key(params) {
            return false;
        }
        #[derive(Deserialize)]
        struct Probe {
            #[serde(rename = "_meta")]
            meta: Option<Map<String, Value>>,
        }
        serde_json::from_str::<Probe>(params)
            .ok()
            .and_then(|p| p.meta)
            .is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY))
    }

    /// Reads the envelope of a request whose params are `params` (raw JSON text, `None` when the
    /// request has none).
    ///
    /// # Errors
    /// The first thing missing or malformed, in the order the spec lists them.
    pub fn read(params: Option<&str>) -> Result<Self, EnvelopeError> {
        let params = params.ok_or(EnvelopeError::NoParams)?;
        let value: Map<String, Value> =
            serde_json::from_str(params).map_err(|_| EnvelopeError::NoParams)?;
        Self::from_params(&value)
    }

    /// Reads the envelope from a params object.
    ///
    /// # Errors
    /// See [`RequestEnvelope::read`].
    pub fn from_params(params: &Map<String, Value>) -> Result<Self, EnvelopeError> {
        let Some(Value::Object(meta)) = params.get("_meta") else {
            return Err(EnvelopeError::NoMeta);
        };
        Self::from_meta(meta)
    }

    /// Reads the envelope from a `_meta` object.
    ///
    /// # Errors
    /// See [`RequestEnvelope::read`].
    pub fn from_meta(meta: &Map<String, Value>) -> Result<Self, EnvelopeError> {
        let invalid = |key: &'static str, e: &dyn std::fmt::Display| EnvelopeError::Invalid {
            key,
            why: echo(&e.to_string()).into_owned(),
        };
        let version = match meta.get(PROTOCOL_VERSION_KEY) {
            None => return Err(EnvelopeError::Missing(PROTOCOL_VERSION_KEY)),
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                return Err(invalid(PROTOCOL_VERSION_KEY, &"not a string"));
            }
        };
        let capabilities = match meta.get(CLIENT_CAPABILITIES_KEY) {
            None => return Err(EnvelopeError::Missing(CLIENT_CAPABILITIES_KEY)),
            Some(v @ Value::Object(_)) => ClientCapabilities::deserialize(v)
                .map_err(|e| invalid(CLIENT_CAPABILITIES_KEY, &e))?,
            Some(_) => return Err(invalid(CLIENT_CAPABILITIES_KEY, &"not an object")),
        };
        let client_info = match meta.get(CLIENT_INFO_KEY) {
            None => None,
            Some(v) => {
                Some(Implementation::deserialize(v).map_err(|e| invalid(CLIENT_INFO_KEY, &e))?)
            }
        };
        let log_level = match meta.get(LOG_LEVEL_KEY) {
            None => None,
            Some(v) => Some(LoggingLevel::deserialize(v).map_err(|e| invalid(LOG_LEVEL_KEY, &e))?),
        };
        Ok(RequestEnvelope {
            protocol_version: version,
            client_capabilities: capabilities,
            client_info,
            log_level,
        })
    }

    /// The envelope as `_meta` members, to merge into a request's `_meta`.
    pub fn to_meta(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(
            PROTOCOL_VERSION_KEY.into(),
            Value::String(self.protocol_version.clone()),
        );
        m.insert(
            CLIENT_CAPABILITIES_KEY.into(),
            serde_json::to_value(&self.client_capabilities)
                .unwrap_or_else(|_| Value::Object(Map::new())),
        );
        if let Some(info) = &self.client_info
            && let Ok(v) = serde_json::to_value(info)
        {
            m.insert(CLIENT_INFO_KEY.into(), v);
        }
        if let Some(level) = self.log_level
            && let Ok(v) = serde_json::to_value(level)
        {
            m.insert(LOG_LEVEL_KEY.into(), v);
        }
        m
    }
}

/// `resultType` (`[D26-19]`): what kind of result this is. A missing one reads as complete
/// (`[D26-20]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum ResultType {
    /// The final result.
    #[default]
    Complete,
    /// The server needs input first ([`InputRequiredResult`]).
    InputRequired,
    /// A task was created (the tasks extension).
    Task,
    /// A value some extension defines.
    Other(String),
}

impl ResultType {
    /// The wire value.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Task => "task",
            ResultType::Other(s) => s,
        }
    }

    /// Reads a wire value.
    pub fn parse(s: &str) -> Self {
        match s {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            "task" => ResultType::Task,
            other => ResultType::Other(other.to_owned()),
        }
    }

    /// The `resultType` of a result object (complete when absent, `[D26-20]`).
    pub fn of(result: &Map<String, Value>) -> Self {
        match result.get("resultType") {
            Some(Value::String(s)) => Self::parse(s),
            _ => ResultType::Complete,
        }
    }
}

impl Serialize for ResultType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::parse(&String::deserialize(d)?))
    }
}

/// `cacheScope` of a cacheable result (SEP-2549).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Nothing user-specific: any cache may share it.
    Public,
    /// Reused only within the same authorization context (the default).
    #[default]
    Private,
}

/// The caching hints every cacheable result carries (`[D26-90]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheHints {
    /// Freshness in milliseconds (0: stale at once).
    pub ttl_ms: u64,
    /// Who may share the cached result.
    pub cache_scope: CacheScope,
}

/// One request for client input embedded in an input-required result (`InputRequest`):
/// `{method, params}`, `params` optional for `roots/list`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "method", content = "params")]
#[allow(clippy::large_enum_variant)] // a wire value, built a few times per request
pub enum InputRequest {
    /// `elicitation/create`.
    #[serde(rename = "elicitation/create")]
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`.
    #[serde(rename = "sampling/createMessage")]
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list`.
    #[serde(rename = "roots/list")]
    ListRoots(JsonObject),
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        #[derive(Deserialize)]
        struct Raw {
            method: String,
            #[serde(default)]
            params: Option<Value>,
        }
        let raw = Raw::deserialize(d)?;
        let params = raw.params.unwrap_or_else(|| Value::Object(Map::new()));
        match raw.method.as_str() {
            methods::ELICITATION_CREATE => ElicitRequestParams::deserialize(params)
                .map(InputRequest::Elicit)
                .map_err(D::Error::custom),
            methods::SAMPLING_CREATE_MESSAGE => CreateMessageRequestParams::deserialize(params)
                .map(InputRequest::CreateMessage)
                .map_err(D::Error::custom),
            methods::ROOTS_LIST => JsonObject::deserialize(params)
                .map(InputRequest::ListRoots)
                .map_err(D::Error::custom),
            other => Err(D::Error::custom(format!(
                "unknown input request method {}",
                echo(other)
            ))),
        }
    }
}

impl InputRequest {
    /// The embedded method's name.
    pub fn method(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => methods::ELICITATION_CREATE,
            InputRequest::CreateMessage(_) => methods::SAMPLING_CREATE_MESSAGE,
            InputRequest::ListRoots(_) => methods::ROOTS_LIST,
        }
    }

    /// The client capability this request needs, as a capabilities object naming only it
    /// (the `data.requiredCapabilities` of -32021).
    pub fn required_capability(&self) -> ClientCapabilities {
        let v = match self {
            InputRequest::Elicit(ElicitRequestParams::Url(_)) => {
                serde_json::json!({"elicitation": {"url": {}}})
            }
            InputRequest::Elicit(_) => serde_json::json!({"elicitation": {}}),
            InputRequest::CreateMessage(p) if p.tools.is_some() || p.tool_choice.is_some() => {
                serde_json::json!({"sampling": {"tools": {}}})
            }
            InputRequest::CreateMessage(_) => serde_json::json!({"sampling": {}}),
            InputRequest::ListRoots(_) => serde_json::json!({"roots": {}}),
        };
        ClientCapabilities::deserialize(v).unwrap_or_default()
    }

    /// Whether `caps` declares what this request needs (`[D26-41]`).
    pub fn allowed_by(&self, caps: &ClientCapabilities) -> bool {
        match self {
            InputRequest::Elicit(ElicitRequestParams::Url(_)) => caps.supports_url_elicitation(),
            InputRequest::Elicit(_) => caps.supports_form_elicitation(),
            InputRequest::CreateMessage(p) => {
                caps.sampling.is_some()
                    && (p.tools.is_none() && p.tool_choice.is_none()
                        || caps.supports_sampling_tools())
            }
            InputRequest::ListRoots(_) => caps.roots.is_some(),
        }
    }
}

/// The input-required result (`InputRequiredResult`, `[D26-37]`): at least one of the two.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always [`ResultType::InputRequired`].
    pub result_type: ResultType,
    /// What the client must answer, by server-chosen key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<BTreeMap<String, InputRequest>>,
    /// Opaque state the retry must echo byte for byte.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl InputRequiredResult {
    /// A result asking for `requests`, with `state`.
    pub fn new(requests: BTreeMap<String, InputRequest>, state: Option<String>) -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: (!requests.is_empty()).then_some(requests),
            request_state: state,
            meta: None,
        }
    }
}

/// `server/discover`'s result (`DiscoverResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always complete.
    #[serde(default)]
    pub result_type: ResultType,
    /// The modern revisions served per request.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Caching hints (required on this result).
    #[serde(flatten)]
    pub cache: CacheHints,
    /// Result metadata (`serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl DiscoverResult {
    /// The server's identity, from `_meta` (or the pre-release body field).
    pub fn server_info(&self) -> Option<Implementation> {
        self.meta
            .as_ref()
            .and_then(|m| m.get(SERVER_INFO_KEY))
            .or_else(|| self.extra.get("serverInfo"))
            .and_then(|v| Implementation::deserialize(v).ok())
    }
}

/// The notification types a listen opts in to (`SubscriptionFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs (exact match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// Fields of extensions (`taskIds` of the tasks extension).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `subscriptions/listen` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// What the client opts in to (required, `[D26-67]`).
    pub notifications: SubscriptionFilter,
    /// The envelope.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// The result of `subscriptions/listen`, sent when the server ends the stream: `resultType` and
/// `_meta` (with the subscription id) only.
pub type SubscriptionsListenResult = crate::meta::EmptyResult;

/// `notifications/subscriptions/acknowledged` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The subset the server will honour (`[D26-68]`).
    pub notifications: SubscriptionFilter,
    /// Carries the subscription id (`[D26-72]`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

/// A `_meta` object holding only the subscription id `id`.
pub fn subscription_meta(id: &RequestId) -> JsonObject {
    let mut m = Map::new();
    m.insert(
        SUBSCRIPTION_ID_KEY.into(),
        serde_json::to_value(id).unwrap_or(Value::Null),
    );
    m
}

/// -32020 (`[D26-58]`): a header disagrees with the body, or is missing or malformed.
pub fn header_mismatch(message: impl Into<String>, header: &str) -> ErrorObject {
    ErrorObject::new(ErrorCode::HEADER_MISMATCH, message).with_data(serde_json::json!({
        "reason": "header_mismatch",
        "header": echo(header),
        "spec": "D26-58",
    }))
}

/// -32021 (`[D26-15]`): the request needs `required`, which it did not declare.
pub fn missing_capability(
    message: impl Into<String>,
    required: &ClientCapabilities,
) -> ErrorObject {
    ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, message).with_data(
        serde_json::json!({
            "requiredCapabilities": required,
        }),
    )
}

/// -32022 (`[D26-27]`): `requested` is not served; `supported` is.
pub fn unsupported_version(requested: &str, supported: &[&str]) -> ErrorObject {
    let requested = echo(requested);
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested}; supported: {}",
            supported.join(", ")
        ),
    )
    .with_data(serde_json::json!({"supported": supported, "requested": requested}))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn envelope(meta: Value) -> Result<RequestEnvelope, EnvelopeError> {
        let params = serde_json::json!({"_meta": meta}).to_string();
        RequestEnvelope::read(Some(&params))
    }

    /// The one-byte search finds the key exactly where a substring search does.
    #[test]
    fn the_key_is_found_as_a_substring_search_finds_it() {
        let key = PROTOCOL_VERSION_KEY;
        let cases = [
            String::new(),
            "/".into(),
            key.into(),
            format!("x{key}y"),
            format!("{key}{key}"),
            key.replace('/', "//"),
            key[..key.len() - 1].into(),
            key[1..].into(),
            format!("a/b/{}", &key[..30]),
            format!("{{\"_meta\":{{\"{key}\":\"2026-07-28\"}}}}"),
            r#"{"name":"add","arguments":{"a":1,"b":2}}"#.into(),
            "io.modelcontextprotocol/protocolVersio/protocolVersion".into(),
            "io.modelcontextprotocol/io.modelcontextprotocol/protocolVersion".into(),
            "é/protocolVersion io.modelcontextprotocol/".into(),
        ];
        for text in &cases {
            assert_eq!(
                mentions_protocol_version_key(text),
                text.contains(key),
                "{text}"
            );
        }
    }

    #[test]
    fn d26_9_d26_11_the_envelope_needs_version_and_capabilities_not_client_info() {
        let ok = envelope(
            serde_json::json!({PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}),
        );
        assert_eq!(ok.unwrap().protocol_version, "2026-07-28");
        assert_eq!(
            envelope(serde_json::json!({CLIENT_CAPABILITIES_KEY: {}})),
            Err(EnvelopeError::Missing(PROTOCOL_VERSION_KEY))
        );
        assert_eq!(
            envelope(serde_json::json!({PROTOCOL_VERSION_KEY: "2026-07-28"})),
            Err(EnvelopeError::Missing(CLIENT_CAPABILITIES_KEY))
        );
        assert_eq!(RequestEnvelope::read(None), Err(EnvelopeError::NoParams));
        assert_eq!(
            RequestEnvelope::read(Some("{}")),
            Err(EnvelopeError::NoMeta)
        );
        let bad_level = envelope(serde_json::json!({PROTOCOL_VERSION_KEY: "2026-07-28",
            CLIENT_CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"}));
        assert!(matches!(
            bad_level,
            Err(EnvelopeError::Invalid {
                key: LOG_LEVEL_KEY,
                ..
            })
        ));
        let e = EnvelopeError::Missing(PROTOCOL_VERSION_KEY).to_error_object();
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    }

    #[test]
    fn only_the_version_key_claims_the_modern_era() {
        assert!(!RequestEnvelope::claimed_by(
            r#"{"_meta":{"progressToken":1}}"#
        ));
        assert!(RequestEnvelope::claimed_by(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}"#
        ));
        assert!(
            !RequestEnvelope::claimed_by(
                r#"{"arguments":{"s":"io.modelcontextprotocol/protocolVersion"}}"#
            ),
            "the key named inside an argument is not a claim"
        );
    }

    #[test]
    fn d26_20_a_missing_result_type_is_complete() {
        assert_eq!(ResultType::of(&Map::new()), ResultType::Complete);
        let r: Map<String, Value> =
            serde_json::from_str(r#"{"resultType":"input_required"}"#).unwrap();
        assert_eq!(ResultType::of(&r), ResultType::InputRequired);
    }

    #[test]
    fn input_requests_are_method_and_params() {
        let r = InputRequest::ListRoots(JsonObject::new());
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({"method": "roots/list", "params": {}})
        );
        let back: InputRequest =
            serde_json::from_value(serde_json::json!({"method": "roots/list"})).unwrap();
        assert_eq!(back, r);
        assert_eq!(
            serde_json::to_value(r.required_capability()).unwrap(),
            serde_json::json!({"roots": {}})
        );
    }
}
