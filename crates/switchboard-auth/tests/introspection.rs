//! RFC 7662 introspection against a tiny endpoint on 127.0.0.1: the token goes in the form body
//! (never the URL), with the resource server's client credentials; the answer decides
//! (`[AU-20]`, `[AU-21]`, `[SEC-TOK-1]`).
#![cfg(feature = "resource")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::routing::post;
use serde_json::json;
use switchboard_auth::resource::{
    IntrospectionConfig, IntrospectionValidator, TokenError, TokenValidator,
};

const AUD: &str = "http://127.0.0.1:1/mcp";

#[derive(Default)]
struct Seen {
    authorization: Option<String>,
    query: Option<String>,
    body: String,
}

async fn endpoint() -> (String, Arc<Mutex<Seen>>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s = seen.clone();
    let app = Router::new().route(
        "/introspect",
        post(move |uri: Uri, headers: HeaderMap, body: String| {
            let s = s.clone();
            async move {
                {
                    let mut seen = s.lock().unwrap();
                    seen.authorization = headers
                        .get("authorization")
                        .map(|v| v.to_str().unwrap().to_owned());
                    seen.query = uri.query().map(str::to_owned);
                    seen.body.clone_from(&body);
                }
                let exp = switchboard_test_support::issuer::now() + 60;
                let answer = if body.contains("token=good") {
                    json!({"active": true, "sub": "alice", "aud": AUD, "scope": "mcp:basic",
                           "client_id": "c", "exp": exp, "iss": "http://issuer.test"})
                } else if body.contains("token=elsewhere") {
                    json!({"active": true, "sub": "alice", "aud": "http://other/mcp", "exp": exp})
                } else if body.contains("token=boom") {
                    return (StatusCode::INTERNAL_SERVER_ERROR, String::new());
                } else if body.contains("token=huge") {
                    // Active and for us, but 1 MiB long: never read.
                    let answer = json!({"active": true, "sub": "alice", "aud": AUD,
                        "exp": exp, "pad": "p".repeat(1 << 20)});
                    return (StatusCode::OK, answer.to_string());
                } else if body.contains("token=slow") {
                    // Not a wait: an introspection endpoint slower than the client's timeout (the scenario).
                    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                    return (StatusCode::OK, json!({"active": true}).to_string());
                } else {
                    json!({"active": false})
                };
                (StatusCode::OK, answer.to_string())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, seen)
}

#[tokio::test]
async fn au_20_introspection_posts_the_token_and_judges_the_answer() {
    let (url, seen) = endpoint().await;
    let v = IntrospectionValidator::new(IntrospectionConfig::new(
        url,
        "http://issuer.test",
        AUD,
        "rs",
        Some("secret".into()),
    ));
    let info = v.validate("good").await.unwrap();
    assert_eq!(info.subject, "alice");
    assert_eq!(info.scopes.to_string(), "mcp:basic");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.query, None, "no token in the URL");
        assert!(seen.body.contains("token=good"));
        assert!(seen.body.contains("token_type_hint=access_token"));
        // rs:secret in HTTP Basic.
        assert_eq!(seen.authorization.as_deref(), Some("Basic cnM6c2VjcmV0"));
    }
    assert!(matches!(
        v.validate("inactive").await,
        Err(TokenError::Invalid("inactive"))
    ));
    assert!(matches!(
        v.validate("elsewhere").await,
        Err(TokenError::Invalid("not issued for this resource"))
    ));
    assert!(matches!(
        v.validate("boom").await,
        Err(TokenError::Unavailable(_))
    ));
}

#[tokio::test]
async fn an_introspection_answer_is_bounded_in_bytes_and_time() {
    let (url, _seen) = endpoint().await;
    let mut config = IntrospectionConfig::new(url, "http://issuer.test", AUD, "rs", None);
    config.timeout = std::time::Duration::from_millis(300);
    let v = IntrospectionValidator::new(config);
    // Over 64 KiB: not read, so not believed (503 at the HTTP layer, never 401).
    assert!(
        matches!(v.validate("huge").await, Err(TokenError::Unavailable(_))),
        "a 1 MiB answer must not be read"
    );
    let started = std::time::Instant::now();
    assert!(matches!(
        v.validate("slow").await,
        Err(TokenError::Unavailable(_))
    ));
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "waited {:?} for an answer due in 30 s",
        started.elapsed()
    );
    // Within both bounds, the validator still works.
    assert_eq!(v.validate("good").await.unwrap().subject, "alice");
}

#[tokio::test]
async fn sec_ssrf_an_introspection_endpoint_that_redirects_is_not_followed() {
    // The endpoint answers 307 to another loopback endpoint that would say "active".
    let (good, seen) = endpoint().await;
    let app = Router::new().route(
        "/introspect",
        post(move || {
            let good = good.clone();
            async move {
                (
                    StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, good)],
                    String::new(),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/introspect", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let v = IntrospectionValidator::new(IntrospectionConfig::new(
        url,
        "http://issuer.test",
        AUD,
        "rs",
        None,
    ));
    assert!(matches!(
        v.validate("good").await,
        Err(TokenError::Unavailable(_))
    ));
    assert!(
        seen.lock().unwrap().body.is_empty(),
        "the redirect was followed"
    );
}
