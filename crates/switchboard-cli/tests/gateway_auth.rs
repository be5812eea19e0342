//! `switchboard gateway --http --auth-issuer`: the gateway as an OAuth resource server in
//! front of an upstream over Streamable HTTP, with the configuration's policy per subject and
//! per scope, an audit line per request, and no token pass-through (the upstream only ever
//! sees the gateway's own credential).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use switchboard::client::{Client, ClientSession, EraMode};
use switchboard::http::{HttpConfig, StreamableHttpService};
use switchboard::http_client::{HttpClientConfig, HttpClientTransport};
use switchboard::server::Server;
use switchboard::types::lifecycle::Implementation;
use switchboard::types::tools::{CallToolResult, Tool};
use switchboard_test_support::issuer::TestIssuer;
use switchboard_test_support::wait;

/// An upstream over Streamable HTTP on 127.0.0.1 (`add` and `admin_reset`) that keeps every
/// Authorization header it is sent.
async fn upstream(seen: Arc<Mutex<Vec<String>>>) -> String {
    let server = Server::builder(Implementation::new("up", "1"))
        .tool(Tool::new("add", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("added"))
        })
        .tool(
            Tool::new("admin_reset", json!({"type": "object"})),
            |_| async { Ok(CallToolResult::text("reset")) },
        )
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&server),
        HttpConfig::for_bind_address(local),
    );
    let router = service.router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                let auth = req
                    .headers()
                    .get(http::header::AUTHORIZATION)
                    .map(|v| v.to_str().unwrap_or("?").to_owned())
                    .unwrap_or_else(|| "(none)".into());
                seen.lock().unwrap().push(auth);
                next.run(req).await
            }
        },
    ));
    tokio::spawn(async move {
        let _keep = server;
        axum::serve(listener, router).await
    });
    format!("http://{local}/mcp")
}

async fn client(url: &str, token: &str) -> ClientSession {
    let value = http::HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
    let config = HttpClientConfig::default().with_header(http::header::AUTHORIZATION, value);
    let transport = HttpClientTransport::connect(url, config).unwrap();
    Client::builder(Implementation::new("gateway-auth-test", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .expect("connected with a token")
}

async fn tool_names(c: &ClientSession) -> Vec<String> {
    let mut n: Vec<String> = c
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    n.sort();
    n
}

/// `[SEC]` the gateway is a resource server; a token without the scope sees neither the tool
/// in the list nor a way to call it; client tokens never reach the upstream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn au_gateway_policy_by_subject_and_scope_with_audit_and_no_token_pass_through() {
    let issuer = TestIssuer::start().await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let up_url = upstream(seen.clone()).await;
    let dir = std::env::temp_dir().join(format!("switchboard-gateway-auth-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config_path = dir.join("gateway.toml");
    let audit = dir.join("audit.log");
    std::fs::write(
        &config_path,
        format!(
            r#"[[upstream]]
name = "up"
url = "{up_url}"
bearer_token_env = "GATEWAY_UP_TOKEN"

[policy]
default = "allow"

[[policy.rule]]
effect = "deny"
subjects = ["mallory"]

[[policy.rule]]
effect = "allow"
scopes = ["gw:admin"]
upstreams = ["up"]

[[policy.rule]]
effect = "deny"
tools = ["up_admin_*"]
"#
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let url = format!("http://{addr}/mcp");
    let mut cmd = common::bin();
    cmd.env("GATEWAY_UP_TOKEN", "the-gateways-own-credential")
        .args(["gateway", config_path.to_str().unwrap(), "--http", &addr])
        .args([
            "--auth-issuer",
            issuer.url(),
            "--audit",
            audit.to_str().unwrap(),
        ]);
    let _gateway = tokio::task::block_in_place(|| common::start(cmd, "listening on", url.clone()));

    // No token: 401 with the resource metadata.
    let r = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "x", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);

    let alice_token = issuer.token(&issuer.claims("alice", &url, "mcp:basic"));
    let alice = client(&url, &alice_token).await;
    let deadline = wait::Deadline::new("the upstream is listed");
    while !tool_names(&alice).await.contains(&"up_add".to_owned()) {
        deadline.tick().await;
    }
    // Alice, without gw:admin: the admin tool is neither listed nor callable.
    assert_eq!(tool_names(&alice).await, ["up_add"]);
    let e = alice
        .call_tool("up_admin_reset", json!({}))
        .await
        .expect_err("refused");
    assert!(e.to_string().contains("not available"), "{e}");
    let r = alice.call_tool("up_add", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("added"));

    // Bob holds gw:admin: he sees and calls it.
    let bob_token = issuer.token(&issuer.claims("bob", &url, "mcp:basic gw:admin"));
    let bob = client(&url, &bob_token).await;
    assert_eq!(tool_names(&bob).await, ["up_add", "up_admin_reset"]);
    let r = bob.call_tool("up_admin_reset", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("reset"));

    // Mallory may use nothing.
    let mallory_token = issuer.token(&issuer.claims("mallory", &url, "mcp:basic gw:admin"));
    let mallory = client(&url, &mallory_token).await;
    assert!(tool_names(&mallory).await.is_empty());
    assert!(mallory.call_tool("up_add", json!({})).await.is_err());

    // No token pass-through: the upstream saw the gateway's credential on every request, and
    // never a client's token.
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for header in &seen {
        assert_eq!(header, "Bearer the-gateways-own-credential");
    }
    for token in [&alice_token, &bob_token, &mallory_token] {
        assert!(!seen.iter().any(|h| h.contains(token.as_str())));
    }

    // An audit line per call, with the subject and the outcome.
    let calls = || -> Vec<Value> {
        std::fs::read_to_string(&audit)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["method"] == switchboard::types::methods::TOOLS_CALL)
            .collect()
    };
    let has = |calls: &[Value], subject: &str, tool: &str| {
        calls
            .iter()
            .any(|l| l["subject"] == subject && l["target"] == tool)
    };
    wait::until("a line per call", || {
        let c = calls();
        has(&c, "alice", "up_admin_reset")
            && has(&c, "alice", "up_add")
            && has(&c, "bob", "up_admin_reset")
            && has(&c, "mallory", "up_add")
    })
    .await;
    let calls = calls();
    let line = |subject: &str, tool: &str| {
        calls
            .iter()
            .find(|l| l["subject"] == subject && l["target"] == tool)
            .unwrap_or_else(|| panic!("no line for {subject} {tool}: {calls:?}"))
            .clone()
    };
    assert_eq!(line("alice", "up_admin_reset")["code"], -32602);
    assert_eq!(line("alice", "up_add")["outcome"], "ok");
    assert_eq!(line("bob", "up_admin_reset")["outcome"], "ok");
    assert_eq!(line("mallory", "up_add")["code"], -32602);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Tokens a small authorization server issued to the gateway.
type Issued = Arc<Mutex<Vec<String>>>;

/// A small authorization server on 127.0.0.1: metadata, and a token endpoint for the
/// client-credentials grant of client `gateway` with secret `gateway-secret` (basic or post);
/// each token it issues is `cc-N`, kept in `issued`.
async fn authorization_server(issued: Issued) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let meta = json!({
        "issuer": issuer,
        "token_endpoint": format!("{issuer}/token"),
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    })
    .to_string();
    let token = move |req: axum::extract::Request| {
        let issued = issued.clone();
        async move {
            let basic = req
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                // base64("gateway:gateway-secret")
                == Some("Basic Z2F0ZXdheTpnYXRld2F5LXNlY3JldA==");
            let body = axum::body::to_bytes(req.into_body(), 1 << 16)
                .await
                .unwrap();
            let form: std::collections::HashMap<String, String> =
                url::form_urlencoded::parse(&body).into_owned().collect();
            let post = form.get("client_id").map(String::as_str) == Some("gateway")
                && form.get("client_secret").map(String::as_str) == Some("gateway-secret");
            let granted = form.get("grant_type").map(String::as_str) == Some("client_credentials");
            let (status, answer) = if granted && (basic || post) {
                let mut issued = issued.lock().unwrap();
                let token = format!("cc-{}", issued.len());
                issued.push(token.clone());
                (
                    200,
                    json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600}),
                )
            } else {
                (400, json!({"error": "invalid_client"}))
            };
            axum::response::Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(axum::body::Body::from(answer.to_string()))
                .unwrap()
        }
    };
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || {
                let meta = meta.clone();
                async move { ([("content-type", "application/json")], meta) }
            }),
        )
        .route("/token", axum::routing::post(token));
    tokio::spawn(async move { axum::serve(listener, app).await });
    issuer
}

/// An upstream over Streamable HTTP that is an OAuth resource server accepting only the tokens
/// `issued` holds, and keeps every Authorization header it is sent.
async fn protected_upstream(
    issuer: String,
    issued: Issued,
    seen: Arc<Mutex<Vec<String>>>,
) -> String {
    use switchboard::auth::resource::{AuthInfo, TokenError, TokenValidator};
    let server = Server::builder(Implementation::new("up", "1"))
        .tool(Tool::new("add", json!({"type": "object"})), |_| async {
            Ok(CallToolResult::text("added"))
        })
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let local = listener.local_addr().unwrap();
    let url = format!("http://{local}/mcp");
    let from = issuer.clone();
    let validator: Arc<dyn TokenValidator> = Arc::new(move |token: &str| {
        if issued.lock().unwrap().iter().any(|t| t == token) {
            Ok(AuthInfo::new("gateway", from.clone(), Default::default()))
        } else {
            Err(TokenError::Invalid("not issued to the gateway"))
        }
    });
    let auth = switchboard::http::Authorization::new(&url, vec![issuer], validator).unwrap();
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&server),
        HttpConfig::for_bind_address(local).with_authorization(auth),
    );
    let router = service.router().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            let seen = seen.clone();
            async move {
                if let Some(v) = req.headers().get(http::header::AUTHORIZATION) {
                    seen.lock()
                        .unwrap()
                        .push(v.to_str().unwrap_or("?").to_owned());
                }
                next.run(req).await
            }
        },
    ));
    tokio::spawn(async move {
        let _keep = server;
        axum::serve(listener, router).await
    });
    url
}

/// `[SEC]` an HTTP upstream behind OAuth: the gateway gets its own token with the
/// client-credentials grant (the secret read from the environment) and calls the upstream with
/// it; the client's token never reaches the upstream, and the gateway's token never reaches
/// the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn au_an_oauth_upstream_is_reached_with_the_gateways_client_credentials_only() {
    let issuer = TestIssuer::start().await;
    let issued = Issued::default();
    let upstream_issuer = authorization_server(issued.clone()).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let up_url = protected_upstream(upstream_issuer, issued.clone(), seen.clone()).await;
    let dir = std::env::temp_dir().join(format!("switchboard-gateway-cc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config_path = dir.join("gateway.toml");
    std::fs::write(
        &config_path,
        format!(
            "[[upstream]]\nname = \"up\"\nurl = \"{up_url}\"\noauth_client_id = \"gateway\"\n\
             oauth_client_secret_env = \"GATEWAY_UP_SECRET\"\n"
        ),
    )
    .unwrap();
    let addr = format!("127.0.0.1:{}", common::free_port());
    let url = format!("http://{addr}/mcp");
    let mut cmd = common::bin();
    cmd.env("GATEWAY_UP_SECRET", "gateway-secret")
        .args(["gateway", config_path.to_str().unwrap(), "--http", &addr])
        .args(["--auth-issuer", issuer.url()]);
    let _gateway = tokio::task::block_in_place(|| common::start(cmd, "listening on", url.clone()));

    let alice_token = issuer.token(&issuer.claims("alice", &url, "mcp:basic"));
    let alice = client(&url, &alice_token).await;
    let deadline = wait::Deadline::new("the OAuth upstream is listed");
    while !tool_names(&alice).await.contains(&"up_add".to_owned()) {
        deadline.tick().await;
    }
    let r = alice.call_tool("up_add", json!({})).await.unwrap();
    assert_eq!(r.content[0].as_text(), Some("added"));
    let r = serde_json::to_string(&r).unwrap();

    let issued = issued.lock().unwrap().clone();
    assert!(!issued.is_empty(), "the gateway got a token of its own");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty());
    for header in &seen {
        let token = header.strip_prefix("Bearer ").expect("a bearer token");
        assert!(
            issued.iter().any(|t| t == token),
            "only the gateway's token: {header}"
        );
        assert!(!header.contains(alice_token.as_str()));
    }
    // Nothing of the gateway's credentials in what the client got.
    for token in &issued {
        assert!(!r.contains(token.as_str()));
    }
    assert!(!r.contains("gateway-secret"));
}
