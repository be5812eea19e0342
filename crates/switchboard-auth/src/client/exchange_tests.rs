//! Token exchange against a mock token endpoint on 127.0.0.1.

#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use super::*;
use crate::client::TokenAuthMethod;

/// One request the endpoint saw: its form pairs, in order, and its Authorization header.
type Seen = (Vec<(String, String)>, Option<String>);

/// What the endpoint answers, and the requests it saw.
#[derive(Default)]
struct Mock {
    answer: Option<(StatusCode, Value)>,
    seen: Vec<Seen>,
}

type Shared = Arc<Mutex<Mock>>;

async fn token(State(s): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let mut m = s.lock().unwrap();
    let form = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let auth = headers
        .get("authorization")
        .map(|v| v.to_str().unwrap().to_owned());
    m.seen.push((form, auth));
    let (status, body) = m.answer.clone().unwrap_or((
        StatusCode::OK,
        json!({
            "access_token": "upstream-token",
            "issued_token_type": token_types::ACCESS_TOKEN,
            "token_type": "Bearer",
            "expires_in": 300,
            "scope": "files:read",
        }),
    ));
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn start(answer: Option<(StatusCode, Value)>) -> (Shared, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/token", listener.local_addr().unwrap());
    let shared = Arc::new(Mutex::new(Mock {
        answer,
        seen: Vec::new(),
    }));
    let app = Router::new()
        .route("/token", post(token))
        .with_state(shared.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (shared, url)
}

fn gateway(method: TokenAuthMethod) -> RegisteredClient {
    RegisteredClient {
        client_id: "gateway".into(),
        client_secret: Some("gw-secret".into()),
        auth_method: method,
        redirect_uri: None,
    }
}

fn exchange(url: &str, method: TokenAuthMethod) -> TokenExchange {
    TokenExchange::new(
        url,
        gateway(method),
        "client-token",
        token_types::ACCESS_TOKEN,
    )
    .unwrap()
    .policy(UrlPolicy::loopback_for_development())
}

fn values<'a>(form: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    form.iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

#[tokio::test]
async fn rfc8693_the_request_carries_every_parameter_with_basic_authentication() {
    let (mock, url) = start(None).await;
    let got = exchange(&url, TokenAuthMethod::ClientSecretBasic)
        .audience("files")
        .audience("search")
        .resource("https://files.example.com/mcp")
        .scope("files:read")
        .requested_token_type(token_types::ACCESS_TOKEN)
        .actor_token("actor-jwt", token_types::JWT)
        .exchange()
        .await
        .unwrap();
    assert_eq!(got.access_token, "upstream-token");
    assert_eq!(got.issued_token_type, token_types::ACCESS_TOKEN);
    assert_eq!(got.token_type, "Bearer");
    assert_eq!(got.expires_in, Some(300));
    assert_eq!(got.scope.as_deref(), Some("files:read"));

    let m = mock.lock().unwrap();
    let (form, auth) = &m.seen[0];
    assert_eq!(values(form, "grant_type"), [TOKEN_EXCHANGE_GRANT]);
    assert_eq!(values(form, "subject_token"), ["client-token"]);
    assert_eq!(
        values(form, "subject_token_type"),
        [token_types::ACCESS_TOKEN]
    );
    assert_eq!(values(form, "audience"), ["files", "search"]);
    assert_eq!(values(form, "resource"), ["https://files.example.com/mcp"]);
    assert_eq!(values(form, "scope"), ["files:read"]);
    assert_eq!(values(form, "actor_token"), ["actor-jwt"]);
    assert_eq!(values(form, "actor_token_type"), [token_types::JWT]);
    // client_secret_basic: the secret in the header, never in the form.
    assert!(values(form, "client_secret").is_empty());
    let basic = auth.as_deref().unwrap().strip_prefix("Basic ").unwrap();
    use base64::Engine as _;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic)
        .unwrap();
    assert_eq!(decoded, b"gateway:gw-secret");
}

#[tokio::test]
async fn rfc8693_client_secret_post_and_a_public_client() {
    let (mock, url) = start(None).await;
    exchange(&url, TokenAuthMethod::ClientSecretPost)
        .exchange()
        .await
        .unwrap();
    exchange(&url, TokenAuthMethod::None)
        .exchange()
        .await
        .unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(values(&m.seen[0].0, "client_secret"), ["gw-secret"]);
    assert_eq!(m.seen[0].1, None);
    assert_eq!(values(&m.seen[1].0, "client_id"), ["gateway"]);
    assert!(values(&m.seen[1].0, "client_secret").is_empty());
    assert!(values(&m.seen[1].0, "audience").is_empty(), "none asked");
}

#[tokio::test]
async fn rfc8693_a_refusal_names_the_oauth_error_and_never_the_token() {
    let refusal = json!({"error": "invalid_target", "error_description": "no such audience"});
    let (_mock, url) = start(Some((StatusCode::BAD_REQUEST, refusal))).await;
    let e = exchange(&url, TokenAuthMethod::None)
        .audience("elsewhere")
        .exchange()
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, OAuthError::Token(_)), "{e:?}");
    assert!(
        text.contains("HTTP 400") && text.contains("invalid_target"),
        "{text}"
    );
    assert!(!text.contains("client-token"), "{text}");
}

#[tokio::test]
async fn rfc8693_an_answer_without_issued_token_type_or_of_another_type_is_refused() {
    let plain = json!({"access_token": "t", "token_type": "Bearer"});
    let (_m, url) = start(Some((StatusCode::OK, plain))).await;
    let e = exchange(&url, TokenAuthMethod::None)
        .exchange()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("issued_token_type"), "{e}");

    let other = json!({"access_token": "t", "token_type": "N_A",
        "issued_token_type": token_types::ID_JAG});
    let (_m, url) = start(Some((StatusCode::OK, other))).await;
    let e = exchange(&url, TokenAuthMethod::None)
        .requested_token_type(token_types::ACCESS_TOKEN)
        .exchange()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("not the"), "{e}");
}

#[tokio::test]
async fn rfc8693_more_targets_than_the_bound_are_refused_before_sending() {
    let (mock, url) = start(None).await;
    let mut x = exchange(&url, TokenAuthMethod::None);
    for i in 0..=MAX_EXCHANGE_TARGETS {
        x = x.audience(format!("a{i}"));
    }
    let e = x.exchange().await.unwrap_err();
    assert!(matches!(e, OAuthError::Config(_)), "{e:?}");
    // At the bound it goes.
    let mut x = exchange(&url, TokenAuthMethod::None);
    for i in 0..MAX_EXCHANGE_TARGETS {
        x = x.resource(format!("https://r{i}.example.com/"));
    }
    x.exchange().await.unwrap();
    assert_eq!(mock.lock().unwrap().seen.len(), 1);
}

#[tokio::test]
async fn au17_the_strict_policy_never_reaches_a_loopback_endpoint() {
    let (mock, url) = start(None).await;
    let e = TokenExchange::new(&url, gateway(TokenAuthMethod::None), "t", token_types::JWT)
        .unwrap()
        .exchange()
        .await
        .unwrap_err();
    assert!(!matches!(e, OAuthError::Token(_)), "{e:?}");
    assert!(mock.lock().unwrap().seen.is_empty());
}

#[test]
fn au19_debug_shows_no_token_or_secret() {
    let x = TokenExchange::new(
        "https://as.example.com/token",
        gateway(TokenAuthMethod::ClientSecretPost),
        "client-token",
        token_types::ACCESS_TOKEN,
    )
    .unwrap()
    .actor_token("actor-jwt", token_types::JWT);
    let shown = format!("{x:?}");
    for secret in ["client-token", "actor-jwt", "gw-secret"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    let t = ExchangedToken {
        access_token: "issued-secret".into(),
        issued_token_type: token_types::ACCESS_TOKEN.into(),
        token_type: "Bearer".into(),
        expires_in: None,
        scope: None,
        refresh_token: Some("refresh-secret".into()),
    };
    let shown = format!("{t:?}");
    assert!(!shown.contains("issued-secret") && !shown.contains("refresh-secret"));
    assert!(TokenExchange::new("https://as/t", gateway(TokenAuthMethod::None), "", "x").is_err());
}
