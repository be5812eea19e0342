//! Each forged proof refused for its reason, and each bound crossed.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use switchboard_test_support::dpop::{DpopTestKey as Key, b64url as b64};

use super::*;

const URL: &str = "https://mcp.example/mcp";
const TOKEN: &str = "the-access-token";

fn key() -> Key {
    Key::new()
}

fn sign(k: &Key, header: &Value, claims: &Value) -> String {
    k.sign(header, claims)
}

fn header(k: &Key) -> Value {
    k.header()
}

fn claims(now: u64) -> Value {
    json!({"jti": format!("j-{}", rand_id()), "htm": "POST", "htu": URL, "iat": now,
        "ath": crate::dpop::access_token_hash(TOKEN)})
}

fn rand_id() -> String {
    let mut b = [0_u8; 12];
    getrandom::fill(&mut b).unwrap();
    b64(&b)
}

fn verifier(config: DpopConfig) -> DpopVerifier {
    DpopVerifier::new(&Url::parse(URL).unwrap(), config)
}

async fn refused(v: &DpopVerifier, proof: &str, jkt: &str, now: u64) -> DpopError {
    v.check_at(proof, "POST", TOKEN, jkt, now)
        .await
        .unwrap_err()
}

#[tokio::test]
async fn dpop_a_good_proof_passes_once_and_its_replay_is_refused() {
    let (k, v, now) = (key(), verifier(DpopConfig::new()), now_secs());
    let p = sign(&k, &header(&k), &claims(now));
    v.check_at(&p, "POST", TOKEN, &k.jkt, now).await.unwrap();
    let e = refused(&v, &p, &k.jkt, now).await;
    assert!(e.description.contains("replayed"), "{e}");
    assert_eq!(e.error, "invalid_dpop_proof");
}

#[tokio::test]
async fn dpop_each_forged_proof_is_refused_for_its_reason() {
    let (k, v, now) = (key(), verifier(DpopConfig::new()), now_secs());
    let with = |f: &dyn Fn(&mut Value)| {
        let mut c = claims(now);
        f(&mut c);
        sign(&k, &header(&k), &c)
    };
    let cases: Vec<(&str, String)> = vec![
        ("htm", with(&|c| c["htm"] = "GET".into())),
        (
            "htu",
            with(&|c| c["htu"] = "https://other.example/mcp".into()),
        ),
        ("too old", with(&|c| c["iat"] = (now - 301).into())),
        ("future", with(&|c| c["iat"] = (now + 6).into())),
        (
            "ath",
            with(&|c| {
                c.as_object_mut().unwrap().remove("ath");
            }),
        ),
        (
            "ath",
            with(&|c| c["ath"] = crate::dpop::access_token_hash("another").into()),
        ),
        (
            "jti",
            with(&|c| {
                c.as_object_mut().unwrap().remove("jti");
            }),
        ),
        (
            "jti",
            with(&|c| c["jti"] = "j".repeat(MAX_JTI_BYTES + 1).into()),
        ),
    ];
    for (why, proof) in cases {
        let e = refused(&v, &proof, &k.jkt, now).await;
        assert!(e.description.contains(why), "{why}: {e}");
        assert_eq!(e.error, "invalid_dpop_proof", "{why}");
    }
    // A key other than the one the token is bound to.
    let other = key();
    let p = sign(&other, &header(&other), &claims(now));
    let e = refused(&v, &p, &k.jkt, now).await;
    assert_eq!(e.error, "invalid_token", "{e}");
    // A signature by another key than the header's jwk.
    let p = sign(&other, &header(&k), &claims(now));
    assert!(
        refused(&v, &p, &k.jkt, now)
            .await
            .description
            .contains("signature")
    );
    // alg none, unsigned.
    let h = json!({"typ": "dpop+jwt", "alg": "none", "jwk": k.jwk});
    let p = format!(
        "{}.{}.",
        b64(h.to_string().as_bytes()),
        b64(claims(now).to_string().as_bytes())
    );
    assert!(
        refused(&v, &p, &k.jkt, now)
            .await
            .description
            .contains("not allowed")
    );
    // HMAC with a symmetric jwk.
    let h = json!({"typ": "dpop+jwt", "alg": "HS256", "jwk": {"kty": "oct", "k": "c2VjcmV0"}});
    let p = format!(
        "{}.{}.AAAA",
        b64(h.to_string().as_bytes()),
        b64(claims(now).to_string().as_bytes())
    );
    assert!(
        refused(&v, &p, &k.jkt, now)
            .await
            .description
            .contains("not allowed")
    );
    // A private key in the header, and the wrong typ.
    let mut jwk = k.jwk.clone();
    jwk["d"] = "AAAA".into();
    let p = sign(
        &k,
        &json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": jwk}),
        &claims(now),
    );
    assert!(
        refused(&v, &p, &k.jkt, now)
            .await
            .description
            .contains("private")
    );
    let p = sign(
        &k,
        &json!({"typ": "jwt", "alg": "ES256", "jwk": k.jwk}),
        &claims(now),
    );
    assert!(
        refused(&v, &p, &k.jkt, now)
            .await
            .description
            .contains("typ")
    );
}

#[tokio::test]
async fn dpop_the_iat_window_and_the_skew_bound_are_crossed() {
    let (k, now) = (key(), now_secs());
    let v = verifier(DpopConfig::new());
    let at = |iat: u64| {
        let mut c = claims(now);
        c["iat"] = iat.into();
        sign(&k, &header(&k), &c)
    };
    v.check_at(&at(now - 300), "POST", TOKEN, &k.jkt, now)
        .await
        .unwrap();
    v.check_at(&at(now + 5), "POST", TOKEN, &k.jkt, now)
        .await
        .unwrap();
    refused(&v, &at(now - 301), &k.jkt, now).await;
    refused(&v, &at(now + 6), &k.jkt, now).await;
    // A configured skew past MAX_PROOF_SKEW is clamped to it.
    let v =
        verifier(DpopConfig::new().with_window(DEFAULT_PROOF_MAX_AGE, Duration::from_secs(3600)));
    let sk = MAX_PROOF_SKEW.as_secs();
    v.check_at(&at(now + sk), "POST", TOKEN, &k.jkt, now)
        .await
        .unwrap();
    refused(&v, &at(now + sk + 1), &k.jkt, now).await;
}

#[tokio::test]
async fn dpop_public_url_behind_a_proxy_is_the_htu_compared() {
    let (k, now) = (key(), now_secs());
    let public = Url::parse("https://public.example/tools/mcp").unwrap();
    let v = verifier(DpopConfig::new().with_public_url(public));
    let mut c = claims(now);
    c["htu"] = "https://PUBLIC.example/tools/mcp?x=1".into();
    v.check_at(&sign(&k, &header(&k), &c), "POST", TOKEN, &k.jkt, now)
        .await
        .unwrap();
    let e = refused(&v, &sign(&k, &header(&k), &claims(now)), &k.jkt, now).await;
    assert!(e.description.contains("htu"), "{e}");
}

#[tokio::test]
async fn dpop_nonces_are_asked_for_then_accepted_across_nodes_sharing_the_key() {
    let (k, now) = (key(), now_secs());
    let nonces = NonceSource::new([7; 32], DEFAULT_NONCE_STEP);
    let a = verifier(DpopConfig::new().with_nonces(nonces.clone()));
    let e = refused(&a, &sign(&k, &header(&k), &claims(now)), &k.jkt, now).await;
    assert_eq!(e.error, "use_dpop_nonce");
    let nonce = e.nonce.unwrap();
    let b = verifier(DpopConfig::new().with_nonces(nonces));
    let mut c = claims(now);
    c["nonce"] = nonce.clone().into();
    b.check_at(&sign(&k, &header(&k), &c), "POST", TOKEN, &k.jkt, now)
        .await
        .unwrap();
    // Two steps later it is stale.
    let later = now + 2 * DEFAULT_NONCE_STEP.as_secs();
    let mut c = claims(later);
    c["nonce"] = nonce.into();
    let e = refused(&b, &sign(&k, &header(&k), &c), &k.jkt, later).await;
    assert_eq!(e.error, "use_dpop_nonce");
    let other = NonceSource::new([8; 32], DEFAULT_NONCE_STEP);
    assert!(!other.accepts(
        &NonceSource::new([7; 32], DEFAULT_NONCE_STEP).current(),
        now
    ));
}

#[test]
fn dpop_replay_store_is_bounded_in_entries_and_bytes_and_forgets_expired_proofs() {
    let s = MemoryReplayStore::with_bounds(3, usize::MAX);
    for k in ["a", "b", "c"] {
        assert!(s.first_use_now(k, 100, 10).unwrap());
    }
    assert!(!s.first_use_now("a", 100, 10).unwrap(), "replay");
    assert!(
        s.first_use_now("d", 100, 10).is_err(),
        "full: refused, not let through"
    );
    // Once their window closed, the slots are free again.
    assert!(s.first_use_now("d", 300, 100).unwrap());
    assert_eq!(s.len(), 1);
    // The byte bound: entries × REPLAY_ENTRY_BYTES.
    let s = MemoryReplayStore::with_bounds(usize::MAX, 2 * REPLAY_ENTRY_BYTES);
    assert!(s.first_use_now("a", 100, 10).unwrap());
    assert!(s.first_use_now("b", 100, 10).unwrap());
    assert!(s.first_use_now("c", 100, 10).is_err());
}

#[tokio::test]
async fn dpop_a_full_replay_store_refuses_proofs_as_unavailable() {
    let (k, now) = (key(), now_secs());
    let store = Arc::new(MemoryReplayStore::with_bounds(1, usize::MAX));
    let v = verifier(DpopConfig::new().with_replay_store(store));
    v.check_at(
        &sign(&k, &header(&k), &claims(now)),
        "POST",
        TOKEN,
        &k.jkt,
        now,
    )
    .await
    .unwrap();
    let e = refused(&v, &sign(&k, &header(&k), &claims(now)), &k.jkt, now).await;
    assert!(e.unavailable, "{e}");
}

#[test]
fn dpop_a_token_names_its_key_in_cnf_jkt() {
    let c = json!({"cnf": {"jkt": "abc"}});
    assert_eq!(bound_jkt(c.as_object().unwrap()), Some("abc"));
    assert_eq!(bound_jkt(json!({}).as_object().unwrap()), None);
}
