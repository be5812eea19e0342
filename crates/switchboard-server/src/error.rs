//! Server side: the errors of registrations and of session-level operations.

use switchboard_jsonrpc::RequestError;

/// A registration error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A tool, prompt or resource with this name is already registered.
    #[error("{kind} '{name}' is already registered")]
    Duplicate {
        /// What kind of thing ("tool", "prompt", ...).
        kind: &'static str,
        /// The duplicated name.
        name: String,
    },
    /// A tool's schema is not a valid JSON Schema.
    #[error("tool '{name}': invalid {which}: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// What the validator said.
        reason: String,
    },
    /// Nothing with this name is registered.
    #[error("{kind} '{name}' is not registered")]
    NotFound {
        /// What kind of thing.
        kind: &'static str,
        /// The missing name.
        name: String,
    },
}

/// Why a session-level operation failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The bound on subscriptions per session is reached.
    #[error("too many subscriptions (limit {limit})")]
    TooManySubscriptions {
        /// The bound.
        limit: usize,
    },
    /// A registration failed.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// Sending failed (refused locally, or the session is closed).
    #[error(transparent)]
    Send(#[from] RequestError),
}
