//! The checks themselves. Each opens what it needs: checks of the pre-handshake behaviour and of
//! version negotiation get a fresh connection, the rest share one initialized connection.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_types::methods;

use crate::conn::{Conn, Got, same_id};
use crate::verdict::{error_code, expect_code, fail, pass, show, skip};
use crate::{CheckError, CheckResult, Results, Target, modern};

/// A request method no server has (vendor-prefixed, so that no MCP revision can add it).
const UNKNOWN_METHOD: &str = "switchboard/no_such_method";
/// A notification method no server knows.
const UNKNOWN_NOTIFICATION: &str = "notifications/switchboard_check_unknown";

/// Runs all checks: the revision 2026-07-28 probe first (a fresh connection whose first
/// request is `server/discover`), then the checks of each era the server speaks. Returns
/// whether the 2025 handshake was served (the Streamable HTTP session rules need it).
///
/// A server that does not answer the probe gets the 2025 checks in their usual order (the
/// pre-handshake ones before any `initialize`, which matters to servers that keep state across
/// connections). A server that answers it is asked for the 2025 handshake first, on a
/// connection of its own, to learn whether it speaks that era at all.
pub(crate) async fn all(
    target: &Target,
    timeout: Duration,
    results: &mut Results,
) -> Result<bool, CheckError> {
    let probe = modern::probe(target, timeout).await?;
    if let modern::Probe::Modern(_, _) = &probe {
        let mut c = Conn::open(target, timeout)?;
        let served = c.handshake().await.is_some();
        c.close().await;
        if !served {
            results.push(skip(
                "LC",
                "the 2025 handshake",
                "not served: the server speaks revision 2026-07-28 only",
            ));
            if let modern::Probe::Modern(conn, discover) = probe {
                modern::all(*conn, &discover, results).await;
            }
            crate::apps::all(target, timeout, true, results).await;
            return Ok(false);
        }
    }
    pre_handshake(target, timeout, results).await?;
    negotiation(target, timeout, results).await?;
    let mut c = Conn::open(target, timeout)?;
    let Some(init) = c.handshake().await else {
        c.close().await;
        return Err(CheckError::Handshake);
    };
    results.push(handshake_shape(&init));
    let caps = init.get("capabilities").cloned().unwrap_or(json!({}));
    envelope(&mut c, results).await;
    gates(&mut c, &caps, results).await;
    tools(&mut c, &caps, results).await;
    pagination(&mut c, &caps, results).await;
    crate::skills::all(&mut c, &caps, results).await;
    oversized(&mut c, results).await;
    c.close().await;
    match probe {
        modern::Probe::Modern(conn, discover) => modern::all(*conn, &discover, results).await,
        modern::Probe::NotModern(answer) => results.push(skip(
            "D26-24",
            "revision 2026-07-28",
            format!("not served: server/discover answered {answer}"),
        )),
    }
    crate::apps::all(target, timeout, false, results).await;
    Ok(true)
}

async fn pre_handshake(
    target: &Target,
    timeout: Duration,
    out: &mut Results,
) -> Result<(), CheckError> {
    let mut c = Conn::open(target, timeout)?;
    if matches!(target, Target::Http(_)) {
        // Streamable HTTP has no session before initialize: a request without a session id is
        // answered 400 (SPEC-NOTES §6.6), so "ping before initialize" does not apply there.
        out.push(skip(
            "UT-1",
            "ping before initialize answers {}",
            "not applicable over Streamable HTTP (no session before initialize)",
        ));
    } else {
        let ping = c.request(json!(1), methods::PING, None).await;
        out.push(match &ping {
            Got::Frame(v) if v.get("result") == Some(&json!({})) => {
                pass("UT-1", "ping before initialize answers {}", "{}")
            }
            g => fail("UT-1", "ping before initialize answers {}", show(g)),
        });
    }
    let early = c.request(json!(2), methods::TOOLS_LIST, None).await;
    let after = c.initialize("2025-11-25").await;
    let initialized = matches!(&after, Got::Frame(v) if v.get("result").is_some());
    out.push(match error_code(&early) {
        Some(code) => pass(
            "LC-1",
            "a request before initialize is refused",
            format!("error {code}"),
        ),
        // A stateless HTTP server (no session id) cannot tie a request to an earlier
        // initialize, so it has nothing to refuse: the rule cannot be checked there.
        None if initialized && !c.has_session() => skip(
            "LC-1",
            "a request before initialize is refused",
            "stateless HTTP server: no session ties a request to an initialize",
        ),
        None => fail(
            "LC-1",
            "a request before initialize is refused",
            show(&early),
        ),
    });
    out.push(match &after {
        Got::Frame(v) if v.get("result").is_some() => pass(
            "LC-1",
            "the session survives an early request",
            "initialize then succeeded",
        ),
        g => fail("LC-1", "the session survives an early request", show(g)),
    });
    c.close().await;
    Ok(())
}

async fn negotiation(
    target: &Target,
    timeout: Duration,
    out: &mut Results,
) -> Result<(), CheckError> {
    let mut c = Conn::open(target, timeout)?;
    let r = c.initialize("2025-11-25").await;
    out.push(match &r {
        Got::Frame(v) => match v.pointer("/result/protocolVersion").and_then(Value::as_str) {
            Some("2025-11-25") => pass("LC-7", "a supported version is echoed", "2025-11-25"),
            Some(other) => pass(
                "LC-7",
                "a supported version is echoed",
                format!("server prefers {other} (2025-11-25 not supported)"),
            ),
            None => fail("LC-7", "a supported version is echoed", show(&r)),
        },
        g => fail("LC-7", "a supported version is echoed", show(g)),
    });
    c.close().await;
    let mut c = Conn::open(target, timeout)?;
    let r = c.initialize("1999-01-01").await;
    out.push(match &r {
        Got::Frame(v) => match v.pointer("/result/protocolVersion").and_then(Value::as_str) {
            Some(v) if v != "1999-01-01" => {
                pass("LC-8", "an unsupported version gets a counter-offer", v)
            }
            _ => fail(
                "LC-8",
                "an unsupported version gets a counter-offer (a result, not an error)",
                show(&r),
            ),
        },
        g => fail(
            "LC-8",
            "an unsupported version gets a counter-offer",
            show(g),
        ),
    });
    c.close().await;
    Ok(())
}

fn handshake_shape(init: &Value) -> CheckResult {
    let ok = init.get("protocolVersion").is_some_and(Value::is_string)
        && init.get("capabilities").is_some_and(Value::is_object)
        && init
            .pointer("/serverInfo/name")
            .is_some_and(Value::is_string)
        && init
            .pointer("/serverInfo/version")
            .is_some_and(Value::is_string);
    if ok {
        pass(
            "LC-3",
            "initialize result carries protocolVersion, capabilities, serverInfo",
            "complete",
        )
    } else {
        fail(
            "LC-3",
            "initialize result carries protocolVersion, capabilities, serverInfo",
            init.to_string(),
        )
    }
}

async fn envelope(c: &mut Conn, out: &mut Results) {
    let r = c.request(json!("p"), methods::PING, None).await;
    out.push(match &r {
        Got::Frame(v) if v.get("result") == Some(&json!({})) => {
            pass("UT-1", "ping answers {}", "{}")
        }
        g => fail("UT-1", "ping answers {}", show(g)),
    });
    for (id, what) in [
        (json!("7"), "a string id stays a string"),
        (json!(7), "an integer id stays an integer"),
        (
            json!(9007199254740993_u64),
            "an id beyond 2^53 is kept exactly",
        ),
    ] {
        // The answer must be the ping's result: over HTTP an error synthesized by our client
        // (an HTTP 4xx refusing the frame) carries the id we sent, not one the server wrote.
        let r = c.request(id.clone(), methods::PING, None).await;
        out.push(match &r {
            Got::Frame(v) if v.get("id") == Some(&id) && v.get("result").is_some() => {
                pass("JR-6", what, format!("id {id}"))
            }
            g => fail("JR-6", what, show(g)),
        });
    }
    c.sync().await;
    let r = c.request(json!(11), UNKNOWN_METHOD, Some(json!({}))).await;
    out.push(expect_code("JR", "an unknown method is -32601", &r, -32601));
    c.sync().await;
    let _ = c
        .send_text(&format!(
            r#"{{"jsonrpc":"2.0","id":12,"method":"{}""#,
            methods::PING
        ))
        .await;
    let r = c.recv().await;
    out.push(expect_code("JR", "malformed JSON is -32700", &r, -32700));
    c.sync().await;
    let _ = c
        .send_text(&format!(
            r#"{{"jsonrpc":"2.0","id":null,"method":"{}"}}"#,
            methods::PING
        ))
        .await;
    let r = c.recv().await;
    out.push(expect_code(
        "JR-4",
        "a null id is an invalid request (-32600)",
        &r,
        -32600,
    ));
    c.sync().await;
    let _ = c
        .send_text(&format!(
            r#"{{"jsonrpc":"1.0","id":13,"method":"{}"}}"#,
            methods::PING
        ))
        .await;
    let r = c.recv().await;
    out.push(expect_code(
        "JR-1",
        "a wrong jsonrpc version is -32600",
        &r,
        -32600,
    ));
    // A notification is never answered: the next frame must be the answer to the ping behind it.
    c.sync().await;
    let _ = c.notify(UNKNOWN_NOTIFICATION).await;
    let _ = c
        .send_text(&format!(
            r#"{{"jsonrpc":"2.0","method":"{}","params":{{}}}}"#,
            methods::NOTIFICATIONS_CANCELLED
        ))
        .await;
    let _ = c
        .send(&json!({"jsonrpc": "2.0", "id": "after", "method": methods::PING}))
        .await;
    let r = c.recv().await;
    out.push(match &r {
        Got::Frame(v) if same_id(&json!("after"), v.get("id")) => pass(
            "JR-11",
            "notifications are never answered",
            "next frame answered the ping",
        ),
        g => fail(
            "JR-11",
            "notifications are never answered",
            format!("got {} before the ping answer", show(g)),
        ),
    });
}

async fn gates(c: &mut Conn, caps: &Value, out: &mut Results) {
    let probes = [
        ("tools", methods::TOOLS_LIST, json!({})),
        ("resources", methods::RESOURCES_LIST, json!({})),
        ("prompts", methods::PROMPTS_LIST, json!({})),
        (
            "logging",
            methods::LOGGING_SET_LEVEL,
            json!({"level": "info"}),
        ),
        (
            "completions",
            methods::COMPLETION_COMPLETE,
            json!({"ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        ),
    ];
    let mut any = false;
    c.sync().await;
    for (i, (cap, method, params)) in probes.into_iter().enumerate() {
        if caps.get(cap).is_some() {
            continue;
        }
        any = true;
        let r = c
            .request(json!(format!("gate-{i}")), method, Some(params))
            .await;
        out.push(match error_code(&r) {
            Some(-32601) => pass(
                "CP-1",
                "a method of an undeclared capability is -32601",
                format!("{method}: -32601"),
            ),
            _ => fail(
                "CP-1",
                "a method of an undeclared capability is -32601",
                format!("{method}: {}", show(&r)),
            ),
        });
    }
    if !any {
        out.push(skip(
            "CP-1",
            "a method of an undeclared capability is -32601",
            "the server declares every capability",
        ));
    }
}

async fn tools(c: &mut Conn, caps: &Value, out: &mut Results) {
    if caps.get("tools").is_none() {
        out.push(skip(
            "SF-6",
            "tools are listed with an object inputSchema",
            "no tools capability",
        ));
        return;
    }
    let mut all = Vec::new();
    let mut cursor: Option<Value> = None;
    for page in 0..100 {
        let params = cursor.as_ref().map_or(json!({}), |c| json!({"cursor": c}));
        let Got::Frame(r) = c
            .request(
                json!(format!("tl-{page}")),
                methods::TOOLS_LIST,
                Some(params),
            )
            .await
        else {
            break;
        };
        all.extend(
            r.pointer("/result/tools")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
        );
        cursor = r.pointer("/result/nextCursor").cloned();
        if cursor.is_none() {
            break;
        }
    }
    let bad: Vec<String> = all
        .iter()
        .filter(|t| t.pointer("/inputSchema/type") != Some(&json!("object")))
        .map(|t| t.get("name").map(Value::to_string).unwrap_or_default())
        .collect();
    out.push(if bad.is_empty() {
        pass(
            "SF-6",
            "tools are listed with an object inputSchema",
            format!("{} tools", all.len()),
        )
    } else {
        fail(
            "SF-6",
            "tools are listed with an object inputSchema",
            format!("not an object schema: {}", bad.join(", ")),
        )
    });
    let r = c
        .request(
            json!("unknown-tool"),
            methods::TOOLS_CALL,
            Some(json!({"name": "switchboard_check_no_such_tool", "arguments": {}})),
        )
        .await;
    out.push(match &r {
        Got::Frame(v) if error_code(&r) == Some(-32602) => pass(
            "SF",
            "an unknown tool is refused",
            format!("error -32602 {}", v["error"]["message"]),
        ),
        Got::Frame(v) if v.pointer("/result/isError") == Some(&json!(true)) => {
            pass("SF", "an unknown tool is refused", "isError result")
        }
        g => fail(
            "SF",
            "an unknown tool is refused (-32602 or an isError result)",
            show(g),
        ),
    });
    let r = c
        .request(json!("no-name"), methods::TOOLS_CALL, Some(json!({})))
        .await;
    out.push(expect_code(
        "JR",
        "bad params (tools/call without name) are -32602",
        &r,
        -32602,
    ));
}

async fn pagination(c: &mut Conn, caps: &Value, out: &mut Results) {
    let lists = [
        ("tools", methods::TOOLS_LIST, "tools"),
        ("resources", methods::RESOURCES_LIST, "resources"),
        ("prompts", methods::PROMPTS_LIST, "prompts"),
    ];
    let Some((_, method, _)) = lists
        .iter()
        .find(|(cap, _, _)| caps.get(*cap).is_some())
        .copied()
    else {
        out.push(skip(
            "UT-12",
            "a forged cursor is refused",
            "no paginated list declared",
        ));
        return;
    };
    let r = c
        .request(
            json!("forged"),
            method,
            Some(json!({"cursor": "switchboard-check-forged-cursor"})),
        )
        .await;
    out.push(match error_code(&r) {
        Some(-32602) => pass("UT-12", "a forged cursor is refused with -32602", method),
        Some(code) => fail(
            "UT-12",
            "a forged cursor is refused with -32602",
            format!("{method}: error {code}"),
        ),
        None => fail(
            "UT-12",
            "a forged cursor is refused with -32602",
            format!("{method}: {}", show(&r)),
        ),
    });
}

async fn oversized(c: &mut Conn, out: &mut Results) {
    let pad = "x".repeat(20 * 1024 * 1024);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"{ping}","params":{{"pad":"{pad}"}}}}"#,
        ping = methods::PING
    );
    let _ = c.send_text(&big).await;
    drop(big);
    // Whatever the answer to the oversized frame, the server must live on and serve the next ping.
    let r = c.request(json!("after-big"), methods::PING, None).await;
    out.push(match &r {
        Got::Frame(v) if v.get("result").is_some() && c.alive() => pass(
            "ST",
            "a 20 MiB frame does not crash the server",
            "next ping answered",
        ),
        g => fail("ST", "a 20 MiB frame does not crash the server", show(g)),
    });
}
