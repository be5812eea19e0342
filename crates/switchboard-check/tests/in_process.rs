//! The library against servers in the test's own process, over the in-memory pair: our server
//! passes every check it is given, a server that says yes to everything fails exactly the rules
//! it breaks, and the errors, the observer and the report forms behave as documented.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use support::{in_process, scripted};
use switchboard_check::{CheckError, Checker, Report, Target, Verdict};
use switchboard_jsonrpc::memory::{self, MemoryTransport};
use switchboard_server::Server;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::methods;
use switchboard_types::tools::{CallToolResult, Tool};

/// Our server with one tool, and logging (so that one capability gate is declared).
fn our_server() -> Server {
    Server::builder(Implementation::new("in-process", "1.0"))
        .enable_logging()
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |call| async move {
                Ok(CallToolResult::text(
                    serde_json::to_string(&call.arguments).unwrap_or_default(),
                ))
            },
        )
        .build()
        .expect("a valid server")
}

fn names(report: &Report, outcome: Verdict) -> BTreeSet<&'static str> {
    report
        .results()
        .iter()
        .filter(|r| r.outcome == outcome)
        .map(|r| r.name)
        .collect()
}

#[tokio::test]
async fn our_server_in_process_passes_every_check() {
    let report = switchboard_check::run(&in_process(our_server()))
        .await
        .expect("the checks run");
    assert_eq!(report.failed(), 0, "{report}");
    // Over a connection that is the session, the pre-handshake ping is checked, not skipped.
    let ping = report.get("ping before initialize answers {}").unwrap();
    assert_eq!(ping.outcome, Verdict::Pass, "{report}");
    // Tools and logging are declared, so only the other three gates are probed.
    let gates = report.results().iter().filter(|r| r.tag == "CP-1").count();
    assert_eq!(gates, 3, "{report}");
    for name in [
        "a request before initialize is refused",
        "an id beyond 2^53 is kept exactly",
        "notifications are never answered",
        "a forged cursor is refused with -32602",
        "a 20 MiB frame does not crash the server",
    ] {
        assert_eq!(
            report.get(name).map(|r| r.outcome),
            Some(Verdict::Pass),
            "{name}: {report}"
        );
    }
    // Both eras are checked: revision 2026-07-28 on a connection that began with
    // server/discover.
    for name in [
        "server/discover names its revisions and capabilities",
        "a request without its _meta envelope is refused with -32602",
        "an unsupported revision gets -32022 naming the served ones",
        "a null id is refused with -32600",
        "every result carries resultType",
        "tools/list does not depend on earlier requests",
    ] {
        assert_eq!(
            report.get(name).map(|r| r.outcome),
            Some(Verdict::Pass),
            "{name}: {report}"
        );
    }
    // No Streamable HTTP rule runs without HTTP.
    assert!(
        report.results().iter().all(|r| !r.tag.starts_with("HT")),
        "{report}"
    );
}

/// A hand-written server that answers every request with a result (an `initialize` result for
/// `initialize`, `{}` otherwise) and ignores whatever it cannot read.
fn yes_to_everything() -> Target {
    scripted(|method, _| {
        let result = if method == methods::INITIALIZE {
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "yes", "version": "1"}})
        } else {
            json!({})
        };
        json!({ "result": result })
    })
}

#[tokio::test]
async fn a_server_that_says_yes_to_everything_fails_exactly_the_rules_it_breaks() {
    let report = Checker::new(yes_to_everything())
        .with_timeout(Duration::from_millis(300))
        .run()
        .await
        .expect("the checks run");
    let expected: BTreeSet<&str> = [
        "a request before initialize is refused",
        "an unknown method is -32601",
        "malformed JSON is -32700",
        "a null id is an invalid request (-32600)",
        "a wrong jsonrpc version is -32600",
        "a method of an undeclared capability is -32601",
        "an unknown tool is refused (-32602 or an isError result)",
        "bad params (tools/call without name) are -32602",
        "a forged cursor is refused with -32602",
    ]
    .into();
    assert_eq!(names(&report, Verdict::Fail), expected, "{report}");
    // Four undeclared capabilities, each a failure of its own.
    assert_eq!(report.failed(), expected.len() + 3, "{report}");
    // What it does right passes.
    for name in [
        "ping before initialize answers {}",
        "the session survives an early request",
        "an unsupported version gets a counter-offer",
        "an id beyond 2^53 is kept exactly",
        "notifications are never answered",
        "tools are listed with an object inputSchema",
        "a 20 MiB frame does not crash the server",
    ] {
        assert_eq!(
            report.get(name).map(|r| r.outcome),
            Some(Verdict::Pass),
            "{name}: {report}"
        );
    }
    // The detail says what happened.
    let malformed = report.get("malformed JSON is -32700").unwrap();
    assert_eq!(
        malformed.detail,
        "expected error -32700, got no answer (timeout)"
    );
    let unknown = report.get("an unknown method is -32601").unwrap();
    assert!(unknown.detail.contains(r#""result":{}"#), "{unknown:?}");
}

#[tokio::test]
async fn the_observer_sees_every_result_in_order_and_the_json_form_counts_them() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let checker = Checker::new(in_process(our_server())).on_result(move |r| {
        log.lock().unwrap().push(r.name);
    });
    let estimate = checker.estimated_total();
    let report = checker.run().await.expect("the checks run");
    let names: Vec<&str> = report.results().iter().map(|r| r.name).collect();
    assert_eq!(*seen.lock().unwrap(), names);
    assert!(
        report.results().len().abs_diff(estimate) <= 5,
        "{estimate} estimated"
    );
    let json = report.to_json_lines();
    let lines: Vec<Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON lines"))
        .collect();
    assert_eq!(lines.len(), report.results().len() + 1);
    assert_eq!(
        lines.last(),
        Some(&json!({"passed": report.passed(), "failed": 0, "skipped": report.skipped()}))
    );
    for (line, r) in lines.iter().zip(report.results()) {
        assert_eq!(line["tag"], r.tag);
        assert_eq!(line["name"], r.name);
        assert_eq!(line["detail"], r.detail.as_str());
        let outcome = match r.outcome {
            Verdict::Pass => "pass",
            Verdict::Skip => "skip",
            Verdict::Fail => "fail",
        };
        assert_eq!(line["outcome"], outcome);
    }
}

#[tokio::test]
async fn a_connector_that_refuses_is_an_error_naming_its_reason() {
    let target = Target::in_process(|| Err::<MemoryTransport, _>("no sessions left"));
    let err = switchboard_check::run(&target).await.unwrap_err();
    assert_eq!(
        err,
        CheckError::InProcess {
            reason: "no sessions left".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "cannot connect in process: no sessions left"
    );
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_is_a_handshake_error() {
    let silent = Target::in_process(|| {
        let (ours, mut theirs) = memory::pair();
        tokio::spawn(async move { while theirs.recv_text().await.is_some() {} });
        Ok::<MemoryTransport, Infallible>(ours)
    });
    let err = Checker::new(silent)
        .with_timeout(Duration::from_millis(100))
        .run()
        .await
        .unwrap_err();
    assert_eq!(err, CheckError::Handshake);
    assert_eq!(err.to_string(), "the server did not complete the handshake");
}

/// `server` behind a front that refuses `initialize` (as a server speaking only revision
/// 2026-07-28 does) and passes every other frame through.
fn modern_only(server: Server) -> Target {
    Target::in_process(move || {
        let (ours, mut front) = memory::pair();
        let (mut back, theirs) = memory::pair();
        let session = server.serve(theirs);
        tokio::spawn(async move {
            let _session = session;
            loop {
                tokio::select! {
                    text = front.recv_text() => {
                        let Some(text) = text else { break };
                        let frame: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                        if frame.get("method").and_then(Value::as_str) == Some(methods::INITIALIZE) {
                            let refusal = json!({"jsonrpc": "2.0", "id": frame["id"], "error":
                                {"code": -32601, "message": "this server speaks 2026-07-28 only"}});
                            if front.send_text(refusal.to_string()).await.is_err() {
                                break;
                            }
                        } else if back.send_text(text).await.is_err() {
                            break;
                        }
                    }
                    text = back.recv_text() => {
                        let Some(text) = text else { break };
                        if front.send_text(text).await.is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Ok::<MemoryTransport, Infallible>(ours)
    })
}

#[tokio::test]
async fn d26_a_server_speaking_only_2026_07_28_is_checked_in_that_revision() {
    let report = switchboard_check::run(&modern_only(our_server()))
        .await
        .expect("a modern-only server is no handshake error");
    assert_eq!(report.failed(), 0, "{report}");
    let handshake = report.get("the 2025 handshake").expect("said");
    assert_eq!(handshake.outcome, Verdict::Skip, "{report}");
    assert!(handshake.detail.contains("2026-07-28 only"), "{report}");
    // No 2025 check ran; every 2026 one did.
    assert!(
        report.get("ping before initialize answers {}").is_none(),
        "{report}"
    );
    assert!(
        report.results().iter().all(|r| !r.tag.starts_with("LC-")),
        "{report}"
    );
    let modern = report
        .results()
        .iter()
        .filter(|r| r.tag.starts_with("D26"))
        .count();
    assert!(modern >= 11, "{report}");
    assert_eq!(
        report
            .get("an unknown resource gets -32602 (not -32002)")
            .map(|r| r.outcome),
        Some(Verdict::Skip),
        "our_server declares no resources: {report}"
    );
}

/// A hand-written server that claims revision 2026-07-28 in `server/discover` (with tools),
/// refuses `initialize`, and answers every other request with an empty result.
fn careless_modern() -> Target {
    scripted(|method, _| match method {
        methods::SERVER_DISCOVER => json!({"result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}}),
        methods::INITIALIZE => json!({"error": {"code": -32601, "message": "no"}}),
        _ => json!({"result": {}}),
    })
}

#[tokio::test]
async fn d26_a_careless_modern_server_fails_exactly_the_rules_it_breaks() {
    let report = Checker::new(careless_modern())
        .with_timeout(Duration::from_millis(300))
        .run()
        .await
        .expect("the checks run");
    let expected: BTreeSet<&str> = [
        "a request without its _meta envelope is refused with -32602",
        "an unsupported revision gets -32022 naming the served ones",
        "an unknown method gets -32601",
        "a null id is refused with -32600",
        "declared capabilities are served, undeclared ones refused",
        "every tool's inputSchema is an object schema",
        "an unknown tool is refused with -32602",
        "every result carries resultType",
        "tools/list does not depend on earlier requests",
    ]
    .into();
    assert_eq!(names(&report, Verdict::Fail), expected, "{report}");
    for name in [
        "server/discover names its revisions and capabilities",
        "server/discover carries cache hints",
        "a request without clientInfo is served",
        "no server requests and no unrequested log messages",
    ] {
        assert_eq!(
            report.get(name).map(|r| r.outcome),
            Some(Verdict::Pass),
            "{name}: {report}"
        );
    }
    let untyped = report.get("every result carries resultType").unwrap();
    assert!(untyped.detail.contains("tools/list"), "{untyped:?}");
}
