//! Harness for the end-to-end tests.
//!
//! | item | role |
//! |---|---|
//! | [`RawPeer`] | plays a peer with hand-written JSON text; checks every frame *we* emit against the schema |
//! | [`Recorder`] | a frame hook that keeps every frame, for schema validation of a whole session |
//! | [`validate_session`] | validates a recorded session against the negotiated revision's schema |
//! | [`text`] | the text blocks of a tool's result, joined |

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use switchboard::jsonrpc::memory::MemoryTransport;
use switchboard::jsonrpc::{Flow, FrameHook};
use switchboard_test_support::Schemas;

/// How long a test waits for a frame before failing.
pub const WAIT: Duration = Duration::from_secs(5);

/// Validates frames emitted by our implementation, knowing which method each response answers.
#[derive(Debug, Default)]
pub struct FrameChecker {
    /// Methods of requests seen, by (direction of the request, id text).
    methods: HashMap<(bool, String), String>,
    /// Frames checked so far.
    pub checked: usize,
}

impl FrameChecker {
    /// Notes a frame travelling in `outbound_from_us` direction; validates it when `ours`.
    ///
    /// # Panics
    /// When an emitted frame violates the schema of `version`.
    pub fn see(&mut self, version: &str, text: &str, request_from_us: bool, ours: bool) {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            assert!(!ours, "we emitted invalid JSON: {text}");
            return;
        };
        let items: Vec<Value> = match v {
            Value::Array(a) => a,
            other => vec![other],
        };
        for item in items {
            let id = item.get("id").map(|i| i.to_string());
            if let (Some(m), Some(id)) = (item.get("method").and_then(Value::as_str), &id) {
                self.methods
                    .insert((request_from_us, id.clone()), m.to_owned());
            }
            if !ours {
                continue;
            }
            let answering = if item.get("method").is_none() {
                id.as_ref()
                    .and_then(|id| self.methods.get(&(!request_from_us, id.clone())))
                    .cloned()
            } else {
                None
            };
            // An error whose request id was unreadable carries no id: only 2025-11-25 allows that
            // (SPEC-NOTES §2.1), so such frames are checked against 2025-11-25.
            let schema_version = if item.get("error").is_some() && item.get("id").is_none() {
                "2025-11-25"
            } else {
                version
            };
            if let Err(e) = Schemas::get(schema_version).validate_frame(&item, answering.as_deref())
            {
                panic!("emitted frame violates the {schema_version} schema: {e}");
            }
            self.checked += 1;
        }
    }
}

/// A peer played by hand-written JSON text over the in-memory transport.
#[derive(Debug)]
pub struct RawPeer {
    io: MemoryTransport,
    /// Frames received but not yet consumed.
    backlog: Vec<Value>,
    /// The revision whose schema our frames are checked against.
    pub version: String,
    checker: FrameChecker,
}

impl RawPeer {
    /// Wraps one end of a memory pair; frames are checked against `version`'s schema.
    pub fn new(io: MemoryTransport, version: &str) -> Self {
        RawPeer {
            io,
            backlog: Vec::new(),
            version: version.to_owned(),
            checker: FrameChecker::default(),
        }
    }

    /// Sends raw text (which may be deliberately invalid).
    pub async fn send_text(&mut self, text: &str) {
        self.checker.see(&self.version, text, false, false);
        self.io
            .send_text(text)
            .await
            .expect("the other end is open");
    }

    /// Sends a JSON value.
    pub async fn send(&mut self, v: Value) {
        self.send_text(&v.to_string()).await;
    }

    async fn recv_raw(&mut self) -> Value {
        let text = tokio::time::timeout(WAIT, self.io.recv_text())
            .await
            .expect("a frame in time")
            .expect("open");
        assert!(
            !text.contains('\n'),
            "ST-1: no raw newline in a frame: {text}"
        );
        self.checker.see(&self.version, &text, true, true);
        serde_json::from_str(&text).expect("we emit JSON")
    }

    /// The next frame's exact text (schema-checked like every frame we emit).
    pub async fn recv_text(&mut self) -> String {
        assert!(
            self.backlog.is_empty(),
            "frames already consumed as values: {:?}",
            self.backlog
        );
        let text = tokio::time::timeout(WAIT, self.io.recv_text())
            .await
            .expect("a frame in time")
            .expect("open");
        self.checker.see(&self.version, &text, true, true);
        text
    }

    /// The next frame.
    pub async fn recv(&mut self) -> Value {
        if !self.backlog.is_empty() {
            return self.backlog.remove(0);
        }
        self.recv_raw().await
    }

    /// The next frame whose `id` is `id` (others are kept for later).
    pub async fn recv_id(&mut self, id: &Value) -> Value {
        if let Some(i) = self
            .backlog
            .iter()
            .position(|f| f.get("id") == Some(id) && f.get("method").is_none())
        {
            return self.backlog.remove(i);
        }
        loop {
            let f = self.recv_raw().await;
            if f.get("id") == Some(id) && f.get("method").is_none() {
                return f;
            }
            self.backlog.push(f);
        }
    }

    /// Sends a request and waits for its response.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        let mut msg = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
        self.recv_id(&id).await
    }

    /// Sends a notification.
    pub async fn notify(&mut self, method: &str, params: Value) {
        let mut msg = serde_json::json!({"jsonrpc": "2.0", "method": method});
        if !params.is_null() {
            msg["params"] = params;
        }
        self.send(msg).await;
    }

    /// Performs the handshake offering `version`; returns the initialize result.
    pub async fn handshake(&mut self, version: &str, capabilities: Value) -> Value {
        let r = self
            .request(
                serde_json::json!(0),
                "initialize",
                serde_json::json!({"protocolVersion": version, "capabilities": capabilities,
                    "clientInfo": {"name": "raw-test-client", "version": "1"}}),
            )
            .await;
        let chosen = r["result"]["protocolVersion"]
            .as_str()
            .expect("initialize result")
            .to_owned();
        self.version = chosen;
        self.notify("notifications/initialized", Value::Null).await;
        // A ping round trip guarantees the server has processed `initialized` (frames are handled
        // in order), so the session is Ready when this returns.
        self.sync().await;
        r["result"].clone()
    }

    /// A ping round trip: everything sent before it has been processed by the peer.
    pub async fn sync(&mut self) {
        let pong = self
            .request(serde_json::json!("sync"), "ping", Value::Null)
            .await;
        assert_eq!(pong["result"], serde_json::json!({}), "ping answered");
    }

    /// Fails if any frame arrives within `ms`.
    pub async fn expect_silence(&mut self, ms: u64) {
        assert!(
            self.backlog.is_empty(),
            "unexpected frames: {:?}",
            self.backlog
        );
        if let Ok(Some(t)) =
            tokio::time::timeout(Duration::from_millis(ms), self.io.recv_text()).await
        {
            panic!("expected no frame, got {t}");
        }
    }

    /// How many of our frames were schema-checked.
    pub fn checked(&self) -> usize {
        self.checker.checked
    }
}

/// A frame hook that records every frame with its direction.
#[derive(Debug, Clone, Default)]
pub struct Recorder(pub Arc<Mutex<Vec<(Flow, String)>>>);

impl Recorder {
    /// The hook to install in a [`switchboard::jsonrpc::SessionConfig`].
    pub fn hook(&self) -> FrameHook {
        let frames = self.0.clone();
        FrameHook::new(move |e| {
            if let Ok(mut f) = frames.lock() {
                f.push((e.direction, e.text.to_owned()));
            }
        })
    }

    /// The frames so far.
    pub fn frames(&self) -> Vec<(Flow, String)> {
        self.0.lock().map(|f| f.clone()).unwrap_or_default()
    }
}

/// Validates every frame of a session recorded on one side where *both* sides are ours.
///
/// # Panics
/// When a frame violates the schema of `version`.
pub fn validate_session(frames: &[(Flow, String)], version: &str) -> usize {
    let mut checker = FrameChecker::default();
    for (dir, text) in frames {
        checker.see(version, text, *dir == Flow::Outbound, true);
    }
    checker.checked
}

/// The text blocks of a tool's result, joined without separator.
pub fn text(r: &switchboard::types::tools::CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|b| match b {
            switchboard::types::content::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}
