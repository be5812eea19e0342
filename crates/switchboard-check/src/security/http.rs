//! The HTTP families: DNS rebinding (a foreign `Host`, a foreign `Origin`), duplicate headers
//! (sent as two lines over a raw connection) and oversized bodies (with `Content-Length`,
//! chunked, and chunked without end).

use std::time::Duration;

use serde_json::json;
use switchboard_types::methods;

use super::channel::{self, HttpChannel, initialize_frame};
use super::wire::{self, Body, Endpoint, Outcome, Req};
use super::{
    BIG_CHUNKED, BIG_ENDLESS, BIG_LENGTH, Ctx, DUP_HOST, DUP_METHOD, DUP_NAME, DUP_SESSION,
    DUP_VERSION, HOST, ORIGIN, Probe,
};

const EVIL_HOST: &str = "evil.example";
const EVIL_ORIGIN: &str = "http://evil.example";
const FORGED_SESSION: &str = "switchboard-check-forged-session-id";
const NO_SUCH_TOOL: &str = "switchboard-check-no-such-tool";
/// The oversized bodies' padding.
const BIG: usize = 8 << 20;
/// How long an oversized probe may take.
const BIG_TIME: Duration = Duration::from_secs(15);

/// Whether the endpoint's host is a loopback name or address.
fn loopback(ep: &Endpoint) -> bool {
    let host = match ep.authority.rfind(']') {
        Some(close) => &ep.authority[1..close],
        None => ep.authority.split(':').next().unwrap_or(""),
    };
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|a| a.is_loopback())
}

/// An `initialize` POST with the token the run has (when the server wants one).
fn init(ctx: &Ctx<'_>, ep: &Endpoint) -> Req {
    let req = Req::post(ep, initialize_frame("init"));
    match ctx.token("switchboard-check-a", ep) {
        Some(t) => req.set("Authorization", format!("Bearer {t}")),
        None => req,
    }
}

/// Sends `req`, keeps its answer for the hygiene probe, ends any session it opened.
async fn send(ctx: &mut Ctx<'_>, p: Probe, ep: &Endpoint, req: &Req, time: Duration) -> Outcome {
    let out = wire::send(ep, req, time).await;
    if let Some(r) = out.reply() {
        if !r.ok() {
            ctx.saw(p, &r.body);
        }
        // A session the request opened is ended (some servers echo the request's own id on
        // every answer: that one is left alone).
        let carried = |sid: &str| {
            req.headers
                .iter()
                .any(|(n, v)| n.eq_ignore_ascii_case("mcp-session-id") && v == sid)
        };
        if let Some(sid) = r.session().filter(|s| !carried(s)) {
            let token = ctx.token("switchboard-check-a", ep);
            super::end(ctx, ep, sid, token.as_deref()).await;
        }
    }
    out
}

/// An answer judged by `ok`; a connection closed without one is a refusal, silence is not.
fn judged(out: &Outcome, ok: impl Fn(&wire::Reply) -> bool) -> bool {
    match out {
        Outcome::Answered(r) => ok(r),
        Outcome::Closed(_) => true,
        Outcome::Silent | Outcome::Unreachable(_) => false,
    }
}

/// Whether a 401 hides what the probe looks for (authorization on, no token to give).
fn unauthorized(ctx: &mut Ctx<'_>, p: Probe, out: &Outcome) -> bool {
    if out.reply().is_some_and(|r| r.status == 401) && ctx.no_session_reason().is_some() {
        let why = ctx.no_session_reason().unwrap_or_default();
        ctx.skip(p, format!("401 before the probe's point: {why}"));
        return true;
    }
    false
}

/// A foreign `Host` and a foreign `Origin`.
pub(crate) async fn rebinding(ctx: &mut Ctx<'_>, ep: &Endpoint) {
    if loopback(ep) {
        let req = init(ctx, ep).set("Host", EVIL_HOST);
        let out = send(ctx, HOST, ep, &req, ctx.timeout).await;
        if !unauthorized(ctx, HOST, &out) {
            let shown = format!("sent {}; got {}", req.shown(), out.shown());
            if judged(&out, |r| (400..500).contains(&r.status)) {
                ctx.pass(HOST, shown);
            } else {
                ctx.fail(HOST, shown);
            }
        }
    } else {
        ctx.skip(
            HOST,
            format!(
                "{} is not a loopback endpoint: Host checks are a loopback rule",
                ep.authority
            ),
        );
    }
    let req = init(ctx, ep).set("Origin", EVIL_ORIGIN);
    let out = send(ctx, ORIGIN, ep, &req, ctx.timeout).await;
    if unauthorized(ctx, ORIGIN, &out) {
        return;
    }
    let shown = format!("sent {}; got {}", req.shown(), out.shown());
    match out.reply() {
        Some(r) if r.status == 403 => ctx.pass(ORIGIN, shown),
        _ => ctx.fail(ORIGIN, shown),
    }
}

/// Sends `base` twice, with the header `name` as `[a, b]` and as `[b, a]`; `pass` judges each
/// status. The detail shows both exchanges.
async fn both_orders(
    ctx: &mut Ctx<'_>,
    p: Probe,
    ep: &Endpoint,
    base: &Req,
    name: &str,
    (a, b): (&str, &str),
    pass: impl Fn(&wire::Reply) -> bool,
) {
    let mut shown = Vec::new();
    let mut ok = true;
    for (x, y) in [(a, b), (b, a)] {
        let req = base.clone().without(name).add(name, x).add(name, y);
        let out = send(ctx, p, ep, &req, ctx.timeout).await;
        if unauthorized(ctx, p, &out) {
            return;
        }
        ok &= judged(&out, &pass);
        shown.push(format!("sent {}; got {}", req.shown(), out.shown()));
    }
    let detail = shown.join(" | then ");
    if ok {
        ctx.pass(p, detail);
    } else {
        ctx.fail(p, detail);
    }
}

/// Two `Host`, `Mcp-Session-Id`, `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` lines.
pub(crate) async fn duplicate_headers(
    ctx: &mut Ctx<'_>,
    ep: &Endpoint,
    session: Option<&HttpChannel>,
    modern: &HttpChannel,
) {
    let req = init(ctx, ep).add("Host", ep.authority.clone());
    let out = send(ctx, DUP_HOST, ep, &req, ctx.timeout).await;
    if !unauthorized(ctx, DUP_HOST, &out) {
        let shown = format!("sent {}; got {}", req.shown(), out.shown());
        if judged(&out, |r| r.status == 400) {
            ctx.pass(DUP_HOST, shown);
        } else {
            ctx.fail(DUP_HOST, shown);
        }
    }

    let ping = channel::frame("dup", methods::PING, json!({}), false);
    match session {
        Some(s) if s.session.is_some() => {
            let sid = s.session.clone().unwrap_or_default();
            let base = s.request(&ping, &[]);
            both_orders(
                ctx,
                DUP_SESSION,
                ep,
                &base,
                "Mcp-Session-Id",
                (&sid, FORGED_SESSION),
                |r| (400..500).contains(&r.status),
            )
            .await;
        }
        Some(_) => ctx.skip(DUP_SESSION, "stateless server: no session id was issued"),
        None => {
            let why = ctx
                .no_session_reason()
                .unwrap_or("no session: the 2025 initialize failed");
            ctx.skip(DUP_SESSION, why);
        }
    }
    match session {
        Some(s) => {
            let base = s.request(&ping, &[]);
            let version = s.version.clone();
            both_orders(
                ctx,
                DUP_VERSION,
                ep,
                &base,
                "MCP-Protocol-Version",
                (&version, "1999-01-01"),
                |r| r.status == 400,
            )
            .await;
        }
        None if ctx.facts.modern => {
            let base = modern.request(
                &channel::frame("dup", methods::SERVER_DISCOVER, json!({}), true),
                &[],
            );
            both_orders(
                ctx,
                DUP_VERSION,
                ep,
                &base,
                "MCP-Protocol-Version",
                (channel::MODERN, "1999-01-01"),
                |r| r.status == 400,
            )
            .await;
        }
        None => {
            let why = ctx
                .no_session_reason()
                .unwrap_or("no session: the 2025 initialize failed");
            ctx.skip(DUP_VERSION, why);
        }
    }
    if !ctx.facts.modern {
        let why = "the server does not speak 2026-07-28 (server/discover)";
        ctx.skip_all(&[DUP_METHOD, DUP_NAME], why);
        return;
    }
    let discover = channel::frame("dup", methods::SERVER_DISCOVER, json!({}), true);
    let base = modern.request(&discover, &[]);
    both_orders(
        ctx,
        DUP_METHOD,
        ep,
        &base,
        "Mcp-Method",
        (methods::SERVER_DISCOVER, methods::TOOLS_LIST),
        header_mismatch,
    )
    .await;
    let call = channel::frame(
        "dup",
        methods::TOOLS_CALL,
        json!({"name": NO_SUCH_TOOL, "arguments": {}}),
        true,
    );
    let base = modern.request(&call, &[]);
    both_orders(
        ctx,
        DUP_NAME,
        ep,
        &base,
        "Mcp-Name",
        (NO_SUCH_TOOL, "switchboard-check-other-name"),
        header_mismatch,
    )
    .await;
}

/// A 400 refusing the headers (`-32020`, or no JSON-RPC error at all), not one answering the
/// body (an unknown tool's `-32602` is the header check passed).
fn header_mismatch(r: &wire::Reply) -> bool {
    let codes: Vec<i64> = r
        .messages()
        .iter()
        .filter_map(|m| m.pointer("/error/code").and_then(serde_json::Value::as_i64))
        .collect();
    r.status == 400 && codes.iter().all(|&c| c == HEADER_MISMATCH)
}

/// `HeaderMismatch` (`[D26-58]`).
const HEADER_MISMATCH: i64 = -32020;

/// An 8 MiB `initialize`: with `Content-Length`, chunked, and chunked without end.
pub(crate) async fn oversized(ctx: &mut Ctx<'_>, ep: &Endpoint) {
    let frame = initialize_frame("big");
    // The padding goes into the params: `…"params":{"pad":"aaaa…","protocolVersion":…`.
    let cut = frame
        .find("\"params\":{")
        .map_or(0, |i| i + "\"params\":{".len());
    let prefix = format!("{}\"pad\":\"", &frame[..cut]);
    let suffix = format!("\",{}", &frame[cut..]);
    for (p, chunked, endless) in [
        (BIG_LENGTH, false, false),
        (BIG_CHUNKED, true, false),
        (BIG_ENDLESS, true, true),
    ] {
        let mut req = init(ctx, ep);
        req.body = Body::Big {
            prefix: prefix.clone(),
            pad: BIG,
            suffix: suffix.clone(),
            chunked,
            endless,
        };
        let out = send(ctx, p, ep, &req, BIG_TIME).await;
        if unauthorized(ctx, p, &out) {
            continue;
        }
        let shown = format!("sent {}; got {}", req.shown(), out.shown());
        let refused = match &out {
            Outcome::Answered(r) => r.status == 413,
            Outcome::Closed(_) => true,
            Outcome::Silent | Outcome::Unreachable(_) => false,
        };
        let alive = lives(ctx, ep).await;
        match (refused, alive) {
            (true, Ok(())) => ctx.pass(p, shown),
            (true, Err(e)) => ctx.fail(
                p,
                format!("{shown}; then the server no longer answers: {e}"),
            ),
            (false, Ok(())) => ctx.fail(p, format!("{shown}; the server still answers")),
            (false, Err(e)) => ctx.fail(
                p,
                format!("{shown}; then the server no longer answers: {e}"),
            ),
        }
    }
}

/// Whether the server still answers a normal request.
async fn lives(ctx: &Ctx<'_>, ep: &Endpoint) -> Result<(), String> {
    let token = ctx.token("switchboard-check-a", ep);
    if ctx.facts.legacy {
        let s = channel::open_http(ep, token.as_deref(), ctx.timeout).await?;
        channel::end_session(&s).await;
        return Ok(());
    }
    let h = HttpChannel {
        ep: ep.clone(),
        token,
        session: None,
        version: channel::MODERN.into(),
        timeout: ctx.timeout,
    };
    let x = super::Channel::Http(h)
        .call("alive", methods::SERVER_DISCOVER, json!({}))
        .await;
    if x.result().is_some() || !ctx.facts.modern {
        Ok(())
    } else {
        Err(x.got)
    }
}
