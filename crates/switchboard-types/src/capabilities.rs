//! Client and server capabilities (SPEC-NOTES §4), one superset shape for 2024-11-05 to 2025-11-25.
//!
//! A capability is declared when its key is present. Presence-objects (`{}`) are
//! `Option<`[`EmptyObject`]`>`, so `{}` stays `{}`; boolean sub-flags are `Option<bool>`, so an absent
//! flag stays absent. `experimental` maps a name to an object. Members added by later revisions
//! (such as the 2026 `extensions`) are kept in `extra`.

use serde::{Deserialize, Serialize};

use crate::meta::{EmptyObject, JsonObject, OrderedMap};

/// What a client supports (`ClientCapabilities`), sent in `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Non-standard capabilities: name → object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<OrderedMap<JsonObject>>,
    /// Roots support (`roots/list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Sampling support (`sampling/createMessage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Elicitation support (`elicitation/create`, 2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Task support as a receiver (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ClientTasksCapability>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ClientCapabilities {
    /// Whether the client declared `sampling.tools` (`[CP-5]`).
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether the client accepts form-mode elicitation (`[CP-4]`: `{}` alone means form).
    pub fn supports_form_elicitation(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_form)
    }

    /// Whether the client accepts URL-mode elicitation (2025-11-25).
    pub fn supports_url_elicitation(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(ElicitationCapability::supports_url)
    }
}

/// `roots` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RootsCapability {
    /// Whether the client sends `notifications/roots/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `sampling` client capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingCapability {
    /// Context inclusion (`includeContext` other than `"none"`), 2025-11-25, soft-deprecated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<EmptyObject>,
    /// Tool use in sampling (`tools` / `toolChoice`), 2025-11-25.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<EmptyObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `elicitation` client capability. An empty object means form mode only (`[CP-4]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationCapability {
    /// Form mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<EmptyObject>,
    /// URL mode (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<EmptyObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ElicitationCapability {
    /// Whether form mode is supported: `form` is present, or neither mode is listed.
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// Whether URL mode is supported.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

/// `tasks` client capability (2025-11-25): what the client accepts as a task receiver.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTasksCapability {
    /// `tasks/list` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<EmptyObject>,
    /// `tasks/cancel` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<EmptyObject>,
    /// Which request types may be task-augmented (the list is complete, `[CP-3]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ClientTaskRequests>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests` of the client capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientTaskRequests {
    /// Sampling requests that may run as tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingTaskRequests>,
    /// Elicitation requests that may run as tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationTaskRequests>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.sampling` of the client capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingTaskRequests {
    /// `sampling/createMessage` may run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_message: Option<EmptyObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.elicitation` of the client capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitationTaskRequests {
    /// `elicitation/create` may run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create: Option<EmptyObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// What a server supports (`ServerCapabilities`), sent in the `initialize` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Non-standard capabilities: name → object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<OrderedMap<JsonObject>>,
    /// Log message notifications (`logging/setLevel`, `notifications/message`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<EmptyObject>,
    /// Argument completion (`completion/complete`), 2025-03-26+.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<EmptyObject>,
    /// Prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Task support as a receiver (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<ServerTasksCapability>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ServerCapabilities {
    /// Whether the server declared `tasks.requests.tools.call` (`[TK-1]`).
    pub fn supports_task_tool_calls(&self) -> bool {
        self.tasks
            .as_ref()
            .and_then(|t| t.requests.as_ref())
            .and_then(|r| r.tools.as_ref())
            .is_some_and(|t| t.call.is_some())
    }

    /// Whether the server declared `resources.subscribe: true`.
    pub fn supports_resource_subscribe(&self) -> bool {
        self.resources
            .as_ref()
            .and_then(|r| r.subscribe)
            .unwrap_or(false)
    }
}

/// `prompts` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `resources` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether `resources/subscribe` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tools` server capability.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks` server capability (2025-11-25).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTasksCapability {
    /// `tasks/list` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<EmptyObject>,
    /// `tasks/cancel` is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<EmptyObject>,
    /// Which request types may be task-augmented.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<ServerTaskRequests>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests` of the server capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerTaskRequests {
    /// Tool requests that may run as tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsTaskRequests>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// `tasks.requests.tools` of the server capabilities.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsTaskRequests {
    /// `tools/call` may run as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<EmptyObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cp_4_empty_elicitation_means_form() {
        let caps: ClientCapabilities = serde_json::from_str(r#"{"elicitation":{}}"#).expect("caps");
        assert!(caps.supports_form_elicitation());
        assert!(!caps.supports_url_elicitation());
        let caps: ClientCapabilities =
            serde_json::from_str(r#"{"elicitation":{"url":{}}}"#).expect("caps");
        assert!(!caps.supports_form_elicitation());
        assert!(caps.supports_url_elicitation());
    }

    #[test]
    fn presence_objects_stay_empty_objects() {
        let text = r#"{"logging":{},"tools":{},"completions":{}}"#;
        let caps: ServerCapabilities = serde_json::from_str(text).expect("caps");
        assert_eq!(
            serde_json::to_string(&caps).expect("json"),
            r#"{"logging":{},"completions":{},"tools":{}}"#
        );
    }
}
