//! The client against a mock resource server and authorization server on 127.0.0.1.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::token::JWT_BEARER_ASSERTION;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::*;

/// What the mock does and what it saw.
#[derive(Debug, Default)]
struct Mock {
    base: String,
    /// Paths requested, in order.
    seen: Vec<String>,
    /// The PRM is served at the root only.
    prm_root_only: bool,
    /// The issuer's path (`/tenant1`), metadata only at the OpenID path-insertion URL.
    issuer_path: &'static str,
    /// The metadata names another issuer.
    wrong_issuer: bool,
    /// The metadata has no `code_challenge_methods_supported`.
    no_pkce: bool,
    /// The authorization redirect carries another state.
    bad_state: bool,
    /// The authorization redirect carries this `iss`; with `iss_supported` advertised.
    iss: Option<String>,
    iss_supported: bool,
    /// Seconds of validity of issued tokens.
    expires_in: u64,
    /// The refresh tokens still valid.
    live_refresh: Vec<String>,
    issued: u32,
    /// Form bodies received at the token endpoint.
    token_forms: Vec<HashMap<String, String>>,
    /// Scopes asked for at the authorization endpoint.
    asked_scopes: Vec<Option<String>>,
    /// Authorization query parameters of the last request.
    last_authorize: HashMap<String, String>,
    /// The metadata's `authorization_endpoint` instead of the mock's own.
    authorization_endpoint: Option<String>,
    /// The PRM's `authorization_servers` instead of the mock's issuer.
    authorization_server: Option<String>,
}

type Shared = Arc<Mutex<Mock>>;

fn json_body(v: Value) -> impl IntoResponse {
    ([("content-type", "application/json")], v.to_string())
}

fn issuer(m: &Mock) -> String {
    format!("{}{}", m.base, m.issuer_path)
}

async fn prm(State(s): State<Shared>, uri: Uri) -> Response {
    let mut m = s.lock().unwrap();
    m.seen.push(uri.path().to_owned());
    if m.prm_root_only && uri.path() != "/.well-known/oauth-protected-resource" {
        return StatusCode::NOT_FOUND.into_response();
    }
    json_body(json!({
        "resource": format!("{}/mcp", m.base),
        "authorization_servers": [m.authorization_server.clone().unwrap_or_else(|| issuer(&m))],
        "scopes_supported": ["mcp:basic"],
    }))
    .into_response()
}

async fn as_md(State(s): State<Shared>, uri: Uri) -> Response {
    let mut m = s.lock().unwrap();
    m.seen.push(uri.path().to_owned());
    let wanted = if m.issuer_path.is_empty() {
        "/.well-known/oauth-authorization-server".to_owned()
    } else {
        format!("/.well-known/openid-configuration{}", m.issuer_path)
    };
    if uri.path() != wanted {
        return StatusCode::NOT_FOUND.into_response();
    }
    let mut md = json!({
        "issuer": if m.wrong_issuer { "https://attacker.example".to_owned() } else { issuer(&m) },
        "authorization_endpoint": m.authorization_endpoint.clone().unwrap_or_else(|| format!("{}/authorize", m.base)),
        "token_endpoint": format!("{}/token", m.base),
        "registration_endpoint": format!("{}/register", m.base),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    if m.no_pkce {
        md.as_object_mut()
            .unwrap()
            .remove("code_challenge_methods_supported");
    }
    if m.iss_supported {
        md["authorization_response_iss_parameter_supported"] = json!(true);
    }
    json_body(md).into_response()
}

async fn register(State(s): State<Shared>, body: String) -> Response {
    let mut m = s.lock().unwrap();
    m.seen.push("/register".into());
    let v: Value = serde_json::from_str(&body).unwrap();
    (
        StatusCode::CREATED,
        json_body(json!({"client_id": "dyn-client", "redirect_uris": v["redirect_uris"], "token_endpoint_auth_method": "none"})),
    )
        .into_response()
}

async fn authorize(State(s): State<Shared>, uri: Uri) -> Response {
    let q: HashMap<String, String> =
        url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let mut m = s.lock().unwrap();
    m.seen.push("/authorize".into());
    m.asked_scopes.push(q.get("scope").cloned());
    m.last_authorize = q.clone();
    let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
    {
        let mut qp = to.query_pairs_mut();
        qp.append_pair("code", "the-code");
        let state = if m.bad_state { "forged" } else { &q["state"] };
        qp.append_pair("state", state);
        if let Some(iss) = &m.iss {
            qp.append_pair("iss", iss);
        }
    }
    (StatusCode::FOUND, [("location", to.to_string())]).into_response()
}

async fn token(State(s): State<Shared>, body: String) -> Response {
    let mut m = s.lock().unwrap();
    m.seen.push("/token".into());
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    m.token_forms.push(form.clone());
    if form["grant_type"] == "refresh_token" {
        let rt = &form["refresh_token"];
        if !m.live_refresh.contains(rt) {
            return (
                StatusCode::BAD_REQUEST,
                json_body(json!({"error": "invalid_grant"})),
            )
                .into_response();
        }
        // Rotation: the presented refresh token dies.
        m.live_refresh.retain(|r| r != rt);
    }
    m.issued += 1;
    let n = m.issued;
    let rt = format!("rt-{n}");
    m.live_refresh.push(rt.clone());
    let scope = m.asked_scopes.last().cloned().flatten();
    json_body(json!({
        "access_token": format!("at-{n}"), "token_type": "Bearer",
        "expires_in": m.expires_in, "refresh_token": rt, "scope": scope,
    }))
    .into_response()
}

async fn start(mock: Mock) -> (Shared, url::Url) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let shared = Arc::new(Mutex::new(Mock {
        base: base.clone(),
        ..mock
    }));
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource", get(prm))
        .route("/.well-known/oauth-protected-resource/{*p}", get(prm))
        .route("/.well-known/oauth-authorization-server", get(as_md))
        .route("/.well-known/oauth-authorization-server/{*p}", get(as_md))
        .route("/.well-known/openid-configuration", get(as_md))
        .route("/.well-known/openid-configuration/{*p}", get(as_md))
        .route("/tenant1/.well-known/openid-configuration", get(as_md))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(shared.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (shared, url::Url::parse(&format!("{base}/mcp")).unwrap())
}

fn client(endpoint: &url::Url) -> OAuthClient {
    let config =
        OAuthConfig::new(endpoint.clone()).with_policy(UrlPolicy::loopback_for_development());
    OAuthClient::headless(config).unwrap()
}

#[tokio::test]
async fn au5_au9_sec_tp_4_sec_url_6_discovery_order_with_404s_then_pkce_and_resource() {
    let (mock, endpoint) = start(Mock {
        prm_root_only: true,
        issuer_path: "/tenant1",
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    c.unauthorized(Some("Bearer error=\"invalid_token\""), None)
        .await
        .unwrap();
    assert_eq!(c.access_token().await.unwrap().as_deref(), Some("at-1"));
    let m = mock.lock().unwrap();
    assert_eq!(
        m.seen,
        [
            "/.well-known/oauth-protected-resource/mcp",
            "/.well-known/oauth-protected-resource",
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/register",
            "/authorize",
            "/token",
        ]
    );
    // AU-13: S256; AU-15: resource on both requests; scopes from scopes_supported.
    let a = &m.last_authorize;
    assert_eq!(a["code_challenge_method"], "S256");
    assert_eq!(a["resource"], endpoint.as_str());
    assert_eq!(a["scope"], "mcp:basic");
    let t = &m.token_forms[0];
    assert_eq!(t["resource"], endpoint.as_str());
    assert_eq!(pkce::challenge_of(&t["code_verifier"]), a["code_challenge"]);
    assert_eq!(t["client_id"], "dyn-client");
}

#[tokio::test]
async fn au5_sec_sc_5_the_challenges_resource_metadata_and_scopes_come_first() {
    let (mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    let base = mock.lock().unwrap().base.clone();
    let header = format!(
        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp:x\""
    );
    c.unauthorized(Some(&header), None).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.seen[0], "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(m.seen[1], "/.well-known/oauth-authorization-server");
    assert_eq!(
        m.asked_scopes[0].as_deref(),
        Some("mcp:x"),
        "AU-7: the challenge's scopes"
    );
}

#[tokio::test]
async fn rfc8414_issuer_mismatch_is_refused() {
    let (mock, endpoint) = start(Mock {
        wrong_issuer: true,
        ..Mock::default()
    })
    .await;
    let e = client(&endpoint)
        .unauthorized(None, None)
        .await
        .unwrap_err();
    assert!(matches!(e, OAuthError::IssuerMismatch { .. }), "{e}");
    assert!(!mock.lock().unwrap().seen.contains(&"/authorize".to_owned()));
}

#[tokio::test]
async fn au14_sec_url_6_missing_pkce_support_is_refused() {
    let (mock, endpoint) = start(Mock {
        no_pkce: true,
        ..Mock::default()
    })
    .await;
    let e = client(&endpoint)
        .unauthorized(None, None)
        .await
        .unwrap_err();
    assert!(matches!(e, OAuthError::NoPkce { .. }), "{e}");
    assert!(e.to_string().contains("AU-14"));
    assert!(!mock.lock().unwrap().seen.contains(&"/register".to_owned()));
}

#[tokio::test]
async fn state_mismatch_is_refused_before_the_token_request() {
    let (mock, endpoint) = start(Mock {
        bad_state: true,
        ..Mock::default()
    })
    .await;
    let e = client(&endpoint)
        .unauthorized(None, None)
        .await
        .unwrap_err();
    assert!(matches!(e, OAuthError::Callback(_)), "{e}");
    assert!(mock.lock().unwrap().token_forms.is_empty());
}

#[tokio::test]
async fn rfc9207_iss_mismatch_and_missing_iss_are_refused() {
    for (iss, supported) in [(Some("https://evil.example"), false), (None, true)] {
        let (mock, endpoint) = start(Mock {
            iss: iss.map(str::to_owned),
            iss_supported: supported,
            ..Mock::default()
        })
        .await;
        let e = client(&endpoint)
            .unauthorized(None, None)
            .await
            .unwrap_err();
        assert!(matches!(e, OAuthError::Callback(_)), "{e}");
        assert!(mock.lock().unwrap().token_forms.is_empty());
    }
    // The right iss, or none when not advertised, passes; a trailing slash is another string.
    let (mock, endpoint) = start(Mock {
        iss_supported: true,
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let base = mock.lock().unwrap().base.clone();
    mock.lock().unwrap().iss = Some(base.clone());
    client(&endpoint).unauthorized(None, None).await.unwrap();
    mock.lock().unwrap().iss = Some(format!("{base}/"));
    assert!(client(&endpoint).unauthorized(None, None).await.is_err());
}

#[tokio::test]
async fn au25_sec_tok_1_refresh_before_expiry_rotates_the_refresh_token() {
    let (mock, endpoint) = start(Mock {
        expires_in: 10,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    c.unauthorized(None, None).await.unwrap();
    // 10 s of validity is inside the 60 s margin: every call refreshes.
    assert_eq!(c.access_token().await.unwrap().as_deref(), Some("at-2"));
    assert_eq!(c.access_token().await.unwrap().as_deref(), Some("at-3"));
    let m = mock.lock().unwrap();
    let refreshes: Vec<&str> = m
        .token_forms
        .iter()
        .filter(|f| f["grant_type"] == "refresh_token")
        .map(|f| f["refresh_token"].as_str())
        .collect();
    assert_eq!(
        refreshes,
        ["rt-1", "rt-2"],
        "each refresh presents the rotated token"
    );
    assert!(m.token_forms[1].contains_key("resource"));
    assert_eq!(m.live_refresh, ["rt-3"]);
}

#[tokio::test]
async fn au25_a_401_on_the_current_token_refreshes_first() {
    let (mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    c.unauthorized(None, None).await.unwrap();
    c.unauthorized(None, Some("at-1")).await.unwrap();
    assert_eq!(c.access_token().await.unwrap().as_deref(), Some("at-2"));
    // A 401 for a token already replaced just retries with the new one.
    c.unauthorized(None, Some("at-1")).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.seen.iter().filter(|p| *p == "/authorize").count(), 1);
    assert_eq!(m.token_forms.len(), 2);
}

#[tokio::test]
async fn au7_step_up_asks_for_the_union_and_stops_after_3() {
    let (mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    c.unauthorized(Some("Bearer scope=\"mcp:basic\""), None)
        .await
        .unwrap();
    let challenge = "Bearer error=\"insufficient_scope\", scope=\"mcp:admin\"";
    for _ in 0..3 {
        let sent = c.access_token().await.unwrap();
        c.insufficient_scope(challenge, sent.as_deref())
            .await
            .unwrap();
    }
    let sent = c.access_token().await.unwrap();
    let e = c
        .insufficient_scope(challenge, sent.as_deref())
        .await
        .unwrap_err();
    assert!(
        matches!(e, OAuthError::StepUpExhausted { attempts: 3, .. }),
        "{e}"
    );
    {
        let m = mock.lock().unwrap();
        assert_eq!(m.asked_scopes[1].as_deref(), Some("mcp:admin mcp:basic"));
        assert_eq!(m.seen.iter().filter(|p| *p == "/authorize").count(), 4);
    }
    // A 403 that is not about scope is no step-up.
    assert!(
        c.insufficient_scope("Bearer error=\"invalid_token\"", None)
            .await
            .is_err()
    );
}

#[tokio::test]
async fn au7_the_first_authorization_counts_toward_the_cap() {
    let (mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    // The 401 already asks for the scope the 403s keep asking for.
    c.unauthorized(Some("Bearer scope=\"mcp:admin\""), None)
        .await
        .unwrap();
    let challenge = "Bearer error=\"insufficient_scope\", scope=\"mcp:admin\"";
    let mut refused = 0;
    for _ in 0..5 {
        let sent = c.access_token().await.unwrap();
        if c.insufficient_scope(challenge, sent.as_deref())
            .await
            .is_err()
        {
            refused += 1;
        }
    }
    assert_eq!(refused, 3);
    let authorizations = mock
        .lock()
        .unwrap()
        .seen
        .iter()
        .filter(|p| *p == "/authorize")
        .count();
    assert_eq!(authorizations, 3, "three authorizations in all, then none");
}

#[tokio::test]
async fn sec_ssrf_1_resource_metadata_on_internal_addresses_is_never_fetched() {
    let endpoint = url::Url::parse("http://127.0.0.1:9/mcp").unwrap();
    for target in [
        "http://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/.well-known/oauth-protected-resource",
        "https://[::1]/x",
    ] {
        let strict = OAuthClient::headless(OAuthConfig::new(endpoint.clone())).unwrap();
        let header = format!("Bearer resource_metadata=\"{target}\"");
        let e = strict.unauthorized(Some(&header), None).await.unwrap_err();
        assert!(matches!(e, OAuthError::Refused { .. }), "{target}: {e}");
    }
    // Loopback allowed for development: [::1] passes the policy (and then fails to connect).
    let dev = client(&endpoint);
    let e = dev
        .unauthorized(Some("Bearer resource_metadata=\"http://[::1]:9/x\""), None)
        .await
        .unwrap_err();
    assert!(!matches!(e, OAuthError::Refused { .. }), "{e}");
    let e = dev
        .unauthorized(
            Some("Bearer resource_metadata=\"http://169.254.169.254/x\""),
            None,
        )
        .await
        .unwrap_err();
    assert!(matches!(e, OAuthError::Refused { .. }), "{e}");
    // The next fetches are held to the same policy: an authorization server the resource
    // metadata names, and the endpoints the authorization server's metadata names.
    for (mock, refused) in [
        (
            Mock {
                authorization_server: Some("http://169.254.169.254/latest".into()),
                ..Mock::default()
            },
            "169.254.169.254",
        ),
        (
            Mock {
                authorization_endpoint: Some("https://10.0.0.1/authorize".into()),
                ..Mock::default()
            },
            "10.0.0.1",
        ),
    ] {
        let (mock, endpoint) = start(mock).await;
        let e = client(&endpoint)
            .unauthorized(None, None)
            .await
            .unwrap_err();
        assert!(
            matches!(&e, OAuthError::Refused { url, .. } if url.contains(refused)),
            "{e}"
        );
        assert!(!mock.lock().unwrap().seen.iter().any(|p| p == "/token"));
    }
}

/// A user agent that records what it was asked to open and opens nothing.
#[derive(Debug, Default)]
struct Recording(Mutex<Vec<String>>);

impl UserAgent for Recording {
    fn authorize<'a>(&'a self, url: url::Url, _redirect_uri: &'a str) -> OAuthFuture<'a, url::Url> {
        self.0.lock().unwrap().push(url.to_string());
        Box::pin(async { Err(OAuthError::UserAgent("not opened".into())) })
    }
}

#[tokio::test]
async fn sec_url_1_sec_url_2_an_authorization_url_that_is_not_https_is_never_opened() {
    for bad in [
        "http://as.example/authorize",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "vbscript:msgbox(1)",
    ] {
        let (_mock, endpoint) = start(Mock {
            authorization_endpoint: Some(bad.into()),
            ..Mock::default()
        })
        .await;
        let agent = Arc::new(Recording::default());
        let config =
            OAuthConfig::new(endpoint.clone()).with_policy(UrlPolicy::loopback_for_development());
        let c = OAuthClient::new(config, Arc::new(MemoryTokenStore::new()), agent.clone()).unwrap();
        let e = c.unauthorized(None, None).await.unwrap_err();
        assert!(matches!(e, OAuthError::Refused { .. }), "{bad}: {e}");
        assert!(
            agent.0.lock().unwrap().is_empty(),
            "{bad} was handed to the user agent"
        );
    }
    // The check is what refuses them: the mock's own endpoint (http on loopback, allowed for
    // development) is handed to the agent.
    let (_mock, endpoint) = start(Mock::default()).await;
    let agent = Arc::new(Recording::default());
    let config =
        OAuthConfig::new(endpoint.clone()).with_policy(UrlPolicy::loopback_for_development());
    let c = OAuthClient::new(config, Arc::new(MemoryTokenStore::new()), agent.clone()).unwrap();
    let _ = c.unauthorized(None, None).await;
    assert_eq!(
        agent.0.lock().unwrap().len(),
        1,
        "a loopback endpoint is opened in development"
    );
}

#[tokio::test]
async fn sec_tp_5_a_token_is_sent_only_to_the_server_it_was_issued_for() {
    let (_a, endpoint_a) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let (mock_b, endpoint_b) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    // One store for both servers, as a host keeps one token file.
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    let for_server = |endpoint: &url::Url| {
        let config =
            OAuthConfig::new(endpoint.clone()).with_policy(UrlPolicy::loopback_for_development());
        let agent = HeadlessUserAgent::new(config.policy).unwrap();
        OAuthClient::new(config, store.clone(), Arc::new(agent)).unwrap()
    };
    let (a, b) = (for_server(&endpoint_a), for_server(&endpoint_b));
    a.unauthorized(None, None).await.unwrap();
    let token_a = a.access_token().await.unwrap().expect("a token for A");
    assert_eq!(
        b.access_token().await.unwrap(),
        None,
        "A's token is never offered to B"
    );
    // B gets its own, from the authorization server B's metadata names.
    b.unauthorized(None, None).await.unwrap();
    assert!(mock_b.lock().unwrap().seen.iter().any(|p| p == "/token"));
    assert!(b.access_token().await.unwrap().is_some());
    assert_eq!(a.access_token().await.unwrap(), Some(token_a));
}

#[tokio::test]
async fn sec_url_8_a_redirect_uri_that_is_neither_https_nor_loopback_is_never_registered() {
    let (mock, endpoint) = start(Mock::default()).await;
    let config = OAuthConfig::new(endpoint.clone())
        .with_policy(UrlPolicy::loopback_for_development())
        .with_redirect_uri("http://app.example/callback");
    let e = OAuthClient::headless(config)
        .unwrap()
        .unauthorized(None, None)
        .await
        .unwrap_err();
    assert!(matches!(e, OAuthError::Config(_)), "{e}");
    let m = mock.lock().unwrap();
    assert!(
        !m.seen.iter().any(|p| p == "/register" || p == "/authorize"),
        "{:?}",
        m.seen
    );
}

#[tokio::test]
async fn client_credentials_with_a_secret_and_with_private_key_jwt() {
    let (mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let pre = PreRegistered {
        client_id: "machine".into(),
        client_secret: Some("s3cret".into()),
        issuer: None,
    };
    let config = OAuthConfig::new(endpoint.clone())
        .with_policy(UrlPolicy::loopback_for_development())
        .with_flow(GrantFlow::ClientCredentials)
        .with_preregistered(pre.clone());
    let c = OAuthClient::headless(config).unwrap();
    c.unauthorized(None, None).await.unwrap();
    let form = mock.lock().unwrap().token_forms[0].clone();
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["resource"], endpoint.as_str());
    assert!(!mock.lock().unwrap().seen.contains(&"/authorize".to_owned()));

    // An ES256 key (PKCS#8), as the conformance suite hands out.
    let pem = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgevZzL1gdAFr88hb2\nOF/2NxApJCzGCEDdfSp6VQO30hyhRANCAAQRWz+jn65BtOMvdyHKcvjBeBSDZH2r\n1RTwjmYSi9R/zpBnuQ4EiMnCqfMPWiZqB4QdbAd0E7oH50VpuZ1P087G\n-----END PRIVATE KEY-----\n";
    let key = PrivateKeyJwt {
        private_key_pem: pem.into(),
        algorithm: "ES256".into(),
        kid: None,
    };
    let jwt = key.assertion("machine", "https://as.example").unwrap();
    assert_eq!(jwt.split('.').count(), 3);
    let config = OAuthConfig::new(endpoint.clone())
        .with_policy(UrlPolicy::loopback_for_development())
        .with_flow(GrantFlow::ClientCredentials)
        .with_preregistered(PreRegistered {
            client_secret: None,
            ..pre
        })
        .with_private_key(key);
    let c = OAuthClient::headless(config).unwrap();
    c.unauthorized(None, None).await.unwrap();
    let form = mock.lock().unwrap().token_forms[1].clone();
    assert_eq!(form["client_assertion_type"], JWT_BEARER_ASSERTION);
    assert!(!form.contains_key("client_secret"));
}

#[tokio::test]
async fn au19_tokens_never_appear_in_debug_or_errors() {
    let (_mock, endpoint) = start(Mock {
        expires_in: 3600,
        ..Mock::default()
    })
    .await;
    let c = client(&endpoint);
    c.unauthorized(None, None).await.unwrap();
    let text = format!("{c:?}");
    assert!(!text.contains("at-1"));
    let _ = HeaderMap::new();
}
