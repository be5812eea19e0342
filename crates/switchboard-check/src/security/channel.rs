//! One conversation with the server for the probes that are about JSON-RPC frames, whatever the
//! transport: a raw connection ([`Conn`]: stdio, in process) or hand-written HTTP POSTs (a
//! 2025 session, or requests of revision 2026-07-28, with a bearer token when there is one).
//! Every exchange says what went out and what came back, for the probes' details.

use std::time::Duration;

use serde_json::{Map, Value, json};
use switchboard_types::{http_headers, methods};

use super::wire::{self, Endpoint, Req};
use crate::conn::{Conn, Got, envelope};
use crate::verdict::show;

/// The 2025 revision the probes speak, and the modern one.
pub(crate) const LATEST: &str = "2025-11-25";
pub(crate) const MODERN: &str = "2026-07-28";

/// A channel to the server.
pub(crate) enum Channel {
    /// A raw connection (stdio or in process), past its handshake or (`true`: revision
    /// 2026-07-28, whose requests carry the `_meta` envelope) `server/discover`.
    Conn(Box<Conn>, bool),
    /// HTTP POSTs, one per frame.
    Http(HttpChannel),
}

/// What an HTTP channel sends with every POST.
#[derive(Debug, Clone)]
pub(crate) struct HttpChannel {
    pub(crate) ep: Endpoint,
    pub(crate) token: Option<String>,
    pub(crate) session: Option<String>,
    /// The revision (2026-07-28: `Mcp-Method` and friends on every POST).
    pub(crate) version: String,
    pub(crate) timeout: Duration,
}

/// One exchange: what went out, and the answer (a response frame, or nothing).
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    pub(crate) sent: String,
    pub(crate) answer: Option<Value>,
    /// What came back, shown (status and body over HTTP).
    pub(crate) got: String,
    /// The HTTP status, over HTTP.
    pub(crate) status: Option<u16>,
}

impl Exchange {
    /// The answer's result, if it is one.
    pub(crate) fn result(&self) -> Option<&Value> {
        self.answer.as_ref().and_then(|a| a.get("result"))
    }

    /// `sent …; got …`, for a detail.
    pub(crate) fn shown(&self) -> String {
        format!("sent {}; got {}", self.sent, self.got)
    }
}

impl HttpChannel {
    /// The POST of `text` with this channel's headers (and `extra` ones, replacing them).
    pub(crate) fn request(&self, text: &str, extra: &[(&str, &str)]) -> Req {
        let mut req = Req::post(&self.ep, text);
        if let Some(t) = &self.token {
            req = req.set("Authorization", format!("Bearer {t}"));
        }
        if self.version == MODERN {
            // The headers a 2026-07-28 client sends for what the body says (when it is JSON).
            let v: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            let method = v.get("method").and_then(Value::as_str).unwrap_or("");
            let params = v
                .get("params")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            for (n, value) in http_headers::request_headers(method, &params, MODERN, &[]) {
                req = req.set(&n, value);
            }
        } else {
            req = req.session(self.session.as_deref(), &self.version);
        }
        for (n, v) in extra {
            req = req.set(n, *v);
        }
        req
    }

    /// Sends `req` and reads the answer to `id`.
    pub(crate) async fn exchange_req(&self, req: &Req, id: &Value) -> Exchange {
        let out = wire::send(&self.ep, req, self.timeout).await;
        let reply = out.reply();
        Exchange {
            sent: req.shown(),
            answer: reply.and_then(|r| r.answer(id)),
            got: out.shown(),
            status: reply.map(|r| r.status),
        }
    }
}

impl Channel {
    /// Sends `text` (a frame, possibly malformed) and waits for the response to `id`.
    pub(crate) async fn exchange(&mut self, text: &str, id: &Value) -> Exchange {
        match self {
            Channel::Conn(c, _) => {
                let mut got = match c.send_text(text).await {
                    Ok(()) => c.response(id).await,
                    Err(e) => Got::Closed(format!("send failed: {e}")),
                };
                // A frame whose id could not be read is answered with an error without one.
                if !matches!(got, Got::Frame(_))
                    && let Some(e) = c.take_backlog().into_iter().find(|f| {
                        f.get("error").is_some() && f.get("id").is_none_or(Value::is_null)
                    })
                {
                    got = Got::Frame(e);
                }
                Exchange {
                    sent: wire::trim(text),
                    answer: match &got {
                        Got::Frame(v) if v.is_object() => Some(v.clone()),
                        _ => None,
                    },
                    got: show(&got),
                    status: None,
                }
            }
            Channel::Http(h) => {
                let req = h.request(text, &[]);
                h.exchange_req(&req, id).await
            }
        }
    }

    /// A request of this channel's revision: `method` with `params` (the 2026-07-28 envelope
    /// added when the channel speaks it).
    pub(crate) async fn call(&mut self, id: &str, method: &str, params: Value) -> Exchange {
        let text = frame(id, method, params, self.modern());
        self.exchange(&text, &json!(id)).await
    }

    /// Whether the channel speaks revision 2026-07-28.
    pub(crate) fn modern(&self) -> bool {
        match self {
            Channel::Http(h) => h.version == MODERN,
            Channel::Conn(_, modern) => *modern,
        }
    }

    /// Ends the channel (the process, or the session).
    pub(crate) async fn close(self) {
        match self {
            Channel::Conn(c, _) => c.close().await,
            Channel::Http(h) => end_session(&h).await,
        }
    }
}

/// A request frame; in revision 2026-07-28 its params carry the `_meta` envelope.
pub(crate) fn frame(id: &str, method: &str, params: Value, modern: bool) -> String {
    let mut params = match params {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    if modern {
        params.entry("_meta").or_insert_with(|| envelope(MODERN));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// The `initialize` frame of the 2025 revision.
pub(crate) fn initialize_frame(id: &str) -> String {
    frame(
        id,
        methods::INITIALIZE,
        json!({"protocolVersion": LATEST, "capabilities": {},
            "clientInfo": {"name": "switchboard-check", "version": env!("CARGO_PKG_VERSION")}}),
        false,
    )
}

/// Opens a 2025 session over HTTP: `initialize` (with `token`), then `notifications/initialized`.
/// The session id is `None` on a stateless server.
///
/// # Errors
/// What came instead of a successful `initialize`, shown.
pub(crate) async fn open_http(
    ep: &Endpoint,
    token: Option<&str>,
    timeout: Duration,
) -> Result<HttpChannel, String> {
    let mut h = HttpChannel {
        ep: ep.clone(),
        token: token.map(str::to_owned),
        session: None,
        version: LATEST.into(),
        timeout,
    };
    let req = h
        .request(&initialize_frame("init"), &[])
        .without("MCP-Protocol-Version");
    let out = wire::send(ep, &req, timeout).await;
    let Some(reply) = out.reply().filter(|r| r.ok()) else {
        return Err(out.shown());
    };
    let Some(result) = reply
        .answer(&json!("init"))
        .and_then(|a| a.get("result").cloned())
    else {
        return Err(out.shown());
    };
    if let Some(v) = result.get("protocolVersion").and_then(Value::as_str) {
        v.clone_into(&mut h.version);
    }
    h.session = reply.session().map(str::to_owned);
    let note = json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_INITIALIZED}).to_string();
    let _ = wire::send(ep, &h.request(&note, &[]), timeout).await;
    Ok(h)
}

/// Ends the session of `h`, if it has one (whatever the answer).
pub(crate) async fn end_session(h: &HttpChannel) {
    if let Some(id) = &h.session {
        let mut req = Req::bodiless(&h.ep, "DELETE").session(Some(id), &h.version);
        if let Some(t) = &h.token {
            req = req.set("Authorization", format!("Bearer {t}"));
        }
        let _ = wire::send(&h.ep, &req, h.timeout).await;
    }
}

/// Whether `out` answered a 2026-07-28 `server/discover` naming that revision.
pub(crate) fn speaks_modern(answer: Option<&Value>) -> bool {
    answer
        .and_then(|a| a.pointer("/result/supportedVersions"))
        .and_then(Value::as_array)
        .is_some_and(|vs| vs.iter().any(|v| v == MODERN))
}
