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
use switchboard::server::Server;
use switchboard::types::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use switchboard::types::lifecycle::Implementation;
use switchboard::types::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
use switchboard::types::roots::Root;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_example_servers::everything::everything_server;
use switchboard_tests::RawPeer;

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

/// What a probe of the everything server saw: every elicitation the client was asked for, and
/// every result (tool calls, resource reads, prompts), as JSON.
#[derive(Default)]
struct Probed {
    asked: Vec<Value>,
    results: Vec<Value>,
    /// The URIs of the listed resources and the URI templates of the listed templates.
    uris: Vec<String>,
}

/// Arguments made up from an input schema: every property, of its type.
fn made_up_arguments(schema: &Value) -> serde_json::Map<String, Value> {
    let mut args = serde_json::Map::new();
    for (name, p) in schema["properties"].as_object().into_iter().flatten() {
        let v = match p["type"].as_str() {
            Some("number" | "integer") => json!(0),
            Some("boolean") => json!(false),
            _ => json!("x"),
        };
        args.insert(name.clone(), v);
    }
    args
}

/// Calls every tool of the everything server in `era` (arguments made up from its input
/// schema), reads every resource and gets every prompt; the client declines every elicitation.
async fn probe_everything(era: EraMode) -> Probed {
    let server = everything_server(SessionConfig::default()).unwrap();
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let asked: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = asked.clone();
    let session = Client::builder(Implementation::new("probe", "1"))
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
    let results: Arc<Mutex<Vec<Value>>> = Arc::default();
    let tools = session.list_tools().await.unwrap();
    assert!(tools.len() > 10, "{}", tools.len());
    let mut calls = tokio::task::JoinSet::new();
    for t in tools {
        let args = made_up_arguments(&serde_json::to_value(&t.input_schema).unwrap());
        let (session, results) = (session.clone(), results.clone());
        calls.spawn(async move {
            let call = session.call_tool(&t.name, Value::Object(args));
            if let Ok(Ok(r)) = tokio::time::timeout(Duration::from_secs(5), call).await {
                results
                    .lock()
                    .unwrap()
                    .push(serde_json::to_value(r).unwrap());
            }
        });
    }
    calls.join_all().await;
    let mut results = results.lock().unwrap().clone();
    let mut uris: Vec<String> = session
        .list_resource_templates()
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|t| t.uri_template)
        .collect();
    for r in session.list_resources().await.unwrap_or_default() {
        uris.push(r.uri.clone());
        if let Ok(read) = session.read_resource(&r.uri).await {
            results.push(serde_json::to_value(read).unwrap());
        }
    }
    for p in session.list_prompts().await.unwrap_or_default() {
        let args: Vec<(String, String)> = p
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.clone(), "test://x".to_owned()))
            .collect();
        if let Ok(got) = session.get_prompt(&p.name, args).await {
            results.push(serde_json::to_value(got).unwrap());
        }
    }
    session.close();
    let asked = asked.lock().unwrap().clone();
    Probed {
        asked,
        results,
        uris,
    }
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
        for asked in probe_everything(era).await.asked {
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
    // A silence check: nobody may fetch the URL in this time (there is no event to wait for).
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

/// Every JSON object in `v`, depth first.
fn objects(v: &Value, out: &mut Vec<serde_json::Map<String, Value>>) {
    match v {
        Value::Object(m) => {
            out.push(m.clone());
            m.values().for_each(|x| objects(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| objects(x, out)),
        _ => {}
    }
}

/// Whether `s` is canonical base64 (RFC 4648 §4: the standard alphabet, padded).
fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    s.len().is_multiple_of(4)
        && s.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// Whether `m` is a MIME type `type/subtype` of the RFC 6838 characters, with `top` as its type.
fn is_mime(m: Option<&Value>, top: Option<&str>) -> bool {
    let Some((t, sub)) = m.and_then(Value::as_str).and_then(|m| m.split_once('/')) else {
        return false;
    };
    let token = |x: &str| {
        !x.is_empty()
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    let sub = sub.split(';').next().unwrap_or_default().trim();
    token(t) && token(sub) && top.is_none_or(|top| t == top)
}

#[tokio::test]
async fn sf_1_sf_2_every_binary_block_our_servers_send_is_base64_with_a_mime_type() {
    assert!(is_base64("aGk=") && !is_base64("aGk") && !is_base64("a*k="));
    assert!(is_mime(Some(&json!("image/png")), Some("image")));
    assert!(!is_mime(Some(&json!("png")), None) && !is_mime(None, None));
    let (mut images, mut blobs, mut embedded) = (0, 0, 0);
    for era in [EraMode::Legacy, EraMode::Auto] {
        let mut all = Vec::new();
        for r in probe_everything(era).await.results {
            objects(&r, &mut all);
        }
        for o in &all {
            let shown = Value::Object(o.clone());
            match o.get("type").and_then(Value::as_str) {
                Some(kind @ ("image" | "audio")) => {
                    images += 1;
                    let data = o.get("data").and_then(Value::as_str).unwrap_or("");
                    assert!(is_base64(data), "{shown}");
                    assert!(is_mime(o.get("mimeType"), Some(kind)), "{shown}");
                }
                Some("resource") => {
                    embedded += 1;
                    let inner = &o["resource"];
                    assert!(
                        inner["uri"].as_str().is_some_and(|u| u.contains(':')),
                        "{shown}"
                    );
                    assert!(is_mime(inner.get("mimeType"), None), "{shown}");
                    assert!(
                        inner["text"].is_string() || inner["blob"].is_string(),
                        "{shown}"
                    );
                }
                _ => {}
            }
            if let Some(blob) = o.get("blob") {
                blobs += 1;
                assert!(blob.as_str().is_some_and(is_base64), "{shown}");
            }
        }
    }
    assert!(
        images >= 4 && blobs >= 1 && embedded >= 2,
        "{images} {blobs} {embedded}"
    );
}

fn prompt_server(ran: &Arc<AtomicUsize>) -> Server {
    let ran = ran.clone();
    let mut who = PromptArgument::new("who");
    who.required = Some(true);
    let mut prompt = Prompt::new("greet");
    prompt.arguments = Some(vec![who]);
    Server::builder(Implementation::new("prompts", "1"))
        .prompt(prompt, move |get| {
            ran.fetch_add(1, Ordering::SeqCst);
            async move {
                Ok(GetPromptResult::new(vec![PromptMessage::user_text(
                    format!("Hello {}", get.arguments["who"]),
                )]))
            }
        })
        .build()
        .unwrap()
}

async fn raw(server: &Server) -> RawPeer {
    let (a, b) = memory::pair();
    server.serve(b).unwrap();
    let mut c = RawPeer::new(a, "2025-11-25");
    c.handshake("2025-11-25", json!({})).await;
    c
}

#[tokio::test]
async fn sf_5_prompt_arguments_are_checked_before_the_handler_runs() {
    let ran = Arc::new(AtomicUsize::new(0));
    let mut c = raw(&prompt_server(&ran)).await;
    for (i, params) in [
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {}}),
        json!({"name": "greet", "arguments": {"who": 7}}),
        json!({"name": "greet", "arguments": {"who": {"$ne": null}}}),
        json!({"name": "greet", "arguments": ["who"]}),
        json!({"name": "../greet", "arguments": {"who": "x"}}),
        json!({"name": "nope"}),
    ]
    .into_iter()
    .enumerate()
    {
        let r = c.request(json!(i), "prompts/get", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler ran");
    let r = c
        .request(
            json!(9),
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "Ada"}}),
        )
        .await;
    assert_eq!(
        r["result"]["messages"][0]["content"]["text"], "Hello Ada",
        "{r}"
    );
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn sf_12_unknown_values_under_reserved_meta_keys_change_nothing() {
    let server = everything_server(SessionConfig::default()).unwrap();
    let mut c = raw(&server).await;
    let odd = json!({
        "io.modelcontextprotocol/not-yet-defined": [1, {"x": null}],
        "io.modelcontextprotocol/related-task": "not an object",
        "dev.mcp.example/flag": {"deep": {"deeper": true}},
        "modelcontextprotocol.io/odd": null,
        "vendor.example/x": 5
    });
    for (method, params) in [
        (
            "tools/call",
            json!({"name": "test_simple_text", "arguments": {}}),
        ),
        ("tools/list", json!({})),
        ("prompts/get", json!({"name": "test_simple_prompt"})),
        ("resources/read", json!({"uri": "test://static-text"})),
    ] {
        let plain = c.request(json!(1), method, params.clone()).await;
        let mut with = params.clone();
        with["_meta"] = odd.clone();
        let r = c.request(json!(2), method, with).await;
        assert!(plain.get("result").is_some(), "{method}: {plain}");
        assert_eq!(r["result"], plain["result"], "{method}");
    }
}

/// Whether `uri` is an RFC 3986 URI (`scheme ":" ...`, only the characters it allows), or an
/// RFC 6570 template of one (`{...}` expressions allowed).
fn is_rfc3986(uri: &str, template: bool) -> bool {
    let Some((scheme, rest)) = uri.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    let allowed = |b: u8| {
        b.is_ascii_alphanumeric()
            || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b)
            || (template && b"{}".contains(&b))
    };
    scheme_ok && !rest.is_empty() && rest.bytes().all(allowed)
}

#[tokio::test]
async fn sf_3_every_resource_uri_our_servers_offer_follows_rfc_3986() {
    assert!(is_rfc3986("test://static-text", false) && is_rfc3986("x+y:a/{id}", true));
    assert!(!is_rfc3986("no scheme", false) && !is_rfc3986("1x:a", false));
    assert!(!is_rfc3986("a:b c", false) && !is_rfc3986("a:{id}", false));
    let mut checked = 0;
    for era in [EraMode::Legacy, EraMode::Auto] {
        let probed = probe_everything(era).await;
        let mut links = Vec::new();
        for r in &probed.results {
            objects(r, &mut links);
        }
        let linked = links
            .iter()
            .filter(|o| o.get("type").and_then(Value::as_str) == Some("resource_link"))
            .filter_map(|o| o.get("uri").and_then(Value::as_str).map(str::to_owned));
        for uri in probed.uris.iter().cloned().chain(linked) {
            checked += 1;
            assert!(is_rfc3986(&uri, uri.contains('{')), "{uri}");
        }
    }
    assert!(checked >= 4, "{checked}");
}
