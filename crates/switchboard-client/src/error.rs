//! Errors of the client role: [`ClientError`], kept apart from the wire's
//! [`ErrorObject`], which is data.

use switchboard_jsonrpc::RequestError;
use switchboard_types::elicitation::URLElicitationRequiredErrorData;
use switchboard_types::tools::CallToolResult;
use switchboard_types::{ErrorCode, ErrorObject};

use crate::subscription::{SubscriptionError, SubscriptionId};

/// Why a client operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request failed: the server answered with an error, it timed out, it was cancelled,
    /// the session closed, or it was refused locally before any frame was sent (the server did
    /// not declare the capability, `[LC-5]`).
    #[error(transparent)]
    Request(#[from] RequestError),
    /// `[LC-9]`: the server chose a revision this client does not support; the client disconnected.
    #[error(
        "server chose protocol version {chosen:?}, which this client does not support (supported: {supported}); disconnected"
    )]
    UnsupportedVersion {
        /// What the server answered.
        chosen: String,
        /// What this client supports, comma-separated.
        supported: String,
    },
    /// The handshake failed for another reason (the server refused `initialize`).
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// A call was made before the handshake completed or after the session closed.
    #[error("session not ready: {0}")]
    NotReady(&'static str),
    /// A paginated listing did not end within the page bound (see
    /// [`ClientBuilder::max_pages`](crate::ClientBuilder::max_pages)).
    #[error("listing {method} did not end within {pages} pages")]
    TooManyPages {
        /// The list method.
        method: &'static str,
        /// The bound.
        pages: usize,
    },
    /// `[SF-7]`: the tool declares an `outputSchema` and its result's `structuredContent` is
    /// missing or does not conform to it. The result is kept so its `content` can still be shown.
    #[error("tool {tool:?} returned invalid structuredContent: {problem}")]
    InvalidStructuredContent {
        /// The tool called.
        tool: String,
        /// What is wrong: the schema violations, or that `structuredContent` is absent.
        problem: String,
        /// The result as received.
        result: Box<CallToolResult>,
    },
    /// `[SC-2]`: a tool's `outputSchema` could not be compiled (an invalid schema or an
    /// unsupported dialect), so its result could not be validated.
    #[error("tool {tool:?} has an outputSchema that cannot be used: {problem}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// Why the schema was refused.
        problem: String,
    },
    /// The bound on resource subscriptions (see
    /// [`ClientBuilder::max_subscriptions`](crate::ClientBuilder::max_subscriptions)) is reached.
    #[error("too many resource subscriptions (limit {limit})")]
    TooManySubscriptions {
        /// The bound.
        limit: usize,
    },
    /// [`ClientSession::unsubscribe`](crate::ClientSession::unsubscribe) was given an id that is
    /// not (or no longer) subscribed.
    #[error("no subscription {0}")]
    UnknownSubscription(SubscriptionId),
    /// A root was refused: its URI is not a `file://` URI (`[RO-1]`), or its path climbs out
    /// with a `..` segment (`[RO-3]`).
    #[error("root {uri:?} refused: {reason}")]
    InvalidRoot {
        /// The refused URI.
        uri: String,
        /// Why it was refused.
        reason: &'static str,
    },
    /// A task-augmented call was not sent: the server did not declare tasks for it, or the tool
    /// forbids them (`[TK-1]`, `[TK-2]`).
    #[error("not run as a task: {0}")]
    TaskRefused(String),
    /// A plain call was not sent: the tool must be called as a task (`[TK-4]`; the cached tool
    /// list says `taskSupport: "required"` and the server declared tasks for `tools/call`). Use
    /// [`ClientSession::start_tool_task`](crate::ClientSession::start_tool_task).
    #[error("not sent: {0}")]
    TaskRequired(String),
    /// The tasks extension: the task of a call was cancelled (by `tasks/cancel` from the
    /// caller's cancellation, or by the server) before it ended. Holds the task id.
    #[error("task {0} was cancelled")]
    TaskCancelled(String),
    /// The tasks extension: the server's task answers break the extension's rules.
    #[error("invalid task response: {0}")]
    InvalidTask(String),
    /// The server's era could not be settled: `server/discover` failed in a way that rules out
    /// both a modern exchange and a fall-back to `initialize` (a pinned modern revision the
    /// server does not serve, a recognised modern error, no revision in common).
    #[error("server/discover: {0}")]
    Discover(String),
    /// `[D26-21]`: a result whose `resultType` this client does not know (or does not expect
    /// for this method) is an invalid response.
    #[error("invalid response to {method}: resultType {result_type:?} (D26-21)")]
    UnexpectedResultType {
        /// The request's method.
        method: String,
        /// The `resultType` received.
        result_type: String,
    },
    /// An input-required result broke the rules (`[D26-37]`: neither `inputRequests` nor
    /// `requestState`), or one of its input requests could not be read.
    #[error("invalid input-required result to {method}: {problem}")]
    InvalidInputRequired {
        /// The request's method.
        method: String,
        /// What is wrong.
        problem: String,
    },
    /// The server kept asking for input past the client's bound on rounds (see
    /// [`ClientBuilder::max_input_rounds`](crate::ClientBuilder::max_input_rounds)).
    #[error("{method}: still input_required after {rounds} rounds")]
    TooManyInputRounds {
        /// The request's method.
        method: String,
        /// The bound.
        rounds: usize,
    },
    /// An input request of an input-required result could not be answered: its capability is
    /// not declared (`[D26-41]`), or the handler refused it. The call is abandoned.
    #[error("input request {key:?} ({method}) not answered: {}", error.message)]
    InputRequest {
        /// The server-chosen key.
        key: String,
        /// The embedded method.
        method: String,
        /// Why (the handler's error, or the local refusal).
        error: Box<ErrorObject>,
    },
    /// The bound on open listen streams (see
    /// [`ClientBuilder::max_listens`](crate::ClientBuilder::max_listens)) is reached.
    #[error("too many listen streams (limit {limit})")]
    TooManyListens {
        /// The bound.
        limit: usize,
    },
    /// An MCP App view broke a rule of the extension (not `ui://`, another MIME type, no HTML,
    /// a malformed `_meta.ui`); the URI is cut to 256 bytes.
    #[error("{uri} is not a usable MCP App view: {reason}")]
    InvalidApp {
        /// The view.
        uri: String,
        /// What is wrong.
        reason: String,
    },
    /// A route given to [`ClientBuilder::request`](crate::ClientBuilder::request) or
    /// [`ClientBuilder::notification`](crate::ClientBuilder::notification) could not be added
    /// (a duplicate, or a method a client never receives); nothing is sent.
    #[error(transparent)]
    Route(#[from] switchboard_jsonrpc::RouteError),
}

impl From<SubscriptionError> for ClientError {
    fn from(e: SubscriptionError) -> Self {
        match e {
            SubscriptionError::TooMany { limit } => ClientError::TooManySubscriptions { limit },
            SubscriptionError::Unknown(id) => ClientError::UnknownSubscription(id),
            SubscriptionError::Poisoned => ClientError::NotReady("subscription registry poisoned"),
        }
    }
}

impl ClientError {
    /// The server's wire error, when the server answered with one.
    pub fn rejection(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Request(e) => e.as_rejection(),
            _ => None,
        }
    }

    /// The server's error code, when the server answered with an error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.rejection().map(|e| e.code)
    }

    /// Whether the server said the resource does not exist: -32602 in 2026-07-28 (`[D26-98]`),
    /// -32002 from a 2025-era server. Meaningful for `resources/read`.
    pub fn is_resource_not_found(&self) -> bool {
        matches!(
            self.code(),
            Some(ErrorCode::INVALID_PARAMS | ErrorCode::RESOURCE_NOT_FOUND)
        )
    }

    /// The URL elicitations the server requires first, when it answered −32042
    /// (`URLElicitationRequiredError`, 2025-11-25). Their ids are remembered by the session, so a
    /// later `notifications/elicitation/complete` for them reaches the callback.
    pub fn url_elicitations(&self) -> Option<URLElicitationRequiredErrorData> {
        self.rejection()
            .and_then(URLElicitationRequiredErrorData::from_error)
    }
}
