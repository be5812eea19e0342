//! The stdio transport (both sides, spec §5): newline-delimited JSON over any byte reader and
//! writer. A server uses [`StdioTransport::stdio`] on its own stdin/stdout; tests use it over
//! `tokio::io::duplex`; [`crate::child`] uses the same framing on a child's pipes.
//!
//! Reading: end of input ends the stream cleanly (`None`; for a server, EOF on stdin is its
//! shutdown signal). An oversized line yields [`TransportError::FrameTooLarge`] and an invalid
//! UTF-8 line [`TransportError::InvalidUtf8`]; both are recoverable, so the engine answers an
//! error without id and reads on. A read failure is fatal ([`TransportError::Io`]).
//!
//! Writing: each frame is written as one line and flushed at once. Closing the sink flushes and
//! shuts the writer down (the peer sees end of input).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::BytesMut;
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport, TransportError};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf, Stdin, Stdout};

use crate::codec::ndjson::{self, DEFAULT_MAX_FRAME_BYTES};
use crate::reader::FrameReader;

/// Above this capacity the write buffer is released after a frame, so one huge frame does not
/// pin its memory for the rest of the session.
const KEEP_WRITE_BUFFER: usize = 64 * 1024;

/// Newline-delimited JSON over a reader and a writer.
#[derive(Debug)]
pub struct StdioTransport<R, W> {
    reader: R,
    writer: W,
    max_frame_bytes: usize,
}

/// This process's stdin: read through the reactor when it is a pipe (no thread hop per read),
/// else through Tokio's blocking-pool `Stdin`.
#[derive(Debug)]
pub enum StdinReader {
    /// A pipe, read without blocking.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Receiver),
    /// Anything else (a terminal, a file).
    Std(Stdin),
}

/// This process's stdout: written through the reactor when it is a pipe, else through Tokio's
/// blocking-pool `Stdout`.
#[derive(Debug)]
pub enum StdoutWriter {
    /// A pipe, written without blocking.
    #[cfg(unix)]
    Pipe(tokio::net::unix::pipe::Sender),
    /// Anything else.
    Std(Stdout),
}

#[cfg(unix)]
fn stdin_pipe() -> Option<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd;
    tokio::runtime::Handle::try_current().ok()?;
    let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

#[cfg(unix)]
fn stdout_pipe() -> Option<tokio::net::unix::pipe::Sender> {
    use std::os::fd::AsFd;
    tokio::runtime::Handle::try_current().ok()?;
    let fd = io::stdout().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()
}

impl StdinReader {
    /// This process's stdin.
    pub fn new() -> Self {
        #[cfg(unix)]
        if let Some(p) = stdin_pipe() {
            return StdinReader::Pipe(p);
        }
        StdinReader::Std(tokio::io::stdin())
    }
}

impl Default for StdinReader {
    fn default() -> Self {
        Self::new()
    }
}

impl StdoutWriter {
    /// This process's stdout.
    pub fn new() -> Self {
        #[cfg(unix)]
        if let Some(p) = stdout_pipe() {
            return StdoutWriter::Pipe(p);
        }
        StdoutWriter::Std(tokio::io::stdout())
    }
}

impl Default for StdoutWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncRead for StdinReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            StdinReader::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            StdinReader::Std(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdoutWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(unix)]
            StdoutWriter::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            StdoutWriter::Std(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            StdoutWriter::Pipe(p) => Pin::new(p).poll_flush(cx),
            StdoutWriter::Std(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(unix)]
            StdoutWriter::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            StdoutWriter::Std(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

impl StdioTransport<StdinReader, StdoutWriter> {
    /// The transport over this process's own stdin and stdout (the server side of stdio).
    /// Nothing else may write to stdout (`[ST-2]`); log to stderr. When stdin and stdout are
    /// pipes (the usual case: a host spawned us) they are driven by the reactor directly, with
    /// no thread hop per read or write; call it inside a Tokio runtime for that.
    pub fn stdio() -> Self {
        StdioTransport::new(StdinReader::new(), StdoutWriter::new())
    }
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// The transport reading frames from `reader` and writing frames to `writer`, with the
    /// default frame bound ([`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES)).
    pub fn new(reader: R, writer: W) -> Self {
        StdioTransport {
            reader,
            writer,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }

    /// Sets the bound on one inbound frame, in bytes.
    pub fn with_max_frame_bytes(mut self, n: usize) -> Self {
        self.max_frame_bytes = n;
        self
    }
}

impl<R, W> Transport for StdioTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Sink = StdioSink<W>;
    type Source = StdioSource<R>;

    fn split(self) -> (StdioSink<W>, StdioSource<R>) {
        (
            StdioSink::new(self.writer),
            StdioSource(FrameReader::new(self.reader, self.max_frame_bytes)),
        )
    }
}

/// The writing half of a [`StdioTransport`]: one line per frame, flushed per frame.
#[derive(Debug)]
pub struct StdioSink<W> {
    writer: W,
    buf: BytesMut,
    closed: bool,
}

impl<W: AsyncWrite + Unpin + Send + 'static> StdioSink<W> {
    fn new(writer: W) -> Self {
        StdioSink {
            writer,
            buf: BytesMut::new(),
            closed: false,
        }
    }
}

impl<W: AsyncWrite + Unpin + Send + 'static> FrameSink for StdioSink<W> {
    async fn send(&mut self, frame: OutboundFrame) -> Result<(), TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        write_frame(&mut self.writer, &mut self.buf, &frame.text).await?;
        Ok(())
    }

    /// Every frame as one line, all in one write and one flush.
    async fn send_batch(&mut self, frames: &mut Vec<OutboundFrame>) -> Result<(), TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        encode_all(&mut self.buf, frames);
        write_encoded(&mut self.writer, &mut self.buf).await?;
        Ok(())
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        if std::mem::replace(&mut self.closed, true) {
            return Ok(());
        }
        self.writer.flush().await?;
        self.writer.shutdown().await?;
        Ok(())
    }
}

/// Writes `text` as one line through the scratch buffer `buf` and flushes.
pub(crate) async fn write_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    buf: &mut BytesMut,
    text: &str,
) -> std::io::Result<()> {
    buf.clear();
    ndjson::encode(text, buf);
    write_encoded(writer, buf).await
}

/// Encodes every frame of `frames` as a line into `buf` (cleared first), leaving `frames` empty.
pub(crate) fn encode_all(buf: &mut BytesMut, frames: &mut Vec<OutboundFrame>) {
    buf.clear();
    for f in frames.drain(..) {
        ndjson::encode(&f.text, buf);
    }
}

/// Writes the lines already encoded in `buf` and flushes; a grown buffer is given back.
pub(crate) async fn write_encoded<W: AsyncWrite + Unpin>(
    writer: &mut W,
    buf: &mut BytesMut,
) -> std::io::Result<()> {
    let written = writer.write_all(buf).await;
    if buf.capacity() > KEEP_WRITE_BUFFER {
        *buf = BytesMut::new();
    }
    written?;
    writer.flush().await
}

/// The reading half of a [`StdioTransport`].
#[derive(Debug)]
pub struct StdioSource<R>(FrameReader<R>);

impl<R: AsyncRead + Unpin + Send + 'static> FrameSource for StdioSource<R> {
    async fn recv(&mut self) -> Option<Result<String, TransportError>> {
        self.0.next().await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use switchboard_types::MessageKind;

    fn note(text: String) -> OutboundFrame {
        OutboundFrame::new(text, MessageKind::Notification, None, None)
    }

    #[tokio::test]
    async fn the_write_buffer_is_released_after_a_huge_frame() {
        let mut out = Vec::new();
        let mut buf = BytesMut::new();
        let mut frames = vec![note("x".repeat(1 << 20))];
        encode_all(&mut buf, &mut frames);
        write_encoded(&mut out, &mut buf).await.unwrap();
        assert_eq!(out.len(), (1 << 20) + 1);
        assert!(buf.capacity() <= KEEP_WRITE_BUFFER, "{}", buf.capacity());
        // A small frame keeps its buffer (no allocation per frame).
        let mut frames = vec![note("{}".to_owned())];
        encode_all(&mut buf, &mut frames);
        let before = buf.capacity();
        write_encoded(&mut out, &mut buf).await.unwrap();
        assert_eq!(buf.capacity(), before);
        assert!(before > 0);
    }
}
