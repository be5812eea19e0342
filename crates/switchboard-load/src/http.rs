//! The Streamable HTTP side: K keep-alive HTTP/1.1 connections (TCP_NODELAY), one request in
//! flight on each; every POST carries `Accept: application/json, text/event-stream`, and its
//! answer is read from a JSON body or from the `data:` of an SSE event carrying our id.
//!
//! Calls: each connection opens its own session (the default), or all of them share one
//! (`--one-session`); in the 2026-07-28 era there is no session and no handshake, and every call
//! POST carries `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` (the body's `_meta` carries
//! the same version). Sessions: S sessions opened (initialize + initialized, and a call with
//! `--call`) over the K connections, then all deleted; the server's RSS is read before, between
//! and after. Churn: S sessions opened at a steady rate and abandoned (never deleted), the
//! server's RSS read at intervals: the server must reap them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use anyhow::{Context as _, anyhow, bail};
use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use http::{HeaderName, HeaderValue, Method, Request, Response, StatusCode, Uri};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming as Body;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

use crate::list::ListPlan;
use crate::procfs;
use crate::report::{Counts, Percentiles, Report};
use crate::wire::{self, CallTemplate, Era, INIT_ID, Incoming, Outcome, SseScanner};
use crate::{CallPlan, SessionPlan, Target};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
const NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");
const DPOP_HEADER: HeaderName = HeaderName::from_static("dpop");
/// The largest body read while looking for an answer.
const MAX_BODY: usize = 64 << 20;

/// Where to connect and what to put in the request line and `Host`, and the credentials every
/// request carries.
#[derive(Debug)]
struct Endpoint {
    addr: String,
    host: HeaderValue,
    path: Uri,
    auth: Option<Arc<Auth>>,
}

/// What each request carries for a server that requires authorization (calls mode).
#[derive(Debug)]
pub(crate) enum Auth {
    /// `Authorization: Bearer <token>` on every request.
    Bearer(HeaderValue),
    /// `Authorization: DPoP <token>` on every request, with the next unused proof for its
    /// method as `DPoP`: a server refuses a proof it has seen, so each is sent once, in order.
    Dpop {
        authorization: HeaderValue,
        post: Proofs,
        delete: Proofs,
    },
}

/// One method's DPoP proofs, and how many are used.
#[derive(Debug, Default)]
pub(crate) struct Proofs {
    proofs: Vec<HeaderValue>,
    next: AtomicUsize,
}

impl Proofs {
    fn next(&self, method: &Method) -> anyhow::Result<HeaderValue> {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        self.proofs.get(i).cloned().with_context(|| {
            let n = self.proofs.len();
            format!("the run needs more than the {n} DPoP proofs given for {method}")
        })
    }
}

impl Auth {
    /// `--bearer TOKEN`.
    pub(crate) fn bearer(token: &str) -> anyhow::Result<Self> {
        Ok(Self::Bearer(HeaderValue::from_str(&format!(
            "Bearer {token}"
        ))?))
    }

    /// `--dpop-proofs FILE`: the bound token on the first line, then one proof a line, for a
    /// `POST`, or after `DELETE ` for a `DELETE`.
    pub(crate) fn dpop(text: &str) -> anyhow::Result<Self> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let token = lines.next().context("the proofs file is empty")?;
        let (mut post, mut delete) = (Proofs::default(), Proofs::default());
        for line in lines {
            let (list, proof) = match line.strip_prefix("DELETE ") {
                Some(proof) => (&mut delete.proofs, proof),
                None => (&mut post.proofs, line),
            };
            list.push(
                HeaderValue::from_str(proof.trim()).context("a proof is not a header value")?,
            );
        }
        Ok(Self::Dpop {
            authorization: HeaderValue::from_str(&format!("DPoP {token}"))?,
            post,
            delete,
        })
    }

    /// The headers of the next request with `method`.
    fn headers(&self, method: &Method) -> anyhow::Result<[Option<(HeaderName, HeaderValue)>; 2]> {
        Ok(match self {
            Self::Bearer(v) => [Some((AUTHORIZATION, v.clone())), None],
            Self::Dpop {
                authorization,
                post,
                delete,
            } => {
                let proofs = if method == Method::DELETE {
                    delete
                } else {
                    post
                };
                [
                    Some((AUTHORIZATION, authorization.clone())),
                    Some((DPOP_HEADER, proofs.next(method)?)),
                ]
            }
        })
    }
}

impl Endpoint {
    fn parse(url: &str) -> anyhow::Result<Self> {
        let uri: Uri = url.parse().with_context(|| format!("not a URL: {url}"))?;
        if uri.scheme_str() != Some("http") {
            bail!("only http:// URLs are supported (no TLS): {url}");
        }
        let auth = uri.authority().context("the URL has no host")?;
        let port = auth.port_u16().unwrap_or(80);
        Ok(Self {
            addr: format!("{}:{port}", auth.host()),
            host: HeaderValue::from_str(auth.as_str())?,
            path: uri.path_and_query().map_or("/", |p| p.as_str()).parse()?,
            auth: None,
        })
    }
}

/// A session: its id (if the server gave one) and the negotiated revision, ready as headers.
/// In the 2026-07-28 era, the stand-in for a session: no id, the revision of every request, and
/// the headers that mirror the call's body.
#[derive(Debug, Clone)]
struct Session {
    id: Option<HeaderValue>,
    version: HeaderValue,
    /// Headers sent on every POST (only the modern stand-in has any; it sends nothing but calls).
    mirrored: Vec<(HeaderName, HeaderValue)>,
}

impl Session {
    /// The stand-in for the calls of `template`, a modern template: `MCP-Protocol-Version`,
    /// `Mcp-Method: tools/call` and `Mcp-Name: <tool>` on every POST, no session id.
    fn modern(template: &CallTemplate) -> anyhow::Result<Self> {
        let name = HeaderValue::from_str(&template.name_header())
            .context("the tool name cannot be sent as an Mcp-Name header")?;
        Ok(Self {
            id: None,
            version: HeaderValue::from_static(wire::MODERN_VERSION),
            mirrored: vec![
                (METHOD_HEADER, HeaderValue::from_static(wire::TOOLS_CALL)),
                (NAME_HEADER, name),
            ],
        })
    }
}

/// One keep-alive connection.
struct Conn {
    ep: Arc<Endpoint>,
    send: SendRequest<Full<Bytes>>,
}

impl Conn {
    async fn open(ep: Arc<Endpoint>) -> anyhow::Result<Self> {
        let tcp = TcpStream::connect(&ep.addr)
            .await
            .with_context(|| format!("connecting to {}", ep.addr))?;
        tcp.set_nodelay(true)?;
        let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Self { ep, send })
    }

    /// Opens a new connection in place of one that the server closed.
    async fn reopen(&mut self) -> anyhow::Result<()> {
        *self = Self::open(self.ep.clone()).await?;
        Ok(())
    }

    async fn send(
        &mut self,
        method: Method,
        session: Option<&Session>,
        body: Bytes,
    ) -> anyhow::Result<Response<Body>> {
        let auth = match &self.ep.auth {
            Some(auth) => auth.headers(&method)?,
            None => [None, None],
        };
        let mut req = Request::builder()
            .method(method)
            .uri(self.ep.path.clone())
            .header(HOST, self.ep.host.clone())
            .header(
                ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            )
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in auth.into_iter().flatten() {
            req = req.header(name, value);
        }
        if let Some(s) = session {
            if let Some(id) = &s.id {
                req = req.header(SESSION_HEADER, id.clone());
            }
            req = req.header(VERSION_HEADER, s.version.clone());
            for (name, value) in &s.mirrored {
                req = req.header(name, value.clone());
            }
        }
        self.send.ready().await?;
        Ok(self.send.send_request(req.body(Full::new(body))?).await?)
    }

    /// POSTs a request and reads the answer with id `id`: its outcome and its text.
    async fn request(
        &mut self,
        session: Option<&Session>,
        body: Bytes,
        id: u64,
    ) -> anyhow::Result<(Outcome, Bytes)> {
        let resp = self.send(Method::POST, session, body).await?;
        read_answer(resp, id).await
    }

    /// `initialize` then `notifications/initialized`: a new session.
    async fn initialize(&mut self) -> anyhow::Result<Session> {
        let resp = self
            .send(Method::POST, None, wire::initialize_frame().into())
            .await?;
        let id = resp.headers().get(SESSION_HEADER).cloned();
        let (outcome, text) = read_answer(resp, INIT_ID).await?;
        if outcome != Outcome::Ok {
            bail!("initialize failed: {}", String::from_utf8_lossy(&text));
        }
        let version =
            wire::negotiated_version(&text).unwrap_or_else(|| wire::PROTOCOL_VERSION.into());
        let session = Session {
            id,
            version: HeaderValue::from_str(&version)?,
            mirrored: Vec::new(),
        };
        let resp = self
            .send(
                Method::POST,
                Some(&session),
                Bytes::from_static(wire::INITIALIZED.as_bytes()),
            )
            .await?;
        let status = resp.status();
        drain(resp).await?;
        if !status.is_success() {
            bail!("notifications/initialized answered {status}");
        }
        Ok(session)
    }

    /// DELETEs a session.
    async fn delete(&mut self, session: &Session) -> anyhow::Result<()> {
        let resp = self
            .send(Method::DELETE, Some(session), Bytes::new())
            .await?;
        let status = resp.status();
        drain(resp).await?;
        match status {
            s if s.is_success() => Ok(()),
            StatusCode::METHOD_NOT_ALLOWED => bail!("the server does not allow DELETE (405)"),
            s => bail!("DELETE answered {s}"),
        }
    }
}

/// A connection and its session, asked one request at a time (the list mode).
struct Asker {
    conn: Conn,
    session: Session,
}

impl crate::list::Exchange for Asker {
    async fn exchange(&mut self, id: u64, frame: Vec<u8>) -> anyhow::Result<(Outcome, Bytes)> {
        self.conn
            .request(Some(&self.session), Bytes::from(frame), id)
            .await
    }
}

/// The list mode over HTTP: one connection and one session, whole lists one after another.
pub(crate) async fn run_list(plan: &ListPlan, deadline: Instant) -> anyhow::Result<Report> {
    let Target::Http(url) = &plan.target else {
        bail!("not an HTTP target")
    };
    let ep = Arc::new(Endpoint::parse(url)?);
    let mut conn = timeout_at(deadline, Conn::open(ep))
        .await
        .context("connecting before --max-seconds")??;
    let session = timeout_at(deadline, conn.initialize())
        .await
        .context("initialize before --max-seconds")??;
    let mut report = Report {
        mode: "list",
        transport: "http",
        protocol: Era::Handshake.version(),
        target: url.clone(),
        warmup: Some(plan.warmup),
        in_flight: Some(1),
        sessions: Some(1),
        pid: plan.pid,
        ..Report::default()
    };
    let mut asker = Asker { conn, session };
    crate::list::measure(&mut asker, plan, plan.pid, deadline, &mut report).await;
    let Asker { mut conn, session } = asker;
    if delete_all(&mut conn, &[Arc::new(session)]).await > 0 {
        report.notes.push("the session could not be deleted".into());
    }
    Ok(report)
}

/// Reads the body to its end, discarding it.
async fn drain(resp: Response<Body>) -> anyhow::Result<()> {
    let mut body = resp.into_body();
    while let Some(f) = body.frame().await {
        f?;
    }
    Ok(())
}

/// Finds the answer to `id` in a JSON body or an SSE stream (read to its end, which a server
/// reaches once it has sent the answer).
async fn read_answer(resp: Response<Body>, id: u64) -> anyhow::Result<(Outcome, Bytes)> {
    let status = resp.status();
    let ctype = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let mut body = resp.into_body();
    if !status.is_success() {
        drain_quietly(body).await;
        bail!("HTTP {status}");
    }
    if ctype.starts_with("application/json") {
        let text = body.collect().await?.to_bytes();
        return match wire::classify(&text) {
            Incoming::Response {
                id: Some(got),
                outcome,
            } if got == id => Ok((outcome, text)),
            _ => Err(anyhow!("the JSON body is not the answer to request {id}")),
        };
    }
    if !ctype.starts_with("text/event-stream") {
        bail!("unexpected Content-Type {ctype:?}");
    }
    let mut sse = SseScanner::default();
    let mut found = None;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame?.into_data() else {
            continue;
        };
        sse.feed(&data);
        while let Some(event) = sse.next_event() {
            if let Incoming::Response {
                id: Some(got),
                outcome,
            } = wire::classify(&event)
                && got == id
                && found.is_none()
            {
                found = Some((outcome, Bytes::from(event)));
            }
        }
        if sse.pending() > MAX_BODY {
            bail!("an SSE event exceeds {MAX_BODY} bytes");
        }
    }
    found.ok_or_else(|| anyhow!("the SSE stream ended without the answer to request {id}"))
}

async fn drain_quietly(mut body: Body) {
    while let Some(Ok(_)) = body.frame().await {}
}

/// Opens K connections.
async fn connect_all(ep: &Arc<Endpoint>, k: usize, deadline: Instant) -> anyhow::Result<Vec<Conn>> {
    let mut conns = Vec::with_capacity(k);
    for _ in 0..k {
        conns.push(
            timeout_at(deadline, Conn::open(ep.clone()))
                .await
                .context("connecting before --max-seconds")??,
        );
    }
    Ok(conns)
}

/// What one connection's worker did in a phase.
struct Worked {
    conn: Option<Conn>,
    samples: Vec<u32>,
    counts: Counts,
    timed_out: bool,
    first_error: Option<String>,
}

/// What a phase did, over every connection; the connections still open come back for the next.
struct Phase {
    pairs: Vec<(Conn, Arc<Session>)>,
    samples: Vec<u32>,
    counts: Counts,
    timed_out: bool,
    first_error: Option<String>,
}

/// A worker: calls in a loop until `count` calls are taken (shared counter) or the deadline.
#[allow(clippy::too_many_arguments)]
async fn call_worker(
    mut conn: Conn,
    session: Arc<Session>,
    template: Arc<CallTemplate>,
    taken: Arc<AtomicU64>,
    ids: Arc<AtomicU64>,
    count: u64,
    record: bool,
    deadline: Instant,
) -> Worked {
    let mut w = Worked {
        conn: None,
        samples: Vec::new(),
        counts: Counts::default(),
        timed_out: false,
        first_error: None,
    };
    while taken.fetch_add(1, Ordering::Relaxed) < count {
        if Instant::now() >= deadline {
            w.timed_out = true;
            break;
        }
        let id = ids.fetch_add(1, Ordering::Relaxed);
        let body = Bytes::from(template.frame(id));
        let t = Instant::now();
        let r = timeout_at(deadline, conn.request(Some(&session), body, id)).await;
        let us = u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX);
        match r {
            Err(_) => {
                w.timed_out = true;
                break;
            }
            Ok(Ok((outcome, text))) if record => {
                w.samples.push(us);
                w.counts.add(template.judge(outcome, &text));
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                w.counts.transport += u64::from(record);
                w.first_error.get_or_insert_with(|| format!("{e:#}"));
                if conn.send.is_closed()
                    && timeout_at(deadline, conn.reopen())
                        .await
                        .ok()
                        .and_then(Result::ok)
                        .is_none()
                {
                    return w;
                }
            }
        }
    }
    w.conn = Some(conn);
    w
}

/// Runs one phase of `count` calls over every connection.
async fn phase(
    conns: Vec<(Conn, Arc<Session>)>,
    template: &Arc<CallTemplate>,
    ids: &Arc<AtomicU64>,
    count: u64,
    record: bool,
    deadline: Instant,
) -> anyhow::Result<Phase> {
    let taken = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|(conn, s)| {
            let session = s.clone();
            let task = tokio::spawn(call_worker(
                conn,
                s,
                template.clone(),
                taken.clone(),
                ids.clone(),
                count,
                record,
                deadline,
            ));
            (task, session)
        })
        .collect();
    let mut out = Phase {
        pairs: Vec::new(),
        samples: Vec::new(),
        counts: Counts::default(),
        timed_out: false,
        first_error: None,
    };
    for (task, session) in tasks {
        let w = task.await.context("a connection task failed")?;
        out.pairs.extend(w.conn.map(|c| (c, session)));
        out.samples.extend(w.samples);
        out.counts.merge(w.counts);
        out.timed_out |= w.timed_out;
        out.first_error = out.first_error.or(w.first_error);
    }
    Ok(out)
}

/// The calls mode over HTTP.
pub(crate) async fn run_calls(plan: &CallPlan, deadline: Instant) -> anyhow::Result<Report> {
    let Target::Http(url) = &plan.target else {
        bail!("not an HTTP target")
    };
    let ep = Arc::new(Endpoint {
        auth: plan.auth.clone(),
        ..Endpoint::parse(url)?
    });
    let mut conns = connect_all(&ep, plan.k, deadline).await?;
    let era = plan.template.era();
    let modern = match era {
        Era::Modern => Some(Arc::new(Session::modern(&plan.template)?)),
        Era::Handshake => None,
    };
    let mut sessions = Vec::with_capacity(plan.k);
    for (i, conn) in conns.iter_mut().enumerate() {
        if let Some(m) = &modern {
            sessions.push(m.clone());
        } else if plan.one_session && i > 0 {
            let first: &Arc<Session> = &sessions[0];
            sessions.push(first.clone());
        } else {
            let s = timeout_at(deadline, conn.initialize())
                .await
                .context("initialize before --max-seconds")??;
            sessions.push(Arc::new(s));
        }
    }
    let opened: Vec<Arc<Session>> = if modern.is_some() {
        Vec::new()
    } else if plan.one_session {
        sessions[..1].to_vec()
    } else {
        sessions.clone()
    };
    let pairs: Vec<_> = conns.into_iter().zip(sessions).collect();
    let template = Arc::new(plan.template.clone());
    let ids = Arc::new(AtomicU64::new(1));
    let mut report = Report {
        mode: "calls",
        transport: "http",
        protocol: era.version(),
        target: url.clone(),
        warmup: Some(plan.warmup),
        in_flight: Some(plan.k as u64),
        one_session: plan.one_session,
        sessions: modern.is_none().then_some(opened.len() as u64),
        pid: plan.pid,
        ..Report::default()
    };
    let sampler = plan
        .pid
        .zip(plan.rss_every)
        .map(|(pid, every)| procfs::RssSampler::start(pid, every));
    let warm = phase(pairs, &template, &ids, plan.warmup, false, deadline).await?;
    if let (Some(s), Some(pid)) = (&sampler, plan.pid) {
        s.mark_baseline(pid);
    }
    let cpu0 = plan.pid.and_then(procfs::cpu_us);
    let me = std::process::id();
    let self0 = procfs::cpu_us(me);
    let t0 = Instant::now();
    let mut measured = if warm.timed_out {
        Phase {
            samples: Vec::new(),
            ..warm
        }
    } else {
        let first_error = warm.first_error;
        let mut m = phase(warm.pairs, &template, &ids, plan.n, true, deadline).await?;
        m.first_error = m.first_error.or(first_error);
        m
    };
    report.seconds = Some(t0.elapsed().as_secs_f64());
    report.client_cpu_us = self0
        .zip(procfs::cpu_us(me))
        .map(|(a, b)| b.saturating_sub(a));
    if let Some(pid) = plan.pid {
        report.cpu_us = cpu0
            .zip(procfs::cpu_us(pid))
            .map(|(a, b)| b.saturating_sub(a));
        report.peak_rss_kib = procfs::status_kib(pid, "VmHWM");
        report.rss = sampler.map(|s| s.finish(pid));
    }
    report.counts = measured.counts;
    report.latency = Percentiles::of(&mut measured.samples);
    report.timed_out = measured.timed_out;
    if let Some(e) = measured.first_error {
        report.notes.push(format!("first transport error: {e}"));
    }
    if let Some((conn, _)) = measured.pairs.first_mut() {
        let failed = delete_all(conn, &opened).await;
        if failed > 0 {
            report
                .notes
                .push(format!("{failed} session(s) could not be deleted"));
        }
    }
    Ok(report)
}

/// Deletes sessions over one connection, with a few seconds of grace past the deadline.
async fn delete_all(conn: &mut Conn, sessions: &[Arc<Session>]) -> u64 {
    let until = Instant::now() + std::time::Duration::from_secs(2);
    let mut failed = 0;
    for s in sessions.iter().filter(|s| s.id.is_some()) {
        if !matches!(timeout_at(until, conn.delete(s)).await, Ok(Ok(()))) {
            failed += 1;
        }
    }
    failed
}

/// Opens one session on `conn` (initialize + initialized), then makes the plan's call if it has
/// one. The session is handed back even when the call failed, so that it can be deleted.
async fn open_session(
    conn: &mut Conn,
    call: Option<&CallTemplate>,
) -> (Option<Session>, Option<anyhow::Error>) {
    let session = match conn.initialize().await {
        Ok(s) => s,
        Err(e) => return (None, Some(e)),
    };
    let Some(call) = call else {
        return (Some(session), None);
    };
    match conn.request(Some(&session), call.frame(1).into(), 1).await {
        Ok((Outcome::Ok, _)) => (Some(session), None),
        Ok((_, text)) => {
            let e = anyhow!("the call failed: {}", String::from_utf8_lossy(&text));
            (Some(session), Some(e))
        }
        Err(e) => (Some(session), Some(e.context("the call failed"))),
    }
}

/// The sessions mode: S sessions opened over K connections, the RSS read, all deleted, the RSS
/// read again.
pub(crate) async fn run_sessions(plan: &SessionPlan, deadline: Instant) -> anyhow::Result<Report> {
    let (url, s, k, pid) = (&plan.url, plan.sessions, plan.k, plan.pid);
    let ep = Arc::new(Endpoint::parse(url)?);
    let conns = connect_all(&ep, k, deadline).await?;
    let mut report = Report {
        mode: "sessions",
        transport: "http",
        protocol: wire::PROTOCOL_VERSION,
        target: url.to_owned(),
        in_flight: Some(k as u64),
        pid,
        ..Report::default()
    };
    let rss = |key| pid.and_then(|p| procfs::status_kib(p, key));
    report.rss_before_kib = rss("VmRSS");
    let cpu0 = pid.and_then(procfs::cpu_us);
    let taken = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let taken = taken.clone();
            let call = plan.call.clone();
            tokio::spawn(async move {
                let (mut opened, mut errors, mut timed_out) = (Vec::new(), 0u64, false);
                let mut first_error = None;
                while taken.fetch_add(1, Ordering::Relaxed) < s {
                    match timeout_at(deadline, open_session(&mut conn, call.as_ref())).await {
                        Err(_) => {
                            timed_out = true;
                            break;
                        }
                        Ok((session, error)) => {
                            opened.extend(session);
                            let Some(e) = error else { continue };
                            errors += 1;
                            first_error.get_or_insert_with(|| format!("{e:#}"));
                            if conn.send.is_closed()
                                && timeout_at(deadline, conn.reopen())
                                    .await
                                    .ok()
                                    .and_then(Result::ok)
                                    .is_none()
                            {
                                break;
                            }
                        }
                    }
                }
                (conn, opened, errors, timed_out, first_error)
            })
        })
        .collect();
    let (mut held, mut first) = (Vec::new(), None);
    for t in tasks {
        let (conn, opened, errors, timed_out, first_error) =
            t.await.context("a session task failed")?;
        first = first.or(first_error);
        report.counts.transport += errors;
        report.timed_out |= timed_out;
        held.push((conn, opened));
    }
    report.seconds = Some(t0.elapsed().as_secs_f64());
    if let Some(e) = first {
        report
            .notes
            .push(format!("first error opening a session: {e}"));
    }
    report.cpu_us = cpu0
        .zip(pid.and_then(procfs::cpu_us))
        .map(|(a, b)| b.saturating_sub(a));
    let opened: u64 = held.iter().map(|(_, o)| o.len() as u64).sum();
    report.sessions = Some(opened);
    report.counts.ok = opened;
    report.rss_after_open_kib = rss("VmRSS");
    report.peak_rss_kib = rss("VmHWM");
    // DELETE all, each connection its own sessions, with a few seconds of grace past the deadline.
    let until = deadline.max(Instant::now()) + std::time::Duration::from_secs(5);
    let tasks: Vec<_> = held
        .into_iter()
        .map(|(mut conn, opened)| {
            tokio::spawn(async move {
                let mut failed = 0u64;
                for s in opened.iter().filter(|s| s.id.is_some()) {
                    if !matches!(timeout_at(until, conn.delete(s)).await, Ok(Ok(()))) {
                        failed += 1;
                    }
                }
                failed
            })
        })
        .collect();
    let mut failed = 0;
    for t in tasks {
        failed += t.await.context("a DELETE task failed")?;
    }
    if failed > 0 {
        report.notes.push(format!(
            "{failed} of {opened} session(s) could not be deleted"
        ));
    }
    report.rss_after_delete_kib = rss("VmRSS");
    if pid.is_none() {
        report
            .notes
            .push("no --pid: server memory not measured".into());
    }
    Ok(report)
}

/// The churn mode: S sessions opened at `rate` a second over K connections (initialize +
/// initialized, and a call with `--call`), none deleted. The server's RSS is read at intervals,
/// with the baseline when the session numbered W (the warm-up) is due.
pub(crate) async fn run_churn(plan: &SessionPlan, deadline: Instant) -> anyhow::Result<Report> {
    let ep = Arc::new(Endpoint::parse(&plan.url)?);
    let conns = connect_all(&ep, plan.k, deadline).await?;
    let mut report = Report {
        mode: "churn",
        transport: "http",
        protocol: wire::PROTOCOL_VERSION,
        target: plan.url.clone(),
        in_flight: Some(plan.k as u64),
        warmup: Some(plan.warmup),
        pid: plan.pid,
        ..Report::default()
    };
    let sampler = plan
        .pid
        .zip(plan.rss_every)
        .map(|(pid, every)| Arc::new(procfs::RssSampler::start(pid, every)));
    let cpu0 = plan.pid.and_then(procfs::cpu_us);
    let taken = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let gap = std::time::Duration::from_secs_f64(1.0 / plan.rate);
    let tasks: Vec<_> = conns
        .into_iter()
        .map(|mut conn| {
            let taken = taken.clone();
            let call = plan.call.clone();
            let sampler = sampler.clone();
            let (s, warmup, pid) = (plan.sessions, plan.warmup, plan.pid);
            tokio::spawn(async move {
                let (mut opened, mut errors, mut timed_out) = (0u64, 0u64, false);
                let mut first_error = None;
                loop {
                    let i = taken.fetch_add(1, Ordering::Relaxed);
                    if i >= s {
                        break;
                    }
                    let due = t0 + gap.mul_f64(i as f64);
                    if due >= deadline {
                        timed_out = true;
                        break;
                    }
                    tokio::time::sleep_until(due).await;
                    if i == warmup
                        && let (Some(sm), Some(pid)) = (&sampler, pid)
                    {
                        sm.mark_baseline(pid);
                    }
                    match timeout_at(deadline, open_session(&mut conn, call.as_ref())).await {
                        Err(_) => {
                            timed_out = true;
                            break;
                        }
                        Ok((session, error)) => {
                            opened += u64::from(session.is_some());
                            let Some(e) = error else { continue };
                            errors += 1;
                            first_error.get_or_insert_with(|| format!("{e:#}"));
                            if conn.send.is_closed()
                                && timeout_at(deadline, conn.reopen())
                                    .await
                                    .ok()
                                    .and_then(Result::ok)
                                    .is_none()
                            {
                                break;
                            }
                        }
                    }
                }
                (opened, errors, timed_out, first_error)
            })
        })
        .collect();
    let mut first = None;
    for t in tasks {
        let (opened, errors, timed_out, first_error) = t.await.context("a churn task failed")?;
        report.counts.ok += opened;
        report.counts.transport += errors;
        report.timed_out |= timed_out;
        first = first.or(first_error);
    }
    report.seconds = Some(t0.elapsed().as_secs_f64());
    report.sessions = Some(report.counts.ok);
    if let Some(e) = first {
        report.notes.push(format!("first error: {e}"));
    }
    if let Some(pid) = plan.pid {
        report.cpu_us = cpu0
            .zip(procfs::cpu_us(pid))
            .map(|(a, b)| b.saturating_sub(a));
        report.peak_rss_kib = procfs::status_kib(pid, "VmHWM");
        report.rss = sampler
            .and_then(|s| Arc::try_unwrap(s).ok())
            .map(|s| s.finish(pid));
    } else {
        report
            .notes
            .push("no --pid: server memory not measured".into());
    }
    Ok(report)
}
