//! The stdio bridge beside this transport: a remote Streamable HTTP server exposed to a stdio
//! host. Every frame is passed on and tapped with its direction and the HTTP session id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use support::*;
use switchboard_http::HttpConfig;
use switchboard_http_client::{HttpClientConfig, HttpClientTransport, stdio_bridge};
use switchboard_transport::TappedFrame;
use switchboard_types::{Direction, methods};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

type Seen = Arc<Mutex<Vec<(Direction, Option<String>, String)>>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_relays_a_stdio_host_to_the_server_and_taps_every_frame() {
    let served = live(&test_server(), HttpConfig::default()).await;
    let transport = HttpClientTransport::connect(&served.url, HttpClientConfig::default()).unwrap();
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let tap = move |f: TappedFrame<'_>| {
        s.lock()
            .unwrap()
            .push((f.direction, f.session.map(str::to_owned), f.text.to_owned()));
    };
    let (mut host_in, bridge_in) = tokio::io::duplex(64 * 1024);
    let (bridge_out, host_out) = tokio::io::duplex(64 * 1024);
    let bridge =
        tokio::spawn(async move { stdio_bridge(transport, bridge_in, bridge_out, &tap).await });
    let mut answers = BufReader::new(host_out).lines();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": methods::INITIALIZE, "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "host", "version": "1"}}});
    let initialized = json!({"jsonrpc": "2.0", "method": methods::NOTIFICATIONS_INITIALIZED});
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": methods::TOOLS_CALL,
        "params": {"name": "echo", "arguments": {"x": 1}}});
    host_in
        .write_all(format!("{init}\n\n{initialized}\r\n").as_bytes())
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["result"]["protocolVersion"], "2025-11-25");
    host_in
        .write_all(format!("{call}\n").as_bytes())
        .await
        .unwrap();
    let second: Value = serde_json::from_str(&answers.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 2);
    assert_eq!(second["result"]["content"][0]["text"], r#"{"x":1}"#);
    // The host's input ends: the session is closed and the bridge returns.
    drop(host_in);
    tokio::time::timeout(WAIT, bridge)
        .await
        .expect("the bridge ends")
        .unwrap()
        .expect("cleanly");
    let seen = seen.lock().unwrap().clone();
    let c2s: Vec<&str> = seen
        .iter()
        .filter(|f| f.0 == Direction::ClientToServer)
        .map(|f| f.2.as_str())
        .collect();
    assert_eq!(
        c2s,
        [init.to_string(), initialized.to_string(), call.to_string()]
    );
    assert_eq!(
        seen[0].1, None,
        "initialize travels before the session exists"
    );
    let session = seen[1].1.clone().expect("the answer carries the session");
    assert!(
        seen[1..]
            .iter()
            .all(|f| f.1.as_deref() == Some(session.as_str()))
    );
    assert_eq!(seen.len(), 5);
}
