//! The in-memory transport: a connected pair in which only JSON text crosses.
//!
//! Each frame is serialized by the sending engine to a `String` and parsed again by the receiving
//! engine, exactly as on a real wire, so nothing but what JSON can represent survives.

use tokio::sync::mpsc;

use crate::transport::{FrameSink, FrameSource, OutboundFrame, Transport, TransportError};

/// The default number of frames buffered in each direction before the sender waits.
pub(crate) const DEFAULT_CAPACITY: usize = 1024;

/// One end of an in-memory connection.
#[derive(Debug)]
pub struct MemoryTransport {
    tx: mpsc::Sender<String>,
    rx: mpsc::Receiver<String>,
}

/// The sending half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemorySink(Option<mpsc::Sender<String>>);

/// The receiving half of a [`MemoryTransport`].
#[derive(Debug)]
pub struct MemorySource(mpsc::Receiver<String>);

/// A connected pair of in-memory transports with the default buffer.
pub fn pair() -> (MemoryTransport, MemoryTransport) {
    pair_with_capacity(DEFAULT_CAPACITY)
}

/// A connected pair buffering at most `capacity` frames per direction (at least 1).
pub fn pair_with_capacity(capacity: usize) -> (MemoryTransport, MemoryTransport) {
    let (a_tx, b_rx) = mpsc::channel(capacity.max(1));
    let (b_tx, a_rx) = mpsc::channel(capacity.max(1));
    (
        MemoryTransport { tx: a_tx, rx: a_rx },
        MemoryTransport { tx: b_tx, rx: b_rx },
    )
}

impl MemoryTransport {
    /// Sends raw text as one frame, bypassing any engine: for tests that play a misbehaving peer.
    ///
    /// # Errors
    /// [`TransportError::Closed`] when the other end is gone.
    pub async fn send_text(&self, text: impl Into<String>) -> Result<(), TransportError> {
        self.tx
            .send(text.into())
            .await
            .map_err(|_| TransportError::Closed)
    }

    /// Receives the next raw frame, bypassing any engine; `None` when the other end is gone.
    pub async fn recv_text(&mut self) -> Option<String> {
        self.rx.recv().await
    }
}

impl Transport for MemoryTransport {
    type Sink = MemorySink;
    type Source = MemorySource;

    fn split(self) -> (MemorySink, MemorySource) {
        (MemorySink(Some(self.tx)), MemorySource(self.rx))
    }
}

impl FrameSink for MemorySink {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        match &self.0 {
            Some(tx) => tx
                .send(frame.text)
                .await
                .map_err(|_| TransportError::Closed),
            None => Err(TransportError::Closed),
        }
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.0 = None;
        Ok(())
    }
}

impl FrameSource for MemorySource {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        self.0.recv().await.map(Ok)
    }
}
