//! `switchboard serve --hostile SCENARIO`: a malicious MCP server, for testing clients.
//!
//! Each scenario attacks a client the way a hostile server can (issue 25): metadata naming
//! another resource, an authorization server or a redirect at an address no client may fetch,
//! metadata without PKCE, a challenge asking for ever more scopes never offered, answers too
//! large or never ending. The server itself observes what the client does, so any client can
//! be tested, whatever its language: a request reaching the trap, a step it must not take, a
//! parameter it must send and did not, an answer it read to the end. Each observation is a
//! *finding* with the rule it breaks; `GET /hostile/report` (HTTP) returns them as JSON with
//! `exercised` (the client reached the scenario's attack at all: a run that never got there
//! proves nothing), and each is printed on stderr as it happens.
//!
//! The trap: the unspecified address 0.0.0.0 reaches this machine (Linux and macOS connect it to
//! the local host), so `http://0.0.0.0:PORT` names a listener of ours on 127.0.0.1 that a
//! client's SSRF policy must refuse (`[SEC-SSRF-3]`). Every listener is on 127.0.0.1, every
//! answer is bounded (the large ones at [`HUGE_BYTES`]), and so is what is kept of the
//! observations.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use serde_json::{Value, json};
use switchboard::types::methods::INITIALIZE;

/// The most bytes of one large answer sent; a client that reads them all read too much.
pub const HUGE_BYTES: u64 = 256 << 20;
/// The most authorizations a client may start for one resource before it is stepping up
/// without end (`[SEC-SC-6]`).
const MAX_STEP_UPS: usize = 5;
/// The most findings and events kept (and printed).
const MAX_KEPT: usize = 200;
/// The most characters of one finding or event.
const MAX_NOTE_CHARS: usize = 300;

/// `text` cut to [`MAX_NOTE_CHARS`] characters.
fn cut(mut text: String) -> String {
    if let Some((at, _)) = text.char_indices().nth(MAX_NOTE_CHARS) {
        text.truncate(at);
        text.push('…');
    }
    text
}

/// The attacks `serve --hostile` plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Scenario {
    /// 401, then protected-resource metadata naming another resource: a client that goes on to
    /// the authorization server accepted it [SEC-SSRF-10].
    PrmOtherResource,
    /// 401 whose resource_metadata is at http://0.0.0.0:PORT: a client fetching it has no
    /// SSRF guard [SEC-SSRF-1, SEC-SSRF-3].
    MetadataAtUnspecified,
    /// The protected-resource metadata redirects to http://0.0.0.0:PORT: a client following
    /// checks no redirect hop [SEC-SSRF-4].
    RedirectToUnspecified,
    /// The authorization server is http://0.0.0.0:PORT [SEC-SSRF-1, SEC-SSRF-3].
    AsAtUnspecified,
    /// The authorization server's metadata lists no PKCE method: a client sending an
    /// authorization request anyway breaks [SEC-URL-6].
    NoPkce,
    /// A working authorization server (it approves at once), and a resource that meets every
    /// token with 403 insufficient_scope for a new scope never offered: the client must ask
    /// for exactly the challenged scopes [SEC-SC-5], with PKCE S256 [SEC-URL-6] and the
    /// resource parameter [SEC-TP-4], and stop stepping up [SEC-SC-6].
    EndlessStepUp,
    /// Answers every request after initialize with 256 MiB of JSON: a client reading it all has
    /// no bound on an answer.
    HugeAnswer,
    /// Answers every request after initialize with one SSE event (over stdio: one line) whose
    /// data never ends (stopped at 256 MiB).
    EndlessAnswer,
}

impl Scenario {
    /// The scenario's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::PrmOtherResource => "prm-other-resource",
            Scenario::MetadataAtUnspecified => "metadata-at-unspecified",
            Scenario::RedirectToUnspecified => "redirect-to-unspecified",
            Scenario::AsAtUnspecified => "as-at-unspecified",
            Scenario::NoPkce => "no-pkce",
            Scenario::EndlessStepUp => "endless-step-up",
            Scenario::HugeAnswer => "huge-answer",
            Scenario::EndlessAnswer => "endless-answer",
        }
    }

    /// Whether the scenario is an OAuth one (HTTP only).
    fn oauth(self) -> bool {
        !matches!(self, Scenario::HugeAnswer | Scenario::EndlessAnswer)
    }
}

/// What the client did.
#[derive(Default)]
struct Observed {
    exercised: bool,
    findings: Vec<(&'static str, String)>,
    events: Vec<String>,
}

struct Hostile {
    scenario: Scenario,
    /// `http://127.0.0.1:PORT`.
    base: String,
    /// `http://0.0.0.0:TRAP`.
    trap: String,
    observed: Mutex<Observed>,
    /// Tokens issued (the step-up's round).
    issued: AtomicUsize,
    /// Authorization requests seen.
    authorizations: AtomicUsize,
    /// The scope the last challenge asked for.
    challenged: Mutex<Option<String>>,
    /// Codes issued, with their scope (bounded by [`MAX_STEP_UPS`] plus a margin).
    codes: Mutex<BTreeMap<String, String>>,
}

impl Hostile {
    fn observed(&self) -> std::sync::MutexGuard<'_, Observed> {
        self.observed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn exercised(&self, what: &str) {
        let mut o = self.observed();
        if !o.exercised {
            eprintln!("hostile: exercised: {what}");
        }
        o.exercised = true;
        if o.events.len() < MAX_KEPT {
            o.events.push(what.to_owned());
        }
    }

    /// Notes an event; printed and kept only within [`MAX_KEPT`], cut to [`MAX_NOTE_CHARS`]
    /// (it may quote what the client sent).
    fn event(&self, what: String) {
        let what = cut(what);
        let mut o = self.observed();
        if o.events.len() < MAX_KEPT {
            eprintln!("hostile: {what}");
            o.events.push(what);
        }
    }

    /// Notes a finding, printed and kept as events are.
    fn finding(&self, rule: &'static str, what: String) {
        let what = cut(what);
        let mut o = self.observed();
        if o.findings.len() < MAX_KEPT {
            eprintln!("hostile: FINDING [{rule}] {what}");
            o.findings.push((rule, what));
        }
    }

    fn report(&self) -> Value {
        let o = self.observed();
        json!({
            "scenario": self.scenario.name(),
            "exercised": o.exercised,
            "findings": o.findings.iter().map(|(rule, what)| json!({"rule": rule, "what": what})).collect::<Vec<_>>(),
            "events": o.events,
        })
    }

    fn resource(&self) -> String {
        format!("{}/mcp", self.base)
    }

    fn issuer(&self) -> String {
        format!("{}/as", self.base)
    }
}

type Shared = Arc<Hostile>;

/// Runs `scenario` over HTTP on `addr` (a loopback address) until the process is stopped;
/// says `listening on http://ADDR/mcp` on stderr once it listens.
///
/// # Errors
/// `addr` is not a loopback address, or a listener cannot be bound.
pub async fn serve_http(scenario: Scenario, addr: std::net::SocketAddr) -> std::io::Result<()> {
    if !addr.ip().is_loopback() {
        return Err(std::io::Error::other(
            "--hostile serves on a loopback address only (127.0.0.1:PORT)",
        ));
    }
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let trap_listener = tokio::net::TcpListener::bind((addr.ip(), 0)).await?;
    let local = listener.local_addr()?;
    let hostile = Arc::new(Hostile {
        scenario,
        base: format!("http://{local}"),
        trap: format!("http://0.0.0.0:{}", trap_listener.local_addr()?.port()),
        observed: Mutex::default(),
        issued: AtomicUsize::new(0),
        authorizations: AtomicUsize::new(0),
        challenged: Mutex::default(),
        codes: Mutex::default(),
    });
    let trap = Router::new()
        .fallback(any(trap))
        .with_state(hostile.clone());
    let main = Router::new()
        .route("/mcp", any(mcp))
        .route("/.well-known/oauth-protected-resource", get(prm))
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route(
            "/.well-known/oauth-authorization-server/as",
            get(as_metadata),
        )
        .route("/.well-known/openid-configuration/as", get(as_metadata))
        .route("/as/.well-known/openid-configuration", get(as_metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/hostile/report", get(report))
        .with_state(hostile.clone());
    eprintln!(
        "hostile server ({}) listening on http://{local}/mcp; report at http://{local}/hostile/report; trap at {}",
        scenario.name(),
        hostile.trap
    );
    tokio::spawn(async move {
        let _ = axum::serve(trap_listener, trap).await;
    });
    axum::serve(listener, main).await?;
    Ok(())
}

async fn report(State(h): State<Shared>) -> Response {
    axum::Json(h.report()).into_response()
}

/// Any request reaching the trap: the client fetched from the unspecified address.
async fn trap(State(h): State<Shared>, uri: Uri) -> Response {
    let rule = match h.scenario {
        Scenario::RedirectToUnspecified => "SEC-SSRF-4",
        _ => "SEC-SSRF-3",
    };
    h.finding(
        rule,
        format!("the client fetched {}{uri}: the unspecified address 0.0.0.0, which reaches this machine", h.trap),
    );
    StatusCode::NOT_FOUND.into_response()
}

fn json_rpc(id: &Value, result: Value) -> Response {
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// What a POSTed message is: its id (a request) and method.
fn message(body: &Bytes) -> (Option<Value>, String) {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let method = v
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    (v.get("id").cloned(), method)
}

fn initialize_result() -> Value {
    json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "switchboard-hostile", "version": env!("CARGO_PKG_VERSION")},
    })
}

async fn mcp(State(h): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let (id, method) = message(&body);
    if h.scenario.oauth() {
        return oauth_resource(&h, &headers, id, &method);
    }
    match (id, method.as_str()) {
        (Some(id), INITIALIZE) => json_rpc(&id, initialize_result()),
        (None, _) => StatusCode::ACCEPTED.into_response(),
        (Some(id), _) => {
            h.exercised(&format!("answering {method} with a large answer"));
            large_answer(h, id)
        }
    }
}

/// The resource server of the OAuth scenarios.
fn oauth_resource(h: &Shared, headers: &HeaderMap, id: Option<Value>, method: &str) -> Response {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let metadata = match h.scenario {
        Scenario::MetadataAtUnspecified => {
            h.exercised("challenged with resource_metadata at the unspecified address");
            format!("{}/.well-known/oauth-protected-resource/mcp", h.trap)
        }
        _ => format!("{}/.well-known/oauth-protected-resource/mcp", h.base),
    };
    let Some(token) = token else {
        return challenge(StatusCode::UNAUTHORIZED, &metadata, "mcp:basic", None);
    };
    let Some(round) = token
        .strip_prefix("hostile-")
        .and_then(|n| n.parse::<usize>().ok())
    else {
        h.finding(
            "SEC-TP-5",
            "the client sent a bearer token that this resource's authorization server never issued"
                .into(),
        );
        return challenge(
            StatusCode::UNAUTHORIZED,
            &metadata,
            "mcp:basic",
            Some("invalid_token"),
        );
    };
    match (id, method) {
        (Some(id), INITIALIZE) => json_rpc(&id, initialize_result()),
        (None, _) => StatusCode::ACCEPTED.into_response(),
        // A token of ours, in another scenario: the client got past the attack's point (its
        // findings say how); the session is served, so that it ends.
        (Some(id), _) if h.scenario != Scenario::EndlessStepUp => {
            json_rpc(&id, json!({"tools": []}))
        }
        (Some(_), _) => {
            // Every token is met with a scope it lacks, one never offered.
            let scope = format!("mcp:step-{}", round + 1);
            h.exercised("answered a request with 403 insufficient_scope for a scope never offered");
            *h.challenged.lock().unwrap_or_else(PoisonError::into_inner) = Some(scope.clone());
            challenge(
                StatusCode::FORBIDDEN,
                &metadata,
                &scope,
                Some("insufficient_scope"),
            )
        }
    }
}

fn challenge(status: StatusCode, metadata: &str, scope: &str, error: Option<&str>) -> Response {
    let error = error
        .map(|e| format!(", error=\"{e}\""))
        .unwrap_or_default();
    let value = format!("Bearer resource_metadata=\"{metadata}\", scope=\"{scope}\"{error}");
    (status, [(header::WWW_AUTHENTICATE, value)]).into_response()
}

/// The protected-resource metadata (RFC 9728).
async fn prm(State(h): State<Shared>, uri: Uri) -> Response {
    match h.scenario {
        Scenario::RedirectToUnspecified => {
            h.exercised("redirected the metadata fetch to the unspecified address");
            let to = format!("{}{}", h.trap, uri.path());
            (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)]).into_response()
        }
        Scenario::PrmOtherResource => {
            h.exercised("served metadata naming another resource");
            axum::Json(json!({
                "resource": "https://elsewhere.example/mcp",
                "authorization_servers": [h.issuer()],
                "scopes_supported": ["mcp:basic"],
            }))
            .into_response()
        }
        Scenario::AsAtUnspecified => {
            h.exercised("named an authorization server at the unspecified address");
            axum::Json(json!({
                "resource": h.resource(),
                "authorization_servers": [h.trap],
                "scopes_supported": ["mcp:basic"],
            }))
            .into_response()
        }
        _ => axum::Json(json!({
            "resource": h.resource(),
            "authorization_servers": [h.issuer()],
            "scopes_supported": ["mcp:basic"],
        }))
        .into_response(),
    }
}

/// The authorization server's metadata (RFC 8414).
async fn as_metadata(State(h): State<Shared>) -> Response {
    match h.scenario {
        Scenario::PrmOtherResource => h.finding(
            "SEC-SSRF-10",
            "the client fetched the authorization server's metadata after metadata naming another resource".into(),
        ),
        Scenario::NoPkce => h.exercised("served authorization server metadata without PKCE"),
        _ => {}
    }
    let mut m = json!({
        "issuer": h.issuer(),
        "authorization_endpoint": format!("{}/authorize", h.base),
        "token_endpoint": format!("{}/token", h.base),
        "registration_endpoint": format!("{}/register", h.base),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
    });
    if h.scenario == Scenario::NoPkce {
        m.as_object_mut()
            .map(|o| o.remove("code_challenge_methods_supported"));
    }
    axum::Json(m).into_response()
}

/// Dynamic client registration (RFC 7591): any client is welcome.
async fn register(State(h): State<Shared>, body: Bytes) -> Response {
    if h.scenario == Scenario::PrmOtherResource {
        h.finding(
            "SEC-SSRF-10",
            "the client registered at the authorization server of metadata naming another resource"
                .into(),
        );
    }
    let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut answer = json!({"client_id": "hostile-client", "token_endpoint_auth_method": "none"});
    if let Some(uris) = asked.get("redirect_uris") {
        answer["redirect_uris"] = uris.clone();
    }
    (StatusCode::CREATED, axum::Json(answer)).into_response()
}

/// The authorization endpoint: approves at once, after noting what the request lacks.
async fn authorize(State(h): State<Shared>, uri: Uri) -> Response {
    let q: BTreeMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let n = h.authorizations.fetch_add(1, Ordering::SeqCst) + 1;
    match h.scenario {
        Scenario::PrmOtherResource => h.finding(
            "SEC-SSRF-10",
            "the client sent an authorization request for metadata naming another resource".into(),
        ),
        Scenario::NoPkce => h.finding(
            "SEC-URL-6",
            "the client sent an authorization request although the metadata lists no PKCE method"
                .into(),
        ),
        _ => {}
    }
    if q.get("code_challenge_method").map(String::as_str) != Some("S256")
        || !q.contains_key("code_challenge")
    {
        h.finding(
            "SEC-URL-6",
            "an authorization request without a PKCE S256 challenge".into(),
        );
    }
    if q.get("resource") != Some(&h.resource()) {
        h.finding(
            "SEC-TP-4",
            format!(
                "an authorization request whose resource is {:?}, not {}",
                q.get("resource"),
                h.resource()
            ),
        );
    }
    let scope = q.get("scope").cloned().unwrap_or_default();
    let challenged = h
        .challenged
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(want) = challenged.filter(|w| !scope.split(' ').any(|s| s == w)) {
        h.finding(
            "SEC-SC-5",
            format!(
                "the challenge asked for {want}; the authorization request asked for {scope:?}"
            ),
        );
    }
    if n == MAX_STEP_UPS + 1 && h.scenario == Scenario::EndlessStepUp {
        h.finding(
            "SEC-SC-6",
            format!("the client started {n} authorizations, stepping up without end for scopes never offered"),
        );
    }
    h.event(format!("authorization request {n} for scope {scope:?}"));
    let Some(redirect) = q.get("redirect_uri").and_then(|r| url::Url::parse(r).ok()) else {
        return (StatusCode::BAD_REQUEST, "redirect_uri missing").into_response();
    };
    let code = format!("code-{n}");
    {
        let mut codes = h.codes.lock().unwrap_or_else(PoisonError::into_inner);
        if codes.len() < MAX_STEP_UPS * 4 {
            codes.insert(code.clone(), scope);
        }
    }
    let mut back = redirect;
    back.query_pairs_mut().append_pair("code", &code);
    if let Some(state) = q.get("state") {
        back.query_pairs_mut().append_pair("state", state);
    }
    back.query_pairs_mut().append_pair("iss", &h.issuer());
    (StatusCode::FOUND, [(header::LOCATION, back.to_string())]).into_response()
}

/// The token endpoint: a token for a code it issued.
async fn token(State(h): State<Shared>, body: Bytes) -> Response {
    let form: BTreeMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    match h.scenario {
        Scenario::PrmOtherResource => h.finding(
            "SEC-SSRF-10",
            "the client asked for a token for metadata naming another resource".into(),
        ),
        Scenario::NoPkce => h.finding(
            "SEC-URL-6",
            "the client asked for a token although the metadata lists no PKCE method".into(),
        ),
        _ => {}
    }
    if form.get("resource") != Some(&h.resource()) {
        h.finding(
            "SEC-TP-4",
            format!(
                "a token request whose resource is {:?}, not {}",
                form.get("resource"),
                h.resource()
            ),
        );
    }
    if form.get("grant_type").map(String::as_str) == Some("authorization_code")
        && !form.contains_key("code_verifier")
    {
        h.finding(
            "SEC-URL-6",
            "a token request without the PKCE code_verifier".into(),
        );
    }
    let scope = form
        .get("code")
        .and_then(|c| {
            h.codes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(c)
        })
        .unwrap_or_default();
    let round = h.issued.fetch_add(1, Ordering::SeqCst);
    axum::Json(json!({
        "access_token": format!("hostile-{round}"),
        "token_type": "Bearer",
        "expires_in": 300,
        "scope": scope,
    }))
    .into_response()
}

/// Notes, when dropped, how much of a large answer was sent.
struct Sent {
    hostile: Shared,
    bytes: Arc<AtomicU64>,
}

impl Drop for Sent {
    fn drop(&mut self) {
        let bytes = self.bytes.load(Ordering::SeqCst);
        if bytes >= HUGE_BYTES {
            self.hostile.finding(
                "bounds",
                format!("the client read all {bytes} bytes of one answer: it has no bound on an answer's size"),
            );
        } else {
            self.hostile.event(format!(
                "the client stopped reading the large answer after {bytes} bytes"
            ));
        }
    }
}

/// The opening of the large answer, then `x` up to [`HUGE_BYTES`] (never closed: a client
/// reading it all has read too much anyway).
fn large_head(scenario: Scenario, id: &Value) -> String {
    let open =
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":""#);
    match scenario {
        Scenario::EndlessAnswer => format!("data: {open}"),
        _ => open,
    }
}

fn large_answer(h: Shared, id: Value) -> Response {
    let content_type = match h.scenario {
        Scenario::EndlessAnswer => "text/event-stream",
        _ => "application/json",
    };
    let head = large_head(h.scenario, &id);
    let bytes = Arc::new(AtomicU64::new(0));
    let guard = Sent {
        hostile: h,
        bytes: bytes.clone(),
    };
    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
    let stream = futures::stream::unfold((Some(head), guard), move |(head, guard)| {
        let chunk = chunk.clone();
        async move {
            let sent = guard.bytes.load(Ordering::SeqCst);
            if sent >= HUGE_BYTES {
                return None;
            }
            let next = match head {
                Some(h) => Bytes::from(h),
                None => chunk,
            };
            guard.bytes.fetch_add(next.len() as u64, Ordering::SeqCst);
            Some((Ok::<_, std::io::Error>(next), (None, guard)))
        }
    });
    (
        [(header::CONTENT_TYPE, content_type)],
        Body::from_stream(stream),
    )
        .into_response()
}

/// Runs `scenario` over stdio: answers `initialize`, then any request with one line that grows
/// up to [`HUGE_BYTES`]; reports on stderr.
///
/// # Errors
/// The scenario needs HTTP, or stdout cannot be written.
pub async fn serve_stdio(scenario: Scenario) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    if scenario.oauth() {
        return Err(std::io::Error::other(format!(
            "--hostile {} is an OAuth scenario: give --http ADDR",
            scenario.name()
        )));
    }
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Ok(Some(line)) = lines.next_line().await {
        let (id, method) = message(&Bytes::from(line));
        let Some(id) = id else { continue };
        if method == INITIALIZE {
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": initialize_result()});
            out.write_all(format!("{answer}\n").as_bytes()).await?;
            out.flush().await?;
            continue;
        }
        eprintln!("hostile: exercised: answering {method} with a line that does not end");
        let head = large_head(Scenario::HugeAnswer, &id);
        let chunk = vec![b'x'; 64 * 1024];
        let mut sent = 0u64;
        let mut failed = out.write_all(head.as_bytes()).await.is_err();
        sent += head.len() as u64;
        while !failed && sent < HUGE_BYTES {
            failed = out.write_all(&chunk).await.is_err();
            if !failed {
                sent += chunk.len() as u64;
            }
        }
        if failed {
            eprintln!("hostile: the client stopped reading the large answer after {sent} bytes");
        } else {
            eprintln!(
                "hostile: FINDING [bounds] the client read all {sent} bytes of one line: it has no bound on a frame's size"
            );
        }
        return Ok(());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What a client makes the hostile server note is bounded by count and by length.
    #[test]
    fn findings_and_events_are_bounded_in_count_and_length() {
        let h = Hostile {
            scenario: Scenario::AsAtUnspecified,
            base: "http://127.0.0.1:1".into(),
            trap: "http://0.0.0.0:2".into(),
            observed: Mutex::default(),
            issued: AtomicUsize::new(0),
            authorizations: AtomicUsize::new(0),
            challenged: Mutex::default(),
            codes: Mutex::default(),
        };
        for i in 0..MAX_KEPT + 50 {
            h.finding("SEC-SSRF-3", format!("{i} {}", "x".repeat(10_000)));
            h.event("y".repeat(10_000));
        }
        let r = h.report();
        assert_eq!(r["findings"].as_array().unwrap().len(), MAX_KEPT);
        assert_eq!(r["events"].as_array().unwrap().len(), MAX_KEPT);
        let first = r["findings"][0]["what"].as_str().unwrap();
        assert_eq!(
            first.chars().count(),
            MAX_NOTE_CHARS + 1,
            "cut, with an ellipsis"
        );
    }
}
