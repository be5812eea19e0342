//! The engine's errors for callers of [`crate::Peer`]: distinct from wire errors, which are data.

use std::time::Duration;

use switchboard_types::ErrorObject;

/// Why an outbound request or notification did not produce a result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The peer answered with a JSON-RPC error.
    #[error("peer answered with error {0}")]
    Rejected(ErrorObject),
    /// No answer within the timeout; `notifications/cancelled` was sent.
    #[error("request {method} timed out after {after:?}")]
    Timeout {
        /// The method of the request.
        method: String,
        /// How long the request waited.
        after: Duration,
    },
    /// The caller cancelled the request; `notifications/cancelled` was sent.
    #[error("request cancelled by the caller")]
    Cancelled,
    /// The session closed before an answer came (closed by us, or the peer ended it cleanly).
    #[error("session closed")]
    Closed,
    /// The connection was lost (the transport failed, e.g. a child process exited); the reason
    /// says how, with the exit status where there is one.
    #[error("connection lost: {0}")]
    ConnectionLost(String),
    /// Refused locally before any frame was sent: the negotiated capabilities or the lifecycle
    /// state do not allow this message. The error says which.
    #[error("not sent: {0}")]
    NotAllowed(ErrorObject),
    /// Too many of our requests are already waiting for answers.
    #[error("too many requests in flight (limit {limit})")]
    TooManyPending {
        /// The bound.
        limit: usize,
    },
    /// The params or result could not be (de)serialized.
    #[error("serialization: {0}")]
    Serde(String),
}

impl RequestError {
    /// The peer's wire error, when the peer answered with one.
    pub fn as_rejection(&self) -> Option<&ErrorObject> {
        match self {
            RequestError::Rejected(e) => Some(e),
            _ => None,
        }
    }
}

impl From<serde_json::Error> for RequestError {
    fn from(e: serde_json::Error) -> Self {
        RequestError::Serde(e.to_string())
    }
}
