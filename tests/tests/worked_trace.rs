//! Seed 000's "Worked trace of one session", reproduced frame by frame in memory (issue 2, item 7).
//!
//! Where the seed differs from the spec or a later issue, ours wins and says so:
//! * seed step 3 lists `delete_db` to every client; we hide a tool from clients whose allow-list
//!   excludes it (issue 3), so this client sees `add` and `weather`;
//! * the seed's unknown-tool code is -32601; the spec's is -32602 (see `tools.rs`).

use switchboard::jsonrpc::Flow;
use switchboard_cli::demo;
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
async fn seed_000_worked_trace_frame_by_frame() {
    let frames = demo::run(switchboard_cli::demo_wire::Wire::Memory)
        .await
        .expect("the scenario runs");
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
    let frames = demo::run(switchboard_cli::demo_wire::Wire::Memory)
        .await
        .expect("the scenario runs");
    let pairs: Vec<(Flow, String)> = frames.into_iter().map(|f| (f.direction, f.text)).collect();
    assert_eq!(validate_session(&pairs, "2025-06-18"), 12);
}

#[tokio::test]
async fn lc_4_initialized_is_a_notification_without_id() {
    let frames = demo::run(switchboard_cli::demo_wire::Wire::Memory)
        .await
        .expect("the scenario runs");
    let init: serde_json::Value = serde_json::from_str(&frames[2].text).unwrap();
    assert_eq!(init["method"], "notifications/initialized");
    assert!(
        init.get("id").is_none(),
        "JR-10: the id key is absent, not null"
    );
}

#[test]
fn demo_render_annotates_each_step_and_direction() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let frames = rt
        .block_on(demo::run(switchboard_cli::demo_wire::Wire::Memory))
        .unwrap();
    let text = demo::render(&frames);
    for (i, title) in demo::STEPS.iter().enumerate() {
        assert!(
            text.contains(&format!("# step {}: {title}", i + 1)),
            "missing step {}",
            i + 1
        );
    }
    assert_eq!(text.matches("client → server").count(), 6);
    assert_eq!(text.matches("server → client").count(), 6);
}
