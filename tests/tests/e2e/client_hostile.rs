//! The client against a hostile server: every error that quotes what the server sent (a method
//! name, a parser's or validator's detail, a tool_use id, an error message) is cut to
//! `MAX_ECHO_BYTES`, whether it goes back to the server or to the local caller, and every log
//! line the server's text reaches shows at most 256 bytes of it.

use crate::client_support::{all_server_caps, builder, connect, connect_with, serve};
use serde_json::{Value, json};
use switchboard::client::ClientError;
use switchboard::jsonrpc::memory;
use switchboard::types::error::MAX_ECHO_BYTES;
use switchboard::types::methods;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard_test_support::logs::count_logs;
use switchboard_tests::RawPeer;

/// One mebibyte of peer text.
fn huge() -> String {
    "x".repeat(1 << 20)
}

/// The longest text an error may hold that quotes the peer twice at most, with its own words.
const BOUNDED: usize = 2 * MAX_ECHO_BYTES + 400;

fn sampler() -> switchboard::client::ClientBuilder {
    builder().sampling(|_, _| async {
        Ok(CreateMessageResult::new(
            "m",
            SamplingMessageContentBlock::text("ok"),
        ))
    })
}

fn error_text(answer: &Value) -> usize {
    answer["error"].to_string().len()
}

#[tokio::test]
async fn errors_sent_back_to_the_server_quote_it_cut() {
    let (session, mut fake) = connect(sampler(), "2025-11-25", all_server_caps()).await;
    // A method nobody knows, 1 MiB long.
    let r = fake.request(json!(1), &huge(), json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    assert!(error_text(&r) < BOUNDED, "{} bytes", error_text(&r));
    // Params whose parse error quotes a 1 MiB string.
    let r = fake
        .request(
            json!(2),
            methods::SAMPLING_CREATE_MESSAGE,
            json!({"messages": huge(), "maxTokens": 1}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(error_text(&r) < BOUNDED, "{} bytes", error_text(&r));
    // A tool_use id of 1 MiB left unanswered (SA-3).
    let tool_use = json!({"role": "assistant", "content": [{"type": "tool_use", "id": huge(), "name": "t", "input": {}}]});
    let params = json!({"messages": [tool_use, {"role": "user", "content": {"type": "text", "text": "?"}}],
        "maxTokens": 1});
    let (session2, mut fake2) = connect(
        builder()
            .capabilities(tools_sampling())
            .sampling(|_, _| async {
                Ok(CreateMessageResult::new(
                    "m",
                    SamplingMessageContentBlock::text("ok"),
                ))
            }),
        "2025-11-25",
        all_server_caps(),
    )
    .await;
    let r = fake2
        .request(json!(3), methods::SAMPLING_CREATE_MESSAGE, params)
        .await;
    assert_eq!(r["error"]["code"], -32602, "{}", error_text(&r));
    assert!(error_text(&r) < BOUNDED, "{} bytes", error_text(&r));
    fake.sync().await;
    fake2.sync().await;
    assert!(session.is_open() && session2.is_open());
}

fn tools_sampling() -> switchboard::types::capabilities::ClientCapabilities {
    serde_json::from_value(json!({"sampling": {"tools": {}}})).expect("capabilities")
}

#[tokio::test]
async fn errors_for_the_local_caller_quote_the_server_cut() {
    // A tools/list result whose parse error quotes a 1 MiB string.
    let (session, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let s = session.clone();
    let call = tokio::spawn(async move { s.list_tools().await });
    serve(
        &mut fake,
        methods::TOOLS_LIST,
        json!({}),
        json!({"tools": huge()}),
    )
    .await;
    let e = call.await.expect("join").expect_err("not a list");
    assert!(
        e.to_string().len() < BOUNDED,
        "{} bytes",
        e.to_string().len()
    );

    // structuredContent failing its outputSchema with a 1 MiB value.
    let tool = json!({"name": "t", "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}});
    let s = session.clone();
    let call = tokio::spawn(async move { s.list_tools().await });
    serve(
        &mut fake,
        methods::TOOLS_LIST,
        json!({}),
        json!({"tools": [tool]}),
    )
    .await;
    call.await.expect("join").expect("listed");
    let s = session.clone();
    let call = tokio::spawn(async move { s.call_tool("t", json!({})).await });
    serve(
        &mut fake,
        methods::TOOLS_CALL,
        json!({"name": "t", "arguments": {}}),
        json!({"content": [], "structuredContent": {"n": huge()}}),
    )
    .await;
    let e = call.await.expect("join").expect_err("invalid");
    assert!(matches!(e, ClientError::InvalidStructuredContent { .. }));
    assert!(
        e.to_string().len() < BOUNDED,
        "{} bytes",
        e.to_string().len()
    );

    // initialize refused with a 1 MiB message and data.
    let (a, b) = memory::pair();
    let mut fake = RawPeer::new(b, "2025-11-25");
    let task = tokio::spawn(async move { builder().build().connect(a).await });
    let init = fake.recv().await;
    fake.send(json!({"jsonrpc": "2.0", "id": init["id"], "error":
        {"code": -32602, "message": huge(), "data": {"detail": huge()}}}))
        .await;
    let e = task.await.expect("join").expect_err("refused");
    assert!(matches!(e, ClientError::Handshake(_)));
    assert!(
        e.to_string().len() < BOUNDED,
        "{} bytes",
        e.to_string().len()
    );
}

#[tokio::test]
async fn log_lines_show_the_server_text_cut() {
    let (counter, _guard) = count_logs(tracing::Level::TRACE);
    let client = builder().on_elicitation_complete(|_| {});
    let (session, mut fake, _) =
        connect_with(client.build(), "2025-11-25", all_server_caps()).await;
    let before = counter.bytes();
    // A notification nobody handles, a malformed log line, an update for no subscription and
    // the completion of an unknown elicitation, each carrying 1 MiB.
    fake.notify(&huge(), json!({})).await;
    fake.notify(
        methods::NOTIFICATIONS_MESSAGE,
        json!({"level": huge(), "data": 1}),
    )
    .await;
    fake.notify(
        methods::NOTIFICATIONS_RESOURCES_UPDATED,
        json!({"uri": huge()}),
    )
    .await;
    fake.notify(
        methods::NOTIFICATIONS_ELICITATION_COMPLETE,
        json!({"elicitationId": huge()}),
    )
    .await;
    fake.sync().await;
    assert!(session.is_open());
    let bytes = counter.bytes() - before;
    assert!(
        bytes < 8 * 1024,
        "{bytes} bytes of log for 4 MiB of server text"
    );
}
