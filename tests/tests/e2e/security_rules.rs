//! SECURITY-NOTES rules (and the spec's `[EL-n]` / `[SF-n]` security rules) that no other test
//! names, each tested where it can be seen: on the wire of our HTTP server behind a real token
//! validator (the `auth` module's fixture), from our client against a hand-played server, and
//! from our client against the everything server. `scripts/security-rules.py` holds every MUST
//! rule to a test named after its tag or a row in docs/SECURITY.md.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::client::{Client, EraMode};
use switchboard::jsonrpc::{SessionConfig, memory};
use switchboard::types::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::roots::Root;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_example_servers::everything::everything_server;

use crate::auth::{Fixture, V2025, V2026, call, initialize, modern, text_of};
use crate::client_support::{builder, connect};

/// The everything server behind the validator, answering on SSE streams (so notifications and
/// event ids travel with the answers).
async fn sse_fixture() -> Fixture {
    let server = everything_server(SessionConfig::default()).unwrap();
    Fixture::start_server(server, false, |c| c).await
}

fn get(f: &Fixture, token: Option<&str>, session: &str) -> reqwest::RequestBuilder {
    let mut req = f
        .http
        .get(&f.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", V2025);
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    req
}

#[tokio::test]
async fn sec_sh_1_sec_sh_2_a_session_id_is_no_credential() {
    let f = Fixture::start().await;
    let alice = f.token("alice", "mcp:basic mcp:write");
    let sid = f.open(&alice).await;
    let expired = f.issuer.token(&{
        let mut c = f.claims("alice", "mcp:basic mcp:write");
        c["exp"] = json!(switchboard_test_support::issuer::now() - 60);
        c
    });
    // Every request on the session is checked, not only initialize: the session id alone,
    // or with a token that was good once, opens nothing.
    for token in [None, Some(expired.as_str()), Some("not-a-jwt")] {
        let r = f
            .post(&call(1, "test_scoped_write"), token, Some(&sid))
            .await;
        assert_eq!(r.status, 401, "{token:?}: {}", r.body);
        assert!(r.challenge.is_some());
        assert!(!r.body.contains("Scoped write done"), "the tool ran");
        for req in [
            get(&f, token, &sid),
            f.http
                .delete(&f.url)
                .header("mcp-session-id", &sid)
                .header("mcp-protocol-version", V2025),
        ] {
            let r = f.send(req).await;
            assert_eq!(r.status, 401, "{token:?}");
        }
    }
    // The session is untouched (the DELETE without a token did not end it).
    let r = f
        .post(&call(2, "test_scoped_write"), Some(&alice), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");
}

#[tokio::test]
async fn sec_sh_3_sec_sh_4_session_ids_are_random_visible_ascii() {
    let f = Fixture::start().await;
    let alice = f.token("alice", "mcp:basic");
    let mut ids = Vec::new();
    for _ in 0..40 {
        let r = f.post(&initialize(), Some(&alice), None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        ids.push(r.session.expect("a session id"));
    }
    for id in &ids {
        assert!(
            id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "visible ASCII only: {id:?}"
        );
        // 128 bits from the OS generator, as 32 hex digits.
        assert!(id.len() >= 32, "{id}");
        assert!(
            !id.contains("alice"),
            "nothing derived from the caller: {id}"
        );
    }
    let distinct: std::collections::HashSet<_> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "unique");
    // Not sequential, nor sharing a long prefix: consecutive ids differ early on.
    for pair in ids.windows(2) {
        let common = pair[0]
            .bytes()
            .zip(pair[1].bytes())
            .take_while(|(a, b)| a == b)
            .count();
        assert!(common < 8, "{} then {}", pair[0], pair[1]);
    }
}

/// The `id:` of the first SSE event in `body` that has one.
fn first_event_id(body: &str) -> Option<String> {
    body.lines()
        .find_map(|l| l.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
}

#[tokio::test]
async fn sec_sh_9_another_subject_cannot_resume_a_stream() {
    let f = sse_fixture().await;
    let alice = f.token("alice", "mcp:basic");
    let bob = f.token("bob", "mcp:basic");
    let sid = f.open(&alice).await;
    let r = f
        .post(&call(1, "test_tool_with_logging"), Some(&alice), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let event = first_event_id(&r.body).expect("an event id on the POST stream");
    // Bob, with a valid token of his own, asks to replay alice's stream: unknown session.
    let r = f
        .send(get(&f, Some(&bob), &sid).header("last-event-id", &event))
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    assert!(!r.body.contains("log message"), "{}", r.body);
    // Alice may (the check refuses the subject, not the replay): headers only, the stream
    // stays open.
    let resp = tokio::time::timeout(
        Duration::from_secs(5),
        get(&f, Some(&alice), &sid)
            .header("last-event-id", &event)
            .send(),
    )
    .await
    .expect("headers in time")
    .unwrap();
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn sec_log_1_log_lines_carry_no_token_or_subject() {
    let f = sse_fixture().await;
    let alice = f.token("alice-7f3a", "mcp:basic");
    let sid = f.open(&alice).await;
    let set = json!({"jsonrpc": "2.0", "id": 1, "method": "logging/setLevel",
        "params": {"level": "debug"}});
    assert_eq!(f.post(&set, Some(&alice), Some(&sid)).await.status, 200);
    // A refused attempt first: nothing about it reaches anyone's log stream.
    let forged = f
        .issuer
        .unsigned(&f.claims("alice-7f3a", "mcp:basic mcp:write"));
    assert_eq!(
        f.post(&call(2, "test_scoped_write"), Some(&forged), Some(&sid))
            .await
            .status,
        401
    );
    for (id, tool) in [(3, "test_tool_with_logging"), (4, "test_error_handling")] {
        let r = f.post(&call(id, tool), Some(&alice), Some(&sid)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        if tool == "test_tool_with_logging" {
            assert!(
                r.body.contains("notifications/message"),
                "log lines came: {}",
                r.body
            );
        }
        for secret in [alice.as_str(), forged.as_str(), "alice-7f3a", "Bearer"] {
            assert!(!r.body.contains(secret), "{tool}: {secret} in {}", r.body);
        }
    }
}

#[tokio::test]
async fn sec_tp_2_a_handler_never_sees_the_clients_token() {
    let server = everything_server(SessionConfig::default()).unwrap();
    server
        .add_tool(
            Tool::new("whoami", json!({"type": "object"})),
            |call| async move {
                Ok(CallToolResult::text(format!(
                    "{:?} {:?} {:?}",
                    call.cx.auth(),
                    call.cx,
                    call.arguments
                )))
            },
        )
        .unwrap();
    let f = Fixture::start_server(server, true, |c| c).await;
    let alice = f.token("alice", "mcp:basic");
    let sid = f.open(&alice).await;
    let r = f.post(&call(1, "whoami"), Some(&alice), Some(&sid)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let seen = text_of(&r.json()).to_owned();
    assert!(
        seen.contains("alice"),
        "the handler sees the claims: {seen}"
    );
    // Neither the whole token nor its signature: nothing a handler could forward upstream.
    let signature = alice.rsplit('.').next().unwrap();
    assert!(
        !seen.contains(&alice) && !seen.contains(signature),
        "{seen}"
    );
}

#[tokio::test]
async fn el_16_a_client_asserted_identity_is_never_the_subject() {
    let f = Fixture::start().await;
    let alice = f.token("alice", "mcp:basic mcp:write");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": V2025, "capabilities": {},
        "clientInfo": {"name": "bob", "version": "1"},
        "_meta": {"sub": "bob", "user": "bob"}}});
    let r = f.post(&init, Some(&alice), None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let sid = r.session.unwrap();
    let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(f.post(&n, Some(&alice), Some(&sid)).await.status, 202);
    let claim = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_scoped_write", "arguments": {"user": "bob", "sub": "bob"},
        "_meta": {"sub": "bob", "io.modelcontextprotocol/user": "bob", "user": "bob"}}});
    let r = f.post(&claim, Some(&alice), Some(&sid)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");
}

#[tokio::test]
async fn sec_sh_10_el_12_a_request_state_serves_only_the_subject_it_was_issued_to() {
    let f = Fixture::start().await;
    let alice = f.token("alice", "mcp:basic");
    let bob = f.token("bob", "mcp:basic");
    let meta = json!({"io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"}});
    let first = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}, "_meta": meta}});
    let r = f
        .send(modern(&f, &first, Some("test_elicitation"), Some(&alice)))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let result = &r.json()["result"];
    assert_eq!(result["resultType"], "input_required", "{result}");
    let key = result["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("an input request");
    let state = result["requestState"].as_str().expect("a state").to_owned();
    let answer = json!({"action": "accept",
        "content": {"username": "mallory", "email": "m@example.test"}});
    let retry = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "test_elicitation", "arguments": {"message": "Who?"}, "_meta": meta,
            "requestState": state, "inputResponses": {key.clone(): answer}}});
    let r = f
        .send(modern(&f, &retry, Some("test_elicitation"), Some(&bob)))
        .await;
    let v = r.json();
    assert_eq!(
        v["error"]["code"], -32602,
        "bob completes alice's request: {v}"
    );
    assert!(!r.body.contains("mallory"), "{}", r.body);
    // The same state completes alice's own request.
    let r = f
        .send(modern(&f, &retry, Some("test_elicitation"), Some(&alice)))
        .await;
    let v = r.json();
    assert_eq!(v["result"]["resultType"], "complete", "{v}");
}

/// What an elicitation handler was asked, every field of every form.
type Asked = Arc<Mutex<Vec<Value>>>;

/// Calls every tool of the everything server, in `era`, with arguments made up from its input
/// schema, and returns every elicitation the client was asked for.
async fn every_elicitation(era: EraMode) -> Vec<Value> {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let asked: Asked = Arc::default();
    let sink = asked.clone();
    let session = Client::builder(Implementation::new("secret-probe", "1"))
        .era(era)
        .elicitation_modes(true, true)
        .elicitation(move |params, _| {
            sink.lock()
                .unwrap()
                .push(serde_json::to_value(&params).unwrap());
            async { Ok(ElicitResult::new(ElicitAction::Decline)) }
        })
        .build()
        .connect(a)
        .await
        .unwrap();
    let tools = session.list_tools().await.unwrap();
    assert!(tools.len() > 10, "{}", tools.len());
    let mut calls = tokio::task::JoinSet::new();
    for t in tools {
        let mut args = serde_json::Map::new();
        let schema = serde_json::to_value(&t.input_schema).unwrap();
        if let Some(props) = schema["properties"].as_object() {
            for (name, p) in props {
                let v = match p["type"].as_str() {
                    Some("number" | "integer") => json!(0),
                    Some("boolean") => json!(false),
                    _ => json!("x"),
                };
                args.insert(name.clone(), v);
            }
        }
        let session = session.clone();
        calls.spawn(async move {
            let _ = tokio::time::timeout(
                Duration::from_secs(5),
                session.call_tool(&t.name, Value::Object(args)),
            )
            .await;
        });
    }
    calls.join_all().await;
    let out = asked.lock().unwrap().clone();
    session.close();
    out
}

#[tokio::test]
async fn sec_el_1_el_2_our_servers_ask_for_no_secret_in_form_mode() {
    let secret = |text: &str| {
        let t = text.to_ascii_lowercase();
        [
            "password",
            "passphrase",
            "secret",
            "token",
            "api key",
            "api_key",
            "apikey",
            "credential",
            "card number",
            "cvv",
            "iban",
        ]
        .iter()
        .any(|w| t.contains(w))
    };
    let mut forms = 0;
    for era in [EraMode::Legacy, EraMode::Auto] {
        for asked in every_elicitation(era).await {
            if asked.get("mode").and_then(Value::as_str) == Some("url") {
                continue;
            }
            forms += 1;
            let text = asked.to_string();
            assert!(!secret(&text), "a form asks for a secret: {text}");
            for p in asked["requestedSchema"]["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(_, p)| p)
            {
                assert_ne!(p["format"], "password", "{text}");
            }
        }
    }
    assert!(forms >= 4, "the forms were seen: {forms}");
    // The detector itself catches what it is for.
    assert!(secret(
        &json!({"requestedSchema": {"properties": {"key": {"title": "Your API key"}}}}).to_string()
    ));
}

/// A client declaring URL elicitation whose handler records what it got and declines.
fn url_client(got: &Arc<Mutex<Vec<String>>>) -> switchboard::client::ClientBuilder {
    let sink = got.clone();
    builder()
        .elicitation_modes(true, true)
        .elicitation(move |params, _| {
            if let ElicitRequestParams::Url(u) = &params {
                sink.lock().unwrap().push(u.url.clone());
            }
            async { Ok(ElicitResult::new(ElicitAction::Decline)) }
        })
}

fn url_request(url: &str) -> Value {
    json!({"mode": "url", "message": "Link your account", "elicitationId": "el-1", "url": url})
}

#[tokio::test]
async fn el_5_sec_url_4_an_elicitation_url_that_is_no_http_url_never_reaches_the_host() {
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let (_session, mut fake) = connect(url_client(&got), "2025-11-25", json!({})).await;
    for (i, bad) in [
        "javascript:alert(document.cookie)",
        "file:///etc/passwd",
        "data:text/html,<script>x</script>",
        "https://example.test/`touch /tmp/x`",
        "https://example.test/a b",
        "/relative",
        "",
    ]
    .into_iter()
    .enumerate()
    {
        let r = fake
            .request(json!(i), "elicitation/create", url_request(bad))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{bad:?}: {r}");
        assert_eq!(r["error"]["data"]["reason"], "elicitation_url_invalid");
    }
    assert!(got.lock().unwrap().is_empty(), "{:?}", got.lock().unwrap());
    let good = "https://mcp.acme.test/link?e=el-1&next=%2Fhome";
    let r = fake
        .request(json!(99), "elicitation/create", url_request(good))
        .await;
    assert_eq!(r["result"]["action"], "decline", "{r}");
    assert_eq!(*got.lock().unwrap(), [good]);
}

#[tokio::test]
async fn sec_el_2_el_14_the_client_never_fetches_an_elicitation_url() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counter = connections.clone();
    tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            counter.fetch_add(1, Ordering::SeqCst);
        }
    });
    let got: Arc<Mutex<Vec<String>>> = Arc::default();
    let (_session, mut fake) = connect(url_client(&got), "2025-11-25", json!({})).await;
    let url = format!("http://127.0.0.1:{port}/connect?e=el-1&state=xyz");
    let r = fake
        .request(json!(1), "elicitation/create", url_request(&url))
        .await;
    assert_eq!(r["result"]["action"], "decline", "{r}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The host got the whole URL, unchanged, to show before any consent; nobody fetched it.
    assert_eq!(*got.lock().unwrap(), [url]);
    assert_eq!(connections.load(Ordering::SeqCst), 0, "the URL was fetched");
}

#[tokio::test]
async fn sec_res_1_a_roots_provider_root_that_climbs_out_is_never_sent() {
    for bad in ["file:///home/u/../../etc", "https://example.test/repo"] {
        let client = builder().roots_provider(move |_| async move {
            Ok(vec![Root::new("file:///home/u/ok"), Root::new(bad)])
        });
        let (_session, mut fake) = connect(client, "2025-11-25", json!({})).await;
        let r = fake.request(json!(1), "roots/list", Value::Null).await;
        assert_eq!(r["error"]["code"], -32603, "{bad}: {r}");
        assert!(r.get("result").is_none(), "no root is sent: {r}");
    }
    let client = builder().roots_provider(|_| async { Ok(vec![Root::new("file:///home/u/ok")]) });
    let (_session, mut fake) = connect(client, "2025-11-25", json!({})).await;
    let r = fake.request(json!(1), "roots/list", Value::Null).await;
    assert_eq!(r["result"]["roots"][0]["uri"], "file:///home/u/ok", "{r}");
}
