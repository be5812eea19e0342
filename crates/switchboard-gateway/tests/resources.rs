//! Resource subscriptions, completion and the URIs in tool results, through the gateway:
//! each rewritten between the upstream's names and URIs and the gateway's.

use std::sync::{Arc, Mutex};

use serde_json::json;
use switchboard_client::{Client, ClientSession, EraMode};
use switchboard_gateway::Gateway;
use switchboard_server::{CompletionTarget, Server, ServerSession, prefix_matches};
use switchboard_test_support::wait;
use switchboard_types::lifecycle::Implementation;
use switchboard_types::prompts::{GetPromptResult, Prompt};
use switchboard_types::resources::{Resource, ResourceTemplate};
use switchboard_types::tools::{CallToolResult, Tool};

mod common;

use common::{connect, in_memory, one_upstream, read_text};

/// An upstream with a subscribable resource (`touch` announces a change of it), a prompt and
/// a template with completions, and `link`, whose result links and embeds the resource.
fn docs() -> Server {
    Server::builder(Implementation::new("docs", "1"))
        .resource(Resource::new("test://doc/1", "doc"), |r| async move {
            Ok(read_text(&r.uri, "one".into()))
        })
        .resource_template(
            ResourceTemplate::new("test://doc/{id}", "docs"),
            |r| async move { Ok(read_text(&r.uri, "any".into())) },
        )
        .prompt(Prompt::new("greet"), |_| async {
            Ok(GetPromptResult::new(vec![]))
        })
        .completion(
            CompletionTarget::Prompt("greet".into()),
            "name",
            prefix_matches(["alice", "albert", "bob"]),
        )
        .completion(
            CompletionTarget::ResourceTemplate("test://doc/{id}".into()),
            "id",
            prefix_matches(["1", "12", "2"]),
        )
        .tool(
            Tool::new("touch", json!({"type": "object"})),
            |call| async move {
                call.cx.resource_updated("test://doc/1").await;
                Ok(CallToolResult::text("touched"))
            },
        )
        .tool(Tool::new("link", json!({"type": "object"})), |_| async {
            Ok(serde_json::from_value(json!({"content": [
                {"type": "resource_link", "uri": "test://doc/1", "name": "doc"},
                {"type": "resource", "resource": {"uri": "test://doc/1", "text": "one"}}
            ]}))
            .expect("a result"))
        })
        .build()
        .expect("a server")
}

async fn setup() -> (Gateway, Arc<Mutex<Vec<ServerSession>>>, ClientSession) {
    let sessions = Arc::new(Mutex::new(Vec::new()));
    let gateway = one_upstream(
        "up",
        in_memory(docs(), sessions.clone()),
        EraMode::Legacy,
        |_| {},
    );
    wait::until("up", || gateway.is_up("up") == Some(true)).await;
    let client = Client::builder(Implementation::new("front", "1"))
        .era(EraMode::Legacy)
        .build();
    let client = connect(&gateway, client).await;
    (gateway, sessions, client)
}

#[tokio::test]
async fn a_subscription_reaches_the_upstream_and_its_updates_come_back_with_the_gateways_uri() {
    let (_gateway, sessions, client) = setup().await;
    let updates = Arc::new(Mutex::new(Vec::new()));
    let id = client
        .subscribe("test://up/doc/1", {
            let updates = updates.clone();
            move |u| updates.lock().expect("lock").push(u.uri)
        })
        .await
        .expect("subscribed");
    let upstream = sessions.lock().expect("lock")[0].clone();
    assert!(
        upstream.is_subscribed("test://doc/1"),
        "the upstream URI is subscribed"
    );
    client
        .call_tool("up_touch", json!({}))
        .await
        .expect("a result");
    wait::until("the update", || !updates.lock().expect("lock").is_empty()).await;
    assert_eq!(*updates.lock().expect("lock"), ["test://up/doc/1"]);
    client.unsubscribe(id).await.expect("unsubscribed");
    wait::until("unsubscribed upstream", || {
        !upstream.is_subscribed("test://doc/1")
    })
    .await;
}

#[tokio::test]
async fn completion_of_a_prompt_or_template_reaches_its_upstream_under_the_upstreams_names() {
    let (_gateway, _sessions, client) = setup().await;
    let r = client
        .complete(
            serde_json::from_value(json!({"type": "ref/prompt", "name": "up_greet"}))
                .expect("a ref"),
            "name",
            "al",
        )
        .await
        .expect("completed");
    assert_eq!(r.completion.values, ["alice", "albert"]);
    let r = client
        .complete(
            serde_json::from_value(json!({"type": "ref/resource", "uri": "test://up/doc/{id}"}))
                .expect("a ref"),
            "id",
            "1",
        )
        .await
        .expect("completed");
    assert_eq!(r.completion.values, ["1", "12"]);
    // A reference of no upstream: no values.
    let r = client
        .complete(
            serde_json::from_value(json!({"type": "ref/prompt", "name": "nobody_greet"}))
                .expect("a ref"),
            "name",
            "a",
        )
        .await
        .expect("completed");
    assert!(r.completion.values.is_empty());
}

#[tokio::test]
async fn resource_links_and_embedded_resources_in_a_tool_result_carry_the_gateways_uri() {
    let (_gateway, _sessions, client) = setup().await;
    let r = client
        .call_tool("up_link", json!({}))
        .await
        .expect("a result");
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["content"][0]["uri"], "test://up/doc/1");
    assert_eq!(v["content"][1]["resource"]["uri"], "test://up/doc/1");
    // And the link reads through the gateway.
    let read = client.read_resource("test://up/doc/1").await.expect("read");
    assert_eq!(read.contents[0].uri(), "test://up/doc/1");
}

/// `[D26-67]`..`[D26-76]` listen: a 2026-07-28 client's `subscriptions/listen` naming a gateway
/// URI subscribes the upstream for as long as the stream is open; the upstream's update comes
/// back on the stream with the gateway's URI; the stream's end unsubscribes upstream.
#[tokio::test]
async fn a_listen_stream_naming_a_resource_subscribes_the_upstream_while_it_is_open() {
    let (gateway, sessions, _legacy) = setup().await;
    let modern = Client::builder(Implementation::new("front", "1"))
        .era(EraMode::Auto)
        .build();
    let modern = connect(&gateway, modern).await;
    let filter = switchboard_types::modern::SubscriptionFilter {
        resource_subscriptions: Some(vec!["test://up/doc/1".into()]),
        ..Default::default()
    };
    let mut stream = modern.listen(filter).await.expect("listening");
    let upstream = sessions.lock().expect("lock")[0].clone();
    assert!(
        upstream.is_subscribed("test://doc/1"),
        "subscribed upstream before the acknowledgement"
    );
    modern
        .call_tool("up_touch", json!({}))
        .await
        .expect("a result");
    match stream.next().await {
        Some(switchboard_client::ListenEvent::ResourceUpdated(u)) => {
            assert_eq!(u.uri, "test://up/doc/1")
        }
        other => panic!("expected the update, got {other:?}"),
    }
    drop(stream);
    wait::until("unsubscribed upstream when the stream ended", || {
        !upstream.is_subscribed("test://doc/1")
    })
    .await;
}
