//! A hand-written HTTP/1.1 server on 127.0.0.1 for the misbehaviour a real server never shows:
//! answering nothing, stalling mid-body, dropping a stream before its first byte, redirecting
//! anywhere. Each connection carries one request and is closed after the reply (unless the reply
//! hangs); every request is recorded with its headers.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One request as the server read it.
#[derive(Debug, Clone)]
pub struct RawRequest {
    pub method: String,
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC id of the request in the body, if any.
    pub fn rpc_id(&self) -> Option<i64> {
        let v: serde_json::Value = serde_json::from_str(&self.body).ok()?;
        v.get("id")?.as_i64()
    }
}

/// What to answer: bytes written after delays, then the connection closes or hangs open.
#[derive(Debug, Clone, Default)]
pub struct Reply {
    steps: Vec<(Duration, Vec<u8>)>,
    hang: bool,
}

impl Reply {
    /// Writes `bytes` and closes.
    pub fn close(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply {
            steps: vec![(Duration::ZERO, bytes.into())],
            hang: false,
        }
    }

    /// An HTTP/1.1 answer of `status` (`"200 OK"`) with a JSON body `text` and the header lines
    /// `extra` (each ending in `\r\n`), then closes.
    pub fn json(status: &str, extra: &str, text: &str) -> Reply {
        Reply::close(format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\
             connection: close\r\n\r\n{text}",
            text.len()
        ))
    }

    /// Writes `bytes` and keeps the connection open, writing nothing more.
    pub fn hang(bytes: impl Into<Vec<u8>>) -> Reply {
        Reply {
            steps: vec![(Duration::ZERO, bytes.into())],
            hang: true,
        }
    }

    /// Accepts the request and never answers.
    pub fn never() -> Reply {
        Reply {
            steps: Vec::new(),
            hang: true,
        }
    }

    /// Then, after `delay`, writes `bytes`.
    pub fn then(mut self, delay: Duration, bytes: impl Into<Vec<u8>>) -> Reply {
        self.steps.push((delay, bytes.into()));
        self
    }
}

/// A whole JSON answer.
pub fn json(body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The head of an SSE answer (the body runs to the end of the connection).
pub fn sse_head() -> Vec<u8> {
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
      connection: close\r\n\r\n"
        .to_vec()
}

/// A status with an empty body.
pub fn status(code: u16, reason: &str) -> Vec<u8> {
    format!("HTTP/1.1 {code} {reason}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .into_bytes()
}

/// A redirect to `location`.
pub fn redirect(code: u16, location: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {code} Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\n\
         connection: close\r\n\r\n"
    )
    .into_bytes()
}

/// A JSON-RPC result for `id`.
pub fn result(id: i64, value: serde_json::Value) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "result": value}).to_string()
}

type Handler = dyn Fn(&RawRequest) -> Reply + Send + Sync;

/// A running hand-written server; stops accepting when dropped.
pub struct RawServer {
    pub addr: SocketAddr,
    pub url: String,
    pub seen: Arc<Mutex<Vec<RawRequest>>>,
    accept: JoinHandle<()>,
}

impl Drop for RawServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl RawServer {
    pub fn seen(&self) -> Vec<RawRequest> {
        self.seen.lock().unwrap().clone()
    }

    pub fn count(&self, method: &str) -> usize {
        self.seen().iter().filter(|r| r.method == method).count()
    }
}

/// Serves `handler` on a new port.
pub async fn raw(handler: impl Fn(&RawRequest) -> Reply + Send + Sync + 'static) -> RawServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    serve(listener, handler)
}

/// Serves `handler` on `listener`.
pub fn serve(
    listener: TcpListener,
    handler: impl Fn(&RawRequest) -> Reply + Send + Sync + 'static,
) -> RawServer {
    let addr = listener.local_addr().unwrap();
    let seen: Arc<Mutex<Vec<RawRequest>>> = Arc::default();
    let handler: Arc<Handler> = Arc::new(handler);
    let record = seen.clone();
    let accept = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            let record = record.clone();
            tokio::spawn(connection(stream, handler, record));
        }
    });
    RawServer {
        addr,
        url: format!("http://{addr}/mcp"),
        seen,
        accept,
    }
}

async fn connection(
    mut stream: TcpStream,
    handler: Arc<Handler>,
    record: Arc<Mutex<Vec<RawRequest>>>,
) {
    let Some(req) = read_request(&mut stream).await else {
        return;
    };
    record.lock().unwrap().push(req.clone());
    let reply = handler(&req);
    for (delay, bytes) in reply.steps {
        // Not a wait: the scripted reply's own pacing (the delay is the scenario).
        tokio::time::sleep(delay).await;
        if stream.write_all(&bytes).await.is_err() {
            return;
        }
        let _ = stream.flush().await;
    }
    if reply.hang {
        // Keep the connection open until the peer closes it (or the test ends).
        let mut sink = [0_u8; 1024];
        while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<RawRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(RawRequest {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}
