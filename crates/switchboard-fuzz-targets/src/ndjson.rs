//! The stdio framing (`switchboard_transport::codec::ndjson`), as a server or client reads its
//! peer's output.
//!
//! Input: one byte choosing the frame bound and how the stream is cut into reads, then the
//! stream. The frames (and errors) must equal those of a plain model of the framing (split on
//! `\n`, one trailing `\r` trimmed, empty lines skipped, an unterminated last line kept, a line
//! over the bound reported once, a line that is not UTF-8 reported), whether the stream arrives
//! in one read or in many; between reads the decoder holds at most the bound plus one byte.

use bytes::BytesMut;
use switchboard_transport::codec::ndjson::{FrameError, NdjsonDecoder};

use crate::input::chunks;

type Out = Vec<Result<String, FrameError>>;

/// Bounds tried: tiny ones reach the oversized-line paths with short inputs.
const BOUNDS: [usize; 8] = [0, 1, 2, 3, 8, 32, 256, 1 << 20];

/// The entry function.
pub fn run(data: &[u8]) {
    let Some((&cfg, stream)) = data.split_first() else {
        return;
    };
    let max = BOUNDS[usize::from(cfg) % BOUNDS.len()];
    let expected = model(max, stream);
    assert_eq!(decode(max, &[stream]), expected, "one read");
    let cut = chunks(stream, cfg / 8);
    assert_eq!(decode(max, &cut), expected, "{} reads", cut.len());
}

/// Feeds `reads` one after the other, draining frames after each, then ends the input.
fn decode(max: usize, reads: &[&[u8]]) -> Out {
    let mut d = NdjsonDecoder::new(max);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for read in reads {
        buf.extend_from_slice(read);
        loop {
            match d.decode(&mut buf) {
                Ok(None) => break,
                Ok(Some(f)) => out.push(Ok(f)),
                Err(e) => out.push(Err(e)),
            }
        }
        assert!(
            buf.len() <= max.saturating_add(1),
            "{} bytes held between reads with a bound of {max}",
            buf.len()
        );
    }
    loop {
        match d.decode_eof(&mut buf) {
            Ok(None) => break,
            Ok(Some(f)) => out.push(Ok(f)),
            Err(e) => out.push(Err(e)),
        }
    }
    assert!(buf.is_empty(), "bytes left after the end of input");
    out
}

/// The framing rules, written as plainly as possible.
fn model(max: usize, stream: &[u8]) -> Out {
    stream
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let content = line.strip_suffix(b"\r").unwrap_or(line);
            if content.is_empty() {
                None
            } else if content.len() > max {
                Some(Err(FrameError::FrameTooLarge { limit: max }))
            } else {
                Some(
                    std::str::from_utf8(content)
                        .map(str::to_owned)
                        .map_err(|_| FrameError::InvalidUtf8),
                )
            }
        })
        .collect()
}
