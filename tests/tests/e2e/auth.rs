//! The everything server as an OAuth 2.1 resource server on Streamable HTTP (SPEC-NOTES §7,
//! SECURITY-NOTES): a test issuer on 127.0.0.1 signs the tokens, our JWT validator checks them,
//! and raw HTTP requests look at statuses, challenges and bodies. Every server listens on
//! 127.0.0.1 only.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::auth::BearerChallenge;
use switchboard::auth::resource::{JwtValidator, JwtValidatorConfig};
use switchboard::http::{Authorization, HttpConfig, StreamableHttpService};
use switchboard::jsonrpc::SessionConfig;
use switchboard_example_servers::everything::everything_server;
use switchboard_test_support::issuer::{
    Algorithm, Header, JwksMode, TestIssuer, TestKey, bearer_post_headers, now,
};

pub(crate) const V2025: &str = "2025-11-25";
pub(crate) const V2026: &str = "2026-07-28";

pub(crate) struct Fixture {
    pub(crate) issuer: TestIssuer,
    pub(crate) url: String,
    pub(crate) http: reqwest::Client,
    _server: tokio::task::JoinHandle<()>,
}

impl Fixture {
    pub(crate) async fn start() -> Self {
        Self::start_with(|c| c).await
    }

    async fn start_with(tune: impl FnOnce(JwtValidatorConfig) -> JwtValidatorConfig) -> Self {
        let server = everything_server(SessionConfig::default()).unwrap();
        Self::start_server(server, true, tune).await
    }

    /// `server` behind our JWT validator; answers in JSON (`json_response`) or on SSE streams.
    pub(crate) async fn start_server(
        server: switchboard::server::Server,
        json_response: bool,
        tune: impl FnOnce(JwtValidatorConfig) -> JwtValidatorConfig,
    ) -> Self {
        Self::start_configured(server, json_response, tune, |c| c).await
    }

    /// As [`Fixture::start_server`], with the HTTP configuration tuned by `http`.
    pub(crate) async fn start_configured(
        server: switchboard::server::Server,
        json_response: bool,
        tune: impl FnOnce(JwtValidatorConfig) -> JwtValidatorConfig,
        http: impl FnOnce(HttpConfig) -> HttpConfig,
    ) -> Self {
        let issuer = TestIssuer::start().await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let local = listener.local_addr().unwrap();
        let url = format!("http://{local}/mcp");
        let validator = JwtValidator::new(tune(JwtValidatorConfig::new(issuer.url(), &url)));
        let auth = Authorization::new(&url, vec![issuer.url().to_owned()], Arc::new(validator))
            .unwrap()
            .with_policy(server.scope_policy().clone());
        let config = http(
            HttpConfig::for_bind_address(local)
                .with_json_response(json_response)
                .with_authorization(auth),
        );
        let service =
            StreamableHttpService::new(switchboard::server_http::session_factory(&server), config);
        let handle = tokio::spawn(async move {
            let _ = switchboard::http::serve(listener, service).await;
        });
        Fixture {
            issuer,
            url,
            http: reqwest::Client::new(),
            _server: handle,
        }
    }

    pub(crate) fn token(&self, sub: &str, scope: &str) -> String {
        self.issuer
            .token(&self.issuer.claims(sub, &self.url, scope))
    }

    pub(crate) fn claims(&self, sub: &str, scope: &str) -> Value {
        self.issuer.claims(sub, &self.url, scope)
    }

    /// A POST of `body` with `token` (if any) and the session (if any).
    pub(crate) async fn post(
        &self,
        body: &Value,
        token: Option<&str>,
        session: Option<&str>,
    ) -> Reply {
        let mut req = self.http.post(&self.url).body(body.to_string());
        for (name, value) in bearer_post_headers(token, session, V2025) {
            req = req.header(name, value);
        }
        Reply::of(req.send().await.unwrap()).await
    }

    /// A session opened by `token`'s subject: initialize, then initialized.
    pub(crate) async fn open(&self, token: &str) -> String {
        let r = self.post(&initialize(), Some(token), None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        let sid = r.session.expect("a session id");
        let n = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(&n, Some(token), Some(&sid)).await;
        assert_eq!(r.status, 202);
        sid
    }

    /// A raw request with any method and headers.
    pub(crate) async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        Reply::of(req.send().await.unwrap()).await
    }

    fn metadata_url(&self) -> String {
        self.url
            .replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) challenge: Option<BearerChallenge>,
    pub(crate) session: Option<String>,
    pub(crate) body: String,
}

impl Reply {
    async fn of(resp: reqwest::Response) -> Self {
        let challenge = resp.headers().get("www-authenticate").map(|v| {
            BearerChallenge::from_header_value(v.to_str().unwrap())
                .unwrap()
                .unwrap()
        });
        let session = resp
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_owned());
        Reply {
            status: resp.status().as_u16(),
            challenge,
            session,
            body: resp.text().await.unwrap(),
        }
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
}

pub(crate) fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": V2025, "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "1"}}})
}

pub(crate) fn call(id: i64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": {}}})
}

pub(crate) fn text_of(v: &Value) -> &str {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn au_1_au_2_metadata_at_the_path_suffixed_well_known_url() {
    let f = Fixture::start().await;
    let r = f
        .send(
            f.http
                .get(f.metadata_url())
                .header("origin", "http://127.0.0.1:1"),
        )
        .await;
    assert_eq!(r.status, 200, "no token needed");
    let m = r.json();
    assert_eq!(m["resource"], f.url);
    assert_eq!(m["authorization_servers"], json!([f.issuer.url()]));
    assert_eq!(m["scopes_supported"], json!(["mcp:basic"]));
    assert_eq!(m["bearer_methods_supported"], json!(["header"]));
}

#[tokio::test]
async fn au_4_au_22_no_token_gets_401_and_a_challenge_naming_the_metadata() {
    let f = Fixture::start().await;
    let r = f.post(&initialize(), None, None).await;
    assert_eq!(r.status, 401);
    assert!(r.session.is_none(), "no session is created");
    let c = r.challenge.unwrap();
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some(f.metadata_url().as_str())
    );
    assert_eq!(c.scope.as_deref(), Some("mcp:basic"));
    assert_eq!(
        c.error, None,
        "no credentials: no error code (RFC 6750 §3.1)"
    );
    // Another scheme is no bearer token either; GET and DELETE need one too.
    let r = f
        .send(
            f.http
                .post(&f.url)
                .header("authorization", "Basic YTpi")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(initialize().to_string()),
        )
        .await;
    assert_eq!(r.status, 401);
    for m in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = f
            .send(
                f.http
                    .request(m, &f.url)
                    .header("accept", "text/event-stream"),
            )
            .await;
        assert_eq!(r.status, 401);
        assert!(r.challenge.is_some());
    }
}

#[tokio::test]
async fn au_21_au_22_sec_tp_1_sec_tp_3_every_hostile_token_gets_401_and_nothing_else() {
    let f = Fixture::start().await;
    let good = f.token("alice", "mcp:basic mcp:write");
    let sid = f.open(&good).await;
    let claims = f.claims("alice", "mcp:basic mcp:write");
    let with = |patch: Value| {
        let mut c = claims.clone();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        c
    };
    let header = |typ: Option<&str>| {
        let mut h = Header::new(Algorithm::ES256);
        h.typ = typ.map(str::to_owned);
        h.kid = Some("k1".into());
        h
    };
    let i = &f.issuer;
    let hostile: Vec<(&str, String)> = vec![
        (
            "wrong audience",
            i.token(&with(json!({"aud": "http://127.0.0.1:1/mcp"}))),
        ),
        ("missing audience", i.token(&with(json!({"aud": null})))),
        (
            "audience list without us",
            i.token(&with(
                json!({"aud": ["http://a.example/mcp", "http://b.example/mcp"]}),
            )),
        ),
        ("expired", i.token(&with(json!({"exp": now() - 3600})))),
        (
            "not yet valid",
            i.token(&with(json!({"nbf": now() + 3600}))),
        ),
        (
            "wrong issuer",
            i.token(&with(json!({"iss": "http://127.0.0.1:9"}))),
        ),
        ("no exp", i.token(&with(json!({"exp": null})))),
        (
            "another key, same kid",
            i.sign_with(&TestKey::es256("k1"), &claims),
        ),
        (
            "another key, another kid",
            i.sign_with(&TestKey::es256("k7"), &claims),
        ),
        ("alg none", i.unsigned(&claims)),
        (
            "HMAC keyed with the public key",
            i.hmac_with_public_key(&claims),
        ),
        ("typ JWT", i.sign_header(&header(Some("JWT")), &claims)),
        (
            "an ID token",
            i.sign_header(
                &header(Some("JWT")),
                &with(json!({"aud": "test-client", "nonce": "n"})),
            ),
        ),
        (
            "a tampered payload",
            TestIssuer::tampered(
                &f.token("alice", "mcp:basic"),
                &with(json!({"scope": "mcp:basic mcp:write"})),
            ),
        ),
    ];
    for (what, token) in &hostile {
        // On the session, and as a fresh initialize.
        for session in [Some(sid.as_str()), None] {
            let body = if session.is_some() {
                call(5, "test_scoped_write")
            } else {
                initialize()
            };
            let r = f.post(&body, Some(token), session).await;
            assert_eq!(r.status, 401, "{what}: {}", r.body);
            let c = r.challenge.as_ref().unwrap();
            assert_eq!(c.error.as_deref(), Some("invalid_token"), "{what}");
            assert_eq!(
                c.resource_metadata.as_deref(),
                Some(f.metadata_url().as_str())
            );
            assert!(r.session.is_none(), "{what}: no session");
            assert!(!r.body.contains(token.as_str()), "{what}: token echoed");
            assert!(!r.body.contains("alice"), "{what}: claims echoed");
            assert!(!r.body.contains("Scoped write"), "{what}: the tool ran");
            assert_eq!(
                r.json()["error"]["data"]["reason"],
                "invalid_token",
                "{what}"
            );
        }
    }
    // The session is untouched: the good token still works on it.
    let r = f
        .post(&call(6, "test_scoped_write"), Some(&good), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");
}

#[tokio::test]
async fn au_19_sec_tok_1_a_token_in_the_query_string_is_refused() {
    let f = Fixture::start().await;
    let good = f.token("alice", "mcp:basic");
    let r = f
        .send(
            f.http
                .post(format!("{}?access_token={good}", f.url))
                .header("authorization", format!("Bearer {good}"))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(initialize().to_string()),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.challenge.unwrap().error.as_deref(),
        Some("invalid_request")
    );
    assert!(!r.body.contains(&good));
}

#[tokio::test]
async fn au_26_sf_9_sec_tool_1_step_up_for_a_scoped_tool() {
    let f = Fixture::start().await;
    let basic = f.token("alice", "mcp:basic");
    let sid = f.open(&basic).await;
    let r = f
        .post(&call(1, "test_simple_text"), Some(&basic), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    let r = f
        .post(&call(2, "test_scoped_write"), Some(&basic), Some(&sid))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let c = r.challenge.unwrap();
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(
        c.scope.as_deref(),
        Some("mcp:basic mcp:write"),
        "the scopes this request needs, those already held included"
    );
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some(f.metadata_url().as_str())
    );

    // A batch-free body naming the tool twice in odd ways still needs the scope.
    let sneaky = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "test_simple_text", "name": "test_scoped_write"}});
    let text = sneaky.to_string().replace(
        r#""name":"test_scoped_write""#,
        r#""name":"test_simple_text","name":"test_scoped_write""#,
    );
    let r = f
        .send(
            f.http
                .post(&f.url)
                .header("authorization", format!("Bearer {basic}"))
                .header("mcp-session-id", &sid)
                .header("mcp-protocol-version", V2025)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .body(text),
        )
        .await;
    assert_eq!(
        r.status, 403,
        "an unreadable body needs every scope: {}",
        r.body
    );

    // After re-authorizing with both scopes, the same session serves the call.
    let both = f.token("alice", "mcp:basic mcp:write");
    let r = f
        .post(&call(4, "test_scoped_write"), Some(&both), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");

    // A token without the baseline scope gets 403 on anything.
    let none = f.token("alice", "other");
    let r = f
        .post(&call(5, "test_simple_text"), Some(&none), Some(&sid))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(r.challenge.unwrap().scope.as_deref(), Some("mcp:basic"));
}

#[tokio::test]
async fn sec_sh_6_another_subject_cannot_use_a_session() {
    let f = Fixture::start().await;
    let alice = f.token("alice", "mcp:basic mcp:write");
    let bob = f.token("bob", "mcp:basic mcp:write");
    let sid = f.open(&alice).await;
    let r = f
        .post(&call(1, "test_scoped_write"), Some(&bob), Some(&sid))
        .await;
    assert_eq!(r.status, 404, "answered as an unknown session: {}", r.body);
    assert!(!r.body.contains("alice"));
    for m in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let r = f
            .send(
                f.http
                    .request(m.clone(), &f.url)
                    .header("authorization", format!("Bearer {bob}"))
                    .header("mcp-session-id", &sid)
                    .header("mcp-protocol-version", V2025)
                    .header("accept", "text/event-stream"),
            )
            .await;
        assert_eq!(r.status, 404, "{m}");
    }
    // Alice's session lives on (bob's DELETE did not end it), and bob opens his own.
    let r = f
        .post(&call(2, "test_scoped_write"), Some(&alice), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");
    let bob_sid = f.open(&bob).await;
    let r = f
        .post(&call(3, "test_scoped_write"), Some(&bob), Some(&bob_sid))
        .await;
    assert_eq!(text_of(&r.json()), "Scoped write done for bob");
}

/// A client-credentials token without `sub`, issued to `client`.
fn machine_token(f: &Fixture, client: Option<&str>, scope: &str) -> String {
    let mut c = f.claims("ignored", scope);
    let m = c.as_object_mut().unwrap();
    m.remove("sub");
    match client {
        Some(id) => {
            m.insert("client_id".into(), json!(id));
        }
        None => {
            m.remove("client_id");
        }
    }
    f.issuer.token(&c)
}

#[tokio::test]
async fn sec_sh_5_a_token_without_sub_binds_the_session_to_its_client() {
    let f = Fixture::start().await;
    let a = machine_token(&f, Some("machine-a"), "mcp:basic mcp:write");
    let sid = f.open(&a).await;
    let r = f
        .post(&call(1, "test_scoped_write"), Some(&a), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for machine-a");
    // A fresh token of the same client is the same principal.
    let again = machine_token(&f, Some("machine-a"), "mcp:basic");
    let r = f
        .post(&call(2, "test_simple_text"), Some(&again), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // Another client, or a user whose subject is not that client, is another principal.
    let b = machine_token(&f, Some("machine-b"), "mcp:basic mcp:write");
    let r = f
        .post(&call(3, "test_simple_text"), Some(&b), Some(&sid))
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    let alice = f.token("alice", "mcp:basic");
    let r = f
        .post(&call(4, "test_simple_text"), Some(&alice), Some(&sid))
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    // A token naming no principal at all is refused before anything else.
    let nobody = machine_token(&f, None, "mcp:basic mcp:write");
    let r = f.post(&initialize(), Some(&nobody), None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(r.challenge.unwrap().error.as_deref(), Some("invalid_token"));
}

#[tokio::test]
async fn jwks_refresh_on_an_unknown_kid_serves_a_rotated_key() {
    let f = Fixture::start_with(|c| c.with_min_refresh_interval(Duration::ZERO)).await;
    let sid = f.open(&f.token("alice", "mcp:basic")).await;
    let k2 = TestKey::es256("k2");
    f.issuer.publish(vec![k2.clone()]);
    let rotated = f.issuer.sign_with(&k2, &f.claims("alice", "mcp:basic"));
    let r = f
        .post(&call(1, "test_simple_text"), Some(&rotated), Some(&sid))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(f.issuer.jwks_hits(), 2);
}

#[tokio::test]
async fn an_unreachable_jwks_is_503_not_401() {
    let f = Fixture::start_with(|c| c.with_fetch_timeout(Duration::from_millis(300))).await;
    f.issuer
        .set_jwks_mode(JwksMode::Slow(Duration::from_secs(30)));
    let r = f
        .post(&initialize(), Some(&f.token("alice", "mcp:basic")), None)
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
    f.issuer.set_jwks_mode(JwksMode::Huge(1 << 20));
    let r = f
        .post(&initialize(), Some(&f.token("alice", "mcp:basic")), None)
        .await;
    assert_eq!(r.status, 503, "{}", r.body);
}

pub(crate) fn modern(
    f: &Fixture,
    body: &Value,
    name: Option<&str>,
    token: Option<&str>,
) -> reqwest::RequestBuilder {
    let mut req = f
        .http
        .post(&f.url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", V2026)
        .header("mcp-method", body["method"].as_str().unwrap())
        .body(body.to_string());
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    req
}

#[tokio::test]
async fn au_20_the_2026_route_is_protected_too() {
    let f = Fixture::start().await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"}});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "test_scoped_write", "arguments": {}, "_meta": meta}});
    let r = f
        .send(modern(&f, &call, Some("test_scoped_write"), None))
        .await;
    assert_eq!(r.status, 401);
    assert!(r.challenge.is_some());
    let bad = f.issuer.unsigned(&f.claims("alice", "mcp:basic mcp:write"));
    let r = f
        .send(modern(&f, &call, Some("test_scoped_write"), Some(&bad)))
        .await;
    assert_eq!(r.status, 401);
    let basic = f.token("alice", "mcp:basic");
    let r = f
        .send(modern(&f, &call, Some("test_scoped_write"), Some(&basic)))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.challenge.unwrap().scope.as_deref(),
        Some("mcp:basic mcp:write")
    );
    let both = f.token("alice", "mcp:basic mcp:write");
    let r = f
        .send(modern(&f, &call, Some("test_scoped_write"), Some(&both)))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(text_of(&r.json()), "Scoped write done for alice");
}

#[tokio::test]
async fn sec_tk_1_sec_sh_10_modern_tasks_belong_to_their_subject() {
    let f = Fixture::start().await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"}});
    let alice = f.token("alice", "mcp:basic");
    let bob = f.token("bob", "mcp:basic");
    let start = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow_compute", "arguments": {"seconds": 0.3}, "_meta": meta}});
    let r = f
        .send(modern(&f, &start, Some("slow_compute"), Some(&alice)))
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let created = r.json();
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
        "params": {"taskId": id, "_meta": meta}});
    let r = f.send(modern(&f, &get, Some(&id), Some(&bob))).await;
    assert_eq!(
        r.json()["error"]["code"],
        -32602,
        "bob must not see alice's task: {}",
        r.body
    );
    assert!(!r.body.contains("slow_compute"));
    let r = f.send(modern(&f, &get, Some(&id), Some(&alice))).await;
    assert_eq!(r.json()["result"]["taskId"], id.as_str(), "{}", r.body);
    let cancel = json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/cancel",
        "params": {"taskId": id, "_meta": meta}});
    let r = f.send(modern(&f, &cancel, Some(&id), Some(&bob))).await;
    assert!(
        r.json()["error"].is_object(),
        "bob cannot cancel it: {}",
        r.body
    );
}

/// The JSON messages of a server-sent event stream, read as they come.
struct Events {
    resp: reqwest::Response,
    buf: String,
}

impl Events {
    /// The next message, or `None` when none comes `within`.
    async fn next(&mut self, within: Duration) -> Option<Value> {
        let read = async {
            loop {
                if let Some(end) = self.buf.find("\n\n") {
                    let event: String = self.buf.drain(..end + 2).collect();
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(str::trim_start)
                        .collect();
                    if !data.is_empty() {
                        return serde_json::from_str(&data.join("\n")).ok();
                    }
                    continue;
                }
                let chunk = self.resp.chunk().await.ok()??;
                self.buf
                    .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
            }
        };
        tokio::time::timeout(within, read).await.ok().flatten()
    }
}

#[tokio::test]
async fn sec_tk_1_a_listen_stream_carries_only_its_subjects_tasks() {
    let f = Fixture::start().await;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "auth-test", "version": "1"}});
    let alice = f.token("alice", "mcp:basic");
    let bob = f.token("bob", "mcp:basic");
    let start = |id: i64, seconds: f64, token: &str| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "slow_compute", "arguments": {"seconds": seconds}, "_meta": meta}});
        modern(&f, &body, Some("slow_compute"), Some(token))
    };
    let task = |r: Reply| {
        let v = r.json();
        assert_eq!(v["result"]["resultType"], "task", "{v}");
        v["result"]["taskId"].as_str().unwrap().to_owned()
    };
    let a = task(f.send(start(1, 1.0, &alice)).await);
    let b = task(f.send(start(2, 1.5, &bob)).await);
    let listen = |id: &str, ids: &[&str], token: &str| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": ids}, "_meta": meta}});
        modern(&f, &body, None, Some(token))
    };
    let open = |req: reqwest::RequestBuilder| async move {
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), 200);
        let mut events = Events {
            resp,
            buf: String::new(),
        };
        let ack = events.next(Duration::from_secs(5)).await.expect("the ack");
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        events
    };
    // Bob names alice's task as well as his own; alice names hers.
    let mut bobs = open(listen("bob", &[&a, &b], &bob)).await;
    let mut alices = open(listen("alice", &[&a], &alice)).await;
    let n = alices
        .next(Duration::from_secs(10))
        .await
        .expect("alice hears of her task");
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], a.as_str());
    assert_eq!(n["params"]["status"], "completed");
    // Alice's task ended first, yet the first task bob hears of is his own.
    let n = bobs
        .next(Duration::from_secs(10))
        .await
        .expect("bob hears of his task");
    assert_eq!(n["method"], "notifications/tasks", "{n}");
    assert_eq!(n["params"]["taskId"], b.as_str(), "{n}");
    assert_eq!(n["params"]["status"], "completed");
    assert!(
        bobs.next(Duration::from_millis(200)).await.is_none(),
        "nothing of alice's task reaches bob"
    );
}
