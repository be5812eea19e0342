//! 2026-07-28 sessions: a clean one, and one transcript per D26 rule the tracer judges.
#![allow(clippy::unwrap_used)]

mod support;

use support::{tags, trace};
use switchboard_inspect::{Inspector, Phase};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;

fn session(lines: &[String]) -> Inspector {
    trace(&lines.join("\n"))
}

#[test]
fn a_clean_2026_session_has_no_violations_and_no_handshake() {
    let i = session(&[
        format!(r#"-> {{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}},"ttlMs":0,"cacheScope":"private"}}"#.into(),
        format!(r#"-> {{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"greet",{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"n":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{}}}}},"requestState":"S1"}}"#.into(),
        format!(r#"-> {{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"greet","requestState":"S1","inputResponses":{{"n":{{"action":"accept"}}}},{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete","content":[]}}"#.into(),
        format!(r#"-> {{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{{"notifications":{{"toolsListChanged":true}},{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}"#.into(),
        r#"<- {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}"#.into(),
    ]);
    for r in i.reports() {
        assert!(r.violations.is_empty(), "{r:?}");
        assert_eq!(r.phase, Phase::Operation, "no initialization phase: {r:?}");
    }
    assert_eq!(i.reports()[1].refers_to, Some(0));
}

#[test]
fn d26_rules_a_trace_judges() {
    let i = session(&[
        // 0: opens the session; 1: no resultType, no caching hints.
        format!(r#"-> {{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#.into(),
        // 2: no envelope on a modern session; 3: fine.
        r#"-> {"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{}}"#.into(),
        r#"<- {"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","prompts":[],"ttlMs":0,"cacheScope":"private"}}"#.into(),
        // 4, 5: an input request the request's capabilities do not cover, hints on it, on a list.
        format!(r#"-> {{"jsonrpc":"2.0","id":3,"method":"resources/list","params":{{{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required","inputRequests":{"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}},"ttlMs":0}}"#.into(),
        // 6: a state the server never issued; 7: a server request; 8: a log nobody asked for.
        format!(r#"-> {{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"t","requestState":"forged",{META}}}}}"#),
        r#"<- {"jsonrpc":"2.0","id":"x","method":"roots/list"}"#.into(),
        r#"<- {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#.into(),
        // 9: a list change outside a listen stream; 10: a removed method.
        r#"<- {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into(),
        format!(r#"-> {{"jsonrpc":"2.0","id":5,"method":"ping","params":{{{META}}}}}"#),
    ]);
    assert!(tags(&i, 0).is_empty(), "{:?}", i.reports()[0]);
    assert_eq!(tags(&i, 1), ["D26-19"]);
    assert_eq!(tags(&i, 2), ["D26-8"]);
    assert!(tags(&i, 3).is_empty());
    assert!(tags(&i, 4).is_empty());
    assert_eq!(tags(&i, 5), ["D26-34", "D26-92", "D26-41"]);
    assert_eq!(tags(&i, 6), ["D26-43"]);
    assert_eq!(tags(&i, 7), ["D26-1"]);
    assert_eq!(tags(&i, 8), ["D26-84"]);
    assert_eq!(tags(&i, 9), ["D26-72"]);
    assert_eq!(tags(&i, 10), ["D26-60"]);
}

#[test]
fn a_2025_session_is_judged_as_before() {
    let i = trace(
        r#"
-> {"jsonrpc":"2.0","id":1,"method":"tools/list"}
"#,
    );
    assert_eq!(
        tags(&i, 0),
        ["LC-1"],
        "no envelope, no handshake: a 2025 request too early"
    );
}

#[test]
fn d26_137_the_tasks_extension_methods_are_not_removed_methods() {
    const EXT: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;
    let task = r#""taskId":"t1","status":"working","createdAt":"2026-07-28T00:00:00Z","lastUpdatedAt":"2026-07-28T00:00:00Z","ttlMs":60000"#;
    let i = session(&[
        format!(
            r#"-> {{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"slow",{EXT}}}}}"#
        ),
        format!(r#"<- {{"jsonrpc":"2.0","id":1,"result":{{"resultType":"task",{task}}}}}"#),
        format!(
            r#"-> {{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{{"taskId":"t1",{EXT}}}}}"#
        ),
        format!(r#"<- {{"jsonrpc":"2.0","id":2,"result":{{"resultType":"complete",{task}}}}}"#),
        format!(
            r#"-> {{"jsonrpc":"2.0","id":3,"method":"tasks/update","params":{{"taskId":"t1","inputResponses":{{}},{EXT}}}}}"#
        ),
        r#"<- {"jsonrpc":"2.0","id":3,"result":{"resultType":"complete"}}"#.into(),
        format!(
            r#"-> {{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","params":{{"taskId":"t1",{EXT}}}}}"#
        ),
        r#"<- {"jsonrpc":"2.0","id":4,"result":{"resultType":"complete"}}"#.into(),
        // Removed with the extension: still flagged.
        format!(r#"-> {{"jsonrpc":"2.0","id":5,"method":"tasks/list","params":{{{EXT}}}}}"#),
    ]);
    for (n, r) in i.reports().iter().enumerate().take(8) {
        assert!(r.violations.is_empty(), "{n}: {r:?}");
    }
    assert_eq!(tags(&i, 8), ["D26-60"]);
}
