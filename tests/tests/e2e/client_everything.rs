//! Our client against the everything server, in memory, over every row of
//! ../shared/conformance/EVERYTHING-SERVER.md. Every frame of the session is schema-checked.

use crate::client_support::{Everything, connect_everything};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard::client::{Client, RequestOptions};
use switchboard::types::completion::{PromptReference, Reference, ResourceTemplateReference};
use switchboard::types::content::TextContent;
use switchboard::types::content::{ContentBlock, ResourceContents};
use switchboard::types::elicitation::{ElicitContentValue, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::logging::LoggingLevel;
use switchboard::types::meta::OrderedMap;
use switchboard::types::roots::Root;
use switchboard::types::sampling::{CreateMessageResult, SamplingMessageContentBlock};
use switchboard_example_servers::everything::{PNG, WAV};
use switchboard_tests::validate_session;

fn connect() -> impl std::future::Future<Output = Everything> {
    let client = Client::builder(Implementation::new("everything-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .sampling(|params, _| async move {
            let asked = serde_json::to_value(&params.messages).unwrap_or_default();
            let text = format!(
                "echo {}",
                asked[0]["content"]["text"].as_str().unwrap_or("")
            );
            Ok(CreateMessageResult::new(
                "test-model",
                SamplingMessageContentBlock::Text(TextContent::new(text)),
            ))
        })
        .elicitation(|_, _| async {
            let mut content = OrderedMap::new();
            content.insert("username", ElicitContentValue::String("ann".into()));
            content.insert(
                "email",
                ElicitContentValue::String("ann@example.test".into()),
            );
            Ok(ElicitResult::accept(content))
        })
        .roots([Root::new("file:///work").with_name("work")]);
    connect_everything(client)
}

fn text_of(r: &switchboard::types::tools::CallToolResult) -> String {
    r.content
        .first()
        .and_then(ContentBlock::as_text)
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn every_row_of_the_everything_contract() {
    let Everything { c, rec, logs } = connect().await;
    // §1
    let caps = serde_json::to_value(c.server_capabilities()).unwrap();
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    c.ping().await.unwrap();
    c.set_level(LoggingLevel::Debug).await.unwrap();
    // §2 tools
    let tools = c.list_tools().await.unwrap();
    assert_eq!(
        tools.len(),
        45,
        "20 contract tools, the three task tools, the fourteen 2026-07-28 conformance fixtures, \
         the seven of the tasks extension (greet, slow_compute, failing_job, \
         protocol_error_job, confirm_delete, multi_input, test_tool_with_task) and the OAuth \
         step-up fixture (test_scoped_write)"
    );
    for name in [
        "test_task_slow",
        "test_task_required",
        "test_task_elicitation",
    ] {
        assert!(tools.iter().any(|t| t.name == name), "{name}");
    }
    assert_eq!(
        caps["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "declared because tools support tasks"
    );
    let call = |name: &'static str, args: Value| {
        let c = c.clone();
        async move { c.call_tool(name, args).await.unwrap() }
    };
    assert_eq!(
        text_of(&call("test_simple_text", json!({})).await),
        "This is a simple text response for testing."
    );
    let img = serde_json::to_value(call("test_image_content", json!({})).await).unwrap();
    assert_eq!(
        img["content"][0],
        json!({"type": "image", "data": PNG, "mimeType": "image/png"})
    );
    let audio = serde_json::to_value(call("test_audio_content", json!({})).await).unwrap();
    assert_eq!(audio["content"][0]["data"], WAV);
    let emb = serde_json::to_value(call("test_embedded_resource", json!({})).await).unwrap();
    assert_eq!(
        emb["content"][0]["resource"]["uri"],
        "test://embedded-resource"
    );
    let link = serde_json::to_value(call("test_resource_link", json!({})).await).unwrap();
    assert_eq!(link["content"][1]["type"], "resource_link");
    let multi = call("test_multiple_content_types", json!({})).await;
    assert_eq!(multi.content.len(), 3);
    let structured = call("test_structured_output", json!({"a": 6, "b": 7})).await;
    assert_eq!(
        structured.structured_content.clone().unwrap(),
        json!({"sum": 13, "product": 42})
    );
    let err = call("test_error_handling", json!({})).await;
    assert!(err.is_error());
    assert_eq!(
        text_of(&err),
        "This tool intentionally returns an error for testing"
    );
    // Progress, in order, before the result.
    let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
    let s2 = seen.clone();
    let r = c
        .call_tool_with(
            "test_tool_with_progress",
            json!({}),
            RequestOptions::default().with_progress(move |u| s2.lock().unwrap().push(u.progress)),
        )
        .await
        .unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![0.0, 50.0, 100.0]);
    assert!(!text_of(&r).is_empty(), "the token is echoed");
    assert_eq!(
        text_of(&call("test_tool_with_logging", json!({})).await),
        "Tool with logging executed successfully"
    );
    assert_eq!(
        *logs.lock().unwrap(),
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ]
    );
    assert_eq!(
        text_of(&call("test_sampling", json!({"prompt": "hi"})).await),
        "LLM response: echo hi"
    );
    assert_eq!(
        text_of(&call("test_elicitation", json!({"message": "who?"})).await),
        r#"User response: action=accept, content={"username":"ann","email":"ann@example.test"}"#
    );
    assert_eq!(
        text_of(&call("test_list_roots", json!({})).await),
        r#"Roots: [{"uri":"file:///work","name":"work"}]"#
    );
    // Dynamic tools and list_changed refresh the cache.
    let changed = c.tools_changed();
    call("test_add_dynamic_tool", json!({})).await;
    let tools = changed.await.unwrap();
    assert!(tools.iter().any(|t| t.name == "test_dynamic_tool"));
    assert_eq!(
        text_of(&call("test_dynamic_tool", json!({})).await),
        "dynamic tool response"
    );
    let changed = c.tools_changed();
    call("test_remove_dynamic_tool", json!({})).await;
    assert!(
        !changed
            .await
            .unwrap()
            .iter()
            .any(|t| t.name == "test_dynamic_tool")
    );
    // §3 resources
    let resources = c.list_resources().await.unwrap();
    assert_eq!(resources.len(), 28, "three pages followed");
    let read = c.read_resource("test://static-text").await.unwrap();
    assert!(
        matches!(&read.contents[0], ResourceContents::Text(t) if t.text == "This is the content of the static text resource.")
    );
    let read = c.read_resource("test://template/7/data").await.unwrap();
    let ResourceContents::Text(t) = &read.contents[0] else {
        panic!("text")
    };
    assert_eq!(
        serde_json::from_str::<Value>(&t.text).unwrap()["data"],
        "Data for ID: 7"
    );
    assert_eq!(
        c.list_resource_templates().await.unwrap()[0].uri_template,
        "test://template/{id}/data"
    );
    let e = c.read_resource("test://missing").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.0), Some(-32002));
    let updates: Arc<Mutex<Vec<String>>> = Arc::default();
    let u2 = updates.clone();
    c.subscribe("test://watched-resource", move |p| {
        u2.lock().unwrap().push(p.uri)
    })
    .await
    .unwrap();
    assert_eq!(
        text_of(&call("test_trigger_resource_update", json!({})).await),
        "Updated test://watched-resource: update=1 notified=true"
    );
    c.ping().await.unwrap();
    assert_eq!(*updates.lock().unwrap(), ["test://watched-resource"]);
    // §4 prompts
    assert_eq!(
        c.list_prompts().await.unwrap().len(),
        5,
        "four contract prompts and the 2026-07-28 input-required one"
    );
    let p = c
        .get_prompt("test_prompt_with_arguments", [("arg1", "x"), ("arg2", "y")])
        .await
        .unwrap();
    assert_eq!(
        p.messages[0].content.as_text(),
        Some("Prompt with arguments: arg1='x', arg2='y'")
    );
    assert_eq!(
        c.get_prompt("test_prompt_with_arguments", [("arg1", "x")])
            .await
            .unwrap_err()
            .code()
            .map(|c| c.0),
        Some(-32602)
    );
    // §5 completion
    let r = c
        .complete(
            Reference::Prompt(PromptReference::new("test_prompt_with_arguments")),
            "arg1",
            "al",
        )
        .await
        .unwrap();
    assert_eq!(r.completion.values, ["alpha", "alpine"]);
    let r = c
        .complete(
            Reference::Resource(ResourceTemplateReference::new("test://template/{id}/data")),
            "id",
            "1",
        )
        .await
        .unwrap();
    assert_eq!(r.completion.values, ["100", "123"]);
    c.close();
    let checked = validate_session(&rec.frames(), "2025-11-25");
    assert!(
        checked > 80,
        "every frame of the session validated ({checked})"
    );
}
