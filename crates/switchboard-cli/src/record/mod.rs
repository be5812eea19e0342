//! `switchboard record -o FILE`: a transparent recording proxy between any MCP client and any
//! MCP server, writing one JSONL object per frame: `{ts_ms, direction, transport, session, frame}`.
//!
//! | flags | mode | module |
//! |---|---|---|
//! | `--stdio CMD` | stdio server to whoever launched us, relaying to the spawned server | [`stdio`] |
//! | `--listen ADDR --url UPSTREAM` | Streamable HTTP reverse proxy (POST, GET, DELETE, SSE) | [`http_proxy`] |
//! | `--listen ADDR --stdio CMD` | bridge: a stdio server exposed over Streamable HTTP | [`bridge`] |
//! | `--url UPSTREAM` | bridge: a remote Streamable HTTP server exposed to a stdio host | [`bridge`] |
//!
//! Frames are never altered: the recording holds each frame's text exactly as it travelled
//! (a batch is recorded entry by entry, each entry's exact text). The one exception is forced by
//! stdio framing: a frame that reaches stdio from HTTP with raw line breaks in it (JSON
//! whitespace only; a JSON string cannot hold one) has them turned into spaces on the stdio side.
//!
//! `session` is the HTTP session id the frame travelled under (`MCP-Session-Id`), `null` over
//! stdio and for the `initialize` request of the HTTP proxy, which travels before the server
//! issues one.

pub mod bridge;
pub mod http_proxy;
pub mod stdio;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use serde_json::json;
use serde_json::value::RawValue;
use switchboard::jsonrpc::OutboundFrame;
use switchboard::types::{Frame, Message, MessageKind};
use tokio::io::AsyncWriteExt;
use tokio::sync::Mutex;

pub use stdio::stdio;

/// Which way a frame went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    C2s,
    /// Server to client.
    S2c,
}

impl Direction {
    /// `c2s` or `s2c`.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::C2s => "c2s",
            Direction::S2c => "s2c",
        }
    }
}

/// Where recorded frames go. Cheap to clone; every clone appends to the same file.
#[derive(Clone)]
pub struct Recording(Arc<Mutex<tokio::io::BufWriter<tokio::fs::File>>>);

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recording(..)")
    }
}

/// Milliseconds since the Unix epoch, with sub-millisecond precision.
pub fn now_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

impl Recording {
    /// Creates (truncates) the recording file.
    ///
    /// # Errors
    /// The file cannot be created.
    pub async fn create(path: &str) -> anyhow::Result<Recording> {
        let file = tokio::fs::File::create(path)
            .await
            .with_context(|| format!("creating {path}"))?;
        Ok(Recording(Arc::new(Mutex::new(tokio::io::BufWriter::new(
            file,
        )))))
    }

    /// Appends one frame stamped now (flushed at once, so a crash loses nothing already relayed).
    ///
    /// # Errors
    /// The file cannot be written.
    pub async fn frame(
        &self,
        direction: &str,
        transport: &str,
        session: Option<&str>,
        text: &str,
    ) -> anyhow::Result<()> {
        self.frame_at(now_ms(), direction, transport, session, text)
            .await
    }

    /// Appends one frame with the given timestamp.
    ///
    /// # Errors
    /// The file cannot be written.
    pub async fn frame_at(
        &self,
        ts_ms: f64,
        direction: &str,
        transport: &str,
        session: Option<&str>,
        text: &str,
    ) -> anyhow::Result<()> {
        let mut line = json!({"ts_ms": ts_ms, "direction": direction, "transport": transport, "session": session, "frame": text}).to_string();
        line.push('\n');
        let mut w = self.0.lock().await;
        w.write_all(line.as_bytes()).await?;
        w.flush().await?;
        Ok(())
    }

    /// Appends every JSON-RPC frame of an HTTP body or SSE event (a batch entry by entry, each
    /// with its exact text; anything that is not a JSON array as it is). A write failure is
    /// logged, never passed to the relay: recording must not break the session.
    pub async fn http_frames(&self, direction: Direction, session: Option<&str>, text: &str) {
        let ts = now_ms();
        for frame in split_frames(text) {
            if let Err(e) = self
                .frame_at(ts, direction.as_str(), "http", session, frame)
                .await
            {
                tracing::error!(error = %e, "recording failed");
            }
        }
    }
}

/// The frames of a body: the entries of a JSON array (exact text), else the whole text; empty
/// bodies hold none.
pub fn split_frames(text: &str) -> Vec<&str> {
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

/// The text as one stdio line: raw CR / LF (JSON whitespace only) become spaces. Borrowed when
/// there are none, which is the normal case.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains(['\n', '\r']) {
        std::borrow::Cow::Owned(text.replace(['\n', '\r'], " "))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// A frame read from the wire, classified by its envelope for a transport that routes by kind
/// and id (never by params). Undecodable text goes out as a "request" with no id, so that the
/// peer answers it (or not) itself.
pub fn outbound(text: String) -> OutboundFrame {
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

/// Decodes one single message (no batch), if it is one.
pub(crate) fn decode_single(text: &str) -> Option<Message> {
    match Frame::decode(text) {
        Ok(Frame::Single(Ok(m))) => Some(m),
        _ => None,
    }
}

/// What `switchboard record` was asked to do.
#[derive(Debug, Clone)]
pub struct RecordArgs {
    /// The recording file.
    pub output: String,
    /// The server command to spawn (stdio upstream).
    pub stdio: Option<String>,
    /// The upstream MCP endpoint (HTTP upstream).
    pub url: Option<String>,
    /// Where to listen for HTTP clients.
    pub listen: Option<std::net::SocketAddr>,
}

/// Runs the mode the flags select until it ends; returns the exit code.
///
/// # Errors
/// Usage errors (no upstream, or both), a server that cannot start, a listener that cannot bind,
/// a recording that cannot be written.
pub async fn run(args: RecordArgs) -> anyhow::Result<i32> {
    match (args.listen, args.stdio, args.url) {
        (None, Some(cmd), None) => stdio(&args.output, &cmd).await,
        (Some(addr), None, Some(url)) => {
            let rec = Recording::create(&args.output).await?;
            let listener = bind(addr).await?;
            http_proxy::serve(listener, &url, rec).await?;
            Ok(0)
        }
        (Some(addr), Some(cmd), None) => {
            let rec = Recording::create(&args.output).await?;
            let listener = bind(addr).await?;
            bridge::serve_stdio_over_http(listener, cmd, rec).await?;
            Ok(0)
        }
        (None, None, Some(url)) => {
            let rec = Recording::create(&args.output).await?;
            bridge::http_to_stdio(&url, rec).await
        }
        _ => anyhow::bail!("give exactly one upstream: --stdio CMD or --url URL"),
    }
}

/// Spawns `sh -c "exec CMD"` with piped stdin and stdout (stderr inherited), killed on drop.
pub(crate) fn spawn_server(command: &str) -> anyhow::Result<tokio::process::Child> {
    tokio::process::Command::new("sh")
        .args(["-c", &format!("exec {command}")])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start `{command}`"))
}

async fn bind(addr: std::net::SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr}"))
}

/// Parses `--listen`: `IP:PORT`, or a bare `PORT` (or `:PORT`) on 127.0.0.1.
///
/// # Errors
/// Neither form.
pub fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    let port = s.strip_prefix(':').unwrap_or(s);
    if let Ok(port) = port.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse()
        .map_err(|_| format!("{s:?} is neither IP:PORT nor PORT"))
}
