//! HTTP/1.1 written and read by hand over one TCP connection per request, so that a probe sends
//! exactly what it means to (two `Host` lines, a body that never ends) and its detail can show
//! the request as it went on the wire. Plain `http://` only: the probes that need this report a
//! skip for `https://` endpoints.

use std::fmt::Write as _;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// The most body bytes kept from one answer.
const KEEP: usize = 256 * 1024;
/// How much of a body "without end" is sent before the sender just waits.
pub(crate) const ENDLESS_CAP: usize = 64 << 20;
/// How much of a request or an answer a detail shows.
const SHOWN: usize = 320;

/// Where the endpoint is: the authority as the URL gives it, the address to connect to, the
/// path with its query.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) url: String,
    pub(crate) authority: String,
    pub(crate) path: String,
}

impl Endpoint {
    /// The endpoint of a plain `http://` URL, or why it cannot be probed by hand.
    pub(crate) fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url}: the raw HTTP probes speak plain http:// only"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(format!("{url}: no host, or credentials in the URL"));
        }
        Ok(Endpoint {
            url: url.to_owned(),
            authority: authority.to_owned(),
            path: path.to_owned(),
        })
    }

    /// The address to connect to (`host:port`, port 80 when the URL gives none).
    fn addr(&self) -> String {
        let a = &self.authority;
        let has_port = match a.rfind(']') {
            Some(close) => a[close..].contains(':'),
            None => a.contains(':'),
        };
        if has_port {
            a.clone()
        } else {
            format!("{a}:80")
        }
    }

    /// This endpoint with `path` (and query) instead of its own.
    pub(crate) fn at(&self, path: &str) -> Endpoint {
        Endpoint {
            url: format!("http://{}{path}", self.authority),
            authority: self.authority.clone(),
            path: path.to_owned(),
        }
    }
}

/// How the body goes.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// None (no `Content-Length` either).
    Empty,
    /// These bytes, with `Content-Length`.
    Sized(Vec<u8>),
    /// `prefix`, then `pad` bytes of `a`, then `suffix`: with `Content-Length` (`chunked`
    /// false) or chunked; `endless` never sends the last chunk.
    Big {
        prefix: String,
        pad: usize,
        suffix: String,
        chunked: bool,
        endless: bool,
    },
}

/// One request.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub(crate) method: &'static str,
    pub(crate) path: String,
    /// The header lines in order (duplicates allowed).
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Body,
}

impl Req {
    /// A POST of `body` with the headers every MCP POST carries.
    pub(crate) fn post(ep: &Endpoint, body: impl Into<String>) -> Req {
        Req {
            method: "POST",
            path: ep.path.clone(),
            headers: vec![
                ("Host".into(), ep.authority.clone()),
                ("Content-Type".into(), "application/json".into()),
                (
                    "Accept".into(),
                    "application/json, text/event-stream".into(),
                ),
                ("Connection".into(), "close".into()),
            ],
            body: Body::Sized(body.into().into_bytes()),
        }
    }

    /// A request without a body (`GET`, `DELETE`).
    pub(crate) fn bodiless(ep: &Endpoint, method: &'static str) -> Req {
        Req {
            method,
            path: ep.path.clone(),
            headers: vec![
                ("Host".into(), ep.authority.clone()),
                ("Accept".into(), "application/json".into()),
                ("Connection".into(), "close".into()),
            ],
            body: Body::Empty,
        }
    }

    /// Replaces every `name` header by one with `value`.
    pub(crate) fn set(mut self, name: &str, value: impl Into<String>) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Adds a `name` header, keeping any there.
    pub(crate) fn add(mut self, name: &str, value: impl Into<String>) -> Req {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Removes every `name` header.
    pub(crate) fn without(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// The session's headers, when there is a session.
    pub(crate) fn session(self, id: Option<&str>, version: &str) -> Req {
        let r = self.set("MCP-Protocol-Version", version);
        match id {
            Some(id) => r.set("Mcp-Session-Id", id),
            None => r,
        }
    }

    /// The head as sent (request line and headers, CRLF-terminated).
    fn head(&self) -> String {
        let mut h = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        for (n, v) in &self.headers {
            let _ = write!(h, "{n}: {v}\r\n");
        }
        match &self.body {
            Body::Empty => {}
            Body::Sized(b) => {
                let _ = write!(h, "Content-Length: {}\r\n", b.len());
            }
            Body::Big {
                prefix,
                pad,
                suffix,
                chunked: false,
                ..
            } => {
                let _ = write!(
                    h,
                    "Content-Length: {}\r\n",
                    prefix.len() + pad + suffix.len()
                );
            }
            Body::Big { .. } => h.push_str("Transfer-Encoding: chunked\r\n"),
        }
        h.push_str("\r\n");
        h
    }

    /// The request as a detail shows it: the head, then the body, trimmed, CRLF as `⏎`.
    pub(crate) fn shown(&self) -> String {
        let body = match &self.body {
            Body::Empty => String::new(),
            Body::Sized(b) => String::from_utf8_lossy(b).into_owned(),
            Body::Big {
                prefix,
                pad,
                suffix,
                chunked,
                endless,
            } => {
                let end = if *endless {
                    " (chunks never ending)"
                } else if *chunked {
                    " (chunked)"
                } else {
                    ""
                };
                format!("{prefix}<{pad} × 'a'>{suffix}{end}")
            }
        };
        trim(&format!("{}{body}", self.head()).replace("\r\n", "⏎"))
    }
}

/// `text` cut to a detail's length.
pub(crate) fn trim(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_owned();
    }
    let mut s: String = text.chars().take(SHOWN).collect();
    s.push('…');
    s
}

/// One answer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    /// Header names lower case, in order.
    pub(crate) headers: Vec<(String, String)>,
    /// The body (bounded; an SSE stream as far as it was read).
    pub(crate) body: String,
}

impl Reply {
    /// The first `name` header.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The session id the answer issued.
    pub(crate) fn session(&self) -> Option<&str> {
        self.header("mcp-session-id")
    }

    pub(crate) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The JSON-RPC messages of the body: a JSON body (an array's members one by one), or the
    /// `data:` lines of an SSE stream.
    pub(crate) fn messages(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut push = |v: Value| match v {
            Value::Array(a) => out.extend(a),
            v => out.push(v),
        };
        if let Ok(v) = serde_json::from_str::<Value>(&self.body) {
            push(v);
            return out;
        }
        let mut data = String::new();
        for line in self.body.lines().chain(std::iter::once("")) {
            if let Some(d) = line.strip_prefix("data:") {
                data.push_str(d.trim_start());
            } else if line.trim().is_empty() && !data.is_empty() {
                if let Ok(v) = serde_json::from_str(&data) {
                    push(v);
                }
                data.clear();
            }
        }
        out
    }

    /// The response answering `id`, if one came.
    pub(crate) fn answer(&self, id: &Value) -> Option<Value> {
        self.messages()
            .into_iter()
            .find(|m| m.get("method").is_none() && m.get("id") == Some(id))
    }

    /// `HTTP 400 {"jsonrpc"…}` (with the session header when one came), trimmed.
    pub(crate) fn shown(&self) -> String {
        let body = self.body.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut s = format!("HTTP {}", self.status);
        if let Some(sid) = self.session() {
            let _ = write!(s, " Mcp-Session-Id: {sid}");
        }
        if let Some(w) = self.header("www-authenticate") {
            let _ = write!(s, " WWW-Authenticate: {w}");
        }
        if !body.is_empty() {
            let _ = write!(s, " {body}");
        }
        trim(&s)
    }
}

/// What a request came to.
#[derive(Debug, Clone)]
pub(crate) enum Outcome {
    /// An answer (its body as far as it came within the time).
    Answered(Reply),
    /// The server closed the connection without an answer (or reset it).
    Closed(String),
    /// Nothing within the time.
    Silent,
    /// No connection at all.
    Unreachable(String),
}

impl Outcome {
    pub(crate) fn reply(&self) -> Option<&Reply> {
        match self {
            Outcome::Answered(r) => Some(r),
            _ => None,
        }
    }

    pub(crate) fn shown(&self) -> String {
        match self {
            Outcome::Answered(r) => r.shown(),
            Outcome::Closed(why) => format!("the connection closed without an answer ({why})"),
            Outcome::Silent => "no answer within the time".into(),
            Outcome::Unreachable(why) => format!("no connection: {why}"),
        }
    }
}

/// Sends `req` to `ep` and reads the answer, `timeout` in all (an SSE stream is read until the
/// time is up or a JSON-RPC response has come).
pub(crate) async fn send(ep: &Endpoint, req: &Req, timeout: Duration) -> Outcome {
    let deadline = Instant::now() + timeout;
    let stream = match tokio::time::timeout(timeout, TcpStream::connect(ep.addr())).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return Outcome::Unreachable(e.to_string()),
        Err(_) => return Outcome::Unreachable("connect timed out".into()),
    };
    let (mut rd, mut wr) = stream.into_split();
    let head = req.head();
    let body = req.body.clone();
    // The body goes while the answer is read: a server may refuse before reading it all.
    let writer = tokio::spawn(async move {
        wr.write_all(head.as_bytes()).await?;
        write_body(&mut wr, &body).await?;
        wr.flush().await?;
        // Keep the write half open (a shutdown may end the request early for some servers).
        std::future::pending::<()>().await;
        Ok::<_, std::io::Error>(wr)
    });
    let out = read_answer(&mut rd, deadline).await;
    writer.abort();
    out
}

async fn write_body(wr: &mut (impl AsyncWriteExt + Unpin), body: &Body) -> std::io::Result<()> {
    match body {
        Body::Empty => Ok(()),
        Body::Sized(b) => wr.write_all(b).await,
        Body::Big {
            prefix,
            pad,
            suffix,
            chunked,
            endless,
        } => {
            const PIECE: usize = 64 * 1024;
            let piece = vec![b'a'; PIECE];
            let chunk = |data: &[u8]| {
                let mut c = format!("{:x}\r\n", data.len()).into_bytes();
                c.extend_from_slice(data);
                c.extend_from_slice(b"\r\n");
                c
            };
            let put = |data: &[u8]| if *chunked { chunk(data) } else { data.to_vec() };
            wr.write_all(&put(prefix.as_bytes())).await?;
            let mut left = if *endless { ENDLESS_CAP } else { *pad };
            while left > 0 {
                let n = left.min(PIECE);
                wr.write_all(&put(&piece[..n])).await?;
                left -= n;
            }
            if *endless {
                // Never the end: the connection stays open, the body unfinished.
                std::future::pending::<()>().await;
            }
            wr.write_all(&put(suffix.as_bytes())).await?;
            if *chunked {
                wr.write_all(b"0\r\n\r\n").await?;
            }
            Ok(())
        }
    }
}

/// Reads one answer until it is complete, the connection ends, or `deadline`.
async fn read_answer(rd: &mut (impl AsyncReadExt + Unpin), deadline: Instant) -> Outcome {
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut head: Option<(Reply, usize)> = None;
    loop {
        let read = tokio::time::timeout_at(deadline, rd.read(&mut buf)).await;
        let n = match read {
            Err(_) => 0,
            Ok(Ok(n)) => n,
            Ok(Err(e)) if head.is_none() => return Outcome::Closed(e.to_string()),
            Ok(Err(_)) => 0,
        };
        let timed_out = read.is_err();
        if n > 0 && raw.len() < KEEP + 64 * 1024 {
            raw.extend_from_slice(&buf[..n]);
        }
        if head.is_none() {
            head = parse_head(&raw);
        }
        let Some((reply, at)) = &head else {
            if n == 0 {
                return if timed_out {
                    Outcome::Silent
                } else {
                    Outcome::Closed("end of stream".into())
                };
            }
            continue;
        };
        let (body, complete) = decode_body(reply, &raw[*at..]);
        let mut r = reply.clone();
        r.body = String::from_utf8_lossy(&body[..body.len().min(KEEP)]).into_owned();
        let sse_done = r
            .header("content-type")
            .is_some_and(|t| t.contains("text/event-stream"))
            && r.messages()
                .iter()
                .any(|m| m.get("result").is_some() || m.get("error").is_some());
        if complete || sse_done || n == 0 || raw.len() >= KEEP + 64 * 1024 {
            return Outcome::Answered(r);
        }
    }
}

/// The status and headers, and where the body starts, once the head is all there.
fn parse_head(raw: &[u8]) -> Option<(Reply, usize)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let text = String::from_utf8_lossy(&raw[..end]);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()?
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Some((
        Reply {
            status,
            headers,
            body: String::new(),
        },
        end + 4,
    ))
}

/// The body so far, and whether it is complete.
fn decode_body(reply: &Reply, raw: &[u8]) -> (Vec<u8>, bool) {
    if reply
        .header("transfer-encoding")
        .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
    {
        let mut out = Vec::new();
        let mut at = 0;
        loop {
            let Some(eol) = raw[at..].windows(2).position(|w| w == b"\r\n") else {
                return (out, false);
            };
            let size = String::from_utf8_lossy(&raw[at..at + eol]);
            let size = size.split(';').next().unwrap_or("").trim();
            let Ok(size) = usize::from_str_radix(size, 16) else {
                return (out, true);
            };
            if size == 0 {
                return (out, true);
            }
            let start = at + eol + 2;
            if raw.len() < start + size {
                out.extend_from_slice(&raw[start..]);
                return (out, false);
            }
            out.extend_from_slice(&raw[start..start + size]);
            at = start + size + 2;
            if at > raw.len() {
                return (out, false);
            }
        }
    }
    match reply
        .header("content-length")
        .and_then(|l| l.parse::<usize>().ok())
    {
        Some(len) => (raw[..raw.len().min(len)].to_vec(), raw.len() >= len),
        None if reply.status == 204 || reply.status == 304 || reply.status < 200 => {
            (Vec::new(), true)
        }
        None => (raw.to_vec(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_headers_go_out_as_written() {
        let ep = Endpoint::parse("http://127.0.0.1:9/mcp").unwrap_or_else(|e| panic!("{e}"));
        let r = Req::post(&ep, "{}").add("Host", "evil.example");
        let head = r.head();
        assert_eq!(head.matches("Host: ").count(), 2, "{head}");
        assert!(head.ends_with("Content-Length: 2\r\n\r\n"), "{head}");
        assert!(r.shown().contains("Host: evil.example⏎"));
    }

    #[test]
    fn chunked_and_sse_bodies_are_read() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n\
            1d\r\ndata: {\"id\":1,\"result\":{}}\n\n\r\n";
        let (reply, at) = parse_head(raw).unwrap_or_default();
        let (body, done) = decode_body(&reply, &raw[at..]);
        assert!(!done);
        let mut r = reply;
        r.body = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(
            r.answer(&serde_json::json!(1)),
            Some(serde_json::json!({"id":1,"result":{}}))
        );
    }

    #[test]
    fn only_plain_http_is_probed_by_hand() {
        assert!(Endpoint::parse("https://example.com/mcp").is_err());
        let ep = Endpoint::parse("http://[::1]/mcp").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(ep.addr(), "[::1]:80");
    }
}
