//! What a caller is told of a request's progress: one [`ProgressUpdate`] per
//! `notifications/progress`, delivered to its [`ProgressCallback`]. Below both the [`Peer`]
//! handle, which delivers them, and the handlers' context, which reports them.
//!
//! [`Peer`]: crate::Peer

use std::sync::Arc;

/// One progress report, as delivered to a caller's callback.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ProgressUpdate {
    /// The progress so far; strictly increasing.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable message.
    pub message: Option<String>,
}

impl ProgressUpdate {
    /// A progress value with no total and no message.
    pub fn new(progress: f64) -> Self {
        ProgressUpdate {
            progress,
            total: None,
            message: None,
        }
    }

    /// Sets the total.
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Sets the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// A caller's progress callback.
pub type ProgressCallback = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;
