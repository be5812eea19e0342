//! Resource subscriptions against a hand-played server: `resources/subscribe` once per URI,
//! `notifications/resources/updated` routed only to that URI's subscribers (and those of a URI it
//! is a sub-resource of), `resources/unsubscribe` with the last subscription, and the bound.

use std::sync::{Arc, Mutex};

use crate::client_support::{
    all_server_caps, builder, connect, expect_request, reply, reply_error, serve, served,
};
use serde_json::json;
use switchboard::client::{ClientError, ClientSession, SubscriptionId};
use switchboard_tests::RawPeer;

type Log = Arc<Mutex<Vec<(&'static str, String)>>>;

async fn subscribe(
    client: &ClientSession,
    fake: &mut RawPeer,
    uri: &str,
    name: &'static str,
    log: &Log,
    expect_frame: bool,
) -> SubscriptionId {
    let c = client.clone();
    let sink = log.clone();
    let u = uri.to_owned();
    let call = tokio::spawn(async move {
        c.subscribe(&u, move |n| sink.lock().unwrap().push((name, n.uri)))
            .await
    });
    if expect_frame {
        serve(fake, "resources/subscribe", json!({"uri": uri}), json!({})).await;
    }
    call.await.unwrap().unwrap()
}

async fn updated(fake: &mut RawPeer, uri: &str) {
    fake.notify("notifications/resources/updated", json!({"uri": uri}))
        .await;
}

#[tokio::test]
async fn updates_reach_only_the_subscribers_of_that_uri() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let log: Log = Arc::default();
    let a1 = subscribe(&client, &mut fake, "file:///a", "a1", &log, true).await;
    // A second callback for the same URI sends no second resources/subscribe.
    let a2 = subscribe(&client, &mut fake, "file:///a", "a2", &log, false).await;
    let _b = subscribe(&client, &mut fake, "file:///b", "b", &log, true).await;
    assert_eq!(client.subscription_count(), 3);
    assert!(client.is_subscribed("file:///a"));

    updated(&mut fake, "file:///a").await;
    updated(&mut fake, "file:///b").await;
    updated(&mut fake, "file:///c").await; // nobody's
    updated(&mut fake, "file:///ab").await; // a sibling of a, not a sub-resource
    updated(&mut fake, "file:///a/part").await; // a sub-resource of a
    fake.sync().await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            ("a1", "file:///a".to_owned()),
            ("a2", "file:///a".to_owned()),
            ("b", "file:///b".to_owned()),
            ("a1", "file:///a/part".to_owned()),
            ("a2", "file:///a/part".to_owned()),
        ]
    );

    // Removing one of two callbacks sends nothing; removing the last sends resources/unsubscribe.
    log.lock().unwrap().clear();
    client.unsubscribe(a1).await.unwrap();
    fake.expect_silence(50).await;
    updated(&mut fake, "file:///a").await;
    fake.sync().await;
    assert_eq!(*log.lock().unwrap(), [("a2", "file:///a".to_owned())]);
    served(
        &client,
        &mut fake,
        |c| async move { c.unsubscribe(a2).await },
        "resources/unsubscribe",
        json!({"uri": "file:///a"}),
        json!({}),
    )
    .await
    .unwrap();
    assert!(!client.is_subscribed("file:///a"));
    log.lock().unwrap().clear();
    updated(&mut fake, "file:///a").await;
    fake.sync().await;
    assert!(log.lock().unwrap().is_empty());

    // An id already removed is an error, and sends nothing.
    assert!(matches!(
        client.unsubscribe(a2).await,
        Err(ClientError::UnknownSubscription(id)) if id == a2
    ));
    fake.expect_silence(50).await;
}

#[tokio::test]
async fn a_refused_subscribe_leaves_nothing_registered() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let call = tokio::spawn(async move { c.subscribe("file:///nope", |_| {}).await });
    let id = expect_request(
        &mut fake,
        "resources/subscribe",
        json!({"uri": "file:///nope"}),
    )
    .await;
    reply_error(&mut fake, &id, -32002, "Resource not found").await;
    assert_eq!(
        call.await.unwrap().unwrap_err().code().map(|c| c.0),
        Some(-32002)
    );
    assert_eq!(client.subscription_count(), 0);
    assert!(!client.is_subscribed("file:///nope"));
}

#[tokio::test]
async fn the_number_of_subscriptions_is_bounded() {
    let (client, mut fake) = connect(
        builder().max_subscriptions(2),
        "2025-11-25",
        all_server_caps(),
    )
    .await;
    let log: Log = Arc::default();
    subscribe(&client, &mut fake, "file:///1", "1", &log, true).await;
    let two = subscribe(&client, &mut fake, "file:///2", "2", &log, true).await;
    match client.subscribe("file:///3", |_| {}).await {
        Err(ClientError::TooManySubscriptions { limit }) => assert_eq!(limit, 2),
        other => panic!("expected the bound, got {other:?}"),
    }
    // Also for another callback on a URI already subscribed.
    assert!(client.subscribe("file:///1", |_| {}).await.is_err());
    fake.expect_silence(50).await;
    // Room again after an unsubscribe.
    served(
        &client,
        &mut fake,
        |c| async move { c.unsubscribe(two).await },
        "resources/unsubscribe",
        json!({"uri": "file:///2"}),
        json!({}),
    )
    .await
    .unwrap();
    subscribe(&client, &mut fake, "file:///3", "3", &log, true).await;
}

#[tokio::test]
async fn the_default_bound_is_1024() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    // The server answers every subscribe.
    let server = tokio::spawn(async move {
        for _ in 0..1024 {
            let req = fake.recv().await;
            assert_eq!(req["method"], "resources/subscribe");
            reply(&mut fake, &req["id"], json!({})).await;
        }
        fake
    });
    for i in 0..1024 {
        client
            .subscribe(&format!("file:///r{i}"), |_| {})
            .await
            .unwrap();
    }
    let mut fake = server.await.unwrap();
    assert!(matches!(
        client.subscribe("file:///one-more", |_| {}).await,
        Err(ClientError::TooManySubscriptions { limit: 1024 })
    ));
    fake.expect_silence(50).await;
}

#[tokio::test]
async fn a_panicking_callback_does_not_end_the_session() {
    let (client, mut fake) = connect(builder(), "2025-11-25", all_server_caps()).await;
    let c = client.clone();
    let call =
        tokio::spawn(async move { c.subscribe("file:///x", |_| panic!("callback bug")).await });
    serve(
        &mut fake,
        "resources/subscribe",
        json!({"uri": "file:///x"}),
        json!({}),
    )
    .await;
    call.await.unwrap().unwrap();
    updated(&mut fake, "file:///x").await;
    fake.sync().await;
    assert!(client.is_open());
}
