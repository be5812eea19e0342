//! `structuredContent` of any JSON type: revision 2026-07-28 allows any value (and any 2020-12
//! `outputSchema`), 2025 revisions only objects. One dual-era server: a 2026-07-28 client gets
//! the array and checks it against the schema; a 2025 client gets the tool without its
//! non-object `outputSchema` and the value as text only. Every frame validated against the
//! schema of its revision.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use switchboard::client::{Client, EraMode};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::server::Server;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::{Recorder, text, validate_session};

fn server() -> Server {
    let primes = Tool::new("primes", json!({"type": "object"}))
        .with_output_schema(json!({"type": "array", "items": {"type": "integer"}}));
    let count = Tool::new("count", json!({"type": "object"}))
        .with_output_schema(json!({"type": "object", "properties": {"n": {"type": "integer"}}}));
    Server::builder(Implementation::new("structured", "1"))
        .tool(primes, |_| async {
            Ok(CallToolResult::structured(json!([2, 3, 5])))
        })
        .tool(count, |_| async {
            Ok(CallToolResult::structured(json!({"n": 3})))
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_2026_client_gets_an_array_as_structured_content() {
    let (a, b) = memory::pair();
    server().serve(b).unwrap();
    let rec = Recorder::default();
    let c = Client::builder(Implementation::new("modern", "1"))
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(a)
        .await
        .unwrap();
    let tools = c.list_tools().await.unwrap();
    let primes = tools.iter().find(|t| t.name == "primes").unwrap();
    assert_eq!(primes.output_schema.as_ref().unwrap()["type"], "array");
    let r = c.call_tool("primes", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!([2, 3, 5])));
    assert_eq!(text(&r), "[2,3,5]");
    let r = c.call_tool("count", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 3})));
    assert!(validate_session(&rec.frames(), "2026-07-28") >= 6);
}

#[tokio::test]
async fn a_2025_client_gets_the_value_as_text_and_no_non_object_schema() {
    let (a, b) = memory::pair();
    server().serve(b).unwrap();
    let rec = Recorder::default();
    let c = Client::builder(Implementation::new("legacy", "1"))
        .era(EraMode::Legacy)
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(a)
        .await
        .unwrap();
    let tools = c.list_tools().await.unwrap();
    let primes = tools.iter().find(|t| t.name == "primes").unwrap();
    assert_eq!(
        primes.output_schema, None,
        "2025 allows only object output schemas"
    );
    let count = tools.iter().find(|t| t.name == "count").unwrap();
    assert!(count.output_schema.is_some(), "an object schema stays");
    let r = c.call_tool("primes", json!({})).await.unwrap();
    assert_eq!(r.structured_content, None);
    assert_eq!(text(&r), "[2,3,5]");
    let r = c.call_tool("count", json!({})).await.unwrap();
    assert_eq!(r.structured_content, Some(json!({"n": 3})));
    assert!(validate_session(&rec.frames(), "2025-11-25") >= 6);
}
