//! JSON keys a lenient parser folds: `"Method"`, `"METHOD"`, `"JSONRPC"`, look-alikes, and two
//! `"method"` keys; over any transport. And, over stdio, a line far beyond any sane bound.

use serde_json::{Value, json};
use switchboard_types::methods;

use super::channel::{Channel, HttpChannel, frame};
use super::{
    BIG_LINE, Ctx, DUP_KEYS, DUP_KEYS_HEADER, KEY_CASE, KEY_JSONRPC, KEY_UNICODE, KEY_UPPER, Probe,
};
use crate::conn::{Conn, Got};
use crate::verdict::show;

/// The oversized line's padding.
const LINE: usize = 20 << 20;

/// The `_meta` envelope the channel's revision needs, as JSON text to splice in a frame.
fn params(c: &Channel) -> String {
    if c.modern() {
        format!(
            r#"{{"_meta":{}}}"#,
            crate::conn::envelope(super::channel::MODERN)
        )
    } else {
        "{}".into()
    }
}

/// Sends each frame of `frames` (`{id}` and `{params}` replaced); the probe fails when any of them
/// is served (answered with a result).
async fn none_served(ctx: &mut Ctx<'_>, c: &mut Channel, p: Probe, frames: &[&str], why: &str) {
    let mut shown = Vec::new();
    let mut served = None;
    for (n, f) in frames.iter().enumerate() {
        let id = format!("{}-{n}", p.name.rsplit('/').next().unwrap_or("k"));
        let text = f.replace("{id}", &id).replace("{params}", &params(c));
        let x = c.exchange(&text, &json!(id)).await;
        if let Some(a) = x.answer.as_ref().filter(|a| a.get("error").is_some()) {
            ctx.saw(p, &a.to_string());
        }
        if x.result().is_some() && served.is_none() {
            served = Some(x.shown());
        }
        shown.push(x.shown());
    }
    match served {
        Some(s) => ctx.fail(p, format!("served ({why}): {s}")),
        None => ctx.pass(p, shown.join(" | ")),
    }
}

/// The folded-key and duplicate-key probes on `c`, which is then closed.
pub(crate) async fn all(ctx: &mut Ctx<'_>, mut c: Channel) {
    let ping = methods::PING;
    none_served(
        ctx,
        &mut c,
        KEY_CASE,
        &[&format!(
            r#"{{"jsonrpc":"2.0","id":"{{id}}","Method":"{ping}","params":{{params}}}}"#
        )],
        "\"Method\" read as \"method\"",
    )
    .await;
    none_served(
        ctx,
        &mut c,
        KEY_UPPER,
        &[&format!(
            r#"{{"jsonrpc":"2.0","id":"{{id}}","METHOD":"{ping}","params":{{params}}}}"#
        )],
        "\"METHOD\" read as \"method\"",
    )
    .await;
    none_served(
        ctx,
        &mut c,
        KEY_JSONRPC,
        &[
            &format!(r#"{{"JSONRPC":"2.0","id":"{{id}}","method":"{ping}","params":{{params}}}}"#),
            &format!(
                r#"{{"j\u017fonrpc":"2.0","id":"{{id}}","method":"{ping}","params":{{params}}}}"#
            ),
        ],
        "a folded version key read as \"jsonrpc\", or no \"jsonrpc\" required (JR-1)",
    )
    .await;
    none_served(
        ctx,
        &mut c,
        KEY_UNICODE,
        &[
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{{id}}","meth\u0130d":"{ping}","params":{{params}}}}"#
            ),
            &format!(
                r#"{{"jsonrpc":"2.0","id":"{{id}}","method\u200b":"{ping}","params":{{params}}}}"#
            ),
        ],
        "a look-alike key read as \"method\"",
    )
    .await;
    duplicate_keys(ctx, &mut c).await;
    c.close().await;
}

/// Which method a result came from: `ping` answers `{}`, `server/discover` its versions.
fn acted_on(result: &Value) -> &'static str {
    if result.get("supportedVersions").is_some() {
        methods::SERVER_DISCOVER
    } else {
        methods::PING
    }
}

/// A method no server has: answered -32601 when the server acts on it.
const UNKNOWN: &str = "switchboard/no_such_method";

/// Two `"method"` keys (`ping` and a method nobody has), in both orders: refused, or the same
/// one of the two (first or last) each time.
async fn duplicate_keys(ctx: &mut Ctx<'_>, c: &mut Channel) {
    let p = params(c);
    let (a, b) = (methods::PING, UNKNOWN);
    let mut taken = Vec::new();
    let mut shown = Vec::new();
    for (n, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
        let id = format!("dup-keys-{n}");
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"{x}","method":"{y}","params":{p}}}"#
        );
        let got = c.exchange(&text, &json!(id)).await;
        let code = got
            .answer
            .as_ref()
            .and_then(|a| a.pointer("/error/code"))
            .and_then(Value::as_i64);
        if code.is_some() {
            ctx.saw(DUP_KEYS, &got.got);
        }
        // ping served: the ping key was taken; -32601: the unknown one was.
        let which = match (got.result().is_some(), code) {
            (true, _) => Some(methods::PING),
            (false, Some(-32601)) => Some(UNKNOWN),
            _ => None,
        };
        taken.push(match which {
            Some(m) if m == x => "the first",
            Some(_) => "the last",
            None if got.answer.is_some() || got.status.is_some_and(|s| s >= 400) => "refused",
            None => "unanswered",
        });
        shown.push(got.shown());
    }
    let detail = format!(
        "{} then {} of two \"method\" keys; {}",
        taken[0],
        taken[1],
        shown.join(" | ")
    );
    if taken[0] == taken[1] {
        ctx.pass(DUP_KEYS, detail);
    } else {
        ctx.fail(DUP_KEYS, format!("inconsistent: {detail}"));
    }
}

/// Revision 2026-07-28 over HTTP: `Mcp-Method` naming ping, and a body with two method keys, ping
/// then server/discover (and the reverse): serving the method the header did not name is
/// the header check and the handler reading different keys.
pub(crate) async fn header_mismatch(ctx: &mut Ctx<'_>, modern: &HttpChannel) {
    if !ctx.facts.modern {
        ctx.skip(
            DUP_KEYS_HEADER,
            "the server does not speak 2026-07-28 (server/discover)",
        );
        return;
    }
    let env = crate::conn::envelope(super::channel::MODERN);
    let (a, b) = (methods::PING, methods::SERVER_DISCOVER);
    let mut shown = Vec::new();
    let mut bad = None;
    for (n, (x, y)) in [(a, b), (b, a)].into_iter().enumerate() {
        let id = format!("dup-keys-header-{n}");
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"{x}","method":"{y}","params":{{"_meta":{env}}}}}"#
        );
        let req = modern.request(&text, &[("Mcp-Method", x)]);
        let got = modern.exchange_req(&req, &json!(id)).await;
        if let Some(r) = got.result()
            && acted_on(r) != x
        {
            bad = Some(format!(
                "Mcp-Method {x} but {} served: {}",
                acted_on(r),
                got.shown()
            ));
        }
        shown.push(got.shown());
    }
    match bad {
        Some(d) => ctx.fail(DUP_KEYS_HEADER, d),
        None => ctx.pass(DUP_KEYS_HEADER, shown.join(" | ")),
    }
}

/// A 20 MiB line, then a ping on the same connection.
pub(crate) async fn oversized_line(ctx: &mut Ctx<'_>, target: &crate::Target) {
    let mut c = match Conn::open(target, ctx.timeout) {
        Ok(c) => c,
        Err(e) => {
            ctx.fail(BIG_LINE, format!("a new connection: {e}"));
            return;
        }
    };
    if c.handshake().await.is_none() {
        c.close().await;
        ctx.skip(BIG_LINE, "no 2025 handshake on a fresh connection");
        return;
    }
    let text = frame(
        "big",
        methods::PING,
        json!({"pad": "a".repeat(LINE)}),
        false,
    );
    let sent = c.send_text(&text).await;
    drop(text);
    let big = match sent {
        Ok(()) => c.response(&json!("big")).await,
        Err(e) => Got::Closed(format!("send failed: {e}")),
    };
    let after = c.request(json!("after-big"), methods::PING, None).await;
    let lives = matches!(&after, Got::Frame(v) if v.get("result").is_some());
    let detail = format!(
        "sent {{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"ping\",\"params\":{{\"pad\":\"<{LINE} × 'a'>\"}}}}; got {} | then a ping: {}",
        show(&big),
        show(&after)
    );
    if let Got::Frame(v) = &big {
        ctx.saw(BIG_LINE, &v.to_string());
    }
    let served = matches!(&big, Got::Frame(v) if v.get("result").is_some());
    match (served, lives) {
        (false, true) => ctx.pass(BIG_LINE, detail),
        (true, _) => ctx.fail(BIG_LINE, format!("the 20 MiB line was served: {detail}")),
        (false, false) => ctx.fail(BIG_LINE, format!("the server no longer answers: {detail}")),
    }
    c.close().await;
}
