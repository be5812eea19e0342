//! Server-Sent Events (`text/event-stream`, the WHATWG rules), both sides: a pure, incremental,
//! bounded parser (bytes in, events out) and the event encoder. No IO, no async.
//!
//! Used by the Streamable HTTP server (the encoder), its client and the checker (the parser).
//!
//! * Lines end with CRLF, LF or CR, and a CRLF split across two chunks is one line end. A UTF-8
//!   byte order mark at the start of a connection is skipped.
//! * `data:` lines are joined with `\n`; `event:` sets the type (default `message`); `id:` sets
//!   the last event id, which outlives the event (and the connection: see
//!   [`SseParser::reconnect`]); `retry:` (digits only) sets the reconnection delay; lines starting
//!   with `:` are comments (keep-alives). A blank line dispatches the event; an event with no
//!   `data` line is not dispatched (its `id` and `retry` still count).
//! * Memory is bounded: an event whose data exceeds the bound (or a line longer than that) is
//!   reported once with [`SseError::EventTooLarge`] and skipped up to its blank line; the stream
//!   goes on.
//! * The events do not depend on how the bytes were split into chunks (tested for every split
//!   point of a stream exercising every rule, and for random streams split at random).
//!
//! ```
//! use switchboard_transport::codec::sse::{self, SseParser};
//!
//! let mut p = SseParser::new(1024);
//! p.push(b"id: 7\nretry: 500\ndata: {\"a\"\ndata: :1}\n\n");
//! let ev = p.next().unwrap().unwrap();
//! assert_eq!(ev.data, "{\"a\"\n:1}");
//! assert_eq!(ev.id.as_deref(), Some("7"));
//! assert_eq!(p.retry(), Some(std::time::Duration::from_millis(500)));
//! assert!(p.next().is_none());
//!
//! let mut out = bytes::BytesMut::new();
//! sse::encode("3-1", "{}", &mut out);
//! assert_eq!(&out[..], b"id: 3-1\ndata: {}\n\n");
//! ```

use std::fmt::{self, Write as _};
use std::time::Duration;

use bytes::{Buf, BufMut, BytesMut};

/// The default bound on one event's data: 16 MiB (the engine's default frame bound).
pub const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Room for a field name and its colon on top of the data bound, so that a line carrying a
/// maximal data value is not taken for an oversized line.
const LINE_SLACK: usize = 64;

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SseEvent {
    /// The event type (`event:`), `"message"` when none was given.
    pub event: String,
    /// The `data:` lines, joined by `\n`.
    pub data: String,
    /// The last event id in force when the event was dispatched (set by this event's `id:` or
    /// an earlier one); `None` when it is empty.
    pub id: Option<String>,
}

/// A problem with one event; the parser goes on with the next one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// The event's data (or one of its lines) exceeded the bound; the event was skipped.
    #[error("SSE event of more than {limit} bytes discarded")]
    EventTooLarge {
        /// The bound, in bytes.
        limit: usize,
    },
    /// The event's data was not valid UTF-8; the event was skipped.
    #[error("SSE event data is not valid UTF-8; event discarded")]
    InvalidUtf8,
}

/// The incremental parser: [`push`](Self::push) bytes as they arrive, then take events with
/// [`next`](Self::next) until it returns `None`.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes not yet split into lines.
    buf: BytesMut,
    /// How much of `buf` is known to hold no line end.
    scanned: usize,
    /// The last line ended with CR: an LF right after it belongs to that line end.
    skip_lf: bool,
    /// Whether the start of the connection (where a BOM may stand) is behind.
    started: bool,
    /// The data buffer: each `data:` value followed by LF.
    data: Vec<u8>,
    /// The event type buffer.
    event: String,
    /// The last event id buffer.
    last_id: String,
    /// The reconnection delay, once the server set one.
    retry: Option<Duration>,
    max_event_bytes: usize,
    /// The current line is over the bound: its bytes are dropped up to its end.
    discarding_line: bool,
    /// The current event is over the bound: its lines are dropped up to the blank line.
    discarding_event: bool,
}

impl SseParser {
    /// A parser bounding each event's data to `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        SseParser {
            buf: BytesMut::new(),
            scanned: 0,
            skip_lf: false,
            started: false,
            data: Vec::new(),
            event: String::new(),
            last_id: String::new(),
            retry: None,
            max_event_bytes,
            discarding_line: false,
            discarding_event: false,
        }
    }

    /// Appends bytes received from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The last event id (`None` while empty): what `Last-Event-ID` carries on reconnection.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_id.is_empty()).then_some(self.last_id.as_str())
    }

    /// The reconnection delay the server asked for with `retry:`, if it did.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Prepares for a new connection of the same stream: drops any partial line and event,
    /// keeps the last event id and the reconnection delay.
    pub fn reconnect(&mut self) {
        self.buf.clear();
        self.scanned = 0;
        self.skip_lf = false;
        self.started = false;
        self.data.clear();
        self.event.clear();
        self.discarding_line = false;
        self.discarding_event = false;
    }

    /// The stream has ended: an event cut off before its blank line is completed as if the blank
    /// line had come, and can then be taken with [`next`](Self::next). The WHATWG rules drop such
    /// an event; a peer that judges what a server sent (a checker, a recorder) wants it.
    pub fn finish(&mut self) {
        self.push(b"\n\n");
    }

    /// The next complete event, or a problem with one; `None` when more bytes are needed.
    #[allow(clippy::should_implement_trait)] // `Iterator` would hide that `None` means "push more"
    pub fn next(&mut self) -> Option<Result<SseEvent, SseError>> {
        loop {
            if !self.started {
                let n = self.buf.len().min(BOM.len());
                if self.buf[..n] != BOM[..n] {
                    self.started = true;
                } else if n == BOM.len() {
                    self.buf.advance(BOM.len());
                    self.started = true;
                } else {
                    return None;
                }
            }
            if self.skip_lf {
                match self.buf.first() {
                    None => return None,
                    Some(b'\n') => self.buf.advance(1),
                    Some(_) => {}
                }
                self.skip_lf = false;
            }
            let Some(end) = self.find_line_end() else {
                return self.hold_partial_line();
            };
            let line = self.buf.split_to(end);
            self.skip_lf = self.buf[0] == b'\r';
            self.buf.advance(1);
            self.scanned = 0;
            if self.discarding_line {
                self.discarding_line = false;
                continue;
            }
            // A complete line over the bound is refused as it would have been had it arrived in
            // pieces: the events never depend on how the bytes were split.
            if line.len() > self.line_limit() {
                match self.discard_event() {
                    Some(item) => return Some(item),
                    None => continue,
                }
            }
            if let Some(item) = self.line(&line) {
                return Some(item);
            }
        }
    }

    /// The position of the next CR or LF, scanning only bytes not scanned before.
    fn find_line_end(&mut self) -> Option<usize> {
        let from = self.scanned;
        match self.buf[from..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        {
            Some(i) => Some(from + i),
            None => {
                self.scanned = self.buf.len();
                None
            }
        }
    }

    /// No line end yet: keeps the partial line, unless it is over the bound (then its bytes
    /// are dropped as they come, and the event is reported once).
    fn hold_partial_line(&mut self) -> Option<Result<SseEvent, SseError>> {
        if self.buf.len() <= self.line_limit() {
            return None;
        }
        self.buf.clear();
        self.scanned = 0;
        if self.discarding_line {
            return None;
        }
        self.discarding_line = true;
        self.discard_event()
    }

    /// The longest line kept: the data bound plus room for a field name.
    fn line_limit(&self) -> usize {
        self.max_event_bytes.saturating_add(LINE_SLACK)
    }

    /// Starts skipping the current event; reports it unless it is already being skipped.
    fn discard_event(&mut self) -> Option<Result<SseEvent, SseError>> {
        self.data.clear();
        if self.discarding_event {
            return None;
        }
        self.discarding_event = true;
        Some(Err(SseError::EventTooLarge {
            limit: self.max_event_bytes,
        }))
    }

    /// Processes one complete line (without its end).
    fn line(&mut self, line: &[u8]) -> Option<Result<SseEvent, SseError>> {
        if line.is_empty() {
            return self.dispatch();
        }
        if line[0] == b':' {
            return None;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" if !self.discarding_event => {
                if self.data.len() + value.len() > self.max_event_bytes {
                    return self.discard_event();
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.last_id = String::from_utf8_lossy(value).into_owned();
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        None
    }

    /// A blank line: dispatches the event being built, if it has data.
    fn dispatch(&mut self) -> Option<Result<SseEvent, SseError>> {
        let event = std::mem::take(&mut self.event);
        if std::mem::take(&mut self.discarding_event) || self.data.is_empty() {
            self.data.clear();
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop();
        let Ok(data) = String::from_utf8(data) else {
            return Some(Err(SseError::InvalidUtf8));
        };
        Some(Ok(SseEvent {
            event: if event.is_empty() {
                "message".to_owned()
            } else {
                event
            },
            data,
            id: self.last_event_id().map(str::to_owned),
        }))
    }
}

/// Appends one event to `dst`: an `id:` line, then one `data:` line per line of `data`, then the
/// blank line that dispatches it. Every CR and LF in `data` starts a new `data:` line, so no input
/// can break the framing (compact JSON holds neither); the parser gives `data` back with each of
/// them as `\n`.
pub fn encode(id: impl fmt::Display, data: &str, dst: &mut BytesMut) {
    dst.reserve(data.len() + 32);
    dst.put_slice(b"id: ");
    // Writing into a `BytesMut` cannot fail.
    let _ = write!(dst, "{id}");
    dst.put_slice(b"\n");
    for line in data.split(['\n', '\r']) {
        dst.put_slice(b"data: ");
        dst.put_slice(line.as_bytes());
        dst.put_slice(b"\n");
    }
    dst.put_slice(b"\n");
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    type Item = Result<SseEvent, SseError>;

    fn ev(event: &str, data: &str, id: Option<&str>) -> Item {
        Ok(SseEvent {
            event: event.to_owned(),
            data: data.to_owned(),
            id: id.map(str::to_owned),
        })
    }

    fn drain(p: &mut SseParser) -> Vec<Item> {
        std::iter::from_fn(|| p.next()).collect()
    }

    fn parse_chunks(chunks: &[&[u8]], max: usize) -> (Vec<Item>, Option<String>, Option<Duration>) {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c);
            out.extend(drain(&mut p));
        }
        (out, p.last_event_id().map(str::to_owned), p.retry())
    }

    /// A stream exercising every rule: BOM, CRLF / CR / LF, comments, multi-line data, ids,
    /// retry, event types, an event without data, a field without a colon, unknown fields.
    const STREAM: &[u8] = b"\xEF\xBB\xBF: keep-alive\r\n\
id: 1-0\r\nretry: 1000\r\ndata: \r\n\r\n\
data: {\"jsonrpc\":\"2.0\",\r\ndata:\"method\":\"x\"}\rid: 1-1\r\r\
event: endpoint\ndata: /messages?session=a b\n\n\
: comment\nid: 1-2\nretry: 25x\nfoo: bar\ndata\n\n\
id: 1-3\nretry: 250\n\n\
id\ndata: after reset\n\n\
data: never dispatched (no blank line)";

    fn expected() -> Vec<Item> {
        vec![
            ev("message", "", Some("1-0")),
            ev(
                "message",
                "{\"jsonrpc\":\"2.0\",\n\"method\":\"x\"}",
                Some("1-1"),
            ),
            ev("endpoint", "/messages?session=a b", Some("1-1")),
            ev("message", "", Some("1-2")),
            ev("message", "after reset", None),
        ]
    }

    #[test]
    fn parses_the_whole_stream() {
        let (out, last, retry) = parse_chunks(&[STREAM], 1024);
        assert_eq!(out, expected());
        assert_eq!(last, None, "a bare `id` line empties the last event id");
        assert_eq!(
            retry,
            Some(Duration::from_millis(250)),
            "`retry: 25x` is ignored"
        );
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        for i in 0..=STREAM.len() {
            let (out, _, retry) = parse_chunks(&[&STREAM[..i], &STREAM[i..]], 1024);
            assert_eq!(out, expected(), "split at byte {i}");
            assert_eq!(retry, Some(Duration::from_millis(250)));
        }
        for i in 0..=STREAM.len() {
            for j in i..=STREAM.len() {
                let (out, _, _) = parse_chunks(&[&STREAM[..i], &STREAM[i..j], &STREAM[j..]], 1024);
                assert_eq!(out, expected(), "split at bytes {i} and {j}");
            }
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let chunks: Vec<&[u8]> = STREAM.chunks(1).collect();
        let (out, _, _) = parse_chunks(&chunks, 1024);
        assert_eq!(out, expected());
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let (out, _, _) = parse_chunks(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n\r\n"], 64);
        assert_eq!(
            out,
            vec![ev("message", "a", None), ev("message", "b", None)]
        );
    }

    #[test]
    fn an_oversized_event_is_reported_once_and_skipped() {
        let mut stream = b"id: 5\ndata: ".to_vec();
        stream.extend(std::iter::repeat_n(b'x', 100));
        stream.extend_from_slice(b"\ndata: more\n\ndata: ok\n\n");
        for i in 0..=stream.len() {
            let (out, last, _) = parse_chunks(&[&stream[..i], &stream[i..]], 16);
            assert_eq!(
                out,
                vec![
                    Err(SseError::EventTooLarge { limit: 16 }),
                    ev("message", "ok", Some("5"))
                ],
                "split at {i}"
            );
            assert_eq!(last.as_deref(), Some("5"));
        }
        // Data lines that are each small but together too large.
        let (out, _, _) = parse_chunks(&[b"data: 0123456789\ndata: 0123456789\n\ndata: y\n\n"], 16);
        assert_eq!(
            out,
            vec![
                Err(SseError::EventTooLarge { limit: 16 }),
                ev("message", "y", None)
            ]
        );
    }

    #[test]
    fn a_long_line_is_dropped_as_it_arrives() {
        let mut p = SseParser::new(16);
        p.push(b"data: ");
        let mut reported = 0;
        for _ in 0..1000 {
            p.push(&[b'z'; 100]);
            reported += drain(&mut p).len();
            assert!(p.buf.len() <= 16 + LINE_SLACK + 100, "memory stays bounded");
        }
        assert_eq!(reported, 1);
        p.push(b"\n\ndata: next\n\n");
        assert_eq!(drain(&mut p), vec![ev("message", "next", None)]);
    }

    #[test]
    fn invalid_utf8_data_is_reported_and_the_stream_goes_on() {
        let (out, _, _) = parse_chunks(&[b"data: \xFF\xFE\n\ndata: fine\n\n"], 64);
        assert_eq!(
            out,
            vec![Err(SseError::InvalidUtf8), ev("message", "fine", None)]
        );
    }

    #[test]
    fn reconnect_keeps_the_last_id_and_retry_and_drops_the_partial_event() {
        let mut p = SseParser::new(64);
        p.push(b"id: 3-4\nretry: 10\ndata: done\n\ndata: half");
        assert_eq!(drain(&mut p), vec![ev("message", "done", Some("3-4"))]);
        p.reconnect();
        p.push(b"\xEF\xBB\xBFdata: new\n\n");
        assert_eq!(drain(&mut p), vec![ev("message", "new", Some("3-4"))]);
        assert_eq!(p.last_event_id(), Some("3-4"));
        assert_eq!(p.retry(), Some(Duration::from_millis(10)));
    }

    #[test]
    fn an_id_with_nul_is_ignored_and_only_one_leading_space_is_stripped() {
        let (out, last, _) = parse_chunks(&[b"id: a\0b\ndata:  two spaces\n\n"], 64);
        assert_eq!(out, vec![ev("message", " two spaces", None)]);
        assert_eq!(last, None);
    }

    #[test]
    fn finish_completes_an_event_cut_off_by_the_end_of_the_stream() {
        let mut p = SseParser::new(1024);
        p.push(b"id: 1\r\ndata: \r\n\r\nevent: message\nda");
        assert_eq!(drain(&mut p), vec![ev("message", "", Some("1"))]);
        p.push(b"ta: {\"a\":\ndata: 1}\n\ndata:x");
        assert_eq!(drain(&mut p), vec![ev("message", "{\"a\":\n1}", Some("1"))]);
        p.finish();
        assert_eq!(drain(&mut p), vec![ev("message", "x", Some("1"))]);
        // However the stream ended, its last event comes out exactly once.
        for tail in [
            &b"data: a\r"[..],
            b"data: a\r\n",
            b"data: a\n",
            b"data: a\n\n",
            b"",
        ] {
            let mut p = SseParser::new(64);
            p.push(tail);
            let mut got = drain(&mut p);
            p.finish();
            got.extend(drain(&mut p));
            let want = if tail.is_empty() {
                vec![]
            } else {
                vec![ev("message", "a", None)]
            };
            assert_eq!(got, want, "{tail:?}");
        }
    }

    #[test]
    fn a_long_line_is_refused_whether_or_not_its_end_came_with_it() {
        let mut line = b"event: ".to_vec();
        line.extend(std::iter::repeat_n(b'e', 100));
        line.extend_from_slice(b"\ndata: x\n\ndata: y\n\n");
        let whole = parse_chunks(&[&line], 16);
        assert_eq!(
            whole.0,
            vec![
                Err(SseError::EventTooLarge { limit: 16 }),
                ev("message", "y", None)
            ]
        );
        let bytes: Vec<&[u8]> = line.chunks(1).collect();
        assert_eq!(parse_chunks(&bytes, 16), whole);
    }

    /// A small deterministic generator (xorshift64*): the property tests need no extra crate and
    /// every failure can be replayed from the case number.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// What random streams are made of: every field, line ends of each kind, a BOM, bytes that
    /// are not UTF-8, and runs long enough to cross the bound.
    const PIECES: &[&[u8]] = &[
        b"data: ",
        b"data:",
        b"data",
        b"id: ",
        b"id: 4-2",
        b"id",
        b"event: ",
        b"event: endpoint",
        b"retry: ",
        b"retry: 75",
        b": ping",
        b":",
        b"{\"jsonrpc\":\"2.0\"}",
        b"x",
        b"  ",
        b"\n",
        b"\n",
        b"\r",
        b"\r\n",
        b"\r\n",
        b"\xEF\xBB\xBF",
        b"\xFF",
        b"\0",
        b"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
    ];

    /// Parses `chunks` in order, then ends the stream with [`SseParser::finish`].
    fn parse_to_end(chunks: &[&[u8]], max: usize) -> (Vec<Item>, Option<String>, Option<Duration>) {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        for c in chunks {
            p.push(c);
            out.extend(drain(&mut p));
        }
        p.finish();
        out.extend(drain(&mut p));
        (out, p.last_event_id().map(str::to_owned), p.retry())
    }

    fn split_at<'a>(stream: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut chunks = Vec::new();
        let mut from = 0;
        for &c in cuts {
            chunks.push(&stream[from..c]);
            from = c;
        }
        chunks.push(&stream[from..]);
        chunks
    }

    #[test]
    fn random_streams_give_the_same_events_however_they_are_split() {
        let mut rng = Rng(0x5EED_0000_0000_0001);
        for case in 0..3000 {
            let len = rng.below(80);
            let stream: Vec<u8> = (0..len)
                .flat_map(|_| PIECES[rng.below(PIECES.len())].iter().copied())
                .collect();
            let whole = parse_to_end(&[&stream], 16);
            let mut cuts: Vec<usize> = (0..rng.below(6))
                .map(|_| rng.below(stream.len() + 1))
                .collect();
            cuts.sort_unstable();
            let split = parse_to_end(&split_at(&stream, &cuts), 16);
            assert_eq!(split, whole, "case {case}: {stream:?} cut at {cuts:?}");
            let bytes: Vec<&[u8]> = stream.chunks(1).collect();
            assert_eq!(parse_to_end(&bytes, 16), whole, "case {case}: byte by byte");
        }
    }

    #[test]
    fn encoded_events_parse_back_whatever_the_data_and_the_split() {
        let mut rng = Rng(0x5EED_0000_0000_0002);
        let alphabet = ["a", "{", "\"", " ", ":", "é", "\n", "\r", "\r\n", "data: "];
        for case in 0..1000 {
            let data: String = (0..rng.below(24))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            let id = format!("{}-{}", rng.below(9), rng.below(1000));
            let mut wire = BytesMut::new();
            encode(&id, &data, &mut wire);
            encode(&id, "next", &mut wire);
            let cut = rng.below(wire.len() + 1);
            let (out, last, _) = parse_to_end(&split_at(&wire, &[cut]), 1024);
            let expected = data.replace("\r\n", "\n\n").replace('\r', "\n");
            assert_eq!(
                out,
                vec![
                    ev("message", &expected, Some(&id)),
                    ev("message", "next", Some(&id))
                ],
                "case {case}: {data:?}"
            );
            assert_eq!(last.as_deref(), Some(id.as_str()));
        }
    }
}
