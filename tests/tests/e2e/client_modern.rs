//! Our client in its default era mode (`EraMode::Auto`) against the everything server, in
//! memory: the probe finds the dual-era server modern, and the same typed calls work in revision
//! 2026-07-28: input-required rounds answered by the same handlers, per-request log levels,
//! listen streams. Every frame of the session, both ways, is checked against the 2026-07-28
//! schema.

use std::time::Duration;

use crate::client_support::{Everything, connect_everything};
use serde_json::json;
use switchboard::client::{Client, Era, ListenEvent};
use switchboard::types::ProtocolVersion;
use switchboard::types::content::{ContentBlock, TextContent};
use switchboard::types::elicitation::{ElicitContentValue, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::logging::LoggingLevel;
use switchboard::types::meta::OrderedMap;
use switchboard::types::modern::SubscriptionFilter;
use switchboard::types::roots::Root;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard::types::tools::CallToolResult;
use switchboard_tests::validate_session;

fn connect() -> impl std::future::Future<Output = Everything> {
    let client = Client::builder(Implementation::new("modern-client", "1"))
        .sampling(|_, _| async {
            Ok(CreateMessageResult::new(
                "test-model",
                SamplingMessageContentBlock::Text(TextContent::new("Paris")),
            ))
        })
        .elicitation(|_, _| async {
            let mut content = OrderedMap::new();
            for field in ["name", "confirm", "city"] {
                content.insert(field, ElicitContentValue::String("Ann".into()));
            }
            Ok(ElicitResult::accept(content))
        })
        .roots([Root::new("file:///work")]);
    connect_everything(client)
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn the_default_client_speaks_2026_07_28_to_a_dual_era_server() {
    let f = connect().await;
    assert_eq!(f.c.era(), Era::Modern);
    assert_eq!(f.c.protocol_version(), ProtocolVersion::V2026_07_28);
    let tools = f.c.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo_region"));
    let r =
        f.c.call_tool("echo_region", json!({"region": "eu"}))
            .await
            .unwrap();
    assert_eq!(text(&r), "Region: eu");
    assert!(
        r.extra.get("resultType").is_none(),
        "resultType is read by the client, not handed on"
    );
    // Input-required rounds, answered by the handlers that answer a 2025 server's requests.
    for (tool, want) in [
        ("test_input_required_result_elicitation", "Hello, Ann!"),
        ("test_input_required_result_sampling", "Paris"),
        ("test_input_required_result_list_roots", "file:///work"),
        ("test_input_required_result_multiple_inputs", "1 roots"),
        ("test_input_required_result_multi_round", "Ann from Ann"),
        ("test_input_required_result_request_state", "confirmed"),
    ] {
        let r = f.c.call_tool(tool, json!({})).await.unwrap();
        assert!(!r.is_error(), "{tool}: {r:?}");
        assert!(text(&r).contains(want), "{tool}: {}", text(&r));
    }
    let checked = validate_session(&f.rec.frames(), "2026-07-28");
    assert!(checked > 20, "{checked} frames checked");
}

#[tokio::test]
async fn log_lines_come_only_to_requests_that_ask_for_them() {
    let f = connect().await;
    f.c.call_tool("test_logging_tool", json!({})).await.unwrap();
    assert!(
        f.logs.lock().unwrap().is_empty(),
        "[D26-84] no level, no log line"
    );
    f.c.with_log_level(Some(LoggingLevel::Warning))
        .call_tool("test_logging_tool", json!({}))
        .await
        .unwrap();
    let logs = f.logs.lock().unwrap().clone();
    assert_eq!(logs.len(), 2, "warning and error only: {logs:?}");
    validate_session(&f.rec.frames(), "2026-07-28");
}

#[tokio::test]
async fn a_listen_stream_gets_the_list_changes_it_asked_for() {
    let f = connect().await;
    let mut listen =
        f.c.listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listen.acknowledged().tools_list_changed, Some(true));
    f.c.call_tool("test_trigger_tool_change", json!({}))
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), listen.next())
        .await
        .unwrap();
    assert_eq!(event, Some(ListenEvent::ToolsListChanged));
    drop(listen);
    // The session goes on after the listen is cancelled.
    f.c.list_tools().await.unwrap();
    validate_session(&f.rec.frames(), "2026-07-28");
}
