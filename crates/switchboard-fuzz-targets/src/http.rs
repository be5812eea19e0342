//! The Streamable HTTP request path: `StreamableHttpService` (switchboard-http) with the
//! everything server behind it, exactly as `switchboard serve --http` builds it, driven in
//! process (no socket) by a sequence of arbitrary requests: any method, path, headers and body.
//!
//! Input (text-like, so that seeds are readable and written by hand):
//!
//! ```text
//! !sj                                   optional first line: options, one letter each
//! POST /mcp                             METHOD TARGET, and `&` to read the body only at the end
//! host: localhost                       header lines (`$SESSION`: the last session id given)
//! content-type: application/json
//!
//! {"jsonrpc":"2.0","id":1,...}          the body, up to the next separator line
//! ~~~                                   between requests
//! ```
//!
//! Options: `s` stateless, `j` JSON responses, `b` a 256-byte body bound, `f` a 512-byte frame
//! bound, `k` no keep-alive, `p` SSE streams closed right after priming, `o` no Host/Origin
//! check, `g` no GET stream, `d` no DELETE, `q` queues and open streams of one, `n` one session
//! at most, `i` a one-second idle timeout.
//!
//! Time is virtual (a paused clock that jumps whenever every task waits), so timeouts, retries
//! and idle sessions cost nothing. Checked: no panic in any task; no 500; every
//! `application/json` body is JSON, and so is every SSE event's data.

use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full};
use switchboard_example_servers::Example;
use switchboard_http::{HttpConfig, StreamableHttpService};
use switchboard_jsonrpc::SessionConfig;
use switchboard_transport::codec::sse::SseParser;
use switchboard_transport::headers::SESSION_ID;
use tower::Service;

/// At most this many requests per input.
const MAX_REQUESTS: usize = 48;
/// A response body is read up to this many bytes.
const MAX_BODY: usize = 1 << 20;
/// How long (virtual time) a request or a body is waited for.
const WAIT: Duration = Duration::from_secs(30);

/// The entry function.
pub fn run(data: &[u8]) {
    let (options, rest) = match data.strip_prefix(b"!") {
        Some(opts) => match opts.iter().position(|&b| b == b'\n') {
            Some(i) => (&opts[..i], &opts[i + 1..]),
            None => (opts, &b""[..]),
        },
        None => (&b""[..], data),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a current-thread runtime");
    runtime.block_on(session(options, rest));
}

fn config(options: &[u8]) -> (HttpConfig, SessionConfig) {
    let on = |c: u8| options.contains(&c);
    let mut http = HttpConfig::for_bind_address(([127, 0, 0, 1], 8080).into())
        .with_stateless(on(b's'))
        .with_json_response(on(b'j'));
    if on(b'b') {
        http = http.with_max_body_bytes(256);
    }
    if on(b'k') {
        http = http.with_keep_alive(None);
    }
    if on(b'p') {
        http = http.with_close_sse_after_priming_ms(Some(0));
    }
    if on(b'o') {
        http = http
            .with_allowed_hosts(None::<Vec<String>>)
            .with_allowed_origins(None::<Vec<String>>);
    }
    if on(b'g') {
        http = http.with_get_stream(false);
    }
    if on(b'd') {
        http = http.with_allow_delete(false);
    }
    if on(b'q') {
        http = http
            .with_unsolicited_queue(1)
            .with_stream_queue(1)
            .with_inbound_queue(1)
            .with_max_open_streams(1);
    }
    if on(b'n') {
        http = http.with_max_sessions(1);
    }
    if on(b'i') {
        http = http.with_idle_timeout(Some(Duration::from_secs(1)));
    }
    let mut engine = SessionConfig::default();
    if on(b'f') {
        engine = engine.with_max_frame_bytes(512);
    }
    (http, engine)
}

async fn session(options: &[u8], requests: &[u8]) {
    let (http_config, engine) = config(options);
    let server = switchboard_example_servers::build(Example::Everything, engine)
        .expect("the everything server builds");
    let mut service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&server),
        http_config,
    );
    let mut session_id: Option<Vec<u8>> = None;
    let mut held = Vec::new();
    for text in split(requests, b"\n~~~\n").take(MAX_REQUESTS) {
        let Some((req, hold)) = request(text, session_id.as_deref()) else {
            continue;
        };
        let Ok(Ok(resp)) = tokio::time::timeout(WAIT, service.call(req)).await else {
            continue;
        };
        if let Some(id) = resp.headers().get(SESSION_ID) {
            session_id = Some(id.as_bytes().to_vec());
        }
        if hold {
            held.push(resp);
        } else {
            check(resp).await;
        }
    }
    for resp in held {
        check(resp).await;
    }
    let _ = tokio::time::timeout(WAIT, service.close_all()).await;
}

/// Splits on `sep`.
fn split<'a>(mut data: &'a [u8], sep: &'a [u8]) -> impl Iterator<Item = &'a [u8]> + 'a {
    std::iter::from_fn(move || {
        if data.is_empty() {
            return None;
        }
        match data.windows(sep.len()).position(|w| w == sep) {
            Some(i) => {
                let head = &data[..i];
                data = &data[i + sep.len()..];
                Some(head)
            }
            None => Some(std::mem::take(&mut data)),
        }
    })
}

/// One request from its text; `None` when the request line or target cannot be built (a real
/// connection would not get that far either). Header lines that are not valid are left out.
fn request(text: &[u8], session: Option<&[u8]>) -> Option<(Request<Full<Bytes>>, bool)> {
    let (head, body) = match text.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&text[..i], &text[i + 2..]),
        None => (text, &b""[..]),
    };
    let mut lines = head.split(|&b| b == b'\n');
    let mut start = lines
        .next()?
        .split(|&b| b == b' ')
        .filter(|w| !w.is_empty());
    let method = Method::from_bytes(start.next()?).ok()?;
    let target = std::str::from_utf8(start.next().unwrap_or(b"/mcp")).ok()?;
    let hold = start.next() == Some(b"&");
    let mut builder = Request::builder().method(method).uri(target);
    for line in lines {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        let Ok(name) = HeaderName::from_bytes(&line[..colon]) else {
            continue;
        };
        let raw = line[colon + 1..].trim_ascii();
        let value = match session {
            Some(id) => replace(raw, b"$SESSION", id),
            None => raw.to_vec(),
        };
        if let Ok(value) = HeaderValue::from_bytes(&value) {
            builder = builder.header(name, value);
        }
    }
    let req = builder.body(Full::new(Bytes::copy_from_slice(body))).ok()?;
    Some((req, hold))
}

fn replace(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(i) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(to);
        rest = &rest[i + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Reads the response (within [`WAIT`] and [`MAX_BODY`]) and checks it.
async fn check<B>(resp: Response<B>)
where
    B: http_body::Body<Data = Bytes> + Unpin,
{
    let status = resp.status();
    let ctype = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let mut body = resp.into_body();
    let mut bytes = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    while bytes.len() < MAX_BODY {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(data);
                }
            }
            _ => break,
        }
    }
    assert_ne!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "500: {}",
        String::from_utf8_lossy(&bytes)
    );
    if ctype.starts_with("application/json")
        && !bytes.is_empty()
        && let Err(e) = serde_json::from_slice::<serde_json::Value>(&bytes)
    {
        panic!(
            "{status} application/json body is not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    if ctype.starts_with("text/event-stream") {
        let mut p = SseParser::new(MAX_BODY);
        p.push(&bytes);
        while let Some(item) = p.next() {
            let ev = item.expect("the server's SSE events parse");
            if !ev.data.is_empty()
                && let Err(e) = serde_json::from_str::<serde_json::Value>(&ev.data)
            {
                panic!("SSE event data is not JSON ({e}): {}", ev.data);
            }
        }
    }
}
