//! A tiny OAuth issuer for tests (feature `oauth`): ES256 keys made at run time, RFC 8414 and
//! OpenID metadata and a JWKS served on 127.0.0.1, access tokens (RFC 9068) minted on demand,
//! and the hostile tokens a resource server must refuse.
//!
//! ```text
//! let issuer = TestIssuer::start().await;
//! let token = issuer.token(&issuer.claims("alice", AUDIENCE, "mcp:basic"));
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::EncodingKey;
use jsonwebtoken::jwk::Jwk;
/// The JWT header type and algorithms, for tests that craft headers.
pub use jsonwebtoken::{Algorithm, Header};
use serde_json::{Value, json};

/// One signing key: its `kid`, private key and public JWK.
#[derive(Clone)]
pub struct TestKey {
    /// The key id.
    pub kid: String,
    encoding: EncodingKey,
    /// The private key, PKCS#8 DER.
    pkcs8: Vec<u8>,
    /// The public key as a JWK (with `kid`, `alg`, `use`).
    pub jwk: Value,
}

impl std::fmt::Debug for TestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestKey").field("kid", &self.kid).finish()
    }
}

impl TestKey {
    /// A fresh ES256 key named `kid`.
    ///
    /// # Panics
    /// When the key cannot be made (never with aws-lc-rs).
    pub fn es256(kid: &str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("an ES256 key");
        let encoding = EncodingKey::from_ec_der(pkcs8.as_ref());
        let mut jwk = Jwk::from_encoding_key(&encoding, Algorithm::ES256).expect("its JWK");
        jwk.common.key_id = Some(kid.to_owned());
        let mut jwk = serde_json::to_value(&jwk).expect("JWK JSON");
        jwk["use"] = json!("sig");
        TestKey {
            kid: kid.to_owned(),
            encoding,
            pkcs8: pkcs8.as_ref().to_vec(),
            jwk,
        }
    }

    /// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`): what
    /// `switchboard check --security --issuer-key` reads to mint tokens of this issuer.
    pub fn private_key_pem(&self) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(&self.pkcs8);
        let mut pem = String::from("-----BEGIN PRIVATE KEY-----\n");
        for line in b64.as_bytes().chunks(64) {
            pem.push_str(&String::from_utf8_lossy(line));
            pem.push('\n');
        }
        pem.push_str("-----END PRIVATE KEY-----\n");
        pem
    }

    /// This key under another `kid` (the same key material).
    pub fn renamed(&self, kid: &str) -> Self {
        let mut k = self.clone();
        kid.clone_into(&mut k.kid);
        k.jwk["kid"] = json!(kid);
        k
    }
}

/// How the JWKS endpoint answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JwksMode {
    /// The published keys.
    Normal,
    /// A valid JSON document of about `n` bytes (padding beside the keys).
    Huge(usize),
    /// The published keys after this delay.
    Slow(Duration),
}

struct Shared {
    issuer: String,
    keys: Mutex<Vec<TestKey>>,
    mode: Mutex<JwksMode>,
    jwks_hits: AtomicUsize,
    metadata_hits: AtomicUsize,
    oauth_metadata: bool,
}

/// A running test issuer (see the module docs). Dropping it stops its server.
pub struct TestIssuer {
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for TestIssuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestIssuer")
            .field("url", &self.shared.issuer)
            .finish()
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The headers of a POST to an MCP endpoint protected by the issuer's tokens: JSON body, both
/// answer kinds accepted, `token` as a bearer (if any), and the session (if any) with
/// `version`.
pub fn bearer_post_headers(
    token: Option<&str>,
    session: Option<&str>,
    version: &str,
) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("accept", "application/json, text/event-stream".to_owned()),
        ("content-type", "application/json".to_owned()),
    ];
    if let Some(t) = token {
        headers.push(("authorization", format!("Bearer {t}")));
    }
    if let Some(s) = session {
        headers.push(("mcp-session-id", s.to_owned()));
        headers.push(("mcp-protocol-version", version.to_owned()));
    }
    headers
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl TestIssuer {
    /// An issuer with one ES256 key `k1`, publishing RFC 8414 and OpenID metadata.
    pub async fn start() -> Self {
        Self::start_with(true).await
    }

    /// An issuer publishing only OpenID discovery metadata (no RFC 8414 document).
    pub async fn start_openid_only() -> Self {
        Self::start_with(false).await
    }

    async fn start_with(oauth_metadata: bool) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared {
            issuer: format!("http://{addr}"),
            keys: Mutex::new(vec![TestKey::es256("k1")]),
            mode: Mutex::new(JwksMode::Normal),
            jwks_hits: AtomicUsize::new(0),
            metadata_hits: AtomicUsize::new(0),
            oauth_metadata,
        });
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(oauth_meta))
            .route("/.well-known/openid-configuration", get(openid_meta))
            .route("/jwks", get(jwks))
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        TestIssuer { shared, server }
    }

    /// The issuer identifier (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> &str {
        &self.shared.issuer
    }

    /// The key tokens are signed with by default (the first published one).
    ///
    /// # Panics
    /// When no key is published.
    pub fn key(&self) -> TestKey {
        self.shared.keys.lock().expect("keys")[0].clone()
    }

    /// Publishes `keys` instead of the current set (a key rotation).
    pub fn publish(&self, keys: Vec<TestKey>) {
        *self.shared.keys.lock().expect("keys") = keys;
    }

    /// Sets how the JWKS endpoint answers.
    pub fn set_jwks_mode(&self, mode: JwksMode) {
        *self.shared.mode.lock().expect("mode") = mode;
    }

    /// How many times the JWKS was fetched.
    pub fn jwks_hits(&self) -> usize {
        self.shared.jwks_hits.load(Ordering::SeqCst)
    }

    /// How many times a metadata document was fetched.
    pub fn metadata_hits(&self) -> usize {
        self.shared.metadata_hits.load(Ordering::SeqCst)
    }

    /// The claims of a good access token for `sub` and `aud` with `scope`: this issuer, five
    /// minutes of validity, a client id.
    pub fn claims(&self, sub: &str, aud: &str, scope: &str) -> Value {
        let now = now();
        json!({
            "iss": self.url(),
            "sub": sub,
            "aud": aud,
            "scope": scope,
            "client_id": "test-client",
            "iat": now,
            "exp": now + 300,
            "jti": format!("{sub}-{now}"),
        })
    }

    /// An access token (`typ: at+jwt`, ES256) with `claims`, signed with the default key.
    pub fn token(&self, claims: &Value) -> String {
        self.sign_with(&self.key(), claims)
    }

    /// An access token with `claims` signed with `key`, naming its `kid`.
    ///
    /// # Panics
    /// When signing fails.
    pub fn sign_with(&self, key: &TestKey, claims: &Value) -> String {
        let mut h = Header::new(Algorithm::ES256);
        h.typ = Some("at+jwt".into());
        h.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&h, claims, &key.encoding).expect("signed")
    }

    /// A token with `claims` and the header `header` (any JSON), signed with the default key
    /// (for `typ` variations).
    ///
    /// # Panics
    /// When signing fails.
    pub fn sign_header(&self, header: &Header, claims: &Value) -> String {
        jsonwebtoken::encode(header, claims, &self.key().encoding).expect("signed")
    }

    /// An unsigned token (`alg: none`) with `claims`.
    pub fn unsigned(&self, claims: &Value) -> String {
        let h = json!({"alg": "none", "typ": "at+jwt", "kid": self.key().kid});
        format!("{}.{}.", b64(&h), b64(claims))
    }

    /// A token "signed" with HS256 keyed with the public key's JWK text: what an attacker
    /// who read the JWKS can make.
    ///
    /// # Panics
    /// When signing fails.
    pub fn hmac_with_public_key(&self, claims: &Value) -> String {
        let key = self.key();
        let secret = key.jwk.to_string();
        let mut h = Header::new(Algorithm::HS256);
        h.typ = Some("at+jwt".into());
        h.kid = Some(key.kid.clone());
        jsonwebtoken::encode(&h, claims, &EncodingKey::from_secret(secret.as_bytes()))
            .expect("signed")
    }

    /// `token` with its payload replaced by `claims`, the signature kept.
    pub fn tampered(token: &str, claims: &Value) -> String {
        let mut parts = token.split('.');
        let (h, _, s) = (parts.next(), parts.next(), parts.next());
        format!(
            "{}.{}.{}",
            h.unwrap_or_default(),
            b64(claims),
            s.unwrap_or_default()
        )
    }
}

fn b64(v: &Value) -> String {
    URL_SAFE_NO_PAD.encode(v.to_string())
}

fn metadata(shared: &Shared) -> Value {
    let i = &shared.issuer;
    json!({
        "issuer": i,
        "authorization_endpoint": format!("{i}/authorize"),
        "token_endpoint": format!("{i}/token"),
        "jwks_uri": format!("{i}/jwks"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    })
}

async fn oauth_meta(State(shared): State<Arc<Shared>>) -> Response {
    shared.metadata_hits.fetch_add(1, Ordering::SeqCst);
    if !shared.oauth_metadata {
        return StatusCode::NOT_FOUND.into_response();
    }
    axum::Json(metadata(&shared)).into_response()
}

async fn openid_meta(State(shared): State<Arc<Shared>>) -> Response {
    shared.metadata_hits.fetch_add(1, Ordering::SeqCst);
    let mut m = metadata(&shared);
    m["subject_types_supported"] = json!(["public"]);
    m["id_token_signing_alg_values_supported"] = json!(["ES256"]);
    axum::Json(m).into_response()
}

async fn jwks(State(shared): State<Arc<Shared>>) -> Response {
    shared.jwks_hits.fetch_add(1, Ordering::SeqCst);
    let mode = *shared.mode.lock().expect("mode");
    let keys: Vec<Value> = shared
        .keys
        .lock()
        .expect("keys")
        .iter()
        .map(|k| k.jwk.clone())
        .collect();
    match mode {
        JwksMode::Normal => axum::Json(json!({ "keys": keys })).into_response(),
        JwksMode::Slow(d) => {
            tokio::time::sleep(d).await;
            axum::Json(json!({ "keys": keys })).into_response()
        }
        JwksMode::Huge(n) => {
            let body = json!({ "keys": keys, "padding": "x".repeat(n) }).to_string();
            ([(header::CONTENT_TYPE, "application/json")], body).into_response()
        }
    }
}
