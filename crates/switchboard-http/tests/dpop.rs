//! DPoP on the endpoint (RFC 9449 §7, SEP-1932) over real HTTP on 127.0.0.1: a token bound to
//! a key (`cnf.jkt`) is served only with a fresh proof by that key made for the request, on
//! POST, GET and `DELETE`; each forged proof is refused for its reason with a `DPoP` challenge;
//! a bound token sent as a bearer is refused; nonces are asked for and accepted; the metadata
//! says when DPoP is required; the public URL behind a proxy is the `htu` compared; a full
//! replay store refuses (503) rather than lets a proof through unchecked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use support::{init_body, initialized_body, send, test_server};
use switchboard_auth::ScopeSet;
use switchboard_auth::resource::dpop::{DpopConfig, MemoryReplayStore, NonceSource};
use switchboard_auth::resource::{AuthInfo, TokenError, TokenValidator};
use switchboard_http::{Authorization, HttpConfig, StreamableHttpService};
use switchboard_test_support::dpop::{DpopTestKey, b64url as b64};
use switchboard_test_support::issuer::now;
use tokio::net::TcpListener;

/// The validator: `bound.<jkt>` is a token bound to that key, `plain` an unbound one.
fn validator() -> Arc<dyn TokenValidator> {
    Arc::new(|token: &str| -> Result<AuthInfo, TokenError> {
        let mut info = AuthInfo::new("alice", "http://127.0.0.1:1", ScopeSet::new());
        if let Some(jkt) = token.strip_prefix("bound.") {
            info.claims.insert("cnf".into(), json!({ "jkt": jkt }));
            Ok(info)
        } else if token == "plain" {
            Ok(info)
        } else {
            Err(TokenError::Invalid("unknown token"))
        }
    })
}

/// Our endpoint on 127.0.0.1 with DPoP under `dpop`; its URL.
struct Rs {
    addr: SocketAddr,
    url: String,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn resource(dpop: DpopConfig) -> Rs {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let url = format!("http://{addr}/mcp");
    let auth = Authorization::new(&url, vec!["http://127.0.0.1:1".into()], validator())
        .unwrap()
        .with_dpop(dpop);
    let service = StreamableHttpService::new(
        switchboard::server_http::session_factory(&test_server()),
        HttpConfig::default().with_authorization(auth),
    );
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = switchboard_http::serve_with_shutdown(listener, service, async move {
            let _ = rx.await;
        })
        .await;
    });
    Rs {
        addr,
        url,
        _stop: tx,
    }
}

/// A request to the endpoint with `authorization` and the given `DPoP` headers.
fn request(
    rs: &Rs,
    method: &str,
    session: Option<&str>,
    authorization: &str,
    proofs: &[&str],
    body: String,
) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", rs.addr.to_string())
        .header("authorization", authorization)
        .header("mcp-protocol-version", "2025-11-25");
    b = match method {
        "GET" => b.header("accept", "text/event-stream"),
        _ => b
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json"),
    };
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    for p in proofs {
        b = b.header("dpop", *p);
    }
    b.body(Full::new(Bytes::from(body))).unwrap()
}

/// What an answer said: status, `WWW-Authenticate`, `DPoP-Nonce`, session id.
struct Answer {
    status: u16,
    challenge: String,
    nonce: Option<String>,
    session: Option<String>,
}

async fn exchange(rs: &Rs, req: Request<Full<Bytes>>) -> Answer {
    let resp = send(rs.addr, req).await;
    let h = |n: &str| {
        resp.headers()
            .get(n)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let a = Answer {
        status: resp.status().as_u16(),
        challenge: h("www-authenticate").unwrap_or_default(),
        nonce: h("dpop-nonce"),
        session: h("mcp-session-id"),
    };
    let streaming = resp
        .headers()
        .get("content-type")
        .is_some_and(|v| v == "text/event-stream");
    if a.status != 200 || !streaming {
        let _ = resp.into_body().collect().await;
    }
    a
}

async fn post_init(rs: &Rs, authorization: &str, proofs: &[&str]) -> Answer {
    let req = request(
        rs,
        "POST",
        None,
        authorization,
        proofs,
        init_body(1, "2025-11-25"),
    );
    exchange(rs, req).await
}

/// Asserts a 401 with a `DPoP` challenge naming `error` and a description containing `why`.
fn assert_refused(a: &Answer, error: &str, why: &str, case: &str) {
    assert_eq!(a.status, 401, "{case}: {}", a.challenge);
    assert!(a.challenge.starts_with("DPoP "), "{case}: {}", a.challenge);
    assert!(
        a.challenge.contains(&format!("error=\"{error}\"")),
        "{case}: {}",
        a.challenge
    );
    assert!(a.challenge.contains(why), "{case}: {}", a.challenge);
    assert!(
        a.challenge.contains("algs=\"ES256"),
        "{case}: {}",
        a.challenge
    );
}

#[tokio::test]
async fn dpop_each_forged_proof_is_refused_for_its_reason_over_http() {
    let rs = resource(DpopConfig::new()).await;
    let (k, other) = (DpopTestKey::new(), DpopTestKey::new());
    let dpop = format!("DPoP {}", k.bound_token());

    // The genuine request is served, and its proof cannot be sent again.
    let good = k.proof("POST", &rs.url, &k.bound_token());
    assert_eq!(post_init(&rs, &dpop, &[&good]).await.status, 200);
    let a = post_init(&rs, &dpop, &[&good]).await;
    assert_refused(&a, "invalid_dpop_proof", "replayed", "replayed jti");

    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = k.claims("POST", &rs.url, &k.bound_token());
        f(&mut c);
        k.sign(&k.header(), &c)
    };
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "wrong htm",
            with(&|c| c["htm"] = "GET".into()),
            "invalid_dpop_proof",
            "htm",
        ),
        (
            "wrong htu",
            with(&|c| c["htu"] = format!("http://{}/other", rs.addr).into()),
            "invalid_dpop_proof",
            "htu",
        ),
        (
            "stale iat",
            with(&|c| c["iat"] = (now() - 600).into()),
            "invalid_dpop_proof",
            "too old",
        ),
        (
            "iat in the future",
            with(&|c| c["iat"] = (now() + 120).into()),
            "invalid_dpop_proof",
            "future",
        ),
        (
            "missing ath",
            with(&|c| {
                c.as_object_mut().unwrap().remove("ath");
            }),
            "invalid_dpop_proof",
            "ath",
        ),
        (
            "ath of another token",
            with(&|c| c["ath"] = b64(&[7; 32]).into()),
            "invalid_dpop_proof",
            "ath",
        ),
        (
            "a key that does not match cnf.jkt",
            other.sign(
                &other.header(),
                &k.claims("POST", &rs.url, &k.bound_token()),
            ),
            "invalid_token",
            "bound to",
        ),
        (
            "alg none",
            {
                let h = json!({"typ": "dpop+jwt", "alg": "none", "jwk": k.jwk});
                let c = k.claims("POST", &rs.url, &k.bound_token());
                format!(
                    "{}.{}.",
                    b64(h.to_string().as_bytes()),
                    b64(c.to_string().as_bytes())
                )
            },
            "invalid_dpop_proof",
            "alg none",
        ),
        (
            "an HMAC proof",
            {
                use hmac::Mac as _;
                let h = json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": k.jwk});
                let c = k.claims("POST", &rs.url, &k.bound_token());
                let input = format!(
                    "{}.{}",
                    b64(h.to_string().as_bytes()),
                    b64(c.to_string().as_bytes())
                );
                let mut mac =
                    <hmac::Hmac<sha2::Sha256> as hmac::KeyInit>::new_from_slice(b"k").unwrap();
                mac.update(input.as_bytes());
                format!("{input}.{}", b64(&mac.finalize().into_bytes()))
            },
            "invalid_dpop_proof",
            "alg HS256",
        ),
        (
            "a bad signature",
            {
                let p = k.proof("POST", &rs.url, &k.bound_token());
                let (head, _) = p.rsplit_once('.').unwrap();
                format!("{head}.{}", b64(&[1; 64]))
            },
            "invalid_dpop_proof",
            "signature",
        ),
    ];
    for (case, proof, error, why) in &cases {
        let a = post_init(&rs, &dpop, &[proof]).await;
        assert_refused(&a, error, why, case);
    }

    // No proof, or two, with a bound token.
    let a = post_init(&rs, &dpop, &[]).await;
    assert_refused(&a, "invalid_dpop_proof", "exactly one", "no proof");
    let (p1, p2) = (
        k.proof("POST", &rs.url, &k.bound_token()),
        k.proof("POST", &rs.url, &k.bound_token()),
    );
    let a = post_init(&rs, &dpop, &[&p1, &p2]).await;
    assert_refused(&a, "invalid_dpop_proof", "exactly one", "two proofs");

    // A bound token sent as a bearer (a stolen token without its key), even with a proof.
    let bearer = format!("Bearer {}", k.bound_token());
    let a = post_init(&rs, &bearer, &[]).await;
    assert_refused(&a, "invalid_token", "DPoP scheme", "bound token as bearer");
    let a = post_init(&rs, &bearer, &[&k.proof("POST", &rs.url, &k.bound_token())]).await;
    assert_refused(
        &a,
        "invalid_token",
        "DPoP scheme",
        "bound token as bearer, with a proof",
    );
    // An unbound token with the DPoP scheme.
    let a = post_init(
        &rs,
        "DPoP plain",
        &[&k.proof("POST", &rs.url, &k.bound_token())],
    )
    .await;
    assert_refused(
        &a,
        "invalid_token",
        "not DPoP-bound",
        "unbound token as DPoP",
    );
    // DPoP is not required here: an unbound bearer token is served.
    assert_eq!(post_init(&rs, "Bearer plain", &[]).await.status, 200);
}

#[tokio::test]
async fn dpop_get_and_delete_need_a_proof_made_for_them() {
    let rs = resource(DpopConfig::new()).await;
    let k = DpopTestKey::new();
    let dpop = format!("DPoP {}", k.bound_token());
    let a = post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())]).await;
    assert_eq!(a.status, 200);
    let sid = a.session.unwrap();
    let note = request(
        &rs,
        "POST",
        Some(&sid),
        &dpop,
        &[&k.proof("POST", &rs.url, &k.bound_token())],
        initialized_body(),
    );
    assert_eq!(exchange(&rs, note).await.status, 202);

    // The standalone GET stream: a POST's proof, none, then its own.
    for (proofs, why) in [
        (vec![k.proof("POST", &rs.url, &k.bound_token())], "htm"),
        (vec![], "exactly one"),
    ] {
        let refs: Vec<&str> = proofs.iter().map(String::as_str).collect();
        let get = request(&rs, "GET", Some(&sid), &dpop, &refs, String::new());
        assert_refused(&exchange(&rs, get).await, "invalid_dpop_proof", why, "GET");
    }
    let get = request(
        &rs,
        "GET",
        Some(&sid),
        &dpop,
        &[&k.proof("GET", &rs.url, &k.bound_token())],
        String::new(),
    );
    assert_eq!(exchange(&rs, get).await.status, 200);

    // DELETE: refused without its own proof, then the session ends.
    let del = request(
        &rs,
        "DELETE",
        Some(&sid),
        &dpop,
        &[&k.proof("POST", &rs.url, &k.bound_token())],
        String::new(),
    );
    assert_refused(
        &exchange(&rs, del).await,
        "invalid_dpop_proof",
        "htm",
        "DELETE",
    );
    let del = request(
        &rs,
        "DELETE",
        Some(&sid),
        &dpop,
        &[&k.proof("DELETE", &rs.url, &k.bound_token())],
        String::new(),
    );
    assert_eq!(exchange(&rs, del).await.status, 200);
}

#[tokio::test]
async fn dpop_required_refuses_bearer_tokens_and_the_metadata_says_so() {
    let k = DpopTestKey::new();
    for required in [false, true] {
        let config = if required {
            DpopConfig::new().required()
        } else {
            DpopConfig::new()
        };
        let rs = resource(config).await;
        // The protected-resource metadata (RFC 9449 §5.2).
        let meta = Request::get("/.well-known/oauth-protected-resource/mcp")
            .header("host", rs.addr.to_string())
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = send(rs.addr, meta).await;
        assert_eq!(resp.status(), 200);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let meta: Value = serde_json::from_slice(&body).unwrap();
        assert!(
            meta["dpop_signing_alg_values_supported"]
                .as_array()
                .unwrap()
                .contains(&json!("ES256")),
            "{meta}"
        );
        let bearer = post_init(&rs, "Bearer plain", &[]).await;
        let none = exchange(
            &rs,
            Request::post("/mcp")
                .header("host", rs.addr.to_string())
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(init_body(1, "2025-11-25"))))
                .unwrap(),
        )
        .await;
        assert_eq!(none.status, 401);
        assert!(
            none.challenge.contains("resource_metadata="),
            "{}",
            none.challenge
        );
        if required {
            assert_eq!(meta["dpop_bound_access_tokens_required"], true, "{meta}");
            assert_refused(
                &bearer,
                "invalid_token",
                "DPoP-bound tokens only",
                "required",
            );
            // Only the DPoP scheme is offered.
            assert!(none.challenge.starts_with("DPoP "), "{}", none.challenge);
            assert!(!none.challenge.contains("Bearer"), "{}", none.challenge);
        } else {
            assert!(meta.get("dpop_bound_access_tokens_required").is_none());
            assert_eq!(bearer.status, 200);
            // Both schemes are offered, Bearer first.
            assert!(none.challenge.starts_with("Bearer "), "{}", none.challenge);
            assert!(
                none.challenge.contains(", DPoP algs="),
                "{}",
                none.challenge
            );
        }
        // A bound token with its proof is served either way.
        let dpop = format!("DPoP {}", k.bound_token());
        assert_eq!(
            post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())])
                .await
                .status,
            200
        );
    }
}

#[tokio::test]
async fn dpop_nonce_is_asked_for_once_then_accepted() {
    let nonces = NonceSource::random(Duration::from_secs(60)).unwrap();
    let rs = resource(DpopConfig::new().with_nonces(nonces)).await;
    let k = DpopTestKey::new();
    let dpop = format!("DPoP {}", k.bound_token());
    let a = post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())]).await;
    assert_refused(&a, "use_dpop_nonce", "nonce", "no nonce");
    let nonce = a.nonce.expect("DPoP-Nonce with use_dpop_nonce");
    let mut c = k.claims("POST", &rs.url, &k.bound_token());
    c["nonce"] = "0.forged".into();
    let a = post_init(&rs, &dpop, &[&k.sign(&k.header(), &c)]).await;
    assert_refused(&a, "use_dpop_nonce", "nonce", "a forged nonce");
    let mut c = k.claims("POST", &rs.url, &k.bound_token());
    c["nonce"] = nonce.clone().into();
    let a = post_init(&rs, &dpop, &[&k.sign(&k.header(), &c)]).await;
    assert_eq!(a.status, 200, "{}", a.challenge);
    // Served answers hand out the current nonce too (RFC 9449 §9).
    assert_eq!(a.nonce.as_deref(), Some(nonce.as_str()));
}

#[tokio::test]
async fn dpop_the_public_url_behind_a_proxy_is_the_htu_compared() {
    let public = url::Url::parse("https://mcp.example.com/tools/mcp").unwrap();
    let rs = resource(DpopConfig::new().with_public_url(public.clone())).await;
    let k = DpopTestKey::new();
    let dpop = format!("DPoP {}", k.bound_token());
    let a = post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())]).await;
    assert_refused(&a, "invalid_dpop_proof", "htu", "the inner URL");
    let a = post_init(
        &rs,
        &dpop,
        &[&k.proof("POST", public.as_str(), &k.bound_token())],
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.challenge);
}

#[tokio::test]
async fn dpop_a_full_replay_store_refuses_with_503_not_unchecked() {
    let store = Arc::new(MemoryReplayStore::with_bounds(1, 1 << 20));
    let rs = resource(DpopConfig::new().with_replay_store(store.clone())).await;
    let k = DpopTestKey::new();
    let dpop = format!("DPoP {}", k.bound_token());
    assert_eq!(
        post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())])
            .await
            .status,
        200
    );
    assert_eq!(store.len(), 1);
    let a = post_init(&rs, &dpop, &[&k.proof("POST", &rs.url, &k.bound_token())]).await;
    assert_eq!(a.status, 503);
}
