//! The demo's worked session (part one of `switchboard demo`), frame by frame, in memory.
//!
//! * A tool is hidden from clients whose allow-list excludes it, so this client sees `add` and
//!   `weather`, not `delete_db`;
//! * an unknown tool is -32602, as the spec says (see `tools.rs`).

use switchboard::jsonrpc::Flow;
use switchboard_example_servers::demo::{self, InMemory, part_one};
use switchboard_tests::validate_session;

fn golden() -> Vec<(usize, Flow, String)> {
    let v = env!("CARGO_PKG_VERSION");
    let out = Flow::Outbound;
    let inb = Flow::Inbound;
    let add = r#"{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}"#;
    let sub = r#"{"name":"subtract","description":"Subtract y from x","inputSchema":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}}"#;
    let weather = r#"{"name":"weather","description":"Current weather for a city (canned data)","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}"#;
    vec![
        (1, out, format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{"elicitation":{{}}}},"clientInfo":{{"name":"demo-client","version":"{v}"}}}}}}"#)),
        (1, inb, format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{"listChanged":true}}}},"serverInfo":{{"name":"switchboard-demo","version":"{v}"}}}}}}"#)),
        (2, out, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into()),
        (3, out, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#.into()),
        (3, inb, format!(r#"{{"jsonrpc":"2.0","id":2,"result":{{"tools":[{add},{weather}]}}}}"#)),
        (4, out, r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"x":2,"y":3}}}"#.into()),
        (4, inb, r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"5"}]}}"#.into()),
        (5, out, r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"delete_db","arguments":{}}}"#.into()),
        (5, inb, r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"tool 'delete_db' not permitted for this client","data":{"reason":"tool_not_permitted","tool":"delete_db"}}}"#.into()),
        (6, inb, r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.into()),
        (6, out, r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{}}"#.into()),
        (6, inb, format!(r#"{{"jsonrpc":"2.0","id":5,"result":{{"tools":[{add},{sub},{weather}]}}}}"#)),
    ]
}

#[tokio::test]
async fn the_worked_session_frame_by_frame() {
    let frames = part_one::run(&InMemory).await.expect("the scenario runs");
    let got: Vec<(usize, Flow, String)> = frames
        .iter()
        .map(|f| (f.step, f.direction, f.text.clone()))
        .collect();
    let want = golden();
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert_eq!(g, w, "frame {i} differs");
    }
    assert_eq!(got.len(), want.len(), "frame count");
}

#[tokio::test]
async fn worked_trace_frames_validate_against_the_2025_06_18_schema() {
    let frames = part_one::run(&InMemory).await.expect("the scenario runs");
    let pairs: Vec<(Flow, String)> = frames.into_iter().map(|f| (f.direction, f.text)).collect();
    assert_eq!(validate_session(&pairs, "2025-06-18"), 12);
}

#[tokio::test]
async fn lc_4_initialized_is_a_notification_without_id() {
    let frames = part_one::run(&InMemory).await.expect("the scenario runs");
    let init: serde_json::Value = serde_json::from_str(&frames[2].text).unwrap();
    assert_eq!(init["method"], "notifications/initialized");
    assert!(
        init.get("id").is_none(),
        "JR-10: the id key is absent, not null"
    );
}

#[test]
fn every_step_of_both_parts_has_a_title() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (one, two) = rt.block_on(async {
        let one = part_one::run(&InMemory).await.unwrap();
        let two = demo::part_two::run(&InMemory, part_one::STEPS.len() + 1)
            .await
            .unwrap();
        (one, two)
    });
    let steps: std::collections::BTreeSet<usize> = one.iter().chain(&two).map(|f| f.step).collect();
    let all = part_one::STEPS.len() + demo::part_two::STEPS.len();
    assert_eq!(steps, (1..=all).collect(), "every step has frames");
    for n in 1..=all {
        assert!(
            demo::step_title(n).is_some_and(|t| !t.is_empty()),
            "step {n}"
        );
    }
    assert_eq!(demo::step_title(all + 1), None);
    assert_eq!(demo::step_title(0), None);
}
