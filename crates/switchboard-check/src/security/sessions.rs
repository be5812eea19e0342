//! Sessions: none from a refused `initialize` (foreign Origin, wrong Content-Type, invalid JSON,
//! no Accept, no token), and the ids themselves: visible ASCII, unpredictable, ended for good.

use std::collections::BTreeSet;

use serde_json::json;
use switchboard_types::methods;

use super::channel::{self, LATEST, initialize_frame};
use super::wire::{self, Endpoint, Outcome, Req};
use super::{
    Ctx, Probe, REJ_ACCEPT, REJ_JSON, REJ_ORIGIN, REJ_TOKEN, REJ_TYPE, SID_ALPHABET, SID_ENDED,
    SID_ENTROPY,
};

/// How many sessions the id probes open.
const SAMPLES: usize = 20;
/// The least entropy a session id should carry, estimated from its length and alphabet.
const MIN_BITS: f64 = 120.0;

/// The refused `initialize` requests.
pub(crate) async fn rejected(ctx: &mut Ctx<'_>, ep: &Endpoint) {
    let token = ctx.token("switchboard-check-a", ep);
    let init = || {
        let r = Req::post(ep, initialize_frame("init"));
        match &token {
            Some(t) => r.set("Authorization", format!("Bearer {t}")),
            None => r,
        }
    };
    let mut cases: Vec<(Probe, Req)> = vec![
        (REJ_ORIGIN, init().set("Origin", "http://evil.example")),
        (REJ_TYPE, init().set("Content-Type", "text/plain")),
        (REJ_JSON, {
            // The initialize cut just after `"params":{`.
            let full = initialize_frame("init");
            let cut = full.find("\"params\":{").map_or(full.len(), |i| i + 10);
            let mut r = init();
            r.body = wire::Body::Sized(full.as_bytes()[..cut].to_vec());
            r
        }),
        (REJ_ACCEPT, init().without("Accept")),
    ];
    if ctx.facts.auth {
        cases.push((REJ_TOKEN, init().without("Authorization")));
    }
    for (p, req) in cases {
        let out = wire::send(ep, &req, ctx.timeout).await;
        judge_rejected(ctx, p, ep, &req, &out, token.as_deref()).await;
    }
    if !ctx.facts.auth {
        ctx.skip(
            REJ_TOKEN,
            "the server asks for no token (no 401 without one)",
        );
    }
}

async fn judge_rejected(
    ctx: &mut Ctx<'_>,
    p: Probe,
    ep: &Endpoint,
    req: &Req,
    out: &Outcome,
    token: Option<&str>,
) {
    let shown = format!("sent {}; got {}", req.shown(), out.shown());
    let Some(r) = out.reply() else {
        ctx.pass(p, format!("{shown} (no answer, no session)"));
        return;
    };
    if !r.ok() {
        ctx.saw(p, &r.body);
    }
    match (r.ok(), r.session()) {
        (true, sid) => {
            if let Some(sid) = sid {
                super::end(ctx, ep, sid, token).await;
            }
            ctx.skip(
                p,
                format!("the server accepted this initialize ({shown}): nothing was refused"),
            );
        }
        (false, None) => ctx.pass(p, shown),
        (false, Some(sid)) => {
            // Is the session usable?
            let ping = channel::frame("after-refusal", methods::PING, json!({}), false);
            let mut use_it = Req::post(ep, ping).session(Some(sid), LATEST);
            if let Some(t) = token {
                use_it = use_it.set("Authorization", format!("Bearer {t}"));
            }
            let used = wire::send(ep, &use_it, ctx.timeout).await;
            ctx.fail(
                p,
                format!(
                    "{shown}; a refused initialize issued session {sid}; a ping in it: {}",
                    used.shown()
                ),
            );
            super::end(ctx, ep, sid, token).await;
        }
    }
}

/// Twenty fresh sessions: their ids' alphabet and entropy, then one ended and tried again.
pub(crate) async fn ids(ctx: &mut Ctx<'_>, ep: &Endpoint) {
    let all = [SID_ALPHABET, SID_ENTROPY, SID_ENDED];
    if !ctx.facts.legacy {
        let why = ctx
            .no_session_reason()
            .unwrap_or("the 2025 initialize does not succeed: no session to look at");
        ctx.skip_all(&all, why);
        return;
    }
    let token = ctx.token("switchboard-check-a", ep);
    let mut sids = Vec::new();
    for _ in 0..SAMPLES {
        match channel::open_http(ep, token.as_deref(), ctx.timeout).await {
            Ok(s) => match s.session.clone() {
                Some(id) => {
                    sids.push(id);
                    if sids.len() > 1 {
                        channel::end_session(&s).await;
                    }
                }
                None => {
                    ctx.skip_all(&all, "stateless server: initialize issues no session id");
                    return;
                }
            },
            Err(e) => {
                ctx.skip_all(&all, format!("a fresh initialize failed: {e}").as_str());
                return;
            }
        }
    }
    let bad: Vec<&String> = sids
        .iter()
        .filter(|s| s.is_empty() || !s.bytes().all(|b| (0x21..=0x7e).contains(&b)))
        .collect();
    match bad.first() {
        None => ctx.pass(SID_ALPHABET, format!("{SAMPLES} ids, e.g. {}", sids[0])),
        Some(b) => ctx.fail(
            SID_ALPHABET,
            format!("id {b:?} has bytes outside 0x21–0x7E"),
        ),
    }
    match entropy(&sids) {
        Ok(d) => ctx.pass(SID_ENTROPY, d),
        Err(d) => ctx.fail(SID_ENTROPY, d),
    }
    ended(ctx, ep, &sids[0], token.as_deref()).await;
}

/// DELETE, then a ping with the ended id.
async fn ended(ctx: &mut Ctx<'_>, ep: &Endpoint, sid: &str, token: Option<&str>) {
    let auth = |r: Req| match token {
        Some(t) => r.set("Authorization", format!("Bearer {t}")),
        None => r,
    };
    let delete = auth(Req::bodiless(ep, "DELETE").session(Some(sid), LATEST));
    let out = wire::send(ep, &delete, ctx.timeout).await;
    let status = out.reply().map(|r| r.status);
    if status == Some(405) {
        ctx.skip(
            SID_ENDED,
            "DELETE is 405: the server lets no client end a session, so no ended id can be tried",
        );
        return;
    }
    let ping = channel::frame("after-delete", methods::PING, json!({}), false);
    let again = auth(Req::post(ep, ping).session(Some(sid), LATEST));
    let after = wire::send(ep, &again, ctx.timeout).await;
    if let Some(r) = after.reply().filter(|r| !r.ok()) {
        ctx.saw(SID_ENDED, &r.body);
    }
    let detail = format!(
        "sent {}; got {} | then sent {}; got {}",
        delete.shown(),
        out.shown(),
        again.shown(),
        after.shown()
    );
    match (status, after.reply().map(|r| r.status)) {
        (Some(s), Some(404)) if (200..300).contains(&s) => ctx.pass(SID_ENDED, detail),
        _ => ctx.fail(SID_ENDED, detail),
    }
}

/// Unique, not sequential, and at least [`MIN_BITS`] by the positions that vary and their
/// alphabet; `Ok` with the estimate, `Err` with why not.
pub(crate) fn entropy(sids: &[String]) -> Result<String, String> {
    let unique: BTreeSet<&String> = sids.iter().collect();
    if unique.len() < sids.len() {
        return Err(format!(
            "{} repeated among {} ids",
            sids.len() - unique.len(),
            sids.len()
        ));
    }
    let chars: Vec<Vec<char>> = sids.iter().map(|s| s.chars().collect()).collect();
    let len = chars.iter().map(Vec::len).min().unwrap_or(0);
    // The positions (up to the shortest id) whose character is not the same in every id.
    let varying: Vec<usize> = (0..len)
        .filter(|&i| chars.iter().any(|c| c[i] != chars[0][i]))
        .collect();
    let extra: usize = chars.iter().map(|c| c.len() - len).max().unwrap_or(0);
    let seen: BTreeSet<char> = chars
        .iter()
        .flat_map(|c| varying.iter().map(move |&i| c[i]))
        .collect();
    let alphabet = alphabet_size(&seen);
    let bits = (varying.len() + extra) as f64 * alphabet.log2();
    // Derivable: two ids differing in only a few of the varying positions (a counter).
    let least = chars
        .iter()
        .enumerate()
        .flat_map(|(i, a)| chars[i + 1..].iter().map(move |b| (a, b)))
        .map(|(a, b)| varying.iter().filter(|&&i| a[i] != b[i]).count())
        .min()
        .unwrap_or(0);
    let numbers: Option<Vec<u128>> = sids.iter().map(|s| s.parse().ok()).collect();
    if let Some(n) = numbers.filter(|n| n.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] < 1 << 20))
    {
        return Err(format!("sequential: {} then {}", n[0], n[1]));
    }
    let shown = format!(
        "{} ids of {len}+ characters, {} positions vary over an alphabet of about {alphabet}: \
         about {bits:.0} bits; two ids differ in at least {least} positions (e.g. {}, {})",
        sids.len(),
        varying.len(),
        sids[0],
        sids[1]
    );
    if least * 4 < varying.len() {
        return Err(format!("derivable: {shown}"));
    }
    if bits < MIN_BITS {
        return Err(format!(
            "too short: {shown} (at least {MIN_BITS:.0} wanted)"
        ));
    }
    Ok(shown)
}

/// The size of the smallest usual alphabet holding `seen`.
fn alphabet_size(seen: &BTreeSet<char>) -> f64 {
    let all = |f: fn(&char) -> bool| seen.iter().all(f);
    if all(char::is_ascii_digit) {
        10.0
    } else if all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        || all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
    {
        16.0
    } else if all(|c| c.is_ascii_digit() || c.is_ascii_lowercase())
        || all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
    {
        36.0
    } else if all(char::is_ascii_alphanumeric) {
        62.0
    } else if all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '+' | '/' | '=')) {
        64.0
    } else {
        94.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_pass_and_counters_do_not() {
        let uuids: Vec<String> = (0..20u32)
            .map(|i| {
                let h = format!(
                    "{:032x}",
                    u128::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
                );
                format!(
                    "{}-{}-4{}-a{}-{}",
                    &h[..8],
                    &h[8..12],
                    &h[13..16],
                    &h[17..20],
                    &h[20..]
                )
            })
            .collect();
        assert!(entropy(&uuids).is_ok(), "{:?}", entropy(&uuids));
        let counters: Vec<String> = (0..20).map(|i| format!("session-{i:04}")).collect();
        assert!(entropy(&counters).is_err());
        let numbers: Vec<String> = (0..20).map(|i| (1000 + i).to_string()).collect();
        assert!(entropy(&numbers).unwrap_err().starts_with("sequential"));
        let repeated = vec!["a".to_owned(), "a".to_owned()];
        assert!(entropy(&repeated).unwrap_err().contains("repeated"));
    }
}
