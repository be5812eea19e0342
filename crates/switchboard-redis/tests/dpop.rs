//! DPoP replay across nodes (feature `dpop`), against a real `redis-server` on 127.0.0.1: a
//! proof used on one node is refused on another sharing the Redis replay store, over HTTP; the
//! store is bounded, forgets proofs whose window closed, and refuses over-long keys; a request
//! one cluster node relays to the node serving its session is served there (its proof was
//! checked, and its `jti` recorded, once, by the node it reached).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::json;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_auth::ScopeSet;
use switchboard_auth::resource::dpop::{DpopConfig, ReplayStore};
use switchboard_auth::resource::{AuthInfo, TokenError, TokenValidator};
use switchboard_http::{Authorization, ClusterSecret, HttpConfig, StreamableHttpService};
use switchboard_redis::{RedisCluster, RedisConfig, RedisReplayStore, RedisStore};
use switchboard_test_support::dpop::DpopTestKey;
use switchboard_test_support::issuer::now;
use switchboard_test_support::redis_server::RedisServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest replay key the Redis store takes (`MAX_REPLAY_KEY_BYTES`).
const MAX_KEY: usize = 128;

/// The URL both nodes are reached at behind the load balancer (the proofs' `htu`).
const PUBLIC: &str = "https://mcp.example.com/mcp";

/// A proof for `POST PUBLIC` by a fresh key, and the token bound to that key.
fn proof_and_token() -> (String, String) {
    let key = DpopTestKey::new();
    (proof(&key, "the-one-jti"), key.bound_token())
}

/// A proof by `key` for `POST PUBLIC` with this `jti`.
fn proof(key: &DpopTestKey, jti: &str) -> String {
    let mut claims = key.claims("POST", PUBLIC, &key.bound_token());
    claims["jti"] = jti.into();
    key.sign(&key.header(), &claims)
}

fn validator() -> Arc<dyn TokenValidator> {
    Arc::new(|token: &str| -> Result<AuthInfo, TokenError> {
        let jkt = token
            .strip_prefix("bound.")
            .ok_or(TokenError::Invalid("unknown token"))?;
        let mut info = AuthInfo::new("alice", "http://127.0.0.1:1", ScopeSet::new());
        info.claims.insert("cnf".into(), json!({ "jkt": jkt }));
        Ok(info)
    })
}

/// One node: its own Redis connection, the shared replay store, DPoP on.
async fn node(redis: &RedisServer) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start(redis, None).await
}

/// One cluster node: sessions, events and nodes in Redis too, relays signed with the shared
/// secret; its server's `whoami` tool names it.
async fn cluster_node(
    redis: &RedisServer,
    name: &str,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start(redis, Some(name)).await
}

async fn start(
    redis: &RedisServer,
    cluster: Option<&str>,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let store = RedisStore::connect(&redis.url(), RedisConfig::default())
        .await
        .unwrap();
    let dpop = DpopConfig::new()
        .with_public_url(url::Url::parse(PUBLIC).unwrap())
        .with_replay_store(Arc::new(RedisReplayStore::new(store.clone())));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let auth = Authorization::new(PUBLIC, vec!["http://127.0.0.1:1".into()], validator())
        .unwrap()
        .with_dpop(dpop);
    let mut config = HttpConfig::default().with_authorization(auth);
    let name = cluster.unwrap_or("node").to_owned();
    if cluster.is_some() {
        let joined = RedisCluster::join(
            store.clone(),
            Some(name.clone()),
            &format!("http://{addr}/mcp"),
        )
        .await
        .unwrap();
        config = config
            .with_session_store(Arc::new(store.clone()))
            .with_event_store(Arc::new(store.clone()))
            .with_cluster(joined)
            .with_cluster_secret(ClusterSecret::new([7_u8; 32]).unwrap());
    }
    let me = name.clone();
    let server = switchboard_test_support::server::tool_server(&name)
        .tool(Tool::new("whoami", json!({"type": "object"})), move |_| {
            let me = me.clone();
            async move { Ok(CallToolResult::text(me)) }
        })
        .build()
        .unwrap();
    let service =
        StreamableHttpService::new(switchboard::server_http::session_factory(&server), config);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = switchboard_http::serve_with_shutdown(listener, service, async move {
            let _ = rx.await;
        })
        .await;
    });
    (addr, tx)
}

/// POSTs `body` to `addr` with the token, the proof and (after initialize) the session; the
/// status, the head and the whole answer (read to its end: `Connection: close`).
async fn post(
    addr: SocketAddr,
    key: &DpopTestKey,
    proof: &str,
    session: Option<&str>,
    body: &serde_json::Value,
) -> (u16, String) {
    let body = body.to_string();
    let session = session.map_or(String::new(), |s| {
        format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n")
    });
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nAuthorization: DPoP {}\r\nDPoP: {proof}\r\n{session}\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        key.bound_token(),
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(20), s.read_to_end(&mut all))
        .await
        .expect("the answer in time")
        .unwrap();
    let text = String::from_utf8_lossy(&all).into_owned();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    (status, text)
}

/// POSTs `initialize` to `addr` with the token and proof; the status and the whole answer.
async fn initialize(addr: SocketAddr, token: &str, proof: &str) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\n\
         Content-Type: application/json\r\nAuthorization: DPoP {token}\r\nDPoP: {proof}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(request.as_bytes()).await.unwrap();
    let mut head = vec![0_u8; 4096];
    let n = s.read(&mut head).await.unwrap();
    let text = String::from_utf8_lossy(&head[..n]).into_owned();
    let status = text.split(' ').nth(1).unwrap().parse().unwrap();
    (status, text)
}

#[tokio::test]
async fn dpop_a_proof_replayed_to_another_node_sharing_redis_is_refused() {
    let redis = RedisServer::start();
    let (a, _stop_a) = node(&redis).await;
    let (b, _stop_b) = node(&redis).await;
    let (proof, token) = proof_and_token();
    let (status, answer) = initialize(a, &token, &proof).await;
    assert_eq!(status, 200, "{answer}");
    let (status, answer) = initialize(b, &token, &proof).await;
    assert_eq!(status, 401, "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(
        lower.contains("www-authenticate: dpop") && answer.contains("replayed"),
        "{answer}"
    );
    // And on the first node again.
    let (status, _) = initialize(a, &token, &proof).await;
    assert_eq!(status, 401);
    // A fresh proof by another key is served on the second node.
    let (proof, token) = proof_and_token();
    let (status, answer) = initialize(b, &token, &proof).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn dpop_a_request_relayed_to_the_node_serving_its_session_is_served_once_and_its_proof_stays_spent()
 {
    let redis = RedisServer::start();
    let (a, _stop_a) = cluster_node(&redis, "node-a").await;
    let (b, _stop_b) = cluster_node(&redis, "node-b").await;
    let key = DpopTestKey::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, answer) = post(a, &key, &proof(&key, "jti-init"), None, &init).await;
    assert_eq!(status, 200, "{answer}");
    let sid = answer
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .expect("a session id");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, answer) = post(
        a,
        &key,
        &proof(&key, "jti-initialized"),
        Some(&sid),
        &initialized,
    )
    .await;
    assert_eq!(status, 202, "{answer}");

    // The session lives on node A; node B checks the proof, records its jti, and relays: the
    // call is answered by node A's server.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "whoami", "arguments": {}}});
    let relayed = proof(&key, "jti-relayed");
    let (status, answer) = post(b, &key, &relayed, Some(&sid), &list).await;
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer.contains(r#""id":2"#) && answer.contains(r#""text":"node-a""#),
        "{answer}"
    );
    // The same proof sent to either node afterwards is a replay.
    for node in [a, b] {
        let (status, answer) = post(node, &key, &relayed, Some(&sid), &list).await;
        assert_eq!(status, 401, "{answer}");
        assert!(answer.contains("replayed"), "{answer}");
    }
    // A fresh proof reaches the session through either node.
    let (status, answer) = post(a, &key, &proof(&key, "jti-direct"), Some(&sid), &list).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn dpop_the_redis_replay_store_is_bounded_and_forgets_closed_windows() {
    let redis = RedisServer::start();
    let connect = || async {
        RedisStore::connect(&redis.url(), RedisConfig::default())
            .await
            .unwrap()
    };
    let one = RedisReplayStore::new(connect().await).with_max_entries(2);
    let two = RedisReplayStore::new(connect().await).with_max_entries(2);
    let later = now() + 300;
    assert!(one.first_use("k1", later).await.unwrap());
    assert!(
        !two.first_use("k1", later).await.unwrap(),
        "seen by the other"
    );
    assert!(two.first_use("k2", later).await.unwrap());
    // Full of proofs in their window: refused, not let through.
    let e = one.first_use("k3", later).await.unwrap_err();
    assert!(e.to_string().contains("full"), "{e}");
    // A proof whose window has closed is forgotten, and makes room.
    let other_prefix = RedisStore::connect(
        &redis.url(),
        RedisConfig {
            prefix: "other".into(),
            ..RedisConfig::default()
        },
    )
    .await
    .unwrap();
    let small = RedisReplayStore::new(other_prefix).with_max_entries(1);
    assert!(small.first_use("old", now() - 1).await.unwrap());
    assert!(
        small.first_use("new", later).await.unwrap(),
        "the closed window made room"
    );
    assert!(small.first_use("newer", later).await.is_err(), "full again");
    // Keys are bounded in length.
    let roomy = RedisReplayStore::new(connect().await).with_max_entries(10);
    let at = "k".repeat(MAX_KEY);
    assert!(roomy.first_use(&at, later).await.unwrap());
    let over = "k".repeat(MAX_KEY + 1);
    let e = roomy.first_use(&over, later).await.unwrap_err();
    assert!(e.to_string().contains("bytes"), "{e}");
}
