//! Our DPoP client against our DPoP resource server (RFC 9449, SEP-1932), over real HTTP on
//! 127.0.0.1: the OAuth client (client credentials, an ES256 key) gets a token bound to its key
//! from a small authorization server, then the transport calls a tool on a switchboard endpoint
//! with `Authorization::with_dpop` and server nonces: the first request with the token is
//! challenged `use_dpop_nonce` exactly once, answered with the nonce, and every request after
//! it is served on its first try.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response, StatusCode};
use serde_json::json;
use switchboard_auth::ScopeSet;
use switchboard_auth::client::{
    DpopKey, GrantFlow, OAuthClient, OAuthConfig, PreRegistered, UrlPolicy,
};
use switchboard_auth::resource::dpop::{DpopConfig, NonceSource};
use switchboard_auth::resource::{AuthInfo, TokenError, TokenValidator};
use switchboard_client::{Client, EraMode};
use switchboard_http::{Authorization, HttpConfig, StreamableHttpService};
use switchboard_http_client::{HttpClientConfig, HttpClientTransport};
use switchboard_types::lifecycle::Implementation;
use tokio::net::TcpListener;

/// Issued tokens → the key thumbprint each is bound to.
type Issued = Arc<Mutex<HashMap<String, String>>>;

/// A small authorization server: metadata, and a token endpoint for the client-credentials
/// grant that binds each token to the key of the request's DPoP proof (and refuses a request
/// without a valid proof made for it).
async fn authorization_server(issued: Issued) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let meta = json!({
        "issuer": issuer,
        "token_endpoint": format!("{issuer}/token"),
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "dpop_signing_alg_values_supported": ["ES256"],
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    })
    .to_string();
    let token_url = format!("{issuer}/token");
    let token = move |req: Request<Body>| {
        let issued = issued.clone();
        let token_url = token_url.clone();
        async move {
            let proof = req
                .headers()
                .get("dpop")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = axum::body::to_bytes(req.into_body(), 1 << 16)
                .await
                .unwrap();
            let form: HashMap<String, String> =
                url::form_urlencoded::parse(&body).into_owned().collect();
            let checked = proof
                .as_deref()
                .and_then(|p| switchboard_auth::dpop::verify_signature(p).ok())
                .filter(|p| p.claims["htm"] == "POST" && p.claims["htu"] == token_url.as_str());
            let answer = match (form.get("grant_type").map(String::as_str), checked) {
                (Some("client_credentials"), Some(p)) => {
                    let token = format!("at-{}", issued.lock().unwrap().len());
                    issued.lock().unwrap().insert(token.clone(), p.jkt);
                    (
                        StatusCode::OK,
                        json!({"access_token": token, "token_type": "DPoP",
                            "expires_in": 3600, "scope": "mcp:basic"}),
                    )
                }
                _ => (
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_dpop_proof"}),
                ),
            };
            Response::builder()
                .status(answer.0)
                .header("content-type", "application/json")
                .body(Body::from(answer.1.to_string()))
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
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    issuer
}

/// The resource server's view of the issued tokens: each bound (`cnf.jkt`) to its key.
fn validator(issued: Issued, issuer: String) -> Arc<dyn TokenValidator> {
    Arc::new(move |token: &str| -> Result<AuthInfo, TokenError> {
        let jkt = issued
            .lock()
            .unwrap()
            .get(token)
            .cloned()
            .ok_or(TokenError::Invalid("unknown token"))?;
        let mut info = AuthInfo::new("workload", issuer.clone(), ScopeSet::new());
        info.claims.insert("cnf".into(), json!({ "jkt": jkt }));
        Ok(info)
    })
}

#[tokio::test]
async fn dpop_our_client_calls_a_tool_on_our_resource_server_meeting_the_nonce_once() {
    let issued = Issued::default();
    let issuer = authorization_server(issued.clone()).await;

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let nonces = NonceSource::random(Duration::from_secs(60)).unwrap();
    let auth = Authorization::new(
        &url,
        vec![issuer.clone()],
        validator(issued.clone(), issuer.clone()),
    )
    .unwrap()
    .with_dpop(DpopConfig::new().required().with_nonces(nonces));
    let server = switchboard_test_support::server::tool_server("dpop-rs")
        .build()
        .unwrap();
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&server),
        HttpConfig::default().with_authorization(auth),
    );
    // Count what the endpoint answers: every request, and the nonce challenges.
    let (answered, challenged) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (a, c) = (answered.clone(), challenged.clone());
    let app = service
        .router()
        .layer(axum::middleware::map_response(move |r: Response<Body>| {
            let (a, c) = (a.clone(), c.clone());
            async move {
                a.fetch_add(1, Ordering::SeqCst);
                let nonce_challenge = r
                    .headers()
                    .get("www-authenticate")
                    .and_then(|v| v.to_str().ok())
                    .is_some_and(|v| v.contains("use_dpop_nonce"));
                if nonce_challenge {
                    c.fetch_add(1, Ordering::SeqCst);
                }
                r
            }
        }));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let key = Arc::new(DpopKey::generate().unwrap());
    let config = OAuthConfig::new(url::Url::parse(&url).unwrap())
        .with_policy(UrlPolicy::loopback_for_development())
        .with_flow(GrantFlow::ClientCredentials)
        .with_preregistered(PreRegistered {
            client_id: "workload".into(),
            client_secret: Some("s3cret".into()),
            issuer: Some(issuer.clone()),
        })
        .with_dpop(key.clone());
    let oauth = Arc::new(OAuthClient::headless(config).unwrap());
    let transport =
        HttpClientTransport::connect(&url, HttpClientConfig::default().with_auth(oauth.clone()))
            .unwrap();
    let session = Client::builder(Implementation::new("dpop-e2e", "1"))
        .era(EraMode::Legacy)
        .build()
        .connect(transport)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}; auth: {:?}", oauth.last_error()));
    let result = session
        .call_tool("echo", json!({"text": "bound"}))
        .await
        .unwrap_or_else(|e| panic!("call: {e}; auth: {:?}", oauth.last_error()));
    assert!(
        serde_json::to_string(&result).unwrap().contains("bound"),
        "{result:?}"
    );
    // One token, bound to our key.
    let tokens = issued.lock().unwrap().clone();
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert_eq!(tokens.values().next().unwrap(), key.thumbprint());
    // The nonce challenge came once, and was met: the requests after it went through first.
    assert_eq!(challenged.load(Ordering::SeqCst), 1);
    let before = answered.load(Ordering::SeqCst);
    session.list_tools().await.unwrap();
    session
        .call_tool("echo", json!({"text": "again"}))
        .await
        .unwrap();
    assert_eq!(answered.load(Ordering::SeqCst), before + 2);
    assert_eq!(challenged.load(Ordering::SeqCst), 1);
    session.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), session.closed()).await;
}
