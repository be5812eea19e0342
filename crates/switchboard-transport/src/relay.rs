//! Relays: frames passed on unchanged between two peers that the relay does not take part in,
//! each shown to a [`FrameTap`] with its direction before it is passed on.
//!
//! [`relay_lines`] and [`relay_child`] relay newline-delimited JSON (stdio) byte for byte; the
//! HTTP relays (`switchboard-http`, `switchboard-http-client`) build on the helpers here:
//! [`tap_body`] (a body's frames: a batch entry by entry), [`one_line`] (a frame as one stdio
//! line), [`classify`] (frame text as an [`OutboundFrame`] routed by envelope) and
//! [`read_frame_line`].
//!
//! A tap sees every frame before the peer does, so an answer can never reach the tap (through
//! the other direction's relay) before the frame it answers. A tap cannot alter or hold a frame;
//! it is called on the relay's task and should return quickly.

use std::borrow::Cow;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;

use serde_json::value::RawValue;
use switchboard_jsonrpc::OutboundFrame;
use switchboard_types::{Direction, Frame, MessageKind};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

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

/// Relays lines from `from` to `to` byte for byte, showing each non-blank line to `tap` (its
/// line ending removed, invalid UTF-8 replaced) before writing it, until `from` ends; then shuts
/// `to` down.
///
/// # Errors
/// Reading or writing failed.
pub async fn relay_lines<R, W>(
    from: R,
    mut to: W,
    direction: Direction,
    tap: &dyn FrameTap,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(from);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            break;
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
    }
    to.shutdown().await.ok();
    Ok(())
}

/// Relays a client on `client_in` / `client_out` (for a stdio proxy: this process's own stdin
/// and stdout) to `child`'s stdin and stdout, both ways byte for byte, until the client's input
/// ends and the child exits; returns the child's exit status. Closing the client's input closes
/// the child's stdin; the child's exit ends the other direction.
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
    let missing = |what| io::Error::other(format!("the child's {what} is not piped"));
    let child_in = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let child_out = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let up_tap = tap.clone();
    let up = tokio::spawn(async move {
        relay_lines(client_in, child_in, Direction::ClientToServer, &*up_tap).await
    });
    let down = tokio::spawn(async move {
        relay_lines(child_out, client_out, Direction::ServerToClient, &*tap).await
    });
    let _ = up.await;
    let status = child.wait().await?;
    let _ = down.await;
    Ok(status)
}

/// The frames of an HTTP body or SSE event: the entries of a JSON array (each its exact text),
/// else the whole text, trimmed; an empty body holds none.
pub fn batch_entries(text: &str) -> Vec<&str> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Vec::new();
    }
    if trimmed.starts_with('[') {
        if let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(trimmed) {
            if !items.is_empty() {
                return items.into_iter().map(RawValue::get).collect();
            }
        }
    }
    vec![trimmed]
}

/// Shows every frame of `body` ([`batch_entries`]) to `tap`.
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
pub fn classify(text: String) -> OutboundFrame {
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
    }
}

/// The next non-blank line of `reader` as frame text, its line ending removed (invalid UTF-8
/// replaced); `None` at the end of input or on a read error. `line` is the reused buffer.
pub async fn read_frame_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Option<String> {
    loop {
        line.clear();
        match reader.read_until(b'\n', line).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\n').trim_end_matches('\r');
        if !text.is_empty() {
            return Some(text.to_owned());
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
