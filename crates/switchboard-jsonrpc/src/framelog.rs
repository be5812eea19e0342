//! The frame-log hook: sees every frame, in and out, with its direction, kind and id, before any
//! params are parsed. The inspector and `switchboard trace` are built on it.

use std::fmt;
use std::sync::Arc;

use switchboard_types::{ErrorObject, MessageKind, RequestId};

/// Which way a frame travels relative to this engine: received or sent. (The wire direction,
/// client → server or back, is [`switchboard_types::Direction`]; the engine does not know its role.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flow {
    /// Received from the peer.
    Inbound,
    /// Sent to the peer.
    Outbound,
}

impl Flow {
    /// An arrow for traces: `<-` inbound, `->` outbound.
    pub fn arrow(self) -> &'static str {
        match self {
            Flow::Inbound => "<-",
            Flow::Outbound => "->",
        }
    }
}

/// One frame as the hook sees it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct FrameEvent<'a> {
    /// The direction.
    pub direction: Flow,
    /// The structural kind; `None` for a frame that is not a valid message.
    pub kind: Option<MessageKind>,
    /// The id of a request or response.
    pub id: Option<&'a RequestId>,
    /// The method of a request or notification.
    pub method: Option<&'a str>,
    /// The raw JSON text of the whole frame.
    pub text: &'a str,
    /// Why an inbound frame was invalid, when it was.
    pub invalid: Option<&'a ErrorObject>,
    /// Whether the frame is a batch (a JSON array).
    pub batch: bool,
}

/// A frame-log hook. Called synchronously on the engine's path: keep it cheap.
#[derive(Clone)]
pub struct FrameHook(Arc<dyn Fn(&FrameEvent<'_>) + Send + Sync>);

impl FrameHook {
    /// Wraps a closure.
    pub fn new(f: impl Fn(&FrameEvent<'_>) + Send + Sync + 'static) -> Self {
        FrameHook(Arc::new(f))
    }

    pub(crate) fn call(&self, e: &FrameEvent<'_>) {
        (self.0)(e)
    }
}

impl fmt::Debug for FrameHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FrameHook(..)")
    }
}
