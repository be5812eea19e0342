//! The security probes behind `switchboard check --security`: one named, reproducible probe per
//! advisory class and per SECURITY-NOTES rule that can be observed on the wire, each carrying its
//! rule tag (`SEC-*`, `HT-*`, `AU-*`, `JR-*`, `D26-*`). They judge the answers by the spec's
//! rules, never by what one server does, and are side-effect free by default: no tool is called
//! unless the user names it (`--input-tool`). A probe that cannot be observed on the target
//! (HTTP probes over stdio, authorization probes on a server without authorization, minted
//! tokens without `--issuer-key`) is a skip with the reason, never a pass. A failure's detail
//! shows what was sent and what came back, trimmed, so that it can be replayed.
//!
//! | module | family |
//! |---|---|
//! | `wire` | HTTP/1.1 by hand over TCP: duplicate headers, endless bodies, the exact request shown |
//! | `channel` | one conversation for the frame probes, over stdio or HTTP, with a token |
//! | `http` | DNS rebinding, duplicate headers, oversized bodies |
//! | `sessions` | sessions from rejected requests, session ids |
//! | `keys` | folded and duplicate JSON keys, an oversized line |
//! | `tokens` | minting tokens with the user's issuer key, and the hostile ones |
//! | `auth` | the authorization probes |
//! | `request_state` | requestState of revision 2026-07-28 |
//!
//! Modules depend one way: the families on `channel` and `tokens`, those on `wire`; `mod.rs`
//! holds the probe table and the context every family reports through.

mod auth;
mod channel;
mod http;
mod keys;
mod request_state;
mod sessions;
mod tokens;
mod wire;

use std::time::Duration;

use serde_json::json;
use switchboard_types::methods;

pub(crate) use tokens::Minter;

use crate::conn::Conn;
use crate::{CheckError, CheckResult, Results, Target, Verdict};
use channel::{Channel, HttpChannel, LATEST, MODERN};
use wire::{Endpoint, Req};

/// One probe: its stable name, its rule tag(s), and what passes, in a line.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Probe {
    pub(crate) name: &'static str,
    pub(crate) tag: &'static str,
    pub(crate) what: &'static str,
}

const fn p(name: &'static str, tag: &'static str, what: &'static str) -> Probe {
    Probe { name, tag, what }
}

pub(crate) const HOST: Probe = p(
    "security/dns-rebinding/host",
    "SEC-LOC-7 HT-2",
    "a foreign Host on a loopback endpoint is refused",
);
pub(crate) const ORIGIN: Probe = p(
    "security/dns-rebinding/origin",
    "SEC-LOC-7 HT-3",
    "a foreign Origin is 403",
);
pub(crate) const DUP_HOST: Probe = p(
    "security/duplicate-headers/host",
    "RFC9112-3.2",
    "two Host lines are 400",
);
pub(crate) const DUP_SESSION: Probe = p(
    "security/duplicate-headers/session-id",
    "HT-20 SEC-SH-2",
    "two Mcp-Session-Id lines (a real and a forged id, both orders) are refused",
);
pub(crate) const DUP_VERSION: Probe = p(
    "security/duplicate-headers/protocol-version",
    "HT-23",
    "two MCP-Protocol-Version lines (supported and not, both orders) are 400",
);
pub(crate) const DUP_METHOD: Probe = p(
    "security/duplicate-headers/mcp-method",
    "D26-58",
    "two Mcp-Method lines (one not the body's, both orders) are 400",
);
pub(crate) const DUP_NAME: Probe = p(
    "security/duplicate-headers/mcp-name",
    "D26-58",
    "two Mcp-Name lines (one not the body's, both orders) are 400",
);
pub(crate) const KEY_CASE: Probe = p(
    "security/folded-keys/method-case",
    "JR-1",
    "a request whose only method key is \"Method\" is not served",
);
pub(crate) const KEY_UPPER: Probe = p(
    "security/folded-keys/method-upper",
    "JR-1",
    "a request whose only method key is \"METHOD\" is not served",
);
pub(crate) const KEY_JSONRPC: Probe = p(
    "security/folded-keys/jsonrpc-upper",
    "JR-1",
    "a request whose version key is \"JSONRPC\" or \"j\\u017fonrpc\" is invalid",
);
pub(crate) const KEY_UNICODE: Probe = p(
    "security/folded-keys/unicode",
    "JR-1",
    "method keys spelled with look-alikes (\"meth\\u0130d\", \"method\\u200b\") are not served",
);
pub(crate) const DUP_KEYS: Probe = p(
    "security/duplicate-keys/method",
    "JR-1 RFC8259-4",
    "two \"method\" keys: refused, or one of them consistently",
);
pub(crate) const DUP_KEYS_HEADER: Probe = p(
    "security/duplicate-keys/header-mismatch",
    "D26-58",
    "two \"method\" keys never serve a method the Mcp-Method header did not name",
);
pub(crate) const BIG_LENGTH: Probe = p(
    "security/oversized/content-length",
    "HT SEC-TOOL-1",
    "an 8 MiB body with Content-Length is refused (413) or cut, and the server lives on",
);
pub(crate) const BIG_CHUNKED: Probe = p(
    "security/oversized/chunked",
    "HT SEC-TOOL-1",
    "an 8 MiB chunked body is refused (413) or cut, and the server lives on",
);
pub(crate) const BIG_ENDLESS: Probe = p(
    "security/oversized/endless",
    "HT SEC-TOOL-1",
    "a chunked body that never ends is refused or cut before 64 MiB, and the server lives on",
);
pub(crate) const BIG_LINE: Probe = p(
    "security/oversized/line",
    "ST SEC-TOOL-1",
    "a 20 MiB line gets an error or is dropped, and the server lives on",
);
pub(crate) const REJ_ORIGIN: Probe = p(
    "security/rejected-session/foreign-origin",
    "SEC-SH-2 HT-3",
    "an initialize refused for its Origin issues no session",
);
pub(crate) const REJ_TYPE: Probe = p(
    "security/rejected-session/content-type",
    "SEC-SH-2 HT-4",
    "an initialize refused for its Content-Type (text/plain) issues no session",
);
pub(crate) const REJ_JSON: Probe = p(
    "security/rejected-session/invalid-json",
    "SEC-SH-2 HT-6",
    "an initialize refused as invalid JSON issues no session",
);
pub(crate) const REJ_ACCEPT: Probe = p(
    "security/rejected-session/no-accept",
    "SEC-SH-2 HT-5",
    "an initialize refused for a missing Accept issues no session",
);
pub(crate) const REJ_TOKEN: Probe = p(
    "security/rejected-session/no-token",
    "SEC-SH-1 SEC-SH-2",
    "an initialize refused for want of a token issues no session",
);
pub(crate) const SID_ALPHABET: Probe = p(
    "security/session-id/alphabet",
    "SEC-SH-4 HT-18",
    "session ids are visible ASCII only",
);
pub(crate) const SID_ENTROPY: Probe = p(
    "security/session-id/entropy",
    "SEC-SH-3",
    "20 session ids are unique, not sequential, and carry at least 120 bits by length and alphabet",
);
pub(crate) const SID_ENDED: Probe = p(
    "security/session-id/ended",
    "SEC-SH-7 HT-20",
    "a session ended with DELETE answers 404",
);
pub(crate) const AU_CHALLENGE: Probe = p(
    "security/auth/challenge",
    "AU-4",
    "the 401 challenge is Bearer and names resource_metadata (or the well-known PRM exists)",
);
pub(crate) const AU_PRM: Probe = p(
    "security/auth/prm-resource",
    "AU-1 SEC-SSRF-10",
    "the protected resource metadata's resource is this endpoint's URL",
);
pub(crate) const AU_GARBAGE: Probe = p(
    "security/auth/garbage-token",
    "SEC-TP-3",
    "a token that is not a JWT gets 401 error=\"invalid_token\"",
);
pub(crate) const AU_NONE: Probe = p(
    "security/auth/alg-none",
    "SEC-TP-3",
    "an unsigned token (alg none) gets 401 error=\"invalid_token\"",
);
pub(crate) const AU_HMAC: Probe = p(
    "security/auth/hmac-public-key",
    "SEC-TP-3",
    "an HS256 token keyed with the issuer's public key gets 401 error=\"invalid_token\"",
);
pub(crate) const AU_VALID: Probe = p(
    "security/auth/valid-token",
    "SEC-TP-3",
    "a token minted with --issuer-key opens a session (the baseline of the minted probes)",
);
pub(crate) const AU_QUERY: Probe = p(
    "security/auth/query-token",
    "SEC-TOK-1 AU-19",
    "a valid token in the query string (?access_token=) is refused",
);
pub(crate) const AU_AUDIENCE: Probe = p(
    "security/auth/wrong-audience",
    "SEC-TP-1",
    "a token for another audience gets 401",
);
pub(crate) const AU_ISSUER: Probe = p(
    "security/auth/wrong-issuer",
    "SEC-TP-3",
    "a token naming another issuer gets 401",
);
pub(crate) const AU_EXPIRED: Probe = p(
    "security/auth/expired",
    "SEC-TP-3",
    "an expired token gets 401",
);
pub(crate) const AU_ISS_ARRAY: Probe = p(
    "security/auth/iss-array",
    "SEC-TP-3",
    "a token whose iss is an array holding the issuer gets 401",
);
pub(crate) const AU_NO_SUB: Probe = p(
    "security/auth/no-sub",
    "SEC-SH-5 SEC-SH-6",
    "a token without sub is refused, or never reaches the session of the user whose sub is its client_id",
);
pub(crate) const AU_BINDING: Probe = p(
    "security/auth/session-binding",
    "SEC-SH-6 SEC-SH-10",
    "user A's session used with user B's valid token is refused",
);
pub(crate) const AU_TASKS: Probe = p(
    "security/auth/tasks",
    "SEC-TK-1",
    "user B cannot reach user A's tasks",
);
pub(crate) const RS_TAMPERED: Probe = p(
    "security/request-state/tampered",
    "D26-38",
    "a tampered requestState gets a JSON-RPC error",
);
pub(crate) const RS_FORGED: Probe = p(
    "security/request-state/forged",
    "D26-38",
    "a requestState the server never issued gets a JSON-RPC error",
);
pub(crate) const RS_OTHER_USER: Probe = p(
    "security/request-state/other-user",
    "D26-38 SEC-SH-10",
    "user B completing user A's requestState gets an error",
);
pub(crate) const HYGIENE: Probe = p(
    "security/error-hygiene",
    "SEC-LOG-1",
    "no error answer of the probes carries a stack trace, a source path or panic text",
);

/// Every probe, in the order they report.
pub(crate) const PROBES: [Probe; 43] = [
    HOST,
    ORIGIN,
    DUP_HOST,
    DUP_SESSION,
    DUP_VERSION,
    DUP_METHOD,
    DUP_NAME,
    KEY_CASE,
    KEY_UPPER,
    KEY_JSONRPC,
    KEY_UNICODE,
    DUP_KEYS,
    DUP_KEYS_HEADER,
    BIG_LENGTH,
    BIG_CHUNKED,
    BIG_ENDLESS,
    BIG_LINE,
    REJ_ORIGIN,
    REJ_TYPE,
    REJ_JSON,
    REJ_ACCEPT,
    REJ_TOKEN,
    SID_ALPHABET,
    SID_ENTROPY,
    SID_ENDED,
    AU_CHALLENGE,
    AU_PRM,
    AU_GARBAGE,
    AU_NONE,
    AU_HMAC,
    AU_VALID,
    AU_QUERY,
    AU_AUDIENCE,
    AU_ISSUER,
    AU_EXPIRED,
    AU_ISS_ARRAY,
    AU_NO_SUB,
    AU_BINDING,
    AU_TASKS,
    RS_TAMPERED,
    RS_FORGED,
    RS_OTHER_USER,
    HYGIENE,
];

/// How many results a security run gives: one per probe.
pub(crate) const COUNT: usize = PROBES.len();

/// What the user gave the security probes beyond the target.
#[derive(Debug, Default)]
pub(crate) struct Options {
    /// Mints tokens of an issuer the server trusts (`--issuer-key`).
    pub(crate) minter: Option<Minter>,
    /// A tool that answers `input_required` (`--input-tool`): the only tool ever called.
    pub(crate) input_tool: Option<String>,
}

/// What the first contact learned about the server.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// It answers 401 without a token.
    pub(crate) auth: bool,
    /// It answers `server/discover` naming 2026-07-28.
    pub(crate) modern: bool,
    /// A 2025 `initialize` succeeds (with a token, when one is needed).
    pub(crate) legacy: bool,
    /// The scopes the 401 challenge asked for (or the metadata lists): what minted tokens carry.
    pub(crate) scope: String,
    /// The audience minted tokens name: the metadata's `resource`, else the endpoint's URL.
    pub(crate) audience: String,
    /// The challenge and metadata of the first 401.
    pub(crate) learned: auth::Learned,
}

/// The run's state: the options, the results, and every error answer seen (for the hygiene
/// probe).
pub(crate) struct Ctx<'a> {
    pub(crate) timeout: Duration,
    pub(crate) opts: &'a Options,
    pub(crate) facts: Facts,
    out: &'a mut Results,
    seen: Vec<(&'static str, String)>,
}

impl Ctx<'_> {
    fn push(&mut self, p: Probe, outcome: Verdict, detail: &str) {
        self.out.push(CheckResult {
            tag: p.tag,
            name: p.name,
            outcome,
            detail: format!("{}: {detail}", p.what),
        });
    }

    pub(crate) fn pass(&mut self, p: Probe, detail: impl AsRef<str>) {
        self.push(p, Verdict::Pass, detail.as_ref());
    }

    pub(crate) fn fail(&mut self, p: Probe, detail: impl AsRef<str>) {
        self.push(p, Verdict::Fail, detail.as_ref());
    }

    pub(crate) fn skip(&mut self, p: Probe, detail: impl AsRef<str>) {
        self.push(p, Verdict::Skip, detail.as_ref());
    }

    pub(crate) fn skip_all(&mut self, probes: &[Probe], detail: &str) {
        for p in probes {
            self.skip(*p, detail);
        }
    }

    /// Keeps `text` (an answer) for the hygiene probe.
    pub(crate) fn saw(&mut self, p: Probe, text: &str) {
        if !text.is_empty() {
            self.seen
                .push((p.name, text.chars().take(64 * 1024).collect()));
        }
    }

    /// A valid token for `user`, when tokens can be minted and the server wants them.
    pub(crate) fn token(&self, user: &str, ep: &Endpoint) -> Option<String> {
        if !self.facts.auth {
            return None;
        }
        let aud = if self.facts.audience.is_empty() {
            &ep.url
        } else {
            &self.facts.audience
        };
        self.opts
            .minter
            .as_ref()
            .map(|m| m.valid(user, aud, &self.facts.scope))
    }

    /// Why the probes needing a session cannot run on an authorized server without minted
    /// tokens (`None` when they can).
    pub(crate) fn no_session_reason(&self) -> Option<&'static str> {
        (self.facts.auth && self.opts.minter.is_none())
            .then_some("the server requires a token: give --issuer-key and --issuer to mint one")
    }
}

/// The probes that need plain HTTP (skipped over stdio, in process and https): three runs of
/// [`PROBES`], the authorization probes last.
const HTTP_ONLY: [&[Probe]; 3] = [
    run(HOST, DUP_NAME),
    run(BIG_LENGTH, BIG_ENDLESS),
    run(REJ_ORIGIN, AU_TASKS),
];

/// The authorization probes: the run of [`PROBES`] from the challenge to the tasks' binding.
pub(crate) const AUTH: &[Probe] = run(AU_CHALLENGE, AU_TASKS);

/// The run of [`PROBES`] from `first` to `last`, both included (a compile error when either is
/// missing or they are out of order).
const fn run(first: Probe, last: Probe) -> &'static [Probe] {
    let (from, to) = (position(first), position(last));
    assert!(from <= to, "a run of probes out of order");
    PROBES.split_at(to + 1).0.split_at(from).1
}

/// Where `probe` stands in [`PROBES`], by name.
const fn position(probe: Probe) -> usize {
    let mut i = 0;
    while i < PROBES.len() {
        if same(PROBES[i].name.as_bytes(), probe.name.as_bytes()) {
            return i;
        }
        i += 1;
    }
    panic!("a probe missing from PROBES")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Runs every security probe against `target`, in the order of [`PROBES`].
///
/// # Errors
/// The server cannot be started or reached at all.
pub(crate) async fn all(
    target: &Target,
    timeout: Duration,
    opts: &Options,
    out: &mut Results,
) -> Result<(), CheckError> {
    let mut ctx = Ctx {
        timeout,
        opts,
        facts: Facts::default(),
        out,
        seen: Vec::new(),
    };
    match target {
        Target::Http(url) => match Endpoint::parse(url) {
            Ok(ep) => over_http(&mut ctx, &ep).await?,
            Err(why) => {
                // An https endpoint: the frame probes run through the client transport.
                let (c, modern) = first_contact(target, timeout).await?;
                ctx.facts.modern = modern;
                for probes in HTTP_ONLY {
                    ctx.skip_all(probes, &why);
                }
                over_conn(&mut ctx, c, target).await;
            }
        },
        Target::Stdio(_) | Target::InProcess(_) => {
            let (c, modern) = first_contact(target, timeout).await?;
            ctx.facts.modern = modern;
            let why = "an HTTP probe: the target speaks stdio (or in process)";
            for probes in HTTP_ONLY {
                ctx.skip_all(probes, why);
            }
            over_conn(&mut ctx, c, target).await;
        }
    }
    hygiene(&mut ctx);
    Ok(())
}

/// The frame probes over a raw connection, then the requestState probes on a modern one.
async fn over_conn(ctx: &mut Ctx<'_>, c: Channel, target: &Target) {
    keys::all(ctx, c).await;
    ctx.skip(
        DUP_KEYS_HEADER,
        "needs the Mcp-Method header of revision 2026-07-28 over plain HTTP",
    );
    keys::oversized_line(ctx, target).await;
    request_state::over_conn(ctx, target).await;
}

/// Opens a raw connection: the 2025 handshake, or (a 2026-07-28-only server) `server/discover`.
/// Returns the connection, and whether the server speaks 2026-07-28.
async fn first_contact(target: &Target, timeout: Duration) -> Result<(Channel, bool), CheckError> {
    let modern = {
        let mut c = Conn::open(target, timeout)?;
        let got = c
            .request_modern(
                json!("discover"),
                methods::SERVER_DISCOVER,
                json!({}),
                MODERN,
            )
            .await;
        c.close().await;
        matches!(&got, crate::conn::Got::Frame(v) if channel::speaks_modern(Some(v)))
    };
    let mut c = Conn::open(target, timeout)?;
    if c.handshake().await.is_some() {
        return Ok((Channel::Conn(Box::new(c), false), modern));
    }
    c.close().await;
    if modern {
        let mut c = Conn::open(target, timeout)?;
        // The connection's era is decided by its first request.
        let _ = c
            .request_modern(json!("d"), methods::SERVER_DISCOVER, json!({}), MODERN)
            .await;
        return Ok((Channel::Conn(Box::new(c), true), true));
    }
    Err(CheckError::Handshake)
}

/// Every family over plain HTTP.
async fn over_http(ctx: &mut Ctx<'_>, ep: &Endpoint) -> Result<(), CheckError> {
    // First contact: an initialize without a token, and server/discover.
    let probe = Req::post(ep, channel::initialize_frame("init"));
    let first = wire::send(ep, &probe, ctx.timeout + Duration::from_secs(5)).await;
    let reply = match first {
        wire::Outcome::Unreachable(reason) => {
            return Err(CheckError::Connect {
                url: ep.url.clone(),
                reason,
            });
        }
        other => other,
    };
    ctx.facts.auth = reply.reply().is_some_and(|r| r.status == 401);
    if ctx.facts.auth {
        let (scope, audience) = auth::learn(ctx, ep, reply.reply()).await;
        ctx.facts.scope = scope;
        ctx.facts.audience = audience;
    }
    if let Some(sid) = reply.reply().and_then(wire::Reply::session) {
        end(ctx, ep, sid, None).await;
    }
    let token = ctx.token("switchboard-check-a", ep);
    let discover = HttpChannel {
        ep: ep.clone(),
        token: token.clone(),
        session: None,
        version: MODERN.into(),
        timeout: ctx.timeout,
    };
    let d = Channel::Http(discover.clone())
        .call("discover", methods::SERVER_DISCOVER, json!({}))
        .await;
    ctx.facts.modern = channel::speaks_modern(d.answer.as_ref());
    let session = channel::open_http(ep, token.as_deref(), ctx.timeout).await;
    ctx.facts.legacy = session.is_ok();

    http::rebinding(ctx, ep).await;
    http::duplicate_headers(ctx, ep, session.as_ref().ok(), &discover).await;
    // The key probes get a session of their own: the header probes may have ended the first.
    let keys_session = match &session {
        Ok(_) => channel::open_http(ep, token.as_deref(), ctx.timeout).await,
        Err(e) => Err(e.clone()),
    };
    match (&keys_session, ctx.facts.modern) {
        (Ok(s), _) => keys::all(ctx, Channel::Http(s.clone())).await,
        (Err(_), true) => keys::all(ctx, Channel::Http(discover.clone())).await,
        (Err(e), false) => {
            let why = ctx
                .no_session_reason()
                .map_or_else(|| format!("no session: {e}"), str::to_owned);
            ctx.skip_all(
                &[KEY_CASE, KEY_UPPER, KEY_JSONRPC, KEY_UNICODE, DUP_KEYS],
                &why,
            );
        }
    }
    keys::header_mismatch(ctx, &discover).await;
    http::oversized(ctx, ep).await;
    ctx.skip(
        BIG_LINE,
        "a stdio probe: the target speaks HTTP (see the oversized bodies)",
    );
    sessions::rejected(ctx, ep).await;
    sessions::ids(ctx, ep).await;
    auth::all(ctx, ep, session.as_ref().ok()).await;
    request_state::over_http(ctx, &discover).await;
    if let Ok(s) = &session {
        channel::end_session(s).await;
    }
    Ok(())
}

/// Ends the session `sid` (whatever the answer).
pub(crate) async fn end(ctx: &Ctx<'_>, ep: &Endpoint, sid: &str, token: Option<&str>) {
    let mut req = Req::bodiless(ep, "DELETE").session(Some(sid), LATEST);
    if let Some(t) = token {
        req = req.set("Authorization", format!("Bearer {t}"));
    }
    let _ = wire::send(ep, &req, ctx.timeout).await;
}

/// What marks a leak in an error answer: a stack trace, a source path, panic text.
const LEAKS: [&str; 13] = [
    "Traceback (most recent call last)",
    "panicked at",
    "stack backtrace",
    "RUST_BACKTRACE",
    "\n    at ",
    "\\n    at ",
    "node_modules/",
    "site-packages/",
    ".py\", line ",
    "/home/",
    "/usr/lib/",
    "at Object.<anonymous>",
    "src/main.rs",
];

/// The hygiene probe, over everything the other probes saw.
fn hygiene(ctx: &mut Ctx<'_>) {
    let found = ctx.seen.iter().find_map(|(name, text)| {
        LEAKS.iter().find_map(|leak| {
            text.find(leak).map(|at| {
                let from = text[..at]
                    .char_indices()
                    .rev()
                    .nth(60)
                    .map_or(0, |(i, _)| i);
                let excerpt: String = text[from..].chars().take(200).collect();
                format!("{name}: {leak:?} in the answer: …{excerpt}…")
            })
        })
    });
    let n = ctx.seen.len();
    match found {
        Some(d) => ctx.fail(HYGIENE, d),
        None if n == 0 => ctx.skip(HYGIENE, "no answer was kept to look into"),
        None => ctx.pass(HYGIENE, format!("{n} answers, none with a trace or a path")),
    }
}
