//! Running cases: the connection each starts on, its steps, the judging of every answer, and
//! after each case the proof of life (a ping answered in the session, the process still
//! running, the endpoint still answering).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_types::methods;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::Problem;
use super::build::{self, PROMPT, TOOL, URI, Wire, init_params};
use super::case::{Answer, Case, Expect, HttpProbe, HttpWant, SentId, Start, Step};
use super::http::{self, Endpoint, Outcome, Read, Reply, SessionHeaders};
use super::judge::{self, Declared, Rx};
use super::stdio::{Line, Recv, StdioLink};

/// Added to the first wait on a new process: a server may take seconds to start.
const STARTUP_GRACE: Duration = Duration::from_secs(10);
/// The most problems reported for one case (a batch of a thousand requests may break a rule a
/// thousand times).
const MAX_PROBLEMS: usize = 10;
/// Frames longer than this hold no placeholder (the deepest frame that has one is 600 KB).
const PLACEHOLDER_SCAN: usize = 1 << 20;
/// How many ids whose answers may still come late are remembered.
const LATE_IDS: usize = 512;

/// What the server told about itself when the run began.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// The capabilities of its `initialize` result.
    pub(crate) caps: Value,
    /// An HTTP server that issued no session id.
    pub(crate) stateless: bool,
    /// A tool it lists.
    pub(crate) tool: Option<String>,
    /// A prompt it lists.
    pub(crate) prompt: Option<String>,
    /// A resource it lists.
    pub(crate) uri: Option<String>,
}

impl Declared for Facts {
    fn declares(&self, cap: &str) -> bool {
        let pointer = format!("/{}", cap.replace('.', "/"));
        self.caps
            .pointer(&pointer)
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false))
    }
}

impl Facts {
    /// The case with the placeholders for a tool, prompt and resource replaced by the server's
    /// own (or by names no server has, when it lists none).
    pub(crate) fn resolve(&self, case: &mut Case) {
        let names = [
            (TOOL, self.tool.as_deref().unwrap_or("fz_no_such_tool")),
            (
                PROMPT,
                self.prompt.as_deref().unwrap_or("fz_no_such_prompt"),
            ),
            (URI, self.uri.as_deref().unwrap_or("fz://no/such/resource")),
        ];
        let fill = |bytes: &mut Vec<u8>| {
            // The placeholders stand in small frames; the oversized ones are not searched.
            if bytes.len() > PLACEHOLDER_SCAN {
                return;
            }
            for (mark, name) in names {
                let quoted = format!("\"{mark}\"");
                if find(bytes, quoted.as_bytes()).is_some() {
                    let with = json!(name).to_string();
                    *bytes = replace_all(bytes, quoted.as_bytes(), with.as_bytes());
                }
            }
        };
        for step in &mut case.steps {
            match step {
                Step::Send { parts, .. } => parts.iter_mut().for_each(fill),
                Step::Http(p) => fill(&mut p.body),
                Step::Await => {}
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn replace_all(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut rest = hay;
    while let Some(i) = find(rest, from) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(to);
        rest = &rest[i + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// What a run talks to.
#[derive(Debug, Clone)]
pub(crate) enum Server {
    /// A command spawned per connection.
    Stdio(String),
    /// A Streamable HTTP endpoint.
    Http(Endpoint),
}

impl Server {
    pub(crate) fn wire(&self) -> Wire {
        match self {
            Server::Stdio(_) => Wire::Stdio,
            Server::Http(_) => Wire::Http,
        }
    }
}

/// One connection (stdio: a process; HTTP: a session, or none yet).
#[derive(Debug)]
enum Conn {
    Stdio(Box<StdioConn>),
    Http(HttpConn),
}

#[derive(Debug)]
struct StdioConn {
    link: StdioLink,
    /// Responses received and not yet judged.
    pool: Vec<Rx>,
    /// Problems seen on the way (lines that are not frames, malformed messages).
    notes: Vec<Problem>,
    /// Answers owed to requests the server sent.
    owed: Vec<String>,
    /// Whether anything came yet (the first wait covers the start-up).
    heard: bool,
    syncs: u64,
    /// The version the handshake agreed on.
    negotiated: Option<String>,
    /// Errors without id that earlier frames allowed and that may still come.
    may_come: Vec<&'static [i64]>,
}

#[derive(Debug)]
struct HttpConn {
    endpoint: Endpoint,
    session: SessionHeaders,
    /// Whether the session was initialized by the fuzzer (so it is ended with DELETE).
    opened: bool,
}

impl Conn {
    fn negotiated(&self) -> Option<&str> {
        match self {
            Conn::Stdio(s) => s.negotiated.as_deref(),
            Conn::Http(h) => h.session.version.as_deref(),
        }
    }
}

/// The connection kept between cases, with the version its `initialize` offered.
#[derive(Debug)]
struct Kept {
    conn: Conn,
    offered: &'static str,
}

/// Runs cases one after another against one server.
#[derive(Debug)]
pub(crate) struct Runner {
    server: Server,
    timeout: Duration,
    facts: Facts,
    kept: Option<Kept>,
    /// Ids whose answers may still arrive (requests cancelled at once, reused ids).
    late: Vec<SentId>,
    /// Requests the runner itself has sent (handshakes, lists, pings), for their ids.
    calls: AtomicU64,
}

/// How one case went.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ran {
    /// What went wrong.
    pub(crate) problems: Vec<Problem>,
    /// Why the case did not apply, when it did not.
    pub(crate) skipped: Option<String>,
}

impl Ran {
    fn skipped(why: String) -> Ran {
        Ran {
            problems: Vec::new(),
            skipped: Some(why),
        }
    }
}

/// An HTTP request in flight: its task and how to judge what it gives.
struct Pending {
    task: JoinHandle<Outcome>,
    judge: Judge,
}

enum Judge {
    /// A POSTed frame, judged by its answers (or, lenient, by its status only).
    Frame { expects: Vec<Expect>, lenient: bool },
    /// A hand-written request, judged by its status (and its answers when served).
    Probe(Box<HttpProbe>),
}

impl Pending {
    /// Starts the exchange and returns once its answer's head is in (or it has ended), so that
    /// the frames of a case reach the server in order.
    async fn start(
        endpoint: &Endpoint,
        wire: http::Wire,
        ids: Vec<SentId>,
        head_only: bool,
        timeout: Duration,
        judge: Judge,
    ) -> Pending {
        let (tx, rx) = oneshot::channel();
        let read = Read {
            ids,
            head_only,
            deadline: Instant::now() + timeout,
        };
        let endpoint = endpoint.clone();
        let task = tokio::spawn(async move { http::exchange(&endpoint, wire, read, tx).await });
        let _ = rx.await;
        Pending { task, judge }
    }
}

/// One exchange, waited for whole.
async fn exchange(
    endpoint: &Endpoint,
    wire: http::Wire,
    ids: Vec<SentId>,
    head_only: bool,
    timeout: Duration,
) -> Outcome {
    let (tx, _rx) = oneshot::channel();
    let read = Read {
        ids,
        head_only,
        deadline: Instant::now() + timeout,
    };
    http::exchange(endpoint, wire, read, tx).await
}

/// The ids whose answers a POST waits for on an SSE stream.
fn awaited_ids(expects: &[Expect]) -> Vec<SentId> {
    expects
        .iter()
        .filter(|e| e.required())
        .filter_map(|e| e.id.clone())
        .collect()
}

/// Whether `rx` is the response to `id`.
fn is_answer(rx: &Rx, id: &SentId) -> bool {
    rx.value.get("method").is_none()
        && rx
            .id
            .as_deref()
            .is_some_and(|raw| judge::same_exact(id, raw))
}

/// The last 300 characters of `text`.
fn tail(text: &str) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(300)).collect()
}

fn describe_outcome(o: &Outcome) -> String {
    match o {
        Outcome::Reply(r) => r.brief(),
        Outcome::Closed(why) => why.clone(),
        Outcome::Timeout => "no HTTP answer (timeout)".into(),
        Outcome::Unreachable(why) => format!("the endpoint is unreachable: {why}"),
    }
}

impl StdioConn {
    /// When a wait that starts now ends (later for a new process, which may still be starting).
    fn deadline(&self, timeout: Duration) -> Instant {
        let grace = if self.heard {
            Duration::ZERO
        } else {
            STARTUP_GRACE
        };
        Instant::now() + timeout + grace
    }

    /// Takes one line from the server into the pool; false on the deadline or the end of output.
    async fn receive(&mut self, deadline: Instant) -> bool {
        match self.link.recv(deadline).await {
            Recv::Line(line) => {
                self.heard = true;
                self.ingest(line);
                true
            }
            Recv::Timeout | Recv::Closed => false,
        }
    }

    fn ingest(&mut self, line: Line) {
        let text = match line {
            Line::Bad(why) => {
                self.notes.push(Problem::new(
                    "ST-2",
                    format!("the server wrote a line that is not a frame: {why}"),
                ));
                return;
            }
            Line::Text(text) => text,
        };
        let Some(messages) = Rx::parse_all(&text) else {
            self.notes.push(Problem::new(
                "ST-2",
                format!(
                    "the server wrote a line that is not JSON: {}",
                    super::case::show_bytes(text.as_bytes())
                ),
            ));
            return;
        };
        for rx in messages {
            if let Some(p) = judge::shape_problem(&rx) {
                self.notes.push(p);
            }
            if rx.value.get("method").is_some() {
                if let Some(answer) = http::answer_server_request(&rx.value) {
                    self.owed.push(answer);
                }
            } else {
                self.pool.push(rx);
            }
        }
    }

    /// How the server exited, with the end of its stderr, if it has exited.
    async fn gone(&mut self) -> Option<String> {
        let status = self.link.wait_exit(Duration::from_millis(300)).await?;
        Some(match self.link.stderr_tail() {
            t if t.is_empty() => format!("the server exited ({status})"),
            t => format!(
                "the server exited ({status}); its stderr ends: {}",
                tail(&t)
            ),
        })
    }

    /// Answers the requests the server sent.
    async fn pay(&mut self, timeout: Duration) {
        for answer in std::mem::take(&mut self.owed) {
            let _ = self
                .link
                .write(format!("{answer}\n").as_bytes(), timeout)
                .await;
        }
    }

    /// A ping in the session; every frame before its answer goes to the pool. True when answered.
    async fn sync(&mut self, timeout: Duration) -> bool {
        self.syncs += 1;
        let id = SentId::of(&json!(format!("fz-sync-{}", self.syncs)));
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{}"}}"#,
            id.0,
            methods::PING
        );
        if self
            .link
            .write(format!("{text}\n").as_bytes(), timeout)
            .await
            .is_err()
        {
            return false;
        }
        let deadline = self.deadline(timeout);
        loop {
            if let Some(i) = self.pool.iter().position(|rx| is_answer(rx, &id)) {
                let answer = self.pool.remove(i);
                return answer.value.get("result").is_some();
            }
            if !self.receive(deadline).await {
                return false;
            }
            self.pay(timeout).await;
        }
    }
}

impl HttpConn {
    /// Takes the session id and version from an answer to `initialize`.
    fn adopt(&mut self, r: &Reply) {
        let version = r.messages.iter().find_map(|m| {
            m.value
                .pointer("/result/protocolVersion")
                .and_then(Value::as_str)
                .filter(|_| m.value.pointer("/result/capabilities").is_some())
        });
        if let Some(v) = version {
            if self.session.id.is_none() {
                self.session.id.clone_from(&r.session);
            }
            if self.session.version.is_none() {
                self.session.version = Some(v.to_owned());
            }
            self.opened = true;
        }
    }
}

impl Runner {
    /// A runner for `server`; [`discover`](Self::discover) first.
    pub(crate) fn new(server: Server, timeout: Duration) -> Runner {
        Runner {
            server,
            timeout,
            facts: Facts::default(),
            kept: None,
            late: Vec::new(),
            calls: AtomicU64::new(0),
        }
    }

    /// What discovery found.
    pub(crate) fn facts(&self) -> &Facts {
        &self.facts
    }

    fn waited(&self) -> String {
        format!("waited {} s", self.timeout.as_secs_f32())
    }

    /// Opens a session, reads the server's capabilities and the first tool, prompt and resource
    /// it lists, and closes it.
    ///
    /// # Errors
    /// The server could not be started or reached, or did not complete a handshake.
    pub(crate) async fn discover(&mut self) -> Result<(), String> {
        let mut conn = self.open()?;
        let init = match self.handshake(&mut conn, build::LATEST).await {
            Ok(init) => init,
            Err(e) => {
                self.close(conn).await;
                return Err(e);
            }
        };
        self.facts.caps = init.get("capabilities").cloned().unwrap_or(json!({}));
        if let Conn::Http(h) = &conn {
            self.facts.stateless = h.session.id.is_none();
        }
        let lists = [
            ("tools", methods::TOOLS_LIST, "/result/tools/0/name"),
            ("prompts", methods::PROMPTS_LIST, "/result/prompts/0/name"),
            (
                "resources",
                methods::RESOURCES_LIST,
                "/result/resources/0/uri",
            ),
        ];
        for (cap, method, pointer) in lists {
            if !self.facts.declares(cap) {
                continue;
            }
            let found = self
                .call(&mut conn, method, json!({}))
                .await
                .ok()
                .and_then(|rx| {
                    rx.value
                        .pointer(pointer)
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            match cap {
                "tools" => self.facts.tool = found,
                "prompts" => self.facts.prompt = found,
                _ => self.facts.uri = found,
            }
        }
        self.close(conn).await;
        Ok(())
    }

    fn open(&self) -> Result<Conn, String> {
        match &self.server {
            Server::Stdio(cmd) => {
                let link =
                    StdioLink::spawn(cmd).map_err(|e| format!("cannot start `{cmd}`: {e}"))?;
                Ok(Conn::Stdio(Box::new(StdioConn {
                    link,
                    pool: Vec::new(),
                    notes: Vec::new(),
                    owed: Vec::new(),
                    heard: false,
                    syncs: 0,
                    negotiated: None,
                    may_come: Vec::new(),
                })))
            }
            Server::Http(endpoint) => Ok(Conn::Http(HttpConn {
                endpoint: endpoint.clone(),
                session: SessionHeaders::default(),
                opened: false,
            })),
        }
    }

    async fn close(&self, conn: Conn) {
        match conn {
            Conn::Stdio(s) => s.link.close().await,
            Conn::Http(h) => {
                if h.opened && h.session.id.is_some() {
                    let p = HttpProbe::bodiless("DELETE", HttpWant::NotBroken, "HT");
                    let wire = http::encode(&h.endpoint, &h.session, &p);
                    let _ = exchange(&h.endpoint, wire, Vec::new(), true, self.timeout).await;
                }
            }
        }
    }

    /// Sends a request and waits for its response (requests and notifications from the server
    /// on the way are answered or passed over).
    async fn call(&self, conn: &mut Conn, method: &str, params: Value) -> Result<Rx, String> {
        // Ids are never reused in a session (JR-5): a strict server may refuse a reused one.
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let id = json!(format!("fz-call-{n}"));
        let text = build::request(&id, method, Some(params));
        let sent = SentId::of(&id);
        match conn {
            Conn::Stdio(s) => {
                if let Err(e) = s
                    .link
                    .write(format!("{text}\n").as_bytes(), self.timeout)
                    .await
                {
                    return Err(s.gone().await.unwrap_or(e));
                }
                let deadline = s.deadline(self.timeout);
                loop {
                    if let Some(i) = s.pool.iter().position(|rx| is_answer(rx, &sent)) {
                        return Ok(s.pool.remove(i));
                    }
                    if !s.receive(deadline).await {
                        let why = s.gone().await.unwrap_or_else(|| self.waited());
                        return Err(format!("no answer to {method} ({why})"));
                    }
                    s.pay(self.timeout).await;
                }
            }
            Conn::Http(h) => {
                let wire = http::post(&h.endpoint, &h.session, text.as_bytes());
                match exchange(&h.endpoint, wire, vec![sent.clone()], false, self.timeout).await {
                    Outcome::Reply(r) => {
                        h.adopt(&r);
                        r.messages
                            .iter()
                            .find(|rx| is_answer(rx, &sent))
                            .cloned()
                            .ok_or_else(|| format!("{method}: {}", r.brief()))
                    }
                    other => Err(format!("{method}: {}", describe_outcome(&other))),
                }
            }
        }
    }

    /// `initialize` offering `version`, then `notifications/initialized`; the result.
    async fn handshake(&self, conn: &mut Conn, version: &str) -> Result<Value, String> {
        let answer = self
            .call(conn, methods::INITIALIZE, init_params(version))
            .await
            .map_err(|e| format!("initialize failed: {e}"))?;
        let Some(result) = answer.value.get("result").cloned() else {
            return Err(format!("initialize failed: {}", answer.brief()));
        };
        let negotiated = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(version)
            .to_owned();
        let note = build::notification(methods::NOTIFICATIONS_INITIALIZED, None);
        match conn {
            Conn::Stdio(s) => {
                s.negotiated = Some(negotiated);
                s.link
                    .write(format!("{note}\n").as_bytes(), self.timeout)
                    .await?;
            }
            Conn::Http(h) => {
                h.opened = true;
                h.session.version = Some(negotiated);
                let wire = http::post(&h.endpoint, &h.session, note.as_bytes());
                let _ = exchange(&h.endpoint, wire, Vec::new(), false, self.timeout).await;
            }
        }
        Ok(result)
    }

    /// Ends the run: closes the connection kept.
    pub(crate) async fn finish(&mut self) {
        if let Some(k) = self.kept.take() {
            self.close(k.conn).await;
        }
    }

    /// The connection a case starts on: `Ok(None)` when the case asks for a version the server
    /// does not speak.
    async fn start(&mut self, start: &Start) -> Result<Option<Conn>, Problem> {
        let (version, exact) = match start {
            Start::Fresh => {
                if let Some(k) = self.kept.take() {
                    self.close(k.conn).await;
                }
                return self
                    .open()
                    .map(Some)
                    .map_err(|e| Problem::new("ST", format!("a new connection failed: {e}")));
            }
            Start::Ready { version, exact } => (*version, *exact),
        };
        let conn = match self.kept.take() {
            Some(k) if k.offered == version => k.conn,
            other => {
                if let Some(k) = other {
                    self.close(k.conn).await;
                }
                let mut conn = self
                    .open()
                    .map_err(|e| Problem::new("ST", format!("a new connection failed: {e}")))?;
                if let Err(e) = self.handshake(&mut conn, version).await {
                    let problem = Problem::new(
                        "LC-1",
                        format!("a new session could not be initialized: {e}"),
                    );
                    self.close(conn).await;
                    return Err(problem);
                }
                conn
            }
        };
        if exact && conn.negotiated() != Some(version) {
            self.kept = Some(Kept {
                conn,
                offered: version,
            });
            return Ok(None);
        }
        Ok(Some(conn))
    }

    /// Remembers the ids of `expects` whose answers may come after the case is judged.
    fn remember_late(&mut self, expects: &[Expect]) {
        for e in expects {
            if let (Some(id), Answer::Maybe | Answer::NoResult(_) | Answer::Collision) =
                (&e.id, &e.answer)
            {
                self.late.push(id.clone());
            }
        }
        let excess = self.late.len().saturating_sub(LATE_IDS);
        self.late.drain(..excess);
    }

    /// Drops from `pool` the late answers of earlier requests (not awaited by `expects`).
    fn drop_late(&self, pool: &mut Vec<Rx>, expects: &[Expect]) {
        pool.retain(|rx| {
            let Some(raw) = &rx.id else { return true };
            let awaited = expects
                .iter()
                .any(|e| e.id.as_ref().is_some_and(|id| judge::same_exact(id, raw)));
            awaited || !self.late.iter().any(|id| judge::same_exact(id, raw))
        });
    }

    /// Runs one case (its placeholders already resolved).
    pub(crate) async fn run(&mut self, case: &Case) -> Ran {
        if case.needs_session && self.facts.stateless {
            return Ran::skipped("the server is stateless (no session ids)".into());
        }
        let mut conn = match self.start(&case.start).await {
            Ok(Some(conn)) => conn,
            Ok(None) => {
                let version = match &case.start {
                    Start::Ready { version, .. } => *version,
                    Start::Fresh => "",
                };
                return Ran::skipped(format!("the server does not speak {version}"));
            }
            Err(problem) => {
                return Ran {
                    problems: vec![problem],
                    skipped: None,
                };
            }
        };
        let mut problems = Vec::new();
        let mut segment: Vec<Expect> = Vec::new();
        let mut pending: Vec<Pending> = Vec::new();
        let mut answered_sync = None;
        for step in &case.steps {
            match step {
                Step::Await => {
                    self.settle(&mut conn, &mut segment, &mut pending, &mut problems, false)
                        .await;
                }
                Step::Send {
                    parts,
                    pause_ms,
                    expects,
                    http_lenient,
                } => {
                    self.remember_late(expects);
                    self.send(
                        &mut conn,
                        parts,
                        *pause_ms,
                        expects,
                        *http_lenient,
                        &mut pending,
                    )
                    .await
                    .unwrap_or_else(|p| problems.push(p));
                    if matches!(conn, Conn::Stdio(_)) {
                        segment.extend(expects.iter().cloned());
                    }
                }
                Step::Http(p) => {
                    self.remember_late(&p.expects);
                    if let Conn::Http(h) = &conn {
                        let wire = http::encode(&h.endpoint, &h.session, p);
                        let head_only = p.method == "GET" || p.method == "HEAD";
                        let judge = Judge::Probe(Box::new(p.clone()));
                        let ids = awaited_ids(&p.expects);
                        pending.push(
                            Pending::start(&h.endpoint, wire, ids, head_only, self.timeout, judge)
                                .await,
                        );
                    }
                }
            }
        }
        if let Some(sync) = self
            .settle(&mut conn, &mut segment, &mut pending, &mut problems, true)
            .await
        {
            answered_sync = Some(sync);
        }
        problems.extend(self.alive(&mut conn, answered_sync).await);
        if let Conn::Stdio(s) = &mut conn {
            problems.append(&mut s.notes);
        }
        if problems.len() > MAX_PROBLEMS {
            let more = problems.len() - (MAX_PROBLEMS - 1);
            problems.truncate(MAX_PROBLEMS - 1);
            problems.push(Problem::new(
                "…",
                format!("and {more} more problems in this case, not shown"),
            ));
        }
        // A connection that may still owe an error without id (for a frame the server may also
        // pass over) is not reused: the error, if it comes, must not answer the next case.
        let owes = matches!(&conn, Conn::Stdio(s) if !s.may_come.is_empty());
        match &case.start {
            Start::Ready { version, .. } if problems.is_empty() && !owes => {
                self.kept = Some(Kept {
                    conn,
                    offered: version,
                });
            }
            _ => self.close(conn).await,
        }
        Ran {
            problems,
            skipped: None,
        }
    }

    /// Sends one `Send` step: written to stdin, or POSTed (the exchange left in `pending`).
    async fn send(
        &self,
        conn: &mut Conn,
        parts: &[Vec<u8>],
        pause_ms: u64,
        expects: &[Expect],
        lenient: bool,
        pending: &mut Vec<Pending>,
    ) -> Result<(), Problem> {
        match conn {
            Conn::Stdio(s) => {
                for (i, part) in parts.iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                    }
                    s.link
                        .write(part, self.timeout)
                        .await
                        .map_err(|e| Problem::new("ST", e))?;
                }
                Ok(())
            }
            Conn::Http(h) => {
                let mut body = parts.concat();
                if body.last() == Some(&b'\n') {
                    body.pop();
                }
                let wire = http::post(&h.endpoint, &h.session, &body);
                let judge = Judge::Frame {
                    expects: expects.to_vec(),
                    lenient,
                };
                let ids = awaited_ids(expects);
                // The session an initialize opens is taken up when the case awaits its answer.
                pending
                    .push(Pending::start(&h.endpoint, wire, ids, false, self.timeout, judge).await);
                Ok(())
            }
        }
    }

    /// Waits for the answers of the steps so far and judges them. Over stdio, the last segment
    /// ends with a ping in the session (everything before its answer is judged with the case);
    /// returns whether that ping was answered. Over HTTP each exchange is judged on its own.
    async fn settle(
        &mut self,
        conn: &mut Conn,
        segment: &mut Vec<Expect>,
        pending: &mut Vec<Pending>,
        problems: &mut Vec<Problem>,
        last: bool,
    ) -> Option<bool> {
        let waited = self.waited();
        let expects = std::mem::take(segment);
        let s = match conn {
            Conn::Stdio(s) => s,
            Conn::Http(h) => {
                for p in std::mem::take(pending) {
                    let outcome = p.task.await.unwrap_or(Outcome::Timeout);
                    if let Outcome::Reply(r) = &outcome {
                        h.adopt(r);
                        for m in &r.messages {
                            if let Some(answer) = http::answer_server_request(&m.value) {
                                let wire = http::post(&h.endpoint, &h.session, answer.as_bytes());
                                let _ =
                                    exchange(&h.endpoint, wire, Vec::new(), false, self.timeout)
                                        .await;
                            }
                        }
                    }
                    judge_http(p.judge, outcome, &waited, &self.facts, problems);
                }
                return None;
            }
        };
        let deadline = s.deadline(self.timeout);
        while !judge::complete(&expects, &s.pool) {
            if !s.receive(deadline).await {
                break;
            }
            s.pay(self.timeout).await;
        }
        let sync = if last {
            Some(s.sync(self.timeout).await)
        } else {
            None
        };
        let mut pool = std::mem::take(&mut s.pool);
        self.drop_late(&mut pool, &expects);
        let late = std::mem::take(&mut s.may_come);
        let judged = judge::judge(&expects, &pool, &self.facts, &waited, &late);
        problems.extend(judged.problems);
        s.may_come = judged.may_come;
        let excess = s.may_come.len().saturating_sub(LATE_IDS);
        s.may_come.drain(..excess);
        sync
    }

    /// After a case: the session still answers ping, the process still runs, the endpoint
    /// still answers. `sync` is the stdio ping's outcome, already known.
    async fn alive(&self, conn: &mut Conn, sync: Option<bool>) -> Vec<Problem> {
        match conn {
            Conn::Stdio(s) => {
                if sync == Some(true) {
                    return Vec::new();
                }
                match s.gone().await {
                    Some(exited) => vec![Problem::new("ST", exited)],
                    None => vec![Problem::new(
                        "UT-1",
                        format!(
                            "the server no longer answers ping on this connection ({})",
                            self.waited()
                        ),
                    )],
                }
            }
            Conn::Http(h) => {
                let in_session = h.session.id.is_some() || (self.facts.stateless && h.opened);
                if in_session {
                    match self.call(conn, methods::PING, json!({})).await {
                        Ok(rx) if rx.value.get("result").is_some() => return Vec::new(),
                        Ok(rx) => {
                            return vec![Problem::new(
                                "UT-1",
                                format!("ping in the session got {}", rx.brief()),
                            )];
                        }
                        Err(e) => {
                            let fresh = self.fresh_session_works().await;
                            return vec![match fresh {
                                Ok(()) => Problem::new(
                                    "UT-1",
                                    format!("the session no longer answers ping: {e}"),
                                ),
                                Err(down) => Problem::new(
                                    "ST",
                                    format!("the server no longer answers: {down}"),
                                ),
                            }];
                        }
                    }
                }
                match self.fresh_session_works().await {
                    Ok(()) => Vec::new(),
                    Err(down) => vec![Problem::new(
                        "ST",
                        format!("the server no longer answers: {down}"),
                    )],
                }
            }
        }
    }

    /// Whether a new session can be opened and answers ping.
    async fn fresh_session_works(&self) -> Result<(), String> {
        let mut conn = self.open()?;
        let outcome = match self.handshake(&mut conn, build::LATEST).await {
            Ok(_) => self
                .call(&mut conn, methods::PING, json!({}))
                .await
                .and_then(|rx| {
                    if rx.value.get("result").is_some() {
                        Ok(())
                    } else {
                        Err(format!("ping got {}", rx.brief()))
                    }
                }),
            Err(e) => Err(e),
        };
        self.close(conn).await;
        outcome
    }
}

/// Judges one HTTP exchange: its status, and its answers (a response travels on the stream of
/// the POST that carried its request, so each POST's answers are judged on their own).
fn judge_http(
    judge: Judge,
    outcome: Outcome,
    waited: &str,
    facts: &Facts,
    problems: &mut Vec<Problem>,
) {
    let answers = |expects: &[Expect], r: &Reply, problems: &mut Vec<Problem>| {
        for rx in &r.messages {
            if let Some(p) = judge::shape_problem(rx) {
                problems.push(p);
            }
        }
        let pool: Vec<Rx> = r
            .messages
            .iter()
            .filter(|rx| rx.value.get("method").is_none())
            .cloned()
            .collect();
        let context = format!("the POST got {}", r.brief());
        problems.extend(judge::judge(expects, &pool, facts, &context, &[]).problems);
    };
    match judge {
        Judge::Frame {
            expects: mut frame,
            lenient,
        } => {
            let rule = frame.first().map_or("HT", |e| e.rule);
            let r = match outcome {
                Outcome::Reply(r) => r,
                Outcome::Timeout => {
                    problems.push(Problem::new(rule, format!("no HTTP answer ({waited})")));
                    return;
                }
                other => {
                    problems.push(Problem::new("HT", describe_outcome(&other)));
                    return;
                }
            };
            if r.status >= 500 {
                problems.push(Problem::new(
                    "HT",
                    format!("a server error for a client's frame: {}", r.brief()),
                ));
                return;
            }
            if lenient {
                return;
            }
            let client_error = (400..500).contains(&r.status);
            let needs_answer = frame.iter().any(Expect::required);
            if !needs_answer && frame.iter().all(|e| e.id.is_none()) {
                // A notification or a response: 202 with no body, or refused (HT-7, HT-8).
                if !(client_error || (r.status == 202 && r.empty_body())) {
                    problems.push(Problem::new(
                        "HT-7",
                        format!(
                            "a notification or response must get 202 with no body (or a 4xx): got {}",
                            r.brief()
                        ),
                    ));
                }
            } else if !client_error && r.status != 200 && needs_answer {
                // A request's answer comes with 200 (HT-9); a 202 took it for a notification.
                let due = frame.iter().find(|e| e.required()).map_or_else(
                    || ("HT-9", "an answer".to_owned()),
                    |e| (e.rule, judge::expected(&e.answer, facts)),
                );
                problems.push(Problem::new(
                    due.0,
                    format!(
                        "expected {} (with HTTP 200, or a 4xx refusal), got {}",
                        due.1,
                        r.brief()
                    ),
                ));
                return;
            } else if r.status == 200
                && !(r.media == "application/json" || r.media == "text/event-stream")
            {
                problems.push(Problem::new(
                    "HT-9",
                    format!(
                        "a request is answered as application/json or text/event-stream: got {}",
                        r.brief()
                    ),
                ));
                return;
            }
            if client_error {
                // An HTTP refusal refuses a batch (SPEC-NOTES §2.2); a refused notification or
                // response may carry an error without id (HT-8), which answers nothing.
                frame.retain(|e| !matches!(e.answer, Answer::BatchRefused(_)));
                if !frame.iter().any(Expect::required) {
                    return;
                }
            }
            answers(&frame, &r, problems);
        }
        Judge::Probe(p) => {
            let served = |r: &Reply| (200..300).contains(&r.status);
            let refused = |r: &Reply| (400..500).contains(&r.status);
            let fine = match (&p.want, &outcome) {
                (_, Outcome::Timeout) => Err(format!("no HTTP answer ({waited})")),
                (_, Outcome::Unreachable(why)) => {
                    Err(format!("the endpoint is unreachable: {why}"))
                }
                (HttpWant::RefusedOrClosed | HttpWant::NotBroken, Outcome::Closed(_)) => Ok(()),
                (_, Outcome::Closed(why)) => Err(why.clone()),
                (HttpWant::Status(list), Outcome::Reply(r)) if list.contains(&r.status) => Ok(()),
                (HttpWant::Status(list), Outcome::Reply(r)) => Err(format!(
                    "expected HTTP {}, got {}",
                    list.iter()
                        .map(u16::to_string)
                        .collect::<Vec<_>>()
                        .join(" or "),
                    r.brief()
                )),
                (HttpWant::ServedOrRefused, Outcome::Reply(r)) if served(r) || refused(r) => Ok(()),
                (HttpWant::Served, Outcome::Reply(r)) if served(r) => Ok(()),
                (HttpWant::RefusedOrClosed, Outcome::Reply(r)) if refused(r) => Ok(()),
                (HttpWant::NotBroken, Outcome::Reply(r)) if r.status < 500 || r.status == 501 => {
                    if p.method == "GET" && r.status == 200 && r.media != "text/event-stream" {
                        Err(format!(
                            "GET must open an SSE stream or be refused (HT-13): got {}",
                            r.brief()
                        ))
                    } else {
                        Ok(())
                    }
                }
                (want, Outcome::Reply(r)) => Err(format!(
                    "expected {}, got {}",
                    match want {
                        HttpWant::Served => "the request served",
                        HttpWant::ServedOrRefused => "the request served or refused with a 4xx",
                        HttpWant::RefusedOrClosed => "a 4xx refusal or the connection closed",
                        _ => "no server error",
                    },
                    r.brief()
                )),
            };
            if let Err(why) = fine {
                problems.push(Problem::new(p.rule, why));
                return;
            }
            if let Outcome::Reply(r) = &outcome
                && served(r)
                && !p.expects.is_empty()
            {
                answers(&p.expects, r, problems);
            }
        }
    }
}
