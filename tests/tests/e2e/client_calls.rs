//! The client's typed calls against a hand-played server: each one puts exactly the expected
//! request frame on the wire (schema-checked by `RawPeer`) and parses the result; calls degrade by
//! the negotiated revision, and a call for an undeclared server capability sends nothing.

use crate::client_support::{
    all_server_caps, builder, connect, expect_request, reply, reply_error, serve, served,
    tools_listed,
};
use serde_json::{Value, json};
use switchboard::client::{ClientError, RequestOptions};
use switchboard::jsonrpc::RequestError;
use switchboard::types::completion::{PromptReference, Reference, ResourceTemplateReference};
use switchboard::types::logging::LoggingLevel;

#[tokio::test]
async fn ping_and_initialize_params() {
    let (client, mut fake, init) =
        crate::client_support::connect_with(builder().build(), "2025-11-25", json!({})).await;
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_eq!(init["capabilities"], json!({}), "no handler, no capability");
    let call = tokio::spawn(async move { client.ping().await });
    serve(&mut fake, "ping", Value::Null, json!({})).await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn tools_list_and_call() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let tools = tools_listed(
        &client,
        &mut fake,
        json!([{"name": "echo", "inputSchema": {"type": "object"}}]),
    )
    .await;
    assert_eq!(tools[0].name, "echo");
    assert_eq!(client.cached_tools().unwrap(), tools);

    let r = served(
        &client,
        &mut fake,
        |c| async move { c.call_tool("echo", json!({"x": 1})).await },
        "tools/call",
        json!({"name": "echo", "arguments": {"x": 1}}),
        json!({"content": [{"type": "text", "text": "1"}]}),
    )
    .await
    .unwrap();
    assert_eq!(r.content[0].as_text(), Some("1"));
    assert!(!r.is_error());

    // A tool's failure is a result, not an error.
    assert!(
        served(
            &client,
            &mut fake,
            |c| async move { c.call_tool("echo", Value::Null).await },
            "tools/call",
            json!({"name": "echo"}),
            json!({"content": [{"type": "text", "text": "bad"}], "isError": true})
        )
        .await
        .unwrap()
        .is_error()
    );

    // The server's protocol error is a request error carrying the wire error.
    let call = tokio::spawn(async move { client.call_tool("nope", json!({})).await });
    let id = expect_request(
        &mut fake,
        "tools/call",
        json!({"name": "nope", "arguments": {}}),
    )
    .await;
    reply_error(&mut fake, &id, -32602, "Unknown tool: nope").await;
    let e = call.await.unwrap().unwrap_err();
    assert_eq!(e.code().map(|c| c.0), Some(-32602));
}

#[tokio::test]
async fn resources_list_templates_read() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let rs = served(
        &client,
        &mut fake,
        |c| async move { c.list_resources().await },
        "resources/list",
        json!({}),
        json!({"resources": [{"uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}]}),
    )
    .await
    .unwrap();
    assert_eq!(rs[0].uri, "file:///a.txt");
    assert_eq!(client.cached_resources().unwrap(), rs);

    let ts = served(
        &client,
        &mut fake,
        |c| async move { c.list_resource_templates().await },
        "resources/templates/list",
        json!({}),
        json!({"resourceTemplates": [{"uriTemplate": "file:///{path}", "name": "files"}]}),
    )
    .await
    .unwrap();
    assert_eq!(ts[0].uri_template, "file:///{path}");
    assert_eq!(client.cached_resource_templates().unwrap(), ts);

    let r = served(
        &client,
        &mut fake,
        |c| async move { c.read_resource("file:///a.txt").await },
        "resources/read",
        json!({"uri": "file:///a.txt"}),
        json!({"contents": [{"uri": "file:///a.txt", "mimeType": "text/plain", "text": "hello"}]}),
    )
    .await
    .unwrap();
    assert_eq!(r.contents[0].uri(), "file:///a.txt");

    // -32002 resource not found comes back as the server's error.
    let call = tokio::spawn(async move { client.read_resource("file:///missing").await });
    let id = expect_request(
        &mut fake,
        "resources/read",
        json!({"uri": "file:///missing"}),
    )
    .await;
    reply_error(&mut fake, &id, -32002, "Resource not found").await;
    assert_eq!(
        call.await.unwrap().unwrap_err().code().map(|c| c.0),
        Some(-32002)
    );
}

#[tokio::test]
async fn prompts_list_and_get() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let ps = served(
        &client,
        &mut fake,
        |c| async move { c.list_prompts().await },
        "prompts/list",
        json!({}),
        json!({"prompts": [{"name": "greet", "arguments": [{"name": "who", "required": true}]}]}),
    )
    .await
    .unwrap();
    assert_eq!(ps[0].name, "greet");
    assert_eq!(client.cached_prompts().unwrap(), ps);

    let c = client.clone();
    let call = tokio::spawn(async move {
        c.get_prompt("greet", [("who", "Ada"), ("tone", "warm")])
            .await
    });
    serve(
        &mut fake,
        "prompts/get",
        json!({"name": "greet", "arguments": {"who": "Ada", "tone": "warm"}}),
        json!({"description": "A greeting", "messages": [{"role": "user", "content": {"type": "text", "text": "Hello Ada"}}]}),
    )
    .await;
    let p = call.await.unwrap().unwrap();
    assert_eq!(p.messages[0].content.as_text(), Some("Hello Ada"));

    // No arguments: the member is left out.
    let call = tokio::spawn(async move {
        client
            .get_prompt("greet", std::iter::empty::<(String, String)>())
            .await
    });
    serve(
        &mut fake,
        "prompts/get",
        json!({"name": "greet"}),
        json!({"messages": []}),
    )
    .await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn logging_set_level() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let call = tokio::spawn(async move { client.set_level(LoggingLevel::Warning).await });
    serve(
        &mut fake,
        "logging/setLevel",
        json!({"level": "warning"}),
        json!({}),
    )
    .await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn completion_with_context_arguments() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.complete_with_context(
            Reference::Prompt(PromptReference::new("greet")),
            "tone",
            "wa",
            [("who", "Ada")],
        )
        .await
    });
    serve(
        &mut fake,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
            "argument": {"name": "tone", "value": "wa"},
            "context": {"arguments": {"who": "Ada"}}}),
        json!({"completion": {"values": ["warm", "wary"], "total": 2, "hasMore": false}}),
    )
    .await;
    let r = call.await.unwrap().unwrap();
    assert_eq!(r.completion.values, ["warm", "wary"]);
    assert_eq!(r.completion.total, Some(2));

    let call = tokio::spawn(async move {
        client
            .complete(
                Reference::Resource(ResourceTemplateReference::new("file:///{path}")),
                "path",
                "sr",
            )
            .await
    });
    serve(
        &mut fake,
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "file:///{path}"},
            "argument": {"name": "path", "value": "sr"}}),
        json!({"completion": {"values": ["src"]}}),
    )
    .await;
    assert_eq!(call.await.unwrap().unwrap().completion.values, ["src"]);
}

#[tokio::test]
async fn completion_context_is_left_out_before_2025_06_18() {
    let (client, mut fake) = connect(builder(), "2025-03-26", all_server_caps()).await;
    let call = tokio::spawn(async move {
        client
            .complete_with_context(
                Reference::Prompt(PromptReference::new("greet")),
                "tone",
                "w",
                [("who", "Ada")],
            )
            .await
    });
    serve(
        &mut fake,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "tone", "value": "w"}}),
        json!({"completion": {"values": []}}),
    )
    .await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn completion_needs_no_capability_in_2024_11_05() {
    // 2024-11-05 had completion/complete but no `completions` capability (§8.5).
    let (client, mut fake) = connect(builder(), "2024-11-05", json!({"prompts": {}})).await;
    let call = tokio::spawn(async move {
        client
            .complete(Reference::Prompt(PromptReference::new("p")), "a", "")
            .await
    });
    serve(
        &mut fake,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"name": "a", "value": ""}}),
        json!({"completion": {"values": ["x"]}}),
    )
    .await;
    call.await.unwrap().unwrap();
}

#[tokio::test]
async fn lc_5_calls_for_undeclared_server_capabilities_send_nothing() {
    let (client, mut fake) = connect(builder(), "2025-11-25", json!({"resources": {}})).await;
    let refused = |r: Result<(), ClientError>| match r {
        Err(ClientError::Request(RequestError::NotAllowed(e))) => {
            assert_eq!(e.data.unwrap()["reason"], "capability_not_negotiated")
        }
        other => panic!("expected a local refusal, got {other:?}"),
    };
    refused(client.list_tools().await.map(drop));
    refused(client.call_tool("t", json!({})).await.map(drop));
    refused(client.list_prompts().await.map(drop));
    refused(client.get_prompt("p", [("a", "b")]).await.map(drop));
    refused(client.set_level(LoggingLevel::Info).await);
    refused(
        client
            .complete(Reference::Prompt(PromptReference::new("p")), "a", "")
            .await
            .map(drop),
    );
    // `resources` without `subscribe: true`: no subscriptions.
    refused(client.subscribe("file:///a", |_| {}).await.map(drop));
    assert_eq!(client.subscription_count(), 0, "nothing stays registered");
    fake.expect_silence(100).await;
}

#[tokio::test]
async fn generic_request_with_options() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let call = tokio::spawn(async move {
        c.request::<_, Value>(
            "tools/list",
            json!({"cursor": "abc"}),
            RequestOptions::default().with_timeout(std::time::Duration::from_secs(5)),
        )
        .await
    });
    serve(
        &mut fake,
        "tools/list",
        json!({"cursor": "abc"}),
        json!({"tools": []}),
    )
    .await;
    assert_eq!(call.await.unwrap().unwrap(), json!({"tools": []}));

    // `()` params are left out.
    let call = tokio::spawn(async move {
        client
            .request::<_, Value>("ping", (), RequestOptions::default())
            .await
    });
    let id = expect_request(&mut fake, "ping", Value::Null).await;
    reply(&mut fake, &id, json!({})).await;
    assert_eq!(call.await.unwrap().unwrap(), json!({}));
}

#[tokio::test]
async fn a_result_that_does_not_parse_is_a_serde_error() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let call = tokio::spawn(async move { client.read_resource("file:///a").await });
    serve(
        &mut fake,
        "resources/read",
        json!({"uri": "file:///a"}),
        json!({"nope": 1}),
    )
    .await;
    match call.await.unwrap() {
        Err(ClientError::Request(RequestError::Serde(m))) => {
            assert!(m.contains("resources/read"), "{m}")
        }
        other => panic!("expected a serde error, got {other:?}"),
    }
}
