//! # switchboard-types
//!
//! MCP wire types, revisions 2024-11-05 to 2026-07-28: serde only, no async, no IO.
//!
//! # Layout
//! | module | role |
//! |---|---|
//! | [`jsonrpc`] | the JSON-RPC 2.0 envelope: [`Message`], decoded structurally, params kept raw |
//! | [`id`] | [`RequestId`] / [`ProgressToken`]: string or integer, type-exact |
//! | [`error`] | the wire [`ErrorObject`] and [`ErrorCode`] constants |
//! | [`version`] | [`ProtocolVersion`] and the [`Feature`]s each revision has |
//! | [`meta`] | `_meta` maps and reserved keys |
//! | [`capabilities`] | client and server capabilities |
//! | [`lifecycle`] | `initialize`, `Implementation`, ping, cancellation, progress |
//! | [`content`] | content blocks, annotations, icons, resource contents |
//! | [`tools`] | tools, `tools/list`, `tools/call` |
//! | [`resources`] | resources, templates, read, subscribe |
//! | [`prompts`] | prompts, `prompts/get` |
//! | [`sampling`] | `sampling/createMessage` |
//! | [`elicitation`] | `elicitation/create` (form and URL mode) |
//! | [`roots`] | `roots/list` |
//! | [`logging`] | levels, `logging/setLevel`, `notifications/message` |
//! | [`completion`] | `completion/complete` |
//! | [`tasks`] | tasks (2025-11-25, experimental) |
//! | [`methods`] | method-name constants |
//! | [`catalogue`] | one typed description per method: direction, capability gate, revisions |
//! | [`modern`] | 2026-07-28: the request envelope, `resultType`, input-required results, discover, listen |
//! | [`apps`] | MCP Apps (`io.modelcontextprotocol/ui`): `ui://` views, their `_meta.ui`, tool links |
//! | [`http_headers`] | 2026-07-28 on HTTP: the headers mirrored from the body, `x-mcp-header` rules, value encoding |
//!
//! Every MCP type keeps unknown members in an `extra` map, so a value read from the wire and written
//! back loses nothing.

pub mod apps;
pub mod capabilities;
pub mod catalogue;
pub mod completion;
pub mod content;
pub mod elicitation;
pub mod error;
pub mod gates;
pub mod http_headers;
pub mod id;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod methods;
pub mod modern;
pub mod prompts;
pub mod resources;
pub mod roots;
pub mod sampling;
pub mod tasks;
pub mod tools;
pub mod version;

pub use catalogue::{Direction, MethodSpec, Side};
pub use error::{ErrorCode, ErrorObject};
pub use id::{ProgressToken, RequestId};
pub use jsonrpc::{
    DecodeError, Frame, Message, MessageKind, Notification, RawJson, Request, Response,
};
pub use version::{Feature, ProtocolVersion};

// The most used MCP wire types, at the crate root.
pub use capabilities::{ClientCapabilities, ServerCapabilities};
pub use content::{Content, ContentBlock, Role};
pub use lifecycle::{Implementation, InitializeRequestParams, InitializeResult};
pub use logging::LoggingLevel;
pub use meta::{JsonObject, Meta};
pub use tools::{CallToolRequestParams, CallToolResult, Tool};
