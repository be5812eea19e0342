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

/// How many times the frame bound of one oversized line are discarded (and at least
/// [`SKIP_FLOOR`] bytes) before the peer is taken to send a line that never ends and the input
/// is closed (a hostile peer's endless answer; issue 25, `serve --hostile huge-answer`):
/// discarding it for ever would hold this side reading for as long as the peer writes.
pub(crate) const SKIP_FACTOR: u64 = 4;

/// The fewest bytes of one oversized line discarded before the input is closed.
pub(crate) const SKIP_FLOOR: u64 = 64 << 20;

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
        match next {
            Ok(None) => self.endless().map(Err),
            other => other.map_err(TransportError::from).transpose(),
        }
    }

    /// When the oversized line being discarded has gone on past the skip limit: the input is
    /// closed (nothing more is read) and the error says why.
    fn endless(&mut self) -> Option<TransportError> {
        let limit = (self.decoder.max_frame_bytes() as u64)
            .saturating_mul(SKIP_FACTOR)
            .max(SKIP_FLOOR);
        if self.eof || self.decoder.skipped() <= limit {
            return None;
        }
        self.eof = true;
        self.buf.clear();
        Some(TransportError::Io(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("the peer sent a line that went on past {limit} bytes; input closed"),
        )))
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

    /// A line that goes on past four times the bound (at least 64 MiB) is discarded up to there,
    /// and then the input is closed: a peer cannot keep this side reading for ever.
    #[tokio::test]
    async fn a_line_that_does_not_end_closes_the_input() {
        let mut input = vec![b'x'; 2000];
        input.extend_from_slice(b"\n{}\n");
        // Then a line that never ends.
        let endless = tokio::io::AsyncReadExt::chain(&input[..], tokio::io::repeat(b'y'));
        let mut r = FrameReader::new(endless, 1024);
        assert!(matches!(
            r.next().await,
            Some(Err(TransportError::FrameTooLarge { limit: 1024 }))
        ));
        assert_eq!(
            r.next().await.unwrap().unwrap(),
            "{}",
            "a long line is discarded"
        );
        assert!(matches!(
            r.next().await,
            Some(Err(TransportError::FrameTooLarge { limit: 1024 }))
        ));
        match r.next().await {
            Some(Err(TransportError::Io(e))) => {
                assert!(e.to_string().contains("went on past 67108864 bytes"), "{e}")
            }
            other => panic!("expected the input closed, got {other:?}"),
        }
        assert!(r.next().await.is_none(), "nothing after");
    }

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
