//! List-all helpers and caches against a hand-played server: pagination follows opaque cursors
//! with no page-size assumption (`[UT-11]`, `[UT-12]`) under a page bound, `list_changed`
//! notifications bump per-list generations and refresh caches, and the auto-refresh mode re-lists
//! in the background.

use std::time::Duration;

use crate::client_support::{
    all_server_caps, builder, connect, expect_request, reply, serve, served, tools_listed,
};
use serde_json::{Value, json};
use switchboard::client::{ClientError, ListKind};
use switchboard_test_support::wait;
use switchboard_tests::WAIT;

fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object"}})
}

#[tokio::test]
async fn ut_11_ut_12_pagination_follows_opaque_cursors_of_any_page_size() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_tools().await });
    // Uneven pages; cursors with characters a client might be tempted to parse or re-encode.
    let c1 = "eyJvZmZzZXQiOjN9==/+ %20?&";
    let c2 = "  spaced  ";
    serve(
        &mut fake,
        "tools/list",
        json!({}),
        json!({"tools": [tool("a"), tool("b"), tool("c")], "nextCursor": c1}),
    )
    .await;
    serve(
        &mut fake,
        "tools/list",
        json!({"cursor": c1}),
        json!({"tools": [], "nextCursor": c2}),
    )
    .await;
    serve(
        &mut fake,
        "tools/list",
        json!({"cursor": c2}),
        json!({"tools": [tool("d")]}),
    )
    .await;
    let names: Vec<String> = call
        .await
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(client.cached_tools().unwrap().len(), 4);
}

#[tokio::test]
async fn single_pages_pass_cursors_through() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let call = tokio::spawn(async move {
        let first = client.list_prompts_page(None).await.unwrap();
        let next = client
            .list_prompts_page(first.next_cursor.clone())
            .await
            .unwrap();
        (first, next, client.cached_prompts())
    });
    serve(
        &mut fake,
        "prompts/list",
        json!({}),
        json!({"prompts": [{"name": "p1"}], "nextCursor": "2"}),
    )
    .await;
    serve(
        &mut fake,
        "prompts/list",
        json!({"cursor": "2"}),
        json!({"prompts": [{"name": "p2"}]}),
    )
    .await;
    let (first, next, cached) = call.await.unwrap();
    assert_eq!(first.prompts[0].name, "p1");
    assert_eq!(next.prompts[0].name, "p2");
    assert!(cached.is_none(), "single pages do not fill the cache");
}

#[tokio::test]
async fn pagination_stops_at_the_page_bound() {
    let (client, mut fake) = connect(builder().max_pages(3), "2025-11-25", all_server_caps()).await;
    let call = tokio::spawn(async move {
        let r = client.list_resources().await;
        (r, client.cached_resources())
    });
    // A server whose cursors never end.
    let mut cursor = Value::Null;
    for i in 0..3 {
        let params = if cursor.is_null() {
            json!({})
        } else {
            json!({"cursor": cursor})
        };
        let next = format!("c{i}");
        serve(
            &mut fake,
            "resources/list",
            params,
            json!({"resources": [], "nextCursor": next}),
        )
        .await;
        cursor = json!(next);
    }
    let (r, cached) = call.await.unwrap();
    match r {
        Err(ClientError::TooManyPages { method, pages }) => {
            assert_eq!(method, "resources/list");
            assert_eq!(pages, 3);
        }
        other => panic!("expected TooManyPages, got {other:?}"),
    }
    assert!(cached.is_none(), "an unfinished listing is not cached");
    fake.expect_silence(100).await;
}

#[tokio::test]
async fn list_changed_bumps_only_its_lists_and_the_waiter_re_lists() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    tools_listed(&client, &mut fake, json!([tool("a")])).await;

    let c = client.clone();
    let waiter = tokio::spawn(async move { c.tools_changed().await });
    fake.notify("notifications/resources/list_changed", Value::Null)
        .await;
    fake.notify("notifications/prompts/list_changed", Value::Null)
        .await;
    fake.notify("notifications/tools/list_changed", Value::Null)
        .await;
    serve(
        &mut fake,
        "tools/list",
        json!({}),
        json!({"tools": [tool("a"), tool("b")]}),
    )
    .await;
    let tools = waiter.await.unwrap().unwrap();
    assert_eq!(tools.len(), 2);
    assert_eq!(client.cached_tools().unwrap().len(), 2, "cache refreshed");
    assert_eq!(client.list_generation(ListKind::Tools), 1);
    assert_eq!(client.list_generation(ListKind::Resources), 1);
    assert_eq!(client.list_generation(ListKind::ResourceTemplates), 1);
    assert_eq!(client.list_generation(ListKind::Prompts), 1);
}

#[tokio::test]
async fn a_change_before_the_waiter_is_polled_is_not_lost() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    served(
        &client,
        &mut fake,
        |c| async move { c.list_prompts().await },
        "prompts/list",
        json!({}),
        json!({"prompts": []}),
    )
    .await
    .unwrap();
    fake.notify("notifications/prompts/list_changed", Value::Null)
        .await;
    fake.sync().await;
    let c = client.clone();
    let waiter = tokio::spawn(async move { c.prompts_changed().await });
    serve(
        &mut fake,
        "prompts/list",
        json!({}),
        json!({"prompts": [{"name": "new"}]}),
    )
    .await;
    assert_eq!(waiter.await.unwrap().unwrap()[0].name, "new");
    assert_eq!(client.cached_prompts().unwrap()[0].name, "new");
}

#[tokio::test]
async fn resources_changed_and_templates_changed_re_list() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let waiter = tokio::spawn(async move {
        let r = c.resources_changed().await.unwrap();
        let t = c.resource_templates_changed().await.unwrap();
        (r, t)
    });
    fake.notify("notifications/resources/list_changed", Value::Null)
        .await;
    serve(
        &mut fake,
        "resources/list",
        json!({}),
        json!({"resources": [{"uri": "file:///x", "name": "x"}]}),
    )
    .await;
    serve(
        &mut fake,
        "resources/templates/list",
        json!({}),
        json!({"resourceTemplates": [{"uriTemplate": "file:///{p}", "name": "p"}]}),
    )
    .await;
    let (r, t) = waiter.await.unwrap();
    assert_eq!(r[0].uri, "file:///x");
    assert_eq!(t[0].uri_template, "file:///{p}");
}

#[tokio::test]
async fn the_waiter_fails_when_the_session_closes() {
    let (client, fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let waiter = tokio::spawn({
        let c = client.clone();
        async move { c.tools_changed().await }
    });
    drop(fake);
    let r = tokio::time::timeout(WAIT, waiter).await.unwrap().unwrap();
    assert!(matches!(r, Err(ClientError::NotReady(_))), "{r:?}");
}

#[tokio::test]
async fn auto_refresh_re_lists_cached_lists_in_the_background() {
    let (client, mut fake) = connect(
        builder().auto_refresh(true),
        "2025-11-25",
        all_server_caps(),
    )
    .await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_tools().await });
    serve(
        &mut fake,
        "tools/list",
        json!({}),
        json!({"tools": [tool("a")]}),
    )
    .await;
    call.await.unwrap().unwrap();

    let c = client.clone();
    let waiter = wait::spawn_polled(async move { c.tools_changed().await }).await;
    fake.notify("notifications/tools/list_changed", Value::Null)
        .await;
    // The refresh is the client's own doing: exactly one re-listing, with no call from the test.
    serve(
        &mut fake,
        "tools/list",
        json!({}),
        json!({"tools": [tool("a"), tool("b")]}),
    )
    .await;
    let tools = tokio::time::timeout(WAIT, waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(tools.len(), 2, "the waiter sees the background refresh");
    assert_eq!(client.cached_tools().unwrap().len(), 2);

    // Lists never listed are not refreshed; a list_changed for them sends nothing.
    fake.notify("notifications/prompts/list_changed", Value::Null)
        .await;
    fake.expect_silence(100).await;
}

#[tokio::test]
async fn auto_refresh_coalesces_a_burst_of_changes() {
    let (client, mut fake) = connect(
        builder().auto_refresh(true),
        "2025-11-25",
        all_server_caps(),
    )
    .await;
    served(
        &client,
        &mut fake,
        |c| async move { c.list_resources().await },
        "resources/list",
        json!({}),
        json!({"resources": []}),
    )
    .await
    .unwrap();
    for _ in 0..3 {
        fake.notify("notifications/resources/list_changed", Value::Null)
            .await;
    }
    // One refresh is running; the changes that arrive meanwhile cause at most one more.
    let id = expect_request(&mut fake, "resources/list", json!({})).await;
    reply(
        &mut fake,
        &id,
        json!({"resources": [{"uri": "file:///1", "name": "1"}]}),
    )
    .await;
    let mut refreshes = 1;
    if let Ok(frame) = tokio::time::timeout(Duration::from_millis(200), fake.recv()).await {
        assert_eq!(frame["method"], "resources/list");
        reply(
            &mut fake,
            &frame["id"],
            json!({"resources": [{"uri": "file:///1", "name": "1"}]}),
        )
        .await;
        refreshes += 1;
    }
    assert!(refreshes <= 2);
    fake.expect_silence(100).await;
    assert_eq!(client.cached_resources().unwrap()[0].uri, "file:///1");
}
