//! `requestState` of revision 2026-07-28 (`[D26-38]`): attacker-controlled, so a tampered or
//! forged one must be refused with a JSON-RPC error, and (with minted tokens) another user must
//! not complete it. It needs a tool that answers `input_required`; the probes call one only when
//! the user names it (`--input-tool`), so that a server's tools are never called blindly.

use serde_json::{Map, Value, json};
use switchboard_types::{methods, modern};

use super::channel::{Channel, Exchange, HttpChannel, MODERN};
use super::wire;
use super::{Ctx, RS_FORGED, RS_OTHER_USER, RS_TAMPERED};
use crate::Target;
use crate::conn::{Conn, Got, envelope};
use crate::verdict::show;

/// A requestState nobody issued: base64 of `switchboard-check-forged`.
const FORGED: &str = "c3dpdGNoYm9hcmQtY2hlY2stZm9yZ2Vk";

/// The `_meta` envelope with the capabilities an input request may need.
fn meta() -> Value {
    let mut m = envelope(MODERN);
    m[modern::CLIENT_CAPABILITIES_KEY] = json!({"elicitation": {}, "sampling": {}, "roots": {}});
    m
}

/// A `tools/call` of `tool`, with `extra` params (`inputResponses`, `requestState`).
fn call_frame(id: &str, tool: &str, extra: Map<String, Value>) -> Value {
    let mut params = Map::new();
    params.insert("name".into(), json!(tool));
    params.insert("arguments".into(), json!({}));
    params.extend(extra);
    params.insert("_meta".into(), meta());
    json!({"jsonrpc": "2.0", "id": id, "method": methods::TOOLS_CALL, "params": params})
}

/// One modern request on `ch` (with `token` over HTTP).
async fn send(ch: &mut Chan<'_>, msg: &Value, token: Option<&str>) -> Exchange {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    match ch {
        Chan::Conn(c) => {
            let got = c.request_modern_raw(msg, MODERN).await;
            Exchange {
                sent: wire::trim(&msg.to_string()),
                answer: match &got {
                    Got::Frame(v) if v.is_object() => Some(v.clone()),
                    _ => None,
                },
                got: show(&got),
                status: None,
            }
        }
        Chan::Http(h) => {
            let mut h = (*h).clone();
            if let Some(t) = token {
                h.token = Some(t.to_owned());
            }
            Channel::Http(h).exchange(&msg.to_string(), &id).await
        }
    }
}

enum Chan<'a> {
    Conn(Box<Conn>),
    Http(&'a HttpChannel),
}

/// A plausible answer to each input request (declined, no roots, a short model answer).
fn responses(requests: &Value) -> Value {
    let mut out = Map::new();
    if let Some(m) = requests.as_object() {
        for (k, r) in m {
            let method = r.get("method").and_then(Value::as_str).unwrap_or("");
            let answer = match method {
                methods::ROOTS_LIST => json!({"roots": []}),
                methods::SAMPLING_CREATE_MESSAGE => json!({"role": "assistant",
                    "content": {"type": "text", "text": "no"}, "model": "switchboard-check",
                    "stopReason": "endTurn"}),
                _ => json!({"action": "decline"}),
            };
            out.insert(k.clone(), answer);
        }
    }
    Value::Object(out)
}

/// The first round: the tool's `input_required` result with its requestState.
async fn first_round(
    ch: &mut Chan<'_>,
    tool: &str,
    token: Option<&str>,
) -> Result<(String, Value), String> {
    let x = send(ch, &call_frame("rs-1", tool, Map::new()), token).await;
    let r = x.result().ok_or_else(|| format!("{tool}: {}", x.shown()))?;
    let state = r
        .get("requestState")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{tool} gave no requestState: {}", x.shown()))?;
    Ok((
        state.to_owned(),
        responses(r.get("inputRequests").unwrap_or(&Value::Null)),
    ))
}

/// The retry with `state`: passes when refused with an error.
async fn retry(
    ctx: &mut Ctx<'_>,
    ch: &mut Chan<'_>,
    p: super::Probe,
    tool: &str,
    (state, answers): (&str, &Value),
    token: Option<&str>,
) {
    let mut extra = Map::new();
    extra.insert("inputResponses".into(), answers.clone());
    extra.insert("requestState".into(), json!(state));
    let x = send(ch, &call_frame("rs-2", tool, extra), token).await;
    if let Some(e) = x.answer.as_ref().filter(|a| a.get("error").is_some()) {
        ctx.saw(p, &e.to_string());
        ctx.pass(p, x.shown());
    } else if x.status.is_some_and(|s| (400..500).contains(&s)) {
        ctx.pass(p, x.shown());
    } else {
        ctx.fail(p, x.shown());
    }
}

/// A state with one character changed in its middle.
fn tamper(state: &str) -> String {
    let mut chars: Vec<char> = state.chars().collect();
    let at = chars.len() / 2;
    if let Some(c) = chars.get_mut(at) {
        *c = if *c == 'A' { 'B' } else { 'A' };
    }
    chars.into_iter().collect()
}

/// Why the probes do not run, if they do not.
fn unable(ctx: &Ctx<'_>) -> Option<&'static str> {
    if !ctx.facts.modern {
        Some("the server does not speak 2026-07-28 (server/discover)")
    } else if ctx.opts.input_tool.is_none() {
        Some(
            "needs a tool answering input_required: give --input-tool NAME (no tool is called unless named)",
        )
    } else {
        None
    }
}

/// Tampered and forged states over a raw connection (the other-user probe needs HTTP tokens).
pub(crate) async fn over_conn(ctx: &mut Ctx<'_>, target: &Target) {
    if let Some(why) = unable(ctx) {
        ctx.skip_all(&[RS_TAMPERED, RS_FORGED], why);
    } else {
        let tool = ctx.opts.input_tool.clone().unwrap_or_default();
        match Conn::open(target, ctx.timeout) {
            Ok(mut c) => {
                // The connection's era is decided by its first request.
                let _ = c
                    .request_modern(json!("d"), methods::SERVER_DISCOVER, json!({}), MODERN)
                    .await;
                let mut ch = Chan::Conn(Box::new(c));
                rounds(ctx, &mut ch, &tool, None).await;
                if let Chan::Conn(c) = ch {
                    c.close().await;
                }
            }
            Err(e) => ctx.skip_all(&[RS_TAMPERED, RS_FORGED], &e.to_string()),
        }
    }
    ctx.skip(
        RS_OTHER_USER,
        "needs Streamable HTTP and minted tokens (two users)",
    );
}

/// Tampered, forged, and (with minted tokens) another user's state, over HTTP.
pub(crate) async fn over_http(ctx: &mut Ctx<'_>, modern: &HttpChannel) {
    if let Some(why) = unable(ctx) {
        ctx.skip_all(&[RS_TAMPERED, RS_FORGED, RS_OTHER_USER], why);
        return;
    }
    let tool = ctx.opts.input_tool.clone().unwrap_or_default();
    let mut ch = Chan::Http(modern);
    rounds(ctx, &mut ch, &tool, None).await;
    let b = ctx.token("switchboard-check-b", &modern.ep);
    let Some(b) = b else {
        ctx.skip(
            RS_OTHER_USER,
            "needs minted tokens on a server with authorization: --issuer-key and --issuer",
        );
        return;
    };
    match first_round(&mut ch, &tool, None).await {
        Ok((state, answers)) => {
            retry(
                ctx,
                &mut ch,
                RS_OTHER_USER,
                &tool,
                (&state, &answers),
                Some(&b),
            )
            .await;
        }
        Err(e) => ctx.fail(RS_OTHER_USER, format!("no input_required first round: {e}")),
    }
}

/// The tampered and forged probes on `ch`.
async fn rounds(ctx: &mut Ctx<'_>, ch: &mut Chan<'_>, tool: &str, token: Option<&str>) {
    match first_round(ch, tool, token).await {
        Ok((state, answers)) => {
            retry(
                ctx,
                ch,
                RS_TAMPERED,
                tool,
                (&tamper(&state), &answers),
                token,
            )
            .await;
            retry(ctx, ch, RS_FORGED, tool, (FORGED, &answers), token).await;
        }
        Err(e) => {
            let d = format!("no input_required first round: {e}");
            ctx.fail(RS_TAMPERED, &d);
            ctx.fail(RS_FORGED, &d);
        }
    }
}
