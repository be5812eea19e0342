//! The two recording bridges between stdio and Streamable HTTP.
//!
//! * [`serve_stdio_over_http`] (`--listen ADDR --stdio CMD`): our own Streamable HTTP endpoint
//!   (`switchboard-http`: sessions, SSE routing, resumption, Host/Origin checks) fronting a raw
//!   frame relay. Each HTTP session spawns its own child server; POSTed frames go to its stdin
//!   unchanged, and each line of its stdout goes back unchanged, routed like any server's frame:
//!   a response to the POST stream of its request; a request or notification to the POST stream
//!   of the request it belongs to (the request whose `progressToken` a progress notification
//!   names, else the one request in flight when there is exactly one), else to the GET stream.
//!   The child ends with its session (DELETE, idle reaper); the session ends with the child.
//! * [`http_to_stdio`] (`--url URL` alone): a stdio server to whoever launched us, speaking to
//!   the remote endpoint with our HTTP client transport (`switchboard-http-client`: a POST per
//!   frame, JSON or SSE answers, session id, `MCP-Protocol-Version` after initialize, the GET
//!   stream, resumption, the legacy HTTP+SSE fallback). Every frame the server sends is written
//!   to stdout, one per line.
//!
//! Both record with transport `http` and the HTTP session id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use switchboard::http::{HttpConfig, HttpSessionTransport, HttpSink, StreamableHttpService};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::jsonrpc::{FrameSink, FrameSource, NullService, Peer, SessionConfig, Transport};
use switchboard::types::{Message, MessageKind, RequestId};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use super::{Direction, Recording, decode_single, one_line, outbound, split_frames};

/// The most client requests tracked per session for routing (the oldest is forgotten first).
const MAX_TRACKED: usize = 4096;

/// How long a child may take to exit after its session ended and its stdin closed.
const CHILD_GRACE: Duration = Duration::from_secs(3);

/// The HTTP config for `addr`: the endpoint at `/mcp`; Host/Origin checks as for
/// `switchboard serve --http` (loopback, plus the address itself when it is not loopback).
pub fn http_config(addr: std::net::SocketAddr) -> HttpConfig {
    let mut config = HttpConfig::default();
    let ip = addr.ip();
    if !ip.is_loopback() && !ip.is_unspecified() {
        let host = match ip {
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
            std::net::IpAddr::V4(v4) => v4.to_string(),
        };
        config = config
            .allow_host(host.clone())
            .allow_origin(format!("http://{host}:*"));
    }
    config
}

/// The Streamable HTTP endpoint fronting one `CMD` child per session.
pub fn stdio_service(command: String, rec: Recording, config: HttpConfig) -> StreamableHttpService {
    StreamableHttpService::new(move |t| start_session(t, &command, &rec), config)
}

/// Serves `CMD` over Streamable HTTP on `listener` (endpoint `/mcp`) until the process ends.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve_stdio_over_http(
    listener: TcpListener,
    command: String,
    rec: Recording,
) -> anyhow::Result<()> {
    let local = listener.local_addr()?;
    let service = stdio_service(command, rec, http_config(local));
    // The one line a user needs, visible under the default `warn` filter.
    tracing::warn!("listening on http://{local}/mcp");
    switchboard::http::serve(listener, service).await?;
    Ok(())
}

/// The session factory: spawns the child and the relay. The HTTP layer wants an engine `Peer`
/// for the session's lifetime; a relay has no engine, so an idle one stands in for it (on an
/// in-memory transport nobody writes to), closed when the relay ends.
fn start_session(t: HttpSessionTransport, command: &str, rec: &Recording) -> Result<Peer, String> {
    let session: Arc<str> = Arc::from(t.session_id());
    let mut child = super::spawn_server(command).map_err(|e| format!("{e:#}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server's stdin or stdout is missing".into());
    };
    let (mine, theirs) = switchboard::jsonrpc::memory::pair();
    let peer = switchboard::jsonrpc::spawn(mine, Arc::new(NullService), SessionConfig::default());
    let relay = SessionRelay {
        session,
        rec: rec.clone(),
        routes: Arc::default(),
    };
    let stand_in = peer.clone();
    tokio::spawn(async move {
        relay.run(t, child, stdin, stdout).await;
        stand_in.close();
        drop(theirs);
    });
    Ok(peer)
}

/// Where a child's requests and notifications go: the client requests in flight, and the
/// progress tokens they carry.
#[derive(Debug, Default)]
struct Routes {
    in_flight: Vec<RequestId>,
    tokens: HashMap<String, RequestId>,
}

#[derive(Deserialize)]
struct Params {
    #[serde(rename = "_meta")]
    meta: Option<Meta>,
    #[serde(rename = "progressToken")]
    progress_token: Option<serde_json::Value>,
    #[serde(rename = "requestId")]
    request_id: Option<RequestId>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "progressToken")]
    progress_token: Option<serde_json::Value>,
}

fn params_of(raw: Option<&serde_json::value::RawValue>) -> Option<Params> {
    raw.and_then(|p| serde_json::from_str::<Params>(p.get()).ok())
}

impl Routes {
    /// Notes the requests of a frame the client sent.
    fn client_sent(&mut self, text: &str) {
        for frame in split_frames(text) {
            if let Some(Message::Request(r)) = decode_single(frame) {
                let token = params_of(r.params.as_deref())
                    .and_then(|p| p.meta)
                    .and_then(|m| m.progress_token);
                if let Some(token) = token {
                    self.tokens.insert(token.to_string(), r.id.clone());
                }
                if self.in_flight.len() >= MAX_TRACKED {
                    let oldest = self.in_flight.remove(0);
                    self.tokens.retain(|_, r| *r != oldest);
                }
                self.in_flight.push(r.id);
            } else if let Some(Message::Notification(n)) = decode_single(frame) {
                // A cancelled request may never be answered: stop routing to it.
                if n.method == "notifications/cancelled" {
                    if let Some(id) = params_of(n.params.as_deref()).and_then(|p| p.request_id) {
                        self.in_flight.retain(|r| *r != id);
                        self.tokens.retain(|_, r| *r != id);
                    }
                }
            }
        }
    }

    /// The client request a frame of the child's belongs to; forgets answered requests.
    fn related(
        &mut self,
        text: &str,
        kind: MessageKind,
        id: Option<&RequestId>,
    ) -> Option<RequestId> {
        match kind {
            MessageKind::Result | MessageKind::Error => {
                if let Some(id) = id {
                    self.in_flight.retain(|r| r != id);
                    self.tokens.retain(|_, r| r != id);
                }
                None
            }
            MessageKind::Request | MessageKind::Notification => {
                if let Some(Message::Notification(n)) = decode_single(text) {
                    if n.method == "notifications/progress" {
                        let by_token = params_of(n.params.as_deref())
                            .and_then(|p| p.progress_token)
                            .and_then(|t| self.tokens.get(&t.to_string()).cloned());
                        if by_token.is_some() {
                            return by_token;
                        }
                    }
                }
                match self.in_flight.as_slice() {
                    [only] => Some(only.clone()),
                    _ => None,
                }
            }
        }
    }
}

/// One HTTP session's relay to its child.
struct SessionRelay {
    session: Arc<str>,
    rec: Recording,
    routes: Arc<Mutex<Routes>>,
}

impl SessionRelay {
    async fn run(
        self,
        t: HttpSessionTransport,
        mut child: tokio::process::Child,
        mut stdin: tokio::process::ChildStdin,
        stdout: tokio::process::ChildStdout,
    ) {
        let (sink, mut source) = t.split();
        let (session, rec, routes) = (self.session.clone(), self.rec.clone(), self.routes.clone());
        // HTTP → child: ends when the session ends (DELETE, reaper) or the child's stdin breaks.
        let mut up = tokio::spawn(async move {
            while let Some(Ok(text)) = source.recv().await {
                rec.http_frames(Direction::C2s, Some(&session), &text).await;
                if let Ok(mut r) = routes.lock() {
                    r.client_sent(&text);
                }
                let line = one_line(&text);
                let wrote = async {
                    stdin.write_all(line.as_bytes()).await?;
                    stdin.write_all(b"\n").await?;
                    stdin.flush().await
                };
                if wrote.await.is_err() {
                    break;
                }
            }
            // Dropping stdin here tells the child the session is over.
        });
        let down = self.child_to_http(stdout, sink);
        tokio::pin!(down);
        let mut sink = tokio::select! {
            sink = &mut down => {
                up.abort();
                sink
            }
            _ = &mut up => match tokio::time::timeout(CHILD_GRACE, &mut down).await {
                Ok(sink) => sink,
                Err(_) => {
                    let _ = child.start_kill();
                    down.await
                }
            },
        };
        // Ends the HTTP session (idempotent when it has already ended).
        let _ = sink.close().await;
        if tokio::time::timeout(CHILD_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.start_kill();
            let _ = child.wait().await;
        }
    }

    /// Child → HTTP: every line of the child's stdout, routed; ends with the child's stdout.
    async fn child_to_http(&self, stdout: impl AsyncRead + Unpin, mut sink: HttpSink) -> HttpSink {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::with_capacity(4096);
        while let Some(text) = next_text_line(&mut reader, &mut line).await {
            self.rec
                .http_frames(Direction::S2c, Some(&self.session), &text)
                .await;
            let mut frame = outbound(text);
            frame.related = self
                .routes
                .lock()
                .ok()
                .and_then(|mut r| r.related(&frame.text, frame.kind, frame.id.as_ref()));
            if sink.send(frame).await.is_err() {
                break;
            }
        }
        sink
    }
}

/// The next non-blank line of `reader` as frame text, its line ending removed (invalid UTF-8
/// replaced); `None` at the end of input or on a read error. `line` is the reused buffer.
async fn next_text_line<R: AsyncBufRead + Unpin>(
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

/// `--url URL` alone: a stdio server to whoever launched us, relaying to the remote endpoint.
/// Returns 0 when stdin ends, 1 when the HTTP side fails first (the reason on stderr).
///
/// # Errors
/// The URL is not usable.
pub async fn http_to_stdio(url: &str, rec: Recording) -> anyhow::Result<i32> {
    let transport = HttpClientTransport::connect(url, HttpClientConfig::default())?;
    let handle = transport.handle();
    let (mut sink, mut source) = transport.split();
    let down_handle = handle.clone();
    let down_rec = rec.clone();
    let mut down = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(item) = source.recv().await {
            match item {
                Ok(text) => {
                    let session = down_handle.session_id();
                    down_rec
                        .http_frames(Direction::S2c, session.as_deref(), &text)
                        .await;
                    let line = one_line(&text);
                    let wrote = async {
                        out.write_all(line.as_bytes()).await?;
                        out.write_all(b"\n").await?;
                        out.flush().await
                    };
                    if wrote.await.is_err() {
                        return 0;
                    }
                }
                Err(e) => {
                    eprintln!("switchboard record: {e}");
                    return 1;
                }
            }
        }
        0
    });
    let up = async {
        let mut reader = BufReader::new(tokio::io::stdin());
        let mut line = Vec::with_capacity(4096);
        while let Some(text) = next_text_line(&mut reader, &mut line).await {
            let session = handle.session_id();
            rec.http_frames(Direction::C2s, session.as_deref(), &text)
                .await;
            if sink.send(outbound(text)).await.is_err() {
                // The reason reaches stderr through the receiving side.
                break;
            }
        }
    };
    let finished = tokio::select! {
        () = up => None,
        code = &mut down => Some(code.unwrap_or(1)),
    };
    match finished {
        Some(code) => Ok(code),
        None => {
            // stdin ended: end the session (DELETE), let the last answers drain.
            let _ = sink.close().await;
            let code = tokio::time::timeout(CHILD_GRACE, &mut down).await;
            Ok(code.ok().and_then(Result::ok).unwrap_or(0))
        }
    }
}
