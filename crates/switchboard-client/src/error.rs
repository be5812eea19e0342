//! Errors of the client role.

use switchboard_jsonrpc::RequestError;

/// Why a client operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request failed (peer error, timeout, closed session, local refusal).
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
    /// The handshake failed for another reason.
    #[error("handshake failed: {0}")]
    Handshake(String),
    /// A call was made before the handshake completed or after the session closed.
    #[error("session not ready: {0}")]
    NotReady(&'static str),
    /// A paginated listing did not end within the page bound.
    #[error("listing {method} did not end within {pages} pages")]
    TooManyPages {
        /// The list method.
        method: &'static str,
        /// The bound.
        pages: usize,
    },
}
