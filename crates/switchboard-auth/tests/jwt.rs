//! The JWT validator against a test issuer on 127.0.0.1: good tokens, every hostile token the
//! resource server must refuse (`[AU-20]`, `[AU-21]`, `[AU-22]`, `[SEC-TP-1]`), discovery,
//! key rotation and bounded fetching.
#![cfg(feature = "resource")]
#![allow(clippy::unwrap_used, missing_docs)]

use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, Header};
use serde_json::json;
use switchboard_auth::resource::{JwtValidator, JwtValidatorConfig, TokenError, TokenValidator};
use switchboard_test_support::issuer::{JwksMode, TestIssuer, TestKey, now};
use switchboard_test_support::wait::Deadline;

const AUD: &str = "http://127.0.0.1:1/mcp";

fn validator(issuer: &TestIssuer) -> JwtValidator {
    JwtValidator::new(JwtValidatorConfig::new(issuer.url(), AUD))
}

fn invalid(r: Result<switchboard_auth::resource::AuthInfo, TokenError>) -> &'static str {
    match r {
        Err(TokenError::Invalid(why)) => why,
        other => panic!("expected an invalid token, got {other:?}"),
    }
}

#[tokio::test]
async fn au_20_a_good_token_gives_its_claims() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let token = issuer.token(&issuer.claims("alice", AUD, "mcp:basic mcp:write"));
    let info = v.validate(&token).await.unwrap();
    assert_eq!(info.subject, "alice");
    assert_eq!(info.issuer, issuer.url());
    assert_eq!(info.scopes.to_string(), "mcp:basic mcp:write");
    assert_eq!(info.client_id.as_deref(), Some("test-client"));
    assert_eq!(info.audience, [AUD]);
    assert!(info.expires_at.unwrap() > now());
    assert_eq!(info.claims["sub"], "alice");
    // An audience list that contains us is fine, and so is application/at+jwt.
    let mut c = issuer.claims("bob", AUD, "mcp:basic");
    c["aud"] = json!(["http://other.example", AUD]);
    assert_eq!(v.validate(&issuer.token(&c)).await.unwrap().subject, "bob");
    let mut h = Header::new(Algorithm::ES256);
    h.typ = Some("application/at+jwt".into());
    h.kid = Some("k1".into());
    let t = issuer.sign_header(&h, &issuer.claims("carol", AUD, ""));
    assert_eq!(v.validate(&t).await.unwrap().subject, "carol");
    // The keys were fetched once, through the RFC 8414 document.
    assert_eq!(issuer.jwks_hits(), 1);
    assert_eq!(issuer.metadata_hits(), 1);
}

#[tokio::test]
async fn au_21_au_22_every_hostile_token_is_refused() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let good = issuer.claims("alice", AUD, "mcp:basic");
    let with = |patch: serde_json::Value| {
        let mut c = good.clone();
        for (k, val) in patch.as_object().unwrap() {
            if val.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = val.clone();
            }
        }
        c
    };
    let t = |c: &serde_json::Value| issuer.token(c);
    let cases: Vec<(&str, String)> = vec![
        (
            "wrong audience",
            t(&with(json!({"aud": "http://127.0.0.1:2/mcp"}))),
        ),
        ("missing audience", t(&with(json!({"aud": null})))),
        (
            "an audience list without us",
            t(&with(
                json!({"aud": ["http://a.example", "http://b.example"]}),
            )),
        ),
        ("expired", t(&with(json!({"exp": now() - 3600})))),
        ("not yet valid", t(&with(json!({"nbf": now() + 3600})))),
        (
            "wrong issuer",
            t(&with(json!({"iss": "http://127.0.0.1:9"}))),
        ),
        ("no exp", t(&with(json!({"exp": null})))),
        (
            "no sub, client_id or azp",
            t(&with(json!({"sub": null, "client_id": null}))),
        ),
        (
            "another key, same kid",
            issuer.sign_with(&TestKey::es256("k1"), &good),
        ),
        (
            "another key, another kid",
            issuer.sign_with(&TestKey::es256("k9"), &good),
        ),
        ("alg none", issuer.unsigned(&good)),
        (
            "HMAC keyed with the public key",
            issuer.hmac_with_public_key(&good),
        ),
        ("typ JWT", {
            let mut h = Header::new(Algorithm::ES256);
            h.kid = Some("k1".into());
            issuer.sign_header(&h, &good)
        }),
        ("no typ", {
            let mut h = Header::new(Algorithm::ES256);
            h.typ = None;
            h.kid = Some("k1".into());
            issuer.sign_header(&h, &good)
        }),
        ("an ID token", {
            let mut h = Header::new(Algorithm::ES256);
            h.kid = Some("k1".into());
            let id = with(json!({"aud": "test-client", "nonce": "n", "auth_time": now()}));
            issuer.sign_header(&h, &id)
        }),
        (
            "a tampered payload",
            TestIssuer::tampered(
                &t(&good),
                &with(json!({"scope": "mcp:basic mcp:write admin"})),
            ),
        ),
        ("not a JWT", "opaque-token-value".into()),
        ("empty", String::new()),
        ("too long", "a".repeat(20_000)),
    ];
    for (what, token) in &cases {
        let why = invalid(v.validate(token).await);
        assert_eq!(why, expected(what), "{what}");
        assert!(
            !why.contains(token.as_str()) || token.is_empty(),
            "{what}: the reason echoes the token"
        );
    }
    // The sanity check: the good claims pass.
    fn expected(what: &str) -> &'static str {
        match what {
            "wrong audience" | "an audience list without us" => "not issued for this resource",
            "missing audience" => "no audience",
            "expired" => "expired",
            "not yet valid" => "not yet valid",
            "wrong issuer" => "wrong issuer",
            "no exp" => "no expiry",
            "no sub, client_id or azp" => "no subject",
            "another key, same kid" | "a tampered payload" => "bad signature",
            "another key, another kid" => "no key of the issuer matches the token",
            "alg none" | "not a JWT" | "empty" => "not a signed JWT with a known algorithm",
            "HMAC keyed with the public key" => "signature algorithm not allowed",
            "typ JWT" | "no typ" | "an ID token" => "not an access token (typ is not at+jwt)",
            "too long" => "token too long",
            _ => "?",
        }
    }
    assert!(v.validate(&t(&good)).await.is_ok());
}

#[tokio::test]
async fn sec_sh_5_finding_3_a_token_without_sub_speaks_for_its_client_not_a_user_of_that_name() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    // A client-credentials token of an issuer that leaves `sub` out: the client is the subject.
    let mut c = issuer.claims("ignored", AUD, "mcp:basic");
    c.as_object_mut().unwrap().remove("sub");
    c["client_id"] = json!("machine-a");
    let info = v.validate(&issuer.token(&c)).await.unwrap();
    assert_eq!(info.subject, "machine-a");
    assert_eq!(info.client_id.as_deref(), Some("machine-a"));
    let url = issuer.url();
    assert_eq!(
        info.owner_key(),
        format!("client:{}:{url}|machine-a", url.len())
    );
    // Finding 3 of issue 25: a user whose `sub` is the client's id is not that client.
    let user = issuer.claims("machine-a", AUD, "mcp:basic");
    let user = v.validate(&issuer.token(&user)).await.unwrap();
    assert_eq!(user.subject, info.subject);
    assert_ne!(user.owner_key(), info.owner_key());
    assert_eq!(
        user.owner_key(),
        format!("sub:{}:{url}|machine-a", url.len())
    );
    // `azp` names the client when `client_id` does not.
    c.as_object_mut().unwrap().remove("client_id");
    c["azp"] = json!("machine-b");
    assert_eq!(
        v.validate(&issuer.token(&c)).await.unwrap().subject,
        "machine-b"
    );
    // `sub` wins when both are there; an empty one names nobody.
    c["sub"] = json!("alice");
    assert_eq!(
        v.validate(&issuer.token(&c)).await.unwrap().subject,
        "alice"
    );
    c["sub"] = json!("");
    assert_eq!(
        v.validate(&issuer.token(&c)).await.unwrap().subject,
        "machine-b"
    );
    c.as_object_mut().unwrap().remove("azp");
    assert_eq!(invalid(v.validate(&issuer.token(&c)).await), "no subject");
}

#[tokio::test]
async fn au_8_openid_discovery_is_the_fallback() {
    let issuer = TestIssuer::start_openid_only().await;
    let v = validator(&issuer);
    let token = issuer.token(&issuer.claims("alice", AUD, "mcp:basic"));
    assert_eq!(v.validate(&token).await.unwrap().subject, "alice");
    assert_eq!(
        issuer.metadata_hits(),
        2,
        "RFC 8414 first (404), then OpenID"
    );
}

#[tokio::test]
async fn unknown_kid_refreshes_the_keys_once_per_interval() {
    let issuer = TestIssuer::start().await;
    let v = JwtValidator::new(
        JwtValidatorConfig::new(issuer.url(), AUD).with_min_refresh_interval(Duration::ZERO),
    );
    let claims = issuer.claims("alice", AUD, "mcp:basic");
    assert!(v.validate(&issuer.token(&claims)).await.is_ok());
    assert_eq!(issuer.jwks_hits(), 1);
    // The issuer rotates to k2 (k1 retired): a k2 token makes the validator fetch again.
    let k2 = TestKey::es256("k2");
    issuer.publish(vec![k2.clone()]);
    let rotated = issuer.sign_with(&k2, &claims);
    assert_eq!(v.validate(&rotated).await.unwrap().subject, "alice");
    assert_eq!(issuer.jwks_hits(), 2);
    // A known kid costs no fetch.
    assert!(v.validate(&rotated).await.is_ok());
    assert_eq!(issuer.jwks_hits(), 2);

    // With the default interval, tokens naming random kids cannot hammer the issuer.
    let limited = validator(&issuer);
    assert!(limited.validate(&rotated).await.is_ok());
    let before = issuer.jwks_hits();
    for i in 0..20 {
        let k = TestKey::es256(&format!("random-{i}"));
        assert!(
            limited
                .validate(&issuer.sign_with(&k, &claims))
                .await
                .is_err()
        );
    }
    assert!(
        issuer.jwks_hits() - before <= 1,
        "at most one refresh per interval, got {}",
        issuer.jwks_hits() - before
    );
}

#[tokio::test]
async fn jwks_fetch_is_bounded_in_bytes_and_time() {
    let issuer = TestIssuer::start().await;
    let token = issuer.token(&issuer.claims("alice", AUD, "mcp:basic"));

    issuer.set_jwks_mode(JwksMode::Huge(1 << 20));
    let v = validator(&issuer);
    match v.validate(&token).await {
        Err(TokenError::Unavailable(why)) => assert!(why.contains("larger than"), "{why}"),
        other => panic!("a huge JWKS must not be read: {other:?}"),
    }
    // A failure is not retried at once: the next token waits for the refresh interval.
    let hits = issuer.jwks_hits();
    assert!(matches!(
        v.validate(&token).await,
        Err(TokenError::Unavailable(_))
    ));
    assert_eq!(issuer.jwks_hits(), hits, "no fetch before the interval");

    issuer.set_jwks_mode(JwksMode::Slow(Duration::from_secs(30)));
    let v = JwtValidator::new(
        JwtValidatorConfig::new(issuer.url(), AUD).with_fetch_timeout(Duration::from_millis(300)),
    );
    let started = Instant::now();
    assert!(matches!(
        v.validate(&token).await,
        Err(TokenError::Unavailable(_))
    ));
    assert!(started.elapsed() < Duration::from_secs(5));

    issuer.set_jwks_mode(JwksMode::Normal);
    assert!(
        validator(&issuer).validate(&token).await.is_ok(),
        "and a normal answer works"
    );
}

#[tokio::test]
async fn sec_ssrf_2_a_non_loopback_http_issuer_is_not_fetched() {
    let v = JwtValidator::new(JwtValidatorConfig::new("http://10.0.0.1", AUD));
    let issuer = TestIssuer::start().await;
    let token = issuer.token(&issuer.claims("alice", AUD, ""));
    assert!(matches!(
        v.validate(&token).await,
        Err(TokenError::Invalid(_) | TokenError::Unavailable(_))
    ));
}

#[tokio::test]
async fn keys_past_max_keys_are_ignored() {
    let issuer = TestIssuer::start().await;
    let keys: Vec<TestKey> = (0..4).map(|i| TestKey::es256(&format!("k{i}"))).collect();
    issuer.publish(keys.clone());
    let mut config = JwtValidatorConfig::new(issuer.url(), AUD);
    config.max_keys = 2;
    let v = JwtValidator::new(config);
    let claims = issuer.claims("alice", AUD, "mcp:basic");
    assert!(
        v.validate(&issuer.sign_with(&keys[0], &claims))
            .await
            .is_ok()
    );
    assert!(
        v.validate(&issuer.sign_with(&keys[1], &claims))
            .await
            .is_ok()
    );
    // The third and fourth keys were not kept: their tokens are refused, even after the
    // refresh an unknown kid may cause.
    assert!(
        v.validate(&issuer.sign_with(&keys[3], &claims))
            .await
            .is_err()
    );
    assert!(
        v.validate(&issuer.sign_with(&keys[2], &claims))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn keys_older_than_max_key_age_are_fetched_again_before_use() {
    let issuer = TestIssuer::start().await;
    let mut config =
        JwtValidatorConfig::new(issuer.url(), AUD).with_min_refresh_interval(Duration::ZERO);
    config.max_key_age = Duration::from_millis(300);
    let v = JwtValidator::new(config);
    let token = issuer.token(&issuer.claims("alice", AUD, "mcp:basic"));
    assert!(v.validate(&token).await.is_ok());
    assert!(v.validate(&token).await.is_ok());
    assert_eq!(issuer.jwks_hits(), 1, "young keys are used as they are");
    // The validator's clock is std's: validate until the keys, once old, are fetched again.
    let fetched = std::time::Instant::now();
    let deadline = Deadline::new("the old keys fetched again");
    while issuer.jwks_hits() < 2 {
        assert!(v.validate(&token).await.is_ok());
        deadline.tick().await;
    }
    assert!(
        fetched.elapsed() >= Duration::from_millis(300),
        "not before they are old"
    );
    // A key the issuer retired meanwhile is no longer trusted once the keys are old.
    issuer.publish(vec![TestKey::es256("k9")]);
    let deadline = Deadline::new("the retired key refused");
    while v.validate(&token).await.is_ok() {
        deadline.tick().await;
    }
    assert!(
        issuer.jwks_hits() >= 3,
        "refused after the keys were fetched again"
    );
}

/// Issue 25, finding 1: a token naming a random `kid` makes the validator fetch the JWKS; while
/// that fetch hangs, a token whose key is cached is checked at once (it used to wait for the
/// fetch behind the cache lock: 14 s of 30 with a hanging JWKS).
#[tokio::test]
async fn finding_1_a_hanging_jwks_refetch_does_not_stall_valid_tokens() {
    let issuer = TestIssuer::start().await;
    let v = std::sync::Arc::new(JwtValidator::new(
        JwtValidatorConfig::new(issuer.url(), AUD)
            .with_fetch_timeout(Duration::from_secs(30))
            .with_min_refresh_interval(Duration::ZERO),
    ));
    let claims = issuer.claims("alice", AUD, "mcp:basic");
    let good = issuer.token(&claims);
    assert!(v.validate(&good).await.is_ok());
    assert_eq!(issuer.jwks_hits(), 1);

    issuer.set_jwks_mode(JwksMode::Slow(Duration::from_secs(60)));
    let forged = issuer.sign_with(&TestKey::es256("random-kid"), &claims);
    let attacker = {
        let v = v.clone();
        tokio::spawn(async move { v.validate(&forged).await })
    };
    switchboard_test_support::wait::until("the refetch reaches the issuer", || {
        issuer.jwks_hits() == 2
    })
    .await;
    // The refetch is hanging now. A valid token does not wait for it.
    let checked = tokio::time::timeout(Duration::from_secs(10), v.validate(&good)).await;
    assert!(
        matches!(checked, Ok(Ok(_))),
        "a valid token waited for the refetch: {checked:?}"
    );
    // It needed no fetch of its own.
    assert_eq!(issuer.jwks_hits(), 2);
    attacker.abort();
}

/// Issue 25, finding 4: `iss` given as an array that contains ours is not our issuer (the
/// recorded issuer used to become "").
#[tokio::test]
async fn finding_4_an_issuer_array_is_refused() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let mut c = issuer.claims("alice", AUD, "mcp:basic");
    c["iss"] = json!(["http://127.0.0.1:9", issuer.url()]);
    assert_eq!(invalid(v.validate(&issuer.token(&c)).await), "wrong issuer");
    c["iss"] = json!([issuer.url()]);
    assert_eq!(invalid(v.validate(&issuer.token(&c)).await), "wrong issuer");
}

/// Issue 25, "also seen": a token issued in the future, or claiming a lifetime past the cap
/// (24 hours by default), is refused.
#[tokio::test]
async fn a_token_from_the_future_or_living_too_long_is_refused() {
    let issuer = TestIssuer::start().await;
    let v = validator(&issuer);
    let mut c = issuer.claims("alice", AUD, "mcp:basic");
    c["iat"] = json!(now() + 3600);
    assert_eq!(
        invalid(v.validate(&issuer.token(&c)).await),
        "issued in the future"
    );
    c["iat"] = json!("yesterday");
    assert_eq!(
        invalid(v.validate(&issuer.token(&c)).await),
        "malformed iat"
    );
    c["iat"] = json!(now());
    c["exp"] = json!(now() + 30 * 24 * 3600);
    assert_eq!(
        invalid(v.validate(&issuer.token(&c)).await),
        "lifetime longer than this resource accepts"
    );
    c.as_object_mut().unwrap().remove("iat");
    assert_eq!(
        invalid(v.validate(&issuer.token(&c)).await),
        "lifetime longer than this resource accepts",
        "without iat, from now"
    );
    // Within the cap (and with a cap of one's own) it is fine.
    c["exp"] = json!(now() + 23 * 3600);
    assert!(v.validate(&issuer.token(&c)).await.is_ok());
    let strict = JwtValidator::new(
        JwtValidatorConfig::new(issuer.url(), AUD)
            .with_max_token_lifetime(Duration::from_secs(600)),
    );
    assert!(strict.validate(&issuer.token(&c)).await.is_err());
    assert!(
        strict
            .validate(&issuer.token(&issuer.claims("a", AUD, "")))
            .await
            .is_ok()
    );
}

/// A verified token is remembered (one signature check for a client that sends it with every
/// request), but never past its expiry: the remembered one is refused as the fresh check would.
#[tokio::test]
async fn a_remembered_token_is_refused_once_it_expires() {
    let issuer = TestIssuer::start().await;
    let v =
        JwtValidator::new(JwtValidatorConfig::new(issuer.url(), AUD).with_leeway(Duration::ZERO));
    let mut claims = issuer.claims("alice", AUD, "mcp:basic");
    claims["exp"] = json!(now() + 2);
    let token = issuer.token(&claims);
    assert!(v.validate(&token).await.is_ok());
    assert!(v.validate(&token).await.is_ok());
    let deadline = Deadline::new("the remembered token expires");
    while v.validate(&token).await.is_ok() {
        deadline.tick().await;
    }
    assert_eq!(invalid(v.validate(&token).await), "expired");
    assert!(now() >= 2 + claims["exp"].as_u64().unwrap() - 2);
}
