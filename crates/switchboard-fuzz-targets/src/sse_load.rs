//! The second SSE reader of the project: `switchboard-load`'s `SseScanner`, which reads the
//! event streams of the server under load (only each event's `data`). The load generator is a
//! binary, so its `wire` module is compiled here from its own source file.
//!
//! Input: one byte choosing how the stream is cut into reads, then the stream. Checked:
//! * the scanner yields the same events whether the stream arrives in one read or in many;
//! * on the streams both readers define alike (no lone CR as a line end, no byte order mark),
//!   it yields the data of exactly the events `codec::sse` dispatches, in order (bar the events
//!   whose data is empty, which the scanner skips on purpose), byte for byte.

#[path = "../../switchboard-load/src/wire.rs"]
#[allow(dead_code, unreachable_pub, clippy::all)]
mod wire;

use switchboard_transport::codec::sse::SseError;
use wire::SseScanner;

use crate::input::chunks;

/// The entry function.
pub fn run(data: &[u8]) {
    let Some((&cfg, stream)) = data.split_first() else {
        return;
    };
    let whole = scan(&[stream]);
    let cut = chunks(stream, cfg);
    assert_eq!(scan(&cut), whole, "{} reads", cut.len());

    let lone_cr = stream
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\r' && stream.get(i + 1) != Some(&b'\n'));
    if lone_cr || stream.starts_with(b"\xEF\xBB\xBF") {
        return;
    }
    let mut p = switchboard_transport::codec::sse::SseParser::new(usize::MAX / 2);
    p.push(stream);
    let mut reference = Vec::new();
    while let Some(item) = p.next() {
        match item {
            Ok(ev) if ev.data.is_empty() => {}
            Ok(ev) => reference.push(Some(ev.data.into_bytes())),
            Err(SseError::InvalidUtf8) => reference.push(None),
            Err(e) => panic!("unbounded parser reported {e}"),
        }
    }
    let scanned: Vec<Option<Vec<u8>>> = whole
        .into_iter()
        .map(|d| String::from_utf8(d).ok().map(String::into_bytes))
        .collect();
    assert_eq!(
        scanned, reference,
        "switchboard-load's scanner vs codec::sse"
    );
}

fn scan(reads: &[&[u8]]) -> Vec<Vec<u8>> {
    let mut s = SseScanner::default();
    let mut out = Vec::new();
    for read in reads {
        s.feed(read);
        while let Some(ev) = s.next_event() {
            out.push(ev);
        }
    }
    out
}
