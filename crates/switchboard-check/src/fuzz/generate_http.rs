//! The Streamable HTTP families: hand-written requests whose headers and bodies disagree, lie
//! or are missing (SPEC-NOTES §6), each with the statuses the spec allows.

use serde_json::Value;
use switchboard_transport::headers::{EVENT_STREAM, JSON};
use switchboard_types::methods;

use super::build::{Wire, new_id, padded, ready, request};
use super::case::{Answer, Case, Expect, Framing, Header, HttpProbe, HttpWant, Step};
use super::rng::Rng;

/// A POST of a ping with this id; served, it must be answered with a result.
fn ping_post(id: &Value, want: HttpWant, rule: &'static str) -> HttpProbe {
    HttpProbe::post(request(id, methods::PING, None).into_bytes(), want, rule)
        .expecting(vec![Expect::id(id, Answer::Result, rule)])
}

/// The case of one probe.
fn probe(family: &str, p: HttpProbe) -> Case {
    ready(family, vec![Step::Http(p)])
}

/// A case about the session: skipped on a stateless server.
fn session_case(family: &str, p: HttpProbe) -> Case {
    Case {
        needs_session: true,
        ..probe(family, p)
    }
}

/// An HTTP case.
pub(crate) fn case(r: &mut Rng, _wire: Wire) -> Case {
    let id = new_id(r);
    match r.below(11) {
        0 => content_type(r, &id),
        1 => accept(r, &id),
        2 | 3 => content_length(r, &id),
        4 | 5 => session_id(r, &id),
        6 => last_event_id(r, &id),
        7 => protocol_version(r, &id),
        8 => method(r),
        9 => {
            // A body far over any sensible bound: 413, or served; the session lives on.
            let n = *r.pick(&[5 << 20, 12 << 20, 21 << 20]);
            let body = padded(&id, methods::PING, n);
            let mut p = ping_post(&id, HttpWant::ServedOrRefused, "HT");
            p.body = body.into_bytes();
            probe("http/oversized-body", p)
        }
        _ => headers(r, &id),
    }
}

fn content_type(r: &mut Rng, id: &Value) -> Case {
    let (value, want) = match r.below(8) {
        0 => (Header::Omit, HttpWant::ServedOrRefused),
        1 => (
            Header::Value(b"text/plain".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        2 => (
            Header::Value(b"application/x-www-form-urlencoded".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        3 => (
            Header::Value(b"multipart/form-data; boundary=fz".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        4 => (
            Header::Value(b"application/json; charset=utf-16".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        5 => (
            Header::Value(b"\xff\xfe".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        6 => (
            Header::Value(b"application/jsonx".to_vec()),
            HttpWant::ServedOrRefused,
        ),
        // A parameter does not change the media type.
        _ => (
            Header::Value(format!("{JSON}; charset=utf-8").into_bytes()),
            HttpWant::Served,
        ),
    };
    let mut p = ping_post(id, want, "HT-4");
    p.content_type = value;
    probe("http/content-type", p)
}

fn accept(r: &mut Rng, id: &Value) -> Case {
    // HT-5: a POST lists both media types; a server refuses one that does not (406 or 400).
    let refused = HttpWant::Status(&[400, 406]);
    let (value, want) = match r.below(6) {
        0 => (Header::Value(JSON.as_bytes().to_vec()), refused),
        1 => (Header::Value(EVENT_STREAM.as_bytes().to_vec()), refused),
        2 => (Header::Omit, refused),
        3 => (Header::Value(b"text/html".to_vec()), refused),
        4 => (Header::Value(b"*/*".to_vec()), HttpWant::ServedOrRefused),
        _ => (
            Header::Value(format!("{JSON}, {EVENT_STREAM};q=0.5").into_bytes()),
            HttpWant::Served,
        ),
    };
    let mut p = ping_post(id, want, "HT-5");
    p.accept = value;
    probe("http/accept", p)
}

fn content_length(r: &mut Rng, id: &Value) -> Case {
    let body_len = request(id, methods::PING, None).len() as u64;
    let lie = |s: String| (Framing::Declared(s), HttpWant::RefusedOrClosed);
    let (framing, want) = match r.below(9) {
        // A body that ends (EOF) before its declared length is incomplete; RFC 9112 §8 lets the
        // server refuse it or act on what came. It must not wait forever or fail.
        0 => (
            Framing::Declared((body_len + r.range(1, 1_000)).to_string()),
            HttpWant::NotBroken,
        ),
        1 => lie((body_len - r.range(1, body_len - 1)).to_string()),
        2 => lie("-1".into()),
        3 => lie((*r.pick(&["abc", "1e3", "0x10", "+5", ""])).to_owned()),
        4 => lie(r.range(1 << 40, 1 << 62).to_string()),
        5 => (Framing::Both, HttpWant::ServedOrRefused),
        6 | 7 => (
            Framing::Chunked {
                pieces: r.range(1, 6) as usize,
                pause_ms: r.range(0, 60),
                broken: false,
            },
            HttpWant::Served,
        ),
        _ => (
            Framing::Chunked {
                pieces: r.range(1, 4) as usize,
                pause_ms: 0,
                broken: true,
            },
            HttpWant::RefusedOrClosed,
        ),
    };
    let mut p = ping_post(id, want, "HT");
    p.framing = framing;
    probe("http/content-length", p)
}

/// A session id that is no session's.
fn bogus_session(r: &mut Rng) -> (Vec<u8>, HttpWant, &'static str) {
    match r.below(6) {
        // HT-20: an unknown session id is 404.
        0 | 1 => (
            {
                let n = r.range(8, 64) as usize;
                format!("fz-{}", r.word(n)).into_bytes()
            },
            HttpWant::Status(&[404]),
            "HT-20",
        ),
        2 => (Vec::new(), HttpWant::Status(&[400, 404]), "HT-18"),
        3 => (
            b"fz session".to_vec(),
            HttpWant::Status(&[400, 404]),
            "HT-18",
        ),
        4 => (
            b"fz-\xff\xfe".to_vec(),
            HttpWant::Status(&[400, 404]),
            "HT-18",
        ),
        _ => (
            "s".repeat(r.range(4_000, 16_000) as usize).into_bytes(),
            HttpWant::Status(&[400, 404, 431]),
            "HT-20",
        ),
    }
}

fn session_id(r: &mut Rng, id: &Value) -> Case {
    match r.below(5) {
        0 => {
            // HT-19: a request without the session id is 400.
            let mut p = ping_post(id, HttpWant::Status(&[400]), "HT-19");
            p.session = Header::Omit;
            session_case("http/session-id", p)
        }
        1 => {
            let (value, _, rule) = bogus_session(r);
            let mut p = HttpProbe::bodiless("GET", HttpWant::Status(&[400, 404, 405]), rule);
            p.accept = Header::Value(EVENT_STREAM.as_bytes().to_vec());
            p.session = Header::Value(value);
            session_case("http/session-id", p)
        }
        2 => {
            let (value, _, rule) = bogus_session(r);
            let mut p = HttpProbe::bodiless("DELETE", HttpWant::Status(&[400, 404, 405]), rule);
            p.session = Header::Value(value);
            session_case("http/session-id", p)
        }
        3 => {
            // The real id and a second, bogus one: ambiguous, so anything but a failure.
            let (value, _, _) = bogus_session(r);
            let mut p = ping_post(id, HttpWant::ServedOrRefused, "HT-19");
            p.extra.push(("MCP-Session-Id".into(), value));
            session_case("http/session-id", p)
        }
        _ => {
            let (value, want, rule) = bogus_session(r);
            let mut p = ping_post(id, want, rule);
            p.session = Header::Value(value);
            session_case("http/session-id", p)
        }
    }
}

fn last_event_id(r: &mut Rng, id: &Value) -> Case {
    let value: Vec<u8> = match r.below(8) {
        0 => b"0".to_vec(),
        1 => b"-1".to_vec(),
        2 => b"99999999999999999999999999".to_vec(),
        3 => "e".repeat(r.range(1_000, 8_000) as usize).into_bytes(),
        4 => b"\xff\xfe\x00".to_vec(),
        5 => b"../../../etc/passwd".to_vec(),
        6 => format!("fz-{}:{}", r.word(16), r.range(0, 1 << 20)).into_bytes(),
        _ => Vec::new(),
    };
    if r.chance(25) {
        // On a POST the header means nothing: the request is served as usual (or refused, for
        // a value that is no valid header value).
        let mut p = ping_post(id, HttpWant::ServedOrRefused, "HT");
        p.extra.push(("Last-Event-ID".into(), value));
        return probe("http/last-event-id", p);
    }
    // HT-13/HT-17: a resumption of an unknown stream may open a fresh stream (replaying nothing
    // of another's), or be refused; it must not fail or hang.
    let mut p = HttpProbe::bodiless("GET", HttpWant::NotBroken, "HT-17");
    p.accept = Header::Value(EVENT_STREAM.as_bytes().to_vec());
    p.extra.push(("Last-Event-ID".into(), value));
    session_case("http/last-event-id", p)
}

fn protocol_version(r: &mut Rng, id: &Value) -> Case {
    // HT-23: an invalid or unsupported MCP-Protocol-Version is 400.
    let (value, want, rule) = match r.below(8) {
        0 => (
            Header::Value(b"1999-01-01".to_vec()),
            HttpWant::Status(&[400]),
            "HT-23",
        ),
        1 => (Header::Value(Vec::new()), HttpWant::Status(&[400]), "HT-23"),
        2 => (
            Header::Value(b"2025-11-25, 2025-06-18".to_vec()),
            HttpWant::Status(&[400]),
            "HT-23",
        ),
        3 => (
            {
                let n = r.range(1, 2_000) as usize;
                Header::Value(r.word(n).into_bytes())
            },
            HttpWant::Status(&[400]),
            "HT-23",
        ),
        4 => (
            Header::Value(b"2025-11-25\xff".to_vec()),
            HttpWant::Status(&[400]),
            "HT-23",
        ),
        5 => (
            Header::Value(b"2026-13-45".to_vec()),
            HttpWant::Status(&[400]),
            "HT-23",
        ),
        // A supported version other than the negotiated one, or none: SPEC-NOTES §6.8 leaves
        // the answer open (a server without the header assumes 2025-03-26).
        6 => (
            Header::Value(b"2025-03-26".to_vec()),
            HttpWant::ServedOrRefused,
            "HT-22",
        ),
        _ => (Header::Omit, HttpWant::ServedOrRefused, "HT-22"),
    };
    let mut p = ping_post(id, want, rule);
    p.version = value;
    probe("http/protocol-version", p)
}

fn method(r: &mut Rng) -> Case {
    // HT-1: the endpoint takes POST, GET (or 405) and DELETE (or 405); anything else is refused.
    let m = *r.pick(&["PUT", "PATCH", "TRACE", "OPTIONS", "HEAD", "FUZZ"]);
    probe(
        "http/method",
        HttpProbe::bodiless(m, HttpWant::NotBroken, "HT-1"),
    )
}

fn headers(r: &mut Rng, id: &Value) -> Case {
    let mut p = ping_post(id, HttpWant::NotBroken, "HT");
    match r.below(3) {
        0 => p.extra.push((
            "X-Fz".into(),
            "h".repeat(r.range(16_000, 128_000) as usize).into_bytes(),
        )),
        1 => {
            for i in 0..r.range(100, 2_000) {
                p.extra.push((format!("X-Fz-{i}"), b"1".to_vec()));
            }
        }
        _ => {
            p.extra.push(("X-F\u{1}z".into(), b"1".to_vec()));
            p.want = HttpWant::RefusedOrClosed;
        }
    }
    probe("http/headers", p)
}
