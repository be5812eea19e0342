//! Lifecycle and cross-cutting utilities (SPEC-NOTES §3, §8.1–§8.3): `initialize`,
//! [`Implementation`], `notifications/cancelled` and `notifications/progress`.
//!
//! `initialize` goes client → server; cancellation and progress go either way. `ping` and
//! `notifications/initialized` carry only `_meta`: see [`crate::meta::PingRequestParams`] and
//! [`crate::meta::InitializedNotificationParams`].

use serde::{Deserialize, Serialize};
use serde_json::Number;

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::content::Icon;
use crate::id::{ProgressToken, RequestId};
use crate::meta::{JsonObject, Meta};
use crate::version::ProtocolVersion;

/// The name and version of an MCP implementation (`Implementation`): `clientInfo` / `serverInfo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name (2025-06-18+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version string.
    pub version: String,
    /// Human-readable description (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Home page (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl Implementation {
    /// An implementation with a name and a version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            title: None,
            version: version.into(),
            description: None,
            icons: None,
            website_url: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

/// Params of `initialize` (`InitializeRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The newest revision the client supports. Kept as a string: an unknown revision must be
    /// answered with a counter-offer, not a parse error (`[LC-8]`).
    pub protocol_version: String,
    /// What the client supports.
    pub capabilities: ClientCapabilities,
    /// Who the client is.
    pub client_info: Implementation,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InitializeRequestParams {
    /// Params offering `version` (a [`ProtocolVersion`] or a date string).
    pub fn new(
        version: impl ToString,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            protocol_version: version.to_string(),
            capabilities,
            client_info,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// The offered revision, when this crate knows it.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Result of `initialize` (`InitializeResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server chose (the client's, or a counter-offer).
    pub protocol_version: String,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// Who the server is.
    pub server_info: Implementation,
    /// How to use the server, e.g. as a hint for the model's system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl InitializeResult {
    /// A result choosing `version` (a [`ProtocolVersion`] or a date string).
    pub fn new(
        version: impl ToString,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: version.to_string(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the instructions.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The chosen revision, when this crate knows it.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.protocol_version)
    }
}

/// Params of `notifications/cancelled` (`CancelledNotificationParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request to cancel. Optional in the 2025-11-25 schema, required for non-task requests
    /// and in every earlier revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<RequestId>,
    /// Why, for logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl CancelledNotificationParams {
    /// Cancels `request_id`, optionally saying why.
    pub fn new(request_id: RequestId, reason: Option<String>) -> Self {
        CancelledNotificationParams {
            request_id: Some(request_id),
            reason,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `notifications/progress` (`ProgressNotificationParams`).
///
/// Numbers are kept as [`Number`] so `50` and `50.0` both round-trip unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with every notification (`[UT-6]`).
    pub progress: Number,
    /// The total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// A human-readable message (2025-03-26+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
    /// Members this crate does not know.
    #[serde(flatten)]
    pub extra: JsonObject,
}

impl ProgressNotificationParams {
    /// Progress for `progress_token`.
    pub fn new(progress_token: ProgressToken, progress: impl Into<Number>) -> Self {
        ProgressNotificationParams {
            progress_token,
            progress: progress.into(),
            total: None,
            message: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// Sets the total.
    pub fn with_total(mut self, total: impl Into<Number>) -> Self {
        self.total = Some(total.into());
        self
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}
