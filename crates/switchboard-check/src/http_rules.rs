//! The Streamable HTTP rules, checked with `--url` only: sessions, headers, status codes and
//! Origin (SPEC-NOTES §6, SECURITY-NOTES SEC-LOC-7). Every probe is one HTTP request written by
//! hand (no client transport between), so the server sees exactly what a careless or hostile
//! client would send. Where the spec leaves the server a choice (JSON or SSE, a GET stream or
//! 405, sessions or none, ending sessions or 405), either option passes and the detail names the
//! one the server took.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue, ORIGIN};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use switchboard_transport::codec::sse::SseParser;
use switchboard_transport::headers::{
    EVENT_STREAM, JSON, POST_ACCEPT, PROTOCOL_VERSION, SESSION_ID as SESSION_HEADER, media_type,
};
use switchboard_types::methods;
use tokio::time::Instant;

use crate::{CheckResult, Results, Verdict};

/// How many results [`all`] pushes: one per entry of [`CHECKS`], always.
pub(crate) const COUNT: usize = CHECKS.len();

type Check = (&'static str, &'static str);

const SESSION_ID: Check = (
    "HT-18",
    "initialize gives a visible-ASCII MCP-Session-Id, or none (stateless)",
);
const CONTENT_TYPE_OK: Check = (
    "HT-9",
    "a request is answered as application/json or text/event-stream",
);
const NOTIFICATION_202: Check = ("HT-7", "a POSTed notification gets 202 and no body");
const RESPONSE_202: Check = (
    "HT-7",
    "a POSTed response gets 202 and no body (or a 4xx when refused, HT-8)",
);
const NO_SESSION: Check = ("HT-19", "a request without the session id is 400");
const FORGED_SESSION: Check = ("HT-20", "an unknown session id is 404");
const ACCEPT_BOTH: Check = (
    "HT-5",
    "a POST whose Accept lacks application/json or text/event-stream is 406 or 400",
);
const PROTOCOL_HEADER: Check = ("HT-23", "an unsupported MCP-Protocol-Version header is 400");
const FOREIGN_ORIGIN: Check = ("HT-3", "a foreign Origin is 403");
const GET_STREAM: Check = (
    "HT-13",
    "GET with Accept: text/event-stream opens an SSE stream or is 405",
);
const MALFORMED: Check = ("HT-6", "a malformed JSON body is 400 with a -32700 error");
const BATCH_REFUSED: Check = (
    "HT-6",
    "a batch is refused when the negotiated version has none (400 or -32600)",
);
const BATCH_ANSWERED: Check = ("JR-12", "a batch is answered under 2025-03-26");
const OVERSIZED: Check = (
    "HT",
    "a 20 MiB body gets 413 (or another clean answer) and the session lives on",
);
const DELETE_ENDS: Check = ("HT-20", "DELETE ends the session (then 404) or is 405");

/// Every HTTP check, in the order they are reported.
const CHECKS: [Check; 15] = [
    SESSION_ID,
    CONTENT_TYPE_OK,
    NOTIFICATION_202,
    RESPONSE_202,
    NO_SESSION,
    FORGED_SESSION,
    ACCEPT_BOTH,
    PROTOCOL_HEADER,
    FOREIGN_ORIGIN,
    GET_STREAM,
    MALFORMED,
    BATCH_REFUSED,
    BATCH_ANSWERED,
    OVERSIZED,
    DELETE_ENDS,
];

const LATEST: &str = "2025-11-25";
const BATCH_VERSION: &str = "2025-03-26";
const EVIL_ORIGIN: &str = "http://evil.example";
const FORGED_ID: &str = "switchboard-check-forged-session-id";
/// The notification in the probing batch: a method no server knows, so that it changes nothing.
const BATCH_NOTIFICATION: &str = "notifications/switchboard_check";
/// The most body text kept from one answer.
const BODY_LIMIT: usize = 1 << 20;
/// The oversized body.
const BIG: usize = 20 << 20;

fn result(check: Check, outcome: Verdict, detail: impl Into<String>) -> CheckResult {
    CheckResult {
        tag: check.0,
        name: check.1,
        outcome,
        detail: detail.into(),
    }
}

fn pass(check: Check, detail: impl Into<String>) -> CheckResult {
    result(check, Verdict::Pass, detail)
}

fn fail(check: Check, detail: impl Into<String>) -> CheckResult {
    result(check, Verdict::Fail, detail)
}

fn skip(check: Check, detail: impl Into<String>) -> CheckResult {
    result(check, Verdict::Skip, detail)
}

/// One HTTP answer, read as far as the check needs.
#[derive(Debug)]
struct Reply {
    status: StatusCode,
    /// The media type of `Content-Type`, lower case, without parameters ("" when absent).
    media: String,
    session: Option<HeaderValue>,
    /// The body text (bounded; for an SSE stream, what was read until the answers came).
    body: String,
    /// The JSON-RPC messages in the body (members of an array one by one).
    messages: Vec<Value>,
    /// Whether the messages came as a JSON array.
    array: bool,
}

impl Reply {
    fn is_sse(&self) -> bool {
        self.media == EVENT_STREAM
    }

    /// The response answering `id`.
    fn answer(&self, id: &Value) -> Option<&Value> {
        self.messages
            .iter()
            .find(|m| m.get("method").is_none() && m.get("id") == Some(id))
    }

    /// The error codes among the messages.
    fn error_codes(&self) -> Vec<i64> {
        self.messages
            .iter()
            .filter_map(|m| m.pointer("/error/code").and_then(Value::as_i64))
            .collect()
    }

    /// `HTTP 400 application/json {"jsonrpc"…`: what came, in short.
    fn brief(&self) -> String {
        // An SSE body is shown as its messages; any body on one line.
        let text = if self.is_sse() {
            let shown: Vec<String> = self.messages.iter().map(Value::to_string).collect();
            format!("[SSE] {}", shown.join(" "))
        } else {
            self.body.split_whitespace().collect::<Vec<_>>().join(" ")
        };
        let body: String = text.chars().take(160).collect();
        let media = if self.media.is_empty() {
            "(no Content-Type)"
        } else {
            &self.media
        };
        let ellipsis = if text.chars().count() > 160 {
            "…"
        } else {
            ""
        };
        format!("HTTP {} {media} {body}{ellipsis}", self.status.as_u16())
            .trim_end()
            .to_owned()
    }

    fn empty_body(&self) -> bool {
        self.body.trim().is_empty()
    }
}

/// A session opened by the raw handshake.
#[derive(Debug, Clone)]
struct Session {
    /// The `MCP-Session-Id` the server issued (none: a stateless server).
    id: Option<String>,
    /// The negotiated protocol version.
    version: String,
}

impl Session {
    /// The `MCP-Protocol-Version` to send: the negotiated version from 2025-06-18 on (before,
    /// the header did not exist).
    fn header_version(&self) -> Option<&str> {
        (self.version.as_str() >= "2025-06-18").then_some(self.version.as_str())
    }
}

/// One hand-written HTTP request.
#[derive(Debug, Clone)]
struct Probe<'a> {
    method: Method,
    body: Option<Vec<u8>>,
    accept: Option<&'a str>,
    session: Option<&'a str>,
    version: Option<&'a str>,
    origin: Option<&'a str>,
    /// The ids whose answers end the read of an SSE stream.
    ids: Vec<Value>,
    /// Whether to read an SSE body at all (a GET stream is left unread).
    read_sse: bool,
}

impl<'a> Probe<'a> {
    fn post(body: impl Into<Vec<u8>>) -> Probe<'a> {
        Probe {
            method: Method::POST,
            body: Some(body.into()),
            accept: Some(POST_ACCEPT),
            session: None,
            version: None,
            origin: None,
            ids: Vec::new(),
            read_sse: true,
        }
    }

    fn bodiless(method: Method) -> Probe<'a> {
        Probe {
            method,
            body: None,
            accept: None,
            session: None,
            version: None,
            origin: None,
            ids: Vec::new(),
            read_sse: false,
        }
    }

    /// A `ping` request with this id.
    fn ping(id: &str) -> Probe<'a> {
        Probe::post(json!({"jsonrpc": "2.0", "id": id, "method": methods::PING}).to_string())
            .expect(&[id])
    }

    fn expect(mut self, ids: &[&str]) -> Probe<'a> {
        self.ids = ids.iter().map(|id| json!(id)).collect();
        self
    }

    /// The session's id and version headers.
    fn within(mut self, s: &'a Session) -> Probe<'a> {
        self.session = s.id.as_deref();
        self.version = s.header_version();
        self
    }
}

/// Adds the messages of every event the parser has completed to the reply. An event that is
/// too large or not UTF-8 carries no message the check can judge, and is passed over.
fn gather_events(reply: &mut Reply, parser: &mut SseParser) {
    while let Some(event) = parser.next() {
        if let Ok(event) = event {
            gather(reply, &event.data);
        }
    }
}

/// Adds the JSON-RPC message(s) in `text` to the reply.
fn gather(reply: &mut Reply, text: &str) {
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Array(items)) => {
            reply.array = true;
            reply.messages.extend(items);
        }
        Ok(v @ Value::Object(_)) => reply.messages.push(v),
        _ => {}
    }
}

/// Whether every expected answer is in (or the POST as a whole was refused: an error with a
/// null or missing id).
fn complete(reply: &Reply, ids: &[Value]) -> bool {
    let refused = reply.messages.iter().any(|m| {
        m.get("method").is_none()
            && m.get("error").is_some()
            && m.get("id").is_none_or(Value::is_null)
    });
    refused || (!ids.is_empty() && ids.iter().all(|id| reply.answer(id).is_some()))
}

/// A probe that got no HTTP answer.
#[derive(Debug, Clone)]
struct Failed {
    text: String,
    /// The server closed or reset the connection (rather than a timeout or a refused connect).
    closed: bool,
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<Failed> for String {
    fn from(f: Failed) -> String {
        f.text
    }
}

/// Whether the connection was closed or reset under the request (an `io::Error` in the chain).
fn closed_under(e: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset};
            if matches!(io.kind(), BrokenPipe | ConnectionReset | ConnectionAborted) {
                return true;
            }
        }
        source = cause.source();
    }
    false
}

fn describe(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// The raw HTTP side of the checker.
struct Http {
    client: Client,
    url: String,
    timeout: Duration,
}

impl Http {
    /// Sends one probe and reads its answer: a JSON or other body to its end (bounded), an SSE
    /// body until the expected answers are in, it ends, or the timeout.
    async fn send(&self, p: Probe<'_>) -> Result<Reply, Failed> {
        let deadline = Instant::now() + self.timeout;
        let mut rb = self.client.request(p.method.clone(), &self.url);
        if let Some(a) = p.accept {
            rb = rb.header(ACCEPT, a);
        }
        if let Some(s) = p.session {
            rb = rb.header(SESSION_HEADER, s);
        }
        if let Some(v) = p.version {
            rb = rb.header(PROTOCOL_VERSION, v);
        }
        if let Some(o) = p.origin {
            rb = rb.header(ORIGIN, o);
        }
        if let Some(body) = p.body {
            rb = rb.header(CONTENT_TYPE, JSON).body(body);
        }
        let mut resp = match tokio::time::timeout_at(deadline, rb.send()).await {
            Err(_) => {
                return Err(Failed {
                    text: "no HTTP answer (timeout)".into(),
                    closed: false,
                });
            }
            Ok(Err(e)) => {
                return Err(Failed {
                    text: format!("no HTTP answer: {}", describe(&e)),
                    closed: closed_under(&e),
                });
            }
            Ok(Ok(r)) => r,
        };
        let media = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| media_type(v).to_ascii_lowercase())
            .unwrap_or_default();
        let mut reply = Reply {
            status: resp.status(),
            media,
            session: resp.headers().get(SESSION_HEADER).cloned(),
            body: String::new(),
            messages: Vec::new(),
            array: false,
        };
        let sse = reply.is_sse();
        if sse && !p.read_sse {
            return Ok(reply);
        }
        let mut raw = Vec::new();
        let mut parser = SseParser::new(BODY_LIMIT);
        loop {
            let chunk = match tokio::time::timeout_at(deadline, resp.chunk()).await {
                Ok(Ok(Some(c))) => c,
                // The end, a cut connection or the timeout: judge what came.
                _ => break,
            };
            let room = BODY_LIMIT.saturating_sub(raw.len());
            raw.extend_from_slice(&chunk[..chunk.len().min(room)]);
            if sse {
                parser.push(&chunk);
                gather_events(&mut reply, &mut parser);
                if complete(&reply, &p.ids) {
                    break;
                }
            } else if raw.len() >= BODY_LIMIT {
                break;
            }
        }
        reply.body = String::from_utf8_lossy(&raw).into_owned();
        if sse {
            // The end of the body ends its last event, even without the blank line.
            parser.finish();
            gather_events(&mut reply, &mut parser);
        } else {
            let body = reply.body.clone();
            gather(&mut reply, &body);
        }
        Ok(reply)
    }

    /// POSTs `initialize` offering `version` (with `origin` when given).
    async fn initialize(&self, version: &str, origin: Option<&str>) -> Result<Reply, Failed> {
        let body = json!({"jsonrpc": "2.0", "id": "init", "method": methods::INITIALIZE,
            "params": {"protocolVersion": version, "capabilities": {},
                "clientInfo": {"name": "switchboard-check", "version": env!("CARGO_PKG_VERSION")}}});
        let mut p = Probe::post(body.to_string()).expect(&["init"]);
        p.origin = origin;
        self.send(p).await
    }

    /// The handshake: `initialize`, then `notifications/initialized`. Returns the session, the
    /// initialize reply and the initialized reply.
    async fn handshake(
        &self,
        version: &str,
    ) -> Result<(Session, Reply, Result<Reply, Failed>), String> {
        let init = self.initialize(version, None).await?;
        let Some(negotiated) = init
            .answer(&json!("init"))
            .and_then(|a| a.pointer("/result/protocolVersion"))
            .and_then(Value::as_str)
        else {
            return Err(format!("initialize failed: {}", init.brief()));
        };
        let session = Session {
            id: init
                .session
                .as_ref()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
            version: negotiated.to_owned(),
        };
        let note =
            json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_INITIALIZED}).to_string();
        let initialized = self.send(Probe::post(note).within(&session)).await;
        Ok((session, init, initialized))
    }

    /// Ends a session the checker opened (whatever the answer).
    async fn end(&self, s: &Session) {
        if s.id.is_some() {
            let _ = self.send(Probe::bodiless(Method::DELETE).within(s)).await;
        }
    }
}

/// Runs the HTTP checks against `url`, pushing exactly [`COUNT`] results.
pub(crate) async fn all(url: &str, timeout: Duration, out: &mut Results) {
    let client = Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build();
    let http = match client {
        Ok(client) => Http {
            client,
            url: url.to_owned(),
            timeout,
        },
        Err(e) => {
            for c in CHECKS {
                out.push(fail(c, format!("no HTTP client: {}", describe(&e))));
            }
            return;
        }
    };
    let (session, init, initialized) = match http.handshake(LATEST).await {
        Ok(h) => h,
        Err(e) => {
            out.push(fail(SESSION_ID, e));
            for c in &CHECKS[1..] {
                out.push(skip(*c, "no session: the handshake failed"));
            }
            return;
        }
    };
    out.push(session_id(&init));
    out.push(content_type(&http, &session, &init).await);
    out.push(match &initialized {
        Ok(r) if r.status == StatusCode::ACCEPTED && r.empty_body() => {
            pass(NOTIFICATION_202, "202 (notifications/initialized)")
        }
        Ok(r) => fail(NOTIFICATION_202, r.brief()),
        Err(e) => fail(NOTIFICATION_202, e.to_string()),
    });
    out.push(response_202(&http, &session).await);
    out.push(no_session(&http, &session).await);
    out.push(forged_session(&http, &session).await);
    out.push(accept(&http, &session).await);
    out.push(protocol_header(&http, &session).await);
    out.push(origin(&http, &session).await);
    out.push(get_stream(&http, &session).await);
    out.push(malformed(&http, &session).await);
    out.push(batch_refused(&http, &session).await);
    out.push(batch_answered(&http).await);
    out.push(oversized(&http, &session).await);
    out.push(delete_ends(&http).await);
    http.end(&session).await;
}

fn session_id(init: &Reply) -> CheckResult {
    match &init.session {
        None => pass(SESSION_ID, "none: the server is stateless"),
        Some(v) => {
            let bytes = v.as_bytes();
            if !bytes.is_empty() && bytes.iter().all(|b| (0x21..=0x7e).contains(b)) {
                pass(
                    SESSION_ID,
                    format!("stateful: a {}-character id", bytes.len()),
                )
            } else {
                fail(
                    SESSION_ID,
                    format!(
                        "the {}-byte id is empty or has bytes outside 0x21-0x7E",
                        bytes.len()
                    ),
                )
            }
        }
    }
}

async fn content_type(http: &Http, s: &Session, init: &Reply) -> CheckResult {
    let ok = |r: &Reply, id: &str| {
        r.status == StatusCode::OK
            && (r.media == JSON || r.is_sse())
            && r.answer(&json!(id)).is_some()
    };
    if !ok(init, "init") {
        return fail(CONTENT_TYPE_OK, format!("initialize: {}", init.brief()));
    }
    match http.send(Probe::ping("ct").within(s)).await {
        Ok(r) if ok(&r, "ct") => pass(
            CONTENT_TYPE_OK,
            format!("initialize: {}, ping: {}", init.media, r.media),
        ),
        Ok(r) => fail(CONTENT_TYPE_OK, format!("ping: {}", r.brief())),
        Err(e) => fail(CONTENT_TYPE_OK, format!("ping: {e}")),
    }
}

async fn response_202(http: &Http, s: &Session) -> CheckResult {
    let body = json!({"jsonrpc": "2.0", "id": "switchboard-check-unsolicited", "result": {}});
    match http.send(Probe::post(body.to_string()).within(s)).await {
        Ok(r) if r.status == StatusCode::ACCEPTED && r.empty_body() => pass(RESPONSE_202, "202"),
        Ok(r) if r.status.is_client_error() => pass(
            RESPONSE_202,
            format!(
                "refused with {} (a response to no request it sent)",
                r.status.as_u16()
            ),
        ),
        Ok(r) => fail(RESPONSE_202, r.brief()),
        Err(e) => fail(RESPONSE_202, e),
    }
}

async fn no_session(http: &Http, s: &Session) -> CheckResult {
    if s.id.is_none() {
        return skip(NO_SESSION, "stateless server: no session id was issued");
    }
    let mut p = Probe::ping("no-session").within(s);
    p.session = None;
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::BAD_REQUEST => pass(NO_SESSION, "400"),
        Ok(r) if r.answer(&json!("no-session")).is_some() && r.status.is_success() => fail(
            NO_SESSION,
            format!("served without a session id: {}", r.brief()),
        ),
        Ok(r) => fail(NO_SESSION, r.brief()),
        Err(e) => fail(NO_SESSION, e),
    }
}

async fn forged_session(http: &Http, s: &Session) -> CheckResult {
    if s.id.is_none() {
        return skip(FORGED_SESSION, "stateless server: no session id was issued");
    }
    let mut p = Probe::ping("forged").within(s);
    p.session = Some(FORGED_ID);
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::NOT_FOUND => pass(FORGED_SESSION, "404"),
        Ok(r) => fail(FORGED_SESSION, r.brief()),
        Err(e) => fail(FORGED_SESSION, e),
    }
}

async fn accept(http: &Http, s: &Session) -> CheckResult {
    let mut seen = Vec::new();
    let mut ok = true;
    for only in [JSON, EVENT_STREAM] {
        let mut p = Probe::ping("accept").within(s);
        p.accept = Some(only);
        match http.send(p).await {
            Ok(r) if matches!(r.status.as_u16(), 400 | 406) => {
                seen.push(format!("{only} only: {}", r.status.as_u16()));
            }
            Ok(r) => {
                ok = false;
                seen.push(format!("{only} only: {}", r.brief()));
            }
            Err(e) => {
                ok = false;
                seen.push(format!("{only} only: {e}"));
            }
        }
    }
    result(
        ACCEPT_BOTH,
        if ok { Verdict::Pass } else { Verdict::Fail },
        seen.join("; "),
    )
}

async fn protocol_header(http: &Http, s: &Session) -> CheckResult {
    if s.header_version().is_none() {
        return skip(
            PROTOCOL_HEADER,
            format!("negotiated {}: the header came in 2025-06-18", s.version),
        );
    }
    let mut p = Probe::ping("bad-version").within(s);
    p.version = Some("1999-01-01");
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::BAD_REQUEST => pass(PROTOCOL_HEADER, "400"),
        Ok(r) => fail(PROTOCOL_HEADER, r.brief()),
        Err(e) => fail(PROTOCOL_HEADER, e),
    }
}

async fn origin(http: &Http, s: &Session) -> CheckResult {
    let init = http.initialize(LATEST, Some(EVIL_ORIGIN)).await;
    let mut p = Probe::ping("origin").within(s);
    p.origin = Some(EVIL_ORIGIN);
    let ping = http.send(p).await;
    let show = |r: &Result<Reply, Failed>| match r {
        Ok(r) if r.status == StatusCode::FORBIDDEN => "403".to_owned(),
        Ok(r) => r.brief(),
        Err(e) => e.to_string(),
    };
    let refused =
        |r: &Result<Reply, Failed>| matches!(r, Ok(r) if r.status == StatusCode::FORBIDDEN);
    if let Ok(r) = &init {
        // A session opened despite the Origin is ended again.
        if let Some(id) = &r.session {
            let leaked = Session {
                id: Some(String::from_utf8_lossy(id.as_bytes()).into_owned()),
                version: LATEST.into(),
            };
            http.end(&leaked).await;
        }
    }
    let detail = format!(
        "Origin {EVIL_ORIGIN}: initialize {}; ping in the session {}",
        show(&init),
        show(&ping)
    );
    if refused(&init) && refused(&ping) {
        pass(FOREIGN_ORIGIN, detail)
    } else {
        fail(FOREIGN_ORIGIN, detail)
    }
}

async fn get_stream(http: &Http, s: &Session) -> CheckResult {
    let mut p = Probe::bodiless(Method::GET).within(s);
    p.accept = Some(EVENT_STREAM);
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::OK && r.is_sse() => {
            pass(GET_STREAM, "200 text/event-stream: a standalone stream")
        }
        Ok(r) if r.status == StatusCode::METHOD_NOT_ALLOWED => {
            pass(GET_STREAM, "405: no GET stream")
        }
        Ok(r) => fail(GET_STREAM, r.brief()),
        Err(e) => fail(GET_STREAM, e),
    }
}

async fn malformed(http: &Http, s: &Session) -> CheckResult {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"malformed","method":"{}""#,
        methods::PING
    );
    let p = Probe::post(body).within(s);
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::BAD_REQUEST && r.error_codes().contains(&-32700) => {
            pass(MALFORMED, format!("400 {} with -32700", r.media))
        }
        Ok(r) => fail(MALFORMED, r.brief()),
        Err(e) => fail(MALFORMED, e),
    }
}

/// A batch of two pings and a notification.
fn batch(a: &str, b: &str) -> String {
    json!([
        {"jsonrpc": "2.0", "id": a, "method": methods::PING},
        {"jsonrpc": "2.0", "id": b, "method": methods::PING},
        {"jsonrpc": "2.0", "method": BATCH_NOTIFICATION}
    ])
    .to_string()
}

async fn batch_refused(http: &Http, s: &Session) -> CheckResult {
    if s.header_version().is_none() {
        return skip(
            BATCH_REFUSED,
            format!("negotiated {}, which has batches", s.version),
        );
    }
    let p = Probe::post(batch("b1", "b2"))
        .within(s)
        .expect(&["b1", "b2"]);
    match http.send(p).await {
        Ok(r) if r.status == StatusCode::BAD_REQUEST => {
            pass(BATCH_REFUSED, format!("400 (negotiated {})", s.version))
        }
        Ok(r)
            if r.status.is_success()
                && !r.messages.is_empty()
                && r.messages.iter().all(|m| m.get("result").is_none())
                && r.error_codes().iter().all(|c| *c == -32600)
                && r.error_codes().len() == r.messages.len() =>
        {
            pass(
                BATCH_REFUSED,
                format!("-32600 (negotiated {}; {})", s.version, r.media),
            )
        }
        Ok(r) if r.messages.iter().any(|m| m.get("result").is_some()) => fail(
            BATCH_REFUSED,
            format!(
                "the batch was served as in 2025-03-26 although {} has no batches: {}",
                s.version,
                r.brief()
            ),
        ),
        Ok(r) => fail(BATCH_REFUSED, r.brief()),
        Err(e) => fail(BATCH_REFUSED, e),
    }
}

async fn batch_answered(http: &Http) -> CheckResult {
    let s = match http.handshake(BATCH_VERSION).await {
        Ok((s, _, _)) => s,
        Err(e) => return fail(BATCH_ANSWERED, format!("a {BATCH_VERSION} session: {e}")),
    };
    if s.version != BATCH_VERSION {
        http.end(&s).await;
        return skip(
            BATCH_ANSWERED,
            format!(
                "the server does not speak {BATCH_VERSION} (it offered {})",
                s.version
            ),
        );
    }
    let p = Probe::post(batch("o1", "o2"))
        .within(&s)
        .expect(&["o1", "o2"]);
    let got = http.send(p).await;
    http.end(&s).await;
    match got {
        Ok(r)
            if r.status == StatusCode::OK
                && ["o1", "o2"].iter().all(|id| {
                    r.answer(&json!(id))
                        .is_some_and(|a| a.get("result").is_some())
                }) =>
        {
            let shape = if r.array {
                "one array"
            } else {
                "one message each"
            };
            pass(BATCH_ANSWERED, format!("{}, {shape}", r.media))
        }
        Ok(r) => fail(BATCH_ANSWERED, r.brief()),
        Err(e) => fail(BATCH_ANSWERED, e),
    }
}

async fn oversized(http: &Http, s: &Session) -> CheckResult {
    let pad = "x".repeat(BIG);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"{ping}","params":{{"pad":"{pad}"}}}}"#,
        ping = methods::PING
    );
    drop(pad);
    let big = http
        .send(Probe::post(body).within(s).expect(&["big"]))
        .await;
    let first = match &big {
        Ok(r) if r.status == StatusCode::PAYLOAD_TOO_LARGE => Ok("413".to_owned()),
        Ok(r) if r.status.is_client_error() => Ok(format!("refused with {}", r.status.as_u16())),
        Ok(r) if r.status.is_success() && r.answer(&json!("big")).is_some() => {
            Ok("accepted and answered (the server takes 20 MiB bodies)".to_owned())
        }
        Ok(r) => Err(r.brief()),
        // A server may answer early (413) and close the connection while the body is still
        // being written: the write then fails here. That is a refusal too, as long as the
        // server goes on serving (checked next).
        Err(e) if e.closed => Ok(format!(
            "the connection was closed during the upload ({})",
            e.text.rsplit(": ").next().unwrap_or(&e.text)
        )),
        Err(e) => Err(e.to_string()),
    };
    let after = http.send(Probe::ping("after-big").within(s)).await;
    let alive = matches!(&after, Ok(r) if r.status == StatusCode::OK
        && r.answer(&json!("after-big")).is_some_and(|a| a.get("result").is_some()));
    match (first, alive) {
        (Ok(what), true) => pass(OVERSIZED, format!("{what}; the next ping answered")),
        (Ok(what), false) => fail(
            OVERSIZED,
            format!(
                "{what}, but then the ping got {}",
                after.map_or_else(|e| e.text, |r| r.brief())
            ),
        ),
        (Err(what), _) => fail(OVERSIZED, what),
    }
}

async fn delete_ends(http: &Http) -> CheckResult {
    let s = match http.handshake(LATEST).await {
        Ok((s, _, _)) => s,
        Err(e) => return fail(DELETE_ENDS, format!("a new session: {e}")),
    };
    if s.id.is_none() {
        return skip(DELETE_ENDS, "stateless server: no session to end");
    }
    let deleted = match http.send(Probe::bodiless(Method::DELETE).within(&s)).await {
        Ok(r) => r,
        Err(e) => return fail(DELETE_ENDS, e),
    };
    if deleted.status == StatusCode::METHOD_NOT_ALLOWED {
        return pass(DELETE_ENDS, "405: clients may not end sessions");
    }
    if !deleted.status.is_success() {
        return fail(DELETE_ENDS, format!("DELETE: {}", deleted.brief()));
    }
    let code = deleted.status.as_u16();
    match http.send(Probe::ping("after-delete").within(&s)).await {
        Ok(r) if r.status == StatusCode::NOT_FOUND => {
            pass(DELETE_ENDS, format!("DELETE {code}, then 404"))
        }
        Ok(r) => fail(
            DELETE_ENDS,
            format!(
                "DELETE {code}, then a request in that session got {}",
                r.brief()
            ),
        ),
        Err(e) => fail(DELETE_ENDS, format!("DELETE {code}, then {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_messages_are_gathered_across_chunks_and_up_to_the_end_of_the_body() {
        let mut reply = reply(Vec::new());
        let mut p = SseParser::new(BODY_LIMIT);
        p.push(b"id: 1\r\ndata: \r\n\r\nevent: message\nda");
        gather_events(&mut reply, &mut p);
        assert!(
            reply.messages.is_empty(),
            "the priming event carries nothing"
        );
        p.push(b"ta: {\"a\":\ndata: 1}\n\ndata: [{\"b\":2}");
        gather_events(&mut reply, &mut p);
        assert_eq!(reply.messages, vec![json!({"a": 1})]);
        p.push(b",{\"c\":3}]");
        p.finish();
        gather_events(&mut reply, &mut p);
        assert_eq!(
            reply.messages,
            vec![json!({"a": 1}), json!({"b": 2}), json!({"c": 3})]
        );
        assert!(reply.array);
    }

    fn reply(messages: Vec<Value>) -> Reply {
        Reply {
            status: StatusCode::OK,
            media: EVENT_STREAM.into(),
            session: None,
            body: String::new(),
            messages,
            array: false,
        }
    }

    #[test]
    fn reading_stops_when_every_answer_is_in_or_the_post_is_refused() {
        let ids = [json!("a"), json!("b")];
        let a = json!({"jsonrpc": "2.0", "id": "a", "result": {}});
        let b = json!({"jsonrpc": "2.0", "id": "b", "result": {}});
        let request = json!({"jsonrpc": "2.0", "id": "b", "method": methods::PING});
        assert!(!complete(&reply(vec![a.clone(), request]), &ids));
        assert!(complete(&reply(vec![a, b]), &ids));
        let refused =
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "x"}});
        assert!(complete(&reply(vec![refused]), &ids));
    }

    #[test]
    fn the_version_header_is_sent_from_2025_06_18_on() {
        let s = |v: &str| Session {
            id: None,
            version: v.into(),
        };
        assert_eq!(s("2025-11-25").header_version(), Some("2025-11-25"));
        assert_eq!(s("2025-06-18").header_version(), Some("2025-06-18"));
        assert_eq!(s("2025-03-26").header_version(), None);
        assert_eq!(s("2024-11-05").header_version(), None);
    }

    #[test]
    fn a_brief_is_one_line() {
        let mut r = reply(vec![json!({"id": 1})]);
        assert_eq!(r.brief(), r#"HTTP 200 text/event-stream [SSE] {"id":1}"#);
        r.media = "text/html".into();
        r.body = "<p>\n  hi\n</p>".into();
        assert_eq!(r.brief(), "HTTP 200 text/html <p> hi </p>");
    }

    #[test]
    fn every_check_is_counted_once() {
        let names: std::collections::BTreeSet<&str> = CHECKS.iter().map(|c| c.1).collect();
        assert_eq!(names.len(), COUNT);
    }
}
