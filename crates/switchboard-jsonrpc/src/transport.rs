//! The transport seam: a transport moves JSON text frames, one message (or batch) per frame.
//!
//! Framing (newline-delimited stdio, SSE, HTTP bodies) lives in the transports; the engine decodes
//! frames into messages. Outbound frames carry their kind, id and related request so that a
//! transport such as Streamable HTTP can route a response to the stream of the POST that carried
//! its request, without ever reading `params`.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use switchboard_types::{MessageKind, RequestId};

/// One outbound frame: serialized JSON text plus routing facts the engine already knows.
#[derive(Debug, Clone)]
pub struct OutboundFrame {
    /// Compact JSON text of one message or one batch array; contains no raw newline.
    pub text: String,
    /// The structural kind of the message (for a batch: the kind of its first entry).
    pub kind: MessageKind,
    /// The id of a request or response.
    pub id: Option<RequestId>,
    /// For a request or notification sent while handling a peer's request: that request's id.
    pub related: Option<RequestId>,
    /// Header lines the role wants sent with this frame, as opaque name/value text (a
    /// transport with a header layer, such as Streamable HTTP, sends them; stdio ignores them).
    /// Empty for almost every frame; the engine never reads them.
    pub headers: Vec<(String, String)>,
    /// For a `notifications/cancelled` the engine sends: the id of the request it cancels, so
    /// that a transport whose cancellation is closing the request's stream can do that instead
    /// of sending the notification.
    pub cancels: Option<RequestId>,
}

impl OutboundFrame {
    /// A frame with no header lines and no cancellation.
    pub fn new(
        text: String,
        kind: MessageKind,
        id: Option<RequestId>,
        related: Option<RequestId>,
    ) -> Self {
        OutboundFrame {
            text,
            kind,
            id,
            related,
            headers: Vec::new(),
            cancels: None,
        }
    }
}

/// A transport error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// A frame exceeded the transport's size bound; the frame was discarded, the transport lives on.
    #[error("frame of more than {limit} bytes discarded")]
    FrameTooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// A frame was not valid UTF-8 (`[JR-2]`); it was discarded, the transport lives on.
    #[error("frame is not valid UTF-8")]
    InvalidUtf8,
    /// The transport is closed.
    #[error("transport closed")]
    Closed,
    /// An I/O failure; the transport is unusable.
    #[error("transport I/O: {0}")]
    Io(#[from] std::io::Error),
    /// Any other failure, described.
    #[error("transport: {0}")]
    Other(String),
}

impl TransportError {
    /// Whether the transport can go on after this error (a bad frame), or is finished.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self,
            TransportError::FrameTooLarge { .. } | TransportError::InvalidUtf8
        )
    }
}

/// The sending half of a transport.
pub trait FrameSink: Send + 'static {
    /// Sends one frame. Frames are sent in call order.
    fn send(
        &mut self,
        frame: OutboundFrame,
    ) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Sends every frame of `frames` in order, leaving it empty. The engine hands over
    /// everything queued at once, so that a transport can write the lot with one system call
    /// (stdio does). Default: one [`FrameSink::send`] each.
    fn send_batch(
        &mut self,
        frames: &mut Vec<OutboundFrame>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send {
        async move {
            for f in frames.drain(..) {
                self.send(f).await?;
            }
            Ok(())
        }
    }

    /// Closes the sending direction (for stdio: closes the pipe). Default: nothing to do.
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send {
        async { Ok(()) }
    }
}

/// What a transport learnt about an inbound frame besides its text (for Streamable HTTP with
/// authorization: the validated token's claims), handed to the handlers of the frame's requests
/// through [`crate::RequestContext::attachment`]. Opaque to the engine, which never reads it.
pub type Attachment = Arc<dyn Any + Send + Sync>;

/// The receiving half of a transport.
pub trait FrameSource: Send + 'static {
    /// The next frame's text; `None` at end of stream. A recoverable error reports one bad frame.
    fn recv(&mut self) -> impl Future<Output = Option<Result<String, TransportError>>> + Send;

    /// The attachment of the frame the last [`FrameSource::recv`] returned, taken once; the
    /// engine asks right after each frame. Default: none.
    fn take_attachment(&mut self) -> Option<Attachment> {
        None
    }
}

/// Transport-specific controls, reached by handlers through [`crate::Peer::transport_control`]
/// and by the engine itself. Every hook has a default that does nothing, so a transport
/// implements only what it offers.
///
/// The hooks carry request ids and opaque text only: the engine and the transports never learn
/// what a role's handshake says, and a transport never reads `params` to find out.
pub trait TransportControl: Send + Sync + 'static {
    /// Closes the stream that will carry the answer to `request` (Streamable HTTP: that POST's
    /// SSE stream) without ending the request: the client gets the rest by reconnecting with
    /// `Last-Event-ID` (SEP-1699 polling). Returns whether there was such a stream.
    fn close_stream(&self, request: &RequestId) -> bool {
        let _ = request;
        false
    }

    /// Called by the engine when the peer has cancelled `request` (a cancellable request in
    /// flight): its handler is dropped and it will never be answered, so the transport may end
    /// whatever waits for that answer (Streamable HTTP: the POST's SSE stream ends at once; a
    /// POST waiting for a JSON answer ends with 202 and no body).
    fn request_cancelled(&self, request: &RequestId) {
        let _ = request;
    }

    /// Called by the engine when one of our own requests is given up locally: its timeout
    /// passed, its caller cancelled it, or the caller's future was dropped. No answer to it is
    /// awaited any more (the peer is told separately, with `notifications/cancelled` when the
    /// request is cancellable), so the transport may stop waiting for one (Streamable HTTP
    /// client: the POST that carries it, once every request it carries is given up, drops its
    /// answer and frees its slot). Called at most once per request, never for one answered.
    fn request_abandoned(&self, request: &RequestId) {
        let _ = request;
    }

    /// Keeps `snapshot`, an opaque description of the session that the role hands over when its
    /// handshake completes, so that the session can later be resumed without a new handshake
    /// (Streamable HTTP: stored verbatim in the session store and handed back to the session
    /// factory when a node takes the session over). The transport never parses it; a later call
    /// replaces it. Default: not kept (the transport cannot resume sessions).
    fn save_snapshot(&self, snapshot: &str) {
        let _ = snapshot;
    }

    /// A name for this session that stays the same on every process that serves it (Streamable
    /// HTTP: its session id, which a node taking the session over shares), so that a role can
    /// key what it keeps in a store shared by several processes (the tasks of a session) by
    /// it. Secret: never logged, never sent. Default: `None` (the session lives in one
    /// process; the role uses a name of its own).
    fn session_key(&self) -> Option<Arc<str>> {
        None
    }
}

/// A bidirectional transport that splits into its two halves.
pub trait Transport: Send + 'static {
    /// The sending half.
    type Sink: FrameSink;
    /// The receiving half.
    type Source: FrameSource;

    /// Controls this transport offers to handlers; none by default.
    fn control(&self) -> Option<Arc<dyn TransportControl>> {
        None
    }

    /// Splits the transport so that reading and writing proceed independently.
    fn split(self) -> (Self::Sink, Self::Source);

    /// Where the engine leaves the session's [`Driver`] (its reader and writer as one future)
    /// instead of spawning them as two tasks, for a transport that runs the session in a task
    /// of its own: Streamable HTTP's one-request connections of revision 2026-07-28, whose
    /// POST's task runs the session until its answer is in hand, so that the request, its
    /// handler and its answer cross no task. `None` (the default): the engine spawns them.
    fn driver_slot(&self) -> Option<DriverSlot> {
        None
    }
}

/// A session's reader and writer as one future (see [`Transport::driver_slot`]); it ends once
/// the session has closed. Dropped before its end, it goes on as a task of its own (when a
/// Tokio runtime is current), so a session is never left half-run.
pub struct Driver(Option<Pin<Box<dyn Future<Output = ()> + Send>>>);

impl Driver {
    pub(crate) fn new(fut: impl Future<Output = ()> + Send + 'static) -> Self {
        Driver(Some(Box::pin(fut)))
    }
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("ended", &self.0.is_none())
            .finish()
    }
}

impl Future for Driver {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(fut) = self.0.as_mut() else {
            return Poll::Ready(());
        };
        let done = fut.as_mut().poll(cx);
        if done.is_ready() {
            self.0 = None;
        }
        done
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(fut) = self.0.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(fut);
        }
    }
}

/// The place a transport hands the engine for the session's [`Driver`] (see
/// [`Transport::driver_slot`]): shared, the engine puts the driver in, the transport takes it.
#[derive(Debug, Clone, Default)]
pub struct DriverSlot(Arc<Mutex<Option<Driver>>>);

impl DriverSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// The driver the engine left, taken once.
    pub fn take(&self) -> Option<Driver> {
        self.0.lock().ok().and_then(|mut d| d.take())
    }

    pub(crate) fn put(&self, driver: Driver) -> Result<(), Driver> {
        match self.0.lock() {
            Ok(mut d) if d.is_none() => {
                *d = Some(driver);
                Ok(())
            }
            _ => Err(driver),
        }
    }
}

impl<A: FrameSink, B: FrameSource> Transport for (A, B) {
    type Sink = A;
    type Source = B;

    fn split(self) -> (A, B) {
        self
    }
}
