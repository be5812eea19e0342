//! Lifecycle and version negotiation on the wire (SPEC-NOTES §3), against our server with a
//! hand-played client, and our client against a hand-played server. Every frame we emit is
//! validated against the schema of the negotiated revision.

use serde_json::{Value, json};
use switchboard::client::{Client, ClientError};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::server::{LifecycleState, Server, Strictness};
use switchboard::types::ProtocolVersion;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::RawPeer;

fn server(strictness: Strictness) -> Server {
    Server::builder(Implementation::new("lifecycle-test", "1"))
        .strictness(strictness)
        .tool(
            Tool::new("echo", json!({"type": "object"})),
            |c| async move {
                Ok(CallToolResult::text(
                    serde_json::to_string(&c.arguments).unwrap_or_default(),
                ))
            },
        )
        .build()
        .unwrap()
}

fn connect(s: &Server) -> (RawPeer, switchboard::server::ServerSession) {
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    (RawPeer::new(a, "2025-11-25"), session)
}

fn init_params(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
}

#[tokio::test]
async fn lc_1_requests_before_initialize_get_32600_and_session_stays_usable() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    let r = c.request(json!(1), "tools/list", Value::Null).await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["error"]["message"], "server not initialized");
    assert_eq!(r["error"]["data"]["reason"], "not_initialized");
    assert_eq!(session.lifecycle(), LifecycleState::AwaitingInitialize);
    let r = c
        .request(json!(2), "initialize", init_params("2025-11-25"))
        .await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn ut_1_ping_is_served_before_initialize() {
    let (mut c, _s) = connect(&server(Strictness::Strict));
    let r = c.request(json!("p"), "ping", Value::Null).await;
    assert_eq!(r, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
}

#[tokio::test]
async fn unknown_method_before_initialize_is_32601_and_connection_stays_up() {
    let (mut c, _s) = connect(&server(Strictness::Strict));
    let r = c.request(json!(1), "acme/unknown", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = c.request(json!(3), "server/discover", json!({})).await;
    assert_eq!(
        r["error"]["code"], -32602,
        "D26-9: a 2026-only method without its envelope is told what is missing, and the connection stays undecided"
    );
    c.handshake("2025-11-25", json!({})).await;
    let r = c.request(json!(2), "tools/list", Value::Null).await;
    assert_eq!(r["result"]["tools"][0]["name"], "echo");
}

#[tokio::test]
async fn strict_by_default_requests_between_initialize_and_initialized_get_32600() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    c.request(json!(1), "initialize", init_params("2025-11-25"))
        .await;
    assert_eq!(session.lifecycle(), LifecycleState::Initializing);
    let r = c.request(json!(2), "tools/list", Value::Null).await;
    assert_eq!(
        r["error"]["code"], -32600,
        "seed 000's invariant, strict by default"
    );
    assert_eq!(
        c.request(json!(3), "ping", Value::Null).await["result"],
        json!({})
    );
    c.notify("notifications/initialized", Value::Null).await;
    let r = c.request(json!(4), "tools/list", Value::Null).await;
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(session.lifecycle(), LifecycleState::Ready);
}

#[tokio::test]
async fn lenient_option_serves_requests_before_initialized_as_spec_3_2_recommends() {
    let (mut c, _s) = connect(&server(Strictness::Lenient));
    c.request(json!(1), "initialize", init_params("2025-11-25"))
        .await;
    let r = c.request(json!(2), "tools/list", Value::Null).await;
    assert!(r.get("result").is_some(), "{r}");
}

#[tokio::test]
async fn second_initialize_is_rejected() {
    let (mut c, _s) = connect(&server(Strictness::Strict));
    c.handshake("2025-11-25", json!({})).await;
    let r = c
        .request(json!(9), "initialize", init_params("2025-11-25"))
        .await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["error"]["data"]["reason"], "already_initialized");
}

#[tokio::test]
async fn lc_7_each_supported_version_is_echoed() {
    for v in ProtocolVersion::SUPPORTED {
        let (mut c, session) = connect(&server(Strictness::Strict));
        let r = c.handshake(v.as_str(), json!({})).await;
        assert_eq!(r["protocolVersion"], v.as_str());
        assert_eq!(session.protocol_version(), Some(v));
        // Our frames in this session are checked against this revision's own schema.
        let list = c.request(json!(1), "tools/list", Value::Null).await;
        assert!(list.get("result").is_some());
    }
}

#[tokio::test]
async fn lc_8_unsupported_version_gets_a_successful_counter_offer() {
    for offered in ["1999-01-01", "2026-07-28", "not-a-date"] {
        let (mut c, _s) = connect(&server(Strictness::Strict));
        let r = c
            .request(json!(1), "initialize", init_params(offered))
            .await;
        assert!(
            r.get("error").is_none(),
            "LC-8: a counter-offer, never an error: {r}"
        );
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    }
}

#[tokio::test]
async fn initialize_with_bad_params_is_32602_and_session_stays_usable() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    let r = c
        .request(json!(1), "initialize", json!({"protocolVersion": 5}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(session.lifecycle(), LifecycleState::AwaitingInitialize);
    c.handshake("2025-11-25", json!({})).await;
}

/// The client's identity is kept for the session's life, so `initialize` params are bounded in
/// bytes (64 KiB by default): a 1 MB `clientInfo.name` (measured: 1.1 MB held a session) is
/// refused with -32602 and the session can still initialize; a smaller bound is a knob.
#[tokio::test]
async fn initialize_params_over_the_byte_bound_are_32602_and_the_session_stays_usable() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    let mut big = init_params("2025-11-25");
    big["clientInfo"]["name"] = json!("n".repeat(1 << 20));
    let r = c.request(json!(1), "initialize", big).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "initialize_too_large");
    assert_eq!(r["error"]["data"]["limit"], 64 * 1024);
    assert!(r["error"]["message"].as_str().unwrap().len() < 200);
    assert_eq!(session.lifecycle(), LifecycleState::AwaitingInitialize);
    c.handshake("2025-11-25", json!({})).await;

    let small = Server::builder(Implementation::new("s", "1"))
        .max_initialize_bytes(200)
        .build()
        .unwrap();
    let (mut c, _session) = connect(&small);
    let mut params = init_params("2025-11-25");
    params["clientInfo"]["title"] = json!("t".repeat(200));
    let r = c.request(json!(1), "initialize", params).await;
    assert_eq!(r["error"]["data"]["reason"], "initialize_too_large", "{r}");
    let r = c
        .request(json!(2), "initialize", init_params("2025-11-25"))
        .await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
}

#[tokio::test]
async fn lc_9_client_disconnects_when_server_picks_a_version_it_cannot_use() {
    let only_newest = Server::builder(Implementation::new("new-only", "1"))
        .versions([ProtocolVersion::V2025_11_25])
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    let session = only_newest.serve(b).unwrap();
    let client = Client::builder(Implementation::new("old-client", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .protocol_version(ProtocolVersion::V2025_03_26)
        .supported_versions([ProtocolVersion::V2025_03_26])
        .build();
    match client.connect(a).await {
        Err(ClientError::UnsupportedVersion { chosen, supported }) => {
            assert_eq!(chosen, "2025-11-25");
            assert_eq!(supported, "2025-03-26");
        }
        other => panic!("expected UnsupportedVersion, got {other:?}"),
    }
    tokio::time::timeout(switchboard_tests::WAIT, session.closed())
        .await
        .expect("the client disconnected");
    assert_eq!(session.lifecycle(), LifecycleState::Closed);
}

#[tokio::test]
async fn client_accepts_a_counter_offer_it_supports() {
    let (a, b) = memory::pair();
    let s = Server::builder(Implementation::new("s", "1"))
        .versions([ProtocolVersion::V2025_06_18])
        .build()
        .unwrap();
    let _session = s.serve(b).unwrap();
    let c = Client::builder(Implementation::new("c", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .build()
        .connect(a)
        .await
        .unwrap();
    assert_eq!(c.protocol_version(), ProtocolVersion::V2025_06_18);
}

#[tokio::test]
async fn client_handles_the_32602_unsupported_version_error_too() {
    let (a, b) = memory::pair();
    let mut fake = RawPeer::new(b, "2025-11-25");
    let task = tokio::spawn(async move {
        Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .build()
            .connect(a)
            .await
    });
    let init = fake.recv().await;
    fake.send(json!({"jsonrpc":"2.0","id":init["id"],"error":{"code":-32602,"message":"Unsupported protocol version",
        "data":{"supported":["2024-11-05"],"requested":"2025-11-25"}}}))
        .await;
    match task.await.unwrap() {
        Err(ClientError::Handshake(m)) => assert!(
            m.contains("Unsupported protocol version") && m.contains("2024-11-05"),
            "{m}"
        ),
        other => panic!("expected a handshake error, got {other:?}"),
    }
}

#[tokio::test]
async fn lc_2_lc_4_client_sends_initialize_then_initialized() {
    let (a, b) = memory::pair();
    let mut fake = RawPeer::new(b, "2025-11-25");
    let task = tokio::spawn(async move {
        Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .build()
            .connect(a)
            .await
    });
    let init = fake.recv().await;
    assert_eq!(init["method"], "initialize");
    assert_eq!(
        init["params"]["protocolVersion"], "2025-11-25",
        "LC-6: the newest it supports"
    );
    assert!(
        init["params"]["clientInfo"]["name"].is_string()
            && init["params"]["capabilities"].is_object()
    );
    fake.send(json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"fake","version":"1"}}}))
        .await;
    let initialized = fake.recv().await;
    assert_eq!(
        initialized,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    );
    let session = task.await.unwrap().unwrap();
    assert_eq!(session.negotiated().server_info.name, "fake");
}

#[tokio::test]
async fn jr_12_batch_accepted_in_2025_03_26() {
    let (mut c, _s) = connect(&server(Strictness::Strict));
    c.handshake("2025-03-26", json!({})).await;
    c.send_text(r#"[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","id":11,"method":"tools/list"}]"#).await;
    let v = c.recv().await;
    let arr = v.as_array().expect("an array answers a batch");
    assert_eq!(arr.len(), 2);
    assert!(
        arr.iter()
            .any(|e| e["id"] == 11 && e["result"]["tools"].is_array())
    );
}

#[tokio::test]
async fn jr_12_batch_rejected_after_2025_03_26() {
    for v in ["2024-11-05", "2025-06-18", "2025-11-25"] {
        let (mut c, _s) = connect(&server(Strictness::Strict));
        c.handshake(v, json!({})).await;
        c.send_text(r#"[{"jsonrpc":"2.0","id":10,"method":"ping"}]"#)
            .await;
        let r = c.recv().await;
        assert_eq!(r["error"]["code"], -32600, "{v}");
        assert_eq!(r["error"]["data"]["reason"], "batch_not_allowed");
    }
}

#[tokio::test]
async fn jr_9_initialize_never_in_a_batch() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    c.send(
        json!([{"jsonrpc":"2.0","id":1,"method":"initialize","params":init_params("2025-03-26")}]),
    )
    .await;
    let r = c.recv().await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(session.lifecycle(), LifecycleState::AwaitingInitialize);
}

#[tokio::test]
async fn notifications_before_initialize_are_not_answered() {
    let (mut c, session) = connect(&server(Strictness::Strict));
    c.notify("notifications/initialized", Value::Null).await;
    c.notify("notifications/roots/list_changed", Value::Null)
        .await;
    c.expect_silence(100).await;
    assert_eq!(
        session.lifecycle(),
        LifecycleState::AwaitingInitialize,
        "initialized before initialize is ignored"
    );
}

#[tokio::test]
async fn closing_the_transport_closes_the_session() {
    let s = server(Strictness::Strict);
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    assert_eq!(s.session_count(), 1);
    drop(a);
    tokio::time::timeout(switchboard_tests::WAIT, session.closed())
        .await
        .unwrap();
    assert_eq!(session.lifecycle(), LifecycleState::Closed);
    assert_eq!(
        s.session_count(),
        0,
        "a closed session leaves the server's session map"
    );
}

#[tokio::test]
async fn bound_sessions_per_server() {
    let s = Server::builder(Implementation::new("s", "1"))
        .max_sessions(1)
        .build()
        .unwrap();
    let (_a, b) = memory::pair();
    let _first = s.serve(b).unwrap();
    let (_c, d) = memory::pair();
    assert!(matches!(
        s.serve(d),
        Err(switchboard::server::ServerError::TooManySessions { limit: 1 })
    ));
}

/// Sessions started at once from many threads never pass the bound: the check and the
/// session's entry are one step (before, each start counted the sessions, then added itself,
/// so two starts could both take the last place).
#[test]
fn bound_sessions_holds_when_sessions_start_at_once() {
    const LIMIT: usize = 4;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    for _ in 0..50 {
        let s = Server::builder(Implementation::new("s", "1"))
            .max_sessions(LIMIT)
            .build()
            .unwrap();
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
        let started: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let (s, barrier, handle) = (s.clone(), barrier.clone(), rt.handle().clone());
                    scope.spawn(move || {
                        let _enter = handle.enter();
                        let (a, b) = memory::pair();
                        barrier.wait();
                        s.serve(b).ok().map(|session| (a, session))
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(started.len(), LIMIT, "exactly the bound's sessions start");
        assert_eq!(s.session_count(), LIMIT);
        drop(started);
    }
}

#[tokio::test]
async fn typed_client_round_trip_on_every_revision() {
    for v in ProtocolVersion::SUPPORTED {
        let s = server(Strictness::Strict);
        let (a, b) = memory::pair();
        let _session = s.serve(b).unwrap();
        let rec = switchboard_tests::Recorder::default();
        let c = Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .protocol_version(v)
            .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
            .build()
            .connect(a)
            .await
            .unwrap();
        c.ping().await.unwrap();
        let tools = c.list_tools().await.unwrap();
        assert_eq!(tools.len(), 1);
        let r = c.call_tool("echo", json!({"k": 1})).await.unwrap();
        assert_eq!(r, CallToolResult::text(r#"{"k":1}"#));
        let n = switchboard_tests::validate_session(&rec.frames(), v.as_str());
        assert_eq!(n, 9, "{v}: every frame of the session validated");
    }
}
