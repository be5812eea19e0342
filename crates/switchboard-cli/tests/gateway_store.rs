//! `switchboard gateway --http --store redis://`: two gateway nodes with one configuration and
//! one Redis serve one session (a session opened on one node is used through the other).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use switchboard::types::methods;
use switchboard_test_support::issuer::bearer_post_headers;
use switchboard_test_support::redis_server::RedisServer;

/// POSTs `body` to `url` in session `session`; the JSON-RPC answer, if any (from a JSON body or
/// the SSE stream's first `data:` line), and the session id the response names.
async fn post(url: &str, session: Option<&str>, body: Value) -> (Option<Value>, Option<String>) {
    let mut req = reqwest::Client::new().post(url).body(body.to_string());
    for (name, value) in bearer_post_headers(None, session, "2025-11-25") {
        req = req.header(name, value);
    }
    let r = req.send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let sid = r
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = r.text().await.unwrap();
    let answer = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| !d.is_empty())
        .or_else(|| (!text.trim().is_empty()).then_some(text.trim()))
        .and_then(|t| serde_json::from_str(t).ok());
    (answer, sid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_gateway_nodes_on_one_redis_serve_one_session() {
    let redis = tokio::task::block_in_place(RedisServer::start);
    let dir =
        std::env::temp_dir().join(format!("switchboard-gateway-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let secret = dir.join("secret");
    std::fs::write(&secret, "a deployment secret of at least thirty-two bytes").unwrap();
    let config = dir.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[[upstream]]\nname = \"calc\"\nstdio = \"{} serve --example add\"\nera = \"legacy\"\n",
            env!("CARGO_BIN_EXE_switchboard")
        ),
    )
    .unwrap();
    let node = |id: &str| {
        let addr = format!("127.0.0.1:{}", common::free_port());
        let mut cmd = common::bin();
        cmd.args(["gateway", config.to_str().unwrap(), "--http", &addr])
            .args([
                "--store",
                &redis.url(),
                "--secret-file",
                secret.to_str().unwrap(),
            ])
            .args(["--node-id", id])
            .env_remove("SWITCHBOARD_SECRET")
            .env_remove("SWITCHBOARD_STORE");
        common::start(cmd, "listening on", format!("http://{addr}/mcp"))
    };
    let (a, b) = tokio::task::block_in_place(|| (node("a"), node("b")));

    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "store-test", "version": "1"}}});
    let (answer, sid) = post(&a.url, None, init).await;
    assert_eq!(
        answer.unwrap()["result"]["serverInfo"]["name"],
        "switchboard-gateway"
    );
    let sid = sid.expect("a session id");
    // Everything after initialize goes to the other node.
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(&b.url, Some(&sid), initialized).await;
    let (answer, _) = post(
        &b.url,
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_LIST}),
    )
    .await;
    let names: Vec<String> = answer.unwrap()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"calc_add".to_owned()), "{names:?}");
    let (answer, _) = post(
        &b.url,
        Some(&sid),
        json!({"jsonrpc": "2.0", "id": 2, "method": methods::TOOLS_CALL,
            "params": {"name": "calc_add", "arguments": {"a": 40, "b": 2}}}),
    )
    .await;
    assert_eq!(answer.unwrap()["result"]["content"][0]["text"], "42");
    let _ = std::fs::remove_dir_all(&dir);
}
