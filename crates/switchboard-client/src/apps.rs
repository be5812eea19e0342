//! MCP Apps (SEP-1865, `io.modelcontextprotocol/ui`) on the client: the extension declared
//! ([`ClientBuilder::apps`](crate::ClientBuilder::apps)), a view read and checked as a
//! [`UiResource`] ([`ClientSession::read_app`]), and whether the server offers views. A tool's
//! link to a view is [`Tool::ui`](switchboard_types::tools::Tool::ui).

use serde_json::{Map, Value};
use switchboard_types::apps::{
    APP_MIME_TYPE, UI_EXTENSION, UI_META_KEY, UI_SCHEME, UiResourceMeta, host_settings,
};
use switchboard_types::capabilities::ClientCapabilities;
use switchboard_types::content::ResourceContents;
use switchboard_types::meta::Meta;

use crate::error::ClientError;
use crate::session::ClientSession;

/// An MCP App view as read from its server: the HTML document and its `_meta.ui` (CSP,
/// permissions, domain, border), which the host applies when it renders the view.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct UiResource {
    /// The view's `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// `_meta.ui`: the contents' own, else the `resources/list` entry's (`[AP-7]`); the
    /// default (no CSP: hosts apply the restrictive one) when neither has it.
    pub meta: UiResourceMeta,
}

/// Adds `extensions["io.modelcontextprotocol/ui"] = {"mimeTypes": [...]}` to `caps`.
pub(crate) fn declare(caps: &mut ClientCapabilities) {
    let extensions = caps
        .extra
        .entry("extensions")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = extensions {
        m.insert(UI_EXTENSION.to_owned(), host_settings());
    }
}

fn invalid(uri: &str, reason: impl Into<String>) -> ClientError {
    ClientError::InvalidApp {
        uri: switchboard_types::error::echo(uri).into_owned(),
        reason: reason.into(),
    }
}

/// `_meta.ui` of `meta`: `None` when absent, an error when present but malformed (`[AP-4]`).
fn ui_of(uri: &str, meta: Option<&Meta>) -> Result<Option<UiResourceMeta>, ClientError> {
    let Some(ui) = meta.and_then(|m| m.0.get(UI_META_KEY)) else {
        return Ok(None);
    };
    serde_json::from_value(ui.clone())
        .map(Some)
        .map_err(|e| invalid(uri, format!("malformed _meta.ui: {e}")))
}

impl ClientSession {
    /// Whether the server declared the MCP Apps extension.
    pub fn offers_apps(&self) -> bool {
        self.server_capabilities()
            .extra
            .get("extensions")
            .and_then(|e| e.get(UI_EXTENSION))
            .is_some_and(Value::is_object)
    }

    /// Reads the MCP App view `uri` (`resources/read`) and checks it: a `ui://` URI
    /// (`[AP-1]`), contents of MIME type `text/html;profile=mcp-app` (`[AP-2]`), as text or
    /// Base64 `blob` holding UTF-8 (`[AP-3]`), and a well-formed `_meta.ui` (`[AP-4]`). The
    /// metadata is the contents' own, else that of the view's `resources/list` entry (listed
    /// once if the list is not cached; a server may leave views out of its list).
    ///
    /// # Errors
    /// [`ClientError::InvalidApp`] when the view breaks one of these rules; a request error
    /// (an unknown view: [`ClientError::is_resource_not_found`]).
    pub async fn read_app(&self, uri: &str) -> Result<UiResource, ClientError> {
        if !uri.starts_with(UI_SCHEME) {
            return Err(invalid(uri, "not a ui:// URI"));
        }
        let read = self.read_resource(uri).await?;
        let contents = read
            .contents
            .iter()
            .find(|c| c.uri() == uri)
            .or_else(|| read.contents.first())
            .ok_or_else(|| invalid(uri, "no contents"))?;
        let (mime, html, meta) = match contents {
            ResourceContents::Text(t) => (t.mime_type.as_deref(), t.text.clone(), t.meta.as_ref()),
            ResourceContents::Blob(b) => {
                let bytes = switchboard_types::http_headers::base64_decode(&b.blob)
                    .ok_or_else(|| invalid(uri, "the blob is not Base64"))?;
                let html = String::from_utf8(bytes)
                    .map_err(|_| invalid(uri, "the blob is not UTF-8 HTML"))?;
                (b.mime_type.as_deref(), html, b.meta.as_ref())
            }
        };
        if mime != Some(APP_MIME_TYPE) {
            return Err(invalid(
                uri,
                format!("MIME type {mime:?}, not {APP_MIME_TYPE:?}"),
            ));
        }
        let meta = match ui_of(uri, meta)? {
            Some(meta) => meta,
            None => self.listed_ui(uri).await?.unwrap_or_default(),
        };
        Ok(UiResource {
            uri: uri.to_owned(),
            html,
            meta,
        })
    }

    /// `_meta.ui` of the view's `resources/list` entry, if it is listed with one.
    async fn listed_ui(&self, uri: &str) -> Result<Option<UiResourceMeta>, ClientError> {
        if self.server_capabilities().resources.is_none() {
            return Ok(None);
        }
        let listed = match self.cached_resources() {
            Some(list) => list,
            None => self.list_resources().await?,
        };
        match listed.iter().find(|r| r.uri == uri) {
            Some(entry) => ui_of(uri, entry.meta.as_ref()),
            None => Ok(None),
        }
    }
}
