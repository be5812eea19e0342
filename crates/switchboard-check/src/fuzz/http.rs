//! Hand-written HTTP/1.1 for the fuzzer: every request byte is the case's (headers that lie,
//! bodies cut short, chunk sizes that are not hexadecimal), one connection per request, and the
//! answer read as far as the case needs (the head, the whole body, or an SSE stream until the
//! answers it waits for have come).

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_transport::codec::sse::SseParser;
use switchboard_transport::headers::{EVENT_STREAM, JSON, POST_ACCEPT, SESSION_ID, media_type};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use super::case::{Framing, Header, HttpProbe, SentId};
use super::judge::{Rx, same_exact};

/// The most body kept from one answer.
const BODY_LIMIT: usize = 16 << 20;
/// The longest answer head read.
const HEAD_LIMIT: usize = 64 << 10;
/// How long an SSE answer is read when no answer is awaited on it (a notification, a request
/// cancelled at once): long enough for a prompt server to end it.
const SSE_GRACE: Duration = Duration::from_millis(300);

/// Where the endpoint is.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// `host:port` to connect to.
    addr: String,
    /// The `Host` header.
    host: String,
    /// The request target (path and query).
    path: String,
}

impl Endpoint {
    /// Reads an `http://` URL.
    ///
    /// # Errors
    /// Not an `http://` URL with a host.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        let u = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        if u.scheme() != "http" {
            return Err("the fuzzer speaks plain http:// only".into());
        }
        let host = u.host_str().ok_or("no host")?.to_owned();
        let port = u.port_or_known_default().unwrap_or(80);
        let mut path = u.path().to_owned();
        if let Some(q) = u.query() {
            path.push('?');
            path.push_str(q);
        }
        let authority = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        Ok(Endpoint {
            addr: format!("{host}:{port}"),
            host: authority,
            path,
        })
    }
}

/// The session state a request carries.
#[derive(Debug, Clone, Default)]
pub(crate) struct SessionHeaders {
    /// The `MCP-Session-Id` issued.
    pub(crate) id: Option<String>,
    /// The negotiated version, sent as `MCP-Protocol-Version` from 2025-06-18 on.
    pub(crate) version: Option<String>,
}

impl SessionHeaders {
    fn header_version(&self) -> Option<&str> {
        self.version.as_deref().filter(|v| *v >= "2025-06-18")
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    /// The status code.
    pub(crate) status: u16,
    /// The media type of `Content-Type`, lower case ("" when absent).
    pub(crate) media: String,
    /// The `MCP-Session-Id` issued, if any.
    pub(crate) session: Option<String>,
    /// The body as read (bounded).
    pub(crate) body: Vec<u8>,
    /// The JSON-RPC messages in the body (the entries of a batch one by one).
    pub(crate) messages: Vec<Rx>,
}

impl Reply {
    /// `HTTP 400 application/json {"jsonrpc"…`: the answer in short.
    pub(crate) fn brief(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let cut: String = text.chars().take(160).collect();
        let more = if text.chars().count() > 160 {
            "…"
        } else {
            ""
        };
        let media = if self.media.is_empty() {
            "(no Content-Type)"
        } else {
            &self.media
        };
        format!("HTTP {} {media} {cut}{more}", self.status)
            .trim_end()
            .to_owned()
    }

    /// Whether the body is empty (or blank).
    pub(crate) fn empty_body(&self) -> bool {
        self.body.iter().all(u8::is_ascii_whitespace)
    }
}

/// How an exchange ended.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// An answer came.
    Reply(Reply),
    /// The server closed the connection without an answer.
    Closed(String),
    /// No answer before the deadline.
    Timeout,
    /// The connection could not be made.
    Unreachable(String),
}

/// How far to read an answer.
#[derive(Debug, Clone)]
pub(crate) struct Read {
    /// The answers awaited on an SSE stream: reading ends once they are all in.
    pub(crate) ids: Vec<SentId>,
    /// Stop at the head (a GET stream that stays open).
    pub(crate) head_only: bool,
    /// When to give up.
    pub(crate) deadline: Instant,
}

/// A request as bytes on the wire.
#[derive(Debug, Clone)]
pub(crate) struct Wire {
    head: Vec<u8>,
    /// The body's writes (one unless chunked in pieces).
    body: Vec<Vec<u8>>,
    pause: Duration,
    /// Close the writing side after the body.
    half_close: bool,
}

fn push_header(head: &mut Vec<u8>, name: &str, value: &[u8]) {
    head.extend_from_slice(name.as_bytes());
    head.extend_from_slice(b": ");
    head.extend_from_slice(value);
    head.extend_from_slice(b"\r\n");
}

/// A header from the probe's choice: the default value, none, or the given bytes.
fn choose(head: &mut Vec<u8>, name: &str, choice: &Header, default: Option<&[u8]>) {
    match choice {
        Header::Default => {
            if let Some(v) = default {
                push_header(head, name, v);
            }
        }
        Header::Omit => {}
        Header::Value(v) => push_header(head, name, v),
    }
}

/// Writes `p` out as bytes for `endpoint`, in session `s`.
pub(crate) fn encode(endpoint: &Endpoint, s: &SessionHeaders, p: &HttpProbe) -> Wire {
    let mut head = format!("{} {} HTTP/1.1\r\n", p.method, endpoint.path).into_bytes();
    push_header(&mut head, "Host", endpoint.host.as_bytes());
    push_header(&mut head, "Connection", b"close");
    let has_body = p.method == "POST" || !p.body.is_empty();
    let accept = if p.method == "GET" {
        EVENT_STREAM
    } else {
        POST_ACCEPT
    };
    choose(&mut head, "Accept", &p.accept, Some(accept.as_bytes()));
    choose(
        &mut head,
        "Content-Type",
        &p.content_type,
        has_body.then_some(JSON.as_bytes()),
    );
    choose(
        &mut head,
        "MCP-Session-Id",
        &p.session,
        s.id.as_deref().map(str::as_bytes),
    );
    choose(
        &mut head,
        "MCP-Protocol-Version",
        &p.version,
        s.header_version().map(str::as_bytes),
    );
    for (name, value) in &p.extra {
        push_header(&mut head, name, value);
    }
    let mut body = vec![p.body.clone()];
    let mut pause = Duration::ZERO;
    let mut half_close = false;
    match &p.framing {
        Framing::Exact => {
            if has_body {
                push_header(
                    &mut head,
                    "Content-Length",
                    p.body.len().to_string().as_bytes(),
                );
            }
        }
        Framing::Declared(n) => {
            push_header(&mut head, "Content-Length", n.as_bytes());
            half_close = true;
        }
        Framing::Chunked {
            pieces,
            pause_ms,
            broken,
        } => {
            push_header(&mut head, "Transfer-Encoding", b"chunked");
            body = chunks(&p.body, *pieces, *broken);
            pause = Duration::from_millis(*pause_ms);
        }
        Framing::Both => {
            push_header(
                &mut head,
                "Content-Length",
                p.body.len().to_string().as_bytes(),
            );
            push_header(&mut head, "Transfer-Encoding", b"chunked");
            body = chunks(&p.body, 1, false);
        }
    }
    head.extend_from_slice(b"\r\n");
    Wire {
        head,
        body,
        pause,
        half_close,
    }
}

/// `body` as chunked transfer coding in `pieces` writes (the last carrying the final chunk);
/// `broken` writes the sizes in a form that is not hexadecimal.
fn chunks(body: &[u8], pieces: usize, broken: bool) -> Vec<Vec<u8>> {
    let size = body.len().div_ceil(pieces.max(1)).max(1);
    let mut out: Vec<Vec<u8>> = body
        .chunks(size)
        .map(|c| {
            let mut w = if broken {
                format!("z{}\r\n", c.len()).into_bytes()
            } else {
                format!("{:x}\r\n", c.len()).into_bytes()
            };
            w.extend_from_slice(c);
            w.extend_from_slice(b"\r\n");
            w
        })
        .collect();
    match out.last_mut() {
        Some(last) => last.extend_from_slice(b"0\r\n\r\n"),
        None => out.push(b"0\r\n\r\n".to_vec()),
    }
    out
}

/// The request a correct client sends: `body` POSTed in session `s`.
pub(crate) fn post(endpoint: &Endpoint, s: &SessionHeaders, body: &[u8]) -> Wire {
    let probe = HttpProbe::post(body.to_vec(), super::case::HttpWant::Served, "HT");
    encode(endpoint, s, &probe)
}

/// Sends `wire` and reads the answer as `read` says. `on_head` is called once the head is in
/// (so that the caller may go on while the body is read).
pub(crate) async fn exchange(
    endpoint: &Endpoint,
    wire: Wire,
    read: Read,
    on_head: tokio::sync::oneshot::Sender<()>,
) -> Outcome {
    let connect = tokio::time::timeout_at(read.deadline, TcpStream::connect(&endpoint.addr)).await;
    let mut stream = match connect {
        Err(_) => return Outcome::Timeout,
        Ok(Err(e)) => return Outcome::Unreachable(e.to_string()),
        Ok(Ok(s)) => s,
    };
    let _ = stream.set_nodelay(true);
    let (mut rd, mut wr) = stream.split();
    let write = async {
        wr.write_all(&wire.head).await?;
        for (i, part) in wire.body.iter().enumerate() {
            if i > 0 && !wire.pause.is_zero() {
                tokio::time::sleep(wire.pause).await;
            }
            wr.write_all(part).await?;
        }
        wr.flush().await?;
        if wire.half_close {
            wr.shutdown().await?;
        }
        Ok::<(), std::io::Error>(())
    };
    // A server may answer (413, 400) before it has read the body, and close: the answer counts,
    // so the head is read while the body goes out.
    let mut buf = Vec::new();
    let head = {
        let read_head = read_head(&mut rd, &mut buf);
        tokio::pin!(read_head);
        tokio::pin!(write);
        let mut written = false;
        loop {
            tokio::select! {
                w = &mut write, if !written => {
                    written = true;
                    if w.is_err() {
                        // Whatever the server answered before it stopped reading still counts.
                        continue;
                    }
                }
                h = &mut read_head => break h,
                () = tokio::time::sleep_until(read.deadline) => return Outcome::Timeout,
            }
        }
    };
    let _ = on_head.send(());
    let (status, headers) = match head {
        Ok(h) => h,
        Err(why) => return Outcome::Closed(why),
    };
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    let media = header("content-type")
        .map(|v| media_type(&v).to_ascii_lowercase())
        .unwrap_or_default();
    let mut reply = Reply {
        status,
        session: header(SESSION_ID),
        media,
        body: Vec::new(),
        messages: Vec::new(),
    };
    if read.head_only || status == 204 || status == 304 || (100..200).contains(&status) {
        return Outcome::Reply(reply);
    }
    let mut body = Body {
        buf,
        chunked: header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked")),
        remaining: header("content-length").and_then(|v| v.trim().parse::<usize>().ok()),
        chunk_left: 0,
        done: false,
    };
    let sse = reply.media == EVENT_STREAM;
    let mut parser = SseParser::new(BODY_LIMIT);
    let deadline = if sse && read.ids.is_empty() {
        read.deadline.min(Instant::now() + SSE_GRACE)
    } else {
        read.deadline
    };
    while let Ok(Some(bytes)) = tokio::time::timeout_at(deadline, body.next(&mut rd))
        .await
        .unwrap_or(Ok(None))
    {
        let room = BODY_LIMIT.saturating_sub(reply.body.len());
        reply
            .body
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        if sse {
            parser.push(&bytes);
            gather_events(&mut reply, &mut parser);
            if answered(&reply, &read.ids) {
                break;
            }
        }
    }
    if sse {
        parser.finish();
        gather_events(&mut reply, &mut parser);
    } else if let Some(msgs) = std::str::from_utf8(&reply.body)
        .ok()
        .and_then(|t| Rx::parse_all(t.trim()))
    {
        reply.messages = msgs;
    }
    Outcome::Reply(reply)
}

fn gather_events(reply: &mut Reply, parser: &mut SseParser) {
    while let Some(event) = parser.next() {
        if let Ok(event) = event
            && let Some(msgs) = Rx::parse_all(event.data.trim())
        {
            reply.messages.extend(msgs);
        }
    }
}

/// Whether every awaited answer is in, or the request as a whole was refused (an error without
/// id).
fn answered(reply: &Reply, ids: &[SentId]) -> bool {
    let refused = reply
        .messages
        .iter()
        .any(|m| m.id.is_none() && m.value.get("error").is_some());
    refused
        || (!ids.is_empty()
            && ids.iter().all(|id| {
                reply.messages.iter().any(|m| {
                    m.value.get("method").is_none()
                        && m.id.as_deref().is_some_and(|raw| {
                            same_exact(id, raw) || id.0.trim_matches('"') == raw.trim_matches('"')
                        })
                })
            }))
}

type Head = (u16, Vec<(String, String)>);

/// Reads the status line and headers; what follows the head stays in `buf`.
async fn read_head(
    rd: &mut tokio::net::tcp::ReadHalf<'_>,
    buf: &mut Vec<u8>,
) -> Result<Head, String> {
    loop {
        if let Some(end) = find(buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            let mut lines = head.split("\r\n");
            let status_line = lines.next().unwrap_or_default();
            let status = status_line
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse::<u16>().ok())
                .ok_or_else(|| format!("not an HTTP answer: {status_line:?}"))?;
            let headers = lines
                .filter_map(|l| l.split_once(':'))
                .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
                .collect();
            return Ok((status, headers));
        }
        if buf.len() > HEAD_LIMIT {
            return Err("an answer head over 64 KiB".into());
        }
        let mut chunk = [0u8; 8192];
        match rd.read(&mut chunk).await {
            Ok(0) => {
                return Err(if buf.is_empty() {
                    "the server closed the connection without an answer".into()
                } else {
                    "the server closed the connection in the middle of the answer head".into()
                });
            }
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) => return Err(format!("the connection failed: {e}")),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// An answer body being read: by `Content-Length`, chunked, or to the end of the connection.
struct Body {
    buf: Vec<u8>,
    chunked: bool,
    remaining: Option<usize>,
    /// Bytes left in the current chunk (chunked coding).
    chunk_left: usize,
    done: bool,
}

impl Body {
    /// The next bytes of the body; `None` at its end.
    async fn next(
        &mut self,
        rd: &mut tokio::net::tcp::ReadHalf<'_>,
    ) -> Result<Option<Vec<u8>>, std::io::Error> {
        loop {
            if self.done {
                return Ok(None);
            }
            if let Some(out) = self.take() {
                return Ok(Some(out));
            }
            if self.done {
                return Ok(None);
            }
            let mut chunk = vec![0u8; 64 << 10];
            let n = rd.read(&mut chunk).await?;
            if n == 0 {
                self.done = true;
                let rest = std::mem::take(&mut self.buf);
                return Ok((!rest.is_empty() && !self.chunked).then_some(rest));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Takes what the buffer holds of the body, if anything.
    fn take(&mut self) -> Option<Vec<u8>> {
        if !self.chunked {
            if self.buf.is_empty() {
                if self.remaining == Some(0) {
                    self.done = true;
                }
                return None;
            }
            let n = self
                .remaining
                .map_or(self.buf.len(), |r| r.min(self.buf.len()));
            let out: Vec<u8> = self.buf.drain(..n).collect();
            if let Some(r) = &mut self.remaining {
                *r -= n;
                if *r == 0 {
                    self.done = true;
                }
            }
            return Some(out);
        }
        let mut out = Vec::new();
        loop {
            if self.chunk_left > 0 {
                let n = self.chunk_left.min(self.buf.len());
                out.extend(self.buf.drain(..n));
                self.chunk_left -= n;
                if self.chunk_left > 0 {
                    break;
                }
                continue;
            }
            // A chunk's trailing CRLF, then the next size line.
            if self.buf.starts_with(b"\r\n") {
                self.buf.drain(..2);
            }
            let Some(end) = find(&self.buf, b"\r\n") else {
                break;
            };
            let line = String::from_utf8_lossy(&self.buf[..end]).into_owned();
            let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16);
            self.buf.drain(..end + 2);
            match size {
                Ok(0) | Err(_) => {
                    self.done = true;
                    break;
                }
                Ok(n) => self.chunk_left = n,
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// The answer a client gives to a request the server sent it: `{}` to a ping, -32601 to the
/// rest (the fuzzer declares no client capability).
pub(crate) fn answer_server_request(m: &Value) -> Option<String> {
    let id = m.get("id")?;
    m.get("method")?;
    Some(
        if m.get("method") == Some(&json!(switchboard_types::methods::PING)) {
            json!({"jsonrpc": "2.0", "id": id, "result": {}}).to_string()
        } else {
            json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "the fuzzer declares no client capability"}})
            .to_string()
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_address_host_and_path() {
        let e = Endpoint::parse("http://127.0.0.1:8080/mcp?x=1").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.addr, "127.0.0.1:8080");
        assert_eq!(e.host, "127.0.0.1:8080");
        assert_eq!(e.path, "/mcp?x=1");
        assert!(Endpoint::parse("https://example.com/mcp").is_err());
    }

    #[test]
    fn chunked_bodies_are_written_and_read_back() {
        let parts = chunks(b"hello world", 3, false);
        assert_eq!(parts.len(), 3);
        let wire: Vec<u8> = parts.concat();
        assert!(wire.ends_with(b"0\r\n\r\n"));
        let mut body = Body {
            buf: wire,
            chunked: true,
            remaining: None,
            chunk_left: 0,
            done: false,
        };
        let mut got = Vec::new();
        while let Some(b) = body.take() {
            got.extend(b);
        }
        assert_eq!(got, b"hello world");
        assert!(body.done);
    }

    #[test]
    fn probes_carry_the_session_unless_told_otherwise() {
        let e = Endpoint::parse("http://127.0.0.1:1/mcp").unwrap_or_else(|e| panic!("{e}"));
        let s = SessionHeaders {
            id: Some("abc".into()),
            version: Some("2025-11-25".into()),
        };
        let mut p = HttpProbe::post(b"{}".to_vec(), super::super::case::HttpWant::Served, "HT");
        let head = String::from_utf8_lossy(&encode(&e, &s, &p).head).into_owned();
        assert!(head.contains("MCP-Session-Id: abc\r\n"), "{head}");
        assert!(
            head.contains("MCP-Protocol-Version: 2025-11-25\r\n"),
            "{head}"
        );
        assert!(head.contains("Content-Length: 2\r\n"), "{head}");
        p.session = Header::Omit;
        p.framing = Framing::Declared("99".into());
        let w = encode(&e, &s, &p);
        let head = String::from_utf8_lossy(&w.head).into_owned();
        assert!(!head.contains("MCP-Session-Id"), "{head}");
        assert!(
            head.contains("Content-Length: 99\r\n") && w.half_close,
            "{head}"
        );
    }
}
