//! MCP Apps (SEP-1865, extension `io.modelcontextprotocol/ui`, stable 2026-01-26): interactive
//! HTML views a server serves as `ui://` resources (`text/html;profile=mcp-app`), described by
//! `_meta.ui` on the resource ([`UiResourceMeta`]: CSP, permissions, domain, border) and linked
//! from tools by `_meta.ui` on the tool ([`UiToolMeta`]: `resourceUri`, `visibility`).
//!
//! The extension is negotiated as every extension is (SEP-2133): a host declares
//! `capabilities.extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [...]}`
//! ([`host_settings`], read back with [`host_supports_apps`]), a server declares the same key
//! with `{}`. The rules, with their tags, are in `docs/APPS.md`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::capabilities::ClientCapabilities;
use crate::meta::{JsonObject, Meta};
use crate::tools::Tool;

/// The extension's identifier, a key of `capabilities.extensions`.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an app view (`[AP-2]`).
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The scheme every app view's URI has (`[AP-1]`).
pub const UI_SCHEME: &str = "ui://";
/// The `_meta` key of the extension, on resources, resource contents and tools.
pub const UI_META_KEY: &str = "ui";
/// The deprecated flat link (`_meta["ui/resourceUri"]`), read as a fallback only.
const FLAT_RESOURCE_URI: &str = "ui/resourceUri";

/// `_meta.ui` of an app view, on its `resources/list` entry and on its `resources/read`
/// contents (the contents' wins, `[AP-7]`). Every member is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiResourceMeta {
    /// The external origins the view needs; omitted, hosts apply the restrictive default
    /// (no external connection or resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csp: Option<UiCsp>,
    /// The browser permissions the view asks for (hosts may grant them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<UiPermissions>,
    /// A dedicated sandbox origin (its format is the host's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// Whether the host should draw a border and background around the view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefers_border: Option<bool>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// The Content Security Policy domains of a view (`_meta.ui.csp`). An empty or omitted list
/// allows nothing beyond the host's restrictive default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiCsp {
    /// Origins for fetch, XHR and WebSocket (`connect-src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_domains: Option<Vec<String>>,
    /// Origins for scripts, styles, images, fonts and media.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_domains: Option<Vec<String>>,
    /// Origins for nested frames (`frame-src`; omitted: `'none'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_domains: Option<Vec<String>>,
    /// Allowed base URIs (`base-uri`; omitted: `'self'`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_uri_domains: Option<Vec<String>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiCsp {
    /// A policy declaring no external origin at all: the view talks only to its host.
    pub fn none() -> UiCsp {
        UiCsp {
            connect_domains: Some(Vec::new()),
            resource_domains: Some(Vec::new()),
            ..UiCsp::default()
        }
    }
}

/// The browser permissions a view asks for (`_meta.ui.permissions`): each present member (an
/// empty object) is one request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiPermissions {
    /// The camera.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub camera: Option<JsonObject>,
    /// The microphone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub microphone: Option<JsonObject>,
    /// Geolocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geolocation: Option<JsonObject>,
    /// Writing to the clipboard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard_write: Option<JsonObject>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

/// Who may use a tool linked to a view (`_meta.ui.visibility`; omitted: both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Visibility {
    /// The agent: the tool is in the model's tool list.
    Model,
    /// The view, through its host, on the same server connection.
    App,
}

/// `_meta.ui` of a tool: the view that renders its results, and who may call it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UiToolMeta {
    /// The `ui://` view rendering the tool's results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_uri: Option<String>,
    /// Who may call the tool; omitted means `["model", "app"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Vec<Visibility>>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl UiToolMeta {
    /// A link to the view `uri`, the tool visible to the model and the view.
    pub fn linked(uri: impl Into<String>) -> UiToolMeta {
        UiToolMeta {
            resource_uri: Some(uri.into()),
            ..UiToolMeta::default()
        }
    }

    /// A tool only the view `uri` calls (`visibility: ["app"]`): hidden from the model, and
    /// from hosts without the extension.
    pub fn app_only(uri: impl Into<String>) -> UiToolMeta {
        UiToolMeta {
            resource_uri: Some(uri.into()),
            visibility: Some(vec![Visibility::App]),
            ..UiToolMeta::default()
        }
    }

    /// Whether `who` may use the tool (an omitted visibility admits both).
    pub fn admits(&self, who: Visibility) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&who))
    }
}

impl Tool {
    /// The tool's link to a view, when `_meta.ui` is present and well-formed (or, failing
    /// that, the deprecated flat `_meta["ui/resourceUri"]`).
    pub fn ui(&self) -> Option<UiToolMeta> {
        let meta = &self.meta.as_ref()?.0;
        if let Some(ui) = meta.get(UI_META_KEY) {
            return serde_json::from_value(ui.clone()).ok();
        }
        meta.get(FLAT_RESOURCE_URI)
            .and_then(Value::as_str)
            .map(UiToolMeta::linked)
    }

    /// The tool with `_meta.ui` set to `ui` (other `_meta` members kept).
    #[must_use]
    pub fn with_ui(mut self, ui: UiToolMeta) -> Tool {
        let value = serde_json::to_value(ui).unwrap_or_default();
        self.meta
            .get_or_insert_with(Meta::new)
            .0
            .insert(UI_META_KEY.to_owned(), value);
        self
    }
}

/// What a host declares under `extensions["io.modelcontextprotocol/ui"]`: the MIME types it
/// renders (required), here the one this revision defines.
pub fn host_settings() -> Value {
    serde_json::json!({ "mimeTypes": [APP_MIME_TYPE] })
}

/// Whether capabilities declare the extension with [`APP_MIME_TYPE`] among its `mimeTypes`
/// (a host that renders no type this server serves cannot show its views).
pub fn host_supports_apps(caps: &ClientCapabilities) -> bool {
    caps.extra
        .get("extensions")
        .and_then(|e| e.get(UI_EXTENSION))
        .and_then(|s| s.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == APP_MIME_TYPE))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn resource_meta_round_trips_without_loss() {
        let wire = json!({
            "csp": {"connectDomains": ["https://api.example.com"], "frameDomains": [], "x": 1},
            "permissions": {"clipboardWrite": {}},
            "domain": "abc.example.com",
            "prefersBorder": true,
            "future": "kept"
        });
        let meta: UiResourceMeta = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(meta.prefers_border, Some(true));
        assert!(meta.permissions.as_ref().unwrap().clipboard_write.is_some());
        assert_eq!(serde_json::to_value(&meta).unwrap(), wire);
    }

    #[test]
    fn a_tool_link_reads_back_and_the_flat_form_is_a_fallback() {
        let tool =
            Tool::new("t", json!({"type": "object"})).with_ui(UiToolMeta::app_only("ui://v/list"));
        let wire = serde_json::to_value(&tool).unwrap();
        assert_eq!(
            wire["_meta"]["ui"],
            json!({"resourceUri": "ui://v/list", "visibility": ["app"]})
        );
        let ui = tool.ui().unwrap();
        assert!(ui.admits(Visibility::App) && !ui.admits(Visibility::Model));
        let flat: Tool = serde_json::from_value(json!({"name": "f",
            "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://v/old"}}))
        .unwrap();
        assert_eq!(
            flat.ui().unwrap().resource_uri.as_deref(),
            Some("ui://v/old")
        );
        assert!(
            flat.ui().unwrap().admits(Visibility::Model),
            "default: both"
        );
    }

    #[test]
    fn a_host_supports_apps_only_with_the_mime_type_listed() {
        let mut caps = ClientCapabilities::default();
        assert!(!host_supports_apps(&caps));
        caps.extra
            .insert("extensions".into(), json!({UI_EXTENSION: {}}));
        assert!(!host_supports_apps(&caps), "mimeTypes is required");
        caps.extra
            .insert("extensions".into(), json!({UI_EXTENSION: host_settings()}));
        assert!(host_supports_apps(&caps));
    }
}
