//! One path per notification: a resource update announced once reaches every subscriber of
//! every era, 2025 sessions that subscribed and 2026-07-28 `subscriptions/listen` streams whose
//! filter names it (issue 24, part 4). The everything server's `test_trigger_resource_update`
//! is the announcer, as real clients drive it.

use serde_json::{Value, json};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::server::Server;
use switchboard_example_servers::everything::{WATCHED, everything_server};
use switchboard_tests::RawPeer;

const MODERN: &str = "2026-07-28";

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": MODERN,
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"}})
}

/// A 2025-11-25 session subscribed to the watched resource.
async fn subscriber(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    let r = c
        .request(json!(1), "resources/subscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(r["result"], json!({}), "{r}");
    c
}

/// A 2026-07-28 connection listening for updates of the watched resource, acknowledged.
async fn listener(s: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, MODERN);
    c.send(
        json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": [WATCHED]}}}),
    )
    .await;
    let ack = c.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(
        ack["params"]["notifications"]["resourceSubscriptions"],
        json!([WATCHED]),
        "{ack}"
    );
    c
}

fn trigger_text(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a tool result: {r}"))
}

async fn expect_update(c: &mut RawPeer) -> Value {
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), c.recv())
        .await
        .expect("an update within 5 s");
    assert_eq!(n["method"], "notifications/resources/updated", "{n}");
    assert_eq!(n["params"]["uri"], WATCHED, "{n}");
    n
}

/// The trigger called on a 2026-07-28 connection (as FastMCP's and mcp-remote's clients do)
/// reaches a listen stream on another connection and a 2025 session alike.
#[tokio::test]
async fn a_modern_trigger_reaches_a_listen_stream_and_a_2025_subscriber() {
    let s = everything_server(SessionConfig::default()).unwrap();
    let mut old = subscriber(&s).await;
    let mut listen = listener(&s).await;
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut caller = RawPeer::new(a, MODERN);
    let mut params = json!({"name": "test_trigger_resource_update", "arguments": {}});
    params["_meta"] = meta();
    let r = caller.request(json!(1), "tools/call", params).await;
    assert_eq!(
        trigger_text(&r),
        format!("Updated {WATCHED}: update=1 notified=true")
    );
    let n = expect_update(&mut listen).await;
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen",
        "tagged with its listen: {n}"
    );
    expect_update(&mut old).await;
}

/// The trigger called on a 2025 session reaches that session first (before its answer), the
/// listen stream, and another 2025 session that subscribed.
#[tokio::test]
async fn a_2025_trigger_reaches_every_subscriber_of_every_era() {
    let s = everything_server(SessionConfig::default()).unwrap();
    let mut caller = subscriber(&s).await;
    let mut other = subscriber(&s).await;
    let mut listen = listener(&s).await;
    caller
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "test_trigger_resource_update", "arguments": {}}}))
        .await;
    // The caller's own update comes before the answer.
    expect_update(&mut caller).await;
    let r = caller.recv().await;
    assert_eq!(
        trigger_text(&r),
        format!("Updated {WATCHED}: update=1 notified=true")
    );
    expect_update(&mut listen).await;
    expect_update(&mut other).await;
    assert_eq!(
        s.resource_updated(WATCHED),
        3,
        "two sessions and one stream"
    );
}

/// With no subscriber anywhere, nobody is told and the trigger says so.
#[tokio::test]
async fn nobody_subscribed_nobody_notified() {
    let s = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    let r = c
        .request(
            json!(1),
            "tools/call",
            json!({"name": "test_trigger_resource_update", "arguments": {}}),
        )
        .await;
    assert_eq!(
        trigger_text(&r),
        format!("Updated {WATCHED}: update=1 notified=false")
    );
    c.expect_silence(50).await;
}
