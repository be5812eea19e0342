//! Capabilities enforced in both directions (SPEC-NOTES §4.3): an undeclared capability is -32601
//! on receipt, and a local error (no frame) on sending.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{Client, ClientError};
use switchboard::jsonrpc::{Flow, RequestError, RequestOptions, SessionConfig, memory};
use switchboard::server::Server;
use switchboard::types::capabilities::{ClientCapabilities, ServerCapabilities, ToolsCapability};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_tests::{RawPeer, Recorder};

fn bare_server() -> Server {
    Server::builder(Implementation::new("bare", "1"))
        .build()
        .unwrap()
}

#[tokio::test]
async fn cp_1_request_for_undeclared_server_capability_is_32601() {
    let s = bare_server();
    let (a, b) = memory::pair();
    let _session = s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    let init = c.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        init["capabilities"],
        json!({}),
        "nothing registered, nothing declared"
    );
    for m in [
        "tools/list",
        "resources/list",
        "prompts/list",
        "logging/setLevel",
        "completion/complete",
    ] {
        let r = c.request(json!(m), m, json!({})).await;
        assert_eq!(r["error"]["code"], -32601, "{m}");
        assert_eq!(
            r["error"]["data"]["reason"], "capability_not_declared",
            "{m}"
        );
    }
    assert_eq!(
        c.request(json!(1), "ping", Value::Null).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn lc_5_client_never_sends_a_request_the_server_did_not_declare() {
    let s = bare_server();
    let (a, b) = memory::pair();
    let _session = s.serve(b).unwrap();
    let rec = Recorder::default();
    let c = Client::builder(Implementation::new("c", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build()
        .connect(a)
        .await
        .unwrap();
    let before = rec.frames().len();
    match c.list_tools().await {
        Err(ClientError::Request(RequestError::NotAllowed(e))) => {
            assert_eq!(
                e.data.as_ref().unwrap()["reason"],
                "capability_not_negotiated"
            );
        }
        other => panic!("expected a local refusal, got {other:?}"),
    }
    assert_eq!(rec.frames().len(), before, "no frame was sent");
}

#[tokio::test]
async fn client_sends_nothing_but_initialize_and_ping_before_the_handshake() {
    let (a, mut b) = memory::pair();
    let rec = Recorder::default();
    let client = Client::builder(Implementation::new("c", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .session_config(SessionConfig::default().with_frame_hook(rec.hook()))
        .build();
    let connecting = tokio::spawn(async move { client.connect(a).await });
    // Play a server that never answers initialize: the client must not send anything else.
    let first = b.recv_text().await.unwrap();
    assert!(first.contains("\"initialize\""));
    // A silence check: the client must send nothing more in this time (no event to wait for).
    tokio::time::sleep(Duration::from_millis(50)).await;
    connecting.abort();
    let outbound: Vec<_> = rec
        .frames()
        .into_iter()
        .filter(|(d, _)| *d == Flow::Outbound)
        .collect();
    assert_eq!(outbound.len(), 1);
}

#[tokio::test]
async fn cp_2_client_answers_32601_for_an_undeclared_client_capability() {
    let s = Server::builder(Implementation::new("s", "1"))
        .enable_tools()
        .build()
        .unwrap();
    let (client_end, server_end) = memory::pair();
    let session = s.serve(server_end).unwrap();
    let _c = Client::builder(Implementation::new("c", "1"))
        .era(switchboard::client::EraMode::Legacy)
        .build()
        .connect(client_end)
        .await
        .unwrap();
    // The server refuses locally to send sampling to a client without the capability...
    let e = session
        .peer()
        .request("sampling/createMessage", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(matches!(e, RequestError::NotAllowed(_)), "{e:?}");
    for m in ["roots/list", "elicitation/create"] {
        assert!(matches!(
            session
                .peer()
                .request(m, None, RequestOptions::default())
                .await,
            Err(RequestError::NotAllowed(_))
        ));
    }
    // ...and a server-to-client ping is always allowed and answered.
    let pong = session
        .peer()
        .request("ping", None, RequestOptions::default())
        .await
        .unwrap();
    assert_eq!(pong.get(), "{}");
}

#[tokio::test]
async fn client_answers_32601_when_a_peer_ignores_its_capabilities() {
    // A misbehaving server played by hand sends sampling to a client that did not declare it.
    let (a, b) = memory::pair();
    let mut fake = RawPeer::new(b, "2025-11-25");
    let task = tokio::spawn(async move {
        Client::builder(Implementation::new("c", "1"))
            .era(switchboard::client::EraMode::Legacy)
            .capabilities(ClientCapabilities::default())
            .build()
            .connect(a)
            .await
    });
    let init = fake.recv().await;
    fake.send(json!({"jsonrpc":"2.0","id":init["id"],"result":{"protocolVersion":"2025-11-25","capabilities":{},
        "serverInfo":{"name":"fake","version":"1"}}}))
        .await;
    fake.recv().await; // initialized
    let _session = task.await.unwrap().unwrap();
    let r = fake
        .request(
            json!("s1"),
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 10}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32601);
    let r = fake.request(json!("r1"), "roots/list", Value::Null).await;
    assert_eq!(r["error"]["code"], -32601);
    let r = fake.request(json!("p1"), "ping", Value::Null).await;
    assert_eq!(r["result"], json!({}));
}

#[tokio::test]
async fn server_never_sends_list_changed_it_did_not_declare() {
    let caps = ServerCapabilities {
        tools: Some(ToolsCapability::default()),
        ..Default::default()
    };
    let s = Server::builder(Implementation::new("s", "1"))
        .capabilities(caps)
        .tool(Tool::new("a", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("a"))
        })
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    s.add_tool(Tool::new("b", json!({"type": "object"})), |_| async {
        Ok(CallToolResult::text("b"))
    })
    .unwrap();
    c.expect_silence(100).await;
    let e = session
        .peer()
        .notify::<()>("notifications/tools/list_changed", None)
        .await
        .unwrap_err();
    assert!(matches!(e, RequestError::NotAllowed(_)));
}

#[tokio::test]
async fn server_sends_nothing_but_ping_and_logs_before_initialized() {
    let s = Server::builder(Implementation::new("s", "1"))
        .enable_tools()
        .build()
        .unwrap();
    let (a, b) = memory::pair();
    let session = s.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.request(
        json!(1),
        "initialize",
        json!({"protocolVersion":"2025-11-25","capabilities":{"roots":{}},
        "clientInfo":{"name":"t","version":"1"}}),
    )
    .await;
    let e = session
        .peer()
        .request("roots/list", None, RequestOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(e, RequestError::NotAllowed(_)),
        "no server request before initialized: {e:?}"
    );
    c.expect_silence(50).await;
}
