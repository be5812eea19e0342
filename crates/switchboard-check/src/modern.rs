//! The checks of revision 2026-07-28 (SPEC-2026-NOTES, `[D26-*]`): no handshake, every request
//! carries its own `_meta` envelope. They run on one connection whose first request is
//! `server/discover` (on stdio the first request decides the connection's era), so a dual-era
//! server is checked in both eras and a server that speaks only 2026-07-28 is checked at all.

use std::time::Duration;

use serde_json::{Map, Value, json};
use switchboard_types::{methods, modern};

use crate::conn::{Conn, Got, envelope};
use crate::verdict::{error_code, expect_code, fail, pass, show, skip};
use crate::{CheckError, CheckResult, Results, Target};

/// The revision these checks speak.
pub(crate) const REVISION: &str = "2026-07-28";

/// How many results [`all`] gives when the server speaks the revision.
pub(crate) const COUNT: usize = 14;

/// A request method no server has (vendor-prefixed, so that no MCP revision can add it).
const UNKNOWN_METHOD: &str = "switchboard/no_such_method";

/// What the `server/discover` probe learned.
pub(crate) enum Probe {
    /// The server answered a `DiscoverResult` naming this revision: the connection that asked,
    /// and the result.
    Modern(Box<Conn>, Value),
    /// Anything else: the answer, shown.
    NotModern(String),
}

/// Asks a fresh connection `server/discover` in this revision (`[D26-121]`: what a dual-era
/// client does first).
///
/// # Errors
/// The server cannot be started or reached.
pub(crate) async fn probe(target: &Target, timeout: Duration) -> Result<Probe, CheckError> {
    let mut c = Conn::open(target, timeout)?;
    let got = c
        .request_modern(
            json!("discover"),
            methods::SERVER_DISCOVER,
            json!({}),
            REVISION,
        )
        .await;
    let served = match &got {
        Got::Frame(v) => v.get("result").filter(|r| {
            r.get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|vs| vs.iter().any(|v| v == REVISION))
        }),
        _ => None,
    };
    match served {
        Some(result) => {
            let result = result.clone();
            Ok(Probe::Modern(Box::new(c), result))
        }
        None => {
            c.close().await;
            Ok(Probe::NotModern(show(&got)))
        }
    }
}

/// Whether the result of `got` carries a `resultType` (`[D26-4]`, `[D26-19]`); errors and
/// non-answers are not results and say nothing.
fn missing_result_type(got: &Got, method: &str, missing: &mut Vec<String>) {
    if let Got::Frame(v) = got
        && let Some(r) = v.get("result")
        && !r.get("resultType").is_some_and(Value::is_string)
    {
        missing.push(method.to_owned());
    }
}

/// The cache hints of a cacheable result (`[D26-90]`, `[D26-91]`): `ttlMs` a non-negative
/// integer and `cacheScope` `public` or `private`.
fn cache_hints(result: &Value) -> Result<String, String> {
    let ttl = result.get("ttlMs");
    let scope = result.get("cacheScope").and_then(Value::as_str);
    match (ttl.and_then(Value::as_u64), scope) {
        (Some(t), Some(s @ ("public" | "private"))) => Ok(format!("ttlMs {t}, cacheScope {s}")),
        _ => Err(format!(
            "ttlMs {}, cacheScope {}",
            ttl.map_or("absent".into(), Value::to_string),
            scope.unwrap_or("absent")
        )),
    }
}

/// Runs the checks on the connection the probe opened, then closes it.
pub(crate) async fn all(mut c: Conn, discover: &Value, out: &mut Results) {
    let mut no_type = Vec::new();
    if !discover.get("resultType").is_some_and(Value::is_string) {
        no_type.push(methods::SERVER_DISCOVER.to_owned());
    }
    let caps = discover.get("capabilities").cloned().unwrap_or(json!({}));
    out.push(discover_shape(discover));
    out.push(match cache_hints(discover) {
        Ok(d) => pass("D26-90", "server/discover carries cache hints", d),
        Err(d) => fail("D26-90", "server/discover carries cache hints", d),
    });

    // [D26-9]: params without `_meta`, and `_meta` without client capabilities.
    let bare = c
        .request_modern_raw(
            &json!({"jsonrpc": "2.0", "id": "no-meta", "method": methods::TOOLS_LIST, "params": {}}),
            REVISION,
        )
        .await;
    let mut half = envelope(REVISION);
    if let Some(m) = half.as_object_mut() {
        m.remove(modern::CLIENT_CAPABILITIES_KEY);
    }
    let half = c
        .request_modern_raw(
            &json!({"jsonrpc": "2.0", "id": "half-meta", "method": methods::TOOLS_LIST,
                "params": {"_meta": half}}),
            REVISION,
        )
        .await;
    out.push(match (error_code(&bare), error_code(&half)) {
        (Some(-32602), Some(-32602)) => pass(
            "D26-9",
            "a request without its _meta envelope is refused with -32602",
            "no _meta: -32602; no clientCapabilities: -32602",
        ),
        _ => fail(
            "D26-9",
            "a request without its _meta envelope is refused with -32602",
            format!(
                "no _meta: {}; no clientCapabilities: {}",
                show(&bare),
                show(&half)
            ),
        ),
    });

    out.push(unsupported_revision(&mut c).await);

    // [D26-11]: clientInfo is optional.
    let mut anonymous = envelope(REVISION);
    if let Some(m) = anonymous.as_object_mut() {
        m.remove(modern::CLIENT_INFO_KEY);
    }
    let got = c
        .request_modern(
            json!("anonymous"),
            methods::SERVER_DISCOVER,
            json!({"_meta": anonymous}),
            REVISION,
        )
        .await;
    missing_result_type(&got, methods::SERVER_DISCOVER, &mut no_type);
    out.push(match &got {
        Got::Frame(v) if v.get("result").is_some() => pass(
            "D26-11",
            "a request without clientInfo is served",
            "answered",
        ),
        g => fail("D26-11", "a request without clientInfo is served", show(g)),
    });

    let got = c
        .request_modern(json!("unknown"), UNKNOWN_METHOD, json!({}), REVISION)
        .await;
    out.push(expect_code(
        "D26-60",
        "an unknown method gets -32601",
        &got,
        -32601,
    ));

    // [D26-2]: a null id is no request id. The answer cannot name the request, so it is the
    // next frame (the connection is otherwise quiet).
    let sent = c
        .send_modern_raw(
            &json!({"jsonrpc": "2.0", "id": null, "method": methods::SERVER_DISCOVER,
                "params": {"_meta": envelope(REVISION)}}),
            REVISION,
        )
        .await;
    let got = match sent {
        Ok(()) => c.recv().await,
        Err(e) => Got::Closed(format!("send failed: {e}")),
    };
    out.push(expect_code(
        "D26-2",
        "a null id is refused with -32600",
        &got,
        -32600,
    ));

    out.push(capabilities_served(&mut c, &caps, &mut no_type).await);
    let (schemas, unknown_tool, stable) = tools(&mut c, &caps, &mut no_type).await;
    out.push(schemas);
    out.push(unknown_tool);
    out.push(stable);
    out.push(unknown_resource(&mut c, &caps).await);

    out.push(if no_type.is_empty() {
        pass(
            "D26-19",
            "every result carries resultType",
            "every result seen",
        )
    } else {
        no_type.sort();
        no_type.dedup();
        fail(
            "D26-19",
            "every result carries resultType",
            format!("missing on {}", no_type.join(", ")),
        )
    });
    // What came unasked while the checks ran: no request ([D26-1]), and no log message for
    // requests that did not opt in with a log level ([D26-84]).
    let stray = c.take_backlog();
    let requests: Vec<&Value> = stray
        .iter()
        .filter(|f| f.get("method").is_some() && f.get("id").is_some())
        .collect();
    let logs = stray
        .iter()
        .filter(|f| f.get("method").and_then(Value::as_str) == Some(methods::NOTIFICATIONS_MESSAGE))
        .count();
    out.push(match (requests.first(), logs) {
        (None, 0) => pass(
            "D26-1",
            "no server requests and no unrequested log messages",
            "none seen",
        ),
        (Some(r), _) => fail(
            "D26-1",
            "no server requests and no unrequested log messages",
            format!(
                "the server sent a request: {}",
                show(&Got::Frame((*r).clone()))
            ),
        ),
        (None, n) => fail(
            "D26-84",
            "no server requests and no unrequested log messages",
            format!("{n} notifications/message without a log level asked for"),
        ),
    });
    c.close().await;
}

fn discover_shape(d: &Value) -> CheckResult {
    let versions = d.get("supportedVersions").and_then(Value::as_array);
    let ok = versions.is_some_and(|v| v.iter().all(Value::is_string))
        && d.get("capabilities").is_some_and(Value::is_object);
    let names = versions
        .map(|v| {
            v.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    if ok {
        pass(
            "D26-24",
            "server/discover names its revisions and capabilities",
            format!("supportedVersions [{names}]"),
        )
    } else {
        fail(
            "D26-24",
            "server/discover names its revisions and capabilities",
            d.to_string(),
        )
    }
}

async fn unsupported_revision(c: &mut Conn) -> CheckResult {
    const NAME: &str = "an unsupported revision gets -32022 naming the served ones";
    let bogus = "1999-01-01";
    let got = c
        .request_modern(
            json!("bogus-version"),
            methods::TOOLS_LIST,
            json!({"_meta": envelope(bogus)}),
            bogus,
        )
        .await;
    let Got::Frame(v) = &got else {
        return fail("D26-27", NAME, show(&got));
    };
    let supported = v
        .pointer("/error/data/supported")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|x| x == REVISION));
    let requested = v.pointer("/error/data/requested") == Some(&json!(bogus));
    match error_code(&got) {
        Some(-32022) if supported && requested => pass("D26-27", NAME, "-32022 with data"),
        Some(-32022) => fail(
            "D26-27",
            NAME,
            format!(
                "-32022 without data.supported / data.requested: {}",
                show(&got)
            ),
        ),
        _ => fail("D26-27", NAME, show(&got)),
    }
}

/// `[D26-26]`, `[D26-30]`: a declared list method answers, an undeclared one gets -32601.
async fn capabilities_served(c: &mut Conn, caps: &Value, no_type: &mut Vec<String>) -> CheckResult {
    const NAME: &str = "declared capabilities are served, undeclared ones refused";
    let mut notes = Vec::new();
    let mut bad = Vec::new();
    for (cap, method) in [
        ("tools", methods::TOOLS_LIST),
        ("prompts", methods::PROMPTS_LIST),
        ("resources", methods::RESOURCES_LIST),
    ] {
        let got = c
            .request_modern(json!(format!("cap-{cap}")), method, json!({}), REVISION)
            .await;
        missing_result_type(&got, method, no_type);
        let declared = caps.get(cap).is_some();
        let answered = matches!(&got, Got::Frame(v) if v.get("result").is_some());
        match (declared, answered, error_code(&got)) {
            (true, true, _) => {
                if let Got::Frame(v) = &got
                    && let Err(d) = cache_hints(&v["result"])
                {
                    bad.push(format!("{method} lacks cache hints ({d})"));
                }
                notes.push(format!("{method} served"));
            }
            (false, false, Some(-32601)) => notes.push(format!("{method} -32601")),
            (true, _, _) => bad.push(format!("{cap} declared, {method}: {}", show(&got))),
            (false, _, _) => bad.push(format!("{cap} not declared, {method}: {}", show(&got))),
        }
    }
    if bad.is_empty() {
        pass("D26-26", NAME, notes.join(", "))
    } else {
        fail("D26-26", NAME, bad.join("; "))
    }
}

/// Tool schemas (`[D26-97]`), an unknown tool (`SF`), and a list that does not change with
/// earlier requests (`[D26-96]`).
async fn tools(
    c: &mut Conn,
    caps: &Value,
    no_type: &mut Vec<String>,
) -> (CheckResult, CheckResult, CheckResult) {
    const SCHEMAS: &str = "every tool's inputSchema is an object schema";
    const UNKNOWN: &str = "an unknown tool is refused with -32602";
    const STABLE: &str = "tools/list does not depend on earlier requests";
    if caps.get("tools").is_none() {
        let why = "tools not declared";
        return (
            skip("D26-97", SCHEMAS, why),
            skip("SF", UNKNOWN, why),
            skip("D26-96", STABLE, why),
        );
    }
    let first = c
        .request_modern(json!("tools-1"), methods::TOOLS_LIST, json!({}), REVISION)
        .await;
    missing_result_type(&first, methods::TOOLS_LIST, no_type);
    let list = match &first {
        Got::Frame(v) => v
            .pointer("/result/tools")
            .and_then(Value::as_array)
            .cloned(),
        _ => None,
    };
    let schemas = match &list {
        None => fail("D26-97", SCHEMAS, show(&first)),
        Some(tools) => {
            let bad: Vec<String> = tools
                .iter()
                .filter(|t| {
                    t.get("inputSchema").and_then(|s| s.get("type")) != Some(&json!("object"))
                })
                .map(|t| t.get("name").map_or("?".into(), Value::to_string))
                .collect();
            if bad.is_empty() {
                pass("D26-97", SCHEMAS, format!("{} tools", tools.len()))
            } else {
                fail(
                    "D26-97",
                    SCHEMAS,
                    format!("not an object schema: {}", bad.join(", ")),
                )
            }
        }
    };
    let got = c
        .request_modern(
            json!("unknown-tool"),
            methods::TOOLS_CALL,
            json!({"name": "switchboard_check_no_such_tool", "arguments": {}}),
            REVISION,
        )
        .await;
    let unknown = expect_code("SF", UNKNOWN, &got, -32602);
    // The same list again, asked with other client capabilities in between: the list is the
    // requester's, never the connection's.
    let mut other = envelope(REVISION);
    other[modern::CLIENT_CAPABILITIES_KEY] = json!({"roots": {}, "elicitation": {}});
    let _ = c
        .request_modern(
            json!("tools-other"),
            methods::TOOLS_LIST,
            json!({"_meta": other}),
            REVISION,
        )
        .await;
    let second = c
        .request_modern(json!("tools-2"), methods::TOOLS_LIST, json!({}), REVISION)
        .await;
    let tools_of = |g: &Got| match g {
        Got::Frame(v) => v.pointer("/result/tools").cloned(),
        _ => None,
    };
    let stable = match (tools_of(&first), tools_of(&second)) {
        (Some(a), Some(b)) if a == b => pass("D26-96", STABLE, "the same list both times"),
        (Some(_), Some(_)) => fail("D26-96", STABLE, "the list changed between two requests"),
        _ => fail("D26-96", STABLE, show(&second)),
    };
    (schemas, unknown, stable)
}

/// `[D26-98]`: an unknown resource is -32602, never -32002.
async fn unknown_resource(c: &mut Conn, caps: &Value) -> CheckResult {
    const NAME: &str = "an unknown resource gets -32602 (not -32002)";
    if caps.get("resources").is_none() {
        return skip("D26-98", NAME, "resources not declared");
    }
    let mut params = Map::new();
    params.insert("uri".into(), json!("switchboard-check://no/such/resource"));
    let got = c
        .request_modern(
            json!("unknown-resource"),
            methods::RESOURCES_READ,
            Value::Object(params),
            REVISION,
        )
        .await;
    expect_code("D26-98", NAME, &got, -32602)
}
