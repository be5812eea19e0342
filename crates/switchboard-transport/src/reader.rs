//! The reading half shared by the stdio and child transports: an `AsyncRead` plus the ndjson
//! decoder, yielding frames in the shape the engine's `FrameSource::recv` wants.

use bytes::BytesMut;
use switchboard_jsonrpc::TransportError;
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::codec::ndjson::NdjsonDecoder;

/// How much room is made in the buffer before each read.
const READ_CHUNK: usize = 8 * 1024;

/// Above this capacity an empty buffer is released, so one huge frame does not pin its memory
/// for the rest of the session.
const KEEP_READ_BUFFER: usize = 1024 * 1024;

/// A byte reader cut into newline-delimited frames.
#[derive(Debug)]
pub(crate) struct FrameReader<R> {
    reader: R,
    buf: BytesMut,
    decoder: NdjsonDecoder,
    /// The reader reported end of input (or failed); only buffered bytes remain.
    eof: bool,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub(crate) fn new(reader: R, max_frame_bytes: usize) -> Self {
        FrameReader {
            reader,
            buf: BytesMut::with_capacity(READ_CHUNK),
            decoder: NdjsonDecoder::new(max_frame_bytes),
            eof: false,
        }
    }

    /// Whether the reader has reached end of input.
    pub(crate) fn at_eof(&self) -> bool {
        self.eof
    }

    /// The next frame already in the buffer, or a recoverable bad-frame error; `None` when more
    /// bytes are needed (or, at end of input, when nothing is left).
    pub(crate) fn buffered(&mut self) -> Option<Result<String, TransportError>> {
        let next = if self.eof {
            self.decoder.decode_eof(&mut self.buf)
        } else {
            self.decoder.decode(&mut self.buf)
        };
        next.map_err(TransportError::from).transpose()
    }

    /// Reads more bytes; at end of input marks the reader finished. Cancel-safe: no bytes are
    /// lost when the future is dropped.
    ///
    /// # Errors
    /// The reader's I/O error; the reader is then finished and its buffer dropped.
    pub(crate) async fn fill(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() && self.buf.capacity() > KEEP_READ_BUFFER {
            self.buf = BytesMut::with_capacity(READ_CHUNK);
        }
        self.buf.reserve(READ_CHUNK);
        match self.reader.read_buf(&mut self.buf).await {
            Ok(0) => {
                self.eof = true;
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => {
                self.eof = true;
                self.buf.clear();
                Err(e)
            }
        }
    }

    /// The next frame; `None` at end of input. An I/O error is fatal and reported once.
    pub(crate) async fn next(&mut self) -> Option<Result<String, TransportError>> {
        loop {
            if let Some(frame) = self.buffered() {
                return Some(frame);
            }
            if self.eof {
                return None;
            }
            if let Err(e) = self.fill().await {
                return Some(Err(TransportError::Io(e)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn the_read_buffer_is_released_after_a_huge_frame() {
        let mut input = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(4 << 20)).into_bytes();
        input.extend_from_slice(b"{}\n{\"b\":1}\n");
        let mut r = FrameReader::new(&input[..], 16 << 20);
        assert_eq!(r.next().await.unwrap().unwrap().len(), (4 << 20) + 10);
        assert!(
            r.buf.capacity() > KEEP_READ_BUFFER,
            "the huge frame grew it"
        );
        assert_eq!(r.next().await.unwrap().unwrap(), "{}");
        assert_eq!(r.next().await.unwrap().unwrap(), r#"{"b":1}"#);
        assert!(r.next().await.is_none());
        assert!(
            r.buf.capacity() <= KEEP_READ_BUFFER,
            "{} bytes kept after the frame",
            r.buf.capacity()
        );
    }
}
