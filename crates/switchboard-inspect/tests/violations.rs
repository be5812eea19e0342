//! Hand-written transcripts, one per violation the tracer must detect, plus a clean session.
#![allow(clippy::unwrap_used)]

mod support;

use support::{tags, trace};
use switchboard_inspect::{Direction, Inspector, Kind, Phase, parse_input};

const HANDSHAKE: &str = r#"
-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}
<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{}},"serverInfo":{"name":"s","version":"1"}}}
-> {"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

#[test]
fn a_clean_session_has_no_violations_and_is_fully_annotated() {
    let i = trace(&format!(
        "{HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"add\",\"_meta\":{{\"progressToken\":\"p\"}}}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":\"p\",\"progress\":1}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"sampling/createMessage\",\"params\":{{}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"result\":{{}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[]}}}}
"
    ));
    for r in i.reports() {
        assert!(r.violations.is_empty(), "{r:?}");
    }
    let r = &i.reports()[3];
    assert_eq!(
        (r.kind, r.primitive, r.phase),
        (Kind::Request, Some("tools"), Phase::Operation)
    );
    assert_eq!(
        (r.capability.as_deref(), r.negotiated),
        (Some("server.tools"), Some(true))
    );
    assert_eq!(
        i.reports()[4].refers_to,
        Some(3),
        "progress refers to its request"
    );
    assert_eq!(
        i.reports()[5].capability.as_deref(),
        Some("client.sampling")
    );
    assert_eq!(i.reports()[6].refers_to, Some(5));
    assert_eq!(
        i.reports()[7].method.as_deref(),
        Some("tools/call"),
        "a response names the method it answers"
    );
    assert_eq!(i.reports()[2].phase, Phase::Initialization);
    let s = i.summary();
    assert_eq!(s.kinds["request"], 3);
    assert_eq!(s.unanswered, Vec::<usize>::new());
    assert!((s.lifecycle_share - 3.0 / 8.0).abs() < 1e-9);
}

#[test]
fn jr_10_notification_with_id_and_jr_11_its_answer() {
    let i = trace(&format!(
        "{HANDSHAKE}\n-> {{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"notifications/roots/list_changed\"}}\n<- {{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{}}}}"
    ));
    assert!(tags(&i, 3).contains(&"JR-10"));
    assert_eq!(tags(&i, 4), vec!["JR-11"]);
}

#[test]
fn lc_1_request_before_initialized() {
    let i = trace(
        r#"-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
<- {"jsonrpc":"2.0","id":1,"result":{"capabilities":{"tools":{}}}}
-> {"jsonrpc":"2.0","id":2,"method":"tools/list"}
-> {"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    assert_eq!(tags(&i, 2), vec!["LC-1"]);
    assert!(tags(&i, 3).is_empty(), "ping is allowed");
}

#[test]
fn jr_5_id_reused_while_in_flight() {
    let i = trace(&format!(
        "{HANDSHAKE}\n-> {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}}\n-> {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}}"
    ));
    assert_eq!(tags(&i, 4), vec!["JR-5"]);
}

#[test]
fn jr_7_both_or_neither_result_and_error() {
    let i = trace(&format!(
        "{HANDSHAKE}\n-> {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}}\n<- {{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{{}},\"error\":{{\"code\":1,\"message\":\"x\"}}}}\n<- {{\"jsonrpc\":\"2.0\",\"id\":6}}"
    ));
    assert_eq!(tags(&i, 4), vec!["JR-7"]);
    assert_eq!(tags(&i, 5), vec!["JR-7"]);
}

#[test]
fn jr_6_orphan_response() {
    let i = trace(&format!(
        "{HANDSHAKE}\n<- {{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{{}}}}"
    ));
    assert_eq!(tags(&i, 3), vec!["JR-6"]);
}

#[test]
fn lc_5_capability_not_negotiated() {
    let i = trace(&format!(
        "{HANDSHAKE}\n-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\"}}\n<- {{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"roots/list\"}}\n-> {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{{\"uri\":\"x\"}}}}"
    ));
    assert_eq!(
        tags(&i, 3),
        vec!["LC-5"],
        "prompts not declared by the server"
    );
    assert_eq!(
        tags(&i, 4),
        vec!["LC-5"],
        "roots not declared by the client"
    );
    assert_eq!(
        tags(&i, 5),
        vec!["LC-5"],
        "resources.subscribe not declared"
    );
    assert_eq!(i.reports()[3].negotiated, Some(false));
}

#[test]
fn ut_6_ut_7_progress_not_increasing_or_after_the_response() {
    let i = trace(&format!(
        "{HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"a\",\"_meta\":{{\"progressToken\":7}}}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":7,\"progress\":5}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":7,\"progress\":5}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[]}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":7,\"progress\":9}}}}"
    ));
    assert!(tags(&i, 4).is_empty());
    assert_eq!(tags(&i, 5), vec!["UT-6"]);
    assert_eq!(tags(&i, 7), vec!["UT-7"]);
}

#[test]
fn ut_8_cancelling_initialize() {
    let i = trace(
        r#"-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}
-> {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    );
    assert_eq!(tags(&i, 1), vec!["UT-8"]);
    assert_eq!(i.reports()[1].refers_to, Some(0));
}

#[test]
fn jr_4_null_id_and_jr_1_bad_envelope() {
    let i = trace(
        "-> {\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n-> {\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}\n-> not json at all",
    );
    assert_eq!(tags(&i, 0), vec!["JR-4"]);
    assert_eq!(i.reports()[0].kind, Kind::Invalid);
    assert_eq!(tags(&i, 1), vec!["JR-1"]);
    assert_eq!(tags(&i, 2), vec!["JR-1"]);
}

#[test]
fn inputs_recordings_arrows_and_bare_frames() {
    let rec = r#"{"ts_ms":1000,"direction":"c2s","transport":"stdio","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"}
{"ts_ms":1003.5,"direction":"s2c","transport":"stdio","frame":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}"#;
    let f = parse_input(rec).unwrap();
    assert_eq!(
        (f[0].direction, f[1].direction),
        (Direction::ClientToServer, Direction::ServerToClient)
    );
    assert_eq!((f[0].at_ms, f[1].at_ms), (Some(0.0), Some(3.5)));
    let mut i = Inspector::new();
    for x in &f {
        i.observe(x.direction, &x.text, x.at_ms);
    }
    assert_eq!(i.summary().latency["ping"].p50_ms, 3.5);
    let f = parse_input("→ {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n← {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}").unwrap();
    assert_eq!(f[1].direction, Direction::ServerToClient);
    let bare = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"roots/list\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"roots\":[]}}";
    let f = parse_input(bare).unwrap();
    assert_eq!(
        (f[0].direction, f[1].direction),
        (Direction::ServerToClient, Direction::ClientToServer)
    );
    assert!(parse_input("?? what").is_err());
}

#[test]
fn jr_7_a_message_with_both_result_and_error_is_invalid_not_an_error() {
    let i = trace(&format!(
        "{HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"tools\":[]}},\"error\":{{\"code\":-32603,\"message\":\"x\"}}}}
"
    ));
    let r = &i.reports()[4];
    assert_eq!(r.kind, Kind::Invalid, "neither shape: {r:?}");
    assert_eq!(tags(&i, 4), vec!["JR-7"]);
    assert_eq!(r.refers_to, Some(3), "still linked to the request it names");
    assert_eq!(r.method.as_deref(), Some("tools/list"));
    assert_eq!(
        i.unanswered(),
        vec![3],
        "an invalid message answers nothing"
    );
}

#[test]
fn ut_7_progress_after_the_response_keeps_its_link() {
    let i = trace(&format!(
        "{HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"a\",\"_meta\":{{\"progressToken\":7}}}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"content\":[]}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":7,\"progress\":1}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{{\"progressToken\":8,\"progress\":1}}}}
"
    ));
    assert_eq!(tags(&i, 5), vec!["UT-7"]);
    assert_eq!(
        i.reports()[5].refers_to,
        Some(3),
        "late progress links to its request"
    );
    assert_eq!(tags(&i, 6), vec!["UT-7"]);
    assert_eq!(
        i.reports()[6].refers_to,
        None,
        "an unknown token links to nothing"
    );
}

/// The inspector's documented bound on answered requests, and on tasks, it remembers.
const REMEMBERED: usize = 4096;

#[test]
fn answered_requests_are_remembered_within_a_bound() {
    let mut i = trace(HANDSHAKE);
    let n = REMEMBERED + 1;
    for id in 0..n {
        let id = id + 100;
        i.observe(
            Direction::ClientToServer,
            &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}"),
            None,
        );
        i.observe(
            Direction::ServerToClient,
            &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"),
            None,
        );
    }
    // The first answered ping is forgotten; the last is still known.
    let first = i.observe(
        Direction::ServerToClient,
        "{\"jsonrpc\":\"2.0\",\"id\":100,\"result\":{}}",
        None,
    );
    assert!(first.violations[0].reason.contains("orphan"), "{first:?}");
    let last = i.observe(
        Direction::ServerToClient,
        &format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{}}}}", n + 99),
        None,
    );
    assert!(
        last.violations[0].reason.contains("second answer"),
        "{last:?}"
    );
}

const TASK: &str =
    r#""createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":1000"#;

#[test]
fn task_frames_are_linked_to_the_call_that_created_the_task() {
    let i = trace(&format!(
        "{TASK_HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"slow\",\"task\":{{}}}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"task\":{{\"taskId\":\"t1\",\"status\":\"working\",{TASK}}}}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/result\",\"params\":{{\"taskId\":\"t1\"}}}}
<- {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tasks/status\",\"params\":{{\"taskId\":\"t1\",\"status\":\"completed\",{TASK}}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"content\":[],\"_meta\":{{\"io.modelcontextprotocol/related-task\":{{\"taskId\":\"t1\"}}}}}}}}
"
    ));
    for r in i.reports() {
        assert!(r.violations.is_empty(), "{r:?}");
    }
    assert_eq!(
        i.reports()[5].refers_to,
        Some(3),
        "tasks/result links to the tools/call"
    );
    assert_eq!(i.reports()[5].primitive, Some("tasks"));
    assert_eq!(
        i.reports()[6].refers_to,
        Some(3),
        "the status notification too"
    );
    assert_eq!(
        i.reports()[7].refers_to,
        Some(5),
        "the answer links to its request"
    );
}

#[test]
fn tk_9_tk_10_tk_11_tk_21_task_rules() {
    let i = trace(&format!(
        "{TASK_HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"slow\",\"task\":{{}}}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"task\":{{\"taskId\":\"t1\",\"status\":\"completed\"}}}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tasks/get\",\"params\":{{\"taskId\":\"t1\"}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"taskId\":\"t1\",\"status\":\"working\",{TASK}}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tasks/result\",\"params\":{{\"taskId\":\"t1\"}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"content\":[]}}}}
"
    ));
    assert_eq!(tags(&i, 4), vec!["TK-11", "TK-9"]);
    assert_eq!(
        tags(&i, 6),
        vec!["TK-10"],
        "a completed task went back to working"
    );
    assert_eq!(tags(&i, 8), vec!["TK-21"]);
}

const TASK_HANDSHAKE: &str = r#"
-> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
<- {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"s","version":"1"}}}
-> {"jsonrpc":"2.0","method":"notifications/initialized"}
"#;

#[test]
fn task_links_are_remembered_within_a_bound() {
    let mut i = trace(TASK_HANDSHAKE);
    let n = REMEMBERED + 1;
    for k in 0..n {
        let id = k + 100;
        i.observe(
            Direction::ClientToServer,
            &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"s\",\"task\":{{}}}}}}"),
            None,
        );
        i.observe(
            Direction::ServerToClient,
            &format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"task\":{{\"taskId\":\"t{k}\",\"status\":\"working\",{TASK}}}}}}}"),
            None,
        );
    }
    let get = |i: &mut Inspector, id: usize, task: &str| {
        i.observe(
            Direction::ClientToServer,
            &format!("{{\"jsonrpc\":\"2.0\",\"id\":\"g{id}\",\"method\":\"tasks/get\",\"params\":{{\"taskId\":\"{task}\"}}}}"),
            None,
        )
        .refers_to
    };
    assert_eq!(get(&mut i, 1, "t0"), None, "the oldest task is forgotten");
    let last = format!("t{}", n - 1);
    assert!(
        get(&mut i, 2, &last).is_some(),
        "the newest is still linked"
    );
}

/// Issue 28, item 6: the skills extension's methods are described by the catalogue's extension
/// rows, so the trace names their primitive (requests and the responses that answer them), and
/// using them raises no violation (no capability gates an extension method).
#[test]
fn skills_methods_are_annotated_from_the_catalogue_extension_rows() {
    let i = trace(&format!(
        "{HANDSHAKE}
-> {{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"skills/list\",\"params\":{{}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"skills\":[]}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"skills/get\",\"params\":{{\"uri\":\"skill://notes/SKILL.md\"}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{{\"code\":-32602,\"message\":\"no such skill\"}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/directory/read\",\"params\":{{\"uri\":\"skill://notes\"}}}}
<- {{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{{\"resources\":[]}}}}
-> {{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"acme/echo\",\"params\":{{}}}}
"
    ));
    for r in i.reports() {
        assert!(r.violations.is_empty(), "{r:?}");
    }
    let primitives: Vec<_> = i.reports()[3..].iter().map(|r| r.primitive).collect();
    assert_eq!(
        primitives,
        [
            Some("skills"),
            Some("skills"),
            Some("skills"),
            Some("skills"),
            Some("skills"),
            Some("skills"),
            None
        ],
        "an unknown extension method stays without a primitive"
    );
    assert_eq!(i.reports()[3].capability, None, "no capability gates it");
}
