//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) on the server: [`AppView`], an HTML view
//! served as a `ui://` resource with its `_meta.ui`, registered with [`ServerBuilder::app`](crate::ServerBuilder::app);
//! tools link to a view with `_meta.ui` ([`Tool::with_ui`], or `#[tool(app = "ui://…")]`).
//!
//! What a host sees depends on whether its capabilities (the session's, or a 2026-07-28
//! request's own) declare the extension with the app MIME type
//! ([`host_supports_apps`]): a host that does sees every tool with its link, app-only tools
//! included, and hides the app-only ones from its model itself; a host that does not sees plain
//! tools (`_meta.ui` removed) and no app-only tool, and a call to one is refused (`[AP-8]`,
//! `[D26-29]`). The server declares the extension in `initialize` and `server/discover` alike
//! as soon as it has a view. The rules and their tags: `docs/APPS.md`.
//!
//! [`Tool::with_ui`]: switchboard_types::tools::Tool::with_ui

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{Map, Value};
use switchboard_types::ErrorObject;
use switchboard_types::apps::{
    APP_MIME_TYPE, UI_EXTENSION, UI_META_KEY, UI_SCHEME, UiResourceMeta, Visibility,
    host_supports_apps,
};
use switchboard_types::capabilities::{ClientCapabilities, ServerCapabilities};
use switchboard_types::content::{ResourceContents, TextResourceContents};
use switchboard_types::meta::Meta;
use switchboard_types::resources::{ReadResourceResult, Resource};
use switchboard_types::tools::Tool;

use crate::service::ServerService;

/// The largest view, in bytes of HTML (`docs/BOUNDS.md`): a view is sent whole in one
/// `resources/read` answer, so it stays well under the default frame bound.
pub(crate) const MAX_APP_HTML_BYTES: usize = 2 * 1024 * 1024;

/// An MCP App view: an HTML document served as a `ui://` resource with the MIME type
/// `text/html;profile=mcp-app` and its `_meta.ui` (on the `resources/list` entry and on the
/// read contents). Registered with [`ServerBuilder::app`](crate::ServerBuilder::app).
///
/// ```
/// use switchboard_server::{AppView, Server};
/// use switchboard_types::apps::{UiCsp, UiResourceMeta, UiToolMeta};
/// use switchboard_types::tools::{CallToolResult, Tool};
/// use switchboard_types::Implementation;
///
/// let view = AppView::new("ui://clock/face", "<!doctype html><html><body>…</body></html>")
///     .title("Clock")
///     .meta(UiResourceMeta { csp: Some(UiCsp::none()), prefers_border: Some(true), ..Default::default() });
/// let server = Server::builder(Implementation::new("clock", "1"))
///     .app(view)
///     .tool(
///         Tool::new("now", serde_json::json!({"type": "object"})).with_ui(UiToolMeta::linked("ui://clock/face")),
///         |_| async { Ok(CallToolResult::text("12:00")) },
///     )
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct AppView {
    resource: Resource,
    html: Arc<str>,
    meta: UiResourceMeta,
}

impl AppView {
    /// A view at `uri` (`ui://host/path`) whose document is `html`, named by the URI's last
    /// segment. The URI and the size (at most 2 MiB) are checked when it is registered.
    pub fn new(uri: impl Into<String>, html: impl Into<String>) -> AppView {
        let uri = uri.into();
        let name = uri.rsplit('/').next().unwrap_or_default().to_owned();
        AppView {
            resource: Resource::new(uri, name).with_mime_type(APP_MIME_TYPE),
            html: html.into().into(),
            meta: UiResourceMeta::default(),
        }
    }

    /// The name `resources/list` shows.
    pub fn name(mut self, name: impl Into<String>) -> AppView {
        self.resource.name = name.into();
        self
    }

    /// The display title.
    pub fn title(mut self, title: impl Into<String>) -> AppView {
        self.resource.title = Some(title.into());
        self
    }

    /// What the view shows, for the host.
    pub fn description(mut self, description: impl Into<String>) -> AppView {
        self.resource.description = Some(description.into());
        self
    }

    /// `_meta.ui`: CSP domains, permissions, domain, border.
    pub fn meta(mut self, meta: UiResourceMeta) -> AppView {
        self.meta = meta;
        self
    }
}

/// Why a view or a tool's link to one cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    /// The URI is not a plain `ui://host/path` (traversal, encoding, query, control
    /// characters; the value cut to 64 characters).
    #[error("not a valid ui:// view URI ({why}): {uri:?}")]
    InvalidUri {
        /// The URI.
        uri: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The document is larger than the bound.
    #[error("view {uri} is {size} bytes of HTML, more than {limit}")]
    TooLarge {
        /// The view.
        uri: String,
        /// Its size.
        size: usize,
        /// The bound.
        limit: usize,
    },
    /// A tool links to a view that is not registered (`[AP-6]`).
    #[error("tool {tool} links to {uri}, which is not a registered view")]
    UnknownView {
        /// The tool.
        tool: String,
        /// The link.
        uri: String,
    },
}

/// Why `uri` is not a plain view URI: `ui://` then non-empty segments of unreserved
/// characters (letters, digits, `-._~`), no `.` or `..` segment, no `%`, `\`, `?`, `#`.
pub(crate) fn check_uri(uri: &str) -> Result<(), &'static str> {
    let rest = uri
        .strip_prefix(UI_SCHEME)
        .ok_or("the scheme is not ui://")?;
    if rest.is_empty() {
        return Err("no host");
    }
    if uri.len() > 512 {
        return Err("longer than 512 bytes");
    }
    for segment in rest.split('/') {
        if segment.is_empty() {
            return Err("an empty segment");
        }
        if segment == "." || segment == ".." {
            return Err("a dot segment");
        }
        if !segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
        {
            return Err("a character other than letters, digits, -._~");
        }
    }
    Ok(())
}

fn cut(uri: &str) -> String {
    uri.chars().take(64).collect()
}

/// What a view's reads answer: its document and `_meta`.
pub(crate) struct AppContents {
    html: Arc<str>,
    meta: Meta,
}

impl AppContents {
    /// The `resources/read` result for `uri`.
    pub(crate) fn read(&self, uri: String) -> ReadResourceResult {
        let mut contents = TextResourceContents::new(uri, &*self.html);
        contents.mime_type = Some(APP_MIME_TYPE.to_owned());
        contents.meta = Some(self.meta.clone());
        ReadResourceResult::new(vec![ResourceContents::Text(contents)])
    }
}

/// The view as a resource and what its reads answer, once its URI and size are checked.
pub(crate) fn into_resource(view: AppView) -> Result<(Resource, AppContents), AppError> {
    let uri = view.resource.uri.clone();
    if let Err(why) = check_uri(&uri) {
        return Err(AppError::InvalidUri {
            uri: cut(&uri),
            why,
        });
    }
    if view.html.len() > MAX_APP_HTML_BYTES {
        return Err(AppError::TooLarge {
            uri,
            size: view.html.len(),
            limit: MAX_APP_HTML_BYTES,
        });
    }
    let meta = ui_meta(&view.meta);
    let mut resource = view.resource;
    resource.meta = Some(meta.clone());
    Ok((
        resource,
        AppContents {
            html: view.html,
            meta,
        },
    ))
}

/// `{"ui": meta}`.
fn ui_meta(meta: &UiResourceMeta) -> Meta {
    let mut m = Meta::new();
    m.0.insert(
        UI_META_KEY.to_owned(),
        serde_json::to_value(meta).unwrap_or_default(),
    );
    m
}

/// The URIs of the app views among `resources` (`ui://`, the app MIME type).
pub(crate) fn views(resources: &[Resource]) -> Vec<String> {
    resources
        .iter()
        .filter(|r| r.uri.starts_with(UI_SCHEME) && r.mime_type.as_deref() == Some(APP_MIME_TYPE))
        .map(|r| r.uri.clone())
        .collect()
}

/// At build: every tool's link names a registered view (`[AP-6]`).
pub(crate) fn check_links<'a>(
    views: &[String],
    tools: impl Iterator<Item = &'a Tool>,
) -> Result<(), AppError> {
    for tool in tools {
        let Some(uri) = tool.ui().and_then(|ui| ui.resource_uri) else {
            continue;
        };
        if !views.contains(&uri) {
            return Err(AppError::UnknownView {
                tool: tool.name.clone(),
                uri,
            });
        }
    }
    Ok(())
}

/// Adds `extensions["io.modelcontextprotocol/ui"] = {}` to the server's capabilities (kept
/// when already declared): what `initialize` and `server/discover` both answer.
pub(crate) fn declare(caps: &mut ServerCapabilities) {
    let extensions = caps
        .extra
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = extensions {
        m.entry(UI_EXTENSION)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// Whether `tool` carries `_meta.ui` (or the deprecated flat link).
pub(crate) fn linked(tool: &Tool) -> bool {
    tool.meta
        .as_ref()
        .is_some_and(|m| m.0.contains_key(UI_META_KEY) || m.0.contains_key("ui/resourceUri"))
}

/// Whether only a view may call `tool` (`visibility` without `"model"`).
pub(crate) fn app_only(tool: &Tool) -> bool {
    linked(tool) && tool.ui().is_some_and(|ui| !ui.admits(Visibility::Model))
}

/// The tool as a host without the extension sees it: without its links (`[AP-8]`; an
/// app-only tool is not shown to such a host at all).
pub(crate) fn strip_links(tool: &Tool) -> Cow<'_, Tool> {
    if !linked(tool) {
        return Cow::Borrowed(tool);
    }
    let mut plain = tool.clone();
    if let Some(meta) = plain.meta.as_mut() {
        meta.0.remove(UI_META_KEY);
        meta.0.remove("ui/resourceUri");
        if meta.0.is_empty() {
            plain.meta = None;
        }
    }
    Cow::Owned(plain)
}

/// -32602 (2025 era) or -32021 naming the extension (2026-07-28, `[D26-29]`) for a call to an
/// app-only tool from a host without the extension (`[AP-8]`).
pub(crate) fn app_only_refused(name: &str, modern: bool) -> ErrorObject {
    let name = switchboard_types::error::echo(name);
    let message = format!(
        "tool {name} is called only from an MCP App view: declare the {UI_EXTENSION} extension"
    );
    if modern {
        let mut required = ClientCapabilities::default();
        required.extra.insert(
            "extensions".into(),
            serde_json::json!({ UI_EXTENSION: switchboard_types::apps::host_settings() }),
        );
        return switchboard_types::modern::missing_capability(message, &required);
    }
    ErrorObject::new(switchboard_types::ErrorCode::INVALID_PARAMS, message)
        .with_data(serde_json::json!({"reason": "app_only_tool", "tool": name}))
}

impl ServerService {
    /// Whether the host behind the request being served declared the extension.
    pub(crate) fn host_has_apps(&self) -> bool {
        match &self.modern {
            Some(call) => host_supports_apps(call.capabilities()),
            None => self
                .state
                .data
                .lock()
                .ok()
                .and_then(|d| d.client.clone())
                .is_some_and(|c| host_supports_apps(&c.capabilities)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::{Server, ServerError};
    use switchboard_types::Implementation;
    use switchboard_types::apps::UiToolMeta;
    use switchboard_types::tools::CallToolResult;

    fn builder() -> crate::ServerBuilder {
        Server::builder(Implementation::new("apps", "1"))
    }

    #[test]
    fn ap_12_view_uris_with_traversal_encoding_or_other_schemes_are_refused() {
        for bad in [
            "ui://notes/../secret",
            "ui://notes/./list",
            "ui://../etc",
            "ui://notes/%2e%2e/secret",
            "ui://notes/%2E%2E",
            "ui://notes\\..\\secret",
            "ui://notes//list",
            "ui://notes/list/",
            "ui://",
            "ui://notes/list?x=1",
            "ui://notes/list#top",
            "ui://notes/li st",
            "ui://notes/\u{0}",
            "file:///etc/passwd",
            "https://example.com/app",
            "UI://notes/list",
        ] {
            let err = builder()
                .app(AppView::new(bad, "<!doctype html>"))
                .build()
                .unwrap_err();
            assert!(
                matches!(err, ServerError::App(AppError::InvalidUri { .. })),
                "{bad}: {err}"
            );
        }
        for good in ["ui://notes/list", "ui://clock", "ui://a-b.c_d~e/v1.0/x"] {
            assert_eq!(check_uri(good), Ok(()), "{good}");
        }
        // The length bound, crossed by one byte.
        let at = format!("ui://a/{}", "b".repeat(512 - "ui://a/".len()));
        assert_eq!((at.len(), check_uri(&at)), (512, Ok(())));
        assert_eq!(check_uri(&format!("{at}b")), Err("longer than 512 bytes"));
    }

    /// The HTML bound, crossed by one byte (`docs/BOUNDS.md`).
    #[test]
    fn ap_11_a_view_of_the_bound_is_served_and_one_byte_more_is_refused() {
        let at = "x".repeat(MAX_APP_HTML_BYTES);
        assert!(
            builder()
                .app(AppView::new("ui://big/at", at.clone()))
                .build()
                .is_ok()
        );
        let over = at + "x";
        let err = builder()
            .app(AppView::new("ui://big/over", over))
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            ServerError::App(AppError::TooLarge {
                uri: "ui://big/over".into(),
                size: MAX_APP_HTML_BYTES + 1,
                limit: MAX_APP_HTML_BYTES,
            })
        );
    }

    #[test]
    fn ap_6_a_tool_linking_to_no_registered_view_fails_the_build() {
        let tool = Tool::new("t", serde_json::json!({"type": "object"}))
            .with_ui(UiToolMeta::linked("ui://nowhere/view"));
        let err = builder()
            .app(AppView::new("ui://somewhere/view", "<!doctype html>"))
            .tool(tool.clone(), |_| async { Ok(CallToolResult::text("x")) })
            .build()
            .unwrap_err();
        assert!(
            matches!(err, ServerError::App(AppError::UnknownView { .. })),
            "{err}"
        );
        let ok = builder()
            .app(AppView::new("ui://nowhere/view", "<!doctype html>"))
            .tool(tool, |_| async { Ok(CallToolResult::text("x")) })
            .build()
            .unwrap();
        let caps = serde_json::to_value(ok.capabilities()).unwrap();
        assert_eq!(caps["extensions"][UI_EXTENSION], serde_json::json!({}));
    }

    #[test]
    fn a_server_without_views_declares_no_extension() {
        let s = builder()
            .tool(
                Tool::new("t", serde_json::json!({"type": "object"})),
                |_| async { Ok(CallToolResult::text("x")) },
            )
            .build()
            .unwrap();
        assert!(!s.capabilities().extra.contains_key("extensions"));
    }
}
