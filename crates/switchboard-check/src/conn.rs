//! A raw connection to a server under test: frames in and out as text, with no engine between,
//! so that malformed frames reach the server exactly as written. Over HTTP each frame is one POST
//! through the client transport's halves (every message of every answer comes back in order).

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_http_client::{
    HttpClientConfig, HttpClientHandle, HttpClientSink, HttpClientSource, HttpClientTransport,
};
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport, TransportError};
use switchboard_transport::{ChildCommand, ChildHandle, ChildSink, ChildSource, ChildTransport};
use switchboard_types::{MessageKind, http_headers, methods, modern};

use crate::CheckError;
use crate::target::{Link as AnyLink, Target};

/// The transport halves of one connection.
enum Link {
    Child {
        sink: ChildSink,
        source: ChildSource,
        handle: ChildHandle,
    },
    Http {
        sink: HttpClientSink,
        source: HttpClientSource,
        handle: HttpClientHandle,
    },
    InProcess {
        link: Box<dyn AnyLink>,
        /// The transport has ended (end of stream, or a fatal error).
        ended: bool,
    },
}

/// One raw connection.
pub(crate) struct Conn {
    link: Link,
    backlog: Vec<Value>,
    timeout: Duration,
    syncs: u64,
    /// Whether a frame has come yet: the first wait also covers the server's start-up.
    heard: bool,
}

/// Added to the first wait of a connection: a spawned server may take seconds to start (Node on
/// a busy machine), which must not read as "no answer" to the first check.
const STARTUP_GRACE: Duration = Duration::from_secs(10);

/// Whether a response id answers `id`, loosely: the same value, or the same digits or text once
/// JSON quoting is ignored (so that a server that changes the id's type is still recognised and
/// the type check can fail precisely).
pub(crate) fn same_id(sent: &Value, got: Option<&Value>) -> bool {
    let Some(got) = got else { return false };
    sent == got
        || (!got.is_null()
            && sent.to_string().trim_matches('"') == got.to_string().trim_matches('"'))
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.link {
            Link::Child { handle, .. } => {
                f.debug_struct("Conn").field("pid", &handle.pid()).finish()
            }
            Link::Http { handle, .. } => {
                f.debug_struct("Conn").field("url", &handle.url()).finish()
            }
            Link::InProcess { ended, .. } => f.debug_struct("Conn").field("ended", ended).finish(),
        }
    }
}

/// The per-request `_meta` of a revision 2026-07-28 request from this checker: the revision,
/// no client capabilities, and the checker as client.
pub(crate) fn envelope(version: &str) -> Value {
    json!({
        modern::PROTOCOL_VERSION_KEY: version,
        modern::CLIENT_CAPABILITIES_KEY: {},
        modern::CLIENT_INFO_KEY: {"name": "switchboard-check", "version": env!("CARGO_PKG_VERSION")},
    })
}

/// What happened when waiting for a frame.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Got {
    /// A frame (parsed as JSON, or a string value holding the raw text when it was not JSON).
    Frame(Value),
    /// Nothing within the timeout.
    Timeout,
    /// The server closed the connection (or exited).
    Closed(String),
}

impl Conn {
    /// Opens a connection to `target`.
    ///
    /// # Errors
    /// The server cannot be started or reached.
    pub(crate) fn open(target: &Target, timeout: Duration) -> Result<Conn, CheckError> {
        match target {
            Target::Stdio(cmd) => {
                let command = ChildCommand::new("sh")
                    .args(["-c", &format!("exec {cmd}")])
                    .on_stderr(|_| {});
                let t = ChildTransport::spawn(command).map_err(|e| CheckError::Spawn {
                    command: cmd.clone(),
                    reason: e.to_string(),
                })?;
                let handle = t.handle().clone();
                let (sink, source) = t.split();
                Ok(Conn::with(
                    Link::Child {
                        sink,
                        source,
                        handle,
                    },
                    timeout,
                ))
            }
            Target::Http(url) => {
                let t = HttpClientTransport::connect(url, HttpClientConfig::default()).map_err(
                    |e| CheckError::Connect {
                        url: url.clone(),
                        reason: e.to_string(),
                    },
                )?;
                let handle = t.handle();
                let (sink, source) = t.split();
                Ok(Conn::with(
                    Link::Http {
                        sink,
                        source,
                        handle,
                    },
                    timeout,
                ))
            }
            Target::InProcess(connector) => {
                let link = connector
                    .connect()
                    .map_err(|reason| CheckError::InProcess { reason })?;
                let mut conn = Conn::with(Link::InProcess { link, ended: false }, timeout);
                // Nothing to start: no grace on the first wait.
                conn.heard = true;
                Ok(conn)
            }
        }
    }

    fn with(link: Link, timeout: Duration) -> Conn {
        Conn {
            link,
            backlog: Vec::new(),
            timeout,
            syncs: 0,
            heard: false,
        }
    }

    /// Sends raw text as one frame.
    ///
    /// # Errors
    /// The connection is closed.
    pub(crate) async fn send_text(&mut self, text: &str) -> Result<(), TransportError> {
        self.send_with_headers(text, Vec::new()).await
    }

    /// Sends raw text as one frame with header lines (sent by Streamable HTTP, where header
    /// lines make a revision 2026-07-28 POST; ignored elsewhere).
    ///
    /// # Errors
    /// The connection is closed.
    pub(crate) async fn send_with_headers(
        &mut self,
        text: &str,
        headers: Vec<(String, String)>,
    ) -> Result<(), TransportError> {
        let frame = OutboundFrame {
            text: text.to_owned(),
            kind: MessageKind::Request,
            id: None,
            related: None,
            headers,
            cancels: None,
        };
        match &mut self.link {
            Link::Child { sink, .. } => sink.send(frame).await,
            Link::Http { sink, .. } => sink.send(frame).await,
            Link::InProcess { link, .. } => link.send(frame).await,
        }
    }

    /// Sends a JSON value.
    ///
    /// # Errors
    /// The connection is closed.
    pub(crate) async fn send(&mut self, v: &Value) -> Result<(), TransportError> {
        self.send_text(&v.to_string()).await
    }

    /// The next frame.
    pub(crate) async fn recv(&mut self) -> Got {
        if !self.backlog.is_empty() {
            return Got::Frame(self.backlog.remove(0));
        }
        self.recv_raw().await
    }

    async fn recv_raw(&mut self) -> Got {
        let wait = if self.heard {
            self.timeout
        } else {
            self.timeout + STARTUP_GRACE
        };
        let next = async {
            match &mut self.link {
                Link::Child { source, .. } => source.recv().await,
                Link::Http { source, .. } => source.recv().await,
                Link::InProcess { link, .. } => link.recv().await,
            }
        };
        let next: Result<Option<Result<String, TransportError>>, _> =
            tokio::time::timeout(wait, next).await;
        if matches!(next, Ok(Some(_))) {
            self.heard = true;
        }
        if let Link::InProcess { ended, .. } = &mut self.link
            && (matches!(&next, Ok(None))
                || matches!(&next, Ok(Some(Err(e))) if !e.is_recoverable()))
        {
            *ended = true;
        }
        match next {
            Err(_) => Got::Timeout,
            Ok(None) => Got::Closed("end of stream".into()),
            Ok(Some(Err(e))) if !e.is_recoverable() => Got::Closed(e.to_string()),
            Ok(Some(Err(e))) => Got::Frame(Value::String(format!("<bad frame: {e}>"))),
            Ok(Some(Ok(text))) => {
                Got::Frame(serde_json::from_str(&text).unwrap_or(Value::String(text)))
            }
        }
    }

    /// The next response (a frame without `method`) with this id; requests and notifications
    /// from the server on the way are answered (ping) or set aside.
    pub(crate) async fn response(&mut self, id: &Value) -> Got {
        if let Some(i) = self
            .backlog
            .iter()
            .position(|f| same_id(id, f.get("id")) && f.get("method").is_none())
        {
            return Got::Frame(self.backlog.remove(i));
        }
        loop {
            match self.recv_raw().await {
                Got::Frame(f) if same_id(id, f.get("id")) && f.get("method").is_none() => {
                    return Got::Frame(f);
                }
                Got::Frame(f) => self.backlog.push(f),
                other => return other,
            }
        }
    }

    /// Sends a request and waits for its response.
    pub(crate) async fn request(&mut self, id: Value, method: &str, params: Option<Value>) -> Got {
        let mut msg = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        if let Err(e) = self.send(&msg).await {
            return Got::Closed(format!("send failed: {e}"));
        }
        self.response(&id).await
    }

    /// Sends a revision 2026-07-28 request as written (its `params` are not touched, so a
    /// malformed envelope goes out malformed) with the headers a 2026-07-28 client would send
    /// for it (`MCP-Protocol-Version` `version`, `Mcp-Method`, `Mcp-Name`), and waits for its
    /// response.
    pub(crate) async fn request_modern_raw(&mut self, msg: &Value, version: &str) -> Got {
        let id = msg.get("id").cloned().unwrap_or(Value::Null);
        if let Err(e) = self.send_modern_raw(msg, version).await {
            return Got::Closed(format!("send failed: {e}"));
        }
        self.response(&id).await
    }

    /// Sends a revision 2026-07-28 message as written, with the headers a 2026-07-28 client
    /// would send for it.
    ///
    /// # Errors
    /// The connection is closed.
    pub(crate) async fn send_modern_raw(
        &mut self,
        msg: &Value,
        version: &str,
    ) -> Result<(), TransportError> {
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let empty = serde_json::Map::new();
        let params = msg
            .get("params")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let headers = http_headers::request_headers(method, params, version, &[]);
        self.send_with_headers(&msg.to_string(), headers).await
    }

    /// Sends a revision 2026-07-28 request: `params` (an object) gets the per-request `_meta`
    /// envelope (`version`, empty client capabilities, this checker as client) unless it has
    /// `_meta` already.
    pub(crate) async fn request_modern(
        &mut self,
        id: Value,
        method: &str,
        params: Value,
        version: &str,
    ) -> Got {
        let mut params = match params {
            Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        params.entry("_meta").or_insert_with(|| envelope(version));
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.request_modern_raw(&msg, version).await
    }

    /// The frames set aside so far (server requests and notifications that came while waiting
    /// for responses), emptying the backlog.
    pub(crate) fn take_backlog(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.backlog)
    }

    /// A ping round trip that discards every frame before its answer: the next check starts
    /// from a clean stream. Returns false when the ping got no answer.
    pub(crate) async fn sync(&mut self) -> bool {
        self.syncs += 1;
        let id = json!(format!("sync-{}", self.syncs));
        let ok = matches!(self.request(id, methods::PING, None).await, Got::Frame(_));
        self.backlog.clear();
        ok
    }

    /// Sends a notification.
    ///
    /// # Errors
    /// The connection is closed.
    pub(crate) async fn notify(&mut self, method: &str) -> Result<(), TransportError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method}))
            .await
    }

    /// Initializes offering `version`; returns the result (or what came instead).
    pub(crate) async fn initialize(&mut self, version: &str) -> Got {
        let params = json!({"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "switchboard-check", "version": env!("CARGO_PKG_VERSION")}});
        self.request(json!("init"), methods::INITIALIZE, Some(params))
            .await
    }

    /// The full handshake; `Some(result)` when it succeeded.
    pub(crate) async fn handshake(&mut self) -> Option<Value> {
        let Got::Frame(r) = self.initialize("2025-11-25").await else {
            return None;
        };
        let result = r.get("result").cloned()?;
        self.notify(methods::NOTIFICATIONS_INITIALIZED).await.ok()?;
        Some(result)
    }

    /// Whether the server issued a session (always true over stdio and in process, where the
    /// connection is the session; over HTTP, whether an `MCP-Session-Id` came with the initialize
    /// answer).
    pub(crate) fn has_session(&self) -> bool {
        match &self.link {
            Link::Child { .. } | Link::InProcess { .. } => true,
            Link::Http { handle, .. } => handle.session_id().is_some(),
        }
    }

    /// Whether the server process is still running (over HTTP: the connection has not failed;
    /// in process: the transport has not ended).
    pub(crate) fn alive(&self) -> bool {
        match &self.link {
            Link::Child { handle, .. } => handle.exit_status().is_none(),
            Link::Http { handle, .. } => handle.failure().is_none(),
            Link::InProcess { ended, .. } => !ended,
        }
    }

    /// Ends the connection and the server process (over HTTP: ends the session with DELETE; in
    /// process: closes the transport, which ends the session).
    pub(crate) async fn close(self) {
        match self.link {
            Link::Child { handle, .. } => {
                let _ = handle.shutdown(Duration::from_secs(2)).await;
            }
            Link::Http { mut sink, .. } => {
                let _ = sink.close().await;
            }
            Link::InProcess { mut link, .. } => {
                let _ = link.close().await;
            }
        }
    }
}
