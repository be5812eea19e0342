//! Newline-delimited JSON (stdio, both sides): each message is one line ended by `\n` (`[ST-1]`).
//!
//! The decoder separates "need more bytes" (`Ok(None)`) from a bad frame (`Err`), and after a bad
//! frame it goes on with the next line. It is lenient where the spec asks for leniency: a trailing
//! `\r` is trimmed (CRLF input), empty lines are skipped, and at end of input an unterminated last
//! line is still a frame ([`NdjsonDecoder::decode_eof`]).
//!
//! Memory stays bounded: a line longer than the bound is reported as soon as the bound is passed,
//! and its bytes are discarded as they arrive, up to and including its newline, however many reads
//! that takes. The buffer therefore never holds more than the bound plus one read.

use bytes::{Buf, BytesMut};
use switchboard_jsonrpc::TransportError;

/// The default bound on one frame, in bytes (16 MiB): the engine's own default.
pub(crate) const DEFAULT_MAX_FRAME_BYTES: usize = switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES;

/// A bad frame. The decoder has discarded it and goes on with the next line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// A line (without its `\n` or `\r\n`) was longer than the bound.
    #[error("frame of more than {limit} bytes discarded")]
    FrameTooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// A line was not valid UTF-8 (`[JR-2]`).
    #[error("frame is not valid UTF-8")]
    InvalidUtf8,
}

impl From<FrameError> for TransportError {
    fn from(e: FrameError) -> Self {
        match e {
            FrameError::FrameTooLarge { limit } => TransportError::FrameTooLarge { limit },
            FrameError::InvalidUtf8 => TransportError::InvalidUtf8,
        }
    }
}

/// Splits a byte stream into newline-delimited frames.
///
/// Between calls the caller only appends to the buffer (the decoder remembers how far it has
/// already looked for a newline, so a long frame arriving in many reads is scanned once).
#[derive(Debug, Clone)]
pub struct NdjsonDecoder {
    max_frame_bytes: usize,
    /// How many leading bytes of the buffer are known to hold no newline.
    scanned: usize,
    /// Discarding the rest of an oversized line, up to its newline.
    skipping: bool,
    /// Bytes of the oversized line discarded so far (0 when not skipping).
    skipped: u64,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        NdjsonDecoder::new(DEFAULT_MAX_FRAME_BYTES)
    }
}

impl NdjsonDecoder {
    /// A decoder that accepts frames of at most `max_frame_bytes` bytes (line terminator excluded).
    pub fn new(max_frame_bytes: usize) -> Self {
        NdjsonDecoder {
            max_frame_bytes,
            scanned: 0,
            skipping: false,
            skipped: 0,
        }
    }

    /// Bytes of the oversized line being discarded, so far (0 when none is): a reader closes a
    /// peer whose line goes on far past the bound.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The bound on one frame, in bytes.
    pub fn max_frame_bytes(&self) -> usize {
        self.max_frame_bytes
    }

    /// Takes the next frame out of `buf`: `Ok(Some(text))` for a frame, `Ok(None)` when more bytes
    /// are needed. Consumed bytes are removed from `buf`.
    ///
    /// # Errors
    /// One bad frame, already discarded; call again for the next one.
    /// [`FrameError::FrameTooLarge`] is reported once per oversized line, as soon as the bound is
    /// passed; [`FrameError::InvalidUtf8`] for a line that is not UTF-8.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<String>, FrameError> {
        loop {
            if self.skipping {
                match find_newline(buf) {
                    Some(i) => {
                        buf.advance(i + 1);
                        self.skipping = false;
                        self.skipped = 0;
                    }
                    None => {
                        self.skipped = self.skipped.saturating_add(buf.len() as u64);
                        buf.clear();
                        return Ok(None);
                    }
                }
            }
            let Some(i) = find_newline(&buf[self.scanned..]).map(|i| i + self.scanned) else {
                // A last byte `\r` may be the start of the terminator; every other byte is content.
                let content = buf.len() - usize::from(buf.last() == Some(&b'\r'));
                if content > self.max_frame_bytes {
                    self.skipped = buf.len() as u64;
                    buf.clear();
                    self.scanned = 0;
                    self.skipping = true;
                    return Err(self.too_large());
                }
                self.scanned = buf.len();
                return Ok(None);
            };
            self.scanned = 0;
            let end = if i > 0 && buf[i - 1] == b'\r' {
                i - 1
            } else {
                i
            };
            if end == 0 {
                buf.advance(i + 1);
                continue; // An empty line carries no frame.
            }
            let frame = if end > self.max_frame_bytes {
                Err(self.too_large())
            } else {
                std::str::from_utf8(&buf[..end])
                    .map(|s| Some(s.to_owned()))
                    .map_err(|_| FrameError::InvalidUtf8)
            };
            buf.advance(i + 1);
            return frame;
        }
    }

    /// Like [`decode`](Self::decode), at end of input: an unterminated last line is a frame too.
    /// Call until it returns `Ok(None)`; `buf` is empty then.
    ///
    /// # Errors
    /// As for [`decode`](Self::decode).
    pub fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<String>, FrameError> {
        if let Some(frame) = self.decode(buf)? {
            return Ok(Some(frame));
        }
        if self.skipping {
            // The oversized line was reported already; end of input ends it.
            self.skipping = false;
            buf.clear();
            return Ok(None);
        }
        if buf.is_empty() {
            return Ok(None);
        }
        buf.extend_from_slice(b"\n");
        self.decode(buf)
    }

    fn too_large(&self) -> FrameError {
        FrameError::FrameTooLarge {
            limit: self.max_frame_bytes,
        }
    }
}

/// Appends one frame to `dst`: the text and its `\n`. The text must hold no raw newline
/// (`[ST-1]`; compact JSON never does, as JSON strings escape it).
pub fn encode(text: &str, dst: &mut BytesMut) {
    debug_assert!(
        !text.contains('\n'),
        "[ST-1] a frame must not contain a raw newline"
    );
    dst.reserve(text.len() + 1);
    dst.extend_from_slice(text.as_bytes());
    dst.extend_from_slice(b"\n");
}

fn find_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Out = Vec<Result<String, FrameError>>;

    /// Feeds `chunks` one after the other, draining frames after each, then ends the input.
    fn run(max: usize, chunks: &[&[u8]]) -> Out {
        let mut d = NdjsonDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            loop {
                match d.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(f)) => out.push(Ok(f)),
                    Err(e) => out.push(Err(e)),
                }
            }
        }
        loop {
            match d.decode_eof(&mut buf) {
                Ok(None) => break,
                Ok(Some(f)) => out.push(Ok(f)),
                Err(e) => out.push(Err(e)),
            }
        }
        assert!(buf.is_empty(), "input fully consumed");
        out
    }

    fn ok(s: &str) -> Result<String, FrameError> {
        Ok(s.to_owned())
    }

    const BIG: FrameError = FrameError::FrameTooLarge { limit: 16 };

    #[test]
    fn one_frame_per_line() {
        assert_eq!(
            run(1024, &[b"{\"a\":1}\n{\"b\":2}\n"]),
            vec![ok("{\"a\":1}"), ok("{\"b\":2}")]
        );
    }

    #[test]
    fn partial_line_needs_more_bytes() {
        let mut d = NdjsonDecoder::default();
        let mut buf = BytesMut::from(&b"{\"a\":"[..]);
        assert_eq!(d.decode(&mut buf), Ok(None));
        buf.extend_from_slice(b"1}\n");
        assert_eq!(d.decode(&mut buf), Ok(Some("{\"a\":1}".to_owned())));
        assert_eq!(d.decode(&mut buf), Ok(None));
        assert!(buf.is_empty());
    }

    #[test]
    fn crlf_is_trimmed_and_empty_lines_skipped() {
        assert_eq!(
            run(1024, &[b"\n\r\n{}\r\n\n[1]\r\n\r\n"]),
            vec![ok("{}"), ok("[1]")]
        );
    }

    #[test]
    fn only_one_trailing_cr_is_trimmed() {
        assert_eq!(run(1024, &[b"x\r\r\n"]), vec![ok("x\r")]);
    }

    #[test]
    fn unterminated_last_line_is_a_frame_at_eof() {
        assert_eq!(
            run(1024, &[b"{}\n{\"last\":true}"]),
            vec![ok("{}"), ok("{\"last\":true}")]
        );
        assert_eq!(run(1024, &[b"{}\n\r"]), vec![ok("{}")]);
    }

    #[test]
    fn bound_is_inclusive_and_excludes_the_terminator() {
        let exact = "x".repeat(16);
        let over = "y".repeat(17);
        let input = format!("{exact}\r\n{over}\r\n{exact}\n");
        assert_eq!(
            run(16, &[input.as_bytes()]),
            vec![ok(&exact), Err(BIG), ok(&exact)]
        );
    }

    #[test]
    fn oversized_line_is_reported_once_and_skipped_across_reads() {
        let mut d = NdjsonDecoder::new(16);
        let mut buf = BytesMut::new();
        buf.extend_from_slice(&[b'z'; 10]);
        assert_eq!(d.decode(&mut buf), Ok(None));
        buf.extend_from_slice(&[b'z'; 10]);
        assert_eq!(d.decode(&mut buf), Err(BIG));
        assert_eq!(d.decode(&mut buf), Ok(None));
        for _ in 0..100 {
            buf.extend_from_slice(&[b'z'; 1000]);
            assert_eq!(d.decode(&mut buf), Ok(None));
            assert!(buf.is_empty(), "skipped bytes are not kept");
        }
        buf.extend_from_slice(b"zzz\n{\"next\":1}\n");
        assert_eq!(d.decode(&mut buf), Ok(Some("{\"next\":1}".to_owned())));
    }

    #[test]
    fn memory_stays_bounded_for_a_huge_line() {
        let max = 1024;
        let chunk = [b'q'; 4096];
        let mut d = NdjsonDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut errors = 0;
        for _ in 0..256 {
            buf.extend_from_slice(&chunk);
            loop {
                match d.decode(&mut buf) {
                    Ok(None) => break,
                    Ok(Some(f)) => panic!("unexpected frame {f}"),
                    Err(_) => errors += 1,
                }
            }
            assert!(buf.len() <= max + chunk.len());
        }
        buf.extend_from_slice(b"\n{}\n");
        assert_eq!(d.decode(&mut buf), Ok(Some("{}".to_owned())));
        assert_eq!(errors, 1);
    }

    #[test]
    fn invalid_utf8_is_reported_and_skipped() {
        assert_eq!(
            run(1024, &[b"{\"a\":\"\xff\"}\n{}\n"]),
            vec![Err(FrameError::InvalidUtf8), ok("{}")]
        );
    }

    #[test]
    fn multibyte_utf8_survives() {
        assert_eq!(
            run(1024, &["{\"s\":\"héllo ✓ 🦀\"}\n".as_bytes()]),
            vec![ok("{\"s\":\"héllo ✓ 🦀\"}")]
        );
    }

    #[test]
    fn oversized_line_at_eof_is_reported_once() {
        assert_eq!(run(16, &[&[b'w'; 40]]), vec![Err(BIG)]);
        assert_eq!(run(16, &[&[b'w'; 40], b"\n{}"]), vec![Err(BIG), ok("{}")]);
    }

    /// Input exercising every path: CRLF, empty lines, an oversized line, invalid UTF-8,
    /// multibyte characters, a frame of exactly the bound, an unterminated last line.
    fn mixed_input() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(b"{\"id\":1}\r\n\n");
        v.extend_from_slice(b"0123456789abcdef\r\n");
        v.extend_from_slice(&[b'L'; 40]);
        v.extend_from_slice(b"\r\n{\"x\":\"\xc3\xa9\xf0\x9f\xa6\x80\"}\n");
        v.extend_from_slice(b"\xfe\xff\n\r\n");
        v.extend_from_slice(&[b'M'; 17]);
        v.extend_from_slice(b"\n[1,2]\r\n{\"end\":1}");
        v
    }

    fn expected_mixed() -> Out {
        vec![
            ok("{\"id\":1}"),
            ok("0123456789abcdef"),
            Err(BIG),
            ok("{\"x\":\"é🦀\"}"),
            Err(FrameError::InvalidUtf8),
            Err(BIG),
            ok("[1,2]"),
            ok("{\"end\":1}"),
        ]
    }

    #[test]
    fn same_frames_for_every_two_chunk_split() {
        let input = mixed_input();
        assert_eq!(run(16, &[&input]), expected_mixed());
        for at in 0..=input.len() {
            let (a, b) = input.split_at(at);
            assert_eq!(run(16, &[a, b]), expected_mixed(), "split at {at}");
        }
    }

    #[test]
    fn same_frames_for_one_byte_chunks() {
        let input = mixed_input();
        let chunks: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(run(16, &chunks), expected_mixed());
    }

    #[test]
    fn same_frames_for_every_three_chunk_split() {
        let input = mixed_input();
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let chunks = [&input[..i], &input[i..j], &input[j..]];
                assert_eq!(run(16, &chunks), expected_mixed(), "split at {i},{j}");
            }
        }
    }

    #[test]
    fn encode_appends_a_newline() {
        let mut dst = BytesMut::new();
        encode("{\"a\":1}", &mut dst);
        encode("{}", &mut dst);
        assert_eq!(&dst[..], b"{\"a\":1}\n{}\n");
        assert_eq!(run(1024, &[&dst]), vec![ok("{\"a\":1}"), ok("{}")]);
    }

    #[test]
    fn frame_errors_map_to_recoverable_transport_errors() {
        let e: TransportError = BIG.into();
        assert!(matches!(e, TransportError::FrameTooLarge { limit: 16 }));
        assert!(e.is_recoverable());
        let e: TransportError = FrameError::InvalidUtf8.into();
        assert!(e.is_recoverable());
    }
}
