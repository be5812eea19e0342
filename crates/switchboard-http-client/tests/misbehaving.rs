//! Servers that drop a POST stream before its response and cannot resume it: the request gets a
//! local -32603 error (never a hang), after the messages that did arrive.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_jsonrpc::{FrameSink, FrameSource, OutboundFrame, Transport};
use switchboard_types::{MessageKind, RequestId};
use tokio::net::TcpListener;

const NOTE: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;

/// Serves one endpoint whose POST answers `sse` and ends; GET answers `get_status`.
async fn server(sse: String, get_status: StatusCode) -> String {
    let app = axum::Router::new().route(
        "/mcp",
        post(move || {
            let sse = sse.clone();
            async move {
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(axum::body::Body::from(sse))
                    .unwrap()
            }
        })
        .get(move || async move { get_status }),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

async fn call(url: &str) -> Vec<Value> {
    let config = HttpClientConfig::default().with_max_reconnect_attempts(2);
    let (mut sink, mut source) = HttpClientTransport::connect(url, config).unwrap().split();
    let frame = OutboundFrame {
        text: json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "x"}})
        .to_string(),
        kind: MessageKind::Request,
        id: Some(RequestId::int(7)),
        related: None,
        headers: Vec::new(),
        cancels: None,
    };
    sink.send(frame).await.unwrap();
    let mut got = Vec::new();
    for _ in 0..2 {
        let text = tokio::time::timeout(Duration::from_secs(10), source.recv())
            .await
            .expect("in time")
            .unwrap()
            .unwrap();
        got.push(serde_json::from_str(&text).unwrap());
    }
    got
}

#[tokio::test]
async fn a_stream_ending_without_an_event_id_answers_its_request_locally() {
    let url = server(format!("data: {NOTE}\n\n"), StatusCode::METHOD_NOT_ALLOWED).await;
    let got = call(&url).await;
    assert_eq!(
        got[0]["method"], "notifications/message",
        "what arrived is delivered"
    );
    assert_eq!(got[1]["id"], 7);
    assert_eq!(got[1]["error"]["code"], -32603);
    assert_eq!(got[1]["error"]["data"]["reason"], "stream_ended");
}

#[tokio::test]
async fn a_stream_that_cannot_be_resumed_answers_with_the_status() {
    let sse = format!("id: 1-0\nretry: 10\ndata: \n\nid: 1-1\ndata: {NOTE}\n\n");
    let url = server(sse, StatusCode::BAD_REQUEST).await;
    let got = call(&url).await;
    assert_eq!(got[0]["method"], "notifications/message");
    assert_eq!(got[1]["id"], 7);
    assert_eq!(
        got[1]["error"]["data"],
        json!({"reason": "http_status", "status": 400})
    );
}

#[tokio::test]
async fn a_stream_resumed_without_the_response_gives_up_after_the_bound() {
    // Every resumption is answered by an empty stream: attempts run out.
    let sse = format!("id: 1-0\nretry: 10\ndata: \n\ndata: {NOTE}\n\n");
    let app_url = {
        let app = axum::Router::new().route(
            "/mcp",
            post(move || {
                let sse = sse.clone();
                async move {
                    Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(axum::body::Body::from(sse))
                        .unwrap()
                }
            })
            .get(|| async {
                Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(axum::body::Body::from("retry: 10\n\n"))
                    .unwrap()
            }),
        );
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        format!("http://{addr}/mcp")
    };
    let got = call(&app_url).await;
    assert_eq!(got[1]["id"], 7);
    assert_eq!(
        got[1]["error"]["data"],
        json!({"reason": "reconnect_attempts_exhausted", "attempts": 2})
    );
}
