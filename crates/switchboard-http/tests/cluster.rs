//! Several nodes sharing one session store and one event store ([`switchboard_http::cluster`]),
//! in memory: a session is served by one node and relayed to from the others; a node that
//! stops answering has its sessions taken over; a relayed request is never relayed again;
//! DELETE and the idle timeout see every node's traffic. (The same with Redis and real
//! processes behind nginx: `interop/cluster.sh`.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::json;
use support::*;
use switchboard_auth::ScopeSet;
use switchboard_auth::resource::{AuthInfo, TokenError, TokenValidator};
use switchboard_http::Authorization;
use switchboard_http::{
    Cluster, HttpConfig, InMemoryEventStore, InMemorySessionStore, Location, SessionStore,
    SessionStoreError,
};
use switchboard_http::{ClusterSecret, StoreFuture};
use switchboard_test_support::wait;

/// The cluster's header names, as they go on the wire.
const FORWARDED_BY: &str = "x-switchboard-forwarded-by";
const LEAVING: &str = "x-switchboard-node-leaving";

/// The nodes as every node sees them: who announces itself, at which URL.
#[derive(Default)]
struct Directory {
    urls: Mutex<HashMap<String, String>>,
}

/// One node's view of the cluster, over the shared store and directory.
struct TestCluster {
    node: String,
    store: Arc<InMemorySessionStore>,
    directory: Arc<Directory>,
    /// A stale view: every known session is served by this node.
    stale: Option<String>,
}

impl Cluster for TestCluster {
    fn node_id(&self) -> &str {
        &self.node
    }

    fn locate<'a>(
        &'a self,
        session: &'a str,
    ) -> StoreFuture<'a, Result<Location, SessionStoreError>> {
        Box::pin(async move {
            let Some(record) = self.store.load(session).await? else {
                return Ok(Location::Unknown);
            };
            let Some(node) = self.stale.as_deref().map(Arc::from).or(record.node) else {
                return Ok(Location::Orphan { node: None });
            };
            if *node == *self.node {
                return Ok(Location::Here);
            }
            let url = self.directory.urls.lock().unwrap().get(&*node).cloned();
            Ok(match url {
                Some(url) => Location::Remote {
                    node,
                    url: Arc::from(url.as_str()),
                },
                None => Location::Orphan { node: Some(node) },
            })
        })
    }
}

/// The secret the test cluster's nodes share.
fn secret() -> ClusterSecret {
    ClusterSecret::new(b"the test cluster's secret, 32+ bytes").unwrap()
}

/// Shared stores and a directory; nodes join with [`Shared::node`].
#[derive(Clone)]
struct Shared {
    sessions: Arc<InMemorySessionStore>,
    events: Arc<InMemoryEventStore>,
    directory: Arc<Directory>,
}

impl Shared {
    fn new() -> Self {
        Shared {
            sessions: Arc::new(InMemorySessionStore::default()),
            events: Arc::new(InMemoryEventStore::default()),
            directory: Arc::default(),
        }
    }

    async fn node(&self, name: &str, idle: Option<Duration>) -> Live {
        self.node_with(name, idle, false).await
    }

    /// A node; with `auth`, bearer tokens `alice` and `bob` are two subjects of one issuer.
    async fn node_with(&self, name: &str, idle: Option<Duration>, auth: bool) -> Live {
        self.node_seeing(name, idle, auth, None).await
    }

    /// A node whose view of the cluster is `stale` when given (see [`TestCluster::stale`]).
    async fn node_seeing(
        &self,
        name: &str,
        idle: Option<Duration>,
        auth: bool,
        stale: Option<&str>,
    ) -> Live {
        let cluster = Arc::new(TestCluster {
            node: name.to_owned(),
            store: self.sessions.clone(),
            directory: self.directory.clone(),
            stale: stale.map(str::to_owned),
        });
        let config = HttpConfig::default()
            .with_session_store(self.sessions.clone())
            .with_event_store(self.events.clone())
            .with_cluster(cluster)
            .with_cluster_secret(secret())
            .with_idle_timeout(idle);
        let config = if auth {
            let validator: Arc<dyn TokenValidator> = Arc::new(|token: &str| match token {
                "alice" | "bob" => Ok(AuthInfo::new(token, "http://issuer", ScopeSet::new())),
                _ => Err(TokenError::Invalid("unknown token")),
            });
            let authorization = Authorization::new(
                "http://127.0.0.1/mcp",
                vec!["http://issuer".into()],
                validator,
            )
            .unwrap();
            config.with_authorization(authorization)
        } else {
            config
        };
        let node = live(&test_server(), config).await;
        self.directory
            .urls
            .lock()
            .unwrap()
            .insert(name.to_owned(), format!("http://{}/mcp", node.addr));
        node
    }
}

async fn text_of(resp: http::Response<hyper::body::Incoming>) -> String {
    String::from_utf8(
        resp.into_body()
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec(),
    )
    .unwrap()
}

/// The `text` of the first content block of the tools/call answer in `body` (JSON or SSE).
fn tool_text(body: &str) -> String {
    let json = if body.trim_start().starts_with('{') {
        serde_json::from_str::<serde_json::Value>(body).unwrap()
    } else {
        parse_sse(body)
            .into_iter()
            .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
            .map(|e| e.json())
            .find(|v| v.get("id").is_some())
            .unwrap()
    };
    json["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_session_opened_on_one_node_is_served_through_the_other() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    let sid = wire_session(a.addr).await;
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(
        record.node.as_deref(),
        Some("a"),
        "the record names its node"
    );
    // A call posted to b runs on a, its progress and log included, streamed back through b.
    let resp = send(
        b.addr,
        wire_post(b.addr, Some(&sid), call_body(2, "chatty", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let body = text_of(resp).await;
    let kinds: Vec<String> = parse_sse(&body)
        .into_iter()
        .filter(|e| e.data.as_deref().is_some_and(|d| !d.is_empty()))
        .map(|e| e.json()["method"].as_str().unwrap_or("response").to_owned())
        .collect();
    assert_eq!(
        kinds,
        [
            "notifications/progress",
            "notifications/message",
            "response"
        ]
    );
    assert_eq!(tool_text(&body), "done");
    assert_eq!(b.service.session_count(), 0, "b holds no copy");
    assert_eq!(a.service.session_count(), 1);
    // The standalone stream opened through b is a's.
    let resp = send(b.addr, wire_get(b.addr, &sid, None)).await;
    assert_eq!(resp.status(), 200);
    let mut events = SseReader::new(resp.into_body());
    let priming = events.next(WAIT).await.unwrap();
    assert_eq!(priming.stream_seq().0, 0);
    // A second GET, through a, meets the one b relays: one standalone stream per session.
    let resp = send(a.addr, wire_get(a.addr, &sid, None)).await;
    assert_eq!(resp.status(), 409);
}

#[tokio::test]
async fn delete_through_another_node_ends_the_session_everywhere() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    let sid = wire_session(a.addr).await;
    let del = http::Request::delete("/mcp")
        .header("host", b.addr.to_string())
        .header("mcp-session-id", &sid)
        .header("mcp-protocol-version", "2025-11-25")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    assert_eq!(send(b.addr, del).await.status(), 200);
    assert_eq!(a.service.session_count(), 0);
    assert!(shared.sessions.load(&sid).await.unwrap().is_none());
    for node in [&a, &b] {
        let resp = send(
            node.addr,
            wire_post(node.addr, Some(&sid), call_body(3, "echo", json!({}))),
        )
        .await;
        assert_eq!(resp.status(), 404);
    }
}

#[tokio::test]
async fn a_node_that_stops_answering_has_its_sessions_taken_over() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    let sid = wire_session(a.addr).await;
    // a stops accepting connections but is still announced (as after a crash, before its
    // announcement expires): b's relay fails to connect and b claims the session.
    a.stop().await;
    let resp = send(
        b.addr,
        wire_post(b.addr, Some(&sid), call_body(2, "echo", json!({"x": 1}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&text_of(resp).await), r#"{"x":1}"#);
    assert_eq!(b.service.session_count(), 1);
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(record.node.as_deref(), Some("b"), "b now serves it");
    // The client's capabilities came along with the snapshot: a sampling request reaches it.
    assert!(record.snapshot.is_some());
}

/// A node shutting down ends its sessions for the cluster, then stops accepting connections.
/// In between, a request reaching it (relayed, or sent by a load balancer) is not told the
/// session is gone (404 would make the client start over): it is answered 503 `node_leaving`,
/// and a node relaying to it takes the session over at once. (Before, a request relayed in
/// that window was answered 404: seen in CI, where the shutdown had not finished in 100 ms.)
#[tokio::test]
async fn a_node_leaving_answers_503_and_the_relaying_node_takes_its_sessions_over() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    let sid = wire_session(a.addr).await;
    // a leaves (what its shutdown does first) but still accepts connections.
    a.service.close_all().await;
    assert_eq!(a.service.session_count(), 0);
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(
        record.node.as_deref(),
        Some("a"),
        "left to the cluster, not forgotten"
    );

    // Straight to a: 503 with Retry-After, never 404; the session stays where it is.
    let resp = send(
        a.addr,
        wire_post(a.addr, Some(&sid), call_body(2, "echo", json!({"x": 1}))),
    )
    .await;
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert!(resp.headers().contains_key(LEAVING));
    let body = text_of(resp).await;
    assert!(body.contains("node_leaving"), "{body}");
    // A new session is not opened on a leaving node either.
    let resp = send(a.addr, wire_post(a.addr, None, init_body(0, "2025-11-25"))).await;
    assert_eq!(resp.status(), 503);
    assert_eq!(a.service.session_count(), 0);

    // Through b: b relays, a answers that it is leaving, b takes the session over and serves
    // the call; the client sees only the answer.
    let resp = send(
        b.addr,
        wire_post(b.addr, Some(&sid), call_body(3, "echo", json!({"x": 2}))),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert!(!resp.headers().contains_key(LEAVING));
    assert_eq!(tool_text(&text_of(resp).await), r#"{"x":2}"#);
    assert_eq!(b.service.session_count(), 1);
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(record.node.as_deref(), Some("b"), "b now serves it");
}

#[tokio::test]
async fn a_relayed_request_is_never_relayed_again() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    // c's view is stale: it takes every session for b's, and relays to b.
    let c = shared.node_seeing("c", None, false, Some("b")).await;
    let sid = wire_session(a.addr).await;
    let req = wire_post(c.addr, Some(&sid), call_body(2, "echo", json!({})));
    let resp = send(c.addr, req).await;
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "1");
    assert!(text_of(resp).await.contains("session_moving"));
    assert_eq!(b.service.session_count(), 0, "b took nothing over");
    assert_eq!(c.service.session_count(), 0, "nor did c");
    assert_eq!(a.service.session_count(), 1);
}

#[tokio::test]
async fn an_unknown_session_is_404_on_every_node() {
    let shared = Shared::new();
    let _a = shared.node("a", None).await;
    let b = shared.node("b", None).await;
    let resp = send(
        b.addr,
        wire_post(
            b.addr,
            Some("no-such-session"),
            call_body(2, "echo", json!({})),
        ),
    )
    .await;
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn requests_relayed_by_another_node_keep_a_session_from_idling_out() {
    let shared = Shared::new();
    let idle = Some(Duration::from_millis(800));
    let a = shared.node("a", idle).await;
    let b = shared.node("b", idle).await;
    let sid = wire_session(a.addr).await;
    // Every request goes through b, for twice the idle timeout: a sees them all.
    for i in 0..8 {
        // Not a wait: the requests are spread over twice the idle timeout (time passing is the scenario).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let resp = send(
            b.addr,
            wire_post(b.addr, Some(&sid), call_body(10 + i, "echo", json!({}))),
        )
        .await;
        assert_eq!(resp.status(), 200, "request {i}");
        let _ = text_of(resp).await;
    }
    // Then silence: a ends it, and the store forgets it.
    let forgotten = wait::Deadline::new("the idle session ended and forgotten");
    while a.service.session_count() != 0 || shared.sessions.load(&sid).await.unwrap().is_some() {
        forgotten.tick().await;
    }
    let resp = send(
        b.addr,
        wire_post(b.addr, Some(&sid), call_body(30, "echo", json!({}))),
    )
    .await;
    assert_eq!(resp.status(), 404);
}

/// `req` with `Authorization: Bearer <token>`.
fn bearer(
    mut req: http::Request<http_body_util::Full<bytes::Bytes>>,
    token: &str,
) -> http::Request<http_body_util::Full<bytes::Bytes>> {
    req.headers_mut().insert(
        "authorization",
        http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    req
}

#[tokio::test]
async fn sec_sh_5_a_session_stays_bound_to_its_subject_on_every_node() {
    let shared = Shared::new();
    let a = shared.node_with("a", None, true).await;
    let b = shared.node_with("b", None, true).await;
    let sid = alices_session(&a).await;
    let call = |node: &Live, token: &str, id: i64| {
        bearer(
            wire_post(node.addr, Some(&sid), call_body(id, "echo", json!({}))),
            token,
        )
    };
    // Through the other node: bob gets 404 (as for an unknown session), alice is served.
    assert_eq!(send(b.addr, call(&b, "bob", 2)).await.status(), 404);
    assert_eq!(send(b.addr, call(&b, "alice", 3)).await.status(), 200);
    // a stops; the session is taken over by b with its binding.
    a.stop().await;
    assert_eq!(send(b.addr, call(&b, "bob", 4)).await.status(), 404);
    let resp = send(b.addr, call(&b, "alice", 5)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(tool_text(&text_of(resp).await), "{}");
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(record.node.as_deref(), Some("b"));
    assert!(record.owner.as_deref().is_some_and(|o| o.contains("alice")));
}

/// Alice's session, opened on `a` (both nodes with authorization on); returns its id.
async fn alices_session(a: &Live) -> String {
    let init = bearer(wire_post(a.addr, None, init_body(0, "2025-11-25")), "alice");
    let resp = send(a.addr, init).await;
    assert_eq!(resp.status(), 200);
    let sid = resp.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = text_of(resp).await;
    let ready = bearer(wire_post(a.addr, Some(&sid), initialized_body()), "alice");
    assert_eq!(send(a.addr, ready).await.status(), 202);
    sid
}

/// Finding 5 of issue 25: an outside client adding `x-switchboard-forwarded-by` learned
/// whether a session id lived on another node (503 `session_moving`) or not at all (404). The
/// header is honoured only from a node of the cluster (with a valid, fresh MAC); from anyone
/// else it is ignored, so both answers are what they are without it.
#[tokio::test]
async fn finding_5_an_outside_forwarded_by_header_is_no_session_oracle() {
    let shared = Shared::new();
    let a = shared.node_with("a", None, true).await;
    let b = shared.node_with("b", None, true).await;
    let sid = alices_session(&a).await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    // The header alone, and with a MAC of the right shape that no node made.
    for mac in [None, Some(format!("{now}.{}", "0".repeat(64)))] {
        let forged = |session: &str, token: &str, id: i64| {
            let mut req = bearer(
                wire_post(b.addr, Some(session), call_body(id, "echo", json!({}))),
                token,
            );
            req.headers_mut()
                .insert(FORWARDED_BY, http::HeaderValue::from_static("a"));
            if let Some(mac) = &mac {
                req.headers_mut().insert(
                    "x-switchboard-relay-mac",
                    http::HeaderValue::from_str(mac).unwrap(),
                );
            }
            req
        };
        let elsewhere = send(b.addr, forged(&sid, "bob", 2)).await.status();
        let unknown = send(b.addr, forged("no-such-session", "bob", 3))
            .await
            .status();
        assert_eq!(unknown, 404);
        assert_eq!(
            elsewhere, unknown,
            "a session living on another node looks unknown to a stranger ({mac:?})"
        );
        // Alice's own request with the forged header is relayed and served, as without it.
        let resp = send(b.addr, forged(&sid, "alice", 4)).await;
        assert_eq!(resp.status(), 200);
        assert_eq!(tool_text(&text_of(resp).await), "{}");
        assert_eq!(b.service.session_count(), 0, "b took nothing over");
    }
}

/// Issue 25, "PUT/PATCH/OPTIONS naming a session reach cluster routing before
/// authentication": a request of a method the endpoint does not serve, with no token, is
/// refused where it arrives; it never locates, relays or claims the session it names.
#[tokio::test]
async fn an_unserved_method_naming_a_session_is_refused_before_cluster_routing() {
    let shared = Shared::new();
    let a = shared.node_with("a", None, true).await;
    let b = shared.node_with("b", None, true).await;
    let sid = alices_session(&a).await;
    // a stops but is still announced: routing would find it unreachable and claim the session.
    a.stop().await;
    for method in ["PUT", "PATCH", "OPTIONS"] {
        let req = http::Request::builder()
            .method(method)
            .uri("/mcp")
            .header("host", b.addr.to_string())
            .header("mcp-session-id", &sid)
            .body(http_body_util::Full::new(bytes::Bytes::new()))
            .unwrap();
        let status = send(b.addr, req).await.status();
        assert!(
            status == 401 || status == 405,
            "{method}: refused, not routed ({status})"
        );
        let record = shared.sessions.load(&sid).await.unwrap().unwrap();
        assert_eq!(record.node.as_deref(), Some("a"), "{method} moved nothing");
    }
    assert_eq!(b.service.session_count(), 0);
}

/// Issue 25, "a refused request can move another subject's orphaned session": bob naming
/// alice's session, whose node is gone, gets 404 and neither claims it nor takes it over;
/// alice then takes it over as before.
#[tokio::test]
async fn a_refused_request_never_moves_another_subjects_orphaned_session() {
    let shared = Shared::new();
    let a = shared.node_with("a", None, true).await;
    let b = shared.node_with("b", None, true).await;
    let sid = alices_session(&a).await;
    a.stop().await;
    let call = |token: &str, id: i64| {
        bearer(
            wire_post(b.addr, Some(&sid), call_body(id, "echo", json!({}))),
            token,
        )
    };
    assert_eq!(send(b.addr, call("bob", 2)).await.status(), 404);
    let record = shared.sessions.load(&sid).await.unwrap().unwrap();
    assert_eq!(record.node.as_deref(), Some("a"), "bob moved nothing");
    assert_eq!(b.service.session_count(), 0, "nor started an engine");
    // Alice, its owner, takes it over as before.
    let resp = send(b.addr, call("alice", 3)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        shared
            .sessions
            .load(&sid)
            .await
            .unwrap()
            .unwrap()
            .node
            .as_deref(),
        Some("b")
    );
}

/// A node of a cluster configured without a cluster secret could neither prove its relays
/// nor check the ones it receives: [`switchboard_http::serve`] refuses to start it, and a
/// service mounted elsewhere relays nothing, answering every session it does not hold 503
/// alike (held by another node or unknown: no oracle either).
#[tokio::test]
async fn a_cluster_node_without_a_secret_neither_starts_nor_relays() {
    let shared = Shared::new();
    let a = shared.node("a", None).await;
    let sid = wire_session(a.addr).await;
    let config = HttpConfig::default()
        .with_session_store(shared.sessions.clone())
        .with_event_store(shared.events.clone())
        .with_cluster(Arc::new(TestCluster {
            node: "b".to_owned(),
            store: shared.sessions.clone(),
            directory: shared.directory.clone(),
            stale: None,
        }));
    let service = service_for(&test_server(), config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused = tokio::time::timeout(WAIT, switchboard_http::serve(listener, service.clone()))
        .await
        .expect("serve returns at once");
    assert_eq!(
        refused.unwrap_err().kind(),
        std::io::ErrorKind::InvalidInput
    );
    let held_elsewhere = oneshot(&service, post(Some(&sid), call_body(2, "echo", json!({})))).await;
    let unknown = oneshot(
        &service,
        post(Some("no-such"), call_body(3, "echo", json!({}))),
    )
    .await;
    assert_eq!(held_elsewhere.status(), 503);
    assert_eq!(unknown.status(), 503);
    assert!(
        body_text(held_elsewhere)
            .await
            .contains("cluster_secret_missing")
    );
    assert_eq!(service.session_count(), 0);
    assert_eq!(a.service.session_count(), 1);
}
