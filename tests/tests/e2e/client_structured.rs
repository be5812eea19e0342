//! `[SF-7]`: the client validates a tool result's `structuredContent` against the tool's
//! `outputSchema` from the cached `tools/list`: valid, invalid, missing, an error result, an
//! uncached tool, an unusable schema (`[SC-2]`), and an older revision.

use crate::client_support::{builder, connect, serve, tools_listed};
use serde_json::{Value, json};
use switchboard::client::{ClientError, ClientSession};
use switchboard_tests::RawPeer;

fn caps() -> Value {
    json!({"tools": {"listChanged": true}})
}

fn weather_tool(output_schema: Value) -> Value {
    json!({"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": output_schema})
}

fn weather_schema() -> Value {
    json!({"type": "object", "properties": {"temp": {"type": "number"}, "sky": {"type": "string", "enum": ["sun", "rain"]}},
        "required": ["temp", "sky"]})
}

async fn listed(version: &str, tools: Value) -> (ClientSession, RawPeer) {
    let (client, mut fake) = connect(builder(), version, caps()).await;
    tools_listed(&client, &mut fake, tools).await;
    (client, fake)
}

async fn call(
    client: &ClientSession,
    fake: &mut RawPeer,
    result: Value,
) -> Result<switchboard::types::CallToolResult, ClientError> {
    let c = client.clone();
    let task = tokio::spawn(async move { c.call_tool("weather", json!({"city": "Oslo"})).await });
    serve(
        fake,
        "tools/call",
        json!({"name": "weather", "arguments": {"city": "Oslo"}}),
        result,
    )
    .await;
    task.await.unwrap()
}

#[tokio::test]
async fn sf_7_conforming_structured_content_passes() {
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(weather_schema())])).await;
    let r = call(
        &client,
        &mut fake,
        json!({"content": [{"type": "text", "text": "{\"temp\":3,\"sky\":\"rain\"}"}],
            "structuredContent": {"temp": 3, "sky": "rain"}}),
    )
    .await
    .unwrap();
    assert_eq!(r.structured_content.unwrap()["temp"], 3);
    // The compiled validator is reused for the next call.
    call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {"temp": 1.5, "sky": "sun"}}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn sf_7_non_conforming_structured_content_is_an_error_naming_the_problem() {
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(weather_schema())])).await;
    let e = call(
        &client,
        &mut fake,
        json!({"content": [{"type": "text", "text": "?"}], "structuredContent": {"temp": "warm", "sky": "snow"}}),
    )
    .await
    .unwrap_err();
    match e {
        ClientError::InvalidStructuredContent {
            tool,
            problem,
            result,
        } => {
            assert_eq!(tool, "weather");
            assert!(
                problem.contains("/temp") && problem.contains("number"),
                "{problem}"
            );
            assert!(problem.contains("/sky"), "{problem}");
            assert_eq!(result.content[0].as_text(), Some("?"), "the result is kept");
        }
        other => panic!("expected InvalidStructuredContent, got {other:?}"),
    }
    let e = call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {"temp": 1}}),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("sky"), "{e}");
}

#[tokio::test]
async fn sf_7_missing_structured_content_is_an_error() {
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(weather_schema())])).await;
    match call(
        &client,
        &mut fake,
        json!({"content": [{"type": "text", "text": "3 and rain"}]}),
    )
    .await
    {
        Err(ClientError::InvalidStructuredContent { problem, .. }) => {
            assert!(problem.contains("no structuredContent"), "{problem}")
        }
        other => panic!("expected InvalidStructuredContent, got {other:?}"),
    }
}

#[tokio::test]
async fn an_error_result_is_not_validated() {
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(weather_schema())])).await;
    let r = call(
        &client,
        &mut fake,
        json!({"content": [{"type": "text", "text": "city not found"}], "isError": true}),
    )
    .await
    .unwrap();
    assert!(r.is_error());
}

#[tokio::test]
async fn a_tool_without_output_schema_or_not_cached_is_not_validated() {
    let (client, mut fake) = listed(
        "2025-11-25",
        json!([{"name": "weather", "inputSchema": {"type": "object"}}]),
    )
    .await;
    call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {"anything": true}}),
    )
    .await
    .unwrap();
    // Never listed: nothing to validate against.
    let (client, mut fake) = connect(builder(), "2025-11-25", caps()).await;
    call(&client, &mut fake, json!({"content": []}))
        .await
        .unwrap();
}

#[tokio::test]
async fn the_schema_follows_the_re_listed_tool() {
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(weather_schema())])).await;
    call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {"temp": 1, "sky": "sun"}}),
    )
    .await
    .unwrap();
    // The server changes the tool's output schema; after the re-listing the new one applies.
    let c = client.clone();
    let waiter = tokio::spawn(async move { c.tools_changed().await });
    fake.notify("notifications/tools/list_changed", Value::Null)
        .await;
    serve(
        &mut fake,
        "tools/list",
        json!({}),
        json!({"tools": [weather_tool(json!({"type": "object", "required": ["celsius"]}))]}),
    )
    .await;
    waiter.await.unwrap().unwrap();
    assert!(
        call(
            &client,
            &mut fake,
            json!({"content": [], "structuredContent": {"temp": 1, "sky": "sun"}})
        )
        .await
        .is_err()
    );
    call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {"celsius": 1}}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn sc_2_an_unusable_output_schema_is_reported() {
    let schema = json!({"$schema": "https://example.test/my-own-dialect", "type": "object"});
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(schema)])).await;
    match call(
        &client,
        &mut fake,
        json!({"content": [], "structuredContent": {}}),
    )
    .await
    {
        Err(ClientError::InvalidOutputSchema { tool, .. }) => assert_eq!(tool, "weather"),
        other => panic!("expected InvalidOutputSchema, got {other:?}"),
    }
    let bad = json!({"type": "object", "properties": {"temp": {"type": 12}}});
    let (client, mut fake) = listed("2025-11-25", json!([weather_tool(bad)])).await;
    assert!(matches!(
        call(
            &client,
            &mut fake,
            json!({"content": [], "structuredContent": {}})
        )
        .await,
        Err(ClientError::InvalidOutputSchema { .. })
    ));
}

#[tokio::test]
async fn no_validation_before_structured_content_existed() {
    // 2025-03-26 had no outputSchema or structuredContent; nothing is checked.
    let (client, mut fake) = listed("2025-03-26", json!([weather_tool(weather_schema())])).await;
    call(
        &client,
        &mut fake,
        json!({"content": [{"type": "text", "text": "3"}]}),
    )
    .await
    .unwrap();
}
