//! Relays: frames passed on unchanged between two peers that the relay does not take part in,
//! each shown to a [`FrameTap`] with its direction before it is passed on.
//!
//! [`relay_lines`] and [`relay_child`] relay newline-delimited JSON (stdio) byte for byte; the
//! HTTP relays (`switchboard-http`, `switchboard-http-client`) build on the helpers here:
//! [`tap_body`] (a body's frames: a batch entry by entry), [`one_line`] (a frame as one stdio
//! line) and [`read_frame`] (the next stdio line as an [`OutboundFrame`] routed by envelope).
//!
//! A tap sees every frame before the peer does, so an answer can never reach the tap (through
//! the other direction's relay) before the frame it answers. A tap cannot alter or hold a frame;
//! it is called on the relay's task and should return quickly.
//!
//! Lines are bounded like the ndjson codec's frames ([`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES) unless a
//! `_bounded` variant is given another bound): a longer line is never held whole. It is
//! discarded as it arrives, reported with one warning (its length and the bound), and the relay
//! goes on with the next line, so memory per direction is one bound plus one read.

use std::borrow::Cow;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;

use serde_json::value::RawValue;
use switchboard_jsonrpc::OutboundFrame;
use switchboard_types::{Direction, Frame, MessageKind};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::codec::ndjson::DEFAULT_MAX_FRAME_BYTES;
use crate::codec::ndjson::FrameError;

/// One frame on its way through a relay.
#[derive(Debug, Clone, Copy)]
pub struct TappedFrame<'a> {
    /// Which way it goes.
    pub direction: Direction,
    /// The HTTP session it travels under (`MCP-Session-Id`), when there is one.
    pub session: Option<&'a str>,
    /// The frame's exact text (for a batch, one entry's exact text).
    pub text: &'a str,
}

/// Sees every frame a relay passes on, before it is passed on. Any
/// `Fn(TappedFrame<'_>) + Send + Sync` is a tap.
pub trait FrameTap: Send + Sync {
    /// Called once per frame, in the order the relay passes frames on in that direction.
    fn frame(&self, frame: TappedFrame<'_>);
}

impl<F: Fn(TappedFrame<'_>) + Send + Sync> FrameTap for F {
    fn frame(&self, frame: TappedFrame<'_>) {
        self(frame);
    }
}

impl std::fmt::Debug for dyn FrameTap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FrameTap")
    }
}

/// What [`read_line_bounded`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineRead {
    /// End of input, nothing read.
    Eof,
    /// A line (with its terminator, unless it is the last line of the input) is in the buffer.
    Line,
    /// A line of this many bytes (terminator excluded) was over the bound and discarded.
    TooLong(usize),
}

/// Reads the next line into `line` (cleared first), holding at most `max` bytes of content
/// plus its `\r\n`. A longer line is consumed and discarded as it arrives.
async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> io::Result<LineRead> {
    line.clear();
    let mut skipped: Option<usize> = None;
    loop {
        let chunk = reader.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(match skipped {
                Some(n) => LineRead::TooLong(n),
                None if line.is_empty() => LineRead::Eof,
                None if line.len() > max => LineRead::TooLong(line.len()),
                None => LineRead::Line,
            });
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        match &mut skipped {
            Some(n) => *n += take,
            None if line.len() + take > max + 2 => skipped = Some(line.len() + take),
            None => line.extend_from_slice(&chunk[..take]),
        }
        if skipped.is_some() {
            line.clear();
        }
        reader.consume(take);
        if done {
            let content = |n: usize| n - 1; // Without the `\n`.
            return Ok(match skipped {
                Some(n) => LineRead::TooLong(content(n)),
                None => {
                    let end = line.len() - 1 - usize::from(line.ends_with(b"\r\n"));
                    if end > max {
                        LineRead::TooLong(end)
                    } else {
                        LineRead::Line
                    }
                }
            });
        }
    }
}

fn report_too_long(direction: Direction, bytes: usize, max: usize) {
    tracing::warn!(
        direction = direction.as_str(),
        bytes,
        limit = max,
        "relayed line over the frame bound discarded"
    );
}

/// Relays lines from `from` to `to` byte for byte, showing each non-blank line to `tap` (its
/// line ending removed, invalid UTF-8 replaced) before writing it, until `from` ends; then shuts
/// `to` down. Lines are bounded by [`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES) (see the module docs).
///
/// # Errors
/// Reading or writing failed.
pub async fn relay_lines<R, W>(
    from: R,
    to: W,
    direction: Direction,
    tap: &dyn FrameTap,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    relay_lines_bounded(from, to, direction, tap, DEFAULT_MAX_FRAME_BYTES).await
}

/// [`relay_lines`] with lines bounded by `max_line_bytes` (line ending excluded): a longer line
/// is discarded (neither tapped nor written) and reported, and the relay goes on.
///
/// # Errors
/// Reading or writing failed.
pub(crate) async fn relay_lines_bounded<R, W>(
    from: R,
    mut to: W,
    direction: Direction,
    tap: &dyn FrameTap,
    max_line_bytes: usize,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(from);
    let mut line = Vec::with_capacity(4096);
    loop {
        match read_line_bounded(&mut reader, &mut line, max_line_bytes).await? {
            LineRead::Eof => break,
            LineRead::TooLong(bytes) => {
                report_too_long(direction, bytes, max_line_bytes);
                continue;
            }
            LineRead::Line => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        if !text.is_empty() {
            tap.frame(TappedFrame {
                direction,
                session: None,
                text,
            });
        }
        to.write_all(&line).await?;
        to.flush().await?;
        if line.capacity() > KEEP_LINE_BUFFER {
            line = Vec::with_capacity(4096);
        }
    }
    to.shutdown().await.ok();
    Ok(())
}

/// Above this capacity the line buffer is released after a line, so one huge line does not pin
/// its memory for the rest of the relay.
const KEEP_LINE_BUFFER: usize = 1024 * 1024;

/// Relays a client on `client_in` / `client_out` (for a stdio proxy: this process's own stdin
/// and stdout) to `child`'s stdin and stdout, both ways byte for byte, until the client's input
/// ends and the child exits; returns the child's exit status. Closing the client's input closes
/// the child's stdin; the child's exit ends the other direction. Lines are bounded by
/// [`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES) each way.
///
/// # Errors
/// `child` was not spawned with piped stdin and stdout, or waiting for it failed.
pub async fn relay_child<R, W>(
    child: &mut tokio::process::Child,
    client_in: R,
    client_out: W,
    tap: Arc<dyn FrameTap>,
) -> io::Result<ExitStatus>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    relay_child_bounded(child, client_in, client_out, tap, DEFAULT_MAX_FRAME_BYTES).await
}

/// [`relay_child`] with lines bounded by `max_line_bytes` each way (see
/// [`relay_lines_bounded`]).
///
/// # Errors
/// As for [`relay_child`].
pub(crate) async fn relay_child_bounded<R, W>(
    child: &mut tokio::process::Child,
    client_in: R,
    client_out: W,
    tap: Arc<dyn FrameTap>,
    max_line_bytes: usize,
) -> io::Result<ExitStatus>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let missing = |what| io::Error::other(format!("the child's {what} is not piped"));
    let child_in = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let child_out = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let up_tap = tap.clone();
    let max = max_line_bytes;
    let up = tokio::spawn(async move {
        relay_lines_bounded(
            client_in,
            child_in,
            Direction::ClientToServer,
            &*up_tap,
            max,
        )
        .await
    });
    let down = tokio::spawn(async move {
        relay_lines_bounded(child_out, client_out, Direction::ServerToClient, &*tap, max).await
    });
    let _ = up.await;
    let status = child.wait().await?;
    let _ = down.await;
    Ok(status)
}

/// The frames of an HTTP body or SSE event: the entries of a JSON array (each its exact text),
/// else the whole text, trimmed; an empty body holds none.
pub(crate) fn batch_entries(text: &str) -> Vec<&str> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if trimmed.starts_with('[')
        && let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(trimmed)
        && !items.is_empty()
    {
        return items.into_iter().map(RawValue::get).collect();
    }
    vec![trimmed]
}

/// Shows every frame of `body` (each entry of a batch) to `tap`.
pub fn tap_body(tap: &dyn FrameTap, direction: Direction, session: Option<&str>, body: &str) {
    for text in batch_entries(body) {
        tap.frame(TappedFrame {
            direction,
            session,
            text,
        });
    }
}

/// The text as one stdio line: raw CR / LF (JSON whitespace only; a JSON string cannot hold one)
/// become spaces. Borrowed when there are none, which is the normal case.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if text.contains(['\n', '\r']) {
        Cow::Owned(text.replace(['\n', '\r'], " "))
    } else {
        Cow::Borrowed(text)
    }
}

/// Frame text read from the wire, classified by its envelope for a transport that routes by
/// kind and id (never by params). Undecodable text goes out as a "request" with no id, so that
/// the peer answers it (or not) itself.
fn classify(text: String) -> OutboundFrame {
    let (kind, id) = match Frame::decode(&text) {
        Ok(Frame::Single(Ok(m))) => (m.kind(), m.id().cloned()),
        Ok(Frame::Batch(items)) => match items.first() {
            Some(Ok(m)) => (m.kind(), None),
            _ => (MessageKind::Request, None),
        },
        _ => (MessageKind::Request, None),
    };
    OutboundFrame {
        text,
        kind,
        id,
        related: None,
        headers: Vec::new(),
        cancels: None,
    }
}

/// The next non-blank line of `reader` as frame text, its line ending removed (invalid UTF-8
/// replaced); `None` at the end of input or on a read error. `line` is the reused buffer.
/// A line over [`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES) is discarded with a warning and reading goes on
/// (`read_frame_line_bounded` answers it instead).
async fn read_frame_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Option<String> {
    loop {
        match read_frame_line_bounded(reader, line, DEFAULT_MAX_FRAME_BYTES).await? {
            Ok(text) => return Some(text),
            Err(e) => tracing::warn!(error = %e, "line over the frame bound discarded"),
        }
    }
}

/// The next non-blank line of `reader`, its line ending removed (invalid UTF-8 replaced), as a
/// frame to pass on, classified by its envelope for a transport that routes by kind and id
/// (never by params): undecodable text goes out as a "request" with no id, so that the peer
/// answers it (or not) itself. `None` at the end of input or on a read error; `line` is the
/// reused buffer. A line over
/// [`DEFAULT_MAX_FRAME_BYTES`](switchboard_jsonrpc::DEFAULT_MAX_FRAME_BYTES) is discarded with
/// a warning and reading goes on.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Option<OutboundFrame> {
    read_frame_line(reader, line).await.map(classify)
}

/// Like [`read_frame_line`] with lines bounded by `max_frame_bytes` (line ending excluded): a
/// longer line is consumed without being held and reported as
/// [`FrameError::FrameTooLarge`]; the next call reads on. `None` at the end of input or on a
/// read error.
pub(crate) async fn read_frame_line_bounded<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max_frame_bytes: usize,
) -> Option<Result<String, FrameError>> {
    loop {
        match read_line_bounded(reader, line, max_frame_bytes).await {
            Ok(LineRead::Eof) | Err(_) => return None,
            Ok(LineRead::TooLong(_)) => {
                return Some(Err(FrameError::FrameTooLarge {
                    limit: max_frame_bytes,
                }));
            }
            Ok(LineRead::Line) => {}
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        if !text.is_empty() {
            let text = text.to_owned();
            if line.capacity() > KEEP_LINE_BUFFER {
                *line = Vec::new();
            }
            return Some(Ok(text));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    type Seen = Arc<Mutex<Vec<(Direction, String)>>>;

    fn collect() -> (Seen, Arc<dyn FrameTap>) {
        let seen: Seen = Arc::default();
        let s = seen.clone();
        let tap = move |f: TappedFrame<'_>| {
            if let Ok(mut v) = s.lock() {
                v.push((f.direction, f.text.to_owned()));
            }
        };
        (seen, Arc::new(tap))
    }

    #[tokio::test]
    async fn relay_lines_passes_bytes_unchanged_and_taps_each_frame() {
        let (seen, tap) = collect();
        let input: &[u8] = b"{\"a\":1}\r\n\n  \n{\"b\":\"\xff\"}\n{\"c\":3}";
        let mut out = Vec::new();
        relay_lines(input, &mut out, Direction::ServerToClient, &*tap)
            .await
            .expect("relays");
        assert_eq!(out, input, "byte for byte, blank lines and CRLF included");
        let seen = seen.lock().expect("lock").clone();
        let texts: Vec<&str> = seen.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts,
            ["{\"a\":1}", "  ", "{\"b\":\"\u{fffd}\"}", "{\"c\":3}"]
        );
        assert!(seen.iter().all(|(d, _)| *d == Direction::ServerToClient));
    }

    #[tokio::test]
    async fn relay_child_relays_both_ways_and_reports_the_exit_status() {
        let (seen, tap) = collect();
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "while read -r l; do echo \"$l\"; done; exit 3"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawns");
        let (client_out, mut read_back) = tokio::io::duplex(4096);
        let input: &'static [u8] = b"{\"id\":1}\n{\"id\":2}\n";
        let status = relay_child(&mut child, input, client_out, tap)
            .await
            .expect("relays");
        assert_eq!(status.code(), Some(3));
        let mut echoed = Vec::new();
        tokio::io::AsyncReadExt::read_to_end(&mut read_back, &mut echoed)
            .await
            .expect("reads");
        assert_eq!(echoed, input);
        let seen = seen.lock().expect("lock").clone();
        let ups = seen
            .iter()
            .filter(|(d, _)| *d == Direction::ClientToServer)
            .count();
        assert_eq!((ups, seen.len()), (2, 4), "{seen:?}");
    }

    #[tokio::test]
    async fn an_oversized_line_is_skipped_and_the_relay_goes_on_however_reads_split() {
        let big = "x".repeat(100);
        let input = format!(
            "{{\"a\":1}}\n{big}\r\n{{\"b\":2}}\r\n{}\n{big}",
            "y".repeat(16)
        );
        for chunk in [1, 2, 3, 7, 64, 4096] {
            let (seen, tap) = collect();
            let reader = BufReader::with_capacity(chunk, input.as_bytes());
            let mut out = Vec::new();
            relay_lines_bounded(reader, &mut out, Direction::ClientToServer, &*tap, 16)
                .await
                .expect("relays");
            assert_eq!(
                String::from_utf8_lossy(&out),
                format!("{{\"a\":1}}\n{{\"b\":2}}\r\n{}\n", "y".repeat(16)),
                "chunk {chunk}: lines within the bound pass byte for byte, the rest are dropped"
            );
            let texts: Vec<String> = seen
                .lock()
                .expect("lock")
                .iter()
                .map(|(_, t)| t.clone())
                .collect();
            assert_eq!(
                texts,
                ["{\"a\":1}", "{\"b\":2}", &"y".repeat(16)],
                "chunk {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn read_frame_line_bounded_reports_an_oversized_line_then_reads_on() {
        let input = format!("{}\n\n{{\"ok\":1}}\n{}", "z".repeat(5000), "w".repeat(20));
        let mut reader = BufReader::with_capacity(64, input.as_bytes());
        let mut line = Vec::new();
        let mut got = Vec::new();
        while let Some(r) = read_frame_line_bounded(&mut reader, &mut line, 1024).await {
            got.push(r);
        }
        assert_eq!(
            got,
            [
                Err(FrameError::FrameTooLarge { limit: 1024 }),
                Ok("{\"ok\":1}".to_owned()),
                Ok("w".repeat(20)),
            ]
        );
        assert!(line.capacity() < 4096, "the discarded line was never held");
        // The unbounded-looking helper uses the default bound and skips silently.
        let mut reader = BufReader::new(&b"{\"a\":1}\n"[..]);
        assert_eq!(
            read_frame_line(&mut reader, &mut line).await.as_deref(),
            Some("{\"a\":1}")
        );
    }

    #[test]
    fn a_batch_is_tapped_entry_by_entry_with_its_exact_text() {
        assert_eq!(
            batch_entries(" [ {\"id\": 1} ,\n{\"id\":2} ] "),
            ["{\"id\": 1}", "{\"id\":2}"]
        );
        assert_eq!(batch_entries(" {\"id\":1}\n"), ["{\"id\":1}"]);
        assert_eq!(batch_entries("[]"), ["[]"]);
        assert_eq!(batch_entries("[oops"), ["[oops"]);
        assert!(batch_entries("  ").is_empty());
    }

    #[test]
    fn one_line_and_classify() {
        assert!(matches!(one_line("{\"a\":1}"), Cow::Borrowed(_)));
        assert_eq!(one_line("{\n\"a\":\r1}"), "{ \"a\": 1}");
        let f = classify(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#.to_owned());
        assert_eq!(
            (f.kind, f.id.map(|i| i.to_string())),
            (MessageKind::Result, Some("7".into()))
        );
        let f = classify("not json".to_owned());
        assert_eq!((f.kind, f.id), (MessageKind::Request, None));
    }
}
