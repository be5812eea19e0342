//! Roots: `roots/list` and `notifications/roots/list_changed` (SPEC-NOTES §10.3).
//!
//! Server → client request; the client sends the notification. Every root URI is `file://`
//! (`[RO-1]`).

use serde::{Deserialize, Serialize};

use crate::meta::{JsonObject, Meta, NotificationParams, RequestParams};

/// A root directory or file the server may work in (`Root`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Metadata (2025-06-18+).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Root {
    /// A root at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Params of `roots/list`: only `_meta`.
pub type ListRootsRequestParams = RequestParams;

/// Params of `notifications/roots/list_changed`: only `_meta`.
pub type RootsListChangedNotificationParams = NotificationParams;

/// Result of `roots/list` (`ListRootsResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ListRootsResult {
    /// A result with `roots`.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult {
            roots,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}
