//! The dispatch seam: what a role (server or client) gives the engine to answer the peer.
//!
//! The engine calls [`Service::call`] synchronously, in frame order, and runs the returned future
//! concurrently with others; the synchronous part is where a role updates ordered state (such as
//! the lifecycle). Notifications are delivered synchronously, in order.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use switchboard_types::{ErrorObject, MessageKind, Notification, RawJson, Request, RequestId};
use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::peer::Peer;
pub use crate::progress::{ProgressCallback, ProgressUpdate};
use crate::transport::Attachment;
use switchboard_types::methods;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a request handler produces: a result object or a wire error.
pub type HandlerResult = Result<RawJson, ErrorObject>;

/// The role's side of a session.
pub trait Service: Send + Sync + 'static {
    /// Starts answering one request. Called in frame order; the future runs concurrently.
    /// A panic inside the future becomes -32603 and the session lives on.
    fn call(&self, request: Request, cx: RequestContext) -> BoxFuture<HandlerResult>;

    /// Takes one notification, in frame order. Never answered (`[JR-11]`).
    fn notify(&self, notification: Notification, peer: &Peer);

    /// Decides whether we may send `method` now (negotiated capabilities, lifecycle). A refusal
    /// is returned to the caller as [`RequestError::NotAllowed`](crate::RequestError::NotAllowed)
    /// and no frame is sent.
    ///
    /// # Errors
    /// The reason for the refusal.
    fn check_outbound(&self, kind: MessageKind, method: &str) -> Result<(), ErrorObject> {
        let _ = (kind, method);
        Ok(())
    }

    /// Whether a JSON-RPC batch is acceptable now (the negotiated revision decides).
    fn batch_allowed(&self) -> bool {
        false
    }

    /// Whether a request with this method may be cancelled by `notifications/cancelled`
    /// (MCP: `initialize` never is, `[UT-8]`).
    fn cancellable(&self, method: &str) -> bool {
        let _ = method;
        true
    }

    /// Whether this method may appear inside a batch (MCP: `initialize` never, `[JR-9]`).
    fn allowed_in_batch(&self, method: &str) -> bool {
        let _ = method;
        true
    }

    /// What this side knows of the session (and, given a request's context, of its caller), for
    /// [layers](crate::Layer). Called only when a layer is installed. Default: nothing known.
    fn facts(&self, cx: Option<&RequestContext>) -> crate::facts::Facts {
        let _ = cx;
        crate::facts::Facts::default()
    }

    /// Told once when the session has closed.
    fn closed(&self) {}
}

/// A progress token with the state that enforces `[UT-6]` and `[UT-7]` for it.
#[derive(Debug, Clone)]
pub(crate) struct ProgressSlot {
    pub(crate) token: RequestId,
    pub(crate) state: Arc<AsyncMutex<ProgressState>>,
}

#[derive(Debug, Default)]
pub(crate) struct ProgressState {
    pub(crate) done: bool,
    pub(crate) last: Option<f64>,
    /// Set by [`RequestContext::keep_progress`]: the response does not end the token, only
    /// [`RequestContext::end_progress`] does.
    pub(crate) kept: bool,
    /// Whether the request has been answered (reports of a kept token are unrelated then).
    pub(crate) answered: bool,
}

/// Why a progress report was not sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgressError {
    /// The request carried no `progressToken`.
    #[error("the request asked for no progress")]
    NoToken,
    /// `[UT-6]`: progress must increase with every notification.
    #[error("progress {next} does not increase past {last}")]
    NotIncreasing {
        /// The last value sent.
        last: f64,
        /// The refused value.
        next: f64,
    },
    /// `[UT-7]`: the request has been answered (or, for a token kept past the response, its
    /// work has ended); no progress may follow.
    #[error("the request has completed")]
    Completed,
    /// The session is closed.
    #[error("session closed")]
    Closed,
}

/// Everything a request handler knows about its request besides the params.
#[derive(Debug, Clone)]
pub struct RequestContext {
    pub(crate) id: RequestId,
    pub(crate) peer: Peer,
    pub(crate) cancel: CancellationToken,
    /// The peer's progress token and what has been sent under it; only when the request asked
    /// for progress (most do not, so nothing is allocated for them).
    pub(crate) progress: Option<ProgressSlot>,
    /// What the transport attached to the frame that carried the request.
    pub(crate) attachment: Option<Attachment>,
}

impl RequestContext {
    /// A context for handling something on behalf of request `id` outside the engine's own
    /// dispatch (a role that answers an embedded request itself, such as the client answering
    /// the input requests of a 2026 input-required result): no progress token; `cancel` ends it.
    pub fn detached(id: RequestId, peer: Peer, cancel: CancellationToken) -> Self {
        RequestContext {
            id,
            peer,
            cancel,
            progress: None,
            attachment: None,
        }
    }

    /// This context with `attachment`, as if the request had arrived with it (for a role that
    /// handles an embedded request on behalf of the one that carried it).
    pub fn with_attachment(mut self, attachment: Option<Attachment>) -> Self {
        self.attachment = attachment;
        self
    }

    /// What the transport attached to the frame that carried this request (Streamable HTTP with
    /// authorization: the caller's validated token claims); `None` for most transports.
    pub fn attachment(&self) -> Option<&Attachment> {
        self.attachment.as_ref()
    }

    /// The attachment as a `T`, when it is one.
    pub fn attachment_as<T: std::any::Any>(&self) -> Option<&T> {
        self.attachment.as_deref()?.downcast_ref::<T>()
    }

    /// The id of the request being handled.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// A handle to send requests and notifications to the peer; they are marked as related to
    /// this request (a transport may route them on this request's stream).
    pub fn peer(&self) -> &Peer {
        &self.peer
    }

    /// Cancelled when the peer cancels this request or the session closes. The engine also drops
    /// the handler's future then; the token is for cooperative clean-up in spawned work.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The `progressToken` the peer asked progress under, if any.
    pub fn progress_token(&self) -> Option<&RequestId> {
        self.progress.as_ref().map(|p| &p.token)
    }

    /// Keeps this request's progress token valid after its response, until
    /// [`end_progress`](RequestContext::end_progress): for work that goes on after the answer,
    /// such as a task whose creation is answered at once (MCP 2025-11-25: the token stays
    /// valid for the task's life). Reports sent after the response are no longer related to
    /// the request (a transport routes them as it routes any unrelated message). Call it before
    /// the handler returns. Returns whether the request carried a token.
    pub async fn keep_progress(&self) -> bool {
        match &self.progress {
            Some(slot) => {
                let mut state = slot.state.lock().await;
                if !state.done {
                    state.kept = true;
                }
                true
            }
            None => false,
        }
    }

    /// Ends this request's progress token: no progress is sent once this returns
    /// ([`ProgressError::Completed`]). Idempotent; the engine calls it itself at the response
    /// unless the token was [kept](RequestContext::keep_progress).
    pub async fn end_progress(&self) {
        if let Some(slot) = &self.progress {
            slot.state.lock().await.done = true;
        }
    }

    /// Sends `notifications/progress` for this request.
    ///
    /// # Errors
    /// No token was given, the value does not increase (`[UT-6]`), the request has completed
    /// (`[UT-7]`), or the session is closed. Nothing is sent then.
    pub async fn report_progress(&self, update: ProgressUpdate) -> Result<(), ProgressError> {
        let Some(ProgressSlot { token, state }) = &self.progress else {
            return Err(ProgressError::NoToken);
        };
        let mut state = state.lock().await;
        if state.done {
            return Err(ProgressError::Completed);
        }
        if let Some(last) = state.last
            && update.progress.partial_cmp(&last) != Some(std::cmp::Ordering::Greater)
        {
            return Err(ProgressError::NotIncreasing {
                last,
                next: update.progress,
            });
        }
        let mut params = serde_json::Map::new();
        params.insert("progressToken".into(), token.to_value());
        params.insert("progress".into(), number(update.progress));
        if let Some(t) = update.total {
            params.insert("total".into(), number(t));
        }
        if let Some(m) = update.message {
            params.insert("message".into(), m.into());
        }
        // Sent while holding the state lock: the response, which sets `done` under the same
        // lock, can never overtake a progress notification already queued. A report after the
        // response (a kept token) is no longer related to the request.
        let peer = if state.answered {
            self.peer.unrelated()
        } else {
            self.peer.clone()
        };
        peer.notify_unchecked(methods::NOTIFICATIONS_PROGRESS, &params)
            .await
            .map_err(|_| ProgressError::Closed)?;
        state.last = Some(update.progress);
        Ok(())
    }
}

/// A whole number as a JSON integer (`50`, not `50.0`), anything else as a float.
fn number(x: f64) -> serde_json::Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        serde_json::Value::from(x as i64)
    } else {
        serde_json::Value::from(x)
    }
}
