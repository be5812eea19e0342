//! Golden frames: the exact bytes we emit for each message shape and each error code.
//! Each frame is also validated against the schema (2025-11-25 for frames without id).

use serde_json::json;
use switchboard::jsonrpc::{
    BoxFuture, HandlerResult, Peer, RequestContext, RequestOptions, Service, SessionConfig, memory,
    spawn,
};
use switchboard::types::{Notification, Request};
use switchboard_example_servers::demo::demo_server;
use switchboard_tests::RawPeer;

async fn demo_peer() -> RawPeer {
    let s = demo_server(SessionConfig::default(), &Default::default()).unwrap();
    let (a, b) = memory::pair();
    s.serve(b).unwrap();
    // Dropping the handle is fine: each session's service keeps the server alive.
    drop(s);
    RawPeer::new(a, "2025-11-25")
}

async fn exchange(p: &mut RawPeer, send: &str) -> String {
    p.send_text(send).await;
    p.recv_text().await
}

#[tokio::test]
async fn golden_parse_error_32700() {
    let mut p = demo_peer().await;
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":1,"#).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":"invalid_json","detail":"EOF while parsing an object at line 1 column 24"}}}"#
    );
}

#[tokio::test]
async fn golden_invalid_request_32600() {
    let mut p = demo_peer().await;
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"request id must not be null","data":{"reason":"null_id"}}}"#
    );
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.1","id":"x","method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32600,"message":"jsonrpc must be \"2.0\"","data":{"reason":"bad_jsonrpc_version"}}}"#
    );
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"server not initialized","data":{"reason":"not_initialized","method":"tools/list","state":"awaiting-initialize","spec":"LC-1"}}}"#
    );
    assert_eq!(
        exchange(&mut p, r#"[]"#).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"empty batch","data":{"reason":"empty_batch"}}}"#
    );
    assert_eq!(
        exchange(&mut p, r#"42"#).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"a JSON-RPC message must be a JSON object","data":{"reason":"not_an_object"}}}"#
    );
}

#[tokio::test]
async fn golden_method_not_found_32601_and_invalid_params_32602() {
    let mut p = demo_peer().await;
    p.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        exchange(
            &mut p,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/frobnicate"}"#
        )
        .await,
        r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"Method not found: tools/frobnicate","data":{"reason":"method_not_found","method":"tools/frobnicate"}}}"#
    );
    assert_eq!(
        exchange(
            &mut p,
            r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"}}"#
        )
        .await,
        r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"Unknown tool: nope","data":{"reason":"unknown_tool","tool":"nope"}}}"#
    );
}

#[tokio::test]
async fn golden_result_and_is_error_result() {
    let mut p = demo_peer().await;
    p.handshake("2025-11-25", json!({})).await;
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":"a","result":{}}"#
    );
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add","arguments":{"x":2}}}"#).await,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"Invalid arguments for tool add: \"y\" is a required property"}],"isError":true}}"#
    );
}

struct Panics;

impl Service for Panics {
    fn call(&self, _r: Request, _cx: RequestContext) -> BoxFuture<HandlerResult> {
        Box::pin(async { panic!("boom") })
    }
    fn notify(&self, _n: Notification, _p: &Peer) {}
}

#[tokio::test]
async fn golden_internal_error_32603_from_a_panicking_handler() {
    let (a, b) = memory::pair();
    let _peer = spawn(b, std::sync::Arc::new(Panics), SessionConfig::default());
    let mut p = RawPeer::new(a, "2025-11-25");
    assert_eq!(
        exchange(&mut p, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error: the handler failed","data":{"reason":"handler_panicked","method":"ping"}}}"#
    );
}

#[tokio::test]
async fn golden_outbound_request_notification_and_cancel() {
    let (a, b) = memory::pair();
    let peer = spawn(b, std::sync::Arc::new(Panics), SessionConfig::default());
    let mut p = RawPeer::new(a, "2025-11-25");
    let token = tokio_util::sync::CancellationToken::new();
    let t = token.clone();
    let pp = peer.clone();
    let call = tokio::spawn(async move {
        pp.request("ping", None, RequestOptions::default().with_cancel(t))
            .await
    });
    assert_eq!(
        p.recv_text().await,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
    );
    token.cancel();
    assert_eq!(
        p.recv_text().await,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"cancelled by the caller"}}"#
    );
    call.await.unwrap().unwrap_err();
    peer.notify(
        "notifications/message",
        Some(&json!({"level": "info", "data": "hi"})),
    )
    .await
    .unwrap();
    assert_eq!(
        p.recv_text().await,
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#
    );
}
