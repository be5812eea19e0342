//! What the server asks of the client, in both eras, against a scripted server over the
//! in-memory transport: a request the client does not serve is -32601 (a 2025 server's request)
//! or abandons the call with -32601 (a 2026-07-28 input request), is never answered as another
//! method, and the session lives on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use serde_json::{Value, json};
use support::{initialize_result, legacy_session, modern_session, requests, result, server};
use switchboard_client::ClientError;
use switchboard_jsonrpc::memory::pair;
use switchboard_types::ErrorCode;

/// A request from the server.
fn request(id: &str, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {}})
}

/// The client's answer to the server's request `id`.
fn answer<'a>(seen: &'a [Value], id: &str) -> &'a Value {
    seen.iter()
        .find(|f| f["id"] == id && f.get("method").is_none())
        .unwrap_or_else(|| panic!("no answer to {id}"))
}

#[tokio::test]
async fn a_2025_server_request_the_client_does_not_serve_is_32601_and_the_session_lives_on() {
    // Asked in the middle of a call; the call is answered once all four are.
    let asked = [
        ("s1", "x/unknown"),
        ("s2", "completion/complete"),
        ("s3", "roots/list"),
        ("s4", "ping"),
    ];
    let (a, b) = pair();
    let mut pending: Option<Value> = None;
    let mut answered = 0;
    let seen = server(b, move |f| match f["method"].as_str() {
        Some("initialize") => result(f, initialize_result()),
        Some("tools/call") if f["params"]["name"] == "first" => {
            pending = Some(f["id"].clone());
            asked.iter().map(|(id, m)| request(id, m)).collect()
        }
        Some("tools/call") => result(f, json!({"content": []})),
        None if f.get("id").is_some() => {
            answered += 1;
            match pending.take() {
                Some(id) if answered == asked.len() => {
                    vec![json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})]
                }
                other => {
                    pending = other;
                    vec![]
                }
            }
        }
        _ => vec![],
    });
    let session = legacy_session(a).await;
    session.call_tool("first", json!({})).await.unwrap();
    let frames = seen.lock().unwrap().clone();
    // An unknown method, and a catalogue method a server never sends.
    for id in ["s1", "s2"] {
        let r = answer(&frames, id);
        assert_eq!(r["error"]["code"], -32601, "{r}");
        assert!(r.get("result").is_none(), "{r}");
    }
    // The methods the client serves are answered as themselves.
    assert_eq!(
        answer(&frames, "s3")["result"],
        json!({"roots": [{"uri": "file:///work"}]})
    );
    assert_eq!(answer(&frames, "s4")["result"], json!({}));
    // The session lives on.
    session.call_tool("second", json!({})).await.unwrap();
}

#[tokio::test]
async fn d26_36_an_input_request_the_client_does_not_serve_abandons_the_call_with_32601() {
    let (session, seen) = modern_session(|f| match f["params"]["name"].as_str() {
        Some("odd") => result(
            f,
            json!({"resultType": "input_required", "requestState": "s", "inputRequests": {
                "where": {"method": "roots/list"},
                "what": {"method": "x/unknown", "params": {"q": 1}}}}),
        ),
        _ => result(f, json!({"resultType": "complete", "content": []})),
    })
    .await;
    let e = session.call_tool("odd", json!({})).await.unwrap_err();
    match e {
        ClientError::InputRequest { key, method, error } => {
            assert_eq!(key, "what");
            assert_eq!(method, "x/unknown");
            assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);
        }
        other => panic!("{other}"),
    }
    // Nothing was answered: no retry carried the roots, nor anything for the unknown key.
    let frames = seen.lock().unwrap().clone();
    let odd: Vec<_> = requests(&frames, "tools/call")
        .into_iter()
        .filter(|f| f["params"]["name"] == "odd")
        .collect();
    assert_eq!(odd.len(), 1, "{odd:?}");
    // The session lives on.
    session.call_tool("fine", json!({})).await.unwrap();
}
