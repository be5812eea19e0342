//! The Server-Sent Events parser and encoder (`switchboard_transport::codec::sse`), as the HTTP
//! client, the checker and the recording proxy read a server's `text/event-stream` body.
//!
//! Input: one byte choosing the event bound and how the stream is cut into reads, then the
//! stream. Checked:
//! * the events (and errors), the last event id and the reconnection delay are the same whether
//!   the stream arrives in one read or in many, and `finish` completes a cut-off event;
//! * no event's data is over the bound;
//! * with a bound larger than the stream, they equal a plain model of the WHATWG rules;
//! * `encode` of an id and data taken from the input parses back to one event with that id and
//!   that data (each CR and LF read back as LF).

use std::time::Duration;

use bytes::BytesMut;
use switchboard_transport::codec::sse::{self, SseError, SseEvent, SseParser};

use crate::input::chunks;

/// What a parse yields: the items, the last event id and the reconnection delay at the end.
type Out = (
    Vec<Result<SseEvent, SseError>>,
    Option<String>,
    Option<Duration>,
);

/// Bounds tried: tiny ones reach the oversized-event paths with short inputs.
const BOUNDS: [usize; 8] = [0, 1, 2, 5, 16, 64, 300, 1 << 20];

/// The entry function.
pub fn run(data: &[u8]) {
    let Some((&cfg, stream)) = data.split_first() else {
        return;
    };
    let max = BOUNDS[usize::from(cfg) % BOUNDS.len()];
    let whole = parse(max, &[stream]);
    let cut = chunks(stream, cfg / 8);
    assert_eq!(parse(max, &cut), whole, "{} reads", cut.len());
    for ev in whole.0.iter().flatten() {
        assert!(
            ev.data.len() <= max,
            "{} data bytes over a bound of {max}",
            ev.data.len()
        );
    }
    if max > stream.len() {
        let mut with_end = stream.to_vec();
        with_end.extend_from_slice(b"\n\n");
        assert_eq!(whole, model(&with_end), "the WHATWG model");
    }
    round_trip(stream);
}

/// Pushes `reads` one after the other, taking events after each, then finishes the stream.
pub(crate) fn parse(max: usize, reads: &[&[u8]]) -> Out {
    let mut p = SseParser::new(max);
    let mut out = Vec::new();
    for read in reads {
        p.push(read);
        while let Some(item) = p.next() {
            out.push(item);
        }
    }
    p.finish();
    while let Some(item) = p.next() {
        out.push(item);
    }
    (out, p.last_event_id().map(str::to_owned), p.retry())
}

/// The WHATWG event-stream rules, written as plainly as possible (no bound).
fn model(stream: &[u8]) -> Out {
    let stream = stream.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(stream);
    let mut out = Vec::new();
    let (mut data, mut event, mut last_id) = (Vec::<u8>::new(), String::new(), String::new());
    let mut retry = None;
    for line in lines(stream) {
        if line.is_empty() {
            let ty = std::mem::take(&mut event);
            if data.is_empty() {
                continue;
            }
            data.pop();
            out.push(match String::from_utf8(std::mem::take(&mut data)) {
                Ok(d) => Ok(event_of(
                    if ty.is_empty() { "message" } else { &ty },
                    d,
                    &last_id,
                )),
                Err(_) => Err(SseError::InvalidUtf8),
            });
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"event" => event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => last_id = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Some(ms) = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()) {
                    retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
    let id = (!last_id.is_empty()).then_some(last_id);
    (out, id, retry)
}

/// The complete lines of `stream` (ended by CRLF, LF or CR), without their ends.
fn lines(stream: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < stream.len() {
        match stream[i] {
            b'\n' => {
                out.push(&stream[start..i]);
                start = i + 1;
            }
            b'\r' => {
                out.push(&stream[start..i]);
                if stream.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// An event as the parser builds it (the type is `#[non_exhaustive]`: built by parsing).
fn event_of(ty: &str, data: String, id: &str) -> SseEvent {
    let mut text = Vec::new();
    if !id.is_empty() {
        text.extend_from_slice(b"id: ");
        text.extend_from_slice(id.as_bytes());
        text.push(b'\n');
    }
    text.extend_from_slice(b"event: ");
    text.extend_from_slice(ty.as_bytes());
    text.push(b'\n');
    for line in data.split('\n') {
        text.extend_from_slice(b"data: ");
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
    }
    text.push(b'\n');
    let mut p = SseParser::new(usize::MAX);
    p.push(&text);
    match p.next() {
        Some(Ok(ev)) if ev.data == data && ev.event == ty => ev,
        other => panic!("could not build the expected event {ty:?} {data:?}: {other:?}"),
    }
}

/// `encode(id, data)` parses back to one event carrying them.
fn round_trip(stream: &[u8]) {
    let text = String::from_utf8_lossy(stream);
    let (id, data) = text.split_once('\t').unwrap_or(("7-1", &text));
    // The server's event ids never hold a line break or NUL; anything else goes.
    let id: String = id
        .chars()
        .filter(|c| !matches!(c, '\r' | '\n' | '\0'))
        .collect();
    let mut out = BytesMut::new();
    sse::encode(&id, data, &mut out);
    let (items, last, _) = parse(usize::MAX / 2, &[&out]);
    let want_data = data.replace('\r', "\n");
    let want_id = (!id.is_empty()).then(|| id.clone());
    assert_eq!(items.len(), 1, "encode({id:?}, {data:?}) gave {items:?}");
    match &items[0] {
        Ok(ev) => {
            assert_eq!(ev.data, want_data, "data of encode({id:?}, ..)");
            assert_eq!(ev.id, want_id, "id of encode({id:?}, ..)");
            assert_eq!(ev.event, "message");
        }
        Err(e) => panic!("encode({id:?}, {data:?}) read back as {e}"),
    }
    assert_eq!(last, want_id);
}
