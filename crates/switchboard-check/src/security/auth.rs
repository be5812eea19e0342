//! The authorization probes, on a server that answers 401 without a token: the challenge and
//! the protected resource metadata, the hostile tokens anybody can make, and with minted tokens
//! (`--issuer-key`) the claims a resource server must check and the binding of sessions to users.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use switchboard_types::methods;

use super::channel::{self, HttpChannel, initialize_frame};
use super::tokens::{self, CLIENT_ID};
use super::wire::{self, Endpoint, Reply, Req};
use super::{
    AU_AUDIENCE, AU_BINDING, AU_CHALLENGE, AU_EXPIRED, AU_GARBAGE, AU_HMAC, AU_ISS_ARRAY,
    AU_ISSUER, AU_NO_SUB, AU_NONE, AU_PRM, AU_QUERY, AU_TASKS, AU_VALID, Ctx, Probe,
};

/// The probes that need minted tokens.
const MINTED: [Probe; 8] = [
    AU_VALID,
    AU_QUERY,
    AU_AUDIENCE,
    AU_ISSUER,
    AU_EXPIRED,
    AU_ISS_ARRAY,
    AU_NO_SUB,
    AU_BINDING,
];

/// What the first 401 taught: the challenge, the metadata document.
#[derive(Debug, Clone, Default)]
pub(crate) struct Learned {
    pub(crate) challenge: String,
    pub(crate) prm: Option<Value>,
    /// Where the metadata was read (or why it was not).
    pub(crate) prm_from: String,
}

/// `name="value"` of a `WWW-Authenticate` challenge.
fn param<'a>(challenge: &'a str, name: &str) -> Option<&'a str> {
    let at = challenge.find(&format!("{name}=\""))? + name.len() + 2;
    let len = challenge[at..].find('"')?;
    Some(&challenge[at..at + len])
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

async fn get_json(url: &str, timeout: std::time::Duration) -> Result<Value, String> {
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())?;
    let r = client.get(url).send().await.map_err(|e| e.to_string())?;
    let status = r.status();
    let text = r.text().await.map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))
}

/// Reads the challenge of the first 401 and the metadata it names (or the well-known one);
/// returns the scopes and the audience minted tokens should carry.
pub(crate) async fn learn(
    ctx: &mut Ctx<'_>,
    ep: &Endpoint,
    first: Option<&Reply>,
) -> (String, String) {
    let challenge = first
        .and_then(|r| r.header("www-authenticate"))
        .unwrap_or_default()
        .to_owned();
    let well_known = ep
        .at(&format!("/.well-known/oauth-protected-resource{}", ep.path))
        .url;
    let from = param(&challenge, "resource_metadata").map_or(well_known, str::to_owned);
    let (prm, prm_from) = match get_json(&from, ctx.timeout).await {
        Ok(v) => (Some(v), from),
        Err(e) => (None, format!("{from}: {e}")),
    };
    let scope = param(&challenge, "scope").map(str::to_owned).or_else(|| {
        prm.as_ref()
            .and_then(|p| p.get("scopes_supported"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
    });
    let audience = prm
        .as_ref()
        .and_then(|p| p.get("resource"))
        .and_then(Value::as_str)
        .unwrap_or(&ep.url)
        .to_owned();
    ctx.facts.learned = Learned {
        challenge,
        prm,
        prm_from,
    };
    (scope.unwrap_or_default(), audience)
}

/// An `initialize` with `Authorization: Bearer token` (none: no header).
fn init_with(ep: &Endpoint, token: Option<&str>) -> Req {
    let r = Req::post(ep, initialize_frame("init"));
    match token {
        Some(t) => r.set("Authorization", format!("Bearer {t}")),
        None => r,
    }
}

/// Sends `req`; passes when the answer is 401 (with `error="invalid_token"` when `strict`).
async fn expect_401(ctx: &mut Ctx<'_>, p: Probe, ep: &Endpoint, req: &Req, strict: bool) {
    let out = wire::send(ep, req, ctx.timeout).await;
    let shown = format!("sent {}; got {}", req.shown(), out.shown());
    let Some(r) = out.reply() else {
        ctx.fail(p, shown);
        return;
    };
    ctx.saw(p, &r.body);
    if let Some(sid) = r.session() {
        super::end(ctx, ep, sid, None).await;
    }
    let invalid = r
        .header("www-authenticate")
        .is_some_and(|w| w.contains("invalid_token"));
    match (r.status, strict && !invalid) {
        (401, false) => ctx.pass(p, shown),
        (401, true) => ctx.fail(
            p,
            format!("no error=\"invalid_token\" in the challenge: {shown}"),
        ),
        _ => ctx.fail(p, shown),
    }
}

/// The issuer's public key as a JWK: the minter's, or the first of the issuer's JWKS.
async fn public_jwk(ctx: &Ctx<'_>, issuer: &str) -> Option<Value> {
    if let Some(m) = &ctx.opts.minter
        && !m.jwk().is_null()
    {
        return Some(m.jwk().clone());
    }
    let base = issuer.trim_end_matches('/');
    for doc in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ] {
        let Ok(meta) = get_json(&format!("{base}{doc}"), ctx.timeout).await else {
            continue;
        };
        let Some(jwks) = meta.get("jwks_uri").and_then(Value::as_str) else {
            continue;
        };
        let keys = get_json(jwks, ctx.timeout).await.ok()?;
        return keys.pointer("/keys/0").cloned();
    }
    None
}

/// Every authorization probe.
pub(crate) async fn all(ctx: &mut Ctx<'_>, ep: &Endpoint, session: Option<&HttpChannel>) {
    if !ctx.facts.auth {
        ctx.skip_all(
            super::AUTH,
            "the server asks for no token (no 401 without one)",
        );
        return;
    }
    let learned = ctx.facts.learned.clone();
    let c = &learned.challenge;
    let bearer = c.to_ascii_lowercase().starts_with("bearer");
    match (bearer, param(c, "resource_metadata"), &learned.prm) {
        (true, Some(_), _) => ctx.pass(AU_CHALLENGE, format!("WWW-Authenticate: {c}")),
        (true, None, Some(_)) => ctx.pass(
            AU_CHALLENGE,
            format!(
                "WWW-Authenticate: {c}; the metadata is at {}",
                learned.prm_from
            ),
        ),
        _ => ctx.fail(
            AU_CHALLENGE,
            format!("WWW-Authenticate: {c:?}; metadata: {}", learned.prm_from),
        ),
    }
    let resource = learned
        .prm
        .as_ref()
        .and_then(|p| p.get("resource"))
        .and_then(Value::as_str);
    match resource {
        Some(r) if r.trim_end_matches('/') == ep.url.trim_end_matches('/') => {
            ctx.pass(AU_PRM, format!("resource {r} at {}", learned.prm_from));
        }
        Some(r) => ctx.fail(
            AU_PRM,
            format!("resource {r} at {} is not {}", learned.prm_from, ep.url),
        ),
        None => ctx.fail(
            AU_PRM,
            format!("no metadata with a resource: {}", learned.prm_from),
        ),
    }

    let issuer = match &ctx.opts.minter {
        Some(m) => m.issuer().to_owned(),
        None => learned
            .prm
            .as_ref()
            .and_then(|p| p.pointer("/authorization_servers/0"))
            .and_then(Value::as_str)
            .unwrap_or("https://issuer.invalid")
            .to_owned(),
    };
    let now = now();
    let claims = json!({"iss": issuer, "sub": "switchboard-check-a", "aud": ctx.facts.audience,
        "client_id": CLIENT_ID, "scope": ctx.facts.scope, "iat": now, "exp": now + 300});
    expect_401(
        ctx,
        AU_GARBAGE,
        ep,
        &init_with(ep, Some(tokens::GARBAGE)),
        true,
    )
    .await;
    let none = tokens::unsigned(&claims);
    expect_401(ctx, AU_NONE, ep, &init_with(ep, Some(&none)), true).await;
    match public_jwk(ctx, &issuer).await {
        Some(jwk) => {
            let hmac = tokens::hmac_with_public_key(&jwk, &claims);
            expect_401(ctx, AU_HMAC, ep, &init_with(ep, Some(&hmac)), true).await;
        }
        None => ctx.skip(
            AU_HMAC,
            format!(
                "the issuer's public key was not found (metadata of {issuer}, or --issuer-key)"
            ),
        ),
    }
    minted(ctx, ep, session).await;
    ctx.skip(
        AU_TASKS,
        "observing it needs a task of user A, and making one calls a tool: not side-effect free",
    );
}

/// The probes with minted tokens.
async fn minted(ctx: &mut Ctx<'_>, ep: &Endpoint, session: Option<&HttpChannel>) {
    let opts = ctx.opts;
    let Some(m) = opts.minter.as_ref() else {
        ctx.skip_all(
            &MINTED,
            "needs minted tokens: give --issuer-key PEM and --issuer URL",
        );
        return;
    };
    let (aud, scope) = (ctx.facts.audience.clone(), ctx.facts.scope.clone());
    let Some(a) = session else {
        let failed = channel::open_http(
            ep,
            ctx.token("switchboard-check-a", ep).as_deref(),
            ctx.timeout,
        )
        .await
        .err()
        .unwrap_or_default();
        ctx.fail(
            AU_VALID,
            format!("a minted token for aud {aud} with scope {scope:?} was refused: {failed}"),
        );
        ctx.skip_all(
            &MINTED[1..],
            "the minted valid token was refused (see security/auth/valid-token)",
        );
        return;
    };
    ctx.pass(
        AU_VALID,
        format!(
            "aud {aud}, scope {scope:?}: session {}",
            a.session.as_deref().unwrap_or("(stateless)")
        ),
    );
    let good = m.claims("switchboard-check-a", &aud, &scope);
    let query = ep.at(&format!(
        "{}{}access_token={}",
        ep.path,
        if ep.path.contains('?') { "&" } else { "?" },
        m.sign(&good)
    ));
    let req = Req::post(&query, initialize_frame("init"));
    let out = wire::send(&query, &req, ctx.timeout).await;
    let shown = format!("sent {}; got {}", req.shown(), out.shown());
    match out.reply() {
        Some(r) if r.ok() => {
            if let Some(sid) = r.session() {
                super::end(ctx, ep, sid, None).await;
            }
            ctx.fail(AU_QUERY, shown);
        }
        _ => ctx.pass(AU_QUERY, shown),
    }
    let t = now();
    let bad: [(Probe, &[(&str, Value)]); 4] = [
        (
            AU_AUDIENCE,
            &[("aud", json!("https://other-resource.example/mcp"))],
        ),
        (AU_ISSUER, &[("iss", json!("https://other-issuer.example"))]),
        (
            AU_EXPIRED,
            &[("iat", json!(t - 900)), ("exp", json!(t - 600))],
        ),
        (
            AU_ISS_ARRAY,
            &[("iss", json!([good["iss"], "https://other-issuer.example"]))],
        ),
    ];
    for (p, changes) in bad {
        let mut claims = good.clone();
        for (k, v) in changes {
            claims[*k] = v.clone();
        }
        let req = init_with(ep, Some(&m.sign(&claims)));
        expect_401(ctx, p, ep, &req, false).await;
    }

    // A user whose sub equals the client id, and a token without sub from that client.
    let user_token = m.valid(CLIENT_ID, &aud, &scope);
    let mut no_sub = good.clone();
    if let Some(o) = no_sub.as_object_mut() {
        o.remove("sub");
    }
    let no_sub = m.sign(&no_sub);
    cross_use(ctx, AU_NO_SUB, ep, &user_token, &no_sub).await;
    let b = m.valid("switchboard-check-b", &aud, &scope);
    let a_token = a.token.clone().unwrap_or_default();
    cross_use(ctx, AU_BINDING, ep, &a_token, &b).await;
}

/// Opens a session with `owner`, then pings it with `other`: passes when refused.
async fn cross_use(ctx: &mut Ctx<'_>, p: Probe, ep: &Endpoint, owner: &str, other: &str) {
    let s = match channel::open_http(ep, Some(owner), ctx.timeout).await {
        Ok(s) => s,
        Err(e) => {
            ctx.fail(p, format!("the owner's token opened no session: {e}"));
            return;
        }
    };
    let Some(sid) = s.session.clone() else {
        ctx.skip(p, "stateless server: no session to take over");
        return;
    };
    let ping = channel::frame("cross", methods::PING, json!({}), false);
    let req = Req::post(ep, ping)
        .session(Some(&sid), &s.version)
        .set("Authorization", format!("Bearer {other}"));
    let out = wire::send(ep, &req, ctx.timeout).await;
    let shown = format!("sent {}; got {}", req.shown(), out.shown());
    match out.reply() {
        Some(r)
            if r.ok()
                && r.answer(&json!("cross"))
                    .is_some_and(|a| a.get("result").is_some()) =>
        {
            ctx.fail(p, format!("served in another user's session: {shown}"));
        }
        Some(r) => {
            ctx.saw(p, &r.body);
            ctx.pass(p, shown);
        }
        None => ctx.pass(p, shown),
    }
    channel::end_session(&s).await;
}
