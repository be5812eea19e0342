//! The transport seam: a transport moves JSON text frames, one message (or batch) per frame.
//!
//! Framing (newline-delimited stdio, SSE, HTTP bodies) lives in the transports; the engine decodes
//! frames into messages. Outbound frames carry their kind, id and related request so that a
//! transport such as Streamable HTTP can route a response to the stream of the POST that carried
//! its request, without ever reading `params`.

use std::future::Future;
use std::sync::Arc;

use switchboard_types::{MessageKind, ProtocolVersion, RequestId};

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

/// The receiving half of a transport.
pub trait FrameSource: Send + 'static {
    /// The next frame's text; `None` at end of stream. A recoverable error reports one bad frame.
    fn recv(&mut self) -> impl Future<Output = Option<Result<String, TransportError>>> + Send;
}

/// Transport-specific controls a handler may use through [`crate::Peer::transport_control`].
pub trait TransportControl: Send + Sync + 'static {
    /// Closes the stream that will carry the answer to `request` (Streamable HTTP: that POST's
    /// SSE stream) without ending the request: the client gets the rest by reconnecting with
    /// `Last-Event-ID` (SEP-1699 polling). Returns whether there was such a stream.
    fn close_stream(&self, request: &RequestId) -> bool {
        let _ = request;
        false
    }
}

/// A session whose handshake happened before this transport existed: a stateless Streamable
/// HTTP request (each POST is served on its own), or a session taken over from a session store
/// (another node, or this one after its engine was dropped). The engine starts in the ready
/// state at `version` instead of waiting for `initialize`.
#[derive(Debug, Clone, PartialEq)]
pub struct Established {
    /// The revision in force (the `MCP-Protocol-Version` the request carried, or the
    /// negotiated one).
    pub version: ProtocolVersion,
    /// The client's `initialize` params (compact JSON) when known: `clientInfo` and
    /// capabilities. `None`: an anonymous client that declared no capability.
    pub initialize: Option<Arc<str>>,
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

    /// `Some` when the session was established elsewhere and starts ready (see
    /// [`Established`]); `None` (the default): the session begins with `initialize`.
    fn established(&self) -> Option<Established> {
        None
    }

    /// Splits the transport so that reading and writing proceed independently.
    fn split(self) -> (Self::Sink, Self::Source);
}

impl<A: FrameSink, B: FrameSource> Transport for (A, B) {
    type Sink = A;
    type Source = B;

    fn split(self) -> (A, B) {
        self
    }
}
